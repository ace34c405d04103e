/* OpenCC's data model, read from its text dictionaries and JSON configs:
 * dictionaries, group expressions (short_circuit / union), profiles, the
 * derived dictionaries, and a plain reference converter that follows
 * OpenCC's algorithm literally. Used by the dictionary compiler and the tests,
 * never by the library's hot path. */
#ifndef FJ_OCDATA_H
#define FJ_OCDATA_H

#include <stddef.h>
#include <stdio.h>

/* A failed allocation in this file and formats/ocimage.c prints "out of
 * memory" and exits 70 (the tools'). Between oc_nomem_begin() and
 * oc_nomem_end() it fails the call instead, in this thread: the functions
 * formats/opencc_config.c uses then return their error (NULL, -1, FJ_NONE
 * or the builder's error), and oc_nomem_end() says whether one failed. The
 * data directory, reverse and reference converter functions are the tools'. */
void oc_nomem_begin(void);
int oc_nomem_end(void);
int oc_nomem_failed(void);
void oc__nomem(void);

typedef struct oc_entry {
    char *key;
    char **values;
    size_t value_count;
} oc_entry;

typedef struct oc_dict {
    char *name;
    oc_entry *entries; /* sorted by key (bytewise), keys unique */
    size_t count;
    /* Annotations from comments, needed for the derived dictionaries. */
    char **prefer_key, **prefer_value; /* "# @reverse-prefer: KEY [VALUE]" */
    size_t prefer_count;
    unsigned char *tofu_risk; /* per entry: preceded by "# @tofu-risk:" */
    int file_sorted;          /* the file listed its keys in sorted order */
} oc_dict;

/* Parses an OpenCC text dictionary. Returns NULL and fills err on failure. */
oc_dict *oc_dict_parse(const char *name, const char *path, char *err, size_t errlen);
oc_dict *oc_dict_parse_buffer(const char *name, const char *data, size_t len, char *err,
                              size_t errlen);
/* A dictionary of `count` entries (taken over, freed on failure), sorted;
 * NULL and err on a duplicated key or no memory. */
oc_dict *oc_dict_from_entries(const char *name, oc_entry *entries, size_t count, char *err,
                              size_t errlen);
void oc_dict_free(oc_dict *d);
/* Writes "key\tv1 v2\n" lines, sorted. */
int oc_dict_write(const oc_dict *d, FILE *f);
/* Exact lookup; NULL when absent. */
const oc_entry *oc_dict_find(const oc_dict *d, const char *key, size_t keylen);

/* reverse.py: values become keys, honouring @reverse-prefer. */
oc_dict *oc_dict_reverse(const oc_dict *src, const char *name, char *err, size_t errlen);
/* extract_tofu_risk.py: the entries marked @tofu-risk, minus the identity value. */
oc_dict *oc_dict_tofu_ext(const oc_dict *src, const char *name, char *err, size_t errlen);

/* A dictionary expression from a config: a leaf or a group. */
enum { OC_LEAF, OC_SHORT_CIRCUIT, OC_UNION };
typedef struct oc_expr {
    int kind;
    const oc_dict *dict;     /* OC_LEAF */
    int may_output_tofu;     /* OC_LEAF */
    struct oc_expr **children;
    size_t child_count;
} oc_expr;

typedef struct oc_profile {
    char *name; /* "s2t" */
    oc_expr **normalization;
    size_t normalization_count;
    oc_expr *segmentation; /* NULL: none */
    oc_expr **chain;
    size_t chain_count;
} oc_profile;

struct json_t;
/* Finds the dictionary a config's leaf names ("type", "file"); NULL and
 * err when it cannot. The dictionary outlives the expression. */
typedef const oc_dict *(*oc_dict_resolver)(void *ctx, const char *type, const char *file,
                                           char *err, size_t errlen);
/* A config's dictionary expression ("dict"), its leaves resolved. */
oc_expr *oc_expr_parse(struct json_t *j, oc_dict_resolver resolve, void *ctx, char *err,
                       size_t errlen);
void oc_expr_free(oc_expr *e);
/* A config's normalization, segmentation and conversion chain; `path`
 * names it in messages. */
oc_profile *oc_profile_parse(struct json_t *root, const char *name, const char *path,
                             oc_dict_resolver resolve, void *ctx, char *err, size_t errlen);
void oc_profile_free(oc_profile *p);

/* All dictionaries and profiles of one OpenCC data directory. */
typedef struct oc_data {
    oc_dict **dicts;
    size_t dict_count;
    size_t source_count; /* the first source_count dicts were read from files */
    oc_profile **profiles;
    size_t profile_count;
} oc_data;

/* Reads DIR/dictionary/ *.txt and DIR/config/ *.json, derives the generated
 * dictionaries exactly as OpenCC's build does. */
oc_data *oc_data_load(const char *dir, char *err, size_t errlen);
void oc_data_free(oc_data *data);
const oc_dict *oc_data_dict(const oc_data *data, const char *name);
const oc_profile *oc_data_profile(const oc_data *data, const char *name);

/* Flattens an expression into one longest-match dictionary with a single
 * value per key (what the image stores). include_tofu selects leaves marked
 * may_output_tofu. Returns NULL for an empty expression. */
oc_dict *oc_expr_flatten(const oc_expr *e, int include_tofu);

/* Reference conversion, written to mirror OpenCC step by step. The result is
 * malloc'd; *outlen receives its length. include_tofu as above. */
char *oc_reference_convert(const oc_profile *p, const char *text, size_t len, size_t *outlen,
                           int include_tofu);

#endif
