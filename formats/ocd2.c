/* OpenCC's .ocd2 dictionaries (ocd2.h). After the header and the trie
 * come, little-endian: the entry count (u32), the values' total length
 * (u32) and their bytes, each value NUL-terminated; then per entry, in key
 * id order, its value count (u16) and each value's length with its NUL
 * (u16). */
#include "ocd2.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fanjian.h"

#define OCD2_HEADER "OPENCC_MARISA_0.2.5"
/* Far above OpenCC's largest (STPhrases, under 2 MiB). */
#define OCD2_MAX ((size_t)1 << 30)

/* The file's bytes after the header, in memory malloc aligns (the trie is
 * read in place); *len their count. NULL and err when it cannot. */
static unsigned char *read_body(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char header[sizeof OCD2_HEADER - 1];
    unsigned char *body = NULL;
    size_t cap = 0, n = 0;
    if (fread(header, 1, sizeof header, f) != sizeof header ||
        memcmp(header, OCD2_HEADER, sizeof header) != 0) {
        snprintf(err, errlen, "%s: not an OpenCC .ocd2 dictionary (no %s header)", path,
                 OCD2_HEADER);
        goto fail;
    }
    for (;;) {
        if (n == cap) {
            size_t want = cap ? cap * 2 : 1 << 16;
            unsigned char *grown = want <= OCD2_MAX + 1 ? realloc(body, want) : NULL;
            if (!grown) {
                snprintf(err, errlen, "%s: %s", path,
                         want > OCD2_MAX + 1 ? "larger than 1 GiB" : "out of memory");
                goto fail;
            }
            body = grown;
            cap = want;
        }
        size_t got = fread(body + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        goto fail;
    }
    fclose(f);
    *len = n;
    return body;
fail:
    free(body);
    fclose(f);
    return NULL;
}

typedef struct key_sink {
    oc_entry *entries; /* by key id */
    size_t count;
    const char *path;
    char *err;
    size_t errlen;
} key_sink;

static int take_key(void *ctx, const char *key, size_t len, size_t id)
{
    key_sink *s = ctx;
    if (id >= s->count || s->entries[id].key) {
        snprintf(s->err, s->errlen, "%s: damaged trie (key id %zu out of place)", s->path, id);
        return -1;
    }
    if (memchr(key, 0, len)) {
        snprintf(s->err, s->errlen, "%s: a key with a NUL byte (key id %zu)", s->path, id);
        return -1;
    }
    s->entries[id].key = malloc(len + 1);
    if (!s->entries[id].key) {
        snprintf(s->err, s->errlen, "out of memory");
        return -1;
    }
    memcpy(s->entries[id].key, key, len);
    s->entries[id].key[len] = 0;
    return 0;
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t get_u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* The values after the trie, p[0..len), into the entries' values; 0, or -1
 * with err. */
static int read_values(const unsigned char *p, size_t len, key_sink *s)
{
    const char *path = s->path;
    if (len < 8) {
        snprintf(s->err, s->errlen, "%s: truncated (no values after the trie)", path);
        return -1;
    }
    uint32_t items = get_u32(p), total = get_u32(p + 4);
    if (items != s->count) {
        snprintf(s->err, s->errlen, "%s: damaged: %u values for %zu keys", path, items, s->count);
        return -1;
    }
    if (total > len - 8) {
        snprintf(s->err, s->errlen, "%s: truncated (in the values)", path);
        return -1;
    }
    const unsigned char *text = p + 8, *lens = text + total, *end = p + len;
    size_t used = 0;
    for (size_t i = 0; i < s->count; i++) {
        if (end - lens < 2) {
            snprintf(s->err, s->errlen, "%s: truncated (in the value lengths)", path);
            return -1;
        }
        uint16_t nvalues = get_u16(lens);
        lens += 2;
        if (nvalues == 0) {
            snprintf(s->err, s->errlen, "%s: damaged: no value for key %s", path, s->entries[i].key);
            return -1;
        }
        if ((size_t)(end - lens) < 2u * nvalues) {
            snprintf(s->err, s->errlen, "%s: truncated (in the value lengths)", path);
            return -1;
        }
        oc_entry *e = &s->entries[i];
        e->values = calloc(nvalues, sizeof *e->values);
        if (!e->values) {
            snprintf(s->err, s->errlen, "out of memory");
            return -1;
        }
        for (uint16_t v = 0; v < nvalues; v++, lens += 2) {
            size_t n = get_u16(lens);
            const char *value = (const char *)text + used;
            int cut;
            if (n == 0 || n > total - used || value[n - 1] != 0 || memchr(value, 0, n - 1)) {
                snprintf(s->err, s->errlen, "%s: damaged: a value beyond the values (key %s)", path,
                         e->key);
                return -1;
            }
            if (fj_utf8_valid(value, n - 1, &cut) != n - 1) {
                snprintf(s->err, s->errlen, "%s: not UTF-8: a value of key %s", path, e->key);
                return -1;
            }
            used += n;
            if (!(e->values[v] = strdup(value))) {
                snprintf(s->err, s->errlen, "out of memory");
                return -1;
            }
            e->value_count++;
        }
    }
    if (used != total || lens != end) {
        snprintf(s->err, s->errlen, "%s: damaged: %s", path,
                 used != total ? "values left over" : "bytes after the values");
        return -1;
    }
    return 0;
}

oc_dict *oc_dict_read_ocd2(const char *path, char *err, size_t errlen)
{
    size_t len, used, keys;
    unsigned char *body = read_body(path, &len, err, errlen);
    if (!body)
        return NULL;
    char why[200] = "";
    fjf_marisa *trie = fjf__marisa_map(body, len, &used, &keys, why, sizeof why);
    if (!trie) {
        if (strcmp(why, "out of memory") == 0)
            snprintf(err, errlen, "%s: out of memory", path);
        else
            snprintf(err, errlen, "%s: damaged or truncated trie (%s)", path, why);
        free(body);
        return NULL;
    }
    key_sink s = {calloc(keys ? keys : 1, sizeof(oc_entry)), keys, path, err, errlen};
    int rc = -1;
    err[0] = 0;
    if (!s.entries)
        snprintf(err, errlen, "out of memory");
    else if (fjf__marisa_each_key(trie, take_key, &s, why, sizeof why) == 0)
        rc = read_values(body + used, len - used, &s);
    else if (!err[0] && strcmp(why, "out of memory") == 0)
        snprintf(err, errlen, "%s: out of memory", path);
    else if (!err[0]) /* take_key's message, else the shim's */
        snprintf(err, errlen, "%s: damaged trie (%s)", path, why);
    fjf__marisa_free(trie);
    free(body);
    if (rc != 0) {
        for (size_t i = 0; s.entries && i < keys; i++) {
            free(s.entries[i].key);
            for (size_t v = 0; v < s.entries[i].value_count; v++)
                free(s.entries[i].values[v]);
            free(s.entries[i].values);
        }
        free(s.entries);
        return NULL;
    }
    return oc_dict_from_entries(path, s.entries, keys, err, errlen);
}
