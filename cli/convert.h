/* fanjian CLI: converting inputs as files, whatever their encoding and
 * format, into an output that appears atomically. Shared by the one-file
 * command line and the tree mode (batch.c). */
#ifndef FANJIAN_CLI_CONVERT_H
#define FANJIAN_CLI_CONVERT_H

#include <limits.h>
#include <signal.h>

#include "fanjian.h"
#include "fanjian-formats.h"

/* What to do with every input; immutable while threads convert. */
typedef struct fjx_settings {
    const fj_converter *conv; /* NULL: no script conversion (-c none, clean) */
    const fj_clean *cleaner;  /* NULL: keep every line */
    const fjf_legado *legado; /* Legado removal rules (--rules), before cleaner; or NULL */
    int report;               /* list dropped lines on stderr */
    int quotes;               /* fj_quotes */
    unsigned punct_flags;
    const char *from_encoding; /* iconv name, or NULL: detect each input */
    const char *to_encoding;   /* iconv name, or NULL: UTF-8 */
    unsigned recode_flags;     /* FJF_LOSSY */
    int format;                /* fjf_format, or -1: by each input's extension */
    const char *lang;          /* language tag for markup (zh-TW ...), or NULL */
    fjf_epub_limits limits;
} fjx_settings;

/* Opens the dictionary the way every command does: `path` (--dict), else
 * $FANJIAN_DICT, else fanjian.fjd beside the executable, else
 * ../share/fanjian/fanjian.fjd from it, else the library's default. */
fj_status fjx_open_dict(const char *path, fj_dict **dict, fj_error *err);

/* The language tag a profile's output is in (zh-TW, zh-HK, zh-Hant,
 * zh-CN), or NULL when the profile does not change the language (t2jp). */
const char *fjx_profile_lang(const char *profile);

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

/* ---- text: a stream that may run across several inputs -------------------------- */

typedef struct fjx_text fjx_text;

int fjx_text_begin(const fjx_settings *s, fjx_sink *out, fjx_text **out_text);
/* Reads `fd` to its end through the chain. 0, or -1 (reported, naming `name`). */
int fjx_text_input(fjx_text *t, int fd, const char *name, unsigned long long *bytes_read);
int fjx_text_end(fjx_text *t); /* flushes; 0, or -1 (reported) */
void fjx_text_free(fjx_text *t);

/* ---- whole documents: markup and EPUB --------------------------------------------- */

/* Reads `fd` to its end, converts it as `format` and writes it to `out`.
 * 0, or -1 (reported, naming `name`). */
int fjx_document_convert(const fjx_settings *s, fjf_format format, int fd, const char *name,
                         fjx_sink *out, unsigned long long *bytes_read);

/* Hands the text of the document in[0..len) to `fn`, span by span, as the
 * conversion would see it, and writes nothing (for detection). `in` is
 * UTF-8 (see fjx_decode_whole), an EPUB the archive's bytes. 0, or -1
 * with err set. */
int fjx_document_text(const fjx_settings *s, fjf_format format, const char *in, size_t len,
                      fjf_text_fn fn, void *ctx, fjf_error *err);

/* Converts a file name (one path component) with s->conv; a new string, or
 * NULL (no memory). */
char *fjx_convert_name(const fjx_settings *s, const char *name);

/* Reads a whole file descriptor into a new buffer (errno on failure). At
 * most `limit` bytes (0: no limit); more is E2BIG. */
char *fjx_read_all(int fd, size_t *len, unsigned long long limit);

/* Decodes data[0..len) (a whole file) to UTF-8 as s->from_encoding says or
 * as detected; *utf8 is `data` itself when it already is UTF-8. 0, or -1
 * (reported, naming `name`). */
int fjx_decode_whole(const fjx_settings *s, const char *data, size_t len, const char *name,
                     char **utf8, size_t *utf8_len, fjf_encoding *enc);

#endif
