/* User phrases, protected terms and inline -{…}- rules: an engine around the
 * converter's own. Where a user key starts (leftmost, then longest), its
 * value is written as given; the text between such places goes through the
 * converter's engine as if it ended there. Streaming stays exact: a key or
 * a rule that the end of the input may still complete is left undecided. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "utf8.h"

/* How far a -{ looks for its }- (longer: ordinary text). */
#define FJ_MARKUP_MAX 1024u

/* Bits of the filter on the first two characters of keys: few false hits
 * with thousands of keys, small enough to stay in cache. */
#define OV_PAIR_BITS (1u << 17)

typedef struct overlay_entry {
    uint32_t first, second; /* the key's first two code points (second 0: one character) */
    uint32_t key_len, value_len;
    const char *key, *value; /* in the overlay's strings */
} overlay_entry;

/* The keys that start with two characters (second 0: the one-character
 * key of `first`), longest first; `longer` on a second-0 bucket: keys of
 * more than one character start with `first`. */
typedef struct overlay_bucket {
    uint32_t first, second; /* first 0: an empty slot (no key starts with NUL) */
    uint32_t start, count;
    int longer;
} overlay_bucket;

struct fj_overlay {
    const fj_engine *inner;
    unsigned char lead[256]; /* 1: a key's (or -{'s) first byte */
    unsigned char firsts[0x10000 / 8]; /* BMP characters that start a key */
    unsigned char singles[0x10000 / 8]; /* BMP characters that are a key */
    /* Hashed: the first two characters of keys of two or more (pairs), of
     * keys of just two (twos), the first three of longer ones (threes). */
    unsigned char pairs[OV_PAIR_BITS / 8], twos[OV_PAIR_BITS / 8], threes[OV_PAIR_BITS / 8];
    overlay_entry *entries;  /* by first code point, then longest first */
    size_t entry_count, entry_cap; /* kept; allocated */
    overlay_bucket *buckets;
    size_t bucket_mask;
    char *strings;
    size_t strings_len;
    int markup;
    int ascii_lead; /* some key (or -{) starts with an ASCII character */
    /* -{zh-tw:…; zh-hans:…}-: the variant names this converter's output
     * standard takes, most fitting first (data/markup-variants.txt). */
    char variants[160];
};

/* ---- building --------------------------------------------------------- */

/* The inner engine of a converter that converts no script. */
static size_t copy_text(const fj_converter *c, const unsigned char *text, size_t len, int final,
                        fj_out *o, fj_work *w)
{
    (void)c, (void)final, (void)w;
    fj__out_put_run(o, (const char *)text, len);
    return len;
}

static const fj_engine identity_engine = {"identity", copy_text};

static int entry_order(const void *a, const void *b)
{
    const overlay_entry *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->second != y->second)
        return x->second < y->second ? -1 : 1;
    if (x->key_len != y->key_len)
        return x->key_len > y->key_len ? -1 : 1;
    int k = memcmp(x->key, y->key, x->key_len);
    if (k)
        return k;
    return x->key < y->key ? 1 : x->key > y->key ? -1 : 0; /* the one given later first */
}

static size_t hash_pair(uint32_t a, uint32_t b)
{
    return (size_t)((a * 2654435761u) ^ (b * 0x9E3779B1u + (b >> 7)));
}

static uint32_t pair_bit(uint32_t a, uint32_t b)
{
    return (a * 0x9E3779B1u ^ b * 0x85EBCA77u) >> (32 - 17);
}

static uint32_t triple_bit(uint32_t a, uint32_t b, uint32_t c)
{
    return (a * 0x9E3779B1u ^ b * 0x85EBCA77u ^ c * 0xC2B2AE35u) >> (32 - 17);
}

static void set_bit(unsigned char *set, uint32_t i) { set[i >> 3] |= (unsigned char)(1u << (i & 7)); }

static overlay_bucket *bucket_at(const fj_overlay *ov, uint32_t first, uint32_t second)
{
    size_t h = hash_pair(first, second) & ov->bucket_mask;
    while (ov->buckets[h].first && (ov->buckets[h].first != first || ov->buckets[h].second != second))
        h = (h + 1) & ov->bucket_mask;
    return &ov->buckets[h];
}

static fj_status bad_entry(fj_error *e, const char *what, size_t i, const char *s)
{
    fj__set_error(e, FJ_ERR_INVALID_ARGUMENT, i, "fj_options.%s[%zu] (\"%.40s\"): %s", what, i,
                  s ? s : "(null)",
                  !s ? "is NULL" : !*s ? "is empty" : "is not valid UTF-8");
    return FJ_ERR_INVALID_ARGUMENT;
}

static int valid_text(const char *s) { return s && *s && fj_utf8_valid(s, strlen(s), NULL) == strlen(s); }

/* The variant names for the standard `to` ("tw", "hk", "hant", "hans",
 * "jp") from the compiled-in table: a line "STANDARD<TAB>NAME NAME ...". */
extern const unsigned char fj__markup_variants[];
extern const size_t fj__markup_variants_size;

static void variants_for(const char *to, char *out, size_t size)
{
    out[0] = 0;
    const char *p = (const char *)fj__markup_variants, *end = p + fj__markup_variants_size;
    size_t tl = to ? strlen(to) : 0;
    while (p < end && tl) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        if (*p != '#' && (size_t)(eol - p) > tl && memcmp(p, to, tl) == 0 && p[tl] == '\t') {
            size_t n = (size_t)(eol - p) - tl - 1;
            if (n >= size)
                n = size - 1;
            memcpy(out, p + tl + 1, n);
            out[n] = 0;
            return;
        }
        p = eol + 1;
    }
}

fj_status fj__overlay_open(fj_converter *c, const fj_options *o, fj_error *e)
{
    size_t n = o->phrase_count + o->protect_count;
    if (!n && !o->markup)
        return FJ_OK;
    if ((o->phrase_count && !o->phrases) || (o->protect_count && !o->protect)) {
        fj__set_error(e, FJ_ERR_INVALID_ARGUMENT, 0,
                      "fj_options: a phrase or protect count without its array");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < o->phrase_count; i++) {
        if (!valid_text(o->phrases[i].from))
            return bad_entry(e, "phrases.from", i, o->phrases[i].from);
        if (!valid_text(o->phrases[i].to))
            return bad_entry(e, "phrases.to", i, o->phrases[i].to);
        bytes += strlen(o->phrases[i].from) + strlen(o->phrases[i].to);
    }
    for (size_t i = 0; i < o->protect_count; i++) {
        if (!valid_text(o->protect[i]))
            return bad_entry(e, "protect", i, o->protect[i]);
        bytes += strlen(o->protect[i]);
    }
    const fj_allocator *a = c->allocator.alloc ? &c->allocator : NULL;
    fj_overlay *ov = fj__alloc(a, sizeof *ov);
    if (!ov)
        goto nomem;
    memset(ov, 0, sizeof *ov);
    c->overlay = ov;
    ov->inner = c->engine ? c->engine : &identity_engine;
    ov->markup = (o->markup & FJ_MARKUP_INLINE) != 0;
    if (ov->markup) {
        ov->lead['-'] = 1;
        fj_profile_info info = {sizeof info, NULL, 0, NULL, 0, NULL, NULL, NULL};
        if (c->profile && fj_profile_info_get(NULL, c->profile->name, &info) == FJ_OK)
            variants_for(info.to, ov->variants, sizeof ov->variants);
    }
    if (n) {
        ov->entries = fj__alloc(a, n * sizeof *ov->entries);
        ov->entry_cap = n;
        ov->strings = fj__alloc(a, bytes ? bytes : 1);
        ov->strings_len = bytes; /* the sizes fj__overlay_free gives back */
        size_t nb = 16;
        while (nb < 4 * n)
            nb *= 2; /* a pair bucket and a one-character one per key at most */
        ov->buckets = fj__alloc(a, nb * sizeof *ov->buckets);
        ov->bucket_mask = nb - 1;
        if (!ov->entries || !ov->strings || !ov->buckets)
            goto nomem;
        memset(ov->buckets, 0, nb * sizeof *ov->buckets);
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            const char *from = i < o->phrase_count ? o->phrases[i].from
                                                   : o->protect[i - o->phrase_count];
            const char *to = i < o->phrase_count ? o->phrases[i].to : NULL;
            overlay_entry *en = &ov->entries[i];
            en->key = ov->strings + at;
            en->key_len = (uint32_t)strlen(from);
            memcpy(ov->strings + at, from, en->key_len);
            at += en->key_len;
            if (to) {
                en->value = ov->strings + at;
                en->value_len = (uint32_t)strlen(to);
                memcpy(ov->strings + at, to, en->value_len);
                at += en->value_len;
            } else { /* protected: the key itself */
                en->value = en->key;
                en->value_len = en->key_len;
            }
            const unsigned char *k = (const unsigned char *)from, *kend = k + en->key_len;
            int n1 = fj_utf8_decode(k, kend, &en->first);
            en->second = 0;
            if ((size_t)n1 < en->key_len)
                fj_utf8_decode(k + n1, kend, &en->second);
            ov->lead[k[0]] = 1;
            if (en->first < 0x10000) {
                ov->firsts[en->first >> 3] |= (unsigned char)(1u << (en->first & 7));
                if (!en->second)
                    ov->singles[en->first >> 3] |= (unsigned char)(1u << (en->first & 7));
            }
            if (en->second) {
                set_bit(ov->pairs, pair_bit(en->first, en->second));
                int n2 = fj_utf8_decode(k + n1, kend, &(uint32_t){0});
                uint32_t third = 0;
                if ((size_t)(n1 + n2) < en->key_len)
                    fj_utf8_decode(k + n1 + n2, kend, &third);
                if (third)
                    set_bit(ov->threes, triple_bit(en->first, en->second, third));
                else
                    set_bit(ov->twos, pair_bit(en->first, en->second));
            }
        }
        qsort(ov->entries, n, sizeof *ov->entries, entry_order);
        /* The same key given twice: the one given last stays (sorted first). */
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
            overlay_entry *en = &ov->entries[i];
            if (kept && ov->entries[kept - 1].key_len == en->key_len &&
                memcmp(ov->entries[kept - 1].key, en->key, en->key_len) == 0)
                continue;
            ov->entries[kept++] = *en;
        }
        ov->entry_count = kept;
        for (size_t i = 0; i < kept;) {
            const overlay_entry *en = &ov->entries[i];
            size_t j = i;
            while (j < kept && ov->entries[j].first == en->first &&
                   ov->entries[j].second == en->second)
                j++;
            overlay_bucket *b = bucket_at(ov, en->first, en->second);
            *b = (overlay_bucket){en->first, en->second, (uint32_t)i, (uint32_t)(j - i), 0};
            if (en->second) {
                overlay_bucket *one = bucket_at(ov, en->first, 0);
                if (!one->first)
                    *one = (overlay_bucket){en->first, 0, 0, 0, 0};
                one->longer = 1;
            }
            i = j;
        }
    }
    for (unsigned b = 0; b < 0x80; b++)
        ov->ascii_lead |= ov->lead[b];
    c->engine = &fj__overlay_engine;
    return FJ_OK;
nomem:
    fj__overlay_free(c);
    fj__set_error(e, FJ_ERR_NOMEM, 0, "out of memory");
    return FJ_ERR_NOMEM;
}

void fj__overlay_free(fj_converter *c)
{
    fj_overlay *ov = c->overlay;
    if (!ov)
        return;
    const fj_allocator *a = c->allocator.alloc ? &c->allocator : NULL;
    if (c->engine == &fj__overlay_engine)
        c->engine = ov->inner == &identity_engine ? NULL : ov->inner;
    size_t nb = ov->buckets ? ov->bucket_mask + 1 : 0;
    fj__free(a, ov->buckets, nb * sizeof *ov->buckets);
    fj__free(a, ov->entries, ov->entry_cap * sizeof *ov->entries);
    fj__free(a, ov->strings, ov->strings_len ? ov->strings_len : 1);
    fj__free(a, ov, sizeof *ov);
    c->overlay = NULL;
}

/* ---- matching --------------------------------------------------------- */

enum { OV_NONE, OV_FOUND, OV_UNDECIDED };

/* A user key at p: the longest one that matches, or undecided when the end
 * of a piece (not final) cuts a longer one short. */
static int match_key(const fj_overlay *ov, const unsigned char *p, const unsigned char *end,
                     int final, const overlay_entry **hit)
{
    uint32_t c1, c2 = 0;
    if (!ov->entries)
        return OV_NONE;
    int n1 = fj_utf8_decode_fast(p, end, &c1);
    if (n1 == FJ_U8_INCOMPLETE)
        return final ? OV_NONE : OV_UNDECIDED; /* the rest of the character may start a key */
    if (n1 < 0 || (c1 < 0x10000 && !(ov->firsts[c1 >> 3] >> (c1 & 7) & 1)))
        return OV_NONE;
    const overlay_bucket *one = bucket_at(ov, c1, 0);
    if (!one->first)
        one = NULL; /* only for a character beyond the BMP */
    const unsigned char *q = p + n1;
    int n2 = q < end ? fj_utf8_decode_fast(q, end, &c2) : FJ_U8_INCOMPLETE;
    if (n2 == FJ_U8_INCOMPLETE && !final && (!one || one->longer))
        return OV_UNDECIDED; /* the next character may make a longer key */
    if (n2 > 0 && c2) { /* c2 0: bucket (c1, 0) is the one-character key's, taken below */
        const overlay_bucket *b = bucket_at(ov, c1, c2);
        size_t avail = (size_t)(end - p), head = (size_t)(n1 + n2);
        const overlay_entry *en = ov->entries + b->start;
        /* The bucket's keys start with c1 c2: only the rest is compared. */
        for (uint32_t i = 0; b->first && i < b->count; i++, en++) {
            if (en->key_len > avail) {
                if (!final && memcmp(en->key + head, p + head, avail - head) == 0)
                    return OV_UNDECIDED;
            } else if (memcmp(en->key + head, p + head, en->key_len - head) == 0) {
                *hit = en;
                return OV_FOUND;
            }
        }
    }
    if (one && one->count) {
        *hit = ov->entries + one->start;
        return OV_FOUND;
    }
    return OV_NONE;
}

/* -{ at p: *close is set to the }- that ends it. */
static int match_markup(const fj_overlay *ov, const unsigned char *p, const unsigned char *end,
                        int final, const unsigned char **close)
{
    if (!ov->markup || p[0] != '-')
        return OV_NONE;
    if (p + 1 == end)
        return final ? OV_NONE : OV_UNDECIDED;
    if (p[1] != '{')
        return OV_NONE;
    const unsigned char *limit = (size_t)(end - p) > FJ_MARKUP_MAX ? p + FJ_MARKUP_MAX : end;
    for (const unsigned char *q = p + 2; q + 1 < limit; q++)
        if (q[0] == '}' && q[1] == '-') {
            *close = q;
            return OV_FOUND;
        }
    return !final && limit == end ? OV_UNDECIDED : OV_NONE;
}

static int is_space(unsigned char ch) { return ch == ' ' || ch == '\t'; }

/* Is name[0..len) one of the space-separated words of list (ASCII case
 * folded, as language tags are)? Its rank, from 1, or 0. */
static int variant_rank(const char *list, const unsigned char *name, size_t len)
{
    int rank = 1;
    for (const char *p = list; *p; rank++) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        size_t i = 0;
        while (i < len && (size_t)(p - w) == len &&
               (name[i] | 0x20) == ((unsigned char)w[i] | 0x20))
            i++;
        if (len && i == len)
            return rank;
        if (p == w)
            break;
    }
    return 0;
}

/* A variant name: letters, digits and '-' only (zh-hant, zh-TW). */
static size_t variant_name(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *q = p;
    while (q < end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                       (*q >= '0' && *q <= '9') || *q == '-'))
        q++;
    return (size_t)(q - p);
}

/* The body of -{body}-: writes the variant this converter's standard takes,
 * as written; a body without variants is protected text; variants none of
 * which fit: the first one, converted. */
static void write_markup(const fj_converter *c, const fj_overlay *ov, const unsigned char *body,
                         const unsigned char *end, fj_out *o, fj_work *w)
{
    const unsigned char *best = NULL, *best_end = NULL, *first = NULL, *first_end = NULL;
    int best_rank = 0, variants = 1;
    for (const unsigned char *p = body; p < end && variants;) {
        while (p < end && is_space(*p))
            p++;
        size_t nl = variant_name(p, end);
        const unsigned char *colon = p + nl;
        if (nl < 2 || colon >= end || *colon != ':') {
            variants = 0;
            break;
        }
        const unsigned char *text = colon + 1, *stop = memchr(text, ';', (size_t)(end - text));
        if (!stop)
            stop = end;
        int rank = variant_rank(ov->variants, p, nl);
        if (!first) {
            first = text;
            first_end = stop;
        }
        if (rank && (!best_rank || rank < best_rank)) {
            best_rank = rank;
            best = text;
            best_end = stop;
        }
        p = stop < end ? stop + 1 : end;
    }
    if (!variants || !first) {
        fj__out_put_run(o, (const char *)body, (size_t)(end - body));
        return;
    }
    while (first < first_end && is_space(*first))
        first++;
    if (best) {
        while (best < best_end && is_space(*best))
            best++;
        fj__out_put_run(o, (const char *)best, (size_t)(best_end - best));
    } else {
        ov->inner->convert(c, first, (size_t)(first_end - first), 1, o, w);
    }
}

static inline int has_bit(const unsigned char *set, uint32_t i)
{
    return set[i >> 3] >> (i & 7) & 1;
}

static inline uint32_t load32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* The code point of the three-byte character whose bytes are the low three
 * of w (first lowest), or 0. Overlong forms and surrogates pass: they start
 * no key, so at worst match_key looks at them for nothing. */
static inline uint32_t three_byte(uint32_t w)
{
    if ((w & 0xC0C0F0u) != 0x8080E0u)
        return 0;
    return (w & 0x0Fu) << 12 | (w & 0x3F00u) >> 2 | (w & 0x3F0000u) >> 16;
}

/* The first place at or after p where a key or a -{ may start: past ASCII
 * that starts none, past the Han characters that start no key, and those
 * that start only keys of several characters whose first two or three the
 * text does not have. The last bytes of the text are left to match_key, which knows
 * about characters cut off by the end. */
static const unsigned char *next_candidate(const fj_overlay *ov, const unsigned char *p,
                                           const unsigned char *end)
{
    while (end - p >= 12) { /* three characters of three bytes and a load */
        uint32_t w = load32(p), c1 = three_byte(w), c2;
        if (!c1) {
            if (!(w & 0x80) && !ov->ascii_lead) {
                /* A run of ASCII, eight bytes at a time. */
                uint64_t v;
                memcpy(&v, p, 8);
                uint64_t high = v & 0x8080808080808080ull;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                p += high ? (size_t)__builtin_clzll(high) >> 3 : 8;
#else
                p += high ? (size_t)__builtin_ctzll(high) >> 3 : 8;
#endif
                continue;
            }
            if (ov->lead[*p])
                return p;
            p++;
            continue;
        }
        uint32_t next = load32(p + 3);
        while ((c2 = three_byte(next)) != 0) {
            /* Three-byte characters in a row (Han text): one test of the
             * pair, without a branch on whether c1 starts some key, which
             * a third of them do. */
            uint32_t h = pair_bit(c1, c2);
            if (has_bit(ov->singles, c1) | has_bit(ov->pairs, h))
                goto pair;
            p += 3;
            if (end - p < 12)
                return p;
            c1 = c2;
            next = load32(p + 3);
        }
        if (!has_bit(ov->firsts, c1)) {
            p += 3;
            continue;
        }
        if (has_bit(ov->singles, c1) || (next & 0x80))
            return p; /* a key, or another kind of character next: match_key decides */
        c2 = next & 0x7F;
    pair:
        if (has_bit(ov->singles, c1))
            return p;
        uint32_t h = pair_bit(c1, c2);
        if (has_bit(ov->pairs, h)) {
            if (has_bit(ov->twos, h))
                return p;
            uint32_t w3 = load32(p + (c2 < 0x80 ? 4 : 6)), c3;
            if (!(w3 & 0x80))
                c3 = w3 & 0x7F;
            else if (!(c3 = three_byte(w3)))
                return p;
            if (has_bit(ov->threes, triple_bit(c1, c2, c3)))
                return p;
        }
        p += 3;
    }
    return p;
}

static size_t convert_overlay(const fj_converter *c, const unsigned char *text, size_t len,
                              int final, fj_out *o, fj_work *w)
{
    const fj_overlay *ov = c->overlay;
    const unsigned char *end = text + len, *seg = text, *p = text;
    for (;;) {
        p = next_candidate(ov, p, end);
        while (p < end && !ov->lead[*p])
            p++;
        if (p == end)
            break;
        const overlay_entry *hit = NULL;
        const unsigned char *close = NULL;
        int r = match_markup(ov, p, end, final, &close);
        if (r == OV_NONE)
            r = match_key(ov, p, end, final, &hit);
        if (r == OV_NONE) {
            p++;
            continue;
        }
        if (r == OV_UNDECIDED) {
            /* Text before p is converted as far as it is decided; p waits. */
            size_t used = ov->inner->convert(c, seg, (size_t)(p - seg), 0, o, w);
            return (size_t)(seg - text) + used;
        }
        if (p > seg)
            ov->inner->convert(c, seg, (size_t)(p - seg), 1, o, w);
        if (hit) {
            fj__out_put_run(o, hit->value, hit->value_len);
            p += hit->key_len;
        } else {
            write_markup(c, ov, p + 2, close, o, w);
            p = close + 2;
        }
        seg = p;
    }
    size_t used = ov->inner->convert(c, seg, (size_t)(end - seg), final, o, w);
    return (size_t)(seg - text) + used;
}

const fj_engine fj__overlay_engine = {"overlay", convert_overlay};
