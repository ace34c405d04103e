/* fanjian CLI: a whole tree, in parallel, with progress.
 *
 * The tree is listed first, the output directories are made, then worker
 * threads take files in turn. Every output is written as a temporary beside
 * its target and put in place whole (cli/outfile.c), so an interrupted run
 * leaves each file old or new, never cut short.
 *
 * Nothing is followed that could lead out of the trees: every directory is
 * entered and every file opened relative to an open directory, without
 * following symbolic links, and an input must still be the regular file
 * that was listed (same device and inode) when it is opened. */
/* _GNU_SOURCE for renameat2. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"

typedef struct entry {
    char *rel;      /* path below the root */
    char *out;      /* full output path */
    int is_dir;
    int format;     /* fjf_format, or -1: not ours (copied, or left alone) */
    mode_t mode;
    dev_t dev;      /* what was listed, for the check when it is opened */
    ino_t ino;
    unsigned long long size;
    int failed;     /* decided before the workers start (name clash) */
} entry;

typedef struct list {
    entry *items;
    size_t len, cap;
} list;

typedef struct run {
    const fjx_batch *b;
    int root_fd;      /* the input tree */
    int out_fd;       /* the output tree: out_dir, or the root in place */
    size_t out_base;  /* the length of the outputs' paths before their path in out_fd */
    list files, dirs;
    atomic_size_t next;
    atomic_size_t done, failed, copied;
    atomic_ullong bytes_done;
    unsigned long long bytes_total;
    size_t work_total; /* files to convert or copy */
    struct timespec start;
    atomic_int finished;
} run;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (s) {
        memcpy(s, a, la);
        s[la] = '/';
        memcpy(s + la + 1, b, lb + 1);
    }
    return s;
}

static int push(list *l, const entry *e)
{
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        entry *items = realloc(l->items, cap * sizeof *items);
        if (!items)
            return -1;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->len++] = *e;
    return 0;
}

/* Our own temporaries (".fanjian-XXXXXX", and ".NAME.fanjian-XXXXXX" from
 * earlier versions), left by a killed run. */
static int is_our_temporary(const char *name)
{
    const char *tag = strstr(name, ".fanjian-");
    return name[0] == '.' && tag && strlen(tag) == strlen(".fanjian-XXXXXX");
}

/* Opens the directory rel[0..len) below base_fd, one component at a time
 * and never through a symbolic link; with `create`, making what is missing.
 * A new descriptor, or -1 with errno. */
static int open_below(int base_fd, const char *rel, size_t len, int create)
{
    int fd = openat(base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t at = 0;
    while (fd >= 0 && at < len) {
        const char *slash = memchr(rel + at, '/', len - at);
        size_t n = slash ? (size_t)(slash - (rel + at)) : len - at;
        char component[NAME_MAX + 1];
        if (n > NAME_MAX) {
            close(fd);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(component, rel + at, n);
        component[n] = 0;
        at += n + (slash ? 1 : 0);
        if (n == 0)
            continue;
        if (create && mkdirat(fd, component, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        int next = openat(fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        struct stat sb;
        if (next < 0 && e == ENOTDIR && fstatat(fd, component, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(sb.st_mode))
            e = ELOOP;
        close(fd);
        errno = e;
        fd = next;
    }
    return fd;
}

/* The directory part of a path below a tree, and its last component. */
static size_t dir_len(const char *rel)
{
    const char *slash = strrchr(rel, '/');
    return slash ? (size_t)(slash - rel) : 0;
}

static const char *last_component(const char *rel)
{
    const char *slash = strrchr(rel, '/');
    return slash ? slash + 1 : rel;
}

/* What a message says for errno after open_below or an O_NOFOLLOW open:
 * ELOOP there means a symbolic link was in the way and not followed. */
static const char *why(int err)
{
    return err == ELOOP ? "a symbolic link is in the way (not followed)" : strerror(err);
}

static int known_format(const fjx_settings *s, const char *name)
{
    if (s->format >= 0)
        return s->format;
    const char *dot = strrchr(name, '.');
    return dot && dot[1] ? fjf_format_from_name(dot + 1) : -1;
}

/* A path below the root as a message shows it. */
static const char *shown_path(const run *r, const char *rel, char *buf)
{
    char *path = rel[0] ? join(r->b->root, rel) : strdup(r->b->root);
    fjf_display_name(path ? path : rel, buf, FJF_DISPLAY_MAX);
    free(path);
    return buf;
}

/* Lists the tree below the directory dir_fd (rel below the root), which it
 * closes; the directory (dev, ino) skip is the output directory. -1 when a
 * directory cannot be read (reported). */
static int walk(run *r, int dir_fd, const char *rel, const struct stat *skip)
{
    char shown[FJF_DISPLAY_MAX];
    DIR *d = dir_fd >= 0 ? fdopendir(dir_fd) : NULL;
    if (!d) {
        fprintf(stderr, "fanjian: cannot read directory %s: %s\n", shown_path(r, rel, shown),
                why(errno));
        if (dir_fd >= 0)
            close(dir_fd);
        return -1;
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || is_our_temporary(name))
            continue;
        struct stat sb;
        if (fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            char *sub = rel[0] ? join(rel, name) : strdup(name);
            fprintf(stderr, "fanjian: cannot read %s: %s\n", shown_path(r, sub ? sub : name, shown),
                    strerror(errno));
            free(sub);
            rc = -1;
            break;
        }
        if (skip && sb.st_dev == skip->st_dev && sb.st_ino == skip->st_ino)
            continue;
        /* Symbolic links and devices are not followed: they may lead out of the tree. */
        if (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode))
            continue;
        entry e = {0};
        e.rel = rel[0] ? join(rel, name) : strdup(name);
        if (!e.rel) {
            rc = -1;
            break;
        }
        e.is_dir = S_ISDIR(sb.st_mode);
        e.mode = sb.st_mode & 07777;
        e.dev = sb.st_dev;
        e.ino = sb.st_ino;
        e.size = (unsigned long long)sb.st_size;
        e.format = e.is_dir ? -1 : known_format(r->b->settings, name);
        if (push(e.is_dir ? &r->dirs : &r->files, &e) != 0) {
            free(e.rel);
            rc = -1;
            break;
        }
        if (e.is_dir) {
            int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            rc = walk(r, sub, e.rel, skip);
        }
    }
    if (rc == 0 && errno != 0) {
        fprintf(stderr, "fanjian: cannot read directory %s: %s\n", shown_path(r, rel, shown),
                strerror(errno));
        rc = -1;
    }
    closedir(d);
    return rc;
}

/* The output path of rel: below out_dir (or the root, in place), each
 * component converted when renaming. */
static char *output_path(const run *r, const char *rel)
{
    const fjx_batch *b = r->b;
    const char *base = b->in_place ? b->root : b->out_dir;
    if (!b->rename_files)
        return join(base, rel);
    fjf_buf path = {0};
    int ok = fjf_buf_append(&path, base, strlen(base)) == 0;
    for (const char *p = rel; ok && *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        char *component = strndup(p, n);
        char *converted = component ? fjf_convert_name(&b->settings->f, component) : NULL;
        ok = converted && fjf_buf_append(&path, "/", 1) == 0 &&
             fjf_buf_append(&path, converted, strlen(converted)) == 0;
        free(converted);
        free(component);
        p += n + (slash ? 1 : 0);
    }
    if (!ok || fjf_buf_append(&path, "", 1) != 0) {
        fjf_buf_free(&path);
        return NULL;
    }
    return path.data;
}

static int compare_out(const void *a, const void *b)
{
    const entry *const *x = a, *const *y = b;
    return strcmp((*x)->out, (*y)->out);
}

/* Two inputs that would write one output (头发.txt and 頭髮.txt under
 * --rename): both fail rather than one silently replacing the other. */
static void mark_clashes(run *r)
{
    size_t n = r->files.len;
    entry **order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (r->files.items[i].out)
            order[m++] = &r->files.items[i];
    n = m;
    qsort(order, n, sizeof *order, compare_out);
    for (size_t i = 1; i < n; i++)
        if (strcmp(order[i - 1]->out, order[i]->out) == 0) {
            if (!order[i - 1]->failed) {
                char a[FJF_DISPLAY_MAX], b[FJF_DISPLAY_MAX], out[FJF_DISPLAY_MAX];
                fprintf(stderr, "fanjian: %s and %s would both be written to %s\n",
                        shown_path(r, order[i - 1]->rel, a), shown_path(r, order[i]->rel, b),
                        fjf_display_name(order[i]->out, out, sizeof out));
            }
            order[i - 1]->failed = order[i]->failed = 1;
        }
    free(order);
}

/* Makes the output directory for a listed directory (below out_fd). */
static int make_dir(const run *r, const entry *e)
{
    const char *rel = e->out + r->out_base;
    int fd = open_below(r->out_fd, rel, strlen(rel), 1);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    char shown[FJF_DISPLAY_MAX];
    fprintf(stderr, "fanjian: cannot create directory %s: %s\n",
            fjf_display_name(e->out, shown, sizeof shown), why(errno));
    return -1;
}

/* Copies a file we do not convert into the output tree. */
static int copy_fd(int fd, fjx_sink *out, const char *name, unsigned long long *n)
{
    char buf[1 << 16];
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            fprintf(stderr, "fanjian: cannot read %s: %s\n", name, strerror(errno));
            return -1;
        }
        if (got == 0)
            return 0;
        *n += (unsigned long long)got;
        if (fjx_sink_write(out, buf, (size_t)got) != 0) {
            fprintf(stderr, "fanjian: cannot write %s: %s\n", out->name, strerror(out->err));
            return -1;
        }
    }
}

/* Moves a file we do not convert to its new name (in place, --rename),
 * never over a file that is there. */
static int move_one(const run *r, const entry *e, int in_dir, int out_dir, const char *shown)
{
    const char *name = last_component(e->rel), *out_name = last_component(e->out + r->out_base);
    struct stat sb;
    if (fstatat(in_dir, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode) ||
        sb.st_dev != e->dev || sb.st_ino != e->ino) {
        fprintf(stderr, "fanjian: %s: changed since the tree was listed: skipped\n", shown);
        return -1;
    }
    int rc = renameat2(in_dir, name, out_dir, out_name, RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
        /* No renameat2 here: a hard link never replaces either. */
        rc = linkat(in_dir, name, out_dir, out_name, 0);
        if (rc == 0)
            unlinkat(in_dir, name, 0);
    }
    if (rc != 0) {
        char out[FJF_DISPLAY_MAX];
        fjf_display_name(e->out, out, sizeof out);
        if (errno == EEXIST)
            fprintf(stderr, "fanjian: %s: not moved: %s already exists (both kept)\n", shown, out);
        else
            fprintf(stderr, "fanjian: cannot move %s to %s: %s\n", shown, out, strerror(errno));
    }
    return rc;
}

/* Opens a listed input: never through a symbolic link, and only if it is
 * still the regular file that was listed. A descriptor, or -1 (reported). */
static int open_input(const entry *e, int in_dir, const char *shown)
{
    /* Non-blocking, so that a FIFO put in its place cannot hang us. */
    int fd = openat(in_dir, last_component(e->rel),
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            fprintf(stderr, "fanjian: %s: replaced by a symbolic link since the tree was listed: "
                            "skipped\n", shown);
        else
            fprintf(stderr, "fanjian: cannot open %s: %s\n", shown, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_dev != e->dev || sb.st_ino != e->ino) {
        fprintf(stderr, "fanjian: %s: replaced since the tree was listed: skipped\n", shown);
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

static int convert_one(run *r, entry *e, unsigned long long *bytes)
{
    const fjx_batch *b = r->b;
    const fjx_settings *s = b->settings;
    const char *out_rel = e->out + r->out_base;
    char shown[FJF_DISPLAY_MAX];
    shown_path(r, e->rel, shown);
    int renamed = b->in_place && strcmp(e->rel, out_rel) != 0;
    int in_dir = open_below(r->root_fd, e->rel, dir_len(e->rel), 0);
    int out_dir = in_dir < 0 ? -1 : open_below(r->out_fd, out_rel, dir_len(out_rel), 0);
    if (in_dir < 0 || out_dir < 0) {
        int err = errno;
        char out[FJF_DISPLAY_MAX];
        fprintf(stderr, "fanjian: cannot open %s: %s\n",
                in_dir < 0 ? shown : fjf_display_name(e->out, out, sizeof out), why(err));
        if (in_dir >= 0)
            close(in_dir);
        return -1;
    }
    int rc;
    if (b->in_place && e->format < 0) {
        /* Not ours to convert, but its directory is being renamed: it moves. */
        rc = move_one(r, e, in_dir, out_dir, shown);
        close(in_dir);
        close(out_dir);
        return rc;
    }
    int fd = open_input(e, in_dir, shown);
    fjx_outfile of;
    rc = fd < 0 ? -1 : fjx_outfile_openat(&of, out_dir, last_component(out_rel), e->out);
    int clash = 0;
    if (rc == 0) {
        /* Renamed in place: never over another file (this one, hard-linked, is fine). */
        struct stat taken;
        of.no_replace = renamed &&
                        !(fstatat(out_dir, last_component(out_rel), &taken, AT_SYMLINK_NOFOLLOW) == 0 &&
                          taken.st_dev == e->dev && taken.st_ino == e->ino);
        if (b->in_place)
            of.like_fd = fd; /* the same owner, group, ACLs and attributes */
        if (e->format < 0) {
            rc = copy_fd(fd, &of.sink, shown, bytes);
        } else if (e->format == FJF_TEXT) {
            fjx_text *t = NULL;
            rc = fjx_text_begin(s, fd, shown, &of.sink, &t);
            if (rc == 0)
                rc = fjx_text_input(t, fd, shown, bytes);
            if (rc == 0)
                rc = fjx_text_end(t);
            fjx_text_free(t);
        } else {
            rc = fjx_document_convert(s, (fjf_format)e->format, fd, shown, &of.sink, bytes);
        }
        if (rc == 0) {
            rc = fjx_outfile_commit(&of, b->sync, e->mode);
            clash = rc != 0 && errno == EEXIST && of.no_replace;
        } else {
            fjx_outfile_abort(&of);
        }
    }
    if (clash) {
        char out[FJF_DISPLAY_MAX];
        fprintf(stderr, "fanjian: %s: not converted: its new name %s is taken (both kept)\n", shown,
                fjf_display_name(e->out, out, sizeof out));
    }
    if (fd >= 0)
        close(fd);
    /* Renamed in place: the new name now holds the text; the old one goes. */
    if (rc == 0 && renamed && unlinkat(in_dir, last_component(e->rel), 0) != 0) {
        fprintf(stderr, "fanjian: cannot remove %s: %s\n", shown, strerror(errno));
        rc = -1;
    }
    close(in_dir);
    close(out_dir);
    return rc;
}

static void *worker(void *arg)
{
    run *r = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&r->next, 1);
        if (i >= r->files.len)
            return NULL;
        entry *e = &r->files.items[i];
        if (!e->out)
            continue; /* in place and not ours: left alone */
        unsigned long long bytes = 0;
        int rc = e->failed ? -1 : convert_one(r, e, &bytes);
        atomic_fetch_add(&r->bytes_done, e->size);
        if (rc != 0)
            atomic_fetch_add(&r->failed, 1);
        else if (e->format < 0)
            atomic_fetch_add(&r->copied, 1);
        atomic_fetch_add(&r->done, 1);
    }
}

static void format_duration(char *buf, size_t size, double s)
{
    unsigned long t = s < 0 ? 0 : (unsigned long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, size, "%lu:%02lu", t / 60, t % 60);
}

static void draw_progress(run *r)
{
    size_t done = atomic_load(&r->done);
    unsigned long long bytes = atomic_load(&r->bytes_done);
    double elapsed = seconds_since(&r->start);
    double rate = elapsed > 0 ? (double)bytes / elapsed : 0;
    double frac = r->bytes_total ? (double)bytes / (double)r->bytes_total
                                 : r->work_total ? (double)done / (double)r->work_total : 1;
    char bar[31];
    int filled = (int)(frac * 30 + 0.5);
    for (int i = 0; i < 30; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[30] = 0;
    char eta[32] = "--:--";
    if (rate > 0 && bytes > 0)
        format_duration(eta, sizeof eta, (double)(r->bytes_total - bytes) / rate);
    /* Ends at column 0, so a message printed next starts on a clean line. */
    fprintf(stderr, "\r\033[K[%s] %zu/%zu files  %.1f MB/s  ETA %s\r", bar, done, r->work_total,
            rate / 1e6, eta);
}

static void *progress_thread(void *arg)
{
    run *r = arg;
    const struct timespec tick = {0, 200 * 1000 * 1000};
    while (!atomic_load(&r->finished)) {
        draw_progress(r);
        nanosleep(&tick, NULL);
    }
    fputs("\r\033[K", stderr);
    return NULL;
}

static void free_list(list *l)
{
    for (size_t i = 0; i < l->len; i++) {
        free(l->items[i].rel);
        free(l->items[i].out);
    }
    free(l->items);
}

/* Whether the directory out_dir (which need not exist yet) is `root` or
 * inside it: its nearest existing directory and every parent of that are
 * compared with root by device and inode, so that no spelling of the path
 * (symbolic links, "..", bind mounts) matters. */
static int is_inside(const struct stat *root, const char *out_dir)
{
    size_t len = strlen(out_dir);
    char *path = malloc(len + 2);
    if (!path)
        return 0;
    memcpy(path, out_dir, len + 1);
    int fd;
    while ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 && errno == ENOENT) {
        char *slash = strrchr(path, '/');
        if (!slash)
            strcpy(path, ".");
        else if (slash == path)
            slash[1] = 0;
        else
            *slash = 0;
    }
    free(path);
    int inside = 0;
    while (fd >= 0 && !inside) {
        struct stat here, up;
        int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        inside = fstat(fd, &here) == 0 && here.st_dev == root->st_dev && here.st_ino == root->st_ino;
        int top = parent < 0 || fstat(parent, &up) != 0 ||
                  (up.st_dev == here.st_dev && up.st_ino == here.st_ino);
        close(fd);
        fd = parent;
        if (top) {
            if (fd >= 0)
                close(fd);
            fd = -1;
        }
    }
    if (fd >= 0)
        close(fd);
    return inside;
}

int fjx_batch_run(const fjx_batch *b)
{
    run r;
    memset(&r, 0, sizeof r);
    r.b = b;
    r.root_fd = r.out_fd = -1;
    clock_gettime(CLOCK_MONOTONIC, &r.start);
    char shown_root[FJF_DISPLAY_MAX], shown_out[FJF_DISPLAY_MAX];
    fjf_display_name(b->root, shown_root, sizeof shown_root);
    if (b->out_dir)
        fjf_display_name(b->out_dir, shown_out, sizeof shown_out);
    struct stat root_sb, out_sb;
    /* The root as named is followed (the user chose it); nothing below it is. */
    r.root_fd = open(b->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (r.root_fd < 0 || fstat(r.root_fd, &root_sb) != 0) {
        fprintf(stderr, "fanjian: %s: %s\n", shown_root, strerror(errno));
        if (r.root_fd >= 0)
            close(r.root_fd);
        return 2;
    }
    int have_out = !b->in_place && stat(b->out_dir, &out_sb) == 0;
    if (have_out && out_sb.st_dev == root_sb.st_dev && out_sb.st_ino == root_sb.st_ino) {
        fprintf(stderr, "fanjian: the output directory is the input directory: use --in-place\n");
        close(r.root_fd);
        return 2;
    }
    if (!b->in_place && is_inside(&root_sb, b->out_dir)) {
        fprintf(stderr, "fanjian: the output directory %s is inside the input tree %s (a later run "
                        "would convert its own output): choose one outside it\n",
                shown_out, shown_root);
        close(r.root_fd);
        return 2;
    }
    /* The other way round, an output could land on an input not yet read:
     * -r out/in -o out writes out/in/in/a.txt's output over out/in/a.txt. */
    if (have_out && is_inside(&out_sb, b->root)) {
        fprintf(stderr, "fanjian: the input tree %s is inside the output directory %s (an output "
                        "could replace an input): choose an output directory outside it\n",
                shown_root, shown_out);
        close(r.root_fd);
        return 2;
    }
    int list_fd = openat(r.root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (walk(&r, list_fd, "", have_out ? &out_sb : NULL) != 0) {
        free_list(&r.files);
        free_list(&r.dirs);
        close(r.root_fd);
        return 2;
    }
    int rc = 0;
    r.out_base = strlen(b->in_place ? b->root : b->out_dir) + 1;
    /* Output paths, then the directories to hold them. */
    for (size_t i = 0; i < r.dirs.len && rc == 0; i++)
        if (!(r.dirs.items[i].out = output_path(&r, r.dirs.items[i].rel)))
            rc = 2;
    for (size_t i = 0; i < r.files.len && rc == 0; i++) {
        entry *e = &r.files.items[i];
        if (b->in_place && e->format < 0 && !b->rename_files)
            continue; /* not ours to change */
        if (!(e->out = output_path(&r, e->rel))) {
            rc = 2;
            break;
        }
        if (b->in_place && e->format < 0 && strcmp(e->rel, e->out + r.out_base) == 0) {
            free(e->out); /* stays where it is */
            e->out = NULL;
            continue;
        }
        r.work_total++;
        r.bytes_total += e->size;
    }
    if (rc != 0) {
        fprintf(stderr, "fanjian: out of memory\n");
    } else if (!b->in_place) {
        /* The output directory as named is followed; nothing below it is. */
        if (mkdir(b->out_dir, 0777) != 0 && errno != EEXIST)
            rc = 2;
        else if ((r.out_fd = open(b->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
            rc = 2;
        if (rc != 0)
            fprintf(stderr, "fanjian: cannot create directory %s: %s\n", shown_out, strerror(errno));
        for (size_t i = 0; i < r.dirs.len && rc == 0; i++)
            rc = make_dir(&r, &r.dirs.items[i]) == 0 ? 0 : 2;
    } else {
        r.out_fd = r.root_fd;
        /* Renamed directories are made now and the old ones removed at the end. */
        for (size_t i = 0; b->rename_files && i < r.dirs.len && rc == 0; i++)
            rc = make_dir(&r, &r.dirs.items[i]) == 0 ? 0 : 2;
    }
    if (rc != 0) {
        free_list(&r.files);
        free_list(&r.dirs);
        if (r.out_fd >= 0 && r.out_fd != r.root_fd)
            close(r.out_fd);
        close(r.root_fd);
        return 2;
    }
    mark_clashes(&r);
    /* An EPUB is UTF-8 whatever --to-encoding says; the other files are not. */
    size_t epubs = 0;
    for (size_t i = 0; b->settings->f.to_encoding && i < r.files.len; i++)
        epubs += r.files.items[i].format == FJF_EPUB && r.files.items[i].out;
    if (epubs)
        fprintf(stderr, "fanjian: warning: --to-encoding %s does not apply to EPUB: %zu EPUB%s "
                        "stay%s UTF-8\n", b->settings->f.to_encoding, epubs, epubs == 1 ? "" : "s",
                epubs == 1 ? "s" : "");

    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = b->jobs > 0 ? b->jobs : cores > 0 ? (int)cores : 1;
    if ((size_t)jobs > r.work_total)
        jobs = r.work_total ? (int)r.work_total : 1;
    pthread_t *threads = calloc((size_t)jobs, sizeof *threads);
    int show = b->progress > 0 || (b->progress < 0 && isatty(2));
    pthread_t progress;
    int have_progress = show && pthread_create(&progress, NULL, progress_thread, &r) == 0;
    int started = 0;
    for (int i = 0; threads && i < jobs; i++)
        if (pthread_create(&threads[i], NULL, worker, &r) == 0)
            started++;
    if (started == 0)
        worker(&r); /* no threads to be had: this one does the work */
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    atomic_store(&r.finished, 1);
    if (have_progress)
        pthread_join(progress, NULL);
    free(threads);

    /* In place with --rename: old directories that are now empty go. */
    if (b->in_place && b->rename_files)
        for (size_t i = r.dirs.len; i-- > 0;) {
            const entry *d = &r.dirs.items[i];
            if (strcmp(d->rel, d->out + r.out_base) != 0)
                unlinkat(r.root_fd, d->rel, AT_REMOVEDIR); /* fails, harmlessly, if not empty */
        }

    size_t failed = atomic_load(&r.failed), copied = atomic_load(&r.copied);
    size_t converted = atomic_load(&r.done) - failed - copied;
    double elapsed = seconds_since(&r.start);
    fprintf(stderr, "fanjian: %zu file%s converted", converted, converted == 1 ? "" : "s");
    if (copied)
        fprintf(stderr, ", %zu %s unchanged", copied, b->in_place ? "moved" : "copied");
    fprintf(stderr, ", %zu failed; %.1f MB in %.2f s (%.1f MB/s, %d thread%s)\n", failed,
            (double)r.bytes_total / 1e6, elapsed,
            elapsed > 0 ? (double)r.bytes_total / 1e6 / elapsed : 0.0, jobs, jobs == 1 ? "" : "s");
    free_list(&r.files);
    free_list(&r.dirs);
    if (r.out_fd != r.root_fd)
        close(r.out_fd);
    close(r.root_fd);
    return failed ? 1 : 0;
}
