/* In-memory throughput of the library: converts a file held in memory with
 * fj_convert, repeatedly, and prints MB/s (input bytes, 1 MB = 1e6 bytes).
 * Separates the engine's speed from file I/O. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fanjian.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: throughput DICT PROFILE FILE [REPEATS]\n");
        return 2;
    }
    int repeats = argc > 4 ? atoi(argv[4]) : 3;
    FILE *f = fopen(argv[3], "rb");
    if (!f) {
        perror(argv[3]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *in = malloc((size_t)size + 1);
    if (!in || fread(in, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "cannot read %s\n", argv[3]);
        return 1;
    }
    fclose(f);
    fj_dict *dict;
    fj_converter *conv;
    fj_error err;
    double t0 = now();
    if (fj_dict_open(argv[1], NULL, &dict, &err) != FJ_OK ||
        fj_converter_open(dict, argv[2], FJ_COMPAT, &conv, &err) != FJ_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    double open_ms = (now() - t0) * 1e3;
    size_t cap = (size_t)size * 2 + 1024, out_len;
    char *out = malloc(cap);
    double best = 1e9;
    for (int r = 0; r < repeats; r++) {
        double t = now();
        if (fj_convert(conv, in, (size_t)size, out, cap, &out_len) != FJ_OK) {
            fprintf(stderr, "conversion failed\n");
            return 1;
        }
        t = now() - t;
        if (t < best)
            best = t;
    }
    printf("%s %.1f MB/s (best of %d, %.1f MB), open %.2f ms\n", argv[2], (double)size / 1e6 / best,
           repeats, (double)size / 1e6, open_ms);
    free(out);
    free(in);
    fj_converter_close(conv);
    fj_dict_close(dict);
    return 0;
}
