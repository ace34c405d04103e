/* One text on several threads (fj_independent_prefix, fjf_parallel): on
 * random texts made of real lines, newlines, CRLF, ideographic description
 * sequences and stray bytes, for every profile in both modes and the
 * converters that allow no cut, and on pieces whose output outgrows them,
 * the output equals fj_convert of the whole, whatever the block size, the
 * thread count and the pieces fed.
 * Environment: FANJIAN_DICT, FANJIAN_SHARED, FANJIAN_TEST_QUICK. */
#include "testutil.h"

#include "fanjian-formats.h"

static fj_dict *g_dict;
static char *g_corpus; /* lines to draw from */
static size_t g_corpus_len;

static const char *const g_fallback =
    "我的头发干了，他在干什么？\n皇后理发以后，发现了一只钟。\n這裡是臺灣，她的頭髮乾了。\n"
    "鼠标和打印机\n后来他系上了鞋带，联系了我。\n乾隆皇帝喝乾了酒。\n";

/* A random text of about n bytes. */
static void random_text(uint64_t *seed, size_t n, tbuf *out)
{
    static const char *const extras[] = {"\n", "\r\n", "\n\n", "⿰木木", "⿱⿰木木木", "\xff",
                                         "\xe5\xa4", " ", "𠀀", "abc", "-{头发}-", "。。。"};
    out->len = 0;
    while (out->len < n) {
        size_t k = t_below(seed, 10);
        if (k < 6) {
            /* A stretch of real text, from a random place. */
            size_t at = t_below(seed, g_corpus_len), len = 1 + t_below(seed, 300);
            if (at + len > g_corpus_len)
                len = g_corpus_len - at;
            tb_add(out, g_corpus + at, len);
        } else {
            tb_adds(out, extras[t_below(seed, sizeof extras / sizeof extras[0])]);
        }
    }
}

typedef struct counted {
    tbuf b;
} counted;

/* fjf_parallel over text, fed in random pieces, into out. */
static fj_status run_parallel(const fj_converter *c, unsigned jobs, size_t block, const tbuf *text,
                              uint64_t *seed, tbuf *out)
{
    fjf_parallel *p = NULL;
    fj_status st = fjf_parallel_new(c, jobs, block, tb_write, out, &p);
    if (st != FJ_OK)
        return st;
    size_t at = 0;
    while (st == FJ_OK && at < text->len) {
        size_t n = 1 + t_below(seed, t_below(seed, 2) ? 64 : 3 * block);
        if (n > text->len - at)
            n = text->len - at;
        st = fjf_parallel_feed(p, text->p + at, n);
        at += n;
    }
    if (st == FJ_OK)
        st = fjf_parallel_finish(p);
    fjf_parallel_free(p);
    return st;
}

static void check_converter(const fj_converter *c, const char *what, uint64_t *seed, int rounds,
                            int must_cut)
{
    tbuf text = {0}, out = {0};
    size_t cuts = 0;
    for (int r = 0; r < rounds; r++) {
        random_text(seed, 200 + t_below(seed, 20000), &text);
        char *whole = NULL;
        size_t whole_len;
        assert_int_equal(fj_convert_alloc(c, text.p, text.len, &whole, &whole_len), FJ_OK);
        /* The prefix converts the same apart. */
        size_t cut = fj_independent_prefix(c, text.p, text.len);
        assert_true(cut <= text.len);
        if (cut) {
            cuts++;
            assert_int_equal(text.p[cut - 1], '\n');
            char *a = NULL, *b = NULL;
            size_t al, bl;
            assert_int_equal(fj_convert_alloc(c, text.p, cut, &a, &al), FJ_OK);
            assert_int_equal(fj_convert_alloc(c, text.p + cut, text.len - cut, &b, &bl), FJ_OK);
            if (!(al + bl == whole_len && memcmp(a, whole, al) == 0 && memcmp(b, whole + al, bl) == 0))
                fail_msg("%s: round %d: the prefix of %zu bytes converts otherwise apart", what, r, cut);
            fj_free(c, a);
            fj_free(c, b);
        }
        /* Several threads, any block size, any pieces: the same bytes. */
        unsigned jobs = 1 + (unsigned)t_below(seed, 4);
        size_t block = 16 + t_below(seed, 4096);
        out.len = 0;
        assert_int_equal(run_parallel(c, jobs, block, &text, seed, &out), FJ_OK);
        if (!(out.len == whole_len && memcmp(out.p ? out.p : "", whole, whole_len) == 0))
            fail_msg("%s: round %d: %u threads, blocks of %zu: the output differs (%zu vs %zu bytes)",
                     what, r, jobs, block, out.len, whole_len);
        fj_free(c, whole);
    }
    if (must_cut)
        assert_true(cuts > 0);
    else
        assert_int_equal(cuts, 0);
    tb_free(&text);
    tb_free(&out);
}

static void test_every_profile(void **state)
{
    (void)state;
    uint64_t seed = t_seed();
    int rounds = t_quick() ? 2 : 6;
    for (size_t i = 0; i < 16; i++) {
        for (int compat = 0; compat < 2; compat++) {
            fj_converter *c = NULL;
            fj_error err;
            assert_int_equal(fj_converter_open(g_dict, t_profiles[i], compat ? FJ_COMPAT : FJ_DEFAULT,
                                               &c, &err), FJ_OK);
            char what[64];
            snprintf(what, sizeof what, "%s%s", t_profiles[i], compat ? " --compat" : "");
            /* Repair's estimate (t2tw ...) reads the whole text: no cut. */
            fj_profile_info info;
            info.size = sizeof info;
            assert_int_equal(fj_profile_info_get(g_dict, t_profiles[i], &info), FJ_OK);
            int cuts = fj_independent_prefix(c, "\n", 1) == 1;
            assert_true(cuts || (!compat && info.repairs));
            check_converter(c, what, &seed, rounds, cuts);
            fj_converter_close(c);
        }
    }
}

static void test_converters_without_cuts(void **state)
{
    (void)state;
    uint64_t seed = t_seed();
    fj_converter *c = NULL;
    fj_error err;
    assert_int_equal(fj_converter_open_target(g_dict, "tw", FJ_DEFAULT, &c, &err), FJ_OK);
    check_converter(c, "--to tw", &seed, 3, 0);
    fj_converter_close(c);
    const fj_phrase ph[] = {{"头发", "頭毛"}};
    fj_options o;
    fj_options_init(&o);
    o.profile = "s2t";
    o.phrases = ph;
    o.phrase_count = 1;
    o.markup = FJ_MARKUP_INLINE;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_OK);
    check_converter(c, "s2t with phrases and markup", &seed, 3, 0);
    fj_converter_close(c);
    fj_options_init(&o);
    o.profile = "s2t";
    o.punct = FJ_PUNCT_ELLIPSIS;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_OK);
    check_converter(c, "s2t with typography", &seed, 3, 0);
    fj_converter_close(c);
}

static void test_where_it_cuts(void **state)
{
    (void)state;
    fj_converter *c = NULL;
    fj_error err;
    assert_int_equal(fj_converter_open(g_dict, "s2t", FJ_DEFAULT, &c, &err), FJ_OK);
    assert_int_equal(fj_independent_prefix(c, "头发\n干了\n后来", strlen("头发\n干了\n后来")),
                     strlen("头发\n干了\n"));
    assert_int_equal(fj_independent_prefix(c, "没有换行", strlen("没有换行")), 0);
    assert_int_equal(fj_independent_prefix(c, "", 0), 0);
    assert_int_equal(fj_independent_prefix(NULL, "a\n", 2), 0);
    /* Not just after an ideographic description sequence that may reach
     * across: the newline before it is taken instead. */
    const char *ids = "一\n⿰木\n木";
    assert_int_equal(fj_independent_prefix(c, ids, strlen(ids)), strlen("一\n"));
    fj_converter_close(c);
}

/* A long text with no newline falls back to one stream, bytes the same. */
static void test_no_newline_for_long(void **state)
{
    (void)state;
    uint64_t seed = t_seed();
    fj_converter *c = NULL;
    fj_error err;
    assert_int_equal(fj_converter_open(g_dict, "s2tw", FJ_DEFAULT, &c, &err), FJ_OK);
    tbuf text = {0}, out = {0};
    for (int i = 0; i < 400; i++)
        tb_adds(&text, "我的头发干了，皇后理发以后。");
    tb_adds(&text, "\n最后一行");
    char *whole = NULL;
    size_t whole_len;
    assert_int_equal(fj_convert_alloc(c, text.p, text.len, &whole, &whole_len), FJ_OK);
    assert_int_equal(run_parallel(c, 2, 64, &text, &seed, &out), FJ_OK);
    assert_true(out.len == whole_len && memcmp(out.p, whole, whole_len) == 0);
    fj_free(c, whole);
    tb_free(&text);
    tb_free(&out);
    fj_converter_close(c);
}

/* Pieces whose output is twice their length (s2twp: U盘 -> 隨身碟): each
 * thread's output buffer must grow, and the bytes stay those of the whole. */
static void test_output_longer_than_piece(void **state)
{
    (void)state;
    uint64_t seed = t_seed();
    for (int compat = 0; compat < 2; compat++) {
        fj_converter *c = NULL;
        fj_error err;
        assert_int_equal(fj_converter_open(g_dict, "s2twp", compat ? FJ_COMPAT : FJ_DEFAULT, &c,
                                           &err), FJ_OK);
        tbuf text = {0}, out = {0};
        while (text.len < 200000) {
            tb_adds(&text, "U盘\n");
            if (t_below(&seed, 20) == 0) {
                size_t at = t_below(&seed, g_corpus_len), len = 1 + t_below(&seed, 40);
                if (at + len > g_corpus_len)
                    len = g_corpus_len - at;
                tb_add(&text, g_corpus + at, len);
                tb_adds(&text, "\n");
            }
        }
        char *whole = NULL;
        size_t whole_len;
        assert_int_equal(fj_convert_alloc(c, text.p, text.len, &whole, &whole_len), FJ_OK);
        assert_true(whole_len > text.len + text.len / 2);
        for (int r = 0; r < 4; r++) {
            unsigned jobs = 2 + (unsigned)t_below(&seed, 3);
            size_t block = 256 + t_below(&seed, 16384);
            out.len = 0;
            assert_int_equal(run_parallel(c, jobs, block, &text, &seed, &out), FJ_OK);
            if (!(out.len == whole_len && memcmp(out.p, whole, whole_len) == 0))
                fail_msg("s2twp%s: %u threads, blocks of %zu: the output differs (%zu vs %zu bytes)",
                         compat ? " --compat" : "", jobs, block, out.len, whole_len);
        }
        fj_free(c, whole);
        tb_free(&text);
        tb_free(&out);
        fj_converter_close(c);
    }
}

static int failing_write(void *ctx, const char *data, size_t len)
{
    (void)data;
    size_t *left = ctx;
    if (*left < len)
        return 1;
    *left -= len;
    return 0;
}

/* A write that fails stops it with FJ_ERR_CALLBACK, nothing hangs. */
static void test_write_failure(void **state)
{
    (void)state;
    fj_converter *c = NULL;
    fj_error err;
    assert_int_equal(fj_converter_open(g_dict, "s2t", FJ_DEFAULT, &c, &err), FJ_OK);
    tbuf text = {0};
    for (int i = 0; i < 2000; i++)
        tb_adds(&text, "我的头发干了，皇后理发以后。\n");
    size_t left = 1000;
    fjf_parallel *p = NULL;
    assert_int_equal(fjf_parallel_new(c, 3, 256, failing_write, &left, &p), FJ_OK);
    fj_status st = fjf_parallel_feed(p, text.p, text.len);
    if (st == FJ_OK)
        st = fjf_parallel_finish(p);
    assert_int_equal(st, FJ_ERR_CALLBACK);
    fjf_parallel_free(p);
    tb_free(&text);
    fj_converter_close(c);
}

static int setup(void **state)
{
    (void)state;
    fj_error err;
    if (fj_dict_open(t_dict_path(), NULL, &g_dict, &err) != FJ_OK)
        return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/opencc/compat/input.txt", t_shared_dir());
    g_corpus = t_read_file(path, &g_corpus_len);
    if (!g_corpus) {
        g_corpus_len = strlen(g_fallback);
        g_corpus = malloc(g_corpus_len + 1);
        if (!g_corpus)
            return -1;
        memcpy(g_corpus, g_fallback, g_corpus_len + 1);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(g_corpus);
    fj_dict_close(g_dict);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_where_it_cuts),
        cmocka_unit_test(test_every_profile),
        cmocka_unit_test(test_converters_without_cuts),
        cmocka_unit_test(test_no_newline_for_long),
        cmocka_unit_test(test_output_longer_than_piece),
        cmocka_unit_test(test_write_failure),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
