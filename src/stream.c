/* Streaming: convert what is decided, keep the undecided tail. Each loop in
 * the pipeline stops exactly where more input could change its result, so
 * the output equals one-shot conversion however the input is split. */
#include <string.h>

#include "internal.h"

#define FJ_STREAM_OUT 65536
/* How far into a new piece a line end is looked for (see fj_stream_feed). */
#define FJ_STREAM_SPLIT 4096

struct fj_stream {
    const fj_converter *conv;
    fj_out out;
    fj_work work;
    fj_out pending; /* input not yet converted (normalized or not: normalizing is idempotent) */
    fj_out joined;  /* pending followed by the new piece */
    int finished;
    char outbuf[FJ_STREAM_OUT];
};

static const fj_allocator *stream_allocator(const fj_stream *s)
{
    return s->conv->allocator.alloc ? &s->conv->allocator : NULL;
}

fj_status fj_stream_new(const fj_converter *conv, fj_write_fn write, void *write_ctx,
                        fj_stream **out)
{
    if (!conv || !write || !out)
        return FJ_ERR_INVALID_ARGUMENT;
    const fj_allocator *a = conv->allocator.alloc ? &conv->allocator : NULL;
    fj_stream *s = fj__alloc(a, sizeof *s);
    if (!s)
        return FJ_ERR_NOMEM;
    memset(s, 0, offsetof(fj_stream, outbuf));
    s->conv = conv;
    fj__out_init_callback(&s->out, s->outbuf, sizeof s->outbuf, write, write_ctx);
    fj__work_init(&s->work, a);
    fj__out_init_growable(&s->pending, a);
    fj__out_init_growable(&s->joined, a);
    *out = s;
    return FJ_OK;
}

static fj_status worst(fj_stream *s)
{
    if (fj__work_status(&s->work) != FJ_OK)
        return fj__work_status(&s->work);
    fj_out *all[] = {&s->pending, &s->joined, &s->out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->status != FJ_OK)
            return all[i]->status;
    return FJ_OK;
}

static fj_status process(fj_stream *s, const char *input, size_t len, int final)
{
    const unsigned char *text = (const unsigned char *)input;
    if (s->pending.len) {
        s->joined.len = 0;
        fj__out_put_run(&s->joined, s->pending.buf, s->pending.len);
        fj__out_put_run(&s->joined, input, len);
        text = (const unsigned char *)s->joined.buf;
        len = s->joined.len;
        s->pending.len = 0;
    }
    fj_status st = worst(s);
    if (st != FJ_OK)
        return st;
    size_t raw_used;
    const unsigned char *norm = text;
    size_t norm_len = len;
    if (fj__normalize(s->conv, text, len, final, &s->work, &raw_used)) {
        /* An empty normalization has no buffer; the engines want a pointer. */
        norm = s->work.norm.buf ? (const unsigned char *)s->work.norm.buf
                                : (const unsigned char *)"";
        norm_len = s->work.norm.len;
    } else {
        raw_used = len;
    }
    if ((st = worst(s)) != FJ_OK)
        return st;
    size_t used = s->conv->engine->convert(s->conv, norm, norm_len, final, &s->out, &s->work);
    /* Keep the undecided tail: the rest of the normalized text, then the raw
     * bytes normalization could not decide yet. */
    fj__out_put_run(&s->pending, (const char *)norm + used, norm_len - used);
    fj__out_put_run(&s->pending, (const char *)text + raw_used, len - raw_used);
    fj__out_flush(&s->out);
    return worst(s);
}

fj_status fj_stream_feed(fj_stream *s, const char *input, size_t len)
{
    if (!s || (!input && len))
        return FJ_ERR_INVALID_ARGUMENT;
    if (s->finished)
        return FJ_ERR_STREAM_STATE;
    if (len == 0)
        return FJ_OK;
    if (s->pending.len && len > FJ_STREAM_SPLIT) {
        /* Joining the undecided tail to all of a long piece would copy the
         * piece. A line end decides the tail (no key holds one), so the
         * piece's first line goes with the tail and the rest on its own;
         * any split gives the same output, so nothing else depends on it. */
        const char *nl = memchr(input, '\n', FJ_STREAM_SPLIT);
        if (nl) {
            size_t head = (size_t)(nl - input) + 1;
            fj_status st = process(s, input, head, 0);
            if (st != FJ_OK)
                return st;
            input += head;
            len -= head;
        }
    }
    return process(s, input, len, 0);
}

fj_status fj_stream_finish(fj_stream *s)
{
    if (!s)
        return FJ_ERR_INVALID_ARGUMENT;
    if (s->finished)
        return FJ_ERR_STREAM_STATE;
    s->finished = 1;
    return process(s, "", 0, 1);
}

size_t fj_stream_pending(const fj_stream *s) { return s ? s->pending.len : 0; }

void fj_stream_free(fj_stream *s)
{
    if (!s)
        return;
    const fj_allocator *a = stream_allocator(s);
    fj__work_release(&s->work);
    fj__out_release(&s->pending);
    fj__out_release(&s->joined);
    fj__free(a, s, sizeof *s);
}
