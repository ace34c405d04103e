/* Helpers shared by the cmocka test programs (tests/unit.c, tests/cases.c).
 * Everything is static inline so a program may use any subset of it. */
#ifndef FJ_TESTUTIL_H
#define FJ_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fanjian.h"

/* The 16 profiles OpenCC 1.4.2 ships, as the library lists them
 * (fj_profile_name): t_profiles[i] for i < 16. */
static inline const char *const *t_profile_names(void)
{
    static const char *names[16];
    if (!names[0])
        for (size_t i = 0; i < 16; i++)
            if (!(names[i] = fj_profile_name(i)))
                abort();
    return names;
}
#define t_profiles (t_profile_names())

/* ---- environment ---------------------------------------------------------- */

static inline const char *t_env(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return (v && *v) ? v : fallback;
}

static inline const char *t_build_dir(void) { return t_env("FANJIAN_BUILD", "build"); }
static inline const char *t_dict_path(void) { return t_env("FANJIAN_DICT", "build/fanjian.fjd"); }
static inline const char *t_data_dir(void)
{
    return t_env("FANJIAN_OPENCC_DATA", "build/opencc-data");
}
static inline const char *t_shared_dir(void) { return t_env("FANJIAN_SHARED", "../shared"); }

/* FANJIAN_TEST_QUICK=1 (the sanitizer run) shrinks the randomized loops. */
static inline int t_quick(void)
{
    const char *v = getenv("FANJIAN_TEST_QUICK");
    return v && *v && strcmp(v, "0") != 0;
}

static inline int t_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ---- growable byte buffer --------------------------------------------------- */

typedef struct tbuf {
    char *p;
    size_t len, cap;
} tbuf;

static inline void tb_reserve(tbuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t c = b->cap ? b->cap : 256;
    while (c < b->len + extra + 1)
        c *= 2;
    char *p = realloc(b->p, c);
    if (!p) {
        fprintf(stderr, "test: out of memory\n");
        abort();
    }
    b->p = p;
    b->cap = c;
}

static inline void tb_add(tbuf *b, const void *data, size_t n)
{
    tb_reserve(b, n);
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
}

static inline void tb_adds(tbuf *b, const char *s) { tb_add(b, s, strlen(s)); }

static inline void tb_free(tbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* fj_write_fn appending to a tbuf. */
static inline int tb_write(void *ctx, const char *data, size_t len)
{
    tb_add(ctx, data, len);
    return 0;
}

/* ---- files ------------------------------------------------------------------ */

/* Reads a whole file (NUL-terminated for convenience); NULL when unreadable. */
static inline char *t_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    tbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        tb_add(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        tb_free(&b);
        return NULL;
    }
    if (!b.p)
        tb_add(&b, "", 0);
    *len = b.len;
    return b.p;
}

/* ---- a counting allocator --------------------------------------------------- */

/* An allocator that counts bytes, checks that each free names the size
 * allocated, and fails the n-th allocation. */
typedef struct t_counting {
    long long live;
    int calls, fail_at, bad_size;
} t_counting;

static inline void *t_cnt_alloc(void *ctx, size_t n)
{
    t_counting *k = ctx;
    if (++k->calls == k->fail_at)
        return NULL;
    size_t *p = malloc(n + sizeof(size_t));
    if (!p)
        return NULL;
    *p = n;
    k->live += (long long)n;
    return p + 1;
}

static inline void *t_cnt_realloc(void *ctx, void *ptr, size_t old_n, size_t new_n)
{
    t_counting *k = ctx;
    void *q = t_cnt_alloc(ctx, new_n);
    if (q && ptr) {
        if (((size_t *)ptr)[-1] != old_n)
            k->bad_size = 1;
        memcpy(q, ptr, old_n < new_n ? old_n : new_n);
        k->live -= (long long)old_n;
        free((size_t *)ptr - 1);
    }
    return q;
}

static inline void t_cnt_free(void *ctx, void *ptr, size_t n)
{
    t_counting *k = ctx;
    if (n && ((size_t *)ptr)[-1] != n)
        k->bad_size = 1;
    k->live -= (long long)((size_t *)ptr)[-1];
    free((size_t *)ptr - 1);
}

static inline fj_allocator t_counting_allocator(t_counting *k)
{
    fj_allocator a = {t_cnt_alloc, t_cnt_realloc, t_cnt_free, k};
    return a;
}

/* ---- deterministic PRNG (splitmix64) --------------------------------------------- */

static inline uint64_t t_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline size_t t_below(uint64_t *s, size_t n) { return (size_t)(t_rand(s) % n); }

/* The base seed: FANJIAN_TEST_SEED, else a fixed value (runs are reproducible). */
static inline uint64_t t_seed(void)
{
    const char *v = getenv("FANJIAN_TEST_SEED");
    return v && *v ? strtoull(v, NULL, 0) : 0x66616E6A69616E31ull;
}

/* ---- the dictionary and one converter per profile -------------------------------- */

/* Opens every profile's converter on `dict` with `flags` (FJ_COMPAT or
 * FJ_DEFAULT); 0 on success. */
static inline int t_open_profiles(const char *who, const fj_dict *dict, unsigned flags,
                                  fj_converter *conv[16])
{
    fj_error err;
    memset(&err, 0, sizeof err);
    for (int i = 0; i < 16; i++)
        conv[i] = NULL;
    for (int i = 0; i < 16; i++)
        if (fj_converter_open(dict, t_profiles[i], flags, &conv[i], &err) != FJ_OK) {
            fprintf(stderr, "%s: profile %s (%s mode): %s\n", who, t_profiles[i],
                    flags & FJ_COMPAT ? "compat" : "default", err.message);
            return -1;
        }
    return 0;
}

static inline void t_close_profiles(fj_converter *conv[16])
{
    for (int i = 0; i < 16; i++) {
        fj_converter_close(conv[i]);
        conv[i] = NULL;
    }
}

/* Opens the dictionary and every profile's converter (FJ_COMPAT); 0 on success. */
static inline int t_open_all(const char *who, fj_dict **dict, fj_converter *conv[16])
{
    fj_error err;
    memset(&err, 0, sizeof err);
    if (fj_dict_open(t_dict_path(), NULL, dict, &err) != FJ_OK) {
        fprintf(stderr, "%s: cannot open %s: %s\n", who, t_dict_path(), err.message);
        return -1;
    }
    return t_open_profiles(who, *dict, FJ_COMPAT, conv);
}

static inline void t_close_all(fj_dict *dict, fj_converter *conv[16])
{
    t_close_profiles(conv);
    fj_dict_close(dict);
}

/* ---- UTF-8 and Han text ------------------------------------------------------ */

/* The length of the well-formed UTF-8 sequence at s[0..n) (no overlongs, no
 * surrogates, nothing above U+10FFFF), with its code point in *cp; 0 when
 * the byte at s does not begin one. */
static inline size_t t_utf8_char(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0)
        return 0;
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    size_t len;
    uint32_t c, min;
    if (u[0] >= 0xC2 && u[0] <= 0xDF) {
        len = 2;
        c = u[0] & 0x1Fu;
        min = 0x80;
    } else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
        len = 3;
        c = u[0] & 0x0Fu;
        min = 0x800;
    } else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
        len = 4;
        c = u[0] & 0x07u;
        min = 0x10000;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (u[i] & 0x3Fu);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

/* 1 when all of s[0..n) is well-formed UTF-8. */
static inline int t_utf8_valid(const char *s, size_t n)
{
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        size_t k = t_utf8_char(s + i, n - i, &cp);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

/* Han for the pass-through checks: CJK Unified Ideographs and Extension A,
 * the compatibility ideographs, and everything from U+20000 up. */
static inline int t_is_han(uint32_t cp)
{
    return (cp >= 0x3400 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) || cp >= 0x20000;
}

/* Appends to `out` every byte of s[0..n) that is not part of a well-formed
 * Han character (other characters, and bytes that are not UTF-8, stay). */
static inline void t_strip_han(const char *s, size_t n, tbuf *out)
{
    tb_add(out, "", 0);
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        size_t k = t_utf8_char(s + i, n - i, &cp);
        if (k && t_is_han(cp)) {
            i += k;
            continue;
        }
        if (!k)
            k = 1;
        tb_add(out, s + i, k);
        i += k;
    }
}

/* ---- reporting ------------------------------------------------------------------- */

/* Prints bytes with non-printable and non-ASCII bytes as \xHH (at most max bytes). */
static inline void t_print_escaped(FILE *f, const char *s, size_t n, size_t max)
{
    for (size_t i = 0; i < n && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\')
            fputs("\\\\", f);
        else if (c >= 0x20 && c < 0x7F)
            fputc(c, f);
        else
            fprintf(f, "\\x%02X", c);
    }
    if (n > max)
        fputs("...", f);
}

/* Prints text as it is when it is valid-looking UTF-8 without control bytes,
 * escaped otherwise. */
static inline void t_print_text(FILE *f, const char *s, size_t n, size_t max)
{
    int plain = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F || c == 0xC0 || c == 0xC1 || c >= 0xF5)
            plain = 0;
    }
    if (!plain || n > max) {
        t_print_escaped(f, s, n, max);
        return;
    }
    fwrite(s, 1, n, f);
}

/* Compares; on a difference prints where (with context) and returns 0. */
static inline int t_same(const char *what, const char *exp, size_t elen, const char *got,
                         size_t glen)
{
    if (elen == glen && (elen == 0 || memcmp(exp, got, elen) == 0))
        return 1;
    size_t i = 0;
    while (i < elen && i < glen && exp[i] == got[i])
        i++;
    size_t from = i > 24 ? i - 24 : 0;
    /* Back up to a character boundary so the context prints sensibly. */
    while (from > 0 && ((unsigned char)exp[from] & 0xC0) == 0x80)
        from--;
    fprintf(stdout, "  %s: differs at byte %zu (expected %zu bytes, got %zu)\n", what, i, elen,
            glen);
    fputs("    expected: ", stdout);
    t_print_text(stdout, exp + from, (elen > from ? elen - from : 0), 96);
    fputs("\n    got:      ", stdout);
    t_print_text(stdout, got + from, (glen > from ? glen - from : 0), 96);
    fputs("\n", stdout);
    fflush(stdout);
    return 0;
}

/* ---- conversion helpers ---------------------------------------------------- */

/* fj_convert_alloc, asserting success. Free with fj_free(conv, ...). */
static inline char *t_conv(const fj_converter *c, const char *in, size_t len, size_t *out_len)
{
    char *out = NULL;
    size_t n = 0;
    fj_status st = fj_convert_alloc(c, in, len, &out, &n);
    assert_int_equal(st, FJ_OK);
    assert_non_null(out);
    *out_len = n;
    return out;
}

/* Streams `in` through a new stream in pieces of `piece` bytes into out. */
static inline fj_status t_stream_pieces(const fj_converter *c, const char *in, size_t len,
                                        size_t piece, tbuf *out)
{
    fj_stream *s = NULL;
    fj_status st = fj_stream_new(c, tb_write, out, &s);
    if (st != FJ_OK)
        return st;
    for (size_t off = 0; off < len && st == FJ_OK; off += piece)
        st = fj_stream_feed(s, in + off, len - off < piece ? len - off : piece);
    if (st == FJ_OK)
        st = fj_stream_finish(s);
    fj_stream_free(s);
    return st;
}

#endif
