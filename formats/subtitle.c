/* fanjian formats: subtitles (fanjian-formats.h). SubRip (.srt), Advanced SubStation
 * Alpha and SubStation Alpha (.ass, .ssa) and WebVTT (.vtt): only the
 * lines a viewer reads are converted, one line a span, and in them only
 * what lies outside formatting tags. Line endings may be LF, CRLF or CR.
 */
#include <string.h>

#include "docclean.h"
#include "fanjian-formats.h"

typedef struct sw {
    const char *in;
    size_t len;
    const fjf_rewrite *rw;
    fjf_buf *out;
    fjf_error *err;
} sw;

/* A line: content in[a..e), line ending in[e..n). */
typedef struct line {
    size_t a, e, n;
} line;

static int copy(sw *w, size_t a, size_t b) { return fjf_emit_copy(w->in, a, b, w->out, w->err); }

static int conv(sw *w, size_t a, size_t b)
{
    return fjf_emit_text(w->rw, w->in, a, b, w->out, w->err);
}

static void init(sw *w, const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                 fjf_error *err)
{
    w->in = in;
    w->len = len;
    w->rw = rw;
    w->out = out;
    w->err = err;
}

/* Copies a byte order mark; where the document begins after it, or -1. */
static long bom(sw *w)
{
    if (w->len >= 3 && memcmp(w->in, "\xEF\xBB\xBF", 3) == 0)
        return copy(w, 0, 3) ? -1 : 3;
    return 0;
}

static int get_line(const sw *w, size_t pos, line *l)
{
    if (pos >= w->len)
        return 0;
    size_t i = pos;
    while (i < w->len && w->in[i] != '\n' && w->in[i] != '\r')
        i++;
    l->a = pos;
    l->e = i;
    if (i < w->len)
        i += (w->in[i] == '\r' && i + 1 < w->len && w->in[i + 1] == '\n') ? 2 : 1;
    l->n = i;
    return 1;
}

static int copy_line(sw *w, const line *l) { return copy(w, l->a, l->n); }

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_blank_char(int c) { return c == ' ' || c == '\t'; }

static int blank(const char *in, const line *l)
{
    for (size_t i = l->a; i < l->e; i++)
        if (!is_blank_char((unsigned char)in[i]))
            return 0;
    return 1;
}

static int has_arrow(const char *in, const line *l)
{
    for (size_t i = l->a; i + 3 <= l->e; i++)
        if (in[i] == '-' && in[i + 1] == '-' && in[i + 2] == '>')
            return 1;
    return 0;
}

/* ---- text with markup ---------------------------------------------------------- */

enum {
    M_ANGLE = 1u << 0,    /* <i>, </font>: a '<' before a letter or '/' */
    M_VTT = 1u << 1,      /* WebVTT: every '<' opens a tag, to '>' or the line's end */
    M_BRACE = 1u << 2,    /* {\an8} */
    M_ANY_BRACE = 1u << 3 /* ASS: every {...} is an override block (or a comment) */
};

/* The first ch at or after `from` in in[..e), or e. Remembers its answer,
 * as the callers move forward: a long line is read once per character. */
typedef struct seek {
    size_t at;
    int known;
} seek;

static size_t find(const char *in, size_t from, size_t e, char ch, seek *s)
{
    if (!s->known || s->at < from) {
        const char *p = from < e ? memchr(in + from, ch, e - from) : NULL;
        s->at = p ? (size_t)(p - in) : e;
        s->known = 1;
    }
    return s->at;
}

/* The end of the markup that starts at in[i] (before e), or 0 when none
 * does. */
static size_t markup_end(const char *in, size_t i, size_t e, unsigned mode, seek *gt, seek *rb)
{
    size_t j = 0;
    if (in[i] == '<' && (mode & M_VTT)) {
        j = find(in, i + 1, e, '>', gt);
        j = j < e ? j + 1 : e;
    } else if (in[i] == '<' && (mode & M_ANGLE) && i + 1 < e &&
               (is_alpha((unsigned char)in[i + 1]) || in[i + 1] == '/')) {
        j = find(in, i + 1, e, '>', gt);
        j = j < e ? j + 1 : 0;
    } else if (in[i] == '{' && (mode & (M_BRACE | M_ANY_BRACE)) &&
               ((mode & M_ANY_BRACE) || (i + 1 < e && in[i + 1] == '\\'))) {
        j = find(in, i + 1, e, '}', rb);
        j = j < e ? j + 1 : 0;
    }
    return j;
}

/* A tag, in[a..b), copied; but a WebVTT voice's name (<v.loud 张三>) is
 * text a reader sees, so it is converted. */
static int markup(sw *w, size_t a, size_t b, unsigned mode)
{
    const char *in = w->in;
    if (!(mode & M_VTT) || b - a < 4 || in[a + 1] != 'v' || in[b - 1] != '>' ||
        !(in[a + 2] == '.' || is_blank_char((unsigned char)in[a + 2])))
        return copy(w, a, b);
    size_t k = a + 2;
    while (k < b - 1 && !is_blank_char((unsigned char)in[k])) /* .classes */
        k++;
    while (k < b - 1 && is_blank_char((unsigned char)in[k]))
        k++;
    return copy(w, a, k) || conv(w, k, b - 1) || copy(w, b - 1, b);
}

/* One line of dialogue, in[a..e): the text between the tags is one span. */
static int dialogue(sw *w, size_t a, size_t e, unsigned mode)
{
    const char *in = w->in;
    size_t i = a, t = a;
    seek gt = {0, 0}, rb = {0, 0};
    while (i < e) {
        size_t j = markup_end(in, i, e, mode, &gt, &rb);
        if (!j) {
            i++;
            continue;
        }
        if (conv(w, t, i) || markup(w, i, j, mode))
            return -1;
        i = t = j;
    }
    return conv(w, t, e);
}

static int dialogue_line(sw *w, const line *l, unsigned mode)
{
    return dialogue(w, l->a, l->e, mode) || copy(w, l->e, l->n) ? -1 : 0;
}

/* ---- SubRip ---------------------------------------------------------------------- */

/* A time stamp at in[i..e) (00:01:02,345; leniently 1:2:3.4): its end, or 0. */
static size_t stamp(const char *in, size_t i, size_t e)
{
    size_t k = i, colons = 0;
    while (k < e && is_digit((unsigned char)in[k]))
        k++;
    if (k == i)
        return 0;
    while (k < e && in[k] == ':') {
        size_t d = ++k;
        while (k < e && is_digit((unsigned char)in[k]))
            k++;
        if (k == d)
            return 0;
        colons++;
    }
    if (!colons)
        return 0;
    if (k + 1 < e && (in[k] == ',' || in[k] == '.') && is_digit((unsigned char)in[k + 1])) {
        k++;
        while (k < e && is_digit((unsigned char)in[k]))
            k++;
    }
    return k;
}

/* "00:01:02,345 --> 00:01:04,000", maybe followed by a position. */
static int srt_timing(const char *in, const line *l)
{
    size_t i = l->a;
    while (i < l->e && is_blank_char((unsigned char)in[i]))
        i++;
    if (!(i = stamp(in, i, l->e)))
        return 0;
    while (i < l->e && is_blank_char((unsigned char)in[i]))
        i++;
    if (i + 3 > l->e || memcmp(in + i, "-->", 3) != 0)
        return 0;
    i += 3;
    while (i < l->e && is_blank_char((unsigned char)in[i]))
        i++;
    return stamp(in, i, l->e) != 0;
}

static int digits(const char *in, const line *l)
{
    size_t i = l->a, n = 0;
    while (i < l->e && is_blank_char((unsigned char)in[i]))
        i++;
    while (i < l->e && is_digit((unsigned char)in[i]))
        i++, n++;
    while (i < l->e && is_blank_char((unsigned char)in[i]))
        i++;
    return n && i == l->e;
}

/* Each line is judged by itself and its neighbours, so blank lines inside
 * a cue, missing blank lines between cues or missing numbers do no harm. */
int fjf_srt_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out, fjf_error *err)
{
    if (rw && rw->clean)
        return fjf_clean_then_rewrite(FJF_SRT, in, len, rw, out, err, fjf_srt_rewrite);
    sw w;
    init(&w, in, len, rw, out, err);
    long start = bom(&w);
    if (start < 0)
        return -1;
    size_t pos = (size_t)start;
    int after_timing = 0;
    line l, nx;
    while (get_line(&w, pos, &l)) {
        int timing = srt_timing(in, &l), r;
        if (timing || blank(in, &l))
            r = copy_line(&w, &l);
        else if (!after_timing && digits(in, &l) && get_line(&w, l.n, &nx) && srt_timing(in, &nx))
            r = copy_line(&w, &l); /* the cue's number */
        else
            r = dialogue_line(&w, &l, M_ANGLE | M_BRACE);
        if (r)
            return -1;
        after_timing = timing;
        pos = l.n;
    }
    return 0;
}

/* ---- ASS / SSA ----------------------------------------------------------------- */

static int iprefix(const char *s, size_t n, const char *w)
{
    for (size_t i = 0; w[i]; i++) {
        if (i >= n)
            return 0;
        int c = (unsigned char)s[i];
        if (c >= 'A' && c <= 'Z')
            c += 'a' - 'A';
        if (c != w[i])
            return 0;
    }
    return 1;
}

enum {
    ASS_FIELDS = 10
}; /* Layer (SSA: Marked), Start, End, Style, Name,
      MarginL, MarginR, MarginV, Effect, Text */

int fjf_ass_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out, fjf_error *err)
{
    if (rw && rw->clean)
        return fjf_clean_then_rewrite(FJF_ASS, in, len, rw, out, err, fjf_ass_rewrite);
    sw w;
    init(&w, in, len, rw, out, err);
    long start = bom(&w);
    if (start < 0)
        return -1;
    size_t pos = (size_t)start, fields = ASS_FIELDS;
    int events = 0, info = 0;
    line l;
    while (get_line(&w, pos, &l)) {
        size_t s = l.a, t = l.e;
        while (s < t && is_blank_char((unsigned char)in[s]))
            s++;
        while (t > s && is_blank_char((unsigned char)in[t - 1]))
            t--;
        int r;
        if (t - s >= 2 && in[s] == '[' && in[t - 1] == ']') {
            events = t - s == 8 && iprefix(in + s, 8, "[events]");
            info = t - s == 13 && iprefix(in + s, 13, "[script info]");
            fields = ASS_FIELDS;
            r = copy_line(&w, &l);
        } else if (info && iprefix(in + s, t - s, "title:")) {
            /* The script's title, which players show. */
            size_t v = s + 6;
            while (v < t && is_blank_char((unsigned char)in[v]))
                v++;
            r = copy(&w, l.a, v) || conv(&w, v, t) || copy(&w, t, l.n);
        } else if (events && iprefix(in + s, t - s, "format:")) {
            size_t n = 1;
            for (size_t i = s + 7; i < l.e; i++)
                n += in[i] == ',';
            if (n >= 2)
                fields = n;
            r = copy_line(&w, &l);
        } else if (events && iprefix(in + s, t - s, "dialogue:")) {
            /* The text is the last field, so it may hold commas itself. */
            size_t need = fields - 1, p = s + 9;
            for (; need && p < l.e; p++)
                need -= in[p] == ',';
            if (need)
                r = copy_line(&w, &l);
            else
                r = copy(&w, l.a, p) || dialogue_line(&w, &(line){p, l.e, l.n}, M_ANY_BRACE);
        } else {
            r = copy_line(&w, &l);
        }
        if (r)
            return -1;
        pos = l.n;
    }
    return 0;
}

/* ---- WebVTT --------------------------------------------------------------------- */

/* Blocks as the WebVTT parser collects them: lines up to an empty line,
 * or up to a line with "-->" that is not the block's first or second. A
 * block with "-->" in its first or second line is a cue; every other
 * block (the header, NOTE, STYLE, REGION) is copied. */
int fjf_vtt_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out, fjf_error *err)
{
    if (rw && rw->clean)
        return fjf_clean_then_rewrite(FJF_VTT, in, len, rw, out, err, fjf_vtt_rewrite);
    sw w;
    init(&w, in, len, rw, out, err);
    long start = bom(&w);
    if (start < 0)
        return -1;
    size_t pos = (size_t)start;
    line l, l2;
    if (get_line(&w, pos, &l) && l.e - l.a >= 6 && memcmp(in + l.a, "WEBVTT", 6) == 0 &&
        (l.e - l.a == 6 || is_blank_char((unsigned char)in[l.a + 6]))) {
        if (copy_line(&w, &l))
            return -1;
        pos = l.n;
        while (get_line(&w, pos, &l) && (l.a == l.e || !has_arrow(in, &l))) {
            if (copy_line(&w, &l))
                return -1;
            pos = l.n;
            if (l.a == l.e)
                break;
        }
    }
    while (get_line(&w, pos, &l)) {
        if (l.a == l.e) { /* between blocks */
            if (copy_line(&w, &l))
                return -1;
            pos = l.n;
            continue;
        }
        int cue = 1;
        if (has_arrow(in, &l)) {
            pos = l.n;
        } else if (get_line(&w, l.n, &l2) && l2.a != l2.e && has_arrow(in, &l2)) {
            pos = l2.n; /* an identifier and the timing */
            l.n = l2.n;
        } else {
            cue = 0;
            pos = l.n;
        }
        if (copy_line(&w, &l))
            return -1;
        while (get_line(&w, pos, &l) && !has_arrow(in, &l)) {
            if ((cue && l.a != l.e) ? dialogue_line(&w, &l, M_VTT) : copy_line(&w, &l))
                return -1;
            pos = l.n;
            if (l.a == l.e)
                break;
        }
    }
    return 0;
}

/* ---- boilerplate removal (docclean.h) ---------------------------------------------- */

/* A dialogue line in[a..e) into the cleaner's block: the text between the
 * markup, which is skipped; a line break (the one before it, ASS's \N) is a
 * space, and references (WebVTT's &amp;) are judged as written: neither is
 * ever cut into. */
static int clean_text_line(fjf_cleaner *c, size_t a, size_t e, unsigned mode, int first)
{
    const char *in = c->in;
    if (!first && fjfc_add_decoded(c, a, a, " ", 1))
        return -1;
    size_t i = a, t = a;
    seek gt = {0, 0}, rb = {0, 0};
    while (i < e) {
        size_t j = markup_end(in, i, e, mode, &gt, &rb), k = 0;
        if (!j && (mode & M_ANY_BRACE) && in[i] == '\\' && i + 1 < e &&
            (in[i + 1] == 'N' || in[i + 1] == 'n' || in[i + 1] == 'h'))
            k = i + 2; /* ASS line break or hard space */
        else if (!j && (mode & M_VTT) && in[i] == '&') {
            size_t q = i + 1;
            while (q < e && q - i < 12 && (is_alpha((unsigned char)in[q]) || is_digit((unsigned char)in[q]) || in[q] == '#'))
                q++;
            if (q < e && q > i + 1 && in[q] == ';')
                k = q + 1;
        }
        if (!j && !k) {
            i++;
            continue;
        }
        if (fjfc_add_raw(c, t, i))
            return -1;
        if (k && fjfc_add_decoded(c, i, k, k - i == 2 ? " " : in + i, k - i == 2 ? 1 : k - i))
            return -1;
        i = t = j ? j : k;
    }
    return fjfc_add_raw(c, t, e);
}

static int starts_with(const char *in, const line *l, const char *w)
{
    size_t n = strlen(w);
    return l->e - l->a >= n && memcmp(in + l->a, w, n) == 0;
}

/* Blocks of lines between blank lines; a block with the timing in its
 * first line, or an identifier and then the timing, is a cue, and its
 * other lines are its text. A cue whose text is wholly boilerplate goes
 * with its number, timing and the blank line after it; the numbers of the
 * other cues are kept as they are (players do not need them in sequence).
 * A block with more timing lines in it is not judged. */
int fjf_srt_clean_blocks(fjf_cleaner *c, int vtt)
{
    const char *in = c->in;
    sw w;
    memset(&w, 0, sizeof w);
    w.in = in;
    w.len = c->len;
    unsigned mode = vtt ? M_VTT : (M_ANGLE | M_BRACE);
    size_t pos = c->len >= 3 && memcmp(in, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    size_t prev_blank = (size_t)-1;
    int first_block = 1;
    line l, b;
    while (get_line(&w, pos, &l)) {
        if (blank(in, &l)) {
            prev_blank = l.a;
            pos = l.n;
            continue;
        }
        size_t start = l.a, text_from = 0, nlines = 0, arrows = 0;
        int header = vtt && first_block && starts_with(in, &l, "WEBVTT");
        int note = vtt && (starts_with(in, &l, "NOTE") || starts_with(in, &l, "STYLE") ||
                           starts_with(in, &l, "REGION"));
        first_block = 0;
        size_t end = l.n;
        for (size_t p = l.a; get_line(&w, p, &b) && !blank(in, &b); p = b.n) {
            nlines++;
            if (has_arrow(in, &b)) {
                arrows++;
                if (nlines <= 2 && !text_from)
                    text_from = b.n;
            }
            end = b.n;
        }
        pos = end;
        if (header || note || !text_from || arrows != 1 || text_from >= end)
            continue;
        fjfc_block_reset(c);
        int first = 1;
        for (size_t p = text_from; p < end && get_line(&w, p, &b); p = b.n, first = 0)
            if (clean_text_line(c, b.a, b.e, mode, first))
                return -1;
        int whole = 0;
        if (fjfc_judge(c, &whole))
            return -1;
        if (!whole)
            continue;
        size_t cut_from = start, cut_to = end;
        if (get_line(&w, end, &b) && blank(in, &b))
            cut_to = b.n; /* and the blank line after it */
        else if (end == c->len && prev_blank != (size_t)-1)
            cut_from = prev_blank; /* the last cue: the blank line before it */
        if (fjfc_cut_whole(c, cut_from, cut_to))
            return -1;
        pos = cut_to;
        prev_blank = (size_t)-1;
    }
    return 0;
}

/* Dialogue lines of [Events]: the text field, never the override tags; a
 * line whose text is wholly boilerplate goes whole. */
int fjf_ass_clean_blocks(fjf_cleaner *c)
{
    const char *in = c->in;
    sw w;
    memset(&w, 0, sizeof w);
    w.in = in;
    w.len = c->len;
    size_t pos = c->len >= 3 && memcmp(in, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0, fields = ASS_FIELDS;
    int events = 0;
    line l;
    for (; get_line(&w, pos, &l); pos = l.n) {
        size_t s = l.a, t = l.e;
        while (s < t && is_blank_char((unsigned char)in[s]))
            s++;
        while (t > s && is_blank_char((unsigned char)in[t - 1]))
            t--;
        if (t - s >= 2 && in[s] == '[' && in[t - 1] == ']') {
            events = t - s == 8 && iprefix(in + s, 8, "[events]");
            fields = ASS_FIELDS;
        } else if (events && iprefix(in + s, t - s, "format:")) {
            size_t n = 1;
            for (size_t i = s + 7; i < l.e; i++)
                n += in[i] == ',';
            if (n >= 2)
                fields = n;
        } else if (events && iprefix(in + s, t - s, "dialogue:")) {
            size_t need = fields - 1, p = s + 9;
            for (; need && p < l.e; p++)
                need -= in[p] == ',';
            if (need)
                continue;
            fjfc_block_reset(c);
            int whole = 0;
            if (clean_text_line(c, p, l.e, M_ANY_BRACE, 1) || fjfc_judge(c, &whole))
                return -1;
            if (whole && fjfc_cut_whole(c, l.a, l.n))
                return -1;
        }
    }
    return 0;
}
