/* A test shim, never linked into fanjian: loaded with LD_PRELOAD, it makes
 * one allocation fail, to show that a custom OpenCC config's loader
 * (formats/opencc_config.c) reports "out of memory" and does not crash.
 * Counting starts when the program opens a file whose name ends in
 * $FANJIAN_NOMEM_ARM (the config); the $FANJIAN_NOMEM_NTH-th malloc,
 * calloc or realloc after that returns NULL. Opening a file whose name
 * ends in $FANJIAN_NOMEM_DISARM (the input, read once the config is
 * loaded) stops it. With $FANJIAN_NOMEM_COUNT set, it fails nothing and
 * prints on stderr how many it saw by then. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static int armed; /* 1 counting, 2 done */
static long seen, nth = -1;

/* Whether this allocation is the one to fail (with errno as libc sets it). */
static int fail_now(void)
{
    if (armed != 1 || ++seen != nth)
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

static int ends_with(const char *path, const char *suffix)
{
    size_t pl = path ? strlen(path) : 0, sl = suffix ? strlen(suffix) : 0;
    return suffix && pl >= sl && strcmp(path + pl - sl, suffix) == 0;
}

static void disarm_if_named(const char *path)
{
    if (armed != 1 || !ends_with(path, getenv("FANJIAN_NOMEM_DISARM")))
        return;
    armed = 2;
    if (getenv("FANJIAN_NOMEM_COUNT"))
        report();
}

static void arm_if_named(const char *path)
{
    if (armed || !ends_with(path, getenv("FANJIAN_NOMEM_ARM")))
        return;
    const char *n = getenv("FANJIAN_NOMEM_NTH");
    nth = n && !getenv("FANJIAN_NOMEM_COUNT") ? atol(n) : -1;
    armed = 1;
}

FILE *fopen(const char *path, const char *mode)
{
    static FILE *(*real)(const char *, const char *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "fopen");
    arm_if_named(path);
    disarm_if_named(path);
    return real(path, mode);
}

static int open_as(const char *symbol, const char *path, int flags, va_list ap)
{
    mode_t mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
    int (*real)(const char *, int, ...);
    *(void **)&real = dlsym(RTLD_NEXT, symbol);
    disarm_if_named(path);
    return real(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int fd = open_as("open", path, flags, ap);
    va_end(ap);
    return fd;
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int fd = open_as("open64", path, flags, ap);
    va_end(ap);
    return fd;
}
