/* fanjian CLI: output files that appear whole or not at all. */
/* _GNU_SOURCE for O_TMPFILE, AT_EMPTY_PATH and renameat2. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"

int fjx_sink_write(void *ctx, const char *data, size_t len)
{
    fjx_sink *s = ctx;
    while (len) {
        ssize_t n = write(s->fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            s->failed = 1;
            s->err = errno;
            return -1;
        }
        data += n;
        len -= (size_t)n;
        s->bytes += (unsigned long long)n;
    }
    return 0;
}

/* `shown`: a name already made safe to print. */
static void report(const char *shown, const char *what, int err)
{
    fprintf(stderr, "fanjian: cannot write %s: %s\n", shown, what ? what : strerror(err));
}

/* Temporaries being written, for the signal handler to remove: a signal
 * can only reach process-wide state, so this one table is global. */
#define TRACKED_MAX 256
static _Atomic(fjx_outfile *) tracked[TRACKED_MAX];

static void track(fjx_outfile *o)
{
    for (size_t i = 0; i < TRACKED_MAX; i++) {
        fjx_outfile *expected = NULL;
        if (atomic_compare_exchange_strong(&tracked[i], &expected, o))
            return;
    }
}

static void untrack(fjx_outfile *o)
{
    for (size_t i = 0; i < TRACKED_MAX; i++) {
        fjx_outfile *expected = o;
        if (atomic_compare_exchange_strong(&tracked[i], &expected, NULL))
            return;
    }
}

/* Remove every named temporary, then die of the signal. */
static void on_fatal_signal(int sig)
{
    for (size_t i = 0; i < TRACKED_MAX; i++) {
        fjx_outfile *o = atomic_load(&tracked[i]);
        if (o && o->tmp_live)
            unlinkat(o->dir_fd, o->tmp, 0);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The signals whose default action ends the process and that a handler may
 * safely catch. Faults (SEGV, BUS, FPE, ILL, ABRT, TRAP, SYS) are left to
 * their defaults and to the sanitizers: after one, nothing is sure. */
static const int fatal_signals[] = {
    SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
    SIGXFSZ, SIGXCPU, SIGPIPE, SIGIO, SIGPWR, SIGSTKFLT,
};

static void catch_signal(int sig)
{
    struct sigaction old;
    /* A signal ignored by whoever started us (nohup) stays ignored. */
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

void fjx_outfile_install_signals(void)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        catch_signal(fatal_signals[i]);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
        catch_signal(sig);
}

/* A short name for a temporary, fresh each call. */
static void temporary_name(char *buf, size_t size)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char random[6];
    if (getentropy(random, sizeof random) != 0) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        uint64_t v = (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 20) ^ (uint64_t)(uintptr_t)buf;
        for (size_t i = 0; i < sizeof random; i++)
            random[i] = (unsigned char)(v >> (i * 8));
    }
    char suffix[sizeof random + 1];
    for (size_t i = 0; i < sizeof random; i++)
        suffix[i] = digits[random[i] % (sizeof digits - 1)];
    suffix[sizeof random] = 0;
    snprintf(buf, size, ".fanjian-%s", suffix);
}

/* The descriptor a standard-stream name stands for (/dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N), or -1. */
static int stream_name_fd(const char *path)
{
    if (strcmp(path, "/dev/stdout") == 0)
        return 1;
    if (strcmp(path, "/dev/stderr") == 0)
        return 2;
    const char *digits = strncmp(path, "/dev/fd/", 8) == 0          ? path + 8
                         : strncmp(path, "/proc/self/fd/", 14) == 0 ? path + 14
                                                                    : NULL;
    if (!digits || !*digits)
        return -1;
    char *end;
    long fd = strtol(digits, &end, 10);
    return *end || fd < 0 || fd > INT_MAX ? -1 : (int)fd;
}

/* Follows symbolic links from `path` to the file they finally name (which
 * need not exist), stopping early at a standard-stream name. 0, or -1 with
 * errno. */
static int resolve_links(const char *path, char *out, size_t size)
{
    if (strlen(path) >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(out, path);
    for (int hops = 0; hops < 40; hops++) {
        struct stat sb;
        if (stream_name_fd(out) >= 0 || lstat(out, &sb) != 0 || !S_ISLNK(sb.st_mode))
            return 0;
        char link[PATH_MAX];
        ssize_t n = readlink(out, link, sizeof link - 1);
        if (n < 0)
            return -1;
        link[n] = 0;
        const char *slash = strrchr(out, '/');
        if (link[0] == '/' || !slash) {
            if ((size_t)n >= size) {
                errno = ENAMETOOLONG;
                return -1;
            }
            memcpy(out, link, (size_t)n + 1);
        } else {
            size_t dir_len = (size_t)(slash - out) + 1;
            if (dir_len + (size_t)n >= size) {
                errno = ENAMETOOLONG;
                return -1;
            }
            memcpy(out + dir_len, link, (size_t)n + 1);
        }
    }
    errno = ELOOP;
    return -1;
}

/* Creates the temporary in o->dir_fd: unnamed if the file system can. */
static int create_temporary(fjx_outfile *o)
{
    int fd = openat(o->dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
        o->anonymous = 1;
        o->sink.fd = fd;
        return 0;
    }
    for (int tries = 0; tries < 100; tries++) {
        temporary_name(o->tmp, sizeof o->tmp);
        /* Live before it exists: a signal between the two removes nothing. */
        o->tmp_live = 1;
        fd = openat(o->dir_fd, o->tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd >= 0) {
            o->sink.fd = fd;
            return 0;
        }
        o->tmp_live = 0;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

static void init(fjx_outfile *o, const char *shown)
{
    memset(o, 0, sizeof *o);
    o->path = fjf_display_name(shown, o->shown, sizeof o->shown);
    o->dir_fd = -1;
    o->like_fd = -1;
    o->sink.fd = -1;
    o->sink.name = o->path;
}

int fjx_outfile_openat(fjx_outfile *o, int dir_fd, const char *name, const char *shown)
{
    init(o, shown);
    if (strlen(name) > NAME_MAX) {
        report(o->path, NULL, ENAMETOOLONG);
        return -1;
    }
    strcpy(o->name, name);
    o->dir_fd = dir_fd;
    track(o);
    if (create_temporary(o) != 0) {
        int e = errno;
        untrack(o);
        report(o->path, NULL, e);
        return -1;
    }
    return 0;
}

int fjx_outfile_open(fjx_outfile *o, const char *path)
{
    init(o, path);
    char target[PATH_MAX];
    if (resolve_links(path, target, sizeof target) != 0) {
        report(o->path, NULL, errno);
        return -1;
    }
    int stream = stream_name_fd(target);
    struct stat sb;
    if (stream >= 0 || (stat(target, &sb) == 0 && !S_ISREG(sb.st_mode))) {
        if (stream < 0 && S_ISDIR(sb.st_mode)) {
            report(o->path, NULL, EISDIR);
            return -1;
        }
        if (stream < 0 && !S_ISFIFO(sb.st_mode) && !S_ISCHR(sb.st_mode)) {
            report(o->path, "not a regular file, FIFO or character device", 0);
            return -1;
        }
        /* Written through, never replaced: a FIFO stays a FIFO, a device a device. */
        o->through = 1;
        o->sink.fd = stream >= 0 ? fcntl(stream, F_DUPFD_CLOEXEC, 3)
                                 : open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (o->sink.fd < 0) {
            report(o->path, NULL, errno);
            return -1;
        }
        return 0;
    }
    char *slash = strrchr(target, '/');
    const char *name = slash ? slash + 1 : target;
    if (slash == target)
        o->dir_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    else if (slash) {
        *slash = 0;
        o->dir_fd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } else
        o->dir_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (o->dir_fd < 0 || strlen(name) > NAME_MAX || !*name) {
        report(o->path, NULL, o->dir_fd < 0 ? errno : *name ? ENAMETOOLONG : EISDIR);
        if (o->dir_fd >= 0)
            close(o->dir_fd);
        return -1;
    }
    o->own_dir = 1;
    strcpy(o->name, name);
    track(o);
    if (create_temporary(o) != 0) {
        int e = errno;
        untrack(o);
        close(o->dir_fd);
        report(o->path, NULL, e);
        return -1;
    }
    return 0;
}

mode_t fjx_output_mode(const char *path, const char *like)
{
    struct stat sb;
    if (stat(path, &sb) == 0 || (like && stat(like, &sb) == 0))
        return sb.st_mode & 07777;
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* Owner and group of `from` onto `to`, as far as we are permitted: an
 * unprivileged user cannot give a file away, but may keep its group. */
static void copy_owner(int from, int to)
{
    struct stat sb;
    if (fstat(from, &sb) == 0 && fchown(to, sb.st_uid, sb.st_gid) != 0)
        (void)(fchown(to, (uid_t)-1, sb.st_gid) != 0);
}

/* Extended attributes (POSIX ACLs among them) of `from` onto `to`, those we
 * may set: some only root may, some file systems have none. */
static void copy_xattrs(int from, int to)
{
    ssize_t size = flistxattr(from, NULL, 0);
    if (size <= 0)
        return;
    char *names = malloc((size_t)size);
    size = names ? flistxattr(from, names, (size_t)size) : -1;
    for (ssize_t at = 0; at < size; at += (ssize_t)strlen(names + at) + 1) {
        const char *name = names + at;
        ssize_t len = fgetxattr(from, name, NULL, 0);
        char *value = len >= 0 ? malloc(len ? (size_t)len : 1) : NULL;
        if (value && (len = fgetxattr(from, name, value, (size_t)len)) >= 0)
            (void)fsetxattr(to, name, value, (size_t)len, 0);
        free(value);
    }
    free(names);
}

/* Gives the finished file its name. 0, or -1 with errno. */
static int publish(fjx_outfile *o)
{
    if (!o->anonymous) {
        if (!o->no_replace)
            return renameat(o->dir_fd, o->tmp, o->dir_fd, o->name);
        if (renameat2(o->dir_fd, o->tmp, o->dir_fd, o->name, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EINVAL && errno != ENOSYS)
            return -1;
        /* No renameat2 here: a hard link, which never replaces, then unlink. */
        if (linkat(o->dir_fd, o->tmp, o->dir_fd, o->name, 0) != 0)
            return -1;
        unlinkat(o->dir_fd, o->tmp, 0);
        o->tmp_live = 0;
        return 0;
    }
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->sink.fd);
    if (o->no_replace) {
        /* A link never replaces: the check and the naming are one step. */
        if (linkat(AT_FDCWD, proc, o->dir_fd, o->name, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno == EEXIST)
            return -1;
        return linkat(o->sink.fd, "", o->dir_fd, o->name, AT_EMPTY_PATH);
    }
    for (int tries = 0; tries < 100; tries++) {
        temporary_name(o->tmp, sizeof o->tmp);
        o->tmp_live = 1;
        int rc = linkat(AT_FDCWD, proc, o->dir_fd, o->tmp, AT_SYMLINK_FOLLOW);
        if (rc != 0 && errno != EEXIST)
            rc = linkat(o->sink.fd, "", o->dir_fd, o->tmp, AT_EMPTY_PATH);
        if (rc == 0)
            return renameat(o->dir_fd, o->tmp, o->dir_fd, o->name);
        o->tmp_live = 0;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

static void finish(fjx_outfile *o)
{
    if (o->sink.fd >= 0)
        close(o->sink.fd);
    o->sink.fd = -1;
    if (o->tmp_live)
        unlinkat(o->dir_fd, o->tmp, 0);
    o->tmp_live = 0;
    untrack(o);
    if (o->own_dir)
        close(o->dir_fd);
    o->own_dir = 0;
}

int fjx_outfile_commit(fjx_outfile *o, int sync, mode_t mode)
{
    int rc = 0;
    if (o->through) {
        /* fsync means nothing to a FIFO or a terminal; only real failures count. */
        if (sync && fsync(o->sink.fd) != 0 && errno != EINVAL && errno != EROFS)
            rc = -1;
        if (rc != 0 || close(o->sink.fd) != 0) {
            report(o->path, NULL, errno);
            rc = -1;
        }
        o->sink.fd = -1;
        return rc;
    }
    /* Owner first: fchown clears set-user-ID bits that fchmod then sets. */
    if (o->like_fd >= 0)
        copy_owner(o->like_fd, o->sink.fd);
    if (fchmod(o->sink.fd, mode) != 0 || (sync && fsync(o->sink.fd) != 0))
        rc = -1;
    /* The ACL after the mode: it agrees with the mode it came with. */
    if (rc == 0 && o->like_fd >= 0)
        copy_xattrs(o->like_fd, o->sink.fd);
    if (rc == 0 && publish(o) != 0)
        rc = -1;
    int e = errno;
    if (rc == 0)
        o->tmp_live = 0;
    if (close(o->sink.fd) != 0 && rc == 0) {
        e = errno;
        rc = -1;
    }
    o->sink.fd = -1;
    if (rc != 0 && !(o->no_replace && e == EEXIST))
        report(o->path, NULL, e);
    finish(o);
    errno = e;
    return rc;
}

void fjx_outfile_abort(fjx_outfile *o)
{
    if (o->through) {
        if (o->sink.fd >= 0)
            close(o->sink.fd);
        o->sink.fd = -1;
        return;
    }
    finish(o);
}
