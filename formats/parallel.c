/* One text on several threads: the text fed is cut where
 * fj_independent_prefix allows, the pieces are converted by worker threads
 * (one immutable converter shared), and the results are written in order.
 * The output is byte for byte fj_stream's; memory holds at most two
 * pieces a thread. Each slot keeps its buffers from piece to piece: fresh
 * memory for every piece cost more page faults than the second thread
 * gained on a fast profile. A text with no place to cut within FJF_PARALLEL_MAX
 * bytes (or a converter that allows none) goes on through one fj_stream. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fanjian-formats.h"

/* Longest stretch kept waiting for a place to cut, in blocks. */
#define FJF_PARALLEL_MAX_BLOCKS 16

enum { SLOT_EMPTY, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE };

typedef struct slot {
    int state;
    char *in, *out;
    size_t in_len, out_len, in_cap, out_cap;
    fj_status st;
} slot;

struct fjf_parallel {
    const fj_converter *conv;
    fj_write_fn write;
    void *write_ctx;
    size_t block;
    unsigned jobs, nslots;
    slot *slots;
    unsigned long long dispatched, written, taken; /* piece numbers */
    pthread_t *threads;
    unsigned started;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    int stopping;
    char *pending;
    size_t pending_len, pending_cap;
    fj_stream *serial; /* after a text with nowhere to cut: the rest goes here */
    fj_status status;
};

/* Grows *buf to hold need bytes, keeping none of what it held. */
static int reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 1;
    size_t grown = need + need / 4 + 4096;
    char *fresh = malloc(grown);
    if (!fresh)
        return 0;
    free(*buf);
    *buf = fresh;
    *cap = grown;
    return 1;
}

/* The slot's piece into its own output buffer, grown when the output is
 * longer than it (then converted again: rare once the buffers are warm). */
static fj_status convert_into(const fj_converter *conv, slot *s)
{
    if (!reserve(&s->out, &s->out_cap, s->in_len + s->in_len / 8 + 64))
        return FJ_ERR_NOMEM;
    fj_status st = fj_convert(conv, s->in, s->in_len, s->out, s->out_cap, &s->out_len);
    if (st == FJ_ERR_BUFFER_TOO_SMALL) {
        if (!reserve(&s->out, &s->out_cap, s->out_len))
            return FJ_ERR_NOMEM;
        st = fj_convert(conv, s->in, s->in_len, s->out, s->out_cap, &s->out_len);
    }
    return st;
}

/* Converts the next piece no one has taken; with p->lock held, which it
 * releases while converting. */
static void convert_next(fjf_parallel *p)
{
    slot *s = &p->slots[p->taken++ % p->nslots];
    s->state = SLOT_BUSY;
    pthread_mutex_unlock(&p->lock);
    s->st = convert_into(p->conv, s);
    pthread_mutex_lock(&p->lock);
    s->state = SLOT_DONE;
    pthread_cond_broadcast(&p->done);
}

static void *worker(void *arg)
{
    fjf_parallel *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stopping && !(p->taken < p->dispatched))
            pthread_cond_wait(&p->work, &p->lock);
        if (!(p->taken < p->dispatched))
            break; /* stopping, and nothing left */
        convert_next(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Writes the next piece in order, waiting for it; 0 when there is none. */
static int write_next(fjf_parallel *p)
{
    if (p->written == p->dispatched)
        return 0;
    slot *s = &p->slots[p->written % p->nslots];
    pthread_mutex_lock(&p->lock);
    /* Waiting, the feeding thread converts a piece itself: it is one of
     * the `jobs`. */
    while (s->state != SLOT_DONE) {
        if (p->taken < p->dispatched)
            convert_next(p);
        else
            pthread_cond_wait(&p->done, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    if (p->status == FJ_OK && s->st != FJ_OK)
        p->status = s->st;
    if (p->status == FJ_OK && s->out_len && p->write(p->write_ctx, s->out, s->out_len) != 0)
        p->status = FJ_ERR_CALLBACK;
    s->in_len = s->out_len = 0;
    s->state = SLOT_EMPTY;
    p->written++;
    return 1;
}

static fj_status start_threads(fjf_parallel *p)
{
    /* The feeding thread converts too, while it waits for the next piece. */
    while (p->started < p->jobs - 1) {
        if (pthread_create(&p->threads[p->started], NULL, worker, p) != 0)
            break;
        p->started++;
    }
    return FJ_OK; /* with fewer threads, the feeding one converts the rest */
}

/* The pending text's first n bytes as a piece of their own, for the workers. */
static fj_status dispatch_pending(fjf_parallel *p, size_t n)
{
    if (!p->started && start_threads(p) != FJ_OK)
        return p->status = FJ_ERR_NOMEM;
    while (p->dispatched - p->written >= p->nslots)
        write_next(p);
    slot *s = &p->slots[p->dispatched % p->nslots];
    if (!reserve(&s->in, &s->in_cap, n ? n : 1))
        return p->status = FJ_ERR_NOMEM;
    memcpy(s->in, p->pending, n);
    memmove(p->pending, p->pending + n, p->pending_len - n);
    p->pending_len -= n;
    s->in_len = n;
    s->out_len = 0;
    s->st = FJ_OK;
    pthread_mutex_lock(&p->lock);
    s->state = SLOT_QUEUED;
    p->dispatched++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    return p->status;
}

/* From here on, one stream: the pieces before it are written first. */
static fj_status go_serial(fjf_parallel *p)
{
    while (write_next(p))
        ;
    if (p->status != FJ_OK)
        return p->status;
    fj_status st = fj_stream_new(p->conv, p->write, p->write_ctx, &p->serial);
    if (st == FJ_OK && p->pending_len)
        st = fj_stream_feed(p->serial, p->pending, p->pending_len);
    p->pending_len = 0;
    return p->status = st;
}

fj_status fjf_parallel_new(const fj_converter *conv, unsigned jobs, size_t block, fj_write_fn write,
                           void *write_ctx, fjf_parallel **out)
{
    if (!conv || !write || !out || jobs == 0)
        return FJ_ERR_INVALID_ARGUMENT;
    *out = NULL;
    fjf_parallel *p = calloc(1, sizeof *p);
    if (!p)
        return FJ_ERR_NOMEM;
    p->conv = conv;
    p->write = write;
    p->write_ctx = write_ctx;
    p->block = block ? block : FJF_PARALLEL_BLOCK;
    p->jobs = jobs;
    p->nslots = 2 * jobs;
    p->slots = calloc(p->nslots, sizeof *p->slots);
    p->threads = calloc(jobs, sizeof *p->threads);
    int locked = pthread_mutex_init(&p->lock, NULL) == 0;
    int work = locked && pthread_cond_init(&p->work, NULL) == 0;
    int done = work && pthread_cond_init(&p->done, NULL) == 0;
    if (!p->slots || !p->threads || !done) {
        if (work)
            pthread_cond_destroy(&p->work);
        if (locked)
            pthread_mutex_destroy(&p->lock);
        free(p->slots);
        free(p->threads);
        free(p);
        return FJ_ERR_NOMEM;
    }
    /* A converter that allows no cut, or one thread: a stream from the start. */
    fj_status st = FJ_OK;
    if (jobs == 1 || fj_independent_prefix(conv, "\n", 1) != 1)
        st = fj_stream_new(conv, write, write_ctx, &p->serial);
    if (st != FJ_OK) {
        fjf_parallel_free(p);
        return st;
    }
    *out = p;
    return FJ_OK;
}

fj_status fjf_parallel_feed(fjf_parallel *p, const char *data, size_t len)
{
    if (p->status != FJ_OK)
        return p->status;
    if (p->serial)
        return p->status = fj_stream_feed(p->serial, data, len);
    if (p->pending_len + len > p->pending_cap) {
        size_t cap = p->pending_cap ? p->pending_cap : p->block;
        while (cap < p->pending_len + len)
            cap *= 2;
        char *grown = realloc(p->pending, cap);
        if (!grown)
            return p->status = FJ_ERR_NOMEM;
        p->pending = grown;
        p->pending_cap = cap;
    }
    memcpy(p->pending + p->pending_len, data, len);
    p->pending_len += len;
    while (p->status == FJ_OK && p->pending_len >= p->block) {
        size_t cut = fj_independent_prefix(p->conv, p->pending, p->pending_len);
        if (cut == 0) {
            if (p->pending_len >= FJF_PARALLEL_MAX_BLOCKS * p->block)
                return go_serial(p);
            break;
        }
        dispatch_pending(p, cut);
    }
    return p->status;
}

fj_status fjf_parallel_finish(fjf_parallel *p)
{
    if (p->status != FJ_OK)
        return p->status;
    if (p->serial)
        return p->status = fj_stream_finish(p->serial);
    /* The rest is the text's end: converted whole, as one-shot conversion
     * converts a text's end. */
    if (p->pending_len)
        dispatch_pending(p, p->pending_len);
    while (write_next(p))
        ;
    return p->status;
}

void fjf_parallel_free(fjf_parallel *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    for (unsigned i = 0; i < p->nslots; i++) {
        free(p->slots[i].out);
        free(p->slots[i].in);
    }
    fj_stream_free(p->serial);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    free(p->pending);
    free(p->slots);
    free(p->threads);
    free(p);
}
