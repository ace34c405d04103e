/* fj_inspect: the places where the default mode's lattice chose a form
 * among several, with the cost of each other form. The converter's own
 * engine runs over the text as fj_convert runs it (without the clean-up
 * and typography around it), and src/context.c hands each choice here;
 * this file places it in the caller's text, writes its forms as the steps
 * after the lattice write them, and drops a choice the output contradicts. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "utf8.h"

/* Model units per nat (tools/model.h: cost = 100 * -ln P). */
#define FJ_UNITS_PER_NAT 100.0
/* Bytes of one form, as the later steps write it. */
#define FJ_FORM_MAX 32

typedef struct placed {
    size_t offset, length;
    uint32_t count; /* forms: [0] chosen, then the others, cheapest first */
    unsigned char form[FJ_INSPECT_FORMS_MAX][FJ_FORM_MAX];
    uint8_t form_len[FJ_INSPECT_FORMS_MAX];
    double margin[FJ_INSPECT_FORMS_MAX];
} placed;

typedef struct inspect_state {
    fj__inspect_sink base;
    const fj_allocator *a;
    const unsigned char *input, *input_end;
    /* Walking src and seen in step, for text the lattice saw rewritten
     * (normalized, the steps before it, a round trip): their code points
     * match one to one when there are as many. */
    const unsigned char *walk_src, *walk_seen, *walk_src_at, *walk_seen_at;
    int walk_aligned;
    fj_out form_out[2];
    placed *items;
    size_t count, cap;
    int failed;
} inspect_state;

/* The bytes of the character at p (1 for a byte that is not UTF-8). */
static size_t char_length(const unsigned char *p, const unsigned char *end)
{
    uint32_t cp;
    int n = fj_utf8_decode(p, end, &cp);
    return n > 0 ? (size_t)n : 1;
}

static size_t code_points(const unsigned char *p, const unsigned char *end)
{
    size_t n = 0;
    for (; p < end; n++)
        p += char_length(p, end);
    return n;
}

/* form[0..len) through c's steps after the lattice, into s->form_out. */
static const unsigned char *final_form(inspect_state *s, const fj_converter *c,
                                       const unsigned char *form, size_t len, size_t *out_len)
{
    const unsigned char *cur = form;
    size_t cur_len = len;
    for (uint32_t k = c->ctx_post_first; k < c->stage_count; k++) {
        fj_out *dst = &s->form_out[k & 1];
        dst->len = 0;
        fj__step(&c->stages[k], cur, cur_len, 1, dst);
        if (dst->status != FJ_OK) {
            s->failed = 1;
            *out_len = 0;
            return form;
        }
        cur = (const unsigned char *)dst->buf;
        cur_len = dst->len;
    }
    *out_len = cur_len;
    return cur;
}

/* Where in the caller's text the character at `seen` (of the text the
 * lattice saw) is, or NULL. */
static const unsigned char *place(inspect_state *s, const unsigned char *seen)
{
    const fj__inspect_sink *k = &s->base;
    if (seen >= s->input && seen < s->input_end)
        return seen;
    if (!k->src)
        return NULL;
    const unsigned char *seen_end = k->seen + k->seen_len, *src_end = k->src + k->src_len;
    if (s->walk_src != k->src || s->walk_seen != k->seen || seen < s->walk_seen_at) {
        s->walk_src = s->walk_src_at = k->src;
        s->walk_seen = s->walk_seen_at = k->seen;
        s->walk_aligned = code_points(k->seen, seen_end) == code_points(k->src, src_end);
    }
    if (!s->walk_aligned)
        return NULL;
    while (s->walk_seen_at < seen && s->walk_seen_at < seen_end) {
        s->walk_seen_at += char_length(s->walk_seen_at, seen_end);
        s->walk_src_at += char_length(s->walk_src_at, src_end);
    }
    const unsigned char *at = s->walk_src_at;
    return at >= s->input && at < s->input_end ? at : NULL;
}

static void put_choice(fj__inspect_sink *sink, const fj_converter *c, const fj__choice_rec *r)
{
    inspect_state *s = (inspect_state *)sink;
    if (s->failed)
        return;
    const unsigned char *at = place(s, sink->seen + r->off);
    if (!at)
        return;
    placed p;
    p.offset = (size_t)(at - s->input);
    p.length = char_length(at, s->input_end);
    p.count = 0;
    /* Each form as the later steps write it; one that ends up the same as
     * a cheaper one is that one. */
    for (uint32_t f = 0; f < r->count; f++) {
        size_t len;
        const unsigned char *out = final_form(s, c, r->form[f], r->form_len[f], &len);
        if (len == 0 || len > FJ_FORM_MAX) {
            if (f == 0)
                return; /* the chosen form cannot be shown */
            continue;
        }
        uint32_t same = 0;
        while (same < p.count && !(p.form_len[same] == len && memcmp(p.form[same], out, len) == 0))
            same++;
        if (same < p.count)
            continue;
        memcpy(p.form[p.count], out, len);
        p.form_len[p.count] = (uint8_t)len;
        p.margin[p.count] = (double)(r->cost[f] - r->cost[0]) / FJ_UNITS_PER_NAT;
        p.count++;
    }
    if (p.count < 2)
        return;
    if (s->count == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        placed *items = fj__realloc(s->a, s->items, s->cap * sizeof *items, cap * sizeof *items);
        if (!items) {
            s->failed = 1;
            return;
        }
        s->items = items;
        s->cap = cap;
    }
    s->items[s->count++] = p;
}

static int by_offset(const void *x, const void *y)
{
    const placed *a = x, *b = y;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* The start of the line after the one at p (or end). */
static const unsigned char *next_line(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

/* Calls fn for each placed choice, in order, with its line and column. A
 * choice whose line the output writes with as many characters, but with
 * another character at its column, was undone by what came after the
 * lattice (a regional word, a round trip's kept form): it is left out. */
static fj_status deliver(inspect_state *s, const unsigned char *out, size_t out_len,
                         fj_choice_fn fn, void *ctx)
{
    const unsigned char *in = s->input, *in_end = s->input_end, *out_end = out + out_len;
    const unsigned char *line = in, *line_end = next_line(in, in_end);
    const unsigned char *oline = out, *oline_end = next_line(out, out_end);
    size_t line_no = 1, column = 1;
    const unsigned char *counted = in;
    int verify = -1; /* this line's output can be compared: -1 not yet known */
    for (size_t i = 0; i < s->count; i++) {
        const placed *p = &s->items[i];
        if (i > 0 && p->offset == s->items[i - 1].offset)
            continue;
        const unsigned char *at = in + p->offset;
        while (at >= line_end && line_end < in_end) {
            line = line_end;
            line_end = next_line(line, in_end);
            oline = oline_end;
            oline_end = next_line(oline, out_end);
            line_no++;
            column = 1;
            counted = line;
            verify = -1;
        }
        for (; counted < at; column++)
            counted += char_length(counted, in_end);
        if (verify < 0)
            verify = code_points(line, line_end) == code_points(oline, oline_end);
        if (verify) {
            const unsigned char *q = oline;
            for (size_t k = 1; k < column && q < oline_end; k++)
                q += char_length(q, oline_end);
            size_t ql = q < oline_end ? char_length(q, oline_end) : 0;
            if (ql != p->form_len[0] || memcmp(q, p->form[0], ql) != 0)
                continue;
        }
        fj_alternative alt[FJ_INSPECT_FORMS_MAX];
        for (uint32_t f = 1; f < p->count; f++) {
            alt[f - 1].form = (const char *)p->form[f];
            alt[f - 1].form_len = p->form_len[f];
            alt[f - 1].margin = p->margin[f];
        }
        fj_choice ch;
        ch.offset = p->offset;
        ch.length = p->length;
        ch.line = line_no;
        ch.column = column;
        ch.source = (const char *)at;
        ch.chosen = (const char *)p->form[0];
        ch.chosen_len = p->form_len[0];
        ch.alternatives = alt;
        ch.alternative_count = p->count - 1;
        if (fn(ctx, &ch) != 0)
            return FJ_ERR_CALLBACK;
    }
    return FJ_OK;
}

fj_status fj_inspect(const fj_converter *c, const char *input, size_t input_len,
                     fj_choice_fn fn, void *ctx)
{
    if (!c || !fn || (!input && input_len))
        return FJ_ERR_INVALID_ARGUMENT;
    if (!c->engine || input_len == 0)
        return FJ_OK; /* nothing is converted */
    const fj_allocator *a = c->allocator.alloc ? &c->allocator : NULL;
    inspect_state s;
    memset(&s, 0, sizeof s);
    s.base.put = put_choice;
    s.a = a;
    s.input = (const unsigned char *)input;
    s.input_end = s.input + input_len;
    fj__out_init_growable(&s.form_out[0], a);
    fj__out_init_growable(&s.form_out[1], a);
    fj_work w;
    fj__work_init(&w, a);
    w.inspect = &s.base;
    fj_out out;
    fj__out_init_growable(&out, a);
    /* As fj_convert runs the engine (convert.c's run). */
    const unsigned char *text = s.input;
    size_t len = input_len, consumed;
    if (fj__normalize(c, text, len, 1, &w, &consumed)) {
        s.base.src = text;
        s.base.src_len = len;
        text = w.norm.buf ? (const unsigned char *)w.norm.buf : (const unsigned char *)"";
        len = w.norm.len;
    }
    fj_status st = w.norm.status;
    if (st == FJ_OK) {
        c->engine->convert(c, text, len, 1, &out, &w);
        st = fj__work_status(&w);
    }
    if (st == FJ_OK)
        st = out.status;
    if (st == FJ_OK && (s.failed || s.form_out[0].status != FJ_OK || s.form_out[1].status != FJ_OK))
        st = FJ_ERR_NOMEM;
    if (st == FJ_OK) {
        if (s.count)
            qsort(s.items, s.count, sizeof *s.items, by_offset);
        st = deliver(&s, (const unsigned char *)(out.buf ? out.buf : ""), out.len, fn, ctx);
    }
    fj__free(a, s.items, s.cap * sizeof *s.items);
    fj__out_release(&out);
    fj__out_release(&s.form_out[0]);
    fj__out_release(&s.form_out[1]);
    fj__work_release(&w);
    return st;
}
