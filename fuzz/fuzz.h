/* fanjian fuzz targets: what they share.
 *
 * Each target defines LLVMFuzzerTestOneInput (and may define
 * LLVMFuzzerInitialize). Built with clang's -fsanitize=fuzzer they are
 * libFuzzer programs (`make fuzz`); linked with fuzz/standalone.c they run
 * the same code over files and directories without libFuzzer (what
 * `make check` does). Invariants are checked with FUZZ_ASSERT, which aborts
 * so that either driver reports the input. */
#ifndef FANJIAN_FUZZ_H
#define FANJIAN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fanjian.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_ASSERT(cond)                                                                 \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                      \
        }                                                                                 \
    } while (0)

/* The dictionary image: $FANJIAN_DICT, else build/fanjian.fjd. Opened once;
 * exits with a message when missing. */
const fj_dict *fuzz_dict(void);

/* The 16 profiles, from the library; fuzz_profiles[p] for p < 16. */
const char *const *fuzz_profile_names(void);
#define fuzz_profiles (fuzz_profile_names())

/* Whether s[0..n) is valid UTF-8. */
int fuzz_valid_utf8(const unsigned char *s, size_t n);

/* A growing buffer that collects what an fj_write_fn receives (never
 * called with nothing to write). */
typedef struct fuzz_sink {
    char *p;
    size_t len, cap;
} fuzz_sink;
int fuzz_collect(void *ctx, const char *data, size_t len);

/* A small deterministic generator for choices drawn from the input. */
static inline uint64_t fuzz_next(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

#endif
