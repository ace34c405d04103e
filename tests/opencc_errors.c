/* fanjian's libopencc: configuration names, errors, edge cases and threads,
 * through OpenCC's C API (<opencc.h>). Prints one "PASS name" or
 * "FAIL name: detail" line per check (tests/suite-install.sh counts them);
 * exits 1 when any failed. Needs $FANJIAN_DICT (or a dictionary the library
 * finds by itself). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <opencc.h>

static int failures;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void report(int ok, const char *name, const char *fmt, ...)
{
    if (ok) {
        printf("PASS %s\n", name);
        return;
    }
    failures++;
    printf("FAIL %s: ", name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* Converts `in` (NUL-terminated) with `config`; NULL on any failure. */
static char *convert(const char *config, const char *in, size_t len)
{
    opencc_t cc = opencc_open(config);
    if (cc == (opencc_t)-1)
        return NULL;
    char *out = opencc_convert_utf8(cc, in, len);
    char *copy = out ? strdup(out) : NULL;
    opencc_convert_utf8_free(out);
    opencc_close(cc);
    return copy;
}

static void expect_conversion(const char *name, const char *config, const char *in, size_t len,
                              const char *want)
{
    char *got = convert(config, in, len);
    report(got && strcmp(got, want) == 0, name, "config %s: got %s (%s)",
           config ? config : "NULL", got ? got : "NULL", got ? "" : opencc_error());
    free(got);
}

/* ---- threads --------------------------------------------------------------- */

typedef struct {
    opencc_t cc;
    int ok;
    char error_before[64];
} worker_arg;

static void *worker(void *p)
{
    worker_arg *w = p;
    /* A new thread has no error yet, whatever other threads did. */
    snprintf(w->error_before, sizeof w->error_before, "%s", opencc_error());
    w->ok = 1;
    for (int i = 0; i < 200 && w->ok; i++) {
        char *out = opencc_convert_utf8(w->cc, "头发干了，鼠标和打印机。", (size_t)-1);
        w->ok = out && strcmp(out, "頭髮幹了，鼠標和打印機。") == 0;
        opencc_convert_utf8_free(out);
    }
    /* This thread's failure must not change the main thread's message. */
    if (opencc_open("thread-config.json") != (opencc_t)-1)
        w->ok = 0;
    return NULL;
}

int main(void)
{
    /* -- configuration names -- */
    opencc_t bad = opencc_open("nonesuch.json");
    const char *e = opencc_error();
    report(bad == (opencc_t)-1, "unknown configuration gives (opencc_t)-1", "got %p", bad);
    report(e && strstr(e, "nonesuch.json") != NULL, "opencc_error() names the configuration",
           "message: %s", e ? e : "NULL");
    report(opencc_open("") == (opencc_t)-1, "empty configuration name fails", "opened");
    report(opencc_open("s2t.ini") == (opencc_t)-1, "s2t.ini is not a configuration", "opened");
    report(opencc_open("/usr/share/opencc/") == (opencc_t)-1, "a directory is not a configuration",
           "opened");

    expect_conversion("NULL opens OPENCC_DEFAULT_CONFIG_SIMP_TO_TRAD (s2t)", NULL, "头发干了",
                      (size_t)-1, "頭髮幹了");
    expect_conversion("s2t.json", "s2t.json", "头发干了", (size_t)-1, "頭髮幹了");
    expect_conversion("s2t (no .json)", "s2t", "头发干了", (size_t)-1, "頭髮幹了");
    expect_conversion("/usr/share/opencc/s2twp.json (a path)", "/usr/share/opencc/s2twp.json",
                      "鼠标和打印机", (size_t)-1, "滑鼠和印表機");
    expect_conversion("OPENCC_DEFAULT_CONFIG_TRAD_TO_SIMP", OPENCC_DEFAULT_CONFIG_TRAD_TO_SIMP,
                      "頭髮幹了", (size_t)-1, "头发干了");

    /* -- lengths, NUL, bytes that are not UTF-8 -- */
    expect_conversion("length limits the input in bytes", "s2t", "头发干了", 6, "頭髮");
    expect_conversion("the input ends at its first NUL, as in OpenCC", "s2t", "头\0发", 7, "頭");
    expect_conversion("length 0 gives an empty string", "s2t", "头发", 0, "");
    expect_conversion("bytes that are not UTF-8 pass through", "s2t", "\xff头\x80", (size_t)-1,
                      "\xff頭\x80");

    opencc_t cc = opencc_open("s2twp.json");
    report(cc != (opencc_t)-1, "opencc_open(s2twp.json)", "%s", opencc_error());
    if (cc == (opencc_t)-1)
        return 1;

    /* -- opencc_convert_utf8_to_buffer -- */
    const char *in = "外键和鼠标";
    char *want = opencc_convert_utf8(cc, in, strlen(in));
    size_t want_len = want ? strlen(want) : 0;
    char *exact = malloc(want_len + 1);
    size_t n = exact ? opencc_convert_utf8_to_buffer(cc, in, strlen(in), exact) : (size_t)-1;
    report(want && n == want_len && memcmp(exact, want, n + 1) == 0,
           "to_buffer into a buffer of exactly the output's size", "returned %zu, want %zu", n,
           want_len);
    free(exact);
    opencc_convert_utf8_free(want);
    char *small = malloc(1);
    n = small ? opencc_convert_utf8_to_buffer(cc, "", (size_t)-1, small) : (size_t)-1;
    report(n == 0 && small && small[0] == 0, "to_buffer on empty input writes only the NUL",
           "returned %zu", n);
    free(small);
    /* The documented bound, on the largest growth in OpenCC 1.4.2's tables
     * (s2twp: 外键 -> 外部索引鍵, 6 -> 15 bytes). */
    const char *grow = "外键外键外键";
    char *bound = malloc(FANJIAN_OPENCC_BUFFER_SIZE(strlen(grow)));
    n = bound ? opencc_convert_utf8_to_buffer(cc, grow, strlen(grow), bound) : (size_t)-1;
    report(n != (size_t)-1 && n <= 5 * strlen(grow) && strcmp(bound, "外部索引鍵外部索引鍵外部索引鍵") == 0,
           "FANJIAN_OPENCC_BUFFER_SIZE holds the largest growth (2.5x)", "returned %zu: %s", n,
           n == (size_t)-1 ? opencc_error() : bound);
    free(bound);

    /* -- handles -- */
    opencc_t second = opencc_open("t2s.json");
    report(second != (opencc_t)-1 && opencc_close(second) == 0,
           "a second handle opens and closes (0)", "%s", opencc_error());
    char *still = opencc_convert_utf8(cc, "鼠标", (size_t)-1);
    report(still && strcmp(still, "滑鼠") == 0, "the first handle works after the second closed",
           "got %s", still ? still : opencc_error());
    opencc_convert_utf8_free(still);
    opencc_convert_utf8_free(NULL);
    report(1, "opencc_convert_utf8_free(NULL) is harmless", "%s", "");

    /* Beyond OpenCC (which would crash): bad handles are errors. */
    report(opencc_convert_utf8((opencc_t)-1, "头", (size_t)-1) == NULL && *opencc_error(),
           "converting with (opencc_t)-1 fails with a message", "%s", "no error");
    report(opencc_convert_utf8_to_buffer(NULL, "头", (size_t)-1, (char[16]){0}) == (size_t)-1,
           "to_buffer with a NULL handle fails", "%s", "no error");
    report(opencc_close((opencc_t)-1) == -1, "opencc_close((opencc_t)-1) returns -1", "%s", "");

    /* -- threads: one handle shared; opencc_error() is per thread -- */
    opencc_t s2t = opencc_open("s2t.json");
    opencc_open("main-config.json");
    char main_error[256];
    snprintf(main_error, sizeof main_error, "%s", opencc_error());
    worker_arg args[4];
    pthread_t tids[4];
    int started = 0;
    for (int i = 0; i < 4; i++) {
        args[i].cc = s2t;
        args[i].ok = 0;
        args[i].error_before[0] = 1;
        if (pthread_create(&tids[i], NULL, worker, &args[i]) == 0)
            started++;
    }
    int all_ok = started == 4, fresh = 1;
    for (int i = 0; i < started; i++) {
        pthread_join(tids[i], NULL);
        all_ok &= args[i].ok;
        fresh &= args[i].error_before[0] == 0;
    }
    report(all_ok, "4 threads convert through one handle", "%d started", started);
    report(fresh, "a new thread's opencc_error() is empty", "%s", "not empty");
    report(strcmp(opencc_error(), main_error) == 0 && strstr(main_error, "main-config") != NULL,
           "other threads' failures leave this thread's opencc_error()", "now: %s",
           opencc_error());
    opencc_close(s2t);

    /* -- the dictionary -- */
    const char *saved = getenv("FANJIAN_DICT");
    char *saved_copy = saved ? strdup(saved) : NULL;
    setenv("FANJIAN_DICT", "/nonexistent/fanjian.fjd", 1);
    opencc_t nodict = opencc_open("s2t.json");
    report(nodict == (opencc_t)-1 && strstr(opencc_error(), "/nonexistent/fanjian.fjd") != NULL,
           "a missing dictionary fails opencc_open, naming it", "%s", opencc_error());
    if (saved_copy)
        setenv("FANJIAN_DICT", saved_copy, 1);
    else
        unsetenv("FANJIAN_DICT");
    free(saved_copy);

    report(opencc_close(cc) == 0, "opencc_close returns 0", "%s", opencc_error());
    return failures ? 1 : 0;
}
