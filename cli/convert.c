/* fanjian CLI: one input through libfanjian-formats' conversion to an
 * output (formats/file.c), and what the command line says about it: each
 * failure with the option that would help, removals under --report, bytes
 * replaced under --lossy. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"


/* ---- the dictionary ---------------------------------------------------------------- */

int fjx_beside_program(const char *const *rel, size_t n, const char *probe, char *out,
                       size_t out_size)
{
    /* The executable's real path: a symbolic link to it does not count. */
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return 0;
    exe[len] = 0;
    const char *dir = dirname(exe);
    for (size_t i = 0; i < n; i++) {
        char candidate[PATH_MAX + 128];
        int w = snprintf(candidate, sizeof candidate, "%s/%s%s%s", dir, rel[i], probe ? "/" : "",
                         probe ? probe : "");
        if (w > 0 && (size_t)w < sizeof candidate && access(candidate, R_OK) == 0) {
            snprintf(out, out_size, "%s/%s", dir, rel[i]);
            return 1;
        }
    }
    return 0;
}

/* The dictionary: --dict, $FANJIAN_DICT, next to the executable, ../share/fanjian/
 * from it, the library's default. */
fj_status fjx_open_dict(const char *path, fj_dict **dict, fj_error *err)
{
    const char *env = getenv("FANJIAN_DICT");
    if (path || (env && *env))
        return fj_dict_open(path, NULL, dict, err);
    /* Beside the executable (a build tree), then ../share/fanjian/ from it
     * (an installed tree, whatever its prefix: PREFIX/bin/fanjian). */
    static const char *const rel[] = {"fanjian.fjd", "../share/fanjian/fanjian.fjd"};
    char found[PATH_MAX + 128];
    if (fjx_beside_program(rel, sizeof rel / sizeof *rel, NULL, found, sizeof found))
        return fj_dict_open(found, NULL, dict, err);
    return fj_dict_open(NULL, NULL, dict, err);
}

/* ---- what the command line says ---------------------------------------------- */

/* Each removal on stderr as INPUT[!ENTRY]:LINE:COLUMN: text (fjf_settings.report). */
int fjx_report_removal(void *ctx, const char *input, const char *part, const fj_clean_removal *r)
{
    (void)ctx;
    flockfile(stderr); /* one line, whole, when -r converts files in parallel */
    fputs(input, stderr);
    if (part) { /* an EPUB entry */
        putc('!', stderr);
        fjf_display_text(stderr, part, strlen(part));
    }
    fprintf(stderr, ":%llu:%llu: ", r->line, r->column);
    fjf_display_text(stderr, r->text, r->len);
    putc('\n', stderr);
    funlockfile(stderr);
    return 0;
}

/* A failure as "fanjian: SUBJECT: MESSAGE", with what would help; a
 * writer's failure is the sink's. */
static void report_failure(const fjf_error *err, const fjx_sink *out)
{
    const char *hint = "";
    switch (err->kind) {
    case FJF_ERR_WRITE:
        fprintf(stderr, "fanjian: cannot write %s: %s\n", out->name, strerror(out->err));
        return;
    case FJF_ERR_NOMEM:
        fprintf(stderr, "fanjian: out of memory\n");
        return;
    case FJF_ERR_READ:
        fprintf(stderr, "fanjian: cannot read %s: %s\n", err->subject, err->message);
        return;
    case FJF_ERR_DETECT:
        hint = " (give --from-encoding, or --lossy)";
        break;
    case FJF_ERR_INVALID_UTF8:
        hint = " (give --from-encoding, or --lossy to pass such bytes through unchanged)";
        break;
    case FJF_ERR_CUT_UTF8:
        hint = " (give --lossy to pass it through unchanged)";
        break;
    default:
        break;
    }
    if (err->subject)
        fprintf(stderr, "fanjian: %s: %s%s\n", err->subject, err->message, hint);
    else
        fprintf(stderr, "fanjian: %s%s\n", err->message, hint);
}

/* What one input came to: bytes replaced, and --report's summary. */
static void report_input(const fjx_settings *s, const char *name, const fjf_file_stats *st,
                         const char *unit)
{
    if (st->replaced_in)
        fprintf(stderr, "fanjian: %s: %llu bytes were not valid %s and became U+FFFD\n", name,
                st->replaced_in, st->encoding);
    if (s->report && s->f.clean)
        fprintf(stderr, "fanjian: %s: removed %llu spans (%llu whole %s), %llu characters\n",
                name, st->removed_spans, st->removed_wholes, unit, st->removed_chars);
}

static void report_output(const fjx_settings *s, const fjx_sink *out, const fjf_file_stats *st)
{
    if (st->replaced_out)
        fprintf(stderr, "fanjian: %s: %llu characters have no %s form and became '?'\n",
                out->name, st->replaced_out, s->f.to_encoding);
}

/* ---- text: a stream that may run across several inputs -------------------------- */

struct fjx_text {
    fjx_settings s; /* the caller's, with --to-encoding same resolved */
    char to_buf[32];
    fjx_sink *out;
    fjf_text *text;
};

/* The encoding an input is read in, as the formats library decides it
 * (fjf_encoding_detect on the same bytes: a text's first 64 KiB, as
 * formats/file.c samples it, or a whole document): from_encoding when
 * given, else detected, else under --lossy the best guess. The name in
 * buf, or NULL for UTF-8 (or when detection fails: the conversion then
 * says why). */
static const char *encoding_read(const fjx_settings *s, const char *data, size_t len,
                                 int complete, char buf[32])
{
    fjf_encoding enc;
    fjf_error err;
    if (s->f.from_encoding)
        snprintf(buf, 32, "%s", s->f.from_encoding);
    else if (fjf_encoding_detect(data, len, complete, &enc, &err) == 0 ||
             ((s->f.recode_flags & FJF_LOSSY) && enc.name[0]))
        snprintf(buf, 32, "%s", enc.name);
    else
        return NULL;
    return strcmp(buf, "UTF-8") == 0 ? NULL : buf;
}

/* --to-encoding same for a text read from fd: its first bytes, read
 * without moving it. 0, or -1 (reported). */
static int same_as_text(fjx_text *t, int fd, const char *name)
{
    enum { SAMPLE = 64u << 10 }; /* formats/file.c's DETECT_SAMPLE */
    char *sample = malloc(SAMPLE);
    off_t at = lseek(fd, 0, SEEK_CUR);
    ssize_t n = sample && at >= 0 ? pread(fd, sample, SAMPLE, at) : -1;
    if (n < 0) {
        if (!sample || errno != ESPIPE)
            fprintf(stderr, "fanjian: cannot read %s: %s\n", name, strerror(sample ? errno : ENOMEM));
        else
            fprintf(stderr, "fanjian: --to-encoding same: %s is not a file, whose encoding could "
                            "be read before it is converted: give --to-encoding ENC\n", name);
        free(sample);
        return -1;
    }
    t->s.f.to_encoding = encoding_read(&t->s, sample, (size_t)n, n < SAMPLE, t->to_buf);
    free(sample);
    return 0;
}

int fjx_text_begin(const fjx_settings *s, int like_fd, const char *like_name, fjx_sink *out,
                   fjx_text **out_text)
{
    fjf_error err;
    fjx_text *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "fanjian: out of memory\n");
        return -1;
    }
    t->s = *s;
    t->out = out;
    if (s->same_encoding && same_as_text(t, like_fd, like_name) != 0) {
        free(t);
        return -1;
    }
    if (fjf_text_begin(&t->s.f, out->name, fjx_sink_write, out, &t->text, &err) != 0) {
        if (err.kind == FJF_ERR_ENCODE) /* the output encoding, named as given */
            fprintf(stderr, "fanjian: %s\n", err.message);
        else
            report_failure(&err, out);
        free(t);
        return -1;
    }
    *out_text = t;
    return 0;
}

int fjx_text_input(fjx_text *t, int fd, const char *name, unsigned long long *bytes_read)
{
    fjf_error err;
    fjf_file_stats st;
    int rc = fjf_text_input(t->text, fd, name, &st, &err);
    if (rc != 0)
        report_failure(&err, t->out);
    else
        report_input(&t->s, name, &st, "lines");
    if (bytes_read)
        *bytes_read = st.bytes_read;
    return rc;
}

int fjx_text_end(fjx_text *t)
{
    fjf_error err;
    fjf_file_stats st = {0};
    if (fjf_text_end(t->text, &st, &err) != 0) {
        report_failure(&err, t->out);
        return -1;
    }
    report_output(&t->s, t->out, &st);
    return 0;
}

void fjx_text_free(fjx_text *t)
{
    if (!t)
        return;
    fjf_text_free(t->text);
    free(t);
}

/* ---- whole documents: markup and EPUB --------------------------------------------- */

int fjx_document_convert(const fjx_settings *s, fjf_format format, int fd, const char *name,
                         fjx_sink *out, unsigned long long *bytes_read)
{
    size_t len = 0;
    char *data = fjf_read_all(fd, &len, fjf_document_limit(&s->f, format));
    if (!data) {
        fprintf(stderr, "fanjian: cannot read %s: %s\n", name,
                errno == E2BIG ? "too large" : strerror(errno));
        return -1;
    }
    if (bytes_read)
        *bytes_read = len;
    fjx_settings same;
    char to_buf[32];
    if (s->same_encoding && format != FJF_EPUB) { /* an EPUB is UTF-8, in and out */
        same = *s;
        same.f.to_encoding = encoding_read(s, data, len, 1, to_buf);
        s = &same;
    }
    fjf_error err;
    fjf_file_stats st;
    int rc = fjf_document_convert(&s->f, format, data, len, name, fjx_sink_write, out, out->fd,
                                  &st, &err);
    free(data);
    if (rc != 0) {
        report_failure(&err, out);
        return -1;
    }
    if (st.replaced_in)
        fprintf(stderr, "fanjian: %s: %llu bytes were not valid %s and became U+FFFD\n", name,
                st.replaced_in, st.encoding);
    if (s->report && s->f.clean)
        fprintf(stderr, "fanjian: %s: removed %llu spans (%llu whole blocks), %llu characters\n",
                name, st.removed_spans, st.removed_wholes, st.removed_chars);
    return 0;
}

int fjx_decode_whole(const fjx_settings *s, const char *data, size_t len, const char *name,
                     char **utf8, size_t *utf8_len, fjf_encoding *enc)
{
    fjf_error err;
    fjf_file_stats st = {0};
    if (fjf_decode_whole(&s->f, data, len, name, utf8, utf8_len, enc, &st, &err) != 0) {
        report_failure(&err, NULL);
        return -1;
    }
    if (st.replaced_in)
        fprintf(stderr, "fanjian: %s: %llu bytes were not valid %s and became U+FFFD\n", name,
                st.replaced_in, st.encoding);
    return 0;
}
