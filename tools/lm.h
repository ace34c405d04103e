/* The language model of the default mode: a word bigram model over the
 * source script (Debian's zh_CN.lm, read by kenlm.h), pruned to what the
 * lattice can use and laid out as the image's LMTB table (see
 * src/image_format.h). */
#ifndef FJ_LM_H
#define FJ_LM_H

#include <stdint.h>

#include "kenlm.h"
#include "model.h"

/* The weight of the model's cost beside the word list's, in the lattice. */
#define FJ_LM_WEIGHT 0.5

typedef struct lm_table {
    uint32_t *slots; /* 1 << bits */
    uint32_t bits;
    size_t pairs, backoffs, words_known, words_spelled, words_split;
} lm_table;

/* Adds each word's own model cost (weight · -ln P(word), in model units) to
 * its cost in t->words, and fills out with the costs that depend on the word
 * before: the bigrams of the lattice's words that touch a character of
 * t->ambiguous, where they differ from the back-off estimate, and each
 * word's back-off. 0, or -1 and err. */
int lm_build(const kenlm_model *lm, model_tables *t, double weight, lm_table *out, char *err,
             size_t errlen);
void lm_table_free(lm_table *t);

#endif
