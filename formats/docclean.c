/* fanjian formats: removing boilerplate from documents (docclean.h). */
#include <stdlib.h>
#include <string.h>

#include "docclean.h"

/* Spans asked for at once; a block with more is asked again (fj_clean_find
 * says how many there are). */
#define SPANS_AT_ONCE 16

void fjfc_init(fjf_cleaner *c, const char *in, size_t len, const fjf_rewrite *rw, fjf_error *err)
{
    memset(c, 0, sizeof *c);
    c->in = in;
    c->len = len;
    c->rw = rw;
    c->err = err;
    c->line = c->column = 1;
}

void fjfc_free(fjf_cleaner *c)
{
    free(c->cuts);
    free(c->pieces);
    fjf_buf_free(&c->text);
    c->cuts = NULL;
    c->pieces = NULL;
}

void fjfc_block_reset(fjf_cleaner *c)
{
    c->text.len = 0;
    c->npieces = 0;
}

static int add_piece(fjf_cleaner *c, size_t a, size_t b, const char *text, size_t n, int raw)
{
    if (raw == 1 && c->npieces) { /* contiguous raw text is one piece */
        fjfc_piece *last = &c->pieces[c->npieces - 1];
        if (last->raw == 1 && last->in_at + last->len == a) {
            last->len += b - a;
            return fjf_buf_append(&c->text, text, n);
        }
    }
    if (c->npieces == c->cappieces) {
        size_t cap = c->cappieces ? c->cappieces * 2 : 16;
        fjfc_piece *p = realloc(c->pieces, cap * sizeof *p);
        if (!p)
            return -1;
        c->pieces = p;
        c->cappieces = cap;
    }
    c->pieces[c->npieces++] = (fjfc_piece){c->text.len, a, raw ? b - a : n, raw};
    return fjf_buf_append(&c->text, text, n);
}

int fjfc_add_raw(fjf_cleaner *c, size_t a, size_t b)
{
    size_t at = c->text.len;
    if (b <= a)
        return 0;
    if (add_piece(c, a, b, c->in + a, b - a, 1) != 0) {
        fjf_error_set(c->err, a, "out of memory");
        return -1;
    }
    /* Line breaks inside a block are spaces to a reader; fj_clean_find
     * judges one line, and the length stays the same. */
    for (size_t i = at; i < c->text.len; i++)
        if (c->text.data[i] == '\n' || c->text.data[i] == '\r' || c->text.data[i] == '\t')
            c->text.data[i] = ' ';
    return 0;
}

int fjfc_add_atomic(fjf_cleaner *c, size_t a, size_t b)
{
    if (b <= a)
        return 0;
    if (add_piece(c, a, b, c->in + a, b - a, 2) != 0) {
        fjf_error_set(c->err, a, "out of memory");
        return -1;
    }
    return 0;
}

int fjfc_add_decoded(fjf_cleaner *c, size_t a, size_t b, const char *text, size_t n)
{
    if (add_piece(c, a, b, text, n, 0) != 0) {
        fjf_error_set(c->err, a, "out of memory");
        return -1;
    }
    return 0;
}

/* Line and column of in[at], counted on from the last place asked for. */
static void where(fjf_cleaner *c, size_t at, unsigned long long *line, unsigned long long *column)
{
    if (at < c->pos_at) {
        c->pos_at = 0;
        c->line = c->column = 1;
    }
    for (; c->pos_at < at; c->pos_at++) {
        unsigned char ch = (unsigned char)c->in[c->pos_at];
        if (ch == '\n') {
            c->line++;
            c->column = 1;
        } else if ((ch & 0xC0) != 0x80) {
            c->column++;
        }
    }
    *line = c->line;
    *column = c->column;
}

/* Records the cut in[a..b) and reports text[0..n) found at in[at]. */
static int cut(fjf_cleaner *c, size_t a, size_t b, size_t at, const char *text, size_t n,
               int whole)
{
    if (c->ncuts) { /* the walkers go forward; an overlap is only blanks */
        fjfc_cut *last = &c->cuts[c->ncuts - 1];
        if (a < last->end)
            a = last->end;
    }
    if (b <= a)
        return 0;
    if (c->ncuts == c->capcuts) {
        size_t cap = c->capcuts ? c->capcuts * 2 : 16;
        fjfc_cut *p = realloc(c->cuts, cap * sizeof *p);
        if (!p) {
            fjf_error_set(c->err, FJF_NO_OFFSET, "out of memory");
            return -1;
        }
        c->cuts = p;
        c->capcuts = cap;
    }
    c->cuts[c->ncuts++] = (fjfc_cut){a, b};
    if (!c->rw->report)
        return 0;
    while (n && (text[0] == ' ' || text[0] == '\t' || text[0] == '\n' || text[0] == '\r'))
        text++, n--, at++;
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\n' ||
                 text[n - 1] == '\r'))
        n--;
    fj_clean_removal r;
    memset(&r, 0, sizeof r);
    where(c, at, &r.line, &r.column);
    r.text = text;
    r.len = n;
    r.whole_line = whole;
    if (c->rw->report(c->rw->report_ctx, c->rw->part, &r) != 0) {
        fjf_error_set(c->err, FJF_NO_OFFSET, "stopped by the report");
        return -1;
    }
    return 0;
}

/* What the spans leave of text[0..len) is only white space. */
static int only_blanks_left(const char *text, size_t len, const fj_clean_span *spans, size_t n)
{
    size_t at = 0;
    for (size_t i = 0; i <= n; i++) {
        size_t end = i < n ? spans[i].start : len;
        for (; at < end && at < len; at++)
            if (text[at] != ' ' && text[at] != '\t' && text[at] != '\n' && text[at] != '\r')
                return 0;
        if (i < n && spans[i].end > at)
            at = spans[i].end;
    }
    return 1;
}

/* Adds the Legado rules' spans to the n in *all (`fixed` when *all is the
 * caller's array, else malloc'd): the union, in order. Spans that only
 * touch stay apart, since each must map to the input by itself (one may
 * end where markup starts). The block goes whole when the Legado spans
 * leave only white space and punctuation, as a text line would. */
static int union_legado(fjf_cleaner *c, fj_clean_span **all, fj_clean_span *fixed, size_t *n,
                        int *whole)
{
    fj_clean_span *found = NULL;
    size_t count = 0;
    unsigned long long line, column;
    where(c, c->pieces[0].in_at, &line, &column);
    if (fjf_legado_find(c->rw->legado, c->rw->input ? c->rw->input : "document", c->rw->book,
                        line, c->text.data, c->text.len, &found, &count) != 0) {
        fjf_error_set(c->err, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    if (count == 0)
        return 0;
    fj_clean_span *both = realloc(found, (count + *n) * sizeof *both);
    if (!both) {
        free(found);
        fjf_error_set(c->err, FJF_NO_OFFSET, "out of memory");
        return -1;
    }
    memcpy(both + count, *all, *n * sizeof *both);
    size_t total = fjf_legado_merge_spans(both, count + *n, 0);
    if (fjf_legado_leaves_blank(c->rw->legado, c->text.data, c->text.len, both, total))
        *whole = 1;
    if (*all != fixed)
        free(*all);
    *all = both;
    *n = total;
    return 0;
}

int fjfc_judge(fjf_cleaner *c, int *whole)
{
    fj_clean_span spans[SPANS_AT_ONCE], *all = spans;
    *whole = 0;
    if (!c->text.len || !c->npieces)
        return 0;
    size_t n = fj_clean_find(c->rw->clean, c->text.data, c->text.len, spans, SPANS_AT_ONCE, whole);
    if (n > SPANS_AT_ONCE) {
        all = malloc(n * sizeof *all);
        if (!all) {
            fjf_error_set(c->err, FJF_NO_OFFSET, "out of memory");
            return -1;
        }
        size_t room = n;
        n = fj_clean_find(c->rw->clean, c->text.data, c->text.len, all, room, whole);
        if (n > room)
            n = room;
    }
    if (n == 0)
        *whole = 0; /* nothing found: nothing is removed, whatever the text */
    if (c->rw->legado && !*whole && union_legado(c, &all, spans, &n, whole) != 0) {
        if (all != spans)
            free(all);
        return -1;
    }
    if (n > 0 && !*whole && only_blanks_left(c->text.data, c->text.len, all, n))
        *whole = 1; /* the spans leave nothing: the block goes, not an empty element */
    int rc = 0;
    size_t k = 0; /* spans come in order: the piece search goes on from the last */
    for (size_t i = 0; i < n && !*whole && rc == 0; i++) {
        size_t s = all[i].start, e = all[i].end;
        /* The pieces the span covers must be raw text, one after another
         * in the input, and an atomic one (a URL) covered whole: a span
         * that crosses markup, a reference or part of a URL is kept. */
        while (k < c->npieces && s >= c->pieces[k].text_at + c->pieces[k].len)
            k++;
        if (k == c->npieces || e <= s || s < c->pieces[k].text_at)
            continue;
        const fjfc_piece *first = &c->pieces[k], *p = first;
        int ok = 1;
        for (;; p++) {
            size_t pa = p->text_at, pb = p->text_at + p->len;
            if (!p->raw || (p->raw == 2 && (s > pa || e < pb)))
                ok = 0;
            if (!ok || e <= pb)
                break;
            if (p + 1 == c->pieces + c->npieces || p[1].in_at != p->in_at + p->len) {
                ok = 0;
                break;
            }
        }
        if (!ok)
            continue;
        size_t a = first->in_at + (s - first->text_at), b = p->in_at + (e - p->text_at);
        rc = cut(c, a, b, a, c->in + a, b - a, 0);
    }
    if (all != spans)
        free(all);
    return rc;
}

int fjfc_cut_whole(fjf_cleaner *c, size_t a, size_t b)
{
    size_t at = c->npieces ? c->pieces[0].in_at : a;
    return cut(c, a, b, at, c->text.data ? c->text.data : "", c->text.len, 1);
}

static int is_blank(char ch) { return ch == ' ' || ch == '\t'; }

size_t fjfc_line_start(const char *in, size_t at)
{
    size_t i = at;
    while (i > 0 && is_blank(in[i - 1]))
        i--;
    return i == 0 || in[i - 1] == '\n' ? i : FJF_NO_OFFSET;
}

size_t fjfc_line_end(const char *in, size_t len, size_t at)
{
    size_t i = at;
    while (i < len && is_blank(in[i]))
        i++;
    if (i < len && in[i] == '\r' && i + 1 < len && in[i + 1] == '\n')
        return i + 2;
    if (i < len && in[i] == '\n')
        return i + 1;
    return i == len ? i : FJF_NO_OFFSET;
}

int fjfc_output(const fjf_cleaner *c, fjf_buf *out)
{
    size_t at = 0;
    for (size_t i = 0; i <= c->ncuts; i++) {
        size_t end = i < c->ncuts ? c->cuts[i].start : c->len;
        if (fjf_buf_append(out, c->in + at, end - at) != 0) {
            fjf_error_set(c->err, FJF_NO_OFFSET, "out of memory");
            return -1;
        }
        if (i < c->ncuts)
            at = c->cuts[i].end;
    }
    return 0;
}

int fjf_clean_document(fjf_format format, const char *in, size_t len, const fjf_rewrite *rw,
                       fjf_buf *out, fjf_error *err)
{
    if (!rw || !rw->clean)
        return fjf_buf_append(out, in, len) == 0 ? 0 : -1;
    fjf_cleaner c;
    fjfc_init(&c, in, len, rw, err);
    int rc;
    switch (format) {
    case FJF_HTML:
        rc = fjf_html_clean_blocks(&c, 0);
        break;
    case FJF_XHTML:
        rc = fjf_html_clean_blocks(&c, 1);
        break;
    case FJF_SRT:
    case FJF_VTT:
        rc = fjf_srt_clean_blocks(&c, format == FJF_VTT);
        break;
    case FJF_ASS:
        rc = fjf_ass_clean_blocks(&c);
        break;
    case FJF_MARKDOWN:
        rc = fjf_markdown_clean_blocks(&c);
        break;
    default:
        fjf_error_set(err, FJF_NO_OFFSET, "boilerplate removal does not read this format yet");
        rc = -1;
    }
    if (rc == 0)
        rc = fjfc_output(&c, out);
    fjfc_free(&c);
    return rc;
}

int fjf_clean_then_rewrite(fjf_format format, const char *in, size_t len, const fjf_rewrite *rw,
                           fjf_buf *out, fjf_error *err, fjf_rewrite_fn rewrite)
{
    fjf_rewrite plain = *rw;
    plain.clean = NULL;
    fjf_buf cleaned = {0};
    if (fjf_clean_document(format, in, len, rw, &cleaned, err) != 0) {
        fjf_buf_free(&cleaned);
        return -1;
    }
    size_t before = out->len;
    int rc = rewrite(cleaned.data ? cleaned.data : "", cleaned.len, &plain, out, err);
    if (rc != 0 && err && err->offset != FJF_NO_OFFSET) {
        /* Where the input has the error (the rewrite of the input, thrown
         * away, finds it there); if it has none, the clean-up made it. */
        out->len = before;
        fjf_buf scratch = {0};
        rc = rewrite(in, len, &plain, &scratch, err);
        fjf_buf_free(&scratch);
        if (rc == 0) {
            fjf_error_set(err, FJF_NO_OFFSET, "removing boilerplate would break the document");
            rc = -1;
        }
    }
    fjf_buf_free(&cleaned);
    return rc;
}
