/* fanjian's OpenCC-compatible C API: opencc.h's functions over fanjian's
 * FJ_COMPAT converters. See opencc.h for the behaviour. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fanjian.h"
#include "opencc.h"

/* ---- errors: one message per thread -------------------------------------- */

static _Thread_local char last_error[256];

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

const char *opencc_error(void) { return last_error; }

/* ---- configuration names ------------------------------------------------- */

/* The profile a configuration name stands for: its file name without a
 * final ".json", as the library's profile list names it. NULL when it is
 * none of ours. */
static const char *profile_of(const char *config)
{
    fj_profile_info info = {.size = sizeof info};
    return fj_profile_info_get(NULL, config, &info) == FJ_OK ? info.name : NULL;
}

/* ---- the dictionary: found once per path, shared by the handles ---------- */

/* Where the dictionary is: $FANJIAN_DICT; else beside this library's file in
 * an installed tree (lib/fanjian-opencc/ -> share/fanjian/, also from
 * lib/TRIPLET/fanjian-opencc/) or in the build tree (BUILD/compat/ ->
 * BUILD/fanjian.fjd); else the library's default. */
static const char anchor; /* an address inside this shared object */

static void dict_path(char *path, size_t size)
{
    const char *env = getenv("FANJIAN_DICT");
    if (env && *env) {
        snprintf(path, size, "%s", env);
        return;
    }
    Dl_info info;
    if (dladdr(&anchor, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
        static const char *const rel[] = {"../../share/fanjian/fanjian.fjd",
                                          "../../../share/fanjian/fanjian.fjd",
                                          "../fanjian.fjd"};
        const char *slash = strrchr(info.dli_fname, '/');
        int dirlen = (int)(slash - info.dli_fname);
        for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
            int n = snprintf(path, size, "%.*s/%s", dirlen, info.dli_fname, rel[i]);
            if (n > 0 && (size_t)n < size && access(path, R_OK) == 0)
                return;
        }
    }
    snprintf(path, size, "%s", fj_dict_default_path());
}

typedef struct shared_dict {
    struct shared_dict *next;
    fj_dict *dict;
    size_t refs;
    char path[]; /* as found by dict_path */
} shared_dict;

static pthread_mutex_t dicts_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_dict *dicts;

static shared_dict *dict_acquire(void)
{
    char path[PATH_MAX + 64];
    dict_path(path, sizeof path);
    pthread_mutex_lock(&dicts_lock);
    shared_dict *d = dicts;
    while (d && strcmp(d->path, path) != 0)
        d = d->next;
    if (d) {
        d->refs++;
    } else {
        fj_error err;
        fj_dict *dict = NULL;
        fj_status st = fj_dict_open(path, NULL, &dict, &err);
        size_t len = strlen(path);
        d = st == FJ_OK ? malloc(sizeof *d + len + 1) : NULL;
        if (d) {
            d->dict = dict;
            d->refs = 1;
            memcpy(d->path, path, len + 1);
            d->next = dicts;
            dicts = d;
        } else if (st == FJ_OK) {
            fj_dict_close(dict);
            set_error("fanjian: out of memory");
        } else {
            set_error("fanjian: %s (set FANJIAN_DICT to the dictionary image)", err.message);
        }
    }
    pthread_mutex_unlock(&dicts_lock);
    return d;
}

static void dict_release(shared_dict *d)
{
    pthread_mutex_lock(&dicts_lock);
    if (--d->refs == 0) {
        shared_dict **p = &dicts;
        while (*p != d)
            p = &(*p)->next;
        *p = d->next;
        fj_dict_close(d->dict);
        free(d);
    }
    pthread_mutex_unlock(&dicts_lock);
}

/* ---- handles --------------------------------------------------------------- */

typedef struct handle {
    shared_dict *dict;
    fj_converter *conv;
} handle;

#define BAD_HANDLE ((opencc_t)(intptr_t)-1)

opencc_t opencc_open(const char *configFileName)
{
    const char *config = configFileName ? configFileName : OPENCC_DEFAULT_CONFIG_SIMP_TO_TRAD;
    const char *profile = profile_of(config);
    if (!profile) {
        set_error("%s: unknown configuration (fanjian offers s2t t2s s2tw tw2s s2twp tw2sp "
                  "s2hk hk2s s2hkp hk2sp t2tw tw2t t2hk hk2t t2jp jp2t, as NAME.json)",
                  config);
        return BAD_HANDLE;
    }
    handle *h = malloc(sizeof *h);
    if (!h) {
        set_error("fanjian: out of memory");
        return BAD_HANDLE;
    }
    h->dict = dict_acquire();
    if (!h->dict) {
        free(h);
        return BAD_HANDLE;
    }
    fj_error err;
    if (fj_converter_open(h->dict->dict, profile, FJ_COMPAT, &h->conv, &err) != FJ_OK) {
        set_error("%s: %s", config, err.message);
        dict_release(h->dict);
        free(h);
        return BAD_HANDLE;
    }
    return h;
}

static handle *valid(opencc_t opencc)
{
    if (!opencc || opencc == BAD_HANDLE) {
        set_error(opencc ? "opencc_t is (opencc_t)-1: opencc_open had failed" : "opencc_t is NULL");
        return NULL;
    }
    return opencc;
}

int opencc_close(opencc_t opencc)
{
    handle *h = valid(opencc);
    if (!h)
        return -1;
    fj_converter_close(h->conv);
    dict_release(h->dict);
    free(h);
    return 0;
}

/* ---- conversion ------------------------------------------------------------ */

/* The bytes OpenCC converts: at most `length`, up to the first NUL. */
static size_t input_length(const char *input, size_t length)
{
    return length == (size_t)-1 ? strlen(input) : strnlen(input, length);
}

char *opencc_convert_utf8(opencc_t opencc, const char *input, size_t length)
{
    handle *h = valid(opencc);
    if (!h)
        return NULL;
    if (!input) {
        set_error("opencc_convert_utf8: input is NULL");
        return NULL;
    }
    size_t n = input_length(input, length);
    /* Most text keeps its length; one retry with the exact size otherwise. */
    size_t cap = n <= (SIZE_MAX - 64) / 2 ? n + n / 4 + 64 : SIZE_MAX - 1;
    char *out = malloc(cap + 1);
    size_t len = 0;
    fj_status st = out ? fj_convert(h->conv, input, n, out, cap, &len) : FJ_ERR_NOMEM;
    if (st == FJ_ERR_BUFFER_TOO_SMALL && len < SIZE_MAX) {
        char *bigger = realloc(out, len + 1);
        if (!bigger) {
            st = FJ_ERR_NOMEM;
        } else {
            out = bigger;
            st = fj_convert(h->conv, input, n, out, len, &len);
        }
    }
    if (st != FJ_OK) {
        free(out);
        set_error("opencc_convert_utf8: %s", fj_strerror(st));
        return NULL;
    }
    out[len] = 0;
    return out;
}

size_t opencc_convert_utf8_to_buffer(opencc_t opencc, const char *input, size_t length,
                                     char *output)
{
    handle *h = valid(opencc);
    if (!h)
        return (size_t)-1;
    if (!input || !output) {
        set_error("opencc_convert_utf8_to_buffer: %s is NULL", input ? "output" : "input");
        return (size_t)-1;
    }
    size_t n = input_length(input, length);
    if (n > (SIZE_MAX - 1) / 5) {
        set_error("opencc_convert_utf8_to_buffer: input too long");
        return (size_t)-1;
    }
    /* The caller's buffer holds FANJIAN_OPENCC_BUFFER_SIZE(n) bytes at best
     * (opencc.h): fj_convert writes the converted bytes in order and never
     * past that bound. */
    size_t len = 0;
    fj_status st = fj_convert(h->conv, input, n, output, FANJIAN_OPENCC_BUFFER_SIZE(n) - 1, &len);
    if (st == FJ_ERR_BUFFER_TOO_SMALL) {
        set_error("opencc_convert_utf8_to_buffer: the output (%zu bytes) would exceed 5 times "
                  "the input (%zu bytes)", len, n);
        return (size_t)-1;
    }
    if (st != FJ_OK) {
        set_error("opencc_convert_utf8_to_buffer: %s", fj_strerror(st));
        return (size_t)-1;
    }
    output[len] = 0;
    return len;
}

void opencc_convert_utf8_free(char *str) { free(str); }
