/* Boilerplate removal: the site notices in a scraped chapter.
 *
 * A rules text (data/clean-rules.txt, compiled in; the format is described
 * there) gives weighted phrases, markers and the top-level domains that
 * make a dotted name a web address. A line is split into units: sentences,
 * and bracketed groups. Each unit is folded (to Simplified through
 * TSCharacters, full-width to ASCII, ASCII to lower case) and scored; a
 * unit that reaches the threshold or is a marker is a notice. Of a notice
 * sentence only its notice clauses go, with the punctuation that joined
 * them; a line is dropped whole only when nothing but punctuation is left.
 * Every other byte is kept. When a boundary is in doubt, the text stays. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "charclass.h"
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
#define REPLACEMENT_CHARACTER 0xFFFDu /* what a byte that is not UTF-8 reads as */

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

/* ---- characters (their classes: data/char-classes.txt) ------------------- */

static int is_space(uint32_t cp) { return fj__char_is(cp, FJ_CC_CLEAN_SPACE); }

/* Punctuation, brackets and symbols: what a marker line may wrap its text in. */
static int is_mark(uint32_t cp) { return fj__char_is(cp, FJ_CC_MARK); }

static uint32_t fold(const fj_clean *c, uint32_t cp)
{
    if (cp >= 'A' && cp <= 'Z')
        return cp + 32;
    if (cp < 0x80)
        return cp;
    uint32_t narrow = fj__char_map(FJ_MAP_FOLD_WIDTH, cp); /* full-width ASCII, U+3000 */
    if (narrow)
        return narrow >= 'A' && narrow <= 'Z' ? narrow + 32 : narrow;
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

/* Where a match of p[0..plen) at t[i] ends (an index past i), or 0 when
 * there is none (to the end when `whole`). */
static size_t match_at(const uint32_t *p, size_t plen, const uint32_t *t, size_t n, size_t i,
                       int whole)
{
    while (plen > 0 && p[0] != GAP) {
        if (i >= n || t[i] != p[0])
            return 0;
        p++, plen--, i++;
    }
    if (plen == 0)
        return !whole || i == n ? i : 0;
    for (size_t k = 0; k <= MAX_GAP && i + k <= n; k++) {
        size_t e = match_at(p + 1, plen - 1, t, n, i + k, whole);
        if (e)
            return e;
    }
    return 0;
}

/* ---- one unit: a sentence or a bracketed group -------------------------- */

/* Per character of a unit. */
enum {
    F_SPACE = 1,   /* white space */
    F_MARK = 2,    /* punctuation or a symbol */
    F_HIT = 4,     /* in a phrase of positive weight or a web address */
    F_STRONG = 8,  /* in a phrase of weight 2 or more or a web address */
    F_URL = 16,    /* in a web address */
    F_NEG = 32,    /* in a phrase of negative weight: not notice vocabulary */
    F_BRACKET = 64 /* in a bracketed group that is a notice by itself */
};

/* A decoded unit: folded characters, their byte offsets from the unit's
 * start, and their flags. */
typedef struct unit_buf {
    uint32_t cp[MAXCHARS_LIMIT];
    uint16_t off[MAXCHARS_LIMIT + 1];
    unsigned char flag[MAXCHARS_LIMIT];
    size_t n;
} unit_buf;

/* What scoring a unit needs besides the unit: about 6.5 KB. */
typedef struct score_scratch {
    uint32_t ph[MAXCHARS_LIMIT]; /* the unit without spaces */
    uint16_t at[MAXCHARS_LIMIT]; /* where each ph[] character is in the unit */
    unsigned char counted[MAX_RULES / 8];
} score_scratch;

typedef struct unit_score {
    int score;
    int marker;
    int best;               /* the largest weight that matched (a web address: 4) */
    size_t content, covered; /* characters neither space nor mark; of them, in hits */
} unit_score;

static int is_label(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* '.', 。, ｡, 点, 點 (full-width ． is '.' once folded). */
static int is_dot(uint32_t c) { return fj__char_is(c, FJ_CC_ADDRESS_DOT); }

/* 点, 點: spaces may stand around them. */
static int is_word_dot(uint32_t c) { return fj__char_is(c, FJ_CC_WORD_DOT); }

/* What may follow a host name in an address: a path, a query. */
static int is_path_char(uint32_t c)
{
    return is_label(c) || c == '.' || c == '/' || c == '_' || c == '~' || c == '%' || c == '?' ||
           c == '#' || c == '=' || c == '&' || c == '+';
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

/* Marks the web addresses of the folded t[0..n); returns whether there is one.
 * A spelled-out dot (点) may have spaces around it: "example 点 com". */
static int mark_urls(const fj_clean *c, const uint32_t *t, size_t n, unsigned char *flag)
{
    int any = 0;
    for (size_t i = 0; i < n;) {
        if (!is_label(t[i]) || (i > 0 && is_label(t[i - 1]))) {
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
            size_t k = j;
            while (k < n && t[k] == ' ' && k + 1 < n && (t[k + 1] == ' ' || is_word_dot(t[k + 1])))
                k++;
            if (k < n && is_dot(t[k]) && (k == j || is_word_dot(t[k]))) {
                size_t m = k + 1;
                if (is_word_dot(t[k]))
                    while (m < n && t[m] == ' ')
                        m++;
                if (m < n && is_label(t[m])) {
                    letter_before_last |= letter_in_label;
                    j = m;
                    continue;
                }
            }
            break;
        }
        size_t end = 0;
        if ((label_is(t, i, first_end, "http", 4) || label_is(t, i, first_end, "https", 5)) &&
            first_end + 3 <= n && t[first_end] == ':' && t[first_end + 1] == '/' &&
            t[first_end + 2] == '/')
            end = first_end + 3;
        else if (labels >= 2) {
            if (label_is(t, i, first_end, "www", 3) || label_is(t, i, first_end, "wap", 3))
                end = j;
            else if (letter_before_last)
                for (size_t k = 0; k < c->tld_count && !end; k++)
                    if (label_is(t, last_start, j, c->tlds[k].name, c->tlds[k].len))
                        end = j;
        }
        if (!end) {
            i = j > i ? j : i + 1;
            continue;
        }
        if (end == j && end + 1 < n && t[end] == ':' && t[end + 1] >= '0' && t[end + 1] <= '9')
            for (end++; end < n && t[end] >= '0' && t[end] <= '9';) /* a port */
                end++;
        if (end < n && (t[end] == '/' || end == first_end + 3))
            while (end < n && is_path_char(t[end]))
                end++;
        while (end > i + 1 && (t[end - 1] == '.' || t[end - 1] == '?')) /* ends a sentence */
            end--;
        for (size_t k = i; k < end; k++)
            flag[k] |= F_URL | F_HIT | F_STRONG;
        any = 1;
        i = end;
    }
    return any;
}

/* Scores the folded unit cp[0..n) and marks its hits in flag[] (whose
 * F_SPACE and F_MARK are set): each rule counts once, a web address once. */
static void score_unit(const fj_clean *c, const uint32_t *cp, size_t n, unsigned char *flag,
                       score_scratch *sc, unit_score *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++)
        flag[i] &= F_SPACE | F_MARK | F_BRACKET;
    if (mark_urls(c, cp, n, flag)) {
        out->score = c->url_weight;
        out->best = 4;
    }
    size_t np = 0;
    for (size_t i = 0; i < n; i++)
        if (!(flag[i] & F_SPACE)) {
            sc->ph[np] = cp[i];
            sc->at[np++] = (uint16_t)i;
        }
    memset(sc->counted, 0, (c->rule_count + 7) / 8);
    for (size_t i = 0; i < np; i++) {
        uint32_t first = sc->ph[i];
        if (first < 0x10000 && !(c->starts[first >> 3] >> (first & 7) & 1))
            continue;
        /* the phrase alternatives that start with this character */
        size_t lo = 0, hi = c->index_count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (c->pool[c->alts[c->index[mid]].off] < first)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < c->index_count; lo++) {
            const alt_rec *a = &c->alts[c->index[lo]];
            if (c->pool[a->off] != first)
                break;
            size_t e = match_at(c->pool + a->off, a->len, sc->ph, np, i, 0);
            if (!e)
                continue;
            int w = c->rules[a->rule].weight;
            unsigned char bits = w < 0 ? F_NEG : w >= 2 ? F_HIT | F_STRONG : w > 0 ? F_HIT : 0;
            for (size_t k = sc->at[i]; k <= sc->at[e - 1]; k++)
                flag[k] |= bits;
            if (!(sc->counted[a->rule >> 3] >> (a->rule & 7) & 1)) {
                sc->counted[a->rule >> 3] |= (unsigned char)(1u << (a->rule & 7));
                out->score += w;
                if (w > out->best)
                    out->best = w;
            }
        }
    }
    /* A marker: the unit is exactly one, once spaces and marks are removed. */
    size_t nm = 0;
    for (size_t i = 0; i < np; i++)
        if (!(flag[sc->at[i]] & F_MARK))
            sc->ph[nm++] = sc->ph[i];
    for (size_t k = 0; nm > 0 && k < c->marker_count && !out->marker; k++) {
        const alt_rec *a = &c->alts[c->markers[k]];
        out->marker = match_at(c->pool + a->off, a->len, sc->ph, nm, 0, 1) != 0;
    }
    if (out->marker) {
        if (out->score < c->threshold)
            out->score = c->threshold;
        if (out->best < 4)
            out->best = 4;
    }
    for (size_t i = 0; i < n; i++) {
        if (flag[i] & F_NEG && !(flag[i] & F_URL))
            flag[i] &= (unsigned char)~(F_HIT | F_STRONG);
        if (!(flag[i] & (F_SPACE | F_MARK))) {
            out->content++;
            if (out->marker || flag[i] & (F_HIT | F_BRACKET))
                out->covered++;
        }
    }
}

/* At least 60 % of the characters that are not space or marks are in hits. */
static int mostly(size_t covered, size_t content)
{
    return content > 0 && covered * 5 >= content * 3;
}

/* ---- characters of the raw text ------------------------------------------ */

static size_t decode_at(const char *text, size_t len, size_t i, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)text + i;
    int k = fj_utf8_decode(p, (const unsigned char *)text + len, cp);
    if (k <= 0) {
        *cp = REPLACEMENT_CHARACTER;
        k = 1;
    }
    return (size_t)k;
}

/* The bytes of the white-space character that ends at text[i] and goes
 * with a removal after it, or 0. */
static size_t space_before(const char *text, size_t i)
{
    const unsigned char *p = (const unsigned char *)text;
    for (size_t k = 1; k <= 4 && k <= i; k++) {
        uint32_t cp;
        if (fj_utf8_decode(p + i - k, p + i, &cp) == (int)k)
            return fj__char_is(cp, FJ_CC_SPACE_BEFORE_REMOVAL) ? k : 0;
    }
    return 0;
}

static size_t skip_space(const char *text, size_t len, size_t i)
{
    while (i < len) {
        uint32_t cp;
        size_t k = decode_at(text, len, i, &cp);
        if (!is_space(cp))
            break;
        i += k;
    }
    return i;
}

/* Ends a sentence: 。！？!?；… (and ｡); '.' is handled apart. */
static int is_end_mark(uint32_t cp) { return fj__char_is(cp, FJ_CC_SENTENCE_END); }

/* Closing quotes and brackets that belong to the sentence they follow. */
static int is_closer(uint32_t cp) { return fj__char_is(cp, FJ_CC_CLOSER); }

/* A full stop that ends a sentence only where a word cannot go on: '.', ．. */
static int is_full_stop(uint32_t cp) { return fj__char_is(cp, FJ_CC_FULL_STOP); }

/* Bracket pairs: what closes the group cp opens, or 0. The group kinds
 * hold text that belongs together (a sentence does not end inside them);
 * the quotes 「」『』 are dialogue. */
static uint32_t group_closer(uint32_t cp) { return fj__char_map(FJ_MAP_BRACKET_GROUP, cp); }

static uint32_t bracket_closer(uint32_t cp)
{
    uint32_t closer = group_closer(cp);
    return closer ? closer : fj__char_map(FJ_MAP_BRACKET_QUOTE, cp);
}

/* Where the group opened at text[i] (by `opener`, closed by `closer`)
 * closes, past the closer, within `limit` bytes and maxchars characters; 0
 * when it does not. */
static size_t group_end(const fj_clean *c, const char *text, size_t limit, size_t i,
                        uint32_t opener, uint32_t closer)
{
    uint32_t cp;
    size_t depth = 0, chars = 0;
    while (i < limit && chars <= c->maxchars) {
        i += decode_at(text, limit, i, &cp);
        chars++;
        if (cp == opener)
            depth++;
        else if (cp == closer && --depth == 0)
            return i;
    }
    return 0;
}

/* ---- finding the spans ----------------------------------------------------- */

typedef struct sentence {
    size_t a, b, next; /* [a, b): the sentence; [b, next): white space after it */
    int too_long;      /* more than maxchars characters: never boilerplate */
    int cand;          /* reaches the threshold, or is a marker */
    int run;           /* mostly notice phrases */
    int empty;         /* only white space and marks */
    unit_score us;
} sentence;

#define MAX_CHAIN 64 /* sentences looked ahead in one run of notices */

typedef struct finder {
    const fj_clean *c;
    const char *text;
    size_t len;
    int more;        /* a piece of a longer line: the line goes on after len */
    int after_start; /* ... or the line began before text */
    int continues;   /* the piece starts inside a sentence */
    size_t first_a;  /* where the first sentence starts */
    int best_unit;   /* the highest score of a unit */
    fj_clean_span *spans;
    size_t cap, count;
    fj_clean_span pending;
    int has_pending;
    size_t kept_to; /* bytes before this have been checked for story */
    int kept_content;
    int best_score;
    unit_buf u, g; /* a sentence, a bracketed group */
    score_scratch sc;
} finder;

static int has_content(const char *text, size_t from, size_t to)
{
    while (from < to) {
        uint32_t cp;
        from += decode_at(text, to, from, &cp);
        if (!is_space(cp) && !is_mark(cp))
            return 1;
    }
    return 0;
}

static void flush(finder *f)
{
    if (!f->has_pending)
        return;
    f->kept_content |= has_content(f->text, f->kept_to, f->pending.start);
    if (f->count < f->cap)
        f->spans[f->count] = f->pending;
    f->count++;
    f->kept_to = f->pending.end;
    f->has_pending = 0;
}

/* Adds the removal of [s, e) with the white space that joined it. */
static void add_span(finder *f, size_t s, size_t e, int score)
{
    if (s >= e)
        return;
    size_t after = skip_space(f->text, f->len, e);
    if (after == f->len && !f->more) { /* at the line's end: the space before it too */
        e = after;
        size_t k;
        while ((k = space_before(f->text, s)) > 0)
            s -= k;
    } else if (after > e && ((s == 0 && !f->after_start) || space_before(f->text, s) > 0)) {
        e = after; /* between spaces: one side goes */
    }
    if (score > f->best_score)
        f->best_score = score;
    if (f->has_pending && (s <= f->pending.end || skip_space(f->text, s, f->pending.end) == s)) {
        if (e > f->pending.end)
            f->pending.end = e;
        if (score > f->pending.score)
            f->pending.score = score;
        return;
    }
    flush(f);
    f->pending = (fj_clean_span){s, e, score};
    f->has_pending = 1;
}

/* Decodes text[a, b) into u; 0 when it has more than maxchars characters. */
static int decode_unit(const finder *f, size_t a, size_t b, unit_buf *u)
{
    u->n = 0;
    for (size_t i = a; i < b;) {
        if (u->n == f->c->maxchars)
            return 0;
        uint32_t cp;
        size_t k = decode_at(f->text, b, i, &cp);
        cp = fold(f->c, cp);
        u->off[u->n] = (uint16_t)(i - a);
        u->cp[u->n] = cp;
        u->flag[u->n] = is_space(cp) ? F_SPACE : is_mark(cp) ? F_MARK : 0;
        u->n++;
        i += k;
    }
    u->off[u->n] = (uint16_t)(b - a);
    return 1;
}

/* The next bracketed group in [*pos, b) that is a notice by itself. */
static int next_group(finder *f, size_t *pos, size_t b, size_t *ga, size_t *gb, int *score)
{
    const fj_clean *c = f->c;
    while (*pos < b) {
        uint32_t cp;
        size_t at = *pos;
        *pos += decode_at(f->text, b, at, &cp);
        uint32_t closer = bracket_closer(cp);
        if (!closer)
            continue;
        size_t end = group_end(c, f->text, b, at, cp, closer);
        if (!end || !decode_unit(f, at, end, &f->g))
            continue;
        unit_score us;
        score_unit(c, f->g.cp, f->g.n, f->g.flag, &f->sc, &us);
        /* Reaches the threshold, or is mostly notice phrases with a strong
         * one and half the threshold: （本书首发于某某网） but not (本站). */
        if (us.score >= c->threshold ||
            (mostly(us.covered, us.content) && us.best >= 4 &&
             us.score > c->url_weight - 1 && 2 * us.score > c->threshold)) {
            *ga = at;
            *gb = end;
            *score = us.score;
            *pos = end;
            return 1;
        }
    }
    return 0;
}

/* The sentence that starts at `a` (not white space). */
static void next_sentence(finder *f, size_t a, sentence *s)
{
    const fj_clean *c = f->c;
    const char *t = f->text;
    size_t len = f->len, i = a, chars = 0;
    uint32_t prev = 0, cp;
    memset(s, 0, sizeof *s);
    s->a = a;
    s->b = len;
    while (i < len) {
        size_t k = decode_at(t, len, i, &cp);
        uint32_t closer = group_closer(cp);
        if (closer) {
            size_t end = group_end(c, t, len, i, cp, closer);
            if (end) {
                for (size_t j = i; j < end; chars++)
                    j += decode_at(t, end, j, &cp);
                i = end;
                prev = cp;
                continue;
            }
        }
        i += k;
        chars++;
        uint32_t next = 0;
        if (i < len)
            decode_at(t, len, i, &next);
        uint32_t fp = fold(c, prev), fn = fold(c, next);
        int ends = 0;
        if (is_full_stop(cp))
            ends = i == len || is_space(next) || is_end_mark(next) || is_closer(next);
        else if (is_end_mark(cp))
            ends = !(fj__char_is(cp, FJ_CC_ADDRESS_STOP) && is_label(fp) && is_label(fn));
        prev = cp;
        if (!ends)
            continue;
        while (i < len) {
            k = decode_at(t, len, i, &cp);
            if (!is_end_mark(cp) && !is_closer(cp) && !is_full_stop(cp))
                break;
            i += k;
            chars++;
        }
        s->b = i;
        break;
    }
    s->next = skip_space(t, len, s->b);
    s->too_long = chars > c->maxchars || (a == f->first_a && f->continues);
}

/* Decodes and scores sentence s into f->u (unless it is too long). */
static void analyse(finder *f, sentence *s)
{
    if (s->too_long || !decode_unit(f, s->a, s->b, &f->u)) {
        s->too_long = 1;
        return;
    }
    unit_buf *u = &f->u;
    /* The bracketed notices in it first (they use f->g). */
    size_t pos = s->a, ga, gb, i = 0;
    int gs;
    unsigned char brk[MAXCHARS_LIMIT / 8 + 1];
    memset(brk, 0, sizeof brk);
    while (next_group(f, &pos, s->b, &ga, &gb, &gs))
        for (; i < u->n && u->off[i] < gb - s->a; i++)
            if (u->off[i] >= ga - s->a)
                brk[i >> 3] |= (unsigned char)(1u << (i & 7));
    for (i = 0; i < u->n; i++)
        u->flag[i] &= F_SPACE | F_MARK;
    for (i = 0; i < u->n; i++)
        if (brk[i >> 3] >> (i & 7) & 1)
            u->flag[i] |= F_BRACKET;
    score_unit(f->c, u->cp, u->n, u->flag, &f->sc, &s->us);
    for (i = 0; i < u->n; i++)
        if (brk[i >> 3] >> (i & 7) & 1)
            u->flag[i] |= F_BRACKET;
    if (s->us.score > f->best_unit)
        f->best_unit = s->us.score;
    s->cand = s->us.score >= f->c->threshold || s->us.marker;
    s->empty = s->us.content == 0;
    /* weak words alone (小说, 阅读, 收藏) do not make a run of notices */
    s->run = s->us.best >= 2 && mostly(s->us.covered, s->us.content);
}

static void add_groups(finder *f, const sentence *s)
{
    size_t pos = s->a, ga, gb;
    int gs;
    while (next_group(f, &pos, s->b, &ga, &gb, &gs))
        add_span(f, ga, gb, gs);
}

static int is_clause_sep(const unit_buf *u, size_t i)
{
    uint32_t cp = u->cp[i];
    if (u->flag[i] & F_URL)
        return 0;
    return (u->flag[i] & (F_SPACE | F_BRACKET)) || fj__char_is(cp, FJ_CC_CLAUSE_SEPARATOR);
}

/* Whether the closing mark at cp closes a bracket or quote opened in
 * u[0..end) and not closed there. */
static int closes_kept(const unit_buf *u, size_t end, uint32_t closer)
{
    long depth = 0;
    for (size_t i = 0; i < end; i++) {
        uint32_t cp = u->cp[i];
        if (closer == '"' || closer == '\'')
            depth ^= cp == closer;
        else if (bracket_closer(cp) == closer || fj__char_map(FJ_MAP_QUOTE_PAIR, cp) == closer)
            depth++;
        else if (cp == closer && depth > 0)
            depth--;
    }
    return depth > 0;
}

/* The spans of a sentence in a run of notices (analysed into f->u): the
 * clauses from the first to the last that holds a notice (or is mostly
 * notice phrases), with the punctuation that joined them; its bracketed
 * notices. */
static void add_sentence(finder *f, const sentence *s)
{
    unit_buf *u = &f->u;
    size_t n = u->n;
    /* clauses: runs of characters between separators */
    size_t first_start = 0, first_prev_end = 0, next_start = n;
    int found = s->us.marker, story_before = 0, story_after = 0;
    /* A notice of weak phrases only (rules whose weights are all 1) is
     * bounded by them instead. */
    for (int weak = 0; weak < 2 && !found && (weak == 0 || s->cand); weak++) {
        size_t prev_end = 0, empties_start = 0;
        int in_empties = 0;
        story_before = story_after = 0;
        next_start = n;
        for (size_t i = 0; i < n;) {
            if (is_clause_sep(u, i)) {
                i++;
                continue;
            }
            size_t cs = i, content = 0, covered = 0;
            int strong = 0;
            /* a web address is a clause of its own: what is glued to it may be story */
        for (; i < n && !is_clause_sep(u, i) &&
               (i == cs || (u->flag[i] & F_URL) == (u->flag[i - 1] & F_URL));
             i++) {
                strong |= (u->flag[i] & (weak ? F_HIT : F_STRONG)) != 0;
                if (!(u->flag[i] & (F_SPACE | F_MARK))) {
                    content++;
                    covered += (u->flag[i] & F_HIT) != 0;
                }
            }
            if (content == 0) {
                if (!in_empties) {
                    empties_start = cs;
                    in_empties = 1;
                }
                continue;
            }
            /* a clause of weak words only (阅读) goes when it is nothing else */
            if (strong || covered == content || (weak && mostly(covered, content))) {
                if (!found) {
                    first_start = in_empties ? empties_start : cs;
                    first_prev_end = prev_end;
                    story_before = prev_end > 0;
                    found = 1;
                }
                story_after = 0;
                next_start = n;
            } else if (found && !story_after) {
                story_after = 1;
                next_start = cs;
            }
            in_empties = 0;
            prev_end = i;
        }
    }
    size_t from = 0, to = 0;
    if (found) {
        if (!story_before && !story_after) {
            from = 0, to = n;
        } else if (!story_before) {
            from = 0, to = next_start;
        } else if (!story_after) {
            /* The sentence's end mark stays with the story before. */
            from = first_prev_end;
            to = n;
            while (to > from && !(u->flag[to - 1] & F_BRACKET)) {
                uint32_t cp = u->cp[to - 1];
                if (!(u->flag[to - 1] & F_SPACE) && !is_end_mark(cp) && cp != '.' && cp != ';' &&
                    !(is_closer(cp) && closes_kept(u, from, cp)))
                    break;
                to--;
            }
        } else {
            from = first_start, to = next_start;
        }
    }
    /* The removed characters: [from, to) and the bracketed notices. */
    for (size_t i = 0; i < n;) {
        int del = (i >= from && i < to) || (u->flag[i] & F_BRACKET);
        if (!del) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && ((j >= from && j < to) || (u->flag[j] & F_BRACKET)))
            j++;
        add_span(f, s->a + u->off[i], s->a + u->off[j], s->us.score);
        i = j;
    }
}

static size_t find_spans(finder *f, int *whole)
{
    const fj_clean *c = f->c;
    size_t pos = f->first_a = skip_space(f->text, f->len, 0);
    while (pos < f->len) {
        sentence s, t;
        next_sentence(f, pos, &s);
        analyse(f, &s);
        if (!(s.cand || s.run)) {
            add_groups(f, &s);
            pos = s.next;
            continue;
        }
        /* A run of sentences that are notices or mostly notice phrases
         * (marks between them allowed): it goes when one of them is a
         * notice or together they reach the threshold. */
        long sum = s.us.score;
        int any_cand = s.cand;
        size_t last = s.a, q = s.next;
        for (int k = 1; q < f->len && k < MAX_CHAIN; k++) {
            next_sentence(f, q, &t);
            analyse(f, &t);
            if (t.cand || t.run) {
                sum += t.us.score;
                any_cand |= t.cand;
                last = t.a;
            } else if (!t.empty) {
                break;
            }
            q = t.next;
        }
        int go = any_cand || sum >= c->threshold;
        for (size_t p = s.a; p <= last && p < f->len;) {
            next_sentence(f, p, &t);
            analyse(f, &t);
            if (go && (t.cand || t.run))
                add_sentence(f, &t);
            else if (go && t.empty)
                add_span(f, t.a, t.b, 0);
            else
                add_groups(f, &t);
            p = t.next;
        }
        next_sentence(f, last, &t);
        pos = t.next;
    }
    flush(f);
    f->kept_content |= has_content(f->text, f->kept_to, f->len);
    int is_whole = f->count > 0 && !f->kept_content && !f->more && !f->after_start;
    if (whole)
        *whole = is_whole;
    if (is_whole) {
        if (f->cap > 0)
            f->spans[0] = (fj_clean_span){0, f->len, f->best_score};
        f->count = 1;
    }
    return f->count;
}

static size_t strip_eol(const char *text, size_t len)
{
    if (len && text[len - 1] == '\n')
        len--;
    if (len && text[len - 1] == '\r')
        len--;
    return len;
}

/* fj_clean_find on one piece of a line; `more`: the line goes on after it,
 * `continues`: it starts inside a sentence. */
static size_t find_in(const fj_clean *c, const char *text, size_t len, int more, int after_start,
                      int continues, fj_clean_span *spans, size_t cap, int *whole, int *best)
{
    finder f;
    f.c = c;
    f.text = text;
    f.len = len;
    f.more = more;
    f.after_start = after_start;
    f.continues = continues;
    f.first_a = 0;
    f.best_unit = 0;
    f.spans = spans;
    f.cap = spans ? cap : 0;
    f.count = 0;
    f.has_pending = 0;
    f.kept_to = 0;
    f.kept_content = 0;
    f.best_score = 0;
    size_t n = find_spans(&f, whole);
    if (best)
        *best = f.best_score > f.best_unit ? f.best_score : f.best_unit;
    return n;
}

size_t fj_clean_find(const fj_clean *clean, const char *text, size_t len, fj_clean_span *spans,
                     size_t cap, int *whole)
{
    if (whole)
        *whole = 0;
    if (!clean || (!text && len))
        return 0;
    return find_in(clean, text, strip_eol(text, len), 0, 0, 0, spans, cap, whole, NULL);
}

int fj_clean_line(const fj_clean *c, const char *line, size_t len, int *score_out)
{
    if (score_out)
        *score_out = 0;
    if (!c || (!line && len))
        return 0;
    int whole = 0;
    find_in(c, line, strip_eol(line, len), 0, 0, 0, NULL, 0, &whole, score_out);
    return whole;
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
    fj_status checked = fj__dict_use_sources(dict, NULL);
    if (checked != FJ_OK)
        return checked;
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

/* The most bytes of one line held back. A longer line is judged in pieces
 * of at most this size, each ending at a sentence end where the piece has
 * one (else at a character boundary; the sentence cut then counts as too
 * long). A notice that straddles a cut may be left partly in; no line of
 * more than this is dropped whole. */
#define STREAM_LINE_MAX 65536u

struct fj_clean_stream {
    const fj_clean *clean;
    fj_write_fn write;
    void *write_ctx;
    fj_clean_report_fn report;
    void *report_ctx;
    char *line;                 /* the current line, or the rest of a long one */
    size_t len;
    fj_clean_span *spans;
    size_t span_cap;
    int after_start;            /* the current line began in an earlier piece */
    int continues;              /* ... and the buffered text starts inside a sentence */
    unsigned long long column;  /* characters of the line in earlier pieces */
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
    s->line = fj__alloc(clean->a, STREAM_LINE_MAX);
    s->span_cap = 64;
    s->spans = fj__alloc(clean->a, s->span_cap * sizeof *s->spans);
    if (!s->line || !s->spans) {
        fj__free(clean->a, s->line, STREAM_LINE_MAX);
        fj__free(clean->a, s->spans, s->span_cap * sizeof *s->spans);
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

static unsigned long long count_chars(const char *text, size_t from, size_t to)
{
    unsigned long long n = 0;
    uint32_t cp;
    while (from < to) {
        from += decode_at(text, to, from, &cp);
        n++;
    }
    return n;
}

static void tell(fj_clean_stream *s, unsigned long long column, const char *text, size_t len,
                 int whole)
{
    fj_clean_removal r = {s->line_no, column + 1, text, len, whole};
    if (s->report && s->failed == FJ_OK && s->report(s->report_ctx, &r) != 0)
        s->failed = FJ_ERR_CALLBACK;
}

/* Judges text[0, len): a whole line (with its ending), or when `more` a
 * piece of one that goes on. */
static void judge(fj_clean_stream *s, const char *text, size_t len, int more)
{
    const fj_clean *c = s->clean;
    size_t content = more ? len : strip_eol(text, len);
    int whole = 0;
    size_t n = find_in(c, text, content, more, s->after_start, s->continues, s->spans, s->span_cap,
                &whole, NULL);
    if (n > s->span_cap) {
        size_t cap = s->span_cap;
        while (cap < n)
            cap *= 2;
        fj_clean_span *p = fj__realloc(c->a, s->spans, s->span_cap * sizeof *p, cap * sizeof *p);
        if (!p) {
            s->failed = FJ_ERR_NOMEM;
            return;
        }
        s->spans = p;
        s->span_cap = cap;
        n = find_in(c, text, content, more, s->after_start, s->continues, s->spans, s->span_cap,
                &whole, NULL);
    }
    if (whole) {
        tell(s, 0, text, content, 1);
        return;
    }
    size_t pos = 0;
    unsigned long long column = s->column;
    for (size_t i = 0; i < n && s->failed == FJ_OK; i++) {
        put(s, text + pos, s->spans[i].start - pos);
        column += count_chars(text, pos, s->spans[i].start);
        tell(s, column, text + s->spans[i].start, s->spans[i].end - s->spans[i].start, 0);
        column += count_chars(text, s->spans[i].start, s->spans[i].end);
        pos = s->spans[i].end;
    }
    put(s, text + pos, len - pos);
    s->column = column + count_chars(text, pos, len);
}

/* The buffer is full and holds no line end: judges a first piece of it. */
static void judge_piece(fj_clean_stream *s)
{
    /* the last sentence end: walk the sentences (only the finder's head is used) */
    size_t cut = 0;
    {
        finder fd;
        memset(&fd, 0, offsetof(finder, u));
        fd.c = s->clean;
        fd.text = s->line;
        fd.len = s->len;
        fd.more = 1;
        size_t pos = skip_space(s->line, s->len, 0);
        while (pos < s->len) {
            sentence t;
            next_sentence(&fd, pos, &t);
            if (t.b == s->len)
                break;
            cut = t.next;
            pos = t.next;
        }
    }
    int inside = 0;
    if (cut == 0 || cut == s->len) {
        cut = s->len;
        while (cut > 0 && ((unsigned char)s->line[cut - 1] & 0xC0) == 0x80 && s->len - cut < 3)
            cut--;
        if (cut > 0 && (unsigned char)s->line[cut - 1] >= 0xC0)
            cut--;
        if (cut == 0)
            cut = s->len;
        inside = 1;
    }
    judge(s, s->line, cut, 1);
    memmove(s->line, s->line + cut, s->len - cut);
    s->len -= cut;
    s->after_start = 1;
    s->continues = inside;
}

static void end_line(fj_clean_stream *s)
{
    s->len = 0;
    s->after_start = 0;
    s->continues = 0;
    s->column = 0;
    s->line_no++;
}

fj_status fj_clean_stream_feed(fj_clean_stream *s, const char *data, size_t len)
{
    if (!s || (!data && len))
        return FJ_ERR_INVALID_ARGUMENT;
    if (s->finished)
        return FJ_ERR_STREAM_STATE;
    while (len > 0 && s->failed == FJ_OK) {
        const char *nl = memchr(data, '\n', len);
        size_t take = nl ? (size_t)(nl - data) + 1 : len;
        if (s->len == 0 && !s->after_start && nl && take <= STREAM_LINE_MAX) {
            judge(s, data, take, 0); /* a whole line in this piece */
            end_line(s);
        } else {
            size_t room = STREAM_LINE_MAX - s->len;
            if (take > room)
                take = room;
            memcpy(s->line + s->len, data, take);
            s->len += take;
            if (s->line[s->len - 1] == '\n') {
                judge(s, s->line, s->len, 0);
                end_line(s);
            } else if (s->len == STREAM_LINE_MAX) {
                judge_piece(s);
            }
        }
        data += take;
        len -= take;
    }
    return s->failed;
}

fj_status fj_clean_stream_finish(fj_clean_stream *s)
{
    if (!s)
        return FJ_ERR_INVALID_ARGUMENT;
    if (s->finished)
        return FJ_ERR_STREAM_STATE;
    s->finished = 1;
    if (s->failed == FJ_OK && (s->len > 0))
        judge(s, s->line, s->len, 0);
    return s->failed;
}

void fj_clean_stream_free(fj_clean_stream *s)
{
    if (!s)
        return;
    const fj_allocator *a = s->clean->a;
    fj__free(a, s->line, STREAM_LINE_MAX);
    fj__free(a, s->spans, s->span_cap * sizeof *s->spans);
    fj__free(a, s, sizeof *s);
}
