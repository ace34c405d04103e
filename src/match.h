/* Longest-prefix lookup in one matcher. Inline: this is the hot path. */
#ifndef FJ_MATCH_H
#define FJ_MATCH_H

#include "internal.h"
#include "utf8.h"

enum { FJ_MATCH_UNDECIDED = -1, FJ_MATCH_NONE = 0, FJ_MATCH_FOUND = 1 };

/* The code point table entry for cp: 0, FJ_ENTRY_IDS, or node id + 1. */
static inline uint32_t fj__lookup(const fj_matcher *m, uint32_t cp)
{
    return m->blocks[(size_t)m->level1[cp >> 8] * FJ_BLOCK_SIZE + (cp & 0xFFu)];
}

typedef struct fj_match {
    size_t len;        /* bytes of input the key covers */
    const char *value; /* replacement bytes */
    size_t value_len;
} fj_match;

/* Finds the longest key starting at p, whose first character (first_len
 * bytes) has table entry `entry` (a node). Without `final`, reaching `end`
 * while a longer key is still possible is FJ_MATCH_UNDECIDED. */
static inline int fj__match(const fj_matcher *m, uint32_t entry, const unsigned char *p,
                            size_t first_len, const unsigned char *end, int final, fj_match *out)
{
    const fj_node_rec *n = &m->nodes[entry - 1];
    int found = FJ_MATCH_NONE;
    if (n->value_len != FJ_NO_VALUE) {
        out->len = first_len;
        out->value = m->strings + n->value_off;
        out->value_len = n->value_len;
        found = FJ_MATCH_FOUND;
    }
    const unsigned char *q = p + first_len;
    while (n->child_count) {
        if (q >= end) {
            if (!final)
                return FJ_MATCH_UNDECIDED;
            break;
        }
        uint32_t cp;
        int k = fj_utf8_decode(q, end, &cp);
        if (k <= 0) {
            if (k == FJ_U8_INCOMPLETE && !final)
                return FJ_MATCH_UNDECIDED;
            break;
        }
        uint32_t lo = n->first_child, hi = lo + n->child_count, top = hi;
        while (lo < hi) {
            uint32_t mid = (lo + hi) >> 1;
            if (m->edges[mid] < cp)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == top || m->edges[lo] != cp)
            break;
        n = &m->nodes[lo];
        q += k;
        if (n->value_len != FJ_NO_VALUE) {
            out->len = (size_t)(q - p);
            out->value = m->strings + n->value_off;
            out->value_len = n->value_len;
            found = FJ_MATCH_FOUND;
        }
    }
    return found;
}

#endif
