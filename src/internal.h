/* Library-internal types shared by the pipeline stages. */
#ifndef FJ_INTERNAL_H
#define FJ_INTERNAL_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../include/fanjian.h"
#include "image_format.h"


/* The validated sections of a mapped image. */
typedef struct fj_image {
    const unsigned char *base;
    size_t size;
    const char *strings;
    uint32_t strings_size;
    const fj_node_rec *nodes;
    uint32_t node_count;
    const uint32_t *edges;
    const uint32_t *blocks;
    uint32_t block_count;
    const uint32_t *level1;
    uint32_t level1_count;
    const fj_matcher_rec *matchers;
    uint32_t matcher_count;
    const fj_profile_rec *profiles;
    uint32_t profile_count;
    const unsigned char *barriers;
    uint32_t barrier_count;
    const fj_srcdict_rec *srcdicts;
    uint32_t srcdict_count;
    const fj_srcentry_rec *srcentries;
    uint32_t srcentry_count;
    const unsigned char *bigrams, *pairkeys, *trigrams, *changers, *inner, *chkeys;
    const uint64_t *edge_hash; /* the matchers' edge tables, edge_slots in all */
    uint32_t edge_slots;
    const uint64_t *records; /* RECS: record_tables tables of FJ_REC_COUNT */
    uint32_t record_tables;
    const fj_context_rec *contexts; /* one per profile */
    const unsigned char *ambiguous, *ambiguous_pairs, *source_only;
    uint32_t ambiguous_count, source_only_count;
    const uint32_t *lm_slots; /* LMTB, 1 << lm_bits slots; lm_bits 0: none */
    const int16_t *damage_weights; /* DMGW, 0x10000 quadruples, or NULL */
    const char *sources;           /* SRCS, or NULL */
    uint32_t sources_size, source_count;
    uint32_t lm_bits;
    const unsigned char *chunk_sums; /* u64 per chunk of the body */
    uint32_t chunk_count;
    uint64_t body; /* where the body starts */
} fj_image;

/* Parses and validates an image in memory. */
fj_status fj__image_load(fj_image *img, const unsigned char *data, size_t size, fj_error *error);

/* The profile a name means: "s2twp", "s2twp.json" and ".../s2twp.json" all
 * give "s2twp" (truncated to size - 1 bytes). */
void fj__profile_key(const char *name, char *key, size_t size);

/* For the dictionary tool: the image behind an opened dictionary. */
const fj_image *fj__dict_image(const fj_dict *dict);
/* Nonzero when any of the nodes has a value past STRS (strings_size bytes)
 * or children outside [node_first, node_end) (node_first <= node_end). */
uint32_t fj__nodes_out_of_range(const fj_node_rec *nodes, uint32_t count, uint32_t strings_size,
                                uint32_t node_first, uint32_t node_end);

/* Allocation through the caller's allocator. */
void *fj__alloc(const fj_allocator *a, size_t n);
void *fj__realloc(const fj_allocator *a, void *p, size_t old_n, size_t new_n);
void fj__free(const fj_allocator *a, void *p, size_t n);

void fj__set_error(fj_error *error, fj_status code, size_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A longest-match dictionary: a code point table for the first character and
 * a trie below it. */
typedef struct fj_matcher {
    const uint32_t *level1;
    const uint32_t *blocks;
    const fj_node_rec *nodes;
    const uint32_t *edges;
    const char *strings;
    const unsigned char *bigrams, *pairkeys, *trigrams;
    const unsigned char *changers, *inner, *chkeys; /* FJ_SEC_CHANGERS, _INNER, _CHKEYS */
    const uint64_t *edge_hash;
    uint32_t edge_hash_mask;
    uint32_t flags;
    uint32_t max_key_chars;
    uint32_t salt; /* the matcher's index, for fj_bigram_hash */
    uint64_t ascii_starts[2]; /* bit c: some key starts with ASCII character c */
    uint64_t ascii_stops[2];  /* bit c: c is not itself one character at a time (see step.c) */
    /* The fast loop's per-character records (image_format.h, FJ_REC_*):
     * the image's table (RECS), or one built at converter open, for the
     * conversion steps; NULL elsewhere. */
    const uint64_t *rec;
} fj_matcher;

#define FJ_REC_NO_CP 0xFFFFFFFFu
#define FJ_CTX_AMBIGUOUS_BIT 24 /* the character's form may depend on context */
#define FJ_CTX_SPECIAL_BIT 25   /* no three-byte answer: the lattice decides */
#define FJ_CTX_BARRIER_BIT 26   /* in no key or word */
#define FJ_CTX_FOLDED_BIT 27    /* the fold table gives it another reading */
#define FJ_CTX_UNSAFE_BIT 28    /* its answer may start a longer key of the later step */
#define FJ_CTX_SOURCE_BIT 29    /* it exists only in the source script */
/* Repair: the character is a form of a reading that has several, its
 * reading's default form (the one a careless converter writes) or another. */
#define FJ_CTX_FIRST_FORM_BIT 30
#define FJ_CTX_OTHER_FORM_BIT 31 /* "the next character is not simple": forces the slow path */

struct fj_dict {
    fj_image image;
    fj_allocator allocator;
    int mapped; /* map was mmap'd by us */
    void *map;
    size_t map_size;
    /* What has been checked (src/image.c): per chunk, per matcher, then
     * the source entries. */
    _Atomic unsigned char *checked;
    size_t checked_len;
};

/* Before a part of the image is first read: checks the chunks that hold
 * the len bytes at p (inside the body) against their sums. */
fj_status fj__dict_require(const fj_dict *d, const void *p, size_t len, fj_error *error);
/* Before matcher id is first used: its slices' sums and structure. */
fj_status fj__dict_use_matcher(const fj_dict *d, uint32_t id, fj_error *error);
/* For fjdict: the records of matcher id as a converter would build them
 * without the image's table (FJ_REC_COUNT of them into out). */
fj_status fj__matcher_build_records(const fj_dict *d, uint32_t id, uint64_t *out,
                                    fj_error *error);
/* Before the source entries (SRCE) are first read. */
fj_status fj__dict_use_sources(const fj_dict *d, fj_error *error);

typedef struct fj_engine fj_engine;
typedef struct fj_overlay fj_overlay;

struct fj_script_table;

/* What fj_converter_open_options puts around the conversion (see
 * fj_converter.pipe). */
typedef struct fj_stages {
    const fj_clean *clean; /* NULL: no clean-up */
    fj_quotes quotes;      /* resolved: never FJ_QUOTES_PROFILE */
    unsigned punct;        /* FJ_PUNCT_* */
    int strict_utf8;       /* FJ_UTF8_STRICT */
    int identity;          /* no script conversion: the text passes as it is */
} fj_stages;


/* fj_stream_new without the UTF-8 check even where the converter asks for
 * it (one-shot conversion checks the whole input first). */
fj_status fj__stream_open(const fj_converter *conv, fj_write_fn write, void *write_ctx,
                          int check_utf8, fj_stream **out);

struct fj_converter {
    const fj_dict *dict;
    fj_overlay *overlay; /* owned; NULL: no user entries or markup */
    /* Target-only conversion (fj_converter_open_target): the converters for
     * Traditional [0] and Simplified [1] clauses (owned; [1] NULL where such
     * clauses stay as written) and the script table of fj_detect (owned). */
    fj_converter *to_sub[2];
    struct fj_script_table *to_script;
    unsigned char *to_class; /* 0x10000 bytes, owned: script | FJ_TO_* */
    /* Damaged Traditional clauses go through Simplified instead: to_rt[0]
     * (t2s, tw2s, hk2s) then to_rt[1] (owned; NULL: no round trip). With
     * to_repair_only every clause is the Traditional one's (a repair
     * profile in auto mode). */
    fj_converter *to_rt[2];
    int to_repair_only;
    const fj_engine *engine;
    fj_allocator allocator;
    const fj_profile_rec *profile;
    unsigned flags;
    int has_normalization, has_segmentation, seg_is_step1;
    uint32_t stage_count;
    fj_matcher normalization, segmentation, stages[FJ_MAX_STAGES];
    uint64_t *recs[FJ_MAX_STAGES]; /* owned: stages[k].rec when the image has none */
    const unsigned char *barrier; /* bit set: the BMP character is in no key */
    /* Two-byte UTF-8 prefixes of the characters normalization changes (and of
     * IDS operators): text without any of them skips the normalization pass. */
    unsigned char norm_prefix[65536 / 8];
    unsigned char norm_leads[256]; /* the distinct first bytes among norm_prefix */
    unsigned char norm_lo[256], norm_hi[256]; /* per lead: range of second bytes */
    unsigned norm_lead_count;
    int norm_always; /* normalization has ASCII keys: never skip the pass */
    /* Default mode (fj__context_engine): the step replaced by the lattice. */
    uint32_t ctx_core_stage;
    int ctx_has_fold, ctx_keep_folded;
    /* Repair (fj_context_rec): the lattice runs before the steps from
     * ctx_post_first on, and only ctx_always / ctx_in_words characters change. */
    int ctx_repair;
    int ctx_repair_thorough; /* FJ_REPAIR_THOROUGH: the list's unpreferred spellings change */
    uint32_t ctx_post_first;
    const unsigned char *ctx_always, *ctx_in_words;
    fj_matcher ctx_defaults;
    fj_matcher ctx_attested; /* repair: words kept as written; empty when none */
    int ctx_has_attested;
    fj_matcher ctx_fold, ctx_words;
    uint16_t *ctx_rules; /* repair: 0x10000 role sets (FJ_RULE_*), owned */
    unsigned char ctx_week_form[5], ctx_li_form[5]; /* repair: UTF-8, from the rules */
    /* Repair: what each character adds to the damage estimate (FJ_REC_COUNT
     * entries, owned; see mark_forms). */
    int16_t *ctx_damage_w;
    const uint32_t *ctx_lm; /* the language model's slots, or NULL (image_format.h) */
    uint32_t ctx_lm_bits;
    /* The region's forms (fj_context_rec.overrides), when ctx_has_overrides. */
    fj_matcher ctx_overrides;
    int ctx_has_overrides;
    const unsigned char *ctx_ambiguous; /* bit set: the BMP character's form depends on context */
    const unsigned char *ctx_pairs;     /* see fj_context_rec */
    /* Per three-byte code point in [FJ_REC_FIRST, 0x10000): the character's
     * own answer through the replaced step and, when ctx_fused, the steps
     * after it (3 UTF-8 bytes, first lowest) with FJ_CTX_* flags; and the
     * steps after it alone (ctx_post). Owned. */
    uint32_t *ctx_table, *ctx_post;
    /* 1: the steps after the replaced one map single characters only, and
     * are folded into ctx_table. 2: one later step whose longer keys matter
     * only where a character of ctx_unsafe occurs: folded in, and a run
     * that produces such a character is redone through that step. */
    int ctx_fused;
    unsigned char *ctx_unsafe; /* FJ_BARRIER_BYTES, owned; with ctx_fused 2 */
    /* Bit k: step k's phrases do not take the end of one word and the start
     * of the next (FJ_CONTEXT_PHRASE_SHIFT). ctx_guard_post: the first step
     * after the replaced one is such a step; the runs' results then go
     * through it in batches, unfused. */
    uint32_t ctx_phrase_stages;
    int ctx_guard_post;
    /* With ctx_phrase_stages: FJ_BIGRAM_BITS bits (fj__word_pair_hash) of
     * the reading pairs side by side inside some word of ctx_words. Owned. */
    unsigned char *ctx_word_pairs;
    /* fj_converter_open_options: the stages around the conversion (owned),
     * or NULL for a plain converter. fj_convert, fj_convert_alloc and
     * fj_stream_new test it once per call; the engines never look at it.
     * Last, so that the engines' fields keep their places. */
    fj_stages *pipe;
};

/* The bit of the pair cp1 cp2 in ctx_word_pairs: spread over the whole set
 * (a common first character has hundreds of second ones). */
static inline uint32_t fj__word_pair_hash(uint32_t cp1, uint32_t cp2)
{
    return (cp1 * 0x9E3779B1u ^ cp2 * 0x85EBCA77u) >> (32 - 21);
}

/* Output: a buffer with a slow path for when it fills up. */
typedef struct fj_out fj_out;
struct fj_out {
    char *buf;
    size_t cap, len;
    size_t spilled; /* bytes handed on by earlier spills */
    int (*spill)(fj_out *o, const char *data, size_t n); /* 0 ok */
    fj_status status;
    /* growable mode */
    const fj_allocator *allocator;
    /* callback mode */
    fj_write_fn write;
    void *write_ctx;
    char scratch[1024];
};

static inline void fj__out_put(fj_out *o, const char *data, size_t n)
{
    if (o->len + n <= o->cap) {
        __builtin_memcpy(o->buf + o->len, data, n);
        o->len += n;
    } else {
        o->spill(o, data, n);
    }
}

static inline void fj__out_put_run(fj_out *o, const char *data, size_t n)
{
    if (n == 0)
        return; /* the buffer may not exist yet */
    if (o->len + n <= o->cap) {
        __builtin_memcpy(o->buf + o->len, data, n);
        o->len += n;
    } else {
        o->spill(o, data, n);
    }
}

void fj__out_init_buffer(fj_out *o, char *buf, size_t cap);
void fj__out_init_growable(fj_out *o, const fj_allocator *a);
void fj__out_init_callback(fj_out *o, char *buf, size_t cap, fj_write_fn write, void *ctx);
/* Hands buffered bytes to the callback (callback mode). */
void fj__out_flush(fj_out *o);
void fj__out_release(fj_out *o); /* frees a growable buffer */
/* Makes `need` bytes of room without changing the output (flushing or
 * growing); 0 when that is not possible. */
int fj__out_make_room(fj_out *o, size_t need);

/* Scratch buffers a conversion reuses between calls. */
typedef struct fj_work {
    fj_out norm;     /* normalized text */
    fj_out stage[2]; /* intermediate results of multi-step chains */
    fj_out ctx[3];   /* default mode: one run's result, then the steps after it */
    /* compat (pipeline.c, convert_fused): the steps' results over a whole
     * text, the keys of two or more characters a step wrote, and the lines
     * to convert again. */
    fj_out fused[2], marks, lines;
    int fused_long_off; /* long lines cost more that way here: not for them */
    /* Repair's damage evidence so far (src/target.c, context.c): the log-likelihood
     * ratio, in thousandths, that the text was converted character by
     * character. One stream or one call sees it grow the same way. */
    int32_t damage_llr;
    /* The first clauses of a text are judged together, on the evidence of
     * its first FJ_DAMAGE_WINDOW bytes (damage_window_llr): set once that
     * much is read; damage_window_left bytes of them are still to go. */
    /* Repair: added to the cost of changing a character that is right in
     * some words, for text that reads as correct (src/target.c). */
    int32_t repair_bias;
    int damage_window_set;
    int32_t damage_window_llr;
    size_t damage_window_left;
    /* Target-only conversion (src/target.c): the two sub-converters' works
     * (allocated on first use) and the route of the last clause. */
    struct fj_work *sub;
    int route;
    fj_out round_trip[2]; /* its middle text and its result, for one clause */
    /* fj_inspect: where the lattice reports its choices; NULL otherwise. */
    struct fj__inspect_sink *inspect;
} fj_work;

/* One character whose form the lattice chose among several (fj_inspect):
 * form[0] the chosen one, then the others, cheapest first; cost[k] is
 * the best path's cost with form[k] there, in model units. */
#define FJ_INSPECT_FORMS_MAX 8
typedef struct fj__choice_rec {
    uint32_t off, len; /* the source character, in the text the step saw */
    uint32_t count;
    unsigned char form[FJ_INSPECT_FORMS_MAX][4];
    uint8_t form_len[FJ_INSPECT_FORMS_MAX];
    int32_t cost[FJ_INSPECT_FORMS_MAX];
} fj__choice_rec;

typedef struct fj__inspect_sink {
    /* c: the converter whose lattice chose (its later steps write the forms). */
    void (*put)(struct fj__inspect_sink *sink, const fj_converter *c, const fj__choice_rec *choice);
    /* The text the lattice is at (set by each context step), which the
     * choices' offsets count in, and, when that is not the caller's text
     * but a rewriting of it (normalized, the steps before the lattice, a
     * round trip), the text it was made from; src NULL otherwise. */
    const unsigned char *seen, *src;
    size_t seen_len, src_len;
} fj__inspect_sink;

/* The first failure among the work buffers, or FJ_OK. */
fj_status fj__work_status(const fj_work *w);

void fj__work_init(fj_work *w, const fj_allocator *a);
void fj__work_release(fj_work *w);

/* A long text is normalized and converted this many bytes at a time, so
 * the normalized copy stays in cache (fj_convert, fj_stream_feed). */
#define FJ_WINDOW (256u * 1024u)
/* Where the window from text (of more than FJ_WINDOW bytes) ends: just after
 * a line end near FJ_WINDOW, where the engines decide everything before
 * it, or else at FJ_WINDOW. */
size_t fj__window_end(const unsigned char *text);

/* Normalizes text[0..len) into w->norm when needed. Returns 1 and sets
 * *consumed when it produced w->norm, 0 when the text needs no change (it
 * may then be used as it is, except for *consumed bytes: a trailing
 * undecided tail when !final). */
int fj__normalize(const fj_converter *c, const unsigned char *text, size_t len, int final,
                  fj_work *w, size_t *consumed);

/* One maximum-matching step over text[0..len) into o; returns the bytes
 * consumed (all of them when `final`). */
size_t fj__step(const fj_matcher *m, const unsigned char *text, size_t len, int final, fj_out *o);
/* A key of two or more characters a step wrote: where it was in the input,
 * and where its value is in the output (counting what o spilled). */
typedef struct fj_mark {
    const unsigned char *in;
    size_t in_len, out, out_len;
} fj_mark;
/* fj__step that also appends an fj_mark to marks for each key of two or
 * more characters it matches where it must (where its fast loop converts
 * one character at a time, a key that changes nothing is not seen). */
size_t fj__step_marked(const fj_matcher *m, const unsigned char *text, size_t len, int final,
                       fj_out *o, fj_out *marks);
/* As fj__step_marked over final text, one unit at a time, so that every key
 * of two or more characters is marked; it stops once o holds out_limit
 * bytes. Returns the bytes consumed. */
size_t fj__step_all_marked(const fj_matcher *m, const unsigned char *text, size_t len, fj_out *o,
                           fj_out *marks, size_t out_limit);

/* Default mode: whether a key of two or more characters may match the
 * step's input [a, b) (a regional phrase only at word boundaries). */
typedef struct fj_key_guard {
    int (*allow)(void *ctx, const unsigned char *a, const unsigned char *b);
    void *ctx;
} fj_key_guard;

/* fj__step over complete text with a guard: where it refuses the longest
 * key, the longest shorter key it allows matches (one character always). */
size_t fj__step_guarded(const fj_matcher *m, const unsigned char *text, size_t len, fj_out *o,
                        const fj_key_guard *g);

/* The same for the single unit at p; 0 when it is undecided. */
size_t fj__step_unit(const fj_matcher *m, const unsigned char *p, const unsigned char *end,
                     int final, fj_out *o);

/* A conversion engine: how normalized text becomes output. The converter
 * picks one when it opens (OpenCC-compatible maximum matching for now; the
 * context model will be another), so callers never branch on the mode.
 * `convert` works on text[0..len); without `final` it stops where more input
 * could change its result, and returns the bytes consumed. */
struct fj_engine {
    const char *name;
    size_t (*convert)(const fj_converter *c, const unsigned char *text, size_t len, int final,
                      fj_out *o, fj_work *w);
};

extern const fj_engine fj__compat_engine;
extern const fj_engine fj__context_engine;
extern const fj_engine fj__target_engine;
/* User phrases, protected terms and -{…}- (src/overlay.c): wraps the
 * converter's engine when fj_options asks for them. */
extern const fj_engine fj__overlay_engine;
fj_status fj__overlay_open(fj_converter *c, const fj_options *o, fj_error *e);
void fj__overlay_free(fj_converter *c);

/* Target-only conversion: a converter that takes over two open ones (on
 * failure the caller still owns them). */
fj_status fj__converter_new_target(const fj_dict *dict, fj_converter *sub[4], int repair_only,
                                   fj_converter **out, fj_error *error);
/* A repair profile without an explicit level (src/target.c): careful repair,
 * and for clauses that read as damaged the profile's round trip through
 * Simplified. Other profiles open careful. */
fj_status fj__converter_open_repair_auto(const fj_dict *dict, const char *profile, unsigned flags,
                                         fj_converter **out, fj_error *error);
/* fj_detect's character classes: 1 Simplified-only, 2 Traditional-only, 0
 * valid in both or neither (src/detect.c). */
fj_status fj__script_table_new(const fj_dict *dict, struct fj_script_table **out);
void fj__script_table_free(const fj_dict *dict, struct fj_script_table *t);
int fj__script_class(const struct fj_script_table *t, uint32_t cp);
/* Repair's damage estimate: a log-likelihood ratio, in thousandths of a
 * nat, that the text was converted character by character. Each character
 * that is a form of a reading with several adds its weight
 * (fj_converter.ctx_damage_w, from the word list's shares of the reading's
 * forms). It is kept within +-FJ_DAMAGE_LLR_BOUND, so that a book stitched
 * from sources turns within a few hundred such characters; at
 * FJ_DAMAGE_LLR_DAMAGED or more the text reads as damaged. The two bounds
 * were chosen on the tuning gold (correct text must not change) and the
 * damaged dev sentences. */
#define FJ_DAMAGE_LLR_BOUND 20000
#define FJ_DAMAGE_LLR_DAMAGED 10000
/* At -FJ_DAMAGE_LLR_CORRECT or less the text reads as correct, and repair
 * changes less (src/target.c). Chosen on the tuning gold and the dev
 * sentences after correct text: -10000 halves the gold's changed lines but
 * turns to damaged text 8 errors later; -15000 keeps the turn. */
#define FJ_DAMAGE_LLR_CORRECT 15000

/* cp's evidence (w: a repair converter's ctx_damage_w) added to llr, within
 * the bounds. */
static inline int32_t fj__damage_step(const int16_t *w, int32_t llr, uint32_t cp)
{
    if (cp < FJ_REC_FIRST || cp >= 0x10000 || w[cp - FJ_REC_FIRST] == 0)
        return llr;
    llr += w[cp - FJ_REC_FIRST];
    return llr > FJ_DAMAGE_LLR_BOUND    ? FJ_DAMAGE_LLR_BOUND
           : llr < -FJ_DAMAGE_LLR_BOUND ? -FJ_DAMAGE_LLR_BOUND
                                        : llr;
}

/* Repair: 1 when cp is its reading's default form, 2 when it is another
 * (髮 for 发), 0 when it says nothing of damage; *share: the reading's share
 * of other forms in correct text, in ten-thousandths. */
int fj__damage_observe(const fj_converter *c, uint32_t cp, uint32_t *share);
/* Repair: does converter c write cp as itself in any context? */
int fj__ctx_keeps(const fj_converter *c, uint32_t cp);
/* Repair: is cp a form of its reading other than the default (髮 for 发)? */
int fj__ctx_other_form(const fj_converter *c, uint32_t cp);
/* fj_converter.to_class's flags, above the script class (1, 2). */
#define FJ_TO_ENDS_CLAUSE 4u
#define FJ_TO_MERGEABLE 8u
#define FJ_TO_KEEPS 16u  /* the Traditional converter writes it as itself anywhere */
#define FJ_TO_DAMAGE 32u /* it has a damage weight (fj__damage_step) */
/* Clause punctuation (，。！？；：、 . , ! ? ; :) or a line break. */
int fj__ends_clause(uint32_t cp);
/* Repair: is cp, a "words" suspect, written in its reading's default form
 * (後 for 后)? Then only a word that gives the reading another form can
 * change it, and the pair filter finds those. */
int fj__ctx_suspect_is_default(const fj_converter *c, uint32_t cp);
/* Repair: the default form of cp's reading (cp itself for a character
 * without another reading). */
uint32_t fj__ctx_default_of(const fj_converter *c, uint32_t cp);
/* Repair: cp's reading (cp itself when the fold table has none). */
uint32_t fj__ctx_reading(const fj_converter *c, uint32_t cp);
/* Repair's positional rules (data/context/repair-rules.txt, compiled in):
 * one bit per role in 16 bits per BMP character. */
enum {
    FJ_RULE_COUNT = 1 << 0,
    FJ_RULE_DIGIT = 1 << 1,
    FJ_RULE_WEEK_AFTER = 1 << 2,
    FJ_RULE_NOT_WEEK_BEFORE = 1 << 3,
    FJ_RULE_WEEK_BEFORE = 1 << 4,
    FJ_RULE_WEEK_YEAR = 1 << 5,
    FJ_RULE_DEMONSTRATIVE = 1 << 6,
    FJ_RULE_AFTER_ONLY = 1 << 7,
    FJ_RULE_WEEK = 1 << 8,         /* right as written but where it is the week */
    FJ_RULE_LI_INSIDE = 1 << 9,    /* the unit 里 after a number */
    FJ_RULE_MEASURE_ONLY = 1 << 10, /* the measure word 隻 after a count */
    FJ_RULE_COMMON = 1 << 11,      /* right on its own: changing it costs more */
    FJ_RULE_WEEK_FORM = 1 << 12,   /* the week's form (週): one character */
    FJ_RULE_LI_FORM = 1 << 13      /* the unit's form (里): one character */
};
/* Fills classes[0x10000] from the compiled-in rules: FJ_OK, or
 * FJ_ERR_DICT_FORMAT with the line at fault in e. */
/* Fills classes[0x10000] with role sets and, when not NULL, week_form and
 * li_form (5 bytes each) with the UTF-8 of those one-character roles,
 * NUL-terminated. */
fj_status fj__repair_rules_load(uint16_t *classes, unsigned char *week_form,
                                unsigned char *li_form, fj_error *e);

#endif
