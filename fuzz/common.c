/* fanjian fuzz targets: the dictionary and small checks they share. */
#include <string.h>

#include "fuzz.h"

/* The library's profiles (fj_profile_name), the 16 the targets index. */
const char *const *fuzz_profile_names(void)
{
    static const char *names[16];
    if (!names[0]) {
        for (size_t i = 0; i < 16; i++)
            if (!(names[i] = fj_profile_name(i)))
                abort();
        if (fj_profile_name(16))
            abort();
    }
    return names;
}

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
    return fj_utf8_valid((const char *)s, n, NULL) == n;
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
