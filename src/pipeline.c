/* The compatible conversion pipeline, as OpenCC runs it: normalization, then
 * (for some profiles) maximum-match segmentation, then each conversion step
 * applied to every segment in turn. Every loop here can stop where more input
 * could change its result, which is what makes streaming exact. */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "internal.h"
#include "match.h"

static size_t step(const fj_matcher *m, const unsigned char *t, size_t n, int final, fj_out *o)
{
    return fj__step(m, t, n, final, o);
}

/* The conversion chain over one complete segment. */
static void chain(const fj_converter *c, const unsigned char *seg, size_t len, fj_out *o,
                  fj_work *w)
{
    if (c->stage_count == 1) {
        step(&c->stages[0], seg, len, 1, o);
        return;
    }
    fj_out *cur = &w->stage[0];
    cur->len = 0;
    step(&c->stages[0], seg, len, 1, cur);
    for (uint32_t k = 1; k < c->stage_count; k++) {
        fj_out *dst = (k + 1 == c->stage_count) ? o : &w->stage[k & 1];
        if (dst != o)
            dst->len = 0;
        step(&c->stages[k], (const unsigned char *)cur->buf, cur->len, 1, dst);
        cur = dst;
    }
}

static inline int is_barrier(const fj_converter *c, uint32_t cp)
{
    return cp < 0x10000 && (c->barrier[cp >> 3] >> (cp & 7) & 1);
}

/* Segmentation, then the chain per segment. Unmatched characters between
 * phrases form one segment, as in OpenCC; such a run may be cut after a
 * barrier character (one that occurs in no key), which no step can match
 * across. */
static size_t convert_segmented(const fj_converter *c, const unsigned char *text, size_t len,
                                int final, fj_out *o, fj_work *w)
{
    const fj_matcher *seg = &c->segmentation;
    const unsigned char *p = text, *end = text + len, *run = NULL, *cut = NULL;
    fj_match hit;
    while (p < end) {
        uint32_t cp;
        size_t unit;
        int barrier;
        int n = fj_utf8_decode_fast(p, end, &cp);
        if (n <= 0) {
            if (n == FJ_U8_INCOMPLETE && !final)
                break;
            unit = 1;
            barrier = 1;
        } else {
            uint32_t entry = fj__lookup(seg, cp);
            if (entry != 0 && entry != FJ_ENTRY_IDS) {
                int r = FJ_MATCH_FOUND;
                if (entry & FJ_ENTRY_DIRECT)
                    hit.len = (size_t)n; /* a one-character segment */
                else
                    r = fj__match(seg, entry, p, (size_t)n, cp, end, final, &hit);
                if (r == FJ_MATCH_UNDECIDED)
                    break;
                if (r == FJ_MATCH_FOUND) {
                    if (run)
                        chain(c, run, (size_t)(p - run), o, w);
                    run = cut = NULL;
                    chain(c, p, hit.len, o, w);
                    p += hit.len;
                    continue;
                }
            }
            unit = (size_t)n;
            barrier = is_barrier(c, cp);
            if (fj_ids_arity(cp)) {
                size_t ids;
                int st = fj_ids_parse(p, end, &ids);
                if (st == FJ_IDS_COMPLETE)
                    unit = ids;
                else if (st == FJ_IDS_INCOMPLETE && !final)
                    break;
            }
        }
        if (!run)
            run = p;
        p += unit;
        if (barrier)
            cut = p;
    }
    if (run) {
        if (final) {
            chain(c, run, (size_t)(p - run), o, w);
        } else if (cut) {
            chain(c, run, (size_t)(cut - run), o, w);
            p = cut;
        } else {
            p = run;
        }
    }
    return (size_t)(p - text);
}

size_t fj__convert_normalized(const fj_converter *c, const unsigned char *text, size_t len,
                              int final, fj_out *o, fj_work *w)
{
    if (c->has_segmentation)
        return convert_segmented(c, text, len, final, o, w);
    if (c->stage_count == 1)
        return step(&c->stages[0], text, len, final, o);
    /* No segmentation but several steps: the whole text is one segment, so
     * nothing is decided before the end. (No OpenCC profile is built so.) */
    if (!final)
        return 0;
    chain(c, text, len, o, w);
    return len;
}

/* True when text holds a character that normalization would look at. Most
 * text holds none, and then the normalization pass is skipped. */
static int needs_normalization(const fj_converter *c, const unsigned char *text, size_t len)
{
    size_t i = 0;
    if (c->norm_always)
        return 1;
#ifdef __SSE2__
    if (c->norm_lead_count <= 4) {
        __m128i lead[4];
        for (unsigned k = 0; k < 4; k++)
            lead[k] = _mm_set1_epi8((char)c->norm_leads[k < c->norm_lead_count ? k : 0]);
        for (; i + 16 <= len; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(text + i));
            __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, lead[0]), _mm_cmpeq_epi8(v, lead[1])),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, lead[2]), _mm_cmpeq_epi8(v, lead[3])));
            unsigned mask = (unsigned)_mm_movemask_epi8(hit);
            while (mask) {
                size_t at = i + (size_t)__builtin_ctz(mask);
                mask &= mask - 1;
                if (at + 1 == len)
                    return 1; /* a cut-off character: let the pass decide */
                unsigned key = (unsigned)text[at] << 8 | text[at + 1];
                if (c->norm_prefix[key >> 3] >> (key & 7) & 1)
                    return 1;
            }
        }
    }
#endif
    for (; i < len; i++) {
        unsigned b = text[i];
        if (b < 0xC0)
            continue;
        if (i + 1 == len)
            return 1;
        unsigned key = b << 8 | text[i + 1];
        if (c->norm_prefix[key >> 3] >> (key & 7) & 1)
            return 1;
    }
    return 0;
}

int fj__normalize(const fj_converter *c, const unsigned char *text, size_t len, int final,
                  fj_work *w, size_t *consumed)
{
    *consumed = len;
    if (!c->has_normalization || !needs_normalization(c, text, len))
        return 0;
    w->norm.len = 0;
    *consumed = step(&c->normalization, text, len, final, &w->norm);
    return 1;
}
