/* Fuzz: the dictionary loader on mutated images.
 * The seed is a small real image ($FUZZ_IMAGE, built by `make fuzz` from a
 * cut-down copy of OpenCC's data). Input: a flags byte, then 5-byte
 * mutations (a 4-byte little-endian offset, a byte to XOR there). Flag 1:
 * fix the checksums afterwards, so that the structural checks behind them
 * are what the fuzzer reaches; flag 2: cut the image at the first offset;
 * flag 0x80: fj_dict_verify before the converters.
 * Invariant: opening fails cleanly or succeeds, and then two profiles
 * (one per mode) open or fail cleanly and convert a sample without a crash. */
#include <string.h>

#include "../src/image_format.h"
#include "fuzz.h"

static unsigned char *seed;
static size_t seed_len;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("FUZZ_IMAGE");
    FILE *f = fopen(path ? path : "build-fuzz/mini.fjd", "rb");
    if (!f) {
        fprintf(stderr, "fuzz image: cannot read the seed image (set FUZZ_IMAGE)\n");
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    seed_len = (size_t)ftell(f);
    rewind(f);
    seed = malloc(seed_len);
    if (!seed || fread(seed, 1, seed_len, f) != seed_len)
        exit(2);
    fclose(f);
    return 0;
}

static const char sample[] = "头发干了，这是只有一个人的世界。鼠标、打印机、乾隆。頭髮乾了\xff\xe4\xb8";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* 8-byte aligned, as mmap gives and the loader requires. */
    uint64_t *words = malloc(seed_len + 8);
    unsigned char *image = (unsigned char *)words;
    FUZZ_ASSERT(words);
    memcpy(image, seed, seed_len);
    size_t len = seed_len;
    for (size_t i = 1; i + 5 <= size; i += 5) {
        uint32_t off;
        memcpy(&off, data + i, 4);
        image[off % seed_len] ^= data[i + 4];
        if ((data[0] & 2) && i == 1)
            len = off % seed_len;
    }
    if ((data[0] & 1) && len >= FJ_IMAGE_HEADER_SIZE)
        fj_image_seal(image, len); /* little-endian host */
    fj_dict *dict = NULL;
    fj_error err;
    if (fj_dict_open_memory(image, len, NULL, &dict, &err) == FJ_OK) {
        /* Parts are checked when first used; sometimes all of them first. */
        if (data[0] & 0x80 && fj_dict_verify(dict, &err) != FJ_OK)
            FUZZ_ASSERT(err.message[0] != 0);
        /* Two profiles per input (opening one builds its tables): the
         * flags byte's high bits choose them. */
        size_t count = fj_dict_profile_count(dict);
        for (unsigned k = 0; k < 2; k++) {
            size_t p = ((size_t)(data[0] >> 2) + k * 7) % (count + 1);
            const char *name = p < count ? fj_dict_profile_name(dict, p) : "s2twp";
            fj_converter *conv = NULL;
            if (!name || fj_converter_open(dict, name, k, &conv, &err) != FJ_OK)
                continue;
            char *out = NULL;
            size_t out_len;
            if (fj_convert_alloc(conv, sample, sizeof sample - 1, &out, &out_len) == FJ_OK)
                fj_free(conv, out);
            fj_converter_close(conv);
        }
        fj_dict_close(dict);
    } else {
        FUZZ_ASSERT(err.message[0] != 0);
    }
    free(words);
    return 0;
}
