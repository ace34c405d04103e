/* One-shot conversion into a caller's buffer or a new one. */
#include <string.h>

#include "internal.h"

static const fj_allocator *conv_allocator(const fj_converter *c)
{
    return c->allocator.alloc ? &c->allocator : NULL;
}

/* A converter with normalization, over a long text: normalization and
 * conversion a window at a time, as fj_stream does, so the normalized copy
 * stays small (in cache) instead of being the whole text, and a window
 * normalization leaves unchanged is converted where it lies. The undecided
 * end of each window waits in `held` for the next. */
static fj_status windowed(const fj_converter *c, const unsigned char *text, size_t len,
                          fj_out *o, fj_work *w)
{
    fj_out held; /* normalized text the engine has not decided yet */
    fj__out_init_growable(&held, conv_allocator(c));
    fj_status st = FJ_OK;
    size_t pos = 0;
    for (int final = 0; !final && st == FJ_OK;) {
        size_t n = len - pos, raw_used;
        final = n <= FJ_WINDOW;
        if (!final)
            n = fj__window_end(text + pos);
        const unsigned char *src = text + pos;
        size_t src_len = n;
        if (fj__normalize(c, src, n, final, w, &raw_used)) {
            if (!final && raw_used == 0) {
                /* Nothing in the window is decided (a contrived text):
                 * the rest goes in one piece. */
                n = len - pos;
                final = 1;
                fj__normalize(c, src, n, final, w, &raw_used);
            }
            src = w->norm.buf ? (const unsigned char *)w->norm.buf : (const unsigned char *)"";
            src_len = w->norm.len;
        }
        if (held.len) {
            fj__out_put_run(&held, (const char *)src, src_len);
            src = (const unsigned char *)held.buf;
            src_len = held.len;
        }
        if ((st = w->norm.status) != FJ_OK || (st = held.status) != FJ_OK)
            break;
        size_t used = c->engine->convert(c, src, src_len, final, o, w);
        if ((st = fj__work_status(w)) != FJ_OK)
            break;
        if (src == (const unsigned char *)held.buf) {
            memmove(held.buf, held.buf + used, src_len - used);
            held.len = src_len - used;
        } else {
            fj__out_put_run(&held, (const char *)src + used, src_len - used);
        }
        pos += raw_used;
    }
    fj__out_release(&held);
    return st;
}

/* Converts the whole input into o. */
static fj_status run(const fj_converter *c, const char *input, size_t len, fj_out *o)
{
    fj_work w;
    fj__work_init(&w, conv_allocator(c));
    const unsigned char *text = (const unsigned char *)input;
    fj_status st;
    if (c->has_normalization && len > FJ_WINDOW) {
        st = windowed(c, text, len, o, &w);
    } else {
        size_t consumed;
        if (fj__normalize(c, text, len, 1, &w, &consumed)) {
            text = w.norm.buf ? (const unsigned char *)w.norm.buf : (const unsigned char *)"";
            len = w.norm.len;
        }
        st = w.norm.status;
        if (st == FJ_OK) {
            c->engine->convert(c, text, len, 1, o, &w);
            st = fj__work_status(&w);
        }
    }
    fj__work_release(&w);
    return st != FJ_OK ? st : o->status;
}

static int to_out(void *ctx, const char *data, size_t len)
{
    fj_out *o = ctx;
    fj__out_put_run(o, data, len);
    /* A full caller's buffer goes on counting the size. */
    return o->status != FJ_OK && o->status != FJ_ERR_BUFFER_TOO_SMALL;
}

/* A converter with stages: the whole input through its stream, after the
 * UTF-8 check (*bad: the offset of the first byte that fails it). */
static fj_status run_staged(const fj_converter *c, const char *input, size_t len, fj_out *o,
                            size_t *bad)
{
    if (c->pipe->strict_utf8) {
        int cut;
        size_t ok = fj_utf8_valid(input, len, &cut);
        if (ok < len) {
            *bad = ok;
            return FJ_ERR_INVALID_UTF8;
        }
    }
    fj_stream *s;
    fj_status st = fj__stream_open(c, to_out, o, 0, &s);
    if (st != FJ_OK)
        return st;
    st = fj_stream_feed(s, input, len);
    if (st == FJ_OK)
        st = fj_stream_finish(s);
    fj_stream_free(s);
    if (st == FJ_ERR_CALLBACK && o->status != FJ_OK)
        return o->status; /* out of memory for the output */
    return st != FJ_OK ? st : o->status;
}

fj_status fj_convert(const fj_converter *c, const char *input, size_t input_len, char *out,
                     size_t out_size, size_t *out_len)
{
    if (!c || (!input && input_len) || (!out && out_size) || !out_len)
        return FJ_ERR_INVALID_ARGUMENT;
    fj_out o;
    fj__out_init_buffer(&o, out, out_size);
    size_t bad = 0;
    fj_status st = c->pipe ? run_staged(c, input ? input : "", input_len, &o, &bad)
                             : run(c, input ? input : "", input_len, &o);
    *out_len = st == FJ_ERR_INVALID_UTF8 ? bad : o.spilled + o.len;
    return st;
}

fj_status fj_convert_alloc(const fj_converter *c, const char *input, size_t input_len,
                           char **out, size_t *out_len)
{
    if (!c || (!input && input_len) || !out)
        return FJ_ERR_INVALID_ARGUMENT;
    *out = NULL;
    fj_out o;
    fj__out_init_growable(&o, conv_allocator(c));
    size_t bad = 0;
    fj_status st = c->pipe ? run_staged(c, input ? input : "", input_len, &o, &bad)
                             : run(c, input ? input : "", input_len, &o);
    if (st == FJ_ERR_INVALID_UTF8 && out_len)
        *out_len = bad;
    if (st == FJ_OK) {
        char nul = 0;
        fj__out_put_run(&o, &nul, 1); /* room for the terminator */
        st = o.status;
    }
    if (st != FJ_OK) {
        fj__out_release(&o);
        return st;
    }
    *out = o.buf;
    if (out_len)
        *out_len = o.len - 1;
    return FJ_OK;
}

/* The buffer's size is not kept, so the allocator's free sees 0. */
void fj_free(const fj_converter *c, char *buffer)
{
    if (!buffer)
        return;
    fj__free(c ? conv_allocator(c) : NULL, buffer, 0);
}
