/* Tests (cmocka) for file names as messages show them (formats/display.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "fanjian-formats.h"

static void expect_shown(const char *name, const char *expected)
{
    char buf[FJF_DISPLAY_MAX];
    assert_string_equal(fjf_display_name(name, buf, sizeof buf), expected);
}

static void test_printable_names_unchanged(void **state)
{
    (void)state;
    expect_shown("卷一/第1章 头发.txt", "卷一/第1章 头发.txt");
    expect_shown("a b\\c'\"$.txt", "a b\\c'\"$.txt");
    expect_shown("😀 emoji é", "😀 emoji é");
    expect_shown("", "");
}

static void test_controls_escaped(void **state)
{
    (void)state;
    expect_shown("red\033[31m\nline\ttab\rcr", "red\\x1b[31m\\nline\\ttab\\rcr");
    expect_shown("del\x7f", "del\\x7f");
    /* C1 controls, written as UTF-8 (U+0085 NEL, U+009B CSI). */
    expect_shown("c1\xc2\x85\xc2\x9b", "c1\\u0085\\u009b");
}

static void test_bidi_and_separators_escaped(void **state)
{
    (void)state;
    expect_shown("txt.\xe2\x80\xae" "exe", "txt.\\u202eexe");           /* RIGHT-TO-LEFT OVERRIDE */
    expect_shown("\xe2\x80\xaa\xe2\x81\xa6\xe2\x81\xa9", "\\u202a\\u2066\\u2069");
    expect_shown("a\xe2\x80\xa8" "b", "a\\u2028b");                    /* LINE SEPARATOR */
}

static void test_invalid_utf8_escaped(void **state)
{
    (void)state;
    expect_shown("bad\xff", "bad\\xff");
    expect_shown("\xe5\xa4", "\\xe5\\xa4");          /* cut short */
    expect_shown("\xc0\xaf", "\\xc0\\xaf");          /* overlong */
    expect_shown("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
    expect_shown("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
}

static void test_truncated_to_the_buffer(void **state)
{
    (void)state;
    char buf[10];
    assert_string_equal(fjf_display_name("abcdefghijklmnop", buf, sizeof buf), "abcdef...");
    assert_string_equal(fjf_display_name("abcdefghi", buf, sizeof buf), "abcdefghi");
    /* A character or an escape is never cut in half. */
    assert_string_equal(fjf_display_name("头发头发头发", buf, sizeof buf), "头发...");
    assert_string_equal(fjf_display_name("abcde\033xyz", buf, sizeof buf), "abcde...");
    char tiny[2];
    assert_string_equal(fjf_display_name("abc", tiny, sizeof tiny), "");
    assert_int_equal(strlen(fjf_display_name("abc", buf, 1)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_printable_names_unchanged),
        cmocka_unit_test(test_controls_escaped),
        cmocka_unit_test(test_bidi_and_separators_escaped),
        cmocka_unit_test(test_invalid_utf8_escaped),
        cmocka_unit_test(test_truncated_to_the_buffer),
    };
    return cmocka_run_group_tests_name("display", tests, NULL, NULL);
}
