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

/* {"error": MESSAGE}\n in *out (malloc'd), for the answers HTTP makes
 * itself (404, 405, 413). 0, or -1 (no memory). */
int fjx_api_error(char **out, size_t *out_len, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
