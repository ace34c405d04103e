/* fanjian formats: XML documents (XHTML, the EPUB package document, the NCX).
 *
 * The document is never re-serialised. Expat parses it in one call only to
 * tell where things are (XML_GetCurrentByteIndex/ByteCount); the pass
 * records edits (byte ranges of text, attribute values, a few literals) and,
 * once the whole document is known to be well-formed, the output is the
 * input with just those ranges replaced.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <expat.h>

#include "docclean.h"
#include "dynload.h"
#include "fanjian-formats.h"

#define DC_NS "http://purl.org/dc/elements/1.1/"

enum edit_type {
    E_TEXT,   /* in[start..end) through rw->text */
    E_LITERAL /* in[start..end) replaced by lit (an insertion when empty) */
};

typedef struct edit {
    size_t start, end;
    enum edit_type type;
    const char *lit;
} edit;

/* What the text at the current point is. */
enum { T_NONE = 0, T_TEXT, T_LANG };

/* Flags of one open element. */
enum {
    F_SKIP = 1u << 0,  /* XHTML: script, style, code, pre, kbd, samp */
    F_CONV = 1u << 1,  /* OPF: a converted Dublin Core or meta element; NCX: <text> */
    F_LANG = 1u << 2,  /* OPF: dc:language */
    F_LABEL = 1u << 3, /* NCX: docTitle, docAuthor, navLabel */
    F_NSDECL = 1u << 4 /* OPF: declared namespace prefixes */
};

/* A namespace prefix in scope (OPF only: Dublin Core is found by its URI). */
typedef struct nsbind {
    char *prefix; /* "" for the default namespace */
    size_t depth;
    int is_dc;
} nsbind;

typedef struct xctx {
    XML_Parser p;
    fjf_xml_kind kind;
    const char *in;
    size_t len;
    const char *lang, *charset;
    char *lang_insert; /* ` xml:lang="X" lang="X"` */

    edit *edits;
    size_t nedits, capedits;
    size_t floor; /* no edit may start before this (end of the last one) */

    size_t span_start, span_end;
    int span_type; /* T_NONE: no span open */

    unsigned char *stack;
    size_t depth, capstack;
    size_t skip, conv, langs; /* open F_SKIP, F_CONV, F_LANG elements */

    nsbind *ns;
    size_t nns, capns;

    int failed; /* 1: out of memory */
    int entities; /* the DTD declares internal general entities */
} xctx;

/* ---- small helpers -------------------------------------------------------------- */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static const char *local_name(const char *qname)
{
    const char *c = strrchr(qname, ':');
    return c ? c + 1 : qname;
}

static int all_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_space(s[i]))
            return 0;
    return 1;
}

/* Trims XML white space off [*a, *b). */
static void trim(const char *s, size_t *a, size_t *b)
{
    while (*a < *b && is_space(s[*a]))
        (*a)++;
    while (*b > *a && is_space(s[*b - 1]))
        (*b)--;
}

/* A language tag naming Chinese: "zh", or "zh-..." ("zha" is Zhuang). */
static int is_zh(const char *s, size_t n)
{
    return n >= 2 && (s[0] == 'z' || s[0] == 'Z') && (s[1] == 'h' || s[1] == 'H') &&
           (n == 2 || s[2] == '-' || s[2] == '_');
}

/* Values we write into attributes unescaped, so they must need no escaping. */
static int safe_value(const char *v, const char *extra)
{
    if (!v || !*v)
        return 0;
    for (; *v; v++)
        if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') || (*v >= '0' && *v <= '9') ||
              strchr(extra, *v)))
            return 0;
    return 1;
}

static const char *att_value(const char **atts, const char *name)
{
    for (size_t i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], name) == 0)
            return atts[i + 1];
    return NULL;
}

/* ---- the raw bytes of a tag ---------------------------------------------------------- */

/* One attribute of a tag as written: its name and the bytes between the quotes. */
typedef struct raw_attr {
    const char *name;
    size_t name_len;
    size_t value_start, value_end; /* offsets into the tag */
} raw_attr;

/* The next attribute of tag[0..n) from *pos (just after the element name or
 * "<?xml"); 1 with *a set, 0 at the end of the tag. The tag is known to be
 * well-formed, but every step is bounded anyway. */
static int next_attr(const char *tag, size_t n, size_t *pos, raw_attr *a)
{
    size_t i = *pos;
    while (i < n && is_space(tag[i]))
        i++;
    if (i >= n || tag[i] == '>' || tag[i] == '/' || tag[i] == '?')
        return 0;
    size_t ns = i;
    while (i < n && tag[i] != '=' && !is_space(tag[i]))
        i++;
    a->name = tag + ns;
    a->name_len = i - ns;
    while (i < n && is_space(tag[i]))
        i++;
    if (i >= n || tag[i] != '=')
        return 0;
    i++;
    while (i < n && is_space(tag[i]))
        i++;
    if (i >= n || (tag[i] != '"' && tag[i] != '\''))
        return 0;
    char q = tag[i++];
    size_t vs = i;
    while (i < n && tag[i] != q)
        i++;
    if (i >= n)
        return 0;
    a->value_start = vs;
    a->value_end = i;
    *pos = i + 1;
    return 1;
}

/* Past the element name: the first attribute starts after it. */
static size_t after_name(const char *tag, size_t n)
{
    size_t i = 1; /* '<' */
    while (i < n && !is_space(tag[i]) && tag[i] != '>' && tag[i] != '/')
        i++;
    return i;
}

static int name_is(const raw_attr *a, const char *name)
{
    return a->name_len == strlen(name) && memcmp(a->name, name, a->name_len) == 0;
}

/* ---- edits ---------------------------------------------------------------------- */

/* Out of memory: the parse stops. */
static void stop(xctx *x)
{
    x->failed = 1;
    EXPAT(XML_StopParser)(x->p, XML_FALSE);
}

static void add_edit(xctx *x, size_t start, size_t end, enum edit_type type, const char *lit)
{
    if (x->failed)
        return;
    if (start < x->floor || end < start || end > x->len)
        return; /* cannot happen on positions expat gives; never corrupt the output */
    if (x->nedits == x->capedits) {
        size_t cap = x->capedits ? x->capedits * 2 : 64;
        edit *e = realloc(x->edits, cap * sizeof *e);
        if (!e) {
            stop(x);
            return;
        }
        x->edits = e;
        x->capedits = cap;
    }
    x->edits[x->nedits++] = (edit){start, end, type, lit};
    x->floor = end;
}

/* Closes the open text span: it becomes an edit if there is anything to do. */
static void flush(xctx *x)
{
    int type = x->span_type;
    size_t a = x->span_start, b = x->span_end;
    x->span_type = T_NONE;
    if (type == T_TEXT) {
        if (!all_space(x->in + a, b - a))
            add_edit(x, a, b, E_TEXT, NULL);
    } else if (type == T_LANG) {
        trim(x->in, &a, &b);
        if (is_zh(x->in + a, b - a))
            add_edit(x, a, b, E_LITERAL, x->lang);
    }
}

static int text_type(const xctx *x)
{
    switch (x->kind) {
    case FJF_XML_XHTML:
        return x->depth > 0 && x->skip == 0 ? T_TEXT : T_NONE;
    case FJF_XML_OPF:
        if (x->conv)
            return T_TEXT;
        return x->langs && x->lang ? T_LANG : T_NONE;
    case FJF_XML_NCX:
        return x->conv ? T_TEXT : T_NONE;
    }
    return T_NONE;
}

/* Text at the parser's current event. Events that touch are one span, so
 * the converter sees a paragraph, not its lines; a span is a union of whole
 * tokens and so never cuts a UTF-8 character. */
static void add_text(xctx *x)
{
    int type = text_type(x);
    if (type == T_NONE)
        return;
    XML_Index idx = EXPAT(XML_GetCurrentByteIndex)(x->p);
    int cnt = EXPAT(XML_GetCurrentByteCount)(x->p);
    if (idx < 0 || cnt <= 0)
        return; /* text from entity expansion: not in the input */
    size_t s = (size_t)idx, e = s + (size_t)cnt;
    if (s < x->floor || e > x->len)
        return;
    if (x->span_type == type && s == x->span_end) {
        x->span_end = e;
        return;
    }
    if (x->span_type != T_NONE && s < x->span_end)
        return; /* overlaps what is open: not input bytes of its own */
    flush(x);
    x->span_type = type;
    x->span_start = s;
    x->span_end = e;
}

/* ---- the expat handlers ---------------------------------------------------------------- */

static void on_chars(void *ud, const XML_Char *s, int len)
{
    (void)s;
    (void)len;
    add_text(ud);
}

/* With a default handler set, expat does not expand internal entities in
 * content but passes their references here as written, as it does those
 * of an external DTD it never reads: they stay in the span, as the
 * converter leaves ASCII be. (on_entity has them checked.) */
static void on_default(void *ud, const XML_Char *s, int len)
{
    xctx *x = ud;
    if (len > 1 && s[0] == '&' && x->depth > 0)
        add_text(x);
}

static int push(xctx *x, unsigned char flags)
{
    if (x->depth == x->capstack) {
        size_t cap = x->capstack ? x->capstack * 2 : 32;
        unsigned char *st = realloc(x->stack, cap);
        if (!st) {
            stop(x);
            return -1;
        }
        x->stack = st;
        x->capstack = cap;
    }
    x->stack[x->depth++] = flags;
    return 0;
}

static int ns_is_dc(const xctx *x, const char *qname)
{
    const char *c = strchr(qname, ':');
    size_t plen = c ? (size_t)(c - qname) : 0;
    for (size_t i = x->nns; i-- > 0;)
        if (strlen(x->ns[i].prefix) == plen && memcmp(x->ns[i].prefix, qname, plen) == 0)
            return x->ns[i].is_dc;
    return 0;
}

/* Records the xmlns and xmlns:p declarations of a start tag; 1 if any. */
static int ns_declare(xctx *x, const char **atts)
{
    int any = 0;
    for (size_t i = 0; atts[i]; i += 2) {
        const char *n = atts[i], *prefix;
        if (strcmp(n, "xmlns") == 0)
            prefix = "";
        else if (strncmp(n, "xmlns:", 6) == 0)
            prefix = n + 6;
        else
            continue;
        if (x->nns == x->capns) {
            size_t cap = x->capns ? x->capns * 2 : 8;
            nsbind *b = realloc(x->ns, cap * sizeof *b);
            if (!b)
                goto nomem;
            x->ns = b;
            x->capns = cap;
        }
        char *p = strdup(prefix);
        if (!p)
            goto nomem;
        x->ns[x->nns++] = (nsbind){p, x->depth, strcmp(atts[i + 1], DC_NS) == 0};
        any = 1;
    }
    return any;
nomem:
    stop(x);
    return any;
}

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

static const char *const xhtml_skip[] = {"script", "style", "code", "pre", "kbd", "samp", NULL};
static const char *const xhtml_attrs[] = {"title", "alt", "placeholder", "aria-label", NULL};
static const char *const dc_text[] = {"title",   "creator",   "contributor", "description",
                                      "subject", "publisher", NULL};
static const char *const meta_text[] = {"dcterms:title",   "dcterms:creator",
                                        "dcterms:contributor", "dcterms:description",
                                        "dcterms:subject", "dcterms:publisher", NULL};

/* In a <meta http-equiv="Content-Type" content="...; charset=X">, where X is. */
static int content_charset(const char *v, size_t n, size_t *a, size_t *b)
{
    for (size_t i = 0; i + 8 <= n; i++) {
        if (strncasecmp(v + i, "charset=", 8) != 0)
            continue;
        size_t j = i + 8;
        size_t k = j;
        while (k < n && v[k] != ';' && !is_space(v[k]) && v[k] != '"' && v[k] != '\'')
            k++;
        if (k == j)
            return 0;
        *a = j;
        *b = k;
        return 1;
    }
    return 0;
}

static void on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    xctx *x = ud;
    if (x->failed)
        return;
    flush(x);
    XML_Index idx = EXPAT(XML_GetCurrentByteIndex)(x->p);
    int cnt = EXPAT(XML_GetCurrentByteCount)(x->p);
    const char *local = local_name(name);
    unsigned char flags = 0;
    int root = x->depth == 0;

    if (x->kind == FJF_XML_XHTML) {
        if (in_list(local, xhtml_skip))
            flags |= F_SKIP;
    } else if (x->kind == FJF_XML_OPF) {
        if (ns_declare(x, atts))
            flags |= F_NSDECL;
        if (x->failed)
            return;
        if (ns_is_dc(x, name)) {
            if (in_list(local, dc_text))
                flags |= F_CONV;
            else if (strcmp(local, "language") == 0)
                flags |= F_LANG;
        }
        if (!(flags & (F_CONV | F_LANG)) && strcmp(local, "meta") == 0) {
            const char *prop = att_value(atts, "property");
            if (prop && in_list(prop, meta_text))
                flags |= F_CONV;
        }
    } else {
        if (strcmp(local, "docTitle") == 0 || strcmp(local, "docAuthor") == 0 ||
            strcmp(local, "navLabel") == 0)
            flags |= F_LABEL;
        else if (strcmp(local, "text") == 0 && x->depth > 0 &&
                 (x->stack[x->depth - 1] & F_LABEL))
            flags |= F_CONV;
    }

    /* Attributes, as written in the tag. */
    if (idx >= 0 && cnt > 0 && (size_t)idx + (size_t)cnt <= x->len) {
        const char *tag = x->in + idx;
        size_t n = (size_t)cnt, pos = after_name(tag, n);
        int has_lang = 0, is_meta = x->kind == FJF_XML_XHTML && strcmp(local, "meta") == 0;
        const char *equiv = is_meta ? att_value(atts, "http-equiv") : NULL;
        raw_attr a;
        while (next_attr(tag, n, &pos, &a)) {
            size_t vs = (size_t)idx + a.value_start, ve = (size_t)idx + a.value_end;
            int lang_attr = name_is(&a, "xml:lang") ||
                            (x->kind == FJF_XML_XHTML && name_is(&a, "lang"));
            if (lang_attr)
                has_lang = 1;
            if (x->kind == FJF_XML_XHTML) {
                for (const char *const *l = xhtml_attrs; *l; l++)
                    if (name_is(&a, *l) && !all_space(x->in + vs, ve - vs))
                        add_edit(x, vs, ve, E_TEXT, NULL);
            }
            if (lang_attr && x->lang) {
                size_t ts = vs, te = ve;
                trim(x->in, &ts, &te);
                if (is_zh(x->in + ts, te - ts))
                    add_edit(x, ts, te, E_LITERAL, x->lang);
            }
            if (is_meta && x->charset) {
                size_t cs, ce;
                if (name_is(&a, "charset")) {
                    size_t ts = vs, te = ve;
                    trim(x->in, &ts, &te);
                    if (te > ts)
                        add_edit(x, ts, te, E_LITERAL, x->charset);
                } else if (name_is(&a, "content") && equiv &&
                           strcasecmp(equiv, "content-type") == 0 &&
                           content_charset(x->in + vs, ve - vs, &cs, &ce)) {
                    add_edit(x, vs + cs, vs + ce, E_LITERAL, x->charset);
                }
            }
        }
        if (root && x->kind == FJF_XML_XHTML && x->lang_insert && !has_lang &&
            strcmp(local, "html") == 0 && n >= 2) {
            size_t at = n - 1; /* before '>' */
            if (tag[n - 2] == '/')
                at = n - 2;
            add_edit(x, (size_t)idx + at, (size_t)idx + at, E_LITERAL, x->lang_insert);
        }
    }

    if (push(x, flags) < 0)
        return;
    if (flags & F_SKIP)
        x->skip++;
    if (flags & F_CONV)
        x->conv++;
    if (flags & F_LANG)
        x->langs++;
}

static void on_end(void *ud, const XML_Char *name)
{
    xctx *x = ud;
    (void)name;
    if (x->failed || x->depth == 0)
        return;
    flush(x);
    unsigned char flags = x->stack[--x->depth];
    if (flags & F_SKIP)
        x->skip--;
    if (flags & F_CONV)
        x->conv--;
    if (flags & F_LANG)
        x->langs--;
    if (flags & F_NSDECL) {
        while (x->nns > 0 && x->ns[x->nns - 1].depth == x->depth)
            free(x->ns[--x->nns].prefix);
    }
}

static void on_xmldecl(void *ud, const XML_Char *version, const XML_Char *encoding,
                       int standalone)
{
    xctx *x = ud;
    (void)version;
    (void)standalone;
    if (!x->charset || !encoding)
        return;
    XML_Index idx = EXPAT(XML_GetCurrentByteIndex)(x->p);
    int cnt = EXPAT(XML_GetCurrentByteCount)(x->p);
    if (idx < 0 || cnt < 5 || (size_t)idx + (size_t)cnt > x->len)
        return;
    const char *decl = x->in + idx;
    size_t pos = 5; /* "<?xml" */
    raw_attr a;
    while (next_attr(decl, (size_t)cnt, &pos, &a))
        if (name_is(&a, "encoding"))
            add_edit(x, (size_t)idx + a.value_start, (size_t)idx + a.value_end, E_LITERAL,
                     x->charset);
}

/* Internal entities are not expanded in the rewrite pass, so a document
 * that declares any is checked again, expanding them: their replacement
 * text must be well-formed too (expat's amplification limits apply). */
static void on_entity(void *ud, const XML_Char *name, int is_parameter, const XML_Char *value,
                      int value_length, const XML_Char *base, const XML_Char *system_id,
                      const XML_Char *public_id, const XML_Char *notation)
{
    xctx *x = ud;
    (void)name;
    (void)value_length;
    (void)base;
    (void)system_id;
    (void)public_id;
    (void)notation;
    if (!is_parameter && value)
        x->entities = 1;
}

/* A parse error is always at a place in the input (fanjian-formats.h, fjf_error): where
 * expat gives none, at the end, where parsing stopped. */
static void set_parse_error(XML_Parser p, size_t len, fjf_error *err)
{
    XML_Index idx = EXPAT(XML_GetCurrentByteIndex)(p);
    fjf_error_set(err, idx < 0 || (size_t)idx > len ? len : (size_t)idx, "line %lu, column %lu: %s",
                  (unsigned long)EXPAT(XML_GetCurrentLineNumber)(p),
                  (unsigned long)EXPAT(XML_GetCurrentColumnNumber)(p) + 1,
                  EXPAT(XML_ErrorString)(EXPAT(XML_GetErrorCode)(p)));
}

/* ---- the rewrite ------------------------------------------------------------------- */

static int apply(const xctx *x, const fjf_rewrite *rw, fjf_buf *out, fjf_error *err)
{
    size_t pos = 0;
    for (size_t i = 0; i < x->nedits; i++) {
        const edit *e = &x->edits[i];
        if (fjf_buf_append(out, x->in + pos, e->start - pos) < 0)
            goto nomem;
        if (e->type == E_LITERAL) {
            if (fjf_buf_append(out, e->lit, strlen(e->lit)) < 0)
                goto nomem;
        } else if (rw && rw->text) {
            if (rw->text(rw->text_ctx, x->in + e->start, e->end - e->start, out) < 0) {
                fjf_error_set(err, e->start, "converting the text at byte %zu failed", e->start);
                return -1;
            }
        } else if (fjf_buf_append(out, x->in + e->start, e->end - e->start) < 0) {
            goto nomem;
        }
        pos = e->end;
    }
    if (fjf_buf_append(out, x->in + pos, x->len - pos) < 0)
        goto nomem;
    return 0;
nomem:
    fjf_error_set(err, FJF_NO_OFFSET, "out of memory");
    return -1;
}

static int xhtml_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                         fjf_error *err)
{
    return fjf_xml_rewrite(FJF_XML_XHTML, in, len, rw, out, err);
}

int fjf_xml_rewrite(fjf_xml_kind kind, const char *in, size_t len, const fjf_rewrite *rw,
                    fjf_buf *out, fjf_error *err)
{
    /* Boilerplate is looked for in XHTML only: a title, a TOC entry or a
     * package's metadata is not a site notice. The cleaned document is
     * parsed again, so what comes out is well-formed. */
    if (kind == FJF_XML_XHTML && rw && rw->clean)
        return fjf_clean_then_rewrite(FJF_XHTML, in, len, rw, out, err, xhtml_rewrite);
    const unsigned char *u = (const unsigned char *)in;
    if (len > INT_MAX) {
        fjf_error_set(err, FJF_NO_OFFSET, "document too large (%zu bytes)", len);
        return -1;
    }
    /* UTF-16 or UTF-32 here means the caller did not decode it. */
    if (len >= 2 && (u[0] == 0 || u[1] == 0 || (u[0] == 0xFE && u[1] == 0xFF) ||
                     (u[0] == 0xFF && u[1] == 0xFE))) {
        fjf_error_set(err, 0, "UTF-16 and UTF-32 documents are not supported (only UTF-8)");
        return -1;
    }
    const char *lang = rw ? rw->lang : NULL, *charset = rw ? rw->charset : NULL;
    if (lang && !safe_value(lang, "-_")) {
        fjf_error_set(err, FJF_NO_OFFSET, "invalid language tag \"%s\"", lang);
        return -1;
    }
    if (charset && !safe_value(charset, "-_.:+()")) {
        fjf_error_set(err, FJF_NO_OFFSET, "invalid charset name \"%s\"", charset);
        return -1;
    }

    xctx x;
    memset(&x, 0, sizeof x);
    x.kind = kind;
    x.in = in;
    x.len = len;
    x.lang = lang;
    x.charset = charset;
    int rc = -1;
    size_t out_len0 = out->len;
    if (lang && kind == FJF_XML_XHTML) {
        size_t n = strlen(lang) * 2 + 32;
        x.lang_insert = malloc(n);
        if (!x.lang_insert)
            goto nomem;
        snprintf(x.lang_insert, n, " xml:lang=\"%s\" lang=\"%s\"", lang, lang);
    }
    /* The input is UTF-8 whatever it declares (the caller has decoded it),
     * so expat is told so. No namespace processing: an unbound prefix
     * (epub:type without its declaration is common) is not a reason to
     * refuse a book. No external entity is ever loaded; expat's
     * amplification limits stay on. */
    char why[200];
    if (!fjf_expat_api_load(why, sizeof why)) {
        fjf_error_set(err, FJF_NO_OFFSET, "%s", why);
        goto done;
    }
    x.p = EXPAT(XML_ParserCreate)("UTF-8");
    if (!x.p)
        goto nomem;
    EXPAT(XML_SetUserData)(x.p, &x);
    EXPAT(XML_SetElementHandler)(x.p, on_start, on_end);
    EXPAT(XML_SetCharacterDataHandler)(x.p, on_chars);
    EXPAT(XML_SetDefaultHandler)(x.p, on_default);
    EXPAT(XML_SetXmlDeclHandler)(x.p, on_xmldecl);
    EXPAT(XML_SetEntityDeclHandler)(x.p, on_entity);

    if (EXPAT(XML_Parse)(x.p, in, (int)len, 1) != XML_STATUS_OK || x.failed) {
        if (x.failed)
            goto nomem;
        set_parse_error(x.p, len, err);
        goto done;
    }
    if (x.entities) {
        XML_Parser check = EXPAT(XML_ParserCreate)("UTF-8");
        if (!check)
            goto nomem;
        int ok = EXPAT(XML_Parse)(check, in, (int)len, 1) == XML_STATUS_OK;
        if (!ok)
            set_parse_error(check, len, err);
        EXPAT(XML_ParserFree)(check);
        if (!ok)
            goto done;
    }
    flush(&x);
    if (x.failed)
        goto nomem;
    rc = apply(&x, rw, out, err);
    goto done;
nomem:
    fjf_error_set(err, FJF_NO_OFFSET, "out of memory");
done:
    if (rc < 0)
        out->len = out_len0;
    if (x.p)
        EXPAT(XML_ParserFree)(x.p);
    while (x.nns > 0)
        free(x.ns[--x.nns].prefix);
    free(x.ns);
    free(x.stack);
    free(x.edits);
    free(x.lang_insert);
    return rc;
}
