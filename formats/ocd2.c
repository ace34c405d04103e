/* OpenCC's .ocd2 dictionaries (ocd2.h). After the header and the trie
 * come, little-endian: the entry count (u32), the values' total length
 * (u32) and their bytes, each value NUL-terminated; then per entry, in key
 * id order, its value count (u16) and each value's length with its NUL
 * (u16). */
#define _GNU_SOURCE /* dladdr */
#include "ocd2.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dynload.h"
#include "fanjian.h"

#define OCD2_HEADER "OPENCC_MARISA_0.2.5"
/* Far above OpenCC's largest (STPhrases, under 2 MiB). */
#define OCD2_MAX ((size_t)1 << 30)
/* libmarisa checks little inside a trie: one damaged there can crash it
 * or loop forever. So a child process reads the keys, and a child that
 * dies, or takes this long plus a second per MiB, is a damaged file, not a
 * crash. (OpenCC's largest takes milliseconds.) */
#define OCD2_CHILD_SECONDS 10

/* libmarisa is C++: it and libstdc++ would add most of a millisecond to
 * every start of every program. So the shim over it (marisa_shim.cc) is
 * its own small library, loaded when a .ocd2 is first read, unless the
 * program has the shim linked in (the Python module): then these weak
 * references find it. */
#pragma weak fjf__marisa_map
#pragma weak fjf__marisa_each_key
#define MARISA_SHIM "libfanjian-marisa.so.0"

typedef struct marisa_api {
    __typeof__(fjf__marisa_map) *map;
    __typeof__(fjf__marisa_each_key) *each_key;
} marisa_api;

static FJF__LIBRARY(marisa_api) marisa = {PTHREAD_ONCE_INIT, 0, "", {0, 0}};

static const fjf__symbol marisa_symbols[] = {
    {"fjf__marisa_map", offsetof(marisa_api, map)},
    {"fjf__marisa_each_key", offsetof(marisa_api, each_key)},
};

/* Beside the program (or library) holding this code, one directory up
 * (a test in build/tests), in ../lib from it (PREFIX/bin/fanjian), then
 * wherever the dynamic linker looks. */
static void load_marisa(void)
{
    if (fjf__marisa_map && fjf__marisa_each_key) {
        marisa.api = (marisa_api){fjf__marisa_map, fjf__marisa_each_key};
        marisa.ok = 1;
        return;
    }
    const size_t nsym = sizeof marisa_symbols / sizeof marisa_symbols[0];
    Dl_info info;
    if (dladdr((void *)load_marisa, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
        const char *slash = strrchr(info.dli_fname, '/');
        static const char *const rel[] = {"/" MARISA_SHIM, "/../" MARISA_SHIM, "/../lib/" MARISA_SHIM};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char path[4096];
            int n = snprintf(path, sizeof path, "%.*s%s", (int)(slash - info.dli_fname),
                             info.dli_fname, rel[i]);
            if (n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0 &&
                (marisa.ok = fjf__dl_load(path, "libmarisa0", marisa_symbols, nsym, &marisa.api,
                                          marisa.why, sizeof marisa.why)))
                return;
        }
    }
    marisa.ok = fjf__dl_load(MARISA_SHIM, "libmarisa0", marisa_symbols, nsym, &marisa.api,
                             marisa.why, sizeof marisa.why);
}

/* The file's bytes after the header, in memory malloc aligns (the trie is
 * read in place); *len their count. NULL and err when it cannot. */
static unsigned char *read_body(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char header[sizeof OCD2_HEADER - 1];
    unsigned char *body = NULL;
    size_t cap = 0, n = 0;
    if (fread(header, 1, sizeof header, f) != sizeof header ||
        memcmp(header, OCD2_HEADER, sizeof header) != 0) {
        snprintf(err, errlen, "%s: not an OpenCC .ocd2 dictionary (no %s header)", path,
                 OCD2_HEADER);
        goto fail;
    }
    for (;;) {
        if (n == cap) {
            size_t want = cap ? cap * 2 : 1 << 16;
            unsigned char *grown = want <= OCD2_MAX + 1 ? realloc(body, want) : NULL;
            if (!grown) {
                snprintf(err, errlen, "%s: %s", path,
                         want > OCD2_MAX + 1 ? "larger than 1 GiB" : "out of memory");
                goto fail;
            }
            body = grown;
            cap = want;
        }
        size_t got = fread(body + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        goto fail;
    }
    fclose(f);
    *len = n;
    return body;
fail:
    free(body);
    fclose(f);
    return NULL;
}

typedef struct key_sink {
    oc_entry *entries; /* by key id */
    size_t count;
    const char *path;
    char *err;
    size_t errlen;
} key_sink;

static int take_key(void *ctx, const char *key, size_t len, size_t id)
{
    key_sink *s = ctx;
    if (id >= s->count || s->entries[id].key) {
        snprintf(s->err, s->errlen, "%s: damaged trie (key id %zu out of place)", s->path, id);
        return -1;
    }
    if (memchr(key, 0, len)) {
        snprintf(s->err, s->errlen, "%s: a key with a NUL byte (key id %zu)", s->path, id);
        return -1;
    }
    s->entries[id].key = malloc(len + 1);
    if (!s->entries[id].key) {
        snprintf(s->err, s->errlen, "out of memory");
        return -1;
    }
    memcpy(s->entries[id].key, key, len);
    s->entries[id].key[len] = 0;
    return 0;
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t get_u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* The values after the trie, p[0..len), into the entries' values; 0, or -1
 * with err. */
static int read_values(const unsigned char *p, size_t len, key_sink *s)
{
    const char *path = s->path;
    if (len < 8) {
        snprintf(s->err, s->errlen, "%s: truncated (no values after the trie)", path);
        return -1;
    }
    uint32_t items = get_u32(p), total = get_u32(p + 4);
    if (items != s->count) {
        snprintf(s->err, s->errlen, "%s: damaged: %u values for %zu keys", path, items, s->count);
        return -1;
    }
    if (total > len - 8) {
        snprintf(s->err, s->errlen, "%s: truncated (in the values)", path);
        return -1;
    }
    const unsigned char *text = p + 8, *lens = text + total, *end = p + len;
    size_t used = 0;
    for (size_t i = 0; i < s->count; i++) {
        if (end - lens < 2) {
            snprintf(s->err, s->errlen, "%s: truncated (in the value lengths)", path);
            return -1;
        }
        uint16_t nvalues = get_u16(lens);
        lens += 2;
        if (nvalues == 0) {
            snprintf(s->err, s->errlen, "%s: damaged: no value for key %s", path, s->entries[i].key);
            return -1;
        }
        if ((size_t)(end - lens) < 2u * nvalues) {
            snprintf(s->err, s->errlen, "%s: truncated (in the value lengths)", path);
            return -1;
        }
        oc_entry *e = &s->entries[i];
        e->values = calloc(nvalues, sizeof *e->values);
        if (!e->values) {
            snprintf(s->err, s->errlen, "out of memory");
            return -1;
        }
        for (uint16_t v = 0; v < nvalues; v++, lens += 2) {
            size_t n = get_u16(lens);
            const char *value = (const char *)text + used;
            int cut;
            if (n == 0 || n > total - used || value[n - 1] != 0 || memchr(value, 0, n - 1)) {
                snprintf(s->err, s->errlen, "%s: damaged: a value beyond the values (key %s)", path,
                         e->key);
                return -1;
            }
            if (fj_utf8_valid(value, n - 1, &cut) != n - 1) {
                snprintf(s->err, s->errlen, "%s: not UTF-8: a value of key %s", path, e->key);
                return -1;
            }
            used += n;
            if (!(e->values[v] = strdup(value))) {
                snprintf(s->err, s->errlen, "out of memory");
                return -1;
            }
            e->value_count++;
        }
    }
    if (used != total || lens != end) {
        snprintf(s->err, s->errlen, "%s: damaged: %s", path,
                 used != total ? "values left over" : "bytes after the values");
        return -1;
    }
    return 0;
}

/* ---- the keys, read by a child process ------------------------------------- */

/* What the child writes: one header, then each key as id (u64), length
 * (u32) and bytes, then an id of UINT64_MAX; or, on failure, a header with
 * ok 0 and the message. */
typedef struct child_header {
    uint32_t ok;
    uint64_t used, keys;
    char why[200];
} child_header;

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int child_key(void *ctx, const char *key, size_t len, size_t id)
{
    int fd = *(int *)ctx;
    uint64_t id64 = id;
    uint32_t len32 = (uint32_t)len;
    return len > UINT32_MAX || write_all(fd, &id64, 8) || write_all(fd, &len32, 4) ||
                   write_all(fd, key, len)
               ? -1
               : 0;
}

static void child_read(const unsigned char *body, size_t len, int fd)
{
    child_header h;
    memset(&h, 0, sizeof h);
    size_t used = 0, keys = 0;
    fjf_marisa *trie = marisa.api.map(body, len, &used, &keys, h.why, sizeof h.why);
    h.ok = trie != NULL;
    h.used = used;
    h.keys = keys;
    if (write_all(fd, &h, sizeof h) != 0 || !trie)
        _exit(1);
    char why[200] = "";
    int rc = marisa.api.each_key(trie, child_key, &fd, why, sizeof why);
    uint64_t end = UINT64_MAX;
    if (rc == 0)
        rc = write_all(fd, &end, 8);
    _exit(rc == 0 ? 0 : 1);
}

/* Reads n bytes from the child, waiting until `deadline` at most: 0, or -1
 * (the message in why). */
static int read_child(int fd, void *p, size_t n, time_t deadline, char *why, size_t whylen)
{
    char *c = p;
    while (n) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int left = (int)(deadline - time(NULL));
        int r = left > 0 ? poll(&pf, 1, left * 1000) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0) {
            snprintf(why, whylen, "libmarisa did not finish in time");
            return -1;
        }
        ssize_t got = r > 0 ? read(fd, c, n) : -1;
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            snprintf(why, whylen, "libmarisa stopped");
            return -1;
        }
        c += got;
        n -= (size_t)got;
    }
    return 0;
}

/* The trie's keys into s (entries by id), *used its bytes and *keys its
 * key count: 0, or -1 with why (or s's message). */
static int keys_isolated(const unsigned char *body, size_t len, size_t *used, size_t *keys,
                         key_sink *s, char *why, size_t whylen)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, whylen, "cannot make a pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL); /* nothing buffered twice */
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, whylen, "cannot start a process: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_read(body, len, fds[1]);
    }
    close(fds[1]);
    time_t deadline = time(NULL) + OCD2_CHILD_SECONDS + (time_t)(len >> 20);
    child_header h;
    int rc = read_child(fds[0], &h, sizeof h, deadline, why, whylen);
    if (rc == 0 && !h.ok) {
        h.why[sizeof h.why - 1] = 0;
        snprintf(why, whylen, "%s", h.why);
        rc = -1;
    }
    if (rc == 0 && (h.used > len || h.keys > len)) {
        snprintf(why, whylen, "key count out of range");
        rc = -1;
    }
    if (rc == 0) {
        *used = (size_t)h.used;
        *keys = (size_t)h.keys;
        s->count = (size_t)h.keys;
        s->entries = calloc(s->count ? s->count : 1, sizeof(oc_entry));
        if (!s->entries) {
            snprintf(why, whylen, "out of memory");
            rc = -1;
        }
    }
    char *key = NULL;
    size_t cap = 0;
    while (rc == 0) {
        uint64_t id;
        uint32_t klen;
        if ((rc = read_child(fds[0], &id, 8, deadline, why, whylen)) != 0 || id == UINT64_MAX)
            break;
        if ((rc = read_child(fds[0], &klen, 4, deadline, why, whylen)) != 0)
            break;
        if (klen + 1 > cap) {
            char *grown = realloc(key, klen + 1);
            if (!grown) {
                snprintf(why, whylen, "out of memory");
                rc = -1;
                break;
            }
            key = grown;
            cap = klen + 1;
        }
        if ((rc = read_child(fds[0], key, klen, deadline, why, whylen)) != 0)
            break;
        rc = take_key(s, key, klen, (size_t)id);
    }
    free(key);
    close(fds[0]);
    int status = 0;
    if (rc != 0)
        kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        if (WIFSIGNALED(status))
            snprintf(why, whylen, "libmarisa crashed on it (signal %d)", WTERMSIG(status));
        else
            snprintf(why, whylen, "libmarisa failed on it");
        rc = -1;
    } else if (rc != 0 && WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL &&
               strcmp(why, "libmarisa stopped") == 0) {
        snprintf(why, whylen, "libmarisa crashed on it (signal %d)", WTERMSIG(status));
    }
    /* The key count must be met exactly: a missing key is damage too. */
    for (size_t i = 0; rc == 0 && i < s->count; i++)
        if (!s->entries[i].key) {
            snprintf(why, whylen, "key id %zu missing", i);
            rc = -1;
        }
    return rc;
}

oc_dict *oc_dict_read_ocd2(const char *path, char *err, size_t errlen)
{
    size_t len, used = 0, keys = 0;
    unsigned char *body = read_body(path, &len, err, errlen);
    if (!body)
        return NULL;
    pthread_once(&marisa.once, load_marisa);
    if (!marisa.ok) {
        snprintf(err, errlen, "%s: %s", path, marisa.why);
        free(body);
        return NULL;
    }
    char why[200] = "";
    key_sink s = {NULL, 0, path, err, errlen};
    err[0] = 0;
    int rc = keys_isolated(body, len, &used, &keys, &s, why, sizeof why);
    if (rc == 0)
        rc = read_values(body + used, len - used, &s);
    else if (!err[0] && strcmp(why, "out of memory") == 0)
        snprintf(err, errlen, "%s: out of memory", path);
    else if (!err[0]) /* take_key's message, else the trie reader's */
        snprintf(err, errlen, "%s: damaged or truncated trie (%s)", path, why);
    free(body);
    if (rc != 0) {
        for (size_t i = 0; s.entries && i < s.count; i++) {
            free(s.entries[i].key);
            for (size_t v = 0; v < s.entries[i].value_count; v++)
                free(s.entries[i].values[v]);
            free(s.entries[i].values);
        }
        free(s.entries);
        return NULL;
    }
    return oc_dict_from_entries(path, s.entries, s.count, err, errlen);
}
