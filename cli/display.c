/* fanjian CLI: file names made safe to print in a message. */
#include <stdio.h>
#include <string.h>

#include "display.h"

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

static int needs_escape(unsigned cp)
{
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0x200E || cp == 0x200F || cp == 0x061C;
}

const char *fjx_display_name(const char *name, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    const unsigned char *p = (const unsigned char *)name;
    size_t used = 0;
    const size_t ellipsis = 3;
    while (*p) {
        char piece[12];
        size_t len;
        unsigned cp = 0;
        size_t n = utf8_sequence(p, &cp);
        if (n == 0) {
            len = (size_t)snprintf(piece, sizeof piece, "\\x%02x", *p);
            n = 1;
        } else if (needs_escape(cp)) {
            const char *named = cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : cp == '\r' ? "\\r" : NULL;
            if (named)
                len = (size_t)snprintf(piece, sizeof piece, "%s", named);
            else if (cp < 0x80)
                len = (size_t)snprintf(piece, sizeof piece, "\\x%02x", cp);
            else
                len = (size_t)snprintf(piece, sizeof piece, "\\u%04x", cp);
        } else {
            memcpy(piece, p, n);
            len = n;
        }
        /* Keep room for "..." unless this piece is the last. */
        size_t reserve = p[n] ? ellipsis : 0;
        if (used + len + reserve + 1 > size) {
            if (used + ellipsis + 1 <= size) {
                memcpy(buf + used, "...", ellipsis);
                used += ellipsis;
            }
            break;
        }
        memcpy(buf + used, piece, len);
        used += len;
        p += n;
    }
    buf[used] = 0;
    return buf;
}
