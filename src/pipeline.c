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

/* Conversion steps [first, stage_count) over one complete segment. */
static void chain_from(const fj_converter *c, uint32_t first, const unsigned char *seg,
                       size_t len, fj_out *o, fj_work *w)
{
    const unsigned char *cur = seg;
    size_t cur_len = len;
    for (uint32_t k = first; k < c->stage_count; k++) {
        fj_out *dst = (k + 1 == c->stage_count) ? o : &w->stage[k & 1];
        if (dst != o)
            dst->len = 0;
        fj__step(&c->stages[k], cur, cur_len, 1, dst);
        cur = (const unsigned char *)dst->buf;
        cur_len = dst->len;
    }
    if (first == c->stage_count)
        fj__out_put_run(o, (const char *)seg, len);
}

static void chain(const fj_converter *c, const unsigned char *seg, size_t len, fj_out *o,
                  fj_work *w)
{
    chain_from(c, 0, seg, len, o, w);
}

/* Longest stretch of a run kept without a barrier; see convert_segmented. */
#define FJ_RUN_CAP 2048u

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
                if (r == FJ_MATCH_FOUND && c->seg_is_step1) {
                    if (hit.len > (size_t)n) {
                        /* A phrase: its first-step result is the match itself. */
                        if (run)
                            chain(c, run, (size_t)(p - run), o, w);
                        run = cut = NULL;
                        chain_from(c, 1, (const unsigned char *)hit.value, hit.value_len, o, w);
                        p += hit.len;
                        continue;
                    }
                    r = FJ_MATCH_NONE; /* one character: part of the run */
                }
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
        if (barrier) {
            cut = p;
        } else if ((size_t)(p - (cut ? cut : run)) >= FJ_RUN_CAP) {
            /* A run this long without a barrier exists only in contrived
             * input; splitting it bounds memory and rescanning. The point
             * depends on the text alone, so streaming still matches. */
            chain(c, run, (size_t)(p - run), o, w);
            run = cut = NULL;
        }
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

/* convert_segmented for profiles whose segmentation is their first step's
 * phrases (FJ_PROFILE_SEG_IS_STEP1) and which have two steps: one pass finds
 * the segments and gives each unit's first-step result, collected per run;
 * the second step then runs once per segment. Same output, half the work. */
static size_t convert_seg_step1(const fj_converter *c, const unsigned char *text, size_t len,
                                int final, fj_out *o, fj_work *w)
{
    const fj_matcher *m = &c->stages[0];
    fj_out *run = &w->stage[0]; /* first-step output of the open run */
    const unsigned char *p = text, *end = text + len, *run_start = NULL, *cut = NULL;
    size_t cut_out = 0;
    fj_match hit;
    run->len = 0;
    while (p < end) {
        uint32_t cp;
        size_t unit = 1, out_len = 1;
        const char *out = (const char *)p;
        char direct[3];
        int barrier = 1; /* a byte that is not UTF-8 is in no key */
        int n = fj_utf8_decode_fast(p, end, &cp);
        if (n <= 0 && n == FJ_U8_INCOMPLETE && !final)
            break;
        if (n > 0) {
            uint32_t entry = fj__lookup(m, cp);
            int r = FJ_MATCH_NONE;
            if (entry != 0 && entry != FJ_ENTRY_IDS && !(entry & FJ_ENTRY_DIRECT)) {
                r = fj__match(m, entry, p, (size_t)n, cp, end, final, &hit);
                if (r == FJ_MATCH_UNDECIDED)
                    break;
                if (r == FJ_MATCH_FOUND && hit.len > (size_t)n) {
                    /* A phrase segment: its first-step result is the match. */
                    if (run_start)
                        chain_from(c, 1, (const unsigned char *)run->buf, run->len, o, w);
                    run->len = 0;
                    run_start = cut = NULL;
                    chain_from(c, 1, (const unsigned char *)hit.value, hit.value_len, o, w);
                    p += hit.len;
                    continue;
                }
            }
            unit = out_len = (size_t)n;
            barrier = is_barrier(c, cp);
            if (r == FJ_MATCH_FOUND) {
                out = hit.value;
                out_len = hit.value_len;
            } else if (entry != FJ_ENTRY_IDS && (entry & FJ_ENTRY_DIRECT)) {
                direct[0] = (char)entry;
                direct[1] = (char)(entry >> 8);
                direct[2] = (char)(entry >> 16);
                out = direct;
                out_len = 3;
            } else if (fj_ids_arity(cp)) {
                size_t ids;
                int st = fj_ids_parse(p, end, &ids);
                if (st == FJ_IDS_COMPLETE)
                    unit = out_len = ids;
                else if (st == FJ_IDS_INCOMPLETE && !final)
                    break;
            }
        }
        if (!run_start)
            run_start = p;
        fj__out_put(run, out, out_len);
        p += unit;
        if (barrier) {
            cut = p;
            cut_out = run->len;
        } else if ((size_t)(p - (cut ? cut : run_start)) >= FJ_RUN_CAP) {
            chain_from(c, 1, (const unsigned char *)run->buf, run->len, o, w);
            run->len = 0;
            run_start = cut = NULL;
        }
    }
    if (run_start) {
        if (final) {
            chain_from(c, 1, (const unsigned char *)run->buf, run->len, o, w);
        } else if (cut) {
            chain_from(c, 1, (const unsigned char *)run->buf, cut_out, o, w);
            p = cut;
        } else {
            p = run_start;
        }
    }
    run->len = 0;
    return (size_t)(p - text);
}

/* Whether text[0..len) holds an ideographic description operator
 * (U+2FF0..U+2FFF: E2 BF B0..BF), which may take any character, a line end
 * too, as an operand. */
static int has_ids_operator(const unsigned char *text, size_t len)
{
    size_t i = 0;
#ifdef __SSE2__
    const __m128i e2 = _mm_set1_epi8((char)0xE2), bf = _mm_set1_epi8((char)0xBF);
    for (; i + 17 <= len; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(text + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(text + i + 1));
        unsigned hits = (unsigned)_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi8(a, e2), _mm_cmpeq_epi8(b, bf)));
        for (; hits; hits &= hits - 1) {
            size_t k = i + (size_t)__builtin_ctz(hits);
            if (k + 2 < len && text[k + 2] >= 0xB0 && text[k + 2] <= 0xBF)
                return 1;
        }
    }
#endif
    for (; i + 2 < len; i++)
        if (text[i] == 0xE2 && text[i + 1] == 0xBF && text[i + 2] >= 0xB0 && text[i + 2] <= 0xBF)
            return 1;
    return 0;
}

/* The first barrier (a character in no key, or a byte that is not UTF-8)
 * starting in [p, limit), from the first character that starts there;
 * NULL when there is none. */
static const unsigned char *first_barrier(const fj_converter *c, const unsigned char *p,
                                          const unsigned char *limit, const unsigned char *end)
{
    while (p < limit && (*p & 0xC0) == 0x80)
        p++; /* inside a character: the next one */
    while (p < limit) {
        uint32_t cp;
        int k = fj_utf8_decode(p, end, &cp);
        if (k <= 0 || is_barrier(c, cp))
            return p;
        p += k;
    }
    return NULL;
}

/* Whether every stretch of text[0..len) between barriers is shorter than
 * FJ_RUN_CAP - 32 bytes: then no run reaches the cap, where the
 * segment-by-segment way would cut it. By jumps: from a barrier, the first
 * one half a cap on, else the first one at all. */
static int separated(const fj_converter *c, const unsigned char *text, size_t len)
{
    const size_t gap = FJ_RUN_CAP - 32;
    const unsigned char *p = text, *end = text + len;
    while ((size_t)(end - p) > gap) {
        const unsigned char *q = first_barrier(c, p + FJ_RUN_CAP / 2, p + gap, end);
        if (!q && !(q = first_barrier(c, p, p + FJ_RUN_CAP / 2, end)))
            return 0;
        p = q + 1;
    }
    return 1;
}

/* Whether every line of text[0..len) is shorter than FJ_RUN_CAP. */
static int short_lines(const unsigned char *text, size_t len)
{
    const unsigned char *p = text, *end = text + len;
    while ((size_t)(end - p) >= FJ_RUN_CAP) {
        const unsigned char *nl = memchr(p + FJ_RUN_CAP / 2, '\n', FJ_RUN_CAP / 2);
        if (!nl && !(nl = memchr(p, '\n', FJ_RUN_CAP / 2)))
            return 0;
        p = nl + 1;
    }
    return 1;
}

/* How much of text[0..len) convert_fused may take: all of it when final,
 * else up to just after its last line end; 0 when it must not run. It runs
 * where runs between barriers stay under FJ_RUN_CAP (short_lines, or with
 * long_lines, separated) and no IDS operator occurs (an IDS is one unit and
 * may hold a line end). A line end is in no key, so what lies before one is
 * converted alike whatever follows. */
static size_t fused_extent(const fj_converter *c, const unsigned char *text, size_t len, int final,
                           int long_lines, int *had_long)
{
    size_t n = len;
    if (!final) {
        while (n > 0 && text[n - 1] != '\n')
            n--;
    }
    *had_long = 0;
    int fits = short_lines(text, n);
    if (!fits && long_lines)
        fits = *had_long = separated(c, text, n);
    return n && fits && !has_ids_operator(text, n) ? n : 0;
}

/* The line ends in [p, end); *after_last moves to just after the last of
 * them, if any. Sixteen bytes at a time: lines are short, and a call per
 * line would cost more than the line. */
static size_t count_newlines(const char *p, const char *end, const char **after_last)
{
    size_t n = 0;
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n');
    for (; end - p >= 16; p += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), nl));
        if (m) {
            *after_last = p + (31 - __builtin_clz(m)) + 1;
            for (; m; m &= m - 1) /* few per block: no popcount instruction needed */
                n++;
        }
    }
#endif
    for (; p < end; p++)
        if (*p == '\n') {
            n++;
            *after_last = p + 1;
        }
    return n;
}

/* Just after the k-th line end from p (k >= 1), or NULL when there are
 * fewer. */
static const char *skip_lines(const char *p, const char *end, size_t k)
{
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n');
    for (; end - p >= 16; p += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), nl));
        for (; m; m &= m - 1)
            if (--k == 0)
                return p + __builtin_ctz(m) + 1;
    }
#endif
    for (; p < end; p++)
        if (*p == '\n' && --k == 0)
            return p + 1;
    return NULL;
}

/* skip_lines, or end when there are fewer lines. */
static const char *skip_lines_or_end(const char *p, const char *end, size_t k)
{
    const char *q = skip_lines(p, end, k);
    return q ? q : end;
}

/* Moves the line cursor (*line, which starts at *start) over out to byte
 * `at`, at or after *from. */
static void line_at(const char *out, size_t at, size_t *from, size_t *line, size_t *start)
{
    const char *after = NULL;
    *line += count_newlines(out + *from, out + at, &after);
    if (after)
        *start = (size_t)(after - out);
    *from = at;
}

/* Whether [a, b) of a line's first-step result has the edge of one of
 * its phrases (all of them, in `phrases`) strictly inside: then a later
 * step's key there crosses from one segment into another. */
static int crosses_segment(const fj_out *phrases, size_t a, size_t b)
{
    size_t n = phrases->len / sizeof(fj_mark);
    for (size_t i = 0; i < n; i++) {
        fj_mark mk;
        memcpy(&mk, phrases->buf + i * sizeof mk, sizeof mk);
        size_t s = mk.out, e = mk.out + mk.out_len;
        if ((a < s && s < b) || (a < e && e < b))
            return 1;
    }
    return 0;
}

/* The exact pipeline over complete text (one line, here). */
static void convert_exact(const fj_converter *c, const unsigned char *text, size_t len, fj_out *o,
                          fj_work *w)
{
    if (c->stage_count == 2)
        convert_seg_step1(c, text, len, 1, o, w);
    else
        convert_segmented(c, text, len, 1, o, w);
}

/* The number of line ends in text[0..len). */
static size_t count_lines(const char *text, size_t len)
{
    const char *after;
    return count_newlines(text, text + len, &after);
}

/* convert_seg_step1 and convert_segmented for profiles whose segmentation
 * is their first step's phrases, over text fused_extent allows. Each step
 * runs over all of it at once (its fast loop), not segment by segment.
 * Segments make no difference where no later step matches a key of two or
 * more characters across the edge of one: max-matching inside a segment
 * then takes the same units as over the whole. The second step's keys of
 * two or more characters are checked against the line's phrases (found
 * again, all of them, one unit at a time); a line where one crosses, or
 * where a step after the second matched such a key, is converted again
 * through the exact pipeline. A line end is in no key and no value, so the
 * k-th line of each result comes from the k-th line of the text. Same
 * output. */
static size_t convert_fused(const fj_converter *c, const unsigned char *text, size_t len,
                            fj_out *o, fj_work *w)
{
    size_t again = 0; /* bytes taken one unit at a time or converted again */
    fj_out *buf[2] = {&w->fused[0], &w->fused[1]}, *marks = &w->marks, *lines = &w->lines;
    fj_out *line_first = &w->stage[0], *phrases = &w->stage[1];
    lines->len = 0;
    buf[0]->len = 0;
    fj__step(&c->stages[0], text, len, 1, buf[0]);
    for (uint32_t k = 1; k < c->stage_count; k++) {
        fj_out *in = buf[(k - 1) & 1], *out = buf[k & 1];
        out->len = marks->len = 0;
        fj__step_marked(&c->stages[k], (const unsigned char *)in->buf, in->len, 1, out, marks);
        if (fj__work_status(w) != FJ_OK)
            return again;
        size_t from = 0, line = 0, start = 0, count = marks->len / sizeof(fj_mark);
        size_t last = SIZE_MAX, checked = SIZE_MAX; /* the last line flagged, and checked */
        const unsigned char *src = text, *src_end = text + len; /* at input line src_line */
        size_t src_line = 0;
        for (size_t m = 0; m < count; m++) {
            fj_mark mk;
            memcpy(&mk, marks->buf + m * sizeof mk, sizeof mk);
            size_t at = (size_t)(mk.in - (const unsigned char *)in->buf);
            line_at(in->buf, at, &from, &line, &start);
            if (line == last)
                continue;
            int flag = 1;
            if (k == 1) {
                if (line != checked) {
                    /* The line of the text, and its phrases. */
                    if (src_line < line) {
                        const char *to =
                            skip_lines((const char *)src, (const char *)src_end, line - src_line);
                        if (to) {
                            src = (const unsigned char *)to;
                            src_line = line;
                        }
                    }
                    const unsigned char *nl = memchr(src, '\n', (size_t)(src_end - src));
                    size_t n = nl ? (size_t)(nl + 1 - src) : (size_t)(src_end - src);
                    /* As far as the line's last key of this step reaches. */
                    const char *line_end = memchr(in->buf + at, '\n', in->len - at);
                    size_t reach = at + mk.in_len;
                    for (size_t j = m + 1; j < count; j++) {
                        fj_mark next;
                        memcpy(&next, marks->buf + j * sizeof next, sizeof next);
                        if (line_end && next.in >= (const unsigned char *)line_end)
                            break;
                        reach = (size_t)(next.in - (const unsigned char *)in->buf) + next.in_len;
                    }
                    line_first->len = phrases->len = 0;
                    again += fj__step_all_marked(&c->stages[0], src, n, line_first, phrases,
                                                 reach - start);
                    if (fj__work_status(w) != FJ_OK)
                        return again;
                    checked = line;
                    /* The same first-step result as the whole text's, or no check. */
                    if (src_line != line || start + line_first->len > in->len ||
                        memcmp(in->buf + start, line_first->buf, line_first->len) != 0) {
                        phrases->len = 0;
                        checked = SIZE_MAX;
                    }
                }
                flag = checked == SIZE_MAX ||
                       crosses_segment(phrases, at - start, at + mk.in_len - start);
            }
            if (flag) {
                fj__out_put(lines, (const char *)&line, sizeof line);
                last = line;
            }
        }
    }
    const fj_out *result = buf[(c->stage_count - 1) & 1];
    if (fj__work_status(w) != FJ_OK)
        return again;
    if (lines->len == 0) {
        fj__out_put_run(o, result->buf, result->len);
        return again;
    }
    /* Some lines again, exactly; the rest as the steps gave them. Lines
     * flagged by different steps may come in any order: sort them. */
    size_t nflag = lines->len / sizeof(size_t);
    size_t *flag = (size_t *)(void *)lines->buf;
    for (size_t i = 1; i < nflag; i++)
        for (size_t j = i; j > 0 && flag[j - 1] > flag[j]; j--) {
            size_t t = flag[j];
            flag[j] = flag[j - 1];
            flag[j - 1] = t;
        }
    if (count_lines(result->buf, result->len) != count_lines((const char *)text, len)) {
        convert_exact(c, text, len, o, w); /* a value with a line end: no line map */
        return len;
    }
    const char *src = (const char *)text, *src_end = src + len;
    const char *res = result->buf, *res_end = res + result->len;
    size_t line = 0; /* the line src and res are at */
    for (size_t f = 0; f < nflag; f++) {
        if (flag[f] < line)
            continue; /* flagged twice */
        size_t skip = flag[f] - line;
        const char *r = skip ? skip_lines_or_end(res, res_end, skip) : res;
        const char *t = skip ? skip_lines_or_end(src, src_end, skip) : src;
        fj__out_put_run(o, res, (size_t)(r - res)); /* the lines before, as they are */
        res = skip_lines_or_end(r, res_end, 1);
        src = skip_lines_or_end(t, src_end, 1);
        convert_exact(c, (const unsigned char *)t, (size_t)(src - t), o, w);
        again += (size_t)(src - t);
        line = flag[f] + 1;
    }
    fj__out_put_run(o, res, (size_t)(res_end - res));
    return again;
}

static size_t convert_compat(const fj_converter *c, const unsigned char *text, size_t len,
                             int final, fj_out *o, fj_work *w)
{
    if (c->has_segmentation && c->seg_is_step1 && c->stage_count >= 2 && is_barrier(c, '\n')) {
        int had_long;
        size_t n = fused_extent(c, text, len, final, !w->fused_long_off, &had_long);
        if (n) {
            /* Where a later step's phrases match all the time (s2twp), long
             * lines are mostly converted twice: after a text where that
             * was over a quarter of it, long lines go the other way. */
            if (convert_fused(c, text, n, o, w) > n / 4 && had_long)
                w->fused_long_off = 1;
            return n;
        }
    }
    if (c->has_segmentation && c->seg_is_step1 && c->stage_count == 2)
        return convert_seg_step1(c, text, len, final, o, w);
    if (c->has_segmentation)
        return convert_segmented(c, text, len, final, o, w);
    if (c->stage_count == 1)
        return fj__step(&c->stages[0], text, len, final, o);
    /* No segmentation but several steps: the whole text is one segment, so
     * nothing is decided before the end. (No OpenCC profile is built so.) */
    if (!final)
        return 0;
    chain(c, text, len, o, w);
    return len;
}

const fj_engine fj__compat_engine = {"compat", convert_compat};

/* The next position in [p, end) that normalization must look at: a
 * character it may change, an IDS operator, or a character cut off by the end.
 * Such positions always start a unit (they hold a lead byte). */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
/* As the SSE2 loop below, 32 bytes at a time, where the CPU has AVX2.
 * Returns where it stopped: a hit, or fewer than 33 bytes before end. */
__attribute__((target("avx2"))) static const unsigned char *
next_norm_hit_avx2(const fj_converter *c, const unsigned char *p, const unsigned char *end,
                   int *found)
{
    __m256i lead[4], lo[4], hi[4];
    const __m256i flip = _mm256_set1_epi8((char)0x80);
    for (unsigned k = 0; k < 4; k++) {
        unsigned j = k < c->norm_lead_count ? k : 0;
        lead[k] = _mm256_set1_epi8((char)c->norm_leads[j]);
        lo[k] = _mm256_set1_epi8((char)(c->norm_lo[j] ^ 0x80));
        hi[k] = _mm256_set1_epi8((char)(c->norm_hi[j] ^ 0x80));
    }
    *found = 0;
    for (; end - p >= 33; p += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
        __m256i v1 = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 1)), flip);
        __m256i hit = _mm256_setzero_si256();
        for (unsigned k = 0; k < 4; k++) {
            __m256i out = _mm256_or_si256(_mm256_cmpgt_epi8(lo[k], v1), _mm256_cmpgt_epi8(v1, hi[k]));
            hit = _mm256_or_si256(hit, _mm256_andnot_si256(out, _mm256_cmpeq_epi8(v, lead[k])));
        }
        unsigned mask = (unsigned)_mm256_movemask_epi8(hit);
        while (mask) {
            const unsigned char *at = p + __builtin_ctz(mask);
            mask &= mask - 1;
            unsigned key = (unsigned)at[0] << 8 | at[1];
            if (c->norm_prefix[key >> 3] >> (key & 7) & 1) {
                *found = 1;
                return at;
            }
        }
    }
    return p;
}
#endif

static const unsigned char *next_norm_hit(const fj_converter *c, const unsigned char *p,
                                          const unsigned char *end)
{
    if (c->norm_always)
        return p;
#if defined(__GNUC__) && defined(__x86_64__)
    if (c->norm_lead_count <= 4 && end - p >= 33 && __builtin_cpu_supports("avx2")) {
        int found;
        p = next_norm_hit_avx2(c, p, end, &found);
        if (found)
            return p;
    }
#endif
#ifdef __SSE2__
    if (c->norm_lead_count <= 4) {
        /* Candidates: a lead byte followed by a second byte in its range
         * (compared as signed bytes after a shift by 0x80). */
        __m128i lead[4], lo[4], hi[4];
        const __m128i flip = _mm_set1_epi8((char)0x80);
        for (unsigned k = 0; k < 4; k++) {
            unsigned j = k < c->norm_lead_count ? k : 0;
            lead[k] = _mm_set1_epi8((char)c->norm_leads[j]);
            lo[k] = _mm_set1_epi8((char)(c->norm_lo[j] ^ 0x80));
            hi[k] = _mm_set1_epi8((char)(c->norm_hi[j] ^ 0x80));
        }
        for (; end - p >= 17; p += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            __m128i v1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + 1)), flip);
            __m128i hit = _mm_setzero_si128();
            for (unsigned k = 0; k < 4; k++) {
                __m128i in = _mm_andnot_si128(_mm_or_si128(_mm_cmplt_epi8(v1, lo[k]), _mm_cmpgt_epi8(v1, hi[k])),
                                              _mm_cmpeq_epi8(v, lead[k]));
                hit = _mm_or_si128(hit, in);
            }
            unsigned mask = (unsigned)_mm_movemask_epi8(hit);
            while (mask) {
                const unsigned char *at = p + __builtin_ctz(mask);
                mask &= mask - 1;
                unsigned key = (unsigned)at[0] << 8 | at[1];
                if (c->norm_prefix[key >> 3] >> (key & 7) & 1)
                    return at;
            }
        }
    }
#endif
    for (; p < end; p++) {
        if (*p < 0xC0)
            continue;
        if (p + 1 == end)
            return p;
        unsigned key = (unsigned)p[0] << 8 | p[1];
        if (c->norm_prefix[key >> 3] >> (key & 7) & 1)
            return p;
    }
    return end;
}

/* How far back from a window's end a line end is looked for. */
#define FJ_WINDOW_LINE_BACK 4096u

size_t fj__window_end(const unsigned char *text)
{
    for (size_t k = FJ_WINDOW; k > FJ_WINDOW - FJ_WINDOW_LINE_BACK; k--)
        if (text[k - 1] == '\n')
            return k;
    return FJ_WINDOW;
}

/* Normalization maps single characters (and passes IDS whole), so only the
 * positions next_norm_hit finds need work; the text between them is copied. */
int fj__normalize(const fj_converter *c, const unsigned char *text, size_t len, int final,
                  fj_work *w, size_t *consumed)
{
    const unsigned char *end = text + len, *p = text;
    *consumed = len;
    if (!c->has_normalization)
        return 0;
    const unsigned char *hit = next_norm_hit(c, p, end);
    if (hit == end)
        return 0;
    w->norm.len = 0;
    while (hit < end) {
        fj__out_put_run(&w->norm, (const char *)p, (size_t)(hit - p));
        size_t used = fj__step_unit(&c->normalization, hit, end, final, &w->norm);
        if (!used) {
            *consumed = (size_t)(hit - text);
            return 1;
        }
        p = hit + used;
        hit = next_norm_hit(c, p, end);
    }
    fj__out_put_run(&w->norm, (const char *)p, (size_t)(end - p));
    return 1;
}
