/* Typography after conversion: quotation marks in the regional style, and
 * on request ellipses and full-width punctuation in Chinese text. A filter
 * over UTF-8 output, one character of lookahead; anything it does not
 * change passes through byte for byte (invalid bytes included). */
#include <string.h>

#include "charclass.h"
#include "internal.h"
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
    unsigned char held_bytes[4];
    size_t held_len;
    uint32_t prev; /* the last character written, 0 at the start */
    /* A run of one of the ellipsis map's dots ('.', '。'). */
    uint32_t dots_cp;
    size_t dots;
    int straight_open; /* a straight double quote is open on this line */
    size_t out_len;
    char out[FJ_PUNCT_OUT];
};

/* Chinese text around a mark (FJ_NONE, a byte that is not UTF-8, is not). */
static int is_cjk(uint32_t cp) { return fj__char_is(cp, FJ_CC_TYPOGRAPHY_CJK); }

static int is_han(uint32_t cp) { return fj__char_is(cp, FJ_CC_TYPOGRAPHY_HAN); }

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

/* Pending dots: an ellipsis when there are three or more and the text
 * around is Chinese (for ASCII dots), else as they were. */
static void end_dots(fj_punct *p, uint32_t next)
{
    if (!p->dots)
        return;
    /* A Chinese dot (。) is Chinese text itself. */
    int chinese = is_cjk(p->dots_cp) || is_cjk(p->prev) || is_cjk(next);
    if (p->dots >= 3 && chinese) {
        uint32_t ellipsis = fj__char_map(FJ_MAP_ELLIPSIS, p->dots_cp);
        put_cp(p, ellipsis);
        put_cp(p, ellipsis);
        p->prev = ellipsis;
    } else {
        for (size_t i = 0; i < p->dots; i++)
            put_cp(p, p->dots_cp);
        p->prev = p->dots_cp;
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

/* The held character, now that the next one (FJ_NONE: not UTF-8; 0: end
 * of text) is known. */
static void decide(fj_punct *p, uint32_t next)
{
    uint32_t cp = p->held_cp, out = cp;
    p->held = 0;
    if (cp == FJ_NONE) {
        end_dots(p, cp);
        put(p, p->held_bytes, p->held_len);
        p->prev = FJ_NONE;
        return;
    }
    if ((p->flags & FJ_PUNCT_ELLIPSIS) && fj__char_map(FJ_MAP_ELLIPSIS, cp)) {
        if (p->dots && p->dots_cp != cp)
            end_dots(p, cp);
        p->dots_cp = cp;
        p->dots++;
        return;
    }
    end_dots(p, cp);
    int chinese = is_cjk(p->prev) || is_cjk(next);
    uint32_t q;
    switch (p->quotes) {
    case FJ_QUOTES_CORNER: /* curly and straight quotes, in Chinese text */
        if (chinese && (q = fj__char_map(FJ_MAP_QUOTES_TO_CORNER, straight_as_curly(p, cp))))
            out = q;
        break;
    case FJ_QUOTES_CURLY: /* corner quotes anywhere, straight ones in Chinese text */
        if ((q = fj__char_map(FJ_MAP_QUOTES_TO_CURLY, cp)))
            out = q;
        else if (chinese)
            out = straight_as_curly(p, cp);
        break;
    default:
        break;
    }
    if (cp == '"' && out != cp)
        p->straight_open = !p->straight_open;
    if (cp == '\n')
        p->straight_open = 0;
    if ((p->flags & FJ_PUNCT_FULLWIDTH) && out == cp && is_han(p->prev) && is_han(next) &&
        (q = fj__char_map(FJ_MAP_FULLWIDTH, cp)))
        out = q;
    if (out == cp)
        put(p, p->held_bytes, p->held_len);
    else
        put_cp(p, out);
    p->prev = out;
}

static void take(fj_punct *p, uint32_t cp, const unsigned char *bytes, size_t n)
{
    if (p->held)
        decide(p, cp);
    p->held = 1;
    p->held_cp = cp;
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

fj_quotes fj_profile_quotes(const char *profile)
{
    if (!profile)
        return FJ_QUOTES_KEEP;
    char key[64];
    fj__profile_key(profile, key, sizeof key);
    if (strcmp(key, "s2twp") == 0 || strcmp(key, "s2hkp") == 0)
        return FJ_QUOTES_CORNER;
    if (strcmp(key, "tw2sp") == 0 || strcmp(key, "hk2sp") == 0)
        return FJ_QUOTES_CURLY;
    return FJ_QUOTES_KEEP;
}
