/* Prunes the source-script language model into the image (see lm.h). A
 * path's model cost is the sum over its words of -ln P(word | word before).
 * The part that depends on the word alone, -ln P(word), goes into the
 * word's own cost; the image keeps only the corrections: for a bigram the
 * model lists, its cost less the word's own; for any other, the back-off of
 * the word before. Words the model does not know are spelled out as their
 * characters, each after the one before. */
#include "lm.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/image_format.h"
#include "../src/utf8.h"

/* A correction smaller than this (model units) is left to the back-off:
 * it changes no choice worth its slot. */
#define LM_MIN_DELTA 8

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* log10 probability -> model units (FJ_MODEL_SCALE · -ln P). */
static double units(float log10p)
{
    return -(double)log10p * log(10.0) * FJ_MODEL_SCALE;
}

static uint32_t word_hash(const char *s, size_t n)
{
    uint32_t h = FJ_LM_WORD_SEED;
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        uint32_t cp;
        int k = fj_utf8_decode(p, end, &cp);
        if (k <= 0)
            break;
        h = fj_lm_word_step(h, cp);
        p += k;
    }
    return h;
}

static int touches(const unsigned char *ambiguous, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        uint32_t cp;
        int k = fj_utf8_decode(p, end, &cp);
        if (k <= 0)
            return 0;
        if (cp < 0x10000 && (ambiguous[cp >> 3] >> (cp & 7) & 1))
            return 1;
        p += k;
    }
    return 0;
}

/* log10 P(w | x) by the model, backing off to the unigram. */
static float bigram_or_backoff(const kenlm_model *lm, uint32_t x, uint32_t w)
{
    uint64_t b, e;
    kenlm_bigrams_ending(lm, w, &b, &e);
    /* The entries under w are sorted by their first word. */
    while (b < e) {
        uint64_t mid = b + (e - b) / 2;
        uint32_t y;
        float p, bo;
        kenlm_bigram(lm, mid, &y, &p, &bo);
        if (y == x)
            return p;
        if (y < x)
            b = mid + 1;
        else
            e = mid;
    }
    float p, bo, px, box;
    kenlm_unigram(lm, w, &p, &bo);
    kenlm_unigram(lm, x, &px, &box);
    return box + p;
}

/* -ln P(word) in model units: the model's unigram when it knows the word;
 * else the cheapest way the model can write the same characters, as words
 * it knows, each after the one before. A lattice word the model does not
 * know then costs what the model's own split costs, so the model does not
 * take sides between the two: the word list's costs decide. */
#define LM_SPLIT_MAX 16
static double own_cost(const kenlm_model *lm, const char *s, size_t n, uint32_t *id,
                       unsigned *head, unsigned *tail)
{
    *id = kenlm_find(lm, s, n);
    *head = *tail = 0;
    float p, bo;
    /* Character offsets, then a Viterbi over (end, last word). */
    size_t at[LM_SPLIT_MAX + 1];
    size_t chars = 0;
    const unsigned char *base = (const unsigned char *)s, *q = base, *end = q + n;
    at[0] = 0;
    while (q < end && chars < LM_SPLIT_MAX) {
        uint32_t cp;
        int k = fj_utf8_decode(q, end, &cp);
        if (k <= 0)
            break;
        q += k;
        at[++chars] = (size_t)(q - base);
    }
    if (q != end || chars == 0) {
        kenlm_unigram(lm, 0, &p, &bo);
        return units(p) * (double)(chars ? chars : 1);
    }
    /* The word itself counts as one way (i = 0, j = chars). */
    /* best[j][i]: the cheapest split of [0, j) whose last word is [i, j),
     * with first[j][i] the length of its first word. */
    double best[LM_SPLIT_MAX + 1][LM_SPLIT_MAX + 1];
    uint32_t word[LM_SPLIT_MAX + 1][LM_SPLIT_MAX + 1];
    unsigned first[LM_SPLIT_MAX + 1][LM_SPLIT_MAX + 1];
    for (size_t j = 1; j <= chars; j++)
        for (size_t i = 0; i < j; i++) {
            best[j][i] = HUGE_VAL;
            uint32_t w = kenlm_find(lm, s + at[i], at[j] - at[i]);
            if (!w && j - i > 1)
                continue; /* an unknown character stands alone, as <unk> */
            word[j][i] = w;
            if (i == 0) {
                kenlm_unigram(lm, w, &p, &bo);
                best[j][i] = units(p);
                first[j][i] = (unsigned)j;
                continue;
            }
            for (size_t h = 0; h < i; h++)
                if (best[i][h] < HUGE_VAL) {
                    double v = best[i][h] + units(bigram_or_backoff(lm, word[i][h], w));
                    if (v < best[j][i]) {
                        best[j][i] = v;
                        first[j][i] = first[i][h];
                    }
                }
        }
    double cost = best[chars][0]; /* the word as one of the model's words, if it is one */
    if (*id)
        *head = *tail = (unsigned)chars;
    for (size_t i = 1; i < chars; i++)
        if (best[chars][i] < cost) {
            cost = best[chars][i];
            *head = first[chars][i];
            *tail = (unsigned)(chars - i);
        }
    if (*head && *head < chars)
        *id = 0; /* scored as its split: the whole word's own bigrams go unused */
    return cost;
}

static unsigned chars_of(const char *s, size_t n)
{
    unsigned k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

static int put(lm_table *t, uint32_t before, uint32_t word, long value)
{
    if (value < -FJ_LM_BIAS)
        value = -FJ_LM_BIAS;
    if (value > FJ_LM_BIAS - 1)
        value = FJ_LM_BIAS - 1;
    uint64_t key = fj_lm_key(before, word);
    uint32_t fp = fj_lm_fingerprint(key), mask = (1u << t->bits) - 1;
    for (uint32_t s = (uint32_t)(key >> (64 - t->bits));; s = (s + 1) & mask) {
        if (t->slots[s] == 0) {
            t->slots[s] = fp << 12 | (uint32_t)(value + FJ_LM_BIAS);
            return 1;
        }
        if (t->slots[s] >> 12 == fp)
            return 0; /* the same key, or a collision: the first stays */
    }
}

typedef struct pending {
    uint32_t before, word;
    int32_t value;
} pending;

int lm_build(const kenlm_model *lm, model_tables *t, double weight, lm_table *out, char *err,
             size_t errlen)
{
    memset(out, 0, sizeof *out);
    uint32_t vocab = (uint32_t)kenlm_count(lm, 1);
    /* For each model word that is a lattice word: its hash, cost, whether
     * it touches a character with a choice. */
    uint32_t *hash = calloc(vocab, sizeof *hash);
    double *cost = calloc(vocab, sizeof *cost);
    unsigned char *in_lattice = calloc(vocab, 1), *touch = calloc(vocab, 1);
    if (!hash || !cost || !in_lattice || !touch) {
        seterr(err, errlen, "out of memory");
        free(hash), free(cost), free(in_lattice), free(touch);
        return -1;
    }
    oc_dict *words = t->words;
    for (size_t i = 0; i < words->count; i++) {
        oc_entry *e = &words->entries[i];
        const char *key = e->key;
        size_t kl = strlen(key);
        unsigned char *v = (unsigned char *)e->values[0];
        uint32_t c0;
        if (fj_utf8_decode(v, v + strlen((char *)v), &c0) != 3 || c0 < FJ_CONTEXT_COST_BASE ||
            c0 > FJ_CONTEXT_COST_BASE + FJ_CONTEXT_COST_MAX)
            continue;
        uint32_t id;
        unsigned head, tail;
        double own = own_cost(lm, key, kl, &id, &head, &tail);
        if (id) {
            in_lattice[id] = 1;
            hash[id] = word_hash(key, kl);
            cost[id] = own;
            touch[id] = (unsigned char)touches(t->ambiguous, key, kl);
            out->words_known++;
        } else {
            out->words_spelled++;
        }
        long c = (long)(c0 - FJ_CONTEXT_COST_BASE) + lround(weight * own);
        if (c > (long)FJ_CONTEXT_COST_MAX)
            c = FJ_CONTEXT_COST_MAX;
        unsigned char u[4];
        fj_utf8_encode(FJ_CONTEXT_COST_BASE + (uint32_t)c, u);
        memcpy(v, u, 3);
        /* A word the model writes as several: which of its words the word
         * before and the word after see. */
        if (head && head <= FJ_LM_SPLIT_MAX && tail <= FJ_LM_SPLIT_MAX &&
            head < chars_of(key, kl)) {
            size_t vl = strlen((char *)v);
            char *nv = malloc(vl + 4);
            if (!nv) {
                seterr(err, errlen, "out of memory");
                free(hash), free(cost), free(in_lattice), free(touch);
                return -1;
            }
            memcpy(nv, v, 3);
            fj_utf8_encode(FJ_LM_SPLIT_BASE + (head << 3 | tail), (unsigned char *)nv + 3);
            memcpy(nv + 6, v + 3, vl - 3 + 1);
            free(e->values[0]);
            e->values[0] = nv;
            out->words_split++;
        }
    }
    /* The start and end of a run stand for the model's sentence marks. */
    uint32_t s_id = kenlm_find(lm, "<s>", 3), e_id = kenlm_find(lm, "</s>", 4);
    if (s_id) {
        in_lattice[s_id] = 1;
        hash[s_id] = FJ_LM_SENTENCE_START;
        touch[s_id] = 0;
    }
    if (e_id) {
        in_lattice[e_id] = 1;
        hash[e_id] = FJ_LM_SENTENCE_END;
        cost[e_id] = 0; /* the same for every path */
        touch[e_id] = 0;
    }
    size_t cap = 1 << 16, n = 0;
    pending *p = malloc(cap * sizeof *p);
    for (uint32_t w = 1; w < vocab && p; w++) {
        if (!in_lattice[w] || w == s_id)
            continue;
        uint64_t b, end;
        kenlm_bigrams_ending(lm, w, &b, &end);
        for (; b < end && p; b++) {
            uint32_t x;
            float prob, bo;
            kenlm_bigram(lm, b, &x, &prob, &bo);
            if (x >= vocab || !in_lattice[x] || x == e_id || !(touch[x] || touch[w]))
                continue;
            float xp, xbo;
            kenlm_unigram(lm, x, &xp, &xbo);
            long value = lround(weight * (units(prob) - cost[w]));
            long estimate = lround(weight * units(xbo));
            if (labs(value - estimate) < LM_MIN_DELTA)
                continue;
            if (n == cap)
                p = realloc(p, (cap *= 2) * sizeof *p);
            if (p)
                p[n++] = (pending){hash[x], hash[w], (int32_t)value};
        }
    }
    size_t backoffs = 0;
    for (uint32_t x = 1; x < vocab; x++) {
        if (!in_lattice[x] || x == e_id)
            continue;
        float xp, xbo;
        kenlm_unigram(lm, x, &xp, &xbo);
        backoffs += lround(weight * units(xbo)) != 0;
    }
    if (!p) {
        seterr(err, errlen, "out of memory");
        free(hash), free(cost), free(in_lattice), free(touch);
        return -1;
    }
    size_t total = n + backoffs;
    out->bits = 10;
    while (out->bits < FJ_LM_BITS_MAX && (double)total > 0.6 * (double)(1u << out->bits))
        out->bits++;
    out->slots = calloc((size_t)1 << out->bits, sizeof *out->slots);
    if (!out->slots) {
        seterr(err, errlen, "out of memory");
        free(p), free(hash), free(cost), free(in_lattice), free(touch);
        return -1;
    }
    for (uint32_t x = 1; x < vocab; x++) {
        if (!in_lattice[x] || x == e_id)
            continue;
        float xp, xbo;
        kenlm_unigram(lm, x, &xp, &xbo);
        long est = lround(weight * units(xbo));
        if (est != 0)
            out->backoffs += (size_t)put(out, hash[x], FJ_LM_BACKOFF, est);
    }
    for (size_t i = 0; i < n; i++)
        out->pairs += (size_t)put(out, p[i].before, p[i].word, p[i].value);
    free(p), free(hash), free(cost), free(in_lattice), free(touch);
    return 0;
}

void lm_table_free(lm_table *t)
{
    free(t->slots);
    memset(t, 0, sizeof *t);
}
