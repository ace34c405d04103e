/* fanjian formats: file names made safe to print in a message. */
#include <stdio.h>
#include <string.h>

#include "fanjian-formats.h"

/* The length of the valid UTF-8 sequence at p (1..4) and its code point,
 * or 0 when p does not start one. */
static size_t utf8_sequence(const unsigned char *p, unsigned *cp)
{
    unsigned c = p[0];
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3
             : c >= 0xF0 && c < 0xF5 ? 4 : 0;
    if (n == 0)
        return 0;
    unsigned v = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (p[k] & 0x3F);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
    if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
        (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

/* Controls, and what reorders text or breaks a line: bidi embeddings,
 * overrides, isolates and marks, the line and paragraph separators. */
static int needs_escape(unsigned cp)
{
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0x200E || cp == 0x200F || cp == 0x061C || cp == 0x2028 || cp == 0x2029;
}

/* The piece of output for the character at p: itself, or its escape.
 * Returns the piece's length; *advance is how many bytes it stands for. */
static size_t render(const unsigned char *p, char piece[12], size_t *advance)
{
    unsigned cp = 0;
    size_t n = utf8_sequence(p, &cp);
    if (n == 0) {
        *advance = 1;
        return (size_t)snprintf(piece, 12, "\\x%02x", *p);
    }
    *advance = n;
    if (!needs_escape(cp)) {
        memcpy(piece, p, n);
        return n;
    }
    const char *named = cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : cp == '\r' ? "\\r" : NULL;
    if (named)
        return (size_t)snprintf(piece, 12, "%s", named);
    return (size_t)snprintf(piece, 12, cp < 0x80 ? "\\x%02x" : "\\u%04x", cp);
}

const char *fjf_display_name(const char *name, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    char piece[12];
    size_t advance, total = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p += advance)
        total += render(p, piece, &advance);
    /* Too long for buf: as much as fits with "..." after it. */
    size_t room = total < size ? total : size > 4 ? size - 4 : 0;
    size_t used = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p += advance) {
        size_t len = render(p, piece, &advance);
        if (used + len > room)
            break;
        memcpy(buf + used, piece, len);
        used += len;
    }
    if (total >= size && size >= 4) {
        memcpy(buf + used, "...", 3);
        used += 3;
    }
    buf[used] = 0;
    return buf;
}

void fjf_display_text(FILE *f, const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    char piece[12];
    size_t advance;
    while (p < end) {
        /* render() reads up to 4 bytes: near the end, a NUL-padded copy. */
        unsigned char tail[5] = {0};
        size_t left = (size_t)(end - p);
        const unsigned char *at = p;
        if (left < 4) {
            memcpy(tail, p, left);
            at = tail;
        }
        size_t n = *at ? render(at, piece, &advance) : (size_t)snprintf(piece, sizeof piece, "\\x00");
        if (!*at)
            advance = 1;
        fwrite(piece, 1, n, f);
        p += advance;
    }
}
