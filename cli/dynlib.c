/* fanjian CLI: libmicrohttpd loaded on first use (see dynlib.h). */
#include <stdio.h>

#include "../formats/dynload.h"
#include "dynlib.h"

static FJF__LIBRARY(fjx_mhd_api) mhd_lib = {PTHREAD_ONCE_INIT, 0, "", {0}};

#define MHD_SYMBOL(f) {#f, offsetof(fjx_mhd_api, f)},
static const fjf__symbol mhd_symbols[] = {FJX_MHD_FUNCTIONS(MHD_SYMBOL)};

static void load_mhd(void)
{
    mhd_lib.ok = fjf__dl_load("libmicrohttpd.so.12", "libmicrohttpd12", mhd_symbols,
                              sizeof mhd_symbols / sizeof mhd_symbols[0], &mhd_lib.api,
                              mhd_lib.why, sizeof mhd_lib.why);
}

const fjx_mhd_api *fjx_mhd_api_load(char *why, size_t why_size)
{
    pthread_once(&mhd_lib.once, load_mhd);
    if (!mhd_lib.ok && why)
        snprintf(why, why_size, "serve: %s", mhd_lib.why);
    return mhd_lib.ok ? &mhd_lib.api : NULL;
}
