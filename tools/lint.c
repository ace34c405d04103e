/* fjdict --lint DIR: checks the curated tables of the context model
 * (data/context; formats in each file's header and tools/model.c).
 *
 * Conflicts (exit status 1, both places named): a key listed twice in one
 * file; a forms line whose output another forms line rewrites (A -> B with
 * B -> A, or a chain), or which rewrites part of another line's input to
 * something else; an s2t.tsv entry or a surname word whose target a forms
 * line rewrites; a surname word given two targets, or the same key as an
 * s2t.tsv entry with another target; a repair.tsv character listed twice;
 * an either-word that a forms line rewrites or that holds an "always"
 * repair character; a one-character t2s.tsv entry that repair.tsv gives
 * another reading. Malformed lines are refused too.
 *
 * Warnings (exit status 0): entries that change nothing. With --data and
 * --essay, an s2t.tsv (t2s.tsv) entry whose key, converted alone by s2t
 * (t2s) in the default mode, already gives its target in a model built
 * without it. Converting a key alone only uses words inside the key, so one
 * image per nesting level suffices: level 0 tests the entries whose key is
 * inside no other entry's key, in an image holding only the entries inside
 * some other key; and so on until no entry is left (two images per file on
 * today's data). It does not say whether the entry's count changes the
 * segmentation of longer text around the key. */
#include "lint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../include/fanjian.h"
#include "../src/utf8.h"

enum { F_S2T, F_FORMS, F_SURNAMES, F_T2S, F_REPAIR, F_EITHER, N_FILES };
static const char *const file_names[N_FILES] = {"s2t.tsv", "s2t-forms.tsv", "s2t-surnames.tsv",
                                                "t2s.tsv", "repair.tsv",    "repair-either.tsv"};

#define MAX_FIELDS 4
#define MAX_CHARS 64

typedef struct entry {
    size_t line;
    char *raw; /* the line as written */
    char *field[MAX_FIELDS];
    size_t nfields;
} entry;

typedef struct table {
    char path[4400];
    int present;
    entry *e;
    size_t n;
} table;

typedef struct lint {
    table t[N_FILES];
    size_t conflicts, warnings;
} lint;

/* A string as code points. */
typedef struct cps {
    uint32_t cp[MAX_CHARS];
    size_t n;
} cps;

/* 0 when s is not UTF-8 or longer than MAX_CHARS characters. */
static int to_cps(const char *s, cps *out)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    out->n = 0;
    while (p < end) {
        uint32_t cp;
        int n = fj_utf8_decode(p, end, &cp);
        if (n <= 0 || out->n == MAX_CHARS)
            return 0;
        out->cp[out->n++] = cp;
        p += n;
    }
    return 1;
}

static size_t chars_of(const char *s)
{
    cps c;
    return to_cps(s, &c) ? c.n : 0;
}

#define NOT_FOUND ((size_t)-1)

/* The first position at or after `from` where `needle` occurs in `hay`. */
static size_t cps_find(const cps *hay, const cps *needle, size_t from)
{
    for (size_t i = from; needle->n && i + needle->n <= hay->n; i++)
        if (memcmp(hay->cp + i, needle->cp, needle->n * sizeof(uint32_t)) == 0)
            return i;
    return NOT_FOUND;
}

static int cps_same(const cps *a, const cps *b)
{
    return a->n == b->n && memcmp(a->cp, b->cp, a->n * sizeof(uint32_t)) == 0;
}

static int contains(const char *hay, const char *needle)
{
    cps h, n;
    return to_cps(hay, &h) && to_cps(needle, &n) && cps_find(&h, &n, 0) != NOT_FOUND;
}

/* ---- messages ------------------------------------------------------------------ */

static void conflict(lint *l, const table *a, const entry *ea, const table *b, const entry *eb,
                     const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (b)
        fprintf(stderr, "%s:%zu: conflict: %s (%s:%zu)\n", a->path, ea->line, msg, b->path,
                eb->line);
    else
        fprintf(stderr, "%s:%zu: %s\n", a->path, ea->line, msg);
    l->conflicts++;
}

static void warn(lint *l, const table *a, const entry *ea, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("%s:%zu: %s\n", a->path, ea->line, msg);
    l->warnings++;
}

/* ---- reading the tables ------------------------------------------------------------ */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, got;
    char *buf = malloc(cap);
    *len = 0;
    while (buf && (got = fread(buf + *len, 1, cap - *len - 1, f)) > 0) {
        *len += got;
        if (*len + 1 == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[*len] = 0;
    return buf;
}

/* Reads one table: its lines that are neither empty nor # comments, split at
 * tabs. An absent file is an empty table. -1 when it cannot be read. */
static int load_table(table *t, const char *dir, const char *name)
{
    snprintf(t->path, sizeof t->path, "%s/%s", dir, name);
    size_t len;
    char *text = read_all(t->path, &len);
    if (!text) {
        if (errno == ENOENT)
            return 0;
        fprintf(stderr, "fjdict: %s: %s\n", t->path, strerror(errno));
        return -1;
    }
    t->present = 1;
    size_t line = 0;
    for (char *p = text, *end = text + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *eol = nl ? nl : end;
        *eol = 0;
        line++;
        if (eol > p && p[0] != '#') {
            entry e;
            memset(&e, 0, sizeof e);
            e.line = line;
            e.raw = strdup(p);
            char *copy = strdup(p), *f = copy;
            int too_many = 0;
            while (f) {
                char *tab = strchr(f, '\t');
                if (tab)
                    *tab = 0;
                if (e.nfields == MAX_FIELDS)
                    too_many = 1;
                else
                    e.field[e.nfields++] = f;
                f = tab ? tab + 1 : NULL;
            }
            if (too_many)
                e.nfields = MAX_FIELDS + 1;
            t->e = realloc(t->e, (t->n + 1) * sizeof *t->e);
            t->e[t->n++] = e;
        }
        p = eol + 1;
    }
    free(text);
    return 0;
}

static void free_tables(lint *l)
{
    for (int f = 0; f < N_FILES; f++) {
        for (size_t i = 0; i < l->t[f].n; i++) {
            free(l->t[f].e[i].raw);
            free(l->t[f].e[i].field[0]); /* the copy the fields point into */
        }
        free(l->t[f].e);
    }
}

static int utf8_ok(const char *s)
{
    cps c;
    return s && *s && to_cps(s, &c);
}

/* Is the entry well-formed for its file? Else a message, and 0. */
static int well_formed(lint *l, int f, const entry *e)
{
    const table *t = &l->t[f];
    const char *why = NULL;
    size_t n = e->nfields;
    for (size_t k = 0; k < n && k < MAX_FIELDS && !why; k++)
        if (!utf8_ok(e->field[k]))
            why = "an empty field, bad UTF-8 or a field over 64 characters";
    if (!why) {
        switch (f) {
        case F_S2T:
        case F_T2S:
            if (n < 2 || n > 3 || chars_of(e->field[0]) != chars_of(e->field[1]) ||
                (n == 3 && strtod(e->field[2], NULL) <= 0))
                why = "expected KEY<TAB>TARGET[<TAB>COUNT], key and target of equal length";
            break;
        case F_FORMS:
            if (n != 2 || chars_of(e->field[0]) != chars_of(e->field[1]))
                why = "expected FROM<TAB>TO of equal length";
            break;
        case F_SURNAMES:
            if (!(n == 2 && strcmp(e->field[0], "surname") == 0 && chars_of(e->field[1]) == 1) &&
                !((n == 3 || n == 4) &&
                  (strcmp(e->field[0], "title") == 0 || strcmp(e->field[0], "before") == 0) &&
                  chars_of(e->field[1]) == chars_of(e->field[2])))
                why = "expected surname<TAB>S, or title or before<TAB>KEY<TAB>TARGET"
                      "[<TAB>SURNAMES]";
            break;
        case F_REPAIR:
            if (n != 3 || chars_of(e->field[0]) != 1 || chars_of(e->field[1]) != 1 ||
                (strcmp(e->field[2], "always") != 0 && strcmp(e->field[2], "words") != 0 &&
                 strcmp(e->field[2], "keep") != 0))
                why = "expected CHAR<TAB>READING<TAB>always|words|keep";
            break;
        case F_EITHER:
            if (n != 1 || chars_of(e->field[0]) < 2 || chars_of(e->field[0]) > 6)
                why = "expected one word of 2 to 6 characters";
            break;
        }
    }
    if (why) {
        conflict(l, t, e, NULL, NULL, "malformed: %s", why);
        return 0;
    }
    return 1;
}

/* ---- conflicts ------------------------------------------------------------------ */

/* The same key twice in one KEY<TAB>TARGET file. */
static void check_duplicate_keys(lint *l, int f)
{
    table *t = &l->t[f];
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = i + 1; j < t->n; j++)
            if (strcmp(t->e[i].field[0], t->e[j].field[0]) == 0) {
                if (strcmp(t->e[i].field[1], t->e[j].field[1]) != 0)
                    conflict(l, t, &t->e[j], t, &t->e[i], "%s -> %s, but also -> %s",
                             t->e[j].field[0], t->e[j].field[1], t->e[i].field[1]);
                else
                    conflict(l, t, &t->e[j], t, &t->e[i], "%s -> %s is listed twice",
                             t->e[j].field[0], t->e[j].field[1]);
            }
}

static int forms_noop(const entry *e)
{
    return strcmp(e->field[0], e->field[1]) == 0;
}

/* Does a forms line rewrite `target`? The line, or NULL. */
static const entry *form_rewriting(const lint *l, const char *target)
{
    const table *fm = &l->t[F_FORMS];
    for (size_t k = 0; k < fm->n; k++)
        if (!forms_noop(&fm->e[k]) && contains(target, fm->e[k].field[0]))
            return &fm->e[k];
    return NULL;
}

static void check_forms(lint *l)
{
    table *t = &l->t[F_FORMS];
    for (size_t i = 0; i < t->n; i++) {
        const entry *a = &t->e[i];
        cps fa, ta;
        to_cps(a->field[0], &fa);
        to_cps(a->field[1], &ta);
        if (forms_noop(a)) {
            warn(l, t, a, "%s -> %s changes nothing", a->field[0], a->field[1]);
            continue;
        }
        for (size_t j = 0; j < t->n; j++) {
            const entry *b = &t->e[j];
            if (j == i || forms_noop(b))
                continue;
            cps fb, tb;
            to_cps(b->field[0], &fb);
            to_cps(b->field[1], &tb);
            if (cps_same(&fa, &fb)) {
                if (j > i)
                    conflict(l, t, b, t, a, "%s is rewritten twice (-> %s and -> %s)",
                             b->field[0], b->field[1], a->field[1]);
                continue;
            }
            /* b rewrites what a writes: a cycle (b is a's reverse) or a
             * chain, whose result depends on the order of the lines. */
            if (cps_find(&ta, &fb, 0) != NOT_FOUND) {
                conflict(l, t, a, t, b, "%s -> %s writes %s, which %s -> %s rewrites",
                         a->field[0], a->field[1], b->field[0], b->field[0], b->field[1]);
                continue;
            }
            /* b rewrites part of a's input: b first must still give a's
             * output, else the order of the lines decides. */
            for (size_t p = cps_find(&fa, &fb, 0); p != NOT_FOUND; p = cps_find(&fa, &fb, p + 1)) {
                cps r = fa;
                memcpy(r.cp + p, tb.cp, tb.n * sizeof(uint32_t));
                if (!cps_same(&r, &ta))
                    conflict(l, t, a, t, b, "%s -> %s, but %s -> %s rewrites part of it otherwise",
                             a->field[0], a->field[1], b->field[0], b->field[1]);
                else
                    warn(l, t, a, "%s -> %s changes nothing beyond %s:%zu (%s -> %s)",
                         a->field[0], a->field[1], t->path, b->line, b->field[0], b->field[1]);
                break;
            }
        }
    }
}

static void check_s2t_against_forms(lint *l)
{
    table *t = &l->t[F_S2T];
    for (size_t i = 0; i < t->n; i++) {
        const entry *fl = form_rewriting(l, t->e[i].field[1]);
        if (fl)
            conflict(l, t, &t->e[i], &l->t[F_FORMS], fl,
                     "%s -> %s writes %s, which the forms line rewrites to %s", t->e[i].field[0],
                     t->e[i].field[1], fl->field[0], fl->field[1]);
    }
}

/* The words the surname lines make: a surname with each title after it and
 * each "before" word in front of it (a line with SURNAMES: those only). */
typedef struct surname_word {
    const entry *sur, *with; /* the surname line and the title or before line */
    char key[4 * MAX_CHARS + 8], target[4 * MAX_CHARS + 8];
} surname_word;

static int applies_to(const entry *with, const char *surname)
{
    return with->nfields < 4 || strstr(with->field[3], surname) != NULL;
}

static void check_surnames(lint *l)
{
    table *t = &l->t[F_SURNAMES], *s2t = &l->t[F_S2T];
    surname_word *w = NULL;
    size_t nw = 0;
    for (size_t i = 0; i < t->n; i++) {
        const entry *a = &t->e[i];
        if (strcmp(a->field[0], "surname") != 0)
            continue;
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->e[j].field[0], "surname") == 0 &&
                strcmp(t->e[j].field[1], a->field[1]) == 0)
                conflict(l, t, a, t, &t->e[j], "surname %s is listed twice", a->field[1]);
        for (size_t k = 0; k < t->n; k++) {
            const entry *b = &t->e[k];
            if (strcmp(b->field[0], "surname") == 0 || !applies_to(b, a->field[1]))
                continue;
            int after = strcmp(b->field[0], "title") == 0;
            w = realloc(w, (nw + 1) * sizeof *w);
            surname_word *x = &w[nw++];
            x->sur = a;
            x->with = b;
            snprintf(x->key, sizeof x->key, "%s%s", after ? a->field[1] : b->field[1],
                     after ? b->field[1] : a->field[1]);
            snprintf(x->target, sizeof x->target, "%s%s", after ? a->field[1] : b->field[2],
                     after ? b->field[2] : a->field[1]);
        }
    }
    for (size_t i = 0; i < nw; i++) {
        const entry *fl = form_rewriting(l, w[i].target);
        if (fl)
            conflict(l, t, w[i].with, &l->t[F_FORMS], fl,
                     "the surname word %s -> %s writes %s, which the forms line rewrites to %s",
                     w[i].key, w[i].target, fl->field[0], fl->field[1]);
        for (size_t j = i + 1; j < nw; j++) {
            if (strcmp(w[i].key, w[j].key) != 0)
                continue;
            if (strcmp(w[i].target, w[j].target) != 0 || w[i].with == w[j].with ||
                strcmp(w[i].with->field[0], w[j].with->field[0]) == 0)
                conflict(l, t, w[j].with, t, w[i].with,
                         "the surname word %s is made twice (-> %s and -> %s)", w[j].key,
                         w[j].target, w[i].target);
            else
                warn(l, t, w[j].with, "the surname word %s -> %s changes nothing beyond "
                     "%s:%zu", w[j].key, w[j].target, t->path, w[i].with->line);
        }
        for (size_t k = 0; k < s2t->n; k++) {
            const entry *e = &s2t->e[k];
            if (strcmp(e->field[0], w[i].key) != 0)
                continue;
            if (strcmp(e->field[1], w[i].target) != 0)
                conflict(l, s2t, e, t, w[i].with,
                         "%s -> %s, but the surname lines make it -> %s", e->field[0],
                         e->field[1], w[i].target);
            else
                warn(l, s2t, e, "%s -> %s repeats the surname word of %s:%zu (same target, another count)",
                     e->field[0], e->field[1], t->path, w[i].with->line);
        }
    }
    free(w);
}

static void check_repair(lint *l)
{
    table *t = &l->t[F_REPAIR];
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = 0; j < i; j++) {
            const entry *a = &t->e[i], *b = &t->e[j];
            if (strcmp(a->field[0], b->field[0]) != 0)
                continue;
            if (strcmp(a->field[1], b->field[1]) != 0 || strcmp(a->field[2], b->field[2]) != 0)
                conflict(l, t, a, t, b, "%s is listed twice (%s %s, and %s %s)", a->field[0],
                         a->field[1], a->field[2], b->field[1], b->field[2]);
            else
                conflict(l, t, a, t, b, "%s is listed twice", a->field[0]);
        }
}

static void check_either(lint *l)
{
    table *t = &l->t[F_EITHER], *rp = &l->t[F_REPAIR];
    for (size_t i = 0; i < t->n; i++) {
        const entry *a = &t->e[i];
        for (size_t j = 0; j < i; j++)
            if (strcmp(a->field[0], t->e[j].field[0]) == 0)
                conflict(l, t, a, t, &t->e[j], "%s is listed twice", a->field[0]);
        const entry *fl = form_rewriting(l, a->field[0]);
        if (fl)
            conflict(l, t, a, &l->t[F_FORMS], fl,
                     "%s is kept as written, but the forms line rewrites its %s to %s",
                     a->field[0], fl->field[0], fl->field[1]);
        for (size_t k = 0; k < rp->n; k++)
            if (strcmp(rp->e[k].field[2], "always") == 0 && contains(a->field[0], rp->e[k].field[0]))
                conflict(l, t, a, rp, &rp->e[k],
                         "%s is kept as written, but repair always changes its %s", a->field[0],
                         rp->e[k].field[0]);
    }
}

/* A one-character t2s.tsv entry and a repair.tsv reading of the same
 * character are both our own one-character words of the t2s model. */
static void check_t2s_against_repair(lint *l)
{
    table *t = &l->t[F_T2S], *rp = &l->t[F_REPAIR];
    for (size_t i = 0; i < t->n; i++)
        for (size_t k = 0; k < rp->n; k++)
            if (strcmp(t->e[i].field[0], rp->e[k].field[0]) == 0 &&
                strcmp(rp->e[k].field[2], "keep") != 0 &&
                strcmp(t->e[i].field[1], rp->e[k].field[1]) != 0)
                conflict(l, t, &t->e[i], rp, &rp->e[k], "%s -> %s, but repair reads it as %s",
                         t->e[i].field[0], t->e[i].field[1], rp->e[k].field[1]);
}

/* ---- entries that change nothing -------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

/* Writes the six tables into dir: as read, except file `f` with only the
 * entries marked in `keep`. */
static int write_tables(const lint *l, const char *dir, int f, const unsigned char *keep)
{
    for (int k = 0; k < N_FILES; k++) {
        const table *t = &l->t[k];
        size_t cap = 1, len = 0;
        for (size_t i = 0; i < t->n; i++)
            cap += strlen(t->e[i].raw) + 1;
        char *text = malloc(cap);
        text[0] = 0;
        for (size_t i = 0; i < t->n; i++)
            if (k != f || keep[i])
                len += (size_t)sprintf(text + len, "%s\n", t->e[i].raw);
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, file_names[k]);
        int rc = write_file(path, text);
        free(text);
        if (rc != 0) {
            fprintf(stderr, "fjdict: %s: %s\n", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* Builds an image with `build`, its progress lines kept off standard output. */
static int build_quietly(lint_build_fn build, const char *data, const char *image,
                         const char *essay, const char *curated)
{
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0)
        dup2(null, STDOUT_FILENO);
    int rc = build(data, image, essay, curated);
    fflush(stdout);
    if (saved >= 0 && null >= 0)
        dup2(saved, STDOUT_FILENO);
    if (saved >= 0)
        close(saved);
    if (null >= 0)
        close(null);
    return rc;
}

/* Warns of the entries of file `f` (s2t.tsv or t2s.tsv) whose key the
 * profile converts to their target without them; -1 on failure. */
static int check_changes_nothing(lint *l, int f, const char *profile, const char *data,
                                 const char *essay, lint_build_fn build, const char *tmp,
                                 size_t *found)
{
    table *t = &l->t[f];
    unsigned char *left = malloc(t->n + 1), *inner = malloc(t->n + 1);
    for (size_t i = 0; i < t->n; i++)
        left[i] = 1;
    char cur[4200], image[4200];
    snprintf(cur, sizeof cur, "%s/curated", tmp);
    snprintf(image, sizeof image, "%s/lint.fjd", tmp);
    if (mkdir(cur, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "fjdict: %s: %s\n", cur, strerror(errno));
        free(left);
        free(inner);
        return -1;
    }
    int rc = 0;
    for (size_t remaining = t->n; remaining > 0 && rc == 0;) {
        /* inner: the entries left whose key lies inside another one's. */
        for (size_t i = 0; i < t->n; i++) {
            inner[i] = 0;
            for (size_t j = 0; left[i] && j < t->n && !inner[i]; j++)
                inner[i] = left[j] && j != i && strcmp(t->e[i].field[0], t->e[j].field[0]) != 0 &&
                           contains(t->e[j].field[0], t->e[i].field[0]);
        }
        fj_dict *dict = NULL;
        fj_converter *conv = NULL;
        fj_error err;
        memset(&err, 0, sizeof err);
        if (write_tables(l, cur, f, inner) != 0 ||
            build_quietly(build, data, image, essay, cur) != 0) {
            fprintf(stderr, "fjdict: lint: cannot build an image without %s's entries\n",
                    t->path);
            rc = -1;
            break;
        }
        if (fj_dict_open(image, NULL, &dict, &err) != FJ_OK ||
            fj_converter_open(dict, profile, FJ_DEFAULT, &conv, &err) != FJ_OK) {
            fprintf(stderr, "fjdict: lint: %s: %s\n", image, err.message);
            fj_dict_close(dict);
            rc = -1;
            break;
        }
        for (size_t i = 0; i < t->n; i++) {
            if (!left[i] || inner[i])
                continue;
            const char *key = t->e[i].field[0], *target = t->e[i].field[1];
            char *out = NULL;
            size_t out_len = 0;
            if (fj_convert_alloc(conv, key, strlen(key), &out, &out_len) == FJ_OK &&
                out_len == strlen(target) && memcmp(out, target, out_len) == 0) {
                warn(l, t, &t->e[i], "%s -> %s changes nothing", key, target);
                ++*found;
            }
            fj_free(conv, out);
            left[i] = 0;
            remaining--;
        }
        fj_converter_close(conv);
        fj_dict_close(dict);
    }
    unlink(image);
    for (int k = 0; k < N_FILES; k++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", cur, file_names[k]);
        unlink(path);
    }
    rmdir(cur);
    free(left);
    free(inner);
    return rc;
}

/* ---- main --------------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: fjdict --lint DIR [--data OPENCC_DATA_DIR --essay FILE]\n");
}

int lint_main(int argc, char **argv, lint_build_fn build)
{
    const char *dir = NULL, *data = NULL, *essay = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data = argv[++i];
        else if (strcmp(argv[i], "--essay") == 0 && i + 1 < argc)
            essay = argv[++i];
        else if (!dir && argv[i][0] != '-')
            dir = argv[i];
        else {
            usage();
            return 2;
        }
    }
    if (!dir || !data != !essay) {
        usage();
        return 2;
    }
    char dir_buf[4096];
    snprintf(dir_buf, sizeof dir_buf, "%s", dir);
    for (size_t n = strlen(dir_buf); n > 1 && dir_buf[n - 1] == '/'; n--)
        dir_buf[n - 1] = 0; /* DIR/ names files as DIR does */
    dir = dir_buf;
    lint l;
    memset(&l, 0, sizeof l);
    int present = 0;
    for (int f = 0; f < N_FILES; f++) {
        if (load_table(&l.t[f], dir, file_names[f]) != 0) {
            free_tables(&l);
            return 2;
        }
        present += l.t[f].present;
    }
    if (!present) {
        fprintf(stderr, "fjdict: %s: none of the curated tables (%s, ...) is there\n", dir,
                file_names[0]);
        free_tables(&l);
        return 1;
    }
    /* Malformed lines are refused and left out of the other checks. */
    for (int f = 0; f < N_FILES; f++) {
        table *t = &l.t[f];
        size_t kept = 0;
        for (size_t i = 0; i < t->n; i++) {
            if (well_formed(&l, f, &t->e[i])) {
                t->e[kept++] = t->e[i];
            } else {
                free(t->e[i].raw);
                free(t->e[i].field[0]);
            }
        }
        t->n = kept;
    }
    size_t malformed = l.conflicts;
    check_duplicate_keys(&l, F_S2T);
    check_duplicate_keys(&l, F_T2S);
    check_forms(&l);
    check_s2t_against_forms(&l);
    check_surnames(&l);
    check_repair(&l);
    check_either(&l);
    check_t2s_against_repair(&l);

    size_t total = 0;
    for (int f = 0; f < N_FILES; f++) {
        printf("fjdict: lint: %s: %zu entries%s\n", l.t[f].path, l.t[f].n,
               l.t[f].present ? "" : " (absent)");
        total += l.t[f].n;
    }
    printf("fjdict: lint: %zu curated entries in all (issue 18's target: at most 150)\n", total);

    int rc = 0;
    if (l.conflicts) {
        fprintf(stderr, "fjdict: lint: %s: %zu conflicting or malformed entries (%zu malformed)\n",
                dir, l.conflicts, malformed);
        rc = 1;
    } else if (data) {
        const char *tmpdir = getenv("TMPDIR");
        char tmpl[4096];
        snprintf(tmpl, sizeof tmpl, "%s/fjdict-lint.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
        char *made = mkdtemp(tmpl);
        size_t s2t_found = 0, t2s_found = 0;
        if (!made) {
            fprintf(stderr, "fjdict: lint: cannot make a temporary directory: %s\n",
                    strerror(errno));
            rc = 2;
        } else {
            if (check_changes_nothing(&l, F_S2T, "s2t", data, essay, build, made, &s2t_found) != 0 ||
                check_changes_nothing(&l, F_T2S, "t2s", data, essay, build, made, &t2s_found) != 0)
                rc = 2;
            rmdir(made);
        }
        if (rc == 0)
            printf("fjdict: lint: %zu s2t.tsv and %zu t2s.tsv entries change nothing (their key "
                   "alone already converts to their target without them)\n",
                   s2t_found, t2s_found);
    }
    if (rc == 0)
        printf("fjdict: lint: %s: no conflicts, %zu warnings\n", dir, l.warnings);
    free_tables(&l);
    return rc;
}
