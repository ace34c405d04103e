/* fanjian CLI: inputs converted by libfanjian-formats into an output that
 * appears atomically. Shared by the one-file command line and the tree mode
 * (batch.c). */
#ifndef FANJIAN_CLI_CONVERT_H
#define FANJIAN_CLI_CONVERT_H

#include <limits.h>
#include <signal.h>

#include "fanjian.h"
#include "fanjian-formats.h"

/* What to do with every input; immutable while threads convert. */
typedef struct fjx_settings {
    fjf_settings f; /* what libfanjian-formats does with each input */
    int format;     /* fjf_format, or -1: by each input's extension */
    int report;     /* list removals on stderr (f.report is fjx_report_removal) */
    int same_encoding; /* --to-encoding same: each output in its input's encoding
                          (f.to_encoding is NULL) */
} fjx_settings;

/* fjf_settings.report for --report: each removal on stderr. */
int fjx_report_removal(void *ctx, const char *input, const char *part, const fj_clean_removal *r);

/* Opens the dictionary the way every command does: `path` (--dict), else
 * $FANJIAN_DICT, else fanjian.fjd beside the executable, else
 * ../share/fanjian/fanjian.fjd from it, else the library's default. */
fj_status fjx_open_dict(const char *path, fj_dict **dict, fj_error *err);

/* The first of the n paths rel[i], relative to the executable's directory,
 * that is readable (with probe: that holds a readable probe) into out: 1,
 * or 0 when none is. */
int fjx_beside_program(const char *const *rel, size_t n, const char *probe, char *out,
                       size_t out_size);

/* ---- output ------------------------------------------------------------------ */

typedef struct fjx_sink {
    int fd;
    const char *name;
    int failed;
    int err;
    unsigned long long bytes;
} fjx_sink;

int fjx_sink_write(void *ctx, const char *data, size_t len); /* an fj_write_fn */

/* A file that replaces its target only when complete. It is written as an
 * unnamed file (O_TMPFILE) in the target's directory and linked into place
 * at commit, so that no signal, not even SIGKILL, leaves a partial file;
 * where the file system has no unnamed files, under a short hidden name
 * (".fanjian-XXXXXX", whatever the target's length) that the signal
 * handler removes. A symbolic link is kept: its target is replaced. A FIFO,
 * character device or standard stream (/dev/stdout, /dev/fd/N) is written
 * straight to, not replaced. */
typedef struct fjx_outfile {
    const char *path;             /* the target as named, made safe to print (shown) */
    char shown[FJF_DISPLAY_MAX];
    int dir_fd;                   /* the directory the target is in */
    int own_dir;                  /* dir_fd is ours to close */
    char name[NAME_MAX + 1];      /* the target's name in dir_fd */
    char tmp[32];                 /* the temporary's name in dir_fd, while it has one */
    volatile sig_atomic_t tmp_live; /* tmp names a file we must remove on abort */
    int anonymous;                /* an O_TMPFILE file: no name until commit */
    int through;                  /* written straight to (FIFO, device, stream) */
    int no_replace;               /* commit fails if the target exists (EEXIST) */
    int like_fd;                  /* copy owner, group and extended attributes
                                     (ACLs) from this file at commit, or -1 */
    fjx_sink sink;
} fjx_outfile;

/* 0, or -1 (reported). open: `path` as the user gave it; openat: `name`
 * (one component) in the directory `dir_fd`, which the caller keeps open
 * until commit or abort, `shown` naming it in messages. Both leave
 * no_replace at 0 and like_fd at -1 for the caller to set. */
int fjx_outfile_open(fjx_outfile *o, const char *path);
int fjx_outfile_openat(fjx_outfile *o, int dir_fd, const char *name, const char *shown);
/* 0, or -1 (reported; with errno EEXIST when no_replace found the target
 * taken, which the caller reports instead). */
int fjx_outfile_commit(fjx_outfile *o, int sync, mode_t mode);
void fjx_outfile_abort(fjx_outfile *o);
/* On every signal whose default is to end the process and that is not
 * ignored (INT TERM HUP QUIT USR1 USR2 ALRM XFSZ PIPE ...): remove every
 * named temporary, then die of the signal. */
void fjx_outfile_install_signals(void);
/* The permissions a new output gets: those of `like` if it exists (or of
 * `path`), else 0666 less the umask. */
mode_t fjx_output_mode(const char *path, const char *like);

/* ---- one input: libfanjian-formats, and what the command line says ---------------- */

/* Each returns 0, or -1 (reported on stderr, naming the input). */
typedef struct fjx_text fjx_text;
/* With s->same_encoding, `like_fd` is the one input whose encoding the
 * output takes (a file: its first bytes are read with pread, from its
 * current offset, which stays), `like_name` naming it; else -1, NULL. */
int fjx_text_begin(const fjx_settings *s, int like_fd, const char *like_name, fjx_sink *out,
                   fjx_text **out_text);
/* Reads `fd` to its end through the chain. */
int fjx_text_input(fjx_text *t, int fd, const char *name, unsigned long long *bytes_read);
int fjx_text_end(fjx_text *t); /* flushes */
void fjx_text_free(fjx_text *t);

/* Reads `fd` to its end, converts it as `format` and writes it to `out`. */
int fjx_document_convert(const fjx_settings *s, fjf_format format, int fd, const char *name,
                         fjx_sink *out, unsigned long long *bytes_read);

/* Decodes a whole file to UTF-8 (fjf_decode_whole). */
int fjx_decode_whole(const fjx_settings *s, const char *data, size_t len, const char *name,
                     char **utf8, size_t *utf8_len, fjf_encoding *enc);

#endif
