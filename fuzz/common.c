/* fanjian fuzz targets: the dictionary and small checks they share. */
#include <string.h>

#include "fuzz.h"

const char *const fuzz_profiles[16] = {"s2t",  "t2s",   "s2tw", "tw2s",  "s2twp", "tw2sp",
                                       "s2hk", "hk2s",  "s2hkp", "hk2sp", "t2tw",  "tw2t",
                                       "t2hk", "hk2t",  "t2jp",  "jp2t"};

const fj_dict *fuzz_dict(void)
{
    static fj_dict *dict;
    if (!dict) {
        const char *path = getenv("FANJIAN_DICT");
        fj_error err;
        if (fj_dict_open(path ? path : "build/fanjian.fjd", NULL, &dict, &err) != FJ_OK) {
            fprintf(stderr, "fuzz: %s (set FANJIAN_DICT)\n", err.message);
            exit(2);
        }
    }
    return dict;
}

int fuzz_valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2
                    : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
        if (!need || n - i <= need)
            return 0;
        unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
        unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return 0;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
        i += need + 1;
    }
    return 1;
}

int fuzz_collect(void *ctx, const char *data, size_t len)
{
    fuzz_sink *s = ctx;
    FUZZ_ASSERT(len > 0); /* a write of nothing is a wasted call */
    if (len > s->cap - s->len) {
        size_t cap = (s->len + len) * 2 + 16;
        char *p = realloc(s->p, cap);
        FUZZ_ASSERT(p);
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->len, data, len);
    s->len += len;
    return 0;
}
