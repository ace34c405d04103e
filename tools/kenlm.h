/* A reader for KenLM's binary trie format with separate quantisation, as
 * Debian's libime-data-language-model ships zh_CN.lm (a word trigram over
 * Simplified Chinese). Build-time only: the dictionary compiler prunes it
 * into the image. The whole file is read into memory and every offset is
 * checked once at open. */
#ifndef FJ_KENLM_H
#define FJ_KENLM_H

#include <stddef.h>
#include <stdint.h>

typedef struct kenlm_model kenlm_model;

/* NULL and a message in err when the file is not such a model. */
kenlm_model *kenlm_open(const char *path, char *err, size_t errlen);
void kenlm_close(kenlm_model *m);

unsigned kenlm_order(const kenlm_model *m);
/* How many n-grams of order n (1..order). */
uint64_t kenlm_count(const kenlm_model *m, unsigned n);

/* Word id -> its UTF-8 string (id 0 is <unk>); NULL past the vocabulary. */
const char *kenlm_word(const kenlm_model *m, uint32_t id, size_t *len);
/* The id of a word, or 0 (<unk>) when it is not in the vocabulary. */
uint32_t kenlm_find(const kenlm_model *m, const char *word, size_t len);

/* log10 P(w) and log10 backoff(w). */
void kenlm_unigram(const kenlm_model *m, uint32_t w, float *prob, float *backoff);

/* The trie is reversed: the entries under a word are its predecessors. The
 * bigrams (x, w), as entries [*begin, *end) of the bigram level. */
void kenlm_bigrams_ending(const kenlm_model *m, uint32_t w, uint64_t *begin, uint64_t *end);
/* Bigram entry i: its first word x, log10 P(w | x) and log10 backoff(x w). */
void kenlm_bigram(const kenlm_model *m, uint64_t i, uint32_t *x, float *prob, float *backoff);
/* The trigrams (y, x, w) under bigram entry i (x, w), as entries of the
 * trigram level; empty when the model is a bigram model. */
void kenlm_trigrams_under(const kenlm_model *m, uint64_t i, uint64_t *begin, uint64_t *end);
/* Trigram entry i: its first word y and log10 P(w | y x). */
void kenlm_trigram(const kenlm_model *m, uint64_t i, uint32_t *y, float *prob);

#endif
