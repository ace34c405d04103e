/* fanjian serve: an HTTP/1.1 service (a JSON API and a web page) over one
 * dictionary and one converter per profile and mode, all opened at start
 * and shared by libmicrohttpd's worker threads (they are immutable).
 *
 *   GET  /              the web page (cli/web/index.html, compiled in)
 *   GET  /healthz       {"ok":true}
 *   GET  /v1/profiles   {"profiles":[...]}
 *   POST /v1/convert    answered by cli/serve_api.c
 *   POST /v1/detect     answered by cli/serve_api.c
 *   POST /v1/file       a file's bytes (application/octet-stream), answered
 *                       by cli/serve_api.c with the converted file
 *   GET  /js/...        the JavaScript package, when there is one
 *                       (cli/serve_js.c): the page converts offline with it
 *
 * This file is the HTTP side: routes, methods, bodies and their limits. A
 * request body is held whole (at most --max-body bytes, a file at most
 * --max-file, and all bodies together at most --max-memory) and handed to
 * fjx_api_answer or fjx_api_file, which free it.
 *
 * What keeps one client from starving the others: a deadline for a
 * request's headers and one for its body that, unlike libmicrohttpd's idle
 * timeout, do not restart with every byte (the watchdog in the main thread
 * shuts down sockets past theirs); a limit of connections per address and
 * one overall, below the descriptor limit. On a loopback address only a
 * loopback Host is answered (DNS rebinding), and POSTs must say they are
 * JSON (a file: application/octet-stream), which a page elsewhere cannot
 * send without a CORS preflight. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "fanjian.h"
#include "convert.h"
#include "dynlib.h"
#include "serve.h"

/* libmicrohttpd, loaded on first use (dynlib.h); fjx_serve_main checks it loads. */
#define MHD(f) (fjx_mhd_api_load(NULL, 0)->f)
#include "serve_api.h"
#include "serve_js.h"

/* The page, generated from cli/web/index.html at build time. */
extern const unsigned char fjx_web_index_html[];
extern const size_t fjx_web_index_html_size;

#define DEFAULT_MAX_BODY (16ull << 20)
#define DEFAULT_MAX_MEMORY (64ull << 20)
#define DEFAULT_HEADER_TIMEOUT 10u
#define DEFAULT_BODY_TIMEOUT 60u
#define DEFAULT_MAX_PER_ADDRESS 32u
/* Per-connection memory for headers and read buffers (libmicrohttpd's pool). */
#define CONNECTION_MEMORY (64u << 10)
/* An idle connection is closed after this many seconds. */
#define IDLE_TIMEOUT 60u
/* How much of an oversized chunked body is read (and dropped) so that the
 * client gets its 413; past this the connection is simply closed. */
#define DISCARD_LIMIT (64ull << 20)
/* libmicrohttpd's own default connection limit, kept as the ceiling. */
#define MAX_CONNECTIONS 1020u
/* Descriptors kept free beside the connections: each worker's epoll and
 * event descriptors, and a few for the process itself. */
#define FDS_PER_THREAD 3u
#define FDS_SPARE 16u
/* How often the watchdog looks for connections past their deadline. */
#define WATCH_INTERVAL_NS 200000000L
/* Seconds a client refused for want of memory is asked to wait. */
#define RETRY_AFTER "5"

static const char prog[] = "fanjian";

enum route { R_NONE, R_INDEX, R_HEALTH, R_PROFILES, R_CONVERT, R_DETECT, R_FILE, R_JS };

/* The routes that take a POST body. */
static int is_post_route(enum route rt)
{
    return rt == R_CONVERT || rt == R_DETECT || rt == R_FILE;
}

/* One open connection as the watchdog sees it. Registered when
 * libmicrohttpd opens the connection and removed, under the lock, when it
 * reports it closed, which it does before closing the socket: so the
 * watchdog only ever shuts down a descriptor that is still this
 * connection's. */
typedef struct watched {
    struct watched *prev, *next;
    int fd;
    double deadline; /* monotonic seconds; 0: none */
    int shut;
} watched;

/* Everything the handlers use. The settings and the answers are read-only
 * once the daemon runs; `held` and `watch` are shared by the threads. */
typedef struct server {
    fj_dict *dict;
    fjx_api *api;
    unsigned long long max_body, max_file, max_memory;
    unsigned header_timeout, body_timeout;
    int check_host;          /* listening on loopback: only loopback Hosts */
    const char *cors_origin; /* --cors, or NULL */
    struct MHD_Response *index, *health, *profiles; /* shared, answered as they are */
    fjx_js js;                                     /* the package, or nothing mapped */
    struct MHD_Response *js_ok[FJX_JS_FILES], *js_same[FJX_JS_FILES]; /* 200, 304 */
    atomic_ullong held;      /* request body bytes reserved, all connections */
    pthread_mutex_t watch_lock;
    watched *watch;          /* open connections, under watch_lock */
} server;

/* Why a body is being read but not kept. */
enum refusal { KEEP, TOO_BIG, OVER_BUDGET };

/* One request while its body arrives. */
typedef struct request {
    enum route route;
    int js_file;              /* R_JS: the file */
    unsigned long long limit; /* --max-body, or --max-file for a file */
    char *body;
    size_t len, cap;
    unsigned long long seen;     /* bytes received, kept or not */
    unsigned long long reserved; /* of the server's --max-memory */
    enum refusal refused;
} request;

/* ---- the memory budget ------------------------------------------------------------- */

/* Reserves n bytes of --max-memory for a body; 0, or -1 when they would
 * pass it. */
static int budget_reserve(server *s, request *q, unsigned long long n)
{
    unsigned long long cur = atomic_load(&s->held);
    do {
        if (n > s->max_memory - cur)
            return -1;
    } while (!atomic_compare_exchange_weak(&s->held, &cur, cur + n));
    q->reserved += n;
    return 0;
}

static void budget_release(server *s, request *q)
{
    if (q->reserved)
        atomic_fetch_sub(&s->held, q->reserved);
    q->reserved = 0;
}

/* Drops a body being collected, and its reservation. */
static void drop_body(server *s, request *q, enum refusal why)
{
    q->refused = why;
    free(q->body);
    q->body = NULL;
    q->len = q->cap = 0;
    budget_release(s, q);
}

/* ---- deadlines --------------------------------------------------------------------- */

static double monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* libmicrohttpd opens or closes a connection. */
static void connection_event(void *cls, struct MHD_Connection *c, void **socket_context,
                             enum MHD_ConnectionNotificationCode code)
{
    server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD(MHD_get_connection_info)(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        watched *w = calloc(1, sizeof *w);
        if (!w || !info) {
            /* Unwatched, it could stall for ever: refused instead. */
            free(w);
            if (info)
                shutdown(info->connect_fd, SHUT_RDWR);
            *socket_context = NULL;
            return;
        }
        w->fd = info->connect_fd;
        w->deadline = monotonic_now() + s->header_timeout;
        pthread_mutex_lock(&s->watch_lock);
        w->next = s->watch;
        if (s->watch)
            s->watch->prev = w;
        s->watch = w;
        pthread_mutex_unlock(&s->watch_lock);
        *socket_context = w;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        watched *w = *socket_context;
        if (!w)
            return;
        pthread_mutex_lock(&s->watch_lock);
        if (w->prev)
            w->prev->next = w->next;
        else
            s->watch = w->next;
        if (w->next)
            w->next->prev = w->prev;
        pthread_mutex_unlock(&s->watch_lock);
        free(w);
        *socket_context = NULL;
    }
}

/* The connection must finish its current stage within `seconds` from now
 * (0: no deadline; the idle timeout still applies). */
static void set_deadline(server *s, struct MHD_Connection *c, unsigned seconds)
{
    const union MHD_ConnectionInfo *info =
        MHD(MHD_get_connection_info)(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    watched *w = info ? info->socket_context : NULL;
    if (!w)
        return;
    double at = seconds ? monotonic_now() + seconds : 0;
    pthread_mutex_lock(&s->watch_lock);
    w->deadline = at;
    pthread_mutex_unlock(&s->watch_lock);
}

/* Shuts down the sockets past their deadline (all of them when `all`);
 * libmicrohttpd then sees them end and closes them. */
static void watchdog_sweep(server *s, int all)
{
    double now = monotonic_now();
    pthread_mutex_lock(&s->watch_lock);
    for (watched *w = s->watch; w; w = w->next) {
        if (!w->shut && (all || (w->deadline > 0 && now > w->deadline))) {
            shutdown(w->fd, SHUT_RDWR);
            w->shut = 1;
        }
    }
    pthread_mutex_unlock(&s->watch_lock);
}

/* ---- responses --------------------------------------------------------------------- */

/* The headers every answer carries. */
static void common_headers(const server *s, struct MHD_Response *r)
{
    MHD(MHD_add_response_header)(r, "X-Content-Type-Options", "nosniff");
    if (s->cors_origin) {
        MHD(MHD_add_response_header)(r, "Access-Control-Allow-Origin", s->cors_origin);
        MHD(MHD_add_response_header)(r, "Vary", "Origin");
    }
}

/* Sends a JSON answer made by serve_api.c, which the response then owns;
 * none (no memory) drops the connection. `header`, when not NULL, is one
 * more header and `value` its value (Allow, Retry-After). */
static enum MHD_Result send_json(const server *s, struct MHD_Connection *c, unsigned status,
                                 char *body, size_t len, const char *header, const char *value)
{
    if (!body)
        return MHD_NO;
    struct MHD_Response *r = MHD(MHD_create_response_from_buffer)(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=utf-8");
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    common_headers(s, r);
    if (header)
        MHD(MHD_add_response_header)(r, header, value);
    enum MHD_Result ret = MHD(MHD_queue_response)(c, status, r);
    MHD(MHD_destroy_response)(r);
    return ret;
}

static enum MHD_Result send_error(const server *s, struct MHD_Connection *c, unsigned status,
                                  const char *header, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static enum MHD_Result send_error(const server *s, struct MHD_Connection *c, unsigned status,
                                  const char *header, const char *value, const char *fmt, ...)
{
    char *body;
    size_t len;
    va_list ap;
    va_start(ap, fmt);
    fjx_api_error(&body, &len, fmt, ap);
    va_end(ap);
    return send_json(s, c, status, body, len, header, value);
}

static enum MHD_Result send_busy(const server *s, struct MHD_Connection *c)
{
    return send_error(s, c, MHD_HTTP_SERVICE_UNAVAILABLE, MHD_HTTP_HEADER_RETRY_AFTER, RETRY_AFTER,
                      "the server holds as many request bodies as its memory allows "
                      "(--max-memory %llu bytes); try again later", s->max_memory);
}

/* A whole POST body has arrived: the API answers it. */
static enum MHD_Result api_call(const server *s, struct MHD_Connection *c, request *q)
{
    char *body = q->body, *out;
    size_t len = q->len, out_len;
    q->body = NULL; /* fjx_api_answer frees it */
    q->len = q->cap = 0;
    unsigned status = fjx_api_answer(s->api, q->route == R_DETECT, body, len, &out, &out_len);
    return send_json(s, c, status, out, out_len, NULL, NULL);
}

/* A query parameter of the request, for fjx_api_file. */
static const char *query_param(void *ctx, const char *key)
{
    return MHD(MHD_lookup_connection_value)(ctx, MHD_GET_ARGUMENT_KIND, key);
}

/* name as Content-Disposition's filename* (RFC 8187: UTF-8, percent-encoded). */
static int put_ext_value(char *out, size_t size, const char *name)
{
    static const char hex[] = "0123456789ABCDEF";
    static const char keep[] = "!#$&+-.^_`|~";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (o + 4 > size)
            return -1;
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr(keep, *p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = 0;
    return 0;
}

/* A whole file has arrived: converted, and sent back as a download named
 * as the command line would name it. */
static enum MHD_Result file_call(const server *s, struct MHD_Connection *c, request *q)
{
    char *body = q->body;
    size_t len = q->len;
    q->body = NULL; /* fjx_api_file frees it */
    q->len = q->cap = 0;
    fjx_file_answer ans;
    unsigned status = fjx_api_file(s->api, query_param, c, body, len, &ans);
    if (status != 200)
        return send_json(s, c, status, ans.body, ans.len, NULL, NULL);
    /* 255 bytes of name, each at most three: room to spare. */
    char ext[800], disposition[1700];
    if (put_ext_value(ext, sizeof ext, ans.name) != 0) {
        fjx_file_answer_free(&ans);
        return send_error(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, NULL,
                          "the converted name is too long");
    }
    /* filename= for clients without filename* (curl -OJ): the name's bytes,
     * UTF-8, with " and \\ as _ (no control characters: checked). */
    char plain[800];
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)ans.name; *p && n < sizeof plain - 1; p++)
        plain[n++] = *p >= 0x20 && *p != 0x7f && *p != '"' && *p != '\\' ? (char)*p : '_';
    plain[n] = 0;
    snprintf(disposition, sizeof disposition, "attachment; filename=\"%s\"; filename*=UTF-8''%s",
             plain, ext);
    char ms[32];
    snprintf(ms, sizeof ms, "%.3f", ans.ms);
    struct MHD_Response *r =
        MHD(MHD_create_response_from_buffer)(ans.len, ans.body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        fjx_file_answer_free(&ans);
        return MHD_NO;
    }
    ans.body = NULL; /* the response's now */
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CONTENT_TYPE, ans.type);
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disposition);
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    /* A converted page opened from here runs nothing. */
    MHD(MHD_add_response_header)(r, "Content-Security-Policy", "default-src 'none'; sandbox");
    MHD(MHD_add_response_header)(r, "X-Fanjian-Format", ans.format);
    if (ans.encoding[0])
        MHD(MHD_add_response_header)(r, "X-Fanjian-Encoding", ans.encoding);
    MHD(MHD_add_response_header)(r, "X-Fanjian-Profile", ans.profile);
    MHD(MHD_add_response_header)(r, "X-Fanjian-Ms", ms);
    common_headers(s, r);
    if (s->cors_origin)
        MHD(MHD_add_response_header)(r, "Access-Control-Expose-Headers",
                                     "Content-Disposition, X-Fanjian-Format, X-Fanjian-Encoding, "
                                     "X-Fanjian-Profile, X-Fanjian-Ms");
    fjx_file_answer_free(&ans);
    enum MHD_Result ret = MHD(MHD_queue_response)(c, MHD_HTTP_OK, r);
    MHD(MHD_destroy_response)(r);
    return ret;
}

/* ---- what a request may ask ---------------------------------------------------------- */

static int is_port(const char *p)
{
    size_t n = strspn(p, "0123456789");
    return n >= 1 && n <= 5 && p[n] == 0;
}

/* Host names a loopback address: localhost or NAME.localhost, 127.x.x.x or
 * [::1], each with an optional :port. A page whose name was made to point
 * here (DNS rebinding) still sends its own name. */
static int loopback_host(const char *host)
{
    char name[256];
    const char *end;
    if (host[0] == '[') {
        end = strchr(host, ']');
        if (!end || (end[1] && !(end[1] == ':' && is_port(end + 2))) ||
            (size_t)(end - host - 1) >= sizeof name)
            return 0;
        memcpy(name, host + 1, (size_t)(end - host - 1));
        name[end - host - 1] = 0;
        struct in6_addr a6;
        return inet_pton(AF_INET6, name, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
    }
    end = strchr(host, ':');
    size_t n = end ? (size_t)(end - host) : strlen(host);
    if (n == 0 || n >= sizeof name || (end && !is_port(end + 1)))
        return 0;
    memcpy(name, host, n);
    name[n] = 0;
    if (name[n - 1] == '.') /* the fully qualified form, localhost. */
        name[--n] = 0;
    static const char suffix[] = ".localhost";
    size_t sl = sizeof suffix - 1;
    if (strcasecmp(name, "localhost") == 0 ||
        (n > sl && strcasecmp(name + n - sl, suffix) == 0))
        return 1;
    struct in_addr a4;
    return inet_pton(AF_INET, name, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

/* Content-Type is `want` (application/json), parameters (; charset=utf-8)
 * allowed. */
static int is_content_type(const char *type, const char *want)
{
    size_t n = strlen(want);
    if (!type)
        return 0;
    type += strspn(type, " \t");
    if (strncasecmp(type, want, n) != 0)
        return 0;
    type += n;
    type += strspn(type, " \t");
    return *type == 0 || *type == ';';
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
    if (strcmp(url, "/v1/file") == 0)
        return R_FILE;
    if (fjx_js_route(url) >= 0)
        return R_JS;
    return R_NONE;
}

/* A CORS preflight: answered only for --cors's origin. */
static enum MHD_Result preflight(const server *s, struct MHD_Connection *c, const char *url,
                                 const char *allow)
{
    const char *origin = MHD(MHD_lookup_connection_value)(c, MHD_HEADER_KIND, "Origin");
    if (!s->cors_origin)
        return send_error(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, MHD_HTTP_HEADER_ALLOW, allow,
                          "%.200s takes %s, not OPTIONS (no --cors)", url, allow);
    if (!origin || strcmp(origin, s->cors_origin) != 0)
        return send_error(s, c, MHD_HTTP_FORBIDDEN, NULL, NULL,
                          "origin %.200s is not allowed (--cors %.200s)", origin ? origin : "(none)",
                          s->cors_origin);
    struct MHD_Response *r = MHD(MHD_create_response_from_buffer)(0, NULL, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    common_headers(s, r);
    MHD(MHD_add_response_header)(r, "Access-Control-Allow-Methods", allow);
    MHD(MHD_add_response_header)(r, "Access-Control-Allow-Headers", "Content-Type");
    MHD(MHD_add_response_header)(r, "Access-Control-Max-Age", "600");
    enum MHD_Result ret = MHD(MHD_queue_response)(c, MHD_HTTP_NO_CONTENT, r);
    MHD(MHD_destroy_response)(r);
    return ret;
}

/* 413, naming the limit passed. */
static enum MHD_Result too_large(const server *s, struct MHD_Connection *c, enum route rt,
                                 unsigned long long limit)
{
    if (rt == R_FILE)
        return send_error(s, c, MHD_HTTP_CONTENT_TOO_LARGE, NULL, NULL,
                          "the file is larger than %llu bytes (--max-file)", limit);
    return send_error(s, c, MHD_HTTP_CONTENT_TOO_LARGE, NULL, NULL,
                      "the body is larger than %llu bytes", limit);
}

static enum MHD_Result first_call(server *s, struct MHD_Connection *c, const char *url,
                                  const char *method, void **req_cls)
{
    /* The headers are in: from now on the body's deadline. */
    set_deadline(s, c, s->body_timeout);
    if (s->check_host) {
        const char *host = MHD(MHD_lookup_connection_value)(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
        if (host && !loopback_host(host))
            return send_error(s, c, MHD_HTTP_FORBIDDEN, NULL, NULL,
                              "Host %.200s is not this server's (it listens on a loopback "
                              "address only)", host);
    }
    enum route rt = route_of(url);
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    int post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    if (rt != R_NONE && strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0)
        return preflight(s, c, url, is_post_route(rt) ? "POST" : "GET, HEAD");
    switch (rt) {
    case R_NONE:
        return send_error(s, c, MHD_HTTP_NOT_FOUND, NULL, NULL, "no such resource: %.200s", url);
    case R_JS:
        if (!s->js_ok[fjx_js_route(url)])
            return send_error(s, c, MHD_HTTP_NOT_FOUND, NULL, NULL,
                              "no such resource: %.200s (this server has no JavaScript "
                              "package: make js, or serve --js DIR)", url);
        /* fall through */
    case R_INDEX:
    case R_HEALTH:
    case R_PROFILES:
        if (!get)
            return send_error(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, MHD_HTTP_HEADER_ALLOW, "GET, HEAD",
                              "%.200s takes GET, not %.32s", url, method);
        break;
    case R_CONVERT:
    case R_DETECT:
    case R_FILE:
        break;
    }
    /* Answered once the request is complete: an answer before that makes
     * libmicrohttpd close the connection. */
    if (get && !is_post_route(rt)) {
        request *q = calloc(1, sizeof *q);
        if (!q)
            return MHD_NO;
        q->route = rt;
        q->js_file = rt == R_JS ? fjx_js_route(url) : -1;
        *req_cls = q;
        return MHD_YES;
    }
    if (!post)
        return send_error(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, MHD_HTTP_HEADER_ALLOW, "POST",
                          "%.200s takes POST, not %.32s", url, method);
    /* A page elsewhere can POST text/plain or a form without asking; JSON
     * or application/octet-stream it cannot. */
    const char *want = rt == R_FILE ? "application/octet-stream" : "application/json";
    const char *type = MHD(MHD_lookup_connection_value)(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!is_content_type(type, want))
        return send_error(s, c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, NULL, NULL,
                          "%.200s takes Content-Type: %s, not %.100s", url, want,
                          type ? type : "none");
    unsigned long long limit = rt == R_FILE ? s->max_file : s->max_body;
    /* A declared length over the limit is refused before any of the body is read. */
    unsigned long long declared = 0;
    const char *cl = MHD(MHD_lookup_connection_value)(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        errno = 0;
        declared = strtoull(cl, &end, 10);
        if (errno || end == cl)
            declared = ULLONG_MAX;
    }
    if (declared > limit)
        return too_large(s, c, rt, limit);
    request *q = calloc(1, sizeof *q);
    if (!q)
        return MHD_NO;
    q->route = rt;
    q->limit = limit;
    if (declared) {
        if (budget_reserve(s, q, declared) != 0) {
            free(q);
            return send_busy(s, c);
        }
        q->body = malloc((size_t)declared);
        q->cap = q->body ? (size_t)declared : 0;
    }
    *req_cls = q;
    return MHD_YES;
}

/* More of a POST body: kept, or counted and dropped. */
static enum MHD_Result body_part(server *s, request *q, const char *data, size_t n)
{
    q->seen += n;
    if (q->refused)
        return q->seen > q->limit + DISCARD_LIMIT ? MHD_NO : MHD_YES;
    /* Counted as it arrives too: a chunked body declares no length. */
    if (q->seen > q->limit) {
        drop_body(s, q, TOO_BIG);
        return MHD_YES;
    }
    if (n > q->cap - q->len) {
        size_t cap = q->cap ? q->cap : 64u << 10;
        while (cap - q->len < n)
            cap *= 2;
        if (cap > q->limit)
            cap = (size_t)q->limit;
        if (cap > q->reserved && budget_reserve(s, q, cap - q->reserved) != 0) {
            drop_body(s, q, OVER_BUDGET);
            return MHD_YES;
        }
        char *p = realloc(q->body, cap);
        if (!p)
            return MHD_NO;
        q->body = p;
        q->cap = cap;
    }
    memcpy(q->body + q->len, data, n);
    q->len += n;
    return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    server *s = cls;
    request *q = *req_cls;
    if (!q)
        return first_call(s, c, url, method, req_cls);
    if (!is_post_route(q->route)) {
        if (*upload_data_size) {
            *upload_data_size = 0; /* a body sent with GET means nothing */
            return MHD_YES;
        }
        set_deadline(s, c, 0);
        if (q->route == R_JS) {
            /* The browser keeps the image: asked again, unchanged is 304. */
            const char *etag = s->js.file[q->js_file].etag;
            const char *seen = MHD(MHD_lookup_connection_value)(c, MHD_HEADER_KIND,
                                                                MHD_HTTP_HEADER_IF_NONE_MATCH);
            if (seen && strcmp(seen, etag) == 0)
                return MHD(MHD_queue_response)(c, MHD_HTTP_NOT_MODIFIED, s->js_same[q->js_file]);
            return MHD(MHD_queue_response)(c, MHD_HTTP_OK, s->js_ok[q->js_file]);
        }
        return MHD(MHD_queue_response)(c, MHD_HTTP_OK,
                                  q->route == R_INDEX    ? s->index
                                  : q->route == R_HEALTH ? s->health
                                                         : s->profiles);
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        return body_part(s, q, upload_data, n);
    }
    /* The whole body is in; the answer is sent under the idle timeout. */
    set_deadline(s, c, 0);
    if (q->refused == TOO_BIG)
        return too_large(s, c, q->route, q->limit);
    if (q->refused == OVER_BUDGET)
        return send_busy(s, c);
    return q->route == R_FILE ? file_call(s, c, q) : api_call(s, c, q);
}

/* A request is over: its memory goes back to the budget, and the next
 * request on the connection has the header deadline. */
static void completed(void *cls, struct MHD_Connection *c, void **req_cls,
                      enum MHD_RequestTerminationCode toe)
{
    server *s = cls;
    (void)toe;
    request *q = *req_cls;
    if (q) {
        free(q->body);
        budget_release(s, q);
        free(q);
        *req_cls = NULL;
    }
    set_deadline(s, c, s->header_timeout);
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
            "                     [--max-file BYTES] [--max-memory BYTES]\n"
            "                     [--header-timeout SECONDS] [--body-timeout SECONDS]\n"
            "                     [--max-per-address N] [--cors ORIGIN] [--threads N]\n"
            "                     [--js DIR]\n"
            "\n"
            "Serves the conversion over HTTP: a web page at /, and a JSON API\n"
            "(POST /v1/convert, POST /v1/detect, POST /v1/file, GET /v1/profiles,\n"
            "GET /healthz). POSTs must be sent with Content-Type: application/json,\n"
            "a file to /v1/file as application/octet-stream (else 415).\n"
            "\n"
            "      --listen HOST:PORT  address to listen on (default 127.0.0.1:8080; port 0\n"
            "                        picks a free port; [::1]:PORT for IPv6, :PORT for\n"
            "                        every interface). On a loopback address only\n"
            "                        requests for a loopback Host (localhost, 127.x.x.x,\n"
            "                        [::1]) are answered, others get 403; any other\n"
            "                        address is open to every host that can reach it,\n"
            "                        without authentication\n"
            "      --dict IMAGE      dictionary image (default: $FANJIAN_DICT, then the\n"
            "                        image next to this program, then %s)\n"
            "      --max-body BYTES  largest request body, with an optional K, M or G\n"
            "                        suffix (default 16M); larger ones get 413\n"
            "      --max-file BYTES  largest file for POST /v1/file (default 16M, at most\n"
            "                        --max-memory); larger ones get 413. An EPUB may\n"
            "                        unpack to 8 times that\n"
            "      --max-memory BYTES  request bodies held at once, all connections\n"
            "                        together (default 64M); a body that would pass it\n"
            "                        gets 503 with Retry-After\n"
            "      --header-timeout SECONDS  time a request's headers may take to arrive\n"
            "                        (default %u); also how long a kept-alive connection\n"
            "                        may wait for its next request\n"
            "      --body-timeout SECONDS  time a request's body may take (default %u);\n"
            "                        neither deadline restarts when a byte arrives\n"
            "      --max-per-address N  open connections from one client address\n"
            "                        (default %u); the overall limit follows the\n"
            "                        descriptor limit (ulimit -n)\n"
            "      --cors ORIGIN     let pages from ORIGIN (e.g. https://example.org) call\n"
            "                        the API: Access-Control-Allow-Origin and preflights\n"
            "                        for that origin only (default: no CORS headers)\n"
            "      --threads N       worker threads (default: one per core)\n"
            "      --js DIR          the JavaScript package (`make js`: build/js/pkg, or\n"
            "                        where npm installed it), served under /js/ so\n"
            "                        that the page can convert in the browser, offline\n"
            "                        (default: js/pkg beside this program, then\n"
            "                        ../share/fanjian/js from it, when there)\n"
            "\n"
            "Prints `fanjian: serving on http://HOST:PORT/` on standard error when ready;\n"
            "SIGINT or SIGTERM stops it, closing every connection.\n",
            fj_dict_default_path(), DEFAULT_HEADER_TIMEOUT, DEFAULT_BODY_TIMEOUT,
            DEFAULT_MAX_PER_ADDRESS);
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
 * shown[] ("127.0.0.1:8080", "[::1]:8080") and says whether it is a
 * loopback one. -1 after reporting. */
static int listen_on(const char *spec, char *shown, size_t shown_size, int *family, int *loopback)
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
    *loopback = 0;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)&ss;
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
    } else if (ss.ss_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)&ss)->sin6_addr;
        *loopback = IN6_IS_ADDR_LOOPBACK(a6) ||
                    (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
    }
    return fd;
}

/* The answers that never change, made once. */
static struct MHD_Response *static_response(const server *s, const void *data, size_t len,
                                            const char *type)
{
    struct MHD_Response *r =
        MHD(MHD_create_response_from_buffer)(len, (void *)(uintptr_t)data, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return NULL;
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    common_headers(s, r);
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return r;
}

static void server_close(server *s)
{
    for (int i = 0; i < FJX_JS_FILES; i++) {
        if (s->js_ok[i])
            MHD(MHD_destroy_response)(s->js_ok[i]);
        if (s->js_same[i])
            MHD(MHD_destroy_response)(s->js_same[i]);
    }
    fjx_js_close(&s->js);
    if (s->index)
        MHD(MHD_destroy_response)(s->index);
    if (s->health)
        MHD(MHD_destroy_response)(s->health);
    if (s->profiles)
        MHD(MHD_destroy_response)(s->profiles);
    fjx_api_close(s->api);
    fj_dict_close(s->dict);
}

/* The package's files as answers: 200 with the bytes, 304 without. 0, or
 * -1 when out of memory. */
static int js_responses(server *s)
{
    for (int i = 0; i < FJX_JS_FILES; i++) {
        const char *etag = s->js.file[i].etag;
        s->js_ok[i] = static_response(s, s->js.file[i].data, s->js.file[i].len, s->js.file[i].type);
        s->js_same[i] = MHD(MHD_create_response_from_buffer)(0, NULL, MHD_RESPMEM_PERSISTENT);
        if (!s->js_ok[i] || !s->js_same[i])
            return -1;
        MHD(MHD_add_response_header)(s->js_ok[i], MHD_HTTP_HEADER_ETAG, etag);
        MHD(MHD_add_response_header)(s->js_same[i], MHD_HTTP_HEADER_ETAG, etag);
        MHD(MHD_add_response_header)(s->js_same[i], MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        common_headers(s, s->js_same[i]);
    }
    return 0;
}

/* Opens the dictionary and the API, maps the JavaScript package, and makes
 * the fixed answers. `profiles_json` receives the /v1/profiles body. 0, or
 * -1 after reporting. */
static int server_open(server *s, const char *dict_path, const char *js_dir, char **profiles_json,
                       size_t *profiles_len)
{
    static const char health[] = "{\"ok\":true}\n";
    fj_error err;
    if (fjx_open_dict(dict_path, &s->dict, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        return -1;
    }
    if (fjx_api_open(s->dict, &s->api) != 0)
        return -1;
    fjx_api_set_file_limit(s->api, s->max_file);
    if (fjx_api_profiles(s->api, profiles_json, profiles_len) != 0) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        return -1;
    }
    s->index = static_response(s, fjx_web_index_html, fjx_web_index_html_size, "text/html; charset=utf-8");
    s->health = static_response(s, health, sizeof health - 1, "application/json; charset=utf-8");
    s->profiles = static_response(s, *profiles_json, *profiles_len, "application/json; charset=utf-8");
    if (!s->index || !s->health || !s->profiles) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        return -1;
    }
    char why[PATH_MAX + 200];
    int found = fjx_js_open(&s->js, js_dir, why, sizeof why);
    if (found < 0) {
        fprintf(stderr, "%s: serve: --js: %s\n", prog, why);
        return -1;
    }
    if (found > 0 && js_responses(s) != 0) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        return -1;
    }
    /* The page needs nothing from elsewhere, and may fetch only from here:
     * the package's modules and its WebAssembly too, for the offline mode. */
    MHD(MHD_add_response_header)(s->index, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline' 'self' "
                            "'wasm-unsafe-eval'; style-src 'unsafe-inline'; connect-src 'self'; "
                            "img-src data:; base-uri 'none'; form-action 'none'; "
                            "frame-ancestors 'none'");
    return 0;
}

/* A whole number from 1 to max for option `name`; 0 after reporting. */
static unsigned parse_count(const char *name, const char *val, unsigned max)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(val, &end, 10);
    if (!*val || *val == '-' || *end || errno || n < 1 || n > max) {
        fprintf(stderr, "%s: serve: %s takes a number from 1 to %u, not %s\n", prog, name, max, val);
        return 0;
    }
    return (unsigned)n;
}

/* Descriptors open now (/proc/self/fd, less the one reading it). */
static unsigned open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return FDS_SPARE;
    unsigned n = 0;
    for (const struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n ? n - 1 : 0;
}

/* Connections the descriptor limit leaves room for, keeping some free so
 * that the server never runs out (a full table stops accept() for all);
 * 0 after reporting when too few. */
static unsigned connection_limit(unsigned threads)
{
    struct rlimit rl;
    unsigned long long nofile = MAX_CONNECTIONS + FDS_SPARE;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        nofile = rl.rlim_cur;
    unsigned long long kept = open_descriptors() + FDS_PER_THREAD * (threads + 1ull) + FDS_SPARE;
    unsigned long long limit = nofile > kept ? nofile - kept : 0;
    if (limit > MAX_CONNECTIONS)
        limit = MAX_CONNECTIONS;
    if (limit < 2ull * threads) {
        fprintf(stderr, "%s: serve: the descriptor limit (%llu) leaves too few connections for "
                        "%u threads; raise ulimit -n or lower --threads\n", prog, nofile, threads);
        return 0;
    }
    return (unsigned)limit;
}

enum option { O_LISTEN, O_DICT, O_MAX_BODY, O_THREADS, O_MAX_MEMORY, O_HEADER_TIMEOUT,
              O_BODY_TIMEOUT, O_MAX_PER_ADDRESS, O_CORS, O_MAX_FILE, O_JS, O_COUNT };

int fjx_serve_main(int argc, char **argv)
{
    const char *listen_spec = "127.0.0.1:8080", *dict_path = NULL, *cors = NULL, *js_dir = NULL;
    unsigned long long max_body = DEFAULT_MAX_BODY, max_memory = DEFAULT_MAX_MEMORY;
    unsigned long long max_file = 0; /* 0: not given */
    unsigned header_timeout = DEFAULT_HEADER_TIMEOUT, body_timeout = DEFAULT_BODY_TIMEOUT;
    unsigned max_per_address = DEFAULT_MAX_PER_ADDRESS;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = ncpu > 0 && ncpu <= 256 ? (unsigned)ncpu : 1;
    static const char *const opts[O_COUNT] = {
        "--listen", "--dict", "--max-body", "--threads", "--max-memory", "--header-timeout",
        "--body-timeout", "--max-per-address", "--cors", "--max-file", "--js"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        int which = -1;
        for (int k = 0; k < O_COUNT && which < 0; k++) {
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
        switch (which) {
        case O_LISTEN:
            listen_spec = val;
            break;
        case O_DICT:
            dict_path = val;
            break;
        case O_JS:
            js_dir = val;
            break;
        case O_MAX_BODY:
        case O_MAX_FILE:
        case O_MAX_MEMORY: {
            unsigned long long v = parse_size(val);
            if (v == 0 || v > SIZE_MAX / 4) {
                fprintf(stderr, "%s: serve: %s takes a positive size (e.g. 1048576 "
                                "or 16M), not %s\n", prog, a, val);
                return 2;
            }
            *(which == O_MAX_BODY ? &max_body : which == O_MAX_FILE ? &max_file : &max_memory) = v;
            break;
        }
        case O_THREADS:
            if (!(threads = parse_count("--threads", val, 256)))
                return 2;
            break;
        case O_HEADER_TIMEOUT:
            if (!(header_timeout = parse_count("--header-timeout", val, 86400)))
                return 2;
            break;
        case O_BODY_TIMEOUT:
            if (!(body_timeout = parse_count("--body-timeout", val, 86400)))
                return 2;
            break;
        case O_MAX_PER_ADDRESS:
            if (!(max_per_address = parse_count("--max-per-address", val, 1000000)))
                return 2;
            break;
        case O_CORS:
            /* Sent back as a header: one line, as a browser writes an origin. */
            if (!*val || strpbrk(val, "\r\n ,") || strcmp(val, "*") == 0) {
                fprintf(stderr, "%s: serve: --cors takes one origin (e.g. "
                                "https://example.org), not %s\n", prog, val);
                return 2;
            }
            cors = val;
            break;
        default:
            if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                usage(stdout);
                return 0;
            }
            fprintf(stderr, "%s: serve: unknown option %s (see fanjian serve --help)\n", prog, a);
            return 2;
        }
    }
    if (max_body > max_memory) {
        fprintf(stderr, "%s: serve: --max-body (%llu) is larger than --max-memory (%llu): "
                        "such a body could never be taken\n", prog, max_body, max_memory);
        return 2;
    }
    if (max_file > max_memory) {
        fprintf(stderr, "%s: serve: --max-file (%llu) is larger than --max-memory (%llu): "
                        "such a file could never be taken\n", prog, max_file, max_memory);
        return 2;
    }
    /* Not given: the default, within --max-memory. */
    if (!max_file)
        max_file = FJX_DEFAULT_MAX_FILE < max_memory ? FJX_DEFAULT_MAX_FILE : max_memory;

    char why[200];
    if (!fjx_mhd_api_load(why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", prog, why);
        return 1;
    }
    server s;
    memset(&s, 0, sizeof s);
    s.max_body = max_body;
    s.max_file = max_file;
    s.max_memory = max_memory;
    s.header_timeout = header_timeout;
    s.body_timeout = body_timeout;
    s.cors_origin = cors;
    atomic_init(&s.held, 0);
    char *profiles_json = NULL;
    size_t profiles_len = 0;
    if (server_open(&s, dict_path, js_dir, &profiles_json, &profiles_len) != 0) {
        server_close(&s);
        free(profiles_json);
        return 1;
    }
    char shown[NI_MAXHOST + NI_MAXSERV + 4];
    int family = AF_INET, loopback = 0;
    int fd = listen_on(listen_spec, shown, sizeof shown, &family, &loopback);
    unsigned max_connections = fd < 0 ? 0 : connection_limit(threads);
    if (fd < 0 || max_connections == 0) {
        if (fd >= 0)
            close(fd);
        server_close(&s);
        free(profiles_json);
        return 1;
    }
    s.check_host = loopback;
    if (!loopback)
        fprintf(stderr,
                "%s: serve: warning: %s is not a loopback address: every host that can reach "
                "it can convert text and use this machine's CPU and memory, with no "
                "authentication, and the Host check against DNS rebinding is off\n",
                prog, shown);
    if (pthread_mutex_init(&s.watch_lock, NULL) != 0) {
        fprintf(stderr, "%s: serve: cannot make a lock\n", prog);
        close(fd);
        server_close(&s);
        free(profiles_json);
        return 1;
    }

    /* The signals that stop us are taken by sigtimedwait below, in this
     * thread only: block them before any worker thread exists, which
     * inherits the mask. An ignored signal is discarded, not queued, and a
     * shell starts background jobs with SIGINT ignored: restore the default
     * first. A client that goes away must not kill the process. */
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
    struct MHD_Daemon *d = MHD(MHD_start_daemon)(
        flags, 0, NULL, NULL, handle, &s,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
        MHD_OPTION_CONNECTION_TIMEOUT, IDLE_TIMEOUT,
        MHD_OPTION_CONNECTION_LIMIT, max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, max_per_address,
        MHD_OPTION_NOTIFY_CONNECTION, connection_event, &s,
        MHD_OPTION_NOTIFY_COMPLETED, completed, &s,
        MHD_OPTION_END);
    int rc = 0;
    if (!d) {
        fprintf(stderr, "%s: serve: cannot start the HTTP server on %s\n", prog, shown);
        close(fd);
        rc = 1;
    } else {
        fprintf(stderr, "%s: serving on http://%s/\n", prog, shown);
        fflush(stderr);
        /* The watchdog, between signals. */
        const struct timespec interval = {0, WATCH_INTERVAL_NS};
        while (sigtimedwait(&stop, NULL, &interval) < 0)
            watchdog_sweep(&s, 0);
        /* Stopping: no connection is waited for, however slowly its client
         * sends. (Not MHD_quiesce_daemon: in 0.9.75 it races a worker at
         * its connection limit to take the listening socket out of the
         * worker's epoll set, and the loser aborts.) */
        watchdog_sweep(&s, 1);
        MHD(MHD_stop_daemon)(d); /* also closes the listening socket */
    }
    pthread_mutex_destroy(&s.watch_lock);
    server_close(&s);
    free(profiles_json);
    return rc;
}
