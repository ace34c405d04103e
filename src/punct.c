/* Typography after conversion: quotation marks in the regional style, and
 * on request ellipses and full-width punctuation in Chinese text. A filter
 * over UTF-8 output, one character of lookahead; anything it does not
 * change passes through byte for byte (invalid bytes included). */
#include <string.h>

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
    unsigned char held_bytes[4];
    size_t held_len;
    uint32_t prev; /* the last character written, 0 at the start */
    /* A run of '.' or '。' (ellipsis normalisation). */
    uint32_t dots_cp;
    size_t dots;
    int straight_open; /* a straight double quote is open on this line */
    size_t out_len;
    char out[FJ_PUNCT_OUT];
};

static int is_cjk(uint32_t cp)
{
    return cp >= 0x2E80 && cp != FJ_NONE && !(cp >= 0xFE00 && cp <= 0xFE0F);
}

static int is_han(uint32_t cp)
{
    return (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x3134F);
}

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
    int chinese = p->dots_cp == 0x3002 || is_cjk(p->prev) || is_cjk(next);
    if (p->dots >= 3 && chinese) {
        put_cp(p, 0x2026);
        put_cp(p, 0x2026);
        p->prev = 0x2026;
    } else {
        for (size_t i = 0; i < p->dots; i++)
            put_cp(p, p->dots_cp);
        p->prev = p->dots_cp;
    }
    p->dots = 0;
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
    if ((p->flags & FJ_PUNCT_ELLIPSIS) && (cp == '.' || cp == 0x3002)) {
        if (p->dots && p->dots_cp != cp)
            end_dots(p, cp);
        p->dots_cp = cp;
        p->dots++;
        return;
    }
    end_dots(p, cp);
    int chinese = is_cjk(p->prev) || is_cjk(next);
    switch (p->quotes) {
    case FJ_QUOTES_CORNER:
        if (chinese && cp == 0x201C) out = 0x300C;
        else if (chinese && cp == 0x201D) out = 0x300D;
        else if (chinese && cp == 0x2018) out = 0x300E;
        else if (chinese && cp == 0x2019) out = 0x300F;
        else if (chinese && cp == '"') out = p->straight_open ? 0x300D : 0x300C;
        break;
    case FJ_QUOTES_CURLY:
        if (cp == 0x300C) out = 0x201C;
        else if (cp == 0x300D) out = 0x201D;
        else if (cp == 0x300E) out = 0x2018;
        else if (cp == 0x300F) out = 0x2019;
        else if (chinese && cp == '"') out = p->straight_open ? 0x201D : 0x201C;
        break;
    default:
        break;
    }
    if (cp == '"' && out != cp)
        p->straight_open = !p->straight_open;
    if (cp == '\n')
        p->straight_open = 0;
    if ((p->flags & FJ_PUNCT_FULLWIDTH) && out == cp && is_han(p->prev) && is_han(next)) {
        static const char ascii[] = ",!?:;";
        static const uint32_t wide[] = {0xFF0C, 0xFF01, 0xFF1F, 0xFF1A, 0xFF1B};
        const char *hit = cp < 0x80 && cp ? strchr(ascii, (int)cp) : NULL;
        if (hit)
            out = wide[hit - ascii];
    }
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

/* The quotes column of data/profiles.tsv; KEEP for a name it lacks. */
fj_quotes fj_profile_quotes(const char *profile)
{
    const fj_profile_info *p = fj__profile_find(profile);
    return p ? (fj_quotes)p->quotes : FJ_QUOTES_KEEP;
}
