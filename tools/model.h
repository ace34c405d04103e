/* The context model's tables, built from OpenCC's dictionaries, a word list
 * with counts (rime-essay) and our own curated corrections. See
 * docs/DESIGN.md, "Context mode". */
#ifndef FJ_MODEL_H
#define FJ_MODEL_H

#include <stdio.h>

#include <stdint.h>

#include "../formats/ocdata.h"

/* Word costs are stored as the first character of a model value:
 * U+E000 + cost, cost = round(FJ_MODEL_SCALE * -ln P(word)). */
#define FJ_MODEL_SCALE 100.0
#define FJ_MODEL_COST_MAX 4095u

typedef struct model_words {
    char **words;
    double *counts;
    size_t count;
    double total;
} model_words;

/* Reads "word<TAB>count" lines. NULL and err on failure. */
model_words *model_words_load(const char *path, char *err, size_t errlen);
void model_words_free(model_words *w);

typedef struct model_tables {
    oc_dict *fold;  /* single characters -> reading (Simplified direction only), or NULL */
    oc_dict *words; /* reading sequence -> cost character + target */
    /* BMP characters of the input whose form the lattice must choose: some
     * word gives them a form other than the one-character default. */
    unsigned char *ambiguous; /* 0x10000 / 8 bytes */
    unsigned char *pairs;     /* FJ_BIGRAM_BITS / 8 bytes: see fj_context_rec */
    unsigned char *source_only; /* 0x10000 / 8 bytes, or NULL: see fj_context_rec */
    size_t essay_used, essay_dropped;
    size_t region_keys; /* model_build_s2t_region: keys given the region's form */
} model_tables;

/* Simplified -> Traditional: keys are readings (each character folded to the
 * Simplified character it can stand for), targets OpenCC-standard
 * Traditional. A curated entry whose target the tables do not allow is an
 * error, or with skip_misfits (cut-down tables) left out. */
int model_build_s2t(const oc_data *data, const model_words *essay, const char *curated_path,
                    const char *forms_path, const char *surnames_path, int skip_misfits,
                    model_tables *out, char *err, size_t errlen);

/* A region's word data for its own model of s2t (Taiwan: libchewing's
 * phrases; Hong Kong: rime's essay-cantonese). */
typedef struct model_region {
    const char *name;         /* for messages: "Taiwan" */
    const model_words *words; /* the region's words with its counts */
    FILE *log;                /* where the forms lines dropped are named, or NULL */
} model_region;

/* model_build_s2t for one region: the same candidates, but where the region
 * writes a form of a key of two or more characters that OpenCC's tables
 * allow for that reading (per character, or by TSPhrases), its most
 * frequent form is the key's target (our curated words still win); the
 * costs stay the essay's. Lines of forms_path that the region contradicts
 * (it writes FROM more often than TO) are left out. */
int model_build_s2t_region(const oc_data *data, const model_words *essay,
                           const model_region *region, const char *curated_path,
                           const char *forms_path, const char *surnames_path, int skip_misfits,
                           model_tables *out, char *err, size_t errlen);

/* Traditional -> Simplified: keys are Traditional words as written (also in
 * Taiwan's variant forms), targets what OpenCC's t2s gives for the word. */
int model_build_t2s(const oc_data *data, const model_words *essay, const char *curated_path,
                    const char *repair_path, model_tables *out, char *err, size_t errlen);

/* Repair of damaged Traditional text: the fold table of model_build_s2t plus
 * the readings of data/context/repair.tsv, and two sets of BMP characters
 * (0x10000 / 8 bytes each): those chosen again always, and those chosen
 * again only inside a word. */
typedef struct repair_tables {
    oc_dict *fold;
    oc_dict *attested; /* words written so on purpose: repair keeps them */
    unsigned char *always, *in_words;
    size_t derived_always; /* of `always`, how many the data gave (not repair.tsv) */
    /* The image's DMGW section: per BMP reading with several Traditional
     * forms, what its first form and one of its others add to repair's
     * damage estimate (thousandths of a nat), the share of its other forms
     * (ten-thousandths) and 0: 0x10000 int16 quadruples, all 0 where the
     * word list says too little. */
    int16_t *damage_weights;
} repair_tables;

/* `native`: words of natively written Traditional text (libchewing's), or
 * NULL. With it, the forms that are never right are also derived from the
 * data: a character that TSCharacters converts, that no Simplified
 * character's form in STCharacters and no form of TWVariants or HKVariants
 * is, and that native text never writes (麽, 産, 眞), is chosen again
 * always, as its reading (TSCharacters' first value). */
int model_build_repair(const oc_data *data, const char *repair_path, const char *either_path,
                       const model_words *essay, const oc_dict *s2t_words,
                       const model_words *native, repair_tables *out, char *err, size_t errlen);
void repair_tables_free(repair_tables *t);

void model_tables_free(model_tables *t);

#endif
