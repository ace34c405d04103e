/* fanjian formats: Markdown (fanjian-formats.h), read by hand after CommonMark 0.31 and
 * the GitHub additions people write (tables, footnotes, bare URLs).
 *
 * Blocks go line by line with a stack of open block quotes and list
 * items, as in CommonMark's own algorithm. The text of a paragraph or
 * heading is gathered without the container markers between its lines
 * (the "holes": "> " of a quote), read for inlines as one string, and
 * written back with the holes put where they were; a span of text never
 * crosses a hole. Left as written: code (fenced, indented, spans), front
 * matter but for its title's value, link destinations, autolinks and bare
 * URLs, the markup of raw HTML and HTML comments. HTML blocks and tags go through the HTML
 * rewriter, so their text and visible attributes are converted.
 * Not handled: math ($...$ is converted like text: only its \text{...}
 * can hold Chinese, and a reader sees that).
 */
#include <stdlib.h>
#include <string.h>

#include "docclean.h"
#include "fanjian-formats.h"
#include "html.h"

#define NONE ((size_t)-1)

enum { MD_DEPTH = 64, MD_OPENERS = 64 };
enum { L_NONE, L_PARA, L_FENCE, L_CODE, L_HTML };

/* A stretch of a buffered paragraph or HTML block: input [a, b), a
 * container prefix (hole) or content. */
typedef struct piece {
    size_t a, b;
    int hole;
} piece;
typedef struct hole {
    size_t at, a, b; /* input [a, b) goes before byte `at` of the text */
} hole;
typedef struct seg {
    size_t at, a, n; /* text [at, at + n) is input [a, a + n) */
} seg;
typedef struct brun {
    size_t at, n; /* a run of n backticks */
} brun;
/* The last answer of a forward search (see seek). */
typedef struct memo {
    size_t from, at;
    int known;
} memo;

/* Inline elements whose content is code (or not text), to their end tag. */
enum { N_SKIP = 6 };
static const char *const skip_tags[N_SKIP + 1] = {"code",   "kbd",   "samp", "pre",
                                                  "script", "style", NULL};

/* Searches remembered over one paragraph: raw HTML's quotes and ends, the
 * closers of link titles, and the end tags of skip_tags. */
enum {
    MO_DQ,
    MO_SQ,
    MO_COMMENT,
    MO_PI,
    MO_CDATA,
    MO_GT,
    MO_TDQ,
    MO_TSQ,
    MO_TLP,
    MO_TRP,
    MO_CLOSE,
    MO_COUNT = MO_CLOSE + N_SKIP
};

typedef struct md {
    const char *in;
    size_t len;
    const fjf_rewrite *rw;
    fjf_buf *out;
    fjf_error *err;
    struct {
        int bq;   /* a block quote, else a list item */
        size_t w; /* a list item's content indent */
    } box[MD_DEPTH];
    int depth;
    int leaf;
    char fch; /* the open fence */
    size_t flen;
    int htype; /* the open HTML block's kind (CommonMark's 1 to 7) */
    piece *pc;
    size_t npc, cpc;
    /* The paragraph being read. */
    fjf_buf t;
    hole *ho;
    size_t nho, cho;
    seg *sg;
    size_t nsg, csg;
    brun *rn;
    size_t nrn, crn;
    memo mo[MO_COUNT];
    size_t cur, hi; /* written up to t[cur], and holes before ho[hi] */
} md;

/* ---- helpers ------------------------------------------------------------------------ */

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }
static int is_sp(int c) { return c == ' ' || c == '\t'; }
static int is_ws(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
static int is_eol(int c) { return c == '\n' || c == '\r'; }
static int is_punct(int c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}
static int oneof(int c, const char *set) { return c && strchr(set, c) != NULL; }
static int lc(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

/* s[0..n) begins with the lower-case word w, ignoring ASCII case. */
static int iprefix(const char *s, size_t n, const char *w)
{
    for (size_t i = 0; w[i]; i++)
        if (i >= n || lc((unsigned char)s[i]) != w[i])
            return 0;
    return 1;
}

/* s[a..b) holds the lower-case word w, ignoring ASCII case. */
static int icontains(const char *s, size_t a, size_t b, const char *w)
{
    for (size_t n = strlen(w); a + n <= b; a++)
        if (iprefix(s + a, b - a, w))
            return 1;
    return 0;
}

static int all_sp(const char *s, size_t a, size_t b)
{
    for (; a < b; a++)
        if (!is_sp((unsigned char)s[a]))
            return 0;
    return 1;
}

/* Makes room for `need` elements of `size` bytes; NULL when out of memory. */
static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(p, c * size);
    if (q)
        *cap = c;
    return q;
}

static int oom(md *m, size_t at)
{
    fjf_error_set(m->err, at, "out of memory");
    return -1;
}

static int copy(md *m, size_t a, size_t b) { return fjf_emit_copy(m->in, a, b, m->out, m->err); }

/* The input offset of byte `at` of the paragraph's text. */
static size_t tmap(const md *m, size_t at)
{
    for (size_t i = 0; i < m->nsg; i++)
        if (at < m->sg[i].at + m->sg[i].n)
            return m->sg[i].a + (at - m->sg[i].at);
    return m->len;
}

/* Writes t[a..b), converted or not. */
static int put_t(md *m, size_t a, size_t b, int text)
{
    const char *p = m->t.data + a;
    if (text && m->rw && m->rw->text) {
        if (m->rw->text(m->rw->text_ctx, p, b - a, m->out) != 0) {
            fjf_error_set(m->err, tmap(m, a), "converting the text failed");
            return -1;
        }
        return 0;
    }
    return fjf_buf_append(m->out, p, b - a) ? oom(m, tmap(m, a)) : 0;
}

/* Writes the holes that go before t[at]. */
static int holes_to(md *m, size_t at)
{
    for (; m->hi < m->nho && m->ho[m->hi].at <= at; m->hi++)
        if (copy(m, m->ho[m->hi].a, m->ho[m->hi].b))
            return -1;
    return 0;
}

/* Writes t[cur..to) as text or as it is, with the holes in it. */
static int emit(md *m, size_t to, int text)
{
    while (m->cur < to) {
        if (holes_to(m, m->cur))
            return -1;
        size_t stop = to;
        if (m->hi < m->nho && m->ho[m->hi].at < stop)
            stop = m->ho[m->hi].at;
        if (put_t(m, m->cur, stop, text))
            return -1;
        m->cur = stop;
    }
    return 0;
}
#define TEXT(x) emit(m, (x), 1)
#define VERB(x) emit(m, (x), 0)

/* Rewrites p[0..n), input from at_in on, as a piece of HTML. */
static int frag(md *m, const char *p, size_t n, size_t at_in)
{
    fjf_error e;
    if (fjf_html_fragment_rewrite(p, n, m->rw, m->out, &e) == 0)
        return 0;
    fjf_error_set(m->err, e.offset == FJF_NO_OFFSET ? FJF_NO_OFFSET : at_in + e.offset, "%s",
                  e.message);
    return -1;
}

/* Raw HTML t[cur..e): through the HTML rewriter, unless a hole splits it. */
static int emit_html(md *m, size_t e)
{
    if (holes_to(m, m->cur))
        return -1;
    if (m->hi < m->nho && m->ho[m->hi].at < e)
        return VERB(e);
    fjf_error er;
    if (fjf_html_fragment_rewrite(m->t.data + m->cur, e - m->cur, m->rw, m->out, &er) != 0) {
        size_t at = er.offset == FJF_NO_OFFSET ? FJF_NO_OFFSET : tmap(m, m->cur + er.offset);
        fjf_error_set(m->err, at, "%s", er.message);
        return -1;
    }
    m->cur = e;
    return 0;
}

/* ---- searches over the paragraph's text ------------------------------------------ */

/* s[i] is preceded by an odd run of backslashes. */
static int escaped(const char *s, size_t i)
{
    size_t k = 0;
    while (k < i && s[i - 1 - k] == '\\')
        k++;
    return k & 1;
}

/* The first pat at or after `from` in s[0..n) (esc: not backslash-escaped),
 * or n. A memo keeps the answer: searches move forward, so each pattern
 * reads the paragraph about once, however many openers fail. */
static size_t seek(const char *s, size_t n, size_t from, const char *pat, int esc, memo *mo)
{
    if (mo && mo->known && mo->from <= from && mo->at >= from)
        return mo->at;
    size_t plen = strlen(pat), i = from, at = n;
    while (i + plen <= n) {
        const char *p = memchr(s + i, pat[0], n - i - plen + 1);
        if (!p)
            break;
        i = (size_t)(p - s);
        if (memcmp(s + i, pat, plen) == 0 && (!esc || !escaped(s, i))) {
            at = i;
            break;
        }
        i++;
    }
    if (mo) {
        mo->known = 1;
        mo->from = from;
        mo->at = at;
    }
    return at;
}

static int run_cmp(const void *x, const void *y)
{
    const brun *a = x, *b = y;
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    return a->at < b->at ? -1 : a->at > b->at;
}

/* The backtick runs of the text, by length then place. */
static int collect_runs(md *m)
{
    const char *s = m->t.data;
    size_t n = m->t.len;
    m->nrn = 0;
    if (!n || !memchr(s, '`', n))
        return 0;
    for (size_t i = 0; i < n;) {
        if (s[i] != '`') {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && s[j] == '`')
            j++;
        brun *r = grow(m->rn, &m->crn, m->nrn + 1, sizeof *r);
        if (!r)
            return oom(m, tmap(m, i));
        m->rn = r;
        m->rn[m->nrn].at = i;
        m->rn[m->nrn++].n = j - i;
        i = j;
    }
    qsort(m->rn, m->nrn, sizeof *m->rn, run_cmp);
    return 0;
}

/* Where a run of exactly r backticks begins at or after `from`, or NONE. */
static size_t closing_run(const md *m, size_t from, size_t r)
{
    size_t lo = 0, hi = m->nrn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const brun *x = &m->rn[mid];
        if (x->n < r || (x->n == r && x->at < from))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nrn && m->rn[lo].n == r ? m->rn[lo].at : NONE;
}

/* ---- inline constructs (over s[0..n)) --------------------------------------------- */

enum { RH_OTHER = 1, RH_OPEN, RH_CLOSE };

/* CommonMark raw HTML at s[i] == '<': its end, or 0. *kind, and for tags
 * the name's end and whether it closes itself. `mo` may be NULL. */
static size_t raw_html(const char *s, size_t n, size_t i, memo *mo, int *kind, size_t *nend,
                       int *self)
{
    size_t j = i + 1, e;
    *kind = RH_OTHER;
    *self = 0;
    if (j >= n)
        return 0;
    if (s[j] == '!') {
        if (n - j >= 3 && memcmp(s + j, "!--", 3) == 0) {
            size_t k = j + 3;
            if (k < n && s[k] == '>')
                return k + 1;
            if (k + 1 < n && s[k] == '-' && s[k + 1] == '>')
                return k + 2;
            e = seek(s, n, k, "-->", 0, mo ? &mo[MO_COMMENT] : NULL);
            return e < n ? e + 3 : 0;
        }
        if (n - j >= 8 && memcmp(s + j, "![CDATA[", 8) == 0) {
            e = seek(s, n, j + 8, "]]>", 0, mo ? &mo[MO_CDATA] : NULL);
            return e < n ? e + 3 : 0;
        }
        if (j + 1 < n && is_alpha((unsigned char)s[j + 1])) {
            e = seek(s, n, j + 2, ">", 0, mo ? &mo[MO_GT] : NULL);
            return e < n ? e + 1 : 0;
        }
        return 0;
    }
    if (s[j] == '?') {
        e = seek(s, n, j + 1, "?>", 0, mo ? &mo[MO_PI] : NULL);
        return e < n ? e + 2 : 0;
    }
    int close = s[j] == '/';
    j += close;
    if (j >= n || !is_alpha((unsigned char)s[j]))
        return 0;
    while (j < n && (is_alnum((unsigned char)s[j]) || s[j] == '-'))
        j++;
    *nend = j;
    if (close) {
        while (j < n && is_ws((unsigned char)s[j]))
            j++;
        *kind = RH_CLOSE;
        return j < n && s[j] == '>' ? j + 1 : 0;
    }
    *kind = RH_OPEN;
    for (;;) {
        size_t k = j;
        while (k < n && is_ws((unsigned char)s[k]))
            k++;
        if (k >= n)
            return 0;
        if (s[k] == '>')
            return k + 1;
        if (s[k] == '/') {
            *self = 1;
            return k + 1 < n && s[k + 1] == '>' ? k + 2 : 0;
        }
        if (k == j) /* attributes need white space before them */
            return 0;
        if (!is_alpha((unsigned char)s[k]) && s[k] != '_' && s[k] != ':')
            return 0;
        k++;
        while (k < n && (is_alnum((unsigned char)s[k]) || oneof(s[k], "_.:-")))
            k++;
        size_t v = k;
        while (v < n && is_ws((unsigned char)s[v]))
            v++;
        if (v < n && s[v] == '=') {
            v++;
            while (v < n && is_ws((unsigned char)s[v]))
                v++;
            if (v >= n)
                return 0;
            if (s[v] == '"' || s[v] == '\'') {
                e = seek(s, n, v + 1, s[v] == '"' ? "\"" : "'", 0,
                         mo ? &mo[s[v] == '"' ? MO_DQ : MO_SQ] : NULL);
                if (e >= n)
                    return 0;
                k = e + 1;
            } else {
                e = v;
                while (e < n && !is_ws((unsigned char)s[e]) && !oneof(s[e], "\"'=<>`"))
                    e++;
                if (e == v)
                    return 0;
                k = e;
            }
        }
        j = k;
    }
}

/* An autolink <scheme:...> or <user@host> at s[i] == '<': its end, or 0. */
static size_t autolink(const char *s, size_t n, size_t i)
{
    size_t j = i + 1, k;
    if (j < n && is_alpha((unsigned char)s[j])) {
        k = j + 1;
        while (k < n && k - j < 32 && (is_alnum((unsigned char)s[k]) || oneof(s[k], "+.-")))
            k++;
        if (k - j >= 2 && k < n && s[k] == ':') {
            k++;
            while (k < n && (unsigned char)s[k] > ' ' && s[k] != '<' && s[k] != '>' && s[k] != 0x7F)
                k++;
            if (k < n && s[k] == '>')
                return k + 1;
        }
    }
    k = j;
    while (k < n && (is_alnum((unsigned char)s[k]) || oneof(s[k], ".!#$%&'*+/=?^_`{|}~-")))
        k++;
    if (k == j || k >= n || s[k] != '@')
        return 0;
    k++;
    for (;;) {
        size_t l0 = k;
        while (k < n && k - l0 < 63 && (is_alnum((unsigned char)s[k]) || s[k] == '-'))
            k++;
        if (k == l0 || s[l0] == '-' || s[k - 1] == '-')
            return 0;
        if (k < n && s[k] == '.') {
            k++;
            continue;
        }
        break;
    }
    return k < n && s[k] == '>' ? k + 1 : 0;
}

/* The code point of the UTF-8 sequence at s[i] and its length in *len, or
 * -1 (*len 1) where the bytes are not one. */
static long utf8_at(const char *s, size_t n, size_t i, size_t *len)
{
    const unsigned char *u = (const unsigned char *)s + i;
    size_t left = n - i, k = u[0] >= 0xF0 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC0 ? 2 : 1;
    *len = 1;
    if (u[0] < 0x80)
        return u[0];
    if (u[0] < 0xC2 || u[0] > 0xF4 || k > left)
        return -1;
    long cp = u[0] & (0x7F >> k);
    for (size_t j = 1; j < k; j++) {
        if ((u[j] & 0xC0) != 0x80)
            return -1;
        cp = cp << 6 | (u[j] & 0x3F);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return -1;
    *len = k;
    return cp;
}

/* Unicode white space or punctuation, as far as Chinese, Japanese and
 * Western text use them: where a domain name ends. */
static int unicode_space_or_punct(long cp)
{
    return (cp >= 0xA0 && cp <= 0xBF) || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x206F) ||
           (cp >= 0x2E00 && cp <= 0x2E7F) || (cp >= 0x3000 && cp <= 0x3004) ||
           (cp >= 0x3008 && cp <= 0x3011) || (cp >= 0x3014 && cp <= 0x301F) || cp == 0x3030 ||
           cp == 0x303D || (cp >= 0xFE10 && cp <= 0xFE19) || (cp >= 0xFE30 && cp <= 0xFE6B) ||
           (cp >= 0xFF01 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) ||
           (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65);
}

/* A valid domain (GFM) at s[i]: letters and digits (any script), '-', '_'
 * and '.', with no '_' in its last two labels. Its end, or 0 when it is
 * empty or invalid. */
static size_t domain(const char *s, size_t n, size_t i)
{
    size_t k = i, letters = 0;
    size_t last = 0, before_last = 0; /* the '_' in the last two labels */
    while (k < n) {
        size_t len;
        long cp = utf8_at(s, n, k, &len);
        if (cp == '.') {
            before_last = last;
            last = 0;
        } else if (cp == '_') {
            last++;
        } else if (cp == '-' || (cp < 0x80 && is_alnum((int)cp)) ||
                   (cp >= 0x80 && !unicode_space_or_punct(cp))) {
            letters++;
        } else {
            break;
        }
        k += len;
    }
    return letters && !last && !before_last ? k : 0;
}

/* GFM's extended autolinks (spec, "Autolinks (extension)"): www. and a
 * valid domain, after white space, '*', '_', '~' or '(' (or at the start);
 * http://, https:// or ftp:// and a valid domain, after anything but an
 * ASCII letter (as cmark-gfm: Chinese text runs on without a space, and
 * such a domain may have no period, as localhost). Either runs to white
 * space or '<' (so text right after it without a space is in the link,
 * 。 and ） too), less trailing ? ! . , : * _ ~, a ')' with no '(' to
 * match, and a trailing entity-like &name;. Also ending at '`' and ']',
 * where code spans and link text take over. Its end, or 0. Email
 * autolinks are ASCII only (GFM), so no conversion can touch them.
 * (Leniencies that keep more as written: "www" and schemes in any case.) */
static size_t bare_url(const char *s, size_t n, size_t i)
{
    size_t d;
    int www = 0;
    if (iprefix(s + i, n - i, "http://"))
        d = i + 7;
    else if (iprefix(s + i, n - i, "https://"))
        d = i + 8;
    else if (iprefix(s + i, n - i, "ftp://"))
        d = i + 6;
    else if (iprefix(s + i, n - i, "www."))
        d = i + 4, www = 1;
    else
        return 0;
    if (i > 0 && (www ? !is_ws((unsigned char)s[i - 1]) && !oneof(s[i - 1], "*_~(")
                      : is_alpha((unsigned char)s[i - 1])))
        return 0;
    /* "www." is the domain's first label (as cmark-gfm: www.localhost) */
    size_t e = domain(s, n, www ? i : d);
    if (!e)
        return 0;
    while (e < n && !is_ws((unsigned char)s[e]) && !oneof(s[e], "<`]"))
        e++;
    for (;;) {
        char c = s[e - 1];
        if (oneof(c, "?!.,:*_~")) {
            e--;
        } else if (c == ')') {
            size_t open = 0, close = 0;
            for (size_t k = i; k < e; k++)
                open += s[k] == '(', close += s[k] == ')';
            if (close <= open)
                break;
            e--;
        } else if (c == ';') {
            size_t k = e - 1;
            while (k > d && is_alnum((unsigned char)s[k - 1]))
                k--;
            if (k == e - 1 || k == d || s[k - 1] != '&')
                break;
            e = k - 1;
        } else {
            break;
        }
        if (e <= d)
            return 0;
    }
    return e;
}

/* White space with at most one line ending. */
static size_t skip_ws1(const char *s, size_t n, size_t i)
{
    int nl = 0;
    while (i < n) {
        if (is_sp((unsigned char)s[i])) {
            i++;
        } else if (is_eol((unsigned char)s[i]) && !nl) {
            nl = 1;
            i += (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
        } else {
            break;
        }
    }
    return i;
}

/* A link destination at s[i]: its end, or NONE. */
static size_t dest(const char *s, size_t n, size_t i)
{
    if (i < n && s[i] == '<') {
        for (size_t j = i + 1; j < n; j++) {
            if (s[j] == '\\' && j + 1 < n && is_punct((unsigned char)s[j + 1]))
                j++;
            else if (s[j] == '>')
                return j + 1;
            else if (s[j] == '<' || is_eol((unsigned char)s[j]))
                return NONE;
        }
        return NONE;
    }
    size_t j = i, depth = 0;
    while (j < n) {
        unsigned char c = (unsigned char)s[j];
        if (c == '\\' && j + 1 < n && is_punct((unsigned char)s[j + 1])) {
            j += 2;
            continue;
        }
        if (c <= ' ' || c == 0x7F)
            break;
        if (c == '(' && ++depth > 32)
            return NONE;
        if (c == ')') {
            if (!depth)
                break;
            depth--;
        }
        j++;
    }
    return depth || j == i ? NONE : j;
}

/* A link title at s[i] ("...", '...' or (...)): its end, or NONE. */
static size_t title(md *m, const char *s, size_t n, size_t i)
{
    size_t e;
    if (s[i] == '"')
        e = seek(s, n, i + 1, "\"", 1, &m->mo[MO_TDQ]);
    else if (s[i] == '\'')
        e = seek(s, n, i + 1, "'", 1, &m->mo[MO_TSQ]);
    else if ((e = seek(s, n, i + 1, ")", 1, &m->mo[MO_TRP])) < n &&
             seek(s, n, i + 1, "(", 1, &m->mo[MO_TLP]) < e)
        return NONE;
    return e < n ? e + 1 : NONE;
}

/* An inline link's tail (destination "title") at s[i] == '(': its end, and
 * the inside of its title in [*t0, *t1) (*t0 == 0: none); or NONE. */
static size_t link_tail(md *m, const char *s, size_t n, size_t i, size_t *t0, size_t *t1)
{
    size_t j = skip_ws1(s, n, i + 1);
    *t0 = *t1 = 0;
    if (j < n && s[j] == ')')
        return j + 1;
    size_t d = dest(s, n, j);
    if (d == NONE)
        return NONE;
    size_t k = skip_ws1(s, n, d);
    if (k > d && k < n && oneof(s[k], "\"'(")) {
        size_t e = title(m, s, n, k);
        if (e == NONE)
            return NONE;
        *t0 = k + 1;
        *t1 = e - 1;
        k = skip_ws1(s, n, e);
    }
    return k < n && s[k] == ')' ? k + 1 : NONE;
}

/* A link label at s[i] == '[': its end (after ']') with the inside in
 * [*l0, *l1), or NONE. */
static size_t label(const char *s, size_t n, size_t i, size_t *l0, size_t *l1)
{
    size_t k = i + 1;
    while (k < n && s[k] != ']') {
        if (s[k] == '[' || k - i > 999)
            return NONE;
        k += (s[k] == '\\' && k + 1 < n) ? 2 : 1;
    }
    if (k >= n)
        return NONE;
    *l0 = i + 1;
    *l1 = k;
    return k + 1;
}

/* After the line ending at s[i] (or at n). */
static size_t eol(const char *s, size_t n, size_t i)
{
    if (i < n)
        i += (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
    return i;
}

/* A link reference definition at s[i], a line's start: its end (after its
 * line), its label's inside [*l0, *l1), its title's [*t0, *t1) (*t0 == 0:
 * none); or NONE. "[^1]: ..." is a footnote, its text converted. */
static size_t ref_def(md *m, const char *s, size_t n, size_t i, size_t *l0, size_t *l1, size_t *t0,
                      size_t *t1)
{
    while (i < n && is_sp((unsigned char)s[i]))
        i++;
    if (i >= n || s[i] != '[')
        return NONE;
    size_t k = label(s, n, i, l0, l1);
    if (k == NONE || k >= n || s[k] != ':' || *l0 == *l1 || s[*l0] == '^')
        return NONE;
    int blank = 1;
    for (size_t j = *l0; j < *l1; j++)
        blank &= is_ws((unsigned char)s[j]);
    if (blank)
        return NONE;
    size_t d = dest(s, n, skip_ws1(s, n, k + 1));
    if (d == NONE)
        return NONE;
    *t0 = *t1 = 0;
    size_t q = skip_ws1(s, n, d);
    if (q > d && q < n && oneof(s[q], "\"'(")) {
        size_t e = title(m, s, n, q);
        if (e != NONE) {
            size_t r = e;
            while (r < n && is_sp((unsigned char)s[r]))
                r++;
            if (r >= n || is_eol((unsigned char)s[r])) {
                *t0 = q + 1;
                *t1 = e - 1;
                return eol(s, n, r);
            }
        }
    }
    size_t r = d;
    while (r < n && is_sp((unsigned char)s[r]))
        r++;
    return r >= n || is_eol((unsigned char)s[r]) ? eol(s, n, r) : NONE;
}

/* Where "</name>" begins at or after `from`, or n. */
static size_t close_tag(md *m, const char *s, size_t n, size_t from, int which)
{
    memo *mo = &m->mo[MO_CLOSE + which];
    if (mo->known && mo->from <= from && mo->at >= from)
        return mo->at;
    const char *name = skip_tags[which];
    size_t nl = strlen(name), i = from, at = n;
    while ((i = seek(s, n, i, "</", 0, NULL)) < n) {
        size_t j = i + 2 + nl;
        if (j <= n && iprefix(s + i + 2, nl, name)) {
            while (j < n && is_ws((unsigned char)s[j]))
                j++;
            if (j < n && s[j] == '>') {
                at = i;
                break;
            }
        }
        i++;
    }
    mo->known = 1;
    mo->from = from;
    mo->at = at;
    return at;
}

/* The inlines of t[i..): text between the constructs that stay. */
static int inlines(md *m, size_t i)
{
    const char *s = m->t.data;
    size_t n = m->t.len;
    struct {
        size_t at, in; /* '[' or "![", and where its text begins */
    } op[MD_OPENERS];
    int nop = 0;
    while (i < n) {
        size_t e, a = 0, b = 0, nend;
        int kind, self;
        switch (s[i]) {
        case '\\':
            i += (i + 1 < n && is_punct((unsigned char)s[i + 1])) ? 2 : 1;
            break;
        case '`': {
            size_t r = 1;
            while (i + r < n && s[i + r] == '`')
                r++;
            e = closing_run(m, i + r, r);
            if (e == NONE) {
                i += r;
                break;
            }
            if (TEXT(i) || VERB(e + r))
                return -1;
            i = e + r;
            break;
        }
        case '<':
            if ((e = autolink(s, n, i))) {
                if (TEXT(i) || VERB(e))
                    return -1;
                i = e;
                break;
            }
            if (!(e = raw_html(s, n, i, m->mo, &kind, &nend, &self))) {
                i++;
                break;
            }
            if (TEXT(i) || emit_html(m, e))
                return -1;
            if (kind == RH_OPEN && !self)
                for (int k = 0; skip_tags[k]; k++)
                    if (nend - i - 1 == strlen(skip_tags[k]) &&
                        iprefix(s + i + 1, nend - i - 1, skip_tags[k])) {
                        size_t c = close_tag(m, s, n, e, k);
                        if (c < n) {
                            if (VERB(c))
                                return -1;
                            e = c;
                        }
                        break;
                    }
            i = e;
            break;
        case '!':
            if (i + 1 < n && s[i + 1] == '[') {
                if (nop < MD_OPENERS) {
                    op[nop].at = i;
                    op[nop++].in = i + 2;
                }
                i += 2;
            } else {
                i++;
            }
            break;
        case '[':
            if (nop < MD_OPENERS) {
                op[nop].at = i;
                op[nop++].in = i + 1;
            }
            i++;
            break;
        case ']': {
            if (!nop) {
                i++;
                break;
            }
            nop--;
            /* The brackets stay; the text in them is a span of its own, as
             * a definition's label is, so that the two convert alike. */
            size_t t0 = 0, t1 = 0;
            e = NONE;
            if (i + 1 < n && s[i + 1] == '(') {
                e = link_tail(m, s, n, i + 1, &t0, &t1);
            } else if (i + 1 < n && s[i + 1] == '[') {
                e = label(s, n, i + 1, &a, &b);
                t0 = a, t1 = b;
            }
            if (op[nop].at >= m->cur && (TEXT(op[nop].at) || VERB(op[nop].in)))
                return -1;
            if (TEXT(i))
                return -1;
            if (e == NONE) {
                if (VERB(i + 1))
                    return -1;
                i++;
                break;
            }
            if (t0 && (VERB(t0) || TEXT(t1)))
                return -1;
            if (VERB(e))
                return -1;
            i = e;
            break;
        }
        case 'h':
        case 'H':
        case 'w':
        case 'W':
        case 'f':
        case 'F':
            if ((e = bare_url(s, n, i))) {
                if (TEXT(i) || VERB(e))
                    return -1;
                i = e;
                break;
            }
            i++;
            break;
        default:
            i++;
        }
    }
    return TEXT(n);
}

/* ---- buffered blocks --------------------------------------------------------------- */

static int piece_add(md *m, size_t a, size_t b, int is_hole)
{
    if (a >= b)
        return 0;
    if (m->npc && m->pc[m->npc - 1].hole == is_hole && m->pc[m->npc - 1].b == a) {
        m->pc[m->npc - 1].b = b;
        return 0;
    }
    piece *p = grow(m->pc, &m->cpc, m->npc + 1, sizeof *p);
    if (!p)
        return oom(m, a);
    m->pc = p;
    m->pc[m->npc].a = a;
    m->pc[m->npc].b = b;
    m->pc[m->npc++].hole = is_hole;
    return 0;
}

/* Writes the buffered paragraph (or heading: no definitions). */
static int para_flush(md *m, int defs)
{
    m->t.len = 0;
    m->nho = m->nsg = 0;
    for (size_t i = 0; i < m->npc; i++) {
        const piece *p = &m->pc[i];
        if (p->hole && !all_sp(m->in, p->a, p->b)) {
            hole *h = grow(m->ho, &m->cho, m->nho + 1, sizeof *h);
            if (!h)
                return oom(m, p->a);
            m->ho = h;
            m->ho[m->nho].at = m->t.len;
            m->ho[m->nho].a = p->a;
            m->ho[m->nho++].b = p->b;
            continue;
        }
        /* Indentation between lines stays in the text: it is white space. */
        seg *g = grow(m->sg, &m->csg, m->nsg + 1, sizeof *g);
        if (!g)
            return oom(m, p->a);
        m->sg = g;
        m->sg[m->nsg].at = m->t.len;
        m->sg[m->nsg].a = p->a;
        m->sg[m->nsg++].n = p->b - p->a;
        if (fjf_buf_append(&m->t, m->in + p->a, p->b - p->a))
            return oom(m, p->a);
    }
    m->npc = 0;
    m->cur = m->hi = 0;
    memset(m->mo, 0, sizeof m->mo);
    if (collect_runs(m))
        return -1;
    const char *s = m->t.data;
    size_t n = m->t.len, i = 0, e, l0, l1, t0, t1;
    while (defs && (e = ref_def(m, s, n, i, &l0, &l1, &t0, &t1)) != NONE) {
        if (VERB(l0) || TEXT(l1) || (t0 && (VERB(t0) || TEXT(t1))) || VERB(e))
            return -1;
        i = e;
    }
    if (inlines(m, i))
        return -1;
    return holes_to(m, n);
}

/* Writes the buffered HTML block through the HTML rewriter. */
static int html_flush(md *m)
{
    size_t np = m->npc;
    m->npc = 0;
    if (!np)
        return 0;
    int quoted = 0;
    for (size_t i = 0; i < np; i++)
        quoted |= m->pc[i].hole && !all_sp(m->in, m->pc[i].a, m->pc[i].b);
    if (!quoted) /* one stretch of the input */
        return frag(m, m->in + m->pc[0].a, m->pc[np - 1].b - m->pc[0].a, m->pc[0].a);
    /* Quote markers between the lines: line by line, and a block that
     * may hide code across lines (script, pre, comments) is copied. */
    for (size_t i = 0; i < np; i++) {
        const piece *p = &m->pc[i];
        if ((p->hole || m->htype <= 5) ? copy(m, p->a, p->b)
                                       : frag(m, m->in + p->a, p->b - p->a, p->a))
            return -1;
    }
    return 0;
}

static int close_leaf(md *m)
{
    int leaf = m->leaf;
    m->leaf = L_NONE;
    if (leaf == L_PARA)
        return para_flush(m, 1);
    if (leaf == L_HTML)
        return html_flush(m);
    return 0;
}

/* ---- lines and blocks ---------------------------------------------------------------- */

/* Where a line is read up to: pos; the column of in[pos] (bcol), and the
 * column the current container's content starts at (col <= bcol: a tab
 * may be used up in part). */
typedef struct lcur {
    size_t pos, bcol, col, le;
} lcur;

static size_t tab(size_t col) { return 4 - col % 4; }

/* Indentation in columns past the container, and the first other byte. */
static size_t ind(const md *m, const lcur *c, size_t *first)
{
    size_t col = c->bcol, i = c->pos;
    for (; i < c->le && is_sp((unsigned char)m->in[i]); i++)
        col += m->in[i] == '\t' ? tab(col) : 1;
    *first = i;
    return col - c->col;
}

static void go(const md *m, lcur *c, size_t to)
{
    for (; c->pos < to; c->pos++)
        c->bcol += m->in[c->pos] == '\t' ? tab(c->bcol) : 1;
    c->col = c->bcol;
}

/* Uses up n columns of white space. */
static void eat(const md *m, lcur *c, size_t n)
{
    size_t target = c->col + n;
    for (; c->bcol < target && c->pos < c->le && is_sp((unsigned char)m->in[c->pos]); c->pos++)
        c->bcol += m->in[c->pos] == '\t' ? tab(c->bcol) : 1;
    c->col = c->bcol < target ? c->bcol : target;
}

static int thematic(const char *s, size_t p, size_t le)
{
    char ch = s[p];
    size_t k = 0;
    if (ch != '-' && ch != '*' && ch != '_')
        return 0;
    for (; p < le; p++) {
        if (s[p] == ch)
            k++;
        else if (!is_sp((unsigned char)s[p]))
            return 0;
    }
    return k >= 3;
}

/* An ATX heading's marker at s[p]: after it, or 0. */
static size_t atx(const char *s, size_t p, size_t le)
{
    size_t k = 0;
    while (p + k < le && s[p + k] == '#')
        k++;
    if (k < 1 || k > 6 || (p + k < le && !is_sp((unsigned char)s[p + k])))
        return 0;
    return p + k;
}

static int fence_open(const char *s, size_t p, size_t le, char *ch, size_t *len)
{
    size_t k = 0;
    if (s[p] != '`' && s[p] != '~')
        return 0;
    while (p + k < le && s[p + k] == s[p])
        k++;
    if (k < 3 || (s[p] == '`' && memchr(s + p + k, '`', le - p - k)))
        return 0;
    *ch = s[p];
    *len = k;
    return 1;
}

static int fence_close(const char *s, size_t p, size_t le, char ch, size_t len)
{
    size_t k = 0;
    while (p + k < le && s[p + k] == ch)
        k++;
    return k >= len && all_sp(s, p + k, le);
}

static int setext(const char *s, size_t p, size_t le)
{
    size_t k = 0;
    if (s[p] != '=' && s[p] != '-')
        return 0;
    while (p + k < le && s[p + k] == s[p])
        k++;
    return all_sp(s, p + k, le);
}

/* A list item's marker at the cursor: its end and the item's content
 * indent (columns from the cursor), or 0. In a paragraph (para), only
 * items that may interrupt one count. */
static int list_marker(const md *m, const lcur *c, int para, size_t *mend, size_t *w)
{
    const char *s = m->in;
    size_t first, in = ind(m, c, &first), p = first, le = c->le;
    int ordered = 0;
    unsigned long num = 0;
    if (in > 3 || p >= le)
        return 0;
    if (s[p] == '-' || s[p] == '+' || s[p] == '*') {
        p++;
    } else {
        while (p < le && is_digit((unsigned char)s[p]) && p - first < 10)
            num = num * 10 + (unsigned long)(s[p++] - '0');
        if (p == first || p - first > 9 || p >= le || (s[p] != '.' && s[p] != ')'))
            return 0;
        p++;
        ordered = 1;
    }
    if (p < le && !is_sp((unsigned char)s[p]))
        return 0;
    size_t mw = p - first, col0 = c->col + in + mw, col = col0, q = p;
    for (; q < le && is_sp((unsigned char)s[q]); q++)
        col += s[q] == '\t' ? tab(col) : 1;
    int empty = q >= le;
    if (para && (empty || (ordered && num != 1)))
        return 0;
    *mend = p;
    *w = in + mw + ((empty || col - col0 >= 5) ? 1 : col - col0);
    return 1;
}

static const char *const html1[] = {"script", "pre", "style", "textarea", NULL};
static const char *const html6[] = {
    "address",  "article",  "aside",    "base",       "basefont", "blockquote", "body",   "caption",
    "center",   "col",      "colgroup", "dd",         "details",  "dialog",     "dir",    "div",
    "dl",       "dt",       "fieldset", "figcaption", "figure",   "footer",     "form",   "frame",
    "frameset", "h1",       "h2",       "h3",         "h4",       "h5",         "h6",     "head",
    "header",   "hr",       "html",     "iframe",     "legend",   "li",         "link",   "main",
    "menu",     "menuitem", "nav",      "noframes",   "ol",       "optgroup",   "option", "p",
    "param",    "search",   "section",  "summary",    "table",    "tbody",      "td",     "tfoot",
    "th",       "thead",    "title",    "tr",         "track",    "ul",         NULL};

/* t[o..n) starts with tag name w followed by white space, '>', the end,
 * or (slash) "/>". */
static int tag_at(const char *t, size_t n, size_t o, const char *w, int slash)
{
    size_t k = strlen(w), e = o + k;
    if (e > n || !iprefix(t + o, k, w))
        return 0;
    return e == n || is_ws((unsigned char)t[e]) || t[e] == '>' ||
           (slash && t[e] == '/' && e + 1 < n && t[e + 1] == '>');
}

/* Whether an HTML block starts at s[p..le): CommonMark's kind 1 to 7, or
 * 0. Kind 7 (any lone tag) cannot interrupt a paragraph. */
static int html_start(const char *s, size_t p, size_t le, int para)
{
    const char *t = s + p;
    size_t n = le - p;
    if (!n || t[0] != '<')
        return 0;
    for (int k = 0; html1[k]; k++)
        if (tag_at(t, n, 1, html1[k], 0))
            return 1;
    if (n >= 4 && memcmp(t, "<!--", 4) == 0)
        return 2;
    if (n >= 2 && t[1] == '?')
        return 3;
    if (n >= 9 && memcmp(t, "<![CDATA[", 9) == 0)
        return 5;
    if (n >= 3 && t[1] == '!' && is_alpha((unsigned char)t[2]))
        return 4;
    size_t o = n > 1 && t[1] == '/' ? 2 : 1;
    for (int k = 0; html6[k]; k++)
        if (tag_at(t, n, o, html6[k], 1))
            return 6;
    if (para)
        return 0;
    int kind, self;
    size_t nend, e = raw_html(t, n, 0, NULL, &kind, &nend, &self);
    if (!e || kind == RH_OTHER || !all_sp(t, e, n))
        return 0;
    for (int k = 0; html1[k]; k++)
        if (tag_at(t, n, o, html1[k], 0))
            return 0;
    return 7;
}

/* Whether s[a..le) holds the end of an HTML block of kind 1 to 5. */
static int html_end(const char *s, size_t a, size_t le, int kind)
{
    switch (kind) {
    case 1:
        return icontains(s, a, le, "</script>") || icontains(s, a, le, "</pre>") ||
               icontains(s, a, le, "</style>") || icontains(s, a, le, "</textarea>");
    case 2:
        return icontains(s, a, le, "-->");
    case 3:
        return icontains(s, a, le, "?>");
    case 4:
        return memchr(s + a, '>', le - a) != NULL;
    default:
        return icontains(s, a, le, "]]>");
    }
}

/* Whether the rest of a line (past the containers it matched) would start
 * a block rather than continue a paragraph lazily. */
static int starts_block(const md *m, const lcur *c)
{
    const char *s = m->in;
    size_t first, in = ind(m, c, &first), a, b;
    char ch;
    if (first >= c->le)
        return 1;
    if (in > 3)
        return 0;
    return s[first] == '>' || thematic(s, first, c->le) || list_marker(m, c, 0, &a, &b) ||
           fence_open(s, first, c->le, &ch, &a) || atx(s, first, c->le) ||
           html_start(s, first, c->le, 1);
}

/* One line: content in[ls..le), line ending in[le..nx). */
static int do_line(md *m, size_t ls, size_t le, size_t nx)
{
    const char *s = m->in;
    lcur c = {ls, 0, 0, le};
    size_t first, in, k;
    int matched = 0;

    /* The open containers this line continues. */
    for (; matched < m->depth; matched++) {
        in = ind(m, &c, &first);
        if (m->box[matched].bq) {
            if (in > 3 || first >= le || s[first] != '>')
                break;
            go(m, &c, first + 1);
            if (c.pos < le && is_sp((unsigned char)s[c.pos]))
                eat(m, &c, 1);
        } else if (first < le) {
            if (in < m->box[matched].w)
                break;
            eat(m, &c, m->box[matched].w);
        }
    }
    if (matched == m->depth) {
        switch (m->leaf) {
        case L_FENCE:
            in = ind(m, &c, &first);
            if (in <= 3 && fence_close(s, first, le, m->fch, m->flen))
                m->leaf = L_NONE;
            return copy(m, ls, nx);
        case L_CODE:
            if (ind(m, &c, &first) >= 4 || first >= le)
                return copy(m, ls, nx);
            m->leaf = L_NONE;
            break;
        case L_HTML:
            if (m->htype >= 6 && all_sp(s, c.pos, le))
                return close_leaf(m) || copy(m, ls, nx) ? -1 : 0;
            if (piece_add(m, ls, c.pos, 1) || piece_add(m, c.pos, nx, 0))
                return -1;
            if (m->htype <= 5 && html_end(s, c.pos, le, m->htype))
                return close_leaf(m);
            return 0;
        default:
            break;
        }
    } else {
        if (m->leaf == L_PARA && !starts_block(m, &c)) /* lazy continuation */
            return piece_add(m, ls, c.pos, 1) || piece_add(m, c.pos, nx, 0) ? -1 : 0;
        if (close_leaf(m))
            return -1;
        m->depth = matched;
    }

    /* New containers. */
    for (;;) {
        size_t mend, w;
        in = ind(m, &c, &first);
        if (in > 3 || first >= le || m->depth >= MD_DEPTH)
            break;
        if (s[first] == '>') {
            if (close_leaf(m))
                return -1;
            m->box[m->depth].bq = 1;
            m->box[m->depth++].w = 0;
            go(m, &c, first + 1);
            if (c.pos < le && is_sp((unsigned char)s[c.pos]))
                eat(m, &c, 1);
            continue;
        }
        if (thematic(s, first, le) || !list_marker(m, &c, m->leaf == L_PARA, &mend, &w))
            break;
        if (close_leaf(m))
            return -1;
        size_t base = c.col;
        go(m, &c, mend);
        eat(m, &c, w - (c.col - base));
        m->box[m->depth].bq = 0;
        m->box[m->depth++].w = w;
    }

    /* The leaf block. */
    in = ind(m, &c, &first);
    if (first >= le)
        return close_leaf(m) || copy(m, ls, nx) ? -1 : 0;
    if (m->leaf == L_PARA) {
        char ch;
        size_t fl;
        if (in > 3 ||
            !(fence_open(s, first, le, &ch, &fl) || atx(s, first, le) || setext(s, first, le) ||
              thematic(s, first, le) || html_start(s, first, le, 1)))
            return piece_add(m, ls, c.pos, 1) || piece_add(m, c.pos, nx, 0) ? -1 : 0;
        if (close_leaf(m))
            return -1;
        if (setext(s, first, le)) /* the paragraph was a heading */
            return copy(m, ls, nx);
    }
    if (in >= 4) {
        m->leaf = L_CODE;
        return copy(m, ls, nx);
    }
    if (fence_open(s, first, le, &m->fch, &m->flen)) {
        m->leaf = L_FENCE;
        return copy(m, ls, nx);
    }
    if ((k = atx(s, first, le)))
        return copy(m, ls, k) || piece_add(m, k, nx, 0) || para_flush(m, 0) ? -1 : 0;
    if (thematic(s, first, le))
        return copy(m, ls, nx);
    if ((m->htype = html_start(s, first, le, 0))) {
        m->leaf = L_HTML;
        if (copy(m, ls, c.pos) || piece_add(m, c.pos, nx, 0))
            return -1;
        return m->htype <= 5 && html_end(s, first, le, m->htype) ? close_leaf(m) : 0;
    }
    m->leaf = L_PARA;
    return copy(m, ls, c.pos) || piece_add(m, c.pos, nx, 0) ? -1 : 0;
}

/* Front matter in[a..b) (its fences included): copied, but for the value
 * of its title (YAML `title: X`, TOML `title = "X"`, quotes kept), which
 * a site shows as the page's heading. */
static int front_matter_rewrite(md *m, size_t a, size_t b)
{
    const char *s = m->in;
    char sep = s[a] == '+' ? '=' : ':';
    size_t i = a;
    while (i < b) {
        size_t le = i;
        while (le < b && !is_eol((unsigned char)s[le]))
            le++;
        size_t k = i + 5;
        if (le - i > 5 && memcmp(s + i, "title", 5) == 0) {
            while (k < le && is_sp((unsigned char)s[k]))
                k++;
        }
        if (le - i > 5 && memcmp(s + i, "title", 5) == 0 && k < le && s[k] == sep) {
            size_t v = k + 1, e = le;
            while (v < e && is_sp((unsigned char)s[v]))
                v++;
            while (e > v && is_sp((unsigned char)s[e - 1]))
                e--;
            if (e - v >= 2 && (s[v] == '"' || s[v] == '\'') && s[e - 1] == s[v]) {
                v++;
                e--;
            }
            if (copy(m, i, v) || fjf_emit_text(m->rw, s, v, e, m->out, m->err))
                return -1;
            i = e;
        }
        size_t nx = eol(s, b, le);
        if (copy(m, i, nx))
            return -1;
        i = nx;
    }
    return 0;
}

/* YAML (---) or TOML (+++) front matter at the start: its end, or pos. */
static size_t front_matter(const char *s, size_t len, size_t pos)
{
    char ch = pos + 3 <= len ? s[pos] : 0;
    if ((ch != '-' && ch != '+') || s[pos + 1] != ch || s[pos + 2] != ch)
        return pos;
    size_t i = pos + 3;
    while (i < len && is_sp((unsigned char)s[i]))
        i++;
    if (i < len && !is_eol((unsigned char)s[i]))
        return pos;
    for (i = eol(s, len, i); i < len;) {
        size_t le = i;
        while (le < len && !is_eol((unsigned char)s[le]))
            le++;
        if (le - i >= 3 &&
            ((s[i] == ch && s[i + 1] == ch && s[i + 2] == ch) ||
             (ch == '-' && s[i] == '.' && s[i + 1] == '.' && s[i + 2] == '.')) &&
            all_sp(s, i + 3, le))
            return eol(s, len, le);
        i = eol(s, len, le);
    }
    return pos;
}

int fjf_markdown_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                         fjf_error *err)
{
    if (rw && rw->clean)
        return fjf_clean_then_rewrite(FJF_MARKDOWN, in, len, rw, out, err, fjf_markdown_rewrite);
    md m;
    memset(&m, 0, sizeof m);
    m.in = in;
    m.len = len;
    m.rw = rw;
    m.out = out;
    m.err = err;
    size_t pos = 0;
    int r = 0;
    if (len >= 3 && memcmp(in, "\xEF\xBB\xBF", 3) == 0)
        pos = 3;
    size_t fm = front_matter(in, len, pos);
    r = copy(&m, 0, pos) || (fm > pos && front_matter_rewrite(&m, pos, fm));
    for (pos = fm; !r && pos < len;) {
        size_t le = pos;
        while (le < len && !is_eol((unsigned char)in[le]))
            le++;
        size_t nx = eol(in, len, le);
        r = do_line(&m, pos, le, nx);
        pos = nx;
    }
    if (!r)
        r = close_leaf(&m);
    free(m.pc);
    fjf_buf_free(&m.t);
    free(m.ho);
    free(m.sg);
    free(m.rn);
    return r ? -1 : 0;
}

/* ---- boilerplate removal (docclean.h) ---------------------------------------------- */

/* A line-by-line reading, simpler than the rewriter's and on the safe
 * side: paragraphs, list items and headings are judged; code (fenced,
 * indented, spans), HTML blocks, tables, link definitions and front matter
 * never are. In a block, code spans, raw HTML, autolinks and link
 * are judged as written but never cut (link destinations and tags are
 * not judged: a reader does not see them), a bare URL is cut
 * whole or not at all, and emphasis marks and line breaks split the text
 * (no span crosses them). */
typedef struct mdc {
    fjf_cleaner *c;
    const char *in;
    size_t len;
    int open;            /* a block is being read */
    int item, heading;   /* it is a list item, an ATX heading */
    int opaque;          /* it holds code or raw HTML: never removed whole */
    size_t start, end;   /* its lines */
    size_t before_blank; /* the blank line before it, or NONE */
} mdc;

/* The content of a line, past the block quote markers. */
static size_t quote_prefix(const char *s, size_t p, size_t le)
{
    for (;;) {
        size_t q = p, n = 0;
        while (q < le && s[q] == ' ' && n < 3)
            q++, n++;
        if (q >= le || s[q] != '>')
            return p;
        p = q + 1;
        if (p < le && is_sp((unsigned char)s[p]))
            p++;
    }
}

/* Indentation width of s[p..le) and where its text starts. */
static size_t indent_of(const char *s, size_t p, size_t le, size_t *first)
{
    size_t w = 0;
    while (p < le && is_sp((unsigned char)s[p])) {
        w += s[p] == '\t' ? 4 - w % 4 : 1;
        p++;
    }
    *first = p;
    return w;
}

/* A list marker at s[p]: where the item's text starts, or 0. */
static size_t item_marker(const char *s, size_t p, size_t le)
{
    size_t q = p;
    if (q < le && oneof(s[q], "-*+")) {
        q++;
    } else {
        while (q < le && q - p < 9 && is_digit((unsigned char)s[q]))
            q++;
        if (q == p || q >= le || (s[q] != '.' && s[q] != ')'))
            return 0;
        q++;
    }
    if (q < le && !is_sp((unsigned char)s[q]))
        return 0;
    while (q < le && is_sp((unsigned char)s[q]))
        q++;
    return q;
}

/* A bare URL's end at s[i] (http://, https://, www.), or 0: up to white
 * space, a character that is not ASCII, or markup. */
static size_t clean_url_end(const char *s, size_t i, size_t e)
{
    if (!(iprefix(s + i, e - i, "http://") || iprefix(s + i, e - i, "https://") ||
          iprefix(s + i, e - i, "www.")))
        return 0;
    size_t j = i;
    while (j < e && (unsigned char)s[j] > ' ' && (unsigned char)s[j] < 0x80 && s[j] != '<' &&
           s[j] != '>' && s[j] != '(' && s[j] != ')' && s[j] != '[' && s[j] != ']')
        j++;
    while (j > i && oneof(s[j - 1], ".,;:!?'\"*_~"))
        j--;
    return j;
}

/* The next ch in s[from..e), or e; remembered, as the reader moves forward. */
static size_t next_of(const char *s, size_t from, size_t e, char ch, memo *mo)
{
    if (!mo->known || mo->at < from) {
        const char *p = from < e ? memchr(s + from, ch, e - from) : NULL;
        mo->at = p ? (size_t)(p - s) : e;
        mo->known = 1;
    }
    return mo->at;
}

/* Backtick run lengths that found no closer on this line: a later run of
 * the same length finds none either, so each length is searched for in
 * vain once. */
enum { MD_FAILED_RUNS = 64 };

/* The text of one line of a block, s[a..e). */
static int clean_line_text(mdc *k, size_t a, size_t e, int first)
{
    fjf_cleaner *c = k->c;
    const char *s = k->in;
    if (!first && fjfc_add_decoded(c, a, a, " ", 1))
        return -1;
    size_t i = a, t = a, failed[MD_FAILED_RUNS], nfailed = 0;
    memo gt_memo = {0, 0, 0}, at_memo = {0, 0, 0};
    while (i < e) {
        size_t j = 0; /* the end of something not cut into, at i */
        int kind = 0; /* 1 never cut, 2 cut whole, 3 not text (a gap), 4 code or HTML */
        char ch = s[i];
        if (ch == '\\' && i + 1 < e && is_punct((unsigned char)s[i + 1])) {
            i += 2;
            continue;
        } else if (ch == '`') {
            size_t r = 1;
            while (i + r < e && s[i + r] == '`')
                r++;
            size_t q = i + r, f = 0;
            while (f < nfailed && failed[f] != r)
                f++;
            if (f < nfailed) {
                q = e;
            } else if (nfailed == MD_FAILED_RUNS) {
                /* Too many kinds of run to follow: the rest of the line is
                 * judged as written, never cut, and keeps the block. */
                k->opaque = 1;
                if (fjfc_add_raw(c, t, i) || fjfc_add_decoded(c, i, e, s + i, e - i))
                    return -1;
                return 0;
            } else {
                for (; q < e; q++)
                    if (s[q] == '`') {
                        size_t r2 = 1;
                        while (q + r2 < e && s[q + r2] == '`')
                            r2++;
                        if (r2 == r)
                            break;
                        q += r2 - 1;
                    }
                if (q >= e)
                    failed[nfailed++] = r;
            }
            if (q < e) {
                j = q + r;
                kind = 4;
            } else {
                j = i + r;
                kind = 3;
            }
        } else if (ch == '<') {
            size_t gt = next_of(s, i + 1, e, '>', &gt_memo);
            if (gt < e && (iprefix(s + i + 1, e - i - 1, "http") ||
                           next_of(s, i + 1, e, '@', &at_memo) < gt)) {
                j = gt + 1;
                kind = 1; /* an autolink */
            } else if (gt < e && i + 1 < e && (is_alpha((unsigned char)s[i + 1]) ||
                                               s[i + 1] == '/' || s[i + 1] == '!')) {
                j = gt + 1;
                kind = 4;
            }
        } else if (ch == ']' && i + 1 < e && s[i + 1] == '(') {
            size_t q = i + 2, depth = 1;
            for (; q < e && depth; q++)
                depth += s[q] == '(' ? 1 : s[q] == ')' ? (size_t)-1 : 0;
            j = q;
            kind = 1; /* the link's destination and title */
        } else if (oneof(ch, "*_~[]!")) {
            j = i + 1;
            kind = 3;
        } else if ((j = clean_url_end(s, i, e)) > i) {
            kind = 2;
        } else {
            j = 0;
        }
        if (!kind) {
            i++;
            continue;
        }
        if (fjfc_add_raw(c, t, i))
            return -1;
        if (kind == 4)
            k->opaque = 1;
        /* A link's destination and a tag are not read: judged as nothing. */
        int unread = (kind == 1 && s[i] == ']') || (kind == 4 && s[i] == '<');
        if ((kind == 1 || kind == 4) && fjfc_add_decoded(c, i, j, s + i, unread ? 0 : j - i))
            return -1;
        if (kind == 2 && fjfc_add_atomic(c, i, j))
            return -1;
        i = t = j;
    }
    return fjfc_add_raw(c, t, e);
}

static int blank_line(const char *s, size_t a, size_t le)
{
    size_t p = quote_prefix(s, a, le);
    return all_sp(s, p, le);
}

/* Judges the block that was read; when it is wholly boilerplate, its lines
 * go, with the blank line after it (or, at the end, the one before). */
static int clean_flush(mdc *k)
{
    if (!k->open)
        return 0;
    k->open = 0;
    int whole = 0;
    if (fjfc_judge(k->c, &whole))
        return -1;
    if (!whole || k->opaque)
        return 0;
    const char *s = k->in;
    size_t a = k->start, b = k->end, le = b, ble = k->before_blank;
    while (le < k->len && !is_eol((unsigned char)s[le]))
        le++;
    while (ble != NONE && ble < k->len && !is_eol((unsigned char)s[ble]))
        ble++;
    /* In a block quote the blank line that goes is one of the quote's
     * ("> "), so the quote is neither joined to what follows nor cut. */
    int quoted = quote_prefix(s, a, k->len) > a;
    int after = b < k->len && blank_line(s, b, le) && (quote_prefix(s, b, le) > b) == quoted;
    int before = k->before_blank != NONE &&
                 (quote_prefix(s, k->before_blank, ble) > k->before_blank) == quoted;
    if (!k->item && after)
        b = eol(s, k->len, le);
    else if (!k->item && before && (b == k->len || quoted))
        a = k->before_blank;
    return fjfc_cut_whole(k->c, a, b);
}

static void clean_begin(mdc *k, size_t ls, size_t prev_blank, int item, int heading)
{
    fjfc_block_reset(k->c);
    k->open = 1;
    k->item = item;
    k->heading = heading;
    k->opaque = 0;
    k->start = ls;
    k->before_blank = prev_blank;
}

int fjf_markdown_clean_blocks(fjf_cleaner *c)
{
    mdc k;
    memset(&k, 0, sizeof k);
    k.c = c;
    k.in = c->in;
    k.len = c->len;
    const char *s = k.in;
    size_t len = k.len, pos = len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    pos = front_matter(s, len, pos);
    char fence = 0;
    size_t fence_len = 0, prev_blank = NONE, cur_blank = NONE;
    int in_html = 0, lines = 0;
    for (size_t nx; pos < len; pos = nx) {
        size_t le = pos;
        while (le < len && !is_eol((unsigned char)s[le]))
            le++;
        nx = eol(s, len, le);
        prev_blank = cur_blank;
        cur_blank = NONE;
        size_t p = quote_prefix(s, pos, le), first, w = indent_of(s, p, le, &first);
        char fch;
        size_t flen;
        if (fence) {
            if (w <= 3 && fence_close(s, first, le, fence, fence_len))
                fence = 0;
            continue;
        }
        if (first >= le) { /* blank */
            if (clean_flush(&k))
                return -1;
            in_html = 0;
            cur_blank = pos;
            continue;
        }
        if (in_html)
            continue;
        if (w >= 4 && !(k.open && !k.heading)) { /* indented code (or an item's text: kept) */
            if (clean_flush(&k))
                return -1;
            continue;
        }
        if (fence_open(s, first, le, &fch, &flen)) {
            if (clean_flush(&k))
                return -1;
            fence = fch;
            fence_len = flen;
            continue;
        }
        if (s[first] == '<' || s[first] == '|') { /* an HTML block, a table */
            if (clean_flush(&k))
                return -1;
            in_html = 1; /* to the next blank line either way */
            continue;
        }
        if (k.open && !k.heading && setext(s, first, le)) { /* the paragraph was a heading */
            k.end = nx;
            if (clean_flush(&k))
                return -1;
            continue;
        }
        if (thematic(s, first, le)) {
            if (clean_flush(&k))
                return -1;
            continue;
        }
        size_t h = atx(s, first, le);
        if (h) {
            if (clean_flush(&k))
                return -1;
            size_t e = le;
            while (e > h && is_sp((unsigned char)s[e - 1]))
                e--;
            while (e > h && s[e - 1] == '#')
                e--;
            clean_begin(&k, pos, prev_blank, 0, 1);
            k.end = nx;
            if (clean_line_text(&k, h, e, 1) || clean_flush(&k))
                return -1;
            continue;
        }
        size_t item = item_marker(s, first, le);
        if (item && item < le) {
            if (clean_flush(&k))
                return -1;
            clean_begin(&k, pos, prev_blank, 1, 0);
            k.end = nx;
            if (clean_line_text(&k, item, le, 1))
                return -1;
            lines = 1;
            continue;
        }
        if (item) { /* an empty item */
            if (clean_flush(&k))
                return -1;
            continue;
        }
        if (!k.open && s[first] == '[') { /* maybe a link definition: not judged */
            size_t l0, l1, t0, t1;
            md tmp;
            memset(&tmp, 0, sizeof tmp);
            if (ref_def(&tmp, s, le, first, &l0, &l1, &t0, &t1) != NONE)
                continue;
        }
        if (!k.open) {
            clean_begin(&k, pos, prev_blank, 0, 0);
            lines = 0;
        }
        k.end = nx;
        if (clean_line_text(&k, first, le, lines == 0))
            return -1;
        lines++;
    }
    return clean_flush(&k);
}
