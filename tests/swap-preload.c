/* A test shim, never linked into fanjian: loaded with LD_PRELOAD, it swaps
 * one file for a symbolic link just before the program opens it, the race
 * an attacker could win against `fanjian -r` between listing a tree and
 * reading it. The first open of a file whose last path component is
 * $FANJIAN_SWAP_NAME replaces that file with a link to $FANJIAN_SWAP_TARGET,
 * then opens as asked. With $FANJIAN_NO_TMPFILE set, it also plays a file
 * system without unnamed files: O_TMPFILE fails with EOPNOTSUPP, so that
 * fanjian's named-temporary path can be tested. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int swapped;

static void swap_if_named(int dir_fd, const char *path)
{
    const char *name = getenv("FANJIAN_SWAP_NAME"), *target = getenv("FANJIAN_SWAP_TARGET");
    if (!name || !target || !path)
        return;
    const char *slash = strrchr(path, '/');
    if (strcmp(slash ? slash + 1 : path, name) != 0 || atomic_exchange(&swapped, 1))
        return;
    unlinkat(dir_fd, path, 0);
    symlinkat(target, dir_fd, path);
}

typedef int (*openat_fn)(int, const char *, int, ...);

static int forward(const char *symbol, int dir_fd, const char *path, int flags, mode_t mode)
{
    swap_if_named(dir_fd, path);
    if ((flags & O_TMPFILE) == O_TMPFILE && getenv("FANJIAN_NO_TMPFILE")) {
        errno = EOPNOTSUPP;
        return -1;
    }
    openat_fn real = (openat_fn)dlsym(RTLD_NEXT, symbol);
    return real(dir_fd, path, flags, mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int openat(int dir_fd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return forward("openat", dir_fd, path, flags, mode);
}

int openat64(int dir_fd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return forward("openat64", dir_fd, path, flags, mode);
}

/* open(path, ...) is openat(AT_FDCWD, path, ...). */
int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return forward("openat", AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return forward("openat64", AT_FDCWD, path, flags, mode);
}
