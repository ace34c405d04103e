/* fanjian CLI: a whole tree, in parallel, with progress.
 *
 * The tree is listed first (so the output directory, if inside it, is never
 * read back), the output directories are made, then worker threads take
 * files in turn. Every output is written to a temporary beside its target
 * and renamed into place, so an interrupted run leaves each file old or
 * new, never cut short. */
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
    int format;     /* fjx_format, or -1: not ours (copied, or left alone) */
    mode_t mode;
    unsigned long long size;
    int failed;     /* decided before the workers start (name clash) */
} entry;

typedef struct list {
    entry *items;
    size_t len, cap;
} list;

typedef struct run {
    const fjx_batch *b;
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

/* Our own temporaries (".NAME.fanjian-XXXXXX"), left by a killed run. */
static int is_our_temporary(const char *name)
{
    const char *tag = strstr(name, ".fanjian-");
    return name[0] == '.' && tag && strlen(tag) == strlen(".fanjian-XXXXXX");
}

static int known_format(const fjx_settings *s, const char *name)
{
    if (s->format >= 0)
        return s->format;
    const char *dot = strrchr(name, '.');
    return dot && dot[1] ? fjx_format_from_name(dot + 1) : -1;
}

/* Lists the tree below root/rel; the directory (dev, ino) skip is the
 * output directory. -1 when a directory cannot be read (reported). */
static int walk(run *r, const char *rel, const struct stat *skip)
{
    char *path = rel[0] ? join(r->b->root, rel) : strdup(r->b->root);
    if (!path)
        return -1;
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "fanjian: cannot read directory %s: %s\n", path, strerror(errno));
        free(path);
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
            fprintf(stderr, "fanjian: cannot read %s/%s: %s\n", path, name, strerror(errno));
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
        e.size = (unsigned long long)sb.st_size;
        e.format = e.is_dir ? -1 : known_format(r->b->settings, name);
        if (push(e.is_dir ? &r->dirs : &r->files, &e) != 0) {
            free(e.rel);
            rc = -1;
            break;
        }
        if (e.is_dir)
            rc = walk(r, e.rel, skip);
    }
    if (rc == 0 && errno != 0) {
        fprintf(stderr, "fanjian: cannot read directory %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    closedir(d);
    free(path);
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
    fjx_buf path = {0};
    int ok = fjx_buf_append(&path, base, strlen(base)) == 0;
    for (const char *p = rel; ok && *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        char *component = strndup(p, n);
        char *converted = component ? fjx_convert_name(b->settings, component) : NULL;
        ok = converted && fjx_buf_append(&path, "/", 1) == 0 &&
             fjx_buf_append(&path, converted, strlen(converted)) == 0;
        free(converted);
        free(component);
        p += n + (slash ? 1 : 0);
    }
    if (!ok || fjx_buf_append(&path, "", 1) != 0) {
        fjx_buf_free(&path);
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
            if (!order[i - 1]->failed)
                fprintf(stderr, "fanjian: %s/%s and %s/%s would both be written to %s\n",
                        r->b->root, order[i - 1]->rel, r->b->root, order[i]->rel, order[i]->out);
            order[i - 1]->failed = order[i]->failed = 1;
        }
    free(order);
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST) {
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            return 0;
        errno = ENOTDIR;
    }
    fprintf(stderr, "fanjian: cannot create directory %s: %s\n", path, strerror(errno));
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

static int convert_one(run *r, entry *e, unsigned long long *bytes)
{
    const fjx_batch *b = r->b;
    const fjx_settings *s = b->settings;
    char *in_path = join(b->root, e->rel);
    if (!in_path)
        return -1;
    if (b->in_place && e->format < 0) {
        /* Not ours to convert, but its directory is being renamed: it moves. */
        int rc = strcmp(in_path, e->out) == 0 || rename(in_path, e->out) == 0 ? 0 : -1;
        if (rc != 0)
            fprintf(stderr, "fanjian: cannot move %s to %s: %s\n", in_path, e->out,
                    strerror(errno));
        free(in_path);
        return rc;
    }
    int fd = open(in_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "fanjian: cannot open %s: %s\n", in_path, strerror(errno));
        free(in_path);
        return -1;
    }
    fjx_outfile of;
    int rc = fjx_outfile_open(&of, e->out);
    if (rc == 0) {
        if (e->format < 0) {
            rc = copy_fd(fd, &of.sink, in_path, bytes);
        } else if (e->format == FJX_TEXT) {
            fjx_text *t = NULL;
            rc = fjx_text_begin(s, &of.sink, &t);
            if (rc == 0)
                rc = fjx_text_input(t, fd, in_path, bytes);
            if (rc == 0)
                rc = fjx_text_end(t);
            fjx_text_free(t);
        } else {
            rc = fjx_document_convert(s, (fjx_format)e->format, fd, in_path, &of.sink, bytes);
        }
        if (rc == 0)
            rc = fjx_outfile_commit(&of, b->sync, e->mode);
        else
            fjx_outfile_abort(&of);
    }
    close(fd);
    /* Renamed in place: the new name now holds the text; the old one goes. */
    if (rc == 0 && b->in_place && strcmp(in_path, e->out) != 0 && unlink(in_path) != 0) {
        fprintf(stderr, "fanjian: cannot remove %s: %s\n", in_path, strerror(errno));
        rc = -1;
    }
    free(in_path);
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

int fjx_batch_run(const fjx_batch *b)
{
    run r;
    memset(&r, 0, sizeof r);
    r.b = b;
    clock_gettime(CLOCK_MONOTONIC, &r.start);
    struct stat root_sb, out_sb;
    if (stat(b->root, &root_sb) != 0 || !S_ISDIR(root_sb.st_mode)) {
        fprintf(stderr, "fanjian: %s: %s\n", b->root,
                errno && !S_ISDIR(root_sb.st_mode) ? strerror(errno) : "not a directory");
        return 2;
    }
    int have_out = !b->in_place && stat(b->out_dir, &out_sb) == 0;
    if (have_out && out_sb.st_dev == root_sb.st_dev && out_sb.st_ino == root_sb.st_ino) {
        fprintf(stderr, "fanjian: the output directory is the input directory: use --in-place\n");
        return 2;
    }
    if (walk(&r, "", have_out ? &out_sb : NULL) != 0) {
        free_list(&r.files);
        free_list(&r.dirs);
        return 2;
    }
    int rc = 0;
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
        if (b->in_place && e->format < 0) {
            char *in = join(b->root, e->rel);
            int same = !in || strcmp(in, e->out) == 0;
            free(in);
            if (same) {
                free(e->out); /* stays where it is */
                e->out = NULL;
                continue;
            }
        }
        r.work_total++;
        r.bytes_total += e->size;
    }
    if (rc != 0) {
        fprintf(stderr, "fanjian: out of memory\n");
    } else if (!b->in_place) {
        rc = make_dir(b->out_dir) == 0 ? 0 : 2;
        for (size_t i = 0; i < r.dirs.len && rc == 0; i++)
            rc = make_dir(r.dirs.items[i].out) == 0 ? 0 : 2;
    } else if (b->rename_files) {
        /* Renamed directories are made now and the old ones removed at the end. */
        for (size_t i = 0; i < r.dirs.len && rc == 0; i++)
            rc = make_dir(r.dirs.items[i].out) == 0 ? 0 : 2;
    }
    if (rc != 0) {
        free_list(&r.files);
        free_list(&r.dirs);
        return 2;
    }
    mark_clashes(&r);

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
            char *old = join(b->root, r.dirs.items[i].rel);
            if (old && strcmp(old, r.dirs.items[i].out) != 0)
                rmdir(old); /* fails, harmlessly, if something is left in it */
            free(old);
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
    return failed ? 1 : 0;
}
