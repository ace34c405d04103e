/* fanjian CLI: libraries loaded on first use (see dynlib.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dynlib.h"

/* One library: filled once, then only read. The one piece of process-wide
 * state, as a loaded library is process-wide itself. */
#define LIBRARY(api_type)                                                                 \
    struct {                                                                              \
        pthread_once_t once;                                                              \
        int ok;                                                                           \
        char why[200];                                                                    \
        api_type api;                                                                     \
    }

static LIBRARY(fjx_zip_api) zip_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};
static LIBRARY(fjx_uchardet_api) uchardet_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};
static LIBRARY(fjx_mhd_api) mhd_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};

typedef struct symbol {
    const char *name;
    size_t offset; /* of its pointer in the api struct */
} symbol;

#define ZIP_SYMBOL(f) {#f, offsetof(fjx_zip_api, f)},
#define UCHARDET_SYMBOL(f) {#f, offsetof(fjx_uchardet_api, f)},
#define MHD_SYMBOL(f) {#f, offsetof(fjx_mhd_api, f)},
static const symbol zip_symbols[] = {FJX_ZIP_FUNCTIONS(ZIP_SYMBOL)};
static const symbol uchardet_symbols[] = {FJX_UCHARDET_FUNCTIONS(UCHARDET_SYMBOL)};
static const symbol mhd_symbols[] = {FJX_MHD_FUNCTIONS(MHD_SYMBOL)};

/* Opens `soname` and fills `api` with its symbols; 1, or 0 with why[]. */
static int load(const char *soname, const char *package, const symbol *syms, size_t n,
                void *api, char *why, size_t why_size)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, why_size, "cannot load %s (Debian: %s): %s", soname, package, dlerror());
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        void *sym = dlsym(h, syms[i].name);
        if (!sym) {
            snprintf(why, why_size, "%s lacks %s", soname, syms[i].name);
            return 0;
        }
        /* dlsym's void * to a function pointer, as POSIX allows. */
        memcpy((char *)api + syms[i].offset, &sym, sizeof sym);
    }
    return 1;
}

static void load_zip(void)
{
    zip_lib.ok = load("libzip.so.4", "libzip4", zip_symbols,
                      sizeof zip_symbols / sizeof zip_symbols[0], &zip_lib.api, zip_lib.why,
                      sizeof zip_lib.why);
}

static void load_uchardet(void)
{
    uchardet_lib.ok = load("libuchardet.so.0", "libuchardet0", uchardet_symbols,
                           sizeof uchardet_symbols / sizeof uchardet_symbols[0],
                           &uchardet_lib.api, uchardet_lib.why, sizeof uchardet_lib.why);
}

static void load_mhd(void)
{
    mhd_lib.ok = load("libmicrohttpd.so.12", "libmicrohttpd12", mhd_symbols,
                      sizeof mhd_symbols / sizeof mhd_symbols[0], &mhd_lib.api, mhd_lib.why,
                      sizeof mhd_lib.why);
}

const fjx_zip_api *fjx_zip_api_load(char *why, size_t why_size)
{
    pthread_once(&zip_lib.once, load_zip);
    if (!zip_lib.ok && why)
        snprintf(why, why_size, "EPUB: %s", zip_lib.why);
    return zip_lib.ok ? &zip_lib.api : NULL;
}

const fjx_uchardet_api *fjx_uchardet_api_load(void)
{
    pthread_once(&uchardet_lib.once, load_uchardet);
    return uchardet_lib.ok ? &uchardet_lib.api : NULL;
}

const fjx_mhd_api *fjx_mhd_api_load(char *why, size_t why_size)
{
    pthread_once(&mhd_lib.once, load_mhd);
    if (!mhd_lib.ok && why)
        snprintf(why, why_size, "serve: %s", mhd_lib.why);
    return mhd_lib.ok ? &mhd_lib.api : NULL;
}
