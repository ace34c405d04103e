/* In-memory throughput of the library: converts a file held in memory with
 * fj_convert, repeatedly, and prints MB/s (input bytes, 1 MB = 1e6 bytes).
 * Separates the engine's speed from file I/O.
 *
 *   throughput [--default [--careful]] DICT PROFILE FILE [REPEATS]
 *       --default: the context model; --careful: repair without the
 *       damage estimate (FJ_REPAIR_CAREFUL)
 *       "PROFILE X MB/s (best of N, Y MB), open Z ms" (human-readable)
 *   throughput --tsv DICT PROFILE FILE [REPEATS] [OUT]
 *       one tab-separated line for scripts:
 *       profile bytes repeats best_s median_s open_ms
 *       and, with OUT, writes the converted text there (to check it against
 *       the CLI's output)
 *   throughput [--default] --phrases FILE|- --tsv DICT PROFILE FILE [REPEATS] [OUT]
 *       the converter from fj_converter_open_options with the user phrases
 *       of FILE (KEY<TAB>VALUE lines), or with "-" an empty overlay (arrays
 *       given, no entries), to show what user entries cost
 *   throughput --open-only DICT PROFILE RUNS
 *       opens and closes dictionary + converter RUNS times; prints
 *       "open PROFILE median M ms (min A, max B, N runs; dict D ms, converter C ms)"
 *   throughput --floor --tsv DICT PROFILE FILE [REPEATS]
 *       the floor of any converter that decodes UTF-8 and looks each
 *       character up: one table load per character (the table: PROFILE's
 *       --compat result for each three-byte character alone), no phrases,
 *       no normalization; the same TSV line, open_ms the table's making.
 *       Not a conversion (it is wrong wherever a phrase decides): the
 *       speed of the loop every real one contains, on this machine
 *   throughput --spawn RUNS PROGRAM [ARG...]
 *       starts PROGRAM RUNS times (posix_spawn, output to /dev/null) and
 *       waits for each: the whole process, exec to exit, with nothing
 *       around it; prints "spawn median M ms (min A, max B, N runs)"
 *
 * Every conversion mode does one untimed warm-up pass first: it faults in
 * the output buffer and the mapped dictionary, which is set-up cost, not
 * conversion speed. The timed passes follow. */
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "fanjian.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* FJ_COMPAT unless --default is given first. */
static unsigned mode_flags = FJ_COMPAT;
/* --phrases FILE: its entries (NULL: fj_converter_open); "-": none. */
static const char *phrases_path;

/* The KEY<TAB>VALUE lines of path, in place in *text. */
static size_t read_phrases(const char *path, char **text, fj_phrase **out)
{
    *text = NULL;
    *out = NULL;
    if (strcmp(path, "-") == 0)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *text = malloc((size_t)n + 1);
    if (!*text || fread(*text, 1, (size_t)n, f) != (size_t)n)
        exit(1);
    fclose(f);
    (*text)[n] = 0;
    size_t count = 0, cap = 0;
    for (char *p = *text; *p;) {
        char *eol = strchr(p, '\n'), *tab = strchr(p, '\t');
        if (eol)
            *eol = 0;
        if (tab && (!eol || tab < eol)) {
            *tab = 0;
            if (count == cap) {
                cap = cap ? 2 * cap : 256;
                *out = realloc(*out, cap * sizeof **out);
                if (!*out)
                    exit(1);
            }
            (*out)[count].from = p;
            (*out)[count++].to = tab + 1;
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    return count;
}

static fj_status open_converter(const fj_dict *dict, const char *profile, fj_converter **conv,
                                fj_error *err)
{
    if (!phrases_path)
        return fj_converter_open(dict, profile, mode_flags, conv, err);
    static const fj_phrase none[1] = {{NULL, NULL}};
    char *text;
    fj_phrase *ph;
    size_t n = read_phrases(phrases_path, &text, &ph);
    fj_options o;
    fj_options_init(&o);
    o.profile = profile;
    o.flags = mode_flags;
    o.quotes = FJ_QUOTES_KEEP;
    o.phrases = n ? ph : none;
    o.phrase_count = n;
    fj_status st = fj_converter_open_options(dict, &o, conv, err);
    free(ph);
    free(text);
    return st;
}

static int open_both(const char *dict_path, const char *profile, fj_dict **dict,
                     fj_converter **conv)
{
    fj_error err;
    if (fj_dict_open(dict_path, NULL, dict, &err) != FJ_OK)
        goto fail;
    if (open_converter(*dict, profile, conv, &err) != FJ_OK) {
        fj_dict_close(*dict);
        goto fail;
    }
    return 0;
fail:
    fprintf(stderr, "throughput: %s\n", err.message);
    return 1;
}

static int open_only(const char *dict_path, const char *profile, int runs)
{
    double *total = malloc(sizeof(double) * (size_t)runs * 3);
    if (!total)
        return 1;
    double *d_ms = total + runs, *c_ms = total + 2 * runs;
    for (int r = 0; r < runs; r++) {
        fj_dict *dict;
        fj_converter *conv;
        fj_error err;
        double t0 = now();
        if (fj_dict_open(dict_path, NULL, &dict, &err) != FJ_OK) {
            fprintf(stderr, "throughput: %s\n", err.message);
            return 1;
        }
        double t1 = now();
        if (fj_converter_open(dict, profile, mode_flags, &conv, &err) != FJ_OK) {
            fprintf(stderr, "throughput: %s\n", err.message);
            return 1;
        }
        double t2 = now();
        fj_converter_close(conv);
        fj_dict_close(dict);
        d_ms[r] = (t1 - t0) * 1e3;
        c_ms[r] = (t2 - t1) * 1e3;
        total[r] = (t2 - t0) * 1e3;
    }
    double dm = median(d_ms, runs), cm = median(c_ms, runs), m = median(total, runs);
    printf("open %s median %.3f ms (min %.3f, max %.3f, %d runs; dict %.3f ms, converter %.3f ms)\n",
           profile, m, total[0], total[runs - 1], runs, dm, cm);
    free(total);
    return 0;
}

extern char **environ;

static int spawn_runs(int runs, char **argv)
{
    double *ms = malloc(sizeof(double) * (size_t)runs);
    posix_spawn_file_actions_t fa;
    if (!ms || posix_spawn_file_actions_init(&fa) != 0 ||
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) != 0 ||
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0) != 0)
        return 1;
    for (int r = 0; r < runs; r++) {
        pid_t pid;
        int status;
        double t0 = now();
        if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0 ||
            waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "throughput: %s did not run or failed\n", argv[0]);
            return 1;
        }
        ms[r] = (now() - t0) * 1e3;
    }
    double m = median(ms, runs);
    printf("spawn median %.3f ms (min %.3f, max %.3f, %d runs)\n", m, ms[0], ms[runs - 1], runs);
    posix_spawn_file_actions_destroy(&fa);
    free(ms);
    return 0;
}

/* The table --floor looks characters up in: for each three-byte code
 * point, the UTF-8 of its conversion alone when that is one three-byte
 * character too, else its own (4 bytes, for one 4-byte store). */
static unsigned char (*floor_table(const fj_converter *conv))[4]
{
    unsigned char(*t)[4] = malloc(4 * 0x10000);
    if (!t)
        return NULL;
    for (uint32_t cp = 0; cp < 0x10000; cp++) {
        unsigned char u[3] = {(unsigned char)(0xE0 | cp >> 12), (unsigned char)(0x80 | (cp >> 6 & 63)),
                              (unsigned char)(0x80 | (cp & 63))};
        unsigned char out[16];
        size_t n = 0;
        if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF) &&
            fj_convert(conv, (const char *)u, 3, (char *)out, sizeof out, &n) == FJ_OK && n == 3)
            memcpy(u, out, 3);
        memcpy(t[cp], u, 3);
        t[cp][3] = 0;
    }
    return t;
}

/* One pass of the floor loop: ASCII eight bytes at a time, a three-byte
 * character by one table load, anything else copied a byte at a time. `in`
 * has 8 readable bytes past len; `out` room for len + 8. */
static size_t floor_pass(const unsigned char (*table)[4], const unsigned char *in, size_t len,
                         char *out)
{
    const unsigned char *p = in, *end = in + len;
    char *w = out;
    while (p < end) {
        if (p[0] < 0x80) {
            uint64_t v, high;
            memcpy(&v, p, 8);
            high = v & 0x8080808080808080ull;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            size_t k = high ? (size_t)__builtin_clzll(high) >> 3 : 8;
#else
            size_t k = high ? (size_t)__builtin_ctzll(high) >> 3 : 8;
#endif
            if (k > (size_t)(end - p))
                k = (size_t)(end - p);
            memcpy(w, &v, 8);
            w += k;
            p += k;
        } else if ((p[0] & 0xF0) == 0xE0 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
            memcpy(w, table[(p[0] & 0x0Fu) << 12 | (p[1] & 0x3Fu) << 6 | (p[2] & 0x3Fu)], 4);
            w += 3;
            p += 3;
        } else {
            *w++ = (char)*p++;
        }
    }
    return (size_t)(w - out);
}

static int write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

/* --floor: the table, a warm-up pass, then `repeats` timed ones. */
static int run_floor(const fj_converter *conv, const char *profile, const unsigned char *in,
                     size_t size, int repeats, int tsv)
{
    double t0 = now();
    unsigned char(*table)[4] = floor_table(conv);
    double table_ms = (now() - t0) * 1e3;
    char *out = malloc(size + 8);
    double *secs = malloc(sizeof(double) * (size_t)repeats);
    if (!table || !out || !secs)
        return 1;
    size_t out_len = floor_pass((const unsigned char(*)[4])table, in, size, out);
    for (int r = 0; r < repeats; r++) {
        double t = now();
        if (floor_pass((const unsigned char(*)[4])table, in, size, out) != out_len)
            return 1;
        secs[r] = now() - t;
    }
    double med = median(secs, repeats), best = secs[0];
    if (tsv)
        printf("floor-%s\t%zu\t%d\t%.6f\t%.6f\t%.3f\n", profile, size, repeats, best, med, table_ms);
    else
        printf("floor %s %.1f MB/s (best of %d, %.1f MB)\n", profile, (double)size / 1e6 / best,
               repeats, (double)size / 1e6);
    free(secs);
    free(out);
    free(table);
    return 0;
}

int main(int argc, char **argv)
{
    int tsv = 0;
    if (argc > 1 && strcmp(argv[1], "--default") == 0) {
        mode_flags = FJ_DEFAULT; /* the context model instead of OpenCC's matching */
        argv++;
        argc--;
        if (argc > 1 && strcmp(argv[1], "--careful") == 0) {
            mode_flags |= FJ_REPAIR_CAREFUL; /* repair without the damage estimate */
            argv++;
            argc--;
        }
    }
    if (argc > 2 && strcmp(argv[1], "--phrases") == 0) {
        phrases_path = argv[2];
        argv += 2;
        argc -= 2;
    }
    if (argc > 3 && strcmp(argv[1], "--spawn") == 0 && atoi(argv[2]) > 0)
        return spawn_runs(atoi(argv[2]), argv + 3);
    if (argc > 1 && strcmp(argv[1], "--open-only") == 0) {
        int runs = argc == 5 ? atoi(argv[4]) : 0;
        if (runs < 1) {
            fprintf(stderr, "usage: throughput --open-only DICT PROFILE RUNS\n");
            return 2;
        }
        return open_only(argv[2], argv[3], runs);
    }
    int floor_mode = 0;
    if (argc > 1 && strcmp(argv[1], "--floor") == 0) {
        floor_mode = 1;
        argv++;
        argc--;
    }
    if (argc > 1 && strcmp(argv[1], "--tsv") == 0) {
        tsv = 1;
        argv++;
        argc--;
    }
    if (argc < 4 || argc > (tsv ? 6 : 5)) {
        fprintf(stderr, "usage: throughput [--default [--careful] | --floor] [--tsv] DICT PROFILE FILE [REPEATS]%s\n"
                        "       throughput [--default [--careful]] --open-only DICT PROFILE RUNS\n"
                        "       throughput --spawn RUNS PROGRAM [ARG...]\n",
                tsv ? " [OUT]" : "");
        return 2;
    }
    int repeats = argc > 4 ? atoi(argv[4]) : 3;
    if (repeats < 1)
        repeats = 1;
    const char *out_path = tsv && argc > 5 ? argv[5] : NULL;
    FILE *f = fopen(argv[3], "rb");
    if (!f) {
        perror(argv[3]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *in = calloc((size_t)size + 8, 1); /* 8: the floor loop's loads */
    if (!in || fread(in, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "cannot read %s\n", argv[3]);
        return 1;
    }
    fclose(f);
    fj_dict *dict;
    fj_converter *conv;
    double t0 = now();
    if (open_both(argv[1], argv[2], &dict, &conv))
        return 1;
    double open_ms = (now() - t0) * 1e3;
    if (floor_mode) {
        int rc = run_floor(conv, argv[2], (const unsigned char *)in, (size_t)size, repeats, tsv);
        free(in);
        fj_converter_close(conv);
        fj_dict_close(dict);
        return rc;
    }

    /* Warm-up pass (untimed); also sizes the buffer if 2x was not enough. */
    size_t cap = (size_t)size * 2 + 1024, out_len;
    char *out = malloc(cap);
    fj_status st = out ? fj_convert(conv, in, (size_t)size, out, cap, &out_len) : FJ_ERR_NOMEM;
    if (st == FJ_ERR_BUFFER_TOO_SMALL) {
        free(out);
        cap = out_len;
        out = malloc(cap);
        st = out ? fj_convert(conv, in, (size_t)size, out, cap, &out_len) : FJ_ERR_NOMEM;
    }
    if (st != FJ_OK) {
        fprintf(stderr, "conversion failed: %s\n", fj_strerror(st));
        return 1;
    }

    double *secs = malloc(sizeof(double) * (size_t)repeats);
    if (!secs)
        return 1;
    for (int r = 0; r < repeats; r++) {
        double t = now();
        if (fj_convert(conv, in, (size_t)size, out, cap, &out_len) != FJ_OK) {
            fprintf(stderr, "conversion failed\n");
            return 1;
        }
        secs[r] = now() - t;
    }
    double med = median(secs, repeats), best = secs[0];
    if (tsv)
        printf("%s\t%ld\t%d\t%.6f\t%.6f\t%.3f\n", argv[2], size, repeats, best, med, open_ms);
    else
        printf("%s %.1f MB/s (best of %d, %.1f MB), open %.2f ms\n", argv[2],
               (double)size / 1e6 / best, repeats, (double)size / 1e6, open_ms);
    int rc = out_path ? write_file(out_path, out, out_len) : 0;
    free(secs);
    free(out);
    free(in);
    fj_converter_close(conv);
    fj_dict_close(dict);
    return rc;
}
