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
/* Bytes the fast loop's loads may read past the unit it is at. */
#define FAST_TAIL 16u

/* Longest key is refused by the guard: the longest key at p (first
 * character first_len bytes, table entry `entry`) that it allows. A key of
 * one character needs no leave. FJ_MATCH_NONE when no key is left. */
static __attribute__((noinline)) int guarded_match(const fj_matcher *m, uint32_t entry,
                                                   const unsigned char *p, size_t first_len,
                                                   const unsigned char *end,
                                                   const fj_key_guard *g, fj_match *out)
{
    enum { MAX_HITS = 64 };
    const fj_node_rec *hit_node[MAX_HITS];
    size_t hit_len[MAX_HITS];
    int hits = 0;
    const fj_node_rec *n = &m->nodes[entry & FJ_ENTRY_NODE_MASK];
    if (entry & FJ_ENTRY_HAS_VALUE) {
        hit_node[hits] = n;
        hit_len[hits++] = first_len;
    }
    const unsigned char *q = p + first_len;
    while ((entry & FJ_ENTRY_HAS_CHILDREN) && n->child_count && q < end && hits < MAX_HITS) {
        uint32_t cp;
        int k = fj_utf8_decode_fast(q, end, &cp);
        if (k <= 0 || !(n = fj__child(m, n, cp)))
            break;
        q += k;
        if (n->value_len != FJ_NO_VALUE) {
            hit_node[hits] = n;
            hit_len[hits++] = (size_t)(q - p);
        }
    }
    while (hits-- > 0)
        if (hit_len[hits] == first_len || g->allow(g->ctx, p, p + hit_len[hits])) {
            fj__take_value(m, hit_node[hits], hit_len[hits], out);
            return FJ_MATCH_FOUND;
        }
    return FJ_MATCH_NONE;
}

/* Records in marks a key of two or more characters, at p (in_len bytes)
 * in the input and written to o at [out, out + out_len), for
 * fj__step_marked. */
static __attribute__((noinline)) void mark_phrase(fj_out *marks, const unsigned char *p,
                                                  size_t in_len, size_t out, size_t out_len)
{
    fj_mark mk = {p, in_len, out, out_len};
    fj__out_put(marks, (const char *)&mk, sizeof mk);
}

/* Handles the unit at p. Returns the bytes consumed, or 0 when the result
 * depends on input that has not arrived (only without `final`). With a
 * guard (only for final text), a key of two or more characters it refuses
 * gives way to the longest shorter one. */
static size_t step_unit(const fj_matcher *m, const unsigned char *p, const unsigned char *end,
                        int final, fj_out *o, const fj_key_guard *g, fj_out *marks)
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
        uint32_t rec = (uint32_t)m->rec[cp - FJ_REC_FIRST];
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
        if (g && r == FJ_MATCH_FOUND && hit.len > (size_t)n && !g->allow(g->ctx, p, p + hit.len))
            r = guarded_match(m, entry, p, (size_t)n, end, g, &hit);
        if (r == FJ_MATCH_FOUND) {
            if (marks && hit.len > (size_t)n)
                mark_phrase(marks, p, hit.len, o->spilled + o->len, hit.value_len);
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

size_t fj__step_unit(const fj_matcher *m, const unsigned char *p, const unsigned char *end,
                     int final, fj_out *o)
{
    return step_unit(m, p, end, final, o, NULL, NULL);
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

/* As decode3, without ruling out overlong forms and surrogates: for a test
 * against the record range, whose surrogates are marked special and which
 * no overlong form reaches. */
static inline __attribute__((always_inline)) uint32_t decode3_shape(uint32_t w)
{
    if ((w & 0xC0C0F0u) != 0x8080E0u)
        return 0;
    return (w & 0x0Fu) << 12 | (w & 0x3F00u) >> 2 | (w & 0x3F0000u) >> 16;
}

/* The character before p, which the fast loop went past one character at
 * a time: one byte of ASCII or a three-byte character. */
static inline __attribute__((always_inline)) const unsigned char *
prev_char(const unsigned char *p, uint32_t *cp)
{
    if (p[-1] < 0x80) {
        *cp = p[-1];
        return p - 1;
    }
    *cp = decode3(load32(p - 3));
    return p - 3;
}

/* The last place at or before p (whose character is cp) where the text can
 * be cut: where no two characters that sit side by side in some key meet, or
 * `from`, where it could already. Maximum matching never runs a key across
 * such a place, so every unit of the output starts or ends there. */
static inline __attribute__((always_inline)) const unsigned char *
cut_before(const fj_matcher *m, const unsigned char *p, uint32_t cp, const unsigned char *from)
{
    while (p > from) {
        uint32_t prev;
        const unsigned char *q = prev_char(p, &prev);
        uint32_t h = fj_bigram_hash(m->salt, prev, cp);
        if (!(m->inner[h >> 3] >> (h & 7) & 1))
            break;
        p = q;
        cp = prev;
    }
    return p;
}

/* cut_before for the character at p, whatever it is: p itself when it is
 * not a character, since no key holds such bytes. */
static inline const unsigned char *last_cut(const fj_matcher *m, const unsigned char *p,
                                            const unsigned char *from, const unsigned char *end)
{
    uint32_t cp;
    if (p > from && fj_utf8_decode_fast(p, end, &cp) > 0)
        return cut_before(m, p, cp, from);
    return p;
}

/* One unit at q, where the text can be cut and no key can reach the end:
 * the longest key there, or the character alone. 0 when the careful path
 * must take it (an IDS, text that is not UTF-8, a long value). The output
 * has FAST_ROOM bytes free. */
static inline __attribute__((always_inline)) size_t
exact_unit(const fj_matcher *m, const unsigned char *q, const unsigned char *end, char **wp,
           const fj_key_guard *g)
{
    char *w = *wp;
    uint32_t bytes = load32(q);
    if (!(bytes & 0x80)) {
        unsigned c = bytes & 0x7F;
        if (m->ascii_starts[c >> 6] >> (c & 63) & 1)
            return 0;
        *w = (char)c;
        *wp = w + 1;
        return 1;
    }
    uint32_t cp = decode3(bytes);
    if (!cp)
        return 0;
    uint32_t entry = fj__lookup(m, cp);
    if (entry == 0) {
        memcpy(w, &bytes, 4); /* 3 bytes used; the 4th is overwritten next */
        *wp = w + 3;
        return 3;
    }
    if (entry & FJ_ENTRY_DIRECT) {
        if (entry == FJ_ENTRY_IDS)
            return 0;
        memcpy(w, &entry, 4);
        *wp = w + 3;
        return 3;
    }
    if (cp - 0x2FF0u < 16u)
        return 0; /* an IDS operator that starts a key */
    if (entry & FJ_ENTRY_HAS_CHILDREN) {
        uint32_t cp2, next = load32(q + 3);
        int k;
        if ((cp2 = decode3(next)) != 0) {
            k = 3;
        } else if (!(next & 0x80)) {
            cp2 = next & 0x7F;
            k = 1;
        } else {
            k = fj_utf8_decode(q + 3, end, &cp2);
        }
        uint32_t h = k > 0 ? fj_bigram_hash(m->salt, cp, cp2) : 0;
        if (k > 0 && (m->bigrams[h >> 3] >> (h & 7) & 1)) {
            /* A two-character key, or a third character that continues
             * some key, sends us into the trie. */
            int walk = 1;
            if (!(m->pairkeys[h >> 3] >> (h & 7) & 1)) {
                const unsigned char *r = q + 3 + k;
                uint32_t cp3, next3 = load32(r);
                if ((cp3 = decode3(next3)) == 0) {
                    if (!(next3 & 0x80))
                        cp3 = next3 & 0x7F;
                    else if (fj_utf8_decode(r, end, &cp3) <= 0)
                        cp3 = 0; /* not a character: no key continues with it */
                }
                uint32_t h3 = fj_bigram_hash(m->salt, fj_pair_mix(cp, cp2), cp3);
                walk = cp3 && (m->trigrams[h3 >> 3] >> (h3 & 7) & 1);
            }
            fj_match hit;
            if (walk &&
                fj__match_below(m, entry & FJ_ENTRY_NODE_MASK, q, q + 3, cp2, k, end, 1, &hit)) {
                if (g && !g->allow(g->ctx, q, q + hit.len))
                    return 0; /* the careful path finds the key allowed */
                if (hit.value_len > FAST_ROOM - 4)
                    return 0;
                memcpy(w, hit.value, hit.value_len);
                *wp = w + hit.value_len;
                return hit.len;
            }
        }
    }
    if (entry & FJ_ENTRY_HAS_VALUE) {
        const fj_node_rec *n = &m->nodes[entry & FJ_ENTRY_NODE_MASK];
        if (n->value_len <= FJ_INLINE_VALUE_MAX) {
            memcpy(w, &n->value, 4);
        } else {
            if (n->value_len > FAST_ROOM - 4)
                return 0;
            memcpy(w, m->strings + n->value, n->value_len);
        }
        *wp = w + n->value_len;
    } else {
        memcpy(w, &bytes, 4);
        *wp = w + 3;
    }
    return 3;
}

enum { EXACT_DONE, EXACT_NO_ROOM, EXACT_STUCK };

/* The fast loop's way back to maximum matching, at p, a character the
 * character-at-a-time mode must not take: back to the last cut at or after
 * `cut`, dropping what was written since, then key by key until past p.
 * Returns where it stopped: past p (EXACT_DONE) or at a cut where it could
 * not go on (no room for output, or an IDS running past what we have).
 * Kept out of line, so the loop that calls it keeps its registers. */
static __attribute__((noinline)) const unsigned char *
exact_run(const fj_matcher *m, const unsigned char *p, const unsigned char *cut,
          const unsigned char *end, int final, fj_out *o, int *status, const fj_key_guard *g,
          fj_out *marks)
{
    const unsigned char *s = last_cut(m, p, cut, end);
    o->len -= (size_t)(p - s);
    char *w = o->buf + o->len, *wend = o->buf + o->cap;
    *status = EXACT_DONE;
    while (s <= p) {
        if ((size_t)(wend - w) < FAST_ROOM) {
            o->len = (size_t)(w - o->buf);
            if (!fj__out_make_room(o, FAST_ROOM)) {
                *status = EXACT_NO_ROOM;
                return s;
            }
            w = o->buf + o->len;
            wend = o->buf + o->cap;
        }
        char *unit_out = w;
        size_t used = exact_unit(m, s, end, &w, g);
        if (used > 3 && marks) /* more than one character: a phrase */
            mark_phrase(marks, s, used, o->spilled + (size_t)(unit_out - o->buf),
                        (size_t)(w - unit_out));
        if (!used) {
            o->len = (size_t)(w - o->buf);
            used = step_unit(m, s, end, final, o, g, marks);
            w = o->buf + o->len; /* the careful path may have moved the buffer */
            wend = o->buf + o->cap;
            if (!used) {
                *status = EXACT_STUCK;
                return s;
            }
        }
        s += used;
    }
    o->len = (size_t)(w - o->buf);
    return s;
}

/* Whether a key that changes the output may start with cp cp2, given the
 * text after them at r: a two-character one, or a longer one whose first
 * three characters are there (CHKY). */
static inline __attribute__((always_inline)) int
changing_key_may_start(const fj_matcher *m, uint32_t cp, uint32_t cp2, const unsigned char *r)
{
    uint32_t h = fj_bigram_hash(m->salt, cp, cp2);
    if (m->chkeys[h >> 3] >> (h & 7) & 1)
        return 1;
    uint32_t cp3, next = load32(r);
    if ((cp3 = decode3(next)) == 0) {
        if (next & 0x80)
            return 1; /* not a one- or three-byte character: let the trie say */
        cp3 = next & 0x7F;
    }
    h = fj_bigram_hash(m->salt | FJ_CHKEYS_LONGER, fj_pair_mix(cp, cp2), cp3);
    return m->chkeys[h >> 3] >> (h & 7) & 1;
}

/* Where a run of one character at a time from p must stop: at limit, or
 * where the output would have less than FAST_ROOM bytes free. */
static inline const unsigned char *run_stop(const unsigned char *p, const unsigned char *limit,
                                            const char *w, const char *wend)
{
    size_t room = (size_t)(wend - w);
    if (room < FAST_ROOM)
        return p;
    return (size_t)(limit - p) < room - FAST_ROOM ? limit : p + (room - FAST_ROOM);
}

/* The fast loop over [p, limit), where limit leaves enough text after it
 * for the longest key and for 4-byte loads; p is a place where the text can
 * be cut. Returns such a place, where it stopped; the caller goes on from
 * there with the careful path.
 *
 * Most of the time it converts one character at a time: that gives the
 * same output as maximum matching until a key that changes the output (CHNG)
 * may start. There it goes back to the last place where the text can be
 * cut, drops what it wrote since, and matches key by key until it is past
 * the character that stopped it. With CHKY in between, the trie is entered
 * at under one Han character in a hundred, not at every one that starts
 * some key. */
static inline __attribute__((always_inline)) const unsigned char *
fast_loop(const fj_matcher *matcher, const unsigned char *p, const unsigned char *limit,
          const unsigned char *end, int final, fj_out *o, int *stuck, const fj_key_guard *g,
          fj_out *marks)
{
    /* Local copies: output stores may alias anything, so fields would be reloaded. */
    const fj_matcher m = *matcher;
    const uint64_t ascii0 = m.ascii_stops[0], ascii1 = m.ascii_stops[1];
    char *w = o->buf + o->len, *wend = o->buf + o->cap;
    const unsigned char *cut = p; /* the last place known to be a cut */
    /* One character at a time writes as many bytes as it reads, so the
     * output's room runs out at a fixed place in the input: stop there. */
    const unsigned char *stop = run_stop(p, limit, w, wend);
    while (p < limit) {
        if (p >= stop)
            goto exact;
        uint32_t bytes = load32(p);
        if (!(bytes & 0x80)) {
            if (!(ascii0 | ascii1) && stop - p >= 8) {
                /* No ASCII character stops this matcher: the run of ASCII
                 * here, up to eight bytes at a time. */
                uint64_t v;
                memcpy(&v, p, 8);
                uint64_t high = v & 0x8080808080808080ull;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                size_t n = high ? (size_t)__builtin_clzll(high) >> 3 : 8;
#else
                size_t n = high ? (size_t)__builtin_ctzll(high) >> 3 : 8;
#endif
                memcpy(w, &v, 8); /* n bytes used; the rest is overwritten next */
                w += n;
                p += n;
                continue;
            }
            unsigned c = bytes & 0x7F;
            if ((c < 64 ? ascii0 : ascii1) >> (c & 63) & 1)
                goto exact;
            *w++ = (char)c;
            p++;
            continue;
        }
        uint32_t cp = decode3(bytes);
        if (!cp)
            goto exact;
        if (cp - FJ_REC_FIRST < FJ_REC_COUNT) {
            uint64_t rec = m.rec[cp - FJ_REC_FIRST];
            for (;;) {
                /* The character's own answer, and whether a key that
                 * changes the output may start here: two bits of CHNG, in
                 * the line its record names (all zeros when it starts no
                 * such key, all ones when it must not be taken alone).
                 * Only that question branches. The next character's
                 * record, read for its bits, is the next round's. */
                uint32_t next = load32(p + 3), maybe, b1, b2;
                uint32_t cp2 = decode3_shape(next);
                uint64_t rec2 = 0;
                const unsigned char *line = m.changers + (size_t)FJ_REC_LINE(rec) * 64;
                int more = cp2 - FJ_REC_FIRST < FJ_REC_COUNT;
                if (more) {
                    rec2 = m.rec[cp2 - FJ_REC_FIRST];
                    b1 = FJ_REC_POS1(rec2);
                    b2 = FJ_REC_POS2(rec2);
                    maybe = line[b1 >> 3] >> (b1 & 7) & line[b2 >> 3] >> (b2 & 7);
                } else {
                    /* Next: ASCII, a character without a record, or not
                     * UTF-8 (then the trie decides wherever a changing
                     * key starts). */
                    if (!(next & 0x80))
                        cp2 = next & 0x7F;
                    else if ((cp2 = decode3(next)) == 0)
                        cp2 = FJ_REC_NO_CP;
                    b1 = fj_change_pos1(cp2);
                    b2 = fj_change_pos2(cp2);
                    maybe = (line[b1 >> 3] >> (b1 & 7) & line[b2 >> 3] >> (b2 & 7)) |
                            (cp2 >> 31 & (uint32_t)rec >> FJ_REC_CHANGES_BIT);
                }
                if (maybe & 1) {
                    /* Mostly the pair only begins longer keys that the
                     * text does not go on with: CHKY says. */
                    if (((uint32_t)rec >> FJ_REC_SPECIAL_BIT & 1) || !more ||
                        changing_key_may_start(&m, cp, cp2, p + 6))
                        goto exact;
                }
                memcpy(w, &rec, 4); /* three bytes used; the fourth is overwritten next */
                w += 3;
                p += 3;
                if (!more || p >= stop)
                    goto next_round;
                rec = rec2;
                cp = cp2;
            }
        }
        uint32_t entry = fj__lookup(&m, cp);
        if (entry == 0) {
            memcpy(w, &bytes, 4);
            w += 3;
            p += 3;
            continue;
        }
        if ((entry & FJ_ENTRY_DIRECT) && entry != FJ_ENTRY_IDS) {
            memcpy(w, &entry, 4);
            w += 3;
            p += 3;
            continue;
        }
    exact: {
        o->len = (size_t)(w - o->buf);
        int status;
        const unsigned char *s = exact_run(&m, p, cut, end, final, o, &status, g, marks);
        w = o->buf + o->len; /* the careful path may have moved the buffer */
        wend = o->buf + o->cap;
        if (status != EXACT_DONE) {
            *stuck = status == EXACT_STUCK;
            return s;
        }
        p = cut = s;
        stop = run_stop(p, limit, w, wend);
    }
    next_round:;
    }
    /* Stopped at the limit: back to a cut, for the careful path. */
    const unsigned char *s = last_cut(&m, p, cut, end);
    w -= p - s;
    o->len = (size_t)(w - o->buf);
    return s;
}

/* Inline in every caller: without a guard, its tests fold away. */
static inline __attribute__((always_inline)) size_t
step(const fj_matcher *m, const unsigned char *text, size_t len, int final, fj_out *o,
     const fj_key_guard *g, fj_out *marks)
{
    const unsigned char *p = text, *end = text + len;
    /* No key lookup from below `limit` can reach the end of the text. Final
     * text has nothing more to wait for: there `limit` only keeps the fast
     * loop's reads (at most 11 bytes past a unit's start) inside it, so a
     * short piece (the text between user entries) is not all careful path. */
    size_t reach = final ? FAST_TAIL : (size_t)m->max_key_chars * 4 + 8;
    const unsigned char *limit = len > reach ? end - reach : text;
    int stuck = 0, fast_done = 0;
    while (p < end && !stuck) {
        if (p < limit && !fast_done) {
            /* Once: it returns at the limit, or where it could not get room. */
            fast_done = 1;
            if (fj__out_make_room(o, FAST_ROOM)) {
                p = fast_loop(m, p, limit, end, final, o, &stuck, g, marks);
                continue;
            }
        }
        size_t used = step_unit(m, p, end, final, o, g, marks);
        if (!used)
            break;
        p += used;
    }
    return (size_t)(p - text);
}

size_t fj__step(const fj_matcher *m, const unsigned char *text, size_t len, int final, fj_out *o)
{
    return step(m, text, len, final, o, NULL, NULL);
}

size_t fj__step_marked(const fj_matcher *m, const unsigned char *text, size_t len, int final,
                       fj_out *o, fj_out *marks)
{
    return step(m, text, len, final, o, NULL, marks);
}

size_t fj__step_all_marked(const fj_matcher *m, const unsigned char *text, size_t len, fj_out *o,
                           fj_out *marks, size_t out_limit)
{
    const unsigned char *p = text, *end = text + len;
    while (p < end && o->spilled + o->len < out_limit)
        p += step_unit(m, p, end, 1, o, NULL, marks);
    return (size_t)(p - text);
}

size_t fj__step_guarded(const fj_matcher *m, const unsigned char *text, size_t len, fj_out *o,
                        const fj_key_guard *g)
{
    return step(m, text, len, 1, o, g, NULL);
}
