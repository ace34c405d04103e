/* fanjian CLI: libraries loaded on first use (see dynlib.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "dynlib.h"

/* Filled once, then only read: the one piece of process-wide state, as a
 * loaded library is process-wide itself. */
static struct {
    pthread_once_t once;
    int ok;
    char why[200];
    fjx_zip_api api;
} zip_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};

static struct {
    pthread_once_t once;
    int ok;
    fjx_uchardet_api api;
} uchardet_lib = {PTHREAD_ONCE_INIT, 0, {0}};

static struct {
    pthread_once_t once;
    int ok;
    char why[200];
    fjx_mhd_api api;
} mhd_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};

/* dlsym's void * to a function pointer, as POSIX allows. */
#define FJX_RESOLVE(lib, handle, f)                                                       \
    do {                                                                                  \
        void *sym = dlsym(handle, #f);                                                    \
        if (!sym)                                                                         \
            missing = #f;                                                                 \
        memcpy(&lib.api.f, &sym, sizeof sym);                                             \
    } while (0);

static void load_zip(void)
{
    void *h = dlopen("libzip.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(zip_lib.why, sizeof zip_lib.why, "EPUB needs libzip (Debian: libzip4): %s",
                 dlerror());
        return;
    }
    const char *missing = NULL;
#define X(f) FJX_RESOLVE(zip_lib, h, f)
    FJX_ZIP_FUNCTIONS(X)
#undef X
    if (missing) {
        snprintf(zip_lib.why, sizeof zip_lib.why, "libzip.so.4 lacks %s", missing);
        return;
    }
    zip_lib.ok = 1;
}

const fjx_zip_api *fjx_zip_api_load(char *why, size_t why_size)
{
    pthread_once(&zip_lib.once, load_zip);
    if (!zip_lib.ok && why)
        snprintf(why, why_size, "%s", zip_lib.why);
    return zip_lib.ok ? &zip_lib.api : NULL;
}

static void load_uchardet(void)
{
    void *h = dlopen("libuchardet.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    const char *missing = NULL;
#define X(f) FJX_RESOLVE(uchardet_lib, h, f)
    FJX_UCHARDET_FUNCTIONS(X)
#undef X
    uchardet_lib.ok = !missing;
}

const fjx_uchardet_api *fjx_uchardet_api_load(void)
{
    pthread_once(&uchardet_lib.once, load_uchardet);
    return uchardet_lib.ok ? &uchardet_lib.api : NULL;
}

static void load_mhd(void)
{
    void *h = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(mhd_lib.why, sizeof mhd_lib.why,
                 "serve needs libmicrohttpd (Debian: libmicrohttpd12): %s", dlerror());
        return;
    }
    const char *missing = NULL;
#define X(f) FJX_RESOLVE(mhd_lib, h, f)
    FJX_MHD_FUNCTIONS(X)
#undef X
    if (missing) {
        snprintf(mhd_lib.why, sizeof mhd_lib.why, "libmicrohttpd.so.12 lacks %s", missing);
        return;
    }
    mhd_lib.ok = 1;
}

const fjx_mhd_api *fjx_mhd_api_load(char *why, size_t why_size)
{
    pthread_once(&mhd_lib.once, load_mhd);
    if (!mhd_lib.ok && why)
        snprintf(why, why_size, "%s", mhd_lib.why);
    return mhd_lib.ok ? &mhd_lib.api : NULL;
}
