/* Binding a profile of an opened dictionary into a converter. */
#include <string.h>

#include "internal.h"
#include "match.h"
#include "utf8.h"

/* Binds matcher id, checking it first if nothing has used it yet. */
static fj_status matcher_init(fj_matcher *m, const fj_dict *d, uint32_t id, fj_error *error)
{
    fj_status st = fj__dict_use_matcher(d, id, error);
    if (st != FJ_OK)
        return st;
    const fj_image *img = &d->image;
    const fj_matcher_rec *r = &img->matchers[id];
    m->level1 = img->level1 + (size_t)r->level1 * FJ_L1_SIZE;
    m->blocks = img->blocks;
    m->nodes = img->nodes;
    m->edges = img->edges;
    m->strings = img->strings;
    m->bigrams = img->bigrams;
    m->pairkeys = img->pairkeys;
    m->trigrams = img->trigrams;
    m->changers = img->changers;
    m->inner = img->inner;
    m->chkeys = img->chkeys;
    m->edge_hash = img->edge_hash + r->edge_first;
    m->edge_hash_mask = r->edge_slots - 1;
    m->flags = r->flags;
    m->salt = id;
    m->max_key_chars = r->max_key_chars;
    m->ascii_starts[0] = m->ascii_starts[1] = 0;
    m->ascii_stops[0] = m->ascii_stops[1] = 0;
    for (uint32_t c = 0; c < 128; c++) {
        uint32_t e = m->blocks[(size_t)m->level1[0] * FJ_BLOCK_SIZE + c];
        if (e)
            m->ascii_starts[c >> 6] |= 1ull << (c & 63);
        /* Only keys that leave it as it is start with it: it stays itself. */
        if (e && (e == FJ_ENTRY_IDS || (e & FJ_ENTRY_DIRECT) ||
                  (e & (FJ_ENTRY_HAS_VALUE | FJ_ENTRY_CHANGES))))
            m->ascii_stops[c >> 6] |= 1ull << (c & 63);
    }
    return FJ_OK;
}

/* A record's high half: where CHNG holds the pairs of cp, whose low half is
 * `low`. A character the hot path must not take one at a time gets the line
 * of ones; one that starts no changing key, the line of zeros. */
static uint64_t with_positions(const fj_matcher *m, uint32_t cp, uint64_t low)
{
    uint32_t line = low >> FJ_REC_SPECIAL_BIT & 1    ? FJ_CHANGE_ALWAYS
                    : !(low >> FJ_REC_CHANGES_BIT & 1) ? FJ_CHANGE_NEVER
                                                       : fj_change_line(m->salt, cp);
    return low | (uint64_t)line << 32 | (uint64_t)fj_change_pos1(cp) << 45 |
           (uint64_t)fj_change_pos2(cp) << 54;
}

static uint32_t own_bytes(uint32_t cp)
{
    unsigned char u[4] = {0, 0, 0, 0};
    fj_utf8_encode(cp, u);
    return u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16;
}

/* The record of a character that starts no key: its own bytes. */
static inline uint64_t plain_rec(uint32_t cp)
{
    uint64_t own = (0xE0u | cp >> 12) | (0x80u | (cp >> 6 & 0x3Fu)) << 8 |
                   (0x80u | (cp & 0x3Fu)) << 16;
    return own | (uint64_t)FJ_CHANGE_NEVER << 32 | (uint64_t)fj_change_pos1(cp) << 45 |
           (uint64_t)fj_change_pos2(cp) << 54;
}

/* The record of a character whose code point table entry e is not 0. */
static uint64_t entry_rec(const fj_matcher *m, uint32_t cp, uint32_t e)
{
    uint64_t r;
    if (e == FJ_ENTRY_IDS || fj_ids_arity(cp)) {
        r = 1u << FJ_REC_SPECIAL_BIT;
    } else if (e & FJ_ENTRY_DIRECT) {
        r = e & 0xFFFFFFu;
    } else {
        const fj_node_rec *n = &m->nodes[e & FJ_ENTRY_NODE_MASK];
        uint32_t v = own_bytes(cp);
        if (e & FJ_ENTRY_HAS_VALUE) {
            if (n->value_len == 3)
                memcpy(&v, &n->value, 4), v &= 0xFFFFFFu;
            else
                v = 1u << FJ_REC_SPECIAL_BIT;
        }
        if (e & FJ_ENTRY_HAS_CHILDREN)
            v |= 1u << FJ_REC_PHRASE_BIT;
        if (e & FJ_ENTRY_CHANGES)
            v |= 1u << FJ_REC_CHANGES_BIT;
        r = v;
    }
    return with_positions(m, cp, r);
}

/* The fast loop's per-character records (see fj_matcher.rec): first every
 * character as itself (a loop the compiler vectorizes), then the blocks of
 * the code point table that hold entries. For fjdict, which stores them, and
 * for images without them (an OpenCC config file's). */
static void build_recs(const fj_matcher *m, uint64_t *rec)
{
    for (uint32_t i = 0; i < FJ_REC_COUNT; i++)
        rec[i] = plain_rec(FJ_REC_FIRST + i);
    /* Surrogates are never decoded: not UTF-8. */
    for (uint32_t cp = 0xD800; cp <= 0xDFFF; cp++)
        rec[cp - FJ_REC_FIRST] = with_positions(m, cp, 1u << FJ_REC_SPECIAL_BIT);
    for (uint32_t hi = FJ_REC_FIRST >> 8; hi < 0x100; hi++) {
        if (!m->level1[hi] || (hi >= 0xD8 && hi <= 0xDF))
            continue;
        const uint32_t *blk = m->blocks + (size_t)m->level1[hi] * FJ_BLOCK_SIZE;
        for (uint32_t lo = 0; lo < FJ_BLOCK_SIZE; lo++)
            if (blk[lo])
                rec[(hi << 8 | lo) - FJ_REC_FIRST] = entry_rec(m, hi << 8 | lo, blk[lo]);
    }
}

fj_status fj__matcher_build_records(const fj_dict *d, uint32_t id, uint64_t *out, fj_error *error)
{
    fj_matcher m;
    memset(&m, 0, sizeof m);
    if (id >= d->image.matcher_count) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "invalid argument");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    fj_status st = matcher_init(&m, d, id, error);
    if (st == FJ_OK)
        build_recs(&m, out);
    return st;
}

/* A three-byte answer's code point; 0 when it is not one. */
static inline uint32_t answer_cp(uint32_t a)
{
    uint32_t b0 = a & 0xFF, b1 = a >> 8 & 0xFF, b2 = a >> 16 & 0xFF;
    if ((b0 & 0xF0) != 0xE0 || (b1 & 0xC0) != 0x80 || (b2 & 0xC0) != 0x80)
        return 0;
    uint32_t cp = (b0 & 0x0Fu) << 12 | (b1 & 0x3Fu) << 6 | (b2 & 0x3Fu);
    return cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF) ? 0 : cp;
}

/* The steps after the replaced one, for one character: its answer, or
 * FJ_NONE when they do more than map it to one three-byte character. */
static uint32_t post_answer(const fj_converter *c, uint32_t cp)
{
    uint32_t a = own_bytes(cp);
    for (uint32_t k = c->ctx_post_first; k < c->stage_count; k++) {
        if (cp < FJ_REC_FIRST || cp >= 0x10000)
            return FJ_NONE;
        uint32_t r = (uint32_t)c->stages[k].rec[cp - FJ_REC_FIRST];
        if (r >> FJ_REC_SPECIAL_BIT & 1) {
            if (fj_ids_arity(cp))
                continue; /* an IDS operator alone stays itself */
            return FJ_NONE;
        }
        a = r & 0xFFFFFFu;
        cp = answer_cp(a);
        if (!cp)
            return FJ_NONE;
    }
    return a;
}

/* Marks in `unsafe`, for every longer key of the later step (below node n,
 * path[0..depth)), the characters whose value in the key differs from their
 * own answer; all of its characters when the value has another length. A
 * key that changes the output can only match where such a character is.
 * 0 when a character cannot be marked (astral). */
static int mark_unsafe_keys(const fj_converter *c, const fj_matcher *m, const fj_node_rec *n,
                            uint32_t *path, uint32_t depth, unsigned char *unsafe)
{
    if (depth > 1 && n->value_len != FJ_NO_VALUE) {
        const unsigned char *v = n->value_len <= FJ_INLINE_VALUE_MAX
                                     ? (const unsigned char *)&n->value
                                     : (const unsigned char *)m->strings + n->value;
        const unsigned char *vend = v + n->value_len;
        uint32_t differs[32], nd = 0;
        int whole = 0;
        for (uint32_t i = 0; i < depth; i++) {
            uint32_t want = post_answer(c, path[i]), got = 0;
            int k = v < vend ? fj_utf8_decode(v, vend, &got) : 0;
            if (k <= 0) {
                whole = 1;
                break;
            }
            if (want == FJ_NONE || got != answer_cp(want))
                differs[nd++] = path[i];
            v += k;
        }
        if (whole || v != vend) {
            nd = 0;
            for (uint32_t i = 0; i < depth; i++)
                differs[nd++] = path[i];
        }
        for (uint32_t i = 0; i < nd; i++) {
            if (differs[i] >= 0x10000)
                return 0;
            unsafe[differs[i] >> 3] |= (unsigned char)(1u << (differs[i] & 7));
        }
    }
    if (depth >= 32)
        return 0;
    for (uint32_t k = 0; k < n->child_count; k++) {
        path[depth] = m->edges[n->first_child + k];
        if (!mark_unsafe_keys(c, m, &m->nodes[n->first_child + k], path, depth + 1, unsafe))
            return 0;
    }
    return 1;
}

/* The first character at or after *cp whose code point table entry in m
 * names a node with longer keys below it: 1 with *cp and *node set, or 0. */
static int next_with_children(const fj_matcher *m, uint32_t *cp, uint32_t *node)
{
    for (uint32_t x = *cp; x < FJ_L1_SIZE * FJ_BLOCK_SIZE; x++) {
        if (!m->level1[x >> 8]) {
            x |= FJ_BLOCK_SIZE - 1; /* an empty block: on to the next */
            continue;
        }
        uint32_t e = m->blocks[(size_t)m->level1[x >> 8] * FJ_BLOCK_SIZE + (x & 0xFFu)];
        if (e == 0 || e == FJ_ENTRY_IDS || (e & FJ_ENTRY_DIRECT) || !(e & FJ_ENTRY_HAS_CHILDREN))
            continue;
        *cp = x;
        *node = e & FJ_ENTRY_NODE_MASK;
        return 1;
    }
    return 0;
}

/* Partial folding (ctx_fused 2) for a single later step with longer keys:
 * fills ctx_unsafe; 0 when that is not possible. */
static int mark_unsafe(fj_converter *c, const fj_allocator *a)
{
    const fj_matcher *m = &c->stages[c->ctx_post_first];
    c->ctx_unsafe = fj__alloc(a, FJ_BARRIER_BYTES);
    if (!c->ctx_unsafe)
        return 0;
    memset(c->ctx_unsafe, 0, FJ_BARRIER_BYTES);
    uint32_t path[33], node;
    for (uint32_t cp = 0; next_with_children(m, &cp, &node); cp++) {
        path[0] = cp;
        if (!mark_unsafe_keys(c, m, &m->nodes[node], path, 1, c->ctx_unsafe))
            return 0;
    }
    return 1;
}

/* The model's one-character word for cp when it names its own three-byte
 * form (not just a cost), else 0. Only for characters that read as
 * themselves. */
static uint32_t model_single(const fj_converter *c, uint32_t cp)
{
    if (c->ctx_has_fold && fj__lookup(&c->ctx_fold, cp) != 0)
        return 0;
    /* The region's word, where it has one, instead of the general one. */
    const fj_matcher *m = &c->ctx_words;
    if (c->ctx_has_overrides) {
        uint32_t o = fj__lookup(&c->ctx_overrides, cp);
        if (o != 0 && o != FJ_ENTRY_IDS && ((o & FJ_ENTRY_DIRECT) || (o & FJ_ENTRY_HAS_VALUE)))
            m = &c->ctx_overrides;
    }
    uint32_t e = fj__lookup(m, cp);
    if (e == 0 || e == FJ_ENTRY_IDS || (e & FJ_ENTRY_DIRECT) || !(e & FJ_ENTRY_HAS_VALUE))
        return 0;
    const fj_node_rec *n = &m->nodes[e & FJ_ENTRY_NODE_MASK];
    if (n->value_len != 6)
        return 0;
    const unsigned char *v = (const unsigned char *)m->strings + n->value;
    uint32_t a = v[3] | (uint32_t)v[4] << 8 | (uint32_t)v[5] << 16;
    return answer_cp(a) ? a : 0;
}

static inline void mark_word_pair(fj_converter *c, uint32_t cp1, uint32_t cp2)
{
    uint32_t h = fj__word_pair_hash(cp1, cp2);
    c->ctx_word_pairs[h >> 3] |= (unsigned char)(1u << (h & 7));
}

/* Marks in c->ctx_word_pairs each pair of characters side by side in a word
 * of ctx_words (matcher `id`): every edge of its trie, parent's character
 * then child's. One pass over the nodes rather than a walk down the trie,
 * which took most of opening s2twp: a first character's node takes its
 * character from the code point table (`roots` marks those nodes), every
 * other node the one on its edge. 0 without memory. */
static int mark_word_pairs(fj_converter *c, uint32_t id, const fj_allocator *a)
{
    const fj_matcher *m = &c->ctx_words;
    const fj_matcher_rec *r = &c->dict->image.matchers[id];
    uint32_t first = r->node_first, span = r->node_end - r->node_first;
    unsigned char *roots = fj__alloc(a, span / 8 + 1);
    if (!roots)
        return 0;
    memset(roots, 0, span / 8 + 1);
    uint32_t node;
    for (uint32_t cp = 0; next_with_children(m, &cp, &node); cp++) {
        roots[(node - first) >> 3] |= (unsigned char)(1u << ((node - first) & 7));
        const fj_node_rec *n = &m->nodes[node];
        for (uint32_t k = 0; k < n->child_count; k++)
            mark_word_pair(c, cp, m->edges[n->first_child + k]);
    }
    for (uint32_t i = 0; i < span; i++) {
        const fj_node_rec *n = &m->nodes[first + i];
        if (!n->child_count || (roots[i >> 3] >> (i & 7) & 1))
            continue;
        uint32_t cp = m->edges[first + i];
        for (uint32_t k = 0; k < n->child_count; k++)
            mark_word_pair(c, cp, m->edges[n->first_child + k]);
    }
    fj__free(a, roots, span / 8 + 1);
    return 1;
}

/* Repair's damage weights without the image's DMGW section: the average
 * reading's (13.2 % other forms in correct text, 1.8 % in careless
 * conversion). */
#define FJ_DAMAGE_FIRST_FALLBACK 123
#define FJ_DAMAGE_OTHER_FALLBACK (-1992)

/* Repair: marks in ctx_table each character that is a form of a reading
 * with several forms (FJ_CTX_FIRST_FORM_BIT for the reading's default form,
 * FJ_CTX_OTHER_FORM_BIT for the others), and sets its damage weight from
 * its reading's (fj_image.damage_weights). */
static void mark_forms(fj_converter *c, const fj_image *img)
{
    int16_t *w = c->ctx_damage_w;
    for (uint32_t cp = FJ_REC_FIRST; cp < 0x10000; cp++) {
        uint32_t *e = &c->ctx_table[cp - FJ_REC_FIRST];
        /* Folded characters (髮 reads 发), and readings that are a form of
         * themselves (于 beside 於); not the Simplified-only ones (发). */
        if (!(*e >> FJ_CTX_FOLDED_BIT & 1) && (*e >> FJ_CTX_SOURCE_BIT & 1))
            continue;
        uint32_t first = fj__ctx_default_of(c, cp);
        if (first == cp || first < FJ_REC_FIRST || first >= 0x10000)
            continue;
        /* The default form as the profile's later steps write it (裏 is
         * Taiwan's 裡): a careless converter's output went through them. */
        uint32_t post = c->ctx_post[first - FJ_REC_FIRST], shown = first;
        if (post != FJ_NONE) {
            shown = answer_cp(post);
            if (shown == cp)
                continue;
        }
        uint32_t r = fj__ctx_reading(c, cp);
        int16_t wf = FJ_DAMAGE_FIRST_FALLBACK, wo = FJ_DAMAGE_OTHER_FALLBACK;
        if (img->damage_weights && r < 0x10000) {
            if (img->damage_weights[4 * r] == 0 && img->damage_weights[4 * r + 1] == 0)
                continue; /* the word list says too little of this reading */
            wf = img->damage_weights[4 * r];
            wo = img->damage_weights[4 * r + 1];
        }
        *e |= 1u << FJ_CTX_OTHER_FORM_BIT;
        w[cp - FJ_REC_FIRST] = wo;
        c->ctx_table[first - FJ_REC_FIRST] |= 1u << FJ_CTX_FIRST_FORM_BIT;
        w[first - FJ_REC_FIRST] = wf;
        if (shown >= FJ_REC_FIRST && shown < 0x10000) {
            c->ctx_table[shown - FJ_REC_FIRST] |= 1u << FJ_CTX_FIRST_FORM_BIT;
            w[shown - FJ_REC_FIRST] = wf;
        }
    }
    /* A default form that is also another reading's other form is no
     * evidence either way. */
    for (uint32_t i = 0; i < FJ_REC_COUNT; i++)
        if ((c->ctx_table[i] >> FJ_CTX_FIRST_FORM_BIT & 1) &&
            (c->ctx_table[i] >> FJ_CTX_OTHER_FORM_BIT & 1)) {
            c->ctx_table[i] &= ~(1u << FJ_CTX_FIRST_FORM_BIT | 1u << FJ_CTX_OTHER_FORM_BIT);
            w[i] = 0;
        }
}

/* The default mode's per-character tables (see fj_converter.ctx_table). */
static fj_status build_context_tables(fj_converter *c, const fj_context_rec *cx, fj_error *error)
{
    const fj_allocator *a = c->allocator.alloc ? &c->allocator : NULL;
    const fj_dict *d = c->dict;
    const fj_image *img = &d->image;
    fj_status st;
    /* The model's character sets and tables, before they are read. */
    if ((st = fj__dict_require(d, img->ambiguous + (size_t)cx->ambiguous * FJ_BARRIER_BYTES,
                               FJ_BARRIER_BYTES, error)) != FJ_OK ||
        (st = fj__dict_require(d,
                               img->ambiguous_pairs + (size_t)cx->ambiguous * (FJ_BIGRAM_BITS / 8),
                               FJ_BIGRAM_BITS / 8, error)) != FJ_OK ||
        (cx->source_only != FJ_NONE &&
         (st = fj__dict_require(d, img->source_only + (size_t)cx->source_only * FJ_BARRIER_BYTES,
                                FJ_BARRIER_BYTES, error)) != FJ_OK) ||
        (cx->lm_bits &&
         (st = fj__dict_require(d, img->lm_slots, (size_t)4 << img->lm_bits, error)) != FJ_OK))
        return st;
    if ((cx->flags & FJ_CONTEXT_REPAIR) &&
        ((st = fj__dict_require(d, img->source_only + (size_t)cx->suspects * FJ_BARRIER_BYTES,
                                2 * FJ_BARRIER_BYTES, error)) != FJ_OK ||
         (img->damage_weights &&
          (st = fj__dict_require(d, img->damage_weights, 0x80000, error)) != FJ_OK)))
        return st;
    c->engine = &fj__context_engine;
    c->ctx_core_stage = cx->core_stage;
    c->ctx_keep_folded = (cx->flags & FJ_CONTEXT_KEEP_FOLDED) != 0;
    c->ctx_repair = (cx->flags & FJ_CONTEXT_REPAIR) != 0;
    c->ctx_post_first = cx->core_stage + (c->ctx_repair ? 0 : 1);
    if (c->ctx_repair) {
        c->ctx_rules = fj__alloc(a, 0x10000 * sizeof *c->ctx_rules);
        if (!c->ctx_rules)
            return FJ_ERR_NOMEM;
        st = fj__repair_rules_load(c->ctx_rules, c->ctx_week_form, c->ctx_li_form, error);
        if (st != FJ_OK)
            return st;
        c->ctx_always = img->source_only + (size_t)cx->suspects * FJ_BARRIER_BYTES;
        c->ctx_in_words = c->ctx_always + FJ_BARRIER_BYTES;
        if ((st = matcher_init(&c->ctx_defaults, d, cx->defaults, error)) != FJ_OK)
            return st;
        if (cx->attested != FJ_NONE) {
            c->ctx_has_attested = 1;
            if ((st = matcher_init(&c->ctx_attested, d, cx->attested, error)) != FJ_OK)
                return st;
        }
    }
    c->ctx_ambiguous = img->ambiguous + (size_t)cx->ambiguous * FJ_BARRIER_BYTES;
    c->ctx_pairs = img->ambiguous_pairs + (size_t)cx->ambiguous * (FJ_BIGRAM_BITS / 8);
    if ((st = matcher_init(&c->ctx_words, d, cx->words, error)) != FJ_OK)
        return st;
    if (cx->lm_bits) {
        c->ctx_lm = img->lm_slots;
        c->ctx_lm_bits = cx->lm_bits;
    }
    if (!c->ctx_repair && cx->overrides != FJ_NONE) {
        c->ctx_has_overrides = 1;
        if ((st = matcher_init(&c->ctx_overrides, d, cx->overrides, error)) != FJ_OK)
            return st;
    }
    if (cx->fold != FJ_NONE) {
        c->ctx_has_fold = 1;
        if ((st = matcher_init(&c->ctx_fold, d, cx->fold, error)) != FJ_OK)
            return st;
    }
    c->ctx_table = fj__alloc(a, FJ_REC_COUNT * sizeof(uint32_t));
    c->ctx_post = fj__alloc(a, FJ_REC_COUNT * sizeof(uint32_t));
    if (!c->ctx_table || !c->ctx_post)
        return FJ_ERR_NOMEM;
    /* The later steps fold in when they only map characters one to one;
     * one later step with longer keys folds in partly (see ctx_fused). */
    uint32_t later = c->stage_count - c->ctx_post_first, longer = 0;
    for (uint32_t k = c->ctx_post_first; k < c->stage_count; k++)
        longer += c->stages[k].max_key_chars > 1;
    c->ctx_fused = longer == 0 ? 1 : (later == 1 ? 2 : 0);
    if (!c->ctx_repair) {
        c->ctx_phrase_stages = cx->flags >> FJ_CONTEXT_PHRASE_SHIFT & ((1u << FJ_MAX_STAGES) - 1);
        c->ctx_guard_post = c->ctx_post_first < c->stage_count &&
                            (c->ctx_phrase_stages >> c->ctx_post_first & 1);
        if (c->ctx_guard_post)
            c->ctx_fused = 0; /* the table holds the replaced step's answers alone */
    }
    if (c->ctx_phrase_stages) {
        c->ctx_word_pairs = fj__alloc(a, FJ_BIGRAM_BITS / 8);
        if (!c->ctx_word_pairs)
            return FJ_ERR_NOMEM;
        memset(c->ctx_word_pairs, 0, FJ_BIGRAM_BITS / 8);
        if (!mark_word_pairs(c, cx->words, a))
            return FJ_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < FJ_REC_COUNT && c->ctx_fused; i++) {
        uint32_t cp = FJ_REC_FIRST + i;
        c->ctx_post[i] = (cp >= 0xD800 && cp <= 0xDFFF) ? own_bytes(0xFFFD) : post_answer(c, cp);
        if (c->ctx_post[i] == FJ_NONE)
            c->ctx_fused = 0;
    }
    if (c->ctx_fused == 2 && !mark_unsafe(c, a))
        c->ctx_fused = 0;
    const uint64_t *core = c->stages[cx->core_stage].rec;
    const unsigned char *source_only =
        cx->source_only == FJ_NONE ? NULL
                                   : img->source_only + (size_t)cx->source_only * FJ_BARRIER_BYTES;
    for (uint32_t i = 0; i < FJ_REC_COUNT; i++) {
        uint32_t cp = FJ_REC_FIRST + i, r = (uint32_t)core[i], e;
        int gated = 0; /* a repair suspect that the pair filter may leave alone */
        if (c->ctx_repair) {
            /* Everything stays as written, except the suspects, which the
             * lattice decides. */
            r = (cp >= 0xD800 && cp <= 0xDFFF) ? 1u << FJ_REC_SPECIAL_BIT : own_bytes(cp);
            int always = c->ctx_always[cp >> 3] >> (cp & 7) & 1;
            int in_words = c->ctx_in_words[cp >> 3] >> (cp & 7) & 1;
            gated = !always && in_words && fj__ctx_suspect_is_default(c, cp);
            if (always || (in_words && !gated) || (c->ctx_rules[cp] & FJ_RULE_WEEK))
                r = 1u << FJ_REC_SPECIAL_BIT;
        }
        if (!c->ctx_repair && !(r >> FJ_REC_SPECIAL_BIT & 1)) {
            /* A one-character word of the model with its own form (a
             * curated one such as t2s's 衹 -> 只) overrides the step's. */
            uint32_t single = model_single(c, cp);
            if (single)
                r = single;
        }
        if (r >> FJ_REC_SPECIAL_BIT & 1) {
            e = 1u << FJ_CTX_SPECIAL_BIT;
        } else {
            e = r & 0xFFFFFFu;
            if (c->ctx_fused) {
                uint32_t mid = answer_cp(e);
                if (mid >= FJ_REC_FIRST && mid < 0x10000)
                    e = c->ctx_post[mid - FJ_REC_FIRST];
                else
                    e = 1u << FJ_CTX_SPECIAL_BIT;
                if (c->ctx_fused == 2 && mid < 0x10000 && (c->ctx_unsafe[mid >> 3] >> (mid & 7) & 1))
                    e |= 1u << FJ_CTX_UNSAFE_BIT;
            }
        }
        if ((c->ctx_ambiguous[cp >> 3] >> (cp & 7) & 1) || gated)
            e |= 1u << FJ_CTX_AMBIGUOUS_BIT;
        if (c->barrier[cp >> 3] >> (cp & 7) & 1)
            e |= 1u << FJ_CTX_BARRIER_BIT;
        if (c->ctx_has_fold && fj__lookup(&c->ctx_fold, cp) != 0)
            e |= 1u << FJ_CTX_FOLDED_BIT;
        /* For repair, a suspect (什么's 么) is no sign of Simplified text. */
        if (source_only && (source_only[cp >> 3] >> (cp & 7) & 1) &&
            !(c->ctx_repair && ((c->ctx_always[cp >> 3] | c->ctx_in_words[cp >> 3]) >> (cp & 7) & 1)))
            e |= 1u << FJ_CTX_SOURCE_BIT;
        c->ctx_table[i] = e;
    }
    if (c->ctx_repair) {
        c->ctx_damage_w = fj__alloc(a, FJ_REC_COUNT * sizeof(int16_t));
        if (!c->ctx_damage_w)
            return FJ_ERR_NOMEM;
        memset(c->ctx_damage_w, 0, FJ_REC_COUNT * sizeof(int16_t));
        mark_forms(c, img);
    }
    return FJ_OK;
}

/* "s2twp", "s2twp.json" and "/usr/share/opencc/s2twp.json" all name s2twp. */
void fj__profile_key(const char *name, char *key, size_t size)
{
    const char *slash = strrchr(name, '/');
    if (slash)
        name = slash + 1;
    size_t n = strlen(name);
    if (n > 5 && strcmp(name + n - 5, ".json") == 0)
        n -= 5;
    if (n >= size)
        n = size - 1;
    memcpy(key, name, n);
    key[n] = 0;
}

/* A zeroed converter on `dict`, through its allocator; NULL (and the
 * error) when out of memory. */
static fj_converter *converter_new(const fj_dict *dict, fj_error *error)
{
    const fj_allocator *a = dict->allocator.alloc ? &dict->allocator : NULL;
    fj_converter *c = fj__alloc(a, sizeof *c);
    if (!c) {
        fj__set_error(error, FJ_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->dict = dict;
    c->allocator = dict->allocator;
    return c;
}

fj_status fj_converter_open(const fj_dict *dict, const char *profile, unsigned flags,
                            fj_converter **out, fj_error *error)
{
    if (!out || !dict || !profile || (flags & ~(unsigned)(FJ_COMPAT | FJ_REPAIR_THOROUGH | FJ_REPAIR_CAREFUL | FJ_REPAIR_OFF)) ||
        (flags & (FJ_REPAIR_THOROUGH | FJ_REPAIR_CAREFUL | FJ_REPAIR_OFF)) & ((flags & (FJ_REPAIR_THOROUGH | FJ_REPAIR_CAREFUL | FJ_REPAIR_OFF)) - 1)) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "invalid argument");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    const fj_image *img = &dict->image;
    char key[64];
    fj__profile_key(profile, key, sizeof key);
    const fj_profile_rec *rec = NULL;
    for (uint32_t i = 0; i < img->profile_count; i++)
        if (strcmp(img->profiles[i].name, key) == 0)
            rec = &img->profiles[i];
    if (!rec) {
        fj__set_error(error, FJ_ERR_UNKNOWN_PROFILE, 0, "unknown profile '%s' (try --list)",
                      profile);
        return FJ_ERR_UNKNOWN_PROFILE;
    }
    /* Repair without an explicit level: careful, and damaged clauses
     * through Simplified (src/target.c). */
    if (!(flags & (FJ_COMPAT | FJ_REPAIR_CAREFUL | FJ_REPAIR_THOROUGH | FJ_REPAIR_OFF)) &&
        (img->contexts[rec - img->profiles].flags & FJ_CONTEXT_REPAIR) &&
        img->contexts[rec - img->profiles].core_stage != FJ_NONE)
        return fj__converter_open_repair_auto(dict, key, flags, out, error);
    const fj_allocator *a = dict->allocator.alloc ? &dict->allocator : NULL;
    fj_converter *c = converter_new(dict, error);
    if (!c)
        return FJ_ERR_NOMEM;
    c->engine = &fj__compat_engine;
    c->profile = rec;
    c->flags = flags;
    c->ctx_repair_thorough = (flags & FJ_REPAIR_THOROUGH) != 0;
    c->barrier = img->barriers + (size_t)rec->barrier * FJ_BARRIER_BYTES;
    c->stage_count = rec->stage_count;
    fj_status st = fj__dict_require(dict, c->barrier, FJ_BARRIER_BYTES, error);
    if (st == FJ_OK && rec->segmentation != FJ_NONE)
        st = matcher_init(&c->segmentation, dict, rec->segmentation, error);
    if (st == FJ_OK && rec->normalization != FJ_NONE)
        st = matcher_init(&c->normalization, dict, rec->normalization, error);
    for (uint32_t k = 0; st == FJ_OK && k < rec->stage_count; k++)
        st = matcher_init(&c->stages[k], dict, rec->stages[k], error);
    if (st != FJ_OK) {
        fj_converter_close(c);
        return st;
    }
    for (uint32_t k = 0; k < rec->stage_count; k++) {
        uint32_t stored = img->matchers[rec->stages[k]].records;
        if (stored != FJ_NONE) {
            /* Mapped, not built: no fresh pages to fault in at open. */
            c->stages[k].rec = img->records + (size_t)stored * FJ_REC_COUNT;
            continue;
        }
        c->recs[k] = fj__alloc(a, FJ_REC_COUNT * sizeof(uint64_t));
        if (!c->recs[k]) {
            fj_converter_close(c);
            fj__set_error(error, FJ_ERR_NOMEM, 0, "out of memory");
            return FJ_ERR_NOMEM;
        }
        build_recs(&c->stages[k], c->recs[k]);
        c->stages[k].rec = c->recs[k];
    }
    const fj_context_rec *cx = &img->contexts[rec - img->profiles];
    int repair_off = (flags & FJ_REPAIR_OFF) && (cx->flags & FJ_CONTEXT_REPAIR);
    if (!(flags & FJ_COMPAT) && !repair_off && cx->core_stage != FJ_NONE &&
        (st = build_context_tables(c, cx, error)) != FJ_OK) {
        fj_converter_close(c);
        if (st == FJ_ERR_NOMEM)
            fj__set_error(error, FJ_ERR_NOMEM, 0, "out of memory");
        return st;
    }
    if (rec->segmentation != FJ_NONE) {
        c->has_segmentation = 1;
        c->seg_is_step1 = (rec->flags & FJ_PROFILE_SEG_IS_STEP1) != 0;
    }
    if (rec->normalization != FJ_NONE) {
        c->has_normalization = 1;
        /* Mark the first two UTF-8 bytes of every character normalization
         * looks at, so clean text can skip the pass. */
        const fj_matcher *m = &c->normalization;
        for (uint32_t hi = 0; hi < FJ_L1_SIZE; hi++) {
            if (!m->level1[hi])
                continue;
            const uint32_t *blk = m->blocks + (size_t)m->level1[hi] * FJ_BLOCK_SIZE;
            for (uint32_t lo = 0; lo < FJ_BLOCK_SIZE; lo++) {
                if (!blk[lo])
                    continue;
                uint32_t cp = hi << 8 | lo;
                unsigned char u[4];
                if (cp >= 0xD800 && cp <= 0xDFFF)
                    continue;
                if (fj_utf8_encode(cp, u) < 2) {
                    c->norm_always = 1; /* ASCII keys: the byte scan cannot see them */
                    continue;
                }
                unsigned k = (unsigned)u[0] << 8 | u[1];
                c->norm_prefix[k >> 3] |= (unsigned char)(1u << (k & 7));
                unsigned l = 0;
                while (l < c->norm_lead_count && c->norm_leads[l] != u[0])
                    l++;
                if (l == c->norm_lead_count) {
                    c->norm_leads[c->norm_lead_count++] = u[0];
                    c->norm_lo[l] = c->norm_hi[l] = u[1];
                }
                if (u[1] < c->norm_lo[l])
                    c->norm_lo[l] = u[1];
                if (u[1] > c->norm_hi[l])
                    c->norm_hi[l] = u[1];
            }
        }
    }
    *out = c;
    return FJ_OK;
}

fj_status fj__converter_new_target(const fj_dict *dict, fj_converter *sub[4], int repair_only,
                                   fj_converter **out, fj_error *error)
{
    const fj_allocator *a = dict->allocator.alloc ? &dict->allocator : NULL;
    fj_converter *c = converter_new(dict, error);
    if (!c)
        return FJ_ERR_NOMEM;
    fj_status st = fj__script_table_new(dict, &c->to_script);
    if (st == FJ_OK && !(c->to_class = fj__alloc(a, 0x10000)))
        st = FJ_ERR_NOMEM;
    if (st != FJ_OK) {
        fj__script_table_free(dict, c->to_script);
        fj__free(a, c, sizeof *c);
        fj__set_error(error, st, 0,
                      st == FJ_ERR_NOMEM ? "out of memory" : "dictionary lacks the character tables");
        return st;
    }
    /* Per BMP character: its script, whether it ends a clause, whether
     * every sub-converter takes it for a barrier (then clauses on both
     * sides may be converted together; see src/target.c), whether the
     * Traditional converter keeps it anywhere, and whether it is damage
     * evidence. */
    for (uint32_t cp = 0; cp < 0x10000; cp++) {
        unsigned cls = (unsigned)fj__script_class(c->to_script, cp);
        if (fj__ends_clause(cp)) {
            int barrier = 1;
            for (int k = 0; k < 4; k++)
                if (sub[k] && !(sub[k]->barrier[cp >> 3] >> (cp & 7) & 1))
                    barrier = 0;
            cls |= FJ_TO_ENDS_CLAUSE | (barrier ? FJ_TO_MERGEABLE : 0);
        }
        if (fj__ctx_keeps(sub[0], cp))
            cls |= FJ_TO_KEEPS;
        if (sub[2] && sub[0]->ctx_damage_w && cp >= FJ_REC_FIRST &&
            sub[0]->ctx_damage_w[cp - FJ_REC_FIRST])
            cls |= FJ_TO_DAMAGE;
        c->to_class[cp] = (unsigned char)cls;
    }
    c->engine = &fj__target_engine;
    /* Named after the conversion from Simplified (the style of quotes and
     * the language tag follow the target), else the other. */
    c->profile = (sub[1] ? sub[1] : sub[0])->profile;
    c->flags = sub[0]->flags;
    c->barrier = sub[0]->barrier;
    c->to_sub[0] = sub[0];
    c->to_sub[1] = sub[1];
    c->to_rt[0] = sub[2];
    c->to_rt[1] = sub[3];
    c->to_repair_only = repair_only;
    *out = c;
    return FJ_OK;
}

void fj_converter_close(fj_converter *c)
{
    if (!c)
        return;
    fj__overlay_free(c);
    fj_converter_close(c->to_sub[0]);
    fj_converter_close(c->to_sub[1]);
    fj_converter_close(c->to_rt[0]);
    fj_converter_close(c->to_rt[1]);
    fj__script_table_free(c->dict, c->to_script);
    fj_allocator a = c->allocator;
    fj__free(a.alloc ? &a : NULL, c->to_class, 0x10000);
    for (uint32_t k = 0; k < FJ_MAX_STAGES; k++)
        fj__free(a.alloc ? &a : NULL, c->recs[k], FJ_REC_COUNT * sizeof(uint64_t));
    fj__free(a.alloc ? &a : NULL, c->ctx_table, FJ_REC_COUNT * sizeof(uint32_t));
    fj__free(a.alloc ? &a : NULL, c->ctx_rules, 0x10000 * sizeof *c->ctx_rules);
    fj__free(a.alloc ? &a : NULL, c->ctx_damage_w, FJ_REC_COUNT * sizeof(int16_t));
    fj__free(a.alloc ? &a : NULL, c->ctx_post, FJ_REC_COUNT * sizeof(uint32_t));
    fj__free(a.alloc ? &a : NULL, c->ctx_unsafe, FJ_BARRIER_BYTES);
    fj__free(a.alloc ? &a : NULL, c->ctx_word_pairs, FJ_BIGRAM_BITS / 8);
    fj__free(a.alloc ? &a : NULL, c->pipe, sizeof *c->pipe);
    fj__free(a.alloc ? &a : NULL, c, sizeof *c);
}

const char *fj_converter_profile(const fj_converter *c)
{
    return c && c->profile ? c->profile->name : NULL;
}

/* ---- one options struct --------------------------------------------------- */

void fj_options_init(fj_options *options)
{
    if (!options)
        return;
    memset(options, 0, sizeof *options);
    options->size = sizeof *options;
    options->quotes = FJ_QUOTES_PROFILE;
}

#define OPTION_FIELD(f) {#f, offsetof(fj_options, f), sizeof(((fj_options *)0)->f)}

/* The fields after the first four, which an older caller's struct may lack. */
static const struct {
    const char *name;
    size_t offset, size;
} later_options[] = {OPTION_FIELD(quotes),        OPTION_FIELD(punct),
                     OPTION_FIELD(clean),         OPTION_FIELD(utf8),
                     OPTION_FIELD(phrases),       OPTION_FIELD(phrase_count),
                     OPTION_FIELD(protect),       OPTION_FIELD(protect_count),
                     OPTION_FIELD(markup)};

#define OPTIONS_MIN_SIZE (offsetof(fj_options, flags) + sizeof(unsigned))

static fj_status invalid_option(fj_error *error, const char *what, unsigned long long value)
{
    fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "fj_options: %s (%llu)", what, value);
    return FJ_ERR_INVALID_ARGUMENT;
}

/* The caller's struct, as long as it says it is, into *o (the rest takes
 * the defaults), checked field by field. */
static fj_status read_options(const fj_options *in, fj_options *o, fj_error *error)
{
    size_t size = in->size;
    if (size < OPTIONS_MIN_SIZE)
        return invalid_option(error, "size is smaller than its first four fields; set it with "
                                     "fj_options_init", size);
    for (size_t i = 0; i < sizeof later_options / sizeof later_options[0]; i++)
        if (size > later_options[i].offset &&
            size < later_options[i].offset + later_options[i].size) {
            fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0,
                          "fj_options: size %zu cuts the field '%s' in two", size,
                          later_options[i].name);
            return FJ_ERR_INVALID_ARGUMENT;
        }
    /* A newer caller's fields: only their defaults (zero) can be honoured. */
    const unsigned char *bytes = (const unsigned char *)in;
    for (size_t i = sizeof *o; i < size; i++)
        if (bytes[i])
            return invalid_option(error, "a byte past the fields this library knows is set, "
                                         "at offset", i);
    fj_options_init(o);
    memcpy(o, in, size < sizeof *o ? size : sizeof *o);
    o->size = sizeof *o;
    const unsigned levels = FJ_REPAIR_THOROUGH | FJ_REPAIR_CAREFUL | FJ_REPAIR_OFF;
    if (o->flags & ~(unsigned)(FJ_COMPAT | levels))
        return invalid_option(error, "unknown bits in flags",
                              o->flags & ~(unsigned)(FJ_COMPAT | levels));
    if ((o->flags & levels) & ((o->flags & levels) - 1))
        return invalid_option(error, "flags set more than one repair level", o->flags & levels);
    if (o->profile && o->target) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0,
                      "fj_options: both a profile ('%.40s') and a target ('%.40s') are set",
                      o->profile, o->target);
        return FJ_ERR_INVALID_ARGUMENT;
    }
    if (o->quotes != FJ_QUOTES_PROFILE && (o->quotes < 0 || o->quotes > FJ_QUOTES_CURLY))
        return invalid_option(error, "quotes is neither an fj_quotes nor FJ_QUOTES_PROFILE",
                              (unsigned long long)(long long)o->quotes);
    if (o->punct & ~(unsigned)(FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH))
        return invalid_option(error, "unknown bits in punct",
                              o->punct & ~(unsigned)(FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH));
    if (o->utf8 != FJ_UTF8_PASS && o->utf8 != FJ_UTF8_STRICT)
        return invalid_option(error, "utf8 is neither FJ_UTF8_PASS nor FJ_UTF8_STRICT",
                              (unsigned long long)(long long)o->utf8);
    if (o->markup & ~(unsigned)FJ_MARKUP_INLINE)
        return invalid_option(error, "unknown bits in markup", o->markup & ~(unsigned)FJ_MARKUP_INLINE);
    return FJ_OK;
}

fj_status fj_converter_open_options(const fj_dict *dict, const fj_options *options,
                                    fj_converter **out, fj_error *error)
{
    if (!out || !dict || !options) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "invalid argument");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    fj_options o;
    fj_status st = read_options(options, &o, error);
    if (st != FJ_OK)
        return st;
    fj_converter *c = NULL;
    if (o.profile)
        st = fj_converter_open(dict, o.profile, o.flags, &c, error);
    else if (o.target)
        st = fj_converter_open_target(dict, o.target, o.flags, &c, error);
    else if (!(c = converter_new(dict, error)))
        st = FJ_ERR_NOMEM;
    if (st != FJ_OK)
        return st;
    fj_quotes quotes = (fj_quotes)o.quotes;
    if (o.quotes == FJ_QUOTES_PROFILE)
        quotes = (o.flags & FJ_COMPAT) || !c->profile ? FJ_QUOTES_KEEP
                                                      : fj_profile_quotes(c->profile->name);
    if ((st = fj__overlay_open(c, &o, error)) != FJ_OK) {
        fj_converter_close(c);
        return st;
    }
    int identity = !o.profile && !o.target && !c->overlay;
    /* Nothing around the conversion: the plain converter itself. */
    if (!identity && !o.clean && quotes == FJ_QUOTES_KEEP && !o.punct &&
        o.utf8 == FJ_UTF8_PASS) {
        *out = c;
        return FJ_OK;
    }
    const fj_allocator *a = dict->allocator.alloc ? &dict->allocator : NULL;
    if (!(c->pipe = fj__alloc(a, sizeof *c->pipe))) {
        fj_converter_close(c);
        fj__set_error(error, FJ_ERR_NOMEM, 0, "out of memory");
        return FJ_ERR_NOMEM;
    }
    c->pipe->clean = o.clean;
    c->pipe->quotes = quotes;
    c->pipe->punct = o.punct;
    c->pipe->strict_utf8 = o.utf8 == FJ_UTF8_STRICT;
    c->pipe->identity = identity;
    *out = c;
    return FJ_OK;
}
