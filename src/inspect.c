/* fj_inspect: the places where the default mode's lattice chose a form
 * among several, with the cost of each other form (src/context.c finds
 * them; this file maps them to the caller's input and the final forms). */
#include <string.h>

#include "internal.h"
#include "utf8.h"

/* Model units per nat (tools/model.h: cost = 100 * -ln P). */
#define FJ_UNITS_PER_NAT 100.0

typedef struct inspect_state {
    fj__inspect_sink base;
    const fj_converter *c;
    const unsigned char *input; /* the caller's text */
    const unsigned char *line;  /* the line being inspected */
    size_t line_no;
    const unsigned char *line_end;
    const unsigned char *counted; /* columns counted up to here in the line */
    size_t column;
    /* When steps before the model rewrote the line: it and the text seen
     * have as many characters (-1 unknown, 0 no: its choices cannot be
     * placed), and how far both are walked in step. */
    int aligned;
    const unsigned char *seen_walked, *line_walked;
    fj_out form_out[2];
    fj_choice_fn fn;
    void *ctx;
    int stopped;
} inspect_state;

/* form[0..len) through the steps after the model, into s->form_out; the
 * result's bytes (s->form_out's buffer) and length. */
static const unsigned char *final_form(inspect_state *s, const unsigned char *form, size_t len,
                                       size_t *out_len)
{
    const fj_converter *c = s->c;
    const unsigned char *cur = form;
    size_t cur_len = len;
    for (uint32_t k = c->ctx_post_first; k < c->stage_count; k++) {
        fj_out *dst = &s->form_out[k & 1];
        dst->len = 0;
        fj__step(&c->stages[k], cur, cur_len, 1, dst);
        if (dst->status != FJ_OK)
            break;
        cur = (const unsigned char *)dst->buf;
        cur_len = dst->len;
    }
    *out_len = cur_len;
    return cur;
}

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

static void put_choice(fj__inspect_sink *sink, const fj__choice_rec *r)
{
    inspect_state *s = (inspect_state *)sink;
    if (s->stopped)
        return;
    /* Each form as the later steps write it; forms that end up the same
     * as one before (cheaper) are one. */
    char forms[FJ_INSPECT_FORMS_MAX][32];
    size_t form_len[FJ_INSPECT_FORMS_MAX];
    fj_alternative alt[FJ_INSPECT_FORMS_MAX];
    size_t kept = 0;
    for (uint32_t f = 0; f < r->count; f++) {
        size_t len;
        const unsigned char *out = final_form(s, r->form[f], r->form_len[f], &len);
        if (len == 0 || len > sizeof forms[0]) {
            if (f == 0)
                return; /* the chosen form cannot be shown */
            continue;
        }
        size_t same = 0;
        while (same < kept && !(form_len[same] == len && memcmp(forms[same], out, len) == 0))
            same++;
        if (same < kept)
            continue;
        memcpy(forms[kept], out, len);
        form_len[kept] = len;
        if (kept > 0) {
            alt[kept - 1].form = forms[kept];
            alt[kept - 1].form_len = len;
            alt[kept - 1].margin = (double)(r->cost[f] - r->cost[0]) / FJ_UNITS_PER_NAT;
        }
        kept++;
    }
    if (kept < 2)
        return;
    const unsigned char *at = s->line + r->off;
    if (sink->seen != s->line) {
        const unsigned char *seen_end = sink->seen + sink->seen_len;
        if (s->aligned < 0) {
            s->aligned = code_points(sink->seen, seen_end) == code_points(s->line, s->line_end);
            s->seen_walked = sink->seen;
            s->line_walked = s->line;
        }
        if (!s->aligned)
            return;
        const unsigned char *target = sink->seen + r->off;
        while (s->seen_walked < target) {
            s->seen_walked += char_length(s->seen_walked, seen_end);
            s->line_walked += char_length(s->line_walked, s->line_end);
        }
        at = s->line_walked;
        if (at + r->len > s->line_end)
            return;
    }
    /* Columns in code points, counted on from the last choice. */
    while (s->counted < at) {
        uint32_t cp;
        int n = fj_utf8_decode(s->counted, at, &cp);
        s->counted += n > 0 ? (size_t)n : 1;
        s->column++;
    }
    fj_choice ch;
    ch.offset = (size_t)(at - s->input);
    ch.length = (size_t)char_length(at, s->line_end);
    ch.line = s->line_no;
    ch.column = s->column + 1;
    ch.source = (const char *)at;
    ch.chosen = forms[0];
    ch.chosen_len = form_len[0];
    ch.alternatives = alt;
    ch.alternative_count = kept - 1;
    if (s->fn(s->ctx, &ch) != 0)
        s->stopped = 1;
}

/* The converter whose lattice makes the choices, or NULL. */
static const fj_converter *model_converter(const fj_converter *c)
{
    if (c->engine == &fj__target_engine)
        c = c->to_sub[1];
    if (!c || (c->engine != &fj__context_engine && fj__overlay_inner(c) != &fj__context_engine))
        return NULL;
    /* Repair changes only suspects, by costs of its own. */
    if (c->ctx_repair)
        return NULL;
    return c;
}

fj_status fj_inspect(const fj_converter *conv, const char *input, size_t input_len,
                     fj_choice_fn fn, void *ctx)
{
    if (!conv || !fn || (!input && input_len))
        return FJ_ERR_INVALID_ARGUMENT;
    const fj_converter *c = model_converter(conv);
    if (!c || input_len == 0)
        return FJ_OK;
    const fj_allocator *a = conv->allocator.alloc ? &conv->allocator : NULL;
    fj_work w;
    fj__work_init(&w, a);
    fj_out scratch;
    fj__out_init_growable(&scratch, a);
    inspect_state s;
    memset(&s, 0, sizeof s);
    s.base.put = put_choice;
    s.c = c;
    s.input = (const unsigned char *)input;
    s.fn = fn;
    s.ctx = ctx;
    fj__out_init_growable(&s.form_out[0], a);
    fj__out_init_growable(&s.form_out[1], a);
    w.inspect = &s.base;
    /* Line by line (a newline is in no key, so no choice spans one): the
     * scratch output stays one line long. */
    const unsigned char *p = s.input, *end = s.input + input_len;
    fj_status st = FJ_OK;
    for (size_t line_no = 1; p < end && !s.stopped; line_no++) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        const unsigned char *stop = nl ? nl + 1 : end;
        s.line = s.counted = p;
        s.line_end = stop;
        s.aligned = -1;
        s.line_no = line_no;
        s.column = 0;
        scratch.len = 0;
        fj__ctx_inspect(c, p, (size_t)(stop - p), &scratch, &w);
        if ((st = fj__work_status(&w)) != FJ_OK || (st = scratch.status) != FJ_OK ||
            (st = s.form_out[0].status) != FJ_OK || (st = s.form_out[1].status) != FJ_OK)
            break;
        p = stop;
    }
    fj__out_release(&s.form_out[0]);
    fj__out_release(&s.form_out[1]);
    fj__out_release(&scratch);
    fj__work_release(&w);
    if (st == FJ_OK && s.stopped)
        st = FJ_ERR_CALLBACK;
    return st;
}
