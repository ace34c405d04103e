/* Fuzz: streaming with chunk sizes the input chooses equals one-shot; for
 * one mode byte in four, so does the text repeated past the library's
 * window, one-shot, in one feed and in short pieces.
 * Input: profile byte, mode byte (default, compat, or the default mode with
 * user phrases, protected terms and -{…}-, or with Han phrases only), 8
 * bytes seeding the chunk sizes, text. */
#include <string.h>

#include "fuzz.h"

static fj_converter *convs[16][4];

/* Short keys that overlap one another and the tables' own. */
static const fj_phrase user_phrases[] = {{"头发", "頭毛"}, {"发", "X"}, {"头发干", "Y"},
                                         {"-", "~"},   {"a{", "Z"}, {"\xe5\xa4", "?"}};
static const char *const user_protect[] = {"后来", "}", "干"};
/* Mode 2's other overlay (mode byte / 3 odd): no key starts with ASCII, so
 * the overlay's scan skips ASCII runs; keys of one to four characters whose
 * second or third character is ASCII, Latin or beyond the BMP. */
static const fj_phrase han_phrases[] = {{"头发", "頭毛"}, {"发", "X"},       {"头发干", "Y"},
                                        {"头发干了", "Z"}, {"头a", "W"},      {"头é", "V"},
                                        {"后来x", "U"},   {"干𠀀", "T"},      {"𠀀头", "S"},
                                        {"的是", "R"},    {"计算机", "電腦"}};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int p = 0; p < 16; p++) {
        for (int m = 0; m < 2; m++)
            if (fj_converter_open(fuzz_dict(), fuzz_profiles[p], m ? FJ_COMPAT : FJ_DEFAULT,
                                  &convs[p][m], NULL) != FJ_OK)
                abort();
        fj_options o;
        fj_options_init(&o);
        o.profile = fuzz_profiles[p];
        o.quotes = FJ_QUOTES_KEEP;
        /* The last phrase is not UTF-8: left out (it must be refused). */
        o.phrases = user_phrases;
        o.phrase_count = sizeof user_phrases / sizeof user_phrases[0];
        if (fj_converter_open_options(fuzz_dict(), &o, &convs[p][2], NULL) != FJ_ERR_INVALID_ARGUMENT)
            abort();
        o.phrase_count--;
        o.protect = user_protect;
        o.protect_count = sizeof user_protect / sizeof user_protect[0];
        o.markup = FJ_MARKUP_INLINE;
        if (fj_converter_open_options(fuzz_dict(), &o, &convs[p][2], NULL) != FJ_OK)
            abort();
        o.phrases = han_phrases;
        o.phrase_count = sizeof han_phrases / sizeof han_phrases[0];
        o.protect_count = 0;
        o.markup = 0;
        if (fj_converter_open_options(fuzz_dict(), &o, &convs[p][3], NULL) != FJ_OK)
            abort();
    }
    return 0;
}


/* Longer than the library's window (FJ_WINDOW, 256 KiB): such a text is
 * normalized and converted a window at a time by fj_convert and by one
 * long feed. */
#define LONG_TEXT 300000u
/* Pieces that never reach a window. */
#define LONG_PIECE 4096u

/* The text repeated past a window: fj_convert, one long feed and a stream
 * of short pieces all agree. */
static void check_long_text(const fj_converter *conv, const char *text, size_t n)
{
    size_t len = (LONG_TEXT / n + 1) * n;
    char *t = malloc(len);
    FUZZ_ASSERT(t != NULL);
    for (size_t at = 0; at < len; at += n)
        memcpy(t + at, text, n);
    char *whole = NULL;
    size_t whole_len = 0;
    FUZZ_ASSERT(fj_convert_alloc(conv, t, len, &whole, &whole_len) == FJ_OK);
    for (int one_feed = 0; one_feed < 2; one_feed++) {
        fuzz_sink s = {0};
        fj_stream *st = NULL;
        FUZZ_ASSERT(fj_stream_new(conv, fuzz_collect, &s, &st) == FJ_OK);
        for (size_t at = 0; at < len;) {
            size_t piece = one_feed ? len : LONG_PIECE;
            if (piece > len - at)
                piece = len - at;
            FUZZ_ASSERT(fj_stream_feed(st, t + at, piece) == FJ_OK);
            at += piece;
        }
        FUZZ_ASSERT(fj_stream_finish(st) == FJ_OK);
        fj_stream_free(st);
        FUZZ_ASSERT(s.len == whole_len && (whole_len == 0 || memcmp(s.p, whole, whole_len) == 0));
        free(s.p);
    }
    fj_free(conv, whole);
    free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10)
        return 0;
    int mode = data[1] % 3;
    if (mode == 2 && data[1] / 3 % 2)
        mode = 3;
    const fj_converter *conv = convs[data[0] % 16][mode];
    uint64_t seed;
    memcpy(&seed, data + 2, 8);
    const char *text = (const char *)data + 10;
    size_t n = size - 10;

    char *whole = NULL;
    size_t whole_len = 0;
    FUZZ_ASSERT(fj_convert_alloc(conv, text, n, &whole, &whole_len) == FJ_OK);

    fuzz_sink s = {0};
    fj_stream *st = NULL;
    FUZZ_ASSERT(fj_stream_new(conv, fuzz_collect, &s, &st) == FJ_OK);
    /* Mostly small pieces, sometimes large ones, sometimes empty feeds. */
    for (size_t at = 0; at < n;) {
        uint64_t r = fuzz_next(&seed);
        size_t piece = r % 4 == 0 ? (size_t)(r >> 8) % 64 : (size_t)(r >> 8) % 8;
        if (piece > n - at)
            piece = n - at;
        FUZZ_ASSERT(fj_stream_feed(st, text + at, piece) == FJ_OK);
        at += piece;
    }
    FUZZ_ASSERT(fj_stream_finish(st) == FJ_OK);
    FUZZ_ASSERT(fj_stream_feed(st, "x", 1) == FJ_ERR_STREAM_STATE);
    fj_stream_free(st);
    FUZZ_ASSERT(s.len == whole_len && (whole_len == 0 || memcmp(s.p, whole, whole_len) == 0));
    free(s.p);
    fj_free(conv, whole);
    if (n && data[1] / 6 % 4 == 0)
        check_long_text(conv, text, n);
    return 0;
}
