/* Boilerplate removal: which lines of a scraped chapter are site notices.
 *
 * A rules text (data/clean-rules.txt, compiled in; the format is described
 * there) gives weighted phrases, whole-line markers and the top-level
 * domains that make a dotted name a web address. A line is folded (to
 * Simplified through TSCharacters, full-width to ASCII, ASCII to lower
 * case) and scored; it is dropped when the score reaches the threshold or
 * it is a marker. Every other line is kept byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "utf8.h"

/* The default rules: data/clean-rules.txt, generated into the build. */
extern const unsigned char fj__clean_default_rules[];
extern const size_t fj__clean_default_rules_size;

#define GAP 0xFFFFFFFFu       /* '*' in a pattern: 0 to MAX_GAP characters */
#define MAX_GAP 6
#define MAX_GAPS 3            /* per pattern */
#define MAX_PATTERN 64        /* characters */
#define MAXCHARS_LIMIT 1000u  /* the largest maxchars setting */
#define MAX_RULES 4096u
#define TLD_MAX 15

typedef struct alt_rec {
    uint32_t rule;
    uint32_t off, len; /* into pool */
} alt_rec;

typedef struct fold_pair {
    uint32_t from, to;
} fold_pair;

typedef struct rule_rec {
    int weight;
    int marker;
} rule_rec;

typedef struct tld_rec {
    char name[TLD_MAX + 1];
    size_t len;
} tld_rec;

struct fj_clean {
    fj_allocator allocator;
    const fj_allocator *a; /* &allocator, or NULL for malloc */
    int threshold, url_weight;
    unsigned maxchars;
    rule_rec *rules;
    size_t rule_count, rule_cap;
    alt_rec *alts;
    size_t alt_count, alt_cap;
    uint32_t *pool;
    size_t pool_count, pool_cap;
    uint32_t *index; /* phrase alternatives, sorted by first character */
    size_t index_count;
    uint32_t *markers; /* marker alternatives */
    size_t marker_count;
    /* Bit per BMP character: some phrase starts with it; it folds to
     * another character. Most characters of a line are neither. */
    unsigned char starts[0x10000 / 8], folds_from[0x10000 / 8];
    fold_pair *folds; /* sorted by `from` */
    size_t fold_count, fold_cap;
    tld_rec *tlds;
    size_t tld_count, tld_cap;
};

/* ---- growable arrays ---------------------------------------------------- */

static int grow(fj_clean *c, void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = fj__realloc(c->a, *p, *cap * elem, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

#define GROW(c, arr, count, cap) grow((c), (void **)&(arr), &(cap), (count) + 1, sizeof *(arr))

/* ---- characters --------------------------------------------------------- */

static int is_space(uint32_t cp)
{
    return cp == ' ' || cp == '\t' || cp == '\v' || cp == '\f' || cp == '\r' || cp == '\n' ||
           cp == 0x3000 || cp == 0xA0 || cp == 0xFEFF || cp == 0x200B || cp == 0x2028 ||
           cp == 0x2029;
}

/* Punctuation, brackets and symbols: what a marker line may wrap its text in. */
static int is_mark(uint32_t cp)
{
    if (cp < 0x80)
        return !((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') ||
                 (cp >= 'A' && cp <= 'Z'));
    return cp == 0xB7 || (cp >= 0x2000 && cp <= 0x2BFF) || (cp >= 0x3000 && cp <= 0x303F) ||
           (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF01 && cp <= 0xFF0F) ||
           (cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) ||
           (cp >= 0xFF5B && cp <= 0xFF65);
}

static uint32_t fold(const fj_clean *c, uint32_t cp)
{
    if (cp >= 'A' && cp <= 'Z')
        return cp + 32;
    if (cp < 0x80)
        return cp;
    if (cp >= 0xFF01 && cp <= 0xFF5E) { /* full-width ASCII */
        cp -= 0xFEE0;
        return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
    }
    if (cp == 0x3000)
        return ' ';
    if (cp < 0x10000 && !(c->folds_from[cp >> 3] >> (cp & 7) & 1))
        return cp;
    size_t lo = 0, hi = c->fold_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->folds[mid].from == cp)
            return c->folds[mid].to;
        if (c->folds[mid].from < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return cp;
}

/* ---- patterns ------------------------------------------------------------- */

/* Whether p[0..plen) matches t from i (to the end when `whole`). */
static int match_at(const uint32_t *p, size_t plen, const uint32_t *t, size_t n, size_t i,
                    int whole)
{
    while (plen > 0 && p[0] != GAP) {
        if (i >= n || t[i] != p[0])
            return 0;
        p++, plen--, i++;
    }
    if (plen == 0)
        return !whole || i == n;
    for (size_t k = 0; k <= MAX_GAP && i + k <= n; k++)
        if (match_at(p + 1, plen - 1, t, n, i + k, whole))
            return 1;
    return 0;
}

/* ---- web addresses ------------------------------------------------------- */

static int is_label(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* '.', 。, ｡, 点, 點 (full-width ． is '.' once folded). */
static int is_dot(uint32_t c)
{
    return c == '.' || c == 0x3002 || c == 0xFF61 || c == 0x70B9 || c == 0x9EDE;
}

static int label_is(const uint32_t *t, size_t start, size_t end, const char *s, size_t n)
{
    if (end - start != n)
        return 0;
    for (size_t k = 0; k < n; k++)
        if (t[start + k] != (unsigned char)s[k])
            return 0;
    return 1;
}

static int has_url(const fj_clean *c, const uint32_t *t, size_t n)
{
    for (size_t i = 0; i < n;) {
        if (!is_label(t[i])) {
            i++;
            continue;
        }
        size_t first_end = 0, last_start = i, labels = 0;
        int letter_before_last = 0, letter_in_label = 0;
        size_t j = i;
        for (;;) {
            last_start = j;
            letter_in_label = 0;
            while (j < n && is_label(t[j])) {
                letter_in_label |= t[j] >= 'a' && t[j] <= 'z';
                j++;
            }
            if (++labels == 1)
                first_end = j;
            if (j + 1 < n && is_dot(t[j]) && is_label(t[j + 1])) {
                letter_before_last |= letter_in_label;
                j++;
                continue;
            }
            break;
        }
        /* http:// and https:// */
        if ((label_is(t, i, first_end, "http", 4) || label_is(t, i, first_end, "https", 5)) &&
            first_end + 3 <= n && t[first_end] == ':' && t[first_end + 1] == '/' &&
            t[first_end + 2] == '/')
            return 1;
        if (labels >= 2) {
            if (label_is(t, i, first_end, "www", 3) || label_is(t, i, first_end, "wap", 3))
                return 1;
            if (letter_before_last)
                for (size_t k = 0; k < c->tld_count; k++)
                    if (label_is(t, last_start, j, c->tlds[k].name, c->tlds[k].len))
                        return 1;
        }
        i = j;
    }
    return 0;
}

/* ---- one line -------------------------------------------------------------- */

int fj_clean_line(const fj_clean *c, const char *line, size_t len, int *score_out)
{
    if (score_out)
        *score_out = 0;
    if (!c || (!line && len))
        return 0;
    if (len && line[len - 1] == '\n')
        len--;
    if (len && line[len - 1] == '\r')
        len--;
    if (len > 4 * (size_t)c->maxchars)
        return 0; /* more than maxchars characters, whatever they are */
    uint32_t all[MAXCHARS_LIMIT], phrase[MAXCHARS_LIMIT], mark[MAXCHARS_LIMIT];
    size_t n = 0, np = 0, nm = 0;
    const unsigned char *p = (const unsigned char *)line, *end = p + len;
    while (p < end) {
        if (n == c->maxchars)
            return 0;
        uint32_t cp;
        int k = fj_utf8_decode(p, end, &cp);
        if (k <= 0) {
            cp = 0xFFFD;
            k = 1;
        }
        p += k;
        cp = fold(c, cp);
        all[n++] = cp;
        if (!is_space(cp)) {
            phrase[np++] = cp;
            if (!is_mark(cp))
                mark[nm++] = cp;
        }
    }
    int score = has_url(c, all, n) ? c->url_weight : 0;
    unsigned char counted[MAX_RULES / 8];
    memset(counted, 0, (c->rule_count + 7) / 8);
    int marker = 0;
    for (size_t i = 0; i < np; i++) {
        if (phrase[i] < 0x10000 && !(c->starts[phrase[i] >> 3] >> (phrase[i] & 7) & 1))
            continue;
        /* the phrase alternatives that start with this character */
        size_t lo = 0, hi = c->index_count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (c->pool[c->alts[c->index[mid]].off] < phrase[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < c->index_count; lo++) {
            const alt_rec *a = &c->alts[c->index[lo]];
            if (c->pool[a->off] != phrase[i])
                break;
            if (counted[a->rule >> 3] >> (a->rule & 7) & 1)
                continue;
            if (match_at(c->pool + a->off, a->len, phrase, np, i, 0)) {
                counted[a->rule >> 3] |= (unsigned char)(1u << (a->rule & 7));
                score += c->rules[a->rule].weight;
            }
        }
    }
    if (nm > 0)
        for (size_t k = 0; k < c->marker_count && !marker; k++) {
            const alt_rec *a = &c->alts[c->markers[k]];
            marker = match_at(c->pool + a->off, a->len, mark, nm, 0, 1);
        }
    if (marker && score < c->threshold)
        score = c->threshold;
    if (score_out)
        *score_out = score;
    return score >= c->threshold;
}

/* ---- parsing the rules ------------------------------------------------------ */

typedef struct parser {
    fj_clean *c;
    const char *name;
    size_t line_no, line_off;
    fj_error *error;
} parser;

static fj_status parse_error(parser *ps, const char *what)
{
    fj__set_error(ps->error, FJ_ERR_RULES, ps->line_off, "%s:%zu: %s", ps->name, ps->line_no,
                  what);
    return FJ_ERR_RULES;
}

static fj_status nomem(fj_error *e)
{
    fj__set_error(e, FJ_ERR_NOMEM, 0, "out of memory");
    return FJ_ERR_NOMEM;
}

static int is_blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

/* The next blank-separated field of [*p, end), or 0 when there is none. */
static size_t next_field(const char **p, const char *end, const char **field)
{
    while (*p < end && is_blank(**p))
        (*p)++;
    *field = *p;
    while (*p < end && !is_blank(**p))
        (*p)++;
    return (size_t)(*p - *field);
}

static int parse_int(const char *s, size_t n, long lo, long hi, long *out)
{
    if (n == 0 || n > 7) /* a sign and six digits */
        return -1;
    long v = 0;
    size_t i = 0;
    int neg = s[0] == '-';
    if (neg || s[0] == '+')
        i++;
    if (i == n)
        return -1;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    v = neg ? -v : v;
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Adds the patterns of [s, end) ('|'-separated) to a new rule. */
static fj_status add_rule(parser *ps, int weight, int marker, const char *s, const char *end)
{
    fj_clean *c = ps->c;
    while (end > s && is_blank(end[-1]))
        end--;
    if (s == end)
        return parse_error(ps, "no pattern");
    if (c->rule_count >= MAX_RULES)
        return parse_error(ps, "too many rules (at most 4096)");
    if (GROW(c, c->rules, c->rule_count, c->rule_cap))
        return nomem(ps->error);
    uint32_t rule = (uint32_t)c->rule_count;
    c->rules[c->rule_count++] = (rule_rec){weight, marker};
    const unsigned char *p = (const unsigned char *)s, *e = (const unsigned char *)end;
    while (p <= e) {
        uint32_t buf[MAX_PATTERN];
        size_t n = 0, gaps = 0;
        for (; p < e && *p != '|';) {
            uint32_t cp;
            int k = fj_utf8_decode(p, e, &cp);
            if (k <= 0)
                return parse_error(ps, "a pattern is not valid UTF-8");
            p += k;
            int literal = 0;
            if (cp == '\\') {
                if (p == e || (*p != '*' && *p != '|' && *p != '\\'))
                    return parse_error(ps, "unknown escape (allowed: \\* \\| \\\\)");
                cp = *p++;
                literal = 1;
            }
            if (!literal && cp == '*') {
                if (n == 0)
                    return parse_error(ps, "a pattern cannot start with '*'");
                if (buf[n - 1] == GAP)
                    continue;
                if (++gaps > MAX_GAPS)
                    return parse_error(ps, "more than 3 '*' in a pattern");
                cp = GAP;
            } else {
                cp = fold(c, cp);
                if (is_space(cp))
                    return parse_error(ps, "a pattern cannot contain spaces");
                if (marker && is_mark(cp))
                    return parse_error(ps, "a marker cannot contain punctuation or symbols");
            }
            if (n == MAX_PATTERN)
                return parse_error(ps, "a pattern is longer than 64 characters");
            buf[n++] = cp;
        }
        if (n == 0)
            return parse_error(ps, "an empty pattern");
        if (buf[n - 1] == GAP)
            return parse_error(ps, "a pattern cannot end with '*'");
        if (grow(c, (void **)&c->pool, &c->pool_cap, c->pool_count + n, sizeof *c->pool) ||
            GROW(c, c->alts, c->alt_count, c->alt_cap))
            return nomem(ps->error);
        memcpy(c->pool + c->pool_count, buf, n * sizeof *buf);
        c->alts[c->alt_count++] = (alt_rec){rule, (uint32_t)c->pool_count, (uint32_t)n};
        c->pool_count += n;
        p++; /* past '|' (or the end) */
    }
    return FJ_OK;
}

static fj_status parse_line(parser *ps, const char *s, const char *end)
{
    fj_clean *c = ps->c;
    const char *p = s, *f;
    size_t n = next_field(&p, end, &f);
    if (n == 0 || f[0] == '#')
        return FJ_OK;
    long v;
    const char *arg;
    size_t an;
#define IS(word) (n == sizeof(word) - 1 && memcmp(f, word, n) == 0)
    if (IS("threshold") || IS("url") || IS("maxchars")) {
        int maxchars = IS("maxchars"), url = IS("url");
        an = next_field(&p, end, &arg);
        if (parse_int(arg, an, maxchars ? 1 : -100000, maxchars ? (long)MAXCHARS_LIMIT : 100000,
                      &v))
            return parse_error(ps, maxchars ? "maxchars needs a number from 1 to 1000"
                                            : "needs a whole number");
        if (next_field(&p, end, &arg))
            return parse_error(ps, "one value expected");
        if (maxchars)
            c->maxchars = (unsigned)v;
        else if (url)
            c->url_weight = (int)v;
        else
            c->threshold = (int)v;
    } else if (IS("tld")) {
        int any = 0;
        while ((an = next_field(&p, end, &arg)) > 0) {
            if (an > TLD_MAX)
                return parse_error(ps, "a top-level domain is longer than 15 characters");
            tld_rec t;
            memset(&t, 0, sizeof t);
            for (size_t i = 0; i < an; i++) {
                char ch = arg[i] >= 'A' && arg[i] <= 'Z' ? (char)(arg[i] + 32) : arg[i];
                if (!is_label((unsigned char)ch))
                    return parse_error(ps, "a top-level domain has only letters, digits and '-'");
                t.name[i] = ch;
            }
            t.len = an;
            if (GROW(c, c->tlds, c->tld_count, c->tld_cap))
                return nomem(ps->error);
            c->tlds[c->tld_count++] = t;
            any = 1;
        }
        if (!any)
            return parse_error(ps, "tld needs at least one name");
    } else if (IS("phrase")) {
        an = next_field(&p, end, &arg);
        if (parse_int(arg, an, -100000, 100000, &v))
            return parse_error(ps, "phrase needs a weight (a whole number) and patterns");
        while (p < end && is_blank(*p))
            p++;
        return add_rule(ps, (int)v, 0, p, end);
    } else if (IS("marker")) {
        while (p < end && is_blank(*p))
            p++;
        return add_rule(ps, 0, 1, p, end);
    } else {
        return parse_error(ps, "unknown directive (threshold, url, maxchars, tld, phrase, marker)");
    }
#undef IS
    return FJ_OK;
}

static fj_status parse_rules(fj_clean *c, const char *name, const char *text, size_t len,
                             fj_error *error)
{
    parser ps = {c, name ? name : "rules", 0, 0, error};
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        ps.line_no++;
        ps.line_off = (size_t)(p - text);
        if (memchr(p, 0, (size_t)(eol - p)))
            return parse_error(&ps, "a NUL byte");
        fj_status st = parse_line(&ps, p, eol);
        if (st != FJ_OK)
            return st;
        p = eol + 1;
    }
    return FJ_OK;
}

/* ---- opening -------------------------------------------------------------- */

static int cmp_fold(const void *a, const void *b)
{
    uint32_t x = ((const fold_pair *)a)->from, y = ((const fold_pair *)b)->from;
    return (x > y) - (x < y);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Every TSCharacters key with a one-character first value folds to it. */
static fj_status load_folds(fj_clean *c, const fj_dict *dict)
{
    const fj_image *img = fj__dict_image(dict);
    for (uint32_t i = 0; i < img->srcdict_count; i++) {
        const fj_srcdict_rec *d = &img->srcdicts[i];
        if (d->name_len != 12 || memcmp(img->strings + d->name_off, "TSCharacters", 12) != 0)
            continue;
        for (uint32_t k = 0; k < d->entry_count; k++) {
            const fj_srcentry_rec *e = &img->srcentries[d->first_entry + k];
            const unsigned char *key = (const unsigned char *)img->strings + e->key_off;
            const unsigned char *val = (const unsigned char *)img->strings + e->values_off;
            const unsigned char *vend = val + e->values_len;
            const unsigned char *sp = memchr(val, ' ', e->values_len);
            uint32_t from, to;
            if (e->key_len == 0 ||
                fj_utf8_decode(key, key + e->key_len, &from) != (int)e->key_len ||
                val == vend || fj_utf8_decode(val, sp ? sp : vend, &to) != (sp ? sp : vend) - val ||
                from == to || from < 0x80)
                continue;
            if (GROW(c, c->folds, c->fold_count, c->fold_cap))
                return FJ_ERR_NOMEM;
            c->folds[c->fold_count++] = (fold_pair){from, to};
            if (from < 0x10000) /* until prune_folds keeps the ones that matter */
                c->folds_from[from >> 3] |= (unsigned char)(1u << (from & 7));
        }
        qsort(c->folds, c->fold_count, sizeof *c->folds, cmp_fold);
        return FJ_OK;
    }
    return FJ_ERR_DICT_FORMAT;
}

/* Keeps the folds that can matter: into or out of a pattern's character. */
static fj_status prune_folds(fj_clean *c)
{
    memset(c->folds_from, 0, sizeof c->folds_from);
    if (c->pool_count == 0) {
        c->fold_count = 0;
        return FJ_OK;
    }
    uint32_t *chars = fj__alloc(c->a, c->pool_count * sizeof *chars);
    if (!chars)
        return FJ_ERR_NOMEM;
    memcpy(chars, c->pool, c->pool_count * sizeof *chars);
    qsort(chars, c->pool_count, sizeof *chars, cmp_u32);
    size_t kept = 0;
    for (size_t i = 0; i < c->fold_count; i++) {
        uint32_t both[2] = {c->folds[i].from, c->folds[i].to};
        int keep = 0;
        for (int b = 0; b < 2 && !keep; b++)
            keep = bsearch(&both[b], chars, c->pool_count, sizeof *chars, cmp_u32) != NULL;
        if (keep) {
            c->folds[kept++] = c->folds[i];
            if (both[0] < 0x10000)
                c->folds_from[both[0] >> 3] |= (unsigned char)(1u << (both[0] & 7));
        }
    }
    c->fold_count = kept;
    fj__free(c->a, chars, c->pool_count * sizeof *chars);
    return FJ_OK;
}

/* The phrase index (qsort has no context pointer: it sorts (first
 * character, alternative) pairs) and the list of markers. */
static fj_status build_index(fj_clean *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->alt_count; i++)
        n += !c->rules[c->alts[i].rule].marker;
    c->marker_count = c->alt_count - n;
    if (c->marker_count) {
        c->markers = fj__alloc(c->a, c->marker_count * sizeof *c->markers);
        if (!c->markers)
            return FJ_ERR_NOMEM;
        size_t k = 0;
        for (size_t i = 0; i < c->alt_count; i++)
            if (c->rules[c->alts[i].rule].marker)
                c->markers[k++] = (uint32_t)i;
    }
    if (n == 0)
        return FJ_OK;
    uint64_t *keys = fj__alloc(c->a, n * sizeof *keys);
    if (!keys)
        return FJ_ERR_NOMEM;
    c->index = fj__alloc(c->a, n * sizeof *c->index);
    if (!c->index) {
        fj__free(c->a, keys, n * sizeof *keys);
        return FJ_ERR_NOMEM;
    }
    c->index_count = n;
    size_t k = 0;
    for (size_t i = 0; i < c->alt_count; i++)
        if (!c->rules[c->alts[i].rule].marker) {
            uint32_t first = c->pool[c->alts[i].off];
            keys[k++] = (uint64_t)first << 32 | i;
            if (first < 0x10000)
                c->starts[first >> 3] |= (unsigned char)(1u << (first & 7));
        }
    qsort(keys, n, sizeof *keys, cmp_u64);
    for (size_t i = 0; i < n; i++)
        c->index[i] = (uint32_t)keys[i];
    fj__free(c->a, keys, n * sizeof *keys);
    return FJ_OK;
}

const char *fj_clean_default_rules(size_t *len)
{
    if (len)
        *len = fj__clean_default_rules_size;
    return (const char *)fj__clean_default_rules;
}

fj_status fj_clean_open(const fj_dict *dict, const fj_clean_rules *extra, size_t extra_count,
                        unsigned flags, fj_clean **out, fj_error *error)
{
    if (out)
        *out = NULL;
    if (!out || (!extra && extra_count) || (flags & ~(unsigned)FJ_CLEAN_NO_DEFAULTS)) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "invalid argument");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < extra_count; i++)
        if (!extra[i].text && extra[i].len) {
            fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0, "invalid argument");
            return FJ_ERR_INVALID_ARGUMENT;
        }
    const fj_allocator *a = dict && dict->allocator.alloc ? &dict->allocator : NULL;
    fj_clean *c = fj__alloc(a, sizeof *c);
    if (!c)
        return nomem(error);
    memset(c, 0, sizeof *c);
    if (a) {
        c->allocator = *a;
        c->a = &c->allocator;
    }
    c->threshold = 10;
    c->url_weight = 5;
    c->maxchars = 200;
    fj_status st = FJ_OK;
    if (dict) {
        st = load_folds(c, dict);
        if (st == FJ_ERR_DICT_FORMAT)
            fj__set_error(error, st, 0, "the dictionary has no TSCharacters table");
        else if (st != FJ_OK)
            nomem(error);
    }
    if (st == FJ_OK && !(flags & FJ_CLEAN_NO_DEFAULTS))
        st = parse_rules(c, "default rules (data/clean-rules.txt)",
                         (const char *)fj__clean_default_rules, fj__clean_default_rules_size,
                         error);
    for (size_t i = 0; i < extra_count && st == FJ_OK; i++)
        st = parse_rules(c, extra[i].name, extra[i].text, extra[i].len, error);
    if (st == FJ_OK && (st = prune_folds(c)) != FJ_OK)
        nomem(error);
    if (st == FJ_OK && (st = build_index(c)) != FJ_OK)
        nomem(error);
    if (st != FJ_OK) {
        fj_clean_close(c);
        return st;
    }
    if (error)
        fj__set_error(error, FJ_OK, 0, "ok");
    *out = c;
    return FJ_OK;
}

void fj_clean_close(fj_clean *c)
{
    if (!c)
        return;
    const fj_allocator *a = c->a;
    fj__free(a, c->rules, c->rule_cap * sizeof *c->rules);
    fj__free(a, c->alts, c->alt_cap * sizeof *c->alts);
    fj__free(a, c->pool, c->pool_cap * sizeof *c->pool);
    fj__free(a, c->index, c->index_count * sizeof *c->index);
    fj__free(a, c->markers, c->marker_count * sizeof *c->markers);
    fj__free(a, c->folds, c->fold_cap * sizeof *c->folds);
    fj__free(a, c->tlds, c->tld_cap * sizeof *c->tlds);
    fj_allocator copy = c->allocator;
    fj__free(a ? &copy : NULL, c, sizeof *c);
}

/* ---- streaming -------------------------------------------------------------- */

struct fj_clean_stream {
    const fj_clean *clean;
    fj_write_fn write;
    void *write_ctx;
    fj_clean_report_fn report;
    void *report_ctx;
    char *line;        /* the current line, while it may still be boilerplate */
    size_t len, cap;   /* cap: the most bytes a line of maxchars characters has */
    int passing;       /* the current line is too long: it is being passed through */
    int finished;
    fj_status failed;
    unsigned long long line_no; /* of the current line, from 1 */
};

fj_status fj_clean_stream_new(const fj_clean *clean, fj_write_fn write, void *write_ctx,
                              fj_clean_report_fn report, void *report_ctx, fj_clean_stream **out)
{
    if (!out)
        return FJ_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!clean || !write)
        return FJ_ERR_INVALID_ARGUMENT;
    fj_clean_stream *s = fj__alloc(clean->a, sizeof *s);
    if (!s)
        return FJ_ERR_NOMEM;
    memset(s, 0, sizeof *s);
    s->clean = clean;
    s->write = write;
    s->write_ctx = write_ctx;
    s->report = report;
    s->report_ctx = report_ctx;
    s->cap = 4 * (size_t)clean->maxchars + 2; /* and "\r\n" */
    s->line = fj__alloc(clean->a, s->cap);
    if (!s->line) {
        fj__free(clean->a, s, sizeof *s);
        return FJ_ERR_NOMEM;
    }
    s->line_no = 1;
    *out = s;
    return FJ_OK;
}

static void put(fj_clean_stream *s, const char *data, size_t n)
{
    if (n && s->failed == FJ_OK && s->write(s->write_ctx, data, n) != 0)
        s->failed = FJ_ERR_CALLBACK;
}

/* Tells the report callback of a dropped line. */
static void report(fj_clean_stream *s, const char *line, size_t n)
{
    if (n && line[n - 1] == '\n')
        n--;
    if (n && line[n - 1] == '\r')
        n--;
    if (s->report && s->failed == FJ_OK && s->report(s->report_ctx, s->line_no, line, n) != 0)
        s->failed = FJ_ERR_CALLBACK;
}

/* The buffered line is complete: keep or drop it. */
static void judge(fj_clean_stream *s)
{
    if (fj_clean_line(s->clean, s->line, s->len, NULL))
        report(s, s->line, s->len);
    else
        put(s, s->line, s->len);
    s->len = 0;
}

fj_status fj_clean_stream_feed(fj_clean_stream *s, const char *data, size_t len)
{
    if (!s || (!data && len))
        return FJ_ERR_INVALID_ARGUMENT;
    if (s->finished)
        return FJ_ERR_STREAM_STATE;
    /* Kept bytes of `data` not written yet are [run, data): consecutive kept
     * lines go out in one write. */
    const char *run = data;
    while (len > 0 && s->failed == FJ_OK) {
        const char *nl = memchr(data, '\n', len);
        size_t take = nl ? (size_t)(nl - data) + 1 : len;
        if (s->passing) {
            /* more of a line too long to be boilerplate: kept */
        } else if (s->len == 0 && nl && take <= s->cap) {
            /* a whole line in this piece */
            if (fj_clean_line(s->clean, data, take, NULL)) {
                put(s, run, (size_t)(data - run)); /* the kept lines before it first */
                run = data + take;
                report(s, data, take);
            }
        } else if (s->len + take > s->cap) {
            /* Longer than any line that can be boilerplate: pass it through. */
            put(s, s->line, s->len); /* from an earlier piece, so run is empty */
            s->len = 0;
            s->passing = 1;
        } else {
            put(s, run, (size_t)(data - run));
            run = data + take;
            memcpy(s->line + s->len, data, take);
            s->len += take;
            if (nl)
                judge(s);
        }
        if (nl) {
            s->passing = 0;
            s->line_no++;
        }
        data += take;
        len -= take;
    }
    if (s->failed == FJ_OK)
        put(s, run, (size_t)(data - run));
    return s->failed;
}

fj_status fj_clean_stream_finish(fj_clean_stream *s)
{
    if (!s)
        return FJ_ERR_INVALID_ARGUMENT;
    if (s->finished)
        return FJ_ERR_STREAM_STATE;
    s->finished = 1;
    if (s->failed == FJ_OK && s->len > 0)
        judge(s);
    return s->failed;
}

void fj_clean_stream_free(fj_clean_stream *s)
{
    if (!s)
        return;
    const fj_allocator *a = s->clean->a;
    fj__free(a, s->line, s->cap);
    fj__free(a, s, sizeof *s);
}
