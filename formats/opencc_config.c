/* OpenCC config files given to -c: a stock one (by content) is that
 * profile; any other is loaded as OpenCC 1.4.2 loads it and compiled into
 * an image of its own, which the compatible engine runs. */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../include/fanjian-formats.h"
#include "../src/internal.h"
#include "../src/utf8.h"
#include "ocd2.h"
#include "ocdata.h"
#include "ocimage.h"

/* data/opencc-stock-configs.tsv, compiled in. */
extern const unsigned char fjf__opencc_stock_configs[];
extern const size_t fjf__opencc_stock_configs_size;

/* The profile name of a custom config's image. */
#define CUSTOM_PROFILE "custom"
/* Where OpenCC looks for a dictionary after the config's directory. */
#define OPENCC_DATA_DIR "/usr/share/opencc"
#define CONFIG_MAX (1u << 20)

struct fjf_opencc_config {
    const fj_dict *dict;      /* the stock one, or `own` */
    fj_dict *own;             /* a custom config's image, opened on `image` */
    unsigned char *image;
    char profile[FJ_PROFILE_NAME_MAX];
};

/* ---- stock configs by content ------------------------------------------- */

static json_t *canon_dict(json_t *d)
{
    json_t *o = json_object();
    const char *type = json_string_value(json_object_get(d, "type"));
    json_object_set(o, "type", json_object_get(d, "type"));
    if (json_object_get(d, "file"))
        json_object_set(o, "file", json_object_get(d, "file"));
    if (type && strcmp(type, "group") == 0) {
        json_t *policy = json_object_get(d, "match_policy");
        json_object_set_new(o, "match_policy", policy ? json_copy(policy) : json_string("short_circuit"));
        json_t *dicts = json_array(), *src = json_object_get(d, "dicts");
        for (size_t i = 0; i < json_array_size(src); i++)
            json_array_append_new(dicts, canon_dict(json_array_get(src, i)));
        json_object_set_new(o, "dicts", dicts);
    }
    if (json_is_true(json_object_get(d, "may_output_tofu")))
        json_object_set_new(o, "may_output_tofu", json_true());
    return o;
}

static json_t *canon_chain(json_t *arr)
{
    json_t *out = json_array();
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *step = json_object();
        json_object_set_new(step, "dict", canon_dict(json_object_get(json_array_get(arr, i), "dict")));
        json_array_append_new(out, step);
    }
    return out;
}

/* What decides a config's output: its normalization, segmentation and
 * chain, with a group's default policy written out. */
static json_t *canon_config(json_t *c)
{
    json_t *o = json_object();
    if (json_object_get(c, "normalization"))
        json_object_set_new(o, "normalization", canon_chain(json_object_get(c, "normalization")));
    json_t *seg = json_object_get(c, "segmentation");
    if (seg) {
        json_t *s = json_object();
        json_object_set(s, "type", json_object_get(seg, "type"));
        json_object_set_new(s, "dict", canon_dict(json_object_get(seg, "dict")));
        json_object_set_new(o, "segmentation", s);
    }
    json_object_set_new(o, "conversion_chain", canon_chain(json_object_get(c, "conversion_chain")));
    return o;
}

/* The stock profile whose config has the content of `root`, copied into
 * name; 0 when none has. */
static int stock_profile(json_t *root, char *name, size_t size)
{
    json_t *want = canon_config(root);
    const char *p = (const char *)fjf__opencc_stock_configs;
    const char *end = p + fjf__opencc_stock_configs_size;
    int found = 0;
    while (p < end && !found) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        const char *tab1 = memchr(p, '\t', (size_t)(line_end - p));
        const char *tab2 = tab1 ? memchr(tab1 + 1, '\t', (size_t)(line_end - tab1 - 1)) : NULL;
        if (*p != '#' && tab2) {
            json_t *stock = json_loadb(tab2 + 1, (size_t)(line_end - tab2 - 1), 0, NULL);
            json_t *canon = stock ? canon_config(stock) : NULL;
            if (canon && json_equal(canon, want) && (size_t)(tab1 - p) < size) {
                memcpy(name, p, (size_t)(tab1 - p));
                name[tab1 - p] = 0;
                found = 1;
            }
            json_decref(canon);
            json_decref(stock);
        }
        p = line_end + 1;
    }
    json_decref(want);
    return found;
}

/* ---- the dictionaries a custom config names ------------------------------ */

typedef struct loader {
    const fj_dict *stock;
    const char *config;   /* the config's path, for messages */
    char dir[4096];       /* its directory */
    const char *const *paths;
    size_t path_count;
    oc_dict **dicts;      /* loaded, owned; `keys` says what each is */
    char **keys;
    size_t dict_count;
} loader;

/* Keeps d (taken over) under key; NULL and err when out of memory. */
static const oc_dict *loader_keep(loader *l, const char *key, oc_dict *d, char *err,
                                  size_t errlen)
{
    oc_dict **dicts = realloc(l->dicts, (l->dict_count + 1) * sizeof *dicts);
    char **keys = dicts ? realloc(l->keys, (l->dict_count + 1) * sizeof *keys) : NULL;
    char *k = keys ? strdup(key) : NULL;
    if (dicts)
        l->dicts = dicts;
    if (keys)
        l->keys = keys;
    if (!k) {
        oc_dict_free(d);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    l->dicts[l->dict_count] = d;
    l->keys[l->dict_count++] = k;
    return d;
}

static const oc_dict *loader_find(const loader *l, const char *key)
{
    for (size_t i = 0; i < l->dict_count; i++)
        if (strcmp(l->keys[i], key) == 0)
            return l->dicts[i];
    return NULL;
}

/* Keys and values the image can hold: UTF-8, keys not empty. */
static int dict_check(const oc_dict *d, const char *path, char *err, size_t errlen)
{
    for (size_t i = 0; i < d->count; i++) {
        const oc_entry *e = &d->entries[i];
        size_t kl = strlen(e->key), vl = strlen(e->values[0]);
        int cut;
        const char *bad = !kl                                  ? "an empty key"
                          : fj_utf8_valid(e->key, kl, &cut) != kl ? "a key that is not UTF-8"
                          : fj_utf8_valid(e->values[0], vl, &cut) != vl
                              ? "a value that is not UTF-8"
                          : vl >= FJ_NO_VALUE ? "a value too long"
                                              : NULL;
        if (bad) {
            snprintf(err, errlen, "%s: %s (entry %zu in key order)", path, bad, i + 1);
            return -1;
        }
    }
    return 0;
}

/* A dictionary the image keeps, by its OpenCC name (STPhrases): its
 * source entries as a text dictionary. NULL when the image has none. */
static oc_dict *image_source(const fj_dict *stock, const char *name, char *err, size_t errlen)
{
    fj_error checked;
    if (fj__dict_use_sources(stock, &checked) != FJ_OK) {
        snprintf(err, errlen, "%s", checked.message);
        return NULL;
    }
    const fj_image *img = fj__dict_image(stock);
    for (uint32_t i = 0; i < img->srcdict_count; i++) {
        const fj_srcdict_rec *d = &img->srcdicts[i];
        if (d->name_len != strlen(name) || memcmp(img->strings + d->name_off, name, d->name_len))
            continue;
        size_t len = 0;
        for (uint32_t e = 0; e < d->entry_count; e++) {
            const fj_srcentry_rec *r = &img->srcentries[d->first_entry + e];
            len += (size_t)r->key_len + r->values_len + 2;
        }
        char *text = malloc(len + 1), *w = text;
        if (!text) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        for (uint32_t e = 0; e < d->entry_count; e++) {
            const fj_srcentry_rec *r = &img->srcentries[d->first_entry + e];
            memcpy(w, img->strings + r->key_off, r->key_len);
            w += r->key_len;
            *w++ = '\t';
            memcpy(w, img->strings + r->values_off, r->values_len);
            w += r->values_len;
            *w++ = '\n';
        }
        oc_dict *dict = oc_dict_parse_buffer(name, text, (size_t)(w - text), err, errlen);
        free(text);
        return dict;
    }
    return NULL;
}

typedef struct projection {
    char *simplified; /* the key through t2s */
    const char *key;  /* the regional phrase */
    size_t order;
} projection;

static int projection_cmp(const void *a, const void *b)
{
    const projection *x = a, *y = b;
    int c = strcmp(x->simplified, y->simplified);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* STPhrases_GeneratedFromRegionalPhrases, derived as OpenCC's build does
 * (formats/ocdata.c, generate_st_phrases): each regional phrase of HKPhrases
 * and TWPhrases through t2s (the stock image's, OpenCC-identical), kept when
 * it has three or more characters, mapped back to the first phrase that
 * gives it. */
static oc_dict *generated_phrases(const fj_dict *stock, const char *name, char *err,
                                  size_t errlen)
{
    oc_dict *src[2] = {image_source(stock, "HKPhrases", err, errlen),
                       image_source(stock, "TWPhrases", err, errlen)};
    fj_converter *t2s = NULL;
    fj_error ferr;
    oc_dict *out = NULL;
    projection *proj = NULL;
    size_t n = 0;
    if (oc_nomem_failed())
        goto nomem;
    if (!src[0] || !src[1] || fj_converter_open(stock, "t2s", FJ_COMPAT, &t2s, &ferr) != FJ_OK) {
        snprintf(err, errlen, "the dictionary image lacks what %s is derived from", name);
        goto done;
    }
    proj = calloc(src[0]->count + src[1]->count + 1, sizeof *proj);
    if (!proj)
        goto nomem;
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < src[s]->count; i++) {
            const char *key = src[s]->entries[i].key;
            char *conv;
            size_t conv_len, chars = 0;
            if (fj_convert_alloc(t2s, key, strlen(key), &conv, &conv_len) != FJ_OK)
                goto nomem;
            for (size_t o = 0; o < conv_len; o++)
                chars += ((unsigned char)conv[o] & 0xC0) != 0x80;
            if (chars < 3) {
                fj_free(t2s, conv);
                continue;
            }
            proj[n].simplified = strdup(conv);
            fj_free(t2s, conv);
            if (!proj[n].simplified)
                goto nomem;
            proj[n].key = key;
            proj[n].order = n;
            n++;
        }
    qsort(proj, n, sizeof *proj, projection_cmp);
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += strlen(proj[i].simplified) + strlen(proj[i].key) + 2;
    char *text = malloc(len + 1), *w = text;
    if (!text)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(proj[i].simplified, proj[i - 1].simplified) == 0)
            continue; /* the first phrase that gives it wins */
        w += sprintf(w, "%s\t%s\n", proj[i].simplified, proj[i].key);
    }
    out = oc_dict_parse_buffer(name, text, (size_t)(w - text), err, errlen);
    free(text);
    goto done;
nomem:
    snprintf(err, errlen, "out of memory");
done:
    for (size_t i = 0; proj && i < n; i++)
        free(proj[i].simplified);
    free(proj);
    fj_converter_close(t2s);
    oc_dict_free(src[0]);
    oc_dict_free(src[1]);
    return out;
}

static int readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A dictionary file's path as OpenCC finds it: as given when absolute,
 * else in the config's directory, the extra paths, then OpenCC's data
 * directory. 0, or -1 with err listing where it looked. */
static int find_dict(const loader *l, const char *file, char *path, size_t size, char *err,
                     size_t errlen)
{
    if (file[0] == '/') {
        snprintf(path, size, "%s", file);
        if (readable_file(path))
            return 0;
        snprintf(err, errlen, "%s: dictionary %s: %s", l->config, file, strerror(ENOENT));
        return -1;
    }
    size_t dirs = 2 + l->path_count;
    for (size_t i = 0; i < dirs; i++) {
        const char *dir = i == 0 ? l->dir : i <= l->path_count ? l->paths[i - 1] : OPENCC_DATA_DIR;
        if ((size_t)snprintf(path, size, "%s/%s", dir, file) < size && readable_file(path))
            return 0;
    }
    snprintf(err, errlen, "%s: dictionary %s not found (looked in %s%s and %s)", l->config, file,
             l->dir, l->path_count ? ", the --path directories" : "", OPENCC_DATA_DIR);
    return -1;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* oc_dict_resolver: "text" files; OpenCC's stock dictionaries named as
 * .ocd2 (or .ocd), taken from the image; any other .ocd2 file. */
static const oc_dict *resolve(void *ctx, const char *type, const char *file, char *err,
                              size_t errlen)
{
    loader *l = ctx;
    char key[4200];
    if (strcmp(type, "text") == 0) {
        char path[4096];
        if (find_dict(l, file, path, sizeof path, err, errlen) != 0)
            return NULL;
        snprintf(key, sizeof key, "text:%s", path);
        const oc_dict *have = loader_find(l, key);
        if (have)
            return have;
        oc_dict *d = oc_dict_parse(path, path, err, errlen);
        if (!d || dict_check(d, path, err, errlen) != 0) {
            oc_dict_free(d);
            return NULL;
        }
        return loader_keep(l, key, d, err, errlen);
    }
    if (strcmp(type, "ocd2") == 0 || strcmp(type, "ocd") == 0) {
        char name[256];
        snprintf(name, sizeof name, "%s", base_name(file));
        char *dot = strrchr(name, '.');
        if (dot)
            *dot = 0;
        snprintf(key, sizeof key, "stock:%s", name);
        const oc_dict *have = loader_find(l, key);
        if (have)
            return have;
        err[0] = 0;
        oc_dict *d = strcmp(name, "STPhrases_GeneratedFromRegionalPhrases") == 0
                         ? generated_phrases(l->stock, name, err, errlen)
                         : image_source(l->stock, name, err, errlen);
        if (d)
            return loader_keep(l, key, d, err, errlen);
        if (err[0])
            return NULL;
        /* Any other: the file, read as OpenCC reads it; the older .ocd
         * format is not read. */
        char path[4096];
        if (strcmp(type, "ocd") == 0) {
            snprintf(err, errlen,
                     "%s: dictionary %s: the .ocd format is read only for OpenCC's stock "
                     "dictionaries; convert it to .ocd2 or text with opencc_dict",
                     l->config, file);
            return NULL;
        }
        if (find_dict(l, file, path, sizeof path, err, errlen) != 0)
            return NULL;
        snprintf(key, sizeof key, "ocd2:%s", path);
        if ((have = loader_find(l, key)) != NULL)
            return have;
        d = oc_dict_read_ocd2(path, err, errlen);
        if (!d || dict_check(d, path, err, errlen) != 0) {
            oc_dict_free(d);
            return NULL;
        }
        return loader_keep(l, key, d, err, errlen);
    }
    snprintf(err, errlen, "%s: dictionary %s: unknown dictionary type \"%s\" (text, ocd2 or group)",
             l->config, file, type);
    return NULL;
}

/* ---- the image ------------------------------------------------------------ */

static oc_dict *empty_dict(void)
{
    return oc_dict_parse_buffer("empty", "", 0, NULL, 0);
}

/* Builds the one-profile image of `p`; 0, or -1 with err. */
static int build_image(const oc_profile *p, const char *config, unsigned char **image,
                       size_t *image_len, char *err, size_t errlen)
{
    if (p->normalization_count > 1) {
        snprintf(err, errlen, "%s: more than one normalization step", config);
        return -1;
    }
    oci_builder b;
    oci_builder_init(&b);
    uint64_t *edge_hash = NULL;
    fj_profile_rec r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", CUSTOM_PROFILE);
    fj_context_rec cx;
    memset(&cx, 0, sizeof cx);
    cx.core_stage = cx.fold = cx.words = cx.source_only = FJ_NONE;
    cx.suspects = cx.defaults = cx.attested = cx.overrides = FJ_NONE;
    unsigned char *barrier = malloc(FJ_BARRIER_BYTES);
    int rc = -1;
    oc_dict *seg = NULL;
    if (!barrier || oc_nomem_failed())
        goto nomem;
    memset(barrier, 0xFF, FJ_BARRIER_BYTES);
    for (uint32_t cp = 0x2FF0; cp <= 0x2FFF; cp++)
        barrier[cp >> 3] &= (unsigned char)~(1u << (cp & 7));
    /* As the stock image: normalization without, the rest with the
     * tables marked may_output_tofu (OpenCC loads them by default). */
    r.normalization = p->normalization_count
                          ? oci_matcher_for(&b, oc_expr_flatten(p->normalization[0], 0))
                          : FJ_NONE;
    seg = p->segmentation ? oc_expr_flatten(p->segmentation, 1) : NULL;
    for (size_t c = 0; c < p->chain_count; c++) {
        uint32_t m = oci_matcher_for(&b, oc_expr_flatten(p->chain[c], 1));
        if (m == FJ_NONE)
            continue;
        if (r.stage_count == FJ_MAX_STAGES) {
            snprintf(err, errlen, "%s: more than %u conversion steps", config, FJ_MAX_STAGES);
            goto done;
        }
        r.stages[r.stage_count++] = m;
    }
    if (r.stage_count == 0) /* every step an empty group: text passes unchanged */
        r.stages[r.stage_count++] = oci_matcher_for(&b, empty_dict());
    if (oc_nomem_failed())
        goto nomem;
    if (seg && oci_seg_is_step1(seg, b.matcher_dicts[r.stages[0]])) {
        oc_dict_free(seg);
        r.segmentation = r.stages[0];
        r.flags |= FJ_PROFILE_SEG_IS_STEP1;
    } else {
        r.segmentation = oci_matcher_for(&b, seg);
    }
    seg = NULL;
    if (oc_nomem_failed())
        goto nomem;
    uint32_t used[2 + FJ_MAX_STAGES] = {r.normalization, r.segmentation};
    for (uint32_t s = 0; s < r.stage_count; s++)
        used[2 + s] = r.stages[s];
    for (uint32_t s = 0; s < 2 + r.stage_count; s++)
        if (used[s] != FJ_NONE)
            oci_clear_key_chars(barrier, b.matcher_dicts[used[s]]);
    if (oc_nomem_failed())
        goto nomem;
    if (b.error[0] || b.node_count >= FJ_MAX_NODES) {
        snprintf(err, errlen, "%s: its dictionaries do not fit an image: %.120s", config,
                 b.error[0] ? b.error : "too many keys");
        goto done;
    }
    size_t hslots;
    edge_hash = oci_edge_hash(&b, &hslots);
    if (!edge_hash)
        goto nomem;
    oci_section secs[] = {
        {FJ_SEC_STRINGS, b.strings.bytes.p, b.strings.bytes.len},
        {FJ_SEC_NODES, b.nodes, b.node_count * sizeof(fj_node_rec)},
        {FJ_SEC_EDGES, b.edges, b.node_count * sizeof(uint32_t)},
        {FJ_SEC_BLOCKS, b.blocks, b.block_count * FJ_BLOCK_SIZE * sizeof(uint32_t)},
        {FJ_SEC_LEVEL1, b.level1, b.level1_count * FJ_L1_SIZE * sizeof(uint32_t)},
        {FJ_SEC_MATCHERS, b.matchers, b.matcher_count * sizeof(fj_matcher_rec)},
        {FJ_SEC_PROFILES, &r, sizeof r},
        {FJ_SEC_BARRIERS, barrier, FJ_BARRIER_BYTES},
        {FJ_SEC_SRCDICTS, NULL, 0},
        {FJ_SEC_SRCENTRY, NULL, 0},
        {FJ_SEC_BIGRAMS, b.bigrams, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_PAIRKEYS, b.pairkeys, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_TRIGRAMS, b.trigrams, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_EDGEHASH, edge_hash, hslots * sizeof(uint64_t)},
        {FJ_SEC_CHANGERS, b.changers, FJ_CHANGERS_BYTES},
        {FJ_SEC_INNER, b.inner, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_CHKEYS, b.chkeys, FJ_BIGRAM_BITS / 8},
        {FJ_SEC_CONTEXT, &cx, sizeof cx},
        {FJ_SEC_AMBIG, NULL, 0},
        {FJ_SEC_AMBPAIRS, NULL, 0},
        {FJ_SEC_SRCONLY, NULL, 0},
        {FJ_SEC_DAMAGEW, NULL, 0},
        {FJ_SEC_LANGMOD, NULL, 0},
        {FJ_SEC_RECORDS, NULL, 0},
    };
    *image = oci_assemble(secs, (uint32_t)(sizeof secs / sizeof secs[0]), image_len);
    if (!*image)
        goto nomem;
    rc = 0;
    goto done;
nomem:
    snprintf(err, errlen, "%s: out of memory", config);
done:
    oc_dict_free(seg);
    free(edge_hash);
    free(barrier);
    oci_builder_free(&b);
    return rc;
}

/* ---- the API ---------------------------------------------------------------- */

/* Whether -c's argument names a config file rather than a profile: a path
 * (a '/') or a .json name, and a regular file there. */
static int names_config_file(const char *config)
{
    size_t n = strlen(config);
    return (strchr(config, '/') || (n > 5 && strcmp(config + n - 5, ".json") == 0)) &&
           readable_file(config);
}

static json_t *read_config(const char *path, fjf_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fjf_error_set(err, FJF_NO_OFFSET, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    char *text = malloc(CONFIG_MAX + 1);
    size_t len = text ? fread(text, 1, CONFIG_MAX + 1, f) : 0;
    int bad = !text || ferror(f);
    fclose(f);
    if (bad || len > CONFIG_MAX) {
        fjf_error_set(err, FJF_NO_OFFSET, "%s: %s", path,
                      !text ? "out of memory" : bad ? "read error" : "larger than 1 MiB");
        free(text);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    free(text);
    if (!root) {
        fjf_error_set(err, FJF_NO_OFFSET, "%s:%d:%d: not a valid config: %s", path, jerr.line,
                      jerr.column, jerr.text);
        return NULL;
    }
    if (!json_is_object(root) || !json_is_array(json_object_get(root, "conversion_chain"))) {
        fjf_error_set(err, FJF_NO_OFFSET, "%s: not an OpenCC config (no conversion_chain)", path);
        json_decref(root);
        return NULL;
    }
    return root;
}

int fjf_opencc_config_load(const fj_dict *stock, const char *config, const char *const *paths,
                           size_t path_count, fjf_opencc_config **out, fjf_error *err)
{
    *out = NULL;
    if (!stock || !config || !names_config_file(config))
        return 0;
    json_t *root = read_config(config, err);
    if (!root)
        return -1;
    fjf_opencc_config *c = calloc(1, sizeof *c);
    if (!c) {
        json_decref(root);
        fjf_error_set(err, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    if (stock_profile(root, c->profile, sizeof c->profile)) {
        json_decref(root);
        c->dict = stock;
        *out = c;
        return 0;
    }
    loader l;
    memset(&l, 0, sizeof l);
    l.stock = stock;
    l.config = config;
    l.paths = paths;
    l.path_count = path_count;
    const char *slash = strrchr(config, '/');
    snprintf(l.dir, sizeof l.dir, "%.*s", slash ? (int)(slash - config) : 1,
             slash ? (slash == config ? "/" : config) : ".");
    char msg[sizeof err->message] = "";
    /* Out of memory here is an error, not the tools' exit. */
    oc_nomem_begin();
    oc_profile *p = oc_profile_parse(root, CUSTOM_PROFILE, config, resolve, &l, msg, sizeof msg);
    json_decref(root);
    size_t image_len = 0;
    int rc = p ? build_image(p, config, &c->image, &image_len, msg, sizeof msg) : -1;
    oc_profile_free(p);
    if (oc_nomem_end()) {
        snprintf(msg, sizeof msg, "%s: out of memory", config);
        rc = -1;
    }
    for (size_t i = 0; i < l.dict_count; i++) {
        oc_dict_free(l.dicts[i]);
        free(l.keys[i]);
    }
    free(l.dicts);
    free(l.keys);
    fj_error ferr;
    if (rc == 0 && fj_dict_open_memory(c->image, image_len, NULL, &c->own, &ferr) != FJ_OK) {
        snprintf(msg, sizeof msg, "%s: %s", config, ferr.message);
        rc = -1;
    }
    if (rc != 0) {
        /* Messages from the parser name no file; the resolver's do. */
        if (strncmp(msg, config, strlen(config)) == 0)
            fjf_error_set(err, FJF_NO_OFFSET, "%s", msg);
        else
            fjf_error_set(err, FJF_NO_OFFSET, "%s: %s", config, msg);
        fjf_opencc_config_free(c);
        return -1;
    }
    c->dict = c->own;
    snprintf(c->profile, sizeof c->profile, "%s", CUSTOM_PROFILE);
    *out = c;
    return 0;
}

const fj_dict *fjf_opencc_config_dict(const fjf_opencc_config *c) { return c ? c->dict : NULL; }

const char *fjf_opencc_config_profile(const fjf_opencc_config *c) { return c ? c->profile : NULL; }

int fjf_opencc_config_custom(const fjf_opencc_config *c) { return c && c->own; }

void fjf_opencc_config_free(fjf_opencc_config *c)
{
    if (!c)
        return;
    fj_dict_close(c->own);
    free(c->image);
    free(c);
}
