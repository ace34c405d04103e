/* The fast engine against the reference converter, line by line, on a
 * text of any size (`make difftest`; the benchmark corpus by default).
 *
 *   difftest DICT OPENCC_DATA FILE [PROFILE...]
 *
 * formats/ocdata.c's reference follows OpenCC's algorithm literally (maximum
 * matching over its text dictionaries, each step in turn); fanjian's
 * compatible mode must give the same bytes on every line. Prints one line
 * per profile and exits 1 on any difference (the first few are shown). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../formats/ocdata.h"
#include "fanjian.h"

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        *len = (size_t)n;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: difftest DICT OPENCC_DATA FILE [PROFILE...]\n");
        return 2;
    }
    fj_dict *dict = NULL;
    fj_error err;
    if (fj_dict_open(argv[1], NULL, &dict, &err) != FJ_OK) {
        fprintf(stderr, "difftest: %s\n", err.message);
        return 2;
    }
    char msg[256];
    oc_data *od = oc_data_load(argv[2], msg, sizeof msg);
    size_t len = 0;
    char *text = read_file(argv[3], &len);
    if (!od || !text) {
        fprintf(stderr, "difftest: %s\n", od ? "cannot read the text" : msg);
        return 2;
    }
    int nprof = argc > 4 ? argc - 4 : (int)fj_dict_profile_count(dict);
    int failed = 0;
    for (int k = 0; k < nprof; k++) {
        const char *name = argc > 4 ? argv[4 + k] : fj_dict_profile_name(dict, (size_t)k);
        const oc_profile *op = oc_data_profile(od, name);
        fj_converter *conv = NULL;
        if (!op || fj_converter_open(dict, name, FJ_COMPAT, &conv, &err) != FJ_OK) {
            fprintf(stderr, "difftest: no profile %s\n", name);
            return 2;
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        size_t lines = 0, differ = 0;
        for (size_t at = 0; at < len;) {
            const char *nl = memchr(text + at, '\n', len - at);
            size_t n = nl ? (size_t)(nl - text - at) : len - at;
            const char *line = text + at;
            at += n + 1;
            /* The reference compares keys with strncmp: no NUL in its input. */
            if (memchr(line, 0, n))
                continue;
            lines++;
            size_t ref_len = 0, got_len = 0;
            char *ref = oc_reference_convert(op, line, n, &ref_len, 1);
            char *got = NULL;
            if (!ref || fj_convert_alloc(conv, line, n, &got, &got_len) != FJ_OK) {
                fprintf(stderr, "difftest: out of memory\n");
                return 2;
            }
            if (ref_len != got_len || memcmp(ref, got, ref_len) != 0) {
                if (differ++ < 3)
                    printf("  %s differs on line %zu: %.*s\n    reference: %.*s\n    fanjian:   %.*s\n",
                           name, lines, (int)(n < 300 ? n : 300), line,
                           (int)(ref_len < 300 ? ref_len : 300), ref,
                           (int)(got_len < 300 ? got_len : 300), got);
            }
            free(ref);
            fj_free(conv, got);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("difftest %-6s %zu lines, %zu differ (%.1f s)\n", name, lines, differ,
               (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
        fflush(stdout);
        failed |= differ != 0;
        fj_converter_close(conv);
    }
    free(text);
    oc_data_free(od);
    fj_dict_close(dict);
    return failed;
}
