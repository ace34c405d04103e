/* fanjian serve: the JavaScript package (`make js`) served under /js/, so
 * that the page can load it and convert in the browser, offline. */
#ifndef FJX_SERVE_JS_H
#define FJX_SERVE_JS_H

#include <stddef.h>

enum { FJX_JS_FILES = 4 };

/* The package's files, mapped read-only. */
typedef struct fjx_js {
    struct {
        const char *name; /* served as /js/NAME */
        const char *type; /* Content-Type */
        void *data;
        size_t len;
        char etag[64];
    } file[FJX_JS_FILES];
} fjx_js;

/* Maps the package in `dir` (the directory npm installs, or the build's
 * js/pkg); dir NULL: beside the executable (js/pkg, a build tree), then
 * ../share/fanjian/js from it. 1 when mapped, 0 when dir is NULL and none
 * is found, -1 (with why) when a named or found package is incomplete. */
int fjx_js_open(fjx_js *js, const char *dir, char *why, size_t why_size);
/* The file index for a URL, or -1. */
int fjx_js_route(const char *url);
void fjx_js_close(fjx_js *js);

#endif
