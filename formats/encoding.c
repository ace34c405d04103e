/* fanjian formats: text encodings.
 *
 * Detection: a byte-order mark, then NUL bytes in alternate positions
 * (UTF-16 without a mark), then strict UTF-8, then uchardet. Whatever is
 * guessed must decode the sample with iconv, and the detector's guess is
 * weighed against the Chinese encodings by how plausible the decoded text
 * is, since GB18030 decodes almost any bytes and uchardet errs on short
 * samples.
 *
 * The recoder decodes to UTF-32 and encodes from it in a second iconv
 * step, so that a byte that does not decode and a character the target
 * cannot hold are told apart, and each is located in the input. */
#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#include "dynload.h"
#include "fanjian-formats.h"

#define NO_ICONV ((iconv_t)-1)

/* iconv's prototype takes char ** even for input it never writes. */
static char *unconst(const void *p) { return (char *)(uintptr_t)p; }

/* The UTF-32 form whose code units are native uint32_t. */
static const char *utf32_native(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one ? "UTF-32LE" : "UTF-32BE";
}

static int same_name(const char *a, const char *b) { return strcasecmp(a, b) == 0; }

/* ---- UTF-8 ------------------------------------------------------------------ */

/* UTF-8 is checked by the library's one validator (fj_utf8_valid). */

/* Offset of the first byte of s[0..n) that is not valid UTF-8 (n when all
 * is); *cut tells whether it begins a sequence cut by the end; *multibyte
 * counts the valid non-ASCII sequences before it. */
static size_t utf8_check(const unsigned char *s, size_t n, int *cut, size_t *multibyte)
{
    size_t ok = fj_utf8_valid((const char *)s, n, cut);
    *multibyte = 0;
    for (size_t i = 0; i < ok; i++) /* lead bytes of valid sequences */
        *multibyte += s[i] >= 0xC0;
    return ok;
}

/* Writes code point c as UTF-8 to out (5 bytes: 4 and a NUL). */
/* Invalid UTF-8 sequences in s[0..n), reading on past each bad byte. */
static size_t utf8_errors(const char *data, size_t n)
{
    size_t errors = 0, i = 0;
    while (i < n) {
        i += fj_utf8_valid(data + i, n - i, NULL);
        if (i < n) {
            errors++;
            i++;
        }
    }
    return errors;
}

static void utf8_encode(uint32_t c, char out[5])
{
    unsigned char *o = (unsigned char *)out;
    if (c < 0x80) {
        *o++ = (unsigned char)c;
    } else if (c < 0x800) {
        *o++ = (unsigned char)(0xC0 | c >> 6);
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        *o++ = (unsigned char)(0xE0 | c >> 12);
        *o++ = (unsigned char)(0x80 | (c >> 6 & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    } else {
        *o++ = (unsigned char)(0xF0 | c >> 18);
        *o++ = (unsigned char)(0x80 | (c >> 12 & 0x3F));
        *o++ = (unsigned char)(0x80 | (c >> 6 & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    *o = 0;
}

/* ---- names ---------------------------------------------------------------------- */

static const struct {
    const char *alias, *name;
} encoding_aliases[] = {
    {"utf8", "UTF-8"},          {"utf-8", "UTF-8"},
    {"gbk", "GB18030"},         {"gb2312", "GB18030"},
    {"cp936", "GB18030"},       {"ms936", "GB18030"},
    {"windows-936", "GB18030"}, {"euc-cn", "GB18030"},
    {"gb18030", "GB18030"},     {"big5", "BIG5"},
    {"cp950", "BIG5"},          {"big5hkscs", "BIG5-HKSCS"},
    {"big5-hkscs", "BIG5-HKSCS"}, {"utf16", "UTF-16"},
    {"utf-16", "UTF-16"},       {"utf16le", "UTF-16LE"},
    {"utf-16le", "UTF-16LE"},   {"utf16be", "UTF-16BE"},
    {"utf-16be", "UTF-16BE"},   {"utf32", "UTF-32"},
    {"utf-32", "UTF-32"},       {"utf32le", "UTF-32LE"},
    {"utf-32le", "UTF-32LE"},   {"utf32be", "UTF-32BE"},
    {"utf-32be", "UTF-32BE"},
};

static int iconv_knows(const char *name)
{
    iconv_t cd = iconv_open(utf32_native(), name);
    if (cd == NO_ICONV)
        return 0;
    iconv_close(cd);
    return 1;
}

const char *fjf_encoding_canonical(const char *name, char buf[32])
{
    size_t len = name ? strlen(name) : 0;
    /* "//TRANSLIT" and "//IGNORE" would hide the errors we report. */
    if (len == 0 || len >= 32 || strchr(name, '/'))
        return NULL;
    for (size_t i = 0; i < sizeof encoding_aliases / sizeof encoding_aliases[0]; i++)
        if (same_name(name, encoding_aliases[i].alias))
            return strcpy(buf, encoding_aliases[i].name);
    if (!iconv_knows(name))
        return NULL;
    for (size_t i = 0; i <= len; i++)
        buf[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 'a' + 'A' : name[i]);
    return buf;
}

/* ---- detection ------------------------------------------------------------------ */

/* Non-ASCII characters scored per candidate: enough to judge, bounded cost. */
#define SCORE_LIMIT 4096
/* Non-ASCII characters a failing legacy decoding must have read before it
 * is named in the error instead of UTF-8. */
#define MIN_EVIDENCE 8
/* How much more plausible a fallback must be to overrule the detector. */
#define DETECTOR_MARGIN 0.15

/* Whether a hanzi is common, judged by glibc's own tables: the first
 * levels of GB2312 (B0A1-D7F9) and of Big5 (A440-C67E) hold the
 * characters of everyday text in either script, and a wrong decoding
 * lands mostly outside them. */
typedef struct hanzi_probe {
    iconv_t to_gb2312, to_big5;
} hanzi_probe;

static int encodes_within(iconv_t cd, uint32_t c, unsigned char lead_lo, unsigned char lead_hi)
{
    if (cd == NO_ICONV)
        return 0;
    unsigned char out[8];
    char *in = (char *)&c, *o = (char *)out;
    size_t in_left = 4, out_left = sizeof out;
    iconv(cd, NULL, NULL, NULL, NULL);
    if (iconv(cd, &in, &in_left, &o, &out_left) == (size_t)-1 || sizeof out - out_left != 2)
        return 0;
    return out[0] >= lead_lo && out[0] <= lead_hi;
}

static int common_hanzi(const hanzi_probe *probe, uint32_t c)
{
    return encodes_within(probe->to_gb2312, c, 0xB0, 0xD7) ||
           encodes_within(probe->to_big5, c, 0xA4, 0xC6);
}

typedef struct candidate {
    char name[32];
    size_t bad_at; /* first byte that does not decode; the sample's length if none */
    int cut;       /* bad_at begins a character that the sample's end cuts */
    size_t nonascii, common, pua;
    size_t errors; /* undecodable bytes, reading on past each */
    /* Kana are only plausible from a Japanese encoding: from a Chinese
     * one they are the sign of Big5 read as GB18030 (GB2312's kana rows). */
    int japanese;
} candidate;

/* Plausibility: the share of non-ASCII characters that everyday Chinese
 * (or Korean) text is made of, less private-use ones, which a wrong
 * decoding of Big5 as GB18030 (or of Big5-ETEN as BIG5) yields. */
static double plausibility(const candidate *c)
{
    if (c->nonascii == 0)
        return 0;
    return ((double)c->common - (double)c->pua) / (double)c->nonascii;
}

static void score_char(candidate *cand, const hanzi_probe *probe, uint32_t c)
{
    if (c < 0x80 || cand->nonascii >= SCORE_LIMIT)
        return;
    cand->nonascii++;
    if ((c >= 0xE000 && c <= 0xF8FF) || c >= 0xF0000)
        cand->pua++;
    else if (c >= 0x4E00 && c <= 0x9FFF)
        cand->common += (size_t)common_hanzi(probe, c);
    else if ((c >= 0x3000 && c <= 0x303F) || (c >= 0xFF01 && c <= 0xFF5E) ||
             (c >= 0x2010 && c <= 0x2027) || (c >= 0x2500 && c <= 0x257F) || c == 0x00B7 ||
             (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0x3040 && c <= 0x30FF && cand->japanese))
        cand->common++; /* punctuation, box drawing, Hangul, kana */
}

/* Decodes the sample as cand->name, filling in where it fails and how
 * plausible it reads; 0, or -1 when iconv does not know the name. */
static int try_decode(candidate *cand, const char *data, size_t len, int complete,
                      const hanzi_probe *probe)
{
    cand->bad_at = 0;
    cand->cut = 0;
    cand->nonascii = cand->common = cand->pua = cand->errors = 0;
    cand->japanese = strstr(cand->name, "JIS") || strstr(cand->name, "JP") ||
                     same_name(cand->name, "CP932") || same_name(cand->name, "WINDOWS-31J");
    iconv_t cd = iconv_open(utf32_native(), cand->name);
    if (cd == NO_ICONV)
        return -1;
    char *in = unconst(data);
    size_t in_left = len;
    cand->bad_at = len;
    uint32_t chars[1024];
    for (;;) {
        char *out = (char *)chars;
        size_t out_left = sizeof chars;
        size_t rc = in_left ? iconv(cd, &in, &in_left, &out, &out_left)
                            : iconv(cd, NULL, NULL, &out, &out_left);
        int error = rc == (size_t)-1 ? errno : 0;
        size_t n = (sizeof chars - out_left) / 4;
        for (size_t i = 0; i < n; i++)
            score_char(cand, probe, chars[i]);
        if (error == E2BIG)
            continue;
        if (error == EINVAL && !complete)
            break;
        if (error == EILSEQ || error == EINVAL) {
            /* Note the first failure, then read on past the byte: how
             * often a decoding fails is evidence too. */
            if (!cand->errors++) {
                cand->bad_at = len - in_left;
                cand->cut = error == EINVAL;
            }
            in++;
            in_left--;
            iconv(cd, NULL, NULL, NULL, NULL);
            continue;
        }
        if (error || in_left == 0)
            break;
    }
    iconv_close(cd);
    return 0;
}

/* The detector's answer as an iconv name we decode with; "" for none. */
static void detector_guess(const char *data, size_t len, char name[32])
{
    name[0] = 0;
    /* Without the library, the Chinese candidates are still tried. */
    const fjf_uchardet_api *u = fjf_uchardet_api_load();
    if (!u)
        return;
    uchardet_t ud = u->uchardet_new();
    if (!ud)
        return;
    if (u->uchardet_handle_data(ud, data, len) == 0) {
        u->uchardet_data_end(ud);
        const char *answer = u->uchardet_get_charset(ud);
        static const char *const gb_family[] = {"GB2312", "GBK", "GB18030", "CP936",
                                                "EUC-CN", "X-GBK"};
        if (!answer || !*answer || strlen(answer) >= 32 || same_name(answer, "ASCII") ||
            strncasecmp(answer, "HZ", 2) == 0) /* HZ is 7-bit: glibc has no decoder for it */
            answer = "";
        for (size_t i = 0; i < sizeof gb_family / sizeof gb_family[0]; i++)
            if (same_name(answer, gb_family[i]))
                answer = "GB18030"; /* the superset, so GBK files round-trip too */
        if (same_name(answer, "BIG5") || same_name(answer, "CP950"))
            answer = "BIG5";
        /* Only the East Asian multibyte families: a Western single-byte
         * answer (WINDOWS-1252 for a stray 0x80) decodes anything into
         * mojibake, and a Chinese converter never wants it. */
        static const char *const east_asian[] = {"GB18030", "BIG5", "BIG5-HKSCS", "EUC-TW",
                                                 "EUC-JP", "SHIFT_JIS", "CP932", "EUC-KR",
                                                 "UHC", "CP949"};
        int wanted = 0;
        for (size_t i = 0; i < sizeof east_asian / sizeof east_asian[0]; i++)
            wanted |= same_name(answer, east_asian[i]);
        if (!wanted)
            answer = "";
        if (*answer && iconv_knows(answer))
            strcpy(name, answer);
    }
    u->uchardet_delete(ud);
}

/* UTF-16 without a mark, by its NUL bytes: text has none, while UTF-16
 * has one in the high half of every ASCII character (and UTF-32 in both
 * halves, which this leaves alone). */
static const char *utf16_by_nuls(const unsigned char *s, size_t len)
{
    size_t even = 0, odd = 0, n = len < 65536 ? len : 65536;
    for (size_t i = 0; i + 1 < n; i += 2) {
        even += s[i] == 0;
        odd += s[i + 1] == 0;
    }
    if (odd >= 2 && even * 10 <= odd)
        return "UTF-16LE";
    if (even >= 2 && odd * 10 <= even)
        return "UTF-16BE";
    return NULL;
}

static void set_encoding(fjf_encoding *out, const char *name, size_t bom_len, const char *source)
{
    snprintf(out->name, sizeof out->name, "%s", name);
    out->bom_len = bom_len;
    out->source = source;
}

static void set_decode_error(fjf_error *err, const candidate *c, size_t base)
{
    if (c->cut)
        fjf_error_set(err, base + c->bad_at, "file ends inside a %s character at byte %zu",
                      c->name, base + c->bad_at);
    else
        fjf_error_set(err, base + c->bad_at, "not valid %s at byte %zu", c->name,
                      base + c->bad_at);
}

/* Accepts `name` for the whole sample after `skip` bytes, or fails naming
 * the first byte that does not decode. */
static int detect_as(const char *name, const char *source, const char *data, size_t len,
                     size_t skip, int complete, fjf_encoding *out, fjf_error *err)
{
    set_encoding(out, name, skip, source);
    candidate cand;
    snprintf(cand.name, sizeof cand.name, "%s", name);
    hanzi_probe none = {NO_ICONV, NO_ICONV};
    if (try_decode(&cand, data + skip, len - skip, complete, &none) != 0) {
        fjf_error_set(err, FJF_NO_OFFSET, "iconv cannot decode %s", name);
        return -1;
    }
    if (cand.bad_at == len - skip)
        return 0;
    set_decode_error(err, &cand, skip);
    return -1;
}

/* Picks among the detector's guess and the Chinese encodings. */
static int detect_by_content(const char *data, size_t len, int complete, size_t utf8_bad,
                             int utf8_cut, fjf_encoding *out, fjf_error *err)
{
    char guess[32];
    detector_guess(data, len, guess);
    static const char *const fallbacks[] = {"GB18030", "BIG5", "BIG5-HKSCS"};
    candidate cands[4];
    size_t n = 0;
    if (*guess)
        snprintf(cands[n++].name, sizeof cands[0].name, "%s", guess);
    for (size_t i = 0; i < sizeof fallbacks / sizeof fallbacks[0]; i++)
        if (!same_name(guess, fallbacks[i]))
            snprintf(cands[n++].name, sizeof cands[0].name, "%s", fallbacks[i]);

    hanzi_probe probe = {iconv_open("GB2312", utf32_native()),
                         iconv_open("BIG5", utf32_native())};
    int known[4];
    for (size_t i = 0; i < n; i++)
        known[i] = try_decode(&cands[i], data, len, complete, &probe) == 0;
    if (probe.to_gb2312 != NO_ICONV)
        iconv_close(probe.to_gb2312);
    if (probe.to_big5 != NO_ICONV)
        iconv_close(probe.to_big5);

    /* BIG5-HKSCS only when BIG5 leaves bytes undecoded or in private use
     * (Hong Kong characters, Big5-ETEN's symbols): for Taiwan text BIG5
     * keeps the forms its punctuation is written in (U+FF5E, U+2027). */
    candidate *big5 = NULL, *hkscs = NULL;
    for (size_t i = 0; i < n; i++) {
        if (same_name(cands[i].name, "BIG5"))
            big5 = &cands[i];
        if (same_name(cands[i].name, "BIG5-HKSCS"))
            hkscs = &cands[i];
    }
    int hkscs_wanted = hkscs && big5 && hkscs->bad_at == len &&
                       (big5->bad_at < len || hkscs->pua < big5->pua);

    const candidate *best = NULL, *furthest = NULL, *guessed = NULL;
    for (size_t i = 0; i < n; i++) {
        const candidate *c = &cands[i];
        if (!known[i])
            continue;
        if (!furthest || c->errors < furthest->errors ||
            (c->errors == furthest->errors && c->bad_at > furthest->bad_at))
            furthest = c;
        if (c->bad_at < len || (c == hkscs && !hkscs_wanted) || (c == big5 && hkscs_wanted))
            continue;
        /* A clean decoding with no East Asian text in it is no evidence
         * (glibc's BIG5 takes a lone 0x80 for U+0080). */
        if (c->common == 0)
            continue;
        if (*guess && i == 0)
            guessed = c;
        if (!best || plausibility(c) > plausibility(best))
            best = c;
    }
    /* The detector's guess stands unless another reads clearly better. */
    if (guessed && plausibility(guessed) + DETECTOR_MARGIN >= plausibility(best))
        best = guessed;
    const char *guess_family = same_name(guess, "BIG5") && hkscs_wanted ? "BIG5-HKSCS" : guess;
    if (best) {
        set_encoding(out, best->name, 0,
                     *guess && same_name(best->name, guess_family) ? "detector" : "fallback");
        return 0;
    }
    /* Nothing decodes: a legacy encoding is named only when it fails less
     * often than UTF-8 and reads as plausible Chinese (a damaged GBK
     * file); otherwise the bytes are damaged UTF-8, the default. */
    if (furthest && furthest->errors < utf8_errors(data, len) &&
        furthest->nonascii >= MIN_EVIDENCE && plausibility(furthest) >= 0.5) {
        set_encoding(out, furthest->name, 0,
                     *guess && same_name(furthest->name, guess) ? "detector" : "fallback");
        set_decode_error(err, furthest, 0);
        return -1;
    }
    set_encoding(out, "UTF-8", 0, "fallback");
    candidate c = {.name = "UTF-8", .bad_at = utf8_bad, .cut = utf8_cut};
    set_decode_error(err, &c, 0);
    return -1;
}

int fjf_encoding_detect(const char *data, size_t len, int complete, fjf_encoding *out,
                        fjf_error *err)
{
    static const struct {
        const char *name, *bom;
        size_t len;
    } boms[] = {
        {"UTF-32LE", "\xFF\xFE\0\0", 4}, {"UTF-32BE", "\0\0\xFE\xFF", 4},
        {"UTF-8", "\xEF\xBB\xBF", 3},    {"UTF-16LE", "\xFF\xFE", 2},
        {"UTF-16BE", "\xFE\xFF", 2},     {"GB18030", "\x84\x31\x95\x33", 4},
    };
    const unsigned char *s = (const unsigned char *)data;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof boms / sizeof boms[0]; i++)
        if (len >= boms[i].len && memcmp(data, boms[i].bom, boms[i].len) == 0)
            return detect_as(boms[i].name, "bom", data, len, boms[i].len, complete, out, err);

    const char *utf16 = utf16_by_nuls(s, len);
    if (utf16)
        return detect_as(utf16, "detector", data, len, 0, complete, out, err);

    int cut;
    size_t multibyte;
    size_t bad = utf8_check(s, len, &cut, &multibyte);
    if (bad == len || (cut && !complete)) {
        set_encoding(out, "UTF-8", 0, "utf-8");
        return 0;
    }
    /* Valid UTF-8 this far is no accident: GB18030 would decode the same
     * bytes, cleanly and wrongly. */
    if ((cut && multibyte > 0) || multibyte >= 8) {
        set_encoding(out, "UTF-8", 0, "utf-8");
        candidate c = {.name = "UTF-8", .bad_at = bad, .cut = cut};
        set_decode_error(err, &c, 0);
        return -1;
    }
    return detect_by_content(data, len, complete, bad, cut, out, err);
}

/* ---- the recoder ------------------------------------------------------------------ */

#define CHARS_CAP 16384     /* UTF-32 code units between the two iconv steps */
#define OUT_CAP (64 * 1024) /* output bytes between writes */
#define CARRY_CAP 32        /* the end of a feed that does not finish a character */

struct fjf_recoder {
    char from[32], to[32];    /* as named, for messages */
    char decode_name[32];     /* what the decoder reads ("UTF-16" resolved by its mark) */
    iconv_t decoder, encoder; /* both NO_ICONV when copying UTF-8 to UTF-8 */
    int copy_utf8;
    int await_bom;    /* "UTF-16"/"UTF-32" input: the decoder waits for the mark */
    size_t unit;      /* bytes one undecodable unit spans: 2 in UTF-16, 4 in UTF-32 */
    unsigned flags;
    fj_write_fn write;
    void *write_ctx;
    int failed;
    unsigned long long replaced;
    size_t consumed; /* input bytes decoded or replaced, before the carry */
    unsigned char carry[CARRY_CAP];
    size_t carry_len;
    size_t out_len;
    uint32_t chars[CHARS_CAP];
    char out[OUT_CAP];
};

static int flush_output(fjf_recoder *r, fjf_error *err)
{
    if (r->out_len == 0)
        return 0;
    size_t n = r->out_len;
    r->out_len = 0;
    if (r->write(r->write_ctx, r->out, n) != 0) {
        fjf_error_set(err, FJF_NO_OFFSET, "write failed");
        return -1;
    }
    return 0;
}

static int append_output(fjf_recoder *r, const char *data, size_t len, fjf_error *err)
{
    if (len > OUT_CAP - r->out_len && flush_output(r, err) != 0)
        return -1;
    if (len >= OUT_CAP) {
        if (r->write(r->write_ctx, data, len) != 0) {
            fjf_error_set(err, FJF_NO_OFFSET, "write failed");
            return -1;
        }
        return 0;
    }
    memcpy(r->out + r->out_len, data, len);
    r->out_len += len;
    return 0;
}

/* Runs UTF-32 text (NULL: the encoder's closing shift) through the
 * encoder into the output buffer. On a character the target cannot hold
 * it stops and returns 1 with *stopped_at its index. */
static int encode_run(fjf_recoder *r, const uint32_t *chars, size_t n, size_t *stopped_at,
                      fjf_error *err)
{
    char *in = unconst(chars);
    size_t in_left = n * 4;
    for (;;) {
        char *out = r->out + r->out_len;
        size_t room = OUT_CAP - r->out_len;
        size_t rc = chars ? iconv(r->encoder, &in, &in_left, &out, &room)
                          : iconv(r->encoder, NULL, NULL, &out, &room);
        int error = rc == (size_t)-1 ? errno : 0;
        r->out_len = OUT_CAP - room;
        if (!error)
            return 0;
        if (error == E2BIG && r->out_len > 0) {
            if (flush_output(r, err) != 0)
                return -1;
            continue;
        }
        if (error == EILSEQ && chars) {
            *stopped_at = (size_t)(in - (const char *)chars) / 4;
            return 1;
        }
        fjf_error_set(err, FJF_NO_OFFSET, "cannot write %s (iconv error %d)", r->to, error);
        return -1;
    }
}

/* Writes a replacement: U+FFFD where the target holds it, else '?'. */
static int encode_replacement(fjf_recoder *r, uint32_t c, fjf_error *err)
{
    const uint32_t question = '?';
    size_t at;
    int rc = encode_run(r, &c, 1, &at, err);
    if (rc == 1)
        rc = encode_run(r, &question, 1, &at, err);
    if (rc == 1)
        fjf_error_set(err, FJF_NO_OFFSET, "%s has no replacement character", r->to);
    return rc == 0 ? 0 : -1;
}

/* Offset within block[0..len) of the character that decodes to code unit
 * `index`, found again with a fresh decoder, one character at a time. The
 * block starts at a character boundary; for stateless encodings (all but
 * the ISO-2022 family and UTF-7) the fresh decoder reads it as the first
 * did. */
static size_t locate_char(const fjf_recoder *r, const char *block, size_t len, size_t index)
{
    iconv_t cd = iconv_open(utf32_native(), r->decode_name);
    if (cd == NO_ICONV)
        return 0;
    size_t pos = 0, seen = 0;
    while (pos < len) {
        size_t used = 0, produced = 0;
        for (size_t try_len = 1; pos + try_len <= len && !used && !produced; try_len++) {
            uint32_t chars[8];
            char *in = unconst(block + pos), *out = (char *)chars;
            size_t in_left = try_len, out_left = sizeof chars;
            size_t rc = iconv(cd, &in, &in_left, &out, &out_left);
            used = try_len - in_left;
            produced = (sizeof chars - out_left) / 4;
            if (rc == (size_t)-1 && errno != EINVAL && !used && !produced)
                break;
        }
        if (!used && !produced)
            break;
        if (seen + produced > index)
            break;
        seen += produced;
        pos += used;
    }
    iconv_close(cd);
    return pos;
}

/* Encodes chars[0..n), decoded from block[0..block_len) at input offset
 * r->consumed: '?' for what the target cannot hold, or an error naming it. */
static int encode_decoded(fjf_recoder *r, size_t n, const char *block, size_t block_len,
                          fjf_error *err)
{
    size_t done = 0;
    while (done < n) {
        size_t at;
        int rc = encode_run(r, r->chars + done, n - done, &at, err);
        if (rc <= 0)
            return rc;
        done += at;
        uint32_t c = r->chars[done];
        if (!(r->flags & FJF_LOSSY)) {
            size_t offset = r->consumed + locate_char(r, block, block_len, done);
            char shown[5] = "";
            if (c >= 0x20 && c != 0x7F && !(c >= 0x80 && c < 0xA0))
                utf8_encode(c, shown);
            fjf_error_set(err, offset, "U+%04X%s%s%s at byte %zu cannot be written in %s",
                          (unsigned)c, *shown ? " (" : "", shown, *shown ? ")" : "", offset,
                          r->to);
            return -1;
        }
        const uint32_t question = '?';
        rc = encode_run(r, &question, 1, &at, err);
        if (rc == 1)
            fjf_error_set(err, FJF_NO_OFFSET, "%s cannot hold '?'", r->to);
        if (rc != 0)
            return -1;
        r->replaced++;
        done++;
    }
    return 0;
}

static void set_bad_input(const fjf_recoder *r, const unsigned char *at, size_t left,
                          fjf_error *err)
{
    size_t offset = r->consumed;
    if (left >= 2)
        fjf_error_set(err, offset, "not valid %s at byte %zu (0x%02X 0x%02X)", r->from, offset,
                      at[0], at[1]);
    else
        fjf_error_set(err, offset, "not valid %s at byte %zu (0x%02X)", r->from, offset, at[0]);
}

/* Skips one undecodable unit under FJF_LOSSY, writing U+FFFD for it. */
static int replace_unit(fjf_recoder *r, const char **in, size_t *left, fjf_error *err)
{
    size_t skip = r->unit < *left ? r->unit : *left;
    if (r->copy_utf8 ? append_output(r, "\xEF\xBF\xBD", 3, err) != 0
                     : encode_replacement(r, 0xFFFD, err) != 0)
        return -1;
    r->replaced++;
    *in += skip;
    *left -= skip;
    r->consumed += skip;
    return 0;
}

/* Decodes and encodes *in[0..*left) up to a character the end cuts,
 * which stays there. */
static int decode_span(fjf_recoder *r, const char **in, size_t *left, fjf_error *err)
{
    while (*left > 0) {
        const char *start = *in;
        char *p = unconst(*in), *out = (char *)r->chars;
        size_t room = sizeof r->chars;
        size_t rc = iconv(r->decoder, &p, left, &out, &room);
        int error = rc == (size_t)-1 ? errno : 0;
        *in = p;
        size_t used = (size_t)(*in - start);
        if (encode_decoded(r, (sizeof r->chars - room) / 4, start, used, err) != 0)
            return -1;
        r->consumed += used;
        if (!error || error == E2BIG)
            continue;
        if (error == EINVAL)
            return 0;
        if (error != EILSEQ) {
            fjf_error_set(err, r->consumed, "cannot read %s (iconv error %d)", r->from, error);
            return -1;
        }
        if (!(r->flags & FJF_LOSSY)) {
            set_bad_input(r, (const unsigned char *)*in, *left, err);
            return -1;
        }
        if (replace_unit(r, in, left, err) != 0)
            return -1;
    }
    return 0;
}

/* UTF-8 to UTF-8: validates and copies, without iconv. */
static int copy_span(fjf_recoder *r, const char **in, size_t *left, fjf_error *err)
{
    for (;;) {
        const unsigned char *s = (const unsigned char *)*in;
        size_t n = *left;
        int cut;
        size_t i = fj_utf8_valid(*in, n, &cut);
        if (append_output(r, *in, i, err) != 0)
            return -1;
        r->consumed += i;
        *in += i;
        *left -= i;
        if (i == n || cut)
            return 0;
        if (!(r->flags & FJF_LOSSY)) {
            set_bad_input(r, s + i, n - i, err);
            return -1;
        }
        if (replace_unit(r, in, left, err) != 0)
            return -1;
    }
}

static int process_span(fjf_recoder *r, const char **in, size_t *left, fjf_error *err)
{
    return r->copy_utf8 ? copy_span(r, in, left, err) : decode_span(r, in, left, err);
}

/* "UTF-16" and "UTF-32" input: the mark names the byte order and is not
 * text; without one, a NUL first byte means big-endian, else little
 * (what Windows writes). */
static int resolve_byte_order(fjf_recoder *r, fjf_error *err)
{
    const unsigned char *c = r->carry;
    size_t mark = 0;
    int big;
    if (r->unit == 2) {
        if (r->carry_len >= 2 && ((c[0] == 0xFF && c[1] == 0xFE) || (c[0] == 0xFE && c[1] == 0xFF)))
            mark = 2;
        big = r->carry_len >= 2 && (mark ? c[0] == 0xFE : c[0] == 0 && c[1] != 0);
        snprintf(r->decode_name, sizeof r->decode_name, "UTF-16%s", big ? "BE" : "LE");
    } else {
        if (r->carry_len >= 4 && (memcmp(c, "\xFF\xFE\0\0", 4) == 0 || memcmp(c, "\0\0\xFE\xFF", 4) == 0))
            mark = 4;
        big = r->carry_len >= 4 && c[0] == 0;
        snprintf(r->decode_name, sizeof r->decode_name, "UTF-32%s", big ? "BE" : "LE");
    }
    r->decoder = iconv_open(utf32_native(), r->decode_name);
    if (r->decoder == NO_ICONV) {
        fjf_error_set(err, FJF_NO_OFFSET, "iconv cannot read %s", r->decode_name);
        return -1;
    }
    r->await_bom = 0;
    memmove(r->carry, r->carry + mark, r->carry_len - mark);
    r->carry_len -= mark;
    r->consumed += mark;
    return 0;
}

/* Feeds data through the carry: a character cut at the end of the last
 * feed is completed from the start of this one, and the rest decoded in
 * place. */
static int feed_input(fjf_recoder *r, const char *data, size_t len, fjf_error *err)
{
    while (r->carry_len > 0 && len > 0) {
        size_t old = r->carry_len;
        size_t take = len < CARRY_CAP - old ? len : CARRY_CAP - old;
        memcpy(r->carry + old, data, take);
        r->carry_len += take;
        const char *p = (const char *)r->carry;
        size_t left = r->carry_len;
        if (process_span(r, &p, &left, err) != 0)
            return -1;
        size_t used = r->carry_len - left;
        if (used >= old) {
            /* What is left lies in data: decode it there. */
            data += used - old;
            len -= used - old;
            r->carry_len = 0;
        } else {
            memmove(r->carry, p, left);
            r->carry_len = left;
            data += take;
            len -= take;
            if (left == CARRY_CAP) {
                fjf_error_set(err, r->consumed, "not valid %s at byte %zu", r->from,
                              r->consumed);
                return -1;
            }
        }
    }
    if (len == 0)
        return 0;
    if (process_span(r, &data, &len, err) != 0)
        return -1;
    if (len > CARRY_CAP) {
        fjf_error_set(err, r->consumed, "not valid %s at byte %zu", r->from, r->consumed);
        return -1;
    }
    memcpy(r->carry, data, len); /* a cut character: a few bytes */
    r->carry_len = len;
    return 0;
}

int fjf_recoder_new(const char *from, const char *to, unsigned flags, fj_write_fn write,
                    void *write_ctx, fjf_recoder **out, fjf_error *err)
{
    *out = NULL;
    char from_name[32], to_name[32];
    if (!fjf_encoding_canonical(from, from_name)) {
        fjf_error_set(err, FJF_NO_OFFSET, "unknown encoding %s", from ? from : "(none)");
        return -1;
    }
    if (!fjf_encoding_canonical(to, to_name)) {
        fjf_error_set(err, FJF_NO_OFFSET, "unknown encoding %s", to ? to : "(none)");
        return -1;
    }
    fjf_recoder *r = calloc(1, sizeof *r);
    if (!r) {
        fjf_error_set(err, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    strcpy(r->from, from_name);
    strcpy(r->to, to_name);
    strcpy(r->decode_name, from_name);
    r->flags = flags;
    r->write = write;
    r->write_ctx = write_ctx;
    r->decoder = r->encoder = NO_ICONV;
    r->unit = 1;
    if (strncasecmp(from_name, "UTF-16", 6) == 0 || strncasecmp(from_name, "UCS-2", 5) == 0)
        r->unit = 2;
    else if (strncasecmp(from_name, "UTF-32", 6) == 0 || strncasecmp(from_name, "UCS-4", 5) == 0)
        r->unit = 4;
    r->await_bom = same_name(from_name, "UTF-16") || same_name(from_name, "UTF-32");

    /* Bare "UTF-16"/"UTF-32" output: little-endian with its mark, which
     * is what Windows tools expect (and say which order it is). */
    int with_bom = (flags & FJF_WRITE_BOM) != 0;
    const char *encode_name = to_name;
    if (same_name(to_name, "UTF-16") || same_name(to_name, "UTF-32")) {
        encode_name = same_name(to_name, "UTF-16") ? "UTF-16LE" : "UTF-32LE";
        with_bom = 1;
    }

    r->copy_utf8 = same_name(from_name, "UTF-8") && same_name(to_name, "UTF-8");
    if (r->copy_utf8) {
        if (with_bom) {
            memcpy(r->out, "\xEF\xBB\xBF", 3);
            r->out_len = 3;
        }
        *out = r;
        return 0;
    }
    if (!r->await_bom)
        r->decoder = iconv_open(utf32_native(), from_name);
    r->encoder = iconv_open(encode_name, utf32_native());
    if ((!r->await_bom && r->decoder == NO_ICONV) || r->encoder == NO_ICONV) {
        fjf_error_set(err, FJF_NO_OFFSET, "iconv cannot convert %s to %s", from_name, to_name);
        fjf_recoder_free(r);
        return -1;
    }
    if (with_bom) {
        /* The mark goes out first, even for empty input; a target that
         * cannot hold U+FEFF (BIG5) gets none. */
        const uint32_t mark = 0xFEFF;
        size_t at;
        if (encode_run(r, &mark, 1, &at, err) < 0) {
            fjf_recoder_free(r);
            return -1;
        }
    }
    *out = r;
    return 0;
}

int fjf_recoder_feed(fjf_recoder *r, const char *data, size_t len, fjf_error *err)
{
    if (r->failed) {
        fjf_error_set(err, FJF_NO_OFFSET, "the recoder failed earlier");
        return -1;
    }
    if (len == 0)
        return 0;
    if (r->await_bom) {
        size_t take = r->unit - r->carry_len;
        if (take > len)
            take = len;
        memcpy(r->carry + r->carry_len, data, take);
        r->carry_len += take;
        data += take;
        len -= take;
        if (r->carry_len < r->unit)
            return 0;
        if (resolve_byte_order(r, err) != 0) {
            r->failed = 1;
            return -1;
        }
    }
    if (feed_input(r, data, len, err) != 0 || flush_output(r, err) != 0) {
        r->failed = 1;
        return -1;
    }
    return 0;
}

/* The end of the input: a character left cut is an error, or under
 * FJF_LOSSY one replacement per unit, the bytes after it read anew. */
static int finish_input(fjf_recoder *r, fjf_error *err)
{
    if (r->await_bom && resolve_byte_order(r, err) != 0)
        return -1;
    while (r->carry_len > 0) {
        if (!(r->flags & FJF_LOSSY)) {
            fjf_error_set(err, r->consumed, "file ends inside a character at byte %zu",
                          r->consumed);
            return -1;
        }
        unsigned char rest[CARRY_CAP];
        size_t n = r->carry_len;
        memcpy(rest, r->carry, n);
        r->carry_len = 0;
        const char *p = (const char *)rest;
        if (replace_unit(r, &p, &n, err) != 0 || process_span(r, &p, &n, err) != 0)
            return -1;
        memcpy(r->carry, p, n);
        r->carry_len = n;
    }
    if (r->copy_utf8)
        return 0;
    /* Stateful decoders and encoders (BIG5-HKSCS holds a letter that a
     * combining mark may follow) give up what they hold. */
    char *out = (char *)r->chars;
    size_t room = sizeof r->chars;
    if (iconv(r->decoder, NULL, NULL, &out, &room) != (size_t)-1 && room < sizeof r->chars &&
        encode_decoded(r, (sizeof r->chars - room) / 4, "", 0, err) != 0)
        return -1;
    size_t at;
    return encode_run(r, NULL, 0, &at, err) == 0 ? 0 : -1;
}

int fjf_recoder_finish(fjf_recoder *r, fjf_error *err)
{
    if (r->failed) {
        fjf_error_set(err, FJF_NO_OFFSET, "the recoder failed earlier");
        return -1;
    }
    if (finish_input(r, err) != 0 || flush_output(r, err) != 0) {
        r->failed = 1;
        return -1;
    }
    return 0;
}

unsigned long long fjf_recoder_replaced(const fjf_recoder *r) { return r ? r->replaced : 0; }

void fjf_recoder_free(fjf_recoder *r)
{
    if (!r)
        return;
    if (r->decoder != NO_ICONV)
        iconv_close(r->decoder);
    if (r->encoder != NO_ICONV)
        iconv_close(r->encoder);
    free(r);
}
