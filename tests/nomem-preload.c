/* A test shim, never linked into fanjian: loaded with LD_PRELOAD, it makes
 * one allocation fail, to show that a custom OpenCC config's loader
 * (formats/opencc_config.c) reports "out of memory" and does not crash.
 * Counting starts when the program opens a file whose name ends in
 * $FANJIAN_NOMEM_ARM (the config); the $FANJIAN_NOMEM_NTH-th malloc,
 * calloc or realloc after that returns NULL. With $FANJIAN_NOMEM_COUNT
 * set, it fails nothing and prints on stderr, at exit, how many it saw. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static int armed;
static long seen, nth = -1;

/* Whether this allocation is the one to fail (with errno as libc sets it). */
static int fail_now(void)
{
    if (!armed || ++seen != nth)
        return 0;
    errno = ENOMEM;
    return 1;
}

void *malloc(size_t n) { return fail_now() ? NULL : __libc_malloc(n); }

void *calloc(size_t n, size_t size) { return fail_now() ? NULL : __libc_calloc(n, size); }

void *realloc(void *p, size_t n) { return fail_now() ? NULL : __libc_realloc(p, n); }

static void report(void)
{
    char line[64];
    int len = snprintf(line, sizeof line, "nomem-preload: %ld allocations\n", seen);
    if (write(2, line, (size_t)len) < 0)
        return;
}

static void arm_if_named(const char *path)
{
    const char *suffix = getenv("FANJIAN_NOMEM_ARM");
    if (armed || !suffix || !path)
        return;
    size_t pl = strlen(path), sl = strlen(suffix);
    if (pl < sl || strcmp(path + pl - sl, suffix) != 0)
        return;
    const char *n = getenv("FANJIAN_NOMEM_NTH");
    nth = n ? atol(n) : -1;
    if (getenv("FANJIAN_NOMEM_COUNT")) {
        nth = -1;
        atexit(report);
    }
    armed = 1;
}

FILE *fopen(const char *path, const char *mode)
{
    static FILE *(*real)(const char *, const char *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "fopen");
    arm_if_named(path);
    return real(path, mode);
}
