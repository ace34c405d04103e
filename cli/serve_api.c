/* fanjian serve: the JSON API (cli/serve_api.h), apart from HTTP.
 *
 *   POST /v1/convert    {"text","profile","quotes"?,"clean"?,"compat"?,"punct"?,"repair"?}
 *   POST /v1/detect     {"text"}
 *
 * The answer is built from the body in a few buffers of about its size,
 * each freed as soon as the next exists, so memory per request is bounded
 * by the body's size. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "fanjian.h"
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

/* Frees *rootp (and sets it to NULL) as soon as the text is converted, so
 * that the request's copy and the answer do not both stay. */
static unsigned api_convert(const fjx_api *a, json_t **rootp, char **out, size_t *out_len)
{
    const json_t *root = *rootp;
    const json_t *text = get_text(root, out, out_len);
    if (!text)
        return 400;
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
    int clean = 0, compat = 0, punct = 0;
    if (opt_bool(root, "clean", &clean) || opt_bool(root, "compat", &compat) ||
        opt_bool(root, "punct", &punct))
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
    const fj_converter *conv =
        ti >= 0 ? a->to[ti] : a->conv[API_MODES * pi + (compat ? API_COMPAT : mode)];
    const char *profile = fj_converter_profile(conv);
    /* As on the command line: the profile's own style, but none in compat mode. */
    int quotes = compat ? FJ_QUOTES_KEEP : (int)fj_profile_quotes(profile);
    char target_name[32];
    if (ti >= 0) {
        snprintf(target_name, sizeof target_name, "to:%s", fj_target_name((size_t)ti));
        profile = target_name; /* the answer names what was asked */
    }
    const json_t *jq = json_object_get(root, "quotes");
    if (jq && !json_is_null(jq)) {
        if (json_is_string(jq) && (str_is(jq, "tw", 2) || str_is(jq, "hk", 2)))
            quotes = FJ_QUOTES_CORNER;
        else if (json_is_string(jq) && str_is(jq, "cn", 2))
            quotes = FJ_QUOTES_CURLY;
        else if (json_is_string(jq) && str_is(jq, "keep", 4))
            quotes = FJ_QUOTES_KEEP;
        else
            return fail(400, out, out_len, "\"quotes\" must be \"tw\", \"cn\" or \"keep\"");
    }

    /* The request's own entries: a converter of its own, opened for it. */
    user_entries user = {0};
    const char *bad_user = read_user_entries(root, &user);
    fj_converter *own = NULL;
    if (!bad_user && (user.phrase_count || user.protect_count || user.markup)) {
        static const unsigned mode_flags[API_MODES] = {FJ_DEFAULT, FJ_COMPAT, FJ_REPAIR_THOROUGH,
                                                       FJ_REPAIR_CAREFUL, FJ_REPAIR_OFF};
        fj_options o;
        fj_options_init(&o);
        o.quotes = FJ_QUOTES_KEEP;
        if (ti >= 0)
            o.target = fj_target_name((size_t)ti);
        else
            o.profile = fj_dict_profile_name(a->dict, (size_t)pi);
        o.flags = ti >= 0 ? FJ_DEFAULT : mode_flags[compat ? API_COMPAT : mode];
        o.phrases = user.phrases;
        o.phrase_count = user.phrase_count;
        o.protect = user.protect;
        o.protect_count = user.protect_count;
        o.markup = user.markup ? FJ_MARKUP_INLINE : 0;
        fj_error oe;
        if (fj_converter_open_options(a->dict, &o, &own, &oe) != FJ_OK)
            bad_user = oe.code == FJ_ERR_NOMEM ? "out of memory" : "\"phrases\" or \"protect\" are not valid";
        else
            conv = own;
    }
    free(user.phrases);
    free(user.protect);
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
        size_t need = json_escape(result, result_len, NULL) + 2 * strlen(profile) + 64;
        if (buf_reserve(&b, need) != 0 || buf_puts(&b, "{\"text\":") != 0 ||
            buf_json(&b, result, result_len) != 0 || buf_puts(&b, ",\"profile\":") != 0 ||
            buf_json(&b, profile, strlen(profile)) != 0 ||
            buf_printf(&b, ",\"ms\":%.3f}\n", ms) != 0)
            st = FJ_ERR_NOMEM;
    }
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
