/* User phrase and protected-term files, read into the arrays fj_options
 * takes. Phrases are OpenCC's text dictionary format: KEY<TAB>VALUE[ VALUE
 * ...], the first value counting; protected terms one a line. Empty lines
 * are skipped; a final CR is not part of a line. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fanjian-formats.h"

/* 1 MiB lines at most in a 64 MiB file: such a file is a mistake. */
#define USER_FILE_LIMIT (64ull << 20)

static char *copy_span(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

static int grow(void **array, size_t *cap, size_t count, size_t elem)
{
    if (count < *cap)
        return 0;
    size_t n = *cap ? 2 * *cap : 64;
    void *p = realloc(*array, n * elem);
    if (!p)
        return -1;
    *array = p;
    *cap = n;
    return 0;
}

int fjf_user_entries_read(fjf_user_entries *u, const char *path, int protect, fjf_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fjf_error_set(err, 0, "cannot open %s: %s", path, strerror(errno));
        err->kind = FJF_ERR_READ;
        return -1;
    }
    size_t len;
    char *data = fjf_read_all(fd, &len, USER_FILE_LIMIT);
    int saved = errno;
    close(fd);
    if (!data) {
        fjf_error_set(err, 0, "cannot read %s: %s", path,
                      saved == E2BIG ? "larger than 64 MiB" : strerror(saved));
        err->kind = FJF_ERR_READ;
        return -1;
    }
    int rc = 0;
    size_t line = 0;
    for (const char *p = data, *end = data + len; p < end && rc == 0;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *next = eol ? eol + 1 : end;
        if (!eol)
            eol = end;
        line++;
        if (eol > p && eol[-1] == '\r')
            eol--;
        if (line == 1 && eol - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
            p += 3; /* a byte-order mark */
        if (eol > p) {
            if (fj_utf8_valid(p, (size_t)(eol - p), NULL) != (size_t)(eol - p)) {
                fjf_error_set(err, line, "%s:%zu: not valid UTF-8", path, line);
                rc = -1;
                break;
            }
            if (protect) {
                char *t = copy_span(p, (size_t)(eol - p));
                if (!t || grow((void **)&u->protect, &u->protect_cap, u->protect_count,
                               sizeof *u->protect)) {
                    free(t);
                    rc = -2;
                    break;
                }
                u->protect[u->protect_count++] = t;
            } else {
                const char *tab = memchr(p, '\t', (size_t)(eol - p));
                const char *v = tab ? tab + 1 : NULL, *ve = v;
                while (ve && ve < eol && *ve != ' ' && *ve != '\t')
                    ve++;
                if (!tab || tab == p || ve == v) {
                    fjf_error_set(err, line, "%s:%zu: not KEY<TAB>VALUE (OpenCC's text format)",
                                  path, line);
                    rc = -1;
                    break;
                }
                char *from = copy_span(p, (size_t)(tab - p)), *to = copy_span(v, (size_t)(ve - v));
                if (!from || !to ||
                    grow((void **)&u->phrases, &u->phrase_cap, u->phrase_count,
                         sizeof *u->phrases) ||
                    grow((void **)&u->owned, &u->owned_cap, u->owned_count + 1, sizeof *u->owned)) {
                    free(from);
                    free(to);
                    rc = -2;
                    break;
                }
                u->owned[u->owned_count++] = from;
                u->owned[u->owned_count++] = to;
                u->phrases[u->phrase_count].from = from;
                u->phrases[u->phrase_count++].to = to;
            }
        }
        p = next;
    }
    if (rc == -2) {
        fjf_error_set(err, 0, "%s: out of memory", path);
        err->kind = FJF_ERR_NOMEM;
    }
    free(data);
    return rc ? -1 : 0;
}

void fjf_user_entries_free(fjf_user_entries *u)
{
    for (size_t i = 0; i < u->owned_count; i++)
        free(u->owned[i]);
    for (size_t i = 0; i < u->protect_count; i++)
        free(u->protect[i]);
    free(u->owned);
    free(u->phrases);
    free(u->protect);
    memset(u, 0, sizeof *u);
}
