/* Typography after conversion: quotation marks in the regional style, and
 * on request ellipses and full-width punctuation in Chinese text. A filter
 * over UTF-8 output, one character of lookahead; anything it does not
 * change passes through byte for byte (invalid bytes included). */
#include <string.h>

#include "charclass.h"
#include "internal.h"
#include "profiles.h"
#include "utf8.h"

#define FJ_PUNCT_OUT 4096

struct fj_punct {
    fj_allocator allocator;
    fj_quotes quotes;
    unsigned flags;
    fj_write_fn write;
    void *write_ctx;
    fj_status status;
    int finished;
    unsigned char partial[4]; /* an incomplete character at the end of a piece */
    size_t partial_len;
    /* One held character (its bytes, or a byte that is not UTF-8), decided
     * when the next one is known. */
    int held;
    uint32_t held_cp; /* FJ_NONE: not UTF-8 */
    uint32_t held_classes; /* its fj__char_classes */
    unsigned char held_bytes[4];
    size_t held_len;
    uint32_t prev_classes; /* of the last character written (none at the start) */
    /* A run of one of the ellipsis map's dots ('.', '。'). */
    uint32_t dots_cp;
    size_t dots;
    int straight_open; /* a straight double quote is open on this line */
    size_t out_len;
    char out[FJ_PUNCT_OUT];
};

/* The classes that decide (data/char-classes.txt), looked up once per
 * character: Chinese text around a mark, the Han characters between which
 * ASCII punctuation becomes full-width, and the characters each map
 * changes. FJ_NONE (a byte that is not UTF-8) and 0 (the start or end of
 * the text) are in none. */
#define CJK FJ_CC_BIT(FJ_CC_TYPOGRAPHY_CJK)
#define HAN FJ_CC_BIT(FJ_CC_TYPOGRAPHY_HAN)
#define KEYS(map) FJ_CC_BIT(FJ_CC_MAP_KEYS(map))
#define STRAIGHT_QUOTE (KEYS(FJ_MAP_STRAIGHT_QUOTE_OPEN) | KEYS(FJ_MAP_STRAIGHT_QUOTE_CLOSE))

static void flush(fj_punct *p)
{
    if (p->out_len && p->status == FJ_OK && p->write(p->write_ctx, p->out, p->out_len) != 0)
        p->status = FJ_ERR_CALLBACK;
    p->out_len = 0;
}

static void put(fj_punct *p, const void *data, size_t n)
{
    if (p->out_len + n > sizeof p->out)
        flush(p);
    memcpy(p->out + p->out_len, data, n);
    p->out_len += n;
}

static void put_cp(fj_punct *p, uint32_t cp)
{
    unsigned char u[4];
    put(p, u, (size_t)fj_utf8_encode(cp, u));
}

/* The pending dots (p->dots > 0): an ellipsis when there are three or more
 * and the text around is Chinese (for ASCII dots), else as they were.
 * `next_classes`: of the character after them. */
static void end_dots(fj_punct *p, uint32_t next_classes)
{
    /* A Chinese dot (。) is Chinese text itself. */
    uint32_t dot_classes = fj__char_classes(p->dots_cp);
    if (p->dots >= 3 && ((dot_classes | p->prev_classes | next_classes) & CJK)) {
        uint32_t ellipsis = fj__char_map(FJ_MAP_ELLIPSIS, p->dots_cp);
        put_cp(p, ellipsis);
        put_cp(p, ellipsis);
        p->prev_classes = fj__char_classes(ellipsis);
    } else {
        for (size_t i = 0; i < p->dots; i++)
            put_cp(p, p->dots_cp);
        p->prev_classes = dot_classes;
    }
    p->dots = 0;
}

/* A straight double quote as the curly one it stands for (opening or
 * closing); any other character as it is. */
static uint32_t straight_as_curly(const fj_punct *p, uint32_t cp)
{
    uint32_t curly = fj__char_map(p->straight_open ? FJ_MAP_STRAIGHT_QUOTE_CLOSE
                                                   : FJ_MAP_STRAIGHT_QUOTE_OPEN,
                                  cp);
    return curly ? curly : cp;
}

/* The held character, now that the classes of the next one (none for a
 * byte that is not UTF-8 and at the end of the text) are known. */
static void decide(fj_punct *p, uint32_t next_classes)
{
    uint32_t cp = p->held_cp, out = cp;
    p->held = 0;
    if (cp == FJ_NONE) {
        if (p->dots)
            end_dots(p, 0);
        put(p, p->held_bytes, p->held_len);
        p->prev_classes = 0;
        return;
    }
    uint32_t classes = p->held_classes;
    if ((p->flags & FJ_PUNCT_ELLIPSIS) && (classes & KEYS(FJ_MAP_ELLIPSIS))) {
        if (p->dots && p->dots_cp != cp)
            end_dots(p, classes);
        p->dots_cp = cp;
        p->dots++;
        return;
    }
    if (p->dots)
        end_dots(p, classes);
    int chinese = ((p->prev_classes | next_classes) & CJK) != 0;
    uint32_t q;
    switch (p->quotes) {
    case FJ_QUOTES_CORNER: /* curly and straight quotes, in Chinese text */
        if (chinese && (classes & (KEYS(FJ_MAP_QUOTES_TO_CORNER) | STRAIGHT_QUOTE)) &&
            (q = fj__char_map(FJ_MAP_QUOTES_TO_CORNER, straight_as_curly(p, cp))))
            out = q;
        break;
    case FJ_QUOTES_CURLY: /* corner quotes anywhere, straight ones in Chinese text */
        if (classes & KEYS(FJ_MAP_QUOTES_TO_CURLY))
            out = fj__char_map(FJ_MAP_QUOTES_TO_CURLY, cp);
        else if (chinese && (classes & STRAIGHT_QUOTE))
            out = straight_as_curly(p, cp);
        break;
    default:
        break;
    }
    if (cp == '"' && out != cp)
        p->straight_open = !p->straight_open;
    if (cp == '\n')
        p->straight_open = 0;
    if ((p->flags & FJ_PUNCT_FULLWIDTH) && out == cp && (classes & KEYS(FJ_MAP_FULLWIDTH)) &&
        (p->prev_classes & next_classes & HAN))
        out = fj__char_map(FJ_MAP_FULLWIDTH, cp);
    if (out == cp) {
        put(p, p->held_bytes, p->held_len);
        p->prev_classes = classes;
    } else {
        put_cp(p, out);
        p->prev_classes = fj__char_classes(out);
    }
}

static void take(fj_punct *p, uint32_t cp, const unsigned char *bytes, size_t n)
{
    uint32_t classes = fj__char_classes(cp); /* FJ_NONE: none */
    if (p->held)
        decide(p, classes);
    p->held = 1;
    p->held_cp = cp;
    p->held_classes = classes;
    memcpy(p->held_bytes, bytes, n);
    p->held_len = n;
}

fj_status fj_punct_new(fj_quotes quotes, unsigned flags, const fj_allocator *allocator,
                       fj_write_fn write, void *write_ctx, fj_punct **out)
{
    if (!write || !out || quotes > FJ_QUOTES_CURLY ||
        (flags & ~(unsigned)(FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH)))
        return FJ_ERR_INVALID_ARGUMENT;
    fj_punct *p = fj__alloc(allocator, sizeof *p);
    if (!p)
        return FJ_ERR_NOMEM;
    memset(p, 0, offsetof(fj_punct, out));
    if (allocator)
        p->allocator = *allocator;
    p->quotes = quotes;
    p->flags = flags;
    p->write = write;
    p->write_ctx = write_ctx;
    *out = p;
    return FJ_OK;
}

/* Decodes what partial[] holds: whole characters and bad bytes go on, an
 * incomplete character stays. */
static void drain_partial(fj_punct *p, int final)
{
    while (p->partial_len) {
        uint32_t cp;
        int k = fj_utf8_decode(p->partial, p->partial + p->partial_len, &cp);
        if (k == FJ_U8_INCOMPLETE && !final)
            return;
        size_t n = k > 0 ? (size_t)k : 1;
        take(p, k > 0 ? cp : FJ_NONE, p->partial, n);
        memmove(p->partial, p->partial + n, p->partial_len - n);
        p->partial_len -= n;
    }
}

fj_status fj_punct_feed(fj_punct *p, const char *data, size_t len)
{
    if (!p || (!data && len))
        return FJ_ERR_INVALID_ARGUMENT;
    if (p->finished)
        return FJ_ERR_STREAM_STATE;
    const unsigned char *s = (const unsigned char *)data, *end = s + len;
    /* First complete a character left over from the last piece. */
    while (p->partial_len && s < end) {
        p->partial[p->partial_len++] = *s++;
        drain_partial(p, 0);
    }
    while (s < end) {
        uint32_t cp;
        int k = fj_utf8_decode(s, end, &cp);
        if (k == FJ_U8_INCOMPLETE) {
            memcpy(p->partial, s, (size_t)(end - s));
            p->partial_len = (size_t)(end - s);
            break;
        }
        size_t n = k > 0 ? (size_t)k : 1;
        take(p, k > 0 ? cp : FJ_NONE, s, n);
        s += n;
    }
    /* A line break is written as it is whatever follows: deciding it now
     * lets a line out before the next one comes (line-by-line output). */
    if (p->held && p->held_cp == '\n')
        decide(p, 0);
    flush(p);
    return p->status;
}

fj_status fj_punct_finish(fj_punct *p)
{
    if (!p)
        return FJ_ERR_INVALID_ARGUMENT;
    if (p->finished)
        return FJ_ERR_STREAM_STATE;
    drain_partial(p, 1);
    if (p->held)
        decide(p, 0);
    if (p->dots)
        end_dots(p, 0);
    flush(p);
    p->finished = 1;
    return p->status;
}

void fj_punct_free(fj_punct *p)
{
    if (!p)
        return;
    fj_allocator a = p->allocator;
    fj__free(a.alloc ? &a : NULL, p, sizeof *p);
}

/* The quotes column of data/profiles.tsv; KEEP for a name it lacks. */
fj_quotes fj_profile_quotes(const char *profile)
{
    const fj_profile_info *p = fj__profile_find(profile);
    return p ? (fj_quotes)p->quotes : FJ_QUOTES_KEEP;
}
