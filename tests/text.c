/* Unit tests (cmocka) for the text tools beside conversion: script
 * detection (fj_detect) and boilerplate removal (fj_clean_*). The label
 * and drop/keep cases themselves are in tests/cases/detect.tsv and
 * clean.tsv (and ../shared/cases/), run by tests/cases.c and tests/run.sh.
 *
 * Environment: FANJIAN_DICT, FANJIAN_TEST_QUICK, FANJIAN_TEST_SEED. */
#include "testutil.h"

static fj_dict *g_dict;
static fj_clean *g_clean; /* the default rules */

static int group_setup(void **state)
{
    (void)state;
    fj_error err;
    if (fj_dict_open(t_dict_path(), NULL, &g_dict, &err) != FJ_OK) {
        fprintf(stderr, "text: cannot open %s: %s\n", t_dict_path(), err.message);
        return -1;
    }
    if (fj_clean_open(g_dict, NULL, 0, 0, &g_clean, &err) != FJ_OK) {
        fprintf(stderr, "text: fj_clean_open: %s\n", err.message);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    fj_clean_close(g_clean);
    fj_dict_close(g_dict);
    return 0;
}

static fj_detection detect(const char *text, fj_script_span *spans, size_t cap)
{
    fj_detection r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    r.spans = spans;
    r.span_capacity = cap;
    assert_int_equal(fj_detect(g_dict, text, strlen(text), &r), FJ_OK);
    return r;
}

/* The text of a span. */
static void assert_span(const char *text, const fj_script_span *s, const char *exp,
                        fj_script script)
{
    size_t n = strlen(exp);
    if (s->length != n || memcmp(text + s->offset, exp, n) != 0)
        fail_msg("span [%zu, +%zu) is \"%.*s\", expected \"%s\"", s->offset, s->length,
                 (int)s->length, text + s->offset, exp);
    assert_int_equal(s->script, script);
}

/* ---- detection ---------------------------------------------------------------- */

static void test_detect_arguments(void **state)
{
    (void)state;
    fj_detection r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    assert_int_equal(fj_detect(NULL, "中", 3, &r), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_detect(g_dict, "中", 3, NULL), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_detect(g_dict, NULL, 3, &r), FJ_ERR_INVALID_ARGUMENT);
    r.span_capacity = 4; /* with no array */
    assert_int_equal(fj_detect(g_dict, "中", 3, &r), FJ_ERR_INVALID_ARGUMENT);
    r.span_capacity = 0;
    r.size = 0; /* a caller that did not set the size */
    assert_int_equal(fj_detect(g_dict, "中", 3, &r), FJ_ERR_INVALID_ARGUMENT);
    r.size = sizeof r;
    assert_int_equal(fj_detect(g_dict, NULL, 0, &r), FJ_OK);
    assert_int_equal(r.script, FJ_SCRIPT_NONE);
    assert_true(r.confidence == 1.0);

    assert_string_equal(fj_script_name(FJ_SCRIPT_NONE), "none");
    assert_string_equal(fj_script_name(FJ_SCRIPT_SIMPLIFIED), "simplified");
    assert_string_equal(fj_script_name(FJ_SCRIPT_TRADITIONAL), "traditional");
    assert_string_equal(fj_script_name(FJ_SCRIPT_BOTH), "both");
    assert_string_equal(fj_script_name(FJ_SCRIPT_MIXED), "mixed");
    assert_non_null(fj_script_name((fj_script)99));
}

static void test_detect_counts(void **state)
{
    (void)state;
    /* 发 simplified-only, 發 traditional-only, 中 both; invalid bytes skipped */
    fj_detection r = detect("\xff" "发中發\xe4\xb8" "abc 发", NULL, 0);
    assert_int_equal(r.han, 4);
    assert_int_equal(r.simplified, 2);
    assert_int_equal(r.traditional, 1);
    assert_int_equal(r.script, FJ_SCRIPT_SIMPLIFIED); /* 1 of 3: a stray */
    /* characters that convert but also map to themselves are in both scripts */
    r = detect("干里只乾後", NULL, 0);
    assert_int_equal(r.simplified, 0);
    assert_int_equal(r.traditional, 1); /* 後 */
    /* the old forms the tables leave out */
    r = detect("衹竝", NULL, 0);
    assert_int_equal(r.traditional, 2);
}

static void test_detect_confidence(void **state)
{
    (void)state;
    const char *clean_t = "他們說這裡的風景很美麗，我們決定明天再來。可是天氣預報說會下雨。";
    const char *stray_t = "他們說這裡的風景很美麗，我們決定明天再來。可是天氣预報說會下雨。";
    fj_detection a = detect(clean_t, NULL, 0), b = detect(stray_t, NULL, 0);
    assert_int_equal(a.script, FJ_SCRIPT_TRADITIONAL);
    assert_int_equal(b.script, FJ_SCRIPT_TRADITIONAL);
    assert_true(a.confidence > 0.99 && a.confidence <= 1.0);
    assert_true(b.confidence < a.confidence && b.confidence > 0.5);
    /* more evidence, more confidence */
    fj_detection one = detect("這", NULL, 0), many = detect("這個問題", NULL, 0);
    assert_true(one.confidence < many.confidence);
    fj_detection short_both = detect("中文", NULL, 0), long_both = detect("山上有一只羊，羊吃草。", NULL, 0);
    assert_int_equal(long_both.script, FJ_SCRIPT_BOTH);
    assert_true(short_both.confidence < long_both.confidence);
    assert_true(long_both.confidence > 0 && long_both.confidence < 1);
    /* the mixed threshold: two in twenty is mixed, two in twenty-one is not */
    tbuf t = {0};
    for (int i = 0; i < 18; i++)
        tb_adds(&t, "這");
    tb_adds(&t, "这这");
    fj_detection m = detect(t.p, NULL, 0);
    assert_int_equal(m.script, FJ_SCRIPT_MIXED);
    assert_true(m.confidence > 0 && m.confidence <= 1);
    tb_adds(&t, "這");
    m = detect(t.p, NULL, 0);
    assert_int_equal(m.script, FJ_SCRIPT_TRADITIONAL);
    tb_free(&t);
}

static void test_detect_spans(void **state)
{
    (void)state;
    fj_script_span sp[8];
    const char *t1 = "她说：「這是我們的家。」他点点头，说这里真好。";
    fj_detection r = detect(t1, sp, 8);
    assert_int_equal(r.script, FJ_SCRIPT_MIXED);
    assert_int_equal(r.span_count, 1);
    assert_span(t1, &sp[0], "「這是我們的家。", FJ_SCRIPT_TRADITIONAL);

    /* a clause with neither script between two minority clauses joins them */
    const char *t2 = "我们都说简体字。這個，好的，這個。我们还说简体。";
    r = detect(t2, sp, 8);
    assert_int_equal(r.span_count, 1);
    assert_span(t2, &sp[0], "這個，好的，這個。", FJ_SCRIPT_TRADITIONAL);

    /* spans never cross a line break, and leave out leading white space */
    const char *t3 = "这是简体，说话，还有这个。\n  這是繁體。\r\n這個說話。";
    r = detect(t3, sp, 8);
    assert_int_equal(r.span_count, 2);
    assert_span(t3, &sp[0], "這是繁體。", FJ_SCRIPT_TRADITIONAL);
    assert_span(t3, &sp[1], "這個說話。", FJ_SCRIPT_TRADITIONAL);

    /* a stray character in a clause of the majority makes no span; a clause
     * of its own does */
    r = detect("他們說這裡的風景很美麗，天氣预報說會下雨。", sp, 8);
    assert_int_equal(r.span_count, 0);
    const char *t4 = "他們說這裡的風景很美麗，预定，天氣說會下雨。";
    r = detect(t4, sp, 8);
    assert_int_equal(r.script, FJ_SCRIPT_TRADITIONAL);
    assert_int_equal(r.span_count, 1);
    assert_span(t4, &sp[0], "预定，", FJ_SCRIPT_SIMPLIFIED);

    /* no spans without both kinds */
    r = detect("这是简体。", sp, 8);
    assert_int_equal(r.span_count, 0);
}

static void test_detect_span_capacity(void **state)
{
    (void)state;
    tbuf t = {0};
    for (int i = 0; i < 10; i++)
        tb_adds(&t, "我们说话，這個。");
    fj_detection r = detect(t.p, NULL, 0);
    assert_int_equal(r.span_count, 10);
    fj_script_span sp[4];
    memset(sp, 0xAB, sizeof sp);
    r = detect(t.p, sp, 3);
    assert_int_equal(r.span_count, 10);
    for (int i = 0; i < 3; i++)
        assert_span(t.p, &sp[i], "這個。", FJ_SCRIPT_TRADITIONAL);
    const unsigned char *untouched = (const unsigned char *)&sp[3];
    for (size_t i = 0; i < sizeof sp[3]; i++)
        assert_int_equal(untouched[i], 0xAB);
    /* on a tie the script that comes first is the majority */
    r = detect("我们说话，這個說。", sp, 4);
    assert_int_equal(r.simplified, 3);
    assert_int_equal(r.traditional, 3);
    assert_int_equal(r.span_count, 1);
    assert_int_equal(sp[0].script, FJ_SCRIPT_TRADITIONAL);
    tb_free(&t);
}

/* The label of len bytes (not NUL-terminated: binary data has NULs). */
static fj_script detect_bytes(const char *data, size_t len)
{
    fj_detection r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    assert_int_equal(fj_detect(g_dict, data, len, &r), FJ_OK);
    if (r.script == FJ_SCRIPT_BINARY) { /* nothing else is reported for binary */
        assert_int_equal(r.han, 0);
        assert_int_equal(r.span_count, 0);
        assert_true(r.confidence == 1.0);
    }
    return r.script;
}

static void test_detect_binary(void **state)
{
    (void)state;
    assert_string_equal(fj_script_name(FJ_SCRIPT_BINARY), "binary");
    /* A PNG's signature and header chunk, then bytes that read as Han. */
    static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0\0\0\x01\0\x08\x06\0\0\0"
                              "\x5c\x72\xa8\x66中文字中文字";
    assert_int_equal(detect_bytes(png, sizeof png - 1), FJ_SCRIPT_BINARY);
    /* An ELF header with a string table that holds Chinese. */
    static const char elf[] = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0\x3e\0\x01\0\0\0"
                              "头发这个问题";
    assert_int_equal(detect_bytes(elf, sizeof elf - 1), FJ_SCRIPT_BINARY);
    size_t len = 0;
    char *ls = t_read_file("/bin/ls", &len);
    if (ls) { /* the real thing, where there is one */
        assert_int_equal(detect_bytes(ls, len), FJ_SCRIPT_BINARY);
        free(ls);
    }
    /* Random bytes without a NUL: binary by their share of bytes that are
     * not text alone. */
    char noise[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof noise; i++) {
        x = x * 1103515245u + 12345u;
        noise[i] = (char)(x >> 23 & 0xFF);
        if (noise[i] == 0)
            noise[i] = '\x01';
    }
    assert_int_equal(detect_bytes(noise, sizeof noise), FJ_SCRIPT_BINARY);
    /* Control bytes text does not use, half of a text. */
    tbuf c = {0};
    for (int i = 0; i < 20; i++)
        tb_adds(&c, "\x01发\x02\x03");
    assert_int_equal(detect_bytes(c.p, c.len), FJ_SCRIPT_BINARY);
    tb_free(&c);

    /* Text: one bad byte, a few stray ones in a short text, the control
     * characters text uses (tab, line breaks, form feed, terminal colours). */
    assert_int_equal(detect_bytes("这是简体\x80中文。", 17), FJ_SCRIPT_SIMPLIFIED);
    assert_int_equal(detect_bytes("\xff\xfe这是\x80", 9), FJ_SCRIPT_SIMPLIFIED);
    const char *controls = "\x1b[1m这是\x1b[0m\t简体\r\n\f\v中文。\n";
    assert_int_equal(detect_bytes(controls, strlen(controls)), FJ_SCRIPT_SIMPLIFIED);
    /* Only the first 8 KiB decide: a NUL after them does not make binary,
     * and a character the block's end cuts is not a bad byte. */
    tbuf t = {0};
    tb_adds(&t, "x");
    while (t.len < 9000)
        tb_adds(&t, "這是繁體。");
    tb_add(&t, "\0\0\0", 3);
    assert_int_equal(detect_bytes(t.p, t.len), FJ_SCRIPT_TRADITIONAL);
    tb_free(&t);
    /* UTF-16 must be decoded first (the CLI does): decoded, it is text. */
    assert_int_equal(detect_bytes("這是繁體", 12), FJ_SCRIPT_TRADITIONAL);
}

/* An allocator that counts, and fails when told to. */
typedef struct counting {
    size_t live, peak, calls;
    int fail;    /* every allocation fails */
    int limited; /* allocations fail once `budget` is spent */
    size_t budget;
} counting;

static int c_refuse(counting *c)
{
    if (c->fail)
        return 1;
    if (c->limited) {
        if (c->budget == 0)
            return 1;
        c->budget--;
    }
    return 0;
}

static void *c_alloc(void *ctx, size_t n)
{
    counting *c = ctx;
    if (c_refuse(c))
        return NULL;
    c->calls++;
    c->live += n;
    if (c->live > c->peak)
        c->peak = c->live;
    return malloc(n);
}

static void *c_realloc(void *ctx, void *p, size_t old_n, size_t new_n)
{
    counting *c = ctx;
    if (c_refuse(c))
        return NULL;
    c->calls++;
    c->live += new_n - old_n;
    if (c->live > c->peak)
        c->peak = c->live;
    return realloc(p, new_n);
}

static void c_free(void *ctx, void *p, size_t n)
{
    counting *c = ctx;
    if (p)
        c->live -= n;
    free(p);
}

static void test_allocator(void **state)
{
    (void)state;
    counting cnt = {0, 0, 0, 0, 0, 0};
    fj_allocator a = {c_alloc, c_realloc, c_free, &cnt};
    fj_dict_options opt = {sizeof opt, &a};
    fj_dict *d;
    fj_error err;
    assert_int_equal(fj_dict_open(t_dict_path(), &opt, &d, &err), FJ_OK);
    size_t base = cnt.live;

    fj_detection r;
    memset(&r, 0, sizeof r);

    r.size = sizeof r;
    assert_int_equal(fj_detect(d, "这是", 6, &r), FJ_OK);
    assert_int_equal(cnt.live, base);
    assert_true(cnt.peak - base < 64 * 1024);
    cnt.fail = 1;
    assert_int_equal(fj_detect(d, "这是", 6, &r), FJ_ERR_NOMEM);
    fj_clean *c = NULL;
    assert_int_equal(fj_clean_open(d, NULL, 0, 0, &c, &err), FJ_ERR_NOMEM);
    assert_int_equal(err.code, FJ_ERR_NOMEM);
    assert_null(c);
    assert_int_equal(cnt.live, base);

    /* every allocation of fj_clean_open can fail, and leaks nothing */
    cnt.fail = 0;
    size_t before = cnt.calls;
    assert_int_equal(fj_clean_open(d, NULL, 0, 0, &c, &err), FJ_OK);
    size_t needed = cnt.calls - before;
    fj_clean_close(c);
    assert_int_equal(cnt.live, base);
    for (size_t k = 0; k < needed; k++) {
        cnt.limited = 1;
        cnt.budget = k;
        c = NULL;
        assert_int_equal(fj_clean_open(d, NULL, 0, 0, &c, &err), FJ_ERR_NOMEM);
        assert_null(c);
        assert_int_equal(cnt.live, base);
    }
    cnt.limited = 0;

    /* the stream: the 64 KiB it holds of a line and room for spans; none while running */
    cnt.fail = 0;
    assert_int_equal(fj_clean_open(d, NULL, 0, 0, &c, &err), FJ_OK);
    size_t opened = cnt.live;
    tbuf out = {0};
    fj_clean_stream *s;
    assert_int_equal(fj_clean_stream_new(c, tb_write, &out, NULL, NULL, &s), FJ_OK);
    size_t calls = cnt.calls;
    size_t stream_bytes = cnt.live - opened;
    assert_true(stream_bytes < 72 * 1024);
    char big[65536];
    memset(big, 'x', sizeof big);
    for (int i = 0; i < 64; i++) /* a 4 MiB line */
        assert_int_equal(fj_clean_stream_feed(s, big, sizeof big), FJ_OK);
    assert_int_equal(fj_clean_stream_feed(s, "\n（本章完）\n", strlen("\n（本章完）\n")), FJ_OK);
    assert_int_equal(fj_clean_stream_finish(s), FJ_OK);
    assert_int_equal(cnt.calls, calls);
    assert_int_equal(out.len, 64 * sizeof big + 1);
    fj_clean_stream_free(s);
    fj_clean_close(c);
    tb_free(&out);
    assert_int_equal(cnt.live, base);
    cnt.fail = 1;
    fj_dict_close(d);
    assert_int_equal(cnt.live, 0);
}

/* ---- rules ---------------------------------------------------------------------- */

/* Opens `rules` alone (no defaults); fails the test on an error. */
static fj_clean *open_rules(const char *rules, const fj_dict *dict)
{
    fj_clean_rules r = {"test", rules, strlen(rules)};
    fj_clean *c = NULL;
    fj_error err;
    if (fj_clean_open(dict, &r, 1, FJ_CLEAN_NO_DEFAULTS, &c, &err) != FJ_OK)
        fail_msg("rules do not open: %s", err.message);
    return c;
}

static int drops(const fj_clean *c, const char *line)
{
    return fj_clean_line(c, line, strlen(line), NULL);
}

/* What remains of line[0..len) once fj_clean_find's spans are cut out
 * ("" when it goes whole), with its line ending; appended to out. */
static void clean_into(const fj_clean *c, const char *line, size_t len, tbuf *out)
{
    fj_clean_span spans[256];
    int whole = 0;
    size_t n = fj_clean_find(c, line, len, spans, 256, &whole);
    assert_true(n <= 256);
    if (whole)
        return;
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        tb_add(out, line + pos, spans[i].start - pos);
        pos = spans[i].end;
    }
    tb_add(out, line + pos, len - pos);
}

/* The same for a NUL-terminated line, into a static buffer. */
static const char *cleaned(const fj_clean *c, const char *line)
{
    static char result[4096];
    tbuf t = {0};
    clean_into(c, line, strlen(line), &t);
    tb_adds(&t, "");
    snprintf(result, sizeof result, "%s", t.p);
    tb_free(&t);
    return result;
}

/* Whether fj_clean_find finds anything in line. */
static int finds(const fj_clean *c, const char *line)
{
    return fj_clean_find(c, line, strlen(line), NULL, 0, NULL) > 0;
}

static void test_clean_arguments(void **state)
{
    (void)state;
    fj_clean *c = (fj_clean *)g_clean;
    fj_error err;
    assert_int_equal(fj_clean_open(g_dict, NULL, 0, 0, NULL, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_clean_open(g_dict, NULL, 1, 0, &c, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_null(c);
    assert_int_equal(fj_clean_open(g_dict, NULL, 0, 1u << 5, &c, &err), FJ_ERR_INVALID_ARGUMENT);
    fj_clean_rules bad = {"x", NULL, 4};
    assert_int_equal(fj_clean_open(g_dict, &bad, 1, 0, &c, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_clean_line(NULL, "x", 1, NULL), 0);
    int score = 99;
    assert_int_equal(fj_clean_line(g_clean, NULL, 3, &score), 0);
    assert_int_equal(score, 0);
    assert_int_equal(fj_clean_line(g_clean, NULL, 0, NULL), 0);
    fj_clean_stream *s = (fj_clean_stream *)g_clean;
    assert_int_equal(fj_clean_stream_new(NULL, tb_write, NULL, NULL, NULL, &s),
                     FJ_ERR_INVALID_ARGUMENT);
    assert_null(s);
    assert_int_equal(fj_clean_stream_new(g_clean, NULL, NULL, NULL, NULL, &s),
                     FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_clean_stream_new(g_clean, tb_write, NULL, NULL, NULL, NULL),
                     FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_clean_stream_feed(NULL, "x", 1), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_clean_stream_finish(NULL), FJ_ERR_INVALID_ARGUMENT);
    fj_clean_stream_free(NULL);
    fj_clean_close(NULL);
    assert_string_equal(fj_strerror(FJ_ERR_RULES), "malformed clean rules");
}

static void test_clean_default_rules(void **state)
{
    (void)state;
    size_t n = 0;
    const char *text = fj_clean_default_rules(&n);
    assert_true(n > 100);
    assert_memory_equal(text, "# fanjian clean", 15);
    assert_null(memchr(text, 0, n));
    /* the same text as extra rules gives the same decisions */
    fj_clean_rules r = {"copy", text, n};
    fj_clean *c;
    fj_error err;
    assert_int_equal(fj_clean_open(g_dict, &r, 1, FJ_CLEAN_NO_DEFAULTS, &c, &err), FJ_OK);
    const char *lines[] = {"天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！", "（本章完）",
                           "他记住了那个网址。", "本站是终点站。"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        int s1, s2;
        int d1 = fj_clean_line(g_clean, lines[i], strlen(lines[i]), &s1);
        int d2 = fj_clean_line(c, lines[i], strlen(lines[i]), &s2);
        assert_int_equal(d1, d2);
        assert_int_equal(s1, s2);
    }
    fj_clean_close(c);
    /* no rules at all: nothing is dropped */
    c = open_rules("", g_dict);
    assert_false(drops(c, "（本章完）"));
    fj_clean_close(c);
}

static void test_clean_rule_errors(void **state)
{
    (void)state;
    static const struct {
        const char *rules, *message;
    } bad[] = {
        {"frobnicate 3", "unknown directive"},
        {"phrase", "phrase needs a weight"},
        {"phrase x 收藏", "phrase needs a weight"},
        {"phrase 100001 收藏", "phrase needs a weight"},
        {"phrase 5", "no pattern"},
        {"phrase 5 *收藏", "cannot start with '*'"},
        {"phrase 5 收藏*", "cannot end with '*'"},
        {"phrase 5 a*b*c*d*e", "more than 3 '*'"},
        {"phrase 5 收 藏", "cannot contain spaces"},
        {"phrase 5 a||b", "an empty pattern"},
        {"phrase 5 a\\qb", "unknown escape"},
        {"phrase 5 \xff\xfe", "not valid UTF-8"},
        {"marker 本章。完", "cannot contain punctuation"},
        {"threshold", "needs a whole number"},
        {"threshold ten", "needs a whole number"},
        {"threshold 5 6", "one value expected"},
        {"maxchars 0", "maxchars needs a number from 1 to 1000"},
        {"maxchars 1001", "maxchars needs a number from 1 to 1000"},
        {"tld", "tld needs at least one name"},
        {"tld c.om", "only letters, digits and '-'"},
        {"tld abcdefghijklmnop", "longer than 15"},
        {"phrase 5 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "longer than 64"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[256];
        snprintf(text, sizeof text, "# comment\n\nthreshold 3\n%s\nphrase 1 x\n", bad[i].rules);
        fj_clean_rules r = {"my.rules", text, strlen(text)};
        fj_clean *c = (fj_clean *)g_clean;
        fj_error err;
        memset(&err, 0, sizeof err);
        assert_int_equal(fj_clean_open(g_dict, &r, 1, 0, &c, &err), FJ_ERR_RULES);
        assert_null(c);
        assert_int_equal(err.code, FJ_ERR_RULES);
        assert_int_equal(err.offset, strlen("# comment\n\nthreshold 3\n"));
        if (strncmp(err.message, "my.rules:4: ", 12) != 0 || !strstr(err.message, bad[i].message))
            fail_msg("\"%s\": message \"%s\", expected my.rules:4: ... %s", bad[i].rules,
                     err.message, bad[i].message);
    }
    /* a NUL byte */
    fj_clean_rules r = {"nul", "phrase 5 a\0b\n", 13};
    fj_clean *c;
    fj_error err;
    assert_int_equal(fj_clean_open(g_dict, &r, 1, 0, &c, &err), FJ_ERR_RULES);
    assert_non_null(strstr(err.message, "NUL"));
}

static void test_clean_patterns(void **state)
{
    (void)state;
    fj_clean *c = open_rules("threshold 10\n"
                             "phrase 10 请*收藏\n"
                             "phrase 10 a\\*b|c\\|d|e\\\\f\n"
                             "phrase 6 本站\n"
                             "phrase 4 地址\n"
                             "phrase -4 地址栏\n"
                             "marker 本章完|第*章完\n",
                             g_dict);
    assert_true(drops(c, "请收藏"));
    assert_true(drops(c, "请大家多多收藏"));      /* 4 characters in the gap */
    assert_true(drops(c, "请一二三四五六收藏"));  /* 6 */
    assert_false(drops(c, "请一二三四五六七收藏")); /* 7 */
    assert_false(drops(c, "x a*b y")); /* a clause of the line, not all of it */
    assert_string_equal(cleaned(c, "x a*b y"), "x y");
    assert_true(drops(c, "c|d"));
    assert_true(drops(c, "e\\f"));
    assert_false(drops(c, "ab"));
    /* weights add up, each rule once; negative weights protect */
    assert_true(drops(c, "本站地址"));
    assert_false(drops(c, "本站本站"));
    assert_false(drops(c, "本站地址栏"));
    int score;
    assert_int_equal(fj_clean_line(c, "本站地址栏", strlen("本站地址栏"), &score), 0);
    assert_int_equal(score, 6);
    /* folding: Traditional, full-width, case, spaces */
    assert_true(drops(c, "本站 地 址"));
    assert_true(drops(c, "請大家收藏"));
    /* markers: the whole line, without spaces, punctuation and symbols */
    assert_true(drops(c, "（本章完）"));
    assert_true(drops(c, "★☆ 本章完 ☆★"));
    assert_true(drops(c, "第十章完"));
    assert_false(drops(c, "本章完了"));
    assert_false(drops(c, "（本章）"));
    assert_int_equal(fj_clean_line(c, "（本章完）", strlen("（本章完）"), &score), 1);
    assert_int_equal(score, 10);
    fj_clean_close(c);

    /* rules written in Traditional match Simplified lines */
    c = open_rules("phrase 10 記住網址", g_dict);
    assert_true(drops(c, "记住网址"));
    assert_true(drops(c, "記住網址"));
    fj_clean_close(c);
    /* without a dictionary nothing is folded between the scripts */
    c = open_rules("phrase 10 记住网址", NULL);
    assert_true(drops(c, "记住网址"));
    assert_false(drops(c, "記住網址"));
    assert_true(drops(c, "记住 网址")); /* the rest still is */
    fj_clean_close(c);
    /* the widest weights */
    c = open_rules("phrase -100000 甲\nphrase 100000 乙", g_dict);
    assert_true(drops(c, "乙"));
    assert_false(drops(c, "甲乙"));
    fj_clean_close(c);
    /* later settings replace earlier ones */
    c = open_rules("threshold 10\nthreshold 3\nphrase 3 收藏", g_dict);
    assert_true(drops(c, "收藏"));
    fj_clean_close(c);
}

static void test_clean_urls(void **state)
{
    (void)state;
    fj_clean *c = open_rules("threshold 5\nurl 5\ntld com cc\ntld Org", g_dict);
    static const char *const yes[] = {
        "example.com",       "看 m.example-novel.com 吧", "example。com",
        "example点com",      "example點com",            "ｅｘａｍｐｌｅ．ｃｏｍ",
        "EXAMPLE.COM",       "(www.example)",           "wap.fake",
        "http://localhost",  "HTTPS://x",               "a1.example.org/path",
        "x.cc",              "user@example.com",
    };
    static const char *const no[] = {
        "3.com",          "readme.md",          "example.community", "examplecom",
        "www",            "example . com",      "example.net",       "http:/x",
        "1.5cm",          "点com",              "ftp://host",        "",
    };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!finds(c, yes[i]))
            fail_msg("\"%s\" is not taken for a web address", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (finds(c, no[i]))
            fail_msg("\"%s\" is taken for a web address", no[i]);
    fj_clean_close(c);
}

static void test_clean_maxchars(void **state)
{
    (void)state;
    fj_clean *c = open_rules("threshold 1\nmaxchars 5\nphrase 1 收藏", g_dict);
    assert_true(drops(c, "请收藏本站"));     /* 5 characters */
    assert_false(drops(c, "请收藏本站吧"));  /* 6 */
    assert_true(drops(c, "请收藏本站\r\n")); /* the line ending does not count */
    assert_false(drops(c, "收藏\xff\xff\xff\xff")); /* invalid bytes count one each */
    assert_true(drops(c, "收藏\xff\xff\xff"));
    fj_clean_close(c);
    /* maxchars bounds a sentence: a sentence of 201 characters is kept
     * whole, notice and all ... */
    tbuf t = {0};
    for (int i = 0; i < 25; i++)
        tb_adds(&t, "他抬头看着天空，");
    tb_adds(&t, "天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！");
    assert_false(finds(g_clean, t.p));
    assert_true(drops(g_clean, t.p + 25 * strlen("他抬头看着天空，")));
    tb_free(&t);
    /* ... but a long paragraph of short sentences loses only the notice */
    tbuf story = {0};
    for (int i = 0; i < 25; i++)
        tb_adds(&t, "他抬头看着天空。");
    tb_add(&story, t.p, t.len);
    tb_adds(&t, "天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！");
    tb_adds(&t, "她笑了。");
    tb_adds(&story, "她笑了。");
    assert_string_equal(cleaned(g_clean, t.p), story.p);
    tb_free(&t);
    tb_free(&story);
}

/* ---- the stream -------------------------------------------------------------------- */

typedef struct report_log {
    tbuf text;
    int fail;
} report_log;

static int log_report(void *ctx, const fj_clean_removal *rm)
{
    report_log *r = ctx;
    char num[64];
    snprintf(num, sizeof num, "%llu:%llu:%s", rm->line, rm->column, rm->whole_line ? "line:" : "");
    tb_adds(&r->text, num);
    tb_add(&r->text, rm->text, rm->len);
    tb_adds(&r->text, "\n");
    return r->fail;
}

static void test_clean_stream_basics(void **state)
{
    (void)state;
    const char *in = "第一章 开始\r\n（本章完）\r\n\r\n他说：“报！”\n本章未完，请点击下一页继续阅读\n最后一行 本章完";
    tbuf out = {0};
    report_log rep = {{0}, 0};
    fj_clean_stream *s;
    assert_int_equal(fj_clean_stream_new(g_clean, tb_write, &out, log_report, &rep, &s), FJ_OK);
    assert_int_equal(fj_clean_stream_feed(s, in, strlen(in)), FJ_OK);
    assert_int_equal(fj_clean_stream_finish(s), FJ_OK);
    assert_string_equal(out.p, "第一章 开始\r\n\r\n他说：“报！”\n最后一行 本章完");
    assert_string_equal(rep.text.p, "2:1:line:（本章完）\n5:1:line:本章未完，请点击下一页继续阅读\n");
    assert_int_equal(fj_clean_stream_feed(s, "x", 1), FJ_ERR_STREAM_STATE);
    assert_int_equal(fj_clean_stream_finish(s), FJ_ERR_STREAM_STATE);
    fj_clean_stream_free(s);
    tb_free(&out);
    tb_free(&rep.text);

    /* a last line without a newline can be dropped */
    assert_int_equal(fj_clean_stream_new(g_clean, tb_write, &out, NULL, NULL, &s), FJ_OK);
    assert_int_equal(fj_clean_stream_feed(s, "a\n（本章完）", strlen("a\n（本章完）")), FJ_OK);
    assert_int_equal(fj_clean_stream_finish(s), FJ_OK);
    assert_string_equal(out.p, "a\n");
    fj_clean_stream_free(s);
    tb_free(&out);

    /* an empty stream writes nothing */
    assert_int_equal(fj_clean_stream_new(g_clean, tb_write, &out, NULL, NULL, &s), FJ_OK);
    assert_int_equal(fj_clean_stream_feed(s, NULL, 0), FJ_OK);
    assert_int_equal(fj_clean_stream_finish(s), FJ_OK);
    assert_int_equal(out.len, 0);
    fj_clean_stream_free(s);
}

static int fail_write(void *ctx, const char *data, size_t len)
{
    (void)data;
    (void)len;
    int *calls = ctx;
    return ++*calls >= 2;
}

static void test_clean_stream_failures(void **state)
{
    (void)state;
    int calls = 0;
    fj_clean_stream *s;
    assert_int_equal(fj_clean_stream_new(g_clean, fail_write, &calls, NULL, NULL, &s), FJ_OK);
    assert_int_equal(fj_clean_stream_feed(s, "a\n", 2), FJ_OK);
    assert_int_equal(fj_clean_stream_feed(s, "b", 1), FJ_OK);
    assert_int_equal(fj_clean_stream_feed(s, "\n", 1), FJ_ERR_CALLBACK);
    assert_int_equal(fj_clean_stream_feed(s, "c\n", 2), FJ_ERR_CALLBACK);
    assert_int_equal(fj_clean_stream_finish(s), FJ_ERR_CALLBACK);
    fj_clean_stream_free(s);

    tbuf out = {0};
    report_log rep = {{0}, 1};
    assert_int_equal(fj_clean_stream_new(g_clean, tb_write, &out, log_report, &rep, &s), FJ_OK);
    assert_int_equal(fj_clean_stream_feed(s, "a\n（本章完）\nb\n", strlen("a\n（本章完）\nb\n")),
                     FJ_ERR_CALLBACK);
    assert_string_equal(out.p, "a\n");
    fj_clean_stream_free(s);
    tb_free(&out);
    tb_free(&rep.text);
}

/* Lines of every kind, joined with random line endings and fed in random
 * pieces: the output is the kept lines, byte for byte, however it is split. */
static void test_clean_stream_split(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！",
        "（本章完）",
        "本章未完，點擊下一頁繼續閱讀",
        "他记住了那个网址，转身离开。",
        "“报！”",
        "",
        "  ",
        "\xff\xfe 收藏 \x80",
        "Hello, world.",
        "请记住本站域名：ｗｗｗ．ｆａｋｅｓｉｔｅ．ｃｃ",
        "他转身离去。天才一秒记住本站地址：www.biquge.cc 最快更新！众人面面相觑。",
    };
    static const char *const endings[] = {"\n", "\r\n", "\r\n", "\n"};
    uint64_t rng = t_seed() ^ 0x636C65616E;
    int rounds = t_quick() ? 40 : 300;
    for (int round = 0; round < rounds; round++) {
        tbuf in = {0}, exp = {0}, out = {0};
        size_t nlines = 1 + t_below(&rng, 30);
        for (size_t i = 0; i < nlines; i++) {
            tbuf line = {0};
            size_t k = t_below(&rng, 13);
            if (k < 11) {
                tb_adds(&line, lines[k]);
            } else {
                /* longer than any line that can be dropped: 200 to 2000 characters */
                size_t n = 200 + t_below(&rng, 1800);
                tb_adds(&line, "（本章完）");
                for (size_t j = 0; j < n; j++)
                    tb_adds(&line, "字");
            }
            const char *end = i + 1 == nlines && t_below(&rng, 2) ? "" : endings[t_below(&rng, 4)];
            tb_adds(&line, end);
            tb_add(&in, line.p, line.len);
            clean_into(g_clean, line.p, line.len, &exp);
            tb_free(&line);
        }
        fj_clean_stream *s;
        assert_int_equal(fj_clean_stream_new(g_clean, tb_write, &out, NULL, NULL, &s), FJ_OK);
        for (size_t pos = 0; pos < in.len;) {
            size_t n = 1 + t_below(&rng, t_below(&rng, 2) ? 8 : 3000);
            if (n > in.len - pos)
                n = in.len - pos;
            assert_int_equal(fj_clean_stream_feed(s, in.p + pos, n), FJ_OK);
            pos += n;
        }
        assert_int_equal(fj_clean_stream_finish(s), FJ_OK);
        fj_clean_stream_free(s);
        if (out.len != exp.len || (exp.len && memcmp(out.p, exp.p, exp.len) != 0))
            fail_msg("round %d: the stream's output differs from line-by-line cleaning", round);
        tb_free(&in);
        tb_free(&exp);
        tb_free(&out);
    }
}


/* fj_clean_find: spans in order, the punctuation that joined them, *whole,
 * a cap smaller than the count, arguments. */
static void test_clean_find(void **state)
{
    (void)state;
    const char *line = "他转身离去。天才一秒记住本站地址：www.biquge.cc 最快更新！众人面面相觑。\r\n";
    fj_clean_span spans[4];
    int whole = -1;
    size_t n = fj_clean_find(g_clean, line, strlen(line), spans, 4, &whole);
    assert_int_equal(n, 1);
    assert_int_equal(whole, 0);
    size_t start = strlen("他转身离去。");
    assert_int_equal(spans[0].start, start);
    assert_int_equal(spans[0].end, start + strlen("天才一秒记住本站地址：www.biquge.cc 最快更新！"));
    assert_true(spans[0].score >= 10);
    /* a notice before the end: the story's end mark stays, the comma goes */
    assert_string_equal(cleaned(g_clean, "他转身离去，请收藏本站：www.fakesite.cc。"), "他转身离去。");
    /* at the end of the line: the space before it goes too */
    assert_string_equal(cleaned(g_clean, "他转身离去。 最新网址：fake99.com"), "他转身离去。");
    /* the paragraph's indentation stays */
    assert_string_equal(cleaned(g_clean, "　　最新网址：fake99.com。他转身离去。"), "　　他转身离去。");
    /* two notices, two spans; a cap of 1 still counts both */
    const char *two = "请收藏本站www.fake.cc。他走了。（本章完）";
    assert_int_equal(fj_clean_find(g_clean, two, strlen(two), spans, 1, &whole), 2);
    assert_int_equal(spans[0].start, 0);
    assert_int_equal(fj_clean_find(g_clean, two, strlen(two), NULL, 0, NULL), 2);
    assert_string_equal(cleaned(g_clean, two), "他走了。");
    /* whole: one span over the text, without the line ending */
    const char *all = "请收藏本站www.fake.cc。（本章完）\n";
    assert_int_equal(fj_clean_find(g_clean, all, strlen(all), spans, 4, &whole), 1);
    assert_int_equal(whole, 1);
    assert_int_equal(spans[0].start, 0);
    assert_int_equal(spans[0].end, strlen(all) - 1);
    assert_int_equal(fj_clean_line(g_clean, all, strlen(all), NULL), 1);
    /* story only */
    assert_int_equal(fj_clean_find(g_clean, "他记住了那个网址。", strlen("他记住了那个网址。"), spans, 4,
                                   &whole), 0);
    assert_int_equal(whole, 0);
    /* arguments */
    whole = -1;
    assert_int_equal(fj_clean_find(NULL, "x", 1, spans, 4, &whole), 0);
    assert_int_equal(whole, 0);
    assert_int_equal(fj_clean_find(g_clean, NULL, 3, spans, 4, NULL), 0);
    assert_int_equal(fj_clean_find(g_clean, NULL, 0, spans, 4, NULL), 0);
}

/* A line longer than the 64 KiB the stream holds: judged in pieces cut at
 * sentence ends, so notices far into it still go and no story is lost;
 * columns count characters from the line's start. */
static void test_clean_stream_long_line(void **state)
{
    (void)state;
    tbuf in = {0}, want = {0}, out = {0};
    const char *story = "他抬头看着天空。";
    const char *notice = "天才一秒记住本站地址：www.fakebook.cc，最快更新无弹窗！";
    unsigned long long chars = 0, first_column = 0;
    for (int i = 0; i < 20000; i++) { /* 480 KB */
        tb_adds(&in, story);
        tb_adds(&want, story);
        chars += 8;
        if (i % 5000 == 4999) {
            if (!first_column)
                first_column = chars + 1;
            tb_adds(&in, notice);
            chars += 38;
        }
    }
    tb_adds(&in, "\n");
    tb_adds(&want, "\n");
    report_log rep = {{0}, 0};
    fj_clean_stream *s;
    assert_int_equal(fj_clean_stream_new(g_clean, tb_write, &out, log_report, &rep, &s), FJ_OK);
    for (size_t pos = 0; pos < in.len; pos += 1000)
        assert_int_equal(fj_clean_stream_feed(s, in.p + pos, in.len - pos < 1000 ? in.len - pos : 1000),
                         FJ_OK);
    assert_int_equal(fj_clean_stream_finish(s), FJ_OK);
    fj_clean_stream_free(s);
    assert_int_equal(out.len, want.len);
    assert_memory_equal(out.p, want.p, want.len);
    char first[64];
    snprintf(first, sizeof first, "1:%llu:天才", first_column);
    assert_true(strncmp(rep.text.p, first, strlen(first)) == 0);
    size_t reports = 0;
    for (size_t i = 0; i < rep.text.len; i++)
        reports += rep.text.p[i] == '\n';
    assert_int_equal(reports, 4);
    tb_free(&in);
    tb_free(&want);
    tb_free(&out);
    tb_free(&rep.text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect_arguments),
        cmocka_unit_test(test_detect_counts),
        cmocka_unit_test(test_detect_confidence),
        cmocka_unit_test(test_detect_spans),
        cmocka_unit_test(test_detect_span_capacity),
        cmocka_unit_test(test_detect_binary),
        cmocka_unit_test(test_allocator),
        cmocka_unit_test(test_clean_arguments),
        cmocka_unit_test(test_clean_default_rules),
        cmocka_unit_test(test_clean_rule_errors),
        cmocka_unit_test(test_clean_patterns),
        cmocka_unit_test(test_clean_urls),
        cmocka_unit_test(test_clean_maxchars),
        cmocka_unit_test(test_clean_stream_basics),
        cmocka_unit_test(test_clean_stream_failures),
        cmocka_unit_test(test_clean_stream_split),
        cmocka_unit_test(test_clean_find),
        cmocka_unit_test(test_clean_stream_long_line),
    };
    return cmocka_run_group_tests_name("text", tests, group_setup, group_teardown);
}
