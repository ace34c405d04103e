/* fanjian unit tests (cmocka).
 *
 * Environment (tests/run.sh sets it):
 *   FANJIAN_BUILD        build directory (for fjdict)
 *   FANJIAN_DICT         the dictionary image to test
 *   FANJIAN_OPENCC_DATA  OpenCC's unpacked text data (dictionary/, config/)
 *   FANJIAN_SHARED       the shared material (../shared); tests using it skip when absent
 *   FANJIAN_TEST_QUICK   set: smaller randomized loops (sanitizer run)
 *   FANJIAN_TEST_SEED    base seed of the deterministic PRNG
 */
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "../src/image_format.h"
#include "../src/internal.h"
#include "../src/utf8.h"
#include "../tools/chewing.h"
#include "../formats/ocdata.h"

extern char **environ;

/* ---- fixtures ------------------------------------------------------------------ */

static fj_dict *g_dict;
static fj_converter *g_conv[16]; /* FJ_COMPAT (OpenCC 1.4.2's output) */
static fj_converter *g_def[16];  /* FJ_DEFAULT (forms chosen from context) */
static unsigned char *g_img; /* the image file, in an 8-byte aligned buffer */
static size_t g_img_size;
static oc_data *g_data; /* loaded on first use */
static char *g_compat;  /* ../shared/opencc/compat/input.txt, NULL when absent */
static size_t g_compat_len;

static int profile_index(const char *name)
{
    for (int i = 0; i < 16; i++)
        if (strcmp(t_profiles[i], name) == 0)
            return i;
    return -1;
}

static const fj_converter *conv(const char *name)
{
    int i = profile_index(name);
    assert_true(i >= 0);
    assert_non_null(g_conv[i]);
    return g_conv[i];
}

/* The default-mode converter for a profile. */
static const fj_converter *conv_def(const char *name)
{
    int i = profile_index(name);
    assert_true(i >= 0);
    assert_non_null(g_def[i]);
    return g_def[i];
}

static int group_setup(void **state)
{
    (void)state;
    if (t_open_all("unit", &g_dict, g_conv) != 0 ||
        t_open_profiles("unit", g_dict, FJ_DEFAULT, g_def) != 0)
        return -1;
    size_t n = 0;
    char *img = t_read_file(t_dict_path(), &n);
    if (!img)
        return -1;
    /* malloc's alignment (max_align_t) is at least 8. */
    g_img = (unsigned char *)img;
    g_img_size = n;
    if (((uintptr_t)g_img & 7) != 0)
        return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/opencc/compat/input.txt", t_shared_dir());
    g_compat = t_read_file(path, &g_compat_len);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    t_close_profiles(g_def);
    t_close_all(g_dict, g_conv);
    free(g_img);
    free(g_compat);
    oc_data_free(g_data);
    return 0;
}

static const oc_data *data(void)
{
    if (!g_data) {
        char err[1024] = "";
        g_data = oc_data_load(t_data_dir(), err, sizeof err);
        if (!g_data)
            fail_msg("cannot load OpenCC data from %s: %s", t_data_dir(), err);
    }
    return g_data;
}

/* ---- text generation --------------------------------------------------------- */

typedef struct tok {
    const char *s;
    size_t n;
} tok;
#define TOK(lit) {lit, sizeof(lit) - 1}

/* Byte sequences that are not UTF-8 and must pass through unchanged. */
static const tok bad_seqs[] = {
    TOK("\x80"),             /* lone continuation byte */
    TOK("\xBF"),             /* lone continuation byte */
    TOK("\xFF"),             /* never valid */
    TOK("\xFE"),             /* never valid */
    TOK("\xC0\x80"),         /* overlong NUL */
    TOK("\xC1\xBF"),         /* overlong */
    TOK("\xE0\x80\xAF"),     /* overlong '/' */
    TOK("\xE4\xB8"),         /* truncated 3-byte sequence */
    TOK("\xE4"),             /* lead byte alone */
    TOK("\xED\xA0\x80"),     /* lone high surrogate U+D800 */
    TOK("\xED\xBF\xBF"),     /* lone low surrogate U+DFFF */
    TOK("\xF0\x9F"),         /* truncated 4-byte sequence */
    TOK("\xF0\xA0\x80"),     /* truncated astral Han */
    TOK("\xF4\x90\x80\x80"), /* above U+10FFFF */
    TOK("\xF5"),
    TOK("\xF8\x88\x80\x80\x80"), /* old 5-byte form */
    TOK("\xFC\x84\x80\x80\x80\x80"),
    TOK("\x80\x80\x80"),
};
#define N_BAD (sizeof bad_seqs / sizeof bad_seqs[0])

/* Text that is not dictionary Han: IDS, compatibility ideographs (rewritten
 * by normalization), astral characters, controls, punctuation. */
static const tok specials[] = {
    TOK("\xE2\xBF\xB0\xE8\xA8\x80\xE5\x85\x91"),             /* ⿰言兑 */
    TOK("\xE2\xBF\xB1\xE2\xBF\xB0\xE6\x9C\xA8\xE6\x9C\xA8\xE6\x9C\xA8"), /* ⿱⿰木木木 */
    TOK("\xE2\xBF\xB0\xE6\xB0\xB5\xE2\xBF\xB1\xE8\x89\xB9\xE5\x8F\x91"), /* ⿰氵⿱艹发 */
    TOK("\xE2\xBF\xB2\xE5\x8F\x91\xE5\x8F\x91"),             /* ⿲发发: one operand short */
    TOK("\xE2\xBF\xB0"),                                     /* a lone operator */
    TOK("\xE2\xBF\xBB"),                                     /* ⿻ */
    TOK("\xE2\xBF\xBE\xE5\x8F\x91"),                         /* U+2FFE, arity 1 */
    TOK("\xEF\xA4\x80"),                                     /* U+F900 */
    TOK("\xEF\xA4\x81"),                                     /* U+F901 */
    TOK("\xEF\xA8\x8C"),                                     /* U+FA0C */
    TOK("\xEF\xAA\xB0"),                                     /* U+FAB0 */
    TOK("\xF0\xAF\xA0\x80"),                                 /* U+2F800 */
    TOK("\xF0\xAF\xA8\x9D"),                                 /* U+2FA1D */
    TOK("\xF0\xA0\x80\x80"),                                 /* U+20000 */
    TOK("\xF0\xAA\x9A\xA5"),                                 /* U+2A6A5 */
    TOK("\xF0\xA1\x8B\x97"),                                 /* U+212D7 */
    TOK("\xF0\x9F\x98\x80"),                                 /* U+1F600 */
    TOK("\xEF\xBB\xBF"),                                     /* BOM */
    TOK("\r\n"),
    TOK("\n"),
    TOK("\t"),
    TOK(" "),
    TOK("\0"),
    TOK("\xEF\xBC\x8C"), /* ， */
    TOK("\xE3\x80\x82"), /* 。 */
    TOK("\xE3\x80\x8C"), /* 「 */
    TOK("\xE3\x80\x8D"), /* 」 */
    TOK("Hello, world. "),
    TOK("SQL"),
    TOK("PN"),
    TOK("-"),
    TOK("1984"),
    TOK("\xC3\xA9"),     /* é */
    TOK("\xD0\x96"),     /* Ж */
    TOK("\xE3\x81\x8B"), /* か */
};
#define N_SPECIAL (sizeof specials / sizeof specials[0])

/* Appends the first `chars` characters of s. */
static void add_chars(tbuf *b, const char *s, size_t chars)
{
    size_t i = 0;
    while (s[i] && chars) {
        i++;
        while (((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        chars--;
    }
    tb_add(b, s, i);
}

static size_t count_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Random text of about `target` bytes: mostly dictionary keys (whole, cut,
 * single characters) and values from `dicts`, with `special_pct` percent
 * specials and `bad_pct` percent invalid sequences. */
static void gen_text(tbuf *b, uint64_t *rng, size_t target, const oc_dict *const *dicts,
                     size_t ndicts, unsigned special_pct, unsigned bad_pct)
{
    size_t start = b->len;
    while (b->len - start < target) {
        size_t r = t_below(rng, 100);
        if (r < bad_pct) {
            const tok *t = &bad_seqs[t_below(rng, N_BAD)];
            tb_add(b, t->s, t->n);
            continue;
        }
        if (r < bad_pct + special_pct) {
            const tok *t = &specials[t_below(rng, N_SPECIAL)];
            tb_add(b, t->s, t->n);
            continue;
        }
        const oc_dict *d = dicts[t_below(rng, ndicts)];
        if (d->count == 0)
            continue;
        const oc_entry *e = &d->entries[t_below(rng, d->count)];
        size_t k = t_below(rng, 10);
        if (k < 6) {
            tb_adds(b, e->key);
        } else if (k < 8) {
            tb_adds(b, e->values[t_below(rng, e->value_count)]);
        } else {
            size_t n = count_chars(e->key);
            add_chars(b, e->key, 1 + t_below(rng, n));
        }
    }
}

/* All dictionaries of the data set (sources and derived). */
static const oc_dict *const *all_dicts(size_t *n)
{
    const oc_data *d = data();
    *n = d->dict_count;
    return (const oc_dict *const *)d->dicts;
}

static void collect_leaves(const oc_expr *e, const oc_dict **out, size_t *n, size_t cap)
{
    if (!e)
        return;
    if (e->kind == OC_LEAF) {
        for (size_t i = 0; i < *n; i++)
            if (out[i] == e->dict)
                return;
        if (*n < cap)
            out[(*n)++] = e->dict;
        return;
    }
    for (size_t i = 0; i < e->child_count; i++)
        collect_leaves(e->children[i], out, n, cap);
}

/* The dictionaries a profile reads. */
static size_t profile_dicts(const oc_profile *p, const oc_dict **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < p->normalization_count; i++)
        collect_leaves(p->normalization[i], out, &n, cap);
    collect_leaves(p->segmentation, out, &n, cap);
    for (size_t i = 0; i < p->chain_count; i++)
        collect_leaves(p->chain[i], out, &n, cap);
    return n;
}

/* ---- 1. API errors ------------------------------------------------------------- */

static int dummy_write(void *ctx, const char *data_, size_t len)
{
    (void)ctx;
    (void)data_;
    (void)len;
    return 0;
}

static void test_api_null_arguments(void **state)
{
    (void)state;
    fj_error err;
    fj_dict *d = NULL;
    const fj_converter *c = conv("s2t");
    fj_converter *nc = NULL;
    char buf[64];
    size_t n = 12345;

    memset(&err, 0, sizeof err);
    assert_int_equal(fj_dict_open(t_dict_path(), NULL, NULL, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(err.code, FJ_ERR_INVALID_ARGUMENT);
    assert_true(err.message[0] != 0);
    assert_int_equal(fj_dict_open(t_dict_path(), NULL, NULL, NULL), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_dict_open_memory(NULL, 100, NULL, &d, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(err.code, FJ_ERR_INVALID_ARGUMENT);
    assert_null(d);
    assert_int_equal(fj_dict_open_memory(g_img, g_img_size, NULL, NULL, &err),
                     FJ_ERR_INVALID_ARGUMENT);
    d = (fj_dict *)g_dict;
    assert_int_not_equal(fj_dict_open_memory(NULL, 0, NULL, &d, &err), FJ_OK);
    assert_null(d);
    fj_dict_options unsized = {0, NULL}; /* size not set */
    assert_int_equal(fj_dict_open_memory(g_img, g_img_size, &unsized, &d, &err),
                     FJ_ERR_INVALID_ARGUMENT);
    assert_null(d);
    assert_non_null(strstr(err.message, "size"));

    assert_int_equal(fj_converter_open(NULL, "s2t", FJ_COMPAT, &nc, &err),
                     FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(err.code, FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_converter_open(g_dict, NULL, FJ_COMPAT, &nc, &err),
                     FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_converter_open(g_dict, "s2t", FJ_COMPAT, NULL, &err),
                     FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_converter_open(g_dict, "s2t", FJ_COMPAT | 0x100u, &nc, NULL),
                     FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_converter_open(g_dict, "s2t", 0x80000000u, &nc, &err),
                     FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(err.code, FJ_ERR_INVALID_ARGUMENT);

    assert_int_equal(fj_convert(NULL, "a", 1, buf, sizeof buf, &n), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_convert(c, NULL, 1, buf, sizeof buf, &n), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_convert(c, "a", 1, NULL, sizeof buf, &n), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_convert(c, "a", 1, buf, sizeof buf, NULL), FJ_ERR_INVALID_ARGUMENT);
    /* NULL input of length 0 is the empty text. */
    assert_int_equal(fj_convert(c, NULL, 0, buf, sizeof buf, &n), FJ_OK);
    assert_int_equal(n, 0);
    assert_int_equal(fj_convert(c, NULL, 0, NULL, 0, &n), FJ_OK);
    assert_int_equal(n, 0);

    char *out = (char *)buf;
    assert_int_equal(fj_convert_alloc(NULL, "a", 1, &out, &n), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_convert_alloc(c, NULL, 1, &out, &n), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_convert_alloc(c, "a", 1, NULL, &n), FJ_ERR_INVALID_ARGUMENT);
    out = NULL;
    assert_int_equal(fj_convert_alloc(c, NULL, 0, &out, &n), FJ_OK);
    assert_non_null(out);
    assert_int_equal(n, 0);
    assert_int_equal(out[0], 0);
    fj_free(c, out);

    fj_stream *s = NULL;
    tbuf sink = {0};
    assert_int_equal(fj_stream_new(NULL, tb_write, &sink, &s), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_stream_new(c, NULL, &sink, &s), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_stream_new(c, tb_write, &sink, NULL), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_stream_feed(NULL, "a", 1), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_stream_finish(NULL), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_stream_new(c, dummy_write, NULL, &s), FJ_OK); /* ctx may be NULL */
    fj_stream_free(s);
    s = NULL;
    assert_int_equal(fj_stream_new(c, tb_write, &sink, &s), FJ_OK);
    assert_int_equal(fj_stream_feed(s, NULL, 1), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_stream_feed(s, NULL, 0), FJ_OK);
    assert_int_equal(fj_stream_feed(s, "abc", 3), FJ_OK);
    assert_int_equal(fj_stream_finish(s), FJ_OK);
    assert_int_equal(sink.len, 3);
    assert_memory_equal(sink.p, "abc", 3);
    /* A finished stream accepts nothing more. */
    assert_int_equal(fj_stream_feed(s, "x", 1), FJ_ERR_STREAM_STATE);
    assert_int_equal(fj_stream_finish(s), FJ_ERR_STREAM_STATE);
    assert_int_equal(sink.len, 3);
    fj_stream_free(s);
    tb_free(&sink);

    /* Release functions accept NULL; queries on NULL are harmless. */
    fj_stream_free(NULL);
    fj_converter_close(NULL);
    fj_dict_close(NULL);
    fj_free(c, NULL);
    fj_free(NULL, NULL);
    assert_int_equal(fj_stream_pending(NULL), 0);
    assert_int_equal(fj_dict_profile_count(NULL), 0);
    assert_null(fj_dict_profile_name(NULL, 0));
    assert_null(fj_converter_profile(NULL));
}

static void test_missing_dictionary(void **state)
{
    (void)state;
    const char *path = "/nonexistent-fanjian-dir/sub/missing.fjd";
    fj_error err;
    memset(&err, 0, sizeof err);
    fj_dict *d = (fj_dict *)g_dict;
    assert_int_equal(fj_dict_open(path, NULL, &d, &err), FJ_ERR_IO);
    assert_null(d);
    assert_int_equal(err.code, FJ_ERR_IO);
    assert_non_null(strstr(err.message, path));

    /* NULL path: FANJIAN_DICT names the file. The variable is restored
     * before any assertion so a failure cannot affect later tests. */
    char *saved = strdup(t_dict_path());
    int had = getenv("FANJIAN_DICT") != NULL;
    const char *bogus = "/nonexistent-fanjian-dir/from-env.fjd";
    fj_error err2;
    memset(&err, 0, sizeof err);
    memset(&err2, 0, sizeof err2);
    setenv("FANJIAN_DICT", bogus, 1);
    fj_status st_bogus = fj_dict_open(NULL, NULL, &d, &err);
    setenv("FANJIAN_DICT", saved, 1);
    fj_dict *d2 = NULL;
    fj_status st_good = fj_dict_open(NULL, NULL, &d2, &err2);
    if (!had)
        unsetenv("FANJIAN_DICT");
    free(saved);
    assert_int_equal(st_bogus, FJ_ERR_IO);
    assert_null(d);
    assert_non_null(strstr(err.message, bogus));
    assert_int_equal(st_good, FJ_OK);
    assert_int_equal(err2.code, FJ_OK);
    assert_int_equal(fj_dict_profile_count(d2), 16);
    fj_dict_close(d2);

    /* A directory is not a dictionary. */
    memset(&err, 0, sizeof err);
    fj_status st = fj_dict_open("/", NULL, &d, &err);
    assert_int_not_equal(st, FJ_OK);
    assert_null(d);
    assert_int_equal(err.code, st);
    assert_true(err.message[0] != 0);
}

static void test_unknown_profile(void **state)
{
    (void)state;
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    memcpy(longname, "s2t", 3);
    longname[sizeof longname - 1] = 0;
    const char *names[] = {"",       "s2x",   "nonesuch", "s2t.txt", ".json",   "s2t/",
                           "t2s.js", "s2t ", " s2t",    "s2ts2ts2ts2ts2ts2t", longname};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fj_error err;
        memset(&err, 0, sizeof err);
        fj_converter *c = (fj_converter *)g_conv[0];
        fj_status st = fj_converter_open(g_dict, names[i], FJ_COMPAT, &c, &err);
        if (st != FJ_ERR_UNKNOWN_PROFILE)
            fail_msg("profile \"%s\": status %d, want FJ_ERR_UNKNOWN_PROFILE", names[i], st);
        assert_null(c);
        assert_int_equal(err.code, FJ_ERR_UNKNOWN_PROFILE);
        assert_true(err.message[0] != 0);
    }
}

static void test_profile_aliases(void **state)
{
    (void)state;
    static const char *const alias[][2] = {
        {"s2t.json", "s2t"},
        {"/x/y/s2twp.json", "s2twp"},
        {"/usr/share/opencc/tw2sp.json", "tw2sp"},
        {"hk2s.json", "hk2s"},
        {"jp2t", "jp2t"},
    };
    const char *text = "鼠标和打印机，头发干燥。滑鼠與印表機，頭髮乾燥。";
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++) {
        fj_error err;
        fj_converter *c = NULL;
        if (fj_converter_open(g_dict, alias[i][0], FJ_COMPAT, &c, &err) != FJ_OK)
            fail_msg("alias %s rejected: %s", alias[i][0], err.message);
        assert_string_equal(fj_converter_profile(c), alias[i][1]);
        size_t a_len, b_len;
        char *a = t_conv(c, text, strlen(text), &a_len);
        char *b = t_conv(conv(alias[i][1]), text, strlen(text), &b_len);
        assert_true(t_same(alias[i][0], b, b_len, a, a_len));
        fj_free(c, a);
        fj_free(conv(alias[i][1]), b);
        fj_converter_close(c);
    }
}

static void test_strerror_and_version(void **state)
{
    (void)state;
    const char *seen[FJ_ERR_CALLBACK + 1];
    for (int s = FJ_OK; s <= FJ_ERR_CALLBACK; s++) {
        const char *m = fj_strerror((fj_status)s);
        assert_non_null(m);
        assert_true(m[0] != 0);
        for (int t = FJ_OK; t < s; t++)
            if (strcmp(seen[t], m) == 0)
                fail_msg("fj_strerror(%d) and fj_strerror(%d) are both \"%s\"", t, s, m);
        seen[s] = m;
    }
    assert_non_null(fj_strerror((fj_status)1000));
    assert_non_null(fj_version());
    assert_string_equal(fj_version(), FJ_VERSION_STRING);
    assert_int_equal(fj_version_number(), FJ_VERSION_NUMBER);
    char parts[32];
    snprintf(parts, sizeof parts, "%d.%d.%d", FJ_VERSION_MAJOR, FJ_VERSION_MINOR, FJ_VERSION_PATCH);
    assert_string_equal(parts, FJ_VERSION_STRING);
    assert_non_null(fj_dict_default_path());
}

/* The image names what it was built from (fjdict --source, from the fetch
 * scripts): OpenCC 1.4.2, rime-essay and the regional word data, with their
 * versions and terms. */
static void test_dict_sources(void **state)
{
    (void)state;
    fj_dict_info_rec info = {sizeof info, 0, 0};
    assert_int_equal(fj_dict_info(g_dict, &info), FJ_OK);
    assert_int_equal(info.format_version, FJ_IMAGE_VERSION);
    fj_dict_info_rec small = {sizeof small - 1, 0, 0};
    assert_int_equal(fj_dict_info(g_dict, &small), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_dict_info(NULL, &info), FJ_ERR_INVALID_ARGUMENT);
    fj_dict_source src = {sizeof src, NULL, NULL, NULL, NULL};
    assert_int_equal(fj_dict_source_at(g_dict, info.source_count, &src), FJ_ERR_INVALID_ARGUMENT);
    fj_dict_source old = {sizeof old - 1, NULL, NULL, NULL, NULL};
    assert_int_equal(fj_dict_source_at(g_dict, 0, &old), FJ_ERR_INVALID_ARGUMENT);
    int opencc = 0, essay = 0, chewing = 0, cantonese = 0;
    for (size_t i = 0; i < info.source_count; i++) {
        assert_int_equal(fj_dict_source_at(g_dict, i, &src), FJ_OK);
        assert_true(src.name[0] && src.version[0] && src.license[0] && src.role[0]);
        if (strcmp(src.name, "OpenCC") == 0) {
            opencc++;
            assert_string_equal(src.version, "1.4.2");
            assert_string_equal(src.license, "Apache-2.0");
        }
        essay += strcmp(src.name, "rime-essay") == 0;
        chewing += strcmp(src.name, "libchewing3-data") == 0;
        cantonese += strcmp(src.name, "rime-data-jyut6ping3") == 0;
    }
    assert_int_equal(opencc, 1);
    assert_int_equal(essay, 1);
    assert_int_equal(chewing, 1);
    assert_int_equal(cantonese, 1);
}

static void test_profile_list(void **state)
{
    (void)state;
    assert_int_equal(fj_dict_profile_count(g_dict), 16);
    int seen[16] = {0};
    for (size_t i = 0; i < 16; i++) {
        const char *name = fj_dict_profile_name(g_dict, i);
        assert_non_null(name);
        int k = profile_index(name);
        if (k < 0)
            fail_msg("unexpected profile name \"%s\"", name);
        seen[k]++;
        /* The canonical name round-trips. */
        assert_string_equal(fj_converter_profile(g_conv[k]), name);
    }
    for (int k = 0; k < 16; k++)
        if (seen[k] != 1)
            fail_msg("profile %s listed %d times", t_profiles[k], seen[k]);
    assert_null(fj_dict_profile_name(g_dict, 16));
    assert_null(fj_dict_profile_name(g_dict, (size_t)-1));
}

/* ---- 2. Damaged images ----------------------------------------------------------- */

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void wr64(unsigned char *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

static unsigned char *img_copy(size_t n)
{
    unsigned char *p = malloc(n ? n : 8);
    assert_non_null(p);
    assert_true(((uintptr_t)p & 7) == 0);
    memcpy(p, g_img, n < g_img_size ? n : g_img_size);
    return p;
}

/* Recomputes the chunk sums and the header's checksum. */
static void img_fix_checksum(unsigned char *img, size_t size)
{
    if (size >= FJ_IMAGE_HEADER_SIZE)
        fj_image_seal(img, size);
}

/* Where the body starts: the header, the section table and the chunk sums
 * come before it. */
static size_t img_body_at(const unsigned char *img)
{
    return (size_t)fj_image_body_offset(rd32(img + 12), rd32(img + 32));
}

typedef struct sect {
    size_t rec_at; /* the section table record */
    uint64_t off, size;
} sect;

static sect find_sect(const unsigned char *img, uint32_t tag)
{
    uint32_t count = rd32(img + 12);
    for (uint32_t i = 0; i < count; i++) {
        size_t at = FJ_IMAGE_HEADER_SIZE + (size_t)i * sizeof(fj_section_rec);
        if (rd32(img + at) == tag) {
            sect s = {at, rd64(img + at + 8), rd64(img + at + 16)};
            return s;
        }
    }
    fail_msg("section %08x not found", tag);
    sect none = {0, 0, 0};
    return none;
}

static int is_damage_status(fj_status st)
{
    return st == FJ_ERR_DICT_FORMAT || st == FJ_ERR_DICT_VERSION || st == FJ_ERR_DICT_CHECKSUM;
}

/* Opens img[0..n) from memory and verifies all of it; a successful open is
 * closed before returning. */
static fj_status open_mem(const unsigned char *img, size_t n, fj_error *err)
{
    fj_dict *d = (fj_dict *)g_dict;
    memset(err, 0, sizeof *err);
    fj_status st = fj_dict_open_memory(img, n, NULL, &d, err);
    if (st != FJ_OK) {
        assert_null(d);
        return st;
    }
    /* The parts are checked when first used: all of them now. */
    st = fj_dict_verify(d, err);
    fj_dict_close(d);
    return st;
}

static void expect_damage(const unsigned char *img, size_t n, const char *what)
{
    fj_error err;
    fj_status st = open_mem(img, n, &err);
    if (!is_damage_status(st))
        fail_msg("%s: status %d (%s), want a dictionary error", what, st, fj_strerror(st));
    if (err.code != st || err.message[0] == 0)
        fail_msg("%s: error details not filled (code %d, message \"%s\")", what, err.code,
                 err.message);
}

static void test_image_pristine(void **state)
{
    (void)state;
    unsigned char *img = img_copy(g_img_size);
    fj_dict *d = NULL;
    fj_error err;
    assert_int_equal(fj_dict_open_memory(img, g_img_size, NULL, &d, &err), FJ_OK);
    assert_int_equal(err.code, FJ_OK);
    assert_int_equal(fj_dict_profile_count(d), 16);
    fj_converter *c = NULL;
    assert_int_equal(fj_converter_open(d, "s2twp", FJ_COMPAT, &c, &err), FJ_OK);
    const char *text = "鼠标和打印机，头发干燥";
    size_t a_len, b_len;
    char *a = t_conv(c, text, strlen(text), &a_len);
    char *b = t_conv(conv("s2twp"), text, strlen(text), &b_len);
    assert_true(t_same("memory image", b, b_len, a, a_len));
    assert_string_equal(a, "滑鼠和印表機，頭髮乾燥");
    fj_free(c, a);
    fj_free(conv("s2twp"), b);
    fj_converter_close(c);
    fj_dict_close(d);
    free(img);

    /* Misaligned memory is refused, not read. */
    unsigned char *raw = malloc(g_img_size + 8);
    assert_non_null(raw);
    memcpy(raw + 1, g_img, g_img_size);
    d = NULL;
    assert_int_not_equal(fj_dict_open_memory(raw + 1, g_img_size, NULL, &d, &err), FJ_OK);
    assert_null(d);
    free(raw);
}

static void test_image_truncated(void **state)
{
    (void)state;
    uint32_t count = rd32(g_img + 12);
    size_t table_end = FJ_IMAGE_HEADER_SIZE + count * sizeof(fj_section_rec);
    size_t lens[40];
    size_t n = 0;
    size_t fixed[] = {0,  1,  7,  8,  15, 16, 23, 24, 31, 32, 63, 64, 65, table_end - 1, table_end,
                      table_end + 1, 4096, g_img_size / 3, g_img_size / 2, g_img_size - 4096,
                      g_img_size - 9, g_img_size - 8, g_img_size - 1};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        lens[n++] = fixed[i];
    uint64_t rng = t_seed() ^ 0x7472756E63ull;
    while (n < sizeof lens / sizeof lens[0])
        lens[n++] = t_below(&rng, g_img_size);
    for (size_t i = 0; i < n; i++) {
        unsigned char *img = img_copy(lens[i]);
        char what[64];
        snprintf(what, sizeof what, "truncated to %zu bytes", lens[i]);
        expect_damage(img, lens[i], what);
        free(img);
    }
}

static void test_image_bitflips(void **state)
{
    (void)state;
    uint32_t count = rd32(g_img + 12);
    size_t table_end = FJ_IMAGE_HEADER_SIZE + count * sizeof(fj_section_rec);
    unsigned char *img = img_copy(g_img_size);
    uint64_t rng = t_seed() ^ 0x666C6970ull;
    size_t positions[1024];
    size_t np = 0;
    /* Every byte of the header's meaningful fields (magic, version, section
     * count, file size, checksum, chunk count) and of the section table. */
    for (size_t i = 0; i < 36; i++)
        positions[np++] = i;
    for (size_t i = FJ_IMAGE_HEADER_SIZE; i < table_end && np < 400; i++)
        positions[np++] = i;
    /* 200 positions spread evenly over the rest, and 100 random ones. */
    for (size_t k = 0; k < 200; k++)
        positions[np++] = table_end + k * (g_img_size - table_end - 1) / 199;
    for (size_t k = 0; k < 100; k++)
        positions[np++] = table_end + t_below(&rng, g_img_size - table_end);
    static const unsigned char masks[] = {0x01, 0x80, 0xFF, 0x10};
    for (size_t i = 0; i < np; i++) {
        size_t pos = positions[i];
        unsigned char mask = masks[i % 4];
        img[pos] ^= mask;
        char what[80];
        snprintf(what, sizeof what, "byte %zu flipped with 0x%02X", pos, mask);
        expect_damage(img, g_img_size, what);
        img[pos] ^= mask;
    }
    /* Header bytes 36..63 (reserved) are outside the checksum and unused:
     * a flip there may be accepted, but then the image must still work
     * exactly like the original. */
    const char *text = "鼠标和打印机，头发干燥。軟體與記憶體";
    size_t accepted = 0;
    for (size_t pos = 36; pos < FJ_IMAGE_HEADER_SIZE; pos++) {
        img[pos] ^= 0xFF;
        fj_dict *d = NULL;
        fj_error err;
        fj_status st = fj_dict_open_memory(img, g_img_size, NULL, &d, &err);
        if (st == FJ_OK) {
            accepted++;
            for (int p = 0; p < 16; p++) {
                fj_converter *c = NULL;
                assert_int_equal(fj_converter_open(d, t_profiles[p], FJ_COMPAT, &c, &err), FJ_OK);
                size_t a_len, b_len;
                char *a = t_conv(c, text, strlen(text), &a_len);
                char *b = t_conv(g_conv[p], text, strlen(text), &b_len);
                assert_true(t_same("reserved header byte flipped", b, b_len, a, a_len));
                fj_free(c, a);
                fj_free(g_conv[p], b);
                fj_converter_close(c);
            }
            fj_dict_close(d);
        } else {
            assert_true(is_damage_status(st));
        }
        img[pos] ^= 0xFF;
    }
    if (accepted)
        print_message("note: %zu of 28 flips in the reserved header bytes 36..63 were accepted "
                      "(not covered by the checksum; harmless)\n",
                      accepted);
    free(img);
}

static void test_image_bad_magic(void **state)
{
    (void)state;
    unsigned char *img = img_copy(g_img_size);
    for (size_t pos = 0; pos < 8; pos++) {
        img[pos] ^= 0x20;
        fj_error err;
        assert_int_equal(open_mem(img, g_img_size, &err), FJ_ERR_DICT_FORMAT);
        assert_int_equal(err.code, FJ_ERR_DICT_FORMAT);
        img[pos] ^= 0x20;
    }
    /* All zeros; text. */
    memset(img, 0, g_img_size);
    fj_error err;
    assert_int_equal(open_mem(img, g_img_size, &err), FJ_ERR_DICT_FORMAT);
    memset(img, 'x', 4096);
    memcpy(img, "# Open Chinese Convert (OpenCC) Dictionary\n", 43);
    assert_int_equal(open_mem(img, 4096, &err), FJ_ERR_DICT_FORMAT);
    free(img);
}

static void test_image_wrong_version(void **state)
{
    (void)state;
    unsigned char *img = img_copy(g_img_size);
    const uint32_t versions[] = {0, FJ_IMAGE_VERSION + 1, 0x100u, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        wr32(img + 8, versions[i]);
        fj_error err;
        fj_status st = open_mem(img, g_img_size, &err);
        if (st != FJ_ERR_DICT_VERSION)
            fail_msg("version %u: status %d, want FJ_ERR_DICT_VERSION", versions[i], st);
        assert_int_equal(err.code, FJ_ERR_DICT_VERSION);
        assert_true(err.message[0] != 0);
    }
    free(img);
}

static char *temp_path(const char *stem)
{
    char *p = malloc(4096);
    assert_non_null(p);
    snprintf(p, 4096, "%s/fanjian-%s-XXXXXX", t_env("TMPDIR", "/tmp"), stem);
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    close(fd);
    return p;
}

static void write_file(const char *path, const void *data_, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data_, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void expect_file_status(const char *path, fj_status want, const char *what)
{
    fj_dict *d = (fj_dict *)g_dict;
    fj_error err;
    memset(&err, 0, sizeof err);
    fj_status st = fj_dict_open(path, NULL, &d, &err);
    if (st == FJ_OK) { /* damage in a part checked when first used */
        st = fj_dict_verify(d, &err);
        fj_dict_close(d);
        d = NULL;
    }
    if (st != want)
        fail_msg("%s: status %d (%s), want %d (%s)", what, st, fj_strerror(st), want,
                 fj_strerror(want));
    assert_null(d);
    assert_int_equal(err.code, want);
    assert_true(err.message[0] != 0);
}

/* Parts are checked when first used: damage in the trie of t2jp alone
 * leaves s2t working, and opening t2jp (every time) or verifying the whole
 * image reports it, at the damaged chunk or node. */
static void test_image_checked_on_first_use(void **state)
{
    (void)state;
    sect profiles = find_sect(g_img, FJ_SEC_PROFILES), matchers = find_sect(g_img, FJ_SEC_MATCHERS),
         nodes = find_sect(g_img, FJ_SEC_NODES);
    fj_profile_rec pr;
    size_t i = 0;
    for (; i < profiles.size / sizeof pr; i++) {
        memcpy(&pr, g_img + profiles.off + i * sizeof pr, sizeof pr);
        if (strcmp(pr.name, "t2jp") == 0)
            break;
    }
    assert_true(i < profiles.size / sizeof pr && pr.stage_count == 1);
    fj_matcher_rec m;
    memcpy(&m, g_img + matchers.off + (size_t)pr.stages[0] * sizeof m, sizeof m);
    assert_true(m.node_end > m.node_first + 10);
    uint32_t victim = m.node_first + (m.node_end - m.node_first) / 2;
    size_t at = (size_t)nodes.off + (size_t)victim * sizeof(fj_node_rec);
    const char *text = "鼠标和打印机，头发干燥";
    for (int resealed = 0; resealed < 2; resealed++) {
        unsigned char *img = img_copy(g_img_size);
        fj_status want = resealed ? FJ_ERR_DICT_FORMAT : FJ_ERR_DICT_CHECKSUM;
        if (resealed) { /* children past the matcher's own nodes */
            fj_node_rec rec;
            memcpy(&rec, img + at, sizeof rec);
            rec.first_child = m.node_end;
            rec.child_count = 1;
            memcpy(img + at, &rec, sizeof rec);
            img_fix_checksum(img, g_img_size);
        } else {
            img[at] ^= 0x01;
        }
        fj_dict *d = NULL;
        fj_error err;
        assert_int_equal(fj_dict_open_memory(img, g_img_size, NULL, &d, &err), FJ_OK);
        fj_converter *c = NULL;
        assert_int_equal(fj_converter_open(d, "s2t", FJ_COMPAT, &c, &err), FJ_OK);
        size_t a_len, b_len;
        char *a = t_conv(c, text, strlen(text), &a_len);
        char *b = t_conv(conv("s2t"), text, strlen(text), &b_len);
        assert_true(t_same("s2t beside a damaged t2jp", b, b_len, a, a_len));
        fj_free(c, a);
        fj_free(conv("s2t"), b);
        fj_converter_close(c);
        for (int again = 0; again < 2; again++) {
            c = NULL;
            memset(&err, 0, sizeof err);
            assert_int_equal(fj_converter_open(d, "t2jp", FJ_COMPAT, &c, &err), want);
            assert_null(c);
            assert_int_equal(err.code, want);
            if (resealed)
                assert_int_equal(err.offset, at);
            else
                assert_true(err.offset <= at && at < err.offset + FJ_CHUNK_SIZE);
        }
        memset(&err, 0, sizeof err);
        assert_int_equal(fj_dict_verify(d, &err), want);
        assert_int_equal(err.code, want);
        fj_dict_close(d);
        free(img);
    }
}

static void test_image_damaged_file(void **state)
{
    (void)state;
    char *path = temp_path("damaged");
    unsigned char *img = img_copy(g_img_size);
    img[g_img_size / 2] ^= 0x04;
    write_file(path, img, g_img_size);
    expect_file_status(path, FJ_ERR_DICT_CHECKSUM, "flipped byte in the file");
    img[g_img_size / 2] ^= 0x04;

    write_file(path, img, g_img_size / 2);
    expect_file_status(path, FJ_ERR_DICT_FORMAT, "file cut in half");
    write_file(path, img, 10);
    expect_file_status(path, FJ_ERR_DICT_FORMAT, "10-byte file");
    write_file(path, img, 0);
    expect_file_status(path, FJ_ERR_DICT_FORMAT, "empty file");
    wr32(img + 8, FJ_IMAGE_VERSION + 1);
    write_file(path, img, g_img_size);
    expect_file_status(path, FJ_ERR_DICT_VERSION, "file of a newer version");

    /* The intact file still opens (the temp file machinery is sound). */
    wr32(img + 8, FJ_IMAGE_VERSION);
    write_file(path, img, g_img_size);
    fj_dict *d = NULL;
    fj_error err;
    assert_int_equal(fj_dict_open(path, NULL, &d, &err), FJ_OK);
    fj_dict_close(d);
    unlink(path);
    free(path);
    free(img);
}

/* fj_dict_open(path) in a child process, with the address space limited
 * to `limit_as` bytes (0: no limit): the status the child saw, as its exit
 * code, and its message through a pipe. A child still running after 10 s
 * (an open that waits, a file read whole) is killed: -1. */
static int open_in_child(const char *path, size_t limit_as, char *message, size_t size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (limit_as) {
            struct rlimit rl = {limit_as, limit_as};
            if (setrlimit(RLIMIT_AS, &rl) != 0)
                _exit(120);
        }
        fj_dict *d = NULL;
        fj_error err;
        memset(&err, 0, sizeof err);
        fj_status st = fj_dict_open(path, NULL, &d, &err);
        ssize_t w = write(fds[1], err.message, strlen(err.message));
        (void)w;
        _exit((int)st);
    }
    close(fds[1]);
    int status = 0;
    pid_t done = 0;
    for (int waited = 0; waited < 1000 && done == 0; waited++) {
        done = waitpid(pid, &status, WNOHANG);
        if (done == 0)
            usleep(10000);
    }
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    ssize_t got = read(fds[0], message, size - 1);
    message[got > 0 ? got : 0] = 0;
    close(fds[0]);
    return done != 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* What is not a dictionary is refused before the file is read or mapped:
 * a FIFO without waiting for a writer, a large file by its header. */
static void test_image_refused_from_header(void **state)
{
    (void)state;
    char message[256];
    char *fifo = temp_path("fifo");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int st = open_in_child(fifo, 0, message, sizeof message);
    if (st != FJ_ERR_DICT_FORMAT || !strstr(message, "FIFO"))
        fail_msg("FIFO: status %d (-1: it waited), \"%s\"", st, message);
    unlink(fifo);
    free(fifo);

    /* 2 GiB of zeros (sparse), with 1 GiB of address space. (Not under
     * AddressSanitizer, which reserves far more address space itself.) */
#if !defined(__SANITIZE_ADDRESS__)
    char *big = temp_path("big");
    int fd = open(big, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)2 << 30), 0);
    close(fd);
    st = open_in_child(big, (size_t)1 << 30, message, sizeof message);
    if (st != FJ_ERR_DICT_FORMAT || !strstr(message, "not a fanjian dictionary"))
        fail_msg("2 GiB of zeros: status %d, \"%s\"", st, message);
    unlink(big);
    free(big);
#endif

    /* The header's size against the file's, both ways. */
    char *path = temp_path("sizes");
    write_file(path, g_img, g_img_size - 8);
    st = open_in_child(path, 0, message, sizeof message);
    if (st != FJ_ERR_DICT_FORMAT || !strstr(message, "truncated"))
        fail_msg("cut short: status %d, \"%s\"", st, message);
    unsigned char *longer = img_copy(g_img_size + 8);
    memset(longer + g_img_size, 0, 8);
    write_file(path, longer, g_img_size + 8);
    st = open_in_child(path, 0, message, sizeof message);
    if (st != FJ_ERR_DICT_FORMAT || !strstr(message, "extra bytes"))
        fail_msg("8 bytes added: status %d, \"%s\"", st, message);
    free(longer);
    unlink(path);
    free(path);
}

/* A hostile image: damaged by `mutate`, checksum recomputed. */
typedef struct hostile {
    const char *what;
    uint32_t tag; /* the section the reported offset should fall in; 0: any byte >= 64 */
} hostile;

static void expect_hostile(unsigned char *img, size_t size, const hostile *h)
{
    img_fix_checksum(img, size);
    fj_error err;
    fj_status st = open_mem(img, size, &err);
    if (st != FJ_ERR_DICT_FORMAT)
        fail_msg("%s: status %d (%s), want FJ_ERR_DICT_FORMAT", h->what, st, fj_strerror(st));
    assert_int_equal(err.code, FJ_ERR_DICT_FORMAT);
    assert_true(err.message[0] != 0);
    uint64_t lo = FJ_IMAGE_HEADER_SIZE, hi = size;
    if (h->tag) {
        sect s = find_sect(img, h->tag);
        lo = s.off;
        hi = s.off + s.size;
    }
    if (err.offset < lo || err.offset >= hi)
        fail_msg("%s: reported offset %zu, want one in [%llu, %llu) (%s)", h->what, err.offset,
                 (unsigned long long)lo, (unsigned long long)hi, err.message);
}

/* Converts text with every profile of an accepted (damaged) image: results
 * are not checked, only that nothing crashes or reads out of bounds. */
static void convert_all_profiles_in(fj_dict *d, unsigned flags)
{
    static const char text[] =
        "这是只有一个人的世界，头发干了，我们去打印机那里取文件。鼠标和软件内存\n"
        "頭髮乾燥，滑鼠與印表機。舊字體歴史仮名遣 \xE2\xBF\xB0\xE8\xA8\x80\xE5\x85\x91 "
        "\xEF\xA4\x80\xF0\xAF\xA0\x80\xF0\xA0\x80\x80 SQL注入 abc \xFF\xE4\xB8";
    size_t n = fj_dict_profile_count(d);
    for (size_t i = 0; i < n; i++) {
        fj_converter *c = NULL;
        fj_error err;
        if (fj_converter_open(d, fj_dict_profile_name(d, i), flags, &c, &err) != FJ_OK)
            continue;
        char *out = NULL;
        size_t len = 0;
        if (fj_convert_alloc(c, text, sizeof text - 1, &out, &len) == FJ_OK)
            fj_free(c, out);
        tbuf sink = {0};
        (void)t_stream_pieces(c, text, sizeof text - 1, 5, &sink);
        tb_free(&sink);
        fj_converter_close(c);
    }
}

static void convert_all_profiles(fj_dict *d)
{
    convert_all_profiles_in(d, FJ_COMPAT);
}

/* Recomputes the checksum and opens: a rejection must be FJ_ERR_DICT_FORMAT;
 * an accepted image must convert without crashing. Returns 1 if accepted. */
static int expect_rejected_or_safe(unsigned char *img, size_t size, const char *what)
{
    img_fix_checksum(img, size);
    fj_dict *d = NULL;
    fj_error err;
    fj_status st = fj_dict_open_memory(img, size, NULL, &d, &err);
    if (st != FJ_OK) {
        if (st != FJ_ERR_DICT_FORMAT)
            fail_msg("%s: status %d (%s), want FJ_ERR_DICT_FORMAT or success", what, st,
                     fj_strerror(st));
        assert_null(d);
        return 0;
    }
    convert_all_profiles(d);
    fj_dict_close(d);
    return 1;
}

/* The node check against the invariant written out here: a value kept in
 * STRS ends inside it, children lie inside the matcher. Random nodes near
 * the edges, in sets of every length, so each SIMD lane and the scalar tail
 * see good and bad nodes alike. */
static uint32_t node_outside(const fj_node_rec *n, uint32_t strings_size, uint32_t first,
                             uint32_t end)
{
    int in_strings = n->value_len != FJ_NO_VALUE && n->value_len > FJ_INLINE_VALUE_MAX;
    if (in_strings && (uint64_t)n->value + n->value_len > strings_size)
        return 1;
    return n->child_count != 0 &&
           (n->first_child < first || (uint64_t)n->first_child + n->child_count > end);
}

static uint32_t near(uint64_t *s, uint32_t edge)
{
    switch (t_rand(s) % 5) {
    case 0:
        return (uint32_t)t_rand(s);
    case 1:
        return 0xFFFFFFFFu - (uint32_t)(t_rand(s) % 3);
    default:
        return edge + (uint32_t)(t_rand(s) % 5) - 2;
    }
}

static void test_image_node_check(void **state)
{
    (void)state;
    uint64_t seed = t_seed() ^ 0x6E6F646573ull;
    long bad = 0, good = 0;
    int sets = t_quick() ? 40000 : 400000;
    for (int it = 0; it < sets; it++) {
        uint32_t strings = t_rand(&seed) % 4 ? (uint32_t)(t_rand(&seed) % 100000)
                                                : near(&seed, 1u << 20);
        uint32_t first = 1 + (uint32_t)(t_rand(&seed) % 1000);
        uint32_t end = first + (uint32_t)(t_rand(&seed) % 3000);
        fj_node_rec nodes[11];
        uint32_t count = 1 + (uint32_t)(t_rand(&seed) % 11), want = 0;
        /* Mostly good sets, with one node that may be bad. */
        uint32_t odd = (uint32_t)(t_rand(&seed) % count);
        for (uint32_t k = 0; k < count; k++) {
            fj_node_rec *n = &nodes[k];
            uint32_t r = (uint32_t)(t_rand(&seed) % 4);
            n->value_len = r == 0 ? FJ_NO_VALUE
                           : r == 1 ? (uint16_t)(t_rand(&seed) % (FJ_INLINE_VALUE_MAX + 1))
                                    : (uint16_t)(FJ_INLINE_VALUE_MAX + 1 + t_rand(&seed) % 40);
            n->value = strings > n->value_len
                           ? (uint32_t)(t_rand(&seed) % ((uint64_t)strings - n->value_len + 1))
                           : 0;
            n->child_count = (uint16_t)(t_rand(&seed) % 3 ? t_rand(&seed) % 5 : 0);
            n->first_child = first + (uint32_t)(t_rand(&seed) % ((uint64_t)end - first + 1));
            if (n->first_child + n->child_count > end)
                n->child_count = (uint16_t)(end - n->first_child);
            if (k == odd) {
                switch (t_rand(&seed) % 5) {
                case 0:
                    n->value = near(&seed, strings - n->value_len);
                    break;
                case 1:
                    n->value_len = (uint16_t)near(&seed, strings - n->value);
                    break;
                case 2:
                    n->first_child = near(&seed, t_rand(&seed) % 2 ? first : end);
                    break;
                case 3:
                    n->child_count = (uint16_t)near(&seed, end - n->first_child);
                    break;
                default:
                    break;
                }
            }
            want |= node_outside(n, strings, first, end);
        }
        uint32_t got = fj__nodes_out_of_range(nodes, count, strings, first, end);
        if (!want != !got)
            fail_msg("set %d of %u nodes: check says %u, invariant %u", it, count, got, want);
        bad += want != 0;
        good += want == 0;
    }
    /* Both kinds were tried often enough to mean something. */
    assert_true(bad > sets / 8 && good > sets / 8);
}

/* The image's record tables are what a converter builds without them: for
 * every matcher that is a conversion step of some profile, the same bytes,
 * and no other matcher has one. */
static void test_image_records_as_built(void **state)
{
    (void)state;
    const fj_image *img = fj__dict_image(g_dict);
    unsigned char *is_step = calloc(img->matcher_count, 1);
    uint64_t *built = malloc((size_t)FJ_REC_COUNT * sizeof *built);
    assert_non_null(is_step);
    assert_non_null(built);
    for (uint32_t i = 0; i < img->profile_count; i++)
        for (uint32_t k = 0; k < img->profiles[i].stage_count; k++)
            is_step[img->profiles[i].stages[k]] = 1;
    uint32_t compared = 0;
    for (uint32_t id = 0; id < img->matcher_count; id++) {
        uint32_t t = img->matchers[id].records;
        if (!is_step[id]) {
            if (t != FJ_NONE)
                fail_msg("matcher %u is no profile's step but has record table %u", id, t);
            continue;
        }
        if (t == FJ_NONE)
            fail_msg("matcher %u is a step without a record table", id);
        fj_error err;
        assert_int_equal(fj__matcher_build_records(g_dict, id, built, &err), FJ_OK);
        const uint64_t *stored = img->records + (size_t)t * FJ_REC_COUNT;
        for (uint32_t i = 0; i < FJ_REC_COUNT; i++)
            if (stored[i] != built[i])
                fail_msg("matcher %u, U+%04X: stored record %016llx, built %016llx", id,
                         FJ_REC_FIRST + i, (unsigned long long)stored[i],
                         (unsigned long long)built[i]);
        compared++;
    }
    assert_true(compared >= 10 && compared == img->record_tables);
    free(is_step);
    free(built);
}

static void test_image_hostile(void **state)
{
    (void)state;
    unsigned char *img = img_copy(g_img_size);
    const size_t size = g_img_size;
    sect nodes = find_sect(g_img, FJ_SEC_NODES), edges = find_sect(g_img, FJ_SEC_EDGES),
         blocks = find_sect(g_img, FJ_SEC_BLOCKS), level1 = find_sect(g_img, FJ_SEC_LEVEL1),
         matchers = find_sect(g_img, FJ_SEC_MATCHERS), profiles = find_sect(g_img, FJ_SEC_PROFILES),
         strs = find_sect(g_img, FJ_SEC_STRINGS), srcd = find_sect(g_img, FJ_SEC_SRCDICTS),
         srce = find_sect(g_img, FJ_SEC_SRCENTRY), edgeh = find_sect(g_img, FJ_SEC_EDGEHASH);
    const uint32_t node_count = (uint32_t)(nodes.size / sizeof(fj_node_rec));
    const uint32_t block_count = (uint32_t)(blocks.size / (FJ_BLOCK_SIZE * 4));
    const uint32_t matcher_count = (uint32_t)(matchers.size / sizeof(fj_matcher_rec));
    const uint32_t level1_count = (uint32_t)(level1.size / (FJ_L1_SIZE * 4));
    assert_true(node_count > 100);

    /* The pristine image with a recomputed checksum opens (the recomputation is right). */
    img_fix_checksum(img, size);
    fj_error err;
    assert_int_equal(open_mem(img, size, &err), FJ_OK);

    /* Pick a node with several children and one with a long value. */
    fj_node_rec rec;
    uint32_t parent = FJ_NONE, longv = FJ_NONE;
    for (uint32_t i = 0; i < node_count && (parent == FJ_NONE || longv == FJ_NONE); i++) {
        memcpy(&rec, img + nodes.off + (size_t)i * sizeof rec, sizeof rec);
        if (parent == FJ_NONE && rec.child_count >= 2)
            parent = i;
        if (longv == FJ_NONE && rec.value_len != FJ_NO_VALUE && rec.value_len > FJ_INLINE_VALUE_MAX)
            longv = i;
    }
    assert_true(parent != FJ_NONE && longv != FJ_NONE);
    unsigned char *pnode = img + nodes.off + (size_t)parent * sizeof rec;
    unsigned char *lnode = img + nodes.off + (size_t)longv * sizeof rec;
    fj_node_rec orig_parent, orig_long;
    memcpy(&orig_parent, pnode, sizeof rec);
    memcpy(&orig_long, lnode, sizeof rec);

#define RESTORE() memcpy(img, g_img, size)
    hostile h;

    /* Trie node: children out of range. */
    rec = orig_parent;
    rec.first_child = node_count - 1;
    memcpy(pnode, &rec, sizeof rec);
    h = (hostile){"node first_child past the end", FJ_SEC_NODES};
    expect_hostile(img, size, &h);
    RESTORE();
    rec = orig_parent;
    rec.first_child = 0xFFFFFFF0u;
    memcpy(pnode, &rec, sizeof rec);
    h = (hostile){"node first_child near 2^32 (overflow)", FJ_SEC_NODES};
    expect_hostile(img, size, &h);
    RESTORE();
    {
        /* The last node with children: 65535 children run past the end. */
        uint32_t last = FJ_NONE;
        for (uint32_t i = node_count; i-- > 0 && last == FJ_NONE;) {
            memcpy(&rec, img + nodes.off + (size_t)i * sizeof rec, sizeof rec);
            if (rec.child_count > 0 && (uint64_t)rec.first_child + 0xFFFF > node_count)
                last = i;
        }
        assert_true(last != FJ_NONE);
        unsigned char *lp = img + nodes.off + (size_t)last * sizeof rec;
        memcpy(&rec, lp, sizeof rec);
        rec.child_count = 0xFFFF;
        memcpy(lp, &rec, sizeof rec);
        h = (hostile){"node child_count 65535 past the last node", FJ_SEC_NODES};
        expect_hostile(img, size, &h);
        RESTORE();
    }
    /* Trie node: value outside the string pool. */
    rec = orig_long;
    rec.value = (uint32_t)strs.size - 1;
    memcpy(lnode, &rec, sizeof rec);
    h = (hostile){"node value past the string pool", FJ_SEC_NODES};
    expect_hostile(img, size, &h);
    RESTORE();
    rec = orig_long;
    rec.value = 0xFFFFFFFFu;
    memcpy(lnode, &rec, sizeof rec);
    h = (hostile){"node value offset 2^32-1", FJ_SEC_NODES};
    expect_hostile(img, size, &h);
    RESTORE();
    /* The same two faults in each of four nodes side by side: the check
     * takes nodes four at a time, each in its own lane. */
    for (uint32_t k = 0; k < 4; k++) {
        unsigned char *np = img + nodes.off + (size_t)(parent + k) * sizeof rec;
        memcpy(&rec, np, sizeof rec);
        rec.first_child = node_count - 1;
        rec.child_count = 2;
        memcpy(np, &rec, sizeof rec);
        h = (hostile){"node children past the end, in one of four lanes", FJ_SEC_NODES};
        expect_hostile(img, size, &h);
        RESTORE();
        memcpy(&rec, np, sizeof rec);
        rec.value = (uint32_t)strs.size - 1;
        rec.value_len = FJ_INLINE_VALUE_MAX + 4;
        memcpy(np, &rec, sizeof rec);
        h = (hostile){"node value past the string pool, in one of four lanes", FJ_SEC_NODES};
        expect_hostile(img, size, &h);
        RESTORE();
    }
    /* Children out of order: in range, so the open may accept it, but then
     * converting must stay safe (the sanitizer run checks the accesses). */
    memcpy(&rec, pnode, sizeof rec);
    {
        unsigned char *e0 = img + edges.off + (size_t)rec.first_child * 4;
        uint32_t a = rd32(e0), b = rd32(e0 + 4);
        wr32(e0, b);
        wr32(e0 + 4, a);
    }
    expect_rejected_or_safe(img, size, "children out of order");
    RESTORE();
    rec = orig_parent;
    rec.child_count = (uint16_t)(node_count - rec.first_child < 0xFFFF ? node_count - rec.first_child
                                                                         : 0xFFFF);
    memcpy(pnode, &rec, sizeof rec);
    expect_rejected_or_safe(img, size, "node with thousands of in-range children");
    RESTORE();

    /* Code point table entries. */
    {
        size_t idx = FJ_BLOCK_SIZE; /* block 1: the first used block */
        unsigned char *slot = img + blocks.off + idx * 4;
        wr32(slot, node_count + 5);
        h = (hostile){"table entry names a node past the end", FJ_SEC_BLOCKS};
        expect_hostile(img, size, &h);
        RESTORE();
        wr32(slot, FJ_ENTRY_NODE_MASK);
        h = (hostile){"table entry 0x1FFFFFFF", FJ_SEC_BLOCKS};
        expect_hostile(img, size, &h);
        RESTORE();
        wr32(slot, FJ_ENTRY_DIRECT | 0xD800u);
        h = (hostile){"direct entry holding a surrogate", FJ_SEC_BLOCKS};
        expect_hostile(img, size, &h);
        RESTORE();
        wr32(slot, FJ_ENTRY_DIRECT | 0x110000u);
        h = (hostile){"direct entry above U+10FFFF", FJ_SEC_BLOCKS};
        expect_hostile(img, size, &h);
        RESTORE();
        /* The last entry of the last block. */
        wr32(img + blocks.off + blocks.size - 4, node_count + 1);
        h = (hostile){"last table entry out of range", FJ_SEC_BLOCKS};
        expect_hostile(img, size, &h);
        RESTORE();
    }
    /* Level-1 entries. */
    wr32(img + level1.off + 4 * 0x4E, block_count);
    h = (hostile){"level-1 entry names a block past the end", FJ_SEC_LEVEL1};
    expect_hostile(img, size, &h);
    RESTORE();
    wr32(img + level1.off + level1.size - 4, 0xFFFFFFFFu);
    h = (hostile){"last level-1 entry 2^32-1", FJ_SEC_LEVEL1};
    expect_hostile(img, size, &h);
    RESTORE();
    /* Matchers. */
    wr32(img + matchers.off + offsetof(fj_matcher_rec, level1), level1_count);
    h = (hostile){"matcher level-1 table past the end", FJ_SEC_MATCHERS};
    expect_hostile(img, size, &h);
    RESTORE();
    /* Profiles. */
    {
        size_t last = profiles.off + profiles.size - sizeof(fj_profile_rec);
        wr32(img + last + offsetof(fj_profile_rec, stages), matcher_count);
        h = (hostile){"profile step names a matcher past the end", FJ_SEC_PROFILES};
        expect_hostile(img, size, &h);
        RESTORE();
        wr32(img + last + offsetof(fj_profile_rec, stage_count), FJ_MAX_STAGES + 1);
        h = (hostile){"profile with too many steps", FJ_SEC_PROFILES};
        expect_hostile(img, size, &h);
        RESTORE();
        wr32(img + last + offsetof(fj_profile_rec, stage_count), 0);
        h = (hostile){"profile with no steps", FJ_SEC_PROFILES};
        expect_hostile(img, size, &h);
        RESTORE();
        wr32(img + last + offsetof(fj_profile_rec, normalization), matcher_count + 7);
        h = (hostile){"profile normalization past the end", FJ_SEC_PROFILES};
        expect_hostile(img, size, &h);
        RESTORE();
        wr32(img + last + offsetof(fj_profile_rec, barrier), 16);
        h = (hostile){"profile barrier set past the end", FJ_SEC_PROFILES};
        expect_hostile(img, size, &h);
        RESTORE();
        memset(img + last, 'x', FJ_PROFILE_NAME_MAX);
        h = (hostile){"profile name without a terminator", FJ_SEC_PROFILES};
        expect_hostile(img, size, &h);
        RESTORE();
    }
    /* Source dictionaries (for --decompile). */
    wr32(img + srcd.off + offsetof(fj_srcdict_rec, first_entry),
         (uint32_t)(srce.size / sizeof(fj_srcentry_rec)));
    h = (hostile){"source dictionary entries past the end", FJ_SEC_SRCDICTS};
    expect_hostile(img, size, &h);
    RESTORE();
    wr32(img + srcd.off + offsetof(fj_srcdict_rec, name_off), (uint32_t)strs.size);
    h = (hostile){"source dictionary name past the pool", FJ_SEC_SRCDICTS};
    expect_hostile(img, size, &h);
    RESTORE();
    wr32(img + srce.off + srce.size - sizeof(fj_srcentry_rec) + offsetof(fj_srcentry_rec, key_off),
         (uint32_t)strs.size);
    h = (hostile){"source entry key past the pool", FJ_SEC_SRCENTRY};
    expect_hostile(img, size, &h);
    RESTORE();
    wr32(img + srce.off + offsetof(fj_srcentry_rec, values_len), 0xFFFFFFFFu);
    h = (hostile){"source entry values 4 GB long", FJ_SEC_SRCENTRY};
    expect_hostile(img, size, &h);
    RESTORE();
    /* Second-character edge table: slots that leave the matcher's nodes. */
    {
        size_t slots = edgeh.size / 8, empty = slots;
        for (size_t i = 0; i < slots; i++)
            if (rd64(img + edgeh.off + i * 8) == 0) {
                empty = i;
                break;
            }
        assert_true(empty < slots);
        wr64(img + edgeh.off + empty * 8, FJ_EDGE_SLOT(0x4E00u, node_count - 1, 0));
        h = (hostile){"edge slot with a child outside every matcher", FJ_SEC_EDGEHASH};
        expect_hostile(img, size, &h);
        RESTORE();
        /* Every used slot pointed at one node inside its matcher, not the
         * parent's child: the check does not look (a wrong match is not a
         * fault), so converting must stay safe. */
        for (size_t i = 0; i < slots; i++) {
            uint64_t v = rd64(img + edgeh.off + i * 8);
            if (v)
                wr64(img + edgeh.off + i * 8,
                     FJ_EDGE_SLOT(FJ_EDGE_CP(v), FJ_EDGE_PARENT(v), FJ_EDGE_PARENT(v)));
        }
        expect_rejected_or_safe(img, size, "edge slots whose child is the parent itself");
        RESTORE();
        wr64(img + edgeh.off + empty * 8, FJ_EDGE_SLOT(0x4E00u, FJ_MAX_NODES - 1, 1));
        h = (hostile){"edge slot with a parent past the end", FJ_SEC_EDGEHASH};
        expect_hostile(img, size, &h);
        RESTORE();
        /* No empty slot at all: probing would never end. */
        uint64_t any = 0;
        for (size_t i = 0; i < slots && !any; i++)
            any = rd64(img + edgeh.off + i * 8);
        for (size_t i = 0; i < slots; i++)
            if (rd64(img + edgeh.off + i * 8) == 0)
                wr64(img + edgeh.off + i * 8, any);
        h = (hostile){"edge table without an empty slot", FJ_SEC_EDGEHASH};
        expect_hostile(img, size, &h);
        RESTORE();
    }
    /* Character records (RECS): a CHNG line past the last is refused; any
     * other record only makes wrong output. */
    {
        sect recs = find_sect(img, FJ_SEC_RECORDS);
        assert_true(recs.size >= (size_t)FJ_REC_COUNT * 8);
        size_t at = (size_t)recs.off + (size_t)(0x4E2Du - FJ_REC_FIRST) * 8; /* 中 */
        const uint64_t line_mask = (uint64_t)0x1FFF << 32;
        uint64_t r = rd64(img + at);
        wr64(img + at, (r & ~line_mask) | (uint64_t)(FJ_CHANGE_ALWAYS + 1) << 32);
        h = (hostile){"character record naming the line after CHNG's last", FJ_SEC_RECORDS};
        expect_hostile(img, size, &h);
        RESTORE();
        wr64(img + at, r | line_mask);
        h = (hostile){"character record naming CHNG line 8191", FJ_SEC_RECORDS};
        expect_hostile(img, size, &h);
        RESTORE();
        uint64_t x = 0x9E3779B97F4A7C15ull;
        for (size_t i = 0; i < recs.size / 8; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t line = (x >> 20) % (FJ_CHANGE_ALWAYS + 1);
            wr64(img + recs.off + i * 8, (x & ~line_mask) | line << 32);
        }
        if (!expect_rejected_or_safe(img, size, "character records at random"))
            fail_msg("character records at random, CHNG lines in range: refused");
        {
            fj_dict *d = NULL;
            fj_error err2;
            assert_int_equal(fj_dict_open_memory(img, size, NULL, &d, &err2), FJ_OK);
            convert_all_profiles_in(d, 0); /* the default mode reads them too */
            fj_dict_close(d);
        }
        RESTORE();
        size_t tables = (size_t)(recs.size / ((size_t)FJ_REC_COUNT * 8));
        wr32(img + matchers.off + offsetof(fj_matcher_rec, records), (uint32_t)tables);
        h = (hostile){"matcher naming a record table past the last", FJ_SEC_MATCHERS};
        expect_hostile(img, size, &h);
        RESTORE();
    }
    /* Section table. */
    wr64(img + nodes.rec_at + 8, size + 8);
    h = (hostile){"section offset past the end of the file", 0};
    expect_hostile(img, size, &h);
    RESTORE();
    wr64(img + nodes.rec_at + 16, (uint64_t)-8);
    h = (hostile){"section size 2^64-8", 0};
    expect_hostile(img, size, &h);
    RESTORE();
    wr64(img + nodes.rec_at + 16, nodes.size + 12);
    h = (hostile){"node section one record longer", 0};
    expect_hostile(img, size, &h);
    RESTORE();
    wr64(img + edges.rec_at + 16, edges.size - 4);
    h = (hostile){"edge section one entry short", 0};
    expect_hostile(img, size, &h);
    RESTORE();
    wr64(img + blocks.rec_at + 8, blocks.off + 4);
    h = (hostile){"misaligned section", 0};
    expect_hostile(img, size, &h);
    RESTORE();

    /* A truncated image whose header claims the shorter size. */
    {
        size_t cut = (size - 4096) & ~(size_t)7;
        wr64(img + 16, cut);
        img_fix_checksum(img, cut);
        fj_status st = open_mem(img, cut, &err);
        if (st != FJ_ERR_DICT_FORMAT)
            fail_msg("truncated image with a consistent header: status %d", st);
        RESTORE();
    }
    /* A missing section (its tag renamed) and a section count of 0 / 65. */
    wr32(img + nodes.rec_at, FJ_TAG('X', 'X', 'X', 'X'));
    img_fix_checksum(img, size);
    assert_int_equal(open_mem(img, size, &err), FJ_ERR_DICT_FORMAT);
    RESTORE();
    wr32(img + 12, 0); /* the checksummed table then ends elsewhere */
    assert_true(is_damage_status(open_mem(img, size, &err)));
    wr32(img + 12, 65);
    assert_int_equal(open_mem(img, size, &err), FJ_ERR_DICT_FORMAT);
    wr32(img + 12, 0xFFFFFFFFu);
    assert_int_equal(open_mem(img, size, &err), FJ_ERR_DICT_FORMAT);
    RESTORE();
#undef RESTORE
    free(img);
}


/* A damaged image whose language-model table has no empty slot (every slot
 * taken, no key matching): converting in the default mode still ends. Run
 * by tests/suite-lm.sh with an image built with the model; skipped with the
 * default image, which has none. */
static void test_image_lm_table_full(void **state)
{
    (void)state;
    sect lm = find_sect(g_img, FJ_SEC_LANGMOD);
    if (lm.size == 0) {
        skip();
        return;
    }
    unsigned char *img = img_copy(g_img_size);
    for (uint64_t k = 0; k < lm.size; k += 4)
        wr32(img + lm.off + k, 0xFFFFEu << 12 | FJ_LM_BIAS); /* fingerprints are odd */
    img_fix_checksum(img, g_img_size);
    fj_dict *d = NULL;
    fj_error err;
    assert_int_equal(fj_dict_open_memory(img, g_img_size, NULL, &d, &err), FJ_OK);
    fj_converter *c = NULL;
    assert_int_equal(fj_converter_open(d, "s2tw", FJ_DEFAULT, &c, &err), FJ_OK);
    static const char text[] = "这是只有一个人的世界，头发干了，他在公司里面工作。";
    char *out = NULL;
    size_t len = 0;
    alarm(120); /* a conversion that never ends is killed, and fails the test */
    assert_int_equal(fj_convert_alloc(c, text, sizeof text - 1, &out, &len), FJ_OK);
    alarm(0);
    assert_true(len > 0);
    fj_free(c, out);
    fj_converter_close(c);
    fj_dict_close(d);
    free(img);
}

/* Random damage with a valid checksum, concentrated on the structural
 * sections: every image is rejected as FJ_ERR_DICT_FORMAT or is safe to use. */
static void test_image_fuzz_checksum_valid(void **state)
{
    (void)state;
    const uint32_t tags[] = {FJ_SEC_NODES, FJ_SEC_EDGES,   FJ_SEC_BLOCKS,   FJ_SEC_LEVEL1,
                             FJ_SEC_MATCHERS, FJ_SEC_PROFILES, FJ_SEC_SRCDICTS, FJ_SEC_SRCENTRY,
                             FJ_SEC_EDGEHASH, FJ_SEC_STRINGS,  FJ_SEC_BARRIERS, 0};
    sect secs[sizeof tags / sizeof tags[0]];
    for (size_t i = 0; tags[i]; i++)
        secs[i] = find_sect(g_img, tags[i]);
    const size_t nsec = sizeof tags / sizeof tags[0] - 1;
    const int rounds = t_quick() ? 150 : 1000;
    uint64_t rng = t_seed() ^ 0x66757A7Aull;
    unsigned char *img = img_copy(g_img_size);
    int accepted = 0, rejected = 0;
    for (int r = 0; r < rounds; r++) {
        /* 1 to 4 changes: a random byte, or a u32 set to a boundary value. */
        size_t changes = 1 + t_below(&rng, 4);
        size_t at[4];
        for (size_t k = 0; k < changes; k++) {
            at[k] = 24; /* (the checksum, restored below) */
            size_t si = r % 7 == 6 ? t_below(&rng, nsec) : t_below(&rng, nsec - 2);
            const sect *sc = &secs[si];
            if (sc->size < 4)
                continue;
            size_t off = (size_t)sc->off + (t_below(&rng, (size_t)sc->size / 4) * 4);
            at[k] = off;
            static const uint32_t vals[] = {0, 1, 0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u,
                                            0xFFFFu, 0x10000u, 0x110000u};
            if (t_below(&rng, 2))
                img[off + t_below(&rng, 4)] ^= (unsigned char)(1u << t_below(&rng, 8));
            else
                wr32(img + off, vals[t_below(&rng, sizeof vals / sizeof vals[0])]);
        }
        char what[64];
        snprintf(what, sizeof what, "fuzz round %d", r);
        if (expect_rejected_or_safe(img, g_img_size, what))
            accepted++;
        else
            rejected++;
        for (size_t k = 0; k < changes; k++) /* undo */
            memcpy(img + at[k], g_img + at[k], 4);
        memcpy(img, g_img, img_body_at(g_img)); /* the checksums */
    }
    assert_memory_equal(img, g_img, g_img_size);
    print_message("%d damaged images rejected, %d accepted and converted safely\n", rejected,
                  accepted);
    free(img);
}

/* ---- 3. One-shot API ---------------------------------------------------------- */

#define GUARD 64
#define GUARD_BYTE 0xA5

static void check_buffer_sizes(const fj_converter *c, const char *in, size_t len)
{
    char what[300];
    if (len <= 48) {
        char shown[200];
        size_t k = 0;
        for (size_t i = 0; i < len && k + 5 < sizeof shown; i++) {
            unsigned char ch = (unsigned char)in[i];
            k += (size_t)(ch >= 0x20 && ch != 0x7F && ch < 0xF5
                              ? snprintf(shown + k, sizeof shown - k, "%c", ch)
                              : snprintf(shown + k, sizeof shown - k, "\\x%02X", ch));
        }
        shown[k] = 0;
        snprintf(what, sizeof what, "%s, input \"%s\"", fj_converter_profile(c), shown);
    } else {
        snprintf(what, sizeof what, "%s, %zu input bytes", fj_converter_profile(c), len);
    }
    size_t exp_len;
    char *exp = t_conv(c, in, len, &exp_len);
    assert_int_equal(exp[exp_len], 0);

    /* Asking the size. */
    size_t need = 999;
    fj_status st = fj_convert(c, in, len, NULL, 0, &need);
    if (exp_len == 0) {
        assert_int_equal(st, FJ_OK);
        assert_int_equal(need, 0);
    } else {
        assert_int_equal(st, FJ_ERR_BUFFER_TOO_SMALL);
        if (need != exp_len)
            fail_msg("%s: size query reports %zu, output is %zu", what, need, exp_len);
    }
    size_t sizes[] = {exp_len, exp_len + 1, exp_len + 1000, exp_len - 1, 1, exp_len / 2,
                      exp_len - 3, exp_len - 4};
    char *buf = malloc(exp_len + 1000 + GUARD);
    assert_non_null(buf);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t sz = sizes[i];
        if (sz > exp_len + 1000) /* underflow of exp_len - k */
            continue;
        memset(buf, GUARD_BYTE, exp_len + 1000 + GUARD);
        size_t got = 777;
        st = fj_convert(c, in, len, buf, sz, &got);
        if (sz >= exp_len) {
            if (st != FJ_OK)
                fail_msg("%s: buffer of %zu bytes for %zu bytes of output: status %d (%s)", what,
                         sz, exp_len, st, fj_strerror(st));
            assert_int_equal(got, exp_len);
            assert_true(t_same(what, exp, exp_len, buf, got));
        } else {
            if (st != FJ_ERR_BUFFER_TOO_SMALL)
                fail_msg("%s: buffer of %zu bytes for %zu: status %d", what, sz, exp_len, st);
            if (got != exp_len)
                fail_msg("%s: buffer of %zu bytes: reports %zu needed, want %zu", what, sz, got,
                         exp_len);
        }
        /* Nothing written past the buffer. */
        for (size_t k = sz; k < exp_len + 1000 + GUARD; k++)
            if ((unsigned char)buf[k] != GUARD_BYTE)
                fail_msg("%s: buffer of %zu bytes: byte %zu written", what, sz, k);
    }
    free(buf);
    fj_free(c, exp);
}

/* Short inputs for the buffer-size checks. */
static const char *const buffer_samples[] = {
    "",
    "a",
    "hello, world\n",
    "这是只有一个人的世界，头发干了，我们去打印机那里取文件。",
    "鼠标",
    /* output ending in a character converted on its own */
    "我们",
    "這",
    "頭髮乾燥了們",
    "\xE4\xB8",
    "\xEF\xA4\x80\xF0\xAF\xA0\x80 \xE2\xBF\xB0\xE8\xA8\x80\xE5\x85\x91",
};
#define N_BUFFER_SAMPLES (sizeof buffer_samples / sizeof buffer_samples[0])

static void test_convert_buffer_sizes(void **state)
{
    (void)state;
    for (int p = 0; p < 16; p++)
        for (size_t i = 0; i < N_BUFFER_SAMPLES; i++)
            check_buffer_sizes(g_conv[p], buffer_samples[i], strlen(buffer_samples[i]));
    /* Large text: the output spills past internal buffers. */
    tbuf big = {0};
    if (g_compat) {
        tb_add(&big, g_compat, g_compat_len);
    } else {
        uint64_t rng = t_seed() ^ 0x626967ull;
        size_t nd;
        const oc_dict *const *d = all_dicts(&nd);
        gen_text(&big, &rng, 200000, d, nd, 5, 1);
    }
    const char *big_profiles[] = {"s2t", "t2s", "s2twp", "tw2sp", "jp2t"};
    for (size_t i = 0; i < sizeof big_profiles / sizeof big_profiles[0]; i++)
        check_buffer_sizes(conv(big_profiles[i]), big.p, big.len);
    tb_free(&big);
}

/* fj_convert into a buffer of exactly the fj_convert_alloc size gives its bytes. */
static void alloc_equals_convert(fj_converter *const convs[16], uint64_t rng)
{
    size_t nd;
    const oc_dict *const *d = all_dicts(&nd);
    for (int p = 0; p < 16; p++) {
        for (int k = 0; k < 8; k++) {
            tbuf in = {0};
            gen_text(&in, &rng, 1 + t_below(&rng, k < 6 ? 400 : 100000), d, nd, 10, 3);
            char *a = NULL;
            size_t a_len = 0;
            assert_int_equal(fj_convert_alloc(convs[p], in.p, in.len, &a, &a_len), FJ_OK);
            assert_non_null(a);
            assert_int_equal(a[a_len], 0); /* NUL-terminated */
            char *b = malloc(a_len + 1);
            size_t b_len = 0;
            assert_int_equal(fj_convert(convs[p], in.p, in.len, b, a_len + 1, &b_len), FJ_OK);
            assert_true(t_same(t_profiles[p], b, b_len, a, a_len));
            free(b);
            fj_free(convs[p], a);
            tb_free(&in);
        }
    }
}

static void test_convert_alloc_equals_convert(void **state)
{
    (void)state;
    alloc_equals_convert(g_conv, t_seed() ^ 0x616C6C6F63ull);
}

/* A tracking allocator: checks the size contract and can fail on purpose. */
#define TRK_MAX 4096
typedef struct trk {
    size_t calls;   /* alloc and realloc calls */
    size_t fail_at; /* 1-based call to fail; 0 never */
    size_t allocs, reallocs, frees, fails;
    size_t violations;
    char violation[160];
    size_t nlive;
    struct {
        void *p;
        size_t n;
    } live[TRK_MAX];
} trk;

static void trk_violation(trk *t, const char *msg, size_t a, size_t b)
{
    if (!t->violations++)
        snprintf(t->violation, sizeof t->violation, "%s (%zu, %zu)", msg, a, b);
}

static size_t trk_find(trk *t, void *p)
{
    for (size_t i = 0; i < t->nlive; i++)
        if (t->live[i].p == p)
            return i;
    return TRK_MAX;
}

static void trk_add(trk *t, void *p, size_t n)
{
    if (t->nlive == TRK_MAX) {
        trk_violation(t, "too many live allocations", t->nlive, 0);
        return;
    }
    t->live[t->nlive].p = p;
    t->live[t->nlive++].n = n;
}

static void *trk_alloc(void *ctx, size_t n)
{
    trk *t = ctx;
    if (++t->calls == t->fail_at) {
        t->fails++;
        return NULL;
    }
    void *p = malloc(n ? n : 1);
    if (p) {
        t->allocs++;
        trk_add(t, p, n);
    }
    return p;
}

static void *trk_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    trk *t = ctx;
    size_t i = TRK_MAX;
    if (ptr) {
        i = trk_find(t, ptr);
        if (i == TRK_MAX) {
            trk_violation(t, "realloc of a pointer not from this allocator", old_size, new_size);
            return NULL;
        }
        if (t->live[i].n != old_size)
            trk_violation(t, "realloc old_size differs from the allocation", t->live[i].n,
                          old_size);
    }
    if (++t->calls == t->fail_at) {
        t->fails++;
        return NULL;
    }
    void *p = realloc(ptr, new_size ? new_size : 1);
    if (!p)
        return NULL;
    t->reallocs++;
    if (i != TRK_MAX) {
        t->live[i].p = p;
        t->live[i].n = new_size;
    } else {
        trk_add(t, p, new_size);
    }
    return p;
}

static void trk_free(void *ctx, void *ptr, size_t size)
{
    trk *t = ctx;
    if (!ptr)
        return;
    size_t i = trk_find(t, ptr);
    if (i == TRK_MAX) {
        trk_violation(t, "free of a pointer not from this allocator", size, 0);
        return;
    }
    if (size != 0 && size != t->live[i].n)
        trk_violation(t, "free size differs from the allocation", t->live[i].n, size);
    t->frees++;
    free(ptr);
    t->live[i] = t->live[--t->nlive];
}

typedef struct alloc_run {
    fj_status dict, conv, alloc, stream_new, feed, finish;
    int alloc_ok, stream_ok; /* results right when the calls succeeded */
} alloc_run;

/* One full use of the API through the tracking allocator. */
static alloc_run run_with_allocator(trk *t, const unsigned char *img, const char *text, size_t len,
                                    const char *exp, size_t exp_len)
{
    alloc_run r = {FJ_OK, FJ_OK, FJ_OK, FJ_OK, FJ_OK, FJ_OK, 1, 1};
    fj_allocator a = {trk_alloc, trk_realloc, trk_free, t};
    fj_dict_options opt = {sizeof opt, &a};
    fj_dict *d = NULL;
    fj_error err;
    r.dict = fj_dict_open_memory(img, g_img_size, &opt, &d, &err);
    if (r.dict != FJ_OK)
        return r;
    fj_converter *c = NULL;
    r.conv = fj_converter_open(d, "s2twp", FJ_COMPAT, &c, &err);
    if (r.conv == FJ_OK) {
        char *out = NULL;
        size_t out_len = 0;
        r.alloc = fj_convert_alloc(c, text, len, &out, &out_len);
        if (r.alloc == FJ_OK) {
            r.alloc_ok = out_len == exp_len && memcmp(out, exp, exp_len) == 0 && out[out_len] == 0;
            fj_free(c, out);
        } else if (out) {
            r.alloc_ok = 0; /* no buffer on failure */
        }
        tbuf sink = {0};
        fj_stream *s = NULL;
        r.stream_new = fj_stream_new(c, tb_write, &sink, &s);
        if (r.stream_new == FJ_OK) {
            for (size_t off = 0; off < len && r.feed == FJ_OK; off += 3001)
                r.feed = fj_stream_feed(s, text + off, len - off < 3001 ? len - off : 3001);
            if (r.feed == FJ_OK) {
                r.finish = fj_stream_finish(s);
                if (r.finish == FJ_OK)
                    r.stream_ok = sink.len == exp_len && memcmp(sink.p, exp, exp_len) == 0;
            }
            fj_stream_free(s);
        }
        tb_free(&sink);
        fj_converter_close(c);
    }
    fj_dict_close(d);
    return r;
}

static void test_custom_allocator(void **state)
{
    (void)state;
    trk *t = calloc(1, sizeof *t);
    assert_non_null(t);
    fj_allocator a = {trk_alloc, trk_realloc, trk_free, t};
    fj_dict_options opt = {sizeof opt, &a};
    fj_error err;

    /* Each object is allocated through it, and everything is given back. */
    fj_dict *d = NULL;
    assert_int_equal(fj_dict_open(t_dict_path(), &opt, &d, &err), FJ_OK);
    size_t after_dict = t->allocs + t->reallocs;
    assert_true(after_dict >= 1);
    fj_converter *c = NULL;
    assert_int_equal(fj_converter_open(d, "s2twp", FJ_COMPAT, &c, &err), FJ_OK);
    size_t after_conv = t->allocs + t->reallocs;
    assert_true(after_conv > after_dict);
    const char *text = "鼠标和打印机，头发干燥";
    char *out = NULL;
    size_t out_len;
    assert_int_equal(fj_convert_alloc(c, text, strlen(text), &out, &out_len), FJ_OK);
    assert_string_equal(out, "滑鼠和印表機，頭髮乾燥");
    assert_true(t->allocs + t->reallocs > after_conv);
    assert_true(trk_find(t, out) != TRK_MAX); /* the result came from our allocator */
    fj_free(c, out);
    size_t before_stream = t->allocs + t->reallocs;
    tbuf sink = {0};
    fj_stream *s = NULL;
    assert_int_equal(fj_stream_new(c, tb_write, &sink, &s), FJ_OK);
    assert_true(t->allocs + t->reallocs > before_stream);
    assert_int_equal(fj_stream_feed(s, text, 5), FJ_OK);
    assert_int_equal(fj_stream_feed(s, text + 5, strlen(text) - 5), FJ_OK);
    assert_int_equal(fj_stream_finish(s), FJ_OK);
    assert_int_equal(sink.len, strlen("滑鼠和印表機，頭髮乾燥"));
    fj_stream_free(s);
    tb_free(&sink);
    fj_converter_close(c);
    fj_dict_close(d);
    if (t->violations)
        fail_msg("allocator contract: %s", t->violation);
    if (t->nlive)
        fail_msg("%zu allocations not freed (allocs %zu, frees %zu)", t->nlive, t->allocs,
                 t->frees);

    /* Every allocation failing in turn gives FJ_ERR_NOMEM (or a correct
     * result), and never leaks. */
    tbuf in = {0};
    if (g_compat)
        tb_add(&in, g_compat, g_compat_len < 60000 ? g_compat_len : 60000);
    else
        for (int i = 0; i < 600; i++)
            tb_adds(&in, "这是只有一个人的世界，头发干了，我们去打印机那里取文件。\n");
    size_t exp_len;
    char *exp = t_conv(conv("s2twp"), in.p, in.len, &exp_len);
    unsigned char *img = img_copy(g_img_size);
    memset(t, 0, sizeof *t);
    alloc_run r = run_with_allocator(t, img, in.p, in.len, exp, exp_len);
    assert_int_equal(r.dict, FJ_OK);
    assert_int_equal(r.conv, FJ_OK);
    assert_int_equal(r.alloc, FJ_OK);
    assert_int_equal(r.stream_new, FJ_OK);
    assert_int_equal(r.feed, FJ_OK);
    assert_int_equal(r.finish, FJ_OK);
    assert_true(r.alloc_ok && r.stream_ok);
    assert_int_equal(t->nlive, 0);
    size_t total = t->calls;
    assert_true(total >= 4);
    size_t nomem_seen = 0;
    for (size_t k = 1; k <= total; k++) {
        memset(t, 0, sizeof *t);
        t->fail_at = k;
        r = run_with_allocator(t, img, in.p, in.len, exp, exp_len);
        fj_status all[] = {r.dict, r.conv, r.alloc, r.stream_new, r.feed, r.finish};
        int nomem = 0;
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
            if (all[i] == FJ_ERR_NOMEM)
                nomem = 1;
            else if (all[i] != FJ_OK)
                fail_msg("allocation %zu failing: status %d (%s), want FJ_ERR_NOMEM", k, all[i],
                         fj_strerror(all[i]));
        }
        nomem_seen += (size_t)nomem;
        if (!r.alloc_ok || !r.stream_ok)
            fail_msg("allocation %zu failing: a call succeeded with a wrong result", k);
        if (t->fails && !nomem)
            fail_msg("allocation %zu failed but every call reported success", k);
        if (t->violations)
            fail_msg("allocation %zu failing: allocator contract: %s", k, t->violation);
        if (t->nlive)
            fail_msg("allocation %zu failing: %zu allocations leaked", k, t->nlive);
    }
    assert_true(nomem_seen > 0);
    print_message("%zu allocation failures injected, %zu reported FJ_ERR_NOMEM\n", total,
                  nomem_seen);
    free(img);
    fj_free(conv("s2twp"), exp);
    tb_free(&in);
    free(t);
}

/* ---- 4. Streaming ----------------------------------------------------------------- */

/* Piece sizes: 0 one byte, 1 seven bytes, 2 small random, 3 mixed random. */
static size_t piece_size(uint64_t *rng, int mode)
{
    switch (mode) {
    case 0: return 1;
    case 1: return 7;
    case 2: return 1 + t_below(rng, 16);
    default: {
        size_t r = t_below(rng, 10);
        if (r < 3)
            return 1;
        if (r < 6)
            return 1 + t_below(rng, 8);
        if (r < 9)
            return 1 + t_below(rng, 512);
        return 1 + t_below(rng, 70000);
    }
    }
}

/* Streams `in` in pieces; checks the output against the one-shot result and
 * returns the largest fj_stream_pending seen. */
static size_t stream_compare_limit(const fj_converter *c, const char *in, size_t len,
                                   const char *exp, size_t exp_len, uint64_t *rng, int mode,
                                   const char *what, size_t limit)
{
    tbuf out = {0};
    fj_stream *s = NULL;
    assert_int_equal(fj_stream_new(c, tb_write, &out, &s), FJ_OK);
    size_t off = 0, max_pending = 0;
    while (off < len) {
        size_t n = piece_size(rng, mode);
        if (n > len - off)
            n = len - off;
        fj_status st = fj_stream_feed(s, in + off, n);
        if (st != FJ_OK)
            fail_msg("%s: feed at %zu: status %d", what, off, st);
        off += n;
        size_t pend = fj_stream_pending(s);
        if (pend > max_pending)
            max_pending = pend;
        if (pend >= limit) { /* unbounded: stop here, the caller reports it */
            fj_stream_free(s);
            tb_free(&out);
            return max_pending;
        }
        if (mode == 3 && t_below(rng, 50) == 0)
            assert_int_equal(fj_stream_feed(s, in + off, 0), FJ_OK);
    }
    assert_int_equal(fj_stream_finish(s), FJ_OK);
    assert_int_equal(fj_stream_pending(s), 0);
    fj_stream_free(s);
    if (!t_same(what, exp, exp_len, out.p ? out.p : "", out.len))
        fail_msg("%s: streamed output differs from fj_convert", what);
    tb_free(&out);
    return max_pending;
}

static size_t stream_compare(const fj_converter *c, const char *in, size_t len, const char *exp,
                             size_t exp_len, uint64_t *rng, int mode, const char *what)
{
    return stream_compare_limit(c, in, len, exp, exp_len, rng, mode, what, (size_t)-1);
}

static void test_stream_random_splits(void **state)
{
    (void)state;
    const int quick = t_quick();
    const char *profiles[] = {"s2t", "t2s", "s2twp", "tw2sp", "s2hk", "jp2t", "hk2s", "t2jp"};
    size_t nprof = quick ? 6 : sizeof profiles / sizeof profiles[0];
    uint64_t rng = t_seed() ^ 0x73747265616Dull;
    size_t nd;
    const oc_dict *const *d = all_dicts(&nd);
    size_t runs = 0;
    for (size_t pi = 0; pi < nprof; pi++) {
        const fj_converter *c = conv(profiles[pi]);
        /* Generated text: many short inputs with heavy special content, a few long ones. */
        int gens = quick ? 25 : 200;
        for (int g = 0; g < gens; g++) {
            tbuf in = {0};
            size_t target = g % 10 == 9 ? 20000 + t_below(&rng, 40000) : 1 + t_below(&rng, 600);
            if (g % 4 == 3) {
                /* Lines without specials: the whole-text path. */
                while (in.len < target) {
                    gen_text(&in, &rng, 1 + t_below(&rng, 100), d, nd, 0, 0);
                    tb_adds(&in, "\n");
                }
            } else {
                gen_text(&in, &rng, target, d, nd, 25, 8);
            }
            size_t exp_len;
            char *exp = t_conv(c, in.p, in.len, &exp_len);
            int iters = quick ? 2 : 6;
            for (int it = 0; it < iters; it++) {
                char what[96];
                int mode = it == 0 ? 0 : it == 1 ? 2 : 3;
                snprintf(what, sizeof what, "%s, generated text %d (%zu bytes), mode %d",
                         profiles[pi], g, in.len, mode);
                stream_compare(c, in.p, in.len, exp, exp_len, &rng, mode, what);
                runs++;
            }
            fj_free(c, exp);
            tb_free(&in);
        }
        /* The real text, when there. */
        if (g_compat) {
            size_t exp_len;
            char *exp = t_conv(c, g_compat, g_compat_len, &exp_len);
            int iters = quick ? 1 : 3;
            for (int it = 0; it < iters; it++) {
                char what[96];
                snprintf(what, sizeof what, "%s, compat input, mixed pieces", profiles[pi]);
                stream_compare(c, g_compat, g_compat_len, exp, exp_len, &rng, 3, what);
                runs++;
            }
            fj_free(c, exp);
        }
    }
    print_message("%zu streamed conversions compared%s\n", runs,
                  g_compat ? "" : " (no compat input: generated text only)");
}

/* Texts longer than a window (FJ_WINDOW, 256 KiB): where the profile
 * normalizes, fj_convert and a long feed work a window at a time. Both must
 * give what a stream of small pieces gives (pieces that never reach a
 * window), with windows cut after a line end or, in text without one,
 * inside a character, a phrase or an IDS; and a caller's buffer that is too
 * small must still learn the whole length. */
static void test_long_text_windows(void **state)
{
    (void)state;
    const int quick = t_quick();
    const char *profiles[] = {"s2t", "t2s", "s2twp", "s2tw", "s2hk", "jp2t", "t2jp", "hk2s"};
    uint64_t rng = t_seed() ^ 0x77696E646F77ull;
    size_t nd;
    const oc_dict *const *d = all_dicts(&nd);
    size_t runs = 0;
    for (size_t pi = 0; pi < sizeof profiles / sizeof profiles[0]; pi++) {
        for (int mode = 0; mode < 2; mode++) {
            const fj_converter *c = mode ? conv_def(profiles[pi]) : conv(profiles[pi]);
            int gens = quick ? 3 : 4;
            for (int g = 0; g < gens; g++) {
                tbuf in = {0};
                size_t target = 270000 + t_below(&rng, quick ? 100000 : 700000);
                if (g == 2) {
                    /* Short lines without specials: each window takes the
                     * compatible pipeline's whole-text path. */
                    while (in.len < target) {
                        gen_text(&in, &rng, 1 + t_below(&rng, 150), d, nd, 0, 0);
                        tb_adds(&in, "\n");
                    }
                } else {
                    gen_text(&in, &rng, target, d, nd, 25, 8);
                }
                if (g % 2) /* no line ends: windows cut anywhere */
                    for (size_t i = 0; i < in.len; i++)
                        if (in.p[i] == '\n' || in.p[i] == '\r')
                            in.p[i] = '.';
                size_t exp_len;
                char *exp = t_conv(c, in.p, in.len, &exp_len);
                char what[112];
                snprintf(what, sizeof what, "%s %s, %zu bytes, %s", profiles[pi],
                         mode ? "default" : "compat", in.len,
                         g % 2 ? "no line ends" : g == 2 ? "short lines" : "lines");
                stream_compare(c, in.p, in.len, exp, exp_len, &rng, 3, what);
                /* One feed of all of it. */
                tbuf one = {0};
                fj_stream *st = NULL;
                assert_int_equal(fj_stream_new(c, tb_write, &one, &st), FJ_OK);
                assert_int_equal(fj_stream_feed(st, in.p, in.len), FJ_OK);
                assert_int_equal(fj_stream_finish(st), FJ_OK);
                fj_stream_free(st);
                if (!t_same(what, exp, exp_len, one.p ? one.p : "", one.len))
                    fail_msg("%s: one long feed differs from fj_convert", what);
                tb_free(&one);
                /* A caller's buffer: too small, then exact. */
                char small[64];
                size_t need = 0;
                assert_int_equal(fj_convert(c, in.p, in.len, small, sizeof small, &need),
                                 FJ_ERR_BUFFER_TOO_SMALL);
                assert_int_equal(need, exp_len);
                char *exact = malloc(exp_len);
                assert_non_null(exact);
                assert_int_equal(fj_convert(c, in.p, in.len, exact, exp_len, &need), FJ_OK);
                assert_int_equal(need, exp_len);
                assert_memory_equal(exact, exp, exp_len);
                free(exact);
                fj_free(c, exp);
                tb_free(&in);
                runs++;
            }
        }
    }
    print_message("%zu long texts compared\n", runs);
}

static void test_stream_pending_bounded(void **state)
{
    (void)state;
    const size_t limit = 4096;
    uint64_t rng = t_seed() ^ 0x70656E64ull;
    /* Inputs: the compat text (or generated text), long Han text without any
     * punctuation, and long runs of one kind of byte. */
    tbuf inputs[6] = {{0}};
    const char *names[6] = {"compat input", "Han without punctuation", "ASCII run",
                            "0xFF run", "IDS operators", "compatibility ideographs"};
    size_t nd;
    const oc_dict *const *d = all_dicts(&nd);
    if (g_compat)
        tb_add(&inputs[0], g_compat, g_compat_len);
    else
        gen_text(&inputs[0], &rng, 160000, d, nd, 10, 1);
    gen_text(&inputs[1], &rng, t_quick() ? 60000 : 200000, d, nd, 0, 0);
    for (int i = 0; i < 50000; i++)
        tb_add(&inputs[2], "a", 1);
    for (int i = 0; i < 50000; i++)
        tb_add(&inputs[3], "\xFF", 1);
    for (int i = 0; i < 3000; i++)
        tb_adds(&inputs[4], i % 3 ? "\xE2\xBF\xB0" : "\xE2\xBF\xB0\xE6\x9C\xA8");
    for (int i = 0; i < 10000; i++)
        tb_adds(&inputs[5], i % 2 ? "\xEF\xA4\x80" : "\xF0\xAF\xA0\x80");
    const char *profiles_quick[] = {"s2t", "t2s", "s2twp", "tw2sp", "s2hk", "jp2t"};
    size_t nprof = t_quick() ? 6 : 16;
    size_t worst = 0, failures = 0;
    for (size_t pi = 0; pi < nprof; pi++) {
        const fj_converter *c = t_quick() ? conv(profiles_quick[pi]) : g_conv[pi];
        for (int k = 0; k < 6; k++) {
            size_t exp_len;
            char *exp = t_conv(c, inputs[k].p, inputs[k].len, &exp_len);
            for (int mode = 0; mode < 2; mode++) {
                char what[128];
                snprintf(what, sizeof what, "%s, %s (%zu bytes), %s pieces",
                         fj_converter_profile(c), names[k], inputs[k].len,
                         mode ? "7-byte" : "1-byte");
                size_t pend = stream_compare_limit(c, inputs[k].p, inputs[k].len, exp, exp_len,
                                                   &rng, mode, what, limit);
                if (pend >= limit) {
                    print_message("  %s: pending reached %zu bytes (limit %zu)\n", what, pend,
                                  limit);
                    failures++;
                    break;
                }
                if (pend > worst)
                    worst = pend;
            }
            fj_free(c, exp);
        }
    }
    print_message("largest pending within the limit: %zu bytes\n", worst);
    for (int k = 0; k < 6; k++)
        tb_free(&inputs[k]);
    if (failures)
        fail_msg("%zu streams held more than %zu bytes back", failures, limit);
}

typedef struct failing_sink {
    size_t budget; /* bytes accepted before failing */
    size_t got;
    size_t calls_after_failure;
    int failed;
} failing_sink;

static int failing_write(void *ctx, const char *data_, size_t len)
{
    (void)data_;
    failing_sink *f = ctx;
    if (f->failed) {
        f->calls_after_failure++;
        return 1;
    }
    if (f->got + len > f->budget) {
        f->failed = 1;
        return -1;
    }
    f->got += len;
    return 0;
}

static void test_stream_callback_failure(void **state)
{
    (void)state;
    const fj_converter *c = conv("s2t");
    tbuf in = {0};
    for (int i = 0; i < 20000; i++)
        tb_adds(&in, "头发干燥，鼠标和打印机。\n");
    const size_t budgets[] = {0, 1, 100, 70000, 200000};
    for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
        failing_sink f = {budgets[b], 0, 0, 0};
        fj_stream *s = NULL;
        assert_int_equal(fj_stream_new(c, failing_write, &f, &s), FJ_OK);
        fj_status st = FJ_OK;
        size_t off = 0;
        while (off < in.len && st == FJ_OK) {
            size_t n = in.len - off < 4096 ? in.len - off : 4096;
            st = fj_stream_feed(s, in.p + off, n);
            off += n;
        }
        if (st == FJ_OK)
            st = fj_stream_finish(s);
        if (st != FJ_ERR_CALLBACK)
            fail_msg("write budget %zu: status %d, want FJ_ERR_CALLBACK", budgets[b], st);
        /* After a failure the stream does not write again and does not succeed. */
        assert_int_not_equal(fj_stream_feed(s, "abc", 3), FJ_OK);
        assert_int_not_equal(fj_stream_finish(s), FJ_OK);
        fj_stream_free(s);
        assert_true(f.failed);
        assert_true(f.got <= budgets[b]);
        if (f.calls_after_failure)
            fail_msg("write budget %zu: callback called %zu times after it failed", budgets[b],
                     f.calls_after_failure);
    }
    /* A tiny text with a callback that always fails: the error comes at finish. */
    failing_sink f = {0, 0, 0, 0};
    fj_stream *s = NULL;
    assert_int_equal(fj_stream_new(c, failing_write, &f, &s), FJ_OK);
    fj_status st = fj_stream_feed(s, "ab", 2);
    if (st == FJ_OK)
        st = fj_stream_finish(s);
    assert_int_equal(st, FJ_ERR_CALLBACK);
    fj_stream_free(s);
    /* An empty stream writes nothing and succeeds. */
    f = (failing_sink){0, 0, 0, 0};
    assert_int_equal(fj_stream_new(c, failing_write, &f, &s), FJ_OK);
    assert_int_equal(fj_stream_finish(s), FJ_OK);
    assert_false(f.failed);
    fj_stream_free(s);
    tb_free(&in);
}

/* ---- 5. Bad input loses nothing ---------------------------------------------------- */

/* conv(a + mid + b) == conv(a) + mid + conv(b) for every profile. */
static void check_split(const fj_converter *c, const char *a, size_t alen, const char *mid,
                        size_t mlen, const char *b, size_t blen, const char *what)
{
    tbuf whole = {0}, exp = {0};
    tb_add(&whole, a, alen);
    tb_add(&whole, mid, mlen);
    tb_add(&whole, b, blen);
    size_t n;
    char *ca = t_conv(c, a, alen, &n);
    tb_add(&exp, ca, n);
    fj_free(c, ca);
    tb_add(&exp, mid, mlen);
    char *cb = t_conv(c, b, blen, &n);
    tb_add(&exp, cb, n);
    fj_free(c, cb);
    char *got = t_conv(c, whole.p, whole.len, &n);
    if (!t_same(what, exp.p, exp.len, got, n)) {
        fputs("    input:    ", stdout);
        t_print_escaped(stdout, whole.p, whole.len, 200);
        fputs("\n", stdout);
        fflush(stdout);
        fail_msg("%s (%s): the separator was not passed through in place", what,
                 fj_converter_profile(c));
    }
    /* The stream agrees, with the separator split across pieces. */
    tbuf out = {0};
    assert_int_equal(t_stream_pieces(c, whole.p, whole.len, 1, &out), FJ_OK);
    assert_true(t_same(what, got, n, out.p ? out.p : "", out.len));
    tb_free(&out);
    fj_free(c, got);
    tb_free(&whole);
    tb_free(&exp);
}

/* Each invalid sequence, between texts, alone and at either end, is copied in
 * place and splits the text around it, for every profile in `convs`. */
static void invalid_bytes_in_place(fj_converter *const convs[16], uint64_t rng)
{
    const char *fixed[][2] = {
        {"头发干燥，", "，鼠标和打印机"},
        {"这是只有一个人的世界", "头发干了"},
        {"头", "发"},       /* inside a phrase: the bad bytes split it */
        {"鼠标", "打印机"}, /* s2twp phrases on both sides */
        {"", ""},
        {"abc", "def"},
    };
    size_t nd;
    const oc_dict *const *d = all_dicts(&nd);
    for (int p = 0; p < 16; p++) {
        const fj_converter *c = convs[p];
        for (size_t k = 0; k < N_BAD; k++) {
            char what[64];
            snprintf(what, sizeof what, "invalid sequence %zu", k);
            for (size_t f = 0; f < sizeof fixed / sizeof fixed[0]; f++)
                check_split(c, fixed[f][0], strlen(fixed[f][0]), bad_seqs[k].s, bad_seqs[k].n,
                            fixed[f][1], strlen(fixed[f][1]), what);
            /* Random dictionary text on both sides. */
            for (int r = 0; r < (t_quick() ? 1 : 3); r++) {
                tbuf a = {0}, b = {0};
                gen_text(&a, &rng, 1 + t_below(&rng, 40), d, nd, 0, 0);
                gen_text(&b, &rng, 1 + t_below(&rng, 40), d, nd, 0, 0);
                check_split(c, a.p, a.len, bad_seqs[k].s, bad_seqs[k].n, b.p, b.len, what);
                tb_free(&a);
                tb_free(&b);
            }
            /* Alone, repeated, and at the very end of the input. */
            size_t n;
            char *out = t_conv(c, bad_seqs[k].s, bad_seqs[k].n, &n);
            assert_true(t_same(what, bad_seqs[k].s, bad_seqs[k].n, out, n));
            fj_free(c, out);
            check_split(c, "头发", 6, bad_seqs[k].s, bad_seqs[k].n, "", 0, what);
            check_split(c, "", 0, bad_seqs[k].s, bad_seqs[k].n, "头发", 6, what);
        }
    }
}

static void test_invalid_bytes_in_place(void **state)
{
    (void)state;
    invalid_bytes_in_place(g_conv, t_seed() ^ 0x626164ull);
}

/* NUL, BOM, CRLF, a missing final newline and astral characters, for every
 * profile in `convs`. */
static void nul_bom_crlf_astral(fj_converter *const convs[16])
{
    for (int p = 0; p < 16; p++) {
        const fj_converter *c = convs[p];
        /* NUL is a byte like any other: kept in place, and no phrase crosses it. */
        check_split(c, "头发干燥", 12, "\0", 1, "鼠标和打印机", 18, "NUL");
        check_split(c, "头", 3, "\0\0\0", 3, "发", 3, "NUL inside a phrase");
        /* BOM kept at the start and in the middle. */
        check_split(c, "", 0, "\xEF\xBB\xBF", 3, "头发干燥", 12, "leading BOM");
        check_split(c, "头发", 6, "\xEF\xBB\xBF", 3, "干燥", 6, "BOM in the middle");
        /* CRLF line ends are kept. */
        check_split(c, "头发干燥", 12, "\r\n", 2, "鼠标和打印机\r\n", 20, "CRLF");
        check_split(c, "头发干燥", 12, "\r", 1, "", 0, "CR at the end");
        /* Emoji and other astral non-Han characters pass through. */
        check_split(c, "头发", 6, "\xF0\x9F\x98\x80\xF0\x9F\x8E\x89", 8, "干燥", 6, "emoji");
        /* No final newline: the same as with one, minus the newline. */
        const char *t = "头发干燥\n鼠标和打印机";
        size_t n1, n2;
        char *a = t_conv(c, t, strlen(t), &n1);
        tbuf nl = {0};
        tb_adds(&nl, t);
        tb_adds(&nl, "\n");
        char *b = t_conv(c, nl.p, nl.len, &n2);
        assert_int_equal(n2, n1 + 1);
        assert_memory_equal(a, b, n1);
        assert_int_equal(b[n1], '\n');
        fj_free(c, a);
        fj_free(c, b);
        tb_free(&nl);
        /* Compatibility ideographs are rewritten by normalization. */
        const char *compat[] = {"\xEF\xA4\x80", "\xF0\xAF\xA0\x80", "\xEF\xA8\x8C"};
        for (size_t i = 0; i < 3; i++) {
            char *o = t_conv(c, compat[i], strlen(compat[i]), &n1);
            if (n1 == strlen(compat[i]) && memcmp(o, compat[i], n1) == 0)
                fail_msg("%s: compatibility ideograph %zu was not normalized", t_profiles[p], i);
            fj_free(c, o);
        }
    }
    /* U+F900 (豈) normalizes to U+8C48, which s2t keeps. */
    size_t n;
    const fj_converter *s2t = convs[profile_index("s2t")];
    char *o = t_conv(s2t, "\xEF\xA4\x80", 3, &n);
    assert_true(t_same("U+F900 in s2t", "\xE8\xB1\x88", 3, o, n));
    fj_free(s2t, o);
}

static void test_nul_bom_crlf_astral(void **state)
{
    (void)state;
    nul_bom_crlf_astral(g_conv);
}

static void test_ascii_identity(void **state)
{
    (void)state;
    uint64_t rng = t_seed() ^ 0x6173636969ull;
    for (int p = 0; p < 16; p++) {
        for (int k = 0; k < 20; k++) {
            size_t len = 1 + t_below(&rng, 3000);
            char *in = malloc(len);
            for (size_t i = 0; i < len; i++)
                in[i] = (char)t_below(&rng, 128); /* includes NUL and controls */
            size_t n;
            char *out = t_conv(g_conv[p], in, len, &n);
            assert_true(t_same("ASCII identity", in, len, out, n));
            fj_free(g_conv[p], out);
            free(in);
        }
    }
}

/* Checks streamed output against an expected pattern without storing it. */
typedef struct pattern_sink {
    const char *unit;
    size_t unit_len;
    size_t pos; /* bytes seen */
    int bad;
    size_t bad_at;
} pattern_sink;

static int pattern_write(void *ctx, const char *d, size_t len)
{
    pattern_sink *ps = ctx;
    for (size_t i = 0; i < len; i++) {
        if (!ps->bad && d[i] != ps->unit[(ps->pos + i) % ps->unit_len]) {
            ps->bad = 1;
            ps->bad_at = ps->pos + i;
        }
    }
    ps->pos += len;
    return 0;
}

/* 100 MB; 32 MB in the quick (sanitizer) run. */
static size_t huge_size(void) { return (size_t)(t_quick() ? 32 : 100) << 20; }

static void test_huge_ascii_line(void **state)
{
    (void)state;
    const char *unit = "The quick brown fox jumps over the lazy dog; 0123456789 [](){}<>!? ";
    size_t ul = strlen(unit), size = huge_size();
    size_t reps = size / ul;
    size = reps * ul;
    char *in = malloc(size);
    assert_non_null(in);
    for (size_t i = 0; i < reps; i++)
        memcpy(in + i * ul, unit, ul);
    const fj_converter *c = conv("s2t");
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(fj_convert_alloc(c, in, size, &out, &n), FJ_OK);
    assert_int_equal(n, size);
    assert_true(memcmp(in, out, size) == 0);
    assert_int_equal(out[n], 0);
    fj_free(c, out);
    /* Streamed in 1 MB pieces, checked on the fly. */
    pattern_sink ps = {unit, ul, 0, 0, 0};
    fj_stream *s = NULL;
    assert_int_equal(fj_stream_new(c, pattern_write, &ps, &s), FJ_OK);
    size_t max_pending = 0;
    for (size_t off = 0; off < size; off += (size_t)1 << 20) {
        size_t k = size - off < ((size_t)1 << 20) ? size - off : (size_t)1 << 20;
        assert_int_equal(fj_stream_feed(s, in + off, k), FJ_OK);
        if (fj_stream_pending(s) > max_pending)
            max_pending = fj_stream_pending(s);
    }
    assert_int_equal(fj_stream_finish(s), FJ_OK);
    fj_stream_free(s);
    assert_false(ps.bad);
    assert_int_equal(ps.pos, size);
    assert_true(max_pending < 4096);
    free(in);
}

static void test_huge_han_line(void **state)
{
    (void)state;
    /* The unit ends with '，', which is in no key, so it converts the same
     * wherever it stands. */
    const char *unit = "这是只有一个人的世界头发干了我们去打印机那里取文件鼠标软件内存"
                       "发展发现头发理发干燥干部乾隆"
                       "\xF0\xA0\x80\x80\xEF\xA4\x80\xE2\xBF\xB0\xE8\xA8\x80\xE5\x85\x91，";
    const char *profiles[] = {"s2twp", "t2s"};
    size_t ul = strlen(unit);
    size_t reps = huge_size() / ul, size = reps * ul;
    char *in = malloc(size);
    assert_non_null(in);
    for (size_t i = 0; i < reps; i++)
        memcpy(in + i * ul, unit, ul);
    for (size_t pi = 0; pi < (t_quick() ? 1 : 2); pi++) {
        const fj_converter *c = conv(profiles[pi]);
        size_t cl;
        char *cu = t_conv(c, unit, ul, &cl);
        char *out = NULL;
        size_t n = 0;
        assert_int_equal(fj_convert_alloc(c, in, size, &out, &n), FJ_OK);
        if (n != reps * cl)
            fail_msg("%s: %zu bytes out, want %zu x %zu", profiles[pi], n, reps, cl);
        for (size_t i = 0; i < reps; i++)
            if (memcmp(out + i * cl, cu, cl) != 0)
                fail_msg("%s: repetition %zu converted differently", profiles[pi], i);
        fj_free(c, out);
        /* Streamed in pieces of varying size, checked on the fly. */
        pattern_sink ps = {cu, cl, 0, 0, 0};
        fj_stream *s = NULL;
        uint64_t rng = t_seed() ^ 0x68616Eull;
        assert_int_equal(fj_stream_new(c, pattern_write, &ps, &s), FJ_OK);
        size_t max_pending = 0;
        for (size_t off = 0; off < size;) {
            size_t k = 1 + t_below(&rng, (size_t)2 << 20);
            if (k > size - off)
                k = size - off;
            assert_int_equal(fj_stream_feed(s, in + off, k), FJ_OK);
            if (fj_stream_pending(s) > max_pending)
                max_pending = fj_stream_pending(s);
            off += k;
        }
        assert_int_equal(fj_stream_finish(s), FJ_OK);
        fj_stream_free(s);
        if (ps.bad)
            fail_msg("%s: streamed output differs at byte %zu", profiles[pi], ps.bad_at);
        assert_int_equal(ps.pos, reps * cl);
        assert_true(max_pending < 4096);
        fj_free(c, cu);
    }
    free(in);
}

/* ---- 6. Differential test against the reference ------------------------------------ */

/* cp (a scalar value) in UTF-8; its length. */
static size_t utf8_of(uint32_t cp, unsigned char u[4])
{
    if (cp < 0x80) {
        u[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | cp >> 6);
        u[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | cp >> 12);
        u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    u[0] = (unsigned char)(0xF0 | cp >> 18);
    u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    u[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

static void test_differential_reference(void **state)
{
    (void)state;
    const oc_data *od = data();
    const int quick = t_quick();
    const size_t per_profile = quick ? 150 : 1500; /* random texts per profile */
    const size_t random_bytes = quick ? 60 : 500;
    uint64_t rng = t_seed() ^ 0x64696666ull;
    size_t nall;
    const oc_dict *const *alld = all_dicts(&nall);
    size_t total = 0, mismatches = 0;
    for (int p = 0; p < 16; p++) {
        const oc_profile *op = oc_data_profile(od, t_profiles[p]);
        assert_non_null(op);
        const oc_dict *pd[64];
        size_t npd = profile_dicts(op, pd, 64);
        assert_true(npd > 0);
        size_t prof_mismatch = 0;
        for (size_t k = 0; k < per_profile + random_bytes; k++) {
            tbuf in = {0};
            if (k < per_profile && k % 7 == 5 && k % 3 == 0) {
                /* A long line, clauses apart: the whole-text path where
                 * lines are long (pipeline.c, separated). */
                static const char *const seps[] = {"\xEF\xBC\x8C", "\xE3\x80\x82",
                                                   "\xE3\x80\x81", " "};
                size_t target = 2100 + t_below(&rng, 4000);
                while (in.len < target) {
                    gen_text(&in, &rng, 1 + t_below(&rng, 90), pd, npd, 0, 0);
                    tb_adds(&in, seps[t_below(&rng, 4)]);
                    if (t_below(&rng, 40) == 0)
                        tb_adds(&in, "\n");
                }
            } else if (k < per_profile && k % 7 == 6) {
                /* Lines of the profile's keys and values, no specials: the
                 * whole-text path (pipeline.c, convert_fused), with lines
                 * to convert again where a later step's key matches. */
                size_t lines = 1 + t_below(&rng, 8);
                for (size_t l = 0; l < lines; l++) {
                    gen_text(&in, &rng, 1 + t_below(&rng, 120), pd, npd, 0, 0);
                    if (l + 1 < lines || t_below(&rng, 2))
                        tb_adds(&in, t_below(&rng, 4) ? "\n" : "\r\n");
                }
            } else if (k < per_profile) {
                size_t target = 1 + t_below(&rng, k % 8 == 0 ? 1500 : 200);
                if (k % 5 == 4)
                    gen_text(&in, &rng, target, alld, nall, 15, 3);
                else
                    gen_text(&in, &rng, target, pd, npd, k % 3 == 0 ? 20 : 2, k % 2 ? 4 : 0);
            } else if (k % 2) {
                /* Random bytes. */
                size_t len = t_below(&rng, 80);
                for (size_t i = 0; i < len; i++) {
                    unsigned char byte = (unsigned char)t_rand(&rng);
                    tb_add(&in, &byte, 1);
                }
            } else {
                /* Random code points, mostly CJK and its neighbours. */
                size_t len = 1 + t_below(&rng, 40);
                static const uint32_t ranges[][2] = {
                    {0x4E00, 0x9FFF},   {0x3400, 0x4DBF},   {0xF900, 0xFAFF},
                    {0x2F800, 0x2FA1F}, {0x20000, 0x2A6DF}, {0x2FF0, 0x2FFF},
                    {0x3000, 0x303F},   {0xFF00, 0xFFEF},   {0x20, 0x7E},
                    {0x80, 0x10FFFF}};
                for (size_t i = 0; i < len; i++) {
                    size_t r = t_below(&rng, sizeof ranges / sizeof ranges[0]);
                    uint32_t cp = ranges[r][0] + (uint32_t)t_below(&rng, ranges[r][1] - ranges[r][0] + 1);
                    if (cp >= 0xD800 && cp <= 0xDFFF)
                        cp = 0x4E00;
                    unsigned char u[4];
                    size_t ul = utf8_of(cp, u);
                    tb_add(&in, u, ul);
                }
            }
            /* The reference's oc_dict_find reads past a key when the text
             * holds a NUL byte (strncmp stops early), so NUL is kept out of
             * its input; test_nul_bom_crlf_astral covers NUL. */
            for (size_t i = 0; i < in.len; i++)
                if (in.p[i] == 0)
                    in.p[i] = 1;
            const char *text = in.p ? in.p : "";
            size_t ref_len = 0;
            char *ref = oc_reference_convert(op, text, in.len, &ref_len, 1);
            assert_non_null(ref);
            size_t got_len;
            char *got = t_conv(g_conv[p], text, in.len, &got_len);
            total++;
            if (ref_len != got_len || memcmp(ref, got, ref_len) != 0) {
                mismatches++;
                if (prof_mismatch++ < 3) {
                    char what[64];
                    snprintf(what, sizeof what, "%s vs reference", t_profiles[p]);
                    t_same(what, ref, ref_len, got, got_len);
                    fputs("    input:    ", stdout);
                    t_print_escaped(stdout, text, in.len, 400);
                    fputs("\n", stdout);
                    fflush(stdout);
                }
            }
            free(ref);
            fj_free(g_conv[p], got);
            tb_free(&in);
        }
    }
    print_message("%zu texts compared with the reference, %zu differ\n", total, mismatches);
    assert_int_equal(mismatches, 0);
}

/* ---- 7. Dictionary round trip ------------------------------------------------------- */

static const char *const source_dicts[17] = {
    "CJK_Compatibility_Ideographs", "HKPhrases",          "HKPhrasesRev",
    "HKVariants",                   "HKVariantsPhrases",  "HKVariantsRevPhrases",
    "JPShinjitaiCharacters",        "JPShinjitaiPhrases", "STCharacters",
    "STPhrases",                    "TSCharacters",       "TSPhrases",
    "TWPhrases",                    "TWPhrasesRev",       "TWVariants",
    "TWVariantsPhrases",            "TWVariantsRevPhrases"};

/* Runs argv with standard output discarded and standard error to
 * err_path (or inherited when NULL); its exit code. */
static int run_to(char *const argv[], const char *err_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (err_path)
        posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_quiet(char *const argv[])
{
    return run_to(argv, NULL);
}

static void remove_tree(const char *dir)
{
    DIR *dh = opendir(dir);
    if (!dh)
        return;
    struct dirent *de;
    char path[4096];
    while ((de = readdir(dh)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    closedir(dh);
    rmdir(dir);
}

static int copy_file(const char *from, const char *to, const char *append)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    int ok = in && out;
    char buf[8192];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (ok && append)
        ok = fputs(append, out) >= 0;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

/* fjdict refuses a malformed line in our curated tables of the context
 * model, naming the file and the line, and writes no image. */
static void test_curated_table_errors(void **state)
{
    (void)state;
    static const char *const tables[] = {"s2t.tsv",    "s2t-forms.tsv", "s2t-surnames.tsv",
                                         "t2s.tsv",    "repair.tsv",    "repair-either.tsv"};
    static const struct {
        const char *table, *bad_line, *message;
    } cases[] = {
        {"s2t-forms.tsv", "坏\n", "s2t-forms.tsv:"},
        {"s2t-forms.tsv", "瞭解\t了\n", "expected FROM<TAB>TO of equal length"},
        {"s2t-surnames.tsv", "title\t老师\n", "s2t-surnames.tsv:"},
        {"s2t-surnames.tsv", "surname\t余范\n", "expected surname<TAB>S"},
        {"s2t.tsv", "没有目标\n", "expected KEY<TAB>TARGET"},
        {"s2t.tsv", "别着\t別著\n", "does not fit the tables"},
        {"t2s.tsv", "徵調\t征\n", "t2s.tsv:"},
        {"repair-either.tsv", "坐\n", "repair-either.tsv:"},
        {"repair-either.tsv", "坐標\t座標\n", "expected one word of 2 to"},
    };
    char fjdict[4096], essay[4096];
    snprintf(fjdict, sizeof fjdict, "%s/fjdict", t_build_dir());
    snprintf(essay, sizeof essay, "%s/essay.txt", t_build_dir());
    if (access(fjdict, X_OK) != 0 || access(essay, R_OK) != 0)
        fail_msg("%s or %s not found (set FANJIAN_BUILD)", fjdict, essay);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char dir[4096], path[4300], image[4300], errp[4300];
        snprintf(dir, sizeof dir, "%s/fanjian-curated-XXXXXX", t_env("TMPDIR", "/tmp"));
        assert_non_null(mkdtemp(dir));
        for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
            char from[4300];
            snprintf(from, sizeof from, "data/context/%s", tables[t]);
            snprintf(path, sizeof path, "%s/%s", dir, tables[t]);
            int bad = strcmp(tables[t], cases[c].table) == 0;
            if (copy_file(from, path, bad ? cases[c].bad_line : NULL) != 0) {
                remove_tree(dir);
                fail_msg("cannot copy %s (run from the source tree)", from);
            }
        }
        snprintf(image, sizeof image, "%s/x.fjd", dir);
        snprintf(errp, sizeof errp, "%s/stderr.txt", dir);
        char datap[4096];
        snprintf(datap, sizeof datap, "%s", t_data_dir());
        char *argv[] = {fjdict, (char *)"--compile", datap, (char *)"-o", image,
                        (char *)"--essay", essay, (char *)"--curated", dir, NULL};
        int rc = run_to(argv, errp);
        char msg[4096] = "";
        FILE *f = fopen(errp, "rb");
        if (f) {
            msg[fread(msg, 1, sizeof msg - 1, f)] = 0;
            fclose(f);
        }
        int wrote = access(image, F_OK) == 0;
        remove_tree(dir);
        if (rc == 0 || wrote || !strstr(msg, cases[c].message))
            fail_msg("%s + %s: exit %d, image %s, stderr: %s", cases[c].table, cases[c].bad_line,
                     rc, wrote ? "written" : "absent", msg);
    }
}

static void test_decompile_roundtrip(void **state)
{
    (void)state;
    char fjdict[4096], dir[4096];
    snprintf(fjdict, sizeof fjdict, "%s/fjdict", t_build_dir());
    if (access(fjdict, X_OK) != 0)
        fail_msg("%s not found (set FANJIAN_BUILD)", fjdict);
    snprintf(dir, sizeof dir, "%s/fanjian-decompile-XXXXXX", t_env("TMPDIR", "/tmp"));
    assert_non_null(mkdtemp(dir));
    char out[4200];
    snprintf(out, sizeof out, "%s/out", dir);
    char dictp[4096];
    snprintf(dictp, sizeof dictp, "%s", t_dict_path());
    char *argv[] = {fjdict, (char *)"--decompile", dictp, out, NULL};
    int rc = run_quiet(argv);
    if (rc != 0) {
        remove_tree(out);
        remove_tree(dir);
        fail_msg("fjdict --decompile exited with %d", rc);
    }
    /* Exactly the 17 source dictionaries come back. */
    size_t files = 0;
    DIR *dh = opendir(out);
    assert_non_null(dh);
    struct dirent *de;
    while ((de = readdir(dh)) != NULL)
        if (de->d_name[0] != '.')
            files++;
    closedir(dh);
    size_t checked = 0, entries = 0;
    char fail_text[1024] = "";
    for (size_t i = 0; i < 17 && !fail_text[0]; i++) {
        char a_path[4400], b_path[4400], err[256] = "";
        snprintf(a_path, sizeof a_path, "%s/dictionary/%s.txt", t_data_dir(), source_dicts[i]);
        snprintf(b_path, sizeof b_path, "%s/%s.txt", out, source_dicts[i]);
        oc_dict *a = oc_dict_parse(source_dicts[i], a_path, err, sizeof err);
        if (!a) {
            snprintf(fail_text, sizeof fail_text, "original %s: %s", source_dicts[i], err);
            break;
        }
        oc_dict *b = oc_dict_parse(source_dicts[i], b_path, err, sizeof err);
        if (!b) {
            snprintf(fail_text, sizeof fail_text, "decompiled %s: %s", source_dicts[i], err);
            oc_dict_free(a);
            break;
        }
        if (a->count != b->count)
            snprintf(fail_text, sizeof fail_text, "%s: %zu entries, decompiled %zu",
                     source_dicts[i], a->count, b->count);
        for (size_t e = 0; e < a->count && !fail_text[0]; e++) {
            const oc_entry *x = &a->entries[e], *y = &b->entries[e];
            int same = strcmp(x->key, y->key) == 0 && x->value_count == y->value_count;
            for (size_t v = 0; same && v < x->value_count; v++)
                same = strcmp(x->values[v], y->values[v]) == 0;
            if (!same)
                snprintf(fail_text, sizeof fail_text, "%s: entry %zu: %s -> %s (%zu values), "
                         "decompiled %s -> %s (%zu values)",
                         source_dicts[i], e, x->key, x->values[0], x->value_count, y->key,
                         y->values[0], y->value_count);
        }
        entries += a->count;
        oc_dict_free(a);
        oc_dict_free(b);
        checked++;
    }
    remove_tree(out);
    remove_tree(dir);
    if (fail_text[0])
        fail_msg("%s", fail_text);
    assert_int_equal(checked, 17);
    if (files != 17)
        fail_msg("fjdict --decompile wrote %zu files, want 17", files);
    print_message("17 dictionaries, %zu entries identical after the round trip\n", entries);
}

/* ---- 8. The default mode (FJ_DEFAULT) ------------------------------------------------ */

/* Profiles with a vocabulary step (Taiwan and Hong Kong phrases). They rewrite
 * whole words, and a few of those words hold Latin letters (U盘 -> 隨身碟), so
 * non-Han text inside such a word may change and the character count may too. */
static int has_vocabulary(const char *profile)
{
    static const char *const vocab[] = {"s2twp", "tw2sp", "s2hkp", "hk2sp"};
    for (size_t i = 0; i < sizeof vocab / sizeof vocab[0]; i++)
        if (strcmp(profile, vocab[i]) == 0)
            return 1;
    return 0;
}

/* Well-formed Han characters in s[0..n) (t_is_han). */
static size_t count_han(const char *s, size_t n)
{
    size_t count = 0;
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        size_t k = t_utf8_char(s + i, n - i, &cp);
        if (k && t_is_han(cp))
            count++;
        i += k ? k : 1;
    }
    return count;
}

/* Byte offset of character k of s[0..n) (n when it has fewer). */
static size_t char_offset(const char *s, size_t n, size_t k)
{
    size_t i = 0;
    while (i < n && k > 0) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        k--;
    }
    return i;
}

/* Prints characters [from, to) of s[0..n), marking what is left out. */
static void print_chars(const char *label, const char *s, size_t n, size_t from, size_t to)
{
    size_t a = char_offset(s, n, from), b = char_offset(s, n, to);
    fprintf(stdout, "    %-7s %s", label, a > 0 ? "..." : "");
    t_print_text(stdout, s + a, b - a, 600);
    fputs(b < n ? "...\n" : "\n", stdout);
}

/* The lines of a text, or the fields of case files, as (pointer, length). */
typedef struct text_lines {
    tok *v;
    size_t n, cap;
    char **files; /* buffers the lines point into */
    size_t nfiles;
} text_lines;

static void lines_add(text_lines *l, const char *s, size_t n)
{
    if (n == 0)
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    l->v[l->n].s = s;
    l->v[l->n++].n = n;
}

/* Each non-empty line of text[0..len), without its line end. */
static void lines_split(text_lines *l, const char *text, size_t len)
{
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - text) : len;
        size_t k = e;
        if (k > i && text[k - 1] == '\r')
            k--;
        lines_add(l, text + i, k - i);
        i = e + 1;
    }
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The text fields of ../shared/cases/ *.tsv (every field after the first of
 * each line that is not a '#' comment). Returns the number of files read. */
static size_t lines_add_shared_cases(text_lines *l)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/cases", t_shared_dir());
    DIR *dh = opendir(dir);
    if (!dh)
        return 0;
    char **names = NULL;
    size_t nn = 0;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL) {
        size_t k = strlen(de->d_name);
        if (k > 4 && strcmp(de->d_name + k - 4, ".tsv") == 0) {
            names = realloc(names, (nn + 1) * sizeof *names);
            assert_non_null(names);
            names[nn++] = strdup(de->d_name);
        }
    }
    closedir(dh);
    if (nn)
        qsort(names, nn, sizeof *names, str_cmp);
    size_t read = 0;
    for (size_t f = 0; f < nn; f++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        free(names[f]);
        size_t len;
        char *text = t_read_file(path, &len);
        if (!text)
            continue;
        l->files = realloc(l->files, (l->nfiles + 1) * sizeof *l->files);
        assert_non_null(l->files);
        l->files[l->nfiles++] = text;
        read++;
        text_lines rows = {0};
        lines_split(&rows, text, len);
        for (size_t r = 0; r < rows.n; r++) {
            const char *p = rows.v[r].s, *end = p + rows.v[r].n;
            if (*p == '#')
                continue;
            const char *tab = memchr(p, '\t', (size_t)(end - p));
            while (tab) {
                const char *field = tab + 1;
                tab = memchr(field, '\t', (size_t)(end - field));
                lines_add(l, field, (size_t)((tab ? tab : end) - field));
            }
        }
        free(rows.v);
    }
    free(names);
    return read;
}

static void lines_free(text_lines *l)
{
    for (size_t i = 0; i < l->nfiles; i++)
        free(l->files[i]);
    free(l->files);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Prints one idempotence violation: the characters around the first
 * difference between the first and the second conversion. */
static void report_not_idempotent(const char *profile, const char *x, size_t xn, const char *once,
                                  size_t on, const char *twice, size_t tn)
{
    size_t d = 0;
    while (d < on && d < tn && once[d] == twice[d])
        d++;
    while (d > 0 && d < on && ((unsigned char)once[d] & 0xC0) == 0x80)
        d--;
    size_t k = 0;
    for (size_t i = 0; i < d; i++)
        k += ((unsigned char)once[i] & 0xC0) != 0x80;
    size_t from = k > 16 ? k - 16 : 0, to = k + 16;
    fprintf(stdout, "  %s: %s(%s(x)) != %s(x), first at character %zu\n", profile, profile,
            profile, profile, k);
    print_chars("input:", x, xn, from, to);
    print_chars("once:", once, on, from, to);
    print_chars("twice:", twice, tn, from, to);
    fflush(stdout);
}

/* On real text, converting twice gives what converting once gives. */
static void test_default_idempotent(void **state)
{
    (void)state;
    static const char *const profiles[] = {"s2tw", "t2s", "s2t", "s2hk"};
    const size_t max_examples = 10;
    text_lines l = {0};
    if (g_compat)
        lines_split(&l, g_compat, g_compat_len);
    size_t compat_lines = l.n;
    size_t case_files = lines_add_shared_cases(&l);
    if (l.n == 0) {
        lines_free(&l);
        print_message("SKIP: neither %s/opencc/compat/input.txt nor %s/cases/*.tsv found "
                      "(no ../shared): idempotence test skipped\n",
                      t_shared_dir(), t_shared_dir());
        skip();
    }
    /* The Traditional lines: those t2s changes. */
    const fj_converter *t2s = conv_def("t2s");
    unsigned char *trad = calloc(l.n, 1);
    assert_non_null(trad);
    size_t ntrad = 0;
    for (size_t i = 0; i < l.n; i++) {
        size_t n;
        char *o = t_conv(t2s, l.v[i].s, l.v[i].n, &n);
        trad[i] = n != l.v[i].n || memcmp(o, l.v[i].s, n) != 0;
        ntrad += trad[i];
        fj_free(t2s, o);
    }
    size_t total = 0;
    for (size_t pi = 0; pi < sizeof profiles / sizeof profiles[0]; pi++) {
        const fj_converter *c = conv_def(profiles[pi]);
        size_t bad = 0, bad_trad = 0;
        for (size_t i = 0; i < l.n; i++) {
            size_t on, tn;
            char *once = t_conv(c, l.v[i].s, l.v[i].n, &on);
            char *twice = t_conv(c, once, on, &tn);
            if (on != tn || memcmp(once, twice, on) != 0) {
                if (bad++ < max_examples)
                    report_not_idempotent(profiles[pi], l.v[i].s, l.v[i].n, once, on, twice, tn);
                bad_trad += trad[i];
            }
            fj_free(c, once);
            fj_free(c, twice);
        }
        print_message("%s: %zu of %zu lines not idempotent (%zu of them among the %zu "
                      "Traditional lines)%s\n",
                      profiles[pi], bad, l.n, bad_trad, ntrad,
                      bad > max_examples ? "; first examples above" : "");
        total += bad;
    }
    print_message("%zu lines: %zu from compat/input.txt, %zu from %zu case files\n", l.n,
                  compat_lines, l.n - compat_lines, case_files);
    free(trad);
    lines_free(&l);
    if (total)
        fail_msg("%zu conversions are not idempotent in the default mode", total);
}

/* The later steps folded into the default mode's table (wholly or partly)
 * give what running them after the lattice gives: s2tw is s2t's lattice
 * followed by t2tw's variant step, s2hk by t2hk's. Checked on real text and
 * on text built around the characters that make the partial folding redo a
 * run (林杰樑, 喫, 皁 keep their form in those steps' phrases). */
/* The image with the regional models of s2tw and s2hk (fj_context_rec
 * overrides) switched off: they then use s2t's lattice as it is. Opened
 * from memory; *buf is the caller's to free after closing. */
static fj_dict *open_without_regions(unsigned char **buf)
{
    unsigned char *img = img_copy(g_img_size);
    sect cx = find_sect(img, FJ_SEC_CONTEXT);
    for (size_t i = 0; fj_dict_profile_name(g_dict, i); i++) {
        const char *name = fj_dict_profile_name(g_dict, i);
        if (strcmp(name, "s2tw") != 0 && strcmp(name, "s2hk") != 0)
            continue;
        unsigned char *rec = img + cx.off + i * sizeof(fj_context_rec);
        wr32(rec + offsetof(fj_context_rec, overrides), FJ_NONE);
        wr32(rec + offsetof(fj_context_rec, ambiguous), 0); /* s2t's sets */
    }
    img_fix_checksum(img, g_img_size);
    fj_dict *d = NULL;
    fj_error err;
    if (fj_dict_open_memory(img, g_img_size, NULL, &d, &err) != FJ_OK)
        fail_msg("image without regions: %s", err.message);
    *buf = img;
    return d;
}

/* s2tw and s2hk run s2t's lattice with the later steps folded in: the same
 * as t2tw or t2hk (compatible mode) after s2t, once their regional models
 * are switched off. With them, the region's forms are written (計畫). */
static void test_default_folded_steps(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {{"s2tw", "t2tw"}, {"s2hk", "t2hk"}};
    static const char extra[] = "林杰樑和张栋梁去喫茶，牛骥同皂。林国梁说：只有头发干了才去。"
                                "純喫茶小舖里，他吃了一碗面。我们的计划。";
    size_t len = sizeof extra - 1;
    char *text = NULL;
    if (g_compat) {
        text = malloc(g_compat_len + len);
        assert_non_null(text);
        memcpy(text, g_compat, g_compat_len);
        memcpy(text + g_compat_len, extra, len);
        len += g_compat_len;
    } else {
        text = malloc(len);
        assert_non_null(text);
        memcpy(text, extra, len);
    }
    unsigned char *buf;
    fj_dict *plain = open_without_regions(&buf);
    size_t mid_n, want_n, got_n;
    char *mid = t_conv(conv_def("s2t"), text, len, &mid_n);
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        fj_converter *c;
        fj_error err;
        assert_int_equal(fj_converter_open(plain, pairs[i][0], FJ_DEFAULT, &c, &err), FJ_OK);
        char *want = t_conv(conv(pairs[i][1]), mid, mid_n, &want_n);
        char *got = t_conv(c, text, len, &got_n);
        if (got_n != want_n || memcmp(got, want, got_n) != 0)
            fail_msg("%s differs from t2%s after s2t's lattice", pairs[i][0], pairs[i][0] + 2);
        fj_free(conv(pairs[i][1]), want);
        fj_free(c, got);
        /* The regional model is what writes Taiwan's 計畫. */
        static const char plan[] = "我们的计划";
        size_t n;
        char *a = t_conv(c, plan, sizeof plan - 1, &n);
        char *b = t_conv(conv_def(pairs[i][0]), plan, sizeof plan - 1, &n);
        assert_string_equal(a, "我們的計劃");
        assert_string_equal(b, i == 0 ? "我們的計畫" : "我們的計劃");
        fj_free(c, a);
        fj_free(conv_def(pairs[i][0]), b);
        fj_converter_close(c);
    }
    fj_dict_close(plain);
    free(buf);
    fj_free(conv_def("s2t"), mid);
    free(text);
}

/* ---- typography ---------------------------------------------------------- */

/* Runs the filter over `in`, fed in pieces of `step` bytes (0: whole). */
static char *punct_run(fj_quotes q, unsigned flags, const char *in, size_t len, size_t step,
                       size_t *out_len)
{
    tbuf out = {0};
    fj_punct *p;
    assert_int_equal(fj_punct_new(q, flags, NULL, tb_write, &out, &p), FJ_OK);
    for (size_t i = 0; i < len;) {
        size_t n = step && step < len - i ? step : len - i;
        assert_int_equal(fj_punct_feed(p, in + i, n), FJ_OK);
        i += n;
    }
    assert_int_equal(fj_punct_finish(p), FJ_OK);
    assert_int_equal(fj_punct_feed(p, "x", 1), FJ_ERR_STREAM_STATE);
    fj_punct_free(p);
    tb_add(&out, "", 1);
    *out_len = out.len - 1;
    return out.p;
}

static void test_punct(void **state)
{
    (void)state;
    static const struct {
        fj_quotes q;
        unsigned flags;
        const char *in, *out;
    } cases[] = {
        {FJ_QUOTES_CORNER, 0, "他说：“你好，‘朋友’。”", "他说：「你好，『朋友』。」"},
        {FJ_QUOTES_CURLY, 0, "他說：「你好，『朋友』。」", "他說：“你好，‘朋友’。”"},
        {FJ_QUOTES_CORNER, 0, "她说\"走吧\"，又说\"好\"。\n\"新\"", "她说「走吧」，又说「好」。\n「新」"},
        {FJ_QUOTES_CURLY, 0, "他說\"走\"。", "他說“走”。"},
        /* English stays English: apostrophes and quotes away from CJK. */
        {FJ_QUOTES_CORNER, 0, "don’t say “hi” \"x\"", "don’t say “hi” \"x\""},
        {FJ_QUOTES_KEEP, 0, "“你好”「你好」", "“你好”「你好」"},
        {FJ_QUOTES_KEEP, FJ_PUNCT_ELLIPSIS, "等等。。。然后...好。。end...", "等等……然后……好。。end..."},
        {FJ_QUOTES_KEEP, FJ_PUNCT_ELLIPSIS, "v1.2...3 a...b", "v1.2...3 a...b"},
        {FJ_QUOTES_KEEP, FJ_PUNCT_FULLWIDTH, "好,走!对?是:的;好 a,b 你,", "好，走！对？是：的；好 a,b 你,"},
        /* Bytes that are not UTF-8 pass through, in place. */
        {FJ_QUOTES_CORNER, FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH, "\xff“你”\xe4\xbd\x0a...\xc0",
         "\xff「你」\xe4\xbd\x0a...\xc0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].in);
        for (size_t step = 0; step <= 3; step++) {
            size_t n;
            char *got = punct_run(cases[i].q, cases[i].flags, cases[i].in, len, step, &n);
            char what[64];
            snprintf(what, sizeof what, "punct case %zu (pieces of %zu)", i, step);
            if (!t_same(what, cases[i].out, strlen(cases[i].out), got, n))
                fail_msg("%s", what);
            free(got);
        }
    }
    /* A line is out once its line break is fed, before the next one comes. */
    {
        tbuf line = {0};
        fj_punct *p;
        assert_int_equal(fj_punct_new(FJ_QUOTES_CORNER, FJ_PUNCT_ELLIPSIS, NULL, tb_write, &line, &p),
                         FJ_OK);
        assert_int_equal(fj_punct_feed(p, "他说“好”...\n", strlen("他说“好”...\n")), FJ_OK);
        assert_true(line.len == strlen("他说「好」……\n") &&
                    memcmp(line.p, "他说「好」……\n", line.len) == 0);
        assert_int_equal(fj_punct_finish(p), FJ_OK);
        fj_punct_free(p);
        tb_free(&line);
    }
    assert_int_equal(fj_profile_quotes("s2twp"), FJ_QUOTES_CORNER);
    assert_int_equal(fj_profile_quotes("hk2sp.json"), FJ_QUOTES_CURLY);
    assert_int_equal(fj_profile_quotes("s2tw"), FJ_QUOTES_KEEP);
    assert_int_equal(fj_punct_new(FJ_QUOTES_KEEP, 1u << 7, NULL, tb_write, NULL, &(fj_punct *){0}),
                     FJ_ERR_INVALID_ARGUMENT);
    /* Any text, any split: the same output, and every byte the filter does
     * not change is where it was (keep + no flags: identity). */
    if (g_compat) {
        size_t a_n, b_n;
        char *a = punct_run(FJ_QUOTES_CORNER, FJ_PUNCT_ELLIPSIS, g_compat, g_compat_len, 0, &a_n);
        char *b = punct_run(FJ_QUOTES_CORNER, FJ_PUNCT_ELLIPSIS, g_compat, g_compat_len, 7, &b_n);
        assert_true(a_n == b_n && memcmp(a, b, a_n) == 0);
        free(a);
        free(b);
        a = punct_run(FJ_QUOTES_KEEP, 0, g_compat, g_compat_len, 5, &a_n);
        assert_true(a_n == g_compat_len && memcmp(a, g_compat, a_n) == 0);
        free(a);
    }
}

/* Streaming gives fj_convert's output however the input is split. */
static void test_default_stream_equals_oneshot(void **state)
{
    (void)state;
    static const char *const profiles[] = {"s2t",  "s2tw", "s2twp", "t2s",   "tw2s",  "hk2s",
                                           "s2hk", "t2tw", "t2hk",  "tw2t",  "tw2sp", "s2hkp",
                                           "hk2sp"};
    const int quick = t_quick();
    uint64_t rng = t_seed() ^ 0x64656673747265ull;
    size_t nd;
    const oc_dict *const *d = all_dicts(&nd);
    tbuf text = {0};
    if (g_compat)
        tb_add(&text, g_compat, g_compat_len);
    else
        gen_text(&text, &rng, 160000, d, nd, 10, 1);
    /* A shorter piece, ending at a line end, for 1-byte feeds. */
    size_t short_len = quick ? 6000 : 24000;
    if (short_len >= text.len) {
        short_len = text.len;
    } else {
        while (short_len > 0 && text.p[short_len - 1] != '\n')
            short_len--;
        if (short_len == 0)
            short_len = quick ? 6000 : 24000;
    }
    size_t runs = 0;
    for (size_t pi = 0; pi < sizeof profiles / sizeof profiles[0]; pi++) {
        const fj_converter *c = conv_def(profiles[pi]);
        char what[160];
        size_t exp_len;
        char *exp = t_conv(c, text.p, text.len, &exp_len);
        for (int it = 0; it < (quick ? 2 : 4); it++) {
            int mode = it == 3 ? 2 : 3;
            snprintf(what, sizeof what, "%s (default mode), %s, %s pieces", profiles[pi],
                     g_compat ? "compat input" : "generated text",
                     mode == 3 ? "random mixed" : "random small");
            stream_compare(c, text.p, text.len, exp, exp_len, &rng, mode, what);
            runs++;
        }
        fj_free(c, exp);
        exp = t_conv(c, text.p, short_len, &exp_len);
        snprintf(what, sizeof what, "%s (default mode), first %zu bytes, 1-byte pieces",
                 profiles[pi], short_len);
        stream_compare(c, text.p, short_len, exp, exp_len, &rng, 0, what);
        runs++;
        fj_free(c, exp);
        /* Generated text with special and invalid content. */
        int gens = quick ? 8 : 40;
        for (int g = 0; g < gens; g++) {
            tbuf in = {0};
            size_t target = g % 8 == 7 ? 5000 + t_below(&rng, 15000) : 1 + t_below(&rng, 600);
            gen_text(&in, &rng, target, d, nd, 25, 8);
            exp = t_conv(c, in.p, in.len, &exp_len);
            for (int mode = 0; mode < 4; mode += 3) {
                snprintf(what, sizeof what, "%s (default mode), generated text %d (%zu bytes), "
                         "mode %d", profiles[pi], g, in.len, mode);
                stream_compare(c, in.p, in.len, exp, exp_len, &rng, mode, what);
                runs++;
            }
            fj_free(c, exp);
            tb_free(&in);
        }
    }
    tb_free(&text);
    print_message("%zu default-mode streamed conversions compared%s\n", runs,
                  g_compat ? "" : " (no compat input: generated text only)");
}

static void test_default_invalid_bytes_in_place(void **state)
{
    (void)state;
    invalid_bytes_in_place(g_def, t_seed() ^ 0x646566626164ull);
}

static void test_default_nul_bom_crlf_astral(void **state)
{
    (void)state;
    nul_bom_crlf_astral(g_def);
}

/* Simplified characters with several Traditional forms: runs of them keep
 * the lattice busy. */
static const char han_alphabet[] = "发干里后只台面系";
#define HAN_ALPHABET_CHARS ((sizeof han_alphabet - 1) / 3)

static void add_han_run(tbuf *b, uint64_t *rng, size_t chars)
{
    for (size_t i = 0; i < chars; i++)
        tb_add(b, han_alphabet + 3 * t_below(rng, HAN_ALPHABET_CHARS), 3);
}

/* ASCII without punctuation, to put inside Han text. */
static const char *const ascii_words[] = {"a", "B", "U", "T", "K", "PN", "SQL", "x86", "2024",
                                          "0", "OK", "Zhang", "the", "QQ"};
#define N_ASCII_WORDS (sizeof ascii_words / sizeof ascii_words[0])

/* About `target` bytes of Han runs mixed with ASCII, specials and invalid bytes. */
static void gen_mixed(tbuf *b, uint64_t *rng, size_t target)
{
    size_t start = b->len;
    while (b->len - start < target) {
        size_t r = t_below(rng, 100);
        if (r < 45) {
            add_han_run(b, rng, 1 + t_below(rng, 12));
        } else if (r < 65) {
            tb_adds(b, ascii_words[t_below(rng, N_ASCII_WORDS)]);
        } else if (r < 82) {
            const tok *t = &specials[t_below(rng, N_SPECIAL)];
            tb_add(b, t->s, t->n);
        } else {
            const tok *t = &bad_seqs[t_below(rng, N_BAD)];
            tb_add(b, t->s, t->n);
        }
    }
}

/* In the default mode only Han text changes: with every Han character taken
 * out, input and output are the same bytes (so every other byte, valid or
 * not, is kept, in order); valid UTF-8 stays valid; and a profile without a
 * vocabulary step keeps the number of Han characters. 1 when all hold. */
static int check_non_han(const fj_converter *c, const char *in, size_t len, const char *what)
{
    const char *profile = fj_converter_profile(c);
    size_t n;
    char *out = t_conv(c, in, len, &n);
    tbuf a = {0}, b = {0};
    t_strip_han(in, len, &a);
    t_strip_han(out, n, &b);
    char label[256];
    snprintf(label, sizeof label, "%s (default mode), %s: the bytes that are not Han", profile,
             what);
    int ok = t_same(label, a.p, a.len, b.p, b.len);
    if (ok && t_utf8_valid(in, len) && !t_utf8_valid(out, n)) {
        print_message("  %s (default mode), %s: valid UTF-8 in, invalid UTF-8 out\n", profile,
                      what);
        ok = 0;
    }
    if (ok && !has_vocabulary(profile) && count_han(in, len) != count_han(out, n)) {
        print_message("  %s (default mode), %s: %zu Han characters in, %zu out\n", profile, what,
                      count_han(in, len), count_han(out, n));
        ok = 0;
    }
    if (!ok) {
        fputs("    input:  ", stdout);
        t_print_escaped(stdout, in, len, 300);
        fputs("\n    output: ", stdout);
        t_print_escaped(stdout, out, n, 300);
        fputs("\n", stdout);
        fflush(stdout);
    }
    fj_free(c, out);
    tb_free(&a);
    tb_free(&b);
    return ok;
}

static void test_default_non_han_unchanged(void **state)
{
    (void)state;
    const int quick = t_quick();
    uint64_t rng = t_seed() ^ 0x6E6F6E68616Eull;
    size_t nd;
    const oc_dict *const *d = all_dicts(&nd);
    size_t checked = 0, failures = 0;
    char what[128];
#define CHECK_NON_HAN(c, in, len)                                                                 \
    do {                                                                                           \
        checked++;                                                                                 \
        if (!check_non_han((c), (in), (len), what) && ++failures >= 10)                            \
            fail_msg("%zu inputs changed outside Han text (stopped there)", failures);             \
    } while (0)

    /* The pieces one by one, between Han runs that depend on context. */
    for (int p = 0; p < 16; p++) {
        for (size_t k = 0; k < N_BAD + N_SPECIAL; k++) {
            const tok *t = k < N_BAD ? &bad_seqs[k] : &specials[k - N_BAD];
            tbuf in = {0};
            tb_adds(&in, "头发干了只有");
            tb_add(&in, t->s, t->n);
            tb_adds(&in, "干了一只系");
            tb_add(&in, t->s, t->n);
            snprintf(what, sizeof what, "%s %zu between Han", k < N_BAD ? "invalid sequence"
                                                                       : "special",
                     k < N_BAD ? k : k - N_BAD);
            CHECK_NON_HAN(g_def[p], in.p, in.len);
            tb_free(&in);
        }
    }
    /* Han runs mixed with ASCII, specials (NUL, BOM, CRLF, astral, IDS, ...)
     * and invalid sequences: every profile. */
    int mixed = quick ? 40 : 200;
    for (int p = 0; p < 16; p++)
        for (int g = 0; g < mixed; g++) {
            tbuf in = {0};
            gen_mixed(&in, &rng, g % 10 == 9 ? 4000 : 1 + t_below(&rng, 300));
            snprintf(what, sizeof what, "mixed text %d (%zu bytes)", g, in.len);
            CHECK_NON_HAN(g_def[p], in.p, in.len);
            tb_free(&in);
        }
    /* Dictionary text and the real text: profiles without a vocabulary step
     * (those may rewrite Latin letters inside a word). */
    for (int p = 0; p < 16; p++) {
        if (has_vocabulary(t_profiles[p]))
            continue;
        for (int g = 0; g < (quick ? 10 : 60); g++) {
            tbuf in = {0};
            gen_text(&in, &rng, 1 + t_below(&rng, 2000), d, nd, 25, 8);
            snprintf(what, sizeof what, "generated text %d (%zu bytes)", g, in.len);
            CHECK_NON_HAN(g_def[p], in.p, in.len);
            tb_free(&in);
        }
        if (g_compat) {
            snprintf(what, sizeof what, "compat input.txt");
            CHECK_NON_HAN(g_def[p], g_compat, g_compat_len);
        }
    }
    /* 100 KB lines with no barrier: Han only, and Han with ASCII inside;
     * one-shot and streamed. */
    tbuf lines[2] = {{0}, {0}};
    const size_t line_size = 100 * 1024;
    while (lines[0].len < line_size)
        add_han_run(&lines[0], &rng, 64);
    while (lines[1].len < line_size) {
        add_han_run(&lines[1], &rng, 1 + t_below(&rng, 40));
        tb_adds(&lines[1], ascii_words[t_below(&rng, N_ASCII_WORDS)]);
    }
    const char *line_names[2] = {"100 KB of Han without a barrier",
                                 "100 KB of Han and ASCII without a barrier"};
    for (int p = 0; p < 16; p++)
        for (int k = 0; k < 2; k++) {
            snprintf(what, sizeof what, "%s", line_names[k]);
            CHECK_NON_HAN(g_def[p], lines[k].p, lines[k].len);
            size_t exp_len;
            char *exp = t_conv(g_def[p], lines[k].p, lines[k].len, &exp_len);
            snprintf(what, sizeof what, "%s (default mode), %s, streamed", t_profiles[p],
                     line_names[k]);
            stream_compare(g_def[p], lines[k].p, lines[k].len, exp, exp_len, &rng, 3, what);
            fj_free(g_def[p], exp);
        }
    tb_free(&lines[0]);
    tb_free(&lines[1]);
#undef CHECK_NON_HAN
    print_message("%zu default-mode conversions checked outside Han text\n", checked);
    if (failures)
        fail_msg("%zu inputs changed outside Han text", failures);
}

/* fj_convert with the caller's buffer: the size reported, exact and short
 * buffers, and the same bytes as fj_convert_alloc. */
/* Repair auto copies a clause whose every character the careful converter
 * writes as itself; each character, alone and beside an ambiguous one, must
 * come out of auto as out of careful. */
static void test_repair_auto_characters_as_careful(void **state)
{
    (void)state;
    static const char *const profiles[] = {"t2tw", "t2hk", "tw2t", "hk2t"};
    for (size_t k = 0; k < sizeof profiles / sizeof profiles[0]; k++) {
        fj_converter *a, *cf;
        fj_error err;
        assert_int_equal(fj_converter_open(g_dict, profiles[k], FJ_DEFAULT, &a, &err), FJ_OK);
        assert_int_equal(
            fj_converter_open(g_dict, profiles[k], FJ_DEFAULT | FJ_REPAIR_CAREFUL, &cf, &err),
            FJ_OK);
        size_t differ = 0;
        char in[64], out_a[256], out_c[256];
        for (uint32_t cp = 0x20; cp < 0x10000; cp++) {
            if (cp >= 0xD800 && cp <= 0xDFFF)
                continue;
            unsigned char u[4];
            size_t ul = utf8_of(cp, u);
            for (int form = 0; form < 3; form++) {
                /* alone; after 頭 (頭髮 or 頭發); before 里 */
                int n = form == 0   ? snprintf(in, sizeof in, "%.*s。", (int)ul, (char *)u)
                        : form == 1 ? snprintf(in, sizeof in, "頭%.*s。", (int)ul, (char *)u)
                                    : snprintf(in, sizeof in, "%.*s里，", (int)ul, (char *)u);
                size_t la, lc;
                assert_int_equal(fj_convert(a, in, (size_t)n, out_a, sizeof out_a, &la), FJ_OK);
                assert_int_equal(fj_convert(cf, in, (size_t)n, out_c, sizeof out_c, &lc), FJ_OK);
                if ((la != lc || memcmp(out_a, out_c, la) != 0) && ++differ <= 5)
                    print_message("%s: U+%04X (form %d): auto %.*s, careful %.*s\n", profiles[k],
                                  cp, form, (int)la, out_a, (int)lc, out_c);
            }
        }
        fj_converter_close(a);
        fj_converter_close(cf);
        assert_int_equal(differ, 0);
    }
}

static void test_default_buffer_sizes(void **state)
{
    (void)state;
    for (int p = 0; p < 16; p++)
        for (size_t i = 0; i < N_BUFFER_SAMPLES; i++)
            check_buffer_sizes(g_def[p], buffer_samples[i], strlen(buffer_samples[i]));
    tbuf big = {0};
    if (g_compat) {
        tb_add(&big, g_compat, g_compat_len);
    } else {
        uint64_t rng = t_seed() ^ 0x646566626967ull;
        size_t nd;
        const oc_dict *const *d = all_dicts(&nd);
        gen_text(&big, &rng, 200000, d, nd, 5, 1);
    }
    const char *big_profiles[] = {"s2t", "s2tw", "s2twp", "s2hk", "t2s", "tw2sp", "hk2s"};
    for (size_t i = 0; i < sizeof big_profiles / sizeof big_profiles[0]; i++)
        check_buffer_sizes(conv_def(big_profiles[i]), big.p, big.len);
    tb_free(&big);
    alloc_equals_convert(g_def, t_seed() ^ 0x646566616C6Cull);
}

/* ---- main ------------------------------------------------------------------------- */


/* libchewing's phrase table (tools/chewing.c, fetched by make into
 * BUILD/region/chewing): the Taiwan frequencies issue 18 quotes. */
static double chewing_count(const model_words *w, const char *word)
{
    for (size_t i = 0; i < w->count; i++)
        if (strcmp(w->words[i], word) == 0)
            return w->counts[i];
    return -1;
}

static void test_chewing_reader_figures(void **state)
{
    (void)state;
    char dir[4096], err[512] = "";
    snprintf(dir, sizeof dir, "%s/region/chewing", t_build_dir());
    model_words *w = chewing_words_load(dir, err, sizeof err);
    if (!w)
        fail_msg("%s (make fetches it: scripts/fetch-region.sh)", err);
    static const struct {
        const char *word;
        double count;
    } known[] = {{"計畫", 30341}, {"計劃", 9208}, {"了解", 9268},
                 {"瞭解", 0},     {"櫃台", 8687}, {"櫃檯", 495}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (chewing_count(w, known[i].word) != known[i].count)
            fail_msg("%s: %.0f, expected %.0f", known[i].word, chewing_count(w, known[i].word),
                     known[i].count);
    /* Each phrase once (its readings share one text), and many of them. */
    assert_true(w->count > 100000);
    assert_true(chewing_count(w, "了") == 0);
    model_words_free(w);
}

/* Hong Kong's list (rime-data-jyut6ping3's essay-cantonese.txt, fetched by
 * make into BUILD/region): WORD<TAB>COUNT lines, read as the essay is. */
static void test_region_hongkong_list(void **state)
{
    (void)state;
    char path[4096], err[512] = "";
    snprintf(path, sizeof path, "%s/region/essay-cantonese.txt", t_build_dir());
    model_words *w = model_words_load(path, err, sizeof err);
    if (!w)
        fail_msg("%s (make fetches it: scripts/fetch-region.sh)", err);
    assert_true(w->count > 200000);
    assert_true(chewing_count(w, "瞭解") == 2313);
    assert_true(chewing_count(w, "了解") == -1); /* not listed */
    assert_true(chewing_count(w, "計劃") == 20733);
    assert_true(chewing_count(w, "計畫") == 444);
    model_words_free(w);
}

/* Writes n bytes to dir/name. */
static void put_bytes(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void test_chewing_reader_rejects_bad_files(void **state)
{
    (void)state;
    char dir[4096], err[512];
    snprintf(dir, sizeof dir, "%s/fanjian-chewing-XXXXXX", t_env("TMPDIR", "/tmp"));
    assert_non_null(mkdtemp(dir));
    /* A root with one child, a phrase "計畫" (at byte 0) seen 7 times. */
    static const unsigned char tree[] = {1, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0};
    static const char text[] = "計畫";
    put_bytes(dir, "dictionary.dat", text, sizeof text);
    put_bytes(dir, "index_tree.dat", tree, sizeof tree);
    model_words *w = chewing_words_load(dir, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(w->count, 1);
    assert_string_equal(w->words[0], "計畫");
    assert_true(w->counts[0] == 7);
    model_words_free(w);
    const struct {
        const unsigned char *tree;
        size_t tree_len;
        const char *message;
    } bad[] = {
        {tree, 15, "8-byte records"},
        /* the phrase starts past the end of dictionary.dat */
        {(const unsigned char[]){1, 0, 1, 0, 0, 2, 0, 0, 0, 0, 99, 0, 0, 7, 0, 0}, 16,
         "outside dictionary.dat"},
        /* the root's children run past the last record */
        {(const unsigned char[]){1, 0, 1, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0}, 16,
         "children lie outside"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_bytes(dir, "index_tree.dat", bad[i].tree, bad[i].tree_len);
        err[0] = 0;
        w = chewing_words_load(dir, err, sizeof err);
        if (w || !strstr(err, bad[i].message))
            fail_msg("case %zu: %s, message '%s'", i, w ? "accepted" : "refused", err);
    }
    /* Text that is not UTF-8. */
    put_bytes(dir, "index_tree.dat", tree, sizeof tree);
    put_bytes(dir, "dictionary.dat", "\xff\xfe", 3);
    w = chewing_words_load(dir, err, sizeof err);
    assert_null(w);
    assert_non_null(strstr(err, "not UTF-8"));
    char path[4300];
    snprintf(path, sizeof path, "%s/dictionary.dat", dir);
    unlink(path);
    w = chewing_words_load(dir, err, sizeof err);
    assert_null(w);
    assert_non_null(strstr(err, "dictionary.dat"));
    remove_tree(dir);
}

/* ---- 10. Profiles and UTF-8 ------------------------------------------------------ */

/* The oracle: RFC 3629 by code point, one sequence at a time. A lead byte
 * announces a length; the sequence is valid when its other bytes are
 * continuation bytes and its value is neither overlong, a surrogate nor past
 * U+10FFFF. Returns the length, 0 when invalid, -1 when only the end at
 * `avail` cuts it short (some completion of the bytes present is valid). */
static int oracle_complete(const unsigned char *b, int len)
{
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    uint32_t cp = b[0] & (0x7Fu >> len);
    for (int k = 1; k < len; k++) {
        if ((b[k] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (b[k] & 0x3Fu);
    }
    return cp >= least[len] && (cp < 0xD800 || cp > 0xDFFF) && cp <= 0x10FFFF;
}

static int oracle_sequence(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int len = c >= 0xF0 && c <= 0xF7 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC0 && c <= 0xDF ? 2 : 0;
    if (!len)
        return 0;
    if (avail >= (size_t)len)
        return oracle_complete(s, len) ? len : 0;
    /* Try completions that reach every range boundary of every position. */
    static const unsigned char fill[] = {0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF};
    unsigned char b[4];
    memcpy(b, s, avail);
    int missing = len - (int)avail, combos = 1;
    for (int k = 0; k < missing; k++)
        combos *= (int)sizeof fill;
    for (int m = 0; m < combos; m++) {
        for (int k = 0, r = m; k < missing; k++, r /= (int)sizeof fill)
            b[avail + (size_t)k] = fill[r % (int)sizeof fill];
        if (oracle_complete(b, len))
            return -1;
    }
    return 0;
}

static size_t oracle_valid(const unsigned char *s, size_t n, int *cut)
{
    *cut = 0;
    for (size_t i = 0; i < n;) {
        int r = oracle_sequence(s + i, n - i);
        if (r <= 0) {
            *cut = r < 0;
            return i;
        }
        i += (size_t)r;
    }
    return n;
}

/* fj_utf8_valid on s[0..n) equals the oracle, offset and cut; also with a
 * NULL cut. Works on a copy of exactly n bytes, so a read past the end
 * shows under the sanitizers. */
static void utf8_agrees(const unsigned char *s, size_t n, const char *what)
{
    unsigned char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, s, n);
    int want_cut, got_cut = -1;
    size_t want = oracle_valid(copy, n, &want_cut);
    size_t got = fj_utf8_valid((const char *)copy, n, &got_cut);
    size_t got_null = fj_utf8_valid((const char *)copy, n, NULL);
    free(copy);
    if (got != want || got_cut != want_cut || got_null != want) {
        char hex[3 * 24 + 1] = "";
        size_t from = want > 8 ? want - 8 : 0;
        for (size_t k = from; k < n && k < from + 24; k++)
            snprintf(hex + 3 * (k - from), 4, "%02X ", s[k]);
        fail_msg("%s (%zu bytes): valid %zu cut %d, oracle %zu cut %d; from byte %zu: %s", what, n,
                 got, got_cut, want, want_cut, from, hex);
    }
}

/* Every lead byte with every second byte and the edges of the third and
 * fourth: each sequence class and its boundaries (C0 C1 F5..FF, E0 80..9F,
 * ED A0..BF, F0 80..8F, F4 90..), whole and cut at every position, alone
 * and after runs of ASCII and Han that put it anywhere in a SIMD block. */
static void test_utf8_valid_sequences(void **state)
{
    (void)state;
    static const unsigned char edge[] = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
    static const unsigned char tail[] = {0x7F, 0x80, 0xBF, 0xC0};
    unsigned char buf[160];
    for (unsigned lead = 0; lead < 256; lead++)
        for (unsigned second = 0; second < 256; second++)
            for (unsigned t = 0; t < 16; t++) {
                unsigned char seq[6] = {(unsigned char)lead, (unsigned char)second, tail[t & 3],
                                        tail[t >> 2], 'x', 'y'};
                for (size_t n = 0; n <= sizeof seq; n++)
                    utf8_agrees(seq, n, "sequence");
            }
    /* After ASCII or Han, at each place of a 16- and 32-byte block. */
    for (int han = 0; han < 2; han++)
        for (size_t before = 0; before <= 70; before++) {
            size_t at = 0;
            while (at < before) {
                if (han && before - at >= 3) {
                    memcpy(buf + at, "\xE4\xB8\xAD", 3); /* 中 */
                    at += 3;
                } else {
                    buf[at++] = 'a';
                }
            }
            for (unsigned lead = 0x80; lead < 256; lead++)
                for (size_t e = 0; e < sizeof edge; e++)
                    for (unsigned t = 0; t < 16; t++) {
                        unsigned char *p = buf + at;
                        p[0] = (unsigned char)lead;
                        p[1] = edge[e];
                        p[2] = tail[t & 3];
                        p[3] = tail[t >> 2];
                        for (size_t k = 4; k < 40; k++)
                            p[k] = (k % 3 == 1) ? 0xE4 : (k % 3 == 2) ? 0xB8 : 0xAD;
                        utf8_agrees(buf, at + 40, "sequence after a run");
                        for (size_t n = at; n <= at + 4; n++)
                            utf8_agrees(buf, n, "sequence after a run, cut");
                    }
        }
    /* The obvious answers, spelled out. */
    int cut;
    assert_int_equal(fj_utf8_valid("\xE4\xB8", 2, &cut), 0);
    assert_int_equal(cut, 1);
    assert_int_equal(fj_utf8_valid("a\xED\xA0\x80", 4, &cut), 1);
    assert_int_equal(cut, 0);
    assert_int_equal(fj_utf8_valid("\xF4\x8F\xBF\xBF\xF4\x90", 6, &cut), 4);
    assert_int_equal(cut, 0);
    assert_int_equal(fj_utf8_valid(NULL, 0, &cut), 0);
    assert_int_equal(fj_utf8_valid("", 0, NULL), 0);
}

/* An invalid byte (or a cut, overlong or surrogate sequence) at every
 * offset 0..70 inside long runs of ASCII, Han (three bytes), two- and
 * four-byte characters: the blocks and the carry between them. */
static void test_utf8_valid_offsets(void **state)
{
    (void)state;
    static const char *const runs[] = {"a", "\xE4\xB8\xAD", "\xC3\xA9", "\xF0\x9F\x98\x80",
                                       "\xEF\xBF\xBF" /* U+FFFF */, "\xE4\xB8\xADz"};
    static const struct {
        const char *bytes;
        size_t len;
    } bad[] = {
        {"\xFF", 1},         {"\x80", 1},         {"\xC0\xAF", 2},     {"\xC1\xBF", 2},
        {"\xE0\x9F\xBF", 3}, {"\xED\xA0\x80", 3}, {"\xF0\x8F\xBF\xBF", 4},
        {"\xF4\x90\x80\x80", 4}, {"\xF5\x80\x80\x80", 4}, {"\xE4\xB8", 2}, {"\xF0\x9F\x98", 3},
        {"\xC3", 1},
    };
    unsigned char buf[400];
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        size_t rl = strlen(runs[r]);
        for (size_t total = 100; total <= 140; total += 13)
            for (size_t off = 0; off <= 70; off++)
                for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
                    for (int mode = 0; mode < 2; mode++) {
                        size_t n = 0;
                        while (n + rl <= total) {
                            memcpy(buf + n, runs[r], rl);
                            n += rl;
                        }
                        if (mode == 0) { /* in place of the bytes at off */
                            memcpy(buf + off, bad[b].bytes, bad[b].len);
                        } else { /* inserted at off */
                            memmove(buf + off + bad[b].len, buf + off, n - off);
                            memcpy(buf + off, bad[b].bytes, bad[b].len);
                            n += bad[b].len;
                        }
                        utf8_agrees(buf, n, "bad bytes in a run");
                        utf8_agrees(buf, off + bad[b].len, "bad bytes at the end of a run");
                    }
    }
}

/* Random text of valid characters of every length, runs and junk. */
static void test_utf8_valid_random(void **state)
{
    (void)state;
    uint64_t seed = t_seed() ^ 0x75746638ull;
    size_t rounds = t_quick() ? 20000 : 100000, full = 0, cuts = 0;
    unsigned char buf[610];
    for (size_t round = 0; round < rounds; round++) {
        size_t n = 0, want = t_below(&seed, 500);
        unsigned junk_odds = 20 + (unsigned)t_below(&seed, 400);
        while (n < want) {
            size_t kind = t_below(&seed, junk_odds);
            unsigned char u[4];
            int len;
            if (kind == 0) { /* any byte */
                u[0] = (unsigned char)t_rand(&seed);
                len = 1;
            } else if (kind == 1) { /* a valid character cut short */
                uint32_t cp = 0x80 + (uint32_t)t_below(&seed, 0x10FF80);
                if (cp >= 0xD800 && cp <= 0xDFFF)
                    cp = 0xE000;
                len = fj_utf8_encode(cp, u);
                len = len > 1 ? 1 + (int)t_below(&seed, (size_t)len - 1) : len;
            } else if (kind < 6) { /* any scalar value */
                uint32_t cp = (uint32_t)t_below(&seed, 0x110000);
                if (cp >= 0xD800 && cp <= 0xDFFF)
                    cp = 0xD7FF;
                len = fj_utf8_encode(cp, u);
            } else if (kind < junk_odds / 2) { /* common Han */
                len = fj_utf8_encode(0x4E00 + (uint32_t)t_below(&seed, 0x5200), u);
            } else {
                u[0] = (unsigned char)(' ' + t_below(&seed, 95));
                len = 1;
            }
            if (n + (size_t)len > sizeof buf)
                break;
            memcpy(buf + n, u, (size_t)len);
            n += (size_t)len;
        }
        if (t_below(&seed, 8) == 0) { /* ends inside a character */
            unsigned char u[4];
            int len = fj_utf8_encode(0x80 + (uint32_t)t_below(&seed, 0xD780), u);
            size_t keep = 1 + t_below(&seed, (size_t)len - 1);
            memcpy(buf + n, u, keep);
            n += keep;
        }
        int cut;
        size_t ok = oracle_valid(buf, n, &cut);
        full += ok == n;
        cuts += cut;
        utf8_agrees(buf, n, "random text");
    }
    /* The mix reaches all three outcomes. */
    assert_true(full > rounds / 20);
    assert_true(cuts > rounds / 200);
}

/* The library's profile table (data/profiles.tsv) and the image's profile
 * list are the same set, and everything that reads the table agrees. */
static void test_profile_table(void **state)
{
    (void)state;
    size_t table = 0;
    while (fj_profile_name(table))
        table++;
    assert_int_equal(table, fj_dict_profile_count(g_dict));
    assert_int_equal(table, 16); /* OpenCC 1.4.2's profiles */
    for (size_t i = 0; i < table; i++) {
        const char *name = fj_profile_name(i);
        const char *in_image = fj_dict_profile_name(g_dict, i);
        assert_non_null(in_image);
        assert_string_equal(name, in_image); /* the same order too */
        for (size_t k = 0; k < i; k++)
            assert_string_not_equal(fj_profile_name(k), name);
        fj_profile_info info = {.size = sizeof info}, plain = {.size = sizeof plain};
        assert_int_equal(fj_profile_info_get(g_dict, name, &info), FJ_OK);
        assert_int_equal(fj_profile_info_get(NULL, name, &plain), FJ_OK);
        assert_int_equal(info.size, sizeof info);
        assert_string_equal(info.name, name);
        assert_ptr_equal(info.name, plain.name);
        assert_int_equal(info.quotes, (int)fj_profile_quotes(name));
        assert_int_equal(plain.quotes, info.quotes);
        assert_non_null(info.from);
        assert_non_null(info.to);
        assert_non_null(info.description);
        assert_true(strlen(info.description) > 10);
        /* The image repairs exactly the profiles the table says do. */
        const fj_image *img = fj__dict_image(g_dict);
        int image_repairs = (img->contexts[i].flags & FJ_CONTEXT_REPAIR) != 0;
        assert_int_equal(info.repairs, image_repairs);
        assert_int_equal(plain.repairs, image_repairs);
        /* A profile that repairs reads Traditional. */
        if (info.repairs)
            assert_true(strcmp(info.from, "hans") != 0);
        /* Its language tag is its output's: Taiwan zh-TW and so on. */
        static const struct {
            const char *to, *lang;
        } tags[] = {{"hans", "zh-CN"}, {"hant", "zh-Hant"}, {"tw", "zh-TW"}, {"hk", "zh-HK"},
                    {"jp", NULL}};
        int found = 0;
        for (size_t k = 0; k < sizeof tags / sizeof tags[0]; k++)
            if (strcmp(tags[k].to, info.to) == 0) {
                found = 1;
                if (tags[k].lang)
                    assert_string_equal(info.lang, tags[k].lang);
                else
                    assert_null(info.lang);
            }
        assert_true(found);
        /* fj_converter_open knows it, and names it the same. */
        fj_converter *c;
        fj_error err;
        assert_int_equal(fj_converter_open(g_dict, name, FJ_COMPAT, &c, &err), FJ_OK);
        assert_string_equal(fj_converter_profile(c), name);
        fj_converter_close(c);
    }
    assert_null(fj_profile_name(table));
    assert_null(fj_profile_name((size_t)-1));
}

static void test_profile_info_get(void **state)
{
    (void)state;
    fj_profile_info info = {.size = sizeof info};
    /* As fj_converter_open takes the name. */
    assert_int_equal(fj_profile_info_get(g_dict, "/usr/share/opencc/s2twp.json", &info), FJ_OK);
    assert_string_equal(info.name, "s2twp");
    assert_int_equal(info.quotes, FJ_QUOTES_CORNER);
    assert_string_equal(info.lang, "zh-TW");
    assert_int_equal(info.repairs, 0);
    assert_string_equal(info.from, "hans");
    assert_string_equal(info.to, "tw");
    assert_int_equal(fj_profile_info_get(NULL, "hk2sp", &info), FJ_OK);
    assert_int_equal(info.quotes, FJ_QUOTES_CURLY);
    assert_string_equal(info.lang, "zh-CN");
    assert_int_equal(fj_profile_info_get(g_dict, "t2jp.json", &info), FJ_OK);
    assert_int_equal(info.repairs, 1);
    assert_null(info.lang);
    /* What is not a profile, and bad arguments. */
    assert_int_equal(fj_profile_info_get(g_dict, "s2x", &info), FJ_ERR_UNKNOWN_PROFILE);
    assert_int_equal(fj_profile_info_get(NULL, "", &info), FJ_ERR_UNKNOWN_PROFILE);
    assert_int_equal(fj_profile_info_get(g_dict, NULL, &info), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_profile_info_get(g_dict, "s2t", NULL), FJ_ERR_INVALID_ARGUMENT);
    fj_profile_info small = {.size = offsetof(fj_profile_info, description)};
    small.name = "untouched";
    assert_int_equal(fj_profile_info_get(g_dict, "s2t", &small), FJ_ERR_INVALID_ARGUMENT);
    assert_string_equal(small.name, "untouched");
    /* A larger caller struct keeps its size, and the bytes past ours. */
    struct {
        fj_profile_info info;
        int later;
    } big = {.info = {.size = sizeof big}, .later = 12345};
    assert_int_equal(fj_profile_info_get(g_dict, "s2t", &big.info), FJ_OK);
    assert_int_equal(big.info.size, sizeof big);
    assert_int_equal(big.later, 12345);
    /* fj_profile_quotes as before: the localising profiles' styles, KEEP
     * for every other profile, for NULL and for unknown names. */
    size_t styled = 0;
    for (size_t i = 0; fj_profile_name(i); i++)
        styled += fj_profile_quotes(fj_profile_name(i)) != FJ_QUOTES_KEEP;
    assert_int_equal(styled, 4);
    assert_int_equal(fj_profile_quotes("s2twp"), FJ_QUOTES_CORNER);
    assert_int_equal(fj_profile_quotes("s2hkp"), FJ_QUOTES_CORNER);
    assert_int_equal(fj_profile_quotes("tw2sp"), FJ_QUOTES_CURLY);
    assert_int_equal(fj_profile_quotes("hk2sp"), FJ_QUOTES_CURLY);
    assert_int_equal(fj_profile_quotes(NULL), FJ_QUOTES_KEEP);
    assert_int_equal(fj_profile_quotes("nope"), FJ_QUOTES_KEEP);
    assert_int_equal(fj_profile_quotes("x/tw2sp.json"), FJ_QUOTES_CURLY);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_null_arguments),
        cmocka_unit_test(test_missing_dictionary),
        cmocka_unit_test(test_unknown_profile),
        cmocka_unit_test(test_profile_aliases),
        cmocka_unit_test(test_strerror_and_version),
        cmocka_unit_test(test_dict_sources),
        cmocka_unit_test(test_profile_list),
        cmocka_unit_test(test_profile_table),
        cmocka_unit_test(test_profile_info_get),
        cmocka_unit_test(test_utf8_valid_sequences),
        cmocka_unit_test(test_utf8_valid_offsets),
        cmocka_unit_test(test_utf8_valid_random),
        cmocka_unit_test(test_image_pristine),
        cmocka_unit_test(test_image_truncated),
        cmocka_unit_test(test_image_bitflips),
        cmocka_unit_test(test_image_bad_magic),
        cmocka_unit_test(test_image_wrong_version),
        cmocka_unit_test(test_image_damaged_file),
        cmocka_unit_test(test_image_checked_on_first_use),
        cmocka_unit_test(test_image_refused_from_header),
        cmocka_unit_test(test_image_hostile),
        cmocka_unit_test(test_image_node_check),
        cmocka_unit_test(test_image_records_as_built),
        cmocka_unit_test(test_image_lm_table_full),
        cmocka_unit_test(test_image_fuzz_checksum_valid),
        cmocka_unit_test(test_convert_buffer_sizes),
        cmocka_unit_test(test_convert_alloc_equals_convert),
        cmocka_unit_test(test_custom_allocator),
        cmocka_unit_test(test_stream_random_splits),
        cmocka_unit_test(test_long_text_windows),
        cmocka_unit_test(test_stream_pending_bounded),
        cmocka_unit_test(test_stream_callback_failure),
        cmocka_unit_test(test_invalid_bytes_in_place),
        cmocka_unit_test(test_nul_bom_crlf_astral),
        cmocka_unit_test(test_ascii_identity),
        cmocka_unit_test(test_huge_ascii_line),
        cmocka_unit_test(test_huge_han_line),
        cmocka_unit_test(test_differential_reference),
        cmocka_unit_test(test_decompile_roundtrip),
        cmocka_unit_test(test_curated_table_errors),
        cmocka_unit_test(test_default_idempotent),
        cmocka_unit_test(test_default_stream_equals_oneshot),
        cmocka_unit_test(test_repair_auto_characters_as_careful),
        cmocka_unit_test(test_default_folded_steps),
        cmocka_unit_test(test_punct),
        cmocka_unit_test(test_chewing_reader_figures),
        cmocka_unit_test(test_chewing_reader_rejects_bad_files),
        cmocka_unit_test(test_region_hongkong_list),
        cmocka_unit_test(test_default_invalid_bytes_in_place),
        cmocka_unit_test(test_default_nul_bom_crlf_astral),
        cmocka_unit_test(test_default_non_han_unchanged),
        cmocka_unit_test(test_default_buffer_sizes),
    };
    /* FANJIAN_TEST_FILTER=test_stream* runs a subset. */
    if (getenv("FANJIAN_TEST_FILTER"))
        cmocka_set_test_filter(getenv("FANJIAN_TEST_FILTER"));
    return cmocka_run_group_tests_name("unit", tests, group_setup, group_teardown);
}
