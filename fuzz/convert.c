/* Fuzz: one-shot conversion of arbitrary bytes, every profile, in the
 * default mode, the compatible mode and with FJ_REPAIR_THOROUGH.
 * Input: profile byte, mode byte, text.
 * Invariants: the sized and allocating calls agree, and a buffer of the
 * reported size is enough; valid UTF-8 stays valid; ASCII passes through
 * in order (except the two profiles whose phrase tables contain ASCII:
 * U盘 -> 隨身碟); in compat mode the output equals OpenCC's algorithm done
 * literally (formats/ocdata.c's reference converter); fj_inspect's choices
 * come in order, inside the input at its own bytes, each with other forms
 * whose margins do not fall, and none in compat mode; the prefix
 * fj_independent_prefix gives converts the same apart (after it, the rest). */
#include <string.h>

#include "../formats/ocdata.h"
#include "fuzz.h"

/* The modes, by the mode byte modulo 3: default, compat, thorough repair. */
static const unsigned modes[3] = {FJ_DEFAULT, FJ_COMPAT, FJ_REPAIR_THOROUGH};
static fj_converter *convs[16][3];
static oc_data *reference; /* NULL when OpenCC's text data is not at hand */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const fj_dict *dict = fuzz_dict();
    for (int p = 0; p < 16; p++)
        for (int m = 0; m < 3; m++)
            if (fj_converter_open(dict, fuzz_profiles[p], modes[m], &convs[p][m], NULL) != FJ_OK)
                abort();
    const char *dir = getenv("FANJIAN_OPENCC_DATA");
    char err[256];
    reference = oc_data_load(dir ? dir : "build/opencc-data", err, sizeof err);
    if (!reference)
        fprintf(stderr, "fuzz convert: no reference converter (%s)\n", err);
    return 0;
}

static size_t ascii_of(const unsigned char *s, size_t n, unsigned char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x80)
            out[k++] = s[i];
    return k;
}

typedef struct inspected {
    const char *text;
    size_t len, next, count;
} inspected;

static int check_choice(void *ctx, const fj_choice *ch)
{
    inspected *k = ctx;
    FUZZ_ASSERT(ch->offset >= k->next && ch->length > 0 && ch->offset + ch->length <= k->len);
    FUZZ_ASSERT(ch->source == k->text + ch->offset && ch->line >= 1 && ch->column >= 1);
    FUZZ_ASSERT(ch->chosen_len > 0 && ch->alternative_count > 0);
    for (size_t i = 0; i < ch->alternative_count; i++) {
        const fj_alternative *a = &ch->alternatives[i];
        FUZZ_ASSERT(a->form_len > 0 && a->margin >= 0);
        FUZZ_ASSERT(i == 0 || a->margin >= ch->alternatives[i - 1].margin);
        FUZZ_ASSERT(!(a->form_len == ch->chosen_len && memcmp(a->form, ch->chosen, a->form_len) == 0));
    }
    k->next = ch->offset + ch->length;
    k->count++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int p = data[0] % 16, mode = data[1] % 3, compat = modes[mode] == FJ_COMPAT;
    const char *text = (const char *)data + 2;
    size_t n = size - 2;
    const fj_converter *conv = convs[p][mode];

    char *out = NULL;
    size_t out_len = 0;
    FUZZ_ASSERT(fj_convert_alloc(conv, text, n, &out, &out_len) == FJ_OK);
    size_t need = 0;
    fj_status st = fj_convert(conv, text, n, NULL, 0, &need);
    FUZZ_ASSERT(out_len == 0 ? st == FJ_OK : st == FJ_ERR_BUFFER_TOO_SMALL);
    FUZZ_ASSERT(need == out_len);
    char *exact = malloc(out_len ? out_len : 1);
    size_t exact_len = 0;
    FUZZ_ASSERT(exact && fj_convert(conv, text, n, exact, out_len, &exact_len) == FJ_OK);
    FUZZ_ASSERT(exact_len == out_len && memcmp(exact, out, out_len) == 0);
    free(exact);

    const unsigned char *in_u = (const unsigned char *)text, *out_u = (const unsigned char *)out;
    if (fuzz_valid_utf8(in_u, n))
        FUZZ_ASSERT(fuzz_valid_utf8(out_u, out_len));
    if (strcmp(fuzz_profiles[p], "s2twp") != 0 && strcmp(fuzz_profiles[p], "tw2sp") != 0) {
        unsigned char *a = malloc(n + 1), *b = malloc(out_len + 1);
        FUZZ_ASSERT(a && b);
        size_t na = ascii_of(in_u, n, a), nb = ascii_of(out_u, out_len, b);
        FUZZ_ASSERT(na == nb && memcmp(a, b, na) == 0);
        free(a);
        free(b);
    }
    /* The reference stops at a NUL (it compares keys with strncmp). */
    if (compat && reference && !memchr(text, 0, n)) {
        size_t ref_len = 0;
        char *ref = oc_reference_convert(oc_data_profile(reference, fuzz_profiles[p]), text, n,
                                         &ref_len, 1);
        FUZZ_ASSERT(ref && ref_len == out_len && memcmp(ref, out, out_len) == 0);
        free(ref);
    }
    size_t cut = fj_independent_prefix(conv, text, n);
    FUZZ_ASSERT(cut <= n && (cut == 0 || text[cut - 1] == '\n'));
    if (cut) {
        char *a = NULL, *b = NULL;
        size_t al = 0, bl = 0;
        FUZZ_ASSERT(fj_convert_alloc(conv, text, cut, &a, &al) == FJ_OK);
        FUZZ_ASSERT(fj_convert_alloc(conv, text + cut, n - cut, &b, &bl) == FJ_OK);
        FUZZ_ASSERT(al + bl == out_len && memcmp(a, out, al) == 0 && memcmp(b, out + al, bl) == 0);
        fj_free(conv, a);
        fj_free(conv, b);
    }
    inspected k = {text, n, 0, 0};
    FUZZ_ASSERT(fj_inspect(conv, text, n, check_choice, &k) == FJ_OK);
    FUZZ_ASSERT(!compat || k.count == 0);
    fj_free(conv, out);
    return 0;
}
