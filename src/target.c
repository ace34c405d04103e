/* Target-only conversion (fj_converter_open_target): any input to one
 * standard in one pass. The text is cut into clauses (after clause
 * punctuation or a line break, or every FJ_TARGET_CLAUSE_MAX bytes); a
 * clause with more Simplified-only than Traditional-only characters goes
 * through the converter from Simplified, one with more Traditional-only
 * characters through the one from Traditional (which repairs), and one with
 * neither follows the clause before it (the first ones: Traditional, which
 * keeps text as written). The cuts depend on the text alone, and the route
 * and each sub-converter's state live in the work, so a stream equals one
 * call. */
#include <string.h>

#include "internal.h"
#include "utf8.h"

/* A clause longer than this is cut at a character boundary. */
#define FJ_TARGET_CLAUSE_MAX 4096u
/* The first clauses of a text, up to this many bytes, are judged together
 * on their evidence: a text starts with no estimate. */
#define FJ_DAMAGE_WINDOW 8192u
/* Repair of a clause after which the damage ratio is -FJ_DAMAGE_LLR_CORRECT
 * or less (the text reads as correct): each change of a character that is
 * right in some words costs this much more, in the lattice's units (0.01
 * nat): a written form stays unless a word makes the change 10 nats more
 * likely than careful repair asks. */
#define FJ_REPAIR_CORRECT_BIAS 1000
/* Clauses scanned before they are converted. */
#define FJ_TARGET_SCAN_BLOCK 256

enum { ROUTE_TRADITIONAL = 0, ROUTE_SIMPLIFIED = 1 };


static const struct {
    const char *name, *from_simplified, *from_traditional, *round_trip[2];
} targets[] = {
    {"tw", "s2tw", "t2tw", {"t2s", "s2tw"}},     {"twp", "s2twp", "t2tw", {"t2s", "s2twp"}},
    {"hk", "s2hk", "t2hk", {"t2s", "s2hk"}},     {"hkp", "s2hkp", "t2hk", {"t2s", "s2hkp"}},
    {"hant", "s2t", "tw2t", {"t2s", "s2t"}},     {"cn", NULL, "t2s", {NULL, NULL}},
    {"hans", NULL, "t2s", {NULL, NULL}},
};

/* The repair profiles' round trips through Simplified, for damaged text. */
static const struct {
    const char *profile, *round_trip[2];
} repair_round_trips[] = {
    {"t2tw", {"t2s", "s2tw"}},
    {"t2hk", {"t2s", "s2hk"}},
    {"tw2t", {"tw2s", "s2t"}},
    {"hk2t", {"hk2s", "s2t"}},
};

const char *fj_target_name(size_t i)
{
    return i < sizeof targets / sizeof targets[0] ? targets[i].name : NULL;
}

/* One clause through one sub-converter (NULL: as written), with its own
 * work, whose state carries on to its next clause. */
static void convert_clause(const fj_converter *sub, const unsigned char *text, size_t len,
                           fj_out *o, fj_work *sw)
{
    if (!sub) {
        fj__out_put(o, (const char *)text, len);
        return;
    }
    size_t consumed;
    fj__inspect_sink *k = sw->inspect;
    const unsigned char *src = k ? k->src : NULL;
    size_t src_len = k ? k->src_len : 0;
    if (fj__normalize(sub, text, len, 1, sw, &consumed)) {
        if (k) { /* fj_inspect: choices placed through the clause, if it can be */
            k->src = src ? NULL : text;
            k->src_len = len;
        }
        text = sw->norm.buf ? (const unsigned char *)sw->norm.buf : (const unsigned char *)"";
        len = sw->norm.len;
    }
    sub->engine->convert(sub, text, len, 1, o, sw);
    if (k) {
        k->src = src;
        k->src_len = src_len;
    }
}

/* A damaged Traditional clause keeps nothing beyond its Simplified reading
 * but the forms a careless converter never writes: it goes to Simplified
 * and back, and where the result has as many characters as the clause, a
 * character written in another form than its reading's default (髮, 乾)
 * stays as written. */
static void round_trip(const fj_converter *c, const unsigned char *text, size_t len, fj_out *o,
                       fj_work *w)
{
    fj_out *mid = &w->round_trip[0], *back = &w->round_trip[1];
    mid->len = back->len = 0;
    convert_clause(c->to_rt[0], text, len, mid, &w->sub[2]);
    /* fj_inspect: the way back chooses; its choices are placed through the
     * clause (the way there is no choice of the caller's). */
    fj__inspect_sink *sink = w->inspect;
    const unsigned char *src = sink ? sink->src : NULL;
    size_t src_len = sink ? sink->src_len : 0;
    if (sink) {
        sink->src = src ? NULL : text;
        sink->src_len = len;
    }
    convert_clause(c->to_rt[1], (const unsigned char *)(mid->buf ? mid->buf : ""), mid->len, back,
                   &w->sub[3]);
    if (sink) {
        sink->src = src;
        sink->src_len = src_len;
    }
    if (mid->status != FJ_OK || back->status != FJ_OK) {
        o->status = mid->status != FJ_OK ? mid->status : back->status;
        return;
    }
    const unsigned char *b = (const unsigned char *)(back->buf ? back->buf : ""),
                        *bend = b + back->len, *p = text, *end = text + len;
    size_t in_chars = 0, out_chars = 0;
    for (const unsigned char *q = p; q < end; q++)
        in_chars += (*q & 0xC0) != 0x80;
    for (const unsigned char *q = b; q < bend; q++)
        out_chars += (*q & 0xC0) != 0x80;
    if (in_chars != out_chars) {
        fj__out_put(o, (const char *)b, back->len);
        return;
    }
    while (p < end && b < bend) {
        uint32_t cp, bp;
        int k = fj_utf8_decode(p, end, &cp), kb = fj_utf8_decode(b, bend, &bp);
        size_t sk = k > 0 ? (size_t)k : 1, sb = kb > 0 ? (size_t)kb : 1;
        if (k > 0 && kb > 0 && cp != bp && fj__ctx_other_form(c->to_sub[0], cp))
            fj__out_put(o, (const char *)p, sk);
        else
            fj__out_put(o, (const char *)b, sb);
        p += sk;
        b += sb;
    }
    if (b < bend)
        fj__out_put(o, (const char *)b, (size_t)(bend - b));
}

/* What the scan of one clause found. */
typedef struct clause {
    size_t len;
    size_t simp, trad; /* Simplified-only and Traditional-only characters */
    int32_t llr;       /* the damage ratio, had the clause's evidence been read */
    int mergeable;     /* it ends at a character that every sub-converter
                        * treats as a barrier: converting it with the next
                        * clause gives what converting them apart gives */
    int kept;          /* the Traditional converter writes every character
                        * of it as itself (FJ_TO_KEEPS) */
} clause;

/* Scans the clause that starts at p (after clause punctuation or a line
 * break, or FJ_TARGET_CLAUSE_MAX bytes); 0 when more input could still
 * extend it (only when !final). One pass: its end, its scripts, its damage
 * evidence. */
static int scan_clause(const fj_converter *c, const unsigned char *p, const unsigned char *end,
                       int final, int32_t llr, clause *out)
{
    const int16_t *dw = c->to_rt[0] ? c->to_sub[0]->ctx_damage_w : NULL;
    const unsigned char *classes = c->to_class, *q = p,
                        *limit = (size_t)(end - p) > FJ_TARGET_CLAUSE_MAX ? p + FJ_TARGET_CLAUSE_MAX
                                                                          : end;
    size_t simp = 0, trad = 0;
    unsigned all = FJ_TO_KEEPS;
    int mergeable = 0, ended = 0;
    while (q < end) {
        /* ASCII, most of it neither script nor the end of a clause. */
        while (q < limit && *q < 0x80 && !(classes[*q] & FJ_TO_ENDS_CLAUSE))
            all &= classes[*q++];
        if (q >= end)
            break;
        uint32_t cp;
        unsigned cls;
        size_t step;
        if ((q[0] & 0xF0) == 0xE0 && end - q >= 3 && (q[1] & 0xC0) == 0x80 &&
            (q[2] & 0xC0) == 0x80 &&
            (cp = (q[0] & 0x0Fu) << 12 | (q[1] & 0x3Fu) << 6 | (q[2] & 0x3Fu)) >= 0x800 &&
            (cp < 0xD800 || cp > 0xDFFF) && !fj_ids_arity(cp)) {
            /* The common case: a three-byte character. */
            if ((size_t)(q - p) + 3 > FJ_TARGET_CLAUSE_MAX) {
                ended = 1;
                break;
            }
            q += 3;
            cls = classes[cp];
        } else {
            int k = fj_utf8_decode(q, end, &cp);
            if (k == FJ_U8_INCOMPLETE && !final)
                return 0;
            step = k > 0 ? (size_t)k : 1;
            int ids = 0;
            if (k > 0 && fj_ids_arity(cp)) {
                /* An ideographic description sequence is one unit, as in
                 * every engine: a clause never ends inside one (⿰。棱). */
                size_t units;
                int st = fj_ids_parse(q, end, &units);
                if (st == FJ_IDS_INCOMPLETE && !final)
                    return 0;
                if (st == FJ_IDS_COMPLETE) {
                    step = units;
                    ids = 1;
                }
            }
            if ((size_t)(q - p) + step > FJ_TARGET_CLAUSE_MAX && q > p) {
                ended = 1;
                break;
            }
            q += step;
            if (k <= 0 || ids) {
                all = 0;
                continue;
            }
            cls = cp < 0x10000 ? classes[cp] : (unsigned)fj__script_class(c->to_script, cp);
        }
        all &= cls;
        simp += (cls & 3) == 1;
        trad += (cls & 3) == 2;
        if (cls & (FJ_TO_DAMAGE | FJ_TO_ENDS_CLAUSE)) {
            if (dw && (cls & FJ_TO_DAMAGE))
                llr = fj__damage_step(dw, llr, cp);
            if (cls & FJ_TO_ENDS_CLAUSE) {
                mergeable = (cls & FJ_TO_MERGEABLE) != 0;
                ended = 1;
                break;
            }
        }
    }
    if (!ended && !final)
        return 0;
    *out = (clause){(size_t)(q - p), simp, trad, llr, mergeable, (all & FJ_TO_KEEPS) != 0};
    return 1;
}

enum {
    KIND_TRADITIONAL = 0,
    KIND_SIMPLIFIED = 1,
    KIND_ROUND_TRIP = 2,
    KIND_AS_WRITTEN = 3,
    KIND_CORRECT = 4 /* Traditional, and it reads as correct */
};

/* Converts text[0..len) the way `kind` says. */
static void convert_kind(const fj_converter *c, int kind, const unsigned char *text, size_t len,
                         fj_out *o, fj_work *w)
{
    if (len == 0)
        return;
    if (kind == KIND_ROUND_TRIP)
        round_trip(c, text, len, o, w);
    else if (kind == KIND_AS_WRITTEN)
        fj__out_put(o, (const char *)text, len);
    else if (kind == KIND_CORRECT) {
        w->sub[0].repair_bias = FJ_REPAIR_CORRECT_BIAS;
        convert_clause(c->to_sub[0], text, len, o, &w->sub[0]);
        w->sub[0].repair_bias = 0;
    } else
        convert_clause(c->to_sub[kind], text, len, o, &w->sub[kind]);
}

/* The route a clause takes after `route`: by its scripts, else as before. */
static int next_route(const fj_converter *c, const clause *cl, int route)
{
    if (cl->simp > cl->trad && !c->to_repair_only)
        return ROUTE_SIMPLIFIED;
    if (cl->trad > cl->simp)
        return ROUTE_TRADITIONAL;
    return route;
}

/* The damage evidence of the clauses in the first FJ_DAMAGE_WINDOW bytes
 * of a text (whole clauses, at least one), gathered as the conversion will
 * gather it; 0 when more input is needed to see them. */
static int first_window(const fj_converter *c, const unsigned char *text, size_t len, int final,
                        const fj_work *w, size_t *span, int32_t *llr)
{
    const unsigned char *q = text, *end = text + len;
    int route = w->route;
    int32_t v = w->damage_llr;
    clause cl;
    while (q < end && (size_t)(q - text) < FJ_DAMAGE_WINDOW) {
        if (!scan_clause(c, q, end, final, v, &cl))
            return 0;
        route = next_route(c, &cl, route);
        if (route == ROUTE_TRADITIONAL)
            v = cl.llr;
        q += cl.len;
    }
    if (q >= end && !final)
        return 0;
    *span = (size_t)(q - text);
    *llr = v;
    return 1;
}

static size_t convert_target(const fj_converter *c, const unsigned char *text, size_t len,
                             int final, fj_out *o, fj_work *w)
{
    if (!w->sub) {
        const fj_allocator *a = w->norm.allocator;
        w->sub = fj__alloc(a, 4 * sizeof(fj_work));
        if (!w->sub) {
            o->status = FJ_ERR_NOMEM;
            return len;
        }
        for (int i = 0; i < 4; i++)
            fj__work_init(&w->sub[i], a);
    }
    for (int i = 0; i < 4; i++) /* fj_inspect: all but the way to Simplified of a round trip */
        w->sub[i].inspect = i == 2 ? NULL : w->inspect;
    if (c->to_rt[0] && !w->damage_window_set) {
        if (!first_window(c, text, len, final, w, &w->damage_window_left, &w->damage_window_llr))
            return 0;
        w->damage_window_set = 1;
    }
    const unsigned char *p = text, *end = text + len, *batch = text;
    int batch_kind = -1, more = 1;
    /* The clauses are scanned a block at a time, then converted: each pass
     * keeps its own tables in the cache. */
    struct {
        uint32_t len;
        unsigned char kind, mergeable;
    } block[FJ_TARGET_SCAN_BLOCK];
    while (more) {
        size_t n = 0;
        const unsigned char *q = p;
        clause cl;
        while (n < FJ_TARGET_SCAN_BLOCK && q < end &&
               (more = scan_clause(c, q, end, final, w->damage_llr, &cl)) != 0) {
            w->route = next_route(c, &cl, w->route);
            int kind = w->route == ROUTE_SIMPLIFIED ? KIND_SIMPLIFIED : KIND_TRADITIONAL;
            int in_window = w->damage_window_left > 0;
            if (in_window)
                w->damage_window_left -= cl.len < w->damage_window_left ? cl.len
                                                                        : w->damage_window_left;
            if (kind == KIND_TRADITIONAL && c->to_rt[0]) {
                w->damage_llr = cl.llr;
                int32_t v = in_window ? w->damage_window_llr : cl.llr;
                if (v >= FJ_DAMAGE_LLR_DAMAGED)
                    kind = KIND_ROUND_TRIP;
                else if (v <= -FJ_DAMAGE_LLR_CORRECT)
                    kind = KIND_CORRECT;
            }
            /* What the Traditional converter would write as it stands is
             * copied (the clause ends at a cut of that converter). */
            if ((kind == KIND_TRADITIONAL || kind == KIND_CORRECT) && cl.kept)
                kind = KIND_AS_WRITTEN;
            block[n].len = (uint32_t)cl.len;
            block[n].kind = (unsigned char)kind;
            block[n].mergeable = (unsigned char)cl.mergeable;
            n++;
            q += cl.len;
        }
        if (q >= end)
            more = 0;
        for (size_t i = 0; i < n; i++) {
            /* Clauses of one kind go together, up to a boundary that is
             * not a barrier everywhere. */
            if (block[i].kind != batch_kind) {
                convert_kind(c, batch_kind, batch, (size_t)(p - batch), o, w);
                batch = p;
                batch_kind = block[i].kind;
            }
            p += block[i].len;
            if (!block[i].mergeable) {
                convert_kind(c, batch_kind, batch, (size_t)(p - batch), o, w);
                batch = p;
            }
        }
    }
    convert_kind(c, batch_kind, batch, (size_t)(p - batch), o, w);
    return (size_t)(p - text);
}

const fj_engine fj__target_engine = {"target", convert_target};

/* Opens the named converters (NULL names give NULL); on failure closes
 * those it opened. */
static fj_status open_all(const fj_dict *dict, const char *const names[], fj_converter *out[],
                          size_t n, unsigned flags, fj_error *error)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = NULL;
        fj_status st = names[i] ? fj_converter_open(dict, names[i], flags, &out[i], error) : FJ_OK;
        if (st != FJ_OK) {
            while (i > 0)
                fj_converter_close(out[--i]);
            return st;
        }
    }
    return FJ_OK;
}

fj_status fj_converter_open_target(const fj_dict *dict, const char *target, unsigned flags,
                                   fj_converter **out, fj_error *error)
{
    if (!out || !dict || !target || (flags & FJ_COMPAT)) {
        fj__set_error(error, FJ_ERR_INVALID_ARGUMENT, 0,
                      flags & FJ_COMPAT ? "a target takes no compatible mode" : "invalid argument");
        return FJ_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    size_t t = 0;
    while (t < sizeof targets / sizeof targets[0] && strcmp(targets[t].name, target) != 0)
        t++;
    if (t == sizeof targets / sizeof targets[0]) {
        fj__set_error(error, FJ_ERR_UNKNOWN_PROFILE, 0,
                      "unknown target '%s' (tw, twp, hk, hkp, cn, hant or hans)", target);
        return FJ_ERR_UNKNOWN_PROFILE;
    }
    /* Without an explicit level, damaged clauses take the round trip and
     * the others careful repair. */
    int auto_repair = !(flags & (FJ_REPAIR_CAREFUL | FJ_REPAIR_THOROUGH | FJ_REPAIR_OFF));
    const char *names[4] = {targets[t].from_traditional, targets[t].from_simplified,
                            auto_repair ? targets[t].round_trip[0] : NULL,
                            auto_repair ? targets[t].round_trip[1] : NULL};
    fj_converter *sub[4];
    fj_status st = open_all(dict, names, sub, 2, auto_repair ? flags | FJ_REPAIR_CAREFUL : flags,
                            error);
    if (st == FJ_OK && (st = open_all(dict, names + 2, sub + 2, 2, flags, error)) != FJ_OK) {
        fj_converter_close(sub[0]);
        fj_converter_close(sub[1]);
    }
    if (st == FJ_OK && (st = fj__converter_new_target(dict, sub, 0, out, error)) != FJ_OK)
        for (int i = 0; i < 4; i++)
            fj_converter_close(sub[i]);
    return st;
}

fj_status fj__converter_open_repair_auto(const fj_dict *dict, const char *profile, unsigned flags,
                                         fj_converter **out, fj_error *error)
{
    size_t r = 0;
    while (r < sizeof repair_round_trips / sizeof repair_round_trips[0] &&
           strcmp(repair_round_trips[r].profile, profile) != 0)
        r++;
    if (r == sizeof repair_round_trips / sizeof repair_round_trips[0])
        return fj_converter_open(dict, profile, flags | FJ_REPAIR_CAREFUL, out, error);
    const char *names[4] = {profile, NULL, repair_round_trips[r].round_trip[0],
                            repair_round_trips[r].round_trip[1]};
    fj_converter *sub[4];
    fj_status st = open_all(dict, names, sub, 2, flags | FJ_REPAIR_CAREFUL, error);
    if (st == FJ_OK && (st = open_all(dict, names + 2, sub + 2, 2, flags, error)) != FJ_OK)
        fj_converter_close(sub[0]);
    if (st == FJ_OK && (st = fj__converter_new_target(dict, sub, 1, out, error)) != FJ_OK)
        for (int i = 0; i < 4; i++)
            fj_converter_close(sub[i]);
    return st;
}
