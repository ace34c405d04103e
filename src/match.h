/* Longest-prefix lookup in one matcher. Inline: this is the hot path. */
#ifndef FJ_MATCH_H
#define FJ_MATCH_H

#include "internal.h"
#include "utf8.h"

enum { FJ_MATCH_UNDECIDED = -1, FJ_MATCH_NONE = 0, FJ_MATCH_FOUND = 1 };

/* The code point table entry for cp: 0, FJ_ENTRY_IDS, FJ_ENTRY_DIRECT | bytes,
 * or a node id with flags. */
static inline uint32_t fj__lookup(const fj_matcher *m, uint32_t cp)
{
    return m->blocks[(size_t)m->level1[cp >> 8] * FJ_BLOCK_SIZE + (cp & 0xFFu)];
}

/* The child of node n along the edge cp, or NULL. Children are sorted by
 * code point; deeper nodes have few, so bisection is enough. */
static inline const fj_node_rec *fj__child(const fj_matcher *m, const fj_node_rec *n, uint32_t cp)
{
    uint32_t lo = n->first_child, hi = lo + n->child_count, top = hi;
    while (lo < hi) {
        uint32_t mid = (lo + hi) >> 1;
        if (m->edges[mid] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == top || m->edges[lo] != cp ? NULL : &m->nodes[lo];
}

typedef struct fj_match {
    size_t len;        /* bytes of input the key covers */
    const char *value; /* replacement bytes */
    size_t value_len;
} fj_match;

static inline void fj__take_value(const fj_matcher *m, const fj_node_rec *n, size_t len,
                                  fj_match *out)
{
    out->len = len;
    out->value = n->value_len <= FJ_INLINE_VALUE_MAX ? (const char *)&n->value
                                                     : m->strings + n->value;
    out->value_len = n->value_len;
}

/* Continues a walk at node n, reached by the text [p, q): the longest key
 * ending at n or below it. FJ_MATCH_NONE when none does; without `final`,
 * FJ_MATCH_UNDECIDED when the text ran out while a longer key was possible. */
static inline __attribute__((always_inline)) int fj__walk(const fj_matcher *m,
                                                          const fj_node_rec *n,
                                                          const unsigned char *p,
                                                          const unsigned char *q,
                                                          const unsigned char *end, int final,
                                                          fj_match *out)
{
    int found = FJ_MATCH_NONE;
    if (n->value_len != FJ_NO_VALUE) {
        fj__take_value(m, n, (size_t)(q - p), out);
        found = FJ_MATCH_FOUND;
    }
    while (n->child_count) {
        uint32_t cp;
        if (q >= end) {
            if (!final)
                return FJ_MATCH_UNDECIDED;
            break;
        }
        int k = fj_utf8_decode_fast(q, end, &cp);
        if (k <= 0) {
            if (k == FJ_U8_INCOMPLETE && !final)
                return FJ_MATCH_UNDECIDED;
            break;
        }
        n = fj__child(m, n, cp);
        if (!n)
            break;
        q += k;
        if (n->value_len != FJ_NO_VALUE) {
            fj__take_value(m, n, (size_t)(q - p), out);
            found = FJ_MATCH_FOUND;
        }
    }
    return found;
}

/* The longest key of two or more characters below first-character node id:
 * the second character (cp, k bytes at q) is looked up in the edge table,
 * then the walk goes on. */
static inline __attribute__((always_inline)) int
fj__match_below(const fj_matcher *m, uint32_t id, const unsigned char *p, const unsigned char *q,
                uint32_t cp, int k, const unsigned char *end, int final, fj_match *out)
{
    uint64_t want = FJ_EDGE_SLOT(cp, id, 0), slot;
    uint32_t i = fj_edge_hash(id, cp) & m->edge_hash_mask;
    while ((slot = m->edge_hash[i]) != 0 && (slot & 0x3FFFFFFFFFFull) != want)
        i = (i + 1) & m->edge_hash_mask;
    if (!slot)
        return FJ_MATCH_NONE;
    return fj__walk(m, &m->nodes[FJ_EDGE_CHILD(slot)], p, q + k, end, final, out);
}

/* Finds the longest key starting at p, whose first character (first_len
 * bytes) has the node table entry `entry`; the character after it, when
 * there is one, was decoded by the caller into cp (k is the decode result).
 * Without `final`, reaching `end` while a longer key is still possible is
 * FJ_MATCH_UNDECIDED. The node is read only when a key can end there: the
 * entry's flags say what it holds. */
static inline __attribute__((always_inline)) int
fj__match_next(const fj_matcher *m, uint32_t entry, const unsigned char *p, size_t first_len,
               uint32_t cp1, uint32_t cp, int k, const unsigned char *end, int final,
               fj_match *out)
{
    uint32_t id = entry & FJ_ENTRY_NODE_MASK;
    const unsigned char *q = p + first_len;
    if (entry & FJ_ENTRY_HAS_CHILDREN) {
        if (q >= end) {
            if (!final)
                return FJ_MATCH_UNDECIDED;
            goto first_only;
        }
        if (k <= 0) {
            if (k == FJ_U8_INCOMPLETE && !final)
                return FJ_MATCH_UNDECIDED;
            goto first_only;
        }
        /* Second character: bigram filter, then the edge table. */
        uint32_t h = fj_bigram_hash(m->salt, cp1, cp);
        if (!(m->bigrams[h >> 3] >> (h & 7) & 1))
            goto first_only;
        int found = fj__match_below(m, id, p, q, cp, k, end, final, out);
        if (found)
            return found;
    }
first_only:
    if (!(entry & FJ_ENTRY_HAS_VALUE))
        return FJ_MATCH_NONE;
    fj__take_value(m, &m->nodes[id], first_len, out);
    return FJ_MATCH_FOUND;
}

/* As fj__match_next, decoding the second character itself. */
static inline __attribute__((always_inline)) int fj__match(const fj_matcher *m, uint32_t entry,
                                                           const unsigned char *p, size_t first_len,
                                                           uint32_t cp1, const unsigned char *end,
                                                           int final, fj_match *out)
{
    uint32_t cp = 0;
    int k = 0;
    if ((entry & FJ_ENTRY_HAS_CHILDREN) && p + first_len < end)
        k = fj_utf8_decode_fast(p + first_len, end, &cp);
    return fj__match_next(m, entry, p, first_len, cp1, cp, k, end, final, out);
}

#endif
