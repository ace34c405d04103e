/* fanjian formats: one input, whatever its encoding and format, through the
 * conversion to a writer (fanjian-formats.h, section 8).
 *
 * Text is streamed: read -> decode (when not UTF-8) or check (strict
 * UTF-8) -> Legado rules -> clean-up -> conversion -> typography -> encode
 * (when not writing UTF-8) -> writer. Markup and EPUB are read whole: a
 * document's structure decides what is text, and its text spans are
 * converted one at a time. Nothing here prints: failures are an fjf_error
 * with a kind, and what a caller may want to say afterwards (bytes
 * replaced, removals) is counted in fjf_file_stats. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fanjian-formats.h"

#define READ_CHUNK (1u << 20)
/* Detection wants a fair sample, even from a pipe that trickles. */
#define DETECT_SAMPLE (64u << 10)
/* Markup is held whole in memory; past this it is surely not a document. */
#define DOCUMENT_LIMIT (1ull << 30)

/* err about `subject` (an input or output the caller named, or NULL). */
static void set_about(fjf_error *err, fjf_error_kind kind, size_t offset, const char *subject,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void set_about(fjf_error *err, fjf_error_kind kind, size_t offset, const char *subject,
                      const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->offset = offset;
    err->kind = kind;
    err->subject = subject;
}
#define set_kind(err, kind, offset, ...) set_about(err, kind, offset, NULL, __VA_ARGS__)

char *fjf_read_all(int fd, size_t *len, unsigned long long limit)
{
    struct stat sb;
    size_t cap = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0
                     ? (size_t)sb.st_size + 1
                     : 65536;
    if (limit && cap > limit + 1)
        cap = (size_t)limit + 1;
    char *buf = malloc(cap);
    size_t n = 0;
    while (buf) {
        if (n == cap) {
            if (limit && n > limit) {
                free(buf);
                errno = E2BIG;
                return NULL;
            }
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = b;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (buf && limit && n > limit) {
        free(buf);
        errno = E2BIG;
        return NULL;
    }
    *len = n;
    return buf;
}

static int is_utf8_name(const char *name)
{
    return strcmp(name, "UTF-8") == 0;
}

/* ---- text -------------------------------------------------------------------- */

struct fjf_text {
    const fjf_settings *s;
    fj_write_fn write; /* the caller's writer */
    void *write_ctx;
    int write_failed;
    fjf_recoder *encoder; /* UTF-8 -> s->to_encoding, or NULL */
    fj_punct *punct;
    fj_stream *conv;
    fjf_parallel *par; /* instead of conv, with s->jobs > 1 */
    fj_clean_stream *clean;   /* per input: its lines are numbered from 1 */
    fjf_legado_stage *legado; /* per input, before clean: Legado removals */
    fjf_file_stats *stats;    /* per input */
    fjf_recoder *decoder;     /* per input, when it is not UTF-8 */
    int check_utf8;           /* UTF-8 input, strict: stop at the first invalid byte */
    unsigned char carry[4];   /* a UTF-8 sequence cut by the end of a read */
    size_t carry_len;
    unsigned long long fed; /* bytes of this input checked so far */
    unsigned long long base; /* bytes of this input passed on before its encoding was known */
    const char *name;       /* the current input */
    const char *output;     /* the output, as messages name it */
    fj_status conv_status;
    int encode_failed;
    fjf_error encode_error;
    char *buf;
};

static int to_writer(void *ctx, const char *data, size_t len)
{
    fjf_text *t = ctx;
    if (t->write(t->write_ctx, data, len) != 0) {
        t->write_failed = 1;
        return -1;
    }
    return 0;
}

static int to_encoder(void *ctx, const char *data, size_t len)
{
    fjf_text *t = ctx;
    if (fjf_recoder_feed(t->encoder, data, len, &t->encode_error) != 0) {
        t->encode_failed = 1;
        return -1;
    }
    return 0;
}

static fj_write_fn final_write(const fjf_text *t, void **ctx)
{
    *ctx = (void *)(uintptr_t)t;
    return t->encoder ? to_encoder : to_writer;
}

static int to_punct(void *ctx, const char *data, size_t len)
{
    return fj_punct_feed(ctx, data, len) == FJ_OK ? 0 : -1;
}

static int to_conv(void *ctx, const char *data, size_t len)
{
    fjf_text *t = ctx;
    fj_status st = t->par ? fjf_parallel_feed(t->par, data, len) : fj_stream_feed(t->conv, data, len);
    if (st != FJ_OK) {
        t->conv_status = st;
        return -1;
    }
    return 0;
}

/* What the Legado stage leaves: the next stage there is. */
static int after_legado(void *ctx, const char *data, size_t len)
{
    fjf_text *t = ctx;
    if (t->clean)
        return fj_clean_stream_feed(t->clean, data, len) == FJ_OK ? 0 : -1;
    if (t->conv || t->par)
        return to_conv(t, data, len);
    void *fctx;
    fj_write_fn w = final_write(t, &fctx);
    return w(fctx, data, len);
}

/* Where decoded UTF-8 goes: the first stage there is. */
static int to_head(void *ctx, const char *data, size_t len)
{
    fjf_text *t = ctx;
    if (t->legado)
        return fjf_legado_stage_feed(t->legado, data, len);
    return after_legado(t, data, len);
}

/* The base name scoped Legado rules are checked against: none for standard
 * input. */
static const char *book_name(const char *name)
{
    const char *slash = strrchr(name, '/');
    return strcmp(name, "standard input") == 0 ? NULL : slash ? slash + 1 : name;
}

static void count_removal(fjf_file_stats *stats, const fj_clean_removal *r)
{
    if (!stats)
        return;
    stats->removed_spans++;
    stats->removed_wholes += r->whole_line != 0;
    for (size_t i = 0; i < r->len; i++) /* characters: bytes that start one */
        stats->removed_chars += ((unsigned char)r->text[i] & 0xC0) != 0x80;
}

static int report_line(void *ctx, const fj_clean_removal *r)
{
    fjf_text *t = ctx;
    count_removal(t->stats, r);
    /* Lines the Legado rules dropped still count. */
    fj_clean_removal shown = *r;
    if (t->legado)
        shown.line = fjf_legado_stage_line(t->legado, r->line);
    return t->s->report(t->s->report_ctx, t->name, NULL, &shown);
}

static int chain_failed(const fjf_text *t)
{
    return t->write_failed || t->encode_failed || t->conv_status != FJ_OK;
}

/* Says what failed in the chain, once. */
static void chain_failure(const fjf_text *t, fj_status st, fjf_error *err)
{
    if (t->write_failed)
        set_kind(err, FJF_ERR_WRITE, FJF_NO_OFFSET, "the writer failed");
    else if (t->encode_failed)
        set_about(err, FJF_ERR_ENCODE, t->encode_error.offset, t->name, "cannot write %s: %s",
                 t->s->to_encoding, t->encode_error.message);
    else if (t->conv_status != FJ_OK)
        set_about(err, t->conv_status == FJ_ERR_NOMEM ? FJF_ERR_NOMEM : FJF_ERR_CONVERT,
                  FJF_NO_OFFSET, t->name, "%s", fj_strerror(t->conv_status));
    else if (st != FJ_OK)
        set_about(err, st == FJ_ERR_NOMEM ? FJF_ERR_NOMEM : FJF_ERR_CONVERT, FJF_NO_OFFSET,
                  t->name, "%s", fj_strerror(st));
    else
        set_about(err, FJF_ERR_CONVERT, FJF_NO_OFFSET, t->name, "the conversion failed");
}

int fjf_text_begin(const fjf_settings *s, const char *output, fj_write_fn write, void *write_ctx,
                   fjf_text **out_text, fjf_error *err)
{
    fjf_text *t = calloc(1, sizeof *t);
    if (!t || !(t->buf = malloc(READ_CHUNK))) {
        free(t);
        set_kind(err, FJF_ERR_NOMEM, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    t->s = s;
    t->write = write;
    t->write_ctx = write_ctx;
    t->conv_status = FJ_OK;
    t->output = output;
    t->name = output;
    if (s->to_encoding && !is_utf8_name(s->to_encoding) &&
        fjf_recoder_new("UTF-8", s->to_encoding, s->recode_flags, to_writer, t, &t->encoder,
                        err) != 0) {
        err->kind = FJF_ERR_ENCODE;
        fjf_text_free(t);
        return -1;
    }
    void *fctx;
    fj_write_fn fw = final_write(t, &fctx);
    if (s->conv && (s->quotes != FJ_QUOTES_KEEP || s->punct_flags) &&
        fj_punct_new((fj_quotes)s->quotes, s->punct_flags, NULL, fw, fctx, &t->punct) != FJ_OK) {
        set_kind(err, FJF_ERR_NOMEM, FJF_NO_OFFSET, "out of memory");
        fjf_text_free(t);
        return -1;
    }
    fj_write_fn cw = t->punct ? to_punct : fw;
    void *cctx = t->punct ? (void *)t->punct : fctx;
    if (s->conv && (s->jobs > 1 ? fjf_parallel_new(s->conv, s->jobs, 0, cw, cctx, &t->par)
                                : fj_stream_new(s->conv, cw, cctx, &t->conv)) != FJ_OK) {
        set_kind(err, FJF_ERR_NOMEM, FJF_NO_OFFSET, "out of memory");
        fjf_text_free(t);
        return -1;
    }
    *out_text = t;
    return 0;
}

/* Whether a read from fd would wait now: a pipe or terminal with nothing
 * ready (never a regular file, nor the end of the input). */
static int would_wait(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 0;
}

/* Reads until `want` bytes are in buf or the input ends; -1 on error. With
 * `when_idle`, also returns what it has (at least a byte) before a read
 * that would wait, so that it is converted and written first. */
static ssize_t read_some(int fd, char *buf, size_t want, int when_idle, int *eof)
{
    size_t n = 0;
    *eof = 0;
    while (n < want) {
        if (n > 0 && when_idle && would_wait(fd))
            break;
        ssize_t r = read(fd, buf + n, want - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0) {
            *eof = 1;
            break;
        }
        n += (size_t)r;
    }
    return (ssize_t)n;
}

static void invalid_utf8(const fjf_text *t, unsigned long long offset, fjf_error *err)
{
    set_about(err, FJF_ERR_INVALID_UTF8, (size_t)offset, t->name, "not valid UTF-8 at byte %llu",
             offset);
}

/* UTF-8 input, strict: checked as it passes, a cut sequence carried over. */
static int feed_checked_utf8(fjf_text *t, const char *data, size_t len, fjf_error *err)
{
    const unsigned char *p = (const unsigned char *)data;
    int cut;
    if (t->carry_len) {
        /* Complete the carried sequence from the new bytes. */
        unsigned char seq[8];
        size_t have = t->carry_len, take = len < 4 ? len : 4;
        memcpy(seq, t->carry, have);
        memcpy(seq + have, p, take);
        size_t ok = fj_utf8_valid((const char *)seq, have + take, &cut);
        if (ok < have) {
            if (cut && take == len) { /* still cut: keep carrying */
                memcpy(t->carry + have, p, take);
                t->carry_len += take;
                return 0;
            }
            invalid_utf8(t, t->fed - have, err);
            return -1;
        }
        size_t seq_len = ok; /* ok >= have: the carried sequence ended in the new bytes */
        size_t from_new = seq_len - have;
        if (to_head(t, (const char *)seq, seq_len) != 0) {
            chain_failure(t, FJ_ERR_CALLBACK, err);
            return -1;
        }
        t->carry_len = 0;
        p += from_new;
        len -= from_new;
        t->fed += from_new;
    }
    size_t ok = fj_utf8_valid((const char *)p, len, &cut);
    if (ok < len && !cut) {
        invalid_utf8(t, t->fed + ok, err);
        return -1;
    }
    if (to_head(t, (const char *)p, ok) != 0) {
        chain_failure(t, FJ_ERR_CALLBACK, err);
        return -1;
    }
    t->fed += len;
    memcpy(t->carry, p + ok, len - ok);
    t->carry_len = len - ok;
    return 0;
}

static int feed_decoded(fjf_text *t, const char *data, size_t len, fjf_error *err)
{
    if (t->check_utf8)
        return feed_checked_utf8(t, data, len, err);
    fjf_error derr;
    int rc = t->decoder ? fjf_recoder_feed(t->decoder, data, len, &derr) : to_head(t, data, len);
    if (rc == 0)
        return 0;
    if (t->decoder && !chain_failed(t))
        set_about(err, FJF_ERR_DECODE, (size_t)t->base + derr.offset, t->name, "%s",
                  derr.message);
    else
        chain_failure(t, FJ_ERR_CALLBACK, err);
    return -1;
}

/* The encoding of an input whose first n bytes are buf (eof: all of it). */
static int input_encoding(const fjf_text *t, const char *buf, size_t n, int eof,
                          fjf_encoding *enc, fjf_error *err)
{
    const fjf_settings *s = t->s;
    if (s->from_encoding) {
        memset(enc, 0, sizeof *enc);
        snprintf(enc->name, sizeof enc->name, "%s", s->from_encoding);
        enc->source = "given";
        return 0;
    }
    fjf_error derr;
    if (fjf_encoding_detect(buf, n, eof, enc, &derr) == 0)
        return 0;
    if (!(s->recode_flags & FJF_LOSSY)) {
        set_about(err, FJF_ERR_DETECT, (size_t)t->base + derr.offset, t->name, "%s",
                  derr.message);
        return -1;
    }
    /* Lossy: the guess detection settled on, replacing what fails. */
    if (!enc->name[0])
        snprintf(enc->name, sizeof enc->name, "UTF-8");
    return 0;
}

/* The decoding of one input, once its encoding is known; 0, or -1 with err. */
static int input_decoder(fjf_text *t, const fjf_encoding *enc, fjf_error *err)
{
    const fjf_settings *s = t->s;
    if (!is_utf8_name(enc->name) &&
        fjf_recoder_new(enc->name, "UTF-8", s->recode_flags & FJF_LOSSY, to_head, t, &t->decoder,
                        err) != 0) {
        err->kind = FJF_ERR_DECODE;
        err->offset = FJF_NO_OFFSET;
        err->subject = t->name;
        return -1;
    }
    t->check_utf8 = is_utf8_name(enc->name) && !(s->recode_flags & FJF_LOSSY);
    return 0;
}

/* The stages of one input after decoding; 0, or -1 with err. */
static int input_begin(fjf_text *t, fjf_error *err)
{
    const fjf_settings *s = t->s;
    t->carry_len = 0;
    t->fed = 0;
    t->base = 0;
    if (s->clean) {
        void *next_ctx = t;
        fj_write_fn next = t->conv || t->par ? to_conv : final_write(t, &next_ctx);
        if (fj_clean_stream_new(s->clean, next, next_ctx, s->report ? report_line : NULL, t,
                                &t->clean) != FJ_OK) {
            set_kind(err, FJF_ERR_NOMEM, FJF_NO_OFFSET, "out of memory");
            return -1;
        }
    }
    if (s->legado && fjf_legado_stage_new(s->legado, t->name, book_name(t->name),
                                          s->report != NULL, after_legado, t, &t->legado) != 0) {
        set_kind(err, FJF_ERR_NOMEM, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    return 0;
}

/* Ends one input's stages; 0, or -1 with err. */
static int input_end(fjf_text *t, const fjf_encoding *enc, fjf_error *err)
{
    if (t->carry_len) {
        set_about(err, FJF_ERR_CUT_UTF8, (size_t)(t->fed - t->carry_len), t->name,
                  "not valid UTF-8: the input ends inside a character at byte %llu",
                  t->fed - t->carry_len);
        return -1;
    }
    fjf_error derr;
    if (t->decoder && fjf_recoder_finish(t->decoder, &derr) != 0) {
        if (chain_failed(t))
            chain_failure(t, FJ_OK, err);
        else
            set_about(err, FJF_ERR_DECODE, (size_t)t->base + derr.offset, t->name, "%s",
                      derr.message);
        return -1;
    }
    if (t->decoder && t->stats) {
        t->stats->replaced_in = fjf_recoder_replaced(t->decoder);
        snprintf(t->stats->encoding, sizeof t->stats->encoding, "%s", enc->name);
    }
    if (t->legado && fjf_legado_stage_finish(t->legado) != 0) {
        if (chain_failed(t))
            chain_failure(t, FJ_OK, err);
        else
            set_kind(err, FJF_ERR_NOMEM, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    if (t->clean) {
        fj_status st = fj_clean_stream_finish(t->clean);
        if (st != FJ_OK) {
            chain_failure(t, st, err);
            return -1;
        }
    }
    return 0;
}

static void input_free(fjf_text *t)
{
    fj_clean_stream_free(t->clean);
    t->clean = NULL;
    fjf_legado_stage_free(t->legado);
    t->legado = NULL;
    fjf_recoder_free(t->decoder);
    t->decoder = NULL;
}

/* Where one input's bytes come from: a file descriptor read into t->buf,
 * or memory, handed out in the same pieces. */
typedef struct source {
    int fd;
    const char *data;
    size_t len, pos;
} source;

/* The next piece, of up to `want` bytes, in *piece; its length, or -1
 * (errno). *eof: nothing follows it. */
static ssize_t source_next(fjf_text *t, source *src, size_t want, const char **piece, int *eof)
{
    if (src->fd < 0) {
        size_t n = src->len - src->pos < want ? src->len - src->pos : want;
        *piece = src->data + src->pos;
        src->pos += n;
        *eof = src->pos == src->len;
        return (ssize_t)n;
    }
    *piece = t->buf;
    return read_some(src->fd, t->buf, want, t->s->write_when_idle, eof);
}

/* Whether the first len bytes of an input that pauses already settle its
 * encoding: a byte-order mark, or valid UTF-8 with a character of three
 * bytes or two of two (GBK or Big5 text is seldom that, and never for
 * long). Otherwise detection waits for its fair sample. */
static int sample_settled(const char *buf, size_t len)
{
    fjf_encoding enc;
    fjf_error derr;
    int cut;
    /* Marks are at most 4 bytes: no need to detect on more. */
    if (fjf_encoding_detect(buf, len < 4 ? len : 4, 0, &enc, &derr) == 0 && enc.source &&
        strcmp(enc.source, "bom") == 0)
        return 1;
    size_t ok = fj_utf8_valid(buf, len, &cut);
    if (ok < len && !cut)
        return 0;
    size_t continuation = 0;
    for (size_t i = 0; i < ok && continuation < 2; i++)
        continuation += ((unsigned char)buf[i] & 0xC0) == 0x80;
    return continuation >= 2;
}

/* The detection sample of an input that may pause (write_when_idle): read
 * until the sample is whole or settled, and in the meantime whole lines
 * of ASCII (which read the same in every encoding detection names, and
 * hold no NUL of UTF-16) go on through the stages. Its length, or -1 (a
 * read failed: errno) or -2 (the stages failed: err). */
static ssize_t read_sample(fjf_text *t, int fd, int *eof, fjf_error *err)
{
    size_t have = 0;
    for (;;) {
        ssize_t n = read_some(fd, t->buf + have, DETECT_SAMPLE - have, 1, eof);
        if (n < 0)
            return -1;
        have += (size_t)n;
        if (*eof || have == DETECT_SAMPLE || t->s->from_encoding ||
            sample_settled(t->buf, have))
            return (ssize_t)have;
        size_t ascii = 0, lines = 0;
        while (ascii < have && (unsigned char)t->buf[ascii] - 1u < 0x7Fu) /* 0x01..0x7F */
            if (t->buf[ascii++] == '\n')
                lines = ascii;
        if (lines && to_head(t, t->buf, lines) != 0) {
            chain_failure(t, FJ_ERR_CALLBACK, err);
            return -2;
        }
        memmove(t->buf, t->buf + lines, have - lines);
        have -= lines;
        t->base += lines;
    }
}

static int text_input(fjf_text *t, source *src, const char *name, fjf_file_stats *stats,
                      fjf_error *err)
{
    t->name = name;
    t->stats = stats;
    if (stats)
        memset(stats, 0, sizeof *stats);
    int eof = 0;
    const char *piece = t->buf;
    fjf_encoding enc;
    memset(&enc, 0, sizeof enc);
    int rc = input_begin(t, err);
    ssize_t n = 0;
    if (rc == 0) {
        n = src->fd >= 0 && t->s->write_when_idle ? read_sample(t, src->fd, &eof, err)
                                                  : source_next(t, src, DETECT_SAMPLE, &piece, &eof);
        if (n == -1)
            set_about(err, FJF_ERR_READ, FJF_NO_OFFSET, name, "%s", strerror(errno));
        rc = n < 0 ? -1 : 0;
    }
    t->fed = t->base;
    if (rc == 0)
        rc = input_encoding(t, piece, (size_t)n, eof, &enc, err);
    if (rc == 0)
        rc = input_decoder(t, &enc, err);
    unsigned long long total = t->base;
    while (rc == 0 && n > 0) {
        total += (unsigned long long)n;
        rc = feed_decoded(t, piece, (size_t)n, err);
        if (rc != 0 || eof)
            break;
        n = source_next(t, src, READ_CHUNK, &piece, &eof);
        if (n < 0) {
            set_about(err, FJF_ERR_READ, FJF_NO_OFFSET, name, "%s", strerror(errno));
            rc = -1;
        }
    }
    if (rc == 0)
        rc = input_end(t, &enc, err);
    input_free(t);
    if (stats)
        stats->bytes_read = total;
    t->stats = NULL;
    return rc;
}

int fjf_text_input(fjf_text *t, int fd, const char *name, fjf_file_stats *stats, fjf_error *err)
{
    source src = {fd, NULL, 0, 0};
    return text_input(t, &src, name, stats, err);
}

int fjf_text_input_memory(fjf_text *t, const char *data, size_t len, const char *name,
                          fjf_file_stats *stats, fjf_error *err)
{
    source src = {-1, data, len, 0};
    return text_input(t, &src, name, stats, err);
}

int fjf_text_end(fjf_text *t, fjf_file_stats *stats, fjf_error *err)
{
    fj_status st = FJ_OK;
    if (t->conv)
        st = fj_stream_finish(t->conv);
    if (t->par)
        st = fjf_parallel_finish(t->par);
    if (st == FJ_OK && t->punct)
        st = fj_punct_finish(t->punct);
    fjf_error eerr;
    if (st == FJ_OK && t->encoder && fjf_recoder_finish(t->encoder, &eerr) != 0) {
        if (!t->write_failed) {
            set_about(err, FJF_ERR_ENCODE, eerr.offset, t->output, "cannot write %s: %s",
                     t->s->to_encoding, eerr.message);
            return -1;
        }
        st = FJ_ERR_CALLBACK;
    }
    if (st != FJ_OK) {
        chain_failure(t, st, err);
        return -1;
    }
    if (stats && t->encoder)
        stats->replaced_out = fjf_recoder_replaced(t->encoder);
    return 0;
}

void fjf_text_free(fjf_text *t)
{
    if (!t)
        return;
    input_free(t);
    fj_stream_free(t->conv);
    fjf_parallel_free(t->par);
    fj_punct_free(t->punct);
    fjf_recoder_free(t->encoder);
    free(t->buf);
    free(t);
}

/* ---- whole documents ------------------------------------------------------------ */

static int buf_write(void *ctx, const char *data, size_t len)
{
    return fjf_buf_append(ctx, data, len);
}

/* One text span of a document: converted, then typography. */
static int convert_span(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    const fjf_settings *s = ctx;
    if (!s->conv)
        return fjf_buf_append(out, text, len);
    char *converted = NULL;
    size_t converted_len = 0;
    if (fj_convert_alloc(s->conv, text, len, &converted, &converted_len) != FJ_OK)
        return -1;
    int rc;
    if (s->quotes != FJ_QUOTES_KEEP || s->punct_flags) {
        fj_punct *p = NULL;
        rc = fj_punct_new((fj_quotes)s->quotes, s->punct_flags, NULL, buf_write, out, &p) == FJ_OK &&
                     fj_punct_feed(p, converted, converted_len) == FJ_OK &&
                     fj_punct_finish(p) == FJ_OK
                 ? 0
                 : -1;
        fj_punct_free(p);
    } else {
        rc = fjf_buf_append(out, converted, converted_len);
    }
    fj_free(s->conv, converted);
    return rc;
}

char *fjf_convert_name(const fjf_settings *s, const char *name)
{
    fjf_buf b = {0};
    fjf_settings plain = *s;
    plain.quotes = FJ_QUOTES_KEEP;
    plain.punct_flags = 0;
    if (convert_span(&plain, name, strlen(name), &b) != 0 || fjf_buf_append(&b, "", 1) != 0) {
        fjf_buf_free(&b);
        return NULL;
    }
    return b.data;
}

int fjf_decode_whole(const fjf_settings *s, const char *data, size_t len, const char *name,
                     char **utf8, size_t *utf8_len, fjf_encoding *enc, fjf_file_stats *stats,
                     fjf_error *err)
{
    fjf_error derr;
    memset(enc, 0, sizeof *enc);
    if (s->from_encoding) {
        snprintf(enc->name, sizeof enc->name, "%s", s->from_encoding);
        enc->source = "given";
    } else if (fjf_encoding_detect(data, len, 1, enc, &derr) != 0) {
        if (!(s->recode_flags & FJF_LOSSY)) {
            set_about(err, FJF_ERR_DETECT, derr.offset, name, "%s", derr.message);
            return -1;
        }
        if (!enc->name[0])
            snprintf(enc->name, sizeof enc->name, "UTF-8");
    }
    if (is_utf8_name(enc->name)) {
        *utf8 = (char *)(uintptr_t)data;
        *utf8_len = len;
        return 0;
    }
    fjf_buf b = {0};
    fjf_recoder *r = NULL;
    if (fjf_recoder_new(enc->name, "UTF-8", s->recode_flags & FJF_LOSSY, buf_write, &b, &r,
                        &derr) != 0 ||
        fjf_recoder_feed(r, data, len, &derr) != 0 || fjf_recoder_finish(r, &derr) != 0) {
        set_about(err, FJF_ERR_DECODE, derr.offset, name, "%s", derr.message);
        fjf_recoder_free(r);
        fjf_buf_free(&b);
        return -1;
    }
    if (stats) {
        stats->replaced_in = fjf_recoder_replaced(r);
        snprintf(stats->encoding, sizeof stats->encoding, "%s", enc->name);
    }
    fjf_recoder_free(r);
    *utf8 = b.data ? b.data : calloc(1, 1);
    *utf8_len = b.len;
    if (!*utf8) {
        set_kind(err, FJF_ERR_NOMEM, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    return 0;
}

static int rewrite(fjf_format format, const char *in, size_t len, const fjf_rewrite *rw,
                   fjf_buf *out, fjf_error *err)
{
    switch (format) {
    case FJF_HTML:
        return fjf_html_rewrite(in, len, rw, out, err);
    case FJF_XHTML:
        return fjf_xml_rewrite(FJF_XML_XHTML, in, len, rw, out, err);
    case FJF_MARKDOWN:
        return fjf_markdown_rewrite(in, len, rw, out, err);
    case FJF_SRT:
        return fjf_srt_rewrite(in, len, rw, out, err);
    case FJF_ASS:
        return fjf_ass_rewrite(in, len, rw, out, err);
    case FJF_VTT:
        return fjf_vtt_rewrite(in, len, rw, out, err);
    default:
        fjf_error_set(err, FJF_NO_OFFSET, "not a document format");
        return -1;
    }
}

/* The removals of one document, counted, then told to the caller's report. */
typedef struct doc_report {
    const fjf_settings *s;
    const char *name;
    fjf_file_stats *stats;
} doc_report;

static int report_removal(void *ctx, const char *part, const fj_clean_removal *r)
{
    doc_report *d = ctx;
    count_removal(d->stats, r);
    return d->s->report ? d->s->report(d->s->report_ctx, d->name, part, r) : 0;
}

/* The caller's writer, and whether it failed (a recoder's failure may be
 * its writer's). */
typedef struct checked_writer {
    fj_write_fn write;
    void *ctx;
    int failed;
} checked_writer;

static int checked_write(void *ctx, const char *data, size_t len)
{
    checked_writer *w = ctx;
    if (w->write(w->ctx, data, len) != 0) {
        w->failed = 1;
        return -1;
    }
    return 0;
}

/* err about `name`, with the byte, as a caller shows a document's failure. */
static void document_failure(fjf_error *err, const char *name)
{
    size_t n = strlen(err->message);
    if (err->offset != FJF_NO_OFFSET && n < sizeof err->message)
        snprintf(err->message + n, sizeof err->message - n, " (byte %zu)", err->offset);
    err->subject = name;
}

int fjf_document_convert(const fjf_settings *s, fjf_format format, const char *data, size_t len,
                         const char *name, fj_write_fn write, void *write_ctx, int out_fd,
                         fjf_file_stats *stats, fjf_error *err)
{
    fjf_file_stats none;
    if (!stats)
        stats = &none;
    memset(stats, 0, sizeof *stats);
    stats->bytes_read = len;
    fjf_rewrite rw = {0};
    rw.text = convert_span;
    rw.text_ctx = (void *)(uintptr_t)s;
    rw.lang = s->lang;
    /* Clean-up: boilerplate goes before conversion (docclean.c). */
    doc_report report = {s, name, stats};
    rw.clean = s->clean;
    /* Legado removals too, as spans of each block (docclean.c); scopes
     * name the file (an EPUB's, for all its documents). */
    if (s->clean && s->legado) {
        rw.legado = s->legado;
        rw.input = name;
        rw.book = book_name(name);
    }
    if (s->clean) {
        rw.report = report_removal;
        rw.report_ctx = &report;
    }
    if (format == FJF_EPUB) {
        if (fjf_epub_convert(data, len, out_fd, &rw, &s->limits, err) == 0)
            return 0;
        err->subject = name;
        err->kind = FJF_ERR_FORMAT;
        return -1;
    }
    char *utf8 = NULL;
    size_t utf8_len = 0;
    fjf_encoding enc;
    if (fjf_decode_whole(s, data, len, name, &utf8, &utf8_len, &enc, stats, err) != 0)
        return -1;
    const char *to = s->to_encoding ? s->to_encoding : "UTF-8";
    /* A document that declares its charset must declare the one written. */
    if (strcmp(enc.name, to) != 0)
        rw.charset = to;
    fjf_buf converted = {0};
    int rc = 0;
    if (rewrite(format, utf8, utf8_len, &rw, &converted, err) != 0) {
        document_failure(err, name);
        err->kind = FJF_ERR_FORMAT;
        rc = -1;
    } else if (!is_utf8_name(to)) {
        checked_writer w = {write, write_ctx, 0};
        fjf_recoder *r = NULL;
        if (fjf_recoder_new("UTF-8", to, s->recode_flags, checked_write, &w, &r, err) != 0 ||
            fjf_recoder_feed(r, converted.data ? converted.data : "", converted.len, err) != 0 ||
            fjf_recoder_finish(r, err) != 0) {
            if (w.failed) {
                set_kind(err, FJF_ERR_WRITE, FJF_NO_OFFSET, "the writer failed");
            } else {
                char why[sizeof err->message];
                memcpy(why, err->message, sizeof why);
                set_about(err, FJF_ERR_ENCODE, err->offset, name, "cannot write %s: %.200s", to,
                          why);
            }
            rc = -1;
        } else {
            stats->replaced_out = fjf_recoder_replaced(r);
        }
        fjf_recoder_free(r);
    } else if (write(write_ctx, converted.data ? converted.data : "", converted.len) != 0) {
        set_kind(err, FJF_ERR_WRITE, FJF_NO_OFFSET, "the writer failed");
        rc = -1;
    }
    fjf_buf_free(&converted);
    if (utf8 != data)
        free(utf8);
    return rc;
}

unsigned long long fjf_document_limit(const fjf_settings *s, fjf_format format)
{
    return format == FJF_EPUB ? s->limits.max_total : DOCUMENT_LIMIT;
}

int fjf_document_text(const fjf_settings *s, fjf_format format, const char *in, size_t len,
                      fjf_text_fn fn, void *ctx, fjf_error *err)
{
    fjf_rewrite rw = {0};
    rw.text = fn;
    rw.text_ctx = ctx;
    if (format == FJF_EPUB)
        return fjf_epub_convert(in, len, -1, &rw, &s->limits, err);
    fjf_buf markup = {0}; /* what the rewrite keeps, unwanted here */
    int rc = rewrite(format, in, len, &rw, &markup, err);
    fjf_buf_free(&markup);
    return rc;
}
