/* fanjian formats: libraries loaded on first use (see dynload.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "dynload.h"

static FJF__LIBRARY(fjf_zip_api) zip_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};
static FJF__LIBRARY(fjf_uchardet_api) uchardet_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};
static FJF__LIBRARY(fjf_expat_api) expat_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};
static FJF__LIBRARY(fjf_pcre2_api) pcre2_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};

#define ZIP_SYMBOL(f) {#f, offsetof(fjf_zip_api, f)},
#define UCHARDET_SYMBOL(f) {#f, offsetof(fjf_uchardet_api, f)},
static const fjf__symbol zip_symbols[] = {FJF_ZIP_FUNCTIONS(ZIP_SYMBOL)};
static const fjf__symbol uchardet_symbols[] = {FJF_UCHARDET_FUNCTIONS(UCHARDET_SYMBOL)};
/* The names after macro expansion (pcre2_match_8), hence the second step. */
#define NAME_OF(f) #f
#define EXPANDED_NAME(f) NAME_OF(f)
#define EXPAT_SYMBOL(f) {EXPANDED_NAME(f), offsetof(fjf_expat_api, f)},
#define PCRE2_SYMBOL(f) {EXPANDED_NAME(f), offsetof(fjf_pcre2_api, f)},
static const fjf__symbol expat_symbols[] = {FJF_EXPAT_FUNCTIONS(EXPAT_SYMBOL)};
static const fjf__symbol pcre2_symbols[] = {FJF_PCRE2_FUNCTIONS(PCRE2_SYMBOL)};

int fjf__dl_load(const char *soname, const char *package, const fjf__symbol *syms, size_t n,
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
    zip_lib.ok = fjf__dl_load("libzip.so.4", "libzip4", zip_symbols,
                              sizeof zip_symbols / sizeof zip_symbols[0], &zip_lib.api,
                              zip_lib.why, sizeof zip_lib.why);
}

static void load_uchardet(void)
{
    uchardet_lib.ok = fjf__dl_load("libuchardet.so.0", "libuchardet0", uchardet_symbols,
                                   sizeof uchardet_symbols / sizeof uchardet_symbols[0],
                                   &uchardet_lib.api, uchardet_lib.why, sizeof uchardet_lib.why);
}

const fjf_zip_api *fjf_zip_api_load(char *why, size_t why_size)
{
    pthread_once(&zip_lib.once, load_zip);
    if (!zip_lib.ok && why)
        snprintf(why, why_size, "EPUB: %s", zip_lib.why);
    return zip_lib.ok ? &zip_lib.api : NULL;
}

const fjf_uchardet_api *fjf_uchardet_api_load(void)
{
    pthread_once(&uchardet_lib.once, load_uchardet);
    return uchardet_lib.ok ? &uchardet_lib.api : NULL;
}

static void load_expat(void)
{
    expat_lib.ok = fjf__dl_load("libexpat.so.1", "libexpat1", expat_symbols,
                                sizeof expat_symbols / sizeof expat_symbols[0], &expat_lib.api,
                                expat_lib.why, sizeof expat_lib.why);
}

static void load_pcre2(void)
{
    pcre2_lib.ok = fjf__dl_load("libpcre2-8.so.0", "libpcre2-8-0", pcre2_symbols,
                                sizeof pcre2_symbols / sizeof pcre2_symbols[0], &pcre2_lib.api,
                                pcre2_lib.why, sizeof pcre2_lib.why);
}

const fjf_expat_api *fjf_expat_api_load(char *why, size_t why_size)
{
    pthread_once(&expat_lib.once, load_expat);
    if (!expat_lib.ok && why)
        snprintf(why, why_size, "XML: %s", expat_lib.why);
    return expat_lib.ok ? &expat_lib.api : NULL;
}

const fjf_pcre2_api *fjf_pcre2_api_load(char *why, size_t why_size)
{
    pthread_once(&pcre2_lib.once, load_pcre2);
    if (!pcre2_lib.ok && why)
        snprintf(why, why_size, "Legado rules: %s", pcre2_lib.why);
    return pcre2_lib.ok ? &pcre2_lib.api : NULL;
}
