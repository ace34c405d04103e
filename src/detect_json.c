/* fj_detection_json: one JSON shape for a detection, for every caller (the
 * CLI's --json, the HTTP API). */
#include <stdarg.h>
#include <stdio.h>

#include "fanjian.h"

/* snprintf into out[*at..size), counting what would have been written. */
static void put(char *out, size_t size, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *out, size_t size, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = *at < size ? out + *at : NULL;
    int n = vsnprintf(p, p ? size - *at : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at += (size_t)n;
}

size_t fj_detection_json(const fj_detection *r, int with_spans, char *out, size_t size)
{
    size_t at = 0;
    if (!out)
        size = 0;
    if (size)
        out[0] = 0;
    if (!r)
        return 0;
    put(out, size, &at,
        "\"script\":\"%s\",\"confidence\":%.3f,\"han\":%zu,\"simplified\":%zu,"
        "\"traditional\":%zu,\"damage\":",
        fj_script_name(r->script), r->confidence, r->han, r->simplified, r->traditional);
    if (r->damage < 0)
        put(out, size, &at, "null,\"spans\":");
    else
        put(out, size, &at, "%.2f,\"spans\":", r->damage);
    if (!with_spans) {
        put(out, size, &at, "null");
        return at;
    }
    put(out, size, &at, "[");
    size_t shown = r->span_count < r->span_capacity ? r->span_count : r->span_capacity;
    for (size_t i = 0; i < shown && r->spans; i++)
        put(out, size, &at, "%s{\"offset\":%zu,\"length\":%zu,\"script\":\"%s\"}", i ? "," : "",
            r->spans[i].offset, r->spans[i].length, fj_script_name(r->spans[i].script));
    put(out, size, &at, "]");
    return at;
}
