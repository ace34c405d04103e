/* fanjian formats: the types the file formats share. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fanjian-formats.h"

int fjf_buf_append(fjf_buf *b, const char *data, size_t len)
{
    if (len > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < len) {
            if (cap > ((size_t)-1) / 2)
                return -1;
            cap *= 2;
        }
        char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

void fjf_buf_free(fjf_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void fjf_error_set(fjf_error *err, size_t offset, const char *fmt, ...)
{
    if (!err)
        return;
    err->offset = offset;
    err->kind = FJF_ERR_FORMAT;
    err->subject = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

int fjf_emit_copy(const char *in, size_t a, size_t b, fjf_buf *out, fjf_error *err)
{
    if (a < b && fjf_buf_append(out, in + a, b - a) != 0) {
        fjf_error_set(err, a, "out of memory");
        return -1;
    }
    return 0;
}

int fjf_emit_text(const fjf_rewrite *rw, const char *in, size_t a, size_t b, fjf_buf *out,
                  fjf_error *err)
{
    if (a >= b)
        return 0;
    if (!rw || !rw->text)
        return fjf_emit_copy(in, a, b, out, err);
    if (rw->text(rw->text_ctx, in + a, b - a, out) != 0) {
        fjf_error_set(err, a, "converting the text failed");
        return -1;
    }
    return 0;
}

static const struct {
    const char *name;
    fjf_format format;
} format_names[] = {
    {"text", FJF_TEXT}, {"txt", FJF_TEXT},       {"html", FJF_HTML},     {"htm", FJF_HTML},
    {"xhtml", FJF_XHTML}, {"xht", FJF_XHTML},    {"markdown", FJF_MARKDOWN},
    {"md", FJF_MARKDOWN}, {"srt", FJF_SRT},      {"ass", FJF_ASS},       {"ssa", FJF_ASS},
    {"vtt", FJF_VTT},     {"epub", FJF_EPUB},
};

int fjf_format_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (strcasecmp(name, format_names[i].name) == 0)
            return (int)format_names[i].format;
    return -1;
}

fjf_format fjf_format_from_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot || dot[1] == 0)
        return FJF_TEXT;
    int f = fjf_format_from_name(dot + 1);
    return f < 0 ? FJF_TEXT : (fjf_format)f;
}

const char *fjf_format_name(fjf_format format)
{
    static const char *const names[] = {"text", "html", "xhtml", "markdown",
                                        "srt",  "ass",  "vtt",   "epub"};
    return (unsigned)format < sizeof names / sizeof names[0] ? names[format] : "?";
}
