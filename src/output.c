/* Output buffers: a caller's fixed buffer (counting what would not fit), a
 * growable buffer, or a buffer drained through a write callback. */
#include <string.h>

#include "internal.h"

static int spill_count(fj_out *o, const char *data, size_t n)
{
    (void)data;
    /* Keep what fits out of the caller's sight: only the size matters now. */
    o->spilled += o->len + n;
    o->len = 0;
    o->buf = o->scratch;
    o->cap = sizeof o->scratch;
    o->status = FJ_ERR_BUFFER_TOO_SMALL;
    return 0;
}

static int spill_grow(fj_out *o, const char *data, size_t n)
{
    if (o->status != FJ_OK)
        return -1;
    size_t need = o->len + n, cap = o->cap ? o->cap : 4096;
    while (cap < need)
        cap *= 2;
    char *p = fj__realloc(o->allocator, o->cap ? o->buf : NULL, o->cap, cap);
    if (!p) {
        o->status = FJ_ERR_NOMEM;
        o->len = 0; /* keep going without output; the status reports it */
        return -1;
    }
    o->buf = p;
    o->cap = cap;
    memcpy(o->buf + o->len, data, n);
    o->len += n;
    return 0;
}

void fj__out_flush(fj_out *o)
{
    if (o->len && o->status == FJ_OK && o->write(o->write_ctx, o->buf, o->len) != 0)
        o->status = FJ_ERR_CALLBACK;
    o->spilled += o->len;
    o->len = 0;
}

static int spill_callback(fj_out *o, const char *data, size_t n)
{
    fj__out_flush(o);
    if (n >= o->cap) {
        if (o->status == FJ_OK && o->write(o->write_ctx, data, n) != 0)
            o->status = FJ_ERR_CALLBACK;
        o->spilled += n;
    } else {
        memcpy(o->buf, data, n);
        o->len = n;
    }
    return o->status == FJ_OK ? 0 : -1;
}

static void out_zero(fj_out *o)
{
    o->buf = NULL;
    o->cap = o->len = o->spilled = 0;
    o->status = FJ_OK;
    o->allocator = NULL;
    o->write = NULL;
    o->write_ctx = NULL;
}

int fj__out_make_room(fj_out *o, size_t need)
{
    if (o->cap - o->len >= need)
        return 1;
    if (o->spill == spill_callback) {
        fj__out_flush(o);
        return o->cap >= need;
    }
    if (o->spill == spill_grow) {
        if (o->status != FJ_OK)
            return 0;
        size_t cap = o->cap ? o->cap : 4096;
        while (cap - o->len < need)
            cap *= 2;
        char *p = fj__realloc(o->allocator, o->cap ? o->buf : NULL, o->cap, cap);
        if (!p) {
            o->status = FJ_ERR_NOMEM;
            return 0;
        }
        o->buf = p;
        o->cap = cap;
        return 1;
    }
    /* The caller's buffer: exact accounting while it is in use; once it has
     * overflowed only the size is kept, and the scratch area takes the bytes. */
    if (o->status == FJ_OK || need > sizeof o->scratch)
        return 0;
    o->spilled += o->len;
    o->len = 0;
    return 1;
}

void fj__out_init_buffer(fj_out *o, char *buf, size_t cap)
{
    out_zero(o);
    o->buf = buf ? buf : o->scratch;
    o->cap = buf ? cap : 0;
    o->spill = spill_count;
}

void fj__out_init_growable(fj_out *o, const fj_allocator *a)
{
    out_zero(o);
    o->allocator = a;
    o->spill = spill_grow;
}

void fj__out_init_callback(fj_out *o, char *buf, size_t cap, fj_write_fn write, void *ctx)
{
    out_zero(o);
    o->buf = buf;
    o->cap = cap;
    o->write = write;
    o->write_ctx = ctx;
    o->spill = spill_callback;
}

void fj__out_release(fj_out *o)
{
    if (o->spill == spill_grow && o->cap)
        fj__free(o->allocator, o->buf, o->cap);
    o->buf = NULL;
    o->cap = o->len = 0;
}

void fj__work_init(fj_work *w, const fj_allocator *a)
{
    fj__out_init_growable(&w->norm, a);
    fj__out_init_growable(&w->stage[0], a);
    fj__out_init_growable(&w->stage[1], a);
    fj__out_init_growable(&w->fused[0], a);
    fj__out_init_growable(&w->fused[1], a);
    fj__out_init_growable(&w->marks, a);
    fj__out_init_growable(&w->lines, a);
    w->fused_long_off = 0;
    for (int i = 0; i < 3; i++)
        fj__out_init_growable(&w->ctx[i], a);
    w->damage_llr = 0;
    w->repair_bias = 0;
    w->damage_window_set = 0;
    w->damage_window_llr = 0;
    w->damage_window_left = 0;
    w->sub = NULL;
    w->route = 0;
    w->inspect = NULL;
    fj__out_init_growable(&w->round_trip[0], a);
    fj__out_init_growable(&w->round_trip[1], a);
}

fj_status fj__work_status(const fj_work *w)
{
    const fj_out *all[] = {&w->norm,     &w->stage[0], &w->stage[1], &w->fused[0],
                           &w->fused[1], &w->marks,    &w->lines,    &w->ctx[0],
                           &w->ctx[1],   &w->ctx[2],   &w->round_trip[0], &w->round_trip[1]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->status != FJ_OK)
            return all[i]->status;
    for (int i = 0; w->sub && i < 4; i++)
        if (fj__work_status(&w->sub[i]) != FJ_OK)
            return fj__work_status(&w->sub[i]);
    return FJ_OK;
}

void fj__work_release(fj_work *w)
{
    fj__out_release(&w->norm);
    fj__out_release(&w->stage[0]);
    fj__out_release(&w->stage[1]);
    fj__out_release(&w->fused[0]);
    fj__out_release(&w->fused[1]);
    fj__out_release(&w->marks);
    fj__out_release(&w->lines);
    for (int i = 0; i < 3; i++)
        fj__out_release(&w->ctx[i]);
    fj__out_release(&w->round_trip[0]);
    fj__out_release(&w->round_trip[1]);
    if (w->sub) {
        for (int i = 0; i < 4; i++)
            fj__work_release(&w->sub[i]);
        fj__free(w->norm.allocator, w->sub, 4 * sizeof(fj_work));
        w->sub = NULL;
    }
}
