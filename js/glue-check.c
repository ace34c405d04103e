/*
 * js/glue.c built natively (with the library's flags, so under ASan and
 * UBSan in make check-sanitize) and driven as js/core.js drives it: the image
 * from memory, converters with every option, conversion, UTF-16 output,
 * detection, and random bytes through fjjs_utf16. tests/suite-js.sh runs it.
 *   glue-check IMAGE TEXT_FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fanjian.h"
#include "glue.h"

static int failures;
static void expect(int cond, const char *what)
{
    if (!cond) {
        printf("FAIL glue-check: %s\n", what);
        failures++;
    }
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap && !(buf = realloc(buf, cap = cap ? cap * 2 : 1 << 16)))
            break;
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return buf;
}

/* UTF-16 back to UTF-8, to compare with valid input. */
static size_t utf8_of(const uint16_t *u, size_t n, unsigned char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = u[i];
        if (c >= 0xD800 && c < 0xDC00 && i + 1 < n) {
            c = 0x10000 + ((c - 0xD800) << 10) + (u[++i] - 0xDC00);
        }
        if (c < 0x80) {
            out[k++] = (unsigned char)c;
        } else if (c < 0x800) {
            out[k++] = (unsigned char)(0xC0 | c >> 6);
            out[k++] = (unsigned char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out[k++] = (unsigned char)(0xE0 | c >> 12);
            out[k++] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
            out[k++] = (unsigned char)(0x80 | (c & 0x3F));
        } else {
            out[k++] = (unsigned char)(0xF0 | c >> 18);
            out[k++] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
            out[k++] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
            out[k++] = (unsigned char)(0x80 | (c & 0x3F));
        }
    }
    return k;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: glue-check IMAGE TEXT_FILE\n");
        return 2;
    }
    size_t image_len, text_len;
    char *image = slurp(argv[1], &image_len), *text = slurp(argv[2], &text_len);
    if (!image || !text) {
        fprintf(stderr, "glue-check: cannot read %s or %s\n", argv[1], argv[2]);
        return 2;
    }
    fj_dict *dict = fjjs_dict_open(image, image_len);
    expect(dict != NULL, "the image opens from memory");
    if (!dict)
        return 1;
    expect(fjjs_dict_open(image, 100) == NULL && strlen(fjjs_last_error()) > 0, "a cut image is an error with a message");

    const char *phrases[] = {"头发", "頭毛", "鼠标", "滑鼠仔"}, *protect[] = {"张三丰"};
    fj_converter *convs[] = {
        fjjs_converter_open(dict, "s2t", NULL, FJ_COMPAT, FJ_QUOTES_PROFILE, 0, 0, 0, NULL, 0, NULL, 0),
        fjjs_converter_open(dict, "s2twp", NULL, 0, FJ_QUOTES_PROFILE, FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH, 1, 1, phrases, 2, protect, 1),
        fjjs_converter_open(dict, NULL, "hk", FJ_REPAIR_THOROUGH, FJ_QUOTES_KEEP, 0, 0, 0, NULL, 0, NULL, 0),
        fjjs_converter_open(dict, NULL, NULL, 0, FJ_QUOTES_PROFILE, 0, 1, 0, NULL, 0, NULL, 0),
    };
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++)
        expect(convs[i] != NULL, "a converter opens");
    expect(fjjs_converter_open(dict, "nope", NULL, 0, FJ_QUOTES_PROFILE, 0, 0, 0, phrases, 2, protect, 1) == NULL,
           "an unknown profile is an error");

    uint16_t *units = malloc((text_len + 16) * 2 * sizeof *units);
    unsigned char *back = malloc((text_len + 16) * 4);
    for (size_t i = 0; i < sizeof convs / sizeof convs[0] && convs[i]; i++) {
        size_t out_len = 0;
        char *out = fjjs_convert(convs[i], text, text_len, &out_len);
        expect(out != NULL && out_len > 0, "a conversion");
        if (!out)
            continue;
        if (out_len <= (text_len + 16) * 2) {
            size_t n = fjjs_utf16((const unsigned char *)out, out_len, units);
            expect(n <= out_len && utf8_of(units, n, back) == out_len && memcmp(back, out, out_len) == 0,
                   "the output's UTF-16 gives its UTF-8 back");
        }
        fj_free(convs[i], out);
    }
    /* Random bytes: never more units than bytes, nothing read or written past them. */
    srand(22);
    for (int round = 0; round < 2000; round++) {
        size_t len = (size_t)(rand() % 64);
        unsigned char *bytes = malloc(len ? len : 1);
        uint16_t *u = malloc((len ? len : 1) * sizeof *u);
        for (size_t i = 0; i < len; i++)
            bytes[i] = (unsigned char)(rand() % 4 == 0 ? 0xE0 + rand() % 32 : rand() % 256);
        expect(fjjs_utf16(bytes, len, u) <= len, "no more units than bytes");
        free(bytes);
        free(u);
    }
    char *json = fjjs_detect(dict, text, text_len);
    expect(json && strncmp(json, "{\"script\":", 10) == 0 && json[strlen(json) - 1] == '}', "detection as JSON");
    fjjs_release(json);
    const char mixed[] = "这是一个问题。這是一個問題，還有這個。";
    json = fjjs_detect(dict, mixed, sizeof mixed - 1);
    expect(json && strstr(json, "\"spans\":[{") != NULL, "detection's spans");
    fjjs_release(json);

    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++)
        fj_converter_close(convs[i]);
    fjjs_clean_close();
    fj_dict_close(dict);
    free(units);
    free(back);
    free(image);
    free(text);
    if (!failures)
        printf("PASS glue-check: js/glue.c natively on the compat input\n");
    return failures != 0;
}
