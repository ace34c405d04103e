/* fanjian formats: HTML as browsers read it, well-formed or not (fanjian-formats.h).
 *
 * A hand-written lexer after the tokenizer states of the HTML standard:
 * tag soup parsers do not say where their tokens were, and every byte that
 * is not text must come back as it was. Text nodes and a few attribute
 * values go to the text callback; all else is copied. What cannot be
 * parsed (a tag, comment or quote cut off by the end) is copied as it is.
 */
#include <string.h>

#include "fanjian-formats.h"
#include "docclean.h"
#include "html.h"

#define NONE ((size_t)-1)

typedef struct hw {
    const char *in;
    size_t len;
    const fjf_rewrite *rw;
    fjf_buf *out;
    fjf_error *err;
    int fragment;  /* a piece of a document: no lang for <html> */
    int seen_html; /* the root <html> start tag has gone by */
    size_t code;   /* open code, pre, kbd, samp: programmers' text, left alone */
} hw;

/* Elements whose text is not converted, and those whose content is not
 * HTML: raw text ends only at its end tag; RCDATA is text up to it. */
static const char *const code_tags[] = {"code", "pre", "kbd", "samp", NULL};
static const char *const raw_tags[] = {"script",  "style",    "xmp", "iframe",
                                       "noembed", "noframes", NULL};
static const char *const rcdata_tags[] = {"textarea", "title", NULL};
/* Attributes a reader sees (tooltips, image text, hints, screen readers). */
static const char *const text_attrs[] = {"title", "alt", "placeholder", "aria-label", NULL};
static const char *const content_type[] = {"content-type", NULL};
/* <meta name|property=... content=...> shown in search results and link
 * previews. */
static const char *const meta_text[] = {"description",
                                        "keywords",
                                        "author",
                                        "title",
                                        "og:title",
                                        "og:description",
                                        "og:site_name",
                                        "twitter:title",
                                        "twitter:description",
                                        NULL};

static int lc(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }
static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_ws(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }

/* s[0..n) is the lower-case word w, ignoring ASCII case. */
static int ieq(const char *s, size_t n, const char *w)
{
    size_t i = 0;
    for (; i < n && w[i]; i++)
        if (lc((unsigned char)s[i]) != w[i])
            return 0;
    return i == n && !w[i];
}

/* s[0..n) begins with the lower-case word w, ignoring ASCII case. */
static int iprefix(const char *s, size_t n, const char *w)
{
    for (size_t i = 0; w[i]; i++)
        if (i >= n || lc((unsigned char)s[i]) != w[i])
            return 0;
    return 1;
}

/* s[0..n), without surrounding white space, is one of list. */
static int in_list(const char *s, size_t n, const char *const *list)
{
    while (n && is_ws((unsigned char)*s))
        s++, n--;
    while (n && is_ws((unsigned char)s[n - 1]))
        n--;
    for (; *list; list++)
        if (ieq(s, n, *list))
            return 1;
    return 0;
}

/* A language tag naming Chinese: zh, zh-TW, zh_Hant ... (not zha). */
static int is_zh(const char *s, size_t n)
{
    while (n && is_ws((unsigned char)*s))
        s++, n--;
    while (n && is_ws((unsigned char)s[n - 1]))
        n--;
    return n >= 2 && lc((unsigned char)s[0]) == 'z' && lc((unsigned char)s[1]) == 'h' &&
           (n == 2 || s[2] == '-' || s[2] == '_');
}

static int copy(hw *w, size_t a, size_t b) { return fjf_emit_copy(w->in, a, b, w->out, w->err); }

/* Appends s in place of the input at `at`. */
static int put(hw *w, const char *s, size_t at)
{
    if (fjf_buf_append(w->out, s, strlen(s)) != 0) {
        fjf_error_set(w->err, at, "out of memory");
        return -1;
    }
    return 0;
}

/* Converts in[a..b). */
static int conv(hw *w, size_t a, size_t b)
{
    return fjf_emit_text(w->rw, w->in, a, b, w->out, w->err);
}

/* Element content: converted unless inside code. */
static int text(hw *w, size_t a, size_t b) { return w->code ? copy(w, a, b) : conv(w, a, b); }

/* ---- tags ---------------------------------------------------------------------- */

typedef struct hattr {
    size_t name, name_end;
    size_t val, val_end; /* the value without its quotes */
    int has_val;
} hattr;

/* The next attribute of a tag, from *pos (the tokenizer's attribute
 * states): 1 with *a; 0 at the tag's '>' (*pos; *slash: the '/' of a
 * closing "/>", else NONE); -1 when the input ends inside the tag. */
static int next_attr(const char *in, size_t len, size_t *pos, hattr *a, size_t *slash)
{
    size_t i = *pos;
    *slash = NONE;
    for (;;) {
        if (i >= len)
            return -1;
        if (is_ws((unsigned char)in[i])) {
            i++;
        } else if (in[i] == '/') {
            if (i + 1 < len && in[i + 1] == '>') {
                *slash = i;
                *pos = i + 1;
                return 0;
            }
            i++;
        } else if (in[i] == '>') {
            *pos = i;
            return 0;
        } else {
            break;
        }
    }
    /* The first character belongs to the name whatever it is (even '='). */
    a->name = i++;
    while (i < len && !is_ws((unsigned char)in[i]) && in[i] != '/' && in[i] != '>' && in[i] != '=')
        i++;
    a->name_end = a->val = a->val_end = i;
    a->has_val = 0;
    size_t j = i;
    while (j < len && is_ws((unsigned char)in[j]))
        j++;
    if (j < len && in[j] == '=') {
        j++;
        while (j < len && is_ws((unsigned char)in[j]))
            j++;
        if (j >= len)
            return -1;
        if (in[j] == '"' || in[j] == '\'') {
            const char *q = memchr(in + j + 1, in[j], len - j - 1);
            if (!q)
                return -1;
            a->val = j + 1;
            a->val_end = (size_t)(q - in);
            a->has_val = 1;
            i = a->val_end + 1;
        } else if (in[j] != '>') { /* "a=>": no value */
            size_t e = j;
            while (e < len && !is_ws((unsigned char)in[e]) && in[e] != '>')
                e++;
            if (e >= len)
                return -1;
            a->val = j;
            a->val_end = e;
            a->has_val = 1;
            i = e;
        } else {
            i = j;
        }
    }
    *pos = i;
    return 1;
}

/* The end of a tag name that starts at p. */
static size_t name_end(const char *in, size_t len, size_t p)
{
    while (p < len && !is_ws((unsigned char)in[p]) && in[p] != '/' && in[p] != '>')
        p++;
    return p;
}

/* in[p..] is the tag name `name` followed by what ends a tag name. */
static int named(const char *in, size_t len, size_t p, const char *name)
{
    size_t n = strlen(name);
    return p + n < len && iprefix(in + p, n, name) &&
           (is_ws((unsigned char)in[p + n]) || in[p + n] == '/' || in[p + n] == '>');
}

/* Where raw text or RCDATA of element `name` ends: its end tag, or len. */
static size_t find_end_tag(const char *in, size_t len, size_t i, const char *name)
{
    while (i < len) {
        const char *p = memchr(in + i, '<', len - i);
        if (!p)
            break;
        i = (size_t)(p - in);
        if (i + 1 < len && in[i + 1] == '/' && named(in, len, i + 2, name))
            return i;
        i++;
    }
    return len;
}

/* Where a script ends. Inside "<!--" a nested "<script>" hides the next
 * "</script>" (the tokenizer's script data escaped states). */
static size_t script_end(const char *in, size_t len, size_t i)
{
    int st = 0; /* 0 data, 1 escaped, 2 double escaped */
    for (; i < len; i++) {
        if (in[i] == '<' && i + 1 < len) {
            if (st == 0 && i + 3 < len && in[i + 1] == '!' && in[i + 2] == '-' &&
                in[i + 3] == '-') {
                st = 1;
                i += 3;
            } else if (in[i + 1] == '/' && named(in, len, i + 2, "script")) {
                if (st != 2)
                    return i;
                st = 1;
                i += 7;
            } else if (st == 1 && named(in, len, i + 1, "script")) {
                st = 2;
                i += 6;
            }
        } else if (in[i] == '>' && st != 0 && i >= 2 && in[i - 1] == '-' && in[i - 2] == '-') {
            st = 0;
        }
    }
    return len;
}

/* The charset value in the content of a Content-Type meta, in[a..b)
 * (the standard's "extracting a character encoding from a meta element"). */
static int content_charset(const char *in, size_t a, size_t b, size_t *cs, size_t *ce)
{
    size_t i = a;
    for (;;) {
        while (i + 7 <= b && !iprefix(in + i, b - i, "charset"))
            i++;
        if (i + 7 > b)
            return 0;
        i += 7;
        while (i < b && is_ws((unsigned char)in[i]))
            i++;
        if (i < b && in[i] == '=')
            break;
    }
    i++;
    while (i < b && is_ws((unsigned char)in[i]))
        i++;
    if (i >= b)
        return 0;
    if (in[i] == '"' || in[i] == '\'') {
        size_t j = i + 1;
        while (j < b && in[j] != in[i])
            j++;
        if (j >= b)
            return 0;
        *cs = i + 1;
        *ce = j;
    } else {
        size_t j = i;
        while (j < b && !is_ws((unsigned char)in[j]) && in[j] != ';')
            j++;
        *cs = i;
        *ce = j;
    }
    return 1;
}

/* A start tag at in[lt] == '<'; *next: where the document goes on. */
static int start_tag(hw *w, size_t lt, size_t *next)
{
    const char *in = w->in;
    size_t len = w->len, p = name_end(in, len, lt + 1);
    const char *name = in + lt + 1;
    size_t nlen = p - lt - 1;
    int is_meta = ieq(name, nlen, "meta"), is_html = ieq(name, nlen, "html");
    const char *lang = w->rw ? w->rw->lang : NULL;
    const char *charset = w->rw ? w->rw->charset : NULL;

    /* First pass: where the tag ends, and what its attributes say
     * (a meta's name may come after its content). */
    int meta_txt = 0, meta_type = 0, has_lang = 0, other_lang = 0, r;
    size_t q = p, slash;
    hattr a;
    while ((r = next_attr(in, len, &q, &a, &slash)) > 0) {
        const char *an = in + a.name, *av = in + a.val;
        size_t al = a.name_end - a.name, vl = a.val_end - a.val;
        if (is_meta && a.has_val && (ieq(an, al, "name") || ieq(an, al, "property")) &&
            in_list(av, vl, meta_text))
            meta_txt = 1;
        if (is_meta && a.has_val && ieq(an, al, "http-equiv") && in_list(av, vl, content_type))
            meta_type = 1;
        if (ieq(an, al, "lang"))
            has_lang = 1;
        if (ieq(an, al, "xml:lang") && a.has_val && !is_zh(av, vl))
            other_lang = 1;
    }
    if (r < 0) { /* cut off by the end: browsers drop it; we keep it */
        *next = len;
        return copy(w, lt, len);
    }
    size_t gt = q, end_slash = slash;

    /* Second pass: copy, converting or replacing values. */
    size_t c = lt;
    q = p;
    while (next_attr(in, len, &q, &a, &slash) > 0) {
        if (!a.has_val)
            continue;
        const char *an = in + a.name, *av = in + a.val;
        size_t al = a.name_end - a.name, vl = a.val_end - a.val;
        const char *repl = NULL;
        size_t ra = a.val, rb = a.val_end;
        if (in_list(an, al, text_attrs) || (is_meta && meta_txt && ieq(an, al, "content"))) {
            if (copy(w, c, a.val) || conv(w, a.val, a.val_end))
                return -1;
            c = a.val_end;
            continue;
        }
        if (lang && (ieq(an, al, "lang") || ieq(an, al, "xml:lang")) && is_zh(av, vl))
            repl = lang;
        else if (is_meta && charset && ieq(an, al, "charset"))
            repl = charset;
        else if (is_meta && meta_type && charset && ieq(an, al, "content") &&
                 content_charset(in, a.val, a.val_end, &ra, &rb))
            repl = charset;
        if (repl) {
            if (copy(w, c, ra) || put(w, repl, ra))
                return -1;
            c = rb;
        }
    }
    if (is_html && !w->seen_html && !w->fragment && lang && !has_lang && !other_lang) {
        size_t at = end_slash != NONE ? end_slash : gt;
        if (copy(w, c, at) || put(w, " lang=\"", at) || put(w, lang, at) || put(w, "\"", at))
            return -1;
        c = at;
    }
    if (is_html)
        w->seen_html = 1;
    if (copy(w, c, gt + 1))
        return -1;
    *next = gt + 1;

    /* The element's content. */
    for (int i = 0; raw_tags[i]; i++)
        if (ieq(name, nlen, raw_tags[i])) {
            size_t e =
                i == 0 ? script_end(in, len, gt + 1) : find_end_tag(in, len, gt + 1, raw_tags[i]);
            *next = e;
            return copy(w, gt + 1, e);
        }
    if (ieq(name, nlen, "plaintext")) {
        *next = len;
        return copy(w, gt + 1, len);
    }
    for (int i = 0; rcdata_tags[i]; i++)
        if (ieq(name, nlen, rcdata_tags[i])) {
            size_t e = find_end_tag(in, len, gt + 1, rcdata_tags[i]);
            *next = e;
            return text(w, gt + 1, e);
        }
    /* "<code/>" is an empty element to whoever wrote it. */
    if (end_slash == NONE && in_list(name, nlen, code_tags))
        w->code++;
    return 0;
}

/* An end tag at in[lt] == '<' (in[lt + 1] == '/'); copied as it is. */
static int end_tag(hw *w, size_t lt, size_t *next)
{
    size_t p = name_end(w->in, w->len, lt + 2), q = p, slash;
    hattr a;
    int r;
    while ((r = next_attr(w->in, w->len, &q, &a, &slash)) > 0)
        ;
    if (r < 0) {
        *next = w->len;
        return copy(w, lt, w->len);
    }
    if (w->code && in_list(w->in + lt + 2, p - lt - 2, code_tags))
        w->code--;
    *next = q + 1;
    return copy(w, lt, q + 1);
}

/* After the next '>' from i, or len. */
static size_t past_gt(const char *in, size_t len, size_t i)
{
    const char *p = i < len ? memchr(in + i, '>', len - i) : NULL;
    return p ? (size_t)(p - in) + 1 : len;
}

/* After pat from i, or len. */
static size_t past(const char *in, size_t len, size_t i, const char *pat)
{
    size_t n = strlen(pat);
    while (i + n <= len) {
        const char *p = memchr(in + i, pat[0], len - i - n + 1);
        if (!p)
            break;
        i = (size_t)(p - in);
        if (memcmp(in + i, pat, n) == 0)
            return i + n;
        i++;
    }
    return len;
}

/* A comment from in[i] ("<!--") to after its end, or len. */
static size_t comment_end(const char *in, size_t len, size_t i)
{
    i += 4;
    if (i < len && in[i] == '>') /* <!--> */
        return i + 1;
    if (i + 1 < len && in[i] == '-' && in[i + 1] == '>') /* <!---> */
        return i + 2;
    for (; i + 2 < len; i++) { /* "-->" or "--!>" */
        const char *p = memchr(in + i, '-', len - i - 2);
        if (!p)
            break;
        i = (size_t)(p - in);
        if (in[i + 1] != '-')
            continue;
        if (in[i + 2] == '>')
            return i + 3;
        if (in[i + 2] == '!' && i + 3 < len && in[i + 3] == '>')
            return i + 4;
    }
    return len;
}

/* <?...> in[a..b): an XML declaration gets the output encoding. */
static int pi(hw *w, size_t a, size_t b)
{
    const char *in = w->in;
    if (w->rw && w->rw->charset && b - a > 6 && memcmp(in + a, "<?xml", 5) == 0 &&
        is_ws((unsigned char)in[a + 5])) {
        for (size_t i = a + 5; i + 8 < b; i++) {
            if (memcmp(in + i, "encoding", 8) != 0 || !is_ws((unsigned char)in[i - 1]))
                continue;
            size_t j = i + 8;
            while (j < b && is_ws((unsigned char)in[j]))
                j++;
            if (j >= b || in[j] != '=')
                break;
            j++;
            while (j < b && is_ws((unsigned char)in[j]))
                j++;
            if (j >= b || (in[j] != '"' && in[j] != '\''))
                break;
            const char *q = memchr(in + j + 1, in[j], b - j - 1);
            if (!q)
                break;
            if (copy(w, a, j + 1) || put(w, w->rw->charset, j + 1))
                return -1;
            return copy(w, (size_t)(q - in), b);
        }
    }
    return copy(w, a, b);
}

static int run(hw *w)
{
    const char *in = w->in;
    size_t len = w->len, i = 0, t = 0; /* t: where the pending text began */
    if (len >= 3 && memcmp(in, "\xEF\xBB\xBF", 3) == 0) {
        if (copy(w, 0, 3))
            return -1;
        i = t = 3;
    }
    while (i < len) {
        const char *p = memchr(in + i, '<', len - i);
        if (!p)
            break;
        i = (size_t)(p - in);
        if (i + 1 >= len)
            break;
        unsigned char c = (unsigned char)in[i + 1];
        size_t next;
        if (is_alpha(c)) {
            if (text(w, t, i) || start_tag(w, i, &next))
                return -1;
        } else if (c == '/' && i + 2 < len && is_alpha((unsigned char)in[i + 2])) {
            if (text(w, t, i) || end_tag(w, i, &next))
                return -1;
        } else if (c == '/' && i + 2 < len) { /* "</>", or a bogus comment */
            next = past_gt(in, len, i + 2);
            if (text(w, t, i) || copy(w, i, next))
                return -1;
        } else if (c == '!') {
            if (i + 3 < len && in[i + 2] == '-' && in[i + 3] == '-')
                next = comment_end(in, len, i);
            else if (len - i >= 9 && memcmp(in + i, "<![CDATA[", 9) == 0)
                next = past(in, len, i + 9, "]]>");
            else /* <!DOCTYPE ...> and bogus comments */
                next = past_gt(in, len, i + 2);
            if (text(w, t, i) || copy(w, i, next))
                return -1;
        } else if (c == '?') {
            next = past_gt(in, len, i + 2);
            if (text(w, t, i) || pi(w, i, next))
                return -1;
        } else { /* a '<' in text: "a < b", "</" at the end */
            i++;
            continue;
        }
        i = t = next;
    }
    return text(w, t, len);
}

static int rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out, fjf_error *err,
                   int fragment)
{
    hw w;
    memset(&w, 0, sizeof w);
    w.in = in;
    w.len = len;
    w.rw = rw;
    w.out = out;
    w.err = err;
    w.fragment = fragment;
    return run(&w);
}

int fjf_html_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                     fjf_error *err)
{
    if (rw && rw->clean)
        return fjf_clean_then_rewrite(FJF_HTML, in, len, rw, out, err, fjf_html_rewrite);
    return rewrite(in, len, rw, out, err, 0);
}

int fjf_html_fragment_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                              fjf_error *err)
{
    return rewrite(in, len, rw, out, err, 1);
}

/* ---- boilerplate removal (docclean.h) ---------------------------------------------- */

/* Elements whose text is judged as one paragraph. */
static const char *const block_tags[] = {"p",  "li", "dd", "dt", "h1",         "h2",
                                         "h3", "h4", "h5", "h6", "blockquote", "figcaption",
                                         "td", "th", "div", NULL};
/* Inline elements a paragraph removed whole may hold; any other markup in
 * it (an image, a comment, code) keeps it. */
static const char *const inline_tags[] = {"a",    "span", "b",     "i",   "em",   "strong",
                                          "font", "u",    "s",     "small", "big", "sup",
                                          "sub",  "ins",  "del",   "mark", "q",   "cite",
                                          "abbr", "ruby", "rt",    "rp",  NULL};

#define MAX_BLOCKS 256

typedef struct open_block {
    size_t name, name_len;
    size_t start_tag; /* its '<' */
    int keep_tags;    /* only its content may go: a table cell (the columns
                         would shift), an element with an id (a link target) */
} open_block;

typedef struct cw {
    fjf_cleaner *c;
    const char *in;
    size_t len;
    int xml;
    open_block stack[MAX_BLOCKS];
    size_t depth;
    size_t code; /* open code, pre, kbd, samp */
    /* the run of text being read: from run_start to the next block tag or <br> */
    size_t run_start;
    size_t prev_br;    /* the <br> the run follows, or NONE */
    int from_start;    /* it began right after its block's start tag */
    int opaque;        /* it holds markup that is not plain inline text */
    long inline_depth; /* inline elements opened minus closed in it */
    long inline_low;
} cw;

static void run_begin(cw *w, size_t at, size_t prev_br, int from_start)
{
    fjfc_block_reset(w->c);
    w->run_start = at;
    w->prev_br = prev_br;
    w->from_start = from_start;
    w->opaque = 0;
    w->inline_depth = w->inline_low = 0;
}

/* How the run ended. */
enum { RUN_OTHER, RUN_BR, RUN_END };

static size_t skip_blanks_fwd(const char *in, size_t a, size_t b)
{
    while (a < b && is_ws((unsigned char)in[a]))
        a++;
    return a;
}

static size_t skip_blanks_back(const char *in, size_t a, size_t b)
{
    while (b > a && is_ws((unsigned char)in[b - 1]))
        b--;
    return b;
}

/* A <br> tag ends just before `at`, white space aside: where it starts,
 * or NONE. */
static size_t br_before(const char *in, size_t at)
{
    while (at > 0 && is_ws((unsigned char)in[at - 1]))
        at--;
    if (at == 0 || in[at - 1] != '>')
        return NONE;
    size_t i = at - 1, floor = at > 16 ? at - 16 : 0;
    while (i > floor && in[i] != '<')
        i--;
    return in[i] == '<' && i + 3 < at && lc((unsigned char)in[i + 1]) == 'b' &&
                   lc((unsigned char)in[i + 2]) == 'r' &&
                   (is_ws((unsigned char)in[i + 3]) || in[i + 3] == '/' || in[i + 3] == '>')
               ? i
               : NONE;
}

/* A <br> tag starts at `at`, white space aside: where it ends, or NONE. */
static size_t br_after(const char *in, size_t len, size_t at)
{
    while (at < len && is_ws((unsigned char)in[at]))
        at++;
    if (at + 3 >= len || in[at] != '<' || !named(in, len, at + 1, "br"))
        return NONE;
    const char *gt = memchr(in + at, '>', len - at < 16 ? len - at : 16);
    return gt ? (size_t)(gt - in) + 1 : NONE;
}

/* The run ends at in[lt] (the tag that ends it, which ends at tag_end). */
static int run_end(cw *w, int how, size_t lt, size_t tag_end)
{
    if (!w->depth)
        return 0;
    int whole = 0;
    if (fjfc_judge(w->c, &whole) != 0)
        return -1;
    if (!whole || w->opaque || w->inline_depth != 0 || w->inline_low < 0)
        return 0; /* partly boilerplate (cut), or not removable whole: kept */
    const char *in = w->in;
    size_t a = skip_blanks_fwd(in, w->run_start, lt), b = lt;
    if (how == RUN_END && w->from_start && w->prev_br == NONE && w->stack[w->depth - 1].keep_tags) {
        b = lt; /* its content, from its start tag to its end tag */
        a = w->run_start;
    } else if (how == RUN_END && w->from_start && w->prev_br == NONE) {
        /* The element, with the line it stands on. */
        size_t start = w->stack[w->depth - 1].start_tag;
        a = fjfc_line_start(in, start);
        b = fjfc_line_end(in, w->len, tag_end);
        if (a == FJF_NO_OFFSET || b == FJF_NO_OFFSET) { /* it shares its line: only the element */
            a = start;
            b = tag_end;
        }
    } else if (how == RUN_BR) {
        /* The line and its <br>; between blank lines (<br><br>, as scraped
         * chapters separate paragraphs), the blank line after it too. */
        size_t e = tag_end, next_br;
        if (w->prev_br != NONE && br_before(in, w->prev_br) != NONE &&
            (next_br = br_after(in, w->len, tag_end)) != NONE)
            e = next_br;
        b = fjfc_line_end(in, w->len, e);
        if (b == FJF_NO_OFFSET)
            b = e;
    } else if (how == RUN_END && w->prev_br != NONE) {
        a = w->prev_br; /* the last line of the block and the <br> before it */
        b = skip_blanks_back(in, w->run_start, lt);
    } else {
        b = skip_blanks_back(in, w->run_start, lt);
    }
    return fjfc_cut_whole(w->c, a, b);
}

/* Decodes the character reference at in[i] == '&' (before `end`) into
 * buf, for judging only (&nbsp; is a space there); its length, and
 * *ref_end; 0 when it is not one. */
static size_t char_ref(const char *in, size_t i, size_t end, char buf[8], size_t *ref_end)
{
    size_t j = i + 1;
    unsigned long cp = 0;
    if (j < end && in[j] == '#') {
        j++;
        int hex = j < end && (in[j] == 'x' || in[j] == 'X');
        if (hex)
            j++;
        size_t d0 = j;
        for (; j < end && j - d0 < 8; j++) {
            int ch = (unsigned char)in[j], v;
            if (ch >= '0' && ch <= '9')
                v = ch - '0';
            else if (hex && lc(ch) >= 'a' && lc(ch) <= 'f')
                v = lc(ch) - 'a' + 10;
            else
                break;
            cp = cp * (hex ? 16 : 10) + (unsigned long)v;
        }
        if (j == d0 || j >= end || in[j] != ';' || cp == 0 || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
    } else {
        static const struct {
            const char *name;
            unsigned long cp;
        } named_refs[] = {{"amp", '&'}, {"lt", '<'},     {"gt", '>'},
                          {"quot", '"'}, {"apos", '\''}, {"nbsp", ' '}};
        size_t n0 = j;
        while (j < end && j - n0 < 8 && is_alpha((unsigned char)in[j]))
            j++;
        if (j >= end || in[j] != ';')
            return 0;
        for (size_t k = 0; k < sizeof named_refs / sizeof named_refs[0]; k++)
            if (strlen(named_refs[k].name) == j - n0 &&
                memcmp(named_refs[k].name, in + n0, j - n0) == 0)
                cp = named_refs[k].cp;
        if (!cp) { /* unknown: judged as written, never cut */
            *ref_end = j + 1;
            size_t n = j + 1 - i < 8 ? j + 1 - i : 7;
            memcpy(buf, in + i, n);
            return n;
        }
    }
    *ref_end = j + 1;
    if (cp < 0x80) {
        buf[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        buf[0] = (char)(0xC0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        buf[0] = (char)(0xE0 | (cp >> 12));
        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    buf[0] = (char)(0xF0 | (cp >> 18));
    buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    buf[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Text in[a..b) in the current run. */
static int run_text(cw *w, size_t a, size_t b)
{
    if (!w->depth || a >= b)
        return 0;
    if (w->code) { /* judged with the rest, never cut, never removed */
        w->opaque = 1;
        return fjfc_add_decoded(w->c, a, b, w->in + a, b - a);
    }
    size_t t = a;
    for (size_t i = a; i < b; i++) {
        if (w->in[i] != '&')
            continue;
        char buf[8];
        size_t ref_end, n = char_ref(w->in, i, b, buf, &ref_end);
        if (!n)
            continue;
        if (fjfc_add_raw(w->c, t, i) != 0 || fjfc_add_decoded(w->c, i, ref_end, buf, n) != 0)
            return -1;
        t = ref_end;
        i = ref_end - 1;
    }
    return fjfc_add_raw(w->c, t, b);
}

static int same_name(const char *in, size_t a, size_t an, size_t b, size_t bn, int xml)
{
    if (an != bn)
        return 0;
    for (size_t i = 0; i < an; i++)
        if (xml ? in[a + i] != in[b + i]
                : lc((unsigned char)in[a + i]) != lc((unsigned char)in[b + i]))
            return 0;
    return 1;
}

static int is_named(const cw *w, const char *s, size_t n, const char *const *list)
{
    for (; *list; list++)
        if (w->xml ? (strlen(*list) == n && memcmp(s, *list, n) == 0) : ieq(s, n, *list))
            return 1;
    return 0;
}

static int clean_start_tag(cw *w, size_t lt, size_t *next)
{
    const char *in = w->in;
    size_t len = w->len, p = name_end(in, len, lt + 1), q = p, slash;
    const char *name = in + lt + 1;
    size_t nlen = p - lt - 1;
    hattr a;
    int r, has_id = 0;
    while ((r = next_attr(in, len, &q, &a, &slash)) > 0)
        if (ieq(in + a.name, a.name_end - a.name, "id") ||
            ieq(in + a.name, a.name_end - a.name, "xml:id") ||
            ieq(in + a.name, a.name_end - a.name, "name"))
            has_id = 1;
    if (r < 0) {
        *next = len;
        w->opaque = 1;
        return 0;
    }
    *next = q + 1;
    int self_closing = slash != NONE;
    for (int i = 0; raw_tags[i]; i++)
        if (ieq(name, nlen, raw_tags[i])) {
            w->opaque = 1;
            if (!self_closing || !w->xml)
                *next = i == 0 ? script_end(in, len, q + 1) : find_end_tag(in, len, q + 1, raw_tags[i]);
            return 0;
        }
    for (int i = 0; rcdata_tags[i]; i++)
        if (ieq(name, nlen, rcdata_tags[i])) {
            w->opaque = 1;
            if (!self_closing || !w->xml)
                *next = find_end_tag(in, len, q + 1, rcdata_tags[i]);
            return 0;
        }
    if (ieq(name, nlen, "plaintext")) {
        w->opaque = 1;
        *next = len;
        return 0;
    }
    if (is_named(w, name, nlen, block_tags)) {
        if (self_closing && w->xml)
            return 0; /* <p/>: empty */
        if (run_end(w, RUN_OTHER, lt, q + 1) != 0)
            return -1;
        if (w->depth == MAX_BLOCKS) { /* too deep to follow: left alone */
            run_begin(w, q + 1, NONE, 0);
            w->opaque = 1;
            return 0;
        }
        w->stack[w->depth++] = (open_block){
            lt + 1, nlen, lt,
            has_id || is_named(w, name, nlen, (const char *const[]){"td", "th", NULL})};
        run_begin(w, q + 1, NONE, 1);
        return 0;
    }
    if (is_named(w, name, nlen, (const char *const[]){"br", NULL})) {
        if (!w->depth)
            return 0;
        if (run_end(w, RUN_BR, lt, q + 1) != 0)
            return -1;
        run_begin(w, q + 1, lt, 0);
        return 0;
    }
    if (in_list(name, nlen, code_tags)) {
        w->opaque = 1;
        if (!self_closing)
            w->code++;
        return 0;
    }
    if (is_named(w, name, nlen, inline_tags) && !self_closing && !has_id) {
        w->inline_depth++;
        return 0;
    }
    w->opaque = 1;
    return 0;
}

static int clean_end_tag(cw *w, size_t lt, size_t *next)
{
    const char *in = w->in;
    size_t len = w->len, p = name_end(in, len, lt + 2), q = p, slash;
    const char *name = in + lt + 2;
    size_t nlen = p - lt - 2;
    hattr a;
    int r;
    while ((r = next_attr(in, len, &q, &a, &slash)) > 0)
        ;
    if (r < 0) {
        *next = len;
        w->opaque = 1;
        return 0;
    }
    *next = q + 1;
    if (in_list(name, nlen, code_tags)) {
        w->opaque = 1;
        if (w->code)
            w->code--;
        return 0;
    }
    if (is_named(w, name, nlen, block_tags)) {
        size_t k = w->depth;
        while (k > 0 && !same_name(in, w->stack[k - 1].name, w->stack[k - 1].name_len, lt + 2,
                                   nlen, w->xml))
            k--;
        if (k == 0) { /* no such open block */
            w->opaque = 1;
            return 0;
        }
        if (run_end(w, k == w->depth ? RUN_END : RUN_OTHER, lt, q + 1) != 0)
            return -1;
        w->depth = k - 1;
        run_begin(w, q + 1, NONE, 0);
        return 0;
    }
    if (is_named(w, name, nlen, inline_tags)) {
        if (--w->inline_depth < w->inline_low)
            w->inline_low = w->inline_depth;
        return 0;
    }
    w->opaque = 1;
    return 0;
}

int fjf_html_clean_blocks(fjf_cleaner *c, int xml)
{
    cw w;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.in = c->in;
    w.len = c->len;
    w.xml = xml;
    run_begin(&w, 0, NONE, 0);
    const char *in = w.in;
    size_t len = w.len, i = 0, t = 0;
    while (i < len) {
        const char *p = memchr(in + i, '<', len - i);
        if (!p)
            break;
        i = (size_t)(p - in);
        if (i + 1 >= len)
            break;
        unsigned char ch = (unsigned char)in[i + 1];
        size_t next;
        if (is_alpha(ch)) {
            if (run_text(&w, t, i) || clean_start_tag(&w, i, &next))
                return -1;
        } else if (ch == '/' && i + 2 < len && is_alpha((unsigned char)in[i + 2])) {
            if (run_text(&w, t, i) || clean_end_tag(&w, i, &next))
                return -1;
        } else if (ch == '/' && i + 2 < len) {
            next = past_gt(in, len, i + 2);
            if (run_text(&w, t, i))
                return -1;
            w.opaque = 1;
        } else if (ch == '!' || ch == '?') {
            if (ch == '!' && i + 3 < len && in[i + 2] == '-' && in[i + 3] == '-')
                next = comment_end(in, len, i);
            else if (ch == '!' && len - i >= 9 && memcmp(in + i, "<![CDATA[", 9) == 0)
                next = past(in, len, i + 9, "]]>");
            else if (ch == '?' && xml) /* an XML processing instruction may hold '>' */
                next = past(in, len, i + 2, "?>");
            else
                next = past_gt(in, len, i + 2);
            if (run_text(&w, t, i))
                return -1;
            w.opaque = 1;
        } else {
            i++;
            continue;
        }
        i = t = next;
    }
    if (run_text(&w, t, len))
        return -1;
    return run_end(&w, RUN_OTHER, len, len);
}
