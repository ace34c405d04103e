/* Script detection: is a text Simplified, Traditional, valid in both, or a
 * mix, and where is the minority script?
 *
 * Which characters are specific to a script comes from the OpenCC source
 * tables the image keeps (for `fjdict --decompile`):
 *   - simplified-only: an STCharacters key that is not among its own values
 *     (发 -> 發 髮), and not a form that TWVariants or HKVariants writes (群 and
 *     温 are standard Traditional in Taiwan and Hong Kong);
 *   - traditional-only: a TSCharacters key that is not among its own values
 *     (發 -> 发), and not an STCharacters key that maps to itself; plus a few
 *     old and variant Traditional forms the tables leave out (our list:
 *     extra-traditional in data/char-classes.txt).
 * A character that comes out as both (a handful of variant pairs) counts as
 * neither. The tables are built per call (see fj_detect in fanjian.h). */
#include <stdlib.h>
#include <string.h>

#include "charclass.h"
#include "internal.h"
#include "utf8.h"

#define REPLACEMENT_CHARACTER 0xFFFDu /* what a byte that is not UTF-8 reads as */

enum { CLS_NEITHER = 0, CLS_SIMP = 1, CLS_TRAD = 2, CLS_ST_SELF = 3 };

/* Two bits per BMP code point. Astral characters: STCharacters' keys
 * (cp << 2 | class) and then the Traditional-only ones from TSCharacters
 * (cp << 2 | CLS_TRAD), each part sorted. One allocation. */
typedef struct script_table {
    unsigned char bmp[0x10000 / 4];
    size_t st_count, ts_count, astral_cap;
    uint32_t astral[]; /* astral_cap entries: st_count, then ts_count */
} script_table;

static unsigned bmp_get(const script_table *t, uint32_t cp)
{
    return (t->bmp[cp >> 2] >> ((cp & 3) * 2)) & 3u;
}

static void bmp_set(script_table *t, uint32_t cp, unsigned cls)
{
    unsigned shift = (cp & 3) * 2;
    t->bmp[cp >> 2] = (unsigned char)((t->bmp[cp >> 2] & ~(3u << shift)) | (cls << shift));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

#define NOT_FOUND ((size_t)-1)

/* The index of cp's entry in the sorted v[0..n), or NOT_FOUND. */
static size_t astral_find(const uint32_t *v, size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t m = v[mid] >> 2;
        if (m == cp)
            return mid;
        if (m < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NOT_FOUND;
}

/* The class of cp, with CLS_ST_SELF as it is (the build needs it). */
static unsigned raw_class(const script_table *t, uint32_t cp)
{
    if (cp < 0x10000)
        return bmp_get(t, cp);
    size_t i = astral_find(t->astral, t->st_count, cp);
    if (i != NOT_FOUND)
        return t->astral[i] & 3u;
    return astral_find(t->astral + t->st_count, t->ts_count, cp) != NOT_FOUND ? CLS_TRAD
                                                                             : CLS_NEITHER;
}

static unsigned class_of(const script_table *t, uint32_t cp)
{
    unsigned cls = raw_class(t, cp);
    return cls == CLS_ST_SELF ? CLS_NEITHER : cls;
}

static const fj_srcdict_rec *find_srcdict(const fj_image *img, const char *name)
{
    size_t n = strlen(name);
    for (uint32_t i = 0; i < img->srcdict_count; i++) {
        const fj_srcdict_rec *d = &img->srcdicts[i];
        if (d->name_len == n && memcmp(img->strings + d->name_off, name, n) == 0)
            return d;
    }
    return NULL;
}

/* The entry's key when it is exactly one character, else 0. */
static uint32_t single_key(const fj_image *img, const fj_srcentry_rec *e)
{
    const unsigned char *k = (const unsigned char *)img->strings + e->key_off;
    if (e->key_len == 3 && (k[0] & 0xF0) == 0xE0) {
        uint32_t cp;
        return fj_utf8_decode_fast(k, k + 3, &cp) == 3 ? cp : 0;
    }
    uint32_t cp;
    if (e->key_len == 0 || e->key_len > 4 ||
        fj_utf8_decode(k, k + e->key_len, &cp) != (int)e->key_len)
        return 0;
    return cp;
}

/* Whether the space-separated values of e include its key alone. */
static int maps_to_itself(const fj_image *img, const fj_srcentry_rec *e)
{
    const unsigned char *k = (const unsigned char *)img->strings + e->key_off;
    const unsigned char *v = (const unsigned char *)img->strings + e->values_off;
    size_t n = e->key_len, vn = e->values_len;
    for (size_t i = 0; i + n <= vn;) {
        size_t j = 0;
        while (j < n && v[i + j] == k[j])
            j++;
        if (j == n && (i + n == vn || v[i + n] == ' '))
            return 1;
        while (i < vn && v[i] != ' ')
            i++;
        i++;
    }
    return 0;
}

/* Appends an astral entry to the part that starts at `base`; *sorted is
 * cleared when that breaks the order (OpenCC's tables are sorted, so
 * normally it does not). */
static void astral_add(script_table *t, size_t base, size_t *count, uint32_t entry, int *sorted)
{
    if (base + *count >= t->astral_cap)
        return; /* cannot happen: the capacity counts every astral key */
    if (*count && t->astral[base + *count - 1] >= entry)
        *sorted = 0;
    t->astral[base + (*count)++] = entry;
}

static fj_status build_table(const fj_dict *dict, script_table **out)
{
    fj_status checked = fj__dict_use_sources(dict, NULL);
    if (checked != FJ_OK)
        return checked;
    const fj_image *img = fj__dict_image(dict);
    const fj_srcdict_rec *st = find_srcdict(img, "STCharacters");
    const fj_srcdict_rec *ts = find_srcdict(img, "TSCharacters");
    if (!st || !ts)
        return FJ_ERR_DICT_FORMAT;
    size_t cap = 0;
    const fj_srcdict_rec *both[2] = {st, ts};
    for (int d = 0; d < 2; d++)
        for (uint32_t i = 0; i < both[d]->entry_count; i++) {
            const fj_srcentry_rec *e = &img->srcentries[both[d]->first_entry + i];
            cap += e->key_len == 4 && (unsigned char)img->strings[e->key_off] >= 0xF0;
        }
    const fj_allocator *a = dict->allocator.alloc ? &dict->allocator : NULL;
    script_table *t = fj__alloc(a, sizeof(script_table) + cap * sizeof(uint32_t));
    if (!t)
        return FJ_ERR_NOMEM;
    memset(t, 0, sizeof *t);
    t->astral_cap = cap;

    int sorted = 1;
    for (uint32_t i = 0; i < st->entry_count; i++) {
        const fj_srcentry_rec *e = &img->srcentries[st->first_entry + i];
        uint32_t cp = single_key(img, e);
        if (!cp)
            continue;
        unsigned cls = maps_to_itself(img, e) ? CLS_ST_SELF : CLS_SIMP;
        if (cp < 0x10000)
            bmp_set(t, cp, cls);
        else
            astral_add(t, 0, &t->st_count, cp << 2 | cls, &sorted);
    }
    if (!sorted) /* a repeated key keeps one of its entries */
        qsort(t->astral, t->st_count, sizeof *t->astral, cmp_u32);
    sorted = 1;
    for (uint32_t i = 0; i < ts->entry_count; i++) {
        const fj_srcentry_rec *e = &img->srcentries[ts->first_entry + i];
        uint32_t cp = single_key(img, e);
        if (!cp || maps_to_itself(img, e))
            continue;
        if (cp < 0x10000) {
            unsigned old = bmp_get(t, cp);
            /* In both tables as converting (緼, 苧): a variant pair, neither. */
            if (old != CLS_ST_SELF)
                bmp_set(t, cp, old == CLS_SIMP ? CLS_ST_SELF : CLS_TRAD);
            continue;
        }
        size_t in_st = astral_find(t->astral, t->st_count, cp);
        if (in_st != NOT_FOUND)
            t->astral[in_st] = cp << 2 | CLS_ST_SELF;
        else
            astral_add(t, t->st_count, &t->ts_count, cp << 2 | CLS_TRAD, &sorted);
    }
    if (!sorted)
        qsort(t->astral + t->st_count, t->ts_count, sizeof *t->astral, cmp_u32);
    /* Taiwan's and Hong Kong's standard forms are Traditional too: a
     * character that TWVariants or HKVariants writes (群, 温, 户) is not
     * Simplified-only even though STCharacters converts it (群 -> 羣). */
    static const char *const regional[] = {"TWVariants", "HKVariants"};
    for (int d = 0; d < 2; d++) {
        const fj_srcdict_rec *rv = find_srcdict(img, regional[d]);
        for (uint32_t i = 0; rv && i < rv->entry_count; i++) {
            const fj_srcentry_rec *e = &img->srcentries[rv->first_entry + i];
            const unsigned char *v = (const unsigned char *)img->strings + e->values_off;
            const unsigned char *vend = v + e->values_len;
            while (v < vend) {
                uint32_t cp;
                int n = fj_utf8_decode(v, vend, &cp);
                if (n <= 0) {
                    v++;
                    continue;
                }
                v += n;
                if (cp < 0x10000 && bmp_get(t, cp) == CLS_SIMP)
                    bmp_set(t, cp, CLS_ST_SELF);
            }
        }
    }
    for (unsigned r = fj__cc_member_start[FJ_CC_EXTRA_TRADITIONAL];
         r < fj__cc_member_start[FJ_CC_EXTRA_TRADITIONAL + 1]; r++)
        for (uint32_t cp = fj__cc_members[r].first; cp <= fj__cc_members[r].last; cp++)
            if (cp < 0x10000 && bmp_get(t, cp) != CLS_SIMP)
                bmp_set(t, cp, CLS_TRAD);
    *out = t;
    return FJ_OK;
}

static void free_table(const fj_dict *dict, script_table *t)
{
    const fj_allocator *a = dict->allocator.alloc ? &dict->allocator : NULL;
    fj__free(a, t, sizeof(script_table) + t->astral_cap * sizeof(uint32_t));
}

/* The character classes of a scan (data/char-classes.txt): CJK
 * ideographs (the unified blocks, extension A, the compatibility
 * ideographs and planes 2 and 3); the punctuation that ends a clause and
 * belongs to it; line breaks, which also end a clause but belong to no
 * span; white space. */
#define HAN FJ_CC_BIT(FJ_CC_HAN_DETECT)
#define ENDS_CLAUSE FJ_CC_BIT(FJ_CC_CLAUSE_END)
#define LINE_BREAK FJ_CC_BIT(FJ_CC_LINE_BREAK)
#define SPACE FJ_CC_BIT(FJ_CC_DETECT_SPACE)

const char *fj_script_name(fj_script script)
{
    switch (script) {
    case FJ_SCRIPT_NONE: return "none";
    case FJ_SCRIPT_SIMPLIFIED: return "simplified";
    case FJ_SCRIPT_TRADITIONAL: return "traditional";
    case FJ_SCRIPT_BOTH: return "both";
    case FJ_SCRIPT_MIXED: return "mixed";
    case FJ_SCRIPT_BINARY: return "binary";
    }
    return "unknown";
}

/* Spans in the minority script, clause by clause (see fj_detect). */
typedef struct span_builder {
    fj_detection *out;
    unsigned minority;   /* CLS_SIMP or CLS_TRAD */
    int open;            /* a span is open */
    size_t start, end;   /* the open span's bytes */
} span_builder;

static void span_close(span_builder *b)
{
    if (!b->open)
        return;
    fj_detection *o = b->out;
    if (o->span_count < o->span_capacity) {
        fj_script_span *s = &o->spans[o->span_count];
        s->offset = b->start;
        s->length = b->end - b->start;
        s->script = b->minority == CLS_SIMP ? FJ_SCRIPT_SIMPLIFIED : FJ_SCRIPT_TRADITIONAL;
    }
    o->span_count++;
    b->open = 0;
}

/* One clause [start, end) with its counts of script-specific characters. */
static void span_clause(span_builder *b, size_t start, size_t end, size_t simp, size_t trad)
{
    size_t mine = b->minority == CLS_SIMP ? simp : trad;
    size_t theirs = b->minority == CLS_SIMP ? trad : simp;
    if (mine > theirs) {
        if (!b->open) {
            b->open = 1;
            b->start = start;
        }
        b->end = end;
    } else if (theirs > 0 || mine > 0) {
        span_close(b); /* the majority (or a tie) ends a span */
    }
    /* a clause with neither joins a span only if more minority text follows */
}

/* One pass over the text: the counts into `out` (and the class of the first
 * script-specific character), or with `b`, the spans. */
static void scan(const script_table *t, const unsigned char *text, size_t len, fj_detection *out,
                 span_builder *b, unsigned *first_cls)
{
    const unsigned char *p = text, *end = text + len;
    size_t cstart = 0, cend = 0, csimp = 0, ctrad = 0;
    int in_clause = 0;
    while (p < end) {
        uint32_t cp;
        size_t at = (size_t)(p - text);
        int n = fj_utf8_decode(p, end, &cp);
        if (n <= 0) {
            p++;
            cp = REPLACEMENT_CHARACTER;
        } else {
            p += n;
        }
        uint32_t classes = fj__char_classes(cp);
        if (classes & LINE_BREAK) {
            if (b && in_clause)
                span_clause(b, cstart, cend, csimp, ctrad);
            if (b)
                span_close(b); /* spans stay within a line */
            in_clause = 0;
            continue;
        }
        if (!in_clause) {
            if (classes & SPACE)
                continue;
            in_clause = 1;
            cstart = at;
            csimp = ctrad = 0;
        }
        if (!(classes & SPACE))
            cend = (size_t)(p - text);
        if (classes & HAN) {
            unsigned cls = class_of(t, cp);
            csimp += cls == CLS_SIMP;
            ctrad += cls == CLS_TRAD;
            if (!b) {
                out->han++;
                out->simplified += cls == CLS_SIMP;
                out->traditional += cls == CLS_TRAD;
                if (cls != CLS_NEITHER && *first_cls == CLS_NEITHER)
                    *first_cls = cls;
            }
        } else if (classes & ENDS_CLAUSE) {
            if (b)
                span_clause(b, cstart, cend, csimp, ctrad);
            in_clause = 0;
        }
    }
    if (b) {
        if (in_clause)
            span_clause(b, cstart, cend, csimp, ctrad);
        span_close(b);
    }
}

/* Binary data is told from text by its first block (see fj_detect). */
#define BINARY_BLOCK 8192
#define BINARY_MIN_BAD 8

/* Control characters that plain text uses: tab, line feed, vertical tab,
 * form feed, carriage return and escape (terminal colours). */
static int is_text_control(unsigned c)
{
    return (c >= '\t' && c <= '\r') || c == 0x1B;
}

/* A NUL in the first block, or bytes there that are not text (outside
 * valid UTF-8, or control bytes plain text does not use) in a large share:
 * at least 30 % of the block and BINARY_MIN_BAD, so that a text with a few
 * stray bytes stays text. */
static int looks_binary(const unsigned char *text, size_t len)
{
    size_t block = len < BINARY_BLOCK ? len : BINARY_BLOCK, bad = 0;
    const unsigned char *p = text, *stop = text + block, *end = text + len;
    while (p < stop) {
        unsigned c = *p;
        if (c == 0)
            return 1;
        if (c < 0x80) {
            bad += (c < 0x20 && !is_text_control(c)) || c == 0x7F;
            p++;
            continue;
        }
        uint32_t cp;
        int n = fj_utf8_decode(p, end, &cp); /* a character may end past the block */
        if (n <= 0) {
            bad++;
            p++;
        } else {
            p += n;
        }
    }
    return bad >= BINARY_MIN_BAD && bad * 10 >= block * 3;
}

static double clamp01(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

/* pow(base, n) for small bases without libm. */
static double power(double base, size_t n)
{
    double r = 1;
    for (size_t i = 0; i < n && r > 1e-12; i++)
        r *= base;
    return r;
}

/* Below this many other forms expected in correct text, too little is seen
 * to estimate damage. */
#define DAMAGE_MIN_EXPECTED 3.0

/* The share of the characters a careless converter writes in their
 * reading's default form that look so converted: 1 - (other forms seen) /
 * (other forms correct text would show, from the word list's shares), in
 * [0, 1]; -1 when the image has no repair model or the text shows too
 * little. Through a careful t2tw converter's tables. */
static double damage_of(const fj_dict *dict, const unsigned char *text, size_t len)
{
    fj_converter *rc = NULL;
    if (fj_converter_open(dict, "t2tw", FJ_REPAIR_CAREFUL, &rc, NULL) != FJ_OK)
        return -1;
    double expected = 0, seen = 0;
    for (const unsigned char *p = text, *end = text + len; p < end;) {
        uint32_t cp, share;
        int k = fj_utf8_decode(p, end, &cp);
        int kind = k > 0 ? fj__damage_observe(rc, cp, &share) : 0;
        if (kind) {
            expected += share / 10000.0;
            seen += kind == 2;
        }
        p += k > 0 ? (size_t)k : 1;
    }
    fj_converter_close(rc);
    if (expected < DAMAGE_MIN_EXPECTED)
        return -1;
    return clamp01(1 - seen / expected);
}

fj_status fj_detect(const fj_dict *dict, const char *text, size_t len, fj_detection *out)
{
    if (!dict || !out || out->size < offsetof(fj_detection, span_count) + sizeof(size_t) ||
        (!text && len) || (!out->spans && out->span_capacity))
        return FJ_ERR_INVALID_ARGUMENT;
    out->script = FJ_SCRIPT_NONE;
    out->confidence = 1;
    out->han = out->simplified = out->traditional = 0;
    out->span_count = 0;
    out->damage = -1;
    if (looks_binary((const unsigned char *)text, len)) {
        out->script = FJ_SCRIPT_BINARY;
        return FJ_OK;
    }
    script_table *t;
    fj_status st = build_table(dict, &t);
    if (st != FJ_OK)
        return st;
    const unsigned char *u = (const unsigned char *)text;
    unsigned first = CLS_NEITHER;
    scan(t, u, len, out, NULL, &first);
    size_t s = out->simplified, tr = out->traditional;
    if (s + tr > 0) {
        /* The minority is the script with fewer characters; on a tie, the
         * one that comes second. */
        unsigned majority = s > tr ? CLS_SIMP : tr > s ? CLS_TRAD : first;
        size_t maj = majority == CLS_SIMP ? s : tr, min = s + tr - maj;
        if (min >= 2 && min * 10 >= s + tr) {
            out->script = FJ_SCRIPT_MIXED;
            double share = (double)min / (double)(s + tr);
            out->confidence = clamp01(share / 0.2) * (1 - power(0.5, min));
        } else {
            out->script = majority == CLS_SIMP ? FJ_SCRIPT_SIMPLIFIED : FJ_SCRIPT_TRADITIONAL;
            double share = (double)maj / (double)(s + tr);
            out->confidence = share * share * (1 - power(0.3, maj));
        }
        out->confidence = clamp01(out->confidence);
        if (min > 0) {
            span_builder b = {out, majority == CLS_SIMP ? CLS_TRAD : CLS_SIMP, 0, 0, 0};
            scan(t, u, len, out, &b, &first);
        }
    } else if (out->han > 0) {
        out->script = FJ_SCRIPT_BOTH;
        out->confidence = clamp01(1 - power(0.75, out->han));
    }
    free_table(dict, t);
    if (out->script == FJ_SCRIPT_TRADITIONAL || out->script == FJ_SCRIPT_MIXED ||
        out->script == FJ_SCRIPT_BOTH)
        out->damage = damage_of(dict, u, len);
    return FJ_OK;
}

/* ---- for target-only conversion (src/target.c) ---------------------------- */

struct fj_script_table {
    script_table *t;
};

fj_status fj__script_table_new(const fj_dict *dict, struct fj_script_table **out)
{
    const fj_allocator *a = dict->allocator.alloc ? &dict->allocator : NULL;
    struct fj_script_table *w = fj__alloc(a, sizeof *w);
    if (!w)
        return FJ_ERR_NOMEM;
    fj_status st = build_table(dict, &w->t);
    if (st != FJ_OK) {
        fj__free(a, w, sizeof *w);
        return st;
    }
    *out = w;
    return FJ_OK;
}

void fj__script_table_free(const fj_dict *dict, struct fj_script_table *t)
{
    if (!t)
        return;
    const fj_allocator *a = dict->allocator.alloc ? &dict->allocator : NULL;
    free_table(dict, t->t);
    fj__free(a, t, sizeof *t);
}

int fj__script_class(const struct fj_script_table *t, uint32_t cp)
{
    unsigned cls = class_of(t->t, cp);
    return cls == CLS_SIMP ? 1 : cls == CLS_TRAD ? 2 : 0;
}

int fj__ends_clause(uint32_t cp)
{
    return (fj__char_classes(cp) & (ENDS_CLAUSE | LINE_BREAK)) != 0;
}
