/* The default mode: the profile's script-conversion step is replaced by a
 * choice over a word lattice. For each run of text between barriers, every
 * dictionary word that matches (in readings) is a candidate with a unigram
 * cost; the cheapest segmentation wins (Viterbi) and each chosen word gives
 * its characters' forms. The steps before and after it (variant tables,
 * regional phrases) run as in the compatible mode. For repair (profiles
 * with Traditional input and no script step) the lattice runs before the
 * profile's steps, and only the characters listed as suspects may change. */
#include <string.h>

#include "charclass.h"
#include "internal.h"
#include "match.h"

/* The lattice sees this many characters on each side of one whose form
 * depends on context: most words are shorter. */
#define FJ_CTX_REACH 4
/* Longest lattice run in characters; a longer run is cut there. */
#define FJ_CTX_RUN_MAX 256
/* Cost of a character no word covers: as for a word never seen. */
#define FJ_CTX_UNKNOWN_COST 2000
/* Repair: the cost of changing a written character that is right in some
 * words (an in_words suspect), about -ln(1/12) in model units: the written
 * form is taken as right unless a word makes the change clearly more likely.
 * The characters of repair-rules.txt's `common` role (裡, 里, 只) are each
 * right on their own, so changing one of them needs about -ln(1/3000). Chosen
 * from a few values by the false changes on make accuracy's gold and the
 * repair of the dev sentences. */
#define FJ_CTX_REPAIR_PENALTY 250
#define FJ_CTX_REPAIR_PENALTY_COMMON 800

/* Chunks are cut after a barrier once this long, to keep buffers small. */
#define FJ_CTX_CHUNK 16384u
/* As in the compatible pipeline: a stretch this long with no barrier is cut. */
#define FJ_CTX_RUN_CAP 2048u

typedef struct ctx_char {
    uint32_t cp, reading;
    uint32_t off; /* byte offset in the chunk */
    uint32_t len;
} ctx_char;

static inline int is_barrier(const fj_converter *c, uint32_t cp)
{
    return cp < 0x10000 && (c->barrier[cp >> 3] >> (cp & 7) & 1);
}

/* The reading of cp: what the fold table maps it to, else itself. */
static inline uint32_t reading_of(const fj_converter *c, uint32_t cp)
{
    if (!c->ctx_has_fold)
        return cp;
    uint32_t e = fj__lookup(&c->ctx_fold, cp);
    if (e == 0 || e == FJ_ENTRY_IDS)
        return cp;
    const unsigned char *v;
    size_t vl;
    if (e & FJ_ENTRY_DIRECT) {
        unsigned char u[3] = {(unsigned char)e, (unsigned char)(e >> 8), (unsigned char)(e >> 16)};
        uint32_t r;
        return fj_utf8_decode(u, u + 3, &r) == 3 ? r : cp;
    }
    if (!(e & FJ_ENTRY_HAS_VALUE))
        return cp;
    const fj_node_rec *n = &c->ctx_fold.nodes[e & FJ_ENTRY_NODE_MASK];
    v = n->value_len <= FJ_INLINE_VALUE_MAX ? (const unsigned char *)&n->value
                                            : (const unsigned char *)c->ctx_fold.strings + n->value;
    vl = n->value_len;
    uint32_t r;
    return fj_utf8_decode(v, v + vl, &r) == (int)vl ? r : cp;
}

/* Repair: a reading's default form, its one-character answer in the
 * Simplified -> Traditional step; the reading itself when it has none. */
static uint32_t default_form(const fj_converter *c, uint32_t reading)
{
    uint32_t e = fj__lookup(&c->ctx_defaults, reading), d;
    if (e == 0 || e == FJ_ENTRY_IDS)
        return reading;
    if (e & FJ_ENTRY_DIRECT) {
        unsigned char u[3] = {(unsigned char)e, (unsigned char)(e >> 8), (unsigned char)(e >> 16)};
        return fj_utf8_decode(u, u + 3, &d) == 3 ? d : reading;
    }
    if (!(e & FJ_ENTRY_HAS_VALUE))
        return reading;
    const fj_node_rec *n = &c->ctx_defaults.nodes[e & FJ_ENTRY_NODE_MASK];
    if (n->value_len > FJ_INLINE_VALUE_MAX)
        return reading;
    const unsigned char *v = (const unsigned char *)&n->value;
    return fj_utf8_decode(v, v + n->value_len, &d) == (int)n->value_len ? d : reading;
}

uint32_t fj__ctx_reading(const fj_converter *c, uint32_t cp)
{
    return reading_of(c, cp);
}

uint32_t fj__ctx_default_of(const fj_converter *c, uint32_t cp)
{
    return default_form(c, reading_of(c, cp));
}

int fj__ctx_suspect_is_default(const fj_converter *c, uint32_t cp)
{
    return default_form(c, reading_of(c, cp)) == cp;
}

/* A node's value as (cost, target); 0 when it is not a model value. A word
 * without a target (target_len 0) takes each character's own answer.
 * `split`: the language model's head and tail lengths (head << 3 | tail)
 * when the word carries them, else 0. */
static inline int word_value(const fj_matcher *m, const fj_node_rec *n, int32_t *cost,
                             const unsigned char **target, uint32_t *target_len, uint32_t *split,
                             int with_lm)
{
    if (n->value_len == FJ_NO_VALUE || n->value_len < 3)
        return 0;
    const unsigned char *v = n->value_len <= FJ_INLINE_VALUE_MAX
                                 ? (const unsigned char *)&n->value
                                 : (const unsigned char *)m->strings + n->value;
    /* U+E000..U+EFFF: EE 80..BF 80..BF */
    if (v[0] != 0xEE || (v[1] & 0xC0) != 0x80 || (v[2] & 0xC0) != 0x80)
        return 0;
    *cost = (int32_t)((v[1] & 0x3Fu) << 6 | (v[2] & 0x3Fu));
    *target = v + 3;
    *target_len = (uint32_t)n->value_len - 3;
    *split = 0;
    /* U+F000..U+F03F: EF 80 80..BF, only in an image with the model */
    if (with_lm && *target_len >= 3 && v[3] == 0xEF && v[4] == 0x80 && (v[5] & 0xC0) == 0x80) {
        *split = v[5] & 0x3Fu;
        *target += 3;
        *target_len -= 3;
    }
    return 1;
}

/* The region's form of the word run[i..j) (fj_context_rec.overrides):
 * replaces the target when the region writes the word otherwise. The cost
 * stays the general word's. */
static void region_target(const fj_converter *c, const ctx_char *run, uint32_t i, uint32_t j,
                          const unsigned char **target, uint32_t *target_len)
{
    const fj_matcher *m = &c->ctx_overrides;
    uint32_t e = fj__lookup(m, run[i].reading);
    if (e == 0 || e == FJ_ENTRY_IDS)
        return;
    if (e & FJ_ENTRY_DIRECT) {
        /* A one-character word with only a cost: its own answer. */
        if (j == i + 1) {
            *target = (const unsigned char *)"";
            *target_len = 0;
        }
        return;
    }
    const fj_node_rec *n = &m->nodes[e & FJ_ENTRY_NODE_MASK];
    for (uint32_t k = i + 1; k < j && n; k++)
        n = fj__child(m, n, run[k].reading);
    int32_t cost;
    uint32_t split;
    if (n)
        word_value(m, n, &cost, target, target_len, &split, c->ctx_lm != NULL);
}

/* Does the target t[0..tl) name one form per character of run[i..j)? */
static inline int has_forms_for(const unsigned char *t, uint32_t tl, uint32_t i, uint32_t j)
{
    uint32_t chars = 0;
    for (const unsigned char *q = t; t && q < t + tl; q++)
        chars += (*q & 0xC0) != 0x80;
    return t && tl > 0 && chars == j - i;
}

static inline void put_answer(fj_out *o, uint32_t a)
{
    const char b[3] = {(char)(a & 0xFF), (char)(a >> 8 & 0xFF), (char)(a >> 16 & 0xFF)};
    fj__out_put(o, b, 3);
}

/* Where a run's result goes: with `fuse`, the answers already include the
 * later steps folded into ctx_table; `unsafe` records that a character was
 * written that may start a longer key of a partly folded step. */
typedef struct ctx_emit {
    fj_out *o;
    int fuse, unsafe;
    int32_t repair_bias; /* added to the cost of each repair (fj_work.repair_bias) */
    fj__inspect_sink *sink; /* fj_inspect: where the lattice's choices go; else NULL */
} ctx_emit;

/* The one-character answer for cp (three UTF-8 bytes, first lowest), or 0
 * when there is none to take without the lattice. */
static inline uint32_t own_answer(const fj_converter *c, ctx_emit *em, uint32_t cp)
{
    if (cp < FJ_REC_FIRST || cp >= 0x10000)
        return 0;
    if (!em->fuse) {
        if (c->ctx_repair) /* everything stays but the suspects the lattice must decide */
            return (c->ctx_table[cp - FJ_REC_FIRST] >> FJ_CTX_SPECIAL_BIT & 1)
                       ? 0
                       : (uint32_t)((0xE0 | cp >> 12) | (0x80 | (cp >> 6 & 0x3F)) << 8 |
                                    (0x80 | (cp & 0x3F)) << 16);
        uint32_t r = (uint32_t)c->stages[c->ctx_core_stage].rec[cp - FJ_REC_FIRST];
        return (r >> FJ_REC_SPECIAL_BIT & 1) ? 0 : (r & 0xFFFFFFu);
    }
    uint32_t r = c->ctx_table[cp - FJ_REC_FIRST];
    em->unsafe |= (int)(r >> FJ_CTX_UNSAFE_BIT & 1);
    return (r >> FJ_CTX_SPECIAL_BIT & 1) ? 0 : (r & 0xFFFFFFu);
}

/* Writes one character the lattice chose (or kept), through the later
 * steps when they are folded in. */
static inline void emit_char(const fj_converter *c, ctx_emit *em, const unsigned char *p,
                             size_t len)
{
    if (em->fuse && len == 3) {
        uint32_t cp = (p[0] & 0x0Fu) << 12 | (p[1] & 0x3Fu) << 6 | (p[2] & 0x3Fu);
        if (cp >= FJ_REC_FIRST) {
            if (c->ctx_fused == 2)
                em->unsafe |= c->ctx_unsafe[cp >> 3] >> (cp & 7) & 1;
            put_answer(em->o, c->ctx_post[cp - FJ_REC_FIRST]);
            return;
        }
    }
    fj__out_put(em->o, (const char *)p, len);
}

/* The compiled-in data/context/repair-rules.txt. */
extern const unsigned char fj__repair_rules[];
extern const size_t fj__repair_rules_size;

fj_status fj__repair_rules_load(uint16_t *classes, unsigned char *week_form,
                                unsigned char *li_form, fj_error *e)
{
    static const struct {
        const char *name;
        uint16_t bit;
    } roles[] = {{"count", FJ_RULE_COUNT},
                 {"digit", FJ_RULE_DIGIT},
                 {"week-after", FJ_RULE_WEEK_AFTER},
                 {"not-week-before", FJ_RULE_NOT_WEEK_BEFORE},
                 {"week-before", FJ_RULE_WEEK_BEFORE},
                 {"week-year", FJ_RULE_WEEK_YEAR},
                 {"demonstrative", FJ_RULE_DEMONSTRATIVE},
                 {"after-only", FJ_RULE_AFTER_ONLY},
                 {"week", FJ_RULE_WEEK},
                 {"li-inside", FJ_RULE_LI_INSIDE},
                 {"measure-only", FJ_RULE_MEASURE_ONLY},
                 {"common", FJ_RULE_COMMON},
                 {"week-form", FJ_RULE_WEEK_FORM},
                 {"li-form", FJ_RULE_LI_FORM}};
    uint32_t week_cp = 0, li_cp = 0;
    memset(classes, 0, 0x10000 * sizeof *classes);
    const unsigned char *p = fj__repair_rules, *end = p + fj__repair_rules_size;
    while (p < end) {
        const unsigned char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        const unsigned char *tab = memchr(p, '\t', (size_t)(eol - p));
        if (p < eol && *p != '#') {
            size_t i = 0, nl = tab ? (size_t)(tab - p) : 0;
            while (i < sizeof roles / sizeof roles[0] &&
                   !(strlen(roles[i].name) == nl && memcmp(roles[i].name, p, nl) == 0))
                i++;
            if (!tab || i == sizeof roles / sizeof roles[0]) {
                fj__set_error(e, FJ_ERR_DICT_FORMAT, (size_t)(p - fj__repair_rules),
                              "repair rules: not a known role and its characters");
                return FJ_ERR_DICT_FORMAT;
            }
            for (const unsigned char *q = tab + 1; q < eol;) {
                uint32_t cp;
                int k = fj_utf8_decode(q, eol, &cp);
                if (k <= 0 || cp >= 0x10000) {
                    fj__set_error(e, FJ_ERR_DICT_FORMAT, (size_t)(q - fj__repair_rules),
                                  "repair rules: not a BMP character");
                    return FJ_ERR_DICT_FORMAT;
                }
                classes[cp] = (uint16_t)(classes[cp] | roles[i].bit);
                uint32_t *form = roles[i].bit == FJ_RULE_WEEK_FORM ? &week_cp
                                 : roles[i].bit == FJ_RULE_LI_FORM ? &li_cp
                                                                   : NULL;
                if (form && *form) {
                    fj__set_error(e, FJ_ERR_DICT_FORMAT, (size_t)(q - fj__repair_rules),
                                  "repair rules: a form role holds one character");
                    return FJ_ERR_DICT_FORMAT;
                }
                if (form)
                    *form = cp;
                q += k;
            }
        }
        p = eol + 1;
    }
    if (!week_cp || !li_cp) {
        fj__set_error(e, FJ_ERR_DICT_FORMAT, 0, "repair rules: week-form or li-form missing");
        return FJ_ERR_DICT_FORMAT;
    }
    if (week_form)
        week_form[fj_utf8_encode(week_cp, week_form)] = 0;
    if (li_form)
        li_form[fj_utf8_encode(li_cp, li_form)] = 0;
    return FJ_OK;
}

static inline int has_role(const fj_converter *c, uint32_t cp, unsigned role)
{
    return cp < 0x10000 && (c->ctx_rules[cp] & role);
}

/* Repair: is run[k] 裡 right after a number (三十裡, 八百裡)? There it is the
 * careless form of the unit 里 whatever the words around it. */
static int li_after_number(const fj_converter *c, const ctx_char *run, uint32_t k)
{
    return has_role(c, run[k].cp, FJ_RULE_LI_INSIDE) && k > 0 &&
           has_role(c, run[k - 1].cp, FJ_RULE_COUNT | FJ_RULE_DIGIT);
}

/* Repair: is run[k] 周 meaning a week, which Taiwan and Hong Kong write 週?
 * Before a week-before character (周末), before a week-year one after a
 * number (十周年), and after a week-after one unless a not-week-before one
 * follows (這周圍, 上周到). Not after 一: 繞場一周 is a lap. The roles are
 * in data/context/repair-rules.txt. */
static int week_zhou(const fj_converter *c, const ctx_char *run, uint32_t k, uint32_t n)
{
    if (!has_role(c, run[k].cp, FJ_RULE_WEEK))
        return 0;
    uint32_t next = k + 1 < n ? run[k + 1].cp : 0;
    if (has_role(c, next, FJ_RULE_WEEK_BEFORE))
        return 1;
    if (has_role(c, next, FJ_RULE_WEEK_YEAR) && k > 0 &&
        (has_role(c, run[k - 1].cp, FJ_RULE_COUNT | FJ_RULE_DIGIT) ||
         (run[k - 1].cp >= '0' && run[k - 1].cp <= '9')))
        return 1;
    return k > 0 && has_role(c, run[k - 1].cp, FJ_RULE_WEEK_AFTER) &&
           !has_role(c, next, FJ_RULE_NOT_WEEK_BEFORE);
}

/* Repair: the form a position alone decides for run[k] of run[0..n) (the
 * rules' week-form or li-form, NUL-terminated UTF-8), or NULL. */
static const unsigned char *positional_form(const fj_converter *c, const ctx_char *run, uint32_t k,
                                           uint32_t n)
{
    return week_zhou(c, run, k, n)        ? c->ctx_week_form
           : li_after_number(c, run, k) ? c->ctx_li_form
                                        : NULL;
}

/* Repair: what run[k] becomes in the word run[i..j) with target t (NULL:
 * as written); fk, fk_len: the word's own form for k (fk NULL when it has
 * none). Into u, or a pointer to the bytes; their length in *len. */
static const unsigned char *repair_char(const fj_converter *c, const unsigned char *text,
                                        const ctx_char *run, uint32_t n_run, uint32_t i,
                                        uint32_t j, int has_t, const unsigned char *fk,
                                        uint32_t fk_len, uint32_t k, unsigned char u[4],
                                        size_t *len)
{
    uint32_t cp = run[k].cp;
    int susp_always = cp < 0x10000 && (c->ctx_always[cp >> 3] >> (cp & 7) & 1);
    int susp_words = cp < 0x10000 && (c->ctx_in_words[cp >> 3] >> (cp & 7) & 1);
    int change = has_t ? (susp_always || (susp_words && j - i >= 2)) : susp_always;
    const unsigned char *forced = positional_form(c, run, k, n_run);
    if (forced) {
        *len = strlen((const char *)forced);
        return forced;
    }
    if (!change) {
        *len = run[k].len;
        return text + run[k].off;
    }
    if (fk) {
        *len = fk_len;
        return fk;
    }
    *len = (size_t)fj_utf8_encode(default_form(c, run[k].reading), u);
    return u;
}

/* Repair: writes the word run[i..j) of run[0..n_run) chose. Only suspects
 * change: those marked always, and those marked in_words when the word is
 * longer than one character; each takes the word's form, or its reading's
 * default form. Two positions decide alone: 周 for a week (下周 -> 下週)
 * and 裡 right after a number (三十裡 -> 三十里). */
static void repair_word(const fj_converter *c, const unsigned char *text, const ctx_char *run,
                        uint32_t n_run, uint32_t i, uint32_t j, const unsigned char *t,
                        uint32_t tl, ctx_emit *em)
{
    const unsigned char *tend = t ? t + tl : NULL;
    int explicit_forms = has_forms_for(t, tl, i, j);
    for (uint32_t k = i; k < j; k++) {
        uint32_t len = 0;
        uint32_t f = 0;
        if (explicit_forms) {
            int n = fj_utf8_decode(t, tend, &f);
            len = n > 0 ? (uint32_t)n : 1;
        }
        unsigned char u[4];
        size_t out_len;
        const unsigned char *out = repair_char(c, text, run, n_run, i, j, t != NULL,
                                               explicit_forms && f ? t : NULL, len, k, u, &out_len);
        emit_char(c, em, out, out_len);
        if (explicit_forms)
            t += len;
    }
}

/* Repair: is run[a..a+2) as written a two-character word that the model
 * writes so (只是, 只有)? */
static int written_pair_is_word(const fj_converter *c, const ctx_char *run, uint32_t a)
{
    const fj_matcher *m = &c->ctx_words;
    uint32_t e = fj__lookup(m, run[a].reading);
    if (e == 0 || e == FJ_ENTRY_IDS || (e & FJ_ENTRY_DIRECT))
        return 0;
    const fj_node_rec *n = fj__child(m, &m->nodes[e & FJ_ENTRY_NODE_MASK], run[a + 1].reading);
    int32_t cost;
    const unsigned char *t, *tend;
    uint32_t tl, split;
    if (!n || !word_value(m, n, &cost, &t, &tl, &split, c->ctx_lm != NULL))
        return 0;
    int explicit_forms = has_forms_for(t, tl, 0, 2);
    tend = t + tl;
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t f = 0;
        if (explicit_forms) {
            int len = fj_utf8_decode(t, tend, &f);
            t += len > 0 ? (uint32_t)len : 1;
        } else {
            f = default_form(c, run[a + k].reading);
        }
        if (f != run[a + k].cp)
            return 0;
    }
    return 1;
}

/* Repair: the extra cost of changing run[k]. 裡, 里 and 只 are each common
 * and right on their own (inside; a unit of distance; only). After a
 * numeral (一只手, 兩只老虎) 只 is the careless form of the measure word 隻,
 * unless it begins a word as written (一只有: 只有). After 這 or 那 only
 * before what is not a verb (那只小鳥; 這只適用 means "this only applies"). */
static int32_t repair_change_cost(const fj_converter *c, const ctx_char *run, uint32_t n,
                                  uint32_t k)
{
    uint32_t cp = run[k].cp;
    int only = has_role(c, cp, FJ_RULE_MEASURE_ONLY);
    if (only && k > 0 && has_role(c, run[k - 1].cp, FJ_RULE_COUNT) &&
        !(k + 1 < n && written_pair_is_word(c, run, k)))
        return FJ_CTX_REPAIR_PENALTY;
    /* After 這 or 那, 只 is the measure word unless what follows often
     * follows the adverb (這只是); punctuation, Latin and digits too. */
    if (only && k > 0 && has_role(c, run[k - 1].cp, FJ_RULE_DEMONSTRATIVE) &&
        k + 1 < n &&
        !(fj__char_is(run[k + 1].cp, FJ_CC_BEFORE_HAN) ||
          has_role(c, run[k + 1].cp, FJ_RULE_AFTER_ONLY)) &&
        !written_pair_is_word(c, run, k))
        return FJ_CTX_REPAIR_PENALTY;

    if (has_role(c, cp, FJ_RULE_COMMON))
        return FJ_CTX_REPAIR_PENALTY_COMMON;
    return FJ_CTX_REPAIR_PENALTY;
}

/* Repair: the extra cost of the word run[i..j) with target t, for the
 * characters it would change among those right in some words (in_words
 * suspects), so that correct text comes through unchanged. n: the run's
 * length. */
static int32_t repair_extra_cost(const fj_converter *c, const ctx_char *run, uint32_t n,
                                 uint32_t i, uint32_t j, const unsigned char *t, uint32_t tl,
                                 int32_t bias, uint64_t *changed)
{
    *changed = 0;
    if (j - i < 2 || !t)
        return 0;
    const unsigned char *tend = t + tl;
    int explicit_forms = has_forms_for(t, tl, i, j);
    int32_t extra = 0;
    for (uint32_t k = i; k < j; k++) {
        uint32_t cp = run[k].cp, f = 0;
        if (explicit_forms) {
            int len = fj_utf8_decode(t, tend, &f);
            t += len > 0 ? (uint32_t)len : 1;
        }
        if (cp >= 0x10000 || !(c->ctx_in_words[cp >> 3] >> (cp & 7) & 1) ||
            (c->ctx_always[cp >> 3] >> (cp & 7) & 1))
            continue;
        if (!explicit_forms)
            f = default_form(c, run[k].reading);
        if (f != cp) {
            extra += repair_change_cost(c, run, n, k) + bias;
            if (k - i < 64)
                *changed |= (uint64_t)1 << (k - i);
        }
    }
    return extra;
}

/* Repair: the value repair keeps run[i..j) as written by (ctx_attested):
 * '0' for the word list's unpreferred spellings, kept unless the repair is
 * thorough; '1' for its other words; '2' for words written either way
 * (repair-either.tsv). 0 when it is no such word. */
static int written_attested_value(const fj_converter *c, const ctx_char *run, uint32_t i,
                                  uint32_t j)
{
    if (!c->ctx_has_attested)
        return 0;
    const fj_matcher *m = &c->ctx_attested;
    uint32_t e = fj__lookup(m, run[i].cp);
    if (e == 0 || e == FJ_ENTRY_IDS || (e & FJ_ENTRY_DIRECT))
        return 0;
    const fj_node_rec *node = &m->nodes[e & FJ_ENTRY_NODE_MASK];
    for (uint32_t k = i + 1; k < j && node; k++)
        node = fj__child(m, node, run[k].cp);
    if (!node || node->value_len == FJ_NO_VALUE)
        return 0;
    fj_match v;
    fj__take_value(m, node, 0, &v);
    return v.value_len == 1 ? (unsigned char)v.value[0] : '1';
}

/* Repair: is run[i..j) as written a word that repair keeps? Also when a
 * word written either way lies inside it and holds a character the word
 * would change (`changed`, bit k - i): 請盡快 keeps 盡快 although the list's
 * word is 請儘快. */
static int written_attested_within(const fj_converter *c, const ctx_char *run, uint32_t i,
                                   uint32_t j, uint64_t changed)
{
    int v = written_attested_value(c, run, i, j);
    if (v && !(c->ctx_repair_thorough && v == '0'))
        return 1;
    for (uint32_t a = i; a + 1 < j && a - i < 64; a++)
        for (uint32_t b = a + 2; b <= j && b - i <= 64; b++) {
            uint64_t bits = b - a >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (b - a)) - 1;
            if (b - a < j - i && (changed & bits << (a - i)) &&
                written_attested_value(c, run, a, b) == '2')
                return 1;
        }
    return 0;
}

/* One candidate word of the lattice: run[i..j) with its own cost and
 * target; `best` is the cheapest path that ends with it, `back` the word
 * before it on that path. */
typedef struct ctx_arc {
    uint16_t i, j;
    uint16_t back, next_at_end; /* arc indexes, FJ_CTX_NO_ARC for none */
    int32_t cost, best;
    int32_t backoff; /* what a word after this one costs beyond its own, by default */
    uint32_t hash;   /* the model's word the word before sees (its readings' hash) */
    uint32_t tail;   /* the model's word the word after sees */
    const unsigned char *t;
    uint32_t tl;
} ctx_arc;

#define FJ_CTX_NO_ARC 0xFFFFu
/* Candidate words per lattice call; past it, positions keep only their
 * one-character candidate. */
#define FJ_CTX_ARCS_MAX 1024u

/* The language model's slot value for (before, word), or `fallback`. */
static inline int32_t lm_cost(const fj_converter *c, uint32_t before, uint32_t word,
                              int32_t fallback)
{
    uint64_t key = fj_lm_key(before, word);
    uint32_t fp = fj_lm_fingerprint(key), mask = (1u << c->ctx_lm_bits) - 1;
    uint32_t s = (uint32_t)(key >> (64 - c->ctx_lm_bits));
    /* At most one round: a damaged image's table may have no empty slot. */
    for (uint32_t probe = 0; probe <= mask; probe++, s = (s + 1) & mask) {
        uint32_t v = c->ctx_lm[s];
        if (v == 0)
            return fallback;
        if (v >> 12 == fp)
            return (int32_t)(v & 0xFFFu) - FJ_LM_BIAS;
    }
    return fallback;
}

/* Adds the arc run[i..j) and links it to the best arc ending at i. */
static inline __attribute__((always_inline)) void add_arc(const fj_converter *c, ctx_arc *arcs, uint32_t *narcs, uint16_t *ends_at,
                           int32_t *best_at, uint32_t i, uint32_t j, int32_t cost,
                           const unsigned char *t, uint32_t tl, uint32_t hash, uint32_t tail,
                           int at_start, const int full, const int with_lm)
{
    if (!full) {
        /* Without a model the word before does not matter: arcs[j] is the
         * cheapest word ending at j (the first of equals), as in a unigram
         * Viterbi. */
        int32_t b = i == 0 ? cost : best_at[i] == INT32_MAX ? INT32_MAX : best_at[i] + cost;
        if (b < best_at[j]) {
            best_at[j] = b;
            ctx_arc *w = &arcs[j];
            w->i = (uint16_t)i;
            w->j = (uint16_t)j;
            w->t = t;
            w->tl = tl;
        }
        return;
    }
    ctx_arc *a = &arcs[*narcs];
    a->i = (uint16_t)i;
    a->j = (uint16_t)j;
    a->cost = cost;
    a->t = t;
    a->tl = tl;
    a->hash = hash;
    a->tail = tail;
    /* Every arc is kept: with a model, or for fj_inspect without one. */
    a->backoff = with_lm ? lm_cost(c, tail, FJ_LM_BACKOFF, 0) : 0;
    a->back = FJ_CTX_NO_ARC;
    if (i == 0) {
        a->best = cost + (at_start && with_lm ? lm_cost(c, FJ_LM_SENTENCE_START, hash, 0) : 0);
    } else {
        a->best = INT32_MAX;
        for (uint16_t b = ends_at[i]; b != FJ_CTX_NO_ARC; b = arcs[b].next_at_end) {
            const ctx_arc *p = &arcs[b];
            if (p->best == INT32_MAX)
                continue;
            int32_t v = p->best + cost + (with_lm ? lm_cost(c, p->tail, hash, p->backoff) : 0);
            if (v <= a->best) { /* on a tie, the earliest start, as the unigram lattice */
                a->best = v;
                a->back = b;
            }
        }
    }
    a->next_at_end = ends_at[j];
    ends_at[j] = (uint16_t)*narcs;
    (*narcs)++;
}

static void report_choices(const fj_converter *c, const unsigned char *text, const ctx_char *run,
                           uint32_t n, const ctx_arc *arcs, uint32_t narcs, const uint16_t *chosen,
                           uint32_t words, int32_t best, int at_end, fj__inspect_sink *sink);

/* Finds the best path over run[0..n) and writes it: the cheapest sequence
 * of words, each costing its own cost plus, with a language model, what it
 * costs after the word before. at_start / at_end: run[0] begins a run, or
 * run[n - 1] ends one (the model's sentence marks). With `ends`, ends[k] is
 * set to 1 where a chosen word ends after run[k], else 0. */
static inline __attribute__((always_inline)) void
lattice_body(const fj_converter *c, const unsigned char *text, const ctx_char *run, uint32_t n,
             ctx_emit *em, int at_start, int at_end, unsigned char *ends, const int inspect)
{
    const fj_matcher *m = &c->ctx_words;
    ctx_arc arcs[FJ_CTX_ARCS_MAX];
    uint16_t ends_at[FJ_CTX_RUN_MAX + 1];
    int32_t best_at[FJ_CTX_RUN_MAX + 1];
    uint32_t narcs = 0;
    const int with_lm = c->ctx_lm != NULL;
    /* Every arc kept (with a model, or to inspect), else the best per end. */
    const int full = with_lm || inspect;
    int crowded = 0; /* some word was left out for want of room */
    for (uint32_t i = 0; i <= n; i++)
        best_at[i] = INT32_MAX;
    for (uint32_t i = 0; full && i <= n; i++)
        ends_at[i] = FJ_CTX_NO_ARC;
    for (uint32_t i = 0; i < n; i++) {
        int32_t cost;
        const unsigned char *t;
        uint32_t tl;
        int single = 0;
        /* Room for a one-character candidate at every later position. */
        int room = narcs + (n - i) + 8 < FJ_CTX_ARCS_MAX;
        crowded |= !room;
        uint32_t h = with_lm ? fj_lm_word_step(FJ_LM_WORD_SEED, run[i].reading) : 0;
        uint32_t e = fj__lookup(m, run[i].reading);
        if (e != FJ_ENTRY_IDS && (e & FJ_ENTRY_DIRECT)) {
            /* A one-character word with no longer ones after it and only a
             * cost (its own answer): the table holds the cost character. */
            uint32_t b0 = e & 0xFF, b1 = e >> 8 & 0xFF, b2 = e >> 16 & 0xFF;
            if (b0 == 0xEE && (b1 & 0xC0) == 0x80 && (b2 & 0xC0) == 0x80) {
                cost = (int32_t)((b1 & 0x3Fu) << 6 | (b2 & 0x3Fu));
                single = 1;
                t = (const unsigned char *)"";
                tl = 0;
                if (c->ctx_has_overrides)
                    region_target(c, run, i, i + 1, &t, &tl);
                add_arc(c, arcs, &narcs, ends_at, best_at, i, i + 1, cost, t, tl, h, h, at_start, full,
                        with_lm);
            }
        } else if (e != 0 && e != FJ_ENTRY_IDS) {
            const fj_node_rec *node = &m->nodes[e & FJ_ENTRY_NODE_MASK];
            uint32_t j = i + 1;
            for (;;) {
                uint32_t split;
                if (word_value(m, node, &cost, &t, &tl, &split, with_lm) && (room || j == i + 1)) {
                    single |= j == i + 1;
                    if (c->ctx_has_overrides)
                        region_target(c, run, i, j, &t, &tl);
                    if (c->ctx_repair) {
                        uint64_t changed;
                        int32_t extra = repair_extra_cost(c, run, n, i, j, t, tl, em->repair_bias, &changed);
                        if (extra && written_attested_within(c, run, i, j, changed))
                            t = NULL; /* the word as written: only "always" suspects change */
                        else
                            cost += extra;
                    }
                    uint32_t head_h = h, tail_h = h;
                    if (split) {
                        uint32_t head = split >> 3, tail = split & 7;
                        head_h = tail_h = FJ_LM_WORD_SEED;
                        for (uint32_t k = i; k < i + head && k < j; k++)
                            head_h = fj_lm_word_step(head_h, run[k].reading);
                        for (uint32_t k = j > tail ? j - tail : 0; k < j; k++)
                            tail_h = fj_lm_word_step(tail_h, run[k].reading);
                    }
                    add_arc(c, arcs, &narcs, ends_at, best_at, i, j, cost, t, tl, head_h, tail_h, at_start,
                            full, with_lm);
                }
                if (j >= n || node->child_count == 0)
                    break;
                node = fj__child(m, node, run[j].reading);
                if (!node)
                    break;
                if (with_lm)
                    h = fj_lm_word_step(h, run[j].reading);
                j++;
            }
        }
        if (!single) {
            uint32_t own = with_lm ? fj_lm_word_step(FJ_LM_WORD_SEED, run[i].reading) : 0;
            add_arc(c, arcs, &narcs, ends_at, best_at, i, i + 1, FJ_CTX_UNKNOWN_COST, NULL, 0, own, own,
                    at_start, full, with_lm);
        }
    }
    /* The cheapest arc ending at n, with the end of the run after it. */
    uint16_t last = FJ_CTX_NO_ARC;
    int32_t last_best = INT32_MAX;
    uint16_t chosen[FJ_CTX_RUN_MAX + 1];
    uint32_t words = 0;
    if (!full)
        for (uint32_t j = n; j > 0; j = arcs[j].i)
            chosen[words++] = (uint16_t)j;
    for (uint16_t b = ends_at[n]; full && b != FJ_CTX_NO_ARC; b = arcs[b].next_at_end) {
        const ctx_arc *p = &arcs[b];
        if (p->best == INT32_MAX)
            continue;
        int32_t v = p->best + (at_end && with_lm ? lm_cost(c, p->tail, FJ_LM_SENTENCE_END, p->backoff) : 0);
        if (v <= last_best) { /* the earliest-added on a tie: as the unigram lattice */
            last_best = v;
            last = b;
        }
    }
    /* Walk back, then write the words in order. */
    for (uint16_t b = last; full && b != FJ_CTX_NO_ARC; b = arcs[b].back)
        chosen[words++] = b;
    if (inspect && !crowded && last != FJ_CTX_NO_ARC)
        report_choices(c, text, run, n, arcs, narcs, chosen, words, last_best, at_end, em->sink);
    if (ends)
        for (uint32_t k = 0; k < n; k++)
            ends[k] = 0;
    while (words) {
        const ctx_arc *w = &arcs[chosen[--words]];
        uint32_t i = w->i, j = w->j;
        const unsigned char *t = w->t, *tend = t ? t + w->tl : NULL;
        uint32_t target_len_j = w->tl;
        if (ends)
            ends[j - 1] = 1;
        if (c->ctx_repair) {
            repair_word(c, text, run, n, i, j, t, target_len_j, em);
            continue;
        }
        if (!t) {
            emit_char(c, em, text + run[i].off, run[i].len);
            continue;
        }
        if (target_len_j == 0) {
            for (uint32_t k = i; k < j; k++) {
                uint32_t a = 0;
                if (!(c->ctx_keep_folded && run[k].cp != run[k].reading))
                    a = own_answer(c, em, run[k].cp);
                if (a)
                    put_answer(em->o, a);
                else
                    emit_char(c, em, text + run[k].off, run[k].len);
            }
            continue;
        }
        /* A word of another length is written whole. */
        if (!has_forms_for(t, target_len_j, i, j)) {
            for (const unsigned char *q = t; q < tend;) {
                uint32_t cp;
                int len = fj_utf8_decode(q, tend, &cp);
                size_t step = len > 0 ? (size_t)len : 1;
                emit_char(c, em, q, step);
                q += step;
            }
            continue;
        }
        for (uint32_t k = i; k < j; k++) {
            uint32_t cp;
            int len = fj_utf8_decode(t, tend, &cp);
            if (len <= 0)
                len = 1; /* not UTF-8 (a damaged image): keep the input character */
            if ((c->ctx_keep_folded && run[k].cp != run[k].reading) || (len == 1 && *t >= 0x80))
                emit_char(c, em, text + run[k].off, run[k].len);
            else
                emit_char(c, em, t, (size_t)len);
            t += len;
        }
    }
}

static void lattice(const fj_converter *c, const unsigned char *text, const ctx_char *run,
                    uint32_t n, ctx_emit *em, int at_start, int at_end, unsigned char *ends)
{
    lattice_body(c, text, run, n, em, at_start, at_end, ends, 0);
}

static void lattice_inspect(const fj_converter *c, const unsigned char *text, const ctx_char *run,
                            uint32_t n, ctx_emit *em, int at_start, int at_end)
{
    lattice_body(c, text, run, n, em, at_start, at_end, NULL, 1);
}

/* The form arc a gives run[k] (as the lattice writes it, before the later
 * steps) into u; its length, or 0 when the arc writes a word of another
 * length whole. */
static uint32_t arc_form(const fj_converter *c, const unsigned char *text, const ctx_char *run,
                         uint32_t n, const ctx_arc *a, uint32_t k, unsigned char u[4])
{
    if (c->ctx_repair) {
        /* As repair_word writes it: the word's own form for k, if any. */
        const unsigned char *fk = NULL;
        uint32_t fk_len = 0;
        if (has_forms_for(a->t, a->tl, a->i, a->j)) {
            const unsigned char *t = a->t, *tend = a->t + a->tl;
            for (uint32_t x = a->i; x <= k; x++) {
                uint32_t cp = 0;
                int len = fj_utf8_decode(t, tend, &cp);
                fk_len = len > 0 ? (uint32_t)len : 1;
                fk = cp ? t : NULL;
                t += fk_len;
            }
        }
        unsigned char w[4];
        size_t len;
        const unsigned char *f = repair_char(c, text, run, n, a->i, a->j, a->t != NULL, fk, fk_len, k, w, &len);
        if (len == 0 || len > 4)
            return 0;
        memcpy(u, f, len);
        return (uint32_t)len;
    }
    const unsigned char *src = text + run[k].off;
    uint32_t src_len = run[k].len, r;
    int kept = c->ctx_keep_folded && run[k].cp != run[k].reading;
    if (a->t && a->tl == 0 && !kept && run[k].cp >= FJ_REC_FIRST && run[k].cp < 0x10000 &&
        !((r = (uint32_t)c->stages[c->ctx_core_stage].rec[run[k].cp - FJ_REC_FIRST]) >>
              FJ_REC_SPECIAL_BIT & 1)) {
        u[0] = (unsigned char)r, u[1] = (unsigned char)(r >> 8), u[2] = (unsigned char)(r >> 16);
        return 3;
    }
    if (a->t && a->tl > 0 && !kept) {
        if (!has_forms_for(a->t, a->tl, a->i, a->j))
            return 0;
        const unsigned char *t = a->t, *tend = a->t + a->tl;
        uint32_t cp;
        int len = 1;
        for (uint32_t x = a->i; x <= k; x++) {
            len = fj_utf8_decode(t, tend, &cp);
            if (len <= 0)
                return 0;
            if (x < k)
                t += len;
        }
        if (!(len == 1 && *t >= 0x80)) {
            memcpy(u, t, (size_t)len);
            return (uint32_t)len;
        }
    }
    if (src_len > 4)
        return 0;
    memcpy(u, src, src_len);
    return src_len;
}

/* fj_inspect: for each character of the window, the forms the arcs over
 * it give and the best path's cost with each (forward cost of the arc plus
 * the cheapest way on from it to the end). Characters with more than one
 * form go to the sink. */
static void report_choices(const fj_converter *c, const unsigned char *text, const ctx_char *run,
                           uint32_t n, const ctx_arc *arcs, uint32_t narcs, const uint16_t *chosen,
                           uint32_t words, int32_t best, int at_end, fj__inspect_sink *sink)
{
    int32_t onward[FJ_CTX_ARCS_MAX];
    uint32_t first_at[FJ_CTX_RUN_MAX + 2];
    uint16_t pick[FJ_CTX_RUN_MAX];
    const int with_lm = c->ctx_lm != NULL;
    /* Arcs were added by start: first_at[i] is the first starting at i. */
    for (uint32_t i = 0, a = 0; i <= n + 1; i++) {
        while (a < narcs && arcs[a].i < i)
            a++;
        first_at[i] = a;
    }
    for (uint32_t a = narcs; a-- > 0;) {
        const ctx_arc *p = &arcs[a];
        if (p->j == n) {
            onward[a] = at_end && with_lm ? lm_cost(c, p->tail, FJ_LM_SENTENCE_END, p->backoff) : 0;
            continue;
        }
        int32_t v = INT32_MAX;
        for (uint32_t b = first_at[p->j]; b < first_at[p->j + 1]; b++) {
            if (onward[b] == INT32_MAX)
                continue;
            int32_t x = arcs[b].cost + onward[b] +
                        (with_lm ? lm_cost(c, p->tail, arcs[b].hash, p->backoff) : 0);
            if (x < v)
                v = x;
        }
        onward[a] = v;
    }
    for (uint32_t w = 0; w < words; w++)
        for (uint32_t k = arcs[chosen[w]].i; k < arcs[chosen[w]].j; k++)
            pick[k] = chosen[w];
    for (uint32_t k = 0; k < n; k++) {
        fj__choice_rec r;
        r.off = run[k].off;
        r.len = run[k].len;
        r.form_len[0] = (uint8_t)arc_form(c, text, run, n, &arcs[pick[k]], k, r.form[0]);
        if (r.form_len[0] == 0)
            continue;
        r.cost[0] = best;
        r.count = 1;
        for (uint32_t a = 0; a < first_at[k + 1]; a++) {
            const ctx_arc *p = &arcs[a];
            if (p->j <= k || p->best == INT32_MAX || onward[a] == INT32_MAX)
                continue;
            unsigned char u[4];
            uint32_t ul = arc_form(c, text, run, n, p, k, u);
            if (ul == 0)
                continue;
            int32_t v = p->best + onward[a];
            uint32_t f = 0;
            while (f < r.count && !(r.form_len[f] == ul && memcmp(r.form[f], u, ul) == 0))
                f++;
            if (f == r.count) {
                if (r.count == FJ_INSPECT_FORMS_MAX)
                    continue;
                memcpy(r.form[f], u, ul);
                r.form_len[f] = (uint8_t)ul;
                r.cost[f] = v;
                r.count++;
            } else if (f > 0 && v < r.cost[f]) {
                r.cost[f] = v;
            }
        }
        if (r.count < 2)
            continue;
        /* The others, cheapest first (insertion sort: a handful). */
        for (uint32_t x = 2; x < r.count; x++)
            for (uint32_t y = x; y > 1 && r.cost[y] < r.cost[y - 1]; y--) {
                unsigned char t[4];
                memcpy(t, r.form[y], 4), memcpy(r.form[y], r.form[y - 1], 4), memcpy(r.form[y - 1], t, 4);
                uint8_t tl = r.form_len[y];
                r.form_len[y] = r.form_len[y - 1], r.form_len[y - 1] = tl;
                int32_t tc = r.cost[y];
                r.cost[y] = r.cost[y - 1], r.cost[y - 1] = tc;
            }
        sink->put(sink, c, &r);
    }
}

/* The one-character answer for cp when its form does not depend on context
 * (three UTF-8 bytes, first lowest), or 0 when the lattice must decide. */
static inline int pair_listed(const fj_converter *c, uint32_t r1, uint32_t r2)
{
    uint32_t h = fj_bigram_hash(0, r1, r2);
    return c->ctx_pairs[h >> 3] >> (h & 7) & 1;
}

/* Runs the steps after the replaced one over one run's result. */
static void post_steps(const fj_converter *c, fj_work *w, fj_out *o)
{
    const unsigned char *cur = (const unsigned char *)w->ctx[0].buf;
    size_t cur_len = w->ctx[0].len;
    for (uint32_t k = c->ctx_post_first; k < c->stage_count; k++) {
        fj_out *dst = (k + 1 == c->stage_count) ? o : &w->ctx[1 + (k & 1)];
        if (dst != o)
            dst->len = 0;
        fj__step(&c->stages[k], cur, cur_len, 1, dst);
        cur = (const unsigned char *)dst->buf;
        cur_len = dst->len;
    }
}

/* Writes a run: each character's answer, or the lattice's choice in the
 * windows marked 3 in need. Without em->fuse the answers are looked up
 * again, without the later steps. */
static inline __attribute__((always_inline)) void
write_run(const fj_converter *c, const unsigned char *text, ctx_char *run, const uint32_t *answer,
          const unsigned char *need, uint32_t n, uint32_t suspects, ctx_emit *em, int fuse)
{
    uint32_t i = 0;
    fj_out *o = em->o;
    if (fuse && !suspects && o->len + 3 * (size_t)n <= o->cap) {
        /* No lattice here: each character's answer, straight into the buffer. */
        unsigned char *dst = (unsigned char *)o->buf + o->len;
        uint32_t unsafe = 0;
        for (; i < n; i++) {
            uint32_t a = answer[i];
            unsafe |= a;
            dst[3 * (size_t)i] = (unsigned char)a;
            dst[3 * (size_t)i + 1] = (unsigned char)(a >> 8);
            dst[3 * (size_t)i + 2] = (unsigned char)(a >> 16);
        }
        o->len += 3 * (size_t)n;
        em->unsafe |= (int)(unsafe >> FJ_CTX_UNSAFE_BIT & 1);
        return;
    }
    while (i < n) {
        if (!suspects || need[i] != 3) {
            uint32_t a = answer[i];
            if (fuse)
                em->unsafe |= (int)(a >> FJ_CTX_UNSAFE_BIT & 1);
            else
                a = own_answer(c, em, run[i].cp);
            put_answer(em->o, a);
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < n && need[j] == 3) {
            if (run[j].reading == UINT32_MAX)
                run[j].reading = reading_of(c, run[j].cp);
            j++;
        }
        if (em->sink)
            lattice_inspect(c, text, run + i, j - i, em, i == 0, j == n);
        else
            lattice(c, text, run + i, j - i, em, i == 0, j == n, NULL);
        i = j;
    }
}

/* Is the character at p (decoded as cp, k bytes) part of a run? Runs are
 * what the lattice and the later steps see; between them are barriers,
 * bytes that are not UTF-8 and ideographic description sequences, which no
 * word or key contains. e receives the character's table entry. */
static inline int in_run(const fj_converter *c, uint32_t cp, int k, uint32_t *e)
{
    if (k <= 0)
        return 0;
    if (cp >= FJ_REC_FIRST && cp < 0x10000)
        *e = c->ctx_table[cp - FJ_REC_FIRST];
    else
        *e = 1u << FJ_CTX_SPECIAL_BIT | (uint32_t)is_barrier(c, cp) << FJ_CTX_BARRIER_BIT;
    return !(*e >> FJ_CTX_BARRIER_BIT & 1) && !fj_ids_arity(cp);
}

/* ---- Regional phrases only at word boundaries (FJ_CONTEXT_PHRASE_SHIFT) ----
 * OpenCC's TWPhrases match across words: 改變量子 -> 改變數子 (變量 takes the
 * end of 改變 and the start of 量子). In the default mode such a step's key
 * of two or more characters is refused where the lattice's segmentation of
 * the source around it (FJ_CTX_REACH characters on each side) puts both of
 * its ends inside words and a word boundary inside it; the longest shorter
 * key then applies. A key with one end at a word boundary still applies:
 * the lattice's words are the mainland's, and a Taiwan term it lacks
 * (游標, 點選) is often cut at one end (看到|游|標的, 點|選中|鍵). */

/* Does the key over characters [ka, kb) fit the segmentation of the window
 * [ws, we)? ends[k - ws] says whether a word ends after character k. */
static int phrase_fits(const unsigned char *ends, uint32_t ws, uint32_t we, uint32_t ka,
                       uint32_t kb)
{
#define FJ_CTX_BOUNDARY(x) ((x) <= ws || (x) >= we || ends[(x) - 1 - ws])
    if (FJ_CTX_BOUNDARY(ka) || FJ_CTX_BOUNDARY(kb))
        return 1;
    for (uint32_t x = ka + 1; x < kb; x++)
        if (FJ_CTX_BOUNDARY(x))
            return 0; /* takes the end of one word and the start of another */
#undef FJ_CTX_BOUNDARY
    return 1;
}

/* Is the pair of readings that meets at position x of run side by side in
 * some word? When not, no word runs across x. */
static int pair_in_words(const fj_converter *c, ctx_char *run, uint32_t x)
{
    for (uint32_t k = x - 1; k <= x; k++)
        if (run[k].reading == UINT32_MAX)
            run[k].reading = reading_of(c, run[k].cp);
    uint32_t h = fj__word_pair_hash(run[x - 1].reading, run[x].reading);
    return c->ctx_word_pairs[h >> 3] >> (h & 7) & 1;
}

/* Could a word of the lattice run across position x of run[ws..we) (start
 * before x, end after it)? When none can, x is a boundary of every
 * segmentation. */
static int word_may_cross(const fj_converter *c, ctx_char *run, uint32_t ws, uint32_t we,
                          uint32_t x)
{
    const fj_matcher *m = &c->ctx_words;
    for (uint32_t i = x; i-- > ws;) {
        if (i + 1 < x && !pair_in_words(c, run, i + 1))
            break; /* a word from i or before would hold that pair */
        for (uint32_t k = i; k <= x && k < we; k++)
            if (run[k].reading == UINT32_MAX)
                run[k].reading = reading_of(c, run[k].cp);
        uint32_t e = fj__lookup(m, run[i].reading);
        if (e == 0 || e == FJ_ENTRY_IDS || (e & FJ_ENTRY_DIRECT) || !(e & FJ_ENTRY_HAS_CHILDREN))
            continue;
        const fj_node_rec *node = &m->nodes[e & FJ_ENTRY_NODE_MASK];
        uint32_t k = i + 1;
        for (; k <= x && node; k++)
            node = fj__child(m, node, run[k].reading);
        if (!node)
            continue; /* none from i; one from further back still may */
        return 1;     /* a key goes on past x (a word, or a longer one's prefix) */
    }
    return 0;
}

/* Segments run[ws..we) with the lattice (its forms go to scratch and are
 * dropped) and says whether the key over [ka, kb) fits. */
static int window_fits(const fj_converter *c, const unsigned char *text, ctx_char *run,
                       uint32_t ws, uint32_t we, uint32_t ka, uint32_t kb, fj_out *scratch)
{
    /* Both ends must be inside words: cheap tests first. */
    if (ka <= ws || kb >= we || !pair_in_words(c, run, ka) || !pair_in_words(c, run, kb) ||
        !word_may_cross(c, run, ws, we, ka) || !word_may_cross(c, run, ws, we, kb))
        return 1;
    unsigned char ends[FJ_CTX_RUN_MAX];
    for (uint32_t k = ws; k < we; k++)
        if (run[k].reading == UINT32_MAX)
            run[k].reading = reading_of(c, run[k].cp);
    ctx_emit em = {scratch, 0, 0, 0, NULL};
    scratch->len = 0;
    lattice(c, text, run + ws, we - ws, &em, ws == 0, 0, ends);
    scratch->len = 0;
    return phrase_fits(ends, ws, we, ka, kb);
}

/* Decodes the run characters of text[from, to) into run (at most max);
 * their offsets are from text. Returns how many. */
static uint32_t decode_chars(const unsigned char *text, const unsigned char *from,
                             const unsigned char *to, ctx_char *run, uint32_t max)
{
    uint32_t n = 0;
    for (const unsigned char *p = from; p < to && n < max;) {
        uint32_t cp = 0;
        int k = fj_utf8_decode_fast(p, to, &cp);
        if (k <= 0)
            break;
        run[n].cp = cp;
        run[n].reading = UINT32_MAX;
        run[n].off = (uint32_t)(p - text);
        run[n].len = (uint32_t)k;
        n++;
        p += k;
    }
    return n;
}

/* Characters in [p, q). */
static uint32_t count_chars(const unsigned char *p, const unsigned char *q)
{
    uint32_t n = 0;
    for (; p < q; p++)
        n += (*p & 0xC0) != 0x80;
    return n;
}

/* A step before the replaced one (tw2sp's TWPhrasesRev): its input is the
 * source itself, segmented around the key. */
typedef struct pre_guard {
    const fj_converter *c;
    const unsigned char *text, *end; /* the step's input */
    fj_out *scratch;
} pre_guard;

/* The start of the run character before p in [text, p), or NULL. */
static const unsigned char *run_char_before(const fj_converter *c, const unsigned char *text,
                                            const unsigned char *p)
{
    const unsigned char *q = p;
    while (q > text && p - q < 4) {
        q--;
        if ((*q & 0xC0) != 0x80)
            break;
    }
    uint32_t cp = 0, e;
    int k = q < p ? fj_utf8_decode_fast(q, p, &cp) : 0;
    return k > 0 && q + k == p && in_run(c, cp, k, &e) ? q : NULL;
}

static int pre_allow(void *ctx, const unsigned char *a, const unsigned char *b)
{
    const pre_guard *g = ctx;
    const unsigned char *from = a, *to = b, *q;
    for (int i = 0; i < FJ_CTX_REACH && (q = run_char_before(g->c, g->text, from)) != NULL; i++)
        from = q;
    for (int i = 0; i < FJ_CTX_REACH && to < g->end; i++) {
        uint32_t cp = 0, e;
        int k = fj_utf8_decode_fast(to, g->end, &cp);
        if (!in_run(g->c, cp, k, &e))
            break;
        to += k;
    }
    ctx_char run[FJ_CTX_RUN_MAX];
    uint32_t n = decode_chars(g->text, from, to, run, FJ_CTX_RUN_MAX);
    uint32_t ka = count_chars(from, a), kb = ka + count_chars(a, b);
    if (kb > n || to - from > (ptrdiff_t)(4 * FJ_CTX_RUN_MAX))
        return 1; /* longer than a lattice run: as in the compatible mode */
    return window_fits(g->c, g->text, run, 0, n, ka, kb, g->scratch);
}

/* A step after it (s2twp's TWPhrases): its input is the lattice's output
 * for a batch of runs. A run's characters map to its output's one to one
 * when it wrote as many characters as it read; where a word of another
 * length made that untrue, the run's phrases apply as in the compatible
 * mode. A key never spans two runs, as when the step ran per run. */
typedef struct batch_run {
    uint32_t out_start, out_end; /* in the batch */
    uint32_t src_start, src_end; /* in the source text */
    uint32_t n;                  /* characters read */
    int one_to_one;              /* as many written; -1 until asked */
    int by_three;                /* every character read and written is 3 bytes */
} batch_run;

#define FJ_CTX_BATCH_RUNS 256u
#define FJ_CTX_BATCH_BYTES 65536u

typedef struct post_guard {
    const fj_converter *c;
    const unsigned char *text;  /* the source */
    const unsigned char *batch; /* the step's input */
    batch_run *runs;
    uint32_t run_count;
    fj_out *scratch;
    /* Where the last question was: run `at_run`, its character at_char,
     * at byte at_out of the batch and at_src of the source. The step asks
     * in order, mostly. */
    uint32_t at_run, at_char, at_out, at_src;
} post_guard;

/* Moves g's place in run r forward by one character in the batch and the
 * source. */
static inline void post_advance(post_guard *g, const batch_run *r)
{
    const unsigned char *b = g->batch, *t = g->text;
    do
        g->at_out++;
    while (g->at_out < r->out_end && (b[g->at_out] & 0xC0) == 0x80);
    do
        g->at_src++;
    while (g->at_src < r->src_end && (t[g->at_src] & 0xC0) == 0x80);
    g->at_char++;
}

static int post_allow(void *ctx, const unsigned char *a, const unsigned char *b)
{
    post_guard *g = ctx;
    uint32_t ao = (uint32_t)(a - g->batch), bo = (uint32_t)(b - g->batch);
    batch_run *r = g->at_run < g->run_count ? &g->runs[g->at_run] : NULL;
    if (!r || ao < g->at_out || ao >= r->out_end) {
        uint32_t lo = 0, hi = g->run_count;
        while (lo < hi) { /* the first run ending after ao */
            uint32_t mid = (lo + hi) / 2;
            if (g->runs[mid].out_end <= ao)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == g->run_count || g->runs[lo].out_start > ao)
            return 1; /* not in a run (no key is) */
        r = &g->runs[lo];
        g->at_run = lo;
        g->at_char = 0;
        g->at_out = r->out_start;
        g->at_src = r->src_start;
    }
    if (bo > r->out_end)
        return 0; /* across a cut between runs */
    uint32_t ka, kb;
    const unsigned char *at; /* the source of character ka */
    if (r->by_three) {
        ka = (ao - r->out_start) / 3;
        kb = ka + (bo - ao) / 3;
        at = g->text + r->src_start + 3 * (size_t)ka;
    } else {
        if (r->one_to_one < 0)
            r->one_to_one = count_chars(g->batch + r->out_start, g->batch + r->out_end) == r->n;
        if (!r->one_to_one)
            return 1;
        while (g->at_out < ao)
            post_advance(g, r);
        ka = g->at_char;
        kb = ka + count_chars(a, b);
        at = g->text + g->at_src;
    }
    if (ka == 0 || kb >= r->n)
        return 1; /* an end at the run's edge: a word boundary */
    /* Cheap test first: both ends must be inside words, so the pairs of
     * source characters that meet there must be side by side in some word. */
    const unsigned char *src_end = g->text + r->src_end;
    ctx_char pair[2];
    const unsigned char *before = at - 1;
    while ((*before & 0xC0) == 0x80)
        before--;
    if (decode_chars(g->text, before, src_end, pair, 2) != 2 || !pair_in_words(g->c, pair, 1))
        return 1;
    const unsigned char *last = at;
    for (uint32_t k = ka; k + 1 < kb; k++) {
        last++;
        while ((*last & 0xC0) == 0x80)
            last++;
    }
    if (decode_chars(g->text, last, src_end, pair, 2) != 2 || !pair_in_words(g->c, pair, 1))
        return 1;
    uint32_t ws = ka > FJ_CTX_REACH ? ka - FJ_CTX_REACH : 0;
    uint32_t we = kb + FJ_CTX_REACH < r->n ? kb + FJ_CTX_REACH : r->n;
    /* The window's first character in the source: ka - ws back. */
    const unsigned char *from = at;
    for (uint32_t k = ws; k < ka; k++) {
        from--;
        while ((*from & 0xC0) == 0x80)
            from--;
    }
    ctx_char run[2 * FJ_CTX_REACH + FJ_CTX_RUN_MAX];
    uint32_t got = decode_chars(g->text, from, src_end, run, we - ws);
    if (got != we - ws)
        return 1;
    return window_fits(g->c, g->text, run, 0, we - ws, ka - ws, kb - ws, g->scratch);
}

/* Runs the steps after the replaced one over a batch (w->ctx[0]), the first
 * one guarded, into o; empties the batch. */
static void flush_batch(const fj_converter *c, fj_work *w, post_guard *g, fj_out *o)
{
    fj_out *batch = &w->ctx[0];
    const unsigned char *cur = (const unsigned char *)batch->buf;
    size_t cur_len = batch->len;
    if (cur_len) {
        g->batch = cur;
        g->scratch = &w->ctx[2];
        fj_key_guard guard = {post_allow, g};
        for (uint32_t k = c->ctx_post_first; k < c->stage_count; k++) {
            fj_out *dst = k + 1 == c->stage_count ? o
                          : cur == (const unsigned char *)w->ctx[1].buf ? &w->ctx[2]
                                                                        : &w->ctx[1];
            if (dst != o)
                dst->len = 0;
            if (k == c->ctx_post_first)
                fj__step_guarded(&c->stages[k], cur, cur_len, dst, &guard);
            else
                fj__step(&c->stages[k], cur, cur_len, 1, dst);
            cur = (const unsigned char *)dst->buf;
            cur_len = dst->len;
        }
    }
    batch->len = 0;
    g->run_count = 0;
    g->at_run = UINT32_MAX;
}

/* The script-conversion step, and the steps after it, over complete text.
 * The text is cut into runs at barriers and every FJ_CTX_RUN_MAX characters
 * (points that depend on the text alone). In a run, a character goes through
 * the lattice only when some word could give it another form than its own
 * answer: it is marked ambiguous and a neighbouring pair occurs in such a
 * word. The lattice then sees FJ_CTX_REACH characters on each side. */
int fj__damage_observe(const fj_converter *c, uint32_t cp, uint32_t *share)
{
    if (!c->ctx_repair || !c->ctx_damage_w || cp < FJ_REC_FIRST || cp >= 0x10000 ||
        c->ctx_damage_w[cp - FJ_REC_FIRST] == 0)
        return 0;
    uint32_t e = c->ctx_table[cp - FJ_REC_FIRST];
    const int16_t *dw = c->dict->image.damage_weights;
    uint32_t r = reading_of(c, cp);
    *share = dw && r < 0x10000 ? (uint32_t)dw[4 * r + 2] : 1320; /* the average reading's */
    return (e >> FJ_CTX_FIRST_FORM_BIT & 1) ? 1 : (e >> FJ_CTX_OTHER_FORM_BIT & 1) ? 2 : 0;
}

/* Does repair converter c write cp as itself wherever it stands? Only for a
 * converter whose later steps fold into its table (ctx_fused): cp is then
 * no suspect, its answer in a run and between runs is its own bytes, and it
 * cannot start a longer key of a partly folded step. */
int fj__ctx_keeps(const fj_converter *c, uint32_t cp)
{
    if (c->engine != &fj__context_engine || !c->ctx_repair || !c->ctx_fused ||
        c->has_segmentation || cp >= 0x10000 || (cp >= 0xD800 && cp <= 0xDFFF) ||
        fj_ids_arity(cp))
        return 0;
    if (c->has_normalization && (c->norm_always || fj__lookup(&c->normalization, cp) != 0))
        return 0;
    if (cp < FJ_REC_FIRST)
        return is_barrier(c, cp); /* between runs, written as it is */
    unsigned char u[4] = {0, 0, 0, 0};
    fj_utf8_encode(cp, u);
    uint32_t own = u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16;
    uint32_t e = c->ctx_table[cp - FJ_REC_FIRST];
    const uint32_t moves = 1u << FJ_CTX_AMBIGUOUS_BIT | 1u << FJ_CTX_SPECIAL_BIT |
                           1u << FJ_CTX_UNSAFE_BIT | 1u << FJ_CTX_OTHER_FORM_BIT;
    if ((c->ctx_post[cp - FJ_REC_FIRST] & 0xFFFFFFu) != own ||
        (c->ctx_fused == 2 && (c->ctx_unsafe[cp >> 3] >> (cp & 7) & 1)))
        return 0;
    return (e >> FJ_CTX_BARRIER_BIT & 1) || (!(e & moves) && (e & 0xFFFFFFu) == own);
}

int fj__ctx_other_form(const fj_converter *c, uint32_t cp)
{
    return c->ctx_repair && cp >= FJ_REC_FIRST && cp < 0x10000 &&
           (c->ctx_table[cp - FJ_REC_FIRST] >> FJ_CTX_OTHER_FORM_BIT & 1);
}

static void context_step(const fj_converter *c, const unsigned char *text, size_t len, fj_out *o,
                         fj_work *w)
{
    ctx_char run[FJ_CTX_RUN_MAX];
    uint32_t answer[FJ_CTX_RUN_MAX];
    unsigned char need[FJ_CTX_RUN_MAX];
    uint16_t pending[FJ_CTX_RUN_MAX]; /* where need is not 0, in order */
    const unsigned char *p = text, *end = text + len;
    int direct = c->ctx_fused == 1 || c->ctx_post_first == c->stage_count;
    if (w->inspect) {
        w->inspect->seen = text;
        w->inspect->seen_len = len;
    }
    fj_out *ro = direct ? o : &w->ctx[0]; /* where a run's result goes */
    /* With a guarded step after this one, the runs' results (and what lies
     * between them) are gathered in batches that go through it together. */
    int batched = c->ctx_guard_post;
    batch_run runs[FJ_CTX_BATCH_RUNS];
    post_guard batch = {c, text, NULL, runs, 0, NULL, UINT32_MAX, 0, 0, 0};
    if (batched)
        ro->len = 0;
    ctx_emit between = {batched ? ro : o, c->ctx_fused != 0, 0, 0, NULL};
    while (p < end) {
        uint32_t n = 0, suspects = 0, seen = 0, npending = 0;
        while (p < end && n < FJ_CTX_RUN_MAX) {
            uint32_t cp = 0, e = 0;
            int k = fj_utf8_decode_fast(p, end, &cp);
            if (!in_run(c, cp, k, &e))
                break;
            run[n].cp = cp;
            /* A character without a fold entry reads as itself; the others
             * are looked up when needed. */
            run[n].reading = (e >> FJ_CTX_FOLDED_BIT & 1) || !(cp >= FJ_REC_FIRST && cp < 0x10000)
                                 ? UINT32_MAX
                                 : cp;
            run[n].off = (uint32_t)(p - text);
            run[n].len = (uint32_t)k;
            answer[n] = e & (0xFFFFFFu | 1u << FJ_CTX_UNSAFE_BIT);
            need[n] = (e >> FJ_CTX_SPECIAL_BIT & 1) ? 2 : (e >> FJ_CTX_AMBIGUOUS_BIT & 1);
            suspects |= need[n];
            pending[npending] = (uint16_t)n;
            npending += need[n] != 0;
            seen |= e;
            n++;
            p += k;
        }
        if (n == 0) {
            /* Between runs: the same in every step, except that a later
             * step folded into the table may map a barrier character. An
             * ideographic description sequence passes through whole, as in
             * the compatible pipeline. */
            if (*p < 0x80) {
                /* ASCII, a barrier (else a run would hold it): with the
                 * barriers after it, as they are, at once. */
                const unsigned char *q = p + 1;
                while (q < end && *q < 0x80 && is_barrier(c, *q))
                    q++;
                fj__out_put_run(between.o, (const char *)p, (size_t)(q - p));
                p = q;
                continue;
            }
            uint32_t cp;
            int k = fj_utf8_decode(p, end, &cp);
            size_t unit = k > 0 ? (size_t)k : 1;
            if (k > 0 && fj_ids_arity(cp)) {
                size_t ids;
                if (fj_ids_parse(p, end, &ids) == FJ_IDS_COMPLETE)
                    unit = ids;
                if (batched)
                    flush_batch(c, w, &batch, o);
                fj__out_put(o, (const char *)p, unit);
            } else if (k > 0) {
                emit_char(c, &between, p, unit);
            } else {
                fj__out_put(between.o, (const char *)p, unit);
            }
            p += unit;
            continue;
        }
        if (!direct && !batched)
            ro->len = 0;
        if (suspects) {
            /* need: 2 the lattice must decide; 1 ambiguous, check its pairs.
             * Only the characters in `pending` are looked at; those left at
             * 2 stay there, in order. */
            uint32_t undecided = 0;
            for (uint32_t j = 0; j < npending; j++) {
                uint32_t i = pending[j];
                if (need[i] == 1) {
                    uint32_t lo = i ? i - 1 : 0, hi = i + 1 < n ? i + 1 : i;
                    for (uint32_t k = lo; k <= hi; k++)
                        if (run[k].reading == UINT32_MAX)
                            run[k].reading = reading_of(c, run[k].cp);
                    need[i] =
                        (i > 0 && pair_listed(c, run[i - 1].reading, run[i].reading)) ||
                                (i + 1 < n && pair_listed(c, run[i].reading, run[i + 1].reading))
                            ? 2
                            : 0;
                }
                if (need[i] == 2)
                    pending[undecided++] = (uint16_t)i;
            }
            /* Widen each undecided character into its window: need[k] = 3
             * marks window members; whether any window is left. */
            suspects = undecided != 0;
            uint32_t marked = 0; /* need[k] for k < marked is final */
            for (uint32_t j = 0; j < undecided; j++) {
                uint32_t i = pending[j];
                uint32_t lo = i > FJ_CTX_REACH ? i - FJ_CTX_REACH : 0;
                uint32_t hi = i + FJ_CTX_REACH + 1 < n ? i + FJ_CTX_REACH + 1 : n;
                for (uint32_t k = lo > marked ? lo : marked; k < hi; k++)
                    need[k] = 3;
                marked = hi;
            }
        }
        ctx_emit em = {ro, c->ctx_fused != 0, 0, w->repair_bias, w->inspect};
        /* A run with a character already in the target script and none
         * that exists only in the source script is written in the target
         * script: every character keeps its form (台 stays 台 in 平台上).
         * Repair leaves a run alone that holds Simplified-only characters. */
        int as_written = (c->ctx_keep_folded && (seen >> FJ_CTX_FOLDED_BIT & 1) &&
                          !(seen >> FJ_CTX_SOURCE_BIT & 1)) ||
                         (c->ctx_repair && (seen >> FJ_CTX_SOURCE_BIT & 1));
        if (batched) {
            /* The table holds this step's answers alone (not fused). */
            batch_run *r = &runs[batch.run_count++];
            r->out_start = (uint32_t)ro->len;
            r->src_start = run[0].off;
            r->src_end = run[n - 1].off + run[n - 1].len;
            r->n = n;
            r->one_to_one = -1;
            /* Without the lattice every character is a 3-byte one with a
             * 3-byte answer (the others are marked for the lattice). */
            r->by_three = !suspects && !as_written;
            em.fuse = 0;
            if (as_written) {
                /* Every character as written: the run's bytes at once. */
                fj__out_put_run(ro, (const char *)text + r->src_start, r->src_end - r->src_start);
            } else {
                write_run(c, text, run, answer, need, n, suspects, &em, 1);
            }
            r->out_end = (uint32_t)ro->len;
            if (batch.run_count == FJ_CTX_BATCH_RUNS || ro->len >= FJ_CTX_BATCH_BYTES)
                flush_batch(c, w, &batch, o);
            continue;
        }
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                if (!em.unsafe && em.fuse)
                    break;
                /* Without folding; for a partly folded step that may match
                 * here, the run is redone and that step runs over it. */
                ro->len = 0;
                em.fuse = 0;
                em.sink = NULL; /* the same choices again */
            }
            if (as_written) {
                for (uint32_t i = 0; i < n; i++)
                    emit_char(c, &em, text + run[i].off, run[i].len);
            } else if (em.fuse) {
                write_run(c, text, run, answer, need, n, suspects, &em, 1);
            } else {
                write_run(c, text, run, answer, need, n, suspects, &em, 0);
            }
        }
        if (!direct) {
            if (em.fuse)
                fj__out_put_run(o, ro->buf, ro->len);
            else
                post_steps(c, w, o);
        }
    }
    if (batched)
        flush_batch(c, w, &batch, o);
}

/* The end of the last complete run or unit in text[0..len): where converting
 * can stop without more input. Mirrors context_step's cuts. */
static size_t last_boundary(const fj_converter *c, const unsigned char *text, size_t len)
{
    const unsigned char *p = text, *end = text + len, *cut = text;
    uint32_t n = 0;
    while (p < end) {
        uint32_t cp = 0, e;
        int k = fj_utf8_decode_fast(p, end, &cp);
        if (k == FJ_U8_INCOMPLETE)
            break;
        if (in_run(c, cp, k, &e)) {
            p += k;
            if (++n == FJ_CTX_RUN_MAX) {
                cut = p;
                n = 0;
            }
            continue;
        }
        size_t unit = k > 0 ? (size_t)k : 1;
        if (k > 0 && fj_ids_arity(cp)) {
            size_t ids;
            int st = fj_ids_parse(p, end, &ids);
            if (st == FJ_IDS_INCOMPLETE)
                break;
            if (st == FJ_IDS_COMPLETE)
                unit = ids;
        }
        p += unit;
        cut = p;
        n = 0;
    }
    return (size_t)(cut - text);
}

/* Where a stream may stop: after the last newline when that is safe to find
 * from the end (no ideographic description sequence anywhere, in which a
 * newline could be an operand), else by last_boundary. A newline is a
 * barrier, so a run ends there whatever came before. */
static size_t stream_cut(const fj_converter *c, const unsigned char *text, size_t len)
{
    if (len == 0)
        return 0; /* text may be NULL */
    if (is_barrier(c, '\n')) {
        int ids = 0; /* U+2FF0..U+2FFF are E2 BF B0..BF */
        for (const unsigned char *q = text, *end = text + len;
             (q = memchr(q, 0xE2, (size_t)(end - q))) != NULL && !ids; q++)
            ids = q + 1 < end && q[1] == 0xBF;
        size_t i = len;
        while (!ids && i > 0 && text[i - 1] != '\n')
            i--;
        if (!ids && i > 0)
            return i;
    }
    return last_boundary(c, text, len);
}

/* Profiles with steps before the replaced one: those run over chunks cut
 * after barriers, then the context step over each chunk. */
static void pre_steps(const fj_converter *c, const unsigned char *text, size_t len, fj_work *w,
                      const unsigned char **result, size_t *result_len)
{
    const unsigned char *cur = text;
    size_t cur_len = len;
    for (uint32_t k = 0; k < c->ctx_core_stage; k++) {
        fj_out *dst = &w->stage[k & 1];
        dst->len = 0;
        if (c->ctx_phrase_stages >> k & 1) {
            pre_guard g = {c, cur, cur + cur_len, &w->ctx[2]};
            fj_key_guard guard = {pre_allow, &g};
            fj__step_guarded(&c->stages[k], cur, cur_len, dst, &guard);
            cur = (const unsigned char *)dst->buf;
            cur_len = dst->len;
            continue;
        }
        fj__step(&c->stages[k], cur, cur_len, 1, dst);
        cur = (const unsigned char *)dst->buf;
        cur_len = dst->len;
    }
    *result = cur;
    *result_len = cur_len;
}

static void context_chunk(const fj_converter *c, const unsigned char *text, size_t len, fj_out *o,
                          fj_work *w)
{
    const unsigned char *cur;
    size_t cur_len;
    pre_steps(c, text, len, w, &cur, &cur_len);
    const unsigned char *src = NULL;
    size_t src_len = 0;
    if (w->inspect) {
        /* The lattice sees the steps' text: choices are placed through this
         * one, unless it is itself a rewriting (then they cannot be). */
        src = w->inspect->src;
        src_len = w->inspect->src_len;
        w->inspect->src = src ? NULL : text;
        w->inspect->src_len = len;
    }
    context_step(c, cur, cur_len, o, w);
    if (w->inspect) {
        w->inspect->src = src;
        w->inspect->src_len = src_len;
    }
}

static size_t convert_context(const fj_converter *c, const unsigned char *text, size_t len,
                              int final, fj_out *o, fj_work *w)
{
    if (c->ctx_core_stage == 0) {
        /* The runs depend on the text alone, so any run boundary is a safe
         * place to stop: streamed output equals one-shot output. */
        size_t cut = final ? len : stream_cut(c, text, len);
        context_step(c, text, cut, o, w);
        return cut;
    }
    const unsigned char *p = text, *end = text + len, *start = text, *cut = NULL;
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
            unit = (size_t)n;
            barrier = is_barrier(c, cp);
            if (fj_ids_arity(cp)) {
                /* An ideographic description sequence is one unit, as in
                 * the compatible pipeline: never cut inside it. */
                size_t ids;
                int st = fj_ids_parse(p, end, &ids);
                if (st == FJ_IDS_COMPLETE)
                    unit = ids;
                else if (st == FJ_IDS_INCOMPLETE && !final)
                    break;
                barrier = 0;
            }
        }
        p += unit;
        if (barrier) {
            cut = p;
            if ((size_t)(p - start) >= FJ_CTX_CHUNK) {
                context_chunk(c, start, (size_t)(p - start), o, w);
                start = p;
                cut = NULL;
            }
        } else if ((size_t)(p - (cut ? cut : start)) >= FJ_CTX_RUN_CAP) {
            context_chunk(c, start, (size_t)(p - start), o, w);
            start = p;
            cut = NULL;
        }
    }
    if (final) {
        if (p > start)
            context_chunk(c, start, (size_t)(p - start), o, w);
        return (size_t)(p - text);
    }
    if (cut) {
        context_chunk(c, start, (size_t)(cut - start), o, w);
        return (size_t)(cut - text);
    }
    return (size_t)(start - text);
}

const fj_engine fj__context_engine = {"context", convert_context};
