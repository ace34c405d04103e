/* Every allocation goes through the caller's allocator when one is given. */
#include <stdlib.h>

#include "internal.h"

void *fj__alloc(const fj_allocator *a, size_t n)
{
    return (a && a->alloc) ? a->alloc(a->ctx, n) : malloc(n);
}

void *fj__realloc(const fj_allocator *a, void *p, size_t old_n, size_t new_n)
{
    return (a && a->realloc) ? a->realloc(a->ctx, p, old_n, new_n) : realloc(p, new_n);
}

void fj__free(const fj_allocator *a, void *p, size_t n)
{
    if (!p)
        return;
    if (a && a->free)
        a->free(a->ctx, p, n);
    else
        free(p);
}
