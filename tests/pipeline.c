/* fj_converter_open_options: the converter that does the whole policy
 * (UTF-8 check, clean-up, conversion, typography) must give exactly what
 * the callers composed by hand (fj_clean_stream, then fj_converter_open's
 * converter, then fj_punct), one-shot and streamed in any split. */
#include "testutil.h"

static fj_dict *g_dict;
static fj_clean *g_clean;

/* Simplified text with what every stage acts on: boilerplate lines and
 * spans, curly, corner and straight quotes, dots, ASCII punctuation
 * between Han characters, CRLF, a missing final newline. */
static const char g_simplified[] =
    "第一章 头发\n"
    "他说：“我们去打印机那里取文件。”然后......走了。。。\n"
    "天才一秒记住本站地址：www.biquge.com\r\n"
    "“头发干了,真好!”她问:行吗?‘对’\n"
    "这是只有一个人的世界，本章未完，请点击下一页继续阅读\n"
    "「这是只有一个人的世界」，『里面』还有\"直引号\"和English \"quotes\" don’t.\n"
    "（本章完）";

/* Traditional, some of it carelessly converted (衹, 裏). */
static const char g_traditional[] =
    "第一章 頭髮\n"
    "他說：「我們去印表機那裡取檔案。」然後。。。走了...\n"
    "天才一秒記住本站地址：www.biquge.com\n"
    "衹有頭髮乾了,真好!她問:行嗎?“對”\n"
    "「這是衹有一個人的世界」，『裏面』還有\"直引號\"。\n"
    "（本章完）\n";

static int setup(void **state)
{
    (void)state;
    fj_error err;
    if (fj_dict_open(t_dict_path(), NULL, &g_dict, &err) != FJ_OK) {
        fprintf(stderr, "pipeline: %s\n", err.message);
        return -1;
    }
    if (fj_clean_open(g_dict, NULL, 0, 0, &g_clean, &err) != FJ_OK) {
        fprintf(stderr, "pipeline: %s\n", err.message);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fj_clean_close(g_clean);
    fj_dict_close(g_dict);
    return 0;
}

/* ---- the reference: the stages composed by hand ------------------------------ */

/* What the callers did: fj_clean_stream over the whole text, then the
 * converter, then fj_punct with the quotes they resolved. */
static void compose_by_hand(const fj_options *o, const char *in, size_t len, tbuf *out)
{
    tbuf cleaned = {0};
    tb_add(&cleaned, "", 0);
    if (o->clean) {
        fj_clean_stream *cs;
        assert_int_equal(fj_clean_stream_new(o->clean, tb_write, &cleaned, NULL, NULL, &cs), FJ_OK);
        assert_int_equal(fj_clean_stream_feed(cs, in, len), FJ_OK);
        assert_int_equal(fj_clean_stream_finish(cs), FJ_OK);
        fj_clean_stream_free(cs);
    } else {
        tb_add(&cleaned, in, len);
    }
    tbuf converted = {0};
    tb_add(&converted, "", 0);
    const char *profile = NULL;
    fj_converter *c = NULL;
    fj_error err;
    if (o->profile)
        assert_int_equal(fj_converter_open(g_dict, o->profile, o->flags, &c, &err), FJ_OK);
    else if (o->target)
        assert_int_equal(fj_converter_open_target(g_dict, o->target, o->flags, &c, &err), FJ_OK);
    if (c) {
        char *buf;
        size_t n;
        assert_int_equal(fj_convert_alloc(c, cleaned.p, cleaned.len, &buf, &n), FJ_OK);
        tb_add(&converted, buf, n);
        fj_free(c, buf);
        profile = fj_converter_profile(c);
    } else {
        tb_add(&converted, cleaned.p, cleaned.len);
    }
    int quotes = o->quotes;
    if (quotes == FJ_QUOTES_PROFILE)
        quotes = (o->flags & FJ_COMPAT) || !profile ? FJ_QUOTES_KEEP
                                                    : (int)fj_profile_quotes(profile);
    tb_add(out, "", 0);
    if (quotes != FJ_QUOTES_KEEP || o->punct) {
        fj_punct *p;
        assert_int_equal(fj_punct_new((fj_quotes)quotes, o->punct, NULL, tb_write, out, &p), FJ_OK);
        assert_int_equal(fj_punct_feed(p, converted.p, converted.len), FJ_OK);
        assert_int_equal(fj_punct_finish(p), FJ_OK);
        fj_punct_free(p);
    } else {
        tb_add(out, converted.p, converted.len);
    }
    fj_converter_close(c);
    tb_free(&cleaned);
    tb_free(&converted);
}

static void assert_same(const char *what, const tbuf *got, const tbuf *exp)
{
    if (got->len != exp->len || memcmp(got->p, exp->p, exp->len) != 0) {
        fprintf(stderr, "%s differs:\n--- expected (%zu bytes)\n%s\n--- got (%zu bytes)\n%s\n",
                what, exp->len, exp->p, got->len, got->p);
        fail();
    }
}

/* The options converter's output, one-shot (both calls) and streamed in
 * pieces of 1..7 bytes and in one piece, equals the composition. */
static void check_equivalent(const char *what, const fj_options *o, const char *in, size_t len)
{
    tbuf exp = {0};
    compose_by_hand(o, in, len, &exp);
    fj_converter *c;
    fj_error err;
    fj_status st = fj_converter_open_options(g_dict, o, &c, &err);
    if (st != FJ_OK)
        fprintf(stderr, "%s: %s\n", what, err.message);
    assert_int_equal(st, FJ_OK);

    char *buf;
    size_t n;
    assert_int_equal(fj_convert_alloc(c, in, len, &buf, &n), FJ_OK);
    tbuf got = {0};
    tb_add(&got, buf, n);
    fj_free(c, buf);
    assert_same(what, &got, &exp);
    tb_free(&got);

    /* The caller's buffer: too small reports the size, exact fits. */
    size_t need = 0;
    assert_int_equal(fj_convert(c, in, len, NULL, 0, &need), exp.len ? FJ_ERR_BUFFER_TOO_SMALL : FJ_OK);
    assert_int_equal(need, exp.len);
    char *exact = malloc(exp.len + 1);
    assert_int_equal(fj_convert(c, in, len, exact, exp.len, &n), FJ_OK);
    assert_int_equal(n, exp.len);
    assert_memory_equal(exact, exp.p, exp.len);
    free(exact);

    for (size_t piece = 1; piece <= 8; piece++) {
        size_t step = piece == 8 ? len : piece;
        tbuf s_out = {0};
        tb_add(&s_out, "", 0);
        fj_stream *s;
        assert_int_equal(fj_stream_new(c, tb_write, &s_out, &s), FJ_OK);
        for (size_t off = 0; off < len; off += step)
            assert_int_equal(fj_stream_feed(s, in + off, len - off < step ? len - off : step), FJ_OK);
        assert_int_equal(fj_stream_finish(s), FJ_OK);
        assert_int_equal(fj_stream_error(s, &err), FJ_OK);
        fj_stream_free(s);
        char label[200];
        snprintf(label, sizeof label, "%s, streamed in pieces of %zu", what, step);
        assert_same(label, &s_out, &exp);
        tb_free(&s_out);
    }
    fj_converter_close(c);
    tb_free(&exp);
}

static void test_equivalent_to_composition(void **state)
{
    (void)state;
    static const struct {
        const char *profile, *target;
        int traditional_input;
    } convs[] = {{"s2twp", NULL, 0}, {"tw2sp", NULL, 1}, {"t2tw", NULL, 1},
                 {"s2t", NULL, 0},   {NULL, "tw", 0},    {NULL, "tw", 1}};
    static const struct {
        unsigned flags;
        int quotes;
        unsigned punct;
        int clean, utf8;
    } sets[] = {
        {0, FJ_QUOTES_PROFILE, 0, 0, FJ_UTF8_PASS},
        {FJ_COMPAT, FJ_QUOTES_PROFILE, 0, 0, FJ_UTF8_PASS},
        {0, FJ_QUOTES_CORNER, 0, 0, FJ_UTF8_PASS},
        {0, FJ_QUOTES_CURLY, FJ_PUNCT_ELLIPSIS, 0, FJ_UTF8_STRICT},
        {FJ_COMPAT, FJ_QUOTES_CORNER, FJ_PUNCT_FULLWIDTH, 1, FJ_UTF8_PASS},
        {0, FJ_QUOTES_KEEP, FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH, 1, FJ_UTF8_STRICT},
        {0, FJ_QUOTES_PROFILE, 0, 1, FJ_UTF8_PASS},
        {FJ_REPAIR_CAREFUL, FJ_QUOTES_PROFILE, FJ_PUNCT_FULLWIDTH, 1, FJ_UTF8_STRICT},
        {0, FJ_QUOTES_KEEP, 0, 0, FJ_UTF8_STRICT},
    };
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++)
        for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
            if (convs[i].target && (sets[k].flags & FJ_COMPAT))
                continue; /* a target has no compatible mode */
            fj_options o;
            fj_options_init(&o);
            o.profile = convs[i].profile;
            o.target = convs[i].target;
            o.flags = sets[k].flags;
            o.quotes = sets[k].quotes;
            o.punct = sets[k].punct;
            o.clean = sets[k].clean ? g_clean : NULL;
            o.utf8 = sets[k].utf8;
            const char *in = convs[i].traditional_input ? g_traditional : g_simplified;
            size_t len = convs[i].traditional_input ? sizeof g_traditional - 1
                                                    : sizeof g_simplified - 1;
            char what[160];
            snprintf(what, sizeof what, "%s%s, options %zu", convs[i].target ? "to " : "",
                     convs[i].profile ? convs[i].profile : convs[i].target, k);
            check_equivalent(what, &o, in, len);
        }
}

/* The stages really act: s2twp's own quotes, the boilerplate gone, and
 * FJ_COMPAT keeps the quotes. */
static void test_stages_act(void **state)
{
    (void)state;
    fj_options o;
    fj_options_init(&o);
    o.profile = "s2twp";
    o.clean = g_clean;
    fj_converter *c;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
    assert_string_equal(fj_converter_profile(c), "s2twp");
    char *out;
    size_t n;
    assert_int_equal(fj_convert_alloc(c, g_simplified, sizeof g_simplified - 1, &out, &n), FJ_OK);
    assert_non_null(strstr(out, "他說：「我們去印表機那裡取檔案。」"));
    assert_null(strstr(out, "biquge"));
    assert_null(strstr(out, "本章完"));
    fj_free(c, out);
    fj_converter_close(c);

    o.flags = FJ_COMPAT;
    o.clean = NULL;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
    assert_int_equal(fj_convert_alloc(c, g_simplified, sizeof g_simplified - 1, &out, &n), FJ_OK);
    assert_non_null(strstr(out, "“我們去印表機那裡取檔案。”"));
    assert_non_null(strstr(out, "biquge"));
    fj_free(c, out);
    fj_converter_close(c);
}

/* ---- strict UTF-8 ------------------------------------------------------------ */

static fj_converter *open_utf8(const char *profile, int utf8)
{
    fj_options o;
    fj_options_init(&o);
    o.profile = profile;
    o.utf8 = utf8;
    fj_converter *c;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
    return c;
}

static const struct {
    const char *name, *text;
    size_t len, offset; /* offset of the first byte that is not UTF-8 */
    int at_end;         /* the end of the input cuts a sequence short */
} g_bad[] = {
    {"invalid byte in the middle", "头发\xFF头发", 13, 6, 0},
    {"lone continuation byte", "ab\x80" "cd", 5, 2, 0},
    {"overlong two-byte", "ab\xC0\xAF" "cd", 6, 2, 0},
    {"overlong three-byte", "头\xE0\x80\xAF" "cd", 8, 3, 0},
    {"surrogate", "ab\xED\xA0\x80" "cd", 7, 2, 0},
    {"lead without continuation", "头发\xE5" "A", 8, 6, 0},
    {"above U+10FFFF", "x\xF4\x90\x80\x80", 5, 1, 0},
    {"cut at the end", "头发\xE5\x8F", 8, 6, 1},
    {"four-byte cut at the end", "头\xF0\x9F\x98", 6, 3, 1},
};

static void test_strict_offsets_one_shot(void **state)
{
    (void)state;
    const char *profiles[] = {"s2t", "s2twp", NULL};
    for (size_t p = 0; profiles[p]; p++) {
        fj_converter *c = open_utf8(profiles[p], FJ_UTF8_STRICT);
        for (size_t i = 0; i < sizeof g_bad / sizeof g_bad[0]; i++) {
            char buf[64];
            size_t n = 12345;
            assert_int_equal(fj_convert(c, g_bad[i].text, g_bad[i].len, buf, sizeof buf, &n),
                             FJ_ERR_INVALID_UTF8);
            if (n != g_bad[i].offset)
                fprintf(stderr, "%s: offset %zu, expected %zu\n", g_bad[i].name, n,
                        g_bad[i].offset);
            assert_int_equal(n, g_bad[i].offset);
            char *out = (char *)1;
            n = 12345;
            assert_int_equal(fj_convert_alloc(c, g_bad[i].text, g_bad[i].len, &out, &n),
                             FJ_ERR_INVALID_UTF8);
            assert_null(out);
            assert_int_equal(n, g_bad[i].offset);
        }
        /* Valid text, astral characters included, converts. */
        char *out;
        size_t n;
        assert_int_equal(fj_convert_alloc(c, "头发\xF0\x9F\x98\x80", 10, &out, &n), FJ_OK);
        assert_string_equal(out, "頭髮\xF0\x9F\x98\x80");
        fj_free(c, out);
        fj_converter_close(c);
    }
    assert_string_equal(fj_strerror(FJ_ERR_INVALID_UTF8), "input is not valid UTF-8");
}

/* Streamed in every piece size: the error comes from the feed holding the
 * bad byte (or from finish, for a cut sequence), with the offset; nothing
 * of that piece is written, and the stream stays failed. */
static void test_strict_offsets_stream(void **state)
{
    (void)state;
    fj_converter *c = open_utf8("s2t", FJ_UTF8_STRICT), *plain;
    assert_int_equal(fj_converter_open(g_dict, "s2t", 0, &plain, NULL), FJ_OK);
    for (size_t i = 0; i < sizeof g_bad / sizeof g_bad[0]; i++)
        for (size_t step = 1; step <= g_bad[i].len; step++) {
            tbuf out = {0};
            tb_add(&out, "", 0);
            fj_stream *s;
            assert_int_equal(fj_stream_new(c, tb_write, &out, &s), FJ_OK);
            fj_status st = FJ_OK;
            size_t off = 0;
            for (; off < g_bad[i].len && st == FJ_OK; off += step) {
                size_t n = g_bad[i].len - off < step ? g_bad[i].len - off : step;
                st = fj_stream_feed(s, g_bad[i].text + off, n);
                if (st != FJ_OK) /* the piece that holds the bad byte (or completes its sequence) */
                    assert_true(off + n > g_bad[i].offset);
            }
            if (g_bad[i].at_end) {
                assert_int_equal(st, FJ_OK);
                st = fj_stream_finish(s);
            }
            assert_int_equal(st, FJ_ERR_INVALID_UTF8);
            fj_error err;
            assert_int_equal(fj_stream_error(s, &err), FJ_ERR_INVALID_UTF8);
            assert_int_equal(err.code, FJ_ERR_INVALID_UTF8);
            if (err.offset != g_bad[i].offset)
                fprintf(stderr, "%s, pieces of %zu: offset %zu, expected %zu\n", g_bad[i].name,
                        step, err.offset, g_bad[i].offset);
            assert_int_equal(err.offset, g_bad[i].offset);
            char where[64];
            snprintf(where, sizeof where, "at byte %zu", g_bad[i].offset);
            assert_non_null(strstr(err.message, where));
            assert_true((strstr(err.message, "ends inside a character") != NULL) ==
                        g_bad[i].at_end);
            /* Failed for good (a finished stream is finished). */
            assert_int_equal(fj_stream_feed(s, "a", 1),
                             g_bad[i].at_end ? FJ_ERR_STREAM_STATE : FJ_ERR_INVALID_UTF8);
            if (!g_bad[i].at_end)
                assert_int_equal(fj_stream_finish(s), FJ_ERR_INVALID_UTF8);
            /* What was written comes from the bytes before the bad one. */
            char *before;
            size_t before_len;
            assert_int_equal(fj_convert_alloc(plain, g_bad[i].text, g_bad[i].offset, &before,
                                              &before_len),
                             FJ_OK);
            assert_true(out.len <= before_len);
            assert_memory_equal(out.p ? out.p : "", before, out.len);
            fj_free(plain, before);
            assert_int_equal(fj_stream_error(s, &err), FJ_ERR_INVALID_UTF8);
            assert_int_equal(err.offset, g_bad[i].offset);
            fj_stream_free(s);
            tb_free(&out);
        }
    fj_converter_close(plain);
    fj_converter_close(c);
}

/* A sequence split across pieces, in every way, is fine when it is whole. */
static void test_strict_sequences_across_feeds(void **state)
{
    (void)state;
    fj_converter *c = open_utf8("s2t", FJ_UTF8_STRICT);
    static const char text[] = "发\xF0\x9F\x98\x80" "发\xC3\xA9" "x";
    size_t len = sizeof text - 1;
    for (size_t a = 0; a <= len; a++)
        for (size_t b = a; b <= len; b++) {
            tbuf out = {0};
            tb_add(&out, "", 0);
            fj_stream *s;
            assert_int_equal(fj_stream_new(c, tb_write, &out, &s), FJ_OK);
            assert_int_equal(fj_stream_feed(s, text, a), FJ_OK);
            assert_int_equal(fj_stream_feed(s, text + a, b - a), FJ_OK);
            assert_int_equal(fj_stream_feed(s, text + b, len - b), FJ_OK);
            assert_int_equal(fj_stream_finish(s), FJ_OK);
            assert_string_equal(out.p, "發\xF0\x9F\x98\x80" "發\xC3\xA9" "x");
            fj_stream_free(s);
            tb_free(&out);
        }
    /* A carried lead that the next piece does not continue: the lead's offset. */
    fj_stream *s;
    tbuf out = {0};
    assert_int_equal(fj_stream_new(c, tb_write, &out, &s), FJ_OK);
    assert_int_equal(fj_stream_feed(s, "发\xF0\x9F", 5), FJ_OK);
    assert_int_equal(fj_stream_feed(s, "\x98", 1), FJ_OK);
    assert_int_equal(fj_stream_feed(s, "A", 1), FJ_ERR_INVALID_UTF8);
    fj_error err;
    assert_int_equal(fj_stream_error(s, &err), FJ_ERR_INVALID_UTF8);
    assert_int_equal(err.offset, 3);
    fj_stream_free(s);
    tb_free(&out);
    fj_converter_close(c);
}

/* RFC 3629, written out: the length of the valid sequence at s[i], 0 when
 * none starts there (*cut: a valid start that the end cuts short). */
static size_t ref_sequence(const unsigned char *s, size_t n, size_t i, int *cut)
{
    unsigned c = s[i];
    size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4                ? 4
                                                          : 0;
    unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    for (size_t k = 1; k < len; k++) {
        if (i + k >= n) {
            *cut = 1;
            return 0;
        }
        unsigned b = s[i + k];
        if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80)
            return 0;
    }
    return len;
}

/* Random mixes of characters of every length and stray bytes: the strict
 * converter fails exactly where the reference finds the first bad byte,
 * one-shot and in pieces, and passes valid text whole. */
static void test_strict_random(void **state)
{
    (void)state;
    static const char *const units[] = {"a", "\n", "\xC3\xA9", "发", "\xE0\xA4\x85", "\xED\x9F\xBF",
                                        "\xEF\xBF\xBF", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF"};
    fj_converter *c = open_utf8(NULL, FJ_UTF8_STRICT);
    uint64_t rng = 0x757466382D72ull;
    for (int round = 0; round < (t_quick() ? 300 : 3000); round++) {
        unsigned char text[64];
        size_t len = 0;
        while (len < 48) {
            if (t_below(&rng, 12) == 0) {
                text[len++] = (unsigned char)t_rand(&rng);
            } else {
                const char *u = units[t_below(&rng, sizeof units / sizeof units[0])];
                memcpy(text + len, u, strlen(u));
                len += strlen(u);
            }
        }
        if (t_below(&rng, 4) == 0)
            len -= t_below(&rng, 3); /* perhaps cut the last character */
        size_t bad = 0;
        int cut = 0;
        while (bad < len) {
            size_t k = ref_sequence(text, len, bad, &cut);
            if (!k)
                break;
            bad += k;
        }
        char out[128];
        size_t n;
        fj_status st = fj_convert(c, (const char *)text, len, out, sizeof out, &n);
        if (bad == len) {
            assert_int_equal(st, FJ_OK);
            assert_int_equal(n, len);
            assert_memory_equal(out, text, len);
        } else {
            assert_int_equal(st, FJ_ERR_INVALID_UTF8);
            assert_int_equal(n, bad);
        }
        size_t step = 1 + t_below(&rng, 7);
        fj_stream *s;
        tbuf sink = {0};
        assert_int_equal(fj_stream_new(c, tb_write, &sink, &s), FJ_OK);
        st = FJ_OK;
        for (size_t off = 0; off < len && st == FJ_OK; off += step)
            st = fj_stream_feed(s, (const char *)text + off, len - off < step ? len - off : step);
        if (st == FJ_OK)
            st = fj_stream_finish(s);
        fj_error err;
        assert_int_equal(st, bad == len ? FJ_OK : FJ_ERR_INVALID_UTF8);
        assert_int_equal(fj_stream_error(s, &err), st);
        if (bad < len)
            assert_int_equal(err.offset, bad);
        fj_stream_free(s);
        tb_free(&sink);
    }
    fj_converter_close(c);
}

/* FJ_UTF8_PASS: the same bytes pass through in place, as with a plain
 * converter. */
static void test_pass_keeps_bytes(void **state)
{
    (void)state;
    fj_options o;
    fj_options_init(&o);
    o.profile = "s2t";
    o.punct = FJ_PUNCT_FULLWIDTH; /* so that the converter has stages */
    o.utf8 = FJ_UTF8_PASS;
    for (size_t i = 0; i < sizeof g_bad / sizeof g_bad[0]; i++) {
        char what[80];
        snprintf(what, sizeof what, "pass: %s", g_bad[i].name);
        check_equivalent(what, &o, g_bad[i].text, g_bad[i].len);
    }
    fj_converter *c;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
    char *out;
    size_t n;
    assert_int_equal(fj_convert_alloc(c, "头发\xFF\xED\xA0\x80头发\xE5", 17, &out, &n), FJ_OK);
    assert_int_equal(n, 17);
    assert_memory_equal(out, "頭髮\xFF\xED\xA0\x80頭髮\xE5", 17);
    fj_free(c, out);
    fj_converter_close(c);
}

/* ---- the struct ----------------------------------------------------------------- */

static fj_status open_raw(const void *options, fj_error *err)
{
    fj_converter *c = (fj_converter *)1;
    fj_status st = fj_converter_open_options(g_dict, options, &c, err);
    if (st == FJ_OK)
        fj_converter_close(c);
    else
        assert_null(c);
    return st;
}

static void test_options_size(void **state)
{
    (void)state;
    fj_options o;
    fj_options_init(&o);
    assert_int_equal(o.size, sizeof o);
    assert_int_equal(o.quotes, FJ_QUOTES_PROFILE);
    assert_null(o.profile);
    assert_null(o.target);
    assert_null(o.clean);
    assert_int_equal(o.flags | o.punct | (unsigned)o.utf8, 0);

    /* An older caller's struct, up to punct: what lies past it is not
     * read (here garbage), and clean-up and the check are off. */
    union {
        fj_options o;
        unsigned char bytes[sizeof(fj_options) + 16];
    } u;
    memset(&u, 0xA5, sizeof u);
    u.o.size = offsetof(fj_options, clean);
    u.o.profile = "s2twp";
    u.o.target = NULL;
    u.o.flags = 0;
    u.o.quotes = FJ_QUOTES_PROFILE;
    u.o.punct = 0;
    fj_converter *c;
    fj_error err;
    assert_int_equal(fj_converter_open_options(g_dict, &u.o, &c, &err), FJ_OK);
    char *out;
    size_t n;
    static const char in[] = "“头发”\n天才一秒记住本站地址：www.biquge.com\n\xFF";
    assert_int_equal(fj_convert_alloc(c, in, sizeof in - 1, &out, &n), FJ_OK);
    assert_string_equal(out, "「頭髮」\n天才一秒記住本站地址：www.biquge.com\n\xFF");
    fj_free(c, out);
    fj_converter_close(c);

    /* Only the first four fields: quotes take their default too. */
    u.o.size = offsetof(fj_options, flags) + sizeof(unsigned);
    assert_int_equal(fj_converter_open_options(g_dict, &u.o, &c, &err), FJ_OK);
    assert_int_equal(fj_convert_alloc(c, in, 12, &out, &n), FJ_OK);
    assert_string_equal(out, "「頭髮」");
    fj_free(c, out);
    fj_converter_close(c);

    /* Too small, or cutting a field. */
    u.o.size = 0;
    assert_int_equal(open_raw(&u.o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "size"));
    u.o.size = offsetof(fj_options, flags);
    assert_int_equal(open_raw(&u.o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "size"));
    u.o.size = offsetof(fj_options, quotes) + 2;
    assert_int_equal(open_raw(&u.o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "quotes"));

    /* A newer caller's struct: zeros past ours are its defaults; anything
     * else is an option this library does not have. */
    fj_options_init(&u.o);
    memset(u.bytes + sizeof(fj_options), 0, 16);
    u.o.size = sizeof u;
    u.o.profile = "s2t";
    assert_int_equal(open_raw(&u.o, &err), FJ_OK);
    u.bytes[sizeof(fj_options) + 9] = 1;
    assert_int_equal(open_raw(&u.o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "past"));
}

static void test_options_rejected(void **state)
{
    (void)state;
    fj_options o;
    fj_error err;
    fj_options_init(&o);
    o.profile = "s2t";
    o.flags = 1u << 9;
    assert_int_equal(open_raw(&o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "flags"));
    o.flags = FJ_REPAIR_CAREFUL | FJ_REPAIR_OFF;
    assert_int_equal(open_raw(&o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "repair level"));
    o.flags = 0;
    o.target = "tw";
    assert_int_equal(open_raw(&o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "both a profile"));
    o.target = NULL;
    o.quotes = 3;
    assert_int_equal(open_raw(&o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "quotes"));
    o.quotes = -2;
    assert_int_equal(open_raw(&o, &err), FJ_ERR_INVALID_ARGUMENT);
    o.quotes = FJ_QUOTES_PROFILE;
    o.punct = 1u << 4;
    assert_int_equal(open_raw(&o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "punct"));
    o.punct = 0;
    o.utf8 = 2;
    assert_int_equal(open_raw(&o, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "utf8"));
    o.utf8 = FJ_UTF8_PASS;
    assert_int_equal(open_raw(&o, &err), FJ_OK);
    /* The open calls' own errors come through. */
    o.profile = "nosuch";
    assert_int_equal(open_raw(&o, &err), FJ_ERR_UNKNOWN_PROFILE);
    o.profile = NULL;
    o.target = "xx";
    assert_int_equal(open_raw(&o, &err), FJ_ERR_UNKNOWN_PROFILE);
    fj_converter *c;
    assert_int_equal(fj_converter_open_options(g_dict, NULL, &c, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_converter_open_options(NULL, &o, &c, &err), FJ_ERR_INVALID_ARGUMENT);
}

/* ---- no profile --------------------------------------------------------------- */

static void test_identity(void **state)
{
    (void)state;
    fj_options o;
    fj_options_init(&o);
    o.clean = g_clean;
    check_equivalent("clean only", &o, g_simplified, sizeof g_simplified - 1);
    check_equivalent("clean only, Traditional", &o, g_traditional, sizeof g_traditional - 1);
    fj_converter *c;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
    assert_null(fj_converter_profile(c));
    char *out;
    size_t n;
    static const char in[] = "头发“好”\n本章未完，请点击下一页继续阅读\n\xFFok";
    assert_int_equal(fj_convert_alloc(c, in, sizeof in - 1, &out, &n), FJ_OK);
    assert_string_equal(out, "头发“好”\n\xFFok"); /* quotes kept: no profile has a style */
    fj_free(c, out);
    fj_converter_close(c);

    /* Nothing at all: the bytes as they are. */
    fj_options_init(&o);
    check_equivalent("nothing", &o, in, sizeof in - 1);
    /* Typography alone. */
    o.quotes = FJ_QUOTES_CORNER;
    o.punct = FJ_PUNCT_ELLIPSIS;
    check_equivalent("quotes only", &o, g_simplified, sizeof g_simplified - 1);
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
    assert_int_equal(fj_convert_alloc(c, in, 15, &out, &n), FJ_OK);
    assert_string_equal(out, "头发「好」");
    fj_free(c, out);
    fj_converter_close(c);
}

/* ---- the clean-up report ---------------------------------------------------------- */

typedef struct removals {
    tbuf log;
    int fail; /* stop at the first */
} removals;

static int log_removal(void *ctx, const fj_clean_removal *r)
{
    removals *l = ctx;
    char head[80];
    snprintf(head, sizeof head, "%llu:%llu:%d:", r->line, r->column, r->whole_line);
    tb_adds(&l->log, head);
    tb_add(&l->log, r->text, r->len);
    tb_adds(&l->log, "\n");
    return l->fail;
}

static void test_clean_report(void **state)
{
    (void)state;
    const char *in = g_simplified;
    size_t len = sizeof g_simplified - 1;
    /* What fj_clean_stream reports on the same text. */
    removals exp = {{0}, 0};
    tbuf sink = {0};
    fj_clean_stream *cs;
    assert_int_equal(fj_clean_stream_new(g_clean, tb_write, &sink, log_removal, &exp, &cs), FJ_OK);
    assert_int_equal(fj_clean_stream_feed(cs, in, len), FJ_OK);
    assert_int_equal(fj_clean_stream_finish(cs), FJ_OK);
    fj_clean_stream_free(cs);
    tb_free(&sink);
    assert_non_null(strstr(exp.log.p, "3:1:1:天才一秒记住本站地址：www.biquge.com"));
    assert_non_null(strstr(exp.log.p, "5:11:0:，本章未完，请点击下一页继续阅读"));
    assert_non_null(strstr(exp.log.p, "7:1:1:（本章完）"));

    fj_options o;
    fj_options_init(&o);
    o.profile = "s2twp";
    o.clean = g_clean;
    fj_converter *c;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
    for (size_t step = 1; step <= len; step = step * 3 + 1) {
        removals got = {{0}, 0};
        tbuf out = {0};
        fj_stream *s;
        assert_int_equal(fj_stream_new(c, tb_write, &out, &s), FJ_OK);
        assert_int_equal(fj_stream_set_clean_report(s, log_removal, &got), FJ_OK);
        for (size_t off = 0; off < len; off += step)
            assert_int_equal(fj_stream_feed(s, in + off, len - off < step ? len - off : step), FJ_OK);
        assert_int_equal(fj_stream_set_clean_report(s, NULL, NULL), FJ_ERR_STREAM_STATE);
        assert_int_equal(fj_stream_finish(s), FJ_OK);
        fj_stream_free(s);
        assert_string_equal(got.log.p, exp.log.p);
        tb_free(&got.log);
        tb_free(&out);
    }
    /* One stream's report is not another's. */
    fj_stream *s1, *s2;
    removals one = {{0}, 0};
    tbuf o1 = {0}, o2 = {0};
    assert_int_equal(fj_stream_new(c, tb_write, &o1, &s1), FJ_OK);
    assert_int_equal(fj_stream_new(c, tb_write, &o2, &s2), FJ_OK);
    assert_int_equal(fj_stream_set_clean_report(s1, log_removal, &one), FJ_OK);
    assert_int_equal(fj_stream_feed(s2, in, len), FJ_OK);
    assert_int_equal(fj_stream_finish(s2), FJ_OK);
    assert_null(one.log.p);
    /* A report that stops the stream. */
    one.fail = 1;
    assert_int_equal(fj_stream_feed(s1, in, len), FJ_ERR_CALLBACK);
    fj_error err;
    assert_int_equal(fj_stream_error(s1, &err), FJ_ERR_CALLBACK);
    fj_stream_free(s1);
    fj_stream_free(s2);
    tb_free(&one.log);
    tb_free(&o1);
    tb_free(&o2);
    fj_converter_close(c);
    tb_free(&exp.log);

    /* Without clean-up there is nothing to report. */
    o.clean = NULL;
    o.punct = FJ_PUNCT_ELLIPSIS;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
    assert_int_equal(fj_stream_new(c, tb_write, &o1, &s1), FJ_OK);
    assert_int_equal(fj_stream_set_clean_report(s1, log_removal, &one), FJ_ERR_INVALID_ARGUMENT);
    fj_stream_free(s1);
    fj_converter_close(c);
    assert_int_equal(fj_stream_set_clean_report(NULL, log_removal, &one), FJ_ERR_INVALID_ARGUMENT);
}

/* The caller's write callback failing, at any stage's end. */
static int refuse(void *ctx, const char *data, size_t len)
{
    (void)ctx, (void)data, (void)len;
    return 1;
}

static void test_write_failure(void **state)
{
    (void)state;
    fj_options o;
    fj_options_init(&o);
    o.profile = "s2twp";
    o.clean = g_clean;
    o.punct = FJ_PUNCT_ELLIPSIS;
    for (int stage = 0; stage < 3; stage++) {
        fj_converter *c;
        assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
        fj_stream *s;
        assert_int_equal(fj_stream_new(c, refuse, NULL, &s), FJ_OK);
        fj_status st = fj_stream_feed(s, g_simplified, sizeof g_simplified - 1);
        if (st == FJ_OK)
            st = fj_stream_finish(s);
        assert_int_equal(st, FJ_ERR_CALLBACK);
        assert_int_equal(fj_stream_error(s, NULL), FJ_ERR_CALLBACK);
        fj_stream_free(s);
        fj_converter_close(c);
        if (stage == 0)
            o.clean = NULL;
        else
            o.profile = NULL;
    }
}

/* ---- allocation failures ------------------------------------------------------------ */

typedef struct counting {
    size_t calls, fail_at, live, fails;
} counting;

static void *cnt_alloc(void *ctx, size_t n)
{
    counting *k = ctx;
    if (++k->calls == k->fail_at) {
        k->fails++;
        return NULL;
    }
    void *p = malloc(n ? n : 1);
    k->live += p != NULL;
    return p;
}

static void *cnt_realloc(void *ctx, void *p, size_t old_n, size_t new_n)
{
    counting *k = ctx;
    (void)old_n;
    if (++k->calls == k->fail_at) {
        k->fails++;
        return NULL;
    }
    void *q = realloc(p, new_n ? new_n : 1);
    k->live += q && !p;
    return q;
}

static void cnt_free(void *ctx, void *p, size_t n)
{
    counting *k = ctx;
    (void)n;
    if (p) {
        k->live--;
        free(p);
    }
}

/* Every allocation of open, one-shot and streaming fails in turn: each
 * call says FJ_ERR_NOMEM, and closing leaves nothing allocated. */
static void test_allocation_failures(void **state)
{
    (void)state;
    counting k = {0, 0, 0, 0};
    fj_allocator a = {cnt_alloc, cnt_realloc, cnt_free, &k};
    fj_dict_options dopt = {sizeof dopt, &a};
    fj_dict *d;
    fj_error err;
    assert_int_equal(fj_dict_open(t_dict_path(), &dopt, &d, &err), FJ_OK);
    fj_clean *clean;
    assert_int_equal(fj_clean_open(d, NULL, 0, 0, &clean, &err), FJ_OK);
    size_t base_live = k.live;
    const char *in = g_simplified;
    size_t len = sizeof g_simplified - 1;
    tbuf exp = {0};
    fj_options o;
    fj_options_init(&o);
    o.profile = "s2twp";
    o.clean = g_clean;
    o.punct = FJ_PUNCT_FULLWIDTH;
    o.utf8 = FJ_UTF8_STRICT;
    compose_by_hand(&o, in, len, &exp);
    o.clean = clean;
    const char *profiles[] = {"s2twp", NULL};
    for (size_t p = 0; p < 2; p++) {
        o.profile = profiles[p];
        if (!o.profile) {
            tb_free(&exp);
            fj_options ref = o;
            ref.clean = g_clean;
            compose_by_hand(&ref, in, len, &exp);
        }
        size_t nomem = 0;
        for (size_t n = 1;; n++) {
            k.calls = 0;
            k.fails = 0;
            k.fail_at = n;
            fj_converter *c = NULL;
            fj_status st = fj_converter_open_options(d, &o, &c, &err);
            if (st == FJ_OK) {
                char *out = NULL;
                size_t out_len;
                st = fj_convert_alloc(c, in, len, &out, &out_len);
                if (st == FJ_OK) {
                    assert_int_equal(out_len, exp.len);
                    assert_memory_equal(out, exp.p, exp.len);
                    fj_free(c, out);
                } else {
                    assert_null(out);
                }
                char buf[4096];
                fj_status st2 = fj_convert(c, in, len, buf, sizeof buf, &out_len);
                if (st2 == FJ_OK)
                    assert_memory_equal(buf, exp.p, exp.len);
                st = st != FJ_OK ? st : st2;
                tbuf sout = {0};
                fj_stream *s = NULL;
                fj_status st3 = fj_stream_new(c, tb_write, &sout, &s);
                for (size_t off = 0; st3 == FJ_OK && off < len; off += 50)
                    st3 = fj_stream_feed(s, in + off, len - off < 50 ? len - off : 50);
                if (st3 == FJ_OK)
                    st3 = fj_stream_finish(s);
                if (st3 == FJ_OK) {
                    assert_int_equal(sout.len, exp.len);
                    assert_memory_equal(sout.p, exp.p, exp.len);
                } else if (s) {
                    assert_int_equal(fj_stream_error(s, NULL), st3);
                }
                fj_stream_free(s);
                tb_free(&sout);
                st = st != FJ_OK ? st : st3;
                fj_converter_close(c);
            } else {
                assert_null(c);
            }
            assert_int_equal(k.live, base_live);
            if (k.fails == 0) {
                assert_int_equal(st, FJ_OK);
                break;
            }
            assert_int_equal(st, FJ_ERR_NOMEM);
            nomem++;
        }
        assert_true(nomem >= 3);
    }
    k.fail_at = 0;
    tb_free(&exp);
    fj_clean_close(clean);
    fj_dict_close(d);
    assert_int_equal(k.live, 0);
}

/* ---- threads: one converter, many streams ------------------------------------------ */

/* Two streams of one converter, fed in turns, give each its own output. */
static void test_streams_independent(void **state)
{
    (void)state;
    fj_options o;
    fj_options_init(&o);
    o.profile = "s2twp";
    o.clean = g_clean;
    o.punct = FJ_PUNCT_ELLIPSIS;
    o.utf8 = FJ_UTF8_STRICT;
    tbuf e1 = {0}, e2 = {0};
    compose_by_hand(&o, g_simplified, sizeof g_simplified - 1, &e1);
    compose_by_hand(&o, g_traditional, sizeof g_traditional - 1, &e2);
    fj_converter *c;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, NULL), FJ_OK);
    tbuf o1 = {0}, o2 = {0};
    tb_add(&o1, "", 0);
    tb_add(&o2, "", 0);
    fj_stream *s1, *s2;
    assert_int_equal(fj_stream_new(c, tb_write, &o1, &s1), FJ_OK);
    assert_int_equal(fj_stream_new(c, tb_write, &o2, &s2), FJ_OK);
    size_t l1 = sizeof g_simplified - 1, l2 = sizeof g_traditional - 1;
    for (size_t off = 0; off < l1 || off < l2; off += 5) {
        if (off < l1)
            assert_int_equal(fj_stream_feed(s1, g_simplified + off, l1 - off < 5 ? l1 - off : 5), FJ_OK);
        if (off < l2)
            assert_int_equal(fj_stream_feed(s2, g_traditional + off, l2 - off < 5 ? l2 - off : 5), FJ_OK);
    }
    assert_int_equal(fj_stream_finish(s1), FJ_OK);
    assert_int_equal(fj_stream_finish(s2), FJ_OK);
    assert_same("first stream", &o1, &e1);
    assert_same("second stream", &o2, &e2);
    fj_stream_free(s1);
    fj_stream_free(s2);
    fj_converter_close(c);
    tb_free(&o1);
    tb_free(&o2);
    tb_free(&e1);
    tb_free(&e2);
}

/* A plain converter's stream also tells of its failure. */
static void test_plain_stream_error(void **state)
{
    (void)state;
    fj_converter *c;
    assert_int_equal(fj_converter_open(g_dict, "s2t", 0, &c, NULL), FJ_OK);
    fj_stream *s;
    assert_int_equal(fj_stream_new(c, refuse, NULL, &s), FJ_OK);
    fj_error err;
    assert_int_equal(fj_stream_error(s, &err), FJ_OK);
    assert_int_equal(err.code, FJ_OK);
    fj_status st = fj_stream_feed(s, g_simplified, sizeof g_simplified - 1);
    if (st == FJ_OK)
        st = fj_stream_finish(s);
    assert_int_equal(st, FJ_ERR_CALLBACK);
    assert_int_equal(fj_stream_error(s, &err), FJ_ERR_CALLBACK);
    assert_string_equal(err.message, fj_strerror(FJ_ERR_CALLBACK));
    assert_int_equal(fj_stream_set_clean_report(s, log_removal, NULL), FJ_ERR_INVALID_ARGUMENT);
    fj_stream_free(s);
    fj_converter_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equivalent_to_composition),
        cmocka_unit_test(test_stages_act),
        cmocka_unit_test(test_strict_offsets_one_shot),
        cmocka_unit_test(test_strict_offsets_stream),
        cmocka_unit_test(test_strict_sequences_across_feeds),
        cmocka_unit_test(test_strict_random),
        cmocka_unit_test(test_pass_keeps_bytes),
        cmocka_unit_test(test_options_size),
        cmocka_unit_test(test_options_rejected),
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_clean_report),
        cmocka_unit_test(test_write_failure),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_streams_independent),
        cmocka_unit_test(test_plain_stream_error),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
