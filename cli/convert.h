/* fanjian CLI: converting inputs as files, whatever their encoding and
 * format, into an output that appears atomically. Shared by the one-file
 * command line and the tree mode (batch.c). */
#ifndef FANJIAN_CLI_CONVERT_H
#define FANJIAN_CLI_CONVERT_H

#include <limits.h>
#include <signal.h>

#include "fanjian.h"
#include "files.h"

/* What to do with every input; immutable while threads convert. */
typedef struct fjx_settings {
    const fj_converter *conv; /* NULL: no script conversion (-c none, clean) */
    const fj_clean *cleaner;  /* NULL: keep every line */
    int report;               /* list dropped lines on stderr */
    int quotes;               /* fj_quotes */
    unsigned punct_flags;
    const char *from_encoding; /* iconv name, or NULL: detect each input */
    const char *to_encoding;   /* iconv name, or NULL: UTF-8 */
    unsigned recode_flags;     /* FJX_LOSSY */
    int format;                /* fjx_format, or -1: by each input's extension */
    const char *lang;          /* language tag for markup (zh-TW ...), or NULL */
    fjx_epub_limits limits;
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

/* A file that replaces `path` only when complete: written beside it under
 * a hidden temporary name, then renamed. The temporary name is published in
 * `tmp` before the file exists so that a signal handler can remove it. */
typedef struct fjx_outfile {
    const char *path;
    char tmp[PATH_MAX];
    volatile sig_atomic_t tmp_live; /* tmp names a file we must remove on abort */
    fjx_sink sink;
} fjx_outfile;

int fjx_outfile_open(fjx_outfile *o, const char *path);         /* 0, or -1 (reported) */
int fjx_outfile_commit(fjx_outfile *o, int sync, mode_t mode);  /* 0, or -1 (reported) */
void fjx_outfile_abort(fjx_outfile *o);
/* On SIGINT, SIGTERM and SIGHUP, remove every open temporary and die. */
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
int fjx_document_convert(const fjx_settings *s, fjx_format format, int fd, const char *name,
                         fjx_sink *out, unsigned long long *bytes_read);

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
                     char **utf8, size_t *utf8_len, fjx_encoding *enc);

#endif
