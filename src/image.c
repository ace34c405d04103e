/* Opening a dictionary image: map it, check the header, the section table
 * and the records, then each part the first time a converter uses it. */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "utf8.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#ifndef FJ_DEFAULT_DICT
#define FJ_DEFAULT_DICT "/usr/local/share/fanjian/fanjian.fjd"
#endif

const char *fj_dict_default_path(void) { return FJ_DEFAULT_DICT; }

void fj__set_error(fj_error *error, fj_status code, size_t offset, const char *fmt, ...)
{
    if (!error)
        return;
    error->code = code;
    error->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error->message, sizeof error->message, fmt, ap);
    va_end(ap);
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

typedef struct found {
    const unsigned char *p;
    uint64_t size;
    uint64_t offset;
} found;

static fj_status bad(fj_error *e, size_t off, const char *what)
{
    fj__set_error(e, FJ_ERR_DICT_FORMAT, off, "damaged dictionary: %s (at byte %zu)", what, off);
    return FJ_ERR_DICT_FORMAT;
}

/* Finds section `tag` and checks that it holds whole records of `rec` bytes. */
static fj_status section(const unsigned char *data, uint32_t count, uint32_t tag, size_t rec,
                         found *f, fj_error *e, const char *name)
{
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *s = data + FJ_IMAGE_HEADER_SIZE + (size_t)i * sizeof(fj_section_rec);
        if (rd32(s) != tag)
            continue;
        f->offset = rd64(s + 8);
        f->size = rd64(s + 16);
        f->p = data + f->offset;
        if (f->size % rec || f->size / rec > 0xFFFFFFF0u)
            return bad(e, (size_t)f->offset, name);
        return FJ_OK;
    }
    fj__set_error(e, FJ_ERR_DICT_FORMAT, 0, "damaged dictionary: no %s section", name);
    return FJ_ERR_DICT_FORMAT;
}

fj_status fj__image_load(fj_image *img, const unsigned char *data, size_t size, fj_error *e)
{
    memset(img, 0, sizeof *img);
    if (((uintptr_t)data & 7) != 0) {
        fj__set_error(e, FJ_ERR_INVALID_ARGUMENT, 0, "dictionary memory must be 8-byte aligned");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    if (size < FJ_IMAGE_HEADER_SIZE || memcmp(data, FJ_IMAGE_MAGIC, 8) != 0) {
        fj__set_error(e, FJ_ERR_DICT_FORMAT, 0, "not a fanjian dictionary (bad magic)");
        return FJ_ERR_DICT_FORMAT;
    }
    uint32_t version = rd32(data + 8), count = rd32(data + 12), chunks = rd32(data + 32);
    if (version != FJ_IMAGE_VERSION) {
        fj__set_error(e, FJ_ERR_DICT_VERSION, 8,
                      "dictionary format version %u, this library reads version %u", version,
                      FJ_IMAGE_VERSION);
        return FJ_ERR_DICT_VERSION;
    }
    for (size_t i = 36; i < FJ_IMAGE_HEADER_SIZE; i++)
        if (data[i] != 0)
            return bad(e, i, "reserved header bytes are not zero");
    if (rd64(data + 16) != size)
        return bad(e, 16, "file size does not match the header (truncated?)");
    if (count > 64 || fj_image_body_offset(count, 0) > size)
        return bad(e, 12, "section table");
    uint64_t body = fj_image_body_offset(count, chunks);
    if (body > size || (size - body + FJ_CHUNK_SIZE - 1) / FJ_CHUNK_SIZE != chunks)
        return bad(e, 32, "chunk count");
    /* The section table and the chunk sums: what tells where everything is. */
    if (fj_checksum(data + FJ_IMAGE_HEADER_SIZE, body - FJ_IMAGE_HEADER_SIZE) != rd64(data + 24)) {
        fj__set_error(e, FJ_ERR_DICT_CHECKSUM, 24, "dictionary checksum mismatch (corrupted file)");
        return FJ_ERR_DICT_CHECKSUM;
    }
    for (uint32_t i = 0; i < count; i++) {
        size_t at = FJ_IMAGE_HEADER_SIZE + (size_t)i * sizeof(fj_section_rec);
        uint64_t off = rd64(data + at + 8), sz = rd64(data + at + 16);
        if (off % 8 || off < body || off > size || sz > size - off)
            return bad(e, at, "section out of bounds");
    }
    img->chunk_sums = data + fj_image_body_offset(count, 0);
    img->chunk_count = chunks;
    img->body = body;
    found s;
    fj_status st;
#define SECTION(tag, rec, name)                                              \
    do {                                                                     \
        if ((st = section(data, count, tag, rec, &s, e, name)) != FJ_OK)    \
            return st;                                                       \
    } while (0)
    SECTION(FJ_SEC_STRINGS, 1, "strings");
    img->strings = (const char *)s.p;
    img->strings_size = (uint32_t)s.size;
    SECTION(FJ_SEC_NODES, sizeof(fj_node_rec), "nodes");
    img->nodes = (const fj_node_rec *)s.p;
    img->node_count = (uint32_t)(s.size / sizeof(fj_node_rec));
    SECTION(FJ_SEC_EDGES, 4, "edges");
    img->edges = (const uint32_t *)s.p;
    if (s.size / 4 != img->node_count)
        return bad(e, (size_t)s.offset, "edge count");
    SECTION(FJ_SEC_BLOCKS, FJ_BLOCK_SIZE * 4, "blocks");
    img->blocks = (const uint32_t *)s.p;
    img->block_count = (uint32_t)(s.size / (FJ_BLOCK_SIZE * 4));
    if (img->block_count == 0)
        return bad(e, (size_t)s.offset, "no blocks");
    SECTION(FJ_SEC_LEVEL1, FJ_L1_SIZE * 4, "level-1 tables");
    img->level1 = (const uint32_t *)s.p;
    img->level1_count = (uint32_t)(s.size / (FJ_L1_SIZE * 4));
    SECTION(FJ_SEC_MATCHERS, sizeof(fj_matcher_rec), "matchers");
    img->matchers = (const fj_matcher_rec *)s.p;
    img->matcher_count = (uint32_t)(s.size / sizeof(fj_matcher_rec));
    SECTION(FJ_SEC_PROFILES, sizeof(fj_profile_rec), "profiles");
    img->profiles = (const fj_profile_rec *)s.p;
    img->profile_count = (uint32_t)(s.size / sizeof(fj_profile_rec));
    SECTION(FJ_SEC_BARRIERS, FJ_BARRIER_BYTES, "barriers");
    img->barriers = s.p;
    img->barrier_count = (uint32_t)(s.size / FJ_BARRIER_BYTES);
    SECTION(FJ_SEC_SRCDICTS, sizeof(fj_srcdict_rec), "source dictionaries");
    img->srcdicts = (const fj_srcdict_rec *)s.p;
    img->srcdict_count = (uint32_t)(s.size / sizeof(fj_srcdict_rec));
    SECTION(FJ_SEC_SRCENTRY, sizeof(fj_srcentry_rec), "source entries");
    img->srcentries = (const fj_srcentry_rec *)s.p;
    img->srcentry_count = (uint32_t)(s.size / sizeof(fj_srcentry_rec));
/* A filter: exactly FJ_BIGRAM_BITS bits. */
#define FILTER(tag, field, name)                                             \
    do {                                                                     \
        SECTION(tag, FJ_BIGRAM_BITS / 8, name);                              \
        if (s.size != FJ_BIGRAM_BITS / 8)                                    \
            return bad(e, (size_t)s.offset, name " size");                   \
        img->field = s.p;                                                    \
    } while (0)
    FILTER(FJ_SEC_BIGRAMS, bigrams, "bigram filter");
    FILTER(FJ_SEC_PAIRKEYS, pairkeys, "pair filter");
    FILTER(FJ_SEC_TRIGRAMS, trigrams, "trigram filter");
    SECTION(FJ_SEC_CHANGERS, FJ_CHANGERS_BYTES, "changing-pair filter");
    if (s.size != FJ_CHANGERS_BYTES)
        return bad(e, (size_t)s.offset, "changing-pair filter size");
    img->changers = s.p;
    FILTER(FJ_SEC_INNER, inner, "inner-pair filter");
    FILTER(FJ_SEC_CHKEYS, chkeys, "changing-key filter");
#undef FILTER
    SECTION(FJ_SEC_EDGEHASH, 8, "edge tables");
    img->edge_hash = (const uint64_t *)s.p;
    img->edge_slots = (uint32_t)(s.size / 8);
    SECTION(FJ_SEC_RECORDS, (size_t)FJ_REC_COUNT * 8, "record tables");
    img->records = (const uint64_t *)s.p;
    img->record_tables = (uint32_t)(s.size / ((size_t)FJ_REC_COUNT * 8));
    SECTION(FJ_SEC_CONTEXT, sizeof(fj_context_rec), "context models");
    img->contexts = (const fj_context_rec *)s.p;
    if (s.size / sizeof(fj_context_rec) != img->profile_count)
        return bad(e, (size_t)s.offset, "context model count");
    SECTION(FJ_SEC_AMBIG, FJ_BARRIER_BYTES, "context character sets");
    img->ambiguous = s.p;
    img->ambiguous_count = (uint32_t)(s.size / FJ_BARRIER_BYTES);
    SECTION(FJ_SEC_AMBPAIRS, FJ_BIGRAM_BITS / 8, "context pair filters");
    img->ambiguous_pairs = s.p;
    if (s.size / (FJ_BIGRAM_BITS / 8) != img->ambiguous_count)
        return bad(e, (size_t)s.offset, "context pair filter count");
    SECTION(FJ_SEC_SRCONLY, FJ_BARRIER_BYTES, "source-script character sets");
    img->source_only = s.p;
    img->source_only_count = (uint32_t)(s.size / FJ_BARRIER_BYTES);
    SECTION(FJ_SEC_DAMAGEW, 4, "damage weights");
    img->damage_weights = s.size == 0x80000 ? (const int16_t *)s.p : NULL;
    if (s.size != 0 && s.size != 0x80000)
        return bad(e, (size_t)s.offset, "damage weight table size");
    SECTION(FJ_SEC_LANGMOD, 4, "language model");
    img->lm_slots = (const uint32_t *)s.p;
    img->lm_bits = 0;
    if (s.size) {
        uint64_t lm_slots = s.size / 4;
        while (img->lm_bits < FJ_LM_BITS_MAX && ((uint64_t)1 << img->lm_bits) < lm_slots)
            img->lm_bits++;
        if (((uint64_t)1 << img->lm_bits) != lm_slots)
            return bad(e, (size_t)s.offset, "language model size");
    }
#undef SECTION
    /* The sources: optional (an image from before them has none). */
    if (section(data, count, FJ_SEC_SOURCES, 1, &s, NULL, "sources") == FJ_OK && s.size) {
        img->sources = (const char *)s.p;
        img->sources_size = (uint32_t)s.size;
    }
    img->base = data;
    img->size = size;
    return FJ_OK;
}

/* ---- checking parts on first use ----------------------------------------
 * d->checked holds a byte per chunk: 1 once its sum has matched; then one
 * per matcher and one for the source entries: 1 once checked. A check that
 * fails leaves its byte 0, so every later use fails with the same message.
 * Checks only read the image, so threads racing on one do the same work and
 * store the same 1. */

static int is_checked(const fj_dict *d, size_t i)
{
    return atomic_load_explicit(&d->checked[i], memory_order_acquire) != 0;
}

static void set_checked(const fj_dict *d, size_t i)
{
    atomic_store_explicit(&d->checked[i], 1, memory_order_release);
}

fj_status fj__dict_require(const fj_dict *d, const void *p, size_t len, fj_error *e)
{
    const fj_image *img = &d->image;
    if (!len)
        return FJ_OK;
    uint64_t off = (uint64_t)((const unsigned char *)p - img->base);
    uint64_t first = (off - img->body) / FJ_CHUNK_SIZE;
    uint64_t last = (off + len - 1 - img->body) / FJ_CHUNK_SIZE;
    for (uint64_t c = first; c <= last; c++) {
        if (is_checked(d, c))
            continue;
        uint64_t at = img->body + c * FJ_CHUNK_SIZE;
        uint64_t n = img->size - at < FJ_CHUNK_SIZE ? img->size - at : FJ_CHUNK_SIZE;
        if (fj_checksum(img->base + at, n) != rd64(img->chunk_sums + 8 * c)) {
            fj__set_error(e, FJ_ERR_DICT_CHECKSUM, (size_t)at,
                          "dictionary checksum mismatch in bytes %llu to %llu (corrupted file)",
                          (unsigned long long)at, (unsigned long long)(at + n));
            return FJ_ERR_DICT_CHECKSUM;
        }
        set_checked(d, c);
    }
    return FJ_OK;
}

static size_t at_of(const fj_image *img, const void *p)
{
    return (size_t)((const unsigned char *)p - img->base);
}

/* The sections every matcher reads beside its own slices. */
static fj_status require_shared(const fj_dict *d, fj_error *e)
{
    const fj_image *img = &d->image;
    const struct {
        const void *p;
        size_t len;
    } parts[] = {
        {img->strings, img->strings_size},
        {img->bigrams, FJ_BIGRAM_BITS / 8},
        {img->pairkeys, FJ_BIGRAM_BITS / 8},
        {img->trigrams, FJ_BIGRAM_BITS / 8},
        {img->changers, FJ_CHANGERS_BYTES},
        {img->inner, FJ_BIGRAM_BITS / 8},
        {img->chkeys, FJ_BIGRAM_BITS / 8},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        fj_status st = fj__dict_require(d, parts[i].p, parts[i].len, e);
        if (st != FJ_OK)
            return st;
    }
    return FJ_OK;
}

/* A node of a matcher whose nodes are [node_first, node_end), whose value
 * or children lie outside their sections. */
static inline uint32_t node_bad(uint32_t strings_size, uint32_t node_first, uint32_t node_end,
                                const fj_node_rec *n)
{
    uint32_t vl = n->value_len;
    uint64_t vend = (uint64_t)n->value + vl;
    uint32_t in_strings = vl != FJ_NO_VALUE && vl > FJ_INLINE_VALUE_MAX;
    uint32_t has_children = n->child_count != 0;
    return (in_strings & (vend > strings_size)) |
           (has_children & ((n->first_child < node_first) |
                            ((uint64_t)n->first_child + n->child_count > node_end)));
}

/* Whether any of nodes [0, count) is node_bad for a matcher whose nodes are
 * [node_first, node_end): four at a time where SSE2 is there, since this
 * loop is most of a matcher's check and so of start-up. */
uint32_t fj__nodes_out_of_range(const fj_node_rec *nodes, uint32_t count, uint32_t strings_size,
                                uint32_t node_first, uint32_t node_end)
{
    uint32_t i = 0, any = 0;
#ifdef __SSE2__
    _Static_assert(sizeof(fj_node_rec) == 12, "a node is three 32-bit words");
    const __m128i bias = _mm_set1_epi32((int)0x80000000u);
    const __m128i strings = _mm_set1_epi32((int)strings_size);
    const __m128i first = _mm_set1_epi32((int)node_first);
    const __m128i end = _mm_set1_epi32((int)node_end);
    const __m128i span = _mm_xor_si128(_mm_sub_epi32(end, first), bias);
    const __m128i inline_max = _mm_set1_epi32(FJ_INLINE_VALUE_MAX);
    const __m128i no_value = _mm_set1_epi32(FJ_NO_VALUE);
    const __m128i low16 = _mm_set1_epi32(0xFFFF);
    __m128i acc = _mm_setzero_si128();
#define FJ_UGT(x, y) _mm_cmpgt_epi32(_mm_xor_si128((x), bias), _mm_xor_si128((y), bias))
#define FJ_PICK(x, y, a, b, c, d) \
    _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(x), _mm_castsi128_ps(y), \
                                    _MM_SHUFFLE(d, c, b, a)))
    for (; i + 4 <= count; i += 4) {
        /* Nodes n0..n3 as words: a = v0 f0 L0 v1, b = f1 L1 v2 f2,
         * c = L2 v3 f3 L3 (v value, f first_child, L value_len and
         * child_count); regrouped so lane k holds node k's. */
        const char *p = (const char *)&nodes[i];
        __m128i a = _mm_loadu_si128((const __m128i *)p);
        __m128i b = _mm_loadu_si128((const __m128i *)(p + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(p + 32));
        __m128i v = FJ_PICK(FJ_PICK(a, a, 0, 0, 3, 3), FJ_PICK(b, c, 2, 2, 1, 1), 0, 2, 0, 2);
        __m128i f = FJ_PICK(FJ_PICK(a, b, 1, 1, 0, 0), FJ_PICK(b, c, 3, 3, 2, 2), 0, 2, 0, 2);
        __m128i l = FJ_PICK(FJ_PICK(a, b, 2, 2, 1, 1), FJ_PICK(c, c, 0, 0, 3, 3), 0, 2, 0, 2);
        __m128i vl = _mm_and_si128(l, low16), cc = _mm_srli_epi32(l, 16);
        /* A value in STRS: it ends inside (v + vl <= size, without
         * overflow). */
        __m128i in_strings =
            _mm_andnot_si128(_mm_cmpeq_epi32(vl, no_value), _mm_cmpgt_epi32(vl, inline_max));
        __m128i bad_value = _mm_or_si128(FJ_UGT(v, strings), FJ_UGT(vl, _mm_sub_epi32(strings, v)));
        /* Children: first_child in [node_first, node_end] and
         * first_child + child_count <= node_end. */
        __m128i has_children = _mm_xor_si128(_mm_cmpeq_epi32(cc, _mm_setzero_si128()),
                                             _mm_set1_epi32(-1));
        __m128i bad_children =
            _mm_or_si128(_mm_cmpgt_epi32(_mm_xor_si128(_mm_sub_epi32(f, first), bias), span),
                         FJ_UGT(cc, _mm_sub_epi32(end, f)));
        acc = _mm_or_si128(acc, _mm_or_si128(_mm_and_si128(in_strings, bad_value),
                                             _mm_and_si128(has_children, bad_children)));
    }
#undef FJ_PICK
#undef FJ_UGT
    any = _mm_movemask_epi8(acc) != 0;
#endif
    for (; i < count; i++)
        any |= node_bad(strings_size, node_first, node_end, &nodes[i]);
    return any;
}

/* A slot of matcher m's edge table that is neither empty nor an edge between
 * two of its nodes; counts the empty ones. That is all a lookup needs to
 * stay inside the matcher (it reads only the child's node, whose own
 * offsets node_bad checked). Whether the child really is the parent's is
 * not looked at: it would cost a random read per slot, most of the check,
 * and a slot that lies only makes a wrong match, which the checksums are
 * there to catch. Sequential and branch free. */
static inline uint32_t edge_slot_bad(const fj_matcher_rec *m, uint64_t v, size_t *empty)
{
    uint32_t parent = FJ_EDGE_PARENT(v), child = FJ_EDGE_CHILD(v);
    uint32_t used = v != 0, span = m->node_end - m->node_first;
    *empty += !used;
    return used & ((parent - m->node_first >= span) | (child - m->node_first >= span));
}

static fj_status check_matcher(const fj_dict *d, uint32_t id, fj_error *e)
{
    const fj_image *img = &d->image;
    const fj_matcher_rec *m = &img->matchers[id];
    const uint32_t *l1 = img->level1 + (size_t)m->level1 * FJ_L1_SIZE;
    const uint32_t *blocks = img->blocks + (size_t)m->block_first * FJ_BLOCK_SIZE;
    size_t block_entries = (size_t)(m->block_end - m->block_first) * FJ_BLOCK_SIZE;
    const fj_node_rec *nodes = img->nodes + m->node_first;
    uint32_t node_count = m->node_end - m->node_first;
    const uint64_t *table = img->edge_hash + m->edge_first;
    fj_status st;
    if ((st = fj__dict_require(d, l1, FJ_L1_SIZE * 4, e)) != FJ_OK ||
        (st = fj__dict_require(d, blocks, block_entries * 4, e)) != FJ_OK ||
        (st = fj__dict_require(d, nodes, (size_t)node_count * sizeof *nodes, e)) != FJ_OK ||
        (st = fj__dict_require(d, img->edges + m->node_first, (size_t)node_count * 4, e)) != FJ_OK ||
        (st = fj__dict_require(d, table, (size_t)m->edge_slots * 8, e)) != FJ_OK ||
        (st = require_shared(d, e)) != FJ_OK)
        return st;
    /* Every offset the matcher follows stays inside its own slices: branch
     * free over the nodes, then the first bad one is looked for only if
     * there is one. */
    uint32_t any_bad =
        fj__nodes_out_of_range(nodes, node_count, img->strings_size, m->node_first, m->node_end);
    for (uint32_t i = 0; any_bad && i < node_count; i++)
        if (node_bad(img->strings_size, m->node_first, m->node_end, &nodes[i]))
            return bad(e, at_of(img, &nodes[i]), "trie node");
    for (size_t i = 0; i < FJ_L1_SIZE; i++)
        if (l1[i] != 0 && (l1[i] < m->block_first || l1[i] >= m->block_end))
            return bad(e, at_of(img, &l1[i]), "level-1 table entry");
    for (size_t i = 0; i < block_entries; i++) {
        uint32_t v = blocks[i], node = v & FJ_ENTRY_NODE_MASK;
        int ok;
        if (v == 0 || v == FJ_ENTRY_IDS) {
            ok = 1;
        } else if (v & FJ_ENTRY_DIRECT) {
            const unsigned char u[3] = {(unsigned char)v, (unsigned char)(v >> 8),
                                        (unsigned char)(v >> 16)};
            uint32_t cp;
            ok = !(v & 0x7F000000u) && fj_utf8_decode(u, u + 3, &cp) == 3;
        } else {
            ok = node >= m->node_first && node < m->node_end &&
                 !(v & FJ_ENTRY_HAS_VALUE) == (img->nodes[node].value_len == FJ_NO_VALUE) &&
                 !(v & FJ_ENTRY_HAS_CHILDREN) == (img->nodes[node].child_count == 0) &&
                 (!(v & FJ_ENTRY_CHANGES) || (v & FJ_ENTRY_HAS_CHILDREN));
        }
        if (!ok)
            return bad(e, at_of(img, &blocks[i]), "code point table entry");
    }
    /* The matcher's edge table: each slot joins two of its nodes (so lookups
     * stay in the trie), and the table has an empty slot (so probing ends). */
    size_t empty = 0;
    uint32_t any_bad_slot = 0;
    for (size_t i = 0; i < m->edge_slots; i++)
        any_bad_slot |= edge_slot_bad(m, table[i], &empty);
    for (size_t i = 0; any_bad_slot && i < m->edge_slots; i++)
        if (edge_slot_bad(m, table[i], &empty))
            return bad(e, at_of(img, &table[i]), "edge table slot");
    if (!empty)
        return bad(e, at_of(img, table), "edge table has no empty slot");
    /* Its records: whatever they say, a lookup stays inside the matcher
     * (every flag sends the loop to the checked tables); only the CHNG line
     * they name is read at once. */
    if (m->records != FJ_NONE) {
        const uint64_t *rec = img->records + (size_t)m->records * FJ_REC_COUNT;
        if ((st = fj__dict_require(d, rec, (size_t)FJ_REC_COUNT * 8, e)) != FJ_OK)
            return st;
        uint32_t any_bad_line = 0;
        for (size_t i = 0; i < FJ_REC_COUNT; i++)
            any_bad_line |= FJ_REC_LINE(rec[i]) > FJ_CHANGE_ALWAYS;
        for (size_t i = 0; any_bad_line && i < FJ_REC_COUNT; i++)
            if (FJ_REC_LINE(rec[i]) > FJ_CHANGE_ALWAYS)
                return bad(e, at_of(img, &rec[i]), "character record");
    }
    return FJ_OK;
}

fj_status fj__dict_use_matcher(const fj_dict *d, uint32_t id, fj_error *e)
{
    size_t flag = d->image.chunk_count + (size_t)id;
    if (is_checked(d, flag))
        return FJ_OK;
    fj_status st = check_matcher(d, id, e);
    if (st == FJ_OK)
        set_checked(d, flag);
    return st;
}

fj_status fj__dict_use_sources(const fj_dict *d, fj_error *e)
{
    const fj_image *img = &d->image;
    size_t flag = img->chunk_count + (size_t)img->matcher_count;
    if (is_checked(d, flag))
        return FJ_OK;
    fj_status st;
    if ((st = fj__dict_require(d, img->strings, img->strings_size, e)) != FJ_OK ||
        (st = fj__dict_require(d, img->srcentries,
                               (size_t)img->srcentry_count * sizeof *img->srcentries, e)) != FJ_OK)
        return st;
    for (uint32_t i = 0; i < img->srcentry_count; i++) {
        const fj_srcentry_rec *r = &img->srcentries[i];
        if ((uint64_t)r->key_off + r->key_len > img->strings_size ||
            (uint64_t)r->values_off + r->values_len > img->strings_size)
            return bad(e, at_of(img, r), "source entry");
    }
    set_checked(d, flag);
    return FJ_OK;
}

fj_status fj_dict_verify(const fj_dict *dict, fj_error *error)
{
    if (!dict) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "invalid argument");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    const fj_image *img = &dict->image;
    fj_status st = fj__dict_require(dict, img->base + img->body, img->size - img->body, error);
    for (uint32_t i = 0; st == FJ_OK && i < img->matcher_count; i++)
        st = fj__dict_use_matcher(dict, i, error);
    if (st == FJ_OK)
        st = fj__dict_use_sources(dict, error);
    if (st == FJ_OK && error)
        fj__set_error(error, FJ_OK, 0, "ok");
    return st;
}

/* At open: the records that name everything else, which every use reads. */
static fj_status check_records(fj_dict *d, fj_error *e)
{
    const fj_image *img = &d->image;
    fj_status st;
    if ((st = fj__dict_require(d, img->matchers, (size_t)img->matcher_count * sizeof *img->matchers,
                               e)) != FJ_OK ||
        (st = fj__dict_require(d, img->profiles, (size_t)img->profile_count * sizeof *img->profiles,
                               e)) != FJ_OK ||
        (st = fj__dict_require(d, img->contexts, (size_t)img->profile_count * sizeof *img->contexts,
                               e)) != FJ_OK ||
        (st = fj__dict_require(d, img->srcdicts, (size_t)img->srcdict_count * sizeof *img->srcdicts,
                               e)) != FJ_OK ||
        (st = fj__dict_require(d, img->sources, img->sources_size, e)) != FJ_OK ||
        (st = fj__dict_require(d, img->blocks, FJ_BLOCK_SIZE * 4, e)) != FJ_OK)
        return st;
    /* Block 0 stands for "nothing" in every matcher's table. */
    for (size_t i = 0; i < FJ_BLOCK_SIZE; i++)
        if (img->blocks[i] != 0)
            return bad(e, at_of(img, &img->blocks[i]), "block 0 is not empty");
    for (uint32_t i = 0; i < img->matcher_count; i++) {
        const fj_matcher_rec *m = &img->matchers[i];
        if (m->level1 >= img->level1_count || m->node_first == 0 || m->node_first > m->node_end ||
            m->node_end > img->node_count || m->block_first == 0 ||
            m->block_first > m->block_end || m->block_end > img->block_count ||
            m->edge_slots == 0 || (m->edge_slots & (m->edge_slots - 1)) ||
            m->edge_first > img->edge_slots || m->edge_slots > img->edge_slots - m->edge_first ||
            (m->records != FJ_NONE && m->records >= img->record_tables))
            return bad(e, at_of(img, m), "matcher");
    }
    for (uint32_t i = 0; i < img->profile_count; i++) {
        const fj_profile_rec *p = &img->profiles[i];
        size_t at = at_of(img, p);
        if (memchr(p->name, 0, sizeof p->name) == NULL)
            return bad(e, at, "profile name");
        if ((p->normalization != FJ_NONE && p->normalization >= img->matcher_count) ||
            (p->segmentation != FJ_NONE && p->segmentation >= img->matcher_count) ||
            p->stage_count == 0 || p->stage_count > FJ_MAX_STAGES ||
            p->barrier >= img->barrier_count)
            return bad(e, at, "profile");
        for (uint32_t k = 0; k < p->stage_count; k++)
            if (p->stages[k] >= img->matcher_count)
                return bad(e, at, "profile step");
        const fj_context_rec *cx = &img->contexts[i];
        if (cx->core_stage != FJ_NONE &&
            (cx->core_stage >= p->stage_count || cx->words >= img->matcher_count ||
             (cx->fold != FJ_NONE && cx->fold >= img->matcher_count) ||
             cx->ambiguous >= img->ambiguous_count ||
             (cx->lm_bits != 0 && cx->lm_bits != img->lm_bits) ||
             (cx->source_only != FJ_NONE && cx->source_only >= img->source_only_count) ||
             (cx->overrides != FJ_NONE && cx->overrides >= img->matcher_count) ||
             ((cx->flags & FJ_CONTEXT_REPAIR) &&
              (cx->suspects == FJ_NONE || cx->suspects + 1 >= img->source_only_count ||
               cx->defaults >= img->matcher_count ||
               (cx->attested != FJ_NONE && cx->attested >= img->matcher_count)))))
            return bad(e, at_of(img, cx), "context model");
    }
    for (uint32_t i = 0; i < img->srcdict_count; i++) {
        const fj_srcdict_rec *sd = &img->srcdicts[i];
        if ((uint64_t)sd->name_off + sd->name_len > img->strings_size ||
            (uint64_t)sd->first_entry + sd->entry_count > img->srcentry_count)
            return bad(e, at_of(img, sd), "source dictionary");
    }
    if (img->sources_size) {
        const unsigned char *p = (const unsigned char *)img->sources;
        uint64_t strings = 0;
        for (uint64_t i = 0; i < img->sources_size; i++)
            strings += p[i] == 0;
        if (p[img->sources_size - 1] != 0 || strings % 4)
            return bad(e, at_of(img, p), "sources");
        d->image.source_count = (uint32_t)(strings / 4);
    }
    return FJ_OK;
}

/* Loads the image into d, makes its checked flags and checks the records. */
static fj_status image_open(fj_dict *d, const unsigned char *data, size_t size, fj_error *e)
{
    fj_status st = fj__image_load(&d->image, data, size, e);
    if (st != FJ_OK)
        return st;
    const fj_allocator *a = d->allocator.alloc ? &d->allocator : NULL;
    d->checked_len = (size_t)d->image.chunk_count + d->image.matcher_count + 1;
    d->checked = fj__alloc(a, d->checked_len * sizeof *d->checked);
    if (!d->checked) {
        d->checked_len = 0;
        fj__set_error(e, FJ_ERR_NOMEM, 0, "out of memory");
        return FJ_ERR_NOMEM;
    }
    for (size_t i = 0; i < d->checked_len; i++)
        atomic_init(&d->checked[i], 0);
    return check_records(d, e);
}

static fj_status dict_new(const fj_dict_options *options, fj_dict **out, fj_error *e)
{
    if (options && options->size < offsetof(fj_dict_options, allocator) + sizeof(void *)) {
        fj__set_error(e, FJ_ERR_INVALID_ARGUMENT, 0,
                      "fj_dict_options.size is too small (set it to sizeof the struct)");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    const fj_allocator *a = options ? options->allocator : NULL;
    fj_dict *d = fj__alloc(a, sizeof *d);
    if (!d) {
        fj__set_error(e, FJ_ERR_NOMEM, 0, "out of memory");
        return FJ_ERR_NOMEM;
    }
    memset(d, 0, sizeof *d);
    if (a)
        d->allocator = *a;
    *out = d;
    return FJ_OK;
}

fj_status fj_dict_open_memory(const void *data, size_t size, const fj_dict_options *options,
                              fj_dict **out, fj_error *error)
{
    if (!out || (!data && size)) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "invalid argument");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    fj_dict *d;
    fj_status st = dict_new(options, &d, error);
    if (st != FJ_OK)
        return st;
    st = image_open(d, data, size, error);
    if (st != FJ_OK) {
        fj_dict_close(d);
        return st;
    }
    *out = d;
    if (error)
        fj__set_error(error, FJ_OK, 0, "ok");
    return FJ_OK;
}

static const char *file_type_name(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "a special file";
}

/* Reads the header with pread and checks the magic number, the version and
 * the declared sizes against the file's size. */
static fj_status check_header(int fd, off_t file_size, const char *path, fj_error *e)
{
    unsigned char h[FJ_IMAGE_HEADER_SIZE];
    ssize_t got = file_size >= (off_t)sizeof h ? pread(fd, h, sizeof h, 0) : 0;
    if (got < 0) {
        fj__set_error(e, FJ_ERR_IO, 0, "cannot read dictionary %s: %s", path, strerror(errno));
        return FJ_ERR_IO;
    }
    if ((size_t)got < sizeof h || memcmp(h, FJ_IMAGE_MAGIC, 8) != 0) {
        fj__set_error(e, FJ_ERR_DICT_FORMAT, 0, "%s: not a fanjian dictionary (%s)", path,
                      (size_t)got < sizeof h ? "too small" : "bad magic");
        return FJ_ERR_DICT_FORMAT;
    }
    uint32_t version = rd32(h + 8), count = rd32(h + 12);
    if (version != FJ_IMAGE_VERSION) {
        fj__set_error(e, FJ_ERR_DICT_VERSION, 8,
                      "%s: dictionary format version %u, this library reads version %u", path,
                      version, FJ_IMAGE_VERSION);
        return FJ_ERR_DICT_VERSION;
    }
    uint64_t declared = rd64(h + 16);
    if (declared != (uint64_t)file_size || (uint64_t)file_size > SIZE_MAX) {
        fj__set_error(e, FJ_ERR_DICT_FORMAT, 16,
                      "%s: damaged dictionary: the header says %llu bytes, the file has %llu (%s)",
                      path, (unsigned long long)declared, (unsigned long long)file_size,
                      declared > (uint64_t)file_size ? "truncated" : "extra bytes");
        return FJ_ERR_DICT_FORMAT;
    }
    if (count > 64 || FJ_IMAGE_HEADER_SIZE + (uint64_t)count * sizeof(fj_section_rec) > declared) {
        fj__set_error(e, FJ_ERR_DICT_FORMAT, 12, "%s: damaged dictionary: section table", path);
        return FJ_ERR_DICT_FORMAT;
    }
    return FJ_OK;
}

fj_status fj_dict_open(const char *path, const fj_dict_options *options, fj_dict **out,
                       fj_error *error)
{
    if (!out) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "invalid argument");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    if (!path) {
        const char *env = getenv("FANJIAN_DICT");
        path = (env && *env) ? env : FJ_DEFAULT_DICT;
    }
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
     * below like anything else that is not a regular file. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fj__set_error(error, FJ_ERR_IO, 0, "cannot open dictionary %s: %s", path, strerror(errno));
        return FJ_ERR_IO;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int saved = errno;
        close(fd);
        fj__set_error(error, FJ_ERR_IO, 0, "cannot read dictionary %s: %s", path, strerror(saved));
        return FJ_ERR_IO;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        fj__set_error(error, FJ_ERR_DICT_FORMAT, 0,
                      "%s: not a fanjian dictionary (%s, not a regular file)", path,
                      file_type_name(sb.st_mode));
        return FJ_ERR_DICT_FORMAT;
    }
    /* The header alone decides whether the file is worth mapping, so a
     * large file that is not an image is refused without reading it. */
    fj_status st = check_header(fd, sb.st_size, path, error);
    if (st != FJ_OK) {
        close(fd);
        return st;
    }
    size_t size = (size_t)sb.st_size;
    /* Not populated: a converter reads only the parts it uses. */
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        fj__set_error(error, FJ_ERR_IO, 0, "cannot map dictionary %s: %s", path, strerror(errno));
        return FJ_ERR_IO;
    }
    fj_dict *d;
    st = dict_new(options, &d, error);
    if (st != FJ_OK) {
        munmap(map, size);
        return st;
    }
    d->mapped = 1;
    d->map = map;
    d->map_size = size;
    st = image_open(d, map, size, error);
    if (st != FJ_OK) {
        fj_dict_close(d);
        return st;
    }
    *out = d;
    if (error)
        fj__set_error(error, FJ_OK, 0, "ok");
    return FJ_OK;
}

void fj_dict_close(fj_dict *d)
{
    if (!d)
        return;
    fj_allocator a = d->allocator;
    if (d->checked)
        fj__free(a.alloc ? &a : NULL, d->checked, d->checked_len * sizeof *d->checked);
    if (d->mapped)
        munmap(d->map, d->map_size);
    fj__free(a.alloc ? &a : NULL, d, sizeof *d);
}

const fj_image *fj__dict_image(const fj_dict *dict) { return &dict->image; }

fj_status fj_dict_info(const fj_dict *dict, fj_dict_info_rec *info)
{
    if (!dict || !info || info->size < sizeof *info)
        return FJ_ERR_INVALID_ARGUMENT;
    info->format_version = FJ_IMAGE_VERSION;
    info->source_count = dict->image.source_count;
    return FJ_OK;
}

fj_status fj_dict_source_at(const fj_dict *dict, size_t i, fj_dict_source *source)
{
    if (!dict || !source || source->size < offsetof(fj_dict_source, role) + sizeof(char *) ||
        i >= dict->image.source_count)
        return FJ_ERR_INVALID_ARGUMENT;
    const char *p = dict->image.sources;
    for (size_t k = 0; k < 4 * i; k++)
        p += strlen(p) + 1;
    const char **field[4] = {&source->name, &source->version, &source->license, &source->role};
    for (int k = 0; k < 4; k++) {
        *field[k] = p;
        p += strlen(p) + 1;
    }
    return FJ_OK;
}

size_t fj_dict_profile_count(const fj_dict *dict) { return dict ? dict->image.profile_count : 0; }

const char *fj_dict_profile_name(const fj_dict *dict, size_t index)
{
    if (!dict || index >= dict->image.profile_count)
        return NULL;
    return dict->image.profiles[index].name;
}
