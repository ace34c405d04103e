/* Reads libchewing 0.5's system dictionary (see chewing.h). The layout:
 * index_tree.dat is an array of 8-byte records, a phrase tree keyed by
 * syllables: a 16-bit little-endian key, then two 24-bit little-endian
 * fields. A record with a key other than 0 is a syllable node, and its fields
 * are the range [begin, end) of its children's record numbers; record 0 is
 * the root. A record with key 0 is a phrase: its fields are the byte offset
 * of the phrase's NUL-terminated UTF-8 text in dictionary.dat and its
 * frequency. A phrase with several readings has one record per reading,
 * all naming the same text. */
#include "chewing.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fanjian.h"

#define CHEWING_RECORD 8u

static void chewing_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static void *chewing_alloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "fjdict: out of memory\n");
        exit(70);
    }
    return p;
}

static unsigned char *read_whole(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        chewing_err(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, got;
    unsigned char *buf = chewing_alloc(NULL, cap);
    *len = 0;
    while ((got = fread(buf + *len, 1, cap - *len, f)) > 0) {
        *len += got;
        if (*len == cap)
            buf = chewing_alloc(buf, cap *= 2);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        chewing_err(err, errlen, "%s: read error", path);
        return NULL;
    }
    return buf;
}

static uint32_t get24(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

/* A phrase record: offset of its text, its frequency. */
typedef struct chewing_leaf {
    uint32_t pos, freq;
} chewing_leaf;

static int leaf_by_pos(const void *a, const void *b)
{
    const chewing_leaf *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

model_words *chewing_words_load(const char *dir, char *err, size_t errlen)
{
    char tree_path[4096], dict_path[4096];
    snprintf(tree_path, sizeof tree_path, "%s/index_tree.dat", dir);
    snprintf(dict_path, sizeof dict_path, "%s/dictionary.dat", dir);
    size_t tree_len, text_len;
    unsigned char *tree = read_whole(tree_path, &tree_len, err, errlen);
    if (!tree)
        return NULL;
    unsigned char *text = read_whole(dict_path, &text_len, err, errlen);
    if (!text) {
        free(tree);
        return NULL;
    }
    size_t n = tree_len / CHEWING_RECORD;
    chewing_leaf *leaves = chewing_alloc(NULL, n * sizeof *leaves);
    size_t nleaves = 0;
    const char *bad = NULL;
    if (tree_len % CHEWING_RECORD || n < 2)
        bad = "not a whole number of 8-byte records";
    for (size_t i = 0; !bad && i < n; i++) {
        const unsigned char *r = tree + i * CHEWING_RECORD;
        uint32_t key = (uint32_t)r[0] | (uint32_t)r[1] << 8, a = get24(r + 2), b = get24(r + 5);
        if (i == 0 && key == 0)
            bad = "the root record is a phrase";
        else if (key != 0 && (a > b || b > n || (a == 0 && b != 0)))
            bad = "a node's children lie outside the file";
        else if (key == 0 && (a >= text_len || !memchr(text + a, 0, text_len - a)))
            bad = "a phrase lies outside dictionary.dat";
        else if (key == 0)
            leaves[nleaves++] = (chewing_leaf){a, b};
    }
    if (bad) {
        chewing_err(err, errlen, "%s: %s (expected libchewing 0.5's format)", tree_path, bad);
        free(tree);
        free(text);
        free(leaves);
        return NULL;
    }
    free(tree);
    /* One word per text: the readings of a phrase share it. */
    qsort(leaves, nleaves, sizeof *leaves, leaf_by_pos);
    model_words *w = chewing_alloc(NULL, sizeof *w);
    memset(w, 0, sizeof *w);
    size_t cap = 0;
    for (size_t i = 0; i < nleaves;) {
        size_t j = i;
        double freq = 0;
        for (; j < nleaves && leaves[j].pos == leaves[i].pos; j++)
            freq += leaves[j].freq;
        const unsigned char *s = text + leaves[i].pos;
        size_t len = strlen((const char *)s);
        if (!len || fj_utf8_valid((const char *)s, len, NULL) != len) {
            chewing_err(err, errlen, "%s: the phrase at byte %u is not UTF-8", dict_path,
                        (unsigned)leaves[i].pos);
            free(text);
            free(leaves);
            model_words_free(w);
            return NULL;
        }
        if (w->count == cap) {
            cap = cap ? cap * 2 : 4096;
            w->words = chewing_alloc(w->words, cap * sizeof(char *));
            w->counts = chewing_alloc(w->counts, cap * sizeof(double));
        }
        w->words[w->count] = chewing_alloc(NULL, len + 1);
        memcpy(w->words[w->count], s, len + 1);
        w->counts[w->count++] = freq;
        w->total += freq;
        i = j;
    }
    free(text);
    free(leaves);
    return w;
}
