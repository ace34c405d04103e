/* fanjian serve: an HTTP/1.1 service (a JSON API and a web page) over one
 * dictionary and one converter per profile and mode, all opened at start
 * and shared by libmicrohttpd's worker threads (they are immutable).
 *
 *   GET  /              the web page (cli/web/index.html, compiled in)
 *   GET  /healthz       {"ok":true}
 *   GET  /v1/profiles   {"profiles":[...]}
 *   POST /v1/convert    {"text","profile","quotes"?,"clean"?,"compat"?,"punct"?}
 *   POST /v1/detect     {"text"}
 *
 * A request body is held whole (at most --max-body bytes); the answer is
 * built from it in a few buffers of about its size, each freed as soon as
 * the next exists, so memory per request is bounded by the body's size. */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "fanjian.h"
#include "convert.h"
#include "serve.h"

/* The page, generated from cli/web/index.html at build time. */
extern const unsigned char fjx_web_index_html[];
extern const size_t fjx_web_index_html_size;

#define DEFAULT_MAX_BODY (16ull << 20)
/* Per-connection memory for headers and read buffers (libmicrohttpd's pool). */
#define CONNECTION_MEMORY (64u << 10)
/* An idle connection is closed after this many seconds. */
#define IDLE_TIMEOUT 60u
/* How much of an oversized chunked body is read (and dropped) so that the
 * client gets its 413; past this the connection is simply closed. */
#define DISCARD_LIMIT (64ull << 20)

static const char prog[] = "fanjian";

enum route { R_NONE, R_INDEX, R_HEALTH, R_PROFILES, R_CONVERT, R_DETECT };

/* Everything the handlers use; read-only once the daemon runs. */
typedef struct server {
    fj_dict *dict;
    size_t nprofiles;
    fj_converter **conv; /* [2 * profile + compat] */
    fj_clean *clean;
    unsigned long long max_body;
    struct MHD_Response *index, *health, *profiles; /* shared, answered as they are */
} server;

/* One POST request while its body arrives. */
typedef struct request {
    enum route route;
    char *body;
    size_t len, cap;
    unsigned long long seen; /* bytes received, kept or not */
    int too_big;
} request;

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

/* The length of the valid UTF-8 sequence at s[0..n), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t k = 1; k < len; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    if (len == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)))
        return 0;
    if (len == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)))
        return 0;
    return len;
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

/* ---- responses --------------------------------------------------------------------- */

static struct MHD_Response *json_response(buf *b)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(b->len, b->p, MHD_RESPMEM_MUST_FREE);
    if (!r)
        return NULL;
    b->p = NULL; /* now the response's */
    b->len = b->cap = 0;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=utf-8");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    return r;
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
    if (!r)
        return MHD_NO; /* no memory: drop the connection */
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *allow,
                                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *allow,
                                  const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n >= sizeof msg ? sizeof msg - 1 : (size_t)n;
    buf b = {0};
    if (buf_puts(&b, "{\"error\":") != 0 || buf_json(&b, msg, len) != 0 || buf_puts(&b, "}\n") != 0) {
        free(b.p);
        return MHD_NO;
    }
    struct MHD_Response *r = json_response(&b);
    free(b.p);
    if (r && allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    return queue(c, status, r);
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

/* The index of a profile name ("s2tw", or OpenCC's "s2tw.json"), or -1. */
static long find_profile(const server *s, const char *name)
{
    size_t n = strlen(name);
    if (n > 5 && strcmp(name + n - 5, ".json") == 0)
        n -= 5;
    for (size_t i = 0; i < s->nprofiles; i++) {
        const char *p = fj_converter_profile(s->conv[2 * i]);
        if (strlen(p) == n && memcmp(p, name, n) == 0)
            return (long)i;
    }
    return -1;
}

/* The parsed body's "text", or NULL after queueing a 400. */
static const json_t *get_text(struct MHD_Connection *c, const json_t *root, enum MHD_Result *ret)
{
    const json_t *text = json_object_get(root, "text");
    if (!text)
        *ret = send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "missing \"text\"");
    else if (!json_is_string(text))
        *ret = send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "\"text\" must be a string");
    else
        return text;
    return NULL;
}

/* Frees *rootp (and sets it to NULL) as soon as the text is converted, so
 * that the request's copy and the answer do not both stay. */
static enum MHD_Result api_convert(const server *s, struct MHD_Connection *c, json_t **rootp)
{
    const json_t *root = *rootp;
    enum MHD_Result ret;
    const json_t *text = get_text(c, root, &ret);
    if (!text)
        return ret;
    const json_t *jp = json_object_get(root, "profile");
    if (!jp)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "missing \"profile\" (see /v1/profiles)");
    if (!json_is_string(jp))
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "\"profile\" must be a string");
    long pi = find_profile(s, json_string_value(jp));
    if (pi < 0)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "unknown profile \"%.64s\" (see /v1/profiles)",
                          json_string_value(jp));
    int clean = 0, compat = 0, punct = 0;
    if (opt_bool(root, "clean", &clean) || opt_bool(root, "compat", &compat) ||
        opt_bool(root, "punct", &punct))
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL,
                          "\"clean\", \"compat\" and \"punct\" must be true or false");
    const fj_converter *conv = s->conv[2 * pi + (compat ? 1 : 0)];
    const char *profile = fj_converter_profile(conv);
    /* As on the command line: the profile's own style, but none in compat mode. */
    int quotes = compat ? FJ_QUOTES_KEEP : (int)fj_profile_quotes(profile);
    const json_t *jq = json_object_get(root, "quotes");
    if (jq && !json_is_null(jq)) {
        const char *q = json_is_string(jq) ? json_string_value(jq) : "";
        if (strcmp(q, "tw") == 0 || strcmp(q, "hk") == 0)
            quotes = FJ_QUOTES_CORNER;
        else if (strcmp(q, "cn") == 0)
            quotes = FJ_QUOTES_CURLY;
        else if (strcmp(q, "keep") == 0)
            quotes = FJ_QUOTES_KEEP;
        else
            return send_error(c, MHD_HTTP_BAD_REQUEST, NULL,
                              "\"quotes\" must be \"tw\", \"cn\" or \"keep\"");
    }

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
            st = fj_clean_stream_new(s->clean, buf_write, &cleaned, NULL, NULL, &cs);
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

    buf out = {0};
    if (st == FJ_OK) {
        /* Sized once: the answer is the largest buffer of the request. */
        size_t need = json_escape(result, result_len, NULL) + 2 * strlen(profile) + 64;
        if (buf_reserve(&out, need) != 0 || buf_puts(&out, "{\"text\":") != 0 ||
            buf_json(&out, result, result_len) != 0 || buf_puts(&out, ",\"profile\":") != 0 ||
            buf_json(&out, profile, strlen(profile)) != 0 ||
            buf_printf(&out, ",\"ms\":%.3f}\n", ms) != 0)
            st = FJ_ERR_NOMEM;
    }
    fj_free(conv, converted);
    free(typo.p);
    if (st != FJ_OK) {
        free(out.p);
        return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "conversion failed: %s",
                          fj_strerror(st));
    }
    struct MHD_Response *r = json_response(&out);
    free(out.p);
    return queue(c, MHD_HTTP_OK, r);
}

static enum MHD_Result api_detect(const server *s, struct MHD_Connection *c, const json_t *root)
{
    enum MHD_Result ret;
    const json_t *text = get_text(c, root, &ret);
    if (!text)
        return ret;
    const char *in = json_string_value(text);
    size_t len = json_string_length(text);
    fj_script_span first[32];
    fj_script_span *spans = first;
    fj_detection d = {0};
    d.spans = spans;
    d.span_capacity = sizeof first / sizeof first[0];
    fj_status st = fj_detect(s->dict, in, len, &d);
    if (st == FJ_OK && d.span_count > d.span_capacity) {
        /* Many spans: ask again with room for all of them. */
        size_t n = d.span_count;
        spans = malloc(n * sizeof *spans);
        memset(&d, 0, sizeof d);
        d.spans = spans;
        d.span_capacity = spans ? n : 0;
        st = spans ? fj_detect(s->dict, in, len, &d) : FJ_ERR_NOMEM;
    }
    buf out = {0};
    if (st == FJ_OK &&
        buf_printf(&out, "{\"script\":\"%s\",\"confidence\":%.3f,\"han\":%zu,\"simplified\":%zu,"
                         "\"traditional\":%zu,\"spans\":[",
                   fj_script_name(d.script), d.confidence, d.han, d.simplified, d.traditional) != 0)
        st = FJ_ERR_NOMEM;
    size_t shown = d.span_count < d.span_capacity ? d.span_count : d.span_capacity;
    for (size_t i = 0; st == FJ_OK && i < shown; i++)
        if (buf_printf(&out, "%s{\"offset\":%zu,\"length\":%zu,\"script\":\"%s\"}", i ? "," : "",
                       spans[i].offset, spans[i].length, fj_script_name(spans[i].script)) != 0)
            st = FJ_ERR_NOMEM;
    if (st == FJ_OK && buf_puts(&out, "]}\n") != 0)
        st = FJ_ERR_NOMEM;
    if (spans != first)
        free(spans);
    if (st != FJ_OK) {
        free(out.p);
        return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "detection failed: %s",
                          fj_strerror(st));
    }
    struct MHD_Response *r = json_response(&out);
    free(out.p);
    return queue(c, MHD_HTTP_OK, r);
}

/* A whole POST body has arrived: parse it and answer. */
static enum MHD_Result api_call(const server *s, struct MHD_Connection *c, request *q)
{
    json_error_t jerr;
    /* NUL is allowed: it is text like any other, and passes through. */
    json_t *root = json_loadb(q->body ? q->body : "", q->len, JSON_ALLOW_NUL, &jerr);
    free(q->body); /* parsed: only the parsed copy is kept */
    q->body = NULL;
    q->len = q->cap = 0;
    if (!root)
        return send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "invalid JSON: %s (line %d, column %d)",
                          jerr.text, jerr.line, jerr.column);
    enum MHD_Result ret;
    if (!json_is_object(root))
        ret = send_error(c, MHD_HTTP_BAD_REQUEST, NULL, "the body must be a JSON object");
    else if (q->route == R_CONVERT)
        ret = api_convert(s, c, &root);
    else
        ret = api_detect(s, c, root);
    json_decref(root);
    return ret;
}

/* ---- the connection handler ------------------------------------------------------- */

static enum route route_of(const char *url)
{
    if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
        return R_INDEX;
    if (strcmp(url, "/healthz") == 0)
        return R_HEALTH;
    if (strcmp(url, "/v1/profiles") == 0)
        return R_PROFILES;
    if (strcmp(url, "/v1/convert") == 0)
        return R_CONVERT;
    if (strcmp(url, "/v1/detect") == 0)
        return R_DETECT;
    return R_NONE;
}

static enum MHD_Result first_call(const server *s, struct MHD_Connection *c, const char *url,
                                  const char *method, void **req_cls)
{
    enum route rt = route_of(url);
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    int post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    switch (rt) {
    case R_NONE:
        return send_error(c, MHD_HTTP_NOT_FOUND, NULL, "no such resource: %.200s", url);
    case R_INDEX:
    case R_HEALTH:
    case R_PROFILES:
        if (!get)
            return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET, HEAD",
                              "%.200s takes GET, not %.32s", url, method);
        break;
    case R_CONVERT:
    case R_DETECT:
        break;
    }
    /* Answered once the request is complete: an answer before that makes
     * libmicrohttpd close the connection. */
    if (get && rt != R_CONVERT && rt != R_DETECT) {
        request *q = calloc(1, sizeof *q);
        if (!q)
            return MHD_NO;
        q->route = rt;
        *req_cls = q;
        return MHD_YES;
    }
    if (!post)
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "POST", "%.200s takes POST, not %.32s",
                          url, method);
    /* A declared length over the limit is refused before any of the body is read. */
    unsigned long long declared = 0;
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        errno = 0;
        declared = strtoull(cl, &end, 10);
        if (errno || end == cl)
            declared = ULLONG_MAX;
    }
    if (declared > s->max_body)
        return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
                          "the body is larger than %llu bytes", s->max_body);
    request *q = calloc(1, sizeof *q);
    if (!q)
        return MHD_NO;
    q->route = rt;
    if (declared) {
        q->body = malloc((size_t)declared);
        q->cap = q->body ? (size_t)declared : 0;
    }
    *req_cls = q;
    return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    const server *s = cls;
    request *q = *req_cls;
    if (!q)
        return first_call(s, c, url, method, req_cls);
    if (q->route != R_CONVERT && q->route != R_DETECT) {
        if (*upload_data_size) {
            *upload_data_size = 0; /* a body sent with GET means nothing */
            return MHD_YES;
        }
        return MHD_queue_response(c, MHD_HTTP_OK,
                                  q->route == R_INDEX    ? s->index
                                  : q->route == R_HEALTH ? s->health
                                                         : s->profiles);
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        q->seen += n;
        if (q->too_big)
            return q->seen - s->max_body > DISCARD_LIMIT ? MHD_NO : MHD_YES;
        /* Counted as it arrives too: a chunked body declares no length. */
        if (q->seen > s->max_body) {
            q->too_big = 1;
            free(q->body);
            q->body = NULL;
            q->len = q->cap = 0;
            return MHD_YES;
        }
        if (n > q->cap - q->len) {
            size_t cap = q->cap ? q->cap : 64u << 10;
            while (cap - q->len < n)
                cap *= 2;
            if (cap > s->max_body)
                cap = (size_t)s->max_body;
            char *p = realloc(q->body, cap);
            if (!p)
                return MHD_NO;
            q->body = p;
            q->cap = cap;
        }
        memcpy(q->body + q->len, upload_data, n);
        q->len += n;
        return MHD_YES;
    }
    if (q->too_big)
        return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, NULL, "the body is larger than %llu bytes",
                          s->max_body);
    return api_call(s, c, q);
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    request *q = *req_cls;
    if (q) {
        free(q->body);
        free(q);
        *req_cls = NULL;
    }
}

/* libmicrohttpd's own messages (a failed start, a broken connection). */
static void mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = 0;
    fprintf(stderr, "%s: serve: %s\n", prog, msg);
}

/* ---- start-up ------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fanjian serve [--listen HOST:PORT] [--dict IMAGE] [--max-body BYTES]\n"
            "                     [--threads N]\n"
            "\n"
            "Serves the conversion over HTTP: a web page at /, and a JSON API\n"
            "(POST /v1/convert, POST /v1/detect, GET /v1/profiles, GET /healthz).\n"
            "\n"
            "      --listen HOST:PORT  address to listen on (default 127.0.0.1:8080; port 0\n"
            "                        picks a free port; [::1]:PORT for IPv6, :PORT for\n"
            "                        every interface)\n"
            "      --dict IMAGE      dictionary image (default: $FANJIAN_DICT, then the\n"
            "                        image next to this program, then %s)\n"
            "      --max-body BYTES  largest request body, with an optional K, M or G\n"
            "                        suffix (default 16M); larger ones get 413\n"
            "      --threads N       worker threads (default: one per core)\n"
            "\n"
            "Prints `fanjian: serving on http://HOST:PORT/` on standard error when ready;\n"
            "SIGINT or SIGTERM stops it.\n",
            fj_dict_default_path());
}

/* "123", "64K", "16M", "1G" (binary units); 0 when malformed or zero. */
static unsigned long long parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return 0;
    unsigned shift = 0;
    switch (*end) {
    case 0: break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return 0;
    }
    if (*end == 'i' || *end == 'B' || *end == 'b')
        end += *end == 'i' ? (end[1] == 'B' ? 2 : 1) : 1;
    if (*end || v > (ULLONG_MAX >> shift))
        return 0;
    return v << shift;
}

/* Opens, binds and listens on HOST:PORT; prints the address it got into
 * shown[] ("127.0.0.1:8080", "[::1]:8080"). -1 after reporting. */
static int listen_on(const char *spec, char *shown, size_t shown_size, int *family)
{
    char host[256], port[32];
    const char *colon = strrchr(spec, ':');
    if (!colon) {
        /* A bare port: the loopback address. */
        snprintf(host, sizeof host, "127.0.0.1");
        snprintf(port, sizeof port, "%s", spec);
    } else {
        size_t hl = (size_t)(colon - spec);
        const char *h = spec;
        if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
            h++;
            hl -= 2;
        }
        if (hl >= sizeof host || strlen(colon + 1) >= sizeof port) {
            fprintf(stderr, "%s: serve: --listen takes HOST:PORT, not %s\n", prog, spec);
            return -1;
        }
        memcpy(host, h, hl);
        host[hl] = 0;
        snprintf(port, sizeof port, "%s", colon + 1);
    }
    char *end;
    long pn = strtol(port, &end, 10);
    if (!*port || *end || pn < 0 || pn > 65535) {
        fprintf(stderr, "%s: serve: --listen takes HOST:PORT with a port from 0 to 65535, not %s\n",
                prog, spec);
        return -1;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(*host ? host : NULL, port, &hints, &res);
    if (gai != 0) {
        fprintf(stderr, "%s: serve: cannot resolve %s: %s\n", prog, *host ? host : "*",
                gai_strerror(gai));
        return -1;
    }
    int fd = -1, saved = 0;
    for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 511) != 0) {
            saved = errno;
            close(fd);
            fd = -1;
            continue;
        }
        *family = ai->ai_family;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fprintf(stderr, "%s: serve: cannot listen on %s: %s\n", prog, spec, strerror(saved));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char num[NI_MAXHOST], serv[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
        getnameinfo((struct sockaddr *)&ss, sl, num, sizeof num, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        fprintf(stderr, "%s: serve: cannot read the listening address: %s\n", prog, strerror(errno));
        close(fd);
        return -1;
    }
    snprintf(shown, shown_size, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", num, serv);
    return fd;
}

/* The answers that never change, made once. */
static struct MHD_Response *static_response(const void *data, size_t len, const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)(uintptr_t)data, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return NULL;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return r;
}

static void server_close(server *s)
{
    if (s->index)
        MHD_destroy_response(s->index);
    if (s->health)
        MHD_destroy_response(s->health);
    if (s->profiles)
        MHD_destroy_response(s->profiles);
    for (size_t i = 0; s->conv && i < 2 * s->nprofiles; i++)
        fj_converter_close(s->conv[i]);
    free(s->conv);
    fj_clean_close(s->clean);
    fj_dict_close(s->dict);
}

/* Opens the dictionary, every converter and the clean rules, and makes
 * the fixed answers. `profiles_json` receives the /v1/profiles body. 0, or
 * -1 after reporting. */
static int server_open(server *s, const char *dict_path, buf *profiles_json)
{
    static const char health[] = "{\"ok\":true}\n";
    fj_error err;
    if (fjx_open_dict(dict_path, &s->dict, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        return -1;
    }
    s->nprofiles = fj_dict_profile_count(s->dict);
    s->conv = calloc(2 * s->nprofiles + 1, sizeof *s->conv);
    if (!s->conv || buf_puts(profiles_json, "{\"profiles\":[") != 0) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        return -1;
    }
    for (size_t i = 0; i < s->nprofiles; i++) {
        const char *name = fj_dict_profile_name(s->dict, i);
        if (fj_converter_open(s->dict, name, FJ_DEFAULT, &s->conv[2 * i], &err) != FJ_OK ||
            fj_converter_open(s->dict, name, FJ_COMPAT, &s->conv[2 * i + 1], &err) != FJ_OK) {
            fprintf(stderr, "%s: %s\n", prog, err.message);
            return -1;
        }
        if ((i && buf_puts(profiles_json, ",") != 0) ||
            buf_json(profiles_json, name, strlen(name)) != 0) {
            fprintf(stderr, "%s: serve: out of memory\n", prog);
            return -1;
        }
    }
    if (buf_puts(profiles_json, "]}\n") != 0) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        return -1;
    }
    if (fj_clean_open(s->dict, NULL, 0, 0, &s->clean, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        return -1;
    }
    s->index = static_response(fjx_web_index_html, fjx_web_index_html_size, "text/html; charset=utf-8");
    s->health = static_response(health, sizeof health - 1, "application/json; charset=utf-8");
    s->profiles = static_response(profiles_json->p, profiles_json->len,
                                  "application/json; charset=utf-8");
    if (!s->index || !s->health || !s->profiles) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        return -1;
    }
    /* The page needs nothing from elsewhere, and may fetch only from here. */
    MHD_add_response_header(s->index, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; "
                            "style-src 'unsafe-inline'; connect-src 'self'; img-src data:; "
                            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    return 0;
}

int fjx_serve_main(int argc, char **argv)
{
    const char *listen_spec = "127.0.0.1:8080", *dict_path = NULL;
    unsigned long long max_body = DEFAULT_MAX_BODY;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = ncpu > 0 && ncpu <= 256 ? (unsigned)ncpu : 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        const char *opts[] = {"--listen", "--dict", "--max-body", "--threads"};
        int which = -1;
        for (int k = 0; k < 4 && which < 0; k++) {
            size_t n = strlen(opts[k]);
            if (strcmp(a, opts[k]) == 0) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "%s: serve: %s needs a value\n", prog, a);
                    return 2;
                }
                val = argv[++i];
                which = k;
            } else if (strncmp(a, opts[k], n) == 0 && a[n] == '=') {
                val = a + n + 1;
                which = k;
            }
        }
        if (which == 0) {
            listen_spec = val;
        } else if (which == 1) {
            dict_path = val;
        } else if (which == 2) {
            max_body = parse_size(val);
            if (max_body == 0 || max_body > SIZE_MAX / 4) {
                fprintf(stderr, "%s: serve: --max-body takes a positive size (e.g. 1048576 "
                                "or 16M), not %s\n", prog, val);
                return 2;
            }
        } else if (which == 3) {
            char *end;
            long n = strtol(val, &end, 10);
            if (!*val || *end || n < 1 || n > 256) {
                fprintf(stderr, "%s: serve: --threads takes a number from 1 to 256, not %s\n",
                        prog, val);
                return 2;
            }
            threads = (unsigned)n;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "%s: serve: unknown option %s (see fanjian serve --help)\n", prog, a);
            return 2;
        }
    }

    server s;
    memset(&s, 0, sizeof s);
    s.max_body = max_body;
    buf profiles_json = {0};
    if (server_open(&s, dict_path, &profiles_json) != 0) {
        server_close(&s);
        free(profiles_json.p);
        return 1;
    }
    char shown[NI_MAXHOST + NI_MAXSERV + 4];
    int family = AF_INET;
    int fd = listen_on(listen_spec, shown, sizeof shown, &family);
    if (fd < 0) {
        server_close(&s);
        free(profiles_json.p);
        return 1;
    }

    /* The signals that stop us are taken by sigwait below, in this thread
     * only: block them before any worker thread exists, which inherits the
     * mask. An ignored signal is discarded, not queued, and a shell starts
     * background jobs with SIGINT ignored: restore the default first. A
     * client that goes away must not kill the process. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);

    unsigned flags = MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (family == AF_INET6)
        flags |= MHD_USE_IPv6;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, &s,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
        MHD_OPTION_CONNECTION_TIMEOUT, IDLE_TIMEOUT,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_END);
    int rc = 0;
    if (!d) {
        fprintf(stderr, "%s: serve: cannot start the HTTP server on %s\n", prog, shown);
        close(fd);
        rc = 1;
    } else {
        fprintf(stderr, "%s: serving on http://%s/\n", prog, shown);
        fflush(stderr);
        int sig = 0;
        while (sigwait(&stop, &sig) != 0)
            ;
        MHD_stop_daemon(d); /* also closes the listening socket */
    }
    server_close(&s);
    free(profiles_json.p);
    return rc;
}
