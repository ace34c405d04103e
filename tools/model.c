/* Builds the context model's tables (see model.h). Every candidate word gets
 * one target form and a unigram cost; where a key has several targets, the
 * most frequent wins, because only the best form of a key can be on the best
 * path. */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/image_format.h"
#include "../src/utf8.h"

/* OpenCC's phrases carry no counts: they count as a word seen this often. */
#define PHRASE_COUNT 20.0
/* A curated line without a count. */
#define CURATED_COUNT 20000.0
#define MAX_WORD_CHARS 6
#define CURATED_PHRASE 1
#define CURATED_OURS 2

static void fail_oom(void)
{
    fprintf(stderr, "fjdict: out of memory\n");
    exit(70);
}

static void *xrealloc_(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        fail_oom();
    return p;
}

static char *xstrdup_(const char *s, size_t n)
{
    char *d = xrealloc_(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- code point strings ---------------------------------------------------- */

typedef struct u32s {
    uint32_t *cp;
    size_t n;
} u32s;

/* Decodes UTF-8; 0 on invalid input. */
static int decode_all(const char *s, size_t len, u32s *out)
{
    out->cp = xrealloc_(NULL, (len + 1) * sizeof(uint32_t));
    out->n = 0;
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        int k = fj_utf8_decode(p, end, &out->cp[out->n]);
        if (k <= 0) {
            free(out->cp);
            out->cp = NULL;
            return 0;
        }
        out->n++;
        p += k;
    }
    return 1;
}

static size_t encode_all(const uint32_t *cp, size_t n, char *out)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)fj_utf8_encode(cp[i], (unsigned char *)out + len);
    out[len] = 0;
    return len;
}

/* ---- word lists ---------------------------------------------------------------- */

static void words_add(model_words *w, size_t *cap, const char *word, size_t n, double count)
{
    if (w->count == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        w->words = xrealloc_(w->words, *cap * sizeof(char *));
        w->counts = xrealloc_(w->counts, *cap * sizeof(double));
    }
    w->words[w->count] = xstrdup_(word, n);
    w->counts[w->count++] = count;
    w->total += count;
}

static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        seterr(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, got;
    char *buf = xrealloc_(NULL, cap);
    *len = 0;
    while ((got = fread(buf + *len, 1, cap - *len, f)) > 0) {
        *len += got;
        if (*len == cap)
            buf = xrealloc_(buf, cap *= 2);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        seterr(err, errlen, "%s: read error", path);
        return NULL;
    }
    return buf;
}

/* The lines of one of our data files that are neither empty nor # comments,
 * each NUL-terminated in place; lineno counts every line, for messages. */
typedef struct line_reader {
    char *buf, *next, *end;
    size_t lineno;
} line_reader;

static int lines_open(line_reader *r, const char *path, char *err, size_t errlen)
{
    size_t len;
    memset(r, 0, sizeof *r);
    r->buf = slurp(path, &len, err, errlen);
    if (!r->buf)
        return -1;
    r->next = r->buf;
    r->end = r->buf + len;
    return 0;
}

/* The next line, or NULL at the end. */
static char *lines_next(line_reader *r)
{
    while (r->next < r->end) {
        char *line = r->next, *nl = memchr(line, '\n', (size_t)(r->end - line));
        char *e = nl ? nl : r->end;
        *e = 0;
        r->next = e + 1;
        r->lineno++;
        if (e > line && line[0] != '#')
            return line;
    }
    return NULL;
}

static void lines_close(line_reader *r)
{
    free(r->buf);
    memset(r, 0, sizeof *r);
}

model_words *model_words_load(const char *path, char *err, size_t errlen)
{
    size_t len, cap = 0, lineno = 0;
    char *buf = slurp(path, &len, err, errlen);
    if (!buf)
        return NULL;
    model_words *w = xrealloc_(NULL, sizeof *w);
    memset(w, 0, sizeof *w);
    for (char *line = buf, *end = buf + len; line < end;) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        char *e = nl ? nl : end;
        lineno++;
        char *tab = memchr(line, '\t', (size_t)(e - line));
        if (e > line && line[0] != '#') {
            char *stop;
            double c = tab ? strtod(tab + 1, &stop) : -1;
            if (!tab || stop == tab + 1 || c < 0) {
                seterr(err, errlen, "%s:%zu: expected WORD<TAB>COUNT", path, lineno);
                free(buf);
                model_words_free(w);
                return NULL;
            }
            words_add(w, &cap, line, (size_t)(tab - line), c);
        }
        line = e + 1;
    }
    free(buf);
    return w;
}

void model_words_free(model_words *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->count; i++)
        free(w->words[i]);
    free(w->words);
    free(w->counts);
    free(w);
}

/* ---- candidate collection ------------------------------------------------------ */

typedef struct cand {
    char *key, *target;
    double count;
    /* Whose form wins whatever the counts: our own table's (CURATED_OURS),
     * else an OpenCC phrase's (CURATED_PHRASE), else the most frequent. */
    int curated;
} cand;

typedef struct cands {
    cand *c;
    size_t n, cap;
} cands;

static void cand_add(cands *cs, const char *key, const char *target, double count)
{
    if (cs->n == cs->cap) {
        cs->cap = cs->cap ? cs->cap * 2 : 4096;
        cs->c = xrealloc_(cs->c, cs->cap * sizeof(cand));
    }
    cs->c[cs->n++] =
        (cand){xstrdup_(key, strlen(key)), xstrdup_(target, strlen(target)), count, 0};
}

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    int r = strcmp(x->key, y->key);
    return r ? r : strcmp(x->target, y->target);
}

static unsigned cost_of(double count, double total)
{
    double c = FJ_MODEL_SCALE * (log(total) - log(count + 0.5));
    if (c < 0)
        c = 0;
    if (c > FJ_MODEL_COST_MAX)
        c = FJ_MODEL_COST_MAX;
    return (unsigned)lround(c);
}

/* Sums the counts of equal (key, target) pairs, keeps each key's most
 * frequent target, and turns the result into a dictionary whose values are
 * the cost character followed by the target. */
static const oc_entry *char_entry(const oc_dict *d, uint32_t cp);
static uint32_t first_cp(const char *s);
static size_t chars_in(const char *s);

/* Is target what the key's characters give one by one (chars' first
 * values)? Such a word stores no target: the library writes each
 * character's own answer. Only for three-byte characters, which the
 * library's per-character table holds. */
static int is_default_target(const char *key, const char *target, const oc_dict *chars,
                             const uint32_t *single)
{
    u32s k, t;
    if (!decode_all(key, strlen(key), &k))
        return 0;
    if (!decode_all(target, strlen(target), &t)) {
        free(k.cp);
        return 0;
    }
    int same = k.n == t.n;
    for (size_t i = 0; same && i < k.n; i++) {
        uint32_t want = k.cp[i];
        const oc_entry *e = char_entry(chars, want);
        if (single && k.cp[i] < 0x110000 && single[k.cp[i]]) {
            want = single[k.cp[i]]; /* the model's own one-character form */
        } else if (e) {
            want = first_cp(e->values[0]);
            if (strlen(e->values[0]) != (size_t)fj_utf8_encode(want, (unsigned char[5]){0}))
                same = 0;
        }
        same = same && t.cp[i] == want && want >= 0x2000 && want < 0x10000 &&
               k.cp[i] >= 0x2000 && k.cp[i] < 0x10000;
    }
    free(k.cp);
    free(t.cp);
    return same;
}

/* A region's forms (model_build_s2t_region), defined below. */
typedef struct region_index region_index;
static const char *region_choice(region_index *ri, const char *key, const char *general);

static oc_dict *cands_finish(cands *cs, const char *name, double total, const oc_dict *chars,
                             region_index *region, uint32_t **single_out, char *err,
                             size_t errlen)
{
    qsort(cs->c, cs->n, sizeof(cand), cand_cmp);
    /* Each key's target: the most frequent, unless ours says otherwise. */
    const char **chosen = xrealloc_(NULL, cs->n * sizeof(char *));
    double *chosen_count = xrealloc_(NULL, cs->n * sizeof(double));
    for (size_t i = 0; i < cs->n;) {
        size_t j = i;
        const char *best = NULL, *forced = NULL;
        int forced_level = 0;
        double best_count = -1;
        while (j < cs->n && strcmp(cs->c[j].key, cs->c[i].key) == 0) {
            size_t k = j;
            double sum = 0;
            int level = CURATED_OURS + 1; /* the lowest level among this form's sources */
            while (k < cs->n && strcmp(cs->c[k].key, cs->c[j].key) == 0 &&
                   strcmp(cs->c[k].target, cs->c[j].target) == 0) {
                if (cs->c[k].curated == CURATED_OURS && forced_level < CURATED_OURS) {
                    forced = cs->c[k].target;
                    forced_level = CURATED_OURS;
                }
                /* A word-list entry with no count attests no form. */
                if (cs->c[k].curated < level && (cs->c[k].curated || cs->c[k].count > 0))
                    level = cs->c[k].curated;
                sum += cs->c[k++].count;
            }
            /* An OpenCC phrase's form that the word list never writes wins
             * over the word list's own spelling (面向對象語言, not its 面嚮對象語言);
             * where the list writes both forms, the counts decide. */
            if (level == CURATED_PHRASE && forced_level < CURATED_PHRASE) {
                forced = cs->c[j].target;
                forced_level = CURATED_PHRASE;
            }
            /* On a tie (often two forms the list gives no count), the
             * characters' own forms. */
            if (sum > best_count ||
                (sum == best_count && is_default_target(cs->c[j].key, cs->c[j].target, chars, NULL))) {
                best_count = sum;
                best = cs->c[j].target;
            }
            j = k;
        }
        /* A curated form wins; the word keeps the cost of its most
         * frequent form, so segmentation is unchanged. */
        chosen[i] = forced ? forced : best;
        /* A region's model: the region's form, where its counts clearly
         * prefer it to this one (not over our own curated words). */
        if (region && forced_level < CURATED_OURS) {
            const char *r = region_choice(region, cs->c[i].key, chosen[i]);
            if (r)
                chosen[i] = r;
        }
        chosen_count[i] = best_count;
        i = j;
    }
    /* One-character words whose form is not the character table's first:
     * a longer word agrees with its characters only if it uses these. */
    uint32_t *single = xrealloc_(NULL, 0x110000 * sizeof(uint32_t));
    memset(single, 0, 0x110000 * sizeof(uint32_t));
    for (size_t i = 0; i < cs->n; i++) {
        if ((i > 0 && strcmp(cs->c[i].key, cs->c[i - 1].key) == 0) || chars_in(cs->c[i].key) != 1 ||
            chars_in(chosen[i]) != 1)
            continue;
        uint32_t cp = first_cp(cs->c[i].key), want = cp, f = first_cp(chosen[i]);
        const oc_entry *e = char_entry(chars, cp);
        if (e)
            want = first_cp(e->values[0]);
        if (f != want && cp < 0x110000)
            single[cp] = f;
    }
    size_t out_cap = 1 << 20, out_len = 0;
    char *text = xrealloc_(NULL, out_cap);
    for (size_t i = 0; i < cs->n;) {
        size_t j = i;
        while (j < cs->n && strcmp(cs->c[j].key, cs->c[i].key) == 0)
            j++;
        const char *best = chosen[i];
        double best_count = chosen_count[i];
        size_t need = strlen(cs->c[i].key) + strlen(best) + 8;
        while (out_len + need >= out_cap)
            text = xrealloc_(text, out_cap *= 2);
        unsigned char costc[4];
        int cl = fj_utf8_encode(0xE000u + cost_of(best_count, total), costc);
        /* A one-character word is compared with the table itself: its own
         * form is what `single` records. */
        if (is_default_target(cs->c[i].key, best, chars,
                              chars_in(cs->c[i].key) == 1 ? NULL : single))
            best = "";
        out_len += (size_t)sprintf(text + out_len, "%s\t%.*s%s\n", cs->c[i].key, cl,
                                   (const char *)costc, best);
        i = j;
    }
    *single_out = single;
    free(chosen);
    free(chosen_count);
    for (size_t i = 0; i < cs->n; i++) {
        free(cs->c[i].key);
        free(cs->c[i].target);
    }
    free(cs->c);
    memset(cs, 0, sizeof *cs);
    oc_dict *d = oc_dict_parse_buffer(name, text, out_len, err, errlen);
    free(text);
    return d;
}

/* ---- character tables ---------------------------------------------------------- */

/* Values of a one-character key, or NULL. */
static const oc_entry *char_entry(const oc_dict *d, uint32_t cp)
{
    unsigned char u[5];
    int n = fj_utf8_encode(cp, u);
    return oc_dict_find(d, (const char *)u, (size_t)n);
}

static uint32_t first_cp(const char *s)
{
    uint32_t cp = 0;
    if (fj_utf8_decode((const unsigned char *)s, (const unsigned char *)s + strlen(s), &cp) <= 0)
        return 0;
    return cp;
}

static int entry_has(const oc_entry *e, uint32_t cp)
{
    for (size_t i = 0; e && i < e->value_count; i++)
        if (first_cp(e->values[i]) == cp && strlen(e->values[i]) == (size_t)fj_utf8_encode(cp, (unsigned char[5]){0}))
            return 1;
    return 0;
}

/* The reading of a character in Simplified -> Traditional: itself when it is
 * a Simplified character with Traditional forms; else the Simplified
 * character it is a Traditional form of (乾 -> 干, 瞭 -> 了); else itself. */
static uint32_t fold_cp(const oc_dict *stc, const oc_dict *tsc, uint32_t cp)
{
    if (char_entry(stc, cp))
        return cp;
    const oc_entry *t = char_entry(tsc, cp);
    if (!t)
        return cp;
    for (size_t i = 0; i < t->value_count; i++) {
        uint32_t s = first_cp(t->values[i]);
        if (entry_has(char_entry(stc, s), cp))
            return s;
    }
    return first_cp(t->values[0]);
}

/* Is cp one of the forms the reading r can take? */
static int is_form_of(const oc_dict *stc, uint32_t r, uint32_t cp)
{
    const oc_entry *e = char_entry(stc, r);
    return e ? entry_has(e, cp) : cp == r;
}

static const oc_dict *need_dict(const oc_data *data, const char *name, char *err, size_t errlen)
{
    const oc_dict *d = oc_data_dict(data, name);
    if (!d)
        seterr(err, errlen, "OpenCC data has no %s", name);
    return d;
}

/* Curated lines "key<TAB>target[<TAB>count]"; each calls add(key, target, count). */
static int load_curated(const char *path, cands *cs,
                        int (*add)(cands *, const char *, const char *, double, void *),
                        void *ctx, char *err, size_t errlen)
{
    if (!path)
        return 0;
    line_reader r;
    if (lines_open(&r, path, err, errlen) != 0)
        return -1;
    for (char *line; (line = lines_next(&r));) {
        char *t1 = strchr(line, '\t');
        char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        double count = CURATED_COUNT;
        if (t2) {
            *t2 = 0;
            count = strtod(t2 + 1, NULL);
        }
        if (!t1 || count <= 0) {
            seterr(err, errlen, "%s:%zu: expected KEY<TAB>TARGET[<TAB>COUNT]", path, r.lineno);
            lines_close(&r);
            return -1;
        }
        *t1 = 0;
        if (add(cs, line, t1 + 1, count, ctx) != 0) {
            seterr(err, errlen,
                   "%s:%zu: %s -> %s does not fit the tables (same length; targets in "
                   "OpenCC's standard forms, such as 着 not 著)",
                   path, r.lineno, line, t1 + 1);
            lines_close(&r);
            return -1;
        }
    }
    lines_close(&r);
    return 0;
}

static void mark_ambiguous(model_tables *t, const oc_dict *chars, const uint32_t *single);
static size_t chars_in(const char *s);

/* A fold table: each character of TSCharacters (and each listed one) whose
 * reading differs from itself, to that reading; `listed` (0x10000 entries,
 * or NULL) overrides fold_cp for BMP characters. */
static oc_dict *build_fold(const oc_dict *stc, const oc_dict *tsc, const uint32_t *listed,
                           const char *name, char *err, size_t errlen)
{
    size_t cap = 1 << 16, len = 0;
    char *text = xrealloc_(NULL, cap);
    for (size_t i = 0; i < tsc->count + (listed ? 0x10000 : 0); i++) {
        uint32_t cp, r = 0;
        if (i < tsc->count) {
            cp = first_cp(tsc->entries[i].key);
            if (chars_in(tsc->entries[i].key) != 1 || (listed && cp >= 0x10000))
                continue; /* repair reads the BMP only */
        } else {
            cp = (uint32_t)(i - tsc->count); /* listed characters t2s does not know */
            if (!listed[cp] || char_entry(tsc, cp))
                continue;
        }
        if (listed && cp < 0x10000)
            r = listed[cp];
        if (!r)
            r = fold_cp(stc, tsc, cp);
        if (r == cp)
            continue;
        if (len + 16 >= cap)
            text = xrealloc_(text, cap *= 2);
        char a[8], b[8];
        encode_all(&cp, 1, a);
        encode_all(&r, 1, b);
        len += (size_t)sprintf(text + len, "%s\t%s\n", a, b);
    }
    oc_dict *d = oc_dict_parse_buffer(name, text, len, err, errlen);
    free(text);
    return d;
}

/* Does some character of u (by its reading) have several Traditional forms? */
static int has_choice(const oc_dict *stc, const oc_dict *tsc, const u32s *u)
{
    for (size_t i = 0; i < u->n; i++) {
        const oc_entry *e = char_entry(stc, fold_cp(stc, tsc, u->cp[i]));
        if (e && e->value_count > 1)
            return 1;
    }
    return 0;
}

/* ---- Simplified -> Traditional ------------------------------------------------ */

/* Preferred forms (data/context/s2t-forms.tsv): wherever a candidate's
 * target holds `from` and the readings allow `to`, the target takes `to`. */
typedef struct form_pref {
    u32s from, to;
} form_pref;

typedef struct s2t_ctx {
    const oc_dict *stc, *tsc;
    form_pref *prefs;
    size_t nprefs;
    int skip_misfits; /* cut-down tables: curated entries that do not fit are left out */
    /* Characters that STCharacters never keeps as they are but an OpenCC
     * phrase does (霉 in 倒霉): there the character is a form of itself. */
    unsigned char *kept_by_phrase; /* 0x110000 / 8 bytes */
} s2t_ctx;

/* Marks in x->kept_by_phrase each character an STPhrases entry keeps, at a
 * place where STCharacters would change it. */
static void mark_kept_by_phrase(s2t_ctx *x, const oc_dict *stp)
{
    x->kept_by_phrase = xrealloc_(NULL, 0x110000 / 8);
    memset(x->kept_by_phrase, 0, 0x110000 / 8);
    for (size_t i = 0; i < stp->count; i++) {
        u32s k, v;
        const char *key = stp->entries[i].key, *val = stp->entries[i].values[0];
        if (!decode_all(key, strlen(key), &k))
            continue;
        if (decode_all(val, strlen(val), &v)) {
            for (size_t j = 0; k.n == v.n && j < k.n; j++)
                if (k.cp[j] == v.cp[j] && k.cp[j] < 0x110000 &&
                    !is_form_of(x->stc, k.cp[j], k.cp[j]))
                    x->kept_by_phrase[k.cp[j] >> 3] |= (unsigned char)(1u << (k.cp[j] & 7));
            free(v.cp);
        }
        free(k.cp);
    }
}

/* Lines "FROM<TAB>TO", strings of equal length. 0, or -1 and err. */
static int load_prefs(const char *path, s2t_ctx *x, char *err, size_t errlen)
{
    line_reader r;
    if (lines_open(&r, path, err, errlen) != 0)
        return -1;
    for (char *line; (line = lines_next(&r));) {
        char *tab = strchr(line, '\t');
        form_pref f = {{0}, {0}};
        if (!tab || !decode_all(line, (size_t)(tab - line), &f.from) ||
            !decode_all(tab + 1, strlen(tab + 1), &f.to) || f.from.n != f.to.n || f.from.n == 0) {
            free(f.from.cp);
            free(f.to.cp);
            seterr(err, errlen, "%s:%zu: expected FROM<TAB>TO of equal length", path, r.lineno);
            lines_close(&r);
            return -1;
        }
        x->prefs = xrealloc_(x->prefs, (x->nprefs + 1) * sizeof(form_pref));
        x->prefs[x->nprefs++] = f;
    }
    lines_close(&r);
    return 0;
}

static void free_prefs(s2t_ctx *x)
{
    for (size_t i = 0; i < x->nprefs; i++) {
        free(x->prefs[i].from.cp);
        free(x->prefs[i].to.cp);
    }
    free(x->prefs);
    x->prefs = NULL;
    x->nprefs = 0;
    free(x->kept_by_phrase);
    x->kept_by_phrase = NULL;
}

/* A one-character form after the one-character lines of the preferred
 * forms: `form` itself when no line applies, else a static buffer valid
 * until the next call. */
static const char *preferred_single(const s2t_ctx *x, const char *form)
{
    static char buf[8];
    if (chars_in(form) != 1)
        return form;
    uint32_t cp = first_cp(form);
    for (size_t p = 0; p < x->nprefs; p++) {
        if (x->prefs[p].from.n == 1 && x->prefs[p].from.cp[0] == cp) {
            encode_all(x->prefs[p].to.cp, 1, buf);
            return buf;
        }
    }
    return form;
}

static void apply_prefs(const s2t_ctx *x, const u32s *reading, u32s *t)
{
    for (size_t p = 0; p < x->nprefs; p++) {
        const form_pref *f = &x->prefs[p];
        for (size_t i = 0; i + f->from.n <= t->n; i++) {
            int hit = memcmp(t->cp + i, f->from.cp, f->from.n * sizeof(uint32_t)) == 0;
            /* A one-character line may name a form the character table
             * lacks (賬 -> 帳); a longer one only reorders the table's forms. */
            for (size_t q = 0; hit && q < f->from.n && f->from.n > 1; q++)
                hit = is_form_of(x->stc, reading->cp[i + q], f->to.cp[q]);
            if (hit)
                memcpy(t->cp + i, f->to.cp, f->to.n * sizeof(uint32_t));
        }
    }
}

/* Adds a (Traditional word, count) as a candidate under its reading, when
 * every character is a form its reading can take. */
static int s2t_add_word(cands *cs, const s2t_ctx *x, const char *key_text, const char *target,
                        double count)
{
    u32s k, t;
    if (!decode_all(key_text, strlen(key_text), &k))
        return 0;
    if (!decode_all(target, strlen(target), &t)) {
        free(k.cp);
        return 0;
    }
    int ok = k.n == t.n && k.n >= 1 && k.n <= MAX_WORD_CHARS;
    for (size_t i = 0; ok && i < k.n; i++) {
        k.cp[i] = fold_cp(x->stc, x->tsc, k.cp[i]);
        ok = is_form_of(x->stc, k.cp[i], t.cp[i]) ||
             (t.cp[i] == k.cp[i] && x->kept_by_phrase && t.cp[i] < 0x110000 &&
              (x->kept_by_phrase[t.cp[i] >> 3] >> (t.cp[i] & 7) & 1));
    }
    if (ok) {
        char *kb = xrealloc_(NULL, k.n * 4 + 1), *tb = xrealloc_(NULL, t.n * 4 + 1);
        encode_all(k.cp, k.n, kb);
        apply_prefs(x, &k, &t);
        encode_all(t.cp, t.n, tb);
        cand_add(cs, kb, tb, count);
        free(kb);
        free(tb);
    }
    free(k.cp);
    free(t.cp);
    return ok;
}

/* 0, or -1 when the entry does not fit the tables (a target that is not
 * OpenCC's standard form: 著 for 着), unless the tables are cut down and
 * such entries are skipped. */
static int s2t_curated(cands *cs, const char *key, const char *target, double count, void *ctx)
{
    const s2t_ctx *x = ctx;
    size_t before = cs->n;
    int ok = s2t_add_word(cs, ctx, key, target, count);
    for (size_t i = before; i < cs->n; i++)
        cs->c[i].curated = CURATED_OURS;
    return ok || x->skip_misfits ? 0 : -1;
}

/* A surname before a title (余老師, 范總) or after 姓 counts as a word seen
 * this often: enough to beat the surname character's common reading alone
 * (餘, 範), not enough to split a word (其餘 老師 stays). */
#define SURNAME_COUNT 300.0

/* data/context/s2t-surnames.tsv: lines "surname<TAB>S", "title<TAB>KEY<TAB>
 * TARGET[<TAB>SURNAMES]" and "before<TAB>KEY<TAB>TARGET[<TAB>SURNAMES]". Each
 * surname makes a curated word with each title after it and each "before"
 * word in front of it; a line with SURNAMES applies to those only. */
static int load_surnames(const char *path, cands *cs, s2t_ctx *x, char *err, size_t errlen)
{
    size_t nsur = 0, ntit = 0;
    line_reader r;
    if (lines_open(&r, path, err, errlen) != 0)
        return -1;
    char **sur = NULL, **tit = NULL; /* surname; title key, target, kind (1 after, 0 before) */
    for (char *line; (line = lines_next(&r));) {
        char *f[4] = {line, NULL, NULL, NULL};
        for (int k = 1; k < 4; k++) {
            char *t = f[k - 1] ? strchr(f[k - 1], '\t') : NULL;
            if (t) {
                *t = 0;
                f[k] = t + 1;
            }
        }
        int is_sur = strcmp(f[0], "surname") == 0 && f[1] && !f[2] && chars_in(f[1]) == 1;
        int is_tit = (strcmp(f[0], "title") == 0 || strcmp(f[0], "before") == 0) && f[1] &&
                     f[2] && chars_in(f[1]) == chars_in(f[2]);
        if (!is_sur && !is_tit) {
            seterr(err, errlen,
                   "%s:%zu: expected surname<TAB>S, or title or before<TAB>KEY<TAB>TARGET"
                   "[<TAB>SURNAMES]",
                   path, r.lineno);
            free(sur);
            free(tit);
            lines_close(&r);
            return -1;
        }
        if (is_sur) {
            sur = xrealloc_(sur, (nsur + 1) * sizeof *sur);
            sur[nsur++] = f[1];
        } else {
            tit = xrealloc_(tit, (ntit + 1) * 4 * sizeof *tit);
            tit[4 * ntit] = f[1];
            tit[4 * ntit + 1] = f[2];
            tit[4 * ntit + 2] = f[0][0] == 't' ? "1" : "0";
            tit[4 * ntit++ + 3] = f[3]; /* only these surnames, or NULL: all */
        }
    }
    for (size_t i = 0; i < nsur; i++) {
        for (size_t k = 0; k < ntit; k++) {
            const char *key = tit[4 * k], *target = tit[4 * k + 1], *only = tit[4 * k + 3];
            int after = tit[4 * k + 2][0] == '1';
            if (only && !strstr(only, sur[i]))
                continue;
            size_t need = strlen(sur[i]) + strlen(key) + strlen(target) + 1;
            char *wk = xrealloc_(NULL, need), *wt = xrealloc_(NULL, need);
            snprintf(wk, need, "%s%s", after ? sur[i] : key, after ? key : sur[i]);
            snprintf(wt, need, "%s%s", after ? sur[i] : target, after ? target : sur[i]);
            int bad = s2t_curated(cs, wk, wt, SURNAME_COUNT, x) != 0;
            if (bad)
                seterr(err, errlen, "%s: %s -> %s does not fit the tables", path, wk, wt);
            free(wk);
            free(wt);
            if (bad) {
                free(sur);
                free(tit);
                lines_close(&r);
                return -1;
            }
        }
    }
    free(sur);
    free(tit);
    lines_close(&r);
    return 0;
}

/* ---- regional forms ----------------------------------------------------------- */

/* One form a region writes for a reading, with the region's count. */
typedef struct region_form {
    char *key, *form;
    double count;
} region_form;

struct region_index {
    region_form *f; /* sorted by key, the most frequent form first */
    size_t n;
    /* The region's words with a count, sorted: does it write a form at all? */
    char **written;
    size_t nwritten;
    size_t chosen; /* keys given the region's form */
};

/* The region's form replaces another only where it counts it this many
 * times as often (計畫 30,341 to 計劃 9,208 in Taiwan's list; not 提昇
 * 4,643 to 提升 4,499, nor 公佈 8,083 to 公布 3,925), and at least
 * REGION_MIN_COUNT times (not 冬冬 35 to 鼕鼕 1, a name). A preferred form
 * gives way under the same margin. */
#define REGION_MARGIN 3.0
#define REGION_MIN_COUNT 50.0

static int str_cmp(const void *a, const void *b);

static int region_key_form_cmp(const void *a, const void *b)
{
    const region_form *x = a, *y = b;
    int r = strcmp(x->key, y->key);
    return r ? r : strcmp(x->form, y->form);
}

static int region_form_cmp(const void *a, const void *b)
{
    const region_form *x = a, *y = b;
    int r = strcmp(x->key, y->key);
    if (r)
        return r;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1; /* the most frequent first */
    return strcmp(x->form, y->form);
}

/* Adds form under key, in the preferred forms that apply to the region
 * (it writes 帳目 and 賬目 alike: the line 賬 -> 帳 decides). */
static void region_add(region_index *ri, size_t *cap, const s2t_ctx *x, const char *key,
                       const char *form, double count)
{
    u32s k, t;
    if (!decode_all(key, strlen(key), &k))
        return;
    if (!decode_all(form, strlen(form), &t)) {
        free(k.cp);
        return;
    }
    char *f = xrealloc_(NULL, t.n * 4 + 1);
    if (k.n == t.n)
        apply_prefs(x, &k, &t);
    encode_all(t.cp, t.n, f);
    if (ri->n == *cap) {
        *cap = *cap ? *cap * 2 : 4096;
        ri->f = xrealloc_(ri->f, *cap * sizeof *ri->f);
    }
    ri->f[ri->n++] = (region_form){xstrdup_(key, strlen(key)), f, count};
    free(k.cp);
    free(t.cp);
}

/* The region's words of two or more characters that it counts, under each
 * reading OpenCC's tables give them: their characters' own readings when
 * every character is a form of its reading, and the reading TSPhrases gives
 * the word (計畫 reads 计划 there, though 畫 is no form of 划). A form the
 * tables cannot produce for a reading is left out. */
static void region_index_build(region_index *ri, const model_words *w, const s2t_ctx *x,
                               const oc_dict *tsp)
{
    size_t cap = 0;
    memset(ri, 0, sizeof *ri);
    ri->written = xrealloc_(NULL, w->count * sizeof(char *));
    for (size_t i = 0; i < w->count; i++)
        if (w->counts[i] > 0)
            ri->written[ri->nwritten++] = w->words[i];
    if (ri->nwritten)
        qsort(ri->written, ri->nwritten, sizeof(char *), str_cmp);
    for (size_t i = 0; i < w->count; i++) {
        u32s u;
        const char *word = w->words[i];
        if (w->counts[i] <= 0 || !decode_all(word, strlen(word), &u))
            continue;
        int ok = u.n >= 2 && u.n <= MAX_WORD_CHARS;
        for (size_t k = 0; ok && k < u.n; k++) {
            uint32_t r = fold_cp(x->stc, x->tsc, u.cp[k]);
            ok = is_form_of(x->stc, r, u.cp[k]);
            u.cp[k] = r;
        }
        char key[4 * MAX_WORD_CHARS + 1] = "";
        if (ok) {
            encode_all(u.cp, u.n, key);
            region_add(ri, &cap, x, key, word, w->counts[i]);
        }
        const oc_entry *e =
            u.n >= 2 && u.n <= MAX_WORD_CHARS ? oc_dict_find(tsp, word, strlen(word)) : NULL;
        if (e && chars_in(e->values[0]) == u.n && strcmp(e->values[0], key) != 0)
            region_add(ri, &cap, x, e->values[0], word, w->counts[i]);
        free(u.cp);
    }
    if (ri->n)
        qsort(ri->f, ri->n, sizeof *ri->f, region_key_form_cmp);
    /* One entry per (key, form): a form can come from two spellings (帳目,
     * 賬目), and its counts add up. */
    size_t out = 0;
    for (size_t i = 0; i < ri->n; i++) {
        if (out && strcmp(ri->f[out - 1].key, ri->f[i].key) == 0 &&
            strcmp(ri->f[out - 1].form, ri->f[i].form) == 0) {
            ri->f[out - 1].count += ri->f[i].count;
            free(ri->f[i].key);
            free(ri->f[i].form);
            continue;
        }
        ri->f[out++] = ri->f[i];
    }
    ri->n = out;
    if (ri->n)
        qsort(ri->f, ri->n, sizeof *ri->f, region_form_cmp);
}

static void region_index_free(region_index *ri)
{
    for (size_t i = 0; i < ri->n; i++) {
        free(ri->f[i].key);
        free(ri->f[i].form);
    }
    free(ri->f);
    free(ri->written);
    memset(ri, 0, sizeof *ri);
}

/* The first of key's entries, or ri->n. */
static size_t region_first(const region_index *ri, const char *key)
{
    size_t lo = 0, hi = ri->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ri->f[mid].key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ri->n && strcmp(ri->f[lo].key, key) == 0 ? lo : ri->n;
}

static int region_writes(const region_index *ri, const char *form)
{
    size_t lo = 0, hi = ri->nwritten;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ri->written[mid], form);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* The region's form of a key of two or more characters instead of the
 * general choice, or NULL: the region counts it REGION_MARGIN times as often
 * as the general form under this reading, and REGION_MIN_COUNT times. Where the region never writes
 * the general form (Taiwan's list has 發布, not 發佈), it has no say: the
 * spelling may be younger than the list. The one-character keys keep the
 * general choice: the regions' lists count characters, not words, there
 * (libchewing's are all 0). */
static const char *region_choice(region_index *ri, const char *key, const char *general)
{
    size_t first = region_first(ri, key);
    if (first == ri->n || chars_in(key) < 2 || strcmp(ri->f[first].form, general) == 0 ||
        !region_writes(ri, general))
        return NULL;
    double general_count = 0;
    for (size_t i = first; i < ri->n && strcmp(ri->f[i].key, key) == 0; i++)
        if (strcmp(ri->f[i].form, general) == 0)
            general_count = ri->f[i].count;
    if (ri->f[first].count < REGION_MARGIN * general_count ||
        ri->f[first].count < REGION_MIN_COUNT)
        return NULL;
    ri->chosen++;
    return ri->f[first].form;
}

/* How often the region writes s: the counts of its words that hold it. */
static double region_weight(const model_words *w, const uint32_t *s, size_t n)
{
    char text[4 * MAX_WORD_CHARS + 1];
    if (n > MAX_WORD_CHARS)
        return 0;
    encode_all(s, n, text);
    double sum = 0;
    for (size_t i = 0; i < w->count; i++)
        if (w->counts[i] > 0 && strstr(w->words[i], text))
            sum += w->counts[i];
    return sum;
}

/* A preferred form applies to a region unless the region's data says
 * otherwise: it writes FROM REGION_MARGIN times as often as TO (Hong Kong's
 * list: 瞭解 for 了解). Those lines are dropped, and named on log. */
static void drop_contradicted_prefs(s2t_ctx *x, const model_region *region)
{
    size_t kept = 0;
    for (size_t p = 0; p < x->nprefs; p++) {
        form_pref *f = &x->prefs[p];
        double from = region_weight(region->words, f->from.cp, f->from.n);
        double to = region_weight(region->words, f->to.cp, f->to.n);
        if (from > 0 && from >= REGION_MARGIN * to) {
            if (region->log) {
                char a[4 * MAX_WORD_CHARS + 1] = "", b[4 * MAX_WORD_CHARS + 1] = "";
                if (f->from.n <= MAX_WORD_CHARS) {
                    encode_all(f->from.cp, f->from.n, a);
                    encode_all(f->to.cp, f->to.n, b);
                }
                fprintf(region->log, "fjdict: %s model: forms line %s -> %s dropped (%s %.0f, %s %.0f)\n",
                        region->name, a, b, a, from, b, to);
            }
            free(f->from.cp);
            free(f->to.cp);
            continue;
        }
        x->prefs[kept++] = *f;
    }
    x->nprefs = kept;
}

static int build_s2t(const oc_data *data, const model_words *essay, const model_region *region,
                     const char *curated_path, const char *forms_path, const char *surnames_path,
                     int skip_misfits, model_tables *out, char *err, size_t errlen);

int model_build_s2t(const oc_data *data, const model_words *essay, const char *curated_path,
                    const char *forms_path, const char *surnames_path, int skip_misfits,
                    model_tables *out, char *err, size_t errlen)
{
    return build_s2t(data, essay, NULL, curated_path, forms_path, surnames_path, skip_misfits,
                     out, err, errlen);
}

int model_build_s2t_region(const oc_data *data, const model_words *essay,
                           const model_region *region, const char *curated_path,
                           const char *forms_path, const char *surnames_path, int skip_misfits,
                           model_tables *out, char *err, size_t errlen)
{
    return build_s2t(data, essay, region, curated_path, forms_path, surnames_path, skip_misfits,
                     out, err, errlen);
}

/* model_build_s2t, and with a region its forms (model_build_s2t_region). */
static int build_s2t(const oc_data *data, const model_words *essay, const model_region *region,
                     const char *curated_path, const char *forms_path, const char *surnames_path,
                     int skip_misfits, model_tables *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const oc_dict *stc = need_dict(data, "STCharacters", err, errlen);
    const oc_dict *tsc = stc ? need_dict(data, "TSCharacters", err, errlen) : NULL;
    const oc_dict *stp = tsc ? need_dict(data, "STPhrases", err, errlen) : NULL;
    if (!stp)
        return -1;
    s2t_ctx x = {stc, tsc, NULL, 0, skip_misfits, NULL};
    cands cs = {0};
    if (forms_path && load_prefs(forms_path, &x, err, errlen) != 0)
        return -1;
    mark_kept_by_phrase(&x, stp);
    region_index ri = {0};
    if (region) {
        const oc_dict *tsp = need_dict(data, "TSPhrases", err, errlen);
        if (!tsp) {
            free_prefs(&x);
            return -1;
        }
        drop_contradicted_prefs(&x, region);
        region_index_build(&ri, region->words, &x, tsp);
    }

    /* Multi-character words from the essay; single characters are summed per
     * reading below, since a lone character's form is OpenCC's default. */
    double *single = NULL;
    uint32_t *single_cp = NULL;
    size_t nsingle = 0;
    for (size_t i = 0; i < essay->count; i++) {
        const char *w = essay->words[i];
        u32s u;
        if (!decode_all(w, strlen(w), &u))
            continue;
        if (u.n == 1) {
            single = xrealloc_(single, (nsingle + 1) * sizeof(double));
            single_cp = xrealloc_(single_cp, (nsingle + 1) * sizeof(uint32_t));
            single[nsingle] = essay->counts[i];
            single_cp[nsingle++] = u.cp[0];
        } else if (essay->counts[i] <= 0 && !has_choice(stc, tsc, &u)) {
            out->essay_dropped++; /* no count, and no form to vouch for */
        } else if (s2t_add_word(&cs, &x, w, w, essay->counts[i])) {
            out->essay_used++;
        } else {
            out->essay_dropped++;
        }
        free(u.cp);
    }
    /* OpenCC's phrases: correct conversions the essay may lack. */
    for (size_t i = 0; i < stp->count; i++) {
        size_t before = cs.n;
        s2t_add_word(&cs, &x, stp->entries[i].key, stp->entries[i].values[0], PHRASE_COUNT);
        for (size_t k = before; k < cs.n; k++)
            cs.c[k].curated = CURATED_PHRASE;
    }
    if (load_curated(curated_path, &cs, s2t_curated, &x, err, errlen) != 0 ||
        (surnames_path && load_surnames(surnames_path, &cs, &x, err, errlen) != 0)) {
        free_prefs(&x);
        region_index_free(&ri);
        return -1;
    }

    /* Single characters: the reading's total frequency, OpenCC's first form
     * (or the preferred form). Readings without a table entry map to
     * themselves. */
    cands singles = {0};
    for (size_t i = 0; i < nsingle; i++) {
        uint32_t r = fold_cp(stc, tsc, single_cp[i]);
        if (!is_form_of(stc, r, single_cp[i]))
            continue;
        char kb[8];
        encode_all(&r, 1, kb);
        const oc_entry *e = char_entry(stc, r);
        cand_add(&singles, kb, preferred_single(&x, e ? e->values[0] : kb), single[i]);
    }
    for (size_t i = 0; i < stc->count; i++)
        cand_add(&singles, stc->entries[i].key,
                 preferred_single(&x, stc->entries[i].values[0]), 0);
    free(single);
    free(single_cp);
    free_prefs(&x);
    /* All forms of one reading share its target, so the sums merge. */
    for (size_t i = 0; i < singles.n; i++) {
        cand *c = &singles.c[i];
        cand_add(&cs, c->key, c->target, c->count);
        free(c->key);
        free(c->target);
    }
    free(singles.c);

    uint32_t *single_forms = NULL;
    out->words = cands_finish(&cs, "context-s2t", essay->total, stc, region ? &ri : NULL,
                              &single_forms, err, errlen);
    out->region_keys = ri.chosen;
    region_index_free(&ri);
    if (!out->words)
        return -1;

    /* The fold table: every character whose reading differs from itself. */
    out->fold = build_fold(stc, tsc, NULL, "context-s2t-fold", err, errlen);
    if (!out->fold)
        return -1;
    mark_ambiguous(out, stc, single_forms);
    free(single_forms);
    /* Simplified-only characters: converting them always changes them. */
    out->source_only = xrealloc_(NULL, 0x10000 / 8);
    memset(out->source_only, 0, 0x10000 / 8);
    for (size_t i = 0; i < stc->count; i++) {
        uint32_t cp = first_cp(stc->entries[i].key);
        if (cp < 0x10000 && chars_in(stc->entries[i].key) == 1 && !entry_has(&stc->entries[i], cp))
            out->source_only[cp >> 3] |= (unsigned char)(1u << (cp & 7));
    }
    return 0;
}

/* ---- Traditional -> Simplified ------------------------------------------------ */

typedef struct t2s_ctx {
    const oc_profile *t2s;
    const oc_dict *twv; /* OpenCC-standard -> Taiwan variant forms */
    const oc_dict *tsc;
} t2s_ctx;

static char *t2s_of(const t2s_ctx *x, const char *w, size_t *len)
{
    return oc_reference_convert(x->t2s, w, strlen(w), len, 1);
}

static size_t chars_in(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The word as Taiwan writes it (着 -> 著, 裏 -> 裡), or NULL when the same. */
static char *taiwan_form(const t2s_ctx *x, const char *w)
{
    u32s u;
    if (!decode_all(w, strlen(w), &u))
        return NULL;
    int changed = 0;
    for (size_t i = 0; i < u.n; i++) {
        const oc_entry *e = char_entry(x->twv, u.cp[i]);
        if (e) {
            uint32_t v = first_cp(e->values[0]);
            if (v && v != u.cp[i]) {
                u.cp[i] = v;
                changed = 1;
            }
        }
    }
    char *r = NULL;
    if (changed) {
        r = xrealloc_(NULL, u.n * 4 + 1);
        encode_all(u.cp, u.n, r);
    }
    free(u.cp);
    return r;
}

/* A Traditional word with its Simplified target: entered as written, in
 * Taiwan's forms, and (for idempotence) as its own output when that output
 * still holds characters t2s would otherwise change. */
static void t2s_add(cands *cs, const t2s_ctx *x, const char *word, const char *target,
                    double count)
{
    if (chars_in(word) != chars_in(target) || chars_in(word) > MAX_WORD_CHARS)
        return;
    cand_add(cs, word, target, count);
    /* Not for a lone character: 著 alone is 著 (著作), only in words like
     * 看著 is it Taiwan's form of 着. */
    char *tw = chars_in(word) > 1 ? taiwan_form(x, word) : NULL;
    if (tw) {
        cand_add(cs, tw, target, count);
        free(tw);
    }
    if (chars_in(word) > 1 && strcmp(word, target) != 0) {
        u32s u;
        if (decode_all(target, strlen(target), &u)) {
            int kept = 0;
            for (size_t i = 0; i < u.n; i++)
                kept |= char_entry(x->tsc, u.cp[i]) != NULL;
            if (kept)
                cand_add(cs, target, target, count);
            free(u.cp);
        }
    }
}

static int t2s_curated(cands *cs, const char *key, const char *target, double count, void *ctx)
{
    if (chars_in(key) != chars_in(target))
        return -1;
    size_t before = cs->n;
    t2s_add(cs, ctx, key, target, count);
    for (size_t i = before; i < cs->n; i++)
        cs->c[i].curated = CURATED_OURS;
    return 0;
}

/* Does some character of w have several Simplified forms? */
static int t2s_has_choice(const oc_dict *tsc, const char *w)
{
    u32s u;
    if (!decode_all(w, strlen(w), &u))
        return 0;
    int r = 0;
    for (size_t i = 0; i < u.n && !r; i++) {
        const oc_entry *e = char_entry(tsc, u.cp[i]);
        r = e && e->value_count > 1;
    }
    free(u.cp);
    return r;
}

/* Idempotence: converting the output again must segment it the same way.
 * A word whose Simplified form holds a character some word converts
 * differently (著 in 显著 next to 著地 -> 着地) is also entered in that form,
 * as itself. */
static void add_output_keys(cands *cs, const oc_dict *tsc)
{
    unsigned char *amb = xrealloc_(NULL, 0x10000 / 8);
    memset(amb, 0, 0x10000 / 8);
    for (size_t i = 0; i < cs->n; i++) {
        u32s k, t;
        if (!decode_all(cs->c[i].key, strlen(cs->c[i].key), &k))
            continue;
        if (decode_all(cs->c[i].target, strlen(cs->c[i].target), &t)) {
            for (size_t j = 0; j < k.n && k.n == t.n; j++) {
                const oc_entry *e = char_entry(tsc, k.cp[j]);
                uint32_t want = e ? first_cp(e->values[0]) : k.cp[j];
                if (t.cp[j] != want && k.cp[j] < 0x10000)
                    amb[k.cp[j] >> 3] |= (unsigned char)(1u << (k.cp[j] & 7));
            }
            free(t.cp);
        }
        free(k.cp);
    }
    size_t n0 = cs->n;
    for (size_t i = 0; i < n0; i++) {
        const cand *c = &cs->c[i];
        if (chars_in(c->key) < 2 || strcmp(c->key, c->target) == 0)
            continue;
        u32s t;
        if (!decode_all(c->target, strlen(c->target), &t))
            continue;
        int hit = 0;
        for (size_t j = 0; j < t.n && !hit; j++)
            hit = t.cp[j] < 0x10000 && (amb[t.cp[j] >> 3] >> (t.cp[j] & 7) & 1);
        free(t.cp);
        if (hit) {
            char *target = xstrdup_(c->target, strlen(c->target));
            double count = c->count;
            int curated = c->curated;
            cand_add(cs, target, target, count);
            cs->c[cs->n - 1].curated = curated;
            free(target);
        }
    }
    free(amb);
}

/* Reads data/context/repair.tsv: CHAR<TAB>READING<TAB>always|words. Fills
 * reading[ch] (0x10000 entries, zeroed here) and sets ch in `always` or
 * `in_words` (0x10000 / 8 bytes each, zeroed here). */
static int read_repair_list(const char *path, uint32_t *reading, unsigned char *always,
                            unsigned char *in_words, unsigned char *keep, char *err, size_t errlen)
{
    line_reader lr;
    if (lines_open(&lr, path, err, errlen) != 0)
        return -1;
    memset(reading, 0, 0x10000 * sizeof(uint32_t));
    memset(always, 0, 0x10000 / 8);
    memset(in_words, 0, 0x10000 / 8);
    memset(keep, 0, 0x10000 / 8);
    for (char *line; (line = lines_next(&lr));) {
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (t1)
            *t1 = 0;
        if (t2)
            *t2 = 0;
        uint32_t ch = first_cp(line), r = t1 ? first_cp(t1 + 1) : 0;
        int kind = !t2                              ? -1
                   : strcmp(t2 + 1, "always") == 0 ? 0
                   : strcmp(t2 + 1, "words") == 0  ? 1
                   : strcmp(t2 + 1, "keep") == 0   ? 2
                                                   : -1;
        if (kind < 0 || chars_in(line) != 1 || chars_in(t1 + 1) != 1 || ch >= 0x10000 ||
            r >= 0x10000 || !ch || !r) {
            seterr(err, errlen, "%s:%zu: expected CHAR<TAB>READING<TAB>always|words|keep",
                   path, lr.lineno);
            lines_close(&lr);
            return -1;
        }
        unsigned char *set = kind == 2 ? keep : kind ? in_words : always;
        if (kind != 2)
            reading[ch] = r;
        set[ch >> 3] |= (unsigned char)(1u << (ch & 7));
    }
    lines_close(&lr);
    return 0;
}

/* Repair for t2s: a character that damaged Traditional text puts in place of
 * another (data/context/repair.tsv) becomes its reading, the Simplified
 * character it stands for (衹 -> 只, 甯 -> 宁). Most of them t2s would leave
 * as they are. */
static int add_repair_readings(cands *cs, const char *path, char *err, size_t errlen)
{
    uint32_t *reading = xrealloc_(NULL, 0x10000 * sizeof(uint32_t));
    unsigned char *sets = xrealloc_(NULL, 3 * 0x10000 / 8);
    int rc = read_repair_list(path, reading, sets, sets + 0x10000 / 8, sets + 2 * 0x10000 / 8,
                              err, errlen);
    for (uint32_t ch = 0; rc == 0 && ch < 0x10000; ch++) {
        if (!reading[ch])
            continue;
        char k[8], v[8];
        encode_all(&ch, 1, k);
        encode_all(&reading[ch], 1, v);
        cand_add(cs, k, v, CURATED_COUNT);
        cs->c[cs->n - 1].curated = CURATED_OURS;
    }
    free(reading);
    free(sets);
    return rc;
}

int model_build_t2s(const oc_data *data, const model_words *essay, const char *curated_path,
                    const char *repair_path, model_tables *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const oc_dict *tsc = need_dict(data, "TSCharacters", err, errlen);
    const oc_dict *tsp = tsc ? need_dict(data, "TSPhrases", err, errlen) : NULL;
    const oc_dict *twv = tsp ? need_dict(data, "TWVariants", err, errlen) : NULL;
    const oc_profile *t2s = twv ? oc_data_profile(data, "t2s") : NULL;
    if (!twv)
        return -1;
    if (!t2s) {
        seterr(err, errlen, "OpenCC data has no t2s profile");
        return -1;
    }
    t2s_ctx x = {t2s, twv, tsc};
    cands cs = {0};
    for (size_t i = 0; i < essay->count; i++) {
        size_t len;
        const char *w = essay->words[i];
        if (essay->counts[i] <= 0 && chars_in(w) > 1 && !t2s_has_choice(tsc, w)) {
            out->essay_dropped++; /* no count, and no form to vouch for */
            continue;
        }
        char *s = t2s_of(&x, w, &len);
        if (chars_in(w) == chars_in(s)) {
            t2s_add(&cs, &x, w, s, essay->counts[i]);
            out->essay_used++;
        } else {
            out->essay_dropped++;
        }
        free(s);
    }
    for (size_t i = 0; i < tsp->count; i++)
        t2s_add(&cs, &x, tsp->entries[i].key, tsp->entries[i].values[0], PHRASE_COUNT);
    /* Every character t2s changes has a one-character candidate: its default. */
    for (size_t i = 0; i < tsc->count; i++)
        t2s_add(&cs, &x, tsc->entries[i].key, tsc->entries[i].values[0], 0);
    if (load_curated(curated_path, &cs, t2s_curated, &x, err, errlen) != 0)
        return -1;
    if (repair_path && add_repair_readings(&cs, repair_path, err, errlen) != 0)
        return -1;
    add_output_keys(&cs, tsc);
    uint32_t *single = NULL;
    out->words = cands_finish(&cs, "context-t2s", essay->total, tsc, NULL, &single, err, errlen);
    if (!out->words) {
        free(single);
        return -1;
    }
    mark_ambiguous(out, tsc, single);
    free(single);
    return 0;
}

/* Marks the characters some word converts differently from `single` (the
 * one-character answer: the first value of `chars`, else the character). */
static void mark_ambiguous(model_tables *t, const oc_dict *chars, const uint32_t *single)
{
    t->ambiguous = xrealloc_(NULL, 0x10000 / 8);
    memset(t->ambiguous, 0, 0x10000 / 8);
    t->pairs = xrealloc_(NULL, FJ_BIGRAM_BITS / 8);
    memset(t->pairs, 0, FJ_BIGRAM_BITS / 8);
    const oc_dict *d = t->words;
    for (size_t i = 0; i < d->count; i++) {
        u32s k, v;
        const char *val = d->entries[i].values[0];
        size_t vl = strlen(val);
        if (vl <= 3 || !decode_all(d->entries[i].key, strlen(d->entries[i].key), &k))
            continue; /* a default target: every character its own answer */
        if (!decode_all(val + 3, vl - 3, &v)) {
            free(k.cp);
            continue;
        }
        for (size_t j = 0; j < k.n; j++) {
            uint32_t cp = k.cp[j], want = cp;
            const oc_entry *e = char_entry(chars, cp);
            if (e)
                want = first_cp(e->values[0]);
            if (cp < 0x110000 && single && single[cp])
                want = single[cp]; /* the model's own one-character form */
            if (k.n == v.n && v.cp[j] == want)
                continue;
            if (cp < 0x10000)
                t->ambiguous[cp >> 3] |= (unsigned char)(1u << (cp & 7));
            /* The pairs that show this word may be present here. */
            for (size_t side = 0; side < 2; side++) {
                if ((side == 0 && j == 0) || (side == 1 && j + 1 >= k.n))
                    continue;
                uint32_t h = side == 0 ? fj_bigram_hash(0, k.cp[j - 1], cp)
                                       : fj_bigram_hash(0, cp, k.cp[j + 1]);
                t->pairs[h >> 3] |= (unsigned char)(1u << (h & 7));
            }
        }
        free(k.cp);
        free(v.cp);
    }
}

void model_tables_free(model_tables *t)
{
    free(t->ambiguous);
    free(t->pairs);
    free(t->source_only);
    oc_dict_free(t->fold);
    oc_dict_free(t->words);
    memset(t, 0, sizeof *t);
}

/* ---- repair ------------------------------------------------------------------ */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One character through a one-character dictionary (its first value), else itself. */
static uint32_t map_cp(const oc_dict *d, uint32_t cp)
{
    const oc_entry *e = d ? char_entry(d, cp) : NULL;
    return e && chars_in(e->values[0]) == 1 ? first_cp(e->values[0]) : cp;
}

/* Appends form (n characters) to the attested text, also in Taiwan's and
 * Hong Kong's variants, with the value 0 (kept unless the repair is
 * thorough), 1 (kept) or 2 (written either way: kept also inside a longer
 * word of the model). */
static void attest_form(const uint32_t *w, size_t n, const oc_dict *const variants[2],
                        int value, char **text, size_t *len, size_t *cap)
{
    char form[4 * MAX_WORD_CHARS + 1];
    for (int pass = 0; pass < 3; pass++) {
        uint32_t f[MAX_WORD_CHARS];
        for (size_t k = 0; k < n; k++)
            f[k] = pass ? map_cp(variants[pass - 1], w[k]) : w[k];
        if (pass && memcmp(f, w, n * sizeof(uint32_t)) == 0)
            continue;
        encode_all(f, n, form);
        while (*len + strlen(form) + 4 >= *cap)
            *text = xrealloc_(*text, *cap *= 2);
        *len += (size_t)sprintf(*text + *len, "%s\t%d\n", form, value);
    }
}

/* Repair: the words written in a form that the model does not choose for
 * their reading, which repair keeps as written (了解 where the model writes
 * 瞭解, 分布 for 分佈): rime-essay's words, and the words of either_path
 * (repair-either.tsv), written both ways in Taiwan and Hong Kong. rime-essay's
 * zero-count words are its unpreferred spellings, mostly the careless ones
 * (關系, 仿佛): they get the value 0, and a thorough repair changes them. */
static oc_dict *build_attested(const oc_data *data, const model_words *essay,
                               const oc_dict *s2t_words, const oc_dict *fold,
                               const char *either_path, char *err, size_t errlen)
{
    const oc_dict *stc = oc_data_dict(data, "STCharacters");
    const oc_dict *variants[2] = {oc_data_dict(data, "TWVariants"), oc_data_dict(data, "HKVariants")};
    size_t cap = 1 << 20, len = 0;
    char *text = xrealloc_(NULL, cap);
    for (size_t i = 0; i < essay->count; i++) {
        u32s w;
        const char *word = essay->words[i];
        if (!decode_all(word, strlen(word), &w))
            continue;
        int ok = w.n >= 2 && w.n <= MAX_WORD_CHARS;
        uint32_t r[MAX_WORD_CHARS], t[MAX_WORD_CHARS];
        for (size_t k = 0; ok && k < w.n; k++) {
            ok = w.cp[k] >= 0x2000 && w.cp[k] < 0x10000;
            r[k] = map_cp(fold, w.cp[k]);
        }
        char key[4 * MAX_WORD_CHARS + 1];
        const oc_entry *e = NULL;
        if (ok) {
            encode_all(r, w.n, key);
            e = oc_dict_find(s2t_words, key, strlen(key));
        }
        if (!e) {
            free(w.cp);
            continue;
        }
        /* The model's form: the stored target, or each character's default. */
        const char *v = e->values[0] + 3;
        u32s tv = {0};
        if (*v && decode_all(v, strlen(v), &tv) && tv.n == w.n) {
            memcpy(t, tv.cp, w.n * sizeof(uint32_t));
        } else {
            for (size_t k = 0; k < w.n; k++)
                t[k] = map_cp(stc, r[k]);
        }
        free(tv.cp);
        if (memcmp(t, w.cp, w.n * sizeof(uint32_t)) != 0)
            attest_form(w.cp, w.n, variants, essay->counts[i] > 0, &text, &len, &cap);
        free(w.cp);
    }
    line_reader lr;
    if (lines_open(&lr, either_path, err, errlen) != 0) {
        free(text);
        return NULL;
    }
    for (char *line; (line = lines_next(&lr));) {
        u32s w;
        int ok = decode_all(line, strlen(line), &w) && w.n >= 2 && w.n <= MAX_WORD_CHARS;
        for (size_t k = 0; ok && k < w.n; k++)
            ok = w.cp[k] >= 0x2000 && w.cp[k] < 0x10000;
        if (!ok) {
            seterr(err, errlen, "%s:%zu: expected one word of 2 to %d characters", either_path,
                   lr.lineno, MAX_WORD_CHARS);
            free(w.cp);
            free(text);
            lines_close(&lr);
            return NULL;
        }
        attest_form(w.cp, w.n, variants, 2, &text, &len, &cap);
        free(w.cp);
    }
    lines_close(&lr);
    /* One line per form (variants can meet another essay word); where a form
     * has several values, the highest sorts last and is the one kept. */
    size_t n = 0;
    char **lines = NULL;
    for (char *q = text, *end = text + len; q < end; n++) {
        char *nl = memchr(q, '\n', (size_t)(end - q));
        lines = xrealloc_(lines, (n + 1) * sizeof *lines);
        lines[n] = q;
        *nl = 0;
        q = nl + 1;
    }
    if (n)
        qsort(lines, n, sizeof *lines, str_cmp);
    size_t out_len = 0;
    char *uniq = xrealloc_(NULL, len + 1);
    for (size_t i = 0; i < n; i++) {
        size_t key_len = strcspn(lines[i], "\t");
        if (i + 1 < n && strncmp(lines[i], lines[i + 1], key_len + 1) == 0)
            continue;
        out_len += (size_t)sprintf(uniq + out_len, "%s\n", lines[i]);
    }
    oc_dict *d = oc_dict_parse_buffer("context-repair-attested", uniq, out_len, err, errlen);
    free(lines);
    free(uniq);
    free(text);
    return d;
}

/* Readings seen fewer times than this in the word list get no weights. */
#define DAMAGE_MIN_COUNT 100.0
/* How often a character-by-character conversion writes a form other than
 * the first (a character it passes through as written): measured on make
 * accuracy's damaged dev sentences, 1.8 %. */
#define DAMAGE_OTHER_RATE 0.018
/* Seeing another form is some evidence of care however rare the form. */
#define DAMAGE_OTHER_WEIGHT_MAX (-200)

/* repair_tables.damage_weights. For each reading with several forms in
 * STCharacters, p is the share of its other forms in the word list (in
 * every word, one character at a time). Correct text writes another form
 * with probability p, careless conversion with DAMAGE_OTHER_RATE: seeing
 * the first form adds ln((1 - rate) / (1 - p)), another ln(rate / p). */
static int16_t *damage_weights(const oc_dict *stc, const oc_dict *tsc, const model_words *essay)
{
    double *first = xrealloc_(NULL, 0x10000 * sizeof(double));
    double *other = xrealloc_(NULL, 0x10000 * sizeof(double));
    memset(first, 0, 0x10000 * sizeof(double));
    memset(other, 0, 0x10000 * sizeof(double));
    for (size_t i = 0; i < essay->count; i++) {
        u32s u;
        const char *w = essay->words[i];
        if (essay->counts[i] <= 0 || !decode_all(w, strlen(w), &u))
            continue;
        for (size_t k = 0; k < u.n; k++) {
            uint32_t r = fold_cp(stc, tsc, u.cp[k]);
            const oc_entry *e = r < 0x10000 ? char_entry(stc, r) : NULL;
            if (!e || e->value_count < 2 || chars_in(e->values[0]) != 1)
                continue;
            if (u.cp[k] == first_cp(e->values[0]))
                first[r] += essay->counts[i];
            else if (entry_has(e, u.cp[k]))
                other[r] += essay->counts[i];
        }
        free(u.cp);
    }
    int16_t *w = xrealloc_(NULL, 0x10000 * 4 * sizeof(int16_t));
    memset(w, 0, 0x10000 * 4 * sizeof(int16_t));
    for (uint32_t r = 0; r < 0x10000; r++) {
        double all = first[r] + other[r];
        if (all < DAMAGE_MIN_COUNT)
            continue;
        double p = other[r] / all;
        if (p < 0.001)
            p = 0.001;
        if (p > 0.999)
            p = 0.999;
        double wf = 1000.0 * log((1.0 - DAMAGE_OTHER_RATE) / (1.0 - p));
        double wo = 1000.0 * log(DAMAGE_OTHER_RATE / p);
        if (wo > DAMAGE_OTHER_WEIGHT_MAX)
            wo = DAMAGE_OTHER_WEIGHT_MAX;
        if (wo < -30000)
            wo = -30000;
        w[4 * r] = (int16_t)lround(wf);
        w[4 * r + 1] = (int16_t)lround(wo);
        w[4 * r + 2] = (int16_t)lround(10000.0 * p);
    }
    free(first);
    free(other);
    return w;
}

/* Marks in `written` every BMP character that a word of w with a count
 * writes. */
static void mark_written(const model_words *w, unsigned char *written)
{
    for (size_t i = 0; i < w->count; i++) {
        u32s u;
        if (w->counts[i] <= 0 || !decode_all(w->words[i], strlen(w->words[i]), &u))
            continue;
        for (size_t k = 0; k < u.n; k++)
            if (u.cp[k] < 0x10000)
                written[u.cp[k] >> 3] |= (unsigned char)(1u << (u.cp[k] & 7));
        free(u.cp);
    }
}

static void mark_values(const oc_dict *d, unsigned char *set)
{
    for (size_t i = 0; i < d->count; i++)
        for (size_t v = 0; v < d->entries[i].value_count; v++) {
            const char *s = d->entries[i].values[v];
            uint32_t cp = first_cp(s);
            if (chars_in(s) == 1 && cp < 0x10000)
                set[cp >> 3] |= (unsigned char)(1u << (cp & 7));
        }
}

/* model_build_repair's derived forms that are never right (see model.h);
 * returns how many it added to `always`, with their readings. */
static size_t derive_never_right(const oc_data *data, const oc_dict *stc, const oc_dict *tsc,
                                 const model_words *native, uint32_t *reading,
                                 unsigned char *always, const unsigned char *in_words,
                                 const unsigned char *keep)
{
    unsigned char *allowed = xrealloc_(NULL, 0x10000 / 8);
    memset(allowed, 0, 0x10000 / 8);
    mark_values(stc, allowed);
    static const char *const variants[] = {"TWVariants", "HKVariants"};
    for (size_t v = 0; v < 2; v++)
        for (size_t i = 0; i < data->dict_count; i++)
            if (strcmp(data->dicts[i]->name, variants[v]) == 0)
                mark_values(data->dicts[i], allowed);
    mark_written(native, allowed);
    size_t added = 0;
    for (size_t i = 0; i < tsc->count; i++) {
        const oc_entry *e = &tsc->entries[i];
        uint32_t cp = first_cp(e->key), r = first_cp(e->values[0]);
        if (chars_in(e->key) != 1 || chars_in(e->values[0]) != 1 || cp >= 0x10000 ||
            r >= 0x10000 || r == cp || reading[cp] ||
            ((allowed[cp >> 3] | always[cp >> 3] | in_words[cp >> 3] | keep[cp >> 3]) >> (cp & 7) & 1))
            continue;
        always[cp >> 3] |= (unsigned char)(1u << (cp & 7));
        reading[cp] = r;
        added++;
    }
    free(allowed);
    return added;
}

int model_build_repair(const oc_data *data, const char *repair_path, const char *either_path,
                       const model_words *essay, const oc_dict *s2t_words,
                       const model_words *native, repair_tables *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const oc_dict *stc = need_dict(data, "STCharacters", err, errlen);
    const oc_dict *tsc = stc ? need_dict(data, "TSCharacters", err, errlen) : NULL;
    if (!tsc)
        return -1;
    out->always = xrealloc_(NULL, 0x10000 / 8);
    out->in_words = xrealloc_(NULL, 0x10000 / 8);
    uint32_t *listed = xrealloc_(NULL, 0x10000 * sizeof(uint32_t));
    unsigned char *keep = xrealloc_(NULL, 0x10000 / 8);
    if (read_repair_list(repair_path, listed, out->always, out->in_words, keep, err, errlen) != 0) {
        free(listed);
        free(keep);
        return -1;
    }
    if (native)
        out->derived_always =
            derive_never_right(data, stc, tsc, native, listed, out->always, out->in_words, keep);
    /* A careless converter writes a Simplified character with several
     * Traditional forms as its first one (干: 幹 乾 干 gives 幹擾, 面: 面 麪
     * gives 陽春面). So the first form is chosen again inside a word too.
     * Listed characters keep their class. */
    for (size_t i = 0; i < stc->count; i++) {
        const oc_entry *e = &stc->entries[i];
        uint32_t ch = first_cp(e->values[0]);
        if (e->value_count < 2 || chars_in(e->key) != 1 || chars_in(e->values[0]) != 1 ||
            ch >= 0x10000 ||
            ((out->always[ch >> 3] | out->in_words[ch >> 3] | keep[ch >> 3]) >> (ch & 7) & 1))
            continue;
        out->in_words[ch >> 3] |= (unsigned char)(1u << (ch & 7));
    }
    free(keep);
    out->damage_weights = damage_weights(stc, tsc, essay);
    /* The fold table: as model_build_s2t's, with the listed readings. */
    out->fold = build_fold(stc, tsc, listed, "context-repair-fold", err, errlen);
    free(listed);
    if (out->fold)
        out->attested =
            build_attested(data, essay, s2t_words, out->fold, either_path, err, errlen);
    return out->fold && out->attested ? 0 : -1;
}

void repair_tables_free(repair_tables *t)
{
    oc_dict_free(t->fold);
    oc_dict_free(t->attested);
    free(t->always);
    free(t->in_words);
    free(t->damage_weights);
    memset(t, 0, sizeof *t);
}
