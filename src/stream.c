/* Streaming: convert what is decided, keep the undecided tail. Each loop in
 * the pipeline stops exactly where more input could change its result, so
 * the output equals one-shot conversion however the input is split. */
#include <string.h>

#include "internal.h"
#include "utf8.h"

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
    fj_error error; /* the first failure (fj_stream_error) */
    /* A converter with stages (conv->pipe, NULL for a plain one): input
     * goes through the UTF-8 check and `clean`, then the conversion into
     * `out`, then `punct` (when there is one) to the caller's `write`. */
    const fj_stages *pipe;
    fj_clean_stream *clean;
    fj_punct *punct;
    fj_write_fn write;
    void *write_ctx;
    fj_status stage_status; /* what failed behind a stage's write callback */
    int check_utf8, fed_any;
    unsigned long long fed;  /* bytes fed, for the UTF-8 check's offsets */
    unsigned char carry[4]; /* a sequence the last piece's end cut short */
    size_t carry_len;
    char outbuf[FJ_STREAM_OUT];
};

static const fj_allocator *stream_allocator(const fj_stream *s)
{
    return s->conv->allocator.alloc ? &s->conv->allocator : NULL;
}

static int to_punct(void *ctx, const char *data, size_t len)
{
    fj_stream *s = ctx;
    fj_status st = fj_punct_feed(s->punct, data, len);
    if (st != FJ_OK && s->stage_status == FJ_OK)
        s->stage_status = st;
    return st != FJ_OK;
}

static fj_status convert_piece(fj_stream *s, const char *input, size_t len);

static int from_clean(void *ctx, const char *data, size_t len);

fj_status fj__stream_open(const fj_converter *conv, fj_write_fn write, void *write_ctx,
                          int check_utf8, fj_stream **out)
{
    if (!conv || !write || !out)
        return FJ_ERR_INVALID_ARGUMENT;
    const fj_allocator *a = conv->allocator.alloc ? &conv->allocator : NULL;
    fj_stream *s = fj__alloc(a, sizeof *s);
    if (!s)
        return FJ_ERR_NOMEM;
    memset(s, 0, offsetof(fj_stream, outbuf));
    s->conv = conv;
    fj__work_init(&s->work, a);
    fj__out_init_growable(&s->pending, a);
    fj__out_init_growable(&s->joined, a);
    const fj_stages *g = conv->pipe;
    if (!g) {
        fj__out_init_callback(&s->out, s->outbuf, sizeof s->outbuf, write, write_ctx);
        *out = s;
        return FJ_OK;
    }
    s->pipe = g;
    s->write = write;
    s->write_ctx = write_ctx;
    s->check_utf8 = check_utf8 && g->strict_utf8;
    fj_status st = FJ_OK;
    if (g->quotes != FJ_QUOTES_KEEP || g->punct)
        st = fj_punct_new(g->quotes, g->punct, a, write, write_ctx, &s->punct);
    if (s->punct)
        fj__out_init_callback(&s->out, s->outbuf, sizeof s->outbuf, to_punct, s);
    else
        fj__out_init_callback(&s->out, s->outbuf, sizeof s->outbuf, write, write_ctx);
    if (st == FJ_OK && g->clean)
        st = fj_clean_stream_new(g->clean, from_clean, s, NULL, NULL, &s->clean);
    if (st != FJ_OK) {
        fj_stream_free(s);
        return st;
    }
    *out = s;
    return FJ_OK;
}

fj_status fj_stream_new(const fj_converter *conv, fj_write_fn write, void *write_ctx,
                        fj_stream **out)
{
    return fj__stream_open(conv, write, write_ctx, 1, out);
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

static fj_status convert_window(fj_stream *s, const char *input, size_t len);

/* The conversion of one piece: what is decided goes to `out`. */
static fj_status convert_piece(fj_stream *s, const char *input, size_t len)
{
    /* A long piece a window at a time (FJ_WINDOW), where normalization
     * would otherwise copy all of it. */
    while (s->conv->has_normalization && len > FJ_WINDOW) {
        size_t n = fj__window_end((const unsigned char *)input);
        fj_status st = convert_window(s, input, n);
        if (st != FJ_OK)
            return st;
        input += n;
        len -= n;
    }
    return convert_window(s, input, len);
}

/* One window of a piece. */
static fj_status convert_window(fj_stream *s, const char *input, size_t len)
{
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

/* The first failure is the one fj_stream_error tells of. */
static fj_status failed(fj_stream *s, fj_status st)
{
    if (st != FJ_OK && s->error.code == FJ_OK)
        fj__set_error(&s->error, st, 0, "%s", fj_strerror(st));
    return st;
}

/* ---- a converter with stages ---------------------------------------------- */

/* The conversion stage, between clean-up and typography. */
static fj_status stage_convert(fj_stream *s, const char *data, size_t len)
{
    if (!s->pipe->identity)
        return convert_piece(s, data, len);
    fj__out_put_run(&s->out, data, len);
    fj__out_flush(&s->out);
    return worst(s);
}

static int from_clean(void *ctx, const char *data, size_t len)
{
    fj_stream *s = ctx;
    fj_status st = stage_convert(s, data, len);
    if (st != FJ_OK && s->stage_status == FJ_OK)
        s->stage_status = st;
    return st != FJ_OK;
}

/* A stage's status: where it is a failed write callback, what failed
 * behind it. */
static fj_status stage_result(const fj_stream *s, fj_status st)
{
    return st == FJ_ERR_CALLBACK && s->stage_status != FJ_OK ? s->stage_status : st;
}

static fj_status invalid_utf8(fj_stream *s, unsigned long long offset, int at_end)
{
    if (at_end)
        fj__set_error(&s->error, FJ_ERR_INVALID_UTF8, (size_t)offset,
                      "not valid UTF-8: the input ends inside a character at byte %llu", offset);
    else
        fj__set_error(&s->error, FJ_ERR_INVALID_UTF8, (size_t)offset,
                      "not valid UTF-8 at byte %llu", offset);
    return FJ_ERR_INVALID_UTF8;
}

/* Checks a piece, with the sequence the last one cut short before it. */
static fj_status check_piece(fj_stream *s, const unsigned char *p, size_t len)
{
    size_t i = 0;
    if (s->carry_len) {
        unsigned char seq[8];
        size_t have = s->carry_len, take = len < 4 ? len : 4;
        memcpy(seq, s->carry, have);
        memcpy(seq + have, p, take);
        uint32_t cp;
        int k = fj_utf8_decode(seq, seq + have + take, &cp);
        if (k == FJ_U8_INCOMPLETE) { /* still cut short: the piece is all of it so far */
            memcpy(s->carry + have, p, len);
            s->carry_len += len;
            s->fed += len;
            return FJ_OK;
        }
        if (k < 0)
            return invalid_utf8(s, s->fed - have, 0);
        i = (size_t)k - have;
        s->carry_len = 0;
    }
    int cut;
    size_t ok = i + fj_utf8_valid((const char *)p + i, len - i, &cut);
    if (ok < len && !cut)
        return invalid_utf8(s, s->fed + ok, 0);
    memcpy(s->carry, p + ok, len - ok);
    s->carry_len = len - ok;
    s->fed += len;
    return FJ_OK;
}

static fj_status staged_feed(fj_stream *s, const char *input, size_t len)
{
    if (s->error.code != FJ_OK)
        return s->error.code;
    s->fed_any = 1;
    if (s->check_utf8) {
        fj_status st = check_piece(s, (const unsigned char *)input, len);
        if (st != FJ_OK)
            return st;
    }
    fj_status st = s->clean ? fj_clean_stream_feed(s->clean, input, len)
                            : stage_convert(s, input, len);
    return stage_result(s, st);
}

static fj_status staged_finish(fj_stream *s)
{
    if (s->error.code != FJ_OK)
        return s->error.code;
    if (s->carry_len)
        return invalid_utf8(s, s->fed - s->carry_len, 1);
    fj_status st = s->clean ? fj_clean_stream_finish(s->clean) : FJ_OK;
    if (st == FJ_OK)
        st = s->pipe->identity ? worst(s) : process(s, "", 0, 1);
    if (st == FJ_OK && s->punct)
        st = fj_punct_finish(s->punct);
    return stage_result(s, st);
}

/* ---- the calls ------------------------------------------------------------ */

fj_status fj_stream_feed(fj_stream *s, const char *input, size_t len)
{
    if (!s || (!input && len))
        return FJ_ERR_INVALID_ARGUMENT;
    if (s->finished)
        return failed(s, FJ_ERR_STREAM_STATE);
    if (s->pipe)
        return failed(s, staged_feed(s, input ? input : "", len));
    if (len == 0)
        return FJ_OK;
    return failed(s, convert_piece(s, input, len));
}

fj_status fj_stream_finish(fj_stream *s)
{
    if (!s)
        return FJ_ERR_INVALID_ARGUMENT;
    if (s->finished)
        return failed(s, FJ_ERR_STREAM_STATE);
    s->finished = 1;
    if (s->pipe)
        return failed(s, staged_finish(s));
    return failed(s, process(s, "", 0, 1));
}

fj_status fj_stream_error(const fj_stream *s, fj_error *error)
{
    if (!s) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "invalid argument");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    if (error) {
        if (s->error.code == FJ_OK)
            fj__set_error(error, FJ_OK, 0, "%s", fj_strerror(FJ_OK));
        else
            *error = s->error;
    }
    return s->error.code;
}

fj_status fj_stream_set_clean_report(fj_stream *s, fj_clean_report_fn report, void *ctx)
{
    if (!s || !s->clean)
        return FJ_ERR_INVALID_ARGUMENT;
    if (s->fed_any || s->finished)
        return FJ_ERR_STREAM_STATE;
    fj_clean_stream *fresh;
    fj_status st = fj_clean_stream_new(s->pipe->clean, from_clean, s, report, ctx, &fresh);
    if (st != FJ_OK)
        return st;
    fj_clean_stream_free(s->clean);
    s->clean = fresh;
    return FJ_OK;
}

size_t fj_stream_pending(const fj_stream *s) { return s ? s->pending.len : 0; }

void fj_stream_free(fj_stream *s)
{
    if (!s)
        return;
    const fj_allocator *a = stream_allocator(s);
    fj_clean_stream_free(s->clean);
    fj_punct_free(s->punct);
    fj__work_release(&s->work);
    fj__out_release(&s->pending);
    fj__out_release(&s->joined);
    fj__free(a, s, sizeof *s);
}

/* An ideographic description sequence is at most FJ_IDS_MAX_CODEPOINTS
 * characters of at most 4 bytes: one that could reach a newline starts
 * this close before it. */
#define FJ_IDS_REACH (4 * FJ_IDS_MAX_CODEPOINTS)

/* Whether some U+2FF0..U+2FFF (E2 BF B0..BF) starts in p[0..n). */
static int has_ids_operator(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i + 2 < n; i++)
        if (p[i] == 0xE2 && p[i + 1] == 0xBF && (p[i + 2] & 0xF0) == 0xB0)
            return 1;
    return 0;
}

size_t fj_independent_prefix(const fj_converter *c, const char *text, size_t len)
{
    if (!c || !text || len == 0)
        return 0;
    /* Only the engines whose output depends on the text alone: a newline
     * is in no key, so every run and segment ends there, and nothing is
     * carried from one call to the next. */
    if (c->engine != &fj__compat_engine && c->engine != &fj__context_engine)
        return 0;
    if (c->pipe && (c->pipe->clean || c->pipe->quotes != FJ_QUOTES_KEEP || c->pipe->punct ||
                    c->pipe->strict_utf8))
        return 0;
    if (c->norm_always || !(c->barrier['\n' >> 3] >> ('\n' & 7) & 1))
        return 0;
    const unsigned char *p = (const unsigned char *)text;
    for (size_t i = len; i > 0; i--) {
        if (p[i - 1] != '\n')
            continue;
        size_t from = i - 1 > FJ_IDS_REACH ? i - 1 - FJ_IDS_REACH : 0;
        if (!has_ids_operator(p + from, i - 1 - from))
            return i;
    }
    return 0;
}
