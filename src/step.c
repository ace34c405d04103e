/* One conversion step: forward maximum matching of a text against one
 * matcher, as OpenCC's Conversion does. This is the hot path.
 *
 * Two loops share the work. The fast loop runs where no lookup can reach the
 * end of the text and the output has room: there a result never depends on
 * input not yet seen, and every character is written straight out. Near the
 * ends, one unit at a time goes through the careful path, which knows about
 * truncated input, undecided matches and output that does not fit. */
#include <string.h>

#include "internal.h"
#include "match.h"

/* Room the fast loop keeps in the output: a value or a character, with slack
 * for the 4-byte stores below. */
#define FAST_ROOM 128u

/* Handles the unit at p. Returns the bytes consumed, or 0 when the result
 * depends on input that has not arrived (only without `final`). */
size_t fj__step_unit(const fj_matcher *m, const unsigned char *p, const unsigned char *end,
                     int final, fj_out *o)
{
    uint32_t cp;
    int n = fj_utf8_decode_fast(p, end, &cp);
    if (n <= 0) {
        if (n == FJ_U8_INCOMPLETE && !final)
            return 0;
        fj__out_put(o, (const char *)p, 1); /* not UTF-8: passes through */
        return 1;
    }
    if (m->rec && n == 3 && cp - FJ_REC_FIRST < FJ_REC_COUNT) {
        /* A character that starts no phrase: its record holds the answer. */
        uint32_t rec = m->rec[cp - FJ_REC_FIRST];
        if (!((rec >> FJ_REC_PHRASE_BIT | rec >> FJ_REC_SPECIAL_BIT) & 1)) {
            const char u[3] = {(char)rec, (char)(rec >> 8), (char)(rec >> 16)};
            fj__out_put(o, u, 3);
            return 3;
        }
    }
    uint32_t entry = fj__lookup(m, cp);
    if (entry == 0) {
        fj__out_put(o, (const char *)p, (size_t)n);
        return (size_t)n;
    }
    if (entry != FJ_ENTRY_IDS) {
        if (entry & FJ_ENTRY_DIRECT) {
            const char u[3] = {(char)entry, (char)(entry >> 8), (char)(entry >> 16)};
            fj__out_put(o, u, 3);
            return (size_t)n;
        }
        fj_match hit;
        int r = fj__match(m, entry, p, (size_t)n, cp, end, final, &hit);
        if (r == FJ_MATCH_UNDECIDED)
            return 0;
        if (r == FJ_MATCH_FOUND) {
            fj__out_put(o, hit.value, hit.value_len);
            return hit.len;
        }
        if (!fj_ids_arity(cp)) {
            fj__out_put(o, (const char *)p, (size_t)n);
            return (size_t)n;
        }
    }
    /* An ideographic description sequence passes through whole. */
    size_t ids;
    int st = fj_ids_parse(p, end, &ids);
    if (st == FJ_IDS_INCOMPLETE && !final)
        return 0;
    size_t len = st == FJ_IDS_COMPLETE ? ids : (size_t)n;
    fj__out_put(o, (const char *)p, len);
    return len;
}

static inline __attribute__((always_inline)) uint32_t load32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* The code point of a three-byte character whose bytes are the low three of
 * w (little-endian), or 0 when they are not one. */
static inline __attribute__((always_inline)) uint32_t decode3(uint32_t w)
{
    if ((w & 0xC0C0F0u) != 0x8080E0u)
        return 0;
    uint32_t cp = (w & 0x0Fu) << 12 | (w & 0x3F00u) >> 2 | (w & 0x3F0000u) >> 16;
    if (cp < 0x800 || cp - 0xD800u < 0x800u)
        return 0; /* overlong or a surrogate: not UTF-8 */
    return cp;
}

/* The fast loop over [p, limit), where limit leaves enough text after it
 * for the longest key and for 4-byte loads. Returns where it stopped. */
static const unsigned char *fast_loop(const fj_matcher *matcher, const unsigned char *p,
                                      const unsigned char *limit, const unsigned char *end,
                                      int final, fj_out *o, int *stuck)
{
    /* Local copies: output stores may alias anything, so fields would be reloaded. */
    const fj_matcher m = *matcher;
    const uint64_t ascii0 = m.ascii_starts[0], ascii1 = m.ascii_starts[1];
    char *w = o->buf + o->len, *wend = o->buf + o->cap;
    while (p < limit && (size_t)(wend - w) >= FAST_ROOM) {
        uint32_t bytes = load32(p);
        if (!(bytes & 0x80)) {
            unsigned c = bytes & 0x7F;
            if ((c < 64 ? ascii0 : ascii1) >> (c & 63) & 1)
                goto careful;
            *w++ = (char)c;
            p++;
            continue;
        }
        uint32_t cp = decode3(bytes), cp2 = 0, entry, h;
        int k = 0;
        if (!cp)
            goto careful;
        while (cp - FJ_REC_FIRST < FJ_REC_COUNT) {
            /* The common case in one step: the character's own answer, and
             * whether a longer key may start here (phrase start and bigram
             * filter together). Only that second question branches. The next
             * character, decoded for the filter, starts the next round. */
            uint32_t rec = m.rec[cp - FJ_REC_FIRST];
            uint32_t next = load32(p + 3);
            k = 3;
            if ((cp2 = decode3(next)) == 0) {
                k = 1;
                cp2 = next & 0x80 ? FJ_REC_NO_CP : next & 0x7F;
            }
            h = fj_bigram_hash(m.salt, cp, cp2);
            uint32_t maybe = (rec >> FJ_REC_PHRASE_BIT) & (m.bigrams[h >> 3] >> (h & 7) | (cp2 >> 31));
            if ((maybe | (rec >> FJ_REC_SPECIAL_BIT)) & 1) {
                if (!((rec >> FJ_REC_SPECIAL_BIT) & 1) && cp2 != FJ_REC_NO_CP) {
                    entry = fj__lookup(&m, cp); /* a node with children: a phrase may start */
                    goto phrase;
                }
                break;
            }
            memcpy(w, &rec, 4); /* three bytes used; the fourth is overwritten next */
            w += 3;
            p += 3;
            if (k != 3 || p >= limit || (size_t)(wend - w) < FAST_ROOM)
                goto next_round;
            bytes = next;
            cp = cp2;
        }
        entry = fj__lookup(&m, cp);
        if (entry == 0) {
            memcpy(w, &bytes, 4); /* 3 bytes used; the 4th is overwritten next */
            w += 3;
            p += 3;
            continue;
        }
        if (entry & FJ_ENTRY_DIRECT) {
            if (entry == FJ_ENTRY_IDS)
                goto careful;
            memcpy(w, &entry, 4); /* the three bytes, then one overwritten next */
            w += 3;
            p += 3;
            continue;
        }
        if (cp - 0x2FF0u < 16u)
            goto careful; /* an IDS operator that starts a key */
        if (entry & FJ_ENTRY_HAS_CHILDREN) {
            uint32_t next = load32(p + 3);
            if ((cp2 = decode3(next)) != 0)
                k = 3;
            else if (!(next & 0x80)) {
                cp2 = next & 0x7F;
                k = 1;
            } else {
                k = fj_utf8_decode(p + 3, end, &cp2);
            }
            if (k > 0) {
                h = fj_bigram_hash(m.salt, cp, cp2);
                if (m.bigrams[h >> 3] >> (h & 7) & 1)
                    goto phrase;
            }
        }
        goto own_value;
    phrase: {
        /* The bigram filter passed for (cp, cp2) with hash h. A two-character
         * key, or a third character that continues some key, sends us into
         * the trie; here no key can reach the end, so the match is decided. */
        int walk = 1;
        if (!(m.pairkeys[h >> 3] >> (h & 7) & 1)) {
            const unsigned char *r = p + 3 + k;
            uint32_t cp3, next3 = load32(r);
            if ((cp3 = decode3(next3)) == 0) {
                if (!(next3 & 0x80))
                    cp3 = next3 & 0x7F;
                else if (fj_utf8_decode(r, end, &cp3) <= 0)
                    cp3 = 0; /* not a character: no key continues with it */
            }
            uint32_t h3 = fj_bigram_hash(m.salt, fj_pair_mix(cp, cp2), cp3);
            walk = cp3 && (m.trigrams[h3 >> 3] >> (h3 & 7) & 1);
        }
        fj_match hit;
        if (walk && fj__match_below(&m, entry & FJ_ENTRY_NODE_MASK, p, p + 3, cp2, k, end, 1, &hit)) {
            if (hit.value_len > FAST_ROOM - 4)
                goto careful;
            memcpy(w, hit.value, hit.value_len);
            w += hit.value_len;
            p += hit.len;
            continue;
        }
    }
    own_value:
        if (entry & FJ_ENTRY_HAS_VALUE) {
            const fj_node_rec *n = &m.nodes[entry & FJ_ENTRY_NODE_MASK];
            if (n->value_len <= FJ_INLINE_VALUE_MAX) {
                memcpy(w, &n->value, 4);
                w += n->value_len;
            } else {
                if (n->value_len > FAST_ROOM - 4)
                    goto careful;
                memcpy(w, m.strings + n->value, n->value_len);
                w += n->value_len;
            }
        } else {
            memcpy(w, &bytes, 4);
            w += 3;
        }
        p += 3;
        continue;
    careful:
        o->len = (size_t)(w - o->buf);
        size_t used = fj__step_unit(&m, p, end, final, o);
        if (!used) {
            *stuck = 1; /* an IDS running past the end of what we have */
            return p;
        }
        p += used;
        w = o->buf + o->len; /* the careful path may have moved the buffer */
        wend = o->buf + o->cap;
    next_round:;
    }
    o->len = (size_t)(w - o->buf);
    return p;
}

size_t fj__step(const fj_matcher *m, const unsigned char *text, size_t len, int final, fj_out *o)
{
    const unsigned char *p = text, *end = text + len;
    /* No key lookup from below `limit` can reach the end of the text. */
    size_t reach = (size_t)m->max_key_chars * 4 + 8;
    const unsigned char *limit = len > reach ? end - reach : text;
    int stuck = 0;
    while (p < end && !stuck) {
        if (p < limit) {
            if (o->cap - o->len >= FAST_ROOM) {
                p = fast_loop(m, p, limit, end, final, o, &stuck);
                continue;
            }
            if (fj__out_make_room(o, FAST_ROOM))
                continue;
        }
        size_t used = fj__step_unit(m, p, end, final, o);
        if (!used)
            break;
        p += used;
    }
    return (size_t)(p - text);
}
