/* fanjian serve: the JSON API without HTTP, so that it can be fuzzed
 * (fuzz/api.c). cli/serve.c routes requests, collects bodies and sends
 * what this file answers. */
#ifndef FANJIAN_CLI_SERVE_API_H
#define FANJIAN_CLI_SERVE_API_H

#include <stdarg.h>
#include <stddef.h>

#include "fanjian.h"

/* A converter per profile and mode, and the clean rules; immutable once
 * open, so shared by every thread without locks. */
typedef struct fjx_api fjx_api;

/* Opens every converter of `dict` and the default clean rules. The
 * dictionary is borrowed: close it after fjx_api_close. 0, or -1 after
 * reporting on stderr. */
int fjx_api_open(const fj_dict *dict, fjx_api **out);
void fjx_api_close(fjx_api *a);

/* The body of GET /v1/profiles: {"profiles":[...]}. 0, or -1 (no memory). */
int fjx_api_profiles(const fjx_api *a, char **out, size_t *out_len);

/* Answers a whole POST body: /v1/detect when `detect`, else /v1/convert.
 * `body` (malloc'd; NULL when len is 0) is taken and freed once parsed, so
 * that it and the parsed copy never both stay through the conversion.
 * Returns the HTTP status (200, 400, or 500 when out of memory) and sets
 * *out to a malloc'd JSON answer ({"error": "..."} unless 200), or to NULL
 * when even that could not be made. */
unsigned fjx_api_answer(const fjx_api *a, int detect, char *body, size_t len, char **out,
                        size_t *out_len);

/* POST /v1/file: a whole file converted as the command line converts it
 * (libfanjian-formats: fjf_text_* for text, fjf_document_convert for the
 * rest), in UTF-8. `param` gives the request's query parameters by name
 * (NULL when absent): "name" (required; its extension gives the format),
 * "format", "from_encoding", and /v1/convert's "profile" or "to",
 * "compat", "repair", "quotes", "clean", "punct" (booleans true or false).
 * `body` (malloc'd, or NULL when len is 0) is taken and freed. Returns the
 * status: 200 with the converted file in ans->body; 400 for the options,
 * 413 past a format's own limit, 422 for a file that cannot be converted
 * (malformed, not in its encoding), 500 out of memory; each with a JSON
 * {"error"} in ans->body (NULL when even that could not be made). */
typedef const char *(*fjx_param_fn)(void *ctx, const char *key);

typedef struct fjx_file_answer {
    char *body;
    size_t len;
    const char *type; /* Content-Type of body (static) */
    char *name;       /* 200: the file's name converted, as --rename names it */
    char format[16];  /* 200: fjf_format_name */
    char encoding[32]; /* 200: the input's encoding ("" for an EPUB) */
    char profile[40]; /* 200: as /v1/convert answers it */
    double ms;
} fjx_file_answer;

unsigned fjx_api_file(const fjx_api *a, fjx_param_fn param, void *ctx, char *body, size_t len,
                      fjx_file_answer *ans);
void fjx_file_answer_free(fjx_file_answer *ans);

/* The most bytes POST /v1/file takes by default (serve --max-file), and
 * setting it: an EPUB may unpack to 8 times that, all entries together. */
#define FJX_DEFAULT_MAX_FILE (16ull << 20)
void fjx_api_set_file_limit(fjx_api *a, unsigned long long max_file);

/* {"error": MESSAGE}\n in *out (malloc'd), for the answers HTTP makes
 * itself (404, 405, 413). 0, or -1 (no memory). */
int fjx_api_error(char **out, size_t *out_len, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
