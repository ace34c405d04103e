/* Tests (cmocka) for the Legado rules' C interface (fanjian-formats.h): what a
 * document's text span becomes, line numbers after dropped lines, and how a
 * rules file is recognised. The command line is tested in
 * tests/suite-legado.sh. */
#include "testutil.h"

#include "fanjian-formats.h"

static const char rules_json[] =
    "[{\"name\":\"网址\",\"pattern\":\"【[^】]*www\\\\.[a-z]+\\\\.cc】\",\"order\":1},"
    " {\"name\":\"站名\",\"pattern\":\"青豆书坊\",\"isRegex\":false,\"order\":2},"
    " {\"name\":\"首发\",\"pattern\":\"（首发）\",\"isRegex\":false,\"order\":3},"
    " {\"name\":\"只此书\",\"pattern\":\"独家\",\"isRegex\":false,\"scope\":\"青云志\"}]";

static fjf_legado *open_rules(void)
{
    fjf_legado *set = NULL;
    assert_int_equal(fjf_legado_add(&set, rules_json, sizeof rules_json - 1, "rules.json"), 0);
    assert_non_null(set);
    return set;
}

static void test_detect(void **state)
{
    (void)state;
    assert_true(fjf_legado_detect(" \n [{}]", 7));
    assert_true(fjf_legado_detect("\xEF\xBB\xBF{\"pattern\":\"x\"}", 18));
    assert_false(fjf_legado_detect("phrase 4 本站", 15));
    assert_false(fjf_legado_detect("   ", 3));
}

static void test_span_partly(void **state)
{
    (void)state;
    fjf_legado *set = open_rules();
    const char *text = "他转身离去。【青豆书坊 www.qingdou.cc】众人面面相觑。独家";
    fjf_buf out = {0};
    fjf_legado_counts counts = {0, 0};
    assert_int_equal(fjf_legado_apply_text(set, "book.html", "book.html", 0, 1, text, strlen(text),
                                           &out, &counts),
                     0);
    /* The scoped rule (独家) is for 青云志 only. */
    const char *want = "他转身离去。众人面面相觑。独家";
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.data, want, out.len);
    assert_int_equal(counts.removed, 1);
    assert_int_equal(counts.whole_lines, 0);
    fjf_buf_free(&out);

    /* The same span in 青云志.epub loses 独家 too. */
    assert_int_equal(fjf_legado_apply_text(set, "青云志.epub", "青云志.epub", 0, 1, text,
                                           strlen(text), &out, &counts),
                     0);
    want = "他转身离去。众人面面相觑。";
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.data, want, out.len);
    fjf_buf_free(&out);
    fjf_legado_free(set);
}

static void test_span_whole(void **state)
{
    (void)state;
    fjf_legado *set = open_rules();
    const char *text = "（青豆书坊首发）";
    fjf_buf out = {0};
    fjf_legado_counts counts = {0, 0};
    assert_int_equal(fjf_legado_apply_text(set, "book.html", NULL, 0, 1, text, strlen(text), &out,
                                           &counts),
                     0);
    assert_int_equal(out.len, 0); /* the whole span was boilerplate */
    assert_int_equal(counts.removed, 2);
    assert_int_equal(counts.whole_lines, 1);
    fjf_buf_free(&out);
    fjf_legado_free(set);
}

static int append(void *ctx, const char *data, size_t len)
{
    return fjf_buf_append(ctx, data, len);
}

static void test_line_numbers(void **state)
{
    (void)state;
    fjf_legado *set = open_rules();
    fjf_legado_stage *st = NULL;
    fjf_buf out = {0};
    assert_int_equal(fjf_legado_stage_new(set, "t.txt", "t.txt", 0, append, &out, &st), 0);
    const char *text = "一\n青豆书坊\n二\n（首发）\n三";
    /* Fed in pieces that cut lines and characters. */
    for (size_t i = 0, n = strlen(text); i < n; i += 4)
        assert_int_equal(fjf_legado_stage_feed(st, text + i, n - i < 4 ? n - i : 4), 0);
    assert_int_equal(fjf_legado_stage_finish(st), 0);
    assert_int_equal(out.len, strlen("一\n二\n三"));
    assert_memory_equal(out.data, "一\n二\n三", out.len);
    assert_int_equal(fjf_legado_stage_line(st, 1), 1);
    assert_int_equal(fjf_legado_stage_line(st, 2), 3);
    assert_int_equal(fjf_legado_stage_line(st, 3), 5);
    fjf_legado_stage_free(st);
    fjf_buf_free(&out);
    fjf_legado_free(set);
}

/* A document's block: each rule's matches in the text as read, united;
 * overlapping and touching matches are one span. */
static void test_find_spans(void **state)
{
    (void)state;
    fjf_legado *set = open_rules();
    const char *text = "他转身离去。【青豆书坊 www.qingdou.cc】众人面面相觑。青豆书坊（首发）独家";
    const char *bracket = strstr(text, "【"), *after = strstr(text, "众人");
    const char *site = strstr(after, "青豆书坊"), *only = strstr(text, "独家");
    fj_clean_span *spans = NULL;
    size_t n = 0;
    assert_int_equal(fjf_legado_find(set, "book.html", "book.html", 1, text, strlen(text), &spans,
                                     &n),
                     0);
    /* 青豆书坊 inside the bracket is part of the bracket's match; （首发)
     * touches the second 青豆书坊; 独家 is for 青云志 only. */
    assert_int_equal(n, 2);
    assert_int_equal(spans[0].start, (size_t)(bracket - text));
    assert_int_equal(spans[0].end, (size_t)(after - text));
    assert_int_equal(spans[1].start, (size_t)(site - text));
    assert_int_equal(spans[1].end, (size_t)(only - text));
    assert_false(fjf_legado_leaves_blank(set, text, strlen(text), spans, n));
    free(spans);

    assert_int_equal(fjf_legado_find(set, "青云志.epub", "青云志.epub", 1, text, strlen(text),
                                     &spans, &n),
                     0);
    assert_int_equal(n, 2);
    assert_int_equal(spans[1].start, (size_t)(site - text));
    assert_int_equal(spans[1].end, strlen(text));
    free(spans);

    /* What is left is punctuation: the block goes whole. */
    const char *ad = "青豆书坊，（首发）。";
    assert_int_equal(fjf_legado_find(set, "book.html", "book.html", 1, ad, strlen(ad), &spans, &n),
                     0);
    assert_int_equal(n, 2);
    assert_true(fjf_legado_leaves_blank(set, ad, strlen(ad), spans, n));
    free(spans);

    /* Nothing to find. */
    assert_int_equal(fjf_legado_find(set, "book.html", "book.html", 1, "她笑了。", 12, &spans, &n),
                     0);
    assert_int_equal(n, 0);
    assert_null(spans);
    fjf_legado_free(set);
}

static void test_bad_files(void **state)
{
    (void)state;
    fjf_legado *set = NULL;
    assert_int_equal(fjf_legado_add(&set, "[{\"pattern\":\"x\"},", 17, "broken.json"), -1);
    assert_int_equal(fjf_legado_add(&set, "\"x\"", 3, "string.json"), -1);
    fjf_legado_free(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect),      cmocka_unit_test(test_span_partly),
        cmocka_unit_test(test_span_whole),  cmocka_unit_test(test_line_numbers),
        cmocka_unit_test(test_bad_files),   cmocka_unit_test(test_find_spans),
    };
    return cmocka_run_group_tests_name("legado", tests, NULL, NULL);
}
