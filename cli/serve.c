/* fanjian serve: an HTTP/1.1 service (a JSON API and a web page) over one
 * dictionary and one converter per profile and mode, all opened at start
 * and shared by libmicrohttpd's worker threads (they are immutable).
 *
 *   GET  /              the web page (cli/web/index.html, compiled in)
 *   GET  /healthz       {"ok":true}
 *   GET  /v1/profiles   {"profiles":[...]}
 *   POST /v1/convert    answered by cli/serve_api.c
 *   POST /v1/detect     answered by cli/serve_api.c
 *
 * This file is the HTTP side: routes, methods, bodies and their limit. A
 * request body is held whole (at most --max-body bytes) and handed to
 * fjx_api_answer, which frees it once parsed. */
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
#include <unistd.h>

#include <microhttpd.h>

#include "fanjian.h"
#include "convert.h"
#include "dynlib.h"
#include "serve.h"

/* libmicrohttpd, loaded on first use (dynlib.h); fjx_serve_main checks it loads. */
#define MHD(f) (fjx_mhd_api_load(NULL, 0)->f)
#include "serve_api.h"

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
    fjx_api *api;
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

/* ---- responses --------------------------------------------------------------------- */

/* Sends a JSON answer made by serve_api.c, which the response then owns;
 * none (no memory) drops the connection. */
static enum MHD_Result send_json(struct MHD_Connection *c, unsigned status, char *body, size_t len,
                                 const char *allow)
{
    if (!body)
        return MHD_NO;
    struct MHD_Response *r = MHD(MHD_create_response_from_buffer)(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=utf-8");
    MHD(MHD_add_response_header)(r, "X-Content-Type-Options", "nosniff");
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (allow)
        MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result ret = MHD(MHD_queue_response)(c, status, r);
    MHD(MHD_destroy_response)(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *allow,
                                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *allow,
                                  const char *fmt, ...)
{
    char *body;
    size_t len;
    va_list ap;
    va_start(ap, fmt);
    fjx_api_error(&body, &len, fmt, ap);
    va_end(ap);
    return send_json(c, status, body, len, allow);
}

/* A whole POST body has arrived: the API answers it. */
static enum MHD_Result api_call(const server *s, struct MHD_Connection *c, request *q)
{
    char *body = q->body, *out;
    size_t len = q->len, out_len;
    q->body = NULL; /* fjx_api_answer frees it */
    q->len = q->cap = 0;
    unsigned status = fjx_api_answer(s->api, q->route == R_DETECT, body, len, &out, &out_len);
    return send_json(c, status, out, out_len, NULL);
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
    const char *cl = MHD(MHD_lookup_connection_value)(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
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
        return MHD(MHD_queue_response)(c, MHD_HTTP_OK,
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
        MHD(MHD_create_response_from_buffer)(len, (void *)(uintptr_t)data, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return NULL;
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD(MHD_add_response_header)(r, "X-Content-Type-Options", "nosniff");
    MHD(MHD_add_response_header)(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return r;
}

static void server_close(server *s)
{
    if (s->index)
        MHD(MHD_destroy_response)(s->index);
    if (s->health)
        MHD(MHD_destroy_response)(s->health);
    if (s->profiles)
        MHD(MHD_destroy_response)(s->profiles);
    fjx_api_close(s->api);
    fj_dict_close(s->dict);
}

/* Opens the dictionary and the API, and makes the fixed answers.
 * `profiles_json` receives the /v1/profiles body. 0, or -1 after
 * reporting. */
static int server_open(server *s, const char *dict_path, char **profiles_json, size_t *profiles_len)
{
    static const char health[] = "{\"ok\":true}\n";
    fj_error err;
    if (fjx_open_dict(dict_path, &s->dict, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        return -1;
    }
    if (fjx_api_open(s->dict, &s->api) != 0)
        return -1;
    if (fjx_api_profiles(s->api, profiles_json, profiles_len) != 0) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        return -1;
    }
    s->index = static_response(fjx_web_index_html, fjx_web_index_html_size, "text/html; charset=utf-8");
    s->health = static_response(health, sizeof health - 1, "application/json; charset=utf-8");
    s->profiles = static_response(*profiles_json, *profiles_len, "application/json; charset=utf-8");
    if (!s->index || !s->health || !s->profiles) {
        fprintf(stderr, "%s: serve: out of memory\n", prog);
        return -1;
    }
    /* The page needs nothing from elsewhere, and may fetch only from here. */
    MHD(MHD_add_response_header)(s->index, "Content-Security-Policy",
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

    char why[200];
    if (!fjx_mhd_api_load(why, sizeof why)) {
        fprintf(stderr, "%s: %s\n", prog, why);
        return 1;
    }
    server s;
    memset(&s, 0, sizeof s);
    s.max_body = max_body;
    char *profiles_json = NULL;
    size_t profiles_len = 0;
    if (server_open(&s, dict_path, &profiles_json, &profiles_len) != 0) {
        server_close(&s);
        free(profiles_json);
        return 1;
    }
    char shown[NI_MAXHOST + NI_MAXSERV + 4];
    int family = AF_INET;
    int fd = listen_on(listen_spec, shown, sizeof shown, &family);
    if (fd < 0) {
        server_close(&s);
        free(profiles_json);
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
    struct MHD_Daemon *d = MHD(MHD_start_daemon)(
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
        MHD(MHD_stop_daemon)(d); /* also closes the listening socket */
    }
    server_close(&s);
    free(profiles_json);
    return rc;
}
