/* OpenCC's data model: text dictionaries, derived dictionaries, configs,
 * group flattening and the reference converter. Clarity over speed. */
#include "ocdata.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/utf8.h"
#include "fanjian.h"

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Whether a failed allocation fails the call (oc_nomem_begin) in this
 * thread, and whether one has since. */
static _Thread_local int nomem_returns, nomem_seen;

void oc_nomem_begin(void)
{
    nomem_returns = 1;
    nomem_seen = 0;
}

int oc_nomem_end(void)
{
    int seen = nomem_seen;
    nomem_returns = nomem_seen = 0;
    return seen;
}

int oc_nomem_failed(void) { return nomem_seen; }

void oc__nomem(void)
{
    if (!nomem_returns) {
        fprintf(stderr, "fanjian: out of memory\n");
        exit(70);
    }
    nomem_seen = 1;
}

/* NULL (p kept) only after oc_nomem_begin; the functions the config loader
 * reaches check them. */
static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oc__nomem();
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oc__nomem();
    return q;
}

static char *xstrndup(const char *s, size_t n)
{
    char *r = xmalloc(n + 1);
    if (!r)
        return NULL;
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}

static char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

/* Frees the n strings of v and v. */
static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- dictionaries ------------------------------------------------------ */

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const oc_entry *)a)->key, ((const oc_entry *)b)->key);
}

static oc_dict *dict_new(const char *name)
{
    oc_dict *d = calloc(1, sizeof *d);
    if (!d || !(d->name = xstrdup(name))) {
        if (!d)
            oc__nomem();
        free(d);
        return NULL;
    }
    return d;
}

/* Takes key and values over (freed when it fails: -1, no memory). */
static int dict_add(oc_dict *d, size_t *cap, char *key, char **values, size_t nvalues, int tofu)
{
    int ok = key && values;
    for (size_t i = 0; ok && i < nvalues; i++)
        ok = values[i] != NULL;
    if (ok && d->count == *cap) {
        size_t grown = *cap ? *cap * 2 : 256;
        oc_entry *entries = xrealloc(d->entries, grown * sizeof *d->entries);
        if (entries)
            d->entries = entries;
        unsigned char *tofu_risk = entries ? xrealloc(d->tofu_risk, grown) : NULL;
        if (tofu_risk)
            d->tofu_risk = tofu_risk;
        if (tofu_risk)
            *cap = grown;
        else
            ok = 0;
    }
    if (!ok) {
        free(key);
        free_strings(values, nvalues);
        return -1;
    }
    d->entries[d->count].key = key;
    d->entries[d->count].values = values;
    d->entries[d->count].value_count = nvalues;
    d->tofu_risk[d->count] = (unsigned char)tofu;
    d->count++;
    return 0;
}

/* Sorts entries by key, keeping tofu_risk aligned; fails on duplicates. */
static int dict_finish(oc_dict *d, char *err, size_t errlen)
{
    d->file_sorted = 1;
    if (d->count == 0)
        return 0;
    for (size_t i = 1; i < d->count; i++)
        if (strcmp(d->entries[i - 1].key, d->entries[i].key) > 0)
            d->file_sorted = 0;
    /* Carry the tofu flag through the sort by stashing it in value_count's high bit. */
    const size_t flag = (size_t)1 << (sizeof(size_t) * 8 - 1);
    for (size_t i = 0; i < d->count; i++)
        if (d->tofu_risk[i])
            d->entries[i].value_count |= flag;
    qsort(d->entries, d->count, sizeof *d->entries, entry_cmp);
    for (size_t i = 0; i < d->count; i++) {
        d->tofu_risk[i] = (d->entries[i].value_count & flag) != 0;
        d->entries[i].value_count &= ~flag;
    }
    for (size_t i = 1; i < d->count; i++) {
        if (strcmp(d->entries[i - 1].key, d->entries[i].key) == 0) {
            seterr(err, errlen, "%s: duplicated key %s", d->name, d->entries[i].key);
            return -1;
        }
    }
    return 0;
}

#define REVERSE_PREFER "# @reverse-prefer:"
#define TOFU_RISK "# @tofu-risk:"

oc_dict *oc_dict_parse_buffer(const char *name, const char *data, size_t len, char *err,
                              size_t errlen)
{
    oc_dict *d = dict_new(name);
    size_t cap = 0, prefer_cap = 0, off = 0, lineno = 0;
    int tofu_pending = 0;
    if (!d)
        goto nomem;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        off = 3;
    while (off < len) {
        size_t end = off;
        while (end < len && data[end] != '\n')
            end++;
        size_t n = end - off;
        const char *line = data + off;
        off = end < len ? end + 1 : end;
        lineno++;
        if (n && line[n - 1] == '\r')
            n--;
        if (memchr(line, '\0', n)) {
            seterr(err, errlen, "%s:%zu: NUL byte", name, lineno);
            goto fail;
        }
        if (n == 0) {
            if (tofu_pending)
                goto tofu_fail;
            continue;
        }
        if (line[0] == '#') {
            if (tofu_pending)
                goto tofu_fail;
            size_t pl = strlen(REVERSE_PREFER);
            if (n >= pl && memcmp(line, REVERSE_PREFER, pl) == 0) {
                char *rest = xstrndup(line + pl, n - pl), *save = NULL;
                if (!rest)
                    goto nomem;
                char *f1 = strtok_r(rest, " \t", &save);
                char *f2 = f1 ? strtok_r(NULL, " \t", &save) : NULL;
                char *f3 = f2 ? strtok_r(NULL, " \t", &save) : NULL;
                if (!f1 || f3) {
                    free(rest);
                    seterr(err, errlen, "%s:%zu: invalid reverse preference", name, lineno);
                    goto fail;
                }
                if (d->prefer_count == prefer_cap) {
                    size_t grown = prefer_cap ? prefer_cap * 2 : 8;
                    char **keys = xrealloc(d->prefer_key, grown * sizeof(char *));
                    if (keys)
                        d->prefer_key = keys;
                    char **vals = keys ? xrealloc(d->prefer_value, grown * sizeof(char *)) : NULL;
                    if (vals)
                        d->prefer_value = vals;
                    if (!vals) {
                        free(rest);
                        goto nomem;
                    }
                    prefer_cap = grown;
                }
                char *pk = xstrdup(f1), *pv = xstrdup(f2 ? f2 : f1);
                free(rest);
                if (!pk || !pv) {
                    free(pk);
                    free(pv);
                    goto nomem;
                }
                d->prefer_key[d->prefer_count] = pk;
                d->prefer_value[d->prefer_count] = pv;
                d->prefer_count++;
            } else if (n >= strlen(TOFU_RISK) && memcmp(line, TOFU_RISK, strlen(TOFU_RISK)) == 0) {
                tofu_pending = 1;
            }
            continue;
        }
        const char *tab = memchr(line, '\t', n);
        if (!tab) {
            seterr(err, errlen, "%s:%zu: no tab between key and value", name, lineno);
            goto fail;
        }
        char *key = xstrndup(line, (size_t)(tab - line));
        const char *v = tab + 1, *vend = line + n;
        size_t nvalues = 0, vcap = 2;
        char **values = xmalloc(vcap * sizeof(char *));
        while (values) {
            const char *sp = memchr(v, ' ', (size_t)(vend - v));
            const char *e = sp ? sp : vend;
            if (nvalues == vcap) {
                char **grown = xrealloc(values, (vcap * 2) * sizeof(char *));
                if (!grown) {
                    free_strings(values, nvalues);
                    values = NULL;
                    break;
                }
                values = grown;
                vcap *= 2;
            }
            values[nvalues++] = xstrndup(v, (size_t)(e - v));
            if (!sp)
                break;
            v = sp + 1;
        }
        if (dict_add(d, &cap, key, values, nvalues, tofu_pending) != 0)
            goto nomem;
        tofu_pending = 0;
    }
    if (tofu_pending)
        goto tofu_fail;
    if (dict_finish(d, err, errlen) != 0)
        goto fail;
    return d;
nomem:
    seterr(err, errlen, "out of memory");
    goto fail;
tofu_fail:
    seterr(err, errlen, "%s:%zu: expected a mapping after %s", name, lineno, TOFU_RISK);
fail:
    oc_dict_free(d);
    return NULL;
}

static void free_entries(oc_entry *entries, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(entries[i].key);
        for (size_t j = 0; j < entries[i].value_count; j++)
            free(entries[i].values[j]);
        free(entries[i].values);
    }
    free(entries);
}

oc_dict *oc_dict_from_entries(const char *name, oc_entry *entries, size_t count, char *err,
                              size_t errlen)
{
    oc_dict *d = calloc(1, sizeof *d);
    if (d) {
        d->entries = entries;
        d->count = count;
        d->name = strdup(name);
        d->tofu_risk = calloc(count ? count : 1, 1);
    }
    if (!d || !d->name || !d->tofu_risk) {
        seterr(err, errlen, "out of memory");
        if (d)
            oc_dict_free(d);
        else
            free_entries(entries, count);
        return NULL;
    }
    if (dict_finish(d, err, errlen) != 0) {
        oc_dict_free(d);
        return NULL;
    }
    return d;
}

oc_dict *oc_dict_parse(const char *name, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        seterr(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0, got;
    char *buf = xmalloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *grown = xrealloc(buf, cap * 2);
            if (!grown)
                free(buf);
            buf = grown;
            cap *= 2;
        }
    }
    int nomem = !buf, bad = nomem || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        seterr(err, errlen, "%s: %s", path, nomem ? "out of memory" : "read error");
        return NULL;
    }
    oc_dict *d = oc_dict_parse_buffer(name, buf, len, err, errlen);
    free(buf);
    return d;
}

void oc_dict_free(oc_dict *d)
{
    if (!d)
        return;
    free_entries(d->entries, d->count);
    for (size_t i = 0; i < d->prefer_count; i++) {
        free(d->prefer_key[i]);
        free(d->prefer_value[i]);
    }
    free(d->prefer_key);
    free(d->prefer_value);
    free(d->tofu_risk);
    free(d->name);
    free(d);
}

int oc_dict_write(const oc_dict *d, FILE *f)
{
    for (size_t i = 0; i < d->count; i++) {
        const oc_entry *e = &d->entries[i];
        if (fputs(e->key, f) == EOF || fputc('\t', f) == EOF)
            return -1;
        for (size_t j = 0; j < e->value_count; j++)
            if ((j && fputc(' ', f) == EOF) || fputs(e->values[j], f) == EOF)
                return -1;
        if (fputc('\n', f) == EOF)
            return -1;
    }
    return 0;
}

const oc_entry *oc_dict_find(const oc_dict *d, const char *key, size_t keylen)
{
    size_t lo = 0, hi = d->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *k = d->entries[mid].key;
        size_t klen = strlen(k);
        int c = memcmp(k, key, klen < keylen ? klen : keylen);
        if (c == 0)
            c = klen < keylen ? -1 : klen > keylen ? 1 : 0;
        if (c == 0)
            return &d->entries[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Reversal keeps first-seen order of values, as reverse.py's dict does. We
 * need the entries in file order for that; the parser sorted them, but the
 * source files are sorted already (OpenCC's sort.py), so key order is file
 * order. Checked below. */
oc_dict *oc_dict_reverse(const oc_dict *src, const char *name, char *err, size_t errlen)
{
    if (!src->file_sorted) {
        seterr(err, errlen, "%s: expected a sorted source file", src->name);
        return NULL;
    }
    oc_dict *d = dict_new(name);
    size_t cap = 0;
    for (size_t i = 0; i < src->count; i++) {
        const oc_entry *e = &src->entries[i];
        for (size_t j = 0; j < e->value_count; j++) {
            const char *v = e->values[j];
            size_t k = 0;
            while (k < d->count && strcmp(d->entries[k].key, v) != 0)
                k++;
            if (k == d->count) {
                char **vals = xmalloc(sizeof(char *));
                vals[0] = xstrndup(e->key, strlen(e->key));
                dict_add(d, &cap, xstrndup(v, strlen(v)), vals, 1, 0);
            } else {
                oc_entry *t = &d->entries[k];
                t->values = xrealloc(t->values, (t->value_count + 1) * sizeof(char *));
                t->values[t->value_count++] = xstrndup(e->key, strlen(e->key));
            }
        }
    }
    /* Later preferences for the same key replace earlier ones (a Python dict). */
    for (size_t p = 0; p < src->prefer_count; p++) {
        int superseded = 0;
        for (size_t q = p + 1; q < src->prefer_count; q++)
            if (strcmp(src->prefer_key[p], src->prefer_key[q]) == 0)
                superseded = 1;
        if (superseded)
            continue;
        const char *key = src->prefer_key[p], *pref = src->prefer_value[p];
        oc_entry *t = NULL;
        for (size_t k = 0; k < d->count; k++)
            if (strcmp(d->entries[k].key, key) == 0)
                t = &d->entries[k];
        size_t at = t ? t->value_count : 0;
        for (size_t j = 0; t && j < t->value_count; j++)
            if (strcmp(t->values[j], pref) == 0) {
                at = j;
                break;
            }
        if (!t || at == t->value_count) {
            seterr(err, errlen, "%s: reverse preference %s -> %s has no matching mapping",
                   src->name, key, pref);
            oc_dict_free(d);
            return NULL;
        }
        char *moved = t->values[at];
        memmove(t->values + 1, t->values, at * sizeof(char *));
        t->values[0] = moved;
    }
    if (dict_finish(d, err, errlen) != 0) {
        oc_dict_free(d);
        return NULL;
    }
    return d;
}

oc_dict *oc_dict_tofu_ext(const oc_dict *src, const char *name, char *err, size_t errlen)
{
    oc_dict *d = dict_new(name);
    size_t cap = 0;
    for (size_t i = 0; i < src->count; i++) {
        if (!src->tofu_risk[i])
            continue;
        const oc_entry *e = &src->entries[i];
        size_t first = (e->value_count && strcmp(e->values[0], e->key) == 0) ? 1 : 0;
        if (first >= e->value_count) {
            seterr(err, errlen, "%s: expected extension mapping for %s", src->name, e->key);
            oc_dict_free(d);
            return NULL;
        }
        char **vals = xmalloc((e->value_count - first) * sizeof(char *));
        for (size_t j = first; j < e->value_count; j++)
            vals[j - first] = xstrndup(e->values[j], strlen(e->values[j]));
        dict_add(d, &cap, xstrndup(e->key, strlen(e->key)), vals, e->value_count - first, 0);
    }
    if (dict_finish(d, err, errlen) != 0) {
        oc_dict_free(d);
        return NULL;
    }
    return d;
}

/* ---- matching (reference semantics) ------------------------------------ */

/* Length in bytes of the unit at p: a character, or one byte that is not
 * UTF-8 (a truncated sequence at the very end counts as such). */
static size_t unit_len(const unsigned char *p, const unsigned char *end)
{
    uint32_t cp;
    int n = fj_utf8_decode(p, end, &cp);
    return n > 0 ? (size_t)n : 1;
}

/* Longest key of d that is a prefix of s[0..len), ending on a unit boundary. */
static const oc_entry *leaf_match(const oc_dict *d, const char *s, size_t len)
{
    const oc_entry *best = NULL;
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    size_t off = 0;
    while (off < len) {
        off += unit_len(p + off, end);
        const oc_entry *e = oc_dict_find(d, s, off);
        if (e)
            best = e;
        if (off > 64 * 4) /* no OpenCC key is that long */
            break;
    }
    return best;
}

static int expr_active(const oc_expr *e, int include_tofu)
{
    if (e->kind == OC_LEAF)
        return include_tofu || !e->may_output_tofu;
    for (size_t i = 0; i < e->child_count; i++)
        if (expr_active(e->children[i], include_tofu))
            return 1;
    return 0;
}

/* DictGroup / UnionDictGroup MatchPrefix. */
static const oc_entry *expr_match(const oc_expr *e, const char *s, size_t len, int include_tofu)
{
    if (e->kind == OC_LEAF)
        return (include_tofu || !e->may_output_tofu) ? leaf_match(e->dict, s, len) : NULL;
    const oc_entry *best = NULL;
    for (size_t i = 0; i < e->child_count; i++) {
        const oc_entry *m = expr_match(e->children[i], s, len, include_tofu);
        if (!m)
            continue;
        if (e->kind == OC_SHORT_CIRCUIT)
            return m;
        if (!best || strlen(m->key) > strlen(best->key))
            best = m;
    }
    return best;
}

typedef struct strbuf {
    char *p;
    size_t len, cap;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        while (b->len + n + 1 > b->cap)
            b->cap = b->cap ? b->cap * 2 : 256;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

/* The unmatched unit at s: a whole ideographic description sequence, or one
 * character (Conversion::AppendConverted's fallback). */
static size_t unmatched_len(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    uint32_t cp;
    size_t ids;
    if (fj_utf8_decode(p, end, &cp) > 0 && fj_ids_arity(cp) &&
        fj_ids_parse(p, end, &ids) == FJ_IDS_COMPLETE)
        return ids;
    return unit_len(p, end);
}

/* Conversion::AppendConverted: maximum matching within one segment. */
static void convert_segment(const oc_expr *e, const char *s, size_t len, strbuf *out,
                            int include_tofu)
{
    size_t off = 0;
    while (off < len) {
        const oc_entry *m = expr_match(e, s + off, len - off, include_tofu);
        if (m) {
            sb_add(out, m->values[0], strlen(m->values[0]));
            off += strlen(m->key);
        } else {
            size_t n = unmatched_len(s + off, len - off);
            sb_add(out, s + off, n);
            off += n;
        }
    }
}

/* SingleStageConverter: segment, then run each segment through the chain. */
static void run_stage(oc_expr *const *chain, size_t chain_count, const oc_expr *seg,
                      const char *text, size_t len, strbuf *out, int include_tofu)
{
    size_t nseg = 0, segcap = 16;
    size_t *seg_start = xmalloc(segcap * sizeof(size_t)), *seg_len = xmalloc(segcap * sizeof(size_t));
    if (!seg) {
        seg_start[0] = 0;
        seg_len[0] = len;
        nseg = len ? 1 : 0;
    } else {
        size_t off = 0, run_start = 0, run_len = 0;
        while (off <= len) {
            const oc_entry *m = off < len ? expr_match(seg, text + off, len - off, 1) : NULL;
            int at_end = off == len;
            if (m || at_end) {
                if (run_len) {
                    if (nseg + 2 > segcap) {
                        segcap *= 2;
                        seg_start = xrealloc(seg_start, segcap * sizeof(size_t));
                        seg_len = xrealloc(seg_len, segcap * sizeof(size_t));
                    }
                    seg_start[nseg] = run_start;
                    seg_len[nseg++] = run_len;
                    run_len = 0;
                }
                if (at_end)
                    break;
                if (nseg + 2 > segcap) {
                    segcap *= 2;
                    seg_start = xrealloc(seg_start, segcap * sizeof(size_t));
                    seg_len = xrealloc(seg_len, segcap * sizeof(size_t));
                }
                seg_start[nseg] = off;
                seg_len[nseg++] = strlen(m->key);
                off += strlen(m->key);
                run_start = off;
            } else {
                size_t n = unmatched_len(text + off, len - off);
                if (!run_len)
                    run_start = off;
                run_len += n;
                off += n;
            }
        }
    }
    for (size_t i = 0; i < nseg; i++) {
        strbuf cur = {0};
        sb_add(&cur, text + seg_start[i], seg_len[i]);
        for (size_t c = 0; c < chain_count; c++) {
            if (!expr_active(chain[c], include_tofu))
                continue;
            strbuf next = {0};
            sb_add(&next, "", 0);
            convert_segment(chain[c], cur.p, cur.len, &next, include_tofu);
            free(cur.p);
            cur = next;
        }
        sb_add(out, cur.p, cur.len);
        free(cur.p);
    }
    free(seg_start);
    free(seg_len);
}

char *oc_reference_convert(const oc_profile *p, const char *text, size_t len, size_t *outlen,
                           int include_tofu)
{
    strbuf cur = {0};
    sb_add(&cur, text, len);
    if (p->normalization_count) {
        strbuf norm = {0};
        sb_add(&norm, "", 0);
        run_stage(p->normalization, p->normalization_count, NULL, cur.p, cur.len, &norm,
                  include_tofu);
        free(cur.p);
        cur = norm;
    }
    strbuf out = {0};
    sb_add(&out, "", 0);
    run_stage(p->chain, p->chain_count, p->segmentation, cur.p, cur.len, &out, include_tofu);
    free(cur.p);
    *outlen = out.len;
    return out.p;
}

/* ---- flattening -------------------------------------------------------- */

/* Adds copies of key and its one value; -1 when out of memory. */
static int add_copy(oc_dict *d, size_t *cap, const char *key, const char *value)
{
    char **v = xmalloc(sizeof(char *));
    if (v && !(v[0] = xstrdup(value))) {
        free(v);
        v = NULL;
    }
    return dict_add(d, cap, xstrdup(key), v, 1, 0);
}

static oc_dict *dict_copy_defaults(const oc_dict *src)
{
    oc_dict *d = dict_new(src->name);
    size_t cap = 0;
    for (size_t i = 0; d && i < src->count; i++)
        if (add_copy(d, &cap, src->entries[i].key, src->entries[i].values[0]) != 0) {
            oc_dict_free(d);
            return NULL;
        }
    return d;
}

/* True when some key of d is a prefix of key (the whole key included). */
static int has_prefix_key(const oc_dict *d, const char *key)
{
    size_t len = strlen(key), off = 0;
    const unsigned char *p = (const unsigned char *)key;
    while (off < len) {
        off += unit_len(p + off, p + len);
        if (oc_dict_find(d, key, off))
            return 1;
    }
    return 0;
}

/* Adds the entries of b to a: all of them (union: a's value wins on equal
 * keys), or for short_circuit only those no key of a can pre-empt. With
 * longest-match lookup the result behaves exactly like the group. */
static int merge_into(oc_dict *a, const oc_dict *b, int short_circuit)
{
    /* Look up only a's original entries, which are sorted. */
    oc_dict before = *a;
    size_t cap = a->count;
    for (size_t i = 0; i < b->count; i++) {
        const char *k = b->entries[i].key;
        before.entries = a->entries;
        if (short_circuit ? has_prefix_key(&before, k) : oc_dict_find(&before, k, strlen(k)) != NULL)
            continue;
        if (add_copy(a, &cap, k, b->entries[i].values[0]) != 0)
            return -1;
    }
    char err[256];
    if (dict_finish(a, err, sizeof err) != 0) {
        fprintf(stderr, "fanjian: internal error merging dictionaries: %s\n", err);
        exit(70);
    }
    return 0;
}

oc_dict *oc_expr_flatten(const oc_expr *e, int include_tofu)
{
    if (e->kind == OC_LEAF)
        return (include_tofu || !e->may_output_tofu) ? dict_copy_defaults(e->dict) : NULL;
    oc_dict *acc = NULL;
    for (size_t i = 0; i < e->child_count; i++) {
        oc_dict *c = oc_expr_flatten(e->children[i], include_tofu);
        if (!c && nomem_seen) {
            oc_dict_free(acc);
            return NULL;
        }
        if (!c)
            continue;
        if (!acc) {
            acc = c;
            continue;
        }
        int merged = merge_into(acc, c, e->kind == OC_SHORT_CIRCUIT);
        oc_dict_free(c);
        if (merged != 0) {
            oc_dict_free(acc);
            return NULL;
        }
    }
    return acc;
}

/* ---- configs and data directory ---------------------------------------- */

static oc_dict *data_find(oc_data *data, const char *name)
{
    for (size_t i = 0; i < data->dict_count; i++)
        if (strcmp(data->dicts[i]->name, name) == 0)
            return data->dicts[i];
    return NULL;
}

const oc_dict *oc_data_dict(const oc_data *data, const char *name)
{
    for (size_t i = 0; i < data->dict_count; i++)
        if (strcmp(data->dicts[i]->name, name) == 0)
            return data->dicts[i];
    return NULL;
}

const oc_profile *oc_data_profile(const oc_data *data, const char *name)
{
    for (size_t i = 0; i < data->profile_count; i++)
        if (strcmp(data->profiles[i]->name, name) == 0)
            return data->profiles[i];
    return NULL;
}

static void data_add(oc_data *data, oc_dict *d)
{
    data->dicts = xrealloc(data->dicts, (data->dict_count + 1) * sizeof(oc_dict *));
    data->dicts[data->dict_count++] = d;
}

void oc_expr_free(oc_expr *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->child_count; i++)
        oc_expr_free(e->children[i]);
    free(e->children);
    free(e);
}

oc_expr *oc_expr_parse(struct json_t *j, oc_dict_resolver resolve, void *ctx, char *err,
                       size_t errlen)
{
    const char *type = json_string_value(json_object_get(j, "type"));
    if (!type) {
        seterr(err, errlen, "dictionary without a type");
        return NULL;
    }
    oc_expr *e = calloc(1, sizeof *e);
    if (!e) {
        oc__nomem();
        seterr(err, errlen, "out of memory");
        return NULL;
    }
    if (strcmp(type, "group") == 0) {
        const char *policy = json_string_value(json_object_get(j, "match_policy"));
        e->kind = (policy && strcmp(policy, "union") == 0) ? OC_UNION : OC_SHORT_CIRCUIT;
        if (policy && strcmp(policy, "union") != 0 && strcmp(policy, "short_circuit") != 0) {
            seterr(err, errlen, "unknown match_policy %s", policy);
            free(e);
            return NULL;
        }
        json_t *dicts = json_object_get(j, "dicts");
        size_t n = json_array_size(dicts);
        e->children = xmalloc(n * sizeof(oc_expr *));
        if (!e->children) {
            seterr(err, errlen, "out of memory");
            free(e);
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            e->children[i] = oc_expr_parse(json_array_get(dicts, i), resolve, ctx, err, errlen);
            if (!e->children[i]) {
                oc_expr_free(e);
                return NULL;
            }
            e->child_count++;
        }
        return e;
    }
    const char *file = json_string_value(json_object_get(j, "file"));
    if (!file) {
        seterr(err, errlen, "dictionary of type %s without a file", type);
        free(e);
        return NULL;
    }
    e->kind = OC_LEAF;
    e->may_output_tofu = json_is_true(json_object_get(j, "may_output_tofu"));
    e->dict = resolve(ctx, type, file, err, errlen);
    if (!e->dict) {
        free(e);
        return NULL;
    }
    return e;
}

/* A data directory's dictionary by the file's name without its extension. */
static const oc_dict *data_resolve(void *ctx, const char *type, const char *file, char *err,
                                   size_t errlen)
{
    (void)type;
    char name[256];
    snprintf(name, sizeof name, "%s", file);
    char *dot = strrchr(name, '.');
    if (dot)
        *dot = 0;
    const oc_dict *d = data_find(ctx, name);
    if (!d)
        seterr(err, errlen, "config names unknown dictionary %s", name);
    return d;
}

static int parse_chain(json_t *arr, oc_dict_resolver resolve, void *ctx, oc_expr ***out,
                       size_t *count, char *err, size_t errlen)
{
    size_t n = json_array_size(arr);
    *out = xmalloc((n ? n : 1) * sizeof(oc_expr *));
    *count = 0;
    if (!*out) {
        seterr(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        oc_expr *e = oc_expr_parse(json_object_get(json_array_get(arr, i), "dict"), resolve, ctx,
                                   err, errlen);
        if (!e)
            return -1;
        (*out)[(*count)++] = e;
    }
    return 0;
}

void oc_profile_free(oc_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->normalization_count; i++)
        oc_expr_free(p->normalization[i]);
    for (size_t i = 0; i < p->chain_count; i++)
        oc_expr_free(p->chain[i]);
    free(p->normalization);
    free(p->chain);
    oc_expr_free(p->segmentation);
    free(p->name);
    free(p);
}

oc_profile *oc_profile_parse(struct json_t *root, const char *name, const char *path,
                             oc_dict_resolver resolve, void *ctx, char *err, size_t errlen)
{
    oc_profile *p = calloc(1, sizeof *p);
    if (!p || !(p->name = xstrdup(name))) {
        if (!p)
            oc__nomem();
        free(p);
        seterr(err, errlen, "out of memory");
        return NULL;
    }
    json_t *seg = json_object_get(root, "segmentation");
    if (parse_chain(json_object_get(root, "normalization"), resolve, ctx, &p->normalization,
                    &p->normalization_count, err, errlen) != 0 ||
        parse_chain(json_object_get(root, "conversion_chain"), resolve, ctx, &p->chain,
                    &p->chain_count, err, errlen) != 0)
        goto fail;
    if (seg) {
        const char *type = json_string_value(json_object_get(seg, "type"));
        if (!type || strcmp(type, "mmseg") != 0) {
            seterr(err, errlen, "%s: unsupported segmentation", path);
            goto fail;
        }
        p->segmentation = oc_expr_parse(json_object_get(seg, "dict"), resolve, ctx, err, errlen);
        if (!p->segmentation)
            goto fail;
    }
    if (p->chain_count == 0) {
        seterr(err, errlen, "%s: empty conversion_chain", path);
        goto fail;
    }
    return p;
fail:
    oc_profile_free(p);
    return NULL;
}

static oc_profile *load_profile(oc_data *data, const char *dir, const char *name, char *err,
                                size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/config/%s.json", dir, name);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        seterr(err, errlen, "%s:%d: %s", path, jerr.line, jerr.text);
        return NULL;
    }
    oc_profile *p = oc_profile_parse(root, name, path, data_resolve, data, err, errlen);
    json_decref(root);
    return p;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* STPhrases_GeneratedFromRegionalPhrases: the regional phrase keys, converted
 * to Simplified with t2s (tofu-risk tables included), mapped back to the first
 * Traditional key that produced them. Short projections are skipped. */
static oc_dict *generate_st_phrases(oc_data *data, char *err, size_t errlen)
{
    const oc_profile *t2s = oc_data_profile(data, "t2s");
    const char *inputs[2] = {"HKPhrases", "TWPhrases"};
    oc_dict *d = dict_new("STPhrases_GeneratedFromRegionalPhrases");
    size_t cap = 0;
    for (int in = 0; in < 2; in++) {
        const oc_dict *src = oc_data_dict(data, inputs[in]);
        if (!src || !t2s || !src->file_sorted) {
            seterr(err, errlen, "missing or unsorted %s, or no t2s config", inputs[in]);
            oc_dict_free(d);
            return NULL;
        }
        for (size_t i = 0; i < src->count; i++) {
            const char *key = src->entries[i].key;
            size_t outlen;
            char *conv = oc_reference_convert(t2s, key, strlen(key), &outlen, 1);
            size_t chars = 0;
            for (size_t o = 0; o < outlen; o++)
                chars += ((unsigned char)conv[o] & 0xC0) != 0x80;
            if (chars < 3) {
                free(conv);
                continue;
            }
            oc_entry *hit = NULL;
            for (size_t k = 0; k < d->count; k++)
                if (strcmp(d->entries[k].key, conv) == 0)
                    hit = &d->entries[k];
            if (hit) {
                if (strcmp(hit->values[0], key) != 0) {
                    seterr(err, errlen, "conflicting regional phrase projections: %s: %s %s", conv,
                           hit->values[0], key);
                    free(conv);
                    oc_dict_free(d);
                    return NULL;
                }
                free(conv);
                continue;
            }
            char **v = xmalloc(sizeof(char *));
            v[0] = xstrndup(key, strlen(key));
            dict_add(d, &cap, conv, v, 1, 0);
        }
    }
    if (dict_finish(d, err, errlen) != 0) {
        oc_dict_free(d);
        return NULL;
    }
    return d;
}

oc_data *oc_data_load(const char *dir, char *err, size_t errlen)
{
    oc_data *data = xmalloc(sizeof *data);
    memset(data, 0, sizeof *data);
    char path[4096];
    snprintf(path, sizeof path, "%s/dictionary", dir);
    DIR *dh = opendir(path);
    if (!dh) {
        seterr(err, errlen, "%s: %s", path, strerror(errno));
        free(data);
        return NULL;
    }
    char **names = NULL;
    size_t nnames = 0;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n > 4 && strcmp(de->d_name + n - 4, ".txt") == 0) {
            names = xrealloc(names, (nnames + 1) * sizeof(char *));
            names[nnames++] = xstrndup(de->d_name, n - 4);
        }
    }
    closedir(dh);
    qsort(names, nnames, sizeof(char *), name_cmp);
    int ok = 1;
    for (size_t i = 0; i < nnames; i++) {
        snprintf(path, sizeof path, "%s/dictionary/%s.txt", dir, names[i]);
        oc_dict *d = ok ? oc_dict_parse(names[i], path, err, errlen) : NULL;
        if (!d)
            ok = 0;
        else
            data_add(data, d);
        free(names[i]);
    }
    free(names);
    if (!ok)
        goto fail;
    data->source_count = data->dict_count;

    static const char *const reversed[3] = {"TWVariants", "HKVariants", "JPShinjitaiCharacters"};
    for (int i = 0; i < 3; i++) {
        const oc_dict *src = data_find(data, reversed[i]);
        char name[128];
        snprintf(name, sizeof name, "%sRev", reversed[i]);
        oc_dict *d = src ? oc_dict_reverse(src, name, err, errlen) : NULL;
        if (!d) {
            if (!src)
                seterr(err, errlen, "missing dictionary %s", reversed[i]);
            goto fail;
        }
        data_add(data, d);
    }
    const oc_dict *ts = data_find(data, "TSCharacters");
    oc_dict *ext = ts ? oc_dict_tofu_ext(ts, "TSCharactersExt", err, errlen) : NULL;
    if (!ext) {
        if (!ts)
            seterr(err, errlen, "missing dictionary TSCharacters");
        goto fail;
    }
    data_add(data, ext);
    /* t2s is needed to generate the last table; its config does not use it. */
    oc_dict *placeholder = dict_new("STPhrases_GeneratedFromRegionalPhrases");
    data_add(data, placeholder);
    oc_profile *t2s = load_profile(data, dir, "t2s", err, errlen);
    if (!t2s)
        goto fail;
    data->profiles = xmalloc(sizeof(oc_profile *));
    data->profiles[0] = t2s;
    data->profile_count = 1;
    oc_dict *gen = generate_st_phrases(data, err, errlen);
    if (!gen)
        goto fail;
    data->dicts[data->dict_count - 1] = gen;
    oc_dict_free(placeholder);
    oc_profile_free(t2s);
    data->profile_count = 0;

    /* The library's profiles (data/profiles.tsv), in its order. */
    size_t count = 0;
    while (fj_profile_name(count))
        count++;
    data->profiles = xrealloc(data->profiles, count * sizeof(oc_profile *));
    for (size_t i = 0; i < count; i++) {
        oc_profile *p = load_profile(data, dir, fj_profile_name(i), err, errlen);
        if (!p)
            goto fail;
        data->profiles[data->profile_count++] = p;
    }
    return data;
fail:
    oc_data_free(data);
    return NULL;
}

void oc_data_free(oc_data *data)
{
    if (!data)
        return;
    for (size_t i = 0; i < data->profile_count; i++)
        oc_profile_free(data->profiles[i]);
    free(data->profiles);
    for (size_t i = 0; i < data->dict_count; i++)
        oc_dict_free(data->dicts[i]);
    free(data->dicts);
    free(data);
}
