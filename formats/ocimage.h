/* Building a dictionary image (src/image_format.h) from flattened OpenCC
 * dictionaries: tries, code point tables and filters per matcher, and the
 * sections laid out with their checksum. The compiler (tools/fjdict.c)
 * builds the stock image with it; formats/opencc_config.c builds a custom
 * config's image in memory. Not part of the installed API. */
#ifndef FJ_OCIMAGE_H
#define FJ_OCIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "../src/image_format.h"
#include "ocdata.h"

typedef struct oci_buf {
    unsigned char *p;
    size_t len, cap;
} oci_buf;

/* A string pool with de-duplication (STRS). */
typedef struct oci_pool {
    oci_buf bytes;
    uint32_t *slots; /* offset + 1, 0 empty */
    uint32_t *lens;
    size_t nslots, used;
} oci_pool;

typedef struct oci_builder {
    oci_pool strings;
    fj_node_rec *nodes;
    uint32_t *edges;
    size_t node_count, node_cap, edge_cap;
    uint32_t *blocks; /* 256 entries per block; block 0 is empty */
    size_t block_count, block_cap;
    uint32_t *level1;
    size_t level1_count, level1_cap;
    fj_matcher_rec *matchers;
    unsigned char *bigrams, *pairkeys, *trigrams, *changers, *inner, *chkeys;
    uint64_t *first_edges;
    size_t first_edge_count, first_edge_cap;
    oc_dict **matcher_dicts;
    size_t matcher_count;
    int plain; /* build matchers without the filters and edge table (the context model's) */
    char error[256]; /* the first dictionary the image cannot hold, or "" */
} oci_builder;

/* A failed allocation is formats/ocdata.h's oc__nomem(): exit 70, or
 * between oc_nomem_begin() and oc_nomem_end() an error return: oci_grow
 * NULL (p kept), oci_buf_add OCI_NOMEM, oci_pool_add 0, oci_matcher_for
 * FJ_NONE with the builder's error "out of memory", oci_edge_hash and
 * oci_assemble NULL; after oci_builder_init, oc_nomem_failed() says. */
#define OCI_NOMEM ((size_t)-1)
void *oci_grow(void *p, size_t *cap, size_t need, size_t elem);
size_t oci_buf_add(oci_buf *b, const void *data, size_t n);
void oci_buf_align(oci_buf *b, size_t a);
uint32_t oci_pool_add(oci_pool *p, const char *s, size_t n);

/* An empty image: block 0 and node 0 (placeholders), zeroed filters. */
void oci_builder_init(oci_builder *b);
void oci_builder_free(oci_builder *b);
/* The matcher id for a flattened dictionary (taken over), sharing
 * identical ones; FJ_NONE for NULL. Keys must be UTF-8. */
uint32_t oci_matcher_for(oci_builder *b, oc_dict *d);
/* FJ_PROFILE_SEG_IS_STEP1 holds. */
int oci_seg_is_step1(const oc_dict *seg, const oc_dict *step1);
/* Clears the barrier bits of every BMP character in d's keys. */
void oci_clear_key_chars(unsigned char *barrier, const oc_dict *d);
/* The second-character edge tables (EDGH), *slots entries (calloc'd), one
 * per matcher: sets each matcher's edge_first and edge_slots. */
uint64_t *oci_edge_hash(oci_builder *b, size_t *slots);

typedef struct oci_section {
    uint32_t tag;
    const void *data;
    size_t size;
} oci_section;

/* The whole image: header, section table, the sections aligned, and the
 * checksum. malloc'd (8-byte aligned), *len bytes. */
unsigned char *oci_assemble(const oci_section *secs, uint32_t nsec, size_t *len);

#endif
