/* fanjian CLI: one input, whatever its encoding and format, through the
 * conversion to an output.
 *
 * Text is streamed: read -> decode (when not UTF-8) -> clean-up ->
 * conversion -> typography -> encode (when not writing UTF-8) -> sink.
 * Markup and EPUB are read whole: a document's structure decides what is
 * text, and its text spans are converted one at a time. */
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

#ifdef __SSE2__
#include <emmintrin.h>
#include <immintrin.h>
#endif

#define READ_CHUNK (1u << 20)
/* Detection wants a fair sample, even from a pipe that trickles. */
#define DETECT_SAMPLE (64u << 10)
/* Markup is held whole in memory; past this it is surely not a document. */
#define DOCUMENT_LIMIT (1ull << 30)

const char *fjx_profile_lang(const char *profile)
{
    static const struct {
        const char *profile, *lang;
    } langs[] = {
        {"s2t", "zh-Hant"},   {"tw2t", "zh-Hant"}, {"hk2t", "zh-Hant"}, {"jp2t", "zh-Hant"},
        {"s2tw", "zh-TW"},    {"s2twp", "zh-TW"},  {"t2tw", "zh-TW"},   {"s2hk", "zh-HK"},
        {"s2hkp", "zh-HK"},   {"t2hk", "zh-HK"},   {"t2s", "zh-CN"},    {"tw2s", "zh-CN"},
        {"tw2sp", "zh-CN"},   {"hk2s", "zh-CN"},   {"hk2sp", "zh-CN"},
    };
    for (size_t i = 0; profile && i < sizeof langs / sizeof langs[0]; i++)
        if (strcmp(profile, langs[i].profile) == 0)
            return langs[i].lang;
    return NULL;
}

char *fjx_read_all(int fd, size_t *len, unsigned long long limit)
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

/* ---- the dictionary ---------------------------------------------------------------- */

/* The dictionary: --dict, $FANJIAN_DICT, next to the executable, ../share/fanjian/
 * from it, the library's default. */
fj_status fjx_open_dict(const char *path, fj_dict **dict, fj_error *err)
{
    const char *env = getenv("FANJIAN_DICT");
    if (path || (env && *env))
        return fj_dict_open(path, NULL, dict, err);
    /* Beside the executable (a build tree), then ../share/fanjian/ from it
     * (an installed tree, whatever its prefix: PREFIX/bin/fanjian). The
     * executable's real path: a symbolic link to it does not count. */
    static const char *const rel[] = {"fanjian.fjd", "../share/fanjian/fanjian.fjd"};
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        const char *dir = dirname(exe);
        for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
            char candidate[PATH_MAX + 64];
            snprintf(candidate, sizeof candidate, "%s/%s", dir, rel[i]);
            if (access(candidate, R_OK) == 0)
                return fj_dict_open(candidate, NULL, dict, err);
        }
    }
    return fj_dict_open(NULL, NULL, dict, err);
}

/* ---- text -------------------------------------------------------------------- */

struct fjx_text {
    const fjx_settings *s;
    fjx_sink *out;
    fjf_recoder *encoder; /* UTF-8 -> s->to_encoding, or NULL */
    fj_punct *punct;
    fj_stream *conv;
    fj_clean_stream *clean; /* per input: its lines are numbered from 1 */
    fjf_legado_stage *legado; /* per input, before clean: Legado removals */
    unsigned long long removed_spans, removed_lines, removed_chars; /* per input, for --report */
    fjf_recoder *decoder;   /* per input, when it is not UTF-8 */
    int check_utf8;         /* UTF-8 input, strict: stop at the first invalid byte */
    unsigned char carry[4]; /* a UTF-8 sequence cut by the end of a read */
    size_t carry_len;
    unsigned long long fed; /* bytes of this input checked so far */
    const char *name;       /* the current input */
    fj_status conv_status;
    int encode_failed;
    fjf_error encode_error;
    char *buf;
};

static int to_encoder(void *ctx, const char *data, size_t len)
{
    fjx_text *t = ctx;
    if (fjf_recoder_feed(t->encoder, data, len, &t->encode_error) != 0) {
        t->encode_failed = 1;
        return -1;
    }
    return 0;
}

static fj_write_fn final_write(const fjx_text *t, void **ctx)
{
    if (t->encoder) {
        *ctx = (void *)(uintptr_t)t;
        return to_encoder;
    }
    *ctx = t->out;
    return fjx_sink_write;
}

static int to_punct(void *ctx, const char *data, size_t len)
{
    return fj_punct_feed(ctx, data, len) == FJ_OK ? 0 : -1;
}

static int to_conv(void *ctx, const char *data, size_t len)
{
    fjx_text *t = ctx;
    fj_status st = fj_stream_feed(t->conv, data, len);
    if (st != FJ_OK) {
        t->conv_status = st;
        return -1;
    }
    return 0;
}

/* What the Legado stage leaves: the next stage there is. */
static int after_legado(void *ctx, const char *data, size_t len)
{
    fjx_text *t = ctx;
    if (t->clean)
        return fj_clean_stream_feed(t->clean, data, len) == FJ_OK ? 0 : -1;
    if (t->conv)
        return to_conv(t, data, len);
    void *fctx;
    fj_write_fn w = final_write(t, &fctx);
    return w(fctx, data, len);
}

/* Where decoded UTF-8 goes: the first stage there is. */
static int to_head(void *ctx, const char *data, size_t len)
{
    fjx_text *t = ctx;
    if (t->legado)
        return fjf_legado_stage_feed(t->legado, data, len);
    return after_legado(t, data, len);
}

/* The Legado stage for input `name`: scoped rules are checked against its
 * base name (standard input has none). 0, or -1 (reported). */
static int legado_begin(fjx_text *t, const char *name)
{
    if (!t->s->legado)
        return 0;
    const char *slash = strrchr(name, '/');
    const char *book = strcmp(name, "standard input") == 0 ? NULL : slash ? slash + 1 : name;
    return fjf_legado_stage_new(t->s->legado, name, book, t->s->report, after_legado, t,
                                &t->legado);
}

static int report_line(void *ctx, const fj_clean_removal *r)
{
    fjx_text *t = ctx;
    /* Lines the Legado rules dropped still count. */
    unsigned long long line = t->legado ? fjf_legado_stage_line(t->legado, r->line) : r->line;
    /* One whole line at a time, whatever -r's other threads print. */
    flockfile(stderr);
    fprintf(stderr, "%s:%llu:%llu: ", t->name, line, r->column);
    fjf_display_text(stderr, r->text, r->len);
    putc('\n', stderr);
    funlockfile(stderr);
    t->removed_spans++;
    t->removed_lines += r->whole_line != 0;
    for (size_t i = 0; i < r->len; i++) /* characters: bytes that start one */
        t->removed_chars += ((unsigned char)r->text[i] & 0xC0) != 0x80;
    return 0;
}

/* Says what failed in the chain, once. */
static void report_chain_failure(const fjx_text *t, fj_status st)
{
    if (t->out->failed)
        fprintf(stderr, "fanjian: cannot write %s: %s\n", t->out->name, strerror(t->out->err));
    else if (t->encode_failed)
        fprintf(stderr, "fanjian: %s: cannot write %s: %s\n", t->name, t->s->to_encoding,
                t->encode_error.message);
    else if (t->conv_status != FJ_OK)
        fprintf(stderr, "fanjian: %s: %s\n", t->name, fj_strerror(t->conv_status));
    else if (st != FJ_OK)
        fprintf(stderr, "fanjian: %s: %s\n", t->name, fj_strerror(st));
}

int fjx_text_begin(const fjx_settings *s, fjx_sink *out, fjx_text **out_text)
{
    fjx_text *t = calloc(1, sizeof *t);
    if (!t || !(t->buf = malloc(READ_CHUNK))) {
        free(t);
        fprintf(stderr, "fanjian: out of memory\n");
        return -1;
    }
    t->s = s;
    t->out = out;
    t->conv_status = FJ_OK;
    t->name = out->name;
    fjf_error err;
    if (s->to_encoding && !is_utf8_name(s->to_encoding) &&
        fjf_recoder_new("UTF-8", s->to_encoding, s->recode_flags, fjx_sink_write, out,
                        &t->encoder, &err) != 0) {
        fprintf(stderr, "fanjian: %s\n", err.message);
        fjx_text_free(t);
        return -1;
    }
    void *fctx;
    fj_write_fn fw = final_write(t, &fctx);
    if (s->conv && (s->quotes != FJ_QUOTES_KEEP || s->punct_flags) &&
        fj_punct_new((fj_quotes)s->quotes, s->punct_flags, NULL, fw, fctx, &t->punct) != FJ_OK) {
        fprintf(stderr, "fanjian: out of memory\n");
        fjx_text_free(t);
        return -1;
    }
    if (s->conv && fj_stream_new(s->conv, t->punct ? to_punct : fw,
                                 t->punct ? (void *)t->punct : fctx, &t->conv) != FJ_OK) {
        fprintf(stderr, "fanjian: out of memory\n");
        fjx_text_free(t);
        return -1;
    }
    *out_text = t;
    return 0;
}

/* Reads until `want` bytes are in buf or the input ends; -1 on error. */
static ssize_t read_some(int fd, char *buf, size_t want, int *eof)
{
    size_t n = 0;
    *eof = 0;
    while (n < want) {
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

static int chain_failed(const fjx_text *t)
{
    return t->out->failed || t->encode_failed || t->conv_status != FJ_OK;
}

/* The length of the valid UTF-8 sequence at s[i], or 0: invalid, or (with
 * *cut set) only cut short by the end at n. */
static size_t utf8_sequence(const unsigned char *s, size_t n, size_t i, int *cut)
{
    unsigned c = s[i];
    if (c < 0x80)
        return 1;
    size_t need = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2
                : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
    if (!need)
        return 0;
    unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    for (size_t k = 1; k <= need; k++) {
        if (i + k >= n) {
            *cut = 1;
            return 0;
        }
        unsigned b = s[i + k];
        if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80)
            return 0;
    }
    return need + 1;
}

/* Length of the longest prefix of s[0..n) that is valid UTF-8; *cut is set
 * when it stops at a sequence that only the end cuts short. Checking sits
 * on the CLI's hot path, so 16-byte blocks of ASCII and ordinary three-byte
 * sequences (all of common Han) are checked at once with SSE2: every lead
 * E1..EF (not ED) must own exactly the next two bytes, every continuation
 * byte must be owed. Anything else goes byte by byte. */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__SSE2__)
#define HAVE_AVX2_CHECK 1
/* The same test 32 bytes at a time, where the CPU has AVX2: the bytes of
 * [s, s + n) it passed as whole blocks, stopping before the first block it
 * cannot pass; *carry as in utf8_valid_prefix. */
__attribute__((target("avx2"))) static size_t utf8_simple_blocks_avx2(const unsigned char *s,
                                                                       size_t n, unsigned *carry)
{
    const __m256i c0 = _mm256_set1_epi8((char)0xC0), x80 = _mm256_set1_epi8((char)0x80);
    const __m256i f0 = _mm256_set1_epi8((char)0xF0), e0 = _mm256_set1_epi8((char)0xE0);
    const __m256i ed = _mm256_set1_epi8((char)0xED);
    size_t i = 0;
    uint64_t owed_in = *carry;
    for (; n - i >= 32; i += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        uint32_t high = (uint32_t)_mm256_movemask_epi8(v);
        if (!high && !owed_in)
            continue;
        uint32_t cont = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(v, c0), x80));
        uint32_t lead3 = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(v, f0), e0));
        uint32_t ranged = (uint32_t)_mm256_movemask_epi8(
            _mm256_or_si256(_mm256_cmpeq_epi8(v, e0), _mm256_cmpeq_epi8(v, ed)));
        uint64_t owed = (uint64_t)lead3 << 1 | (uint64_t)lead3 << 2 | owed_in;
        if ((high & ~(cont | lead3)) != 0 || ranged || (uint32_t)owed != cont)
            break;
        owed_in = owed >> 32;
    }
    *carry = (unsigned)owed_in;
    return i;
}
#endif

static size_t utf8_valid_prefix(const unsigned char *s, size_t n, int *cut)
{
    size_t i = 0;
    *cut = 0;
#ifdef __SSE2__
    const __m128i c0 = _mm_set1_epi8((char)0xC0), x80 = _mm_set1_epi8((char)0x80);
    const __m128i f0 = _mm_set1_epi8((char)0xF0), e0 = _mm_set1_epi8((char)0xE0);
    const __m128i ed = _mm_set1_epi8((char)0xED);
    unsigned carry = 0; /* continuation bytes owed at the next block's first two bytes */
#ifdef HAVE_AVX2_CHECK
    const int avx2 = __builtin_cpu_supports("avx2");
#endif
    while (n - i >= 16) {
#ifdef HAVE_AVX2_CHECK
        if (avx2 && n - i >= 32) {
            i += utf8_simple_blocks_avx2(s + i, n - i, &carry);
            if (n - i < 16)
                break;
        }
#endif
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        unsigned high = (unsigned)_mm_movemask_epi8(v);
        if (!high && !carry) {
            i += 16;
            continue;
        }
        unsigned cont = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, c0), x80));
        unsigned lead3 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, f0), e0));
        unsigned ranged = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, e0), _mm_cmpeq_epi8(v, ed)));
        unsigned owed = (lead3 << 1) | (lead3 << 2) | carry;
        if ((high & ~(cont | lead3)) == 0 && !ranged && (owed & 0xFFFF) == cont) {
            carry = owed >> 16;
            i += 16;
            continue;
        }
        /* From the start of the sequence the carry belongs to. */
        size_t end = i + 16;
        i -= carry == 3 ? 1 : carry == 1 ? 2 : 0;
        while (i < end) {
            size_t len = utf8_sequence(s, n, i, cut);
            if (!len)
                return i;
            i += len;
        }
        carry = 0;
    }
    i -= carry == 3 ? 1 : carry == 1 ? 2 : 0;
#endif
    while (i < n) {
        size_t len = utf8_sequence(s, n, i, cut);
        if (!len)
            return i;
        i += len;
    }
    return n;
}

static void report_invalid_utf8(const fjx_text *t, unsigned long long offset)
{
    fprintf(stderr,
            "fanjian: %s: not valid UTF-8 at byte %llu (give --from-encoding, or --lossy to "
            "pass such bytes through unchanged)\n",
            t->name, offset);
}

/* UTF-8 input, strict: checked as it passes, a cut sequence carried over. */
static int feed_checked_utf8(fjx_text *t, const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    int cut;
    if (t->carry_len) {
        /* Complete the carried sequence from the new bytes. */
        unsigned char seq[8];
        size_t have = t->carry_len, take = len < 4 ? len : 4;
        memcpy(seq, t->carry, have);
        memcpy(seq + have, p, take);
        size_t ok = utf8_valid_prefix(seq, have + take, &cut);
        if (ok < have) {
            if (cut && take == len) { /* still cut: keep carrying */
                memcpy(t->carry + have, p, take);
                t->carry_len += take;
                return 0;
            }
            report_invalid_utf8(t, t->fed - have);
            return -1;
        }
        size_t seq_len = ok; /* ok >= have: the carried sequence ended in the new bytes */
        size_t from_new = seq_len - have;
        if (to_head(t, (const char *)seq, seq_len) != 0)
            return -1;
        t->carry_len = 0;
        p += from_new;
        len -= from_new;
        t->fed += from_new;
    }
    size_t ok = utf8_valid_prefix(p, len, &cut);
    if (ok < len && !cut) {
        report_invalid_utf8(t, t->fed + ok);
        return -1;
    }
    if (to_head(t, (const char *)p, ok) != 0)
        return -1;
    t->fed += len;
    memcpy(t->carry, p + ok, len - ok);
    t->carry_len = len - ok;
    return 0;
}

static int feed_decoded(fjx_text *t, const char *data, size_t len)
{
    fjf_error err;
    int rc;
    if (t->decoder)
        rc = fjf_recoder_feed(t->decoder, data, len, &err);
    else if (t->check_utf8)
        rc = feed_checked_utf8(t, data, len);
    else
        rc = to_head(t, data, len);
    if (rc == 0)
        return 0;
    if (t->decoder && !chain_failed(t))
        fprintf(stderr, "fanjian: %s: %s\n", t->name, err.message);
    else if (chain_failed(t) || !t->check_utf8)
        report_chain_failure(t, FJ_ERR_CALLBACK);
    return -1;
}

int fjx_text_input(fjx_text *t, int fd, const char *name, unsigned long long *bytes_read)
{
    const fjx_settings *s = t->s;
    t->name = name;
    int eof = 0;
    ssize_t n = read_some(fd, t->buf, DETECT_SAMPLE, &eof);
    if (n < 0) {
        fprintf(stderr, "fanjian: cannot read %s: %s\n", name, strerror(errno));
        return -1;
    }
    fjf_encoding enc;
    fjf_error err;
    if (s->from_encoding) {
        memset(&enc, 0, sizeof enc);
        snprintf(enc.name, sizeof enc.name, "%s", s->from_encoding);
        enc.source = "given";
    } else if (fjf_encoding_detect(t->buf, (size_t)n, eof, &enc, &err) != 0) {
        if (!(s->recode_flags & FJF_LOSSY)) {
            fprintf(stderr, "fanjian: %s: %s (give --from-encoding, or --lossy)\n", name,
                    err.message);
            return -1;
        }
        /* Lossy: the guess detection settled on, replacing what fails. */
        if (!enc.name[0])
            snprintf(enc.name, sizeof enc.name, "UTF-8");
    }
    int rc = 0;
    if (!is_utf8_name(enc.name) &&
        fjf_recoder_new(enc.name, "UTF-8", s->recode_flags & FJF_LOSSY, to_head, t, &t->decoder,
                        &err) != 0) {
        fprintf(stderr, "fanjian: %s: %s\n", name, err.message);
        return -1;
    }
    t->check_utf8 = is_utf8_name(enc.name) && !(s->recode_flags & FJF_LOSSY);
    t->carry_len = 0;
    t->fed = 0;
    t->removed_spans = t->removed_lines = t->removed_chars = 0;
    if (s->cleaner) {
        void *next_ctx = t;
        fj_write_fn next = t->conv ? to_conv : final_write(t, &next_ctx);
        if (fj_clean_stream_new(s->cleaner, next, next_ctx, s->report ? report_line : NULL, t,
                                &t->clean) != FJ_OK) {
            fprintf(stderr, "fanjian: out of memory\n");
            rc = -1;
        }
    }
    if (rc == 0)
        rc = legado_begin(t, name);
    unsigned long long total = 0;
    while (rc == 0 && n > 0) {
        total += (unsigned long long)n;
        rc = feed_decoded(t, t->buf, (size_t)n);
        if (rc != 0 || eof)
            break;
        n = read_some(fd, t->buf, READ_CHUNK, &eof);
        if (n < 0) {
            fprintf(stderr, "fanjian: cannot read %s: %s\n", name, strerror(errno));
            rc = -1;
        }
    }
    if (rc == 0 && t->carry_len) {
        fprintf(stderr, "fanjian: %s: not valid UTF-8: the input ends inside a character at "
                        "byte %llu (give --lossy to pass it through unchanged)\n",
                name, t->fed - t->carry_len);
        rc = -1;
    }
    if (rc == 0 && t->decoder && fjf_recoder_finish(t->decoder, &err) != 0) {
        if (chain_failed(t))
            report_chain_failure(t, FJ_OK);
        else
            fprintf(stderr, "fanjian: %s: %s\n", name, err.message);
        rc = -1;
    }
    if (rc == 0 && t->decoder && fjf_recoder_replaced(t->decoder))
        fprintf(stderr, "fanjian: %s: %llu bytes were not valid %s and became U+FFFD\n", name,
                fjf_recoder_replaced(t->decoder), enc.name);
    if (rc == 0 && t->legado && fjf_legado_stage_finish(t->legado) != 0) {
        if (chain_failed(t))
            report_chain_failure(t, FJ_OK);
        rc = -1;
    }
    if (rc == 0 && t->clean) {
        fj_status st = fj_clean_stream_finish(t->clean);
        if (st != FJ_OK) {
            report_chain_failure(t, st);
            rc = -1;
        } else if (s->report) {
            fprintf(stderr, "fanjian: %s: removed %llu spans (%llu whole lines), %llu characters\n",
                    name, t->removed_spans, t->removed_lines, t->removed_chars);
        }
    }
    fj_clean_stream_free(t->clean);
    t->clean = NULL;
    fjf_legado_stage_free(t->legado);
    t->legado = NULL;
    fjf_recoder_free(t->decoder);
    t->decoder = NULL;
    if (bytes_read)
        *bytes_read = total;
    return rc;
}

int fjx_text_end(fjx_text *t)
{
    fj_status st = FJ_OK;
    if (t->conv)
        st = fj_stream_finish(t->conv);
    if (st == FJ_OK && t->punct)
        st = fj_punct_finish(t->punct);
    fjf_error err;
    if (st == FJ_OK && t->encoder && fjf_recoder_finish(t->encoder, &err) != 0) {
        if (!t->out->failed) {
            fprintf(stderr, "fanjian: %s: cannot write %s: %s\n", t->out->name,
                    t->s->to_encoding, err.message);
            return -1;
        }
        st = FJ_ERR_CALLBACK;
    }
    if (st != FJ_OK) {
        report_chain_failure(t, st);
        return -1;
    }
    if (t->encoder && fjf_recoder_replaced(t->encoder))
        fprintf(stderr, "fanjian: %s: %llu characters have no %s form and became '?'\n",
                t->out->name, fjf_recoder_replaced(t->encoder), t->s->to_encoding);
    return 0;
}

void fjx_text_free(fjx_text *t)
{
    if (!t)
        return;
    fj_clean_stream_free(t->clean);
    fjf_legado_stage_free(t->legado);
    fjf_recoder_free(t->decoder);
    fj_stream_free(t->conv);
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
    const fjx_settings *s = ctx;
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

/* --report for documents: each removal, then a summary (print_clean_summary). */
typedef struct doc_report {
    const char *name;
    unsigned long long spans, wholes, chars;
} doc_report;

static int report_removal(void *ctx, const char *part, const fj_clean_removal *r)
{
    doc_report *d = ctx;
    unsigned long long chars = 0;
    for (size_t i = 0; i < r->len; i++)
        chars += ((unsigned char)r->text[i] & 0xC0) != 0x80;
    d->spans++;
    d->wholes += r->whole_line != 0;
    d->chars += chars;
    flockfile(stderr); /* one line, whole, when -r converts files in parallel */
    if (part) { /* an EPUB entry: BOOK!ENTRY:LINE:COLUMN */
        fprintf(stderr, "%s!", d->name);
        fjf_display_text(stderr, part, strlen(part));
    } else {
        fputs(d->name, stderr);
    }
    fprintf(stderr, ":%llu:%llu: ", r->line, r->column);
    fjf_display_text(stderr, r->text, r->len);
    putc('\n', stderr);
    funlockfile(stderr);
    return 0;
}

static void print_clean_summary(const doc_report *d)
{
    fprintf(stderr, "fanjian: %s: removed %llu spans (%llu whole blocks), %llu characters\n",
            d->name, d->spans, d->wholes, d->chars);
}

char *fjx_convert_name(const fjx_settings *s, const char *name)
{
    fjf_buf b = {0};
    fjx_settings plain = *s;
    plain.quotes = FJ_QUOTES_KEEP;
    plain.punct_flags = 0;
    if (convert_span(&plain, name, strlen(name), &b) != 0 || fjf_buf_append(&b, "", 1) != 0) {
        fjf_buf_free(&b);
        return NULL;
    }
    return b.data;
}

int fjx_decode_whole(const fjx_settings *s, const char *data, size_t len, const char *name,
                     char **utf8, size_t *utf8_len, fjf_encoding *enc)
{
    fjf_error err;
    memset(enc, 0, sizeof *enc);
    if (s->from_encoding) {
        snprintf(enc->name, sizeof enc->name, "%s", s->from_encoding);
        enc->source = "given";
    } else if (fjf_encoding_detect(data, len, 1, enc, &err) != 0) {
        if (!(s->recode_flags & FJF_LOSSY)) {
            fprintf(stderr, "fanjian: %s: %s (give --from-encoding, or --lossy)\n", name,
                    err.message);
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
                        &err) != 0 ||
        fjf_recoder_feed(r, data, len, &err) != 0 || fjf_recoder_finish(r, &err) != 0) {
        fprintf(stderr, "fanjian: %s: %s\n", name, err.message);
        fjf_recoder_free(r);
        fjf_buf_free(&b);
        return -1;
    }
    if (fjf_recoder_replaced(r))
        fprintf(stderr, "fanjian: %s: %llu bytes were not valid %s and became U+FFFD\n", name,
                fjf_recoder_replaced(r), enc->name);
    fjf_recoder_free(r);
    *utf8 = b.data ? b.data : calloc(1, 1);
    *utf8_len = b.len;
    return *utf8 ? 0 : -1;
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

int fjx_document_convert(const fjx_settings *s, fjf_format format, int fd, const char *name,
                         fjx_sink *out, unsigned long long *bytes_read)
{
    size_t len = 0;
    char *data = fjx_read_all(fd, &len, format == FJF_EPUB ? s->limits.max_total
                                                           : DOCUMENT_LIMIT);
    if (!data) {
        fprintf(stderr, "fanjian: cannot read %s: %s\n", name,
                errno == E2BIG ? "too large" : strerror(errno));
        return -1;
    }
    if (bytes_read)
        *bytes_read = len;
    fjf_error err;
    fjf_rewrite rw = {0};
    rw.text = convert_span;
    rw.text_ctx = (void *)(uintptr_t)s;
    rw.lang = s->lang;
    /* --clean: boilerplate goes before conversion (docclean.c). */
    doc_report report = {name, 0, 0, 0};
    rw.clean = s->cleaner;
    /* Legado removals too, as spans of each block (docclean.c); scopes
     * name the file (an EPUB's, for all its documents). */
    if (s->cleaner && s->legado) {
        const char *slash = strrchr(name, '/');
        rw.legado = s->legado;
        rw.input = name;
        rw.book = strcmp(name, "standard input") == 0 ? NULL : slash ? slash + 1 : name;
    }
    if (s->cleaner && s->report) {
        rw.report = report_removal;
        rw.report_ctx = &report;
    }
    int rc = 0;
    if (format == FJF_EPUB) {
        rc = fjf_epub_convert(data, len, out->fd, &rw, &s->limits, &err);
        if (rc != 0)
            fprintf(stderr, "fanjian: %s: %s\n", name, err.message);
        else if (rw.report)
            print_clean_summary(&report);
        free(data);
        return rc;
    }
    char *utf8 = NULL;
    size_t utf8_len = 0;
    fjf_encoding enc;
    if (fjx_decode_whole(s, data, len, name, &utf8, &utf8_len, &enc) != 0) {
        free(data);
        return -1;
    }
    const char *to = s->to_encoding ? s->to_encoding : "UTF-8";
    /* A document that declares its charset must declare the one written. */
    if (strcmp(enc.name, to) != 0)
        rw.charset = to;
    fjf_buf converted = {0};
    if (rewrite(format, utf8, utf8_len, &rw, &converted, &err) != 0) {
        if (err.offset != FJF_NO_OFFSET)
            fprintf(stderr, "fanjian: %s: %s (byte %zu)\n", name, err.message, err.offset);
        else
            fprintf(stderr, "fanjian: %s: %s\n", name, err.message);
        rc = -1;
    } else if (!is_utf8_name(to)) {
        fjf_recoder *r = NULL;
        if (fjf_recoder_new("UTF-8", to, s->recode_flags, fjx_sink_write, out, &r, &err) != 0 ||
            fjf_recoder_feed(r, converted.data ? converted.data : "", converted.len, &err) != 0 ||
            fjf_recoder_finish(r, &err) != 0) {
            if (out->failed)
                fprintf(stderr, "fanjian: cannot write %s: %s\n", out->name, strerror(out->err));
            else
                fprintf(stderr, "fanjian: %s: cannot write %s: %s\n", name, to, err.message);
            rc = -1;
        }
        fjf_recoder_free(r);
    } else if (fjx_sink_write(out, converted.data ? converted.data : "", converted.len) != 0) {
        fprintf(stderr, "fanjian: cannot write %s: %s\n", out->name, strerror(out->err));
        rc = -1;
    }
    if (rc == 0 && rw.report)
        print_clean_summary(&report);
    fjf_buf_free(&converted);
    if (utf8 != data)
        free(utf8);
    free(data);
    return rc;
}

int fjx_document_text(const fjx_settings *s, fjf_format format, const char *in, size_t len,
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
