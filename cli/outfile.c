/* fanjian CLI: output files that appear whole or not at all. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* SIGINT, SIGTERM, SIGHUP: remove every temporary, then die of the signal. */
static void on_fatal_signal(int sig)
{
    for (size_t i = 0; i < TRACKED_MAX; i++) {
        fjx_outfile *o = atomic_load(&tracked[i]);
        if (o && o->tmp_live)
            unlink(o->tmp);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void fjx_outfile_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int fjx_outfile_open(fjx_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->sink.fd = -1;
    o->sink.name = path;
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    /* Hidden, beside the target (same file system, so rename is atomic). */
    int n = snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.fanjian-XXXXXX", dir_len, path,
                     slash ? slash + 1 : path);
    if (n < 0 || (size_t)n >= sizeof o->tmp) {
        fprintf(stderr, "fanjian: cannot write %s: %s\n", path, strerror(ENAMETOOLONG));
        return -1;
    }
    track(o);
    /* Live before it exists: a signal between the two removes nothing. */
    o->tmp_live = 1;
    o->sink.fd = mkstemp(o->tmp);
    if (o->sink.fd >= 0)
        fcntl(o->sink.fd, F_SETFD, FD_CLOEXEC);
    if (o->sink.fd < 0) {
        int e = errno;
        o->tmp_live = 0;
        untrack(o);
        fprintf(stderr, "fanjian: cannot write %s: %s\n", path, strerror(e));
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

int fjx_outfile_commit(fjx_outfile *o, int sync, mode_t mode)
{
    int rc = 0;
    if (fchmod(o->sink.fd, mode) != 0 || (sync && fsync(o->sink.fd) != 0))
        rc = -1;
    if (close(o->sink.fd) != 0)
        rc = -1;
    o->sink.fd = -1;
    if (rc == 0 && rename(o->tmp, o->path) != 0)
        rc = -1;
    if (rc != 0) {
        fprintf(stderr, "fanjian: cannot write %s: %s\n", o->path, strerror(errno));
        unlink(o->tmp);
    }
    o->tmp_live = 0;
    untrack(o);
    return rc;
}

void fjx_outfile_abort(fjx_outfile *o)
{
    if (o->sink.fd >= 0)
        close(o->sink.fd);
    o->sink.fd = -1;
    if (o->tmp_live)
        unlink(o->tmp);
    o->tmp_live = 0;
    untrack(o);
}
