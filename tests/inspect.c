/* fj_inspect: the case file tests/cases/inspect/choices.tsv, then what
 * every report must satisfy on a real text (the shared OpenCC input, when
 * ../shared is there): in order, at the input's own bytes, the chosen form
 * the one fj_convert writes, margins that do not fall.
 * Environment: FANJIAN_DICT, FANJIAN_CASES (tests/cases), FANJIAN_SHARED. */
#include "testutil.h"

static fj_dict *g_dict;

/* Choices as the case file writes them: [LINE.]COLUMN:SOURCE=CHOSEN/OTHER... */
typedef struct collected {
    tbuf text;
    size_t count;
    int stop_after; /* 0: never */
} collected;

static int collect(void *ctx, const fj_choice *ch)
{
    collected *k = ctx;
    char head[64];
    if (k->text.len)
        tb_adds(&k->text, " ");
    if (ch->line == 1)
        snprintf(head, sizeof head, "%zu:", ch->column);
    else
        snprintf(head, sizeof head, "%zu.%zu:", ch->line, ch->column);
    tb_adds(&k->text, head);
    tb_add(&k->text, ch->source, ch->length);
    tb_adds(&k->text, "=");
    tb_add(&k->text, ch->chosen, ch->chosen_len);
    for (size_t i = 0; i < ch->alternative_count; i++) {
        tb_adds(&k->text, "/");
        tb_add(&k->text, ch->alternatives[i].form, ch->alternatives[i].form_len);
    }
    k->count++;
    return k->stop_after && k->count >= (size_t)k->stop_after;
}

static size_t unescape(char *s)
{
    size_t k = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '\\' && (s[i + 1] == 'n' || s[i + 1] == 'r' || s[i + 1] == 't' || s[i + 1] == '\\')) {
            char c = s[++i];
            s[k++] = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : '\\';
        } else {
            s[k++] = s[i];
        }
    }
    s[k] = 0;
    return k;
}

static void test_case_file(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/inspect/choices.tsv", t_env("FANJIAN_CASES", "tests/cases"));
    size_t len;
    char *file = t_read_file(path, &len);
    assert_non_null(file);
    size_t cases = 0, failed = 0, lineno = 0;
    for (char *line = file, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        if (*line == '#' || *line == 0)
            continue;
        char *input = strchr(line, '\t');
        assert_non_null(input);
        *input++ = 0;
        char *expected = strchr(input, '\t');
        assert_non_null(expected);
        *expected++ = 0;
        size_t input_len = unescape(input);
        fj_converter *c = NULL;
        fj_error err;
        assert_int_equal(fj_converter_open(g_dict, line, FJ_DEFAULT, &c, &err), FJ_OK);
        collected k;
        memset(&k, 0, sizeof k);
        assert_int_equal(fj_inspect(c, input, input_len, collect, &k), FJ_OK);
        tb_add(&k.text, "", 1);
        if (strcmp(k.text.p, expected) != 0) {
            fprintf(stderr, "%s:%zu: %s: expected [%s], got [%s]\n", path, lineno, line, expected,
                    k.text.p);
            failed++;
        }
        cases++;
        tb_free(&k.text);
        fj_converter_close(c);
    }
    free(file);
    assert_true(cases >= 8);
    assert_int_equal(failed, 0);
}

/* ---- what every report satisfies ---------------------------------------- */

typedef struct checker {
    const char *text;
    size_t len;
    const char *out; /* fj_convert's output of text */
    size_t out_len;
    size_t last_offset, count, checked, bad;
    int any;
} checker;

static size_t cp_length(const unsigned char *p)
{
    return *p < 0x80 ? 1 : *p < 0xE0 ? 2 : *p < 0xF0 ? 3 : 4;
}

/* The start of line `line` (from 1) of s[0..len), or NULL. */
static const char *line_start(const char *s, size_t len, size_t line)
{
    const char *p = s, *end = s + len;
    for (size_t l = 1; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return NULL;
        p = nl + 1;
    }
    return p;
}

static size_t line_chars(const char *p, const char *end)
{
    size_t n = 0;
    for (; p < end && *p != '\n'; n++)
        p += cp_length((const unsigned char *)p);
    return n;
}

static int check_choice(void *ctx, const fj_choice *ch)
{
    checker *k = ctx;
    int ok = 1;
    /* In order, inside the input, at its own bytes. */
    ok &= !k->any || ch->offset > k->last_offset;
    ok &= ch->offset + ch->length <= k->len && ch->source == k->text + ch->offset;
    ok &= ch->length == cp_length((const unsigned char *)ch->source);
    /* Line and column name the same place. */
    const char *ls = line_start(k->text, k->len, ch->line);
    ok &= ls != NULL && ls <= ch->source;
    if (ls) {
        size_t col = 1;
        for (const char *p = ls; p < ch->source; p += cp_length((const unsigned char *)p))
            col++;
        ok &= col == ch->column && memchr(ls, '\n', (size_t)(ch->source - ls)) == NULL;
    }
    /* Others: at least one, none the chosen form, none twice, margins up. */
    ok &= ch->alternative_count >= 1;
    for (size_t i = 0; i < ch->alternative_count; i++) {
        const fj_alternative *a = &ch->alternatives[i];
        ok &= !(a->form_len == ch->chosen_len && memcmp(a->form, ch->chosen, a->form_len) == 0);
        ok &= a->margin >= 0 && (i == 0 || a->margin >= ch->alternatives[i - 1].margin);
        for (size_t j = 0; j < i; j++)
            ok &= !(a->form_len == ch->alternatives[j].form_len &&
                    memcmp(a->form, ch->alternatives[j].form, a->form_len) == 0);
    }
    /* The chosen form is what the conversion writes there, where the line
     * keeps its length in characters. */
    const char *ol = line_start(k->out, k->out_len, ch->line);
    const char *in_end = k->text + k->len, *out_end = k->out + k->out_len;
    if (ls && ol && line_chars(ls, in_end) == line_chars(ol, out_end)) {
        const char *q = ol;
        for (size_t col = 1; col < ch->column; col++)
            q += cp_length((const unsigned char *)q);
        ok &= (size_t)(out_end - q) >= ch->chosen_len && memcmp(q, ch->chosen, ch->chosen_len) == 0;
        k->checked++;
    }
    if (!ok && k->bad++ < 5)
        fprintf(stderr, "bad choice at line %zu column %zu (%.*s -> %.*s)\n", ch->line, ch->column,
                (int)ch->length, ch->source, (int)ch->chosen_len, ch->chosen);
    k->last_offset = ch->offset;
    k->any = 1;
    k->count++;
    return 0;
}

static void test_reports_hold_on_real_text(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/opencc/compat/input.txt", t_shared_dir());
    size_t len;
    char *text = t_read_file(path, &len);
    if (!text)
        skip();
    /* Profiles whose later steps write single characters alone, and two
     * that repair (a clause may go to Simplified and back). */
    const char *profiles[] = {"s2t", "s2tw", "s2hk", "t2s", "hk2s", "tw2s", "t2tw", "hk2t"};
    for (size_t p = 0; p < sizeof profiles / sizeof profiles[0]; p++) {
        fj_converter *c = NULL;
        fj_error err;
        assert_int_equal(fj_converter_open(g_dict, profiles[p], FJ_DEFAULT, &c, &err), FJ_OK);
        char *out = NULL;
        size_t out_len;
        assert_int_equal(fj_convert_alloc(c, text, len, &out, &out_len), FJ_OK);
        checker k = {text, len, out, out_len, 0, 0, 0, 0, 0};
        assert_int_equal(fj_inspect(c, text, len, check_choice, &k), FJ_OK);
        fprintf(stderr, "%s: %zu choices, %zu checked against the output\n", profiles[p], k.count,
                k.checked);
        assert_int_equal(k.bad, 0);
        assert_true(k.count > 0);
        assert_true(k.checked * 10 >= k.count * 9);
        if (p == 0)
            assert_true(k.count >= 100);
        fj_free(c, out);
        fj_converter_close(c);
    }
    free(text);
}

/* ---- edges ---------------------------------------------------------------- */

static size_t count_choices(const fj_converter *c, const char *text)
{
    collected k;
    memset(&k, 0, sizeof k);
    assert_int_equal(fj_inspect(c, text, strlen(text), collect, &k), FJ_OK);
    tb_free(&k.text);
    return k.count;
}

static void test_converters_without_choices(void **state)
{
    (void)state;
    const char *text = "我的头发干了，皇后理发。";
    fj_converter *c = NULL;
    fj_error err;
    assert_int_equal(fj_converter_open(g_dict, "s2t", FJ_COMPAT, &c, &err), FJ_OK);
    assert_int_equal(count_choices(c, text), 0);
    fj_converter_close(c);
    /* Repair turned off: Traditional input as the profile writes it. */
    assert_int_equal(fj_converter_open(g_dict, "t2tw", FJ_REPAIR_OFF, &c, &err), FJ_OK);
    assert_int_equal(count_choices(c, "頭發乾了"), 0);
    fj_converter_close(c);
    /* No script at all. */
    fj_options o;
    fj_options_init(&o);
    o.punct = FJ_PUNCT_ELLIPSIS;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_OK);
    assert_int_equal(count_choices(c, text), 0);
    fj_converter_close(c);
}

static void test_wrapped_converters(void **state)
{
    (void)state;
    const char *text = "我的头发干了，皇后理发。";
    fj_converter *plain = NULL, *c = NULL;
    fj_error err;
    assert_int_equal(fj_converter_open(g_dict, "s2t", FJ_DEFAULT, &plain, &err), FJ_OK);
    size_t n = count_choices(plain, text);
    assert_true(n >= 3);
    /* With user entries, typography and a target: the same model decides. */
    const fj_phrase ph[] = {{"鼠标", "滑鼠"}};
    fj_options o;
    fj_options_init(&o);
    o.profile = "s2t";
    o.phrases = ph;
    o.phrase_count = 1;
    o.punct = FJ_PUNCT_FULLWIDTH;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_OK);
    assert_int_equal(count_choices(c, text), n);
    fj_converter_close(c);
    /* What the user's entries write is theirs, not the model's choice. */
    const fj_phrase mine[] = {{"头发", "頭毛"}};
    const char *keep[] = {"理发"};
    o.phrases = mine;
    o.protect = keep;
    o.protect_count = 1;
    assert_int_equal(fj_converter_open_options(g_dict, &o, &c, &err), FJ_OK);
    collected k;
    memset(&k, 0, sizeof k);
    assert_int_equal(fj_inspect(c, text, strlen(text), collect, &k), FJ_OK);
    tb_add(&k.text, "", 1);
    assert_string_equal(k.text.p, "5:干=乾/幹 9:后=后/後");
    tb_free(&k.text);
    fj_converter_close(c);
    assert_int_equal(fj_converter_open_target(g_dict, "hant", FJ_DEFAULT, &c, &err), FJ_OK);
    assert_int_equal(count_choices(c, text), n);
    fj_converter_close(c);
    fj_converter_close(plain);
}

static void test_arguments_and_stop(void **state)
{
    (void)state;
    fj_converter *c = NULL;
    fj_error err;
    assert_int_equal(fj_converter_open(g_dict, "s2t", FJ_DEFAULT, &c, &err), FJ_OK);
    collected k;
    memset(&k, 0, sizeof k);
    assert_int_equal(fj_inspect(NULL, "头发", 6, collect, &k), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_inspect(c, "头发", 6, NULL, &k), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_inspect(c, NULL, 6, collect, &k), FJ_ERR_INVALID_ARGUMENT);
    assert_int_equal(fj_inspect(c, NULL, 0, collect, &k), FJ_OK);
    assert_int_equal(k.count, 0);
    /* A callback that says stop stops at once. */
    k.stop_after = 1;
    const char *text = "头发干了。\n头发干了。";
    assert_int_equal(fj_inspect(c, text, strlen(text), collect, &k), FJ_ERR_CALLBACK);
    assert_int_equal(k.count, 1);
    tb_free(&k.text);
    /* Bytes that are not UTF-8 around a choice: passed by, offsets exact. */
    const char bad[] = "\xff头发\xc3干了\x80";
    memset(&k, 0, sizeof k);
    assert_int_equal(fj_inspect(c, bad, sizeof bad - 1, collect, &k), FJ_OK);
    tb_add(&k.text, "", 1);
    assert_string_equal(k.text.p, "3:发=髮/發 5:干=乾/幹"); /* a stray byte is a column */
    tb_free(&k.text);
    fj_converter_close(c);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    size_t img_len;
    char *img = t_read_file(t_dict_path(), &img_len);
    assert_non_null(img);
    const char *text = "我的头发干了，他在干什么？\n皇后理发以后，发现了一只钟。";
    t_counting k = {0, 0, 0, 0};
    fj_allocator a = t_counting_allocator(&k);
    fj_dict_options dopt = {sizeof dopt, &a};
    fj_dict *d = NULL;
    fj_error err;
    assert_int_equal(fj_dict_open_memory(img, img_len, &dopt, &d, &err), FJ_OK);
    fj_converter *c = NULL;
    assert_int_equal(fj_converter_open(d, "s2tw", FJ_DEFAULT, &c, &err), FJ_OK);
    int base = k.calls;
    collected all;
    memset(&all, 0, sizeof all);
    assert_int_equal(fj_inspect(c, text, strlen(text), collect, &all), FJ_OK);
    int needed = k.calls - base;
    assert_true(needed > 0);
    for (int f = 1; f <= needed; f++) {
        k.fail_at = k.calls + f;
        collected some;
        memset(&some, 0, sizeof some);
        fj_status st = fj_inspect(c, text, strlen(text), collect, &some);
        assert_int_equal(st, FJ_ERR_NOMEM);
        tb_free(&some.text);
    }
    k.fail_at = 0;
    tb_free(&all.text);
    fj_converter_close(c);
    fj_dict_close(d);
    assert_int_equal(k.live, 0);
    assert_int_equal(k.bad_size, 0);
    free(img);
}

static int setup(void **state)
{
    (void)state;
    fj_error err;
    return fj_dict_open(t_dict_path(), NULL, &g_dict, &err) == FJ_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    fj_dict_close(g_dict);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_case_file),
        cmocka_unit_test(test_reports_hold_on_real_text),
        cmocka_unit_test(test_converters_without_choices),
        cmocka_unit_test(test_wrapped_converters),
        cmocka_unit_test(test_arguments_and_stop),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
