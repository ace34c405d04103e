/* Tests (cmocka) for libfanjian-formats' markup rewriters (fanjian-formats.h): HTML,
 * SubRip, ASS/SSA, WebVTT and Markdown.
 *
 * A marking callback wraps every text span in « », so the expected
 * outputs show exactly which bytes are text; an identity callback must
 * give every input back byte for byte (real-looking documents, and random
 * strings built from each format's significant pieces); the end-to-end
 * test runs the real converter (skipped without FANJIAN_DICT).
 *
 * Environment: FANJIAN_DICT, FANJIAN_TEST_QUICK, FANJIAN_TEST_SEED. */
#include "testutil.h"

#include <expat.h>

#include "fanjian-formats.h"
#include "../formats/html.h"

typedef int (*rewrite_fn)(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                          fjf_error *err);

#define STR_(x) #x
#define STR(x) STR_(x)
#define HERE __FILE__ ":" STR(__LINE__)

#define OPEN "\xC2\xAB"  /* « */
#define CLOSE "\xC2\xBB" /* » */

/* ---- callbacks ---------------------------------------------------------------------- */

typedef struct seen {
    size_t spans;
    int empty; /* a span of no bytes was passed */
} seen;

static void note(void *ctx, size_t n)
{
    seen *s = ctx;
    if (!s)
        return;
    s->spans++;
    if (!n)
        s->empty = 1;
}

static int cb_copy(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    note(ctx, len);
    return fjf_buf_append(out, text, len);
}

static int cb_mark(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    note(ctx, len);
    return fjf_buf_append(out, OPEN, 2) || fjf_buf_append(out, text, len) ||
                   fjf_buf_append(out, CLOSE, 2)
               ? -1
               : 0;
}

static int contains(const char *s, size_t n, const char *w)
{
    size_t k = strlen(w);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(s + i, w, k) == 0)
            return 1;
    return 0;
}

/* Fails on a span holding "FAIL". */
static int cb_fail(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    (void)ctx;
    return contains(text, len, "FAIL") ? -1 : fjf_buf_append(out, text, len);
}

/* Fails on the n-th span (ctx: a countdown). */
static int cb_fail_nth(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    size_t *left = ctx;
    if ((*left)-- == 0)
        return -1;
    return fjf_buf_append(out, text, len);
}

/* The real converter (ctx: an fj_converter). */
static int cb_convert(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    char *conv = NULL;
    size_t n = 0;
    if (fj_convert_alloc(ctx, text, len, &conv, &n) != FJ_OK)
        return -1;
    int r = fjf_buf_append(out, conv, n);
    fj_free(ctx, conv);
    return r;
}

/* ---- running a rewrite ---------------------------------------------------------------- */

/* The output (NUL-terminated, malloc'd) of fn over in[0..len). */
static char *run(rewrite_fn fn, const char *in, size_t len, fjf_text_fn cb, void *ctx,
                 const char *lang, const char *charset, size_t *out_len, int *rc, fjf_error *err)
{
    fjf_rewrite rw = {cb, ctx, lang, charset, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    fjf_buf out = {NULL, 0, 0};
    fjf_error e;
    memset(&e, 0, sizeof e);
    *rc = fn(in, len, &rw, &out, err ? err : &e);
    if (fjf_buf_append(&out, "", 1) != 0)
        abort();
    *out_len = out.len - 1;
    return out.data;
}

/* The marked output of fn over `in` is `exp`. */
static void expect_rw(rewrite_fn fn, const char *lang, const char *charset, const char *in,
                      const char *exp, const char *where)
{
    size_t n;
    int rc;
    seen s = {0, 0};
    char *got = run(fn, in, strlen(in), cb_mark, &s, lang, charset, &n, &rc, NULL);
    int ok = rc == 0 && !s.empty && t_same(where, exp, strlen(exp), got, n);
    free(got);
    if (!ok)
        fail_msg("%s: rc %d, empty span %d", where, rc, s.empty);
}

#define EXPECT(fn, in, exp) expect_rw(fn, NULL, NULL, in, exp, HERE)
#define EXPECT_LC(fn, lang, charset, in, exp) expect_rw(fn, lang, charset, in, exp, HERE)

/* The marked output, for checks by substring. */
static char *marked(rewrite_fn fn, const char *in, size_t len, const char *lang,
                    const char *charset, size_t *n)
{
    int rc;
    char *got = run(fn, in, len, cb_mark, NULL, lang, charset, n, &rc, NULL);
    assert_int_equal(rc, 0);
    return got;
}

static void has_(const char *s, size_t n, const char *w, int want, const char *where)
{
    if (contains(s, n, w) != want) {
        fprintf(stdout, "  %s: %s \"", where, want ? "missing" : "unexpected");
        t_print_text(stdout, w, strlen(w), 200);
        fputs("\"\n", stdout);
        fail_msg("%s", where);
    }
}
#define HAS(s, n, w) has_(s, n, w, 1, HERE)
#define LACKS(s, n, w) has_(s, n, w, 0, HERE)

/* Checks a marked output against its input: without the markers it is the
 * input; spans are not empty, not nested, and begin and end on character
 * boundaries (as a decoder reads the input from its start). 1 when so. */
static int check_marked(const char *in, size_t len, const char *got, size_t n, const char *where)
{
    unsigned char *bound = calloc(len + 1, 1);
    if (!bound)
        abort();
    uint32_t cp;
    for (size_t i = 0; i < len;) {
        bound[i] = 1;
        size_t k = t_utf8_char(in + i, len - i, &cp);
        i += k ? k : 1;
    }
    bound[len] = 1;
    size_t j = 0, open_at = 0;
    int depth = 0, ok = 1;
    for (size_t i = 0; i < n && ok;) {
        if (n - i >= 2 && got[i] == '\xC2' && (got[i + 1] == '\xAB' || got[i + 1] == '\xBB')) {
            int opening = got[i + 1] == '\xAB';
            if (opening ? depth != 0 : (depth != 1 || open_at == j))
                ok = 0;
            if (!bound[j])
                ok = 0;
            depth = opening;
            open_at = j;
            i += 2;
            continue;
        }
        if (j >= len || got[i] != in[j])
            ok = 0;
        i++;
        j++;
    }
    if (ok && (j != len || depth))
        ok = 0;
    free(bound);
    if (!ok)
        fprintf(stdout, "  %s: marked output does not fit its input (near input byte %zu)\n", where,
                j);
    return ok;
}

/* Every property that holds for any input: identity with a copying
 * callback; marked spans that fit; failures reported inside the input. */
static void properties(rewrite_fn fn, const char *in, size_t len, const char *where)
{
    size_t n;
    int rc;
    seen s = {0, 0};
    char *got = run(fn, in, len, cb_copy, &s, NULL, NULL, &n, &rc, NULL);
    int ok = rc == 0 && !s.empty && t_same(where, in, len, got, n);
    free(got);
    if (!ok) {
        fputs("  input: ", stdout);
        t_print_escaped(stdout, in, len, 400);
        fputs("\n", stdout);
        fail_msg("%s: identity (rc %d, empty span %d)", where, rc, s.empty);
    }
    if (!contains(in, len, OPEN) && !contains(in, len, CLOSE)) {
        got = run(fn, in, len, cb_mark, NULL, NULL, NULL, &n, &rc, NULL);
        ok = rc == 0 && check_marked(in, len, got, n, where);
        free(got);
        if (!ok) {
            fputs("  input: ", stdout);
            t_print_escaped(stdout, in, len, 400);
            fputs("\n", stdout);
            fail_msg("%s: marked spans", where);
        }
    }
    /* With lang and charset: no crash, no failure. */
    got = run(fn, in, len, cb_mark, NULL, "zh-TW", "UTF-8", &n, &rc, NULL);
    free(got);
    assert_int_equal(rc, 0);
    /* A callback failing on each span in turn: -1, offset inside. */
    for (size_t k = 0; k < s.spans && k < 4; k++) {
        size_t left = k;
        fjf_error err;
        memset(&err, 0, sizeof err);
        got = run(fn, in, len, cb_fail_nth, &left, NULL, NULL, &n, &rc, &err);
        free(got);
        if (rc != -1 || err.offset >= len)
            fail_msg("%s: failing span %zu: rc %d, offset %zu of %zu", where, k, rc, err.offset,
                     len);
    }
}

/* The document as it is, with CRLF line endings, and after a BOM. */
static void properties_variants(rewrite_fn fn, const char *doc, const char *where)
{
    tbuf b = {0};
    properties(fn, doc, strlen(doc), where);
    for (const char *p = doc; *p; p++)
        tb_adds(&b, *p == '\n' ? "\r\n" : (char[2]){*p, 0});
    properties(fn, b.p, b.len, where);
    b.len = 0;
    tb_adds(&b, "\xEF\xBB\xBF");
    tb_adds(&b, doc);
    properties(fn, b.p, b.len, where);
    tb_free(&b);
}

/* The rewrite with a callback failing on "FAIL": -1, at that span. */
static void expect_fail(rewrite_fn fn, const char *in, size_t offset, const char *where)
{
    size_t n;
    int rc;
    fjf_error err;
    memset(&err, 0, sizeof err);
    char *got = run(fn, in, strlen(in), cb_fail, NULL, NULL, NULL, &n, &rc, &err);
    free(got);
    if (rc != -1 || err.offset != offset)
        fail_msg("%s: rc %d, offset %zu (expected -1 at %zu)", where, rc, err.offset, offset);
}

/* Random documents from a format's significant pieces (fixed seed). */
static void fuzz(rewrite_fn fn, const char *const *pieces, size_t npieces, uint64_t salt)
{
    uint64_t seed = t_seed() ^ salt;
    size_t rounds = t_quick() ? 1500 : 10000;
    tbuf b = {0};
    for (size_t r = 0; r < rounds; r++) {
        b.len = 0;
        size_t count = t_below(&seed, 40);
        for (size_t k = 0; k < count; k++) {
            if (t_below(&seed, 8) == 0) { /* a random byte */
                char c = (char)t_below(&seed, 256);
                tb_add(&b, &c, 1);
            } else {
                tb_adds(&b, pieces[t_below(&seed, npieces)]);
            }
        }
        tb_add(&b, "", 0);
        properties(fn, b.p, b.len, "fuzz");
    }
    /* Bytes alone. */
    for (size_t r = 0; r < rounds / 4; r++) {
        b.len = 0;
        size_t count = t_below(&seed, 200);
        for (size_t k = 0; k < count; k++) {
            char c = (char)t_below(&seed, 256);
            tb_add(&b, &c, 1);
        }
        tb_add(&b, "", 0);
        properties(fn, b.p, b.len, "random bytes");
    }
    tb_free(&b);
}

/* Long inputs made to make a careless reader slow (quadratic searches). */
static void stress(rewrite_fn fn, const char *const *units, size_t nunits)
{
    size_t target = t_quick() ? 60000 : 400000;
    for (size_t u = 0; u < nunits; u++) {
        tbuf b = {0};
        while (b.len < target)
            tb_adds(&b, units[u]);
        size_t n;
        int rc;
        char *got = run(fn, b.p, b.len, cb_copy, NULL, NULL, NULL, &n, &rc, NULL);
        int ok = rc == 0 && n == b.len && memcmp(got, b.p, n) == 0;
        free(got);
        tb_free(&b);
        if (!ok)
            fail_msg("stress unit %zu", u);
    }
}

/* ---- HTML ------------------------------------------------------------------------------ */

static const char html_doc[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"zh-CN\">\n"
    "<head>\n"
    "<meta charset=\"gb2312\">\n"
    "<meta name=\"description\" content=\"一个关于头发的故事\">\n"
    "<title>头发干了 &amp; 其他</title>\n"
    "<style>\n"
    "body { font-family: \"微软雅黑\"; }\n"
    "</style>\n"
    "<script>\n"
    "var 头发 = \"<p>头发</p>\";\n"
    "if (a < b && c > d) { document.write(\"</scr\" + \"ipt>\"); }\n"
    "</script>\n"
    "</head>\n"
    "<body>\n"
    "<!-- 注释：头发 -->\n"
    "<h1 title=\"标题\">头发干了</h1>\n"
    "<p>我们去打印机那里取文件。<img src=\"头发.png\" alt=\"头发的照片\"><br/>\n"
    "他说：“你好”&nbsp;&#x4E00;</p>\n"
    "<pre><code>int 头发 = 1; // 注释\n"
    "</code></pre>\n"
    "<p>用<kbd>Ctrl</kbd>+<kbd>C</kbd>复制<code>头发</code>。</p>\n"
    "<input type=\"text\" placeholder=\"请输入头发\" aria-label=\"搜索头发\">\n"
    "<textarea>头发</textarea>\n"
    "</body>\n"
    "</html>\n";

static void test_html_document(void **state)
{
    (void)state;
    properties_variants(fjf_html_rewrite, html_doc, HERE);
    size_t n;
    char *s = marked(fjf_html_rewrite, html_doc, strlen(html_doc), NULL, NULL, &n);
    HAS(s, n,
        "<script>\nvar 头发 = \"<p>头发</p>\";\n"
        "if (a < b && c > d) { document.write(\"</scr\" + \"ipt>\"); }\n</script>");
    HAS(s, n, "<style>\nbody { font-family: \"微软雅黑\"; }\n</style>");
    HAS(s, n, "<!-- 注释：头发 -->");
    HAS(s, n, "<title>" OPEN "头发干了 &amp; 其他" CLOSE "</title>");
    HAS(s, n, "content=\"" OPEN "一个关于头发的故事" CLOSE "\"");
    HAS(s, n, "<h1 title=\"" OPEN "标题" CLOSE "\">" OPEN "头发干了" CLOSE "</h1>");
    HAS(s, n,
        "<p>" OPEN "我们去打印机那里取文件。" CLOSE "<img src=\"头发.png\" alt=\"" OPEN
        "头发的照片" CLOSE "\"><br/>" OPEN "\n他说：“你好”&nbsp;&#x4E00;" CLOSE "</p>");
    HAS(s, n, "<pre><code>int 头发 = 1; // 注释\n</code></pre>");
    HAS(s, n,
        "<kbd>Ctrl</kbd>" OPEN "+" CLOSE "<kbd>C</kbd>" OPEN "复制" CLOSE "<code>头发</code>" OPEN
        "。" CLOSE "</p>");
    HAS(s, n,
        "placeholder=\"" OPEN "请输入头发" CLOSE "\" aria-label=\"" OPEN "搜索头发" CLOSE "\"");
    HAS(s, n, "<textarea>" OPEN "头发" CLOSE "</textarea>");
    HAS(s, n, "<html lang=\"zh-CN\">");
    HAS(s, n, "<meta charset=\"gb2312\">");
    free(s);
    s = marked(fjf_html_rewrite, html_doc, strlen(html_doc), "zh-TW", "UTF-8", &n);
    HAS(s, n, "<html lang=\"zh-TW\">" OPEN "\n" CLOSE "<head>");
    HAS(s, n, "<meta charset=\"UTF-8\">" OPEN "\n" CLOSE "<meta name");
    LACKS(s, n, "zh-CN");
    free(s);
}

static void test_html_text_and_attributes(void **state)
{
    (void)state;
    rewrite_fn f = fjf_html_rewrite;
    EXPECT(f, "", "");
    EXPECT(f, "头发", OPEN "头发" CLOSE);
    EXPECT(f, "<p>头发</p>", "<p>" OPEN "头发" CLOSE "</p>");
    EXPECT(f, "<p title=\"头发\" class=\"头发\" data-x='头'>头发</p>",
           "<p title=\"" OPEN "头发" CLOSE "\" class=\"头发\" data-x='头'>" OPEN "头发" CLOSE
           "</p>");
    EXPECT(f, "<img alt='图' src=图.png>", "<img alt='" OPEN "图" CLOSE "' src=图.png>");
    EXPECT(f, "<img alt=图片 src=x>", "<img alt=" OPEN "图片" CLOSE " src=x>");
    EXPECT(f, "<IMG ALT = \"图\" TITLE=标题/>",
           "<IMG ALT = \"" OPEN "图" CLOSE "\" TITLE=" OPEN "标题/" CLOSE ">");
    EXPECT(f, "<input placeholder=\"请输入\" aria-label=\"搜索\" value=\"值\">",
           "<input placeholder=\"" OPEN "请输入" CLOSE "\" aria-label=\"" OPEN "搜索" CLOSE
           "\" value=\"值\">");
    EXPECT(f, "<a title=\"a>b\" href=\"/头发\">中</a>",
           "<a title=\"" OPEN "a>b" CLOSE "\" href=\"/头发\">" OPEN "中" CLOSE "</a>");
    EXPECT(f, "<p title=\"\" alt>中", "<p title=\"\" alt>" OPEN "中" CLOSE);
    /* The tokenizer's odd cases: "=x" is an attribute name; "a=>" has no value. */
    EXPECT(f, "<p =x title = \"中\" alt=>文",
           "<p =x title = \"" OPEN "中" CLOSE "\" alt=>" OPEN "文" CLOSE);
    EXPECT(f, "<p title=\"a\"alt=\"b\">",
           "<p title=\"" OPEN "a" CLOSE "\"alt=\"" OPEN "b" CLOSE "\">");
    /* Entities stay in the span as they are. */
    EXPECT(f, "<p>&amp;头&#x53D1;&nbsp;发&lt;</p>",
           "<p>" OPEN "&amp;头&#x53D1;&nbsp;发&lt;" CLOSE "</p>");
    EXPECT(f, "<p title=\"&quot;头&quot;\">", "<p title=\"" OPEN "&quot;头&quot;" CLOSE "\">");
    /* White space between tags is text too. */
    EXPECT(f, "<ul>\n<li>中</li>\n</ul>",
           "<ul>" OPEN "\n" CLOSE "<li>" OPEN "中" CLOSE "</li>" OPEN "\n" CLOSE "</ul>");
    /* End tags, even with attributes, are copied. */
    EXPECT(f, "</p class=\"中\" title=\"中\">文", "</p class=\"中\" title=\"中\">" OPEN "文" CLOSE);
    /* A byte order mark is copied. */
    EXPECT(f, "\xEF\xBB\xBF<p>中</p>", "\xEF\xBB\xBF<p>" OPEN "中" CLOSE "</p>");
    EXPECT(f, "\xEF\xBB\xBF中", "\xEF\xBB\xBF" OPEN "中" CLOSE);
}

static void test_html_meta(void **state)
{
    (void)state;
    rewrite_fn f = fjf_html_rewrite;
    EXPECT(f, "<meta name=\"description\" content=\"描述\">",
           "<meta name=\"description\" content=\"" OPEN "描述" CLOSE "\">");
    EXPECT(f, "<meta content=\"关键\" name=Keywords>",
           "<meta content=\"" OPEN "关键" CLOSE "\" name=Keywords>");
    EXPECT(f, "<META NAME=\" author \" CONTENT='作者'>",
           "<META NAME=\" author \" CONTENT='" OPEN "作者" CLOSE "'>");
    EXPECT(f, "<meta name=\"title\" content=标题>",
           "<meta name=\"title\" content=" OPEN "标题" CLOSE ">");
    EXPECT(f, "<meta property=\"og:title\" content=\"标题\">",
           "<meta property=\"og:title\" content=\"" OPEN "标题" CLOSE "\">");
    EXPECT(f, "<meta name=\"viewport\" content=\"中\">", "<meta name=\"viewport\" content=\"中\">");
    EXPECT(f, "<meta name=\"generator\" content=\"中\">",
           "<meta name=\"generator\" content=\"中\">");
    EXPECT(f, "<link title=\"标题\" content=\"中\">",
           "<link title=\"" OPEN "标题" CLOSE "\" content=\"中\">");
}

static void test_html_raw_text(void **state)
{
    (void)state;
    rewrite_fn f = fjf_html_rewrite;
    EXPECT(f, "<script>var a=\"<p>中\";</script><style>p{content:\"中\"}</style>中",
           "<script>var a=\"<p>中\";</script><style>p{content:\"中\"}</style>" OPEN "中" CLOSE);
    EXPECT(f, "<SCRIPT type=\"text/javascript\">x</scriptx>中</Script >文",
           "<SCRIPT type=\"text/javascript\">x</scriptx>中</Script >" OPEN "文" CLOSE);
    /* Inside "<!--", a "<script>" hides the next "</script>". */
    EXPECT(f, "<script><!--<script>x</script>y--></script>中",
           "<script><!--<script>x</script>y--></script>" OPEN "中" CLOSE);
    EXPECT(f, "<script><!-- a --></script>中", "<script><!-- a --></script>" OPEN "中" CLOSE);
    EXPECT(f, "<script><!--></script>中", "<script><!--></script>" OPEN "中" CLOSE);
    /* Unterminated: everything to the end is script. */
    EXPECT(f, "<script>头发<p>头发</p>", "<script>头发<p>头发</p>");
    EXPECT(f, "<script>a</script", "<script>a</script");
    EXPECT(f, "<style>a</styl>中</style>文", "<style>a</styl>中</style>" OPEN "文" CLOSE);
    EXPECT(f, "<xmp><b>中</b></xmp>文", "<xmp><b>中</b></xmp>" OPEN "文" CLOSE);
    EXPECT(f, "<iframe>中</iframe>文", "<iframe>中</iframe>" OPEN "文" CLOSE);
    EXPECT(f, "<plaintext>中</plaintext>文", "<plaintext>中</plaintext>文");
    /* RCDATA: text, even what looks like tags. */
    EXPECT(f, "<title>标题<b></title><textarea>文<p>字</textarea>",
           "<title>" OPEN "标题<b>" CLOSE "</title><textarea>" OPEN "文<p>字" CLOSE "</textarea>");
    EXPECT(f, "<title>未完", "<title>" OPEN "未完" CLOSE);
    /* Code: not converted, attributes still are. */
    EXPECT(f, "<p>说<code>代码</code>完<pre>预<b>格式</b></pre>后<kbd>键</kbd><samp>样</samp></p>",
           "<p>" OPEN "说" CLOSE "<code>代码</code>" OPEN "完" CLOSE "<pre>预<b>格式</b></pre>" OPEN
           "后" CLOSE "<kbd>键</kbd><samp>样</samp></p>");
    EXPECT(f, "<code title=\"标题\">代码</code>",
           "<code title=\"" OPEN "标题" CLOSE "\">代码</code>");
    EXPECT(f, "<pre><code>x</code>y</pre>z", "<pre><code>x</code>y</pre>" OPEN "z" CLOSE);
    EXPECT(f, "<PRE>中</Pre>文", "<PRE>中</Pre>" OPEN "文" CLOSE);
    EXPECT(f, "<code/>中", "<code/>" OPEN "中" CLOSE);
    EXPECT(f, "</code>中", "</code>" OPEN "中" CLOSE);
    EXPECT(f, "<pre>中", "<pre>中");
    EXPECT(f, "<pre><textarea>中</textarea></pre>", "<pre><textarea>中</textarea></pre>");
}

static void test_html_markup(void **state)
{
    (void)state;
    rewrite_fn f = fjf_html_rewrite;
    EXPECT(f, "<!-- 注释 -->中<!---->文<!-->字<!--->句",
           "<!-- 注释 -->" OPEN "中" CLOSE "<!---->" OPEN "文" CLOSE "<!-->" OPEN "字" CLOSE
           "<!--->" OPEN "句" CLOSE);
    EXPECT(f, "<!-- a --!>中", "<!-- a --!>" OPEN "中" CLOSE);
    EXPECT(f, "<!-- a -- b -->中", "<!-- a -- b -->" OPEN "中" CLOSE);
    EXPECT(f, "<!DOCTYPE html><?xml-stylesheet 中?><![CDATA[中]]>文",
           "<!DOCTYPE html><?xml-stylesheet 中?><![CDATA[中]]>" OPEN "文" CLOSE);
    EXPECT(f, "<!中>文<?中>字</ 中>句",
           "<!中>" OPEN "文" CLOSE "<?中>" OPEN "字" CLOSE "</ 中>" OPEN "句" CLOSE);
    EXPECT(f, "</>中", "</>" OPEN "中" CLOSE);
    /* Malformed: nothing is lost. */
    EXPECT(f, "a < b 中", OPEN "a < b 中" CLOSE);
    EXPECT(f, "<3 中 <", OPEN "<3 中 <" CLOSE);
    EXPECT(f, "中</", OPEN "中</" CLOSE);
    EXPECT(f, "中<", OPEN "中<" CLOSE);
    EXPECT(f, "中<!", OPEN "中" CLOSE "<!");
    EXPECT(f, "<p 中", "<p 中");
    EXPECT(f, "文<p title=\"未完>中", OPEN "文" CLOSE "<p title=\"未完>中");
    EXPECT(f, "文<p title=", OPEN "文" CLOSE "<p title=");
    EXPECT(f, "中<!-- 未完", OPEN "中" CLOSE "<!-- 未完");
    EXPECT(f, "中<![CDATA[ 未完", OPEN "中" CLOSE "<![CDATA[ 未完");
    EXPECT(f, "</p 中", "</p 中");
    EXPECT(f, "<p>\xFF\xE4\xB8</p>", "<p>" OPEN "\xFF\xE4\xB8" CLOSE "</p>");
    EXPECT(f, "<p>a\0b</p>", "<p>" OPEN "a" CLOSE);
}

static void test_html_lang_charset(void **state)
{
    (void)state;
    rewrite_fn f = fjf_html_rewrite;
    EXPECT_LC(f, "zh-TW", NULL,
              "<html lang=\"zh-CN\"><p lang='zh_Hans' xml:lang=zh>中</p><span lang=\"en\">中</span>"
              "<span lang=\"zha\">x</span><span lang=\"ZH-hk\">y</span></html>",
              "<html lang=\"zh-TW\"><p lang='zh-TW' xml:lang=zh-TW>" OPEN "中" CLOSE
              "</p><span lang=\"en\">" OPEN "中" CLOSE "</span><span lang=\"zha\">" OPEN "x" CLOSE
              "</span><span lang=\"zh-TW\">" OPEN "y" CLOSE "</span></html>");
    EXPECT_LC(f, "zh-TW", NULL, "<!DOCTYPE html><html><head>",
              "<!DOCTYPE html><html lang=\"zh-TW\"><head>");
    EXPECT_LC(f, "zh-TW", NULL, "<HTML class=x>", "<HTML class=x lang=\"zh-TW\">");
    EXPECT_LC(f, "zh-HK", NULL, "<html/>", "<html lang=\"zh-HK\"/>");
    EXPECT_LC(f, "zh-HK", NULL, "<html dir=ltr/>", "<html dir=ltr/ lang=\"zh-HK\">");
    EXPECT_LC(f, "zh-TW", NULL, "<html><html>", "<html lang=\"zh-TW\"><html>");
    EXPECT_LC(f, "zh-TW", NULL, "<html lang=\"en\">", "<html lang=\"en\">");
    EXPECT_LC(f, "zh-TW", NULL, "<html lang>", "<html lang>");
    EXPECT_LC(f, "zh-TW", NULL, "<html xml:lang=\"en\">", "<html xml:lang=\"en\">");
    EXPECT_LC(f, "zh-TW", NULL, "<html xml:lang=\"zh-CN\">",
              "<html xml:lang=\"zh-TW\" lang=\"zh-TW\">");
    EXPECT_LC(f, "zh-TW", NULL, "<html", "<html");
    EXPECT_LC(f, "zh-TW", NULL, "<p>中</p>", "<p>" OPEN "中" CLOSE "</p>");
    EXPECT(f, "<html lang=\"zh-CN\"><html>", "<html lang=\"zh-CN\"><html>");
    /* A piece of a document (Markdown's raw HTML) gets no lang added. */
    fjf_rewrite rw = {cb_copy, NULL, "zh-TW", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    fjf_buf out = {NULL, 0, 0};
    fjf_error err;
    assert_int_equal(fjf_html_fragment_rewrite("<html><p lang=zh>", 17, &rw, &out, &err), 0);
    assert_true(t_same(HERE, "<html><p lang=zh-TW>", 20, out.data, out.len));
    fjf_buf_free(&out);

    EXPECT_LC(f, NULL, "UTF-8", "<meta charset=\"gb2312\"><meta charset=gbk><META CHARSET='big5'>",
              "<meta charset=\"UTF-8\"><meta charset=UTF-8><META CHARSET='UTF-8'>");
    EXPECT_LC(f, NULL, "UTF-8",
              "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gbk\">",
              "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=UTF-8\">");
    EXPECT_LC(f, NULL, "UTF-8",
              "<meta content='text/html;charset=\"GB2312\"' http-equiv=content-type>",
              "<meta content='text/html;charset=\"UTF-8\"' http-equiv=content-type>");
    EXPECT_LC(f, NULL, "UTF-8", "<meta http-equiv=\"refresh\" content=\"5; charset=gbk\">",
              "<meta http-equiv=\"refresh\" content=\"5; charset=gbk\">");
    EXPECT_LC(f, NULL, "UTF-8", "<meta http-equiv=\"Content-Type\" content=\"text/html\">",
              "<meta http-equiv=\"Content-Type\" content=\"text/html\">");
    EXPECT_LC(f, NULL, "UTF-8", "<p charset=gbk>", "<p charset=gbk>");
    EXPECT_LC(f, NULL, "UTF-8", "<?xml version=\"1.0\" encoding=\"GB2312\"?>\n<p>中</p>",
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" OPEN "\n" CLOSE "<p>" OPEN "中" CLOSE
              "</p>");
    EXPECT_LC(f, NULL, "UTF-8", "<?xml version='1.0' encoding='gbk' standalone='yes'?>",
              "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>");
    EXPECT(f, "<meta charset=\"gb2312\">", "<meta charset=\"gb2312\">");
}

static void test_html_failures(void **state)
{
    (void)state;
    expect_fail(fjf_html_rewrite, "<p>ok</p><p>FAIL here</p>", 12, HERE);
    expect_fail(fjf_html_rewrite, "<p title=\"FAIL\">", 10, HERE);
    expect_fail(fjf_html_rewrite, "<title>FAIL</title>", 7, HERE);
}

static const char *const html_pieces[] = {
    "<",
    ">",
    "</",
    "/>",
    "<!--",
    "-->",
    "--!>",
    "<!",
    "<?",
    "?>",
    "<script>",
    "</script>",
    "<SCRIPT>",
    "<style>",
    "</STYLE>",
    "<pre>",
    "</pre>",
    "<code>",
    "</code>",
    "<p title=\"",
    "<img alt=",
    "\"",
    "'",
    "=",
    " ",
    "\n",
    "\r\n",
    "\t",
    "<![CDATA[",
    "]]>",
    "<?xml version=\"1.0\" encoding=\"x\"?>",
    "<!DOCTYPE html>",
    "<html>",
    "<html lang=zh>",
    "<meta charset=gbk>",
    "<meta http-equiv=content-type content=\"text/html; charset=gbk\">",
    "<meta name=description content=",
    "&amp;",
    "&#x4E00;",
    "头发",
    "中文",
    "\xE4\xB8",
    "\xFF",
    "<textarea>",
    "</textarea>",
    "<title>",
    "</title>",
    "<plaintext>",
    "<!-->",
    "a",
    "<p>",
    "</p>",
    "<xmp>",
    "</xmp",
    "<kbd>",
    "</kbd>",
    "\xEF\xBB\xBF",
};

static void test_html_random(void **state)
{
    (void)state;
    fuzz(fjf_html_rewrite, html_pieces, sizeof html_pieces / sizeof *html_pieces, 1);
    static const char *const units[] = {
        "<p title=\"中",         "<!-- 中 ",  "<script>", "<a b c d ",
        "</code></pre>中<code>", "<title>中", "<<<<",     "<p>头发</p>\n",
    };
    stress(fjf_html_rewrite, units, sizeof units / sizeof *units);
}

/* ---- SubRip ------------------------------------------------------------------------------ */

static const char srt_doc[] = "1\n"
                              "00:00:01,000 --> 00:00:03,500\n"
                              "<i>头发干了</i>，我们走吧。\n"
                              "{\\an8}（屏幕上方的字）\n"
                              "\n"
                              "2\n"
                              "00:00:04,000 --> 00:00:06,000\n"
                              "<font color=\"#ffff00\">你说什么？</font>\n"
                              "2008\n"
                              "\n"
                              "3\n"
                              "00:00:07,000 --> 00:00:09,000 X1:100 X2:200 Y1:10 Y2:20\n"
                              "第一行\n"
                              "\n"
                              "第二行（空行之后）\n"
                              "4\n"
                              "00:00:10,000 --> 00:00:11,000\n"
                              "没有空行的字幕";

static const char srt_exp[] =
    "1\n"
    "00:00:01,000 --> 00:00:03,500\n"
    "<i>" OPEN "头发干了" CLOSE "</i>" OPEN "，我们走吧。" CLOSE "\n"
    "{\\an8}" OPEN "（屏幕上方的字）" CLOSE "\n"
    "\n"
    "2\n"
    "00:00:04,000 --> 00:00:06,000\n"
    "<font color=\"#ffff00\">" OPEN "你说什么？" CLOSE "</font>\n" OPEN "2008" CLOSE "\n"
    "\n"
    "3\n"
    "00:00:07,000 --> 00:00:09,000 X1:100 X2:200 Y1:10 Y2:20\n" OPEN "第一行" CLOSE "\n"
    "\n" OPEN "第二行（空行之后）" CLOSE "\n"
    "4\n"
    "00:00:10,000 --> 00:00:11,000\n" OPEN "没有空行的字幕" CLOSE;

static void test_srt(void **state)
{
    (void)state;
    rewrite_fn f = fjf_srt_rewrite;
    properties_variants(f, srt_doc, HERE);
    EXPECT(f, srt_doc, srt_exp);
    EXPECT(f, "", "");
    EXPECT(f, "1\r\n00:00:01,000 --> 00:00:02,000\r\n中\r\n\r\n",
           "1\r\n00:00:01,000 --> 00:00:02,000\r\n" OPEN "中" CLOSE "\r\n\r\n");
    EXPECT(f, "1\r00:00:01,000 --> 00:00:02,000\r中\r",
           "1\r00:00:01,000 --> 00:00:02,000\r" OPEN "中" CLOSE "\r");
    EXPECT(f,
           "\xEF\xBB\xBF"
           "1\n0:0:1.5 --> 0:0:2.5\n中",
           "\xEF\xBB\xBF"
           "1\n0:0:1.5 --> 0:0:2.5\n" OPEN "中" CLOSE);
    /* A number right after the timing line is dialogue; a number before
     * one is the cue's. */
    EXPECT(f, "00:00:01,000 --> 00:00:02,000\n42\n00:00:03,000 --> 00:00:04,000\n中\n",
           "00:00:01,000 --> 00:00:02,000\n" OPEN "42" CLOSE
           "\n00:00:03,000 --> 00:00:04,000\n" OPEN "中" CLOSE "\n");
    EXPECT(f, "12\n中文\n", OPEN "12" CLOSE "\n" OPEN "中文" CLOSE "\n");
    /* Tags and overrides stay; what is not one is text. */
    EXPECT(f, "1\n00:00:01,000 --> 00:00:02,000\n<b>粗</b> <u>下</u>{\\i1}斜{\\i0}\n",
           "1\n00:00:01,000 --> 00:00:02,000\n<b>" OPEN "粗" CLOSE "</b>" OPEN " " CLOSE "<u>" OPEN
           "下" CLOSE "</u>{\\i1}" OPEN "斜" CLOSE "{\\i0}\n");
    EXPECT(f, "1\n00:00:01,000 --> 00:00:02,000\n<i中 a<b 3<4 {中} {\\未完\n",
           "1\n00:00:01,000 --> 00:00:02,000\n" OPEN "<i中 a<b 3<4 {中} {\\未完" CLOSE "\n");
    EXPECT(f, "1\n00:00:01,000 --> 00:00:02,000\n<font color=\"red\">红</font>\n",
           "1\n00:00:01,000 --> 00:00:02,000\n<font color=\"red\">" OPEN "红" CLOSE "</font>\n");
    /* Blank lines with spaces, and timing look-alikes in dialogue. */
    EXPECT(f, "1\n00:00:01,000 --> 00:00:02,000\n  \n-->中\n",
           "1\n00:00:01,000 --> 00:00:02,000\n  \n" OPEN "-->中" CLOSE "\n");
    expect_fail(f, "1\n00:00:01,000 --> 00:00:02,000\nok\n<i>FAIL</i>\n", 38, HERE);
}

static const char *const srt_pieces[] = {
    "1",
    "\n",
    "\r\n",
    "\r",
    "00:00:01,000 --> 00:00:02,000",
    " --> ",
    "<i>",
    "</i>",
    "<",
    ">",
    "{\\an8}",
    "{",
    "}",
    "头发",
    "12",
    " ",
    "\xEF\xBB\xBF",
    "\xFF",
    "\xE4",
    "<font color=\"red\">",
    "\n\n",
};

static void test_srt_random(void **state)
{
    (void)state;
    fuzz(fjf_srt_rewrite, srt_pieces, sizeof srt_pieces / sizeof *srt_pieces, 2);
    static const char *const units[] = {"<i", "{\\", "中<",
                                        "1\n00:00:01,000 --> 00:00:02,000\n中\n\n"};
    stress(fjf_srt_rewrite, units, sizeof units / sizeof *units);
}

/* ---- ASS / SSA ---------------------------------------------------------------------------- */

static const char ass_doc[] =
    "[Script Info]\n"
    "; 注释\n"
    "Title: 中文标题\n"
    "ScriptType: v4.00+\n"
    "\n"
    "[V4+ Styles]\n"
    "Format: Name, Fontname, Fontsize, PrimaryColour\n"
    "Style: Default,微软雅黑,20,&H00FFFFFF\n"
    "\n"
    "[Events]\n"
    "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    "Dialogue: 0,0:00:01.00,0:00:02.00,Default,张三,0,0,0,,{\\i1}头发{\\i0}干了，对吧\\N第二行\n"
    "Comment: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,注释\n"
    "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,一,二,三\n"
    "Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,\n"
    "\n"
    "[Fonts]\n"
    "fontname: a.ttf\n"
    "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,中\n"
    "[Graphics]\n"
    "M)+Q`A0&,`Dialogue: 中\n";

static const char ass_exp[] =
    "[Script Info]\n"
    "; 注释\n"
    "Title: " OPEN "中文标题" CLOSE "\n"
    "ScriptType: v4.00+\n"
    "\n"
    "[V4+ Styles]\n"
    "Format: Name, Fontname, Fontsize, PrimaryColour\n"
    "Style: Default,微软雅黑,20,&H00FFFFFF\n"
    "\n"
    "[Events]\n"
    "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    "Dialogue: 0,0:00:01.00,0:00:02.00,Default,张三,0,0,0,,{\\i1}" OPEN "头发" CLOSE "{\\i0}" OPEN
    "干了，对吧\\N第二行" CLOSE "\n"
    "Comment: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,注释\n"
    "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,," OPEN "一,二,三" CLOSE "\n"
    "Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,\n"
    "\n"
    "[Fonts]\n"
    "fontname: a.ttf\n"
    "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,中\n"
    "[Graphics]\n"
    "M)+Q`A0&,`Dialogue: 中\n";

static void test_ass(void **state)
{
    (void)state;
    rewrite_fn f = fjf_ass_rewrite;
    properties_variants(f, ass_doc, HERE);
    EXPECT(f, ass_doc, ass_exp);
    EXPECT(f, "", "");
    /* The script's title is shown by players; nothing else of [Script Info]. */
    EXPECT(f, "[Script Info]\r\nTitle:  中文 \r\nOriginal Script: 中\r\n[V4+ Styles]\r\nTitle: 中\r\n",
           "[Script Info]\r\nTitle:  " OPEN "中文" CLOSE " \r\nOriginal Script: 中\r\n[V4+ Styles]\r\nTitle: 中\r\n");
    EXPECT(f, "[script info]\ntitle:\n", "[script info]\ntitle:\n");
    /* A voice's name in WebVTT is text too (test_vtt); in ASS the Name field is not. */
    /* No Format line: the default ten fields. */
    EXPECT(f, "[Events]\nDialogue: 0,1,2,S,N,0,0,0,,中,文",
           "[Events]\nDialogue: 0,1,2,S,N,0,0,0,," OPEN "中,文" CLOSE);
    /* A Format line of its own. */
    EXPECT(f, "[Events]\r\nFormat: Start, End, Text\r\nDialogue: 0:00,0:01,中,文\r\n",
           "[Events]\r\nFormat: Start, End, Text\r\nDialogue: 0:00,0:01," OPEN "中,文" CLOSE
           "\r\n");
    /* SSA. */
    EXPECT(
        f,
        "[events]\nFormat: Marked, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, "
        "Text\nDialogue: Marked=0,0:00:01.00,0:00:02.00,*Default,NTP,0000,0000,0000,!Effect,"
        "文字\n",
        "[events]\nFormat: Marked, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, "
        "Text\nDialogue: Marked=0,0:00:01.00,0:00:02.00,*Default,NTP,0000,0000,0000,!Effect," OPEN
        "文字" CLOSE "\n");
    /* Too few fields: left alone. Outside [Events]: left alone. */
    EXPECT(f, "[Events]\nDialogue: 0,1,中\n", "[Events]\nDialogue: 0,1,中\n");
    EXPECT(f, "Dialogue: 0,1,2,S,N,0,0,0,,中\n", "Dialogue: 0,1,2,S,N,0,0,0,,中\n");
    /* Override blocks and comments in braces stay; \N \h stay in the span. */
    EXPECT(f, "[Events]\nDialogue: 0,1,2,S,N,0,0,0,,{\\pos(1,2)\\c&HFF&}中\\h文{注释}字{未完\n",
           "[Events]\nDialogue: 0,1,2,S,N,0,0,0,,{\\pos(1,2)\\c&HFF&}" OPEN "中\\h文" CLOSE
           "{注释}" OPEN "字{未完" CLOSE "\n");
    /* <i> means nothing in ASS: text. */
    EXPECT(f, "[Events]\nDialogue: 0,1,2,S,N,0,0,0,,<i>中</i>\n",
           "[Events]\nDialogue: 0,1,2,S,N,0,0,0,," OPEN "<i>中</i>" CLOSE "\n");
    EXPECT(f, "\xEF\xBB\xBF[Events]\n  Dialogue: 0,1,2,S,N,0,0,0,,中",
           "\xEF\xBB\xBF[Events]\n  Dialogue: 0,1,2,S,N,0,0,0,," OPEN "中" CLOSE);
    expect_fail(f, "[Events]\nDialogue: 0,1,2,S,N,0,0,0,,FAIL\n", 36, HERE);
}

static const char *const ass_pieces[] = {
    "[Events]",  "[Script Info]",
    "[Fonts]",   "Format: Layer, Start, Text",
    "Format: ",  "Dialogue: ",
    "Comment: ", ",",
    ",,,,,,,,,", "{\\i1}",
    "{",         "}",
    "\\N",       "头发",
    "\n",        "\r\n",
    "\r",        " ",
    "[",         "]",
    "\xE4\xB8",  "\xFF",
};

static void test_ass_random(void **state)
{
    (void)state;
    fuzz(fjf_ass_rewrite, ass_pieces, sizeof ass_pieces / sizeof *ass_pieces, 3);
    static const char *const units[] = {"{中", "[Events]\nDialogue: 0,1,2,S,N,0,0,0,,{\\b1}中\n",
                                        ","};
    stress(fjf_ass_rewrite, units, sizeof units / sizeof *units);
}

/* ---- WebVTT -------------------------------------------------------------------------------- */

static const char vtt_doc[] = "WEBVTT - 标题\n"
                              "Kind: captions\n"
                              "\n"
                              "NOTE 这是注释\n"
                              "还是注释\n"
                              "\n"
                              "STYLE\n"
                              "::cue(.中) { color: red }\n"
                              "\n"
                              "REGION\n"
                              "id:中\n"
                              "\n"
                              "1\n"
                              "00:00:01.000 --> 00:00:02.000 align:start line:0\n"
                              "<v 张三>头发</v>干了\n"
                              "<c.yellow>黄</c><00:00:01.500>色\n"
                              "\n"
                              "标识 中\n"
                              "00:00:03.000 --> 00:00:04.000\n"
                              "文字 &amp; 符号\n"
                              "\n"
                              "\n"
                              "00:05.000 --> 00:06.000\n"
                              "没有标识\n"
                              "00:07.000 --> 00:08.000\n"
                              "紧接着的字幕";

static const char vtt_exp[] = "WEBVTT - 标题\n"
                              "Kind: captions\n"
                              "\n"
                              "NOTE 这是注释\n"
                              "还是注释\n"
                              "\n"
                              "STYLE\n"
                              "::cue(.中) { color: red }\n"
                              "\n"
                              "REGION\n"
                              "id:中\n"
                              "\n"
                              "1\n"
                              "00:00:01.000 --> 00:00:02.000 align:start line:0\n"
                              "<v " OPEN "张三" CLOSE ">" OPEN "头发" CLOSE "</v>" OPEN "干了" CLOSE "\n"
                              "<c.yellow>" OPEN "黄" CLOSE "</c><00:00:01.500>" OPEN "色" CLOSE "\n"
                              "\n"
                              "标识 中\n"
                              "00:00:03.000 --> 00:00:04.000\n" OPEN "文字 &amp; 符号" CLOSE "\n"
                              "\n"
                              "\n"
                              "00:05.000 --> 00:06.000\n" OPEN "没有标识" CLOSE "\n"
                              "00:07.000 --> 00:08.000\n" OPEN "紧接着的字幕" CLOSE;

static void test_vtt(void **state)
{
    (void)state;
    rewrite_fn f = fjf_vtt_rewrite;
    properties_variants(f, vtt_doc, HERE);
    EXPECT(f, vtt_doc, vtt_exp);
    EXPECT(f, "", "");
    EXPECT(f, "WEBVTT\n", "WEBVTT\n");
    /* The header may run straight into a cue. */
    EXPECT(f, "WEBVTT\n00:01.000 --> 00:02.000\n中\n",
           "WEBVTT\n00:01.000 --> 00:02.000\n" OPEN "中" CLOSE "\n");
    /* No header: read leniently. */
    EXPECT(f, "1\r\n00:01.000 --> 00:02.000\r\n中\r\n\r\nNOTE 中\r\n",
           "1\r\n00:01.000 --> 00:02.000\r\n" OPEN "中" CLOSE "\r\n\r\nNOTE 中\r\n");
    /* "WEBVTTX" is no header; a block without timing is not shown. */
    EXPECT(f, "WEBVTTX\n中\n\n文\n", "WEBVTTX\n中\n\n文\n");
    /* Every '<' opens a tag, to '>' or the line's end. */
    EXPECT(f, "WEBVTT\n\n00:01.000 --> 00:02.000\n<v.loud 张三>中<i>文</i> a<b 未完\n",
           "WEBVTT\n\n00:01.000 --> 00:02.000\n<v.loud " OPEN "张三" CLOSE ">" OPEN "中" CLOSE "<i>" OPEN "文" CLOSE
           "</i>" OPEN " a" CLOSE "<b 未完\n");
    EXPECT(f, "WEBVTT\n\n00:01.000 --> 00:02.000\n<v 张三>中</v><v>文<v\t李四 >\n",
           "WEBVTT\n\n00:01.000 --> 00:02.000\n<v " OPEN "张三" CLOSE ">" OPEN "中" CLOSE "</v><v>"
           OPEN "文" CLOSE "<v\t" OPEN "李四 " CLOSE ">\n");
    EXPECT(f, "WEBVTT\n\n00:01.000 --> 00:02.000\n<ruby>汉<rt>han</rt></ruby>\n",
           "WEBVTT\n\n00:01.000 --> 00:02.000\n<ruby>" OPEN "汉" CLOSE "<rt>" OPEN "han" CLOSE
           "</rt></ruby>\n");
    /* A NOTE whose second line has "-->" is a cue named NOTE (as parsers read it). */
    EXPECT(f, "WEBVTT\n\nNOTE\n00:01.000 --> 00:02.000\n中\n",
           "WEBVTT\n\nNOTE\n00:01.000 --> 00:02.000\n" OPEN "中" CLOSE "\n");
    /* A line with spaces is not an empty line: still the cue. */
    EXPECT(f, "WEBVTT\n\n00:01.000 --> 00:02.000\n中\n \n文\n",
           "WEBVTT\n\n00:01.000 --> 00:02.000\n" OPEN "中" CLOSE "\n" OPEN " " CLOSE "\n" OPEN
           "文" CLOSE "\n");
    EXPECT(f, "\xEF\xBB\xBFWEBVTT\n\n00:01.000 --> 00:02.000\n中",
           "\xEF\xBB\xBFWEBVTT\n\n00:01.000 --> 00:02.000\n" OPEN "中" CLOSE);
    expect_fail(f, "WEBVTT\n\n00:01.000 --> 00:02.000\n<i>FAIL</i>\n", 35, HERE);
}

static const char *const vtt_pieces[] = {
    "WEBVTT",
    "WEBVTT ",
    "NOTE",
    "STYLE",
    "REGION",
    "-->",
    "00:01.000 --> 00:02.000",
    "<v 张>",
    "<",
    ">",
    "</v>",
    "<c.x>",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "头发",
    " ",
    "1",
    "&amp;",
    "\xE4\xB8",
    "\xFF",
    "\xEF\xBB\xBF",
};

static void test_vtt_random(void **state)
{
    (void)state;
    fuzz(fjf_vtt_rewrite, vtt_pieces, sizeof vtt_pieces / sizeof *vtt_pieces, 4);
    static const char *const units[] = {"<中", ">中", "00:01.000 --> 00:02.000\n中\n"};
    stress(fjf_vtt_rewrite, units, sizeof units / sizeof *units);
}

/* ---- Markdown -------------------------------------------------------------------------- */

static const char md_doc[] =
    "---\n"
    "title: 头发的故事\n"
    "tags: [头发, 故事]\n"
    "---\n"
    "\n"
    "# 头发干了\n"
    "\n"
    "这是一个**关于头发**的故事。请看 `头发()` 函数和 [头发的链接](https://example.com/头发 "
    "\"头发标题\")。\n"
    "第二行继续，见https://example.com/a_b和www.example.com。\n"
    "\n"
    "> 引用：头发\n"
    "> 继续引用\n"
    "懒惰的续行\n"
    "\n"
    "- 列表一\n"
    "- 列表二\n"
    "  续行\n"
    "  1. 嵌套\n"
    "\n"
    "```python\n"
    "print(\"头发\")\n"
    "```\n"
    "\n"
    "    缩进代码 头发\n"
    "\n"
    "| 表头 | 说明 |\n"
    "|------|------|\n"
    "| 头发 | `代码` |\n"
    "\n"
    "<div class=\"说明\">\n"
    "HTML 块里的头发\n"
    "</div>\n"
    "\n"
    "![头发图片](img/头发.png)\n"
    "\n"
    "[ref]: https://example.com/头发 \"引用标题\"\n"
    "[^1]: 脚注里的头发\n";

static const char md_exp[] =
    "---\n"
    "title: " OPEN "头发的故事" CLOSE "\n"
    "tags: [头发, 故事]\n"
    "---\n"
    "\n"
    "#" OPEN " 头发干了\n" CLOSE "\n" OPEN "这是一个**关于头发**的故事。请看 " CLOSE "`头发()`" OPEN
    " 函数和 " CLOSE "[" OPEN "头发的链接" CLOSE "](https://example.com/头发 \"" OPEN
    "头发标题" CLOSE "\")" OPEN "。\n第二行继续，见" CLOSE "https://example.com/a_b和www.example.com。"
    OPEN "\n" CLOSE "\n"
    "> " OPEN "引用：头发\n" CLOSE "> " OPEN "继续引用\n懒惰的续行\n" CLOSE "\n"
    "- " OPEN "列表一\n" CLOSE "- " OPEN "列表二\n  续行\n" CLOSE "  1. " OPEN "嵌套\n" CLOSE "\n"
    "```python\n"
    "print(\"头发\")\n"
    "```\n"
    "\n"
    "    缩进代码 头发\n"
    "\n" OPEN "| 表头 | 说明 |\n|------|------|\n| 头发 | " CLOSE "`代码`" OPEN " |\n" CLOSE "\n"
    "<div class=\"说明\">" OPEN "\nHTML 块里的头发\n" CLOSE "</div>" OPEN "\n" CLOSE "\n"
    "![" OPEN "头发图片" CLOSE "](img/头发.png)" OPEN "\n" CLOSE "\n"
    "[" OPEN "ref" CLOSE "]: https://example.com/头发 \"" OPEN "引用标题" CLOSE "\"\n"
    "[" OPEN "^1" CLOSE "]" OPEN ": 脚注里的头发\n" CLOSE;

static void test_markdown_document(void **state)
{
    (void)state;
    properties_variants(fjf_markdown_rewrite, md_doc, HERE);
    EXPECT(fjf_markdown_rewrite, md_doc, md_exp);
}

static void test_markdown_code(void **state)
{
    (void)state;
    rewrite_fn f = fjf_markdown_rewrite;
    EXPECT(f, "", "");
    EXPECT(f, "说 `代码` 完", OPEN "说 " CLOSE "`代码`" OPEN " 完" CLOSE);
    EXPECT(f, "a ``x ` y`` b", OPEN "a " CLOSE "``x ` y``" OPEN " b" CLOSE);
    EXPECT(f, "a `b", OPEN "a `b" CLOSE);
    EXPECT(f, "a ``b` c", OPEN "a ``b` c" CLOSE);
    EXPECT(f, "`多\n行`", "`多\n行`");
    EXPECT(f, "\\`不是代码\\` \\[a](b)", OPEN "\\`不是代码\\` \\[a](b)" CLOSE);
    EXPECT(f, "\\``代码`", OPEN "\\`" CLOSE "`代码`");
    EXPECT(f, "```python\nprint('中')\n```\n中\n",
           "```python\nprint('中')\n```\n" OPEN "中\n" CLOSE);
    EXPECT(f, "~~~~\n中\n~~~\n~~~~~\n文", "~~~~\n中\n~~~\n~~~~~\n" OPEN "文" CLOSE);
    EXPECT(f, "```\n中", "```\n中");
    /* Not a fence (a backtick in the info string), and no code span. */
    EXPECT(f, "``` a`b\n中\n", OPEN "``` a`b\n中\n" CLOSE);
    EXPECT(f, "段落\n```\n代码\n```\n", OPEN "段落\n" CLOSE "```\n代码\n```\n");
    EXPECT(f, "    代码\n\n段落\n", "    代码\n\n" OPEN "段落\n" CLOSE);
    EXPECT(f, "\t代码\n  \n    还是\n段落", "\t代码\n  \n    还是\n" OPEN "段落" CLOSE);
    EXPECT(f, "段落\n    继续\n", OPEN "段落\n    继续\n" CLOSE);
    EXPECT(f, "- 项\n\n      代码\n", "- " OPEN "项\n" CLOSE "\n      代码\n");
    EXPECT(f, "> ```\n> 代码\n> ```\n> 文\n", "> ```\n> 代码\n> ```\n> " OPEN "文\n" CLOSE);
    EXPECT(f, "> ```\n> 代码\n外面\n", "> ```\n> 代码\n" OPEN "外面\n" CLOSE);
    EXPECT(f, "- ```\n  代码\n  ```\n- 文\n", "- ```\n  代码\n  ```\n- " OPEN "文\n" CLOSE);
}

static void test_markdown_links(void **state)
{
    (void)state;
    rewrite_fn f = fjf_markdown_rewrite;
    EXPECT(f, "[头发](http://x.com/头发 \"标题\")",
           "[" OPEN "头发" CLOSE "](http://x.com/头发 \"" OPEN "标题" CLOSE "\")");
    EXPECT(f, "![图片](a.png 'T')", "![" OPEN "图片" CLOSE "](a.png '" OPEN "T" CLOSE "')");
    EXPECT(f, "[a](<中 文> (标题))", "[" OPEN "a" CLOSE "](<中 文> (" OPEN "标题" CLOSE "))");
    EXPECT(f, "[a](b(c)d)中", "[" OPEN "a" CLOSE "](b(c)d)" OPEN "中" CLOSE);
    EXPECT(f, "[a]()中", "[" OPEN "a" CLOSE "]()" OPEN "中" CLOSE);
    EXPECT(f, "[a](\n/中\n\"标\\\"题\"\n)",
           "[" OPEN "a" CLOSE "](\n/中\n\"" OPEN "标\\\"题" CLOSE "\"\n)");
    EXPECT(f, "[a](b \"未完", "[" OPEN "a" CLOSE "]" OPEN "(b \"未完" CLOSE);
    EXPECT(f, "[a](b c)", "[" OPEN "a" CLOSE "]" OPEN "(b c)" CLOSE);
    EXPECT(f, "[文字][标签]和[标签][]",
           "[" OPEN "文字" CLOSE "][" OPEN "标签" CLOSE "]" OPEN "和" CLOSE "[" OPEN "标签" CLOSE
           "][]");
    EXPECT(f, "见[标签]。", OPEN "见" CLOSE "[" OPEN "标签" CLOSE "]" OPEN "。" CLOSE);
    EXPECT(f, "[a [b] c](d)", OPEN "[a " CLOSE "[" OPEN "b" CLOSE "]" OPEN " c" CLOSE "](d)");
    EXPECT(f, "a] [b", OPEN "a] [b" CLOSE);
    EXPECT(f, "[`代码`](x)", OPEN "[" CLOSE "`代码`](x)");
    /* Reference definitions: label and title are text. */
    EXPECT(f, "[标签]: http://x.com/中 \"标题\"\n",
           "[" OPEN "标签" CLOSE "]: http://x.com/中 \"" OPEN "标题" CLOSE "\"\n");
    EXPECT(f, "[a]: /u\n'标题'\n正文\n",
           "[" OPEN "a" CLOSE "]: /u\n'" OPEN "标题" CLOSE "'\n" OPEN "正文\n" CLOSE);
    EXPECT(f, "  [a]:\n  <中>\n[b]: /v 'x' y\n",
           "  [" OPEN "a" CLOSE "]:\n  <中>\n[" OPEN "b" CLOSE "]" OPEN ": /v 'x' y\n" CLOSE);
    EXPECT(f, "[a]: /u\n[b]: /v (t)\n",
           "[" OPEN "a" CLOSE "]: /u\n[" OPEN "b" CLOSE "]: /v (" OPEN "t" CLOSE ")\n");
    EXPECT(f, "正文\n[a]: /u\n", OPEN "正文\n" CLOSE "[" OPEN "a" CLOSE "]" OPEN ": /u\n" CLOSE);
    EXPECT(f, "[^1]: 脚注\n", "[" OPEN "^1" CLOSE "]" OPEN ": 脚注\n" CLOSE);
    /* Autolinks and bare URLs. */
    EXPECT(f, "见<https://x.com/中>和<a@b.cn>。",
           OPEN "见" CLOSE "<https://x.com/中>" OPEN "和" CLOSE "<a@b.cn>" OPEN "。" CLOSE);
    /* GFM: a bare URL runs to white space or '<', Chinese text included. */
    EXPECT(f, "见https://x.com/a_b*c*和www.x.com。", OPEN "见" CLOSE "https://x.com/a_b*c*和www.x.com。");
    EXPECT(f, "(HTTP://X.COM) xhttp://y.com http:// www.",
           OPEN "(" CLOSE "HTTP://X.COM" OPEN ") xhttp://y.com http:// www." CLOSE);
    EXPECT(f, "[https://a.com](https://a.com/头发)",
           OPEN "[" CLOSE "https://a.com](https://a.com/头发)");
}

/* GFM's extended autolinks ("Autolinks (extension)"): what renderers link
 * stays byte for byte, non-ASCII domains and paths included; the text
 * around them converts. */
static void test_markdown_bare_urls(void **state)
{
    (void)state;
    rewrite_fn f = fjf_markdown_rewrite;
    EXPECT(f, "http://头发.cn/路径", "http://头发.cn/路径");
    EXPECT(f, "https://例子.测试/头发?q=头发", "https://例子.测试/头发?q=头发");
    EXPECT(f, "www.头发.cn/路径", "www.头发.cn/路径");
    EXPECT(f, "ftp://头发.cn/文件", "ftp://头发.cn/文件");
    /* Prose after a space converts; GFM runs the link to white space or '<'. */
    EXPECT(f, "见 http://头发.cn/路径 头发干了",
           OPEN "见 " CLOSE "http://头发.cn/路径" OPEN " 头发干了" CLOSE);
    EXPECT(f, "http://头发.cn/路径\n头发", "http://头发.cn/路径" OPEN "\n头发" CLOSE);
    EXPECT(f, "http://头发.cn/路<b>头发</b>",
           "http://头发.cn/路<b>" OPEN "头发" CLOSE "</b>");
    /* Chinese right after it, 。 and ） too, is in the link (GFM excludes
     * only ASCII trailing punctuation); and a scheme URL may follow Chinese
     * text directly (after anything but an ASCII letter). */
    EXPECT(f, "见http://头发.cn/路径。头发", OPEN "见" CLOSE "http://头发.cn/路径。头发");
    EXPECT(f, "（http://头发.cn/路径）", OPEN "（" CLOSE "http://头发.cn/路径）");
    /* Trailing ? ! . , : * _ ~ are not in it; inside it they are. */
    EXPECT(f, "http://头发.cn/路.径. 头发", "http://头发.cn/路.径" OPEN ". 头发" CLOSE);
    EXPECT(f, "www.头发.cn/路径?!.,:*_~ 头发", "www.头发.cn/路径" OPEN "?!.,:*_~ 头发" CLOSE);
    /* A ')' with no '(' to match is not in it; a matched one is. */
    EXPECT(f, "(见 www.头发.cn/路径) 头发",
           OPEN "(见 " CLOSE "www.头发.cn/路径" OPEN ") 头发" CLOSE);
    EXPECT(f, "(www.头发.cn/q=(头发)) 头发",
           OPEN "(" CLOSE "www.头发.cn/q=(头发)" OPEN ") 头发" CLOSE);
    EXPECT(f, "www.头发.cn/q=(头发))x 头发", "www.头发.cn/q=(头发))x" OPEN " 头发" CLOSE);
    /* A trailing entity-like &name; is not in it. */
    EXPECT(f, "www.头发.cn/q&hl; 头发", "www.头发.cn/q" OPEN "&hl; 头发" CLOSE);
    EXPECT(f, "www.头发.cn/q&hl=1 头发", "www.头发.cn/q&hl=1" OPEN " 头发" CLOSE);
    /* www. only at the start, after white space or * _ ~ (; a scheme not
     * after an ASCII letter. */
    EXPECT(f, "头发www.头发.cn", OPEN "头发www.头发.cn" CLOSE);
    EXPECT(f, "**www.头发.cn**", OPEN "**" CLOSE "www.头发.cn" OPEN "**" CLOSE);
    EXPECT(f, "xhttp://头发.cn", OPEN "xhttp://头发.cn" CLOSE);
    EXPECT(f, "1http://头发.cn", OPEN "1" CLOSE "http://头发.cn");
    /* Not a valid domain: no letter, '_' in the last two labels, punctuation
     * first. */
    EXPECT(f, "www. 头发", OPEN "www. 头发" CLOSE);
    EXPECT(f, "http://。头发", OPEN "http://。头发" CLOSE);
    EXPECT(f, "www.头_发.cn/路", OPEN "www.头_发.cn/路" CLOSE);
    EXPECT(f, "www.a_b.头发.cn/路", "www.a_b.头发.cn/路");
    /* Email autolinks are ASCII only in GFM: 头发@例子.cn is text. */
    EXPECT(f, "头发@例子.cn", OPEN "头发@例子.cn" CLOSE);
    EXPECT(f, "写信到 a.b@x.cn 头发", OPEN "写信到 a.b@x.cn 头发" CLOSE);
    /* Link reference definitions and inline links keep their destinations. */
    EXPECT(f, "[头发]: http://头发.cn/路径 \"头发\"\n",
           "[" OPEN "头发" CLOSE "]: http://头发.cn/路径 \"" OPEN "头发" CLOSE "\"\n");
    EXPECT(f, "[头发](http://头发.cn/路径)", "[" OPEN "头发" CLOSE "](http://头发.cn/路径)");
}

static void test_markdown_html(void **state)
{
    (void)state;
    rewrite_fn f = fjf_markdown_rewrite;
    EXPECT(f, "文<span title=\"标题\" class=\"中\">字</span>",
           OPEN "文" CLOSE "<span title=\"" OPEN "标题" CLOSE "\" class=\"中\">" OPEN "字" CLOSE
                "</span>");
    EXPECT(f, "a<code>中</code>b<kbd>键</kbd><Code>x</code >",
           OPEN "a" CLOSE "<code>中</code>" OPEN "b" CLOSE "<kbd>键</kbd><Code>x</code >");
    EXPECT(f, "a<code>中", OPEN "a" CLOSE "<code>" OPEN "中" CLOSE);
    EXPECT(f, "文<!-- 注释 -->字", OPEN "文" CLOSE "<!-- 注释 -->" OPEN "字" CLOSE);
    EXPECT(f, "a <b 中", OPEN "a <b 中" CLOSE);
    EXPECT(f, "<div>\n中文\n</div>\n\n段\n",
           "<div>" OPEN "\n中文\n" CLOSE "</div>" OPEN "\n" CLOSE "\n" OPEN "段\n" CLOSE);
    EXPECT(f, "<script>\nvar 中;\n</script>\n中\n",
           "<script>\nvar 中;\n</script>" OPEN "\n" CLOSE OPEN "中\n" CLOSE);
    EXPECT(f, "<!--\n注释\n-->\n中\n", "<!--\n注释\n-->" OPEN "\n" CLOSE OPEN "中\n" CLOSE);
    EXPECT(f, "<pre>\n代码\n\n还是\n</pre>\n中\n",
           "<pre>\n代码\n\n还是\n</pre>" OPEN "\n" CLOSE OPEN "中\n" CLOSE);
    EXPECT(f, "<custom-el>\n中\n\n文", "<custom-el>" OPEN "\n中\n" CLOSE "\n" OPEN "文" CLOSE);
    EXPECT(f, "段\n<custom-el>\n", OPEN "段\n" CLOSE "<custom-el>" OPEN "\n" CLOSE);
    EXPECT(f, "<img alt=\"图\" src=\"中.png\">\n",
           "<img alt=\"" OPEN "图" CLOSE "\" src=\"中.png\">" OPEN "\n" CLOSE);
    /* In a block quote: the markers stay; a tag across them is copied. */
    EXPECT(f, "> <div>\n> 中\n> </div>\n",
           "> <div>" OPEN "\n" CLOSE "> " OPEN "中\n" CLOSE "> </div>" OPEN "\n" CLOSE);
    EXPECT(f, "> <script>\n> 中\n> </script>\n", "> <script>\n> 中\n> </script>\n");
    EXPECT(f, "> 文<span\n> title=\"中\">字</span>",
           "> " OPEN "文" CLOSE "<span\n> title=\"中\">" OPEN "字" CLOSE "</span>");
    EXPECT_LC(f, "zh-TW", NULL, "<html><p lang=\"zh-CN\">中</p>\n",
              "<html><p lang=\"zh-TW\">" OPEN "中" CLOSE "</p>" OPEN "\n" CLOSE);
}

static void test_markdown_blocks(void **state)
{
    (void)state;
    rewrite_fn f = fjf_markdown_rewrite;
    EXPECT(f, "# 标题\n\n段落 *强调* 文字\n",
           "#" OPEN " 标题\n" CLOSE "\n" OPEN "段落 *强调* 文字\n" CLOSE);
    EXPECT(f, "## 标题 ##\n#不是标题\n", "##" OPEN " 标题 ##\n" CLOSE OPEN "#不是标题\n" CLOSE);
    EXPECT(f, "标题\n===\n", OPEN "标题\n" CLOSE "===\n");
    EXPECT(f, "标题\n---\n文", OPEN "标题\n" CLOSE "---\n" OPEN "文" CLOSE);
    EXPECT(f, "***\n文", "***\n" OPEN "文" CLOSE);
    EXPECT(f, "> 引用\n> 继续\n", "> " OPEN "引用\n" CLOSE "> " OPEN "继续\n" CLOSE);
    EXPECT(f, "> 引用\n继续\n", "> " OPEN "引用\n继续\n" CLOSE);
    EXPECT(f, "> 引用\n\n外面\n", "> " OPEN "引用\n" CLOSE "\n" OPEN "外面\n" CLOSE);
    EXPECT(f, ">> 深\n> > 层\n", ">> " OPEN "深\n" CLOSE "> > " OPEN "层\n" CLOSE);
    EXPECT(f, "> # 标题\n> - 项\n", "> #" OPEN " 标题\n" CLOSE "> - " OPEN "项\n" CLOSE);
    EXPECT(f, "- 一\n- 二\n  继续\n\n1. 三\n",
           "- " OPEN "一\n" CLOSE "- " OPEN "二\n  继续\n" CLOSE "\n1. " OPEN "三\n" CLOSE);
    EXPECT(f, "段\n2. 不是列表\n", OPEN "段\n2. 不是列表\n" CLOSE);
    EXPECT(f, "段\n1. 是列表\n", OPEN "段\n" CLOSE "1. " OPEN "是列表\n" CLOSE);
    EXPECT(f, "*\t星\n+ 加\n10) 十\n",
           "*\t" OPEN "星\n" CLOSE "+ " OPEN "加\n" CLOSE "10) " OPEN "十\n" CLOSE);
    EXPECT(f, "-不是\n1.不是\n", OPEN "-不是\n1.不是\n" CLOSE);
    EXPECT(f, "| 头 | 尾 |\n|---|---|\n| 中 | `c` |\n",
           OPEN "| 头 | 尾 |\n|---|---|\n| 中 | " CLOSE "`c`" OPEN " |\n" CLOSE);
    /* Front matter is copied, but for its title, which a site shows. */
    EXPECT(f, "---\ntitle: 中\n---\n正文\n",
           "---\ntitle: " OPEN "中" CLOSE "\n---\n" OPEN "正文\n" CLOSE);
    EXPECT(f, "---\ntitle: 中\n...\n正文\n",
           "---\ntitle: " OPEN "中" CLOSE "\n...\n" OPEN "正文\n" CLOSE);
    EXPECT(f, "---\nlayout: 中\ntitle:  \"中 文\" \r\ntitles: 中\n---\n",
           "---\nlayout: 中\ntitle:  \"" OPEN "中 文" CLOSE "\" \r\ntitles: 中\n---\n");
    EXPECT(f, "+++\ntitle = '中'\nauthor = \"文\"\n+++\n",
           "+++\ntitle = '" OPEN "中" CLOSE "'\nauthor = \"文\"\n+++\n");
    EXPECT(f, "---\ntitle:\n---\n", "---\ntitle:\n---\n");
    EXPECT(f, "+++\ntitle = \"中\"\n+++\n正文", "+++\ntitle = \"" OPEN "中" CLOSE "\"\n+++\n" OPEN "正文" CLOSE);
    EXPECT(f, "---\ntitle: 中\n", "---\n" OPEN "title: 中\n" CLOSE);
    EXPECT(f, "\xEF\xBB\xBF---\na: 中\n---\n文", "\xEF\xBB\xBF---\na: 中\n---\n" OPEN "文" CLOSE);
    EXPECT(f, "\n文\n---\na: 中\n---\n",
           "\n" OPEN "文\n" CLOSE "---\n" OPEN "a: 中\n" CLOSE "---\n");
    EXPECT(f, "&amp;中 $x^2$ 文", OPEN "&amp;中 $x^2$ 文" CLOSE);
    EXPECT(f, "a\r\n> b\r\n\r\n```\r\n中\r\n```\r\n",
           OPEN "a\r\n" CLOSE "> " OPEN "b\r\n" CLOSE "\r\n```\r\n中\r\n```\r\n");
    EXPECT(f, "> a\n> `x\n> y`\n", "> " OPEN "a\n" CLOSE "> `x\n> y`" OPEN "\n" CLOSE);
    expect_fail(f, "> a\n> FAIL\n", 6, HERE);
    expect_fail(f, "[a](/u \"FAIL\")", 8, HERE);
    expect_fail(f, "<p title=\"FAIL\">\n", 10, HERE);
    expect_fail(f, "a <b title=\"FAIL\">", 12, HERE);
}

static const char *const md_pieces[] = {
    "```",
    "~~~",
    "`",
    "``",
    "    ",
    "\t",
    "> ",
    ">",
    "- ",
    "1. ",
    "2) ",
    "* ",
    "#",
    "## ",
    "---",
    "===",
    "+++",
    "[",
    "]",
    "(",
    ")",
    "![",
    "](",
    "\"",
    "'",
    "<",
    ">",
    "<div>",
    "</div>",
    "<!--",
    "-->",
    "<script>",
    "</script>",
    "<pre>",
    "<span title=\"",
    "<code>",
    "</code>",
    "http://",
    "www.",
    "<https://a.b>",
    "<a@b.c>",
    "\\",
    "|",
    "[a]: ",
    "[^1]: ",
    "头发",
    "中",
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    " ",
    "$",
    "&amp;",
    "\xFF",
    "\xE4\xB8",
    "a",
    "=",
    "<?",
    "?>",
    "<!X",
    "<![CDATA[",
    "]]>",
    "\xEF\xBB\xBF",
};

static void test_markdown_random(void **state)
{
    (void)state;
    fuzz(fjf_markdown_rewrite, md_pieces, sizeof md_pieces / sizeof *md_pieces, 5);
    static const char *const units[] = {
        "` `` ```",   "``````````````````````````````````x ",
        "<!-- ",      "<a b=\"",
        "[](",        "[](<",
        "[a](b \"",   "<code>",
        "> a\n",      "- ",
        ">",          "[",
        "](x",        "<? ",
        "http://x",   "\\",
        "[a]: <b> '", "中文\n",
        "  - a\n",
    };
    stress(fjf_markdown_rewrite, units, sizeof units / sizeof *units);
    /* Backtick runs of every length, none closed. */
    tbuf b = {0};
    for (size_t k = 1; b.len < (t_quick() ? 60000u : 400000u); k++) {
        for (size_t j = 0; j < k; j++)
            tb_adds(&b, "`");
        tb_adds(&b, "中");
    }
    properties(fjf_markdown_rewrite, b.p, b.len, HERE);
    tb_free(&b);
}

/* ---- every format ------------------------------------------------------------------------ */

/* Without a callback (or without a rewrite), everything is copied. */
static void test_no_callback(void **state)
{
    (void)state;
    static const rewrite_fn fns[] = {fjf_html_rewrite, fjf_srt_rewrite, fjf_ass_rewrite,
                                     fjf_vtt_rewrite, fjf_markdown_rewrite};
    static const char *const docs[] = {html_doc, srt_doc, ass_doc, vtt_doc, md_doc};
    for (size_t i = 0; i < 5; i++) {
        fjf_rewrite rw = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
        fjf_buf out = {NULL, 0, 0};
        fjf_error err;
        size_t n = strlen(docs[i]);
        assert_int_equal(fns[i](docs[i], n, &rw, &out, &err), 0);
        assert_true(t_same(HERE, docs[i], n, out.data, out.len));
        fjf_buf_free(&out);
        assert_int_equal(fns[i](docs[i], n, NULL, &out, &err), 0);
        assert_true(t_same(HERE, docs[i], n, out.data, out.len));
        fjf_buf_free(&out);
    }
}

/* Bytes that are not UTF-8 reach the callback in their span, unharmed. */
static void test_invalid_utf8(void **state)
{
    (void)state;
    EXPECT(fjf_srt_rewrite, "1\n00:00:01,000 --> 00:00:02,000\n\xFF中\xE4\xB8<i>\x80</i>\n",
           "1\n00:00:01,000 --> 00:00:02,000\n" OPEN "\xFF中\xE4\xB8" CLOSE "<i>" OPEN "\x80" CLOSE
           "</i>\n");
    EXPECT(fjf_ass_rewrite, "[Events]\nDialogue: 0,1,2,S,N,0,0,0,,\xC0\xAF{\\b1}\xED\xA0\x80\n",
           "[Events]\nDialogue: 0,1,2,S,N,0,0,0,," OPEN "\xC0\xAF" CLOSE "{\\b1}" OPEN
           "\xED\xA0\x80" CLOSE "\n");
    EXPECT(fjf_vtt_rewrite, "WEBVTT\n\n00:01.000 --> 00:02.000\n\xF5\xFE\n",
           "WEBVTT\n\n00:01.000 --> 00:02.000\n" OPEN "\xF5\xFE" CLOSE "\n");
    EXPECT(fjf_markdown_rewrite, "\xE4\xB8 `\xFF` \xF0\x9F",
           OPEN "\xE4\xB8 " CLOSE "`\xFF`" OPEN " \xF0\x9F" CLOSE);
    EXPECT(fjf_html_rewrite, "<p alt=\"\xFF\">\xE4</p>",
           "<p alt=\"" OPEN "\xFF" CLOSE "\">" OPEN "\xE4" CLOSE "</p>");
}

/* ---- with the real converter ---------------------------------------------------------- */

static void convert_eq(const fj_converter *conv, rewrite_fn fn, const char *in, const char *exp,
                       const char *where)
{
    size_t n;
    int rc;
    char *got =
        run(fn, in, strlen(in), cb_convert, (void *)(uintptr_t)conv, NULL, NULL, &n, &rc, NULL);
    int ok = rc == 0 && t_same(where, exp, strlen(exp), got, n);
    free(got);
    if (!ok)
        fail_msg("%s", where);
}

static void test_convert(void **state)
{
    (void)state;
    const char *path = getenv("FANJIAN_DICT");
    if (!path || !*path)
        skip();
    fj_dict *dict = NULL;
    fj_converter *conv = NULL;
    fj_error err;
    memset(&err, 0, sizeof err);
    if (fj_dict_open(path, NULL, &dict, &err) != FJ_OK)
        fail_msg("cannot open %s: %s", path, err.message);
    assert_int_equal(fj_converter_open(dict, "s2tw", FJ_DEFAULT, &conv, &err), FJ_OK);

    convert_eq(conv, fjf_html_rewrite, "<p title=\"头发\">头发干了</p><script>var 头发=1;</script>",
               "<p title=\"頭髮\">頭髮乾了</p><script>var 头发=1;</script>", HERE);
    convert_eq(conv, fjf_html_rewrite,
               "<meta name=\"description\" content=\"头发干了\"><style>.头发{}</style>"
               "<code>头发</code><img alt=\"头发\" src=\"头发.png\">&amp;头发",
               "<meta name=\"description\" content=\"頭髮乾了\"><style>.头发{}</style>"
               "<code>头发</code><img alt=\"頭髮\" src=\"头发.png\">&amp;頭髮",
               HERE);
    convert_eq(conv, fjf_srt_rewrite,
               "1\r\n00:00:01,000 --> 00:00:02,000\r\n<i>头发干了</i>\r\n{\\an8}头发\r\n",
               "1\r\n00:00:01,000 --> 00:00:02,000\r\n<i>頭髮乾了</i>\r\n{\\an8}頭髮\r\n", HERE);
    convert_eq(conv, fjf_ass_rewrite,
               "[V4+ Styles]\nStyle: 头发,微软雅黑,20\n[Events]\n"
               "Dialogue: 0,0:00:01.00,0:00:02.00,头发,,0,0,0,,{\\i1}头发干了{\\i0}，好\n",
               "[V4+ Styles]\nStyle: 头发,微软雅黑,20\n[Events]\n"
               "Dialogue: 0,0:00:01.00,0:00:02.00,头发,,0,0,0,,{\\i1}頭髮乾了{\\i0}，好\n",
               HERE);
    convert_eq(conv, fjf_vtt_rewrite,
               "WEBVTT\n\nNOTE 头发\n\n头发\n00:01.000 --> 00:02.000\n<v 头发>头发干了</v>\n",
               "WEBVTT\n\nNOTE 头发\n\n头发\n00:01.000 --> 00:02.000\n<v 頭髮>頭髮乾了</v>\n",
               HERE);
    convert_eq(conv, fjf_markdown_rewrite,
               "# 头发\n\n头发干了 `头发` [头发](/头发 \"头发\")\n\n```\n头发\n```\n",
               "# 頭髮\n\n頭髮乾了 `头发` [頭髮](/头发 \"頭髮\")\n\n```\n头发\n```\n", HERE);
    convert_eq(conv, fjf_markdown_rewrite,
               "见 http://头发.cn/路径 和 https://例子.测试/头发?q=头发 或 www.头发.cn/路径 头发干了\n",
               "見 http://头发.cn/路径 和 https://例子.测试/头发?q=头发 或 www.头发.cn/路径 頭髮乾了\n",
               HERE);

    fj_converter_close(conv);
    fj_dict_close(dict);
}

/* ---- --clean: boilerplate removed before conversion (docclean.c) ------------------ */

#define NOTICE "天才一秒记住本站地址：www.biquge.cc 最快更新！"
#define CANON_STORY_A "他转身离去。"
#define CANON_STORY_B "众人面面相觑。"

static fj_clean *open_cleaner(void)
{
    fj_clean *c = NULL;
    fj_error e;
    memset(&e, 0, sizeof e);
    if (fj_clean_open(NULL, NULL, 0, 0, &c, &e) != FJ_OK)
        fail_msg("fj_clean_open: %s", e.message);
    return c;
}

typedef struct removals {
    size_t n;
    fj_clean_removal r[8];
    char text[8][256];
    const char *part;
} removals;

static int note_removal(void *ctx, const char *part, const fj_clean_removal *r)
{
    removals *rs = ctx;
    if (rs->n < 8) {
        rs->r[rs->n] = *r;
        size_t k = r->len < 255 ? r->len : 255;
        memcpy(rs->text[rs->n], r->text, k);
        rs->text[rs->n][k] = '\0';
        rs->r[rs->n].text = rs->text[rs->n];
    }
    rs->n++;
    rs->part = part;
    return 0;
}

/* fn over `in` with the clean-up and cb; the output, NUL-terminated. */
static char *run_clean(rewrite_fn fn, const fj_clean *clean, const char *in, fjf_text_fn cb,
                       removals *rs, int *rc)
{
    fjf_rewrite rw = {cb, NULL, NULL, NULL, clean, rs ? note_removal : NULL, rs, NULL, NULL, NULL, NULL};
    fjf_buf out = {NULL, 0, 0};
    fjf_error e;
    memset(&e, 0, sizeof e);
    *rc = fn(in, strlen(in), &rw, &out, &e);
    if (fjf_buf_append(&out, "", 1) != 0)
        abort();
    return out.data;
}

static void expect_clean(rewrite_fn fn, const fj_clean *clean, const char *in, const char *exp,
                         const char *where)
{
    int rc;
    char *got = run_clean(fn, clean, in, cb_copy, NULL, &rc);
    int ok = rc == 0 && t_same(where, exp, strlen(exp), got, strlen(got));
    free(got);
    if (!ok)
        fail_msg("%s: rc %d", where, rc);
}
#define EXPECT_CLEAN(fn, clean, in, exp) expect_clean(fn, clean, in, exp, HERE)

static int xhtml_rw(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                    fjf_error *err)
{
    return fjf_xml_rewrite(FJF_XML_XHTML, in, len, rw, out, err);
}

/* Whether fj_clean_find finds the notice inside the canonical sentence as a
 * span of its own (the real span-level clean-up, not a stand-in). */
static int finds_partial_spans(const fj_clean *clean)
{
    const char *s = CANON_STORY_A NOTICE CANON_STORY_B;
    fj_clean_span spans[4];
    int whole = 0;
    size_t n = fj_clean_find(clean, s, strlen(s), spans, 4, &whole);
    return n >= 1 && !whole;
}

static void test_clean_html_blocks(void **state)
{
    (void)state;
    fj_clean *c = open_cleaner();
    /* A wholly boilerplate paragraph goes with its line; the story stays. */
    EXPECT_CLEAN(fjf_html_rewrite, c,
                 "<body>\n<p>他转身离去。</p>\n  <p>" NOTICE "</p>\n<p>众人面面相觑。</p>\n</body>\n",
                 "<body>\n<p>他转身离去。</p>\n<p>众人面面相觑。</p>\n</body>\n");
    /* On a line with others: the element alone. */
    EXPECT_CLEAN(fjf_html_rewrite, c, "<p>他转身离去。</p><p>" NOTICE "</p><p>众人。</p>",
                 "<p>他转身离去。</p><p>众人。</p>");
    /* Every kind of block; inline markup goes with the element. */
    EXPECT_CLEAN(fjf_html_rewrite, c,
                 "<ul><li>甲</li><li><a href=\"/\">" NOTICE "</a></li></ul>\n"
                 "<h2>" NOTICE "</h2>\n<blockquote>" NOTICE "</blockquote>\n"
                 "<table><tr><td>乙</td><td>" NOTICE "</td></tr></table>\n",
                 "<ul><li>甲</li></ul>\n<table><tr><td>乙</td><td></td></tr></table>\n");
    /* A link target keeps its element (and its id), losing the text. */
    EXPECT_CLEAN(fjf_html_rewrite, c, "<p id=\"c2\">" NOTICE "</p>\n<p>甲</p>\n",
                 "<p id=\"c2\"></p>\n<p>甲</p>\n");
    const char *anchor = "<p><a id=\"n1\">" NOTICE "</a></p>\n";
    EXPECT_CLEAN(fjf_html_rewrite, c, anchor, anchor);
    /* <br> lines are lines: one goes with its <br>, the last with the <br> before it. */
    EXPECT_CLEAN(fjf_html_rewrite, c,
                 "<div id=\"content\">第一行<br>\n本章未完，请点击下一页继续阅读<br>\n第三行<br>\n" NOTICE
                 "</div>\n",
                 "<div id=\"content\">第一行<br>\n第三行</div>\n");
    /* Paragraphs as scraped chapters write them, between blank lines. */
    EXPECT_CLEAN(fjf_html_rewrite, c,
                 "<div id=\"content\">&nbsp;&nbsp;第一行<br /><br />&nbsp;&nbsp;" NOTICE
                 "<br /><br />&nbsp;&nbsp;第三行<br /><br /></div>\n",
                 "<div id=\"content\">&nbsp;&nbsp;第一行<br /><br />&nbsp;&nbsp;第三行<br /><br "
                 "/></div>\n");
    EXPECT_CLEAN(fjf_html_rewrite, c,
                 "<div>第一行<br>\n<br>\n" NOTICE "<br>\n<br>\n第三行</div>\n",
                 "<div>第一行<br>\n<br>\n第三行</div>\n");
    /* A div with blocks in it loses only its boilerplate child. */
    EXPECT_CLEAN(fjf_html_rewrite, c, "<div>\n<p>甲。</p>\n<p>" NOTICE "</p>\n</div>\n",
                 "<div>\n<p>甲。</p>\n</div>\n");
    /* Character references are decoded for judging; the element goes whole. */
    EXPECT_CLEAN(fjf_html_rewrite, c,
                 "<p>&#22825;才一秒记住本站地址：www.biquge.cc&nbsp;最快更新！</p>\n<p>雨&amp;雪。</p>\n",
                 "<p>雨&amp;雪。</p>\n");
    fj_clean_close(c);
}

static void test_clean_html_untouched(void **state)
{
    (void)state;
    fj_clean *c = open_cleaner();
    /* Never inside code, pre, script, style, attributes, comments, titles. */
    const char *keep[] = {
        "<pre>" NOTICE "</pre>\n",
        "<p><code>" NOTICE "</code></p>\n",
        "<script>var s = \"" NOTICE "\";</script>\n",
        "<style>/* " NOTICE " */</style>\n",
        "<p title=\"" NOTICE "\">甲。</p>\n",
        "<!-- " NOTICE " -->\n",
        "<title>" NOTICE "</title>\n",
        "<textarea>" NOTICE "</textarea>\n",
        /* what else is in the paragraph keeps it: an image, a comment */
        "<p><img src=\"a.png\" alt=\"\">" NOTICE "</p>\n",
        "<p>" NOTICE "<!-- c --></p>\n",
        /* text outside any paragraph element is not judged */
        NOTICE "\n",
        /* unbalanced inline markup */
        "<p>" NOTICE "</b></p>\n",
        "<p>他转身离去。</p>\n",
    };
    tbuf all = {0}, exp = {0};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        expect_clean(fjf_html_rewrite, c, keep[i], keep[i], keep[i]);
        tb_adds(&all, keep[i]);
        tb_adds(&exp, keep[i]);
        tb_adds(&all, "<p>" NOTICE "</p>\n"); /* while the paragraphs between go */
    }
    tb_add(&all, "", 1);
    tb_add(&exp, "", 1);
    EXPECT_CLEAN(fjf_html_rewrite, c, all.p, exp.p);
    tb_free(&all);
    tb_free(&exp);
    fj_clean_close(c);
}

static void test_clean_html_partial(void **state)
{
    (void)state;
    fj_clean *c = open_cleaner();
    if (!finds_partial_spans(c)) {
        fj_clean_close(c);
        skip(); /* the stand-in fj_clean_find: no spans inside a paragraph */
    }
    EXPECT_CLEAN(fjf_html_rewrite, c, "<p>" CANON_STORY_A NOTICE CANON_STORY_B "</p>\n",
                 "<p>" CANON_STORY_A CANON_STORY_B "</p>\n");
    /* In a text node between tags, only the span. */
    EXPECT_CLEAN(fjf_html_rewrite, c,
                 "<p><b>他</b>转身离去。" NOTICE CANON_STORY_B "</p>\n",
                 "<p><b>他</b>转身离去。" CANON_STORY_B "</p>\n");
    /* A span crossing a tag or a reference is kept. */
    const char *keep[] = {
        "<p>" CANON_STORY_A "天才一秒记住本站<b>地址</b>：www.biquge.cc 最快更新！" CANON_STORY_B "</p>\n",
        "<p>" CANON_STORY_A "天才一秒记住本站地址：www.biquge&#46;cc 最快更新！" CANON_STORY_B "</p>\n",
        "<p><code>" CANON_STORY_A NOTICE CANON_STORY_B "</code></p>\n",
    };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        expect_clean(fjf_html_rewrite, c, keep[i], keep[i], keep[i]);
    fj_clean_close(c);
}

/* The removals are cut first, then the rest is converted as before. */
static void test_clean_then_convert(void **state)
{
    (void)state;
    fj_clean *c = open_cleaner();
    int rc;
    char *got = run_clean(fjf_html_rewrite, c, "<p>甲</p>\n<p>" NOTICE "</p>\n<p>乙</p>\n",
                          cb_mark, NULL, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "<p>" OPEN "甲" CLOSE "</p>" OPEN "\n" CLOSE "<p>" OPEN "乙" CLOSE
                             "</p>" OPEN "\n" CLOSE);
    free(got);
    fj_clean_close(c);
}

static void test_clean_report(void **state)
{
    (void)state;
    fj_clean *c = open_cleaner();
    removals rs;
    memset(&rs, 0, sizeof rs);
    int rc;
    char *got = run_clean(fjf_html_rewrite, c,
                          "<body>\n<p>甲</p>\n  <p>" NOTICE "</p>\n<div>乙<br>本章未完，请点击下一页继续阅读</div>\n",
                          cb_copy, &rs, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "<body>\n<p>甲</p>\n<div>乙</div>\n");
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.r[0].line, 3);
    assert_int_equal(rs.r[0].column, 6); /* two spaces, then <p> */
    assert_string_equal(rs.r[0].text, NOTICE);
    assert_true(rs.r[0].whole_line);
    assert_int_equal(rs.r[1].line, 4);
    assert_int_equal(rs.r[1].column, 11);
    assert_string_equal(rs.r[1].text, "本章未完，请点击下一页继续阅读");
    assert_null(rs.part);
    free(got);
    fj_clean_close(c);
}

/* Expat's opinion of a document. */
static int well_formed(const char *s)
{
    XML_Parser p = XML_ParserCreate(NULL);
    int ok = XML_Parse(p, s, (int)strlen(s), XML_TRUE) == XML_STATUS_OK;
    XML_ParserFree(p);
    return ok;
}

static void test_clean_xhtml(void **state)
{
    (void)state;
    fj_clean *c = open_cleaner();
    const char *in =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>" NOTICE "</title></head>\n"
        "<body>\n<p>他转身离去。</p>\n<p class=\"x\"><span>" NOTICE "</span></p>\n<p/>\n"
        "<div>第一行<br/>\n" NOTICE "<br/>\n第三行</div>\n"
        "<p><![CDATA[" NOTICE "]]></p>\n<pre>" NOTICE "</pre>\n</body>\n</html>\n";
    const char *exp =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>" NOTICE "</title></head>\n"
        "<body>\n<p>他转身离去。</p>\n<p/>\n"
        "<div>第一行<br/>\n第三行</div>\n"
        "<p><![CDATA[" NOTICE "]]></p>\n<pre>" NOTICE "</pre>\n</body>\n</html>\n";
    int rc;
    char *got = run_clean(xhtml_rw, c, in, cb_copy, NULL, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got, exp);
    assert_true(well_formed(got));
    free(got);
    /* A document that is not well-formed is refused as before, at its offset. */
    fjf_rewrite rw = {cb_copy, NULL, NULL, NULL, c, NULL, NULL, NULL, NULL, NULL, NULL};
    fjf_buf out = {NULL, 0, 0};
    fjf_error e;
    memset(&e, 0, sizeof e);
    const char *bad = "<html><body><p>" NOTICE "</p><p>甲</b></body></html>";
    assert_int_equal(fjf_xml_rewrite(FJF_XML_XHTML, bad, strlen(bad), &rw, &out, &e), -1);
    assert_int_equal(e.offset, strlen("<html><body><p>" NOTICE "</p><p>甲</"));
    fjf_buf_free(&out);
    /* The OPF and NCX are not cleaned. */
    const char *ncx = "<ncx xmlns=\"http://www.daisy.org/z3986/2005/ncx/\"><docTitle><text>" NOTICE
                      "</text></docTitle></ncx>";
    assert_int_equal(fjf_xml_rewrite(FJF_XML_NCX, ncx, strlen(ncx), &rw, &out, &e), 0);
    assert_true(out.len == strlen(ncx) && memcmp(out.data, ncx, out.len) == 0);
    fjf_buf_free(&out);
    fj_clean_close(c);
}

static void test_clean_subtitles(void **state)
{
    (void)state;
    fj_clean *c = open_cleaner();
    /* SubRip: a boilerplate cue goes with its number, timing and blank
     * line; the other cues keep their numbers; markup is no text. */
    EXPECT_CLEAN(fjf_srt_rewrite, c,
                 "1\r\n00:00:01,000 --> 00:00:02,000\r\n他转身离去。\r\n\r\n"
                 "2\r\n00:00:03,000 --> 00:00:04,000\r\n<i>" NOTICE "</i>\r\n\r\n"
                 "3\r\n00:00:05,000 --> 00:00:06,000\r\n众人面面相觑。\r\n\r\n"
                 "4\r\n00:00:07,000 --> 00:00:08,000\r\n{\\an8}" NOTICE "\r\n",
                 "1\r\n00:00:01,000 --> 00:00:02,000\r\n他转身离去。\r\n\r\n"
                 "3\r\n00:00:05,000 --> 00:00:06,000\r\n众人面面相觑。\r\n");
    /* Two cues with no blank line between them are not judged. */
    const char *run_on = "1\n00:00:01,000 --> 00:00:02,000\n" NOTICE "\n2\n00:00:03,000 --> "
                         "00:00:04,000\n他转身离去。\n";
    EXPECT_CLEAN(fjf_srt_rewrite, c, run_on, run_on);
    /* WebVTT: cues only, never the header, NOTE or STYLE blocks. */
    EXPECT_CLEAN(fjf_vtt_rewrite, c,
                 "WEBVTT " NOTICE "\n\nNOTE " NOTICE "\n\n00:01.000 --> 00:02.000\n他转身离去。\n\n"
                 "id2\n00:03.000 --> 00:04.000\n<v Bob>" NOTICE "\n\n"
                 "00:05.000 --> 00:06.000\n众人面面相觑。\n",
                 "WEBVTT " NOTICE "\n\nNOTE " NOTICE "\n\n00:01.000 --> 00:02.000\n他转身离去。\n\n"
                 "00:05.000 --> 00:06.000\n众人面面相觑。\n");
    /* ASS: Dialogue text only; a boilerplate line goes whole; Comment
     * lines, styles and the script info stay. */
    const char *head = "[Script Info]\nTitle: " NOTICE "\n\n[Events]\nFormat: Layer, Start, End, "
                       "Style, Name, MarginL, MarginR, MarginV, Effect, Text\n";
    char in[2048], exp[2048];
    snprintf(in, sizeof in,
             "%sDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,他转身离去。\n"
             "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,{\\pos(1,2)}" NOTICE "\n"
             "Comment: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,," NOTICE "\n"
             "Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,众人\\N面面相觑。\n",
             head);
    snprintf(exp, sizeof exp,
             "%sDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,他转身离去。\n"
             "Comment: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,," NOTICE "\n"
             "Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,众人\\N面面相觑。\n",
             head);
    EXPECT_CLEAN(fjf_ass_rewrite, c, in, exp);
    if (finds_partial_spans(c)) {
        EXPECT_CLEAN(fjf_srt_rewrite, c,
                     "1\n00:00:01,000 --> 00:00:02,000\n" CANON_STORY_A NOTICE CANON_STORY_B "\n",
                     "1\n00:00:01,000 --> 00:00:02,000\n" CANON_STORY_A CANON_STORY_B "\n");
        /* never inside an override tag */
        snprintf(in, sizeof in,
                 "%sDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,," CANON_STORY_A
                 "{\\i1}" NOTICE CANON_STORY_B "\n",
                 head);
        snprintf(exp, sizeof exp,
                 "%sDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,," CANON_STORY_A
                 "{\\i1}" CANON_STORY_B "\n",
                 head);
        EXPECT_CLEAN(fjf_ass_rewrite, c, in, exp);
    }
    fj_clean_close(c);
}

static void test_clean_markdown(void **state)
{
    (void)state;
    fj_clean *c = open_cleaner();
    /* Paragraphs, headings and list items wholly boilerplate go, a
     * paragraph with the blank line after it; the story stays. */
    EXPECT_CLEAN(fjf_markdown_rewrite, c,
                 "# 第一章\n\n他转身离去。\n\n" NOTICE "\n\n## " NOTICE "\n\n众人面面相觑。\n\n"
                 "- 甲\n- " NOTICE "\n- 乙\n\n" NOTICE "\n" NOTICE "\n\n最后一段。\n\n" NOTICE "\n",
                 "# 第一章\n\n他转身离去。\n\n众人面面相觑。\n\n- 甲\n- 乙\n\n"
                 "最后一段。\n");
    /* A setext heading goes with its underline. */
    EXPECT_CLEAN(fjf_markdown_rewrite, c, "甲。\n\n" NOTICE "\n=====\n\n乙。\n", "甲。\n\n乙。\n");
    /* In a quote, the quote's own blank line goes. */
    EXPECT_CLEAN(fjf_markdown_rewrite, c, "> 甲。\n>\n> " NOTICE "\n>\n> 乙。\n",
                 "> 甲。\n>\n> 乙。\n");
    EXPECT_CLEAN(fjf_markdown_rewrite, c, "> 甲。\n>\n> " NOTICE "\n\n乙。\n", "> 甲。\n\n乙。\n");
    /* A link is boilerplate with its text; a bare URL is a whole. */
    EXPECT_CLEAN(fjf_markdown_rewrite, c, "[" NOTICE "](http://www.biquge.cc/)\n\n甲。\n", "甲。\n");
    /* Never in code, HTML blocks, front matter, tables, link definitions,
     * nor a paragraph holding a code span or raw HTML. */
    const char *keep[] = {
        "```\n" NOTICE "\n```\n",
        "~~~\n" NOTICE "\n~~~\n",
        "    " NOTICE "\n",
        "<div>\n" NOTICE "\n</div>\n",
        "---\ntitle: " NOTICE "\n---\n\n甲。\n",
        "| a | b |\n|---|---|\n| " NOTICE " | x |\n",
        "[a]: http://www.biquge.cc/ \"" NOTICE "\"\n",
        "`" NOTICE "`\n",
        NOTICE "<br>\n",
        "甲。\n",
    };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        expect_clean(fjf_markdown_rewrite, c, keep[i], keep[i], keep[i]);
    if (finds_partial_spans(c)) {
        EXPECT_CLEAN(fjf_markdown_rewrite, c, CANON_STORY_A NOTICE CANON_STORY_B "\n",
                     CANON_STORY_A CANON_STORY_B "\n");
        EXPECT_CLEAN(fjf_markdown_rewrite, c, "- " CANON_STORY_A NOTICE CANON_STORY_B "\n",
                     "- " CANON_STORY_A CANON_STORY_B "\n");
        /* a span ending inside a code span is kept */
        const char *code = CANON_STORY_A "天才一秒记住本站地址：`www.biquge.cc` 最快更新！" CANON_STORY_B "\n";
        EXPECT_CLEAN(fjf_markdown_rewrite, c, code, code);
    }
    fj_clean_close(c);
}

/* out[0..n) is in[0..len) with some bytes taken out. */
static int is_subsequence(const char *out, size_t n, const char *in, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; i < len && j < n; i++)
        if (in[i] == out[j])
            j++;
    return j == n;
}

/* Random documents of each format's pieces and notices: the clean-up
 * never fails, only takes bytes out, and copies a document without
 * boilerplate byte for byte. Long ones are read in bounded time. */
static void test_clean_random(void **state)
{
    (void)state;
    fj_clean *c = open_cleaner();
    static const char *const extra[] = {NOTICE, "<p>" NOTICE "</p>\n", NOTICE "\n\n",
                                        "本章未完，请点击下一页继续阅读", "<br>", "\n", "`",
                                        "www.biquge.cc", "&amp;", "-->"};
    struct {
        rewrite_fn fn;
        const char *const *pieces;
        size_t n;
    } formats[] = {
        {fjf_html_rewrite, html_pieces, sizeof html_pieces / sizeof *html_pieces},
        {fjf_srt_rewrite, srt_pieces, sizeof srt_pieces / sizeof *srt_pieces},
        {fjf_ass_rewrite, ass_pieces, sizeof ass_pieces / sizeof *ass_pieces},
        {fjf_vtt_rewrite, vtt_pieces, sizeof vtt_pieces / sizeof *vtt_pieces},
        {fjf_markdown_rewrite, md_pieces, sizeof md_pieces / sizeof *md_pieces},
    };
    /* Each format does remove something (so the properties below are not
     * met by doing nothing). */
    EXPECT_CLEAN(fjf_html_rewrite, c, "<p>" NOTICE "</p>\n<p>甲</p>\n", "<p>甲</p>\n");
    EXPECT_CLEAN(fjf_srt_rewrite, c, "1\n00:00:01,000 --> 00:00:02,000\n" NOTICE "\n", "");
    EXPECT_CLEAN(fjf_vtt_rewrite, c, "WEBVTT\n\n00:01.000 --> 00:02.000\n" NOTICE "\n", "WEBVTT\n");
    EXPECT_CLEAN(fjf_ass_rewrite, c, "[Events]\nDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,," NOTICE "\n",
                 "[Events]\n");
    EXPECT_CLEAN(fjf_markdown_rewrite, c, NOTICE "\n\n甲\n", "甲\n");
    uint64_t seed = t_seed() ^ 17;
    size_t rounds = t_quick() ? 300 : 2000;
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        tbuf b = {0};
        for (size_t r = 0; r < rounds; r++) {
            b.len = 0;
            size_t count = t_below(&seed, 40);
            for (size_t k = 0; k < count; k++) {
                uint64_t pick = t_below(&seed, 10);
                if (pick == 0) {
                    char ch = (char)t_below(&seed, 256);
                    tb_add(&b, &ch, 1);
                } else if (pick < 4) {
                    tb_adds(&b, extra[t_below(&seed, sizeof extra / sizeof *extra)]);
                } else {
                    tb_adds(&b, formats[f].pieces[t_below(&seed, formats[f].n)]);
                }
            }
            tb_add(&b, "", 0);
            fjf_rewrite rw = {cb_copy, NULL, NULL, NULL, c, NULL, NULL, NULL, NULL, NULL, NULL};
            fjf_buf out = {NULL, 0, 0};
            fjf_error e;
            memset(&e, 0, sizeof e);
            int rc = formats[f].fn(b.p, b.len, &rw, &out, &e);
            int ok = rc == 0 && is_subsequence(out.data ? out.data : "", out.len, b.p, b.len);
            fjf_buf_free(&out);
            if (!ok)
                fail_msg("format %zu round %zu: rc %d (%s)", f, r, rc, e.message);
        }
        tb_free(&b);
    }
    /* Long runs of what makes a careless reader slow. */
    static const char *const units[] = {"<p>", "<b>甲", "</p>", "<br>", "&#", "<p>甲<!-- ",
                                        "` `` ``` ", "<<<<", "](", "\\N", "{", "<"};
    rewrite_fn fns[] = {fjf_html_rewrite, fjf_html_rewrite, fjf_html_rewrite, fjf_html_rewrite,
                        fjf_html_rewrite, fjf_html_rewrite, fjf_markdown_rewrite,
                        fjf_markdown_rewrite, fjf_markdown_rewrite, fjf_ass_rewrite,
                        fjf_srt_rewrite, fjf_vtt_rewrite};
    size_t target = t_quick() ? 60000 : 400000;
    for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
        tbuf b = {0};
        if (fns[u] == fjf_html_rewrite)
            tb_adds(&b, "<div>");
        if (fns[u] == fjf_ass_rewrite)
            tb_adds(&b, "[Events]\nDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,");
        if (fns[u] == fjf_srt_rewrite || fns[u] == fjf_vtt_rewrite)
            tb_adds(&b, "00:00:01.000 --> 00:00:02.000\n");
        while (b.len < target)
            tb_adds(&b, units[u]);
        fjf_rewrite rw = {cb_copy, NULL, NULL, NULL, c, NULL, NULL, NULL, NULL, NULL, NULL};
        fjf_buf out = {NULL, 0, 0};
        fjf_error e;
        memset(&e, 0, sizeof e);
        int rc = fns[u](b.p, b.len, &rw, &out, &e);
        int ok = rc == 0 && out.len == b.len && memcmp(out.data, b.p, b.len) == 0;
        fjf_buf_free(&out);
        tb_free(&b);
        if (!ok)
            fail_msg("stress unit %zu", u);
    }
    fj_clean_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html_document),
        cmocka_unit_test(test_html_text_and_attributes),
        cmocka_unit_test(test_html_meta),
        cmocka_unit_test(test_html_raw_text),
        cmocka_unit_test(test_html_markup),
        cmocka_unit_test(test_html_lang_charset),
        cmocka_unit_test(test_html_failures),
        cmocka_unit_test(test_html_random),
        cmocka_unit_test(test_srt),
        cmocka_unit_test(test_srt_random),
        cmocka_unit_test(test_ass),
        cmocka_unit_test(test_ass_random),
        cmocka_unit_test(test_vtt),
        cmocka_unit_test(test_vtt_random),
        cmocka_unit_test(test_markdown_document),
        cmocka_unit_test(test_markdown_code),
        cmocka_unit_test(test_markdown_links),
        cmocka_unit_test(test_markdown_bare_urls),
        cmocka_unit_test(test_markdown_html),
        cmocka_unit_test(test_markdown_blocks),
        cmocka_unit_test(test_markdown_random),
        cmocka_unit_test(test_no_callback),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_convert),
        cmocka_unit_test(test_clean_html_blocks),
        cmocka_unit_test(test_clean_html_untouched),
        cmocka_unit_test(test_clean_html_partial),
        cmocka_unit_test(test_clean_then_convert),
        cmocka_unit_test(test_clean_report),
        cmocka_unit_test(test_clean_xhtml),
        cmocka_unit_test(test_clean_subtitles),
        cmocka_unit_test(test_clean_markdown),
        cmocka_unit_test(test_clean_random),
    };
    return cmocka_run_group_tests_name("markup", tests, NULL, NULL);
}
