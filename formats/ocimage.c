/* Building a dictionary image from flattened dictionaries (ocimage.h). */
#include "ocimage.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/utf8.h"

static void oci_fail(oci_builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void oci_fail(oci_builder *b, const char *fmt, ...)
{
    if (b->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->error, sizeof b->error, fmt, ap);
    va_end(ap);
}

/* ---- growable byte and record buffers ----------------------------------- */


void *oci_grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *grown = realloc(p, c * elem);
    if (!grown) {
        oc__nomem();
        return NULL;
    }
    *cap = c;
    return grown;
}

size_t oci_buf_add(oci_buf *b, const void *data, size_t n)
{
    unsigned char *grown = oci_grow(b->p, &b->cap, b->len + n, 1);
    if (!grown)
        return OCI_NOMEM;
    b->p = grown;
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    return b->len - n;
}

void oci_buf_align(oci_buf *b, size_t a)
{
    static const unsigned char zero[8];
    while (b->len % a)
        if (oci_buf_add(b, zero, 1) == OCI_NOMEM)
            return;
}

/* ---- string pool with de-duplication ------------------------------------ */


static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

uint32_t oci_pool_add(oci_pool *p, const char *s, size_t n)
{
    if ((p->used + 1) * 2 > p->nslots) {
        size_t old = p->nslots;
        uint32_t *os = p->slots, *ol = p->lens;
        size_t nslots = old ? old * 2 : 1 << 16;
        uint32_t *slots = calloc(nslots, sizeof(uint32_t)), *lens = calloc(nslots, sizeof(uint32_t));
        if (!slots || !lens) {
            free(slots);
            free(lens);
            oc__nomem();
            return 0;
        }
        p->nslots = nslots;
        p->slots = slots;
        p->lens = lens;
        for (size_t i = 0; i < old; i++) {
            if (!os[i])
                continue;
            size_t j = hash_bytes((char *)p->bytes.p + os[i] - 1, ol[i]) & (p->nslots - 1);
            while (p->slots[j])
                j = (j + 1) & (p->nslots - 1);
            p->slots[j] = os[i];
            p->lens[j] = ol[i];
        }
        free(os);
        free(ol);
    }
    size_t j = hash_bytes(s, n) & (p->nslots - 1);
    while (p->slots[j]) {
        if (p->lens[j] == n && memcmp(p->bytes.p + p->slots[j] - 1, s, n) == 0)
            return p->slots[j] - 1;
        j = (j + 1) & (p->nslots - 1);
    }
    size_t added = oci_buf_add(&p->bytes, s, n);
    if (added == OCI_NOMEM)
        return 0;
    uint32_t off = (uint32_t)added;
    p->slots[j] = off + 1;
    p->lens[j] = (uint32_t)n;
    p->used++;
    return off;
}

/* ---- image under construction -------------------------------------------- */


/* After a failed allocation the new block and node are 0 (which exist
 * once oci_builder_init has succeeded) and the builder is done for. */
static uint32_t oci_new_block(oci_builder *b)
{
    uint32_t *grown = oci_grow(b->blocks, &b->block_cap, (b->block_count + 1) * FJ_BLOCK_SIZE,
                               sizeof(uint32_t));
    if (!grown)
        return 0;
    b->blocks = grown;
    memset(b->blocks + b->block_count * FJ_BLOCK_SIZE, 0, FJ_BLOCK_SIZE * sizeof(uint32_t));
    return (uint32_t)b->block_count++;
}

static uint32_t oci_new_node(oci_builder *b, uint32_t cp)
{
    fj_node_rec *nodes = oci_grow(b->nodes, &b->node_cap, b->node_count + 1, sizeof(fj_node_rec));
    if (nodes)
        b->nodes = nodes;
    uint32_t *edges = nodes ? oci_grow(b->edges, &b->edge_cap, b->node_count + 1, sizeof(uint32_t)) : NULL;
    if (!edges)
        return 0;
    b->edges = edges;
    fj_node_rec *n = &b->nodes[b->node_count];
    n->value = 0;
    n->value_len = FJ_NO_VALUE;
    n->first_child = 0;
    n->child_count = 0;
    b->edges[b->node_count] = cp;
    return (uint32_t)b->node_count++;
}

static uint32_t char_at(const char *key, size_t off, size_t *len)
{
    uint32_t cp;
    const unsigned char *p = (const unsigned char *)key + off;
    int n = fj_utf8_decode(p, p + strlen(key + off), &cp);
    if (n <= 0) {
        fprintf(stderr, "fanjian: key is not UTF-8: %s\n", key);
        exit(65);
    }
    *len = (size_t)n;
    return cp;
}

/* One queued trie node: the keys [lo, hi) share its path, which ends at byte off. */
typedef struct qitem {
    uint32_t node;
    size_t lo, hi, off;
} qitem;

/* Allocates contiguous children for the keys [lo, hi) whose next character
 * starts at byte off, queueing each child. Returns the first child's id. */
static uint32_t add_children(oci_builder *b, const oc_dict *d, size_t lo, size_t hi, size_t off,
                             qitem **queue, size_t *qlen, size_t *qcap, size_t *count)
{
    uint32_t first = (uint32_t)b->node_count;
    *count = 0;
    size_t i = lo;
    while (i < hi) {
        size_t clen;
        uint32_t cp = char_at(d->entries[i].key, off, &clen);
        size_t j = i + 1;
        while (j < hi) {
            size_t l2;
            if (char_at(d->entries[j].key, off, &l2) != cp)
                break;
            j++;
        }
        uint32_t id = oci_new_node(b, cp);
        qitem *grown = id ? oci_grow(*queue, qcap, *qlen + 1, sizeof(qitem)) : NULL;
        if (!grown)
            return first; /* oc_nomem_failed() */
        *queue = grown;
        (*queue)[(*qlen)++] = (qitem){id, i, j, off + clen};
        ++*count;
        i = j;
    }
    return first;
}

/* The bits behind the hot path's character-at-a-time mode (step.c): in
 * CHNG the first two characters of every key whose value differs from its
 * characters' own answers, with FJ_ENTRY_CHANGES on its first character; in
 * CHKY that key when it has two characters, else its first three; in INNR
 * every pair of adjacent characters inside any key. */
static void mark_changers(oci_builder *b, const oc_dict *d, const uint32_t *l1)
{
    uint32_t salt = (uint32_t)b->matcher_count;
    char *own = NULL;
    size_t own_cap = 0;
    for (size_t i = 0; i < d->count; i++) {
        const char *k = d->entries[i].key;
        size_t klen = strlen(k), off = 0, n, used = 0;
        uint32_t prev = 0, first = 0, second = 0, third = 0, chars = 0;
        while (off < klen) {
            uint32_t cp = char_at(k, off, &n);
            const oc_entry *single = oc_dict_find(d, k + off, n);
            const char *ans = single ? single->values[0] : k + off;
            size_t alen = single ? strlen(ans) : n;
            char *grown = oci_grow(own, &own_cap, used + alen + 1, 1);
            if (!grown) {
                free(own);
                return;
            }
            own = grown;
            memcpy(own + used, ans, alen);
            used += alen;
            if (chars) {
                uint32_t h = fj_bigram_hash(salt, prev, cp);
                b->inner[h >> 3] |= (unsigned char)(1u << (h & 7));
            }
            if (chars == 0)
                first = cp;
            else if (chars == 1)
                second = cp;
            else if (chars == 2)
                third = cp;
            prev = cp;
            chars++;
            off += n;
        }
        if (chars < 2)
            continue;
        const char *v = d->entries[i].values[0];
        if (used == strlen(v) && memcmp(own, v, used) == 0)
            continue;
        uint64_t h = fj_change_hash(salt, first, second);
        uint32_t h1 = (uint32_t)h, h2 = (uint32_t)(h >> 32);
        b->changers[h1 >> 3] |= (unsigned char)(1u << (h1 & 7));
        b->changers[h2 >> 3] |= (unsigned char)(1u << (h2 & 7));
        b->blocks[l1[first >> 8] * FJ_BLOCK_SIZE + (first & 0xFF)] |= FJ_ENTRY_CHANGES;
        uint32_t kh = chars == 2 ? fj_bigram_hash(salt, first, second)
                                 : fj_bigram_hash(salt | FJ_CHKEYS_LONGER, fj_pair_mix(first, second), third);
        b->chkeys[kh >> 3] |= (unsigned char)(1u << (kh & 7));
    }
    free(own);
}

/* -1 when an allocation failed (d is then the caller's). */
static int build_matcher(oci_builder *b, oc_dict *d)
{
    fj_matcher_rec m = {0};
    m.records = FJ_NONE; /* converters build them (fjdict stores the steps') */
    m.node_first = (uint32_t)b->node_count;
    m.block_first = (uint32_t)b->block_count;
    uint32_t *level1 = oci_grow(b->level1, &b->level1_cap, (b->level1_count + 1) * FJ_L1_SIZE,
                                sizeof(uint32_t));
    if (!level1)
        return -1;
    b->level1 = level1;
    uint32_t *l1 = b->level1 + b->level1_count * FJ_L1_SIZE;
    memset(l1, 0, FJ_L1_SIZE * sizeof(uint32_t));
    m.level1 = (uint32_t)b->level1_count++;

    qitem *queue = NULL;
    size_t qlen = 0, qcap = 0, first_chars, count;
    add_children(b, d, 0, d->count, 0, &queue, &qlen, &qcap, &first_chars);
    for (size_t q = 0; q < qlen && !oc_nomem_failed(); q++) {
        qitem it = queue[q];
        uint32_t cp = b->edges[it.node];
        if (q < first_chars) { /* a first character: enter it in the code point table */
            if (!l1[cp >> 8])
                l1[cp >> 8] = oci_new_block(b);
            b->blocks[l1[cp >> 8] * FJ_BLOCK_SIZE + (cp & 0xFF)] = it.node;
        }
        size_t lo = it.lo;
        const char *key = d->entries[lo].key;
        if (strlen(key) == it.off) {
            const char *v = d->entries[lo].values[0];
            size_t vl = strlen(v);
            if (vl >= FJ_NO_VALUE) {
                oci_fail(b, "value too long for %s", key);
                vl = 0;
            }
            if (vl <= FJ_INLINE_VALUE_MAX)
                memcpy(&b->nodes[it.node].value, v, vl);
            else
                b->nodes[it.node].value = oci_pool_add(&b->strings, v, vl);
            b->nodes[it.node].value_len = (uint16_t)vl;
            size_t chars = 0;
            for (const char *c = key; *c; c++)
                chars += ((unsigned char)*c & 0xC0) != 0x80;
            if (chars > m.max_key_chars)
                m.max_key_chars = (uint32_t)chars;
            lo++;
        }
        if (lo < it.hi) {
            uint32_t first = add_children(b, d, lo, it.hi, it.off, &queue, &qlen, &qcap, &count);
            if (count > 0xFFFF) {
                oci_fail(b, "too many keys after %.*s", (int)it.off, key);
                count = 0;
            }
            b->nodes[it.node].first_child = first;
            b->nodes[it.node].child_count = (uint16_t)count;
        }
    }
    /* Pair keys and three-character prefixes, for the filters that spare the
     * matcher most trie walks. */
    for (size_t i = 0; i < d->count && !b->plain; i++) {
        const char *k = d->entries[i].key;
        size_t off = 0, l1n, l2n, l3n, klen = strlen(k);
        uint32_t c1 = char_at(k, 0, &l1n);
        if (l1n >= klen)
            continue;
        uint32_t c2 = char_at(k, l1n, &l2n);
        off = l1n + l2n;
        uint32_t salt = (uint32_t)b->matcher_count, h;
        if (off == klen) {
            h = fj_bigram_hash(salt, c1, c2);
            b->pairkeys[h >> 3] |= (unsigned char)(1u << (h & 7));
        } else {
            uint32_t c3 = char_at(k, off, &l3n);
            h = fj_bigram_hash(salt, fj_pair_mix(c1, c2), c3);
            b->trigrams[h >> 3] |= (unsigned char)(1u << (h & 7));
        }
    }
    /* A first character whose only key is itself and whose value is one
     * character gets that answer in the table; one with longer keys gets its
     * second characters entered in the bigram filter. */
    for (size_t q = 0; q < first_chars; q++) {
        uint32_t id = queue[q].node, cp = b->edges[id];
        const fj_node_rec *n = &b->nodes[id];
        uint32_t *slot = &b->blocks[l1[cp >> 8] * FJ_BLOCK_SIZE + (cp & 0xFF)];
        if (n->value_len != FJ_NO_VALUE)
            *slot |= FJ_ENTRY_HAS_VALUE;
        if (n->child_count)
            *slot |= FJ_ENTRY_HAS_CHILDREN;
        if (n->child_count == 0 && n->value_len == 3) {
            const unsigned char *v = (const unsigned char *)&n->value;
            uint32_t vcp;
            if (fj_utf8_decode(v, v + 3, &vcp) == 3)
                *slot = FJ_ENTRY_DIRECT | v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16;
        }
        for (uint32_t c = 0; c < n->child_count && !b->plain; c++) {
            uint32_t h = fj_bigram_hash((uint32_t)b->matcher_count, cp, b->edges[n->first_child + c]);
            b->bigrams[h >> 3] |= (unsigned char)(1u << (h & 7));
            uint64_t *grown = oci_grow(b->first_edges, &b->first_edge_cap, b->first_edge_count + 1,
                                       sizeof(uint64_t));
            if (!grown)
                break;
            b->first_edges = grown;
            b->first_edges[b->first_edge_count++] =
                FJ_EDGE_SLOT(b->edges[n->first_child + c], id, n->first_child + c);
        }
    }
    free(queue);
    if (!b->plain && !oc_nomem_failed())
        mark_changers(b, d, l1);
    /* IDS operators that start no key: mark them so the hot path finds them. */
    for (uint32_t cp = 0x2FF0; cp <= 0x2FFF; cp++) {
        if (!l1[cp >> 8])
            l1[cp >> 8] = oci_new_block(b);
        uint32_t *slot = &b->blocks[l1[cp >> 8] * FJ_BLOCK_SIZE + (cp & 0xFF)];
        if (!*slot)
            *slot = FJ_ENTRY_IDS;
    }
    fj_matcher_rec *matchers = oc_nomem_failed() ? NULL
                               : realloc(b->matchers, (b->matcher_count + 1) * sizeof(fj_matcher_rec));
    if (matchers)
        b->matchers = matchers;
    oc_dict **dicts = matchers ? realloc(b->matcher_dicts, (b->matcher_count + 1) * sizeof(oc_dict *))
                               : NULL;
    if (!dicts) {
        if (!oc_nomem_failed())
            oc__nomem();
        return -1;
    }
    b->matcher_dicts = dicts;
    m.node_end = (uint32_t)b->node_count;
    m.block_end = (uint32_t)b->block_count;
    b->matchers[b->matcher_count] = m;
    b->matcher_dicts[b->matcher_count++] = d;
    return 0;
}

static int same_dict(const oc_dict *a, const oc_dict *b)
{
    if (a->count != b->count)
        return 0;
    for (size_t i = 0; i < a->count; i++)
        if (strcmp(a->entries[i].key, b->entries[i].key) ||
            strcmp(a->entries[i].values[0], b->entries[i].values[0]))
            return 0;
    return 1;
}

/* Returns the matcher id for a flattened dictionary, sharing identical ones. */
uint32_t oci_matcher_for(oci_builder *b, oc_dict *d)
{
    if (!d)
        return FJ_NONE;
    if (oc_nomem_failed()) {
        oc_dict_free(d);
        return FJ_NONE;
    }
    for (size_t i = 0; i < b->matcher_count; i++)
        if (same_dict(b->matcher_dicts[i], d)) {
            oc_dict_free(d);
            return (uint32_t)i;
        }
    if (build_matcher(b, d) != 0) {
        oci_fail(b, "out of memory");
        oc_dict_free(d);
        return FJ_NONE;
    }
    return (uint32_t)(b->matcher_count - 1);
}

static size_t key_chars(const char *key)
{
    size_t n = 0;
    for (; *key; key++)
        n += ((unsigned char)*key & 0xC0) != 0x80;
    return n;
}

/* FJ_PROFILE_SEG_IS_STEP1 holds when the segmentation keys are exactly the
 * first step's keys of two or more characters. */
int oci_seg_is_step1(const oc_dict *seg, const oc_dict *step1)
{
    size_t multi = 0;
    for (size_t i = 0; i < step1->count; i++) {
        const char *k = step1->entries[i].key;
        if (key_chars(k) < 2)
            continue;
        multi++;
        if (!oc_dict_find(seg, k, strlen(k)))
            return 0;
    }
    for (size_t i = 0; i < seg->count; i++)
        if (key_chars(seg->entries[i].key) < 2)
            return 0;
    return multi == seg->count;
}

void oci_clear_key_chars(unsigned char *barrier, const oc_dict *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->count; i++) {
        const unsigned char *p = (const unsigned char *)d->entries[i].key;
        const unsigned char *end = p + strlen((const char *)p);
        while (p < end) {
            uint32_t cp;
            int n = fj_utf8_decode(p, end, &cp);
            if (n <= 0)
                break;
            if (cp < 0x10000)
                barrier[cp >> 3] &= (unsigned char)~(1u << (cp & 7));
            p += n;
        }
    }
}

static void *zalloc(size_t n)
{
    void *p = calloc(n, 1);
    if (!p)
        oc__nomem();
    return p;
}

void oci_builder_init(oci_builder *b)
{
    memset(b, 0, sizeof *b);
    oci_new_block(b);   /* block 0: nothing */
    oci_new_node(b, 0); /* node 0: the placeholder behind entry 0 */
    b->bigrams = zalloc(FJ_BIGRAM_BITS / 8);
    b->pairkeys = zalloc(FJ_BIGRAM_BITS / 8);
    b->trigrams = zalloc(FJ_BIGRAM_BITS / 8);
    b->changers = zalloc(FJ_CHANGERS_BYTES);
    if (b->changers)
        memset(b->changers + (size_t)FJ_CHANGE_ALWAYS * 64, 0xFF, 64);
    b->inner = zalloc(FJ_BIGRAM_BITS / 8);
    b->chkeys = zalloc(FJ_BIGRAM_BITS / 8);
}

void oci_builder_free(oci_builder *b)
{
    for (size_t i = 0; i < b->matcher_count; i++)
        oc_dict_free(b->matcher_dicts[i]);
    free(b->matcher_dicts);
    free(b->matchers);
    free(b->nodes);
    free(b->edges);
    free(b->blocks);
    free(b->level1);
    free(b->bigrams);
    free(b->pairkeys);
    free(b->trigrams);
    free(b->changers);
    free(b->inner);
    free(b->chkeys);
    free(b->first_edges);
    free(b->strings.bytes.p);
    free(b->strings.slots);
    free(b->strings.lens);
    memset(b, 0, sizeof *b);
}

uint64_t *oci_edge_hash(oci_builder *b, size_t *slots)
{
    /* One table per matcher, each a power of two at most a third full (one
     * slot, empty, for a matcher without such edges), one after another.
     * The first edges were added matcher by matcher. */
    size_t total = 0, e = 0;
    for (size_t m = 0; m < b->matcher_count; m++) {
        fj_matcher_rec *r = &b->matchers[m];
        size_t n = 0;
        while (e + n < b->first_edge_count && FJ_EDGE_PARENT(b->first_edges[e + n]) < r->node_end)
            n++;
        size_t size = n ? 16 : 1;
        while (size < n * 3)
            size *= 2;
        r->edge_first = (uint32_t)total;
        r->edge_slots = (uint32_t)size;
        total += size;
        e += n;
    }
    uint64_t *edge_hash = zalloc((total ? total : 1) * sizeof(uint64_t));
    *slots = 0;
    if (!edge_hash)
        return NULL;
    e = 0;
    for (size_t m = 0; m < b->matcher_count; m++) {
        const fj_matcher_rec *r = &b->matchers[m];
        uint64_t *table = edge_hash + r->edge_first;
        size_t mask = r->edge_slots - 1;
        for (; e < b->first_edge_count && FJ_EDGE_PARENT(b->first_edges[e]) < r->node_end; e++) {
            uint64_t v = b->first_edges[e];
            size_t h = fj_edge_hash(FJ_EDGE_PARENT(v), FJ_EDGE_CP(v)) & mask;
            while (table[h])
                h = (h + 1) & mask;
            table[h] = v;
        }
    }
    *slots = total ? total : 1;
    return edge_hash;
}

unsigned char *oci_assemble(const oci_section *secs, uint32_t nsec, size_t *len)
{
    /* The body's size decides the number of chunk sums before it. */
    size_t body_len = 0;
    for (uint32_t i = 0; i < nsec; i++)
        body_len = (body_len + secs[i].size + 7) & ~(size_t)7;
    uint32_t chunks = (uint32_t)((body_len + FJ_CHUNK_SIZE - 1) / FJ_CHUNK_SIZE);
    size_t body = (size_t)fj_image_body_offset(nsec, chunks);
    oci_buf img = {0};
    fj_section_rec *recs = zalloc((nsec ? nsec : 1) * sizeof *recs);
    int nomem = !recs;
    unsigned char *zero = nomem ? NULL : zalloc(body);
    nomem = nomem || !zero || oci_buf_add(&img, zero, body) == OCI_NOMEM;
    free(zero);
    for (uint32_t i = 0; i < nsec && !nomem; i++) {
        oci_buf_align(&img, 8);
        if ((nomem = img.len % 8 != 0))
            break;
        recs[i].tag = secs[i].tag;
        recs[i].offset = img.len;
        recs[i].size = secs[i].size;
        if (secs[i].size)
            nomem = oci_buf_add(&img, secs[i].data, secs[i].size) == OCI_NOMEM;
    }
    if (!nomem)
        oci_buf_align(&img, 8);
    if (nomem || img.len % 8 || img.len != body + body_len) {
        free(recs);
        free(img.p);
        return NULL;
    }
    memcpy(img.p + FJ_IMAGE_HEADER_SIZE, recs, nsec * sizeof *recs);
    free(recs);
    fj_header_rec h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, FJ_IMAGE_MAGIC, 8);
    h.version = FJ_IMAGE_VERSION;
    h.section_count = nsec;
    h.file_size = img.len;
    h.chunk_count = chunks;
    memcpy(img.p, &h, sizeof h);
    fj_image_seal(img.p, img.len);
    *len = img.len;
    return img.p;
}
