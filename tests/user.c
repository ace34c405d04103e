/* User phrases, protected terms and inline -{…}- (fj_options.phrases,
 * .protect, .markup): the case files tests/cases/user/ *.tsv one-shot,
 * byte by byte and in random pieces, then the rules at their edges.
 * Environment: FANJIAN_DICT, FANJIAN_CASES (tests/cases). */
#include "testutil.h"

#include <dirent.h>

static fj_dict *g_dict;

/* ---- the case files ------------------------------------------------------ */

typedef struct user_file {
    char name[64];
    unsigned flags; /* FJ_DEFAULT for "# mode: default", else FJ_COMPAT */
    fj_phrase phrases[64];
    size_t phrase_count;
    const char *protect[64];
    size_t protect_count;
    struct {
        size_t line;
        char *profile, *input, *expected;
        size_t input_len, expected_len;
    } cases[128];
    size_t case_count;
    char *text; /* the file, cut in place */
} user_file;

static user_file g_files[8];
static size_t g_file_count;

/* \t \n \r \\ in place; returns the new length. */
static size_t unescape(char *s)
{
    size_t k = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '\\' && s[i + 1]) {
            char c = s[++i];
            s[k++] = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
        } else {
            s[k++] = s[i];
        }
    }
    s[k] = 0;
    return k;
}

static int load_file(user_file *f, const char *path)
{
    size_t len;
    f->text = t_read_file(path, &len);
    if (!f->text)
        return -1;
    f->flags = strncmp(f->text, "# mode: default\n", 16) == 0 ? FJ_DEFAULT : FJ_COMPAT;
    size_t line = 0;
    for (char *p = f->text; *p;) {
        char *eol = strchr(p, '\n');
        if (eol)
            *eol = 0;
        line++;
        char *field[3] = {p, NULL, NULL};
        for (int k = 0; k < 2; k++) {
            char *tab = field[k] ? strchr(field[k], '\t') : NULL;
            if (tab) {
                *tab = 0;
                field[k + 1] = tab + 1;
            }
        }
        if (strcmp(field[0], "#phrase") == 0 && field[2] && f->phrase_count < 64) {
            f->phrases[f->phrase_count].from = field[1];
            f->phrases[f->phrase_count++].to = field[2];
        } else if (strcmp(field[0], "#protect") == 0 && field[1] && f->protect_count < 64) {
            f->protect[f->protect_count++] = field[1];
        } else if (field[0][0] != '#' && field[0][0] && field[2] && f->case_count < 128) {
            size_t i = f->case_count++;
            f->cases[i].line = line;
            f->cases[i].profile = field[0];
            f->cases[i].input = field[1];
            f->cases[i].expected = field[2];
            f->cases[i].input_len = unescape(field[1]);
            f->cases[i].expected_len = unescape(field[2]);
        } else if (field[0][0] && field[0][0] != '#' && strncmp(field[0], "#", 1) != 0) {
            fprintf(stderr, "%s:%zu: not a case\n", path, line);
            return -1;
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    return f->case_count ? 0 : -1;
}

static int name_order(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int setup(void **state)
{
    (void)state;
    fj_error err;
    if (fj_dict_open(t_dict_path(), NULL, &g_dict, &err) != FJ_OK) {
        fprintf(stderr, "user: %s\n", err.message);
        return -1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/user", t_env("FANJIAN_CASES", "tests/cases"));
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "user: cannot open %s\n", dir);
        return -1;
    }
    char *names[8];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 8) {
        size_t l = strlen(de->d_name);
        if (l > 4 && strcmp(de->d_name + l - 4, ".tsv") == 0)
            names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, name_order);
    for (size_t i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(g_files[i].name, sizeof g_files[i].name, "%s", names[i]);
        free(names[i]);
        if (load_file(&g_files[i], path) != 0) {
            fprintf(stderr, "user: %s: no cases, or a line that is none\n", path);
            return -1;
        }
    }
    g_file_count = n;
    return n ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < g_file_count; i++)
        free(g_files[i].text);
    fj_dict_close(g_dict);
    return 0;
}

static fj_converter *open_user(const char *profile, unsigned flags, const fj_phrase *ph,
                               size_t nph, const char *const *pr, size_t npr, unsigned markup)
{
    fj_options o;
    fj_options_init(&o);
    if (strncmp(profile, "to:", 3) == 0)
        o.target = profile + 3;
    else
        o.profile = profile;
    o.flags = flags;
    o.quotes = FJ_QUOTES_KEEP;
    o.phrases = ph;
    o.phrase_count = nph;
    o.protect = pr;
    o.protect_count = npr;
    o.markup = markup;
    fj_converter *c = NULL;
    fj_error err;
    fj_status st = fj_converter_open_options(g_dict, &o, &c, &err);
    if (st != FJ_OK)
        print_message("open %s: %s\n", profile, err.message);
    assert_int_equal(st, FJ_OK);
    return c;
}

/* One-shot, byte by byte, and in pieces of every size up to 9. */
static int same_all_ways(const fj_converter *c, const char *in, size_t len, const char *exp,
                         size_t exp_len, const char *what)
{
    size_t n;
    char *got = t_conv(c, in, len, &n);
    int ok = t_same(what, exp, exp_len, got, n);
    fj_free(c, got);
    for (size_t piece = 1; ok && piece <= 9; piece++) {
        tbuf out = {0};
        assert_int_equal(t_stream_pieces(c, in, len, piece, &out), FJ_OK);
        char label[300];
        snprintf(label, sizeof label, "%s (streamed in pieces of %zu)", what, piece);
        ok = t_same(label, exp, exp_len, out.p ? out.p : "", out.len);
        tb_free(&out);
    }
    return ok;
}

static void test_case_files(void **state)
{
    (void)state;
    size_t failed = 0, total = 0;
    for (size_t i = 0; i < g_file_count; i++) {
        user_file *f = &g_files[i];
        for (size_t k = 0; k < f->case_count; k++) {
            fj_converter *c = open_user(f->cases[k].profile, f->flags, f->phrases,
                                        f->phrase_count, f->protect, f->protect_count,
                                        FJ_MARKUP_INLINE);
            char what[200];
            snprintf(what, sizeof what, "%.60s:%zu %.40s", f->name, f->cases[k].line,
                     f->cases[k].profile);
            total++;
            if (!same_all_ways(c, f->cases[k].input, f->cases[k].input_len, f->cases[k].expected,
                               f->cases[k].expected_len, what))
                failed++;
            fj_converter_close(c);
        }
    }
    print_message("user cases: %zu of %zu right\n", total - failed, total);
    assert_true(total >= 20);
    assert_int_equal(failed, 0);
}

/* ---- the rules at their edges ------------------------------------------ */

static char *convert(const fj_converter *c, const char *in)
{
    size_t n;
    return t_conv(c, in, strlen(in), &n);
}

static void expect(const fj_converter *c, const char *in, const char *exp)
{
    char what[160];
    snprintf(what, sizeof what, "%.120s", in);
    assert_true(same_all_ways(c, in, strlen(in), exp, strlen(exp), what));
}

static void test_without_entries_nothing_changes(void **state)
{
    (void)state;
    /* No entries and no markup: the plain converter, -{ as text. */
    fj_converter *plain = open_user("s2tw", FJ_DEFAULT, NULL, 0, NULL, 0, 0);
    fj_converter *ref = NULL;
    fj_error err;
    assert_int_equal(fj_converter_open(g_dict, "s2tw", FJ_DEFAULT, &ref, &err), FJ_OK);
    const char *in = "他说-{后来}-头发干了";
    char *a = convert(plain, in), *b = convert(ref, in);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "-{"));
    fj_free(plain, a);
    fj_free(ref, b);
    fj_converter_close(plain);
    fj_converter_close(ref);
}

static void test_later_entry_wins(void **state)
{
    (void)state;
    const fj_phrase ph[] = {{"头发", "A"}, {"头发", "B"}};
    const char *pr[] = {"头发"};
    fj_converter *c = open_user("s2tw", FJ_DEFAULT, ph, 2, NULL, 0, 0);
    expect(c, "头发", "B");
    fj_converter_close(c);
    /* A protected term comes after the phrases: it wins. */
    c = open_user("s2tw", FJ_DEFAULT, ph, 2, pr, 1, 0);
    expect(c, "头发头发", "头发头发");
    fj_converter_close(c);
}

static void test_leftmost_then_longest(void **state)
{
    (void)state;
    const fj_phrase ph[] = {{"ab", "1"}, {"bcd", "2"}, {"abc", "3"}, {"d", "4"}};
    fj_converter *c = open_user("s2t", FJ_COMPAT, ph, 4, NULL, 0, 0);
    expect(c, "abcd", "34");   /* abc at 0, then d */
    expect(c, "xbcd", "x2");   /* bcd at 1 */
    expect(c, "abab", "11");
    expect(c, "a", "a");       /* a prefix of a key is text */
    fj_converter_close(c);
}

/* The overlay's scan over long text: keys of one to three characters, none
 * starting with ASCII, after ASCII runs and Han runs; a NUL after a key of
 * one character (once looked up as a pair). No script conversion, so the
 * expected text is the entries alone. */
static void test_scan_edges(void **state)
{
    (void)state;
    const fj_phrase ph[] = {{"发", "X"}, {"头发", "A"}, {"头发干", "B"}, {"的是", "C"}, {"头a", "D"}};
    fj_options o;
    fj_options_init(&o);
    o.phrases = ph;
    o.phrase_count = sizeof ph / sizeof ph[0];
    fj_converter *c = NULL;
    fj_error err;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_OK);
    assert_true(same_all_ways(c, "发\0发", 7, "X\0X", 3, "NUL after a one-character key"));
    expect(c, "这是一段很长的文字头发干了的是头a头b发。", "这是一段很长的文字B了CD头bX。");
    expect(c, "abcdefghijklmnopqrstuvwxyz头发abcdefghijkl", "abcdefghijklmnopqrstuvwxyzAabcdefghijkl");
    expect(c, "很长的文字很长的文字很长的文字头", "很长的文字很长的文字很长的文字头");
    fj_converter_close(c);
}

static void test_every_converter_kind(void **state)
{
    (void)state;
    const fj_phrase ph[] = {{"头发", "頭毛"}};
    const char *pr[] = {"后"};
    /* A target converter, and one with no conversion at all. */
    fj_converter *c = open_user("to:tw", FJ_DEFAULT, ph, 1, pr, 1, FJ_MARKUP_INLINE);
    expect(c, "头发后来，頭發後來", "頭毛后來，頭髮後來");
    fj_converter_close(c);
    fj_options o;
    fj_options_init(&o);
    o.phrases = ph;
    o.phrase_count = 1;
    o.markup = FJ_MARKUP_INLINE;
    fj_error err;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_OK);
    expect(c, "头发后来-{x}-", "頭毛后来x");
    fj_converter_close(c);
    /* Clean-up and typography around the overlay. */
    fj_clean *cl = NULL;
    assert_int_equal(fj_clean_open(g_dict, NULL, 0, 0, &cl, &err), FJ_OK);
    fj_options_init(&o);
    o.profile = "s2twp";
    o.clean = cl;
    o.phrases = ph;
    o.phrase_count = 1;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_OK);
    expect(c, "“头发”\n（本章完）\n", "「頭毛」\n");
    fj_converter_close(c);
    fj_clean_close(cl);
}

static void test_markup_edges(void **state)
{
    (void)state;
    fj_converter *c = open_user("s2tw", FJ_DEFAULT, NULL, 0, NULL, 0, FJ_MARKUP_INLINE);
    expect(c, "-{后}--{后}-", "后后");
    expect(c, "-{后", "-{後");          /* no }- before the end */
    expect(c, "-", "-");
    expect(c, "-后", "-後");
    expect(c, "}-后-{", "}-後-{");
    expect(c, "-{a-{b}-c}-", "a-{bc}-"); /* the first }- closes */
    /* A variant list that is not one: protected text as it stands. */
    expect(c, "-{zh-hans计算机}-", "zh-hans计算机");
    expect(c, "-{ zh-tw : 電腦 }-", " zh-tw : 電腦 ");
    expect(c, "-{zh-hans:计算机;zh-TW:電腦}-", "電腦"); /* names in any case */
    expect(c, "-{zh-sg:软件;zh-my:电脑}-", "軟件");   /* none fits: the first, converted */
    /* Beyond 1 KiB a -{ is text. */
    size_t n = 1100;
    char *in = malloc(n + 8);
    memcpy(in, "-{", 2);
    memset(in + 2, 'a', n);
    memcpy(in + 2 + n, "}-", 3);
    expect(c, in, in);
    /* Just inside it, a rule. */
    in[2 + 1000] = 0;
    strcat(in, "}-");
    char *exp = malloc(1001);
    memset(exp, 'a', 1000);
    exp[1000] = 0;
    expect(c, in, exp);
    free(in);
    free(exp);
    fj_converter_close(c);
}

static void test_bad_entries(void **state)
{
    (void)state;
    fj_options o;
    fj_error err;
    fj_converter *c = (fj_converter *)1;
    const fj_phrase empty_key[] = {{"", "x"}}, empty_value[] = {{"头", ""}},
                    null_value[] = {{"头", NULL}}, bad_utf8[] = {{"\xff", "x"}};
    const fj_phrase *bad[] = {empty_key, empty_value, null_value, bad_utf8};
    for (size_t i = 0; i < 4; i++) {
        fj_options_init(&o);
        o.profile = "s2t";
        o.phrases = bad[i];
        o.phrase_count = 1;
        assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_ERR_INVALID_ARGUMENT);
        assert_null(c);
        assert_non_null(strstr(err.message, "phrases"));
    }
    const char *pr[] = {""};
    fj_options_init(&o);
    o.profile = "s2t";
    o.protect = pr;
    o.protect_count = 1;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_ERR_INVALID_ARGUMENT);
    fj_options_init(&o);
    o.profile = "s2t";
    o.phrase_count = 3; /* no array */
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_ERR_INVALID_ARGUMENT);
    fj_options_init(&o);
    o.profile = "s2t";
    o.markup = 2;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "markup"));
}

static void test_entries_are_copied(void **state)
{
    (void)state;
    char from[16], to[16];
    strcpy(from, "头发");
    strcpy(to, "頭毛");
    fj_phrase ph[] = {{from, to}};
    fj_converter *c = open_user("s2tw", FJ_DEFAULT, ph, 1, NULL, 0, 0);
    memset(from, 'x', sizeof from - 1);
    memset(to, 'y', sizeof to - 1);
    expect(c, "头发", "頭毛");
    fj_converter_close(c);
}

/* Many entries, random text of their characters: streaming in random
 * pieces equals one-shot. */
static void test_random_streaming(void **state)
{
    (void)state;
    static const char *alphabet[] = {"头", "发", "后", "来", "-", "{", "}", "a", ":", ";", "系"};
    fj_phrase ph[200];
    char keys[200][16];
    for (size_t i = 0; i < 200; i++) {
        size_t k = 0, n = 1 + (i * 7) % 4;
        for (size_t j = 0; j < n; j++) {
            const char *s = alphabet[(i * 31 + j * 17) % 11];
            memcpy(keys[i] + k, s, strlen(s));
            k += strlen(s);
        }
        keys[i][k] = 0;
        ph[i].from = keys[i];
        ph[i].to = i % 2 ? "X" : "YY";
    }
    fj_converter *c = open_user("s2tw", FJ_DEFAULT, ph, 200, NULL, 0, FJ_MARKUP_INLINE);
    unsigned seed = 12345;
    for (int round = 0; round < (t_quick() ? 50 : 400); round++) {
        char text[400];
        size_t len = 0;
        while (len < 300) {
            seed = seed * 1103515245u + 12345u;
            const char *s = alphabet[(seed >> 16) % 11];
            memcpy(text + len, s, strlen(s));
            len += strlen(s);
        }
        size_t n;
        char *whole = t_conv(c, text, len, &n);
        seed = seed * 1103515245u + 12345u;
        size_t piece = 1 + (seed >> 16) % 13;
        tbuf out = {0};
        assert_int_equal(t_stream_pieces(c, text, len, piece, &out), FJ_OK);
        assert_true(t_same("random text", whole, n, out.p ? out.p : "", out.len));
        tb_free(&out);
        fj_free(c, whole);
    }
    fj_converter_close(c);
}

static void test_allocator(void **state)
{
    (void)state;
    const fj_phrase ph[] = {{"头发", "A"}, {"头发", "B"}, {"鼠标", "C"}, {"头", "D"}};
    const char *pr[] = {"鼠标", "张三"};
    size_t img_len;
    char *img = t_read_file(t_dict_path(), &img_len);
    assert_non_null(img);
    /* The first round fails nothing and counts the allocations; then each
     * of them fails in turn. */
    int needed = 0;
    for (int fail_at = 0; fail_at == 0 || fail_at <= needed; fail_at++) {
        t_counting k = {0, 0, fail_at, 0};
        fj_allocator a = t_counting_allocator(&k);
        fj_dict_options dopt = {sizeof dopt, &a};
        fj_dict *d = NULL;
        fj_error err;
        if (fj_dict_open_memory(img, img_len, &dopt, &d, &err) != FJ_OK) {
            assert_int_equal(k.live, 0);
            continue;
        }
        fj_options o;
        fj_options_init(&o);
        o.profile = "s2t";
        o.flags = FJ_COMPAT;
        o.phrases = ph;
        o.phrase_count = 4;
        o.protect = pr;
        o.protect_count = 2;
        o.markup = FJ_MARKUP_INLINE;
        fj_converter *c = NULL;
        fj_status st = fj_converter_open_options(d, &o, &c, &err);
        if (st == FJ_OK) {
            char *out = NULL;
            size_t n;
            if (fj_convert_alloc(c, "头发鼠标头", 15, &out, &n) == FJ_OK)
                assert_string_equal(out, "B鼠标D");
            fj_free(c, out);
        } else {
            assert_int_equal(st, FJ_ERR_NOMEM);
            assert_null(c);
        }
        fj_converter_close(c);
        fj_dict_close(d);
        assert_int_equal(k.bad_size, 0);
        assert_int_equal(k.live, 0);
        if (fail_at == 0) {
            assert_int_equal(st, FJ_OK);
            needed = k.calls;
        }
    }
    assert_true(needed > 4);
    free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_case_files),
        cmocka_unit_test(test_without_entries_nothing_changes),
        cmocka_unit_test(test_later_entry_wins),
        cmocka_unit_test(test_leftmost_then_longest),
        cmocka_unit_test(test_scan_edges),
        cmocka_unit_test(test_every_converter_kind),
        cmocka_unit_test(test_markup_edges),
        cmocka_unit_test(test_bad_entries),
        cmocka_unit_test(test_entries_are_copied),
        cmocka_unit_test(test_random_streaming),
        cmocka_unit_test(test_allocator),
    };
    return cmocka_run_group_tests_name("user", tests, setup, teardown);
}
