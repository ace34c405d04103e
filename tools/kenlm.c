/* KenLM's binary trie with separate quantisation (see kenlm.h). What the
 * file holds, little-endian, as found by reading Debian's zh_CN.lm:
 *   - a header: the order at byte 88, the n-gram counts (u64 each) at 108;
 *   - the vocabulary hash (a u64 entry count, then the entries), zero
 *     padding, then the quantiser block: a version byte, probability bits,
 *     backoff bits, padding to 8; per middle order a probability table and a
 *     backoff table of floats, then the longest order's probability table;
 *   - unigrams: count + 2 records {f32 prob, f32 backoff, u64 next}; `next`
 *     delimits each word's entries in the next order, its predecessors;
 *   - each middle order: the array-compression header (its second byte
 *     bounds the bits of `next` kept apart), the offsets of each high part
 *     of `next` (u64), then bit-packed records {word, backoff index,
 *     probability index, low bits of next} from byte 8 * (1 + n) + 7;
 *   - the longest order: bit-packed {word, probability index};
 *   - at the end, the words, NUL-terminated, in id order from <unk>. */
#include "kenlm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KENLM_MAX_ORDER 6

typedef struct packed_level {
    size_t base;        /* byte offset of the first record */
    unsigned width;     /* bits per record */
    unsigned next_bits; /* low bits of `next` stored inline (middle levels) */
    const unsigned char *offsets; /* u64 per high part of `next` */
    uint64_t offset_count;
    const float *prob, *backoff; /* quantiser tables */
} packed_level;

struct kenlm_model {
    unsigned char *bytes;
    size_t size;
    unsigned order, word_bits, prob_bits, backoff_bits;
    uint64_t counts[KENLM_MAX_ORDER];
    const unsigned char *unigrams; /* 16-byte records */
    packed_level level[KENLM_MAX_ORDER]; /* level[n] holds order n + 1, n >= 1 */
    float *tables; /* every quantiser table, one allocation */
    const char **words;
    uint32_t *word_lens;
    uint32_t *hash; /* open addressing: word id + 1, 0 empty */
    size_t hash_mask;
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static uint64_t read_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static float read_f32(const unsigned char *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}

static unsigned bit_length(uint64_t v)
{
    unsigned n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n;
}

/* n (<= 57) bits at bit offset `bit` from byte `base`; open checked that
 * 8 bytes can be read there. */
static uint64_t read_bits(const kenlm_model *m, size_t base, uint64_t bit, unsigned n)
{
    if (n == 0)
        return 0;
    uint64_t v = read_u64(m->bytes + base + (bit >> 3));
    return (v >> (bit & 7)) & ((n == 64 ? 0 : (uint64_t)1 << n) - 1);
}

/* How many bits of `next` the array compression keeps out of line: KenLM
 * chooses it by the memory it saves, up to the header's limit, so it is
 * computed here, not read. */
static unsigned chop_bits(uint64_t max_offset, uint64_t max_next, unsigned limit)
{
    unsigned required = bit_length(max_next), best = 0;
    int64_t lowest = INT64_MAX;
    for (unsigned c = 0; c <= (required < limit ? required : limit); c++) {
        /* bits of offset table added, less bits saved in the records */
        int64_t cost = (int64_t)(max_next >> (required - c)) * 64 - (int64_t)max_offset * (int64_t)c;
        if (cost < lowest) {
            lowest = cost;
            best = c;
        }
    }
    return best;
}

static uint64_t word_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int index_words(kenlm_model *m, char *err, size_t errlen)
{
    static const char unk[] = "<unk>";
    uint64_t n = m->counts[0];
    const unsigned char *start = NULL;
    /* The strings end the file; find the last "<unk>\0". */
    for (size_t i = m->size - sizeof unk; i > 0; i--)
        if (memcmp(m->bytes + i, unk, sizeof unk) == 0) {
            start = m->bytes + i;
            break;
        }
    if (!start) {
        seterr(err, errlen, "no vocabulary strings");
        return -1;
    }
    m->words = calloc(n, sizeof *m->words);
    m->word_lens = calloc(n, sizeof *m->word_lens);
    size_t hsize = 1;
    while (hsize < 2 * n)
        hsize <<= 1;
    m->hash = calloc(hsize, sizeof *m->hash);
    m->hash_mask = hsize - 1;
    if (!m->words || !m->word_lens || !m->hash) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    const unsigned char *p = start, *end = m->bytes + m->size;
    for (uint64_t id = 0; id < n; id++) {
        const unsigned char *z = memchr(p, 0, (size_t)(end - p));
        if (!z) {
            seterr(err, errlen, "vocabulary ends after %llu of %llu words",
                   (unsigned long long)id, (unsigned long long)n);
            return -1;
        }
        m->words[id] = (const char *)p;
        m->word_lens[id] = (uint32_t)(z - p);
        size_t h = (size_t)word_hash((const char *)p, (size_t)(z - p)) & m->hash_mask;
        while (m->hash[h])
            h = (h + 1) & m->hash_mask;
        m->hash[h] = (uint32_t)id + 1;
        p = z + 1;
    }
    return 0;
}

/* Checks that `need` bytes from `off` lie in the file. */
static int in_file(const kenlm_model *m, size_t off, uint64_t need)
{
    return off <= m->size && need <= m->size - off;
}

static int parse(kenlm_model *m, char *err, size_t errlen)
{
    if (m->size < 256) {
        seterr(err, errlen, "too short for a KenLM model");
        return -1;
    }
    m->order = m->bytes[88];
    if (m->order < 2 || m->order > KENLM_MAX_ORDER) {
        seterr(err, errlen, "unsupported order %u", m->order);
        return -1;
    }
    for (unsigned i = 0; i < m->order; i++)
        m->counts[i] = read_u64(m->bytes + 108 + 8 * i);
    if (m->counts[0] == 0 || m->counts[0] >= UINT32_MAX) {
        seterr(err, errlen, "implausible vocabulary size");
        return -1;
    }
    size_t off = (108 + 8 * m->order + 7) / 8 * 8;
    uint64_t vocab_entries = read_u64(m->bytes + off);
    if (vocab_entries > m->size / 8 || !in_file(m, off, 8 + 8 * vocab_entries)) {
        seterr(err, errlen, "vocabulary table runs past the end");
        return -1;
    }
    off += 8 + 8 * (size_t)vocab_entries;
    while (off < m->size && m->bytes[off] == 0)
        off += 8;
    if (!in_file(m, off, 8) || (m->bytes[off] != 1 && m->bytes[off] != 2)) {
        seterr(err, errlen, "no quantiser block where expected (offset %zu)", off);
        return -1;
    }
    m->prob_bits = m->bytes[off + 1];
    m->backoff_bits = m->bytes[off + 2];
    if (m->prob_bits > 24 || m->backoff_bits > 24) {
        seterr(err, errlen, "implausible quantiser bits");
        return -1;
    }
    size_t q = off + 8, ptable = (size_t)4 << m->prob_bits, btable = (size_t)4 << m->backoff_bits;
    if (!in_file(m, q, (uint64_t)(m->order - 2) * (ptable + btable) + ptable)) {
        seterr(err, errlen, "quantiser tables run past the end");
        return -1;
    }
    /* Copied out as floats: the file's tables need not be aligned. */
    float *tables = m->tables = malloc(((m->order - 2) * (ptable + btable) + ptable));
    if (!tables) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    size_t floats = 0;
    for (unsigned i = 1; i + 1 < m->order; i++) {
        m->level[i].prob = tables + floats;
        for (size_t k = 0; k < ptable / 4; k++)
            tables[floats++] = read_f32(m->bytes + q + 4 * k);
        q += ptable;
        m->level[i].backoff = tables + floats;
        for (size_t k = 0; k < btable / 4; k++)
            tables[floats++] = read_f32(m->bytes + q + 4 * k);
        q += btable;
    }
    m->level[m->order - 1].prob = tables + floats;
    for (size_t k = 0; k < ptable / 4; k++)
        tables[floats++] = read_f32(m->bytes + q + 4 * k);
    q += ptable;

    m->word_bits = bit_length(m->counts[0]);
    if (!in_file(m, q, 16 * (m->counts[0] + 2))) {
        seterr(err, errlen, "unigrams run past the end");
        return -1;
    }
    m->unigrams = m->bytes + q;
    q += 16 * (size_t)(m->counts[0] + 2);
    for (unsigned i = 1; i + 1 < m->order; i++) {
        packed_level *l = &m->level[i];
        uint64_t max_offset = m->counts[i] + 1, max_next = m->counts[i + 1];
        if (!in_file(m, q, 8)) {
            seterr(err, errlen, "order %u runs past the end", i + 1);
            return -1;
        }
        unsigned chop = chop_bits(max_offset, max_next, m->bytes[q + 1]);
        unsigned required = bit_length(max_next);
        l->offset_count = (max_next >> (required - chop)) + 1;
        l->offsets = m->bytes + q + 8;
        l->next_bits = required - chop;
        l->base = q + 8 * (1 + (size_t)l->offset_count) + 7;
        l->width = m->word_bits + m->prob_bits + m->backoff_bits + l->next_bits;
        uint64_t bytes = ((1 + m->counts[i]) * l->width + 7) / 8;
        if (l->offset_count > m->size / 8 || !in_file(m, l->base, bytes + 8)) {
            seterr(err, errlen, "order %u runs past the end", i + 1);
            return -1;
        }
        q = l->base + (size_t)bytes + 8;
    }
    packed_level *top = &m->level[m->order - 1];
    top->base = q;
    top->width = m->word_bits + m->prob_bits;
    if (!in_file(m, q, (m->counts[m->order - 1] * top->width + 7) / 8 + 8)) {
        seterr(err, errlen, "order %u runs past the end", m->order);
        return -1;
    }
    if (index_words(m, err, errlen) != 0)
        return -1;
    /* Every `next` must stay within its level: checked once, here. */
    for (uint64_t w = 0; w < m->counts[0]; w++)
        if (read_u64(m->unigrams + 16 * w + 8) > read_u64(m->unigrams + 16 * (w + 1) + 8) ||
            read_u64(m->unigrams + 16 * (w + 1) + 8) > m->counts[1]) {
            seterr(err, errlen, "unigram %llu points outside the bigrams", (unsigned long long)w);
            return -1;
        }
    return 0;
}

kenlm_model *kenlm_open(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        seterr(err, errlen, "cannot open %s", path);
        return NULL;
    }
    kenlm_model *m = calloc(1, sizeof *m);
    if (!m || fseek(f, 0, SEEK_END) != 0) {
        seterr(err, errlen, "cannot read %s", path);
        fclose(f);
        free(m);
        return NULL;
    }
    long size = ftell(f);
    rewind(f);
    m->size = size > 0 ? (size_t)size : 0;
    m->bytes = malloc(m->size + 8); /* 8 bytes of slack for bit reads */
    if (!m->bytes || fread(m->bytes, 1, m->size, f) != m->size) {
        seterr(err, errlen, "cannot read %s", path);
        fclose(f);
        kenlm_close(m);
        return NULL;
    }
    memset(m->bytes + m->size, 0, 8);
    fclose(f);
    char why[200];
    if (parse(m, why, sizeof why) != 0) {
        seterr(err, errlen, "%s: %s", path, why);
        kenlm_close(m);
        return NULL;
    }
    return m;
}

void kenlm_close(kenlm_model *m)
{
    if (!m)
        return;
    free(m->tables);
    free(m->words);
    free(m->word_lens);
    free(m->hash);
    free(m->bytes);
    free(m);
}

unsigned kenlm_order(const kenlm_model *m) { return m->order; }

uint64_t kenlm_count(const kenlm_model *m, unsigned n)
{
    return n >= 1 && n <= m->order ? m->counts[n - 1] : 0;
}

const char *kenlm_word(const kenlm_model *m, uint32_t id, size_t *len)
{
    if (id >= m->counts[0])
        return NULL;
    *len = m->word_lens[id];
    return m->words[id];
}

uint32_t kenlm_find(const kenlm_model *m, const char *word, size_t len)
{
    size_t h = (size_t)word_hash(word, len) & m->hash_mask;
    for (; m->hash[h]; h = (h + 1) & m->hash_mask) {
        uint32_t id = m->hash[h] - 1;
        if (m->word_lens[id] == len && memcmp(m->words[id], word, len) == 0)
            return id;
    }
    return 0;
}

void kenlm_unigram(const kenlm_model *m, uint32_t w, float *prob, float *backoff)
{
    const unsigned char *r = m->unigrams + 16 * (size_t)w;
    *prob = read_f32(r);
    *backoff = read_f32(r + 4);
}

void kenlm_bigrams_ending(const kenlm_model *m, uint32_t w, uint64_t *begin, uint64_t *end)
{
    *begin = read_u64(m->unigrams + 16 * (size_t)w + 8);
    *end = read_u64(m->unigrams + 16 * ((size_t)w + 1) + 8);
}

void kenlm_bigram(const kenlm_model *m, uint64_t i, uint32_t *x, float *prob, float *backoff)
{
    const packed_level *l = &m->level[1];
    uint64_t bit = i * l->width;
    *x = (uint32_t)read_bits(m, l->base, bit, m->word_bits);
    if (m->order == 2) {
        *prob = l->prob[read_bits(m, l->base, bit + m->word_bits, m->prob_bits)];
        *backoff = 0;
        return;
    }
    *backoff = l->backoff[read_bits(m, l->base, bit + m->word_bits, m->backoff_bits)];
    *prob = l->prob[read_bits(m, l->base, bit + m->word_bits + m->backoff_bits, m->prob_bits)];
}

/* The `next` of middle-level entry i: its high part is how many offsets
 * are at most i, less one. */
static uint64_t middle_next(const kenlm_model *m, const packed_level *l, uint64_t i)
{
    uint64_t lo = 0, hi = l->offset_count; /* first offset > i */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (read_u64(l->offsets + 8 * mid) <= i)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t high = lo ? lo - 1 : 0;
    uint64_t low = read_bits(m, l->base,
                             i * l->width + m->word_bits + m->backoff_bits + m->prob_bits,
                             l->next_bits);
    return high << l->next_bits | low;
}

void kenlm_trigrams_under(const kenlm_model *m, uint64_t i, uint64_t *begin, uint64_t *end)
{
    if (m->order < 3) {
        *begin = *end = 0;
        return;
    }
    const packed_level *l = &m->level[1];
    *begin = middle_next(m, l, i);
    *end = middle_next(m, l, i + 1);
    uint64_t n = m->counts[2];
    if (*begin > n)
        *begin = n;
    if (*end > n || *end < *begin)
        *end = *begin;
}

void kenlm_trigram(const kenlm_model *m, uint64_t i, uint32_t *y, float *prob)
{
    const packed_level *l = &m->level[m->order - 1];
    if (m->order != 3) { /* a middle level: not needed for Debian's trigram */
        *y = 0;
        *prob = 0;
        return;
    }
    uint64_t bit = i * l->width;
    *y = (uint32_t)read_bits(m, l->base, bit, m->word_bits);
    *prob = l->prob[read_bits(m, l->base, bit + m->word_bits, m->prob_bits)];
}
