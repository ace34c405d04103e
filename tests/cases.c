/* fanjian conversion cases (cmocka), one cmocka test per case:
 *   - OpenCC 1.4.2's own test cases, ../shared/opencc/testcases.json, in
 *     --compat mode, and in the default mode against the deliberate
 *     disagreements of tests/opencc-default-disagreements.tsv
 *     (FANJIAN_OPENCC_DISAGREEMENTS); `cases --opencc-default-report`
 *     prints today's differences in that file's format
 *   - OpenCC 1.4.2's output on ../shared/opencc/compat/input.txt, 16 profiles,
 *     one-shot and streamed in 64 KiB pieces
 *   - our case files, tests/cases/ *.tsv: profile<TAB>input<TAB>expected,
 *     '#' comments, escapes \t \n \r \\ \xHH; converted with FJ_COMPAT,
 *     or with FJ_DEFAULT when the file's first line is exactly "# mode: default"
 *     (FJ_REPAIR_THOROUGH for "# mode: thorough"), as tests/run.sh does for
 *     the CLI
 *   - the development cases ../shared/cases/s2tw.tsv and t2s.tsv (same
 *     columns), in the default mode (FJ_DEFAULT), one cmocka test per line,
 *     and detect.tsv and clean.tsv
 *   - in any of these files, the pseudo-profiles "detect" (expected: the
 *     label fj_detect gives, e.g. "traditional"), "clean" (expected:
 *     "drop" -- the line goes whole -- or "keep" -- byte for byte) and
 *     "cleaned" (expected: the exact line that remains), by fj_clean_find,
 *     fj_clean_line and a stream fed byte by byte, with the default rules;
 *     tests/run.sh runs them through the CLI
 * The shared material is optional: its tests skip with a message when it is
 * absent. Environment: FANJIAN_DICT, FANJIAN_SHARED, FANJIAN_CASES (the
 * directory of the .tsv files). */
#include "testutil.h"

#include <dirent.h>
#include <jansson.h>

static fj_dict *g_dict;
static fj_converter *g_conv[16]; /* FJ_COMPAT */
static fj_converter *g_def[16];  /* FJ_DEFAULT */
static fj_converter *g_thr[16];  /* FJ_REPAIR_THOROUGH */
static fj_clean *g_clean;        /* the default clean rules */
static fj_converter *g_to[8];    /* fj_converter_open_target, by fj_target_name's index */

/* The converter for `name` in the mode `flags` (FJ_COMPAT, FJ_DEFAULT or
 * FJ_REPAIR_THOROUGH). */
static const fj_converter *conv_named(const char *name, unsigned flags)
{
    /* The pseudo-profile "to:TARGET": target-only conversion. */
    for (size_t i = 0; strncmp(name, "to:", 3) == 0 && fj_target_name(i) && i < 8; i++)
        if (strcmp(fj_target_name(i), name + 3) == 0)
            return g_to[i];
    for (int i = 0; i < 16; i++)
        if (strcmp(t_profiles[i], name) == 0)
            return flags & FJ_COMPAT ? g_conv[i] : flags & FJ_REPAIR_THOROUGH ? g_thr[i] : g_def[i];
    return NULL;
}

static int group_setup(void **state)
{
    (void)state;
    if (t_open_all("cases", &g_dict, g_conv) != 0)
        return -1;
    fj_error err;
    if (fj_clean_open(g_dict, NULL, 0, 0, &g_clean, &err) != FJ_OK) {
        fprintf(stderr, "cases: fj_clean_open: %s\n", err.message);
        return -1;
    }
    if (t_open_profiles("cases", g_dict, FJ_DEFAULT, g_def) != 0)
        return -1;
    for (size_t i = 0; fj_target_name(i) && i < 8; i++)
        if (fj_converter_open_target(g_dict, fj_target_name(i), FJ_DEFAULT, &g_to[i], &err) != FJ_OK) {
            fprintf(stderr, "cases: fj_converter_open_target %s: %s\n", fj_target_name(i),
                    err.message);
            return -1;
        }
    return t_open_profiles("cases", g_dict, FJ_REPAIR_THOROUGH, g_thr);
}

static int group_teardown(void **state)
{
    (void)state;
    fj_clean_close(g_clean);
    for (size_t i = 0; i < 8; i++)
        fj_converter_close(g_to[i]);
    t_close_profiles(g_def);
    t_close_profiles(g_thr);
    t_close_all(g_dict, g_conv);
    return 0;
}

/* Converts one-shot and streamed byte by byte; both must give `exp`. */
static int check_case(const char *profile, unsigned flags, const char *in, size_t in_len,
                      const char *exp, size_t exp_len, const char *what)
{
    const fj_converter *c = conv_named(profile, flags);
    if (!c) {
        print_message("  %s: unknown profile %s\n", what, profile);
        return 0;
    }
    size_t n;
    char *got = t_conv(c, in, in_len, &n);
    int ok = t_same(what, exp, exp_len, got, n);
    fj_free(c, got);
    if (ok) {
        tbuf out = {0};
        assert_int_equal(t_stream_pieces(c, in, in_len, 1, &out), FJ_OK);
        char label[256];
        snprintf(label, sizeof label, "%s (streamed byte by byte)", what);
        ok = t_same(label, exp, exp_len, out.p ? out.p : "", out.len);
        tb_free(&out);
    }
    if (!ok) {
        fputs("    input:    ", stdout);
        t_print_text(stdout, in, in_len, 400);
        fputs("\n", stdout);
        fflush(stdout);
    }
    return ok;
}

/* ---- OpenCC's testcases.json --------------------------------------------- */

static json_t *g_json;

typedef struct json_case {
    const char *id;
    const char *input;
    json_t *expected; /* {profile: output} */
} json_case;

static void test_json_case(void **state)
{
    const json_case *jc = *state;
    size_t failures = 0, checked = 0;
    const char *profile;
    json_t *value;
    json_object_foreach(jc->expected, profile, value)
    {
        const char *exp = json_string_value(value);
        if (!exp)
            fail_msg("%s: expected output for %s is not a string", jc->id, profile);
        char what[128];
        snprintf(what, sizeof what, "%s %s", jc->id, profile);
        if (!check_case(profile, FJ_COMPAT, jc->input, strlen(jc->input), exp, strlen(exp),
                        what))
            failures++;
        checked++;
    }
    assert_true(checked > 0);
    if (failures)
        fail_msg("%s: %zu of %zu profiles differ from OpenCC", jc->id, failures, checked);
}

static void test_shared_missing(void **state)
{
    print_message("SKIP: %s not found (%s absent): OpenCC reference tests skipped\n",
                  (const char *)*state, t_shared_dir());
    skip();
}

static void test_json_broken(void **state)
{
    fail_msg("%s", (const char *)*state);
}

/* ---- OpenCC 1.4.2's output on the compat input ----------------------------- */

typedef struct compat_case {
    const char *profile;
    int stream; /* 0 one-shot, 1 stream in 64 KiB pieces */
} compat_case;

static char *g_compat_in;
static size_t g_compat_len;

/* Reports the first differing line. */
static void report_line_diff(const char *exp, size_t elen, const char *got, size_t glen)
{
    size_t i = 0, line = 1, line_start = 0;
    while (i < elen && i < glen && exp[i] == got[i]) {
        if (exp[i] == '\n') {
            line++;
            line_start = i + 1;
        }
        i++;
    }
    size_t e_end = line_start, g_end = line_start;
    while (e_end < elen && exp[e_end] != '\n')
        e_end++;
    while (g_end < glen && got[g_end] != '\n')
        g_end++;
    print_message("  first difference on line %zu (byte %zu)\n    OpenCC:  ", line, i);
    t_print_text(stdout, exp + line_start, e_end - line_start, 600);
    fputs("\n    fanjian: ", stdout);
    t_print_text(stdout, got + line_start, (g_end > line_start ? g_end - line_start : 0), 600);
    fputs("\n", stdout);
    fflush(stdout);
}

static void test_compat(void **state)
{
    const compat_case *cc = *state;
    char path[4096];
    snprintf(path, sizeof path, "%s/opencc/compat/%s.txt", t_shared_dir(), cc->profile);
    size_t elen;
    char *exp = t_read_file(path, &elen);
    if (!g_compat_in || !exp) {
        free(exp);
        print_message("SKIP: %s not readable (no ../shared): compat test skipped\n", path);
        skip();
    }
    const fj_converter *c = conv_named(cc->profile, FJ_COMPAT);
    assert_non_null(c);
    char *got = NULL;
    size_t glen = 0;
    tbuf out = {0};
    if (cc->stream) {
        assert_int_equal(t_stream_pieces(c, g_compat_in, g_compat_len, 65536, &out), FJ_OK);
        got = out.p ? out.p : (char *)"";
        glen = out.len;
    } else {
        got = t_conv(c, g_compat_in, g_compat_len, &glen);
    }
    int same = elen == glen && memcmp(exp, got, elen) == 0;
    if (!same)
        report_line_diff(exp, elen, got, glen);
    if (cc->stream)
        tb_free(&out);
    else
        fj_free(c, got);
    free(exp);
    if (!same)
        fail_msg("%s (%s): output differs from OpenCC 1.4.2", cc->profile,
                 cc->stream ? "stream, 64 KiB pieces" : "one-shot");
}

/* ---- our .tsv case files --------------------------------------------------- */

typedef struct tsv_case {
    char *file; /* base name */
    unsigned flags; /* FJ_COMPAT, or FJ_DEFAULT for a "# mode: default" file */
    size_t line;
    char *profile;
    char *input, *expected;
    size_t input_len, expected_len;
} tsv_case;

typedef struct tsv_file {
    char *name;
    unsigned flags; /* the mode its cases are converted in */
    char *errors;   /* parse errors, NULL when none */
    size_t cases;
} tsv_file;

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Unescapes s[0..n) into a new buffer; NULL on a bad escape. */
static char *unescape(const char *s, size_t n, size_t *out_len)
{
    char *o = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            o[k++] = s[i];
            continue;
        }
        if (++i >= n)
            goto bad;
        switch (s[i]) {
        case 't': o[k++] = '\t'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case '\\': o[k++] = '\\'; break;
        case 'x': {
            if (i + 2 >= n)
                goto bad;
            int a = hexval((unsigned char)s[i + 1]), b = hexval((unsigned char)s[i + 2]);
            if (a < 0 || b < 0)
                goto bad;
            o[k++] = (char)(a << 4 | b);
            i += 2;
            break;
        }
        default: goto bad;
        }
    }
    o[k] = 0;
    *out_len = k;
    return o;
bad:
    free(o);
    return NULL;
}

/* The first lines that mark a default-mode case file and a thorough-repair
 * one (see tests/run.sh). */
static const char mode_default_line[] = "# mode: default";
static const char mode_thorough_line[] = "# mode: thorough";

/* Parsed cases: our case files, then the development cases from ../shared. */
static tsv_case *g_tsv;
static size_t g_tsv_count, g_tsv_cap;
static tsv_file *g_files;
static size_t g_file_count;

static void add_error(tsv_file *f, size_t line, const char *msg)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s:%zu: %s\n", f->name, line, msg);
    size_t old = f->errors ? strlen(f->errors) : 0;
    f->errors = realloc(f->errors, old + strlen(buf) + 1);
    memcpy(f->errors + old, buf, strlen(buf) + 1);
}

static void parse_tsv(tsv_file *f, const char *path)
{
    size_t len;
    char *text = t_read_file(path, &len);
    if (!text) {
        add_error(f, 0, "cannot read the file");
        return;
    }
    size_t ml = sizeof mode_default_line - 1, tl = sizeof mode_thorough_line - 1;
    if (len >= ml && memcmp(text, mode_default_line, ml) == 0 &&
        (len == ml || text[ml] == '\n'))
        f->flags = FJ_DEFAULT;
    else if (len >= tl && memcmp(text, mode_thorough_line, tl) == 0 &&
             (len == tl || text[tl] == '\n'))
        f->flags = FJ_REPAIR_THOROUGH;
    size_t line = 0;
    for (char *p = text, *end = text + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *eol = nl ? nl : end;
        line++;
        size_t n = (size_t)(eol - p);
        if (n > 0 && p[0] != '#') {
            char *t1 = memchr(p, '\t', n);
            char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(eol - t1 - 1)) : NULL;
            if (!t1 || !t2 || memchr(t2 + 1, '\t', (size_t)(eol - t2 - 1))) {
                add_error(f, line, "want exactly three tab-separated fields");
            } else {
                tsv_case c;
                memset(&c, 0, sizeof c);
                c.file = f->name;
                c.flags = f->flags;
                c.line = line;
                size_t plen;
                c.profile = unescape(p, (size_t)(t1 - p), &plen);
                c.input = unescape(t1 + 1, (size_t)(t2 - t1 - 1), &c.input_len);
                c.expected = unescape(t2 + 1, (size_t)(eol - t2 - 1), &c.expected_len);
                if (!c.profile || !c.input || !c.expected) {
                    add_error(f, line, "bad escape (allowed: \\t \\n \\r \\\\ \\xHH)");
                    free(c.profile);
                    free(c.input);
                    free(c.expected);
                } else {
                    if (g_tsv_count == g_tsv_cap) {
                        g_tsv_cap = g_tsv_cap ? g_tsv_cap * 2 : 64;
                        g_tsv = realloc(g_tsv, g_tsv_cap * sizeof *g_tsv);
                    }
                    g_tsv[g_tsv_count++] = c;
                    f->cases++;
                }
            }
        }
        p = eol + 1;
    }
    if (f->cases == 0 && !f->errors)
        add_error(f, 0, "no cases");
    free(text);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void load_tsv_files(const char *dir)
{
    DIR *dh = opendir(dir);
    char **names = NULL;
    size_t n = 0;
    if (dh) {
        struct dirent *de;
        while ((de = readdir(dh)) != NULL) {
            size_t l = strlen(de->d_name);
            if (l > 4 && strcmp(de->d_name + l - 4, ".tsv") == 0) {
                names = realloc(names, (n + 1) * sizeof *names);
                names[n++] = strdup(de->d_name);
            }
        }
        closedir(dh);
    }
    qsort(names, n, sizeof *names, name_cmp);
    g_files = calloc(n ? n : 1, sizeof *g_files);
    g_file_count = n;
    /* Cases point at their file's name: parse after g_files is complete. */
    for (size_t i = 0; i < n; i++) {
        g_files[i].name = names[i];
        g_files[i].flags = FJ_COMPAT;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        parse_tsv(&g_files[i], path);
    }
    free(names);
}

static void test_tsv_file(void **state)
{
    const tsv_file *f = *state;
    if (f->errors) {
        fputs(f->errors, stdout);
        fflush(stdout);
        fail_msg("%s: the case file has errors", f->name);
    }
    assert_true(f->cases > 0);
}

/* The pseudo-profiles "detect" and "clean": -1 when `profile` is neither,
 * else 1 when the case passes, 0 when it fails (with a message). */
static int check_pseudo(const char *profile, const char *in, size_t in_len, const char *exp,
                        const char *what)
{
    if (strcmp(profile, "detect") == 0) {
        fj_detection r;
        memset(&r, 0, sizeof r);
        r.size = sizeof r;
        assert_int_equal(fj_detect(g_dict, in, in_len, &r), FJ_OK);
        if (strcmp(fj_script_name(r.script), exp) == 0)
            return 1;
        print_message("  %s: expected %s, got %s (%zu Han, %zu simplified-only, "
                      "%zu traditional-only)\n    input: ",
                      what, exp, fj_script_name(r.script), r.han, r.simplified, r.traditional);
    } else if (strcmp(profile, "clean") == 0 || strcmp(profile, "cleaned") == 0) {
        /* "clean": drop (the line goes whole) or keep (byte for byte);
         * "cleaned": the exact line that remains. */
        const char *want = exp;
        size_t want_len = strlen(exp);
        int whole_wanted = 0;
        if (strcmp(profile, "clean") == 0) {
            if (strcmp(exp, "drop") != 0 && strcmp(exp, "keep") != 0)
                fail_msg("%s: expected \"drop\" or \"keep\", not \"%s\"", what, exp);
            whole_wanted = strcmp(exp, "drop") == 0;
            want = whole_wanted ? "" : in;
            want_len = whole_wanted ? 0 : in_len;
        }
        /* one-shot: fj_clean_find's spans applied to the line */
        fj_clean_span spans[64];
        int whole = 0, score;
        size_t n = fj_clean_find(g_clean, in, in_len, spans, 64, &whole);
        assert_true(n <= 64);
        tbuf once = {0};
        if (!whole) {
            size_t pos = 0;
            for (size_t i = 0; i < n; i++) {
                assert_true(spans[i].start >= pos && spans[i].end > spans[i].start &&
                            spans[i].end <= in_len);
                tb_add(&once, in + pos, spans[i].start - pos);
                pos = spans[i].end;
            }
            tb_add(&once, in + pos, in_len - pos);
        }
        int line_whole = fj_clean_line(g_clean, in, in_len, &score);
        /* The stream, one byte at a time, agrees. */
        tbuf out = {0};
        fj_clean_stream *cs;
        assert_int_equal(fj_clean_stream_new(g_clean, tb_write, &out, NULL, NULL, &cs), FJ_OK);
        for (size_t i = 0; i < in_len; i++)
            assert_int_equal(fj_clean_stream_feed(cs, in + i, 1), FJ_OK);
        assert_int_equal(fj_clean_stream_feed(cs, "\n", 1), FJ_OK);
        assert_int_equal(fj_clean_stream_finish(cs), FJ_OK);
        fj_clean_stream_free(cs);
        int once_ok = once.len == want_len && (!want_len || memcmp(once.p, want, want_len) == 0) &&
                      whole == whole_wanted && line_whole == whole;
        int streamed_ok = whole ? out.len == 0
                                : out.len == want_len + 1 && memcmp(out.p, want, want_len) == 0;
        if (once_ok && streamed_ok) {
            tb_free(&once);
            tb_free(&out);
            return 1;
        }
        tb_adds(&once, "");
        print_message("  %s: expected %s\n    got      %s (whole %d, score %d)%s\n    line: ", what,
                      whole_wanted ? "(dropped)" : want, whole ? "(dropped)" : once.p, whole, score,
                      streamed_ok ? "" : "; the stream disagrees");
        tb_free(&once);
        tb_free(&out);
    } else if (strcmp(profile, "repair") == 0) {
        /* Damaged Traditional text: t2tw's default mode gives the correct
         * Taiwan text, and t2s reads it as it reads the correct text. */
        if (!check_case("t2tw", 0, in, in_len, exp, strlen(exp), what))
            return 0;
        size_t a_len, b_len;
        char *a = t_conv(conv_named("t2s", 0), in, in_len, &a_len);
        char *b = t_conv(conv_named("t2s", 0), exp, strlen(exp), &b_len);
        int same = a_len == b_len && memcmp(a, b, a_len) == 0;
        fj_free(conv_named("t2s", 0), a);
        fj_free(conv_named("t2s", 0), b);
        if (same)
            return 1;
        print_message("  %s: t2s of the damaged text differs from t2s of the correct one\n    "
                      "input: ",
                      what);
    } else {
        return -1;
    }
    t_print_text(stdout, in, in_len, 400);
    fputs("\n", stdout);
    fflush(stdout);
    return 0;
}

static void test_tsv_case(void **state)
{
    const tsv_case *c = *state;
    char what[256];
    snprintf(what, sizeof what, "%s:%zu %s", c->file, c->line, c->profile);
    int pseudo = check_pseudo(c->profile, c->input, c->input_len, c->expected, what);
    if (pseudo == 0)
        fail_msg("%s: wrong answer", what);
    if (pseudo < 0 && !check_case(c->profile, c->flags, c->input, c->input_len, c->expected,
                                  c->expected_len, what))
        fail_msg("%s: wrong output%s", what, c->flags & FJ_COMPAT ? "" : c->flags & FJ_REPAIR_THOROUGH ? " (thorough repair)" : " (default mode)");
}

/* ---- OpenCC's testcases.json in the default mode ------------------------------ */

/* The default mode must give OpenCC's output too, except where fanjian
 * disagrees on purpose: the lines of tests/opencc-default-disagreements.tsv,
 * "profile<TAB>input<TAB>fanjian's output<TAB>reason" (escapes as in the case
 * files). A case that differs and is not listed fails; so does a listed one
 * that now gives OpenCC's output or another output than the listed one, so a
 * stale list shows. `cases --opencc-default-report` prints today's
 * differences in the file's format. */
typedef struct disagreement {
    char *profile, *input, *output, *reason;
    size_t input_len, output_len, line;
    int has_case; /* some case of testcases.json has this profile and input */
} disagreement;

static disagreement *g_dis;
static size_t g_dis_count;
static char *g_dis_errors; /* the list's problems, NULL when none */
static const char *g_dis_path;

static void dis_error(size_t line, const char *fmt, ...)
{
    char msg[512], buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(buf, sizeof buf, "%s:%zu: %s\n", g_dis_path, line, msg);
    size_t old = g_dis_errors ? strlen(g_dis_errors) : 0;
    g_dis_errors = realloc(g_dis_errors, old + strlen(buf) + 1);
    memcpy(g_dis_errors + old, buf, strlen(buf) + 1);
}

static int profile_known(const char *name)
{
    for (int i = 0; i < 16; i++)
        if (strcmp(t_profiles[i], name) == 0)
            return 1;
    return 0;
}

static disagreement *dis_find(const char *profile, const char *input, size_t input_len)
{
    for (size_t i = 0; i < g_dis_count; i++)
        if (strcmp(g_dis[i].profile, profile) == 0 && g_dis[i].input_len == input_len &&
            memcmp(g_dis[i].input, input, input_len) == 0)
            return &g_dis[i];
    return NULL;
}

/* Reads the list; a missing file is an empty list only for the report. */
static void load_disagreements(const char *path, int missing_ok)
{
    g_dis_path = path;
    size_t len;
    char *text = t_read_file(path, &len);
    if (!text) {
        if (!missing_ok)
            dis_error(0, "cannot read the file");
        return;
    }
    size_t line = 0;
    for (char *p = text, *end = text + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *eol = nl ? nl : end;
        line++;
        size_t n = (size_t)(eol - p);
        if (n > 0 && p[0] != '#') {
            char *f[4] = {p, NULL, NULL, NULL};
            int fields = 1;
            for (char *q = p; q < eol; q++)
                if (*q == '\t') {
                    if (fields < 4)
                        f[fields] = q + 1;
                    fields++;
                }
            if (fields != 4) {
                dis_error(line, "want exactly four tab-separated fields "
                                "(profile, input, fanjian's output, reason)");
            } else {
                disagreement d;
                memset(&d, 0, sizeof d);
                size_t plen;
                d.line = line;
                d.profile = unescape(f[0], (size_t)(f[1] - 1 - f[0]), &plen);
                d.input = unescape(f[1], (size_t)(f[2] - 1 - f[1]), &d.input_len);
                d.output = unescape(f[2], (size_t)(f[3] - 1 - f[2]), &d.output_len);
                d.reason = strndup(f[3], (size_t)(eol - f[3]));
                if (!d.profile || !d.input || !d.output) {
                    dis_error(line, "bad escape (allowed: \\t \\n \\r \\\\ \\xHH)");
                } else if (!profile_known(d.profile)) {
                    dis_error(line, "unknown profile %s", d.profile);
                } else if (d.reason[0] == 0) {
                    dis_error(line, "the reason is empty");
                } else if (dis_find(d.profile, d.input, d.input_len)) {
                    dis_error(line, "%s and this input are listed twice (first on line %zu)",
                              d.profile, dis_find(d.profile, d.input, d.input_len)->line);
                } else {
                    g_dis = realloc(g_dis, (g_dis_count + 1) * sizeof *g_dis);
                    g_dis[g_dis_count++] = d;
                    p = eol + 1;
                    continue;
                }
                free(d.profile);
                free(d.input);
                free(d.output);
                free(d.reason);
            }
        }
        p = eol + 1;
    }
    free(text);
}

static void free_disagreements(void)
{
    for (size_t i = 0; i < g_dis_count; i++) {
        free(g_dis[i].profile);
        free(g_dis[i].input);
        free(g_dis[i].output);
        free(g_dis[i].reason);
    }
    free(g_dis);
    free(g_dis_errors);
}

/* Writes s escaped for the list's fields: \t \n \r \\ and \xHH for other
 * control bytes. */
static void print_field(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\t')
            fputs("\\t", f);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c == '\\')
            fputs("\\\\", f);
        else if (c < 0x20 || c == 0x7F)
            fprintf(f, "\\x%02X", c);
        else
            fputc(c, f);
    }
}

/* The default mode's output for one case and profile, one-shot; NULL when
 * the profile is unknown. *streamed_same: a stream fed byte by byte agrees. */
static char *convert_default(const char *profile, const char *in, size_t in_len, size_t *out_len,
                             int *streamed_same)
{
    const fj_converter *c = conv_named(profile, FJ_DEFAULT);
    if (!c)
        return NULL;
    char *out = NULL;
    if (fj_convert_alloc(c, in, in_len, &out, out_len) != FJ_OK)
        return NULL;
    tbuf s = {0};
    *streamed_same = t_stream_pieces(c, in, in_len, 1, &s) == FJ_OK && s.len == *out_len &&
                     (s.len == 0 || memcmp(s.p, out, s.len) == 0);
    tb_free(&s);
    return out;
}

static void print_case_lines(const char *in, const char *exp, const char *got, size_t got_len)
{
    fputs("    input:    ", stdout);
    t_print_text(stdout, in, strlen(in), 400);
    fputs("\n    OpenCC:   ", stdout);
    t_print_text(stdout, exp, strlen(exp), 400);
    fputs("\n    fanjian:  ", stdout);
    t_print_text(stdout, got, got_len, 400);
    fputs("\n", stdout);
    fflush(stdout);
}

static void test_json_default_case(void **state)
{
    const json_case *jc = *state;
    size_t failures = 0, checked = 0;
    const char *profile;
    json_t *value;
    json_object_foreach(jc->expected, profile, value)
    {
        const char *exp = json_string_value(value);
        if (!exp)
            fail_msg("%s: expected output for %s is not a string", jc->id, profile);
        checked++;
        size_t in_len = strlen(jc->input), got_len;
        int streamed_same = 0;
        char *got = convert_default(profile, jc->input, in_len, &got_len, &streamed_same);
        if (!got) {
            print_message("  %s %s: unknown profile, or the conversion failed\n", jc->id, profile);
            failures++;
            continue;
        }
        const disagreement *d = dis_find(profile, jc->input, in_len);
        int as_opencc = got_len == strlen(exp) && memcmp(got, exp, got_len) == 0;
        int ok = 1;
        if (!streamed_same) {
            print_message("  %s %s: streamed byte by byte, the output differs from one-shot\n",
                          jc->id, profile);
            ok = 0;
        } else if (as_opencc && d) {
            print_message("  %s %s: listed as a disagreement (%s:%zu), but now gives OpenCC's "
                          "output: remove the line\n",
                          jc->id, profile, g_dis_path, d->line);
            ok = 0;
        } else if (!as_opencc && !d) {
            print_message("  %s %s: differs from OpenCC, and %s does not list it\n", jc->id,
                          profile, g_dis_path);
            ok = 0;
        } else if (!as_opencc && (d->output_len != got_len ||
                                  memcmp(d->output, got, got_len) != 0)) {
            print_message("  %s %s: differs from OpenCC, and from the output %s:%zu lists:\n"
                          "    listed:   ",
                          jc->id, profile, g_dis_path, d->line);
            t_print_text(stdout, d->output, d->output_len, 400);
            fputs("\n", stdout);
            ok = 0;
        }
        if (!ok) {
            print_case_lines(jc->input, exp, got, got_len);
            failures++;
        }
        free(got);
    }
    assert_true(checked > 0);
    if (failures)
        fail_msg("%s: %zu of %zu profiles (default mode) disagree with OpenCC and the list",
                 jc->id, failures, checked);
}

/* The list itself: well-formed, and every line names a case of testcases.json. */
static void test_disagreement_list(void **state)
{
    (void)state;
    size_t orphans = 0;
    for (size_t i = 0; i < g_dis_count; i++)
        if (!g_dis[i].has_case) {
            print_message("  %s:%zu: no case of testcases.json has profile %s and this input: "
                          "remove the line\n",
                          g_dis_path, g_dis[i].line, g_dis[i].profile);
            orphans++;
        }
    if (g_dis_errors) {
        fputs(g_dis_errors, stdout);
        fflush(stdout);
    }
    if (g_dis_errors || orphans)
        fail_msg("%s: the list has errors", g_dis_path);
}

static const char disagreements_header[] =
    "# OpenCC's test cases (../shared/opencc/testcases.json) on which fanjian's\n"
    "# default mode deliberately writes something else. tests/cases checks every\n"
    "# case in the default mode: it fails on a difference not listed here, and on\n"
    "# a line here whose case now gives OpenCC's output or another output than the\n"
    "# one listed. `make opencc-default-report` prints today's differences in this\n"
    "# format, keeping the reasons of lines whose output is unchanged.\n"
    "# PROFILE<TAB>INPUT<TAB>FANJIAN'S OUTPUT<TAB>REASON (escapes \\t \\n \\r \\\\ \\xHH);\n"
    "# the comment above each line gives the case's id and OpenCC's output.\n";

/* Prints every case and profile whose default-mode output differs from
 * OpenCC's, as lines of the list; a listed reason is kept when the listed
 * output is still the output. 0, or 1 when a conversion failed. */
static int print_default_report(const json_case *cases, size_t n)
{
    fputs(disagreements_header, stdout);
    size_t differ = 0, checked = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const char *profile;
        json_t *value;
        json_object_foreach(cases[i].expected, profile, value)
        {
            const char *exp = json_string_value(value);
            size_t in_len = strlen(cases[i].input), got_len;
            int streamed_same = 0;
            char *got = exp ? convert_default(profile, cases[i].input, in_len, &got_len,
                                              &streamed_same)
                            : NULL;
            checked++;
            if (!got) {
                fprintf(stderr, "cases: %s %s: unknown profile, or the conversion failed\n",
                        cases[i].id, profile);
                rc = 1;
                continue;
            }
            if (got_len != strlen(exp) || memcmp(got, exp, got_len) != 0) {
                const disagreement *d = dis_find(profile, cases[i].input, in_len);
                const char *reason = d && d->output_len == got_len &&
                                             memcmp(d->output, got, got_len) == 0
                                         ? d->reason
                                         : "(undecided)";
                fprintf(stdout, "# %s: OpenCC ", cases[i].id);
                print_field(stdout, exp, strlen(exp));
                fprintf(stdout, "\n%s\t", profile);
                print_field(stdout, cases[i].input, in_len);
                fputc('\t', stdout);
                print_field(stdout, got, got_len);
                fprintf(stdout, "\t%s\n", reason);
                differ++;
            }
            free(got);
        }
    }
    fprintf(stderr, "cases: %zu of %zu checks differ from OpenCC in the default mode\n", differ,
            checked);
    return rc;
}

/* ---- development cases, default mode ----------------------------------------- */

/* ../shared/cases/<name>: parsed like our case files, converted with FJ_DEFAULT. */
static const char *const dev_case_files[] = {"s2tw.tsv",   "t2s.tsv",  "detect.tsv",
                                             "clean.tsv", "repair.tsv"};
#define N_DEV_FILES (sizeof dev_case_files / sizeof dev_case_files[0])
static tsv_file g_dev_files[N_DEV_FILES];

static void test_dev_missing(void **state)
{
    print_message("SKIP: %s not found (%s absent): default-mode development cases skipped\n",
                  (const char *)*state, t_shared_dir());
    skip();
}

static void test_dev_case(void **state)
{
    const tsv_case *c = *state;
    char what[256];
    snprintf(what, sizeof what, "shared/cases/%s:%zu %s", c->file, c->line, c->profile);
    int pseudo = check_pseudo(c->profile, c->input, c->input_len, c->expected, what);
    if (pseudo == 0)
        fail_msg("%s: wrong answer", what);
    snprintf(what, sizeof what, "shared/cases/%s:%zu %s (default mode)", c->file, c->line,
             c->profile);
    if (pseudo < 0 && !check_case(c->profile, FJ_DEFAULT, c->input, c->input_len, c->expected,
                                  c->expected_len, what))
        fail_msg("%s: wrong output", what);
}

static void test_no_tsv_files(void **state)
{
    fail_msg("no .tsv case files in %s", (const char *)*state);
}

/* ---- main --------------------------------------------------------------- */

typedef struct tests {
    struct CMUnitTest *v;
    size_t n, cap;
} tests;

static void add_test(tests *t, char *name, CMUnitTestFunction f, void *state)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->v = realloc(t->v, t->cap * sizeof *t->v);
    }
    struct CMUnitTest u = {name, f, NULL, NULL, state};
    t->v[t->n++] = u;
}

/* Formatted strings that live until the end of main. */
static char **g_names;
static size_t g_name_count;

static char *keepf(const char *f, ...)
{
    char buf[4608];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    g_names = realloc(g_names, (g_name_count + 1) * sizeof *g_names);
    return g_names[g_name_count++] = strdup(buf);
}

int main(int argc, char **argv)
{
    tests t = {0};
    int report = argc == 2 && strcmp(argv[1], "--opencc-default-report") == 0;
    if (argc > 1 && !report) {
        fprintf(stderr, "usage: cases [--opencc-default-report]\n");
        return 2;
    }

    /* OpenCC's test cases. */
    char path[4096];
    snprintf(path, sizeof path, "%s/opencc/testcases.json", t_shared_dir());
    json_case *jcases = NULL;
    char json_error[4608] = "";
    if (!t_exists(path)) {
        add_test(&t, keepf("opencc_testcases_json"), test_shared_missing, keepf("%s", path));
    } else {
        json_error_t jerr;
        g_json = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
        json_t *cases = g_json ? json_object_get(g_json, "cases") : NULL;
        if (!json_is_array(cases) || json_array_size(cases) == 0) {
            snprintf(json_error, sizeof json_error, "%s: %s", path,
                     g_json ? "no \"cases\" array" : jerr.text);
            add_test(&t, keepf("opencc_testcases_json"), test_json_broken, json_error);
        } else {
            size_t n = json_array_size(cases);
            jcases = calloc(n, sizeof *jcases);
            for (size_t i = 0; i < n; i++) {
                json_t *c = json_array_get(cases, i);
                const char *id = json_string_value(json_object_get(c, "id"));
                jcases[i].id = id ? id : "(no id)";
                jcases[i].input = json_string_value(json_object_get(c, "input"));
                jcases[i].expected = json_object_get(c, "expected");
                if (!jcases[i].input || !json_is_object(jcases[i].expected)) {
                    snprintf(json_error, sizeof json_error, "%s: case %zu is malformed", path, i);
                    add_test(&t, keepf("opencc_testcases_json[%zu]", i), test_json_broken,
                             json_error);
                    continue;
                }
                add_test(&t, keepf("opencc %s", jcases[i].id), test_json_case, &jcases[i]);
            }
            /* The same cases in the default mode, against the list of
             * deliberate disagreements. */
            load_disagreements(t_env("FANJIAN_OPENCC_DISAGREEMENTS",
                                     "tests/opencc-default-disagreements.tsv"),
                               report);
            for (size_t i = 0; i < n; i++) {
                if (!jcases[i].input || !json_is_object(jcases[i].expected))
                    continue;
                const char *profile;
                json_t *value;
                json_object_foreach(jcases[i].expected, profile, value)
                {
                    disagreement *d =
                        dis_find(profile, jcases[i].input, strlen(jcases[i].input));
                    if (d)
                        d->has_case = 1;
                }
                add_test(&t, keepf("opencc %s (default mode)", jcases[i].id),
                         test_json_default_case, &jcases[i]);
            }
            add_test(&t, keepf("opencc default-mode disagreements list"), test_disagreement_list,
                     NULL);
            if (report) {
                int rc = group_setup(NULL) != 0 ? 1 : print_default_report(jcases, n);
                group_teardown(NULL);
                free_disagreements();
                for (size_t i = 0; i < g_name_count; i++)
                    free(g_names[i]);
                free(g_names);
                free(t.v);
                free(jcases);
                json_decref(g_json);
                return rc;
            }
        }
    }
    if (report) {
        fprintf(stderr, "cases: %s: no OpenCC test cases to report on\n", path);
        return 1;
    }

    /* OpenCC 1.4.2's output on the compat input. */
    snprintf(path, sizeof path, "%s/opencc/compat/input.txt", t_shared_dir());
    g_compat_in = t_read_file(path, &g_compat_len);
    compat_case ccases[32];
    for (int i = 0; i < 16; i++)
        for (int s = 0; s < 2; s++) {
            compat_case *cc = &ccases[i * 2 + s];
            cc->profile = t_profiles[i];
            cc->stream = s;
            add_test(&t, keepf("compat %s %s", t_profiles[i], s ? "stream" : "one-shot"),
                     test_compat, cc);
        }

    /* The development cases, in the default mode. */
    for (size_t i = 0; i < N_DEV_FILES; i++) {
        snprintf(path, sizeof path, "%s/cases/%s", t_shared_dir(), dev_case_files[i]);
        g_dev_files[i].name = keepf("%s", dev_case_files[i]);
        g_dev_files[i].flags = FJ_DEFAULT;
        if (!t_exists(path)) {
            add_test(&t, keepf("dev %s", dev_case_files[i]), test_dev_missing,
                     keepf("%s", path));
            continue;
        }
        parse_tsv(&g_dev_files[i], path);
        add_test(&t, keepf("dev %s (file)", dev_case_files[i]), test_tsv_file, &g_dev_files[i]);
    }
    size_t dev_cases = g_tsv_count;

    /* Our case files. */
    const char *dir = t_env("FANJIAN_CASES", "tests/cases");
    load_tsv_files(dir);
    if (g_file_count == 0)
        add_test(&t, keepf("tsv files"), test_no_tsv_files, (void *)(uintptr_t)dir);
    for (size_t i = 0; i < g_file_count; i++)
        add_test(&t, keepf("%s (file)", g_files[i].name), test_tsv_file, &g_files[i]);
    /* Cases are added once parsing is done: g_tsv may move while it grows. */
    for (size_t i = 0; i < dev_cases; i++)
        add_test(&t, keepf("dev %s:%zu %s", g_tsv[i].file, g_tsv[i].line, g_tsv[i].profile),
                 test_dev_case, &g_tsv[i]);
    for (size_t i = dev_cases; i < g_tsv_count; i++)
        add_test(&t, keepf("%s:%zu %s%s", g_tsv[i].file, g_tsv[i].line, g_tsv[i].profile,
                           g_tsv[i].flags & FJ_COMPAT ? "" : g_tsv[i].flags & FJ_REPAIR_THOROUGH ? " (thorough repair)" : " (default mode)"),
                 test_tsv_case, &g_tsv[i]);

    int rc = _cmocka_run_group_tests("cases", t.v, t.n, group_setup, group_teardown);

    for (size_t i = 0; i < g_tsv_count; i++) {
        free(g_tsv[i].profile);
        free(g_tsv[i].input);
        free(g_tsv[i].expected);
    }
    free(g_tsv);
    for (size_t i = 0; i < g_file_count; i++) {
        free(g_files[i].name);
        free(g_files[i].errors);
    }
    free(g_files);
    for (size_t i = 0; i < N_DEV_FILES; i++)
        free(g_dev_files[i].errors);
    for (size_t i = 0; i < g_name_count; i++)
        free(g_names[i]);
    free(g_names);
    free(t.v);
    free(jcases);
    free_disagreements();
    free(g_compat_in);
    json_decref(g_json);
    return rc;
}
