/* fanjian serve: the JSON API (cli/serve_api.h), apart from HTTP.
 *
 *   POST /v1/convert    {"text","profile","quotes"?,"clean"?,"compat"?,"punct"?,"repair"?,
 *                        "inspect"?}; with "inspect": true the answer has "choices",
 *                        fj_inspect's places (fjf_choice_json) in the text converted
 *   POST /v1/detect     {"text"}
 *   POST /v1/file       a file's bytes; the same options, and "name", as
 *                       query parameters (fjx_api_file); "phrases" and
 *                       "protect" as JSON
 *
 * The answer is built from the body in a few buffers of about its size,
 * each freed as soon as the next exists, so memory per request is bounded
 * by the body's size. */
/* _GNU_SOURCE for memfd_create: an EPUB is written to a descriptor. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fanjian.h"
#include "fanjian-formats.h"
#include "serve_api.h"

static const char prog[] = "fanjian";

/* Each profile is open in five modes: the default (repair auto), compat,
 * and the explicit repair levels. */
enum { API_DEFAULT, API_COMPAT, API_THOROUGH, API_CAREFUL, API_REPAIR_OFF, API_MODES };

struct fjx_api {
    const fj_dict *dict; /* borrowed */
    size_t nprofiles;
    fj_converter **conv; /* [API_MODES * profile + mode] */
    fj_converter **to;   /* target-only converters, by fj_target_name's index */
    size_t ntargets;
    fj_clean *clean;
    fjf_epub_limits epub; /* for /v1/file, from its size limit */
};

/* A growable buffer that also serves as an fj_write_fn target. */
typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

/* Room for `more` bytes: doubles, or grows to exactly what is asked when
 * that is more, so that one large reservation is not rounded up. */
static int buf_reserve(buf *b, size_t more)
{
    if (more <= b->cap - b->len)
        return 0;
    if (more > SIZE_MAX - b->len)
        return -1;
    size_t need = b->len + more;
    size_t cap = b->cap <= SIZE_MAX / 2 ? b->cap * 2 : need;
    if (cap < need)
        cap = need;
    if (cap < 256)
        cap = 256;
    char *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static int buf_put(buf *b, const char *data, size_t len)
{
    if (buf_reserve(b, len) != 0)
        return -1;
    if (len)
        memcpy(b->p + b->len, data, len);
    b->len += len;
    return 0;
}

static int buf_write(void *ctx, const char *data, size_t len)
{
    return buf_put(ctx, data, len);
}

static int buf_puts(buf *b, const char *s)
{
    return buf_put(b, s, strlen(s));
}

static int buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int buf_printf(buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= sizeof tmp ? -1 : buf_put(b, tmp, (size_t)n);
}

/* ---- JSON output ------------------------------------------------------------------ */

/* The length of the valid UTF-8 sequence at s[0..n) (s[0] >= 0x80), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
    return len <= n && fj_utf8_valid((const char *)s, len, NULL) == len ? len : 0;
}

/* Writes s[0..n) as a JSON string into out (when not NULL) and returns its
 * size. Bytes that are not UTF-8 become U+FFFD: JSON cannot carry them (the
 * converters pass such bytes through, though valid JSON input has none). */
static size_t json_escape(const char *s, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
#define PUT(ch) (out ? (void)(out[o] = (char)(ch)) : (void)0, o++)
    PUT('"');
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            PUT(c);
            i++;
        } else if (c == '"' || c == '\\') {
            PUT('\\');
            PUT(c);
            i++;
        } else if (c < 0x20) {
            const char *esc = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
            if (esc) {
                PUT(esc[0]);
                PUT(esc[1]);
            } else {
                PUT('\\');
                PUT('u');
                PUT('0');
                PUT('0');
                PUT(hex[c >> 4]);
                PUT(hex[c & 15]);
            }
            i++;
        } else {
            size_t len = utf8_seq(p + i, n - i);
            if (len) {
                if (out)
                    memcpy(out + o, p + i, len);
                o += len;
                i += len;
            } else {
                static const char fffd[] = "\\ufffd";
                if (out)
                    memcpy(out + o, fffd, 6);
                o += 6;
                i++;
            }
        }
    }
    PUT('"');
#undef PUT
    return o;
}

static int buf_json(buf *b, const char *s, size_t n)
{
    size_t need = json_escape(s, n, NULL);
    if (buf_reserve(b, need) != 0)
        return -1;
    b->len += json_escape(s, n, b->p + b->len);
    return 0;
}

/* Hands b's bytes over as the answer. */
static unsigned done(unsigned status, buf *b, char **out, size_t *out_len)
{
    *out = b->p;
    *out_len = b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return status;
}

int fjx_api_error(char **out, size_t *out_len, const char *fmt, va_list ap)
{
    char msg[512];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    size_t len = n < 0 ? 0 : (size_t)n >= sizeof msg ? sizeof msg - 1 : (size_t)n;
    buf b = {0};
    if (buf_puts(&b, "{\"error\":") != 0 || buf_json(&b, msg, len) != 0 || buf_puts(&b, "}\n") != 0) {
        free(b.p);
        *out = NULL;
        *out_len = 0;
        return -1;
    }
    done(0, &b, out, out_len);
    return 0;
}

/* An error answer; *out is NULL when there was no memory even for it. */
static unsigned fail(unsigned status, char **out, size_t *out_len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static unsigned fail(unsigned status, char **out, size_t *out_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fjx_api_error(out, out_len, fmt, ap);
    va_end(ap);
    return status;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the API ----------------------------------------------------------------------- */

/* An optional boolean member: 0 or 1 in *v (unchanged when absent or null),
 * -1 when it is something else. */
static int opt_bool(const json_t *root, const char *key, int *v)
{
    const json_t *j = json_object_get(root, key);
    if (!j || json_is_null(j))
        return 0;
    if (!json_is_boolean(j))
        return -1;
    *v = json_is_true(j);
    return 0;
}

/* A request's own phrases, protected terms and markup, in fj_options'
 * shape (the strings are the request's). At most API_USER_ENTRIES entries. */
#define API_USER_ENTRIES 10000
typedef struct user_entries {
    fj_phrase *phrases;
    size_t phrase_count;
    const char **protect;
    size_t protect_count;
    int markup;
} user_entries;

static int json_text_ok(const json_t *j)
{
    return json_is_string(j) && json_string_length(j) > 0 &&
           strlen(json_string_value(j)) == json_string_length(j);
}

/* "phrases": {"from": "to", ...}, "protect": ["term", ...], "markup": bool.
 * NULL, or what is wrong. */
static const char *read_user_entries(const json_t *root, user_entries *u)
{
    const json_t *jph = json_object_get(root, "phrases"), *jpr = json_object_get(root, "protect");
    if (opt_bool(root, "markup", &u->markup))
        return "\"markup\" must be true or false";
    if (jph && !json_is_null(jph)) {
        if (!json_is_object(jph))
            return "\"phrases\" must be an object of strings: {\"from\": \"to\"}";
        if (json_object_size(jph) > API_USER_ENTRIES)
            return "\"phrases\" has more than 10000 entries";
        u->phrases = calloc(json_object_size(jph) + 1, sizeof *u->phrases);
        if (!u->phrases)
            return "out of memory";
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)(uintptr_t)jph, k, v) {
            if (!*k || !json_text_ok(v))
                return "each of \"phrases\" maps a non-empty string to a non-empty string "
                       "without U+0000";
            u->phrases[u->phrase_count].from = k;
            u->phrases[u->phrase_count++].to = json_string_value(v);
        }
    }
    if (jpr && !json_is_null(jpr)) {
        if (!json_is_array(jpr))
            return "\"protect\" must be an array of strings";
        if (json_array_size(jpr) > API_USER_ENTRIES)
            return "\"protect\" has more than 10000 entries";
        u->protect = calloc(json_array_size(jpr) + 1, sizeof *u->protect);
        if (!u->protect)
            return "out of memory";
        for (size_t i = 0; i < json_array_size(jpr); i++) {
            const json_t *v = json_array_get(jpr, i);
            if (!json_text_ok(v))
                return "each of \"protect\" is a non-empty string without U+0000";
            u->protect[u->protect_count++] = json_string_value(v);
        }
    }
    return NULL;
}

/* Whether the JSON string j is exactly s: with its length, since a string
 * may hold NUL ("s2tw\u0000x" is no profile). */
static int str_is(const json_t *j, const char *s, size_t n)
{
    return json_string_length(j) == n && memcmp(json_string_value(j), s, n) == 0;
}

/* The index of a profile name ("s2tw", or OpenCC's "s2tw.json"), or -1. */
static long find_profile(const fjx_api *a, const json_t *name)
{
    const char *s = json_string_value(name);
    size_t n = json_string_length(name);
    if (n > 5 && memcmp(s + n - 5, ".json", 5) == 0)
        n -= 5;
    for (size_t i = 0; i < a->nprofiles; i++) {
        const char *p = fj_converter_profile(a->conv[API_MODES * i]);
        if (strlen(p) == n && memcmp(p, s, n) == 0)
            return (long)i;
    }
    return -1;
}

/* The parsed body's "text", or NULL after making a 400. */
static const json_t *get_text(const json_t *root, char **out, size_t *out_len)
{
    const json_t *text = json_object_get(root, "text");
    if (!text)
        fail(400, out, out_len, "missing \"text\"");
    else if (!json_is_string(text))
        fail(400, out, out_len, "\"text\" must be a string");
    else
        return text;
    return NULL;
}

/* What a request chose: the converter and what goes around it. */
typedef struct choice {
    const fj_converter *conv;
    long profile_index, target_index; /* -1 when not the one asked */
    int mode;                          /* API_DEFAULT ... (API_DEFAULT for a target) */
    int quotes; /* fj_quotes */
    int clean, punct;
    char profile[40]; /* as the answer names it: the profile, or "to:TARGET" */
} choice;

/* Reads the options shared by /v1/convert and /v1/file from `root`:
 * "profile" or "to", "compat", "repair", "quotes", "clean", "punct". 0, or
 * 400 after making the error answer. */
static unsigned parse_choice(const fjx_api *a, const json_t *root, choice *c, char **out,
                             size_t *out_len)
{
    const json_t *jp = json_object_get(root, "profile");
    const json_t *jt = json_object_get(root, "to");
    long pi = -1, ti = -1;
    if (jt && !json_is_null(jt)) {
        /* Target-only conversion: any input to one standard (fanjian --to). */
        if (jp && !json_is_null(jp))
            return fail(400, out, out_len, "give \"profile\" or \"to\", not both");
        if (!json_is_string(jt))
            return fail(400, out, out_len, "\"to\" must be a string");
        for (size_t i = 0; i < a->ntargets && ti < 0; i++)
            if (str_is(jt, fj_target_name(i), strlen(fj_target_name(i))))
                ti = (long)i;
        if (ti < 0)
            return fail(400, out, out_len, "unknown target (see \"targets\" in /v1/profiles)");
    } else {
        if (!jp)
            return fail(400, out, out_len, "missing \"profile\" (see /v1/profiles)");
        if (!json_is_string(jp))
            return fail(400, out, out_len, "\"profile\" must be a string");
        pi = find_profile(a, jp);
        if (pi < 0 && strlen(json_string_value(jp)) != json_string_length(jp))
            return fail(400, out, out_len, "\"profile\" must not contain U+0000");
        if (pi < 0)
            return fail(400, out, out_len, "unknown profile \"%.64s\" (see /v1/profiles)",
                        json_string_value(jp));
    }
    int compat = 0;
    c->clean = c->punct = 0;
    if (opt_bool(root, "clean", &c->clean) || opt_bool(root, "compat", &compat) ||
        opt_bool(root, "punct", &c->punct))
        return fail(400, out, out_len, "\"clean\", \"compat\" and \"punct\" must be true or false");
    int mode = API_DEFAULT;
    const json_t *jr = json_object_get(root, "repair");
    if (jr && !json_is_null(jr)) {
        if (json_is_string(jr) && str_is(jr, "thorough", 8))
            mode = API_THOROUGH;
        else if (json_is_string(jr) && str_is(jr, "careful", 7))
            mode = API_CAREFUL;
        else if (json_is_string(jr) && str_is(jr, "off", 3))
            mode = API_REPAIR_OFF;
        else if (!(json_is_string(jr) && str_is(jr, "auto", 4)))
            return fail(400, out, out_len,
                        "\"repair\" must be \"auto\", \"careful\", \"thorough\" or \"off\"");
    }
    if (ti >= 0 && (compat || mode != API_DEFAULT))
        return fail(400, out, out_len, "\"to\" takes neither \"compat\" nor a \"repair\" level");
    c->profile_index = pi;
    c->target_index = ti;
    c->mode = ti >= 0 ? API_DEFAULT : compat ? API_COMPAT : mode;
    c->conv = ti >= 0 ? a->to[ti] : a->conv[API_MODES * pi + c->mode];
    const char *profile = fj_converter_profile(c->conv);
    /* As on the command line: the profile's own style, but none in compat mode. */
    c->quotes = compat ? FJ_QUOTES_KEEP : (int)fj_profile_quotes(profile);
    if (ti >= 0) /* the answer names what was asked */
        snprintf(c->profile, sizeof c->profile, "to:%s", fj_target_name((size_t)ti));
    else
        snprintf(c->profile, sizeof c->profile, "%s", profile);
    const json_t *jq = json_object_get(root, "quotes");
    if (jq && !json_is_null(jq)) {
        if (json_is_string(jq) && (str_is(jq, "tw", 2) || str_is(jq, "hk", 2)))
            c->quotes = FJ_QUOTES_CORNER;
        else if (json_is_string(jq) && str_is(jq, "cn", 2))
            c->quotes = FJ_QUOTES_CURLY;
        else if (json_is_string(jq) && str_is(jq, "keep", 4))
            c->quotes = FJ_QUOTES_KEEP;
        else
            return fail(400, out, out_len, "\"quotes\" must be \"tw\", \"cn\" or \"keep\"");
    }
    return 0;
}

/* Frees *rootp (and sets it to NULL) as soon as the text is converted, so
 * that the request's copy and the answer do not both stay. */
/* The request's own "phrases", "protect" and "markup", when it has any: a
 * converter opened for it (the strings are copied) into *own, else NULL.
 * NULL, or what is wrong. */
static const char *open_user_converter(const fjx_api *a, const json_t *root, const choice *ch,
                                       fj_converter **own)
{
    user_entries user = {0};
    const char *bad_user = read_user_entries(root, &user);
    *own = NULL;
    if (!bad_user && (user.phrase_count || user.protect_count || user.markup)) {
        static const unsigned mode_flags[API_MODES] = {FJ_DEFAULT, FJ_COMPAT, FJ_REPAIR_THOROUGH,
                                                       FJ_REPAIR_CAREFUL, FJ_REPAIR_OFF};
        fj_options o;
        fj_options_init(&o);
        o.quotes = FJ_QUOTES_KEEP;
        if (ch->target_index >= 0)
            o.target = fj_target_name((size_t)ch->target_index);
        else
            o.profile = fj_dict_profile_name(a->dict, (size_t)ch->profile_index);
        o.flags = mode_flags[ch->mode];
        o.phrases = user.phrases;
        o.phrase_count = user.phrase_count;
        o.protect = user.protect;
        o.protect_count = user.protect_count;
        o.markup = user.markup ? FJ_MARKUP_INLINE : 0;
        fj_error oe;
        if (fj_converter_open_options(a->dict, &o, own, &oe) != FJ_OK)
            bad_user = oe.code == FJ_ERR_NOMEM ? "out of memory" : "\"phrases\" or \"protect\" are not valid";
    }
    free(user.phrases);
    free(user.protect);
    return bad_user;
}

/* "choices": a JSON array of fjf_choice_json objects. */
typedef struct choices_out {
    buf *b;
    const char *text;
    size_t len, count;
    int failed;
} choices_out;

static int put_choice(void *ctx, const fj_choice *place)
{
    choices_out *co = ctx;
    char *line = fjf_choice_json(place, co->text, co->len, NULL);
    if (!line || buf_puts(co->b, co->count ? "," : "") != 0 || buf_puts(co->b, line) != 0)
        co->failed = 1;
    free(line);
    co->count++;
    return co->failed;
}

static unsigned api_convert(const fjx_api *a, json_t **rootp, char **out, size_t *out_len)
{
    const json_t *root = *rootp;
    const json_t *text = get_text(root, out, out_len);
    if (!text)
        return 400;
    choice ch;
    unsigned bad = parse_choice(a, root, &ch, out, out_len);
    if (bad)
        return bad;
    const fj_converter *conv = ch.conv;
    const char *profile = ch.profile;
    int quotes = ch.quotes, clean = ch.clean, punct = ch.punct, inspect = 0;
    if (opt_bool(root, "inspect", &inspect))
        return fail(400, out, out_len, "\"inspect\" must be true or false");

    /* The request's own entries: a converter of its own, opened for it. */
    fj_converter *own = NULL;
    const char *bad_user = open_user_converter(a, root, &ch, &own);
    if (own)
        conv = own;
    if (bad_user)
        return fail(400, out, out_len, "%s", bad_user);

    double t0 = now_ms();
    const char *in = json_string_value(text);
    size_t in_len = json_string_length(text);
    buf cleaned = {0};
    fj_status st = FJ_OK;
    if (clean) {
        fj_clean_stream *cs = NULL;
        if (buf_reserve(&cleaned, in_len + 1) != 0)
            st = FJ_ERR_NOMEM;
        if (st == FJ_OK)
            st = fj_clean_stream_new(a->clean, buf_write, &cleaned, NULL, NULL, &cs);
        if (st == FJ_OK)
            st = fj_clean_stream_feed(cs, in, in_len);
        if (st == FJ_OK)
            st = fj_clean_stream_finish(cs);
        fj_clean_stream_free(cs);
        in = cleaned.p ? cleaned.p : "";
        in_len = cleaned.len;
    }
    char *converted = NULL;
    size_t conv_len = 0;
    if (st == FJ_OK)
        st = fj_convert_alloc(conv, in, in_len, &converted, &conv_len);
    /* The places in the text as converted (after clean-up, if asked). */
    buf choices = {0};
    if (st == FJ_OK && inspect) {
        choices_out co = {&choices, in, in_len, 0, 0};
        st = buf_puts(&choices, "[") != 0 ? FJ_ERR_NOMEM : fj_inspect(conv, in, in_len, put_choice, &co);
        if (co.failed || (st == FJ_OK && buf_puts(&choices, "]") != 0))
            st = FJ_ERR_NOMEM;
    }
    free(cleaned.p);
    json_decref(*rootp); /* the request's text is no longer needed */
    *rootp = NULL;
    buf typo = {0};
    const char *result = converted;
    size_t result_len = conv_len;
    if (st == FJ_OK && (quotes != FJ_QUOTES_KEEP || punct)) {
        fj_punct *p = NULL;
        unsigned flags = punct ? FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH : 0;
        if (buf_reserve(&typo, conv_len + 1) != 0)
            st = FJ_ERR_NOMEM;
        if (st == FJ_OK)
            st = fj_punct_new((fj_quotes)quotes, flags, NULL, buf_write, &typo, &p);
        if (st == FJ_OK)
            st = fj_punct_feed(p, converted, conv_len);
        if (st == FJ_OK)
            st = fj_punct_finish(p);
        fj_punct_free(p);
        fj_free(conv, converted);
        converted = NULL;
        result = typo.p ? typo.p : "";
        result_len = typo.len;
    }
    double ms = now_ms() - t0;

    buf b = {0};
    if (st == FJ_OK) {
        /* Sized once: the answer is the largest buffer of the request. */
        size_t need = json_escape(result, result_len, NULL) + 2 * strlen(profile) + 64 + choices.len;
        if (buf_reserve(&b, need) != 0 || buf_puts(&b, "{\"text\":") != 0 ||
            buf_json(&b, result, result_len) != 0 || buf_puts(&b, ",\"profile\":") != 0 ||
            buf_json(&b, profile, strlen(profile)) != 0 ||
            (inspect && (buf_puts(&b, ",\"choices\":") != 0 ||
                         buf_put(&b, choices.p, choices.len) != 0)) ||
            buf_printf(&b, ",\"ms\":%.3f}\n", ms) != 0)
            st = FJ_ERR_NOMEM;
    }
    free(choices.p);
    fj_free(conv, converted);
    fj_converter_close(own);
    free(typo.p);
    if (st != FJ_OK) {
        free(b.p);
        return fail(500, out, out_len, "conversion failed: %s", fj_strerror(st));
    }
    return done(200, &b, out, out_len);
}

static unsigned api_detect(const fjx_api *a, const json_t *root, char **out, size_t *out_len)
{
    const json_t *text = get_text(root, out, out_len);
    if (!text)
        return 400;
    const char *in = json_string_value(text);
    size_t len = json_string_length(text);
    fj_script_span first[32];
    fj_script_span *spans = first;
    fj_detection d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    d.spans = spans;
    d.span_capacity = sizeof first / sizeof first[0];
    fj_status st = fj_detect(a->dict, in, len, &d);
    if (st == FJ_OK && d.span_count > d.span_capacity) {
        /* Many spans: ask again with room for all of them. */
        size_t n = d.span_count;
        spans = malloc(n * sizeof *spans);
        memset(&d, 0, sizeof d);
        d.size = sizeof d;
        d.spans = spans;
        d.span_capacity = spans ? n : 0;
        st = spans ? fj_detect(a->dict, in, len, &d) : FJ_ERR_NOMEM;
    }
    buf b = {0};
    if (st == FJ_OK) {
        /* The library's shape, as the CLI's detect --json. */
        size_t n = fj_detection_json(&d, 1, NULL, 0);
        if (buf_puts(&b, "{") != 0 || buf_reserve(&b, n + 4) != 0)
            st = FJ_ERR_NOMEM;
        else
            b.len += fj_detection_json(&d, 1, b.p + b.len, n + 1);
        if (st == FJ_OK && buf_puts(&b, "}\n") != 0)
            st = FJ_ERR_NOMEM;
    }
    if (spans != first)
        free(spans);
    if (st != FJ_OK) {
        free(b.p);
        return fail(500, out, out_len, "detection failed: %s", fj_strerror(st));
    }
    return done(200, &b, out, out_len);
}

unsigned fjx_api_answer(const fjx_api *a, int detect, char *body, size_t len, char **out,
                        size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    json_error_t jerr;
    /* NUL is allowed: it is text like any other, and passes through. */
    json_t *root = json_loadb(body ? body : "", len, JSON_ALLOW_NUL, &jerr);
    free(body); /* parsed: only the parsed copy is kept */
    if (!root)
        return fail(400, out, out_len, "invalid JSON: %s (line %d, column %d)", jerr.text,
                    jerr.line, jerr.column);
    unsigned status;
    if (!json_is_object(root))
        status = fail(400, out, out_len, "the body must be a JSON object");
    else if (!detect)
        status = api_convert(a, &root, out, out_len);
    else
        status = api_detect(a, root, out, out_len);
    json_decref(root);
    return status;
}

/* ---- POST /v1/file ------------------------------------------------------------------ */

/* What an EPUB may unpack to, per byte of the upload: zip bombs stop here. */
#define EPUB_EXPANSION 8ull
/* The longest file name taken (a name is one path component). */
#define MAX_FILE_NAME 255

void fjx_api_set_file_limit(fjx_api *a, unsigned long long max_file)
{
    a->epub.max_total = max_file * EPUB_EXPANSION;
    a->epub.max_entry = a->epub.max_total;
    a->epub.max_entries = 0; /* the library's default */
}

static const char *content_type(fjf_format format)
{
    switch (format) {
    case FJF_HTML: return "text/html; charset=utf-8";
    case FJF_XHTML: return "application/xhtml+xml; charset=utf-8";
    case FJF_MARKDOWN: return "text/markdown; charset=utf-8";
    case FJF_SRT: return "application/x-subrip; charset=utf-8";
    case FJF_ASS: return "text/x-ssa; charset=utf-8";
    case FJF_VTT: return "text/vtt; charset=utf-8";
    case FJF_EPUB: return "application/epub+zip";
    case FJF_TEXT: break;
    }
    return "text/plain; charset=utf-8";
}

/* The members of /v1/convert that a file request gives as query
 * parameters, made a JSON object for parse_choice; booleans are true or
 * false (or 1 or 0). NULL after making a 400 (or on no memory). */
static json_t *file_options(fjx_param_fn param, void *ctx, unsigned *status, char **out,
                            size_t *out_len)
{
    static const char *const strings[] = {"profile", "to", "quotes", "repair"};
    static const char *const bools[] = {"clean", "compat", "punct", "markup"};
    /* JSON in a parameter: "phrases" an object, "protect" an array. */
    static const char *const jsons[] = {"phrases", "protect"};
    json_t *root = json_object();
    for (size_t i = 0; root && i < sizeof strings / sizeof *strings; i++) {
        const char *v = param(ctx, strings[i]);
        if (!v)
            continue;
        json_t *j = json_string(v);
        if (!j) {
            *status = fail(400, out, out_len, "\"%s\" must be UTF-8", strings[i]);
            json_decref(root);
            return NULL;
        }
        json_object_set_new(root, strings[i], j);
    }
    for (size_t i = 0; root && i < sizeof bools / sizeof *bools; i++) {
        const char *v = param(ctx, bools[i]);
        if (!v)
            continue;
        json_t *j = strcmp(v, "true") == 0 || strcmp(v, "1") == 0    ? json_true()
                    : strcmp(v, "false") == 0 || strcmp(v, "0") == 0 ? json_false()
                                                                      : json_string("?");
        json_object_set_new(root, bools[i], j);
    }
    for (size_t i = 0; root && i < sizeof jsons / sizeof *jsons; i++) {
        const char *v = param(ctx, jsons[i]);
        if (!v)
            continue;
        json_t *j = json_loads(v, JSON_REJECT_DUPLICATES, NULL);
        if (!j || (i == 0 ? !json_is_object(j) : !json_is_array(j))) {
            json_decref(j);
            json_decref(root);
            *status = fail(400, out, out_len, "\"%s\" must be %s, as JSON", jsons[i],
                           i == 0 ? "an object of strings ({\"from\": \"to\"})"
                                  : "an array of strings");
            return NULL;
        }
        json_object_set_new(root, jsons[i], j);
    }
    if (!root)
        *status = fail(500, out, out_len, "out of memory");
    return root;
}

/* A file name the answer can be named after: one path component of
 * UTF-8. NULL when fine, else why not. */
static const char *bad_file_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return "is empty";
    if (n > MAX_FILE_NAME)
        return "is longer than 255 bytes";
    if (fj_utf8_valid(name, n, NULL) != n)
        return "is not UTF-8";
    if (strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return "must be a file name, not a path";
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return "contains a control character";
    return NULL;
}

/* The converted EPUB, read back from its descriptor into ans. 0, or -1 (errno). */
static int read_back(int fd, fjx_file_answer *ans)
{
    if (lseek(fd, 0, SEEK_SET) != 0)
        return -1;
    ans->body = fjf_read_all(fd, &ans->len, 0);
    return ans->body ? 0 : -1;
}

/* Converts the upload; `body` stays the caller's. */
/* *own: the request's own converter, if it has entries (the caller closes it). */
static unsigned file_convert(const fjx_api *a, fjx_param_fn param, void *ctx, const char *body,
                             size_t len, fjx_file_answer *ans, fj_converter **own)
{
    char **out = &ans->body;
    size_t *out_len = &ans->len;
    const char *name = param(ctx, "name");
    if (!name)
        return fail(400, out, out_len, "missing \"name\": the file's name, whose extension "
                                       "gives its format (unless \"format\" does)");
    const char *why = bad_file_name(name);
    if (why)
        return fail(400, out, out_len, "\"name\" %s", why);
    const char *format_name = param(ctx, "format");
    int format = format_name ? fjf_format_from_name(format_name) : (int)fjf_format_from_path(name);
    if (format < 0)
        return fail(400, out, out_len, "unknown \"format\" \"%.32s\" (text, html, xhtml, "
                                       "markdown, srt, ass, vtt or epub)", format_name);
    unsigned status = 0;
    json_t *root = file_options(param, ctx, &status, out, out_len);
    if (!root)
        return status;
    choice ch;
    unsigned bad = parse_choice(a, root, &ch, out, out_len);
    const char *bad_user = bad ? NULL : open_user_converter(a, root, &ch, own);
    json_decref(root);
    if (bad)
        return bad;
    if (bad_user)
        return fail(400, out, out_len, "%s", bad_user);
    if (*own)
        ch.conv = *own;
    char enc_buf[32];
    const char *from = param(ctx, "from_encoding");
    if (from && format == FJF_EPUB)
        return fail(400, out, out_len, "\"from_encoding\" does not apply to an EPUB (always UTF-8)");
    if (from && !(from = fjf_encoding_canonical(from, enc_buf)))
        return fail(400, out, out_len, "unknown \"from_encoding\" (e.g. gb18030, big5, utf-16)");

    /* As the command line sets it up (cli/fanjian.c), output in UTF-8. */
    fjf_settings s;
    memset(&s, 0, sizeof s);
    s.conv = ch.conv;
    s.clean = ch.clean ? a->clean : NULL;
    s.quotes = ch.quotes;
    s.punct_flags = ch.punct ? FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH : 0;
    s.from_encoding = from;
    s.limits = a->epub;
    fj_profile_info info;
    info.size = sizeof info;
    s.lang = fj_profile_info_get(NULL, fj_converter_profile(ch.conv), &info) == FJ_OK ? info.lang
                                                                                   : NULL;
    if ((unsigned long long)len > fjf_document_limit(&s, (fjf_format)format) &&
        format != FJF_TEXT)
        return fail(413, out, out_len, "%s is larger than %llu bytes, the most a %s is given",
                    name, fjf_document_limit(&s, (fjf_format)format),
                    fjf_format_name((fjf_format)format));

    double t0 = now_ms();
    fjf_error err;
    memset(&err, 0, sizeof err);
    fjf_file_stats st;
    memset(&st, 0, sizeof st);
    buf result = {0};
    int rc, saved = 0;
    if (format == FJF_TEXT) {
        fjf_text *t = NULL;
        rc = fjf_text_begin(&s, "the answer", buf_write, &result, &t, &err);
        if (rc == 0)
            rc = fjf_text_input_memory(t, body, len, name, &st, &err);
        if (rc == 0)
            rc = fjf_text_end(t, NULL, &err);
        fjf_text_free(t);
    } else if (format == FJF_EPUB) {
        int fd = memfd_create("fanjian-epub", MFD_CLOEXEC);
        if (fd < 0) {
            free(result.p);
            return fail(500, out, out_len, "cannot make a file for the EPUB: %s", strerror(errno));
        }
        rc = fjf_document_convert(&s, FJF_EPUB, body, len, name, buf_write, &result, fd, &st, &err);
        if (rc == 0 && read_back(fd, ans) != 0) {
            saved = errno;
            rc = -1;
            err.kind = FJF_ERR_READ;
        }
        close(fd);
    } else {
        rc = fjf_document_convert(&s, (fjf_format)format, body, len, name, buf_write, &result, -1,
                                  &st, &err);
    }
    if (rc != 0) {
        free(result.p);
        free(ans->body);
        ans->body = NULL;
        ans->len = 0;
        if (err.kind == FJF_ERR_NOMEM || err.kind == FJF_ERR_WRITE)
            return fail(500, out, out_len, "out of memory");
        if (saved)
            return fail(500, out, out_len, "cannot read the EPUB back: %s", strerror(saved));
        const char *hint = err.kind == FJF_ERR_DETECT || err.kind == FJF_ERR_INVALID_UTF8 ||
                                   err.kind == FJF_ERR_DECODE
                               ? " (give \"from_encoding\")"
                               : "";
        /* 422: the request was understood; the file cannot be converted. */
        if (err.subject)
            return fail(422, out, out_len, "%s: %s%s", err.subject, err.message, hint);
        return fail(422, out, out_len, "%s: %s%s", name, err.message, hint);
    }
    if (format != FJF_EPUB) {
        ans->body = result.p ? result.p : calloc(1, 1);
        ans->len = result.len;
        if (!ans->body)
            return fail(500, out, out_len, "out of memory");
    }
    ans->ms = now_ms() - t0;
    ans->name = fjf_convert_name(&s, name);
    if (!ans->name) {
        free(ans->body);
        ans->body = NULL;
        ans->len = 0;
        return fail(500, out, out_len, "out of memory");
    }
    ans->type = content_type((fjf_format)format);
    snprintf(ans->format, sizeof ans->format, "%s", fjf_format_name((fjf_format)format));
    if (format != FJF_EPUB)
        snprintf(ans->encoding, sizeof ans->encoding, "%s", st.encoding[0] ? st.encoding : "UTF-8");
    snprintf(ans->profile, sizeof ans->profile, "%s", ch.profile);
    return 200;
}

unsigned fjx_api_file(const fjx_api *a, fjx_param_fn param, void *ctx, char *body, size_t len,
                      fjx_file_answer *ans)
{
    memset(ans, 0, sizeof *ans);
    fj_converter *own = NULL;
    unsigned status = file_convert(a, param, ctx, body ? body : "", len, ans, &own);
    fj_converter_close(own);
    free(body);
    if (status != 200)
        ans->type = "application/json; charset=utf-8";
    return status;
}

void fjx_file_answer_free(fjx_file_answer *ans)
{
    free(ans->body);
    free(ans->name);
    memset(ans, 0, sizeof *ans);
}

/* ---- opening ------------------------------------------------------------------------ */

int fjx_api_profiles(const fjx_api *a, char **out, size_t *out_len)
{
    buf b = {0};
    int rc = buf_puts(&b, "{\"profiles\":[");
    for (size_t i = 0; rc == 0 && i < a->nprofiles; i++) {
        const char *name = fj_dict_profile_name(a->dict, i);
        rc = (i && buf_puts(&b, ",") != 0) || buf_json(&b, name, strlen(name)) != 0 ? -1 : 0;
    }
    if (rc == 0)
        rc = buf_puts(&b, "],\"targets\":[");
    for (size_t i = 0; rc == 0 && i < a->ntargets; i++) {
        const char *name = fj_target_name(i);
        rc = (i && buf_puts(&b, ",") != 0) || buf_json(&b, name, strlen(name)) != 0 ? -1 : 0;
    }
    if (rc == 0)
        rc = buf_puts(&b, "]}\n");
    if (rc != 0) {
        free(b.p);
        *out = NULL;
        *out_len = 0;
        return -1;
    }
    done(0, &b, out, out_len);
    return 0;
}

void fjx_api_close(fjx_api *a)
{
    if (!a)
        return;
    for (size_t i = 0; a->conv && i < API_MODES * a->nprofiles; i++)
        fj_converter_close(a->conv[i]);
    free(a->conv);
    for (size_t i = 0; a->to && i < a->ntargets; i++)
        fj_converter_close(a->to[i]);
    free(a->to);
    fj_clean_close(a->clean);
    free(a);
}

/* A converter from the one options struct: the profile or target and the
 * mode; each request's quotes and clean-up are applied around it. */
static fj_status open_one(const fj_dict *dict, const char *profile, const char *target,
                          unsigned flags, fj_converter **out, fj_error *err)
{
    fj_options o;
    fj_options_init(&o);
    o.profile = profile;
    o.target = target;
    o.flags = flags;
    o.quotes = FJ_QUOTES_KEEP;
    return fj_converter_open_options(dict, &o, out, err);
}

int fjx_api_open(const fj_dict *dict, fjx_api **out)
{
    *out = NULL;
    fjx_api *a = calloc(1, sizeof *a);
    if (a) {
        a->dict = dict;
        a->nprofiles = fj_dict_profile_count(dict);
        a->conv = calloc(API_MODES * a->nprofiles + 1, sizeof *a->conv);
    }
    if (!a || !a->conv) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        fjx_api_close(a);
        return -1;
    }
    fj_error err;
    for (size_t i = 0; i < a->nprofiles; i++) {
        const char *name = fj_dict_profile_name(dict, i);
        fj_converter **c = &a->conv[API_MODES * i];
        if (open_one(dict, name, NULL, FJ_DEFAULT, &c[API_DEFAULT], &err) != FJ_OK ||
            open_one(dict, name, NULL, FJ_COMPAT, &c[API_COMPAT], &err) != FJ_OK ||
            open_one(dict, name, NULL, FJ_REPAIR_THOROUGH, &c[API_THOROUGH], &err) != FJ_OK ||
            open_one(dict, name, NULL, FJ_REPAIR_CAREFUL, &c[API_CAREFUL], &err) != FJ_OK ||
            open_one(dict, name, NULL, FJ_REPAIR_OFF, &c[API_REPAIR_OFF], &err) != FJ_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            fjx_api_close(a);
            return -1;
        }
    }
    fjx_api_set_file_limit(a, FJX_DEFAULT_MAX_FILE);
    while (fj_target_name(a->ntargets))
        a->ntargets++;
    a->to = calloc(a->ntargets ? a->ntargets : 1, sizeof *a->to);
    if (!a->to) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        fjx_api_close(a);
        return -1;
    }
    for (size_t i = 0; i < a->ntargets; i++)
        if (open_one(dict, NULL, fj_target_name(i), FJ_DEFAULT, &a->to[i], &err) != FJ_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            fjx_api_close(a);
            return -1;
        }
    if (fj_clean_open(dict, NULL, 0, 0, &a->clean, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        fjx_api_close(a);
        return -1;
    }
    *out = a;
    return 0;
}
