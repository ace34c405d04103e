/* UTF-8 decoding and ideographic description sequences (IDS).
 * Shared by the library, the dictionary compiler and the test reference. */
#ifndef FJ_UTF8_H
#define FJ_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Result of decoding one unit at p. */
enum {
    FJ_U8_INCOMPLETE = 0, /* a valid prefix cut off by the end of the buffer */
    FJ_U8_INVALID = -1    /* not UTF-8: the unit is the single byte p[0] */
};

/* Decodes the character at p (p < end). Returns its length (1..4) and stores
 * the code point, or FJ_U8_INCOMPLETE / FJ_U8_INVALID. Rejects overlong
 * forms, surrogates and values above U+10FFFF. */
static inline int fj_utf8_decode(const unsigned char *p, const unsigned char *end, uint32_t *cp)
{
    unsigned c = p[0];
    size_t avail = (size_t)(end - p);
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c < 0xC2)
        return FJ_U8_INVALID;
    if (c < 0xE0) {
        if (avail < 2)
            return FJ_U8_INCOMPLETE;
        if ((p[1] & 0xC0) != 0x80)
            return FJ_U8_INVALID;
        *cp = ((c & 0x1Fu) << 6) | (p[1] & 0x3Fu);
        return 2;
    }
    if (c < 0xF0) {
        unsigned lo = (c == 0xE0) ? 0xA0 : 0x80, hi = (c == 0xED) ? 0x9F : 0xBF;
        if (avail < 2)
            return FJ_U8_INCOMPLETE;
        if (p[1] < lo || p[1] > hi)
            return FJ_U8_INVALID;
        if (avail < 3)
            return FJ_U8_INCOMPLETE;
        if ((p[2] & 0xC0) != 0x80)
            return FJ_U8_INVALID;
        *cp = ((c & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
        return 3;
    }
    if (c < 0xF5) {
        unsigned lo = (c == 0xF0) ? 0x90 : 0x80, hi = (c == 0xF4) ? 0x8F : 0xBF;
        if (avail < 2)
            return FJ_U8_INCOMPLETE;
        if (p[1] < lo || p[1] > hi)
            return FJ_U8_INVALID;
        if (avail < 3)
            return FJ_U8_INCOMPLETE;
        if ((p[2] & 0xC0) != 0x80)
            return FJ_U8_INVALID;
        if (avail < 4)
            return FJ_U8_INCOMPLETE;
        if ((p[3] & 0xC0) != 0x80)
            return FJ_U8_INVALID;
        *cp = ((c & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
        return 4;
    }
    return FJ_U8_INVALID;
}

/* fj_utf8_decode with the common cases inline: ASCII and three-byte
 * characters (all of the BMP's Han). */
static inline __attribute__((always_inline)) int fj_utf8_decode_fast(const unsigned char *p,
                                                                    const unsigned char *end,
                                                                    uint32_t *cp)
{
    unsigned c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if ((c & 0xF0) == 0xE0 && end - p >= 3 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
        uint32_t v = (c & 0x0Fu) << 12 | (p[1] & 0x3Fu) << 6 | (p[2] & 0x3Fu);
        if (v >= 0x800 && (v < 0xD800 || v > 0xDFFF)) {
            *cp = v;
            return 3;
        }
        return FJ_U8_INVALID;
    }
    return fj_utf8_decode(p, end, cp);
}

/* Encodes cp (a valid scalar value) into out; returns the length. */
static inline int fj_utf8_encode(uint32_t cp, unsigned char *out)
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Ideographic description operators U+2FF0..U+2FFF and their operand
 * counts. OpenCC passes a whole well-formed sequence (e.g. ⿰言兑) through
 * unconverted, so fanjian treats it as one unit too. */
static inline int fj_ids_arity(uint32_t cp)
{
    if (cp < 0x2FF0 || cp > 0x2FFF)
        return 0;
    if (cp == 0x2FF2 || cp == 0x2FF3)
        return 3;
    if (cp == 0x2FFE || cp == 0x2FFF)
        return 1;
    return 2;
}

enum { FJ_IDS_COMPLETE, FJ_IDS_INCOMPLETE, FJ_IDS_INVALID };

#define FJ_IDS_MAX_DEPTH 16
#define FJ_IDS_MAX_CODEPOINTS 64

/* Parses an IDS starting at p. On FJ_IDS_COMPLETE stores its byte length. */
int fj_ids_parse(const unsigned char *p, const unsigned char *end, size_t *len);

#endif
