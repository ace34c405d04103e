/* Fuzz: encoding detection and the streaming recoder.
 * Input: a choice byte (the source encoding, or detection), a flags byte
 * (lossy), 8 bytes seeding chunk sizes, then the bytes to decode.
 * Invariants: decoding in chunks equals decoding at once; a lossy decode
 * to UTF-8 always succeeds with valid UTF-8; a strict decode that succeeds
 * gives valid UTF-8 that encodes back to the input for the encodings that
 * round-trip (UTF-8, GB18030, UTF-16LE/BE without a mark). */
#include <string.h>

#include "fanjian-formats.h"
#include "fuzz.h"

static const char *const encodings[] = {NULL, "UTF-8", "GB18030", "BIG5", "BIG5-HKSCS",
                                        "UTF-16LE", "UTF-16BE", "UTF-16", "EUC-JP"};


/* Decodes in pieces chosen by seed (0: at once); 0 or -1. */
static int recode(const char *from, const char *to, unsigned flags, const char *in, size_t n,
                  uint64_t seed, fuzz_sink *out)
{
    fjf_recoder *r = NULL;
    fjf_error err;
    if (fjf_recoder_new(from, to, flags, fuzz_collect, out, &r, &err) != 0)
        return -1;
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0;) {
        size_t piece = seed ? (size_t)(fuzz_next(&seed) % 9) : n;
        if (piece > n - at)
            piece = n - at;
        rc = fjf_recoder_feed(r, in + at, piece, &err);
        at += piece;
    }
    if (rc == 0)
        rc = fjf_recoder_finish(r, &err);
    if (rc != 0)
        FUZZ_ASSERT(err.message[0] != 0);
    fjf_recoder_free(r);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10)
        return 0;
    const char *from = encodings[data[0] % (sizeof encodings / sizeof encodings[0])];
    unsigned flags = data[1] & 1 ? FJF_LOSSY : 0;
    uint64_t seed;
    memcpy(&seed, data + 2, 8);
    seed |= 1;
    const char *in = (const char *)data + 10;
    size_t n = size - 10;
    fjf_encoding enc;
    fjf_error err;
    int detected = fjf_encoding_detect(in, n, (data[1] & 2) == 0, &enc, &err);
    FUZZ_ASSERT(enc.name[0] != 0 || detected != 0);
    if (!from)
        from = enc.name[0] ? enc.name : "UTF-8";

    fuzz_sink whole = {0}, pieces = {0};
    int rc_whole = recode(from, "UTF-8", flags, in, n, 0, &whole);
    int rc_pieces = recode(from, "UTF-8", flags, in, n, seed, &pieces);
    FUZZ_ASSERT(rc_whole == rc_pieces);
    if (rc_whole == 0) {
        FUZZ_ASSERT(whole.len == pieces.len &&
                    (whole.len == 0 || memcmp(whole.p, pieces.p, whole.len) == 0));
        /* Lossy UTF-8 input keeps its bytes: only other sources must give valid UTF-8. */
        if (strcmp(from, "UTF-8") != 0 || !(flags & FJF_LOSSY))
            FUZZ_ASSERT(fuzz_valid_utf8((const unsigned char *)whole.p, whole.len));
        if (!(flags & FJF_LOSSY) &&
            (!strcmp(from, "UTF-8") || !strcmp(from, "GB18030") || !strcmp(from, "UTF-16LE") ||
             !strcmp(from, "UTF-16BE"))) {
            fuzz_sink back = {0};
            FUZZ_ASSERT(recode("UTF-8", from, 0, whole.p ? whole.p : "", whole.len, seed, &back) == 0);
            FUZZ_ASSERT(back.len == n && (n == 0 || memcmp(back.p, in, n) == 0));
            free(back.p);
        }
    } else {
        FUZZ_ASSERT(!(flags & FJF_LOSSY));
    }
    free(whole.p);
    free(pieces.p);
    return 0;
}
