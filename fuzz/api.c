/* Fuzz: the server's JSON API (cli/serve_api.c) without HTTP. Input: a
 * route byte (even: /v1/convert, odd: /v1/detect), then the request body.
 * Invariants: the status is 200 or 400 (500 only when out of memory, which
 * the fuzzer never makes); the answer is one JSON object and a line; it
 * has a string "error" exactly when the status is not 200; a request that
 * is not an object, or whose "text" is not a string, gets 400, and detect
 * with a string "text" gets 200; a converted answer has a string "text" and
 * the profile asked for, one of the dictionary's; a detection has a known
 * script, counts that add up and spans inside the text. */
#include <string.h>

#include <jansson.h>

#include "../cli/serve_api.h"
#include "fuzz.h"

/* Opened once for the whole run, as the server opens it at start. */
static fjx_api *api;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (fjx_api_open(fuzz_dict(), &api) != 0)
        exit(2);
    return 0;
}

static int is_profile(const char *name, size_t n)
{
    const fj_dict *d = fuzz_dict();
    for (size_t i = 0; i < fj_dict_profile_count(d); i++) {
        const char *p = fj_dict_profile_name(d, i);
        if (strlen(p) == n && memcmp(p, name, n) == 0)
            return 1;
    }
    return 0;
}

static int is_size(const json_t *j)
{
    return json_is_integer(j) && json_integer_value(j) >= 0;
}

static void check_convert(const json_t *req, const json_t *ans)
{
    const json_t *text = json_object_get(ans, "text");
    const json_t *prof = json_object_get(ans, "profile");
    FUZZ_ASSERT(json_is_string(text));
    FUZZ_ASSERT(json_is_string(prof));
    FUZZ_ASSERT(json_is_number(json_object_get(ans, "ms")));
    FUZZ_ASSERT(json_object_size(ans) == 3);
    FUZZ_ASSERT(is_profile(json_string_value(prof), json_string_length(prof)));
    /* The profile asked for, less OpenCC's ".json". */
    const json_t *asked = json_object_get(req, "profile");
    FUZZ_ASSERT(json_is_string(asked));
    size_t n = json_string_length(asked);
    const char *a = json_string_value(asked);
    if (n > 5 && memcmp(a + n - 5, ".json", 5) == 0)
        n -= 5;
    FUZZ_ASSERT(n == json_string_length(prof) && memcmp(a, json_string_value(prof), n) == 0);
}

static void check_detect(const json_t *req, const json_t *ans)
{
    static const char *const scripts[] = {"none", "simplified", "traditional", "both", "mixed",
                                          "binary"};
    const json_t *script = json_object_get(ans, "script");
    FUZZ_ASSERT(json_is_string(script));
    int known = 0;
    for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++)
        known |= strcmp(json_string_value(script), scripts[i]) == 0;
    FUZZ_ASSERT(known);
    const json_t *conf = json_object_get(ans, "confidence");
    FUZZ_ASSERT(json_is_number(conf));
    FUZZ_ASSERT(json_number_value(conf) >= 0 && json_number_value(conf) <= 1);
    const json_t *han = json_object_get(ans, "han");
    const json_t *simp = json_object_get(ans, "simplified");
    const json_t *trad = json_object_get(ans, "traditional");
    FUZZ_ASSERT(is_size(han) && is_size(simp) && is_size(trad));
    FUZZ_ASSERT(json_integer_value(simp) + json_integer_value(trad) <= json_integer_value(han));
    size_t len = json_string_length(json_object_get(req, "text"));
    const json_t *spans = json_object_get(ans, "spans");
    FUZZ_ASSERT(json_is_array(spans));
    size_t end = 0;
    for (size_t i = 0; i < json_array_size(spans); i++) {
        const json_t *sp = json_array_get(spans, i);
        const json_t *off = json_object_get(sp, "offset");
        const json_t *slen = json_object_get(sp, "length");
        const json_t *ss = json_object_get(sp, "script");
        FUZZ_ASSERT(is_size(off) && is_size(slen) && json_is_string(ss));
        FUZZ_ASSERT(strcmp(json_string_value(ss), "simplified") == 0 ||
                    strcmp(json_string_value(ss), "traditional") == 0);
        size_t o = (size_t)json_integer_value(off), l = (size_t)json_integer_value(slen);
        /* In order, apart, inside the text. */
        FUZZ_ASSERT(l > 0 && o >= end && o <= len && l <= len - o);
        end = o + l;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int detect = data[0] & 1;
    size_t len = size - 1;
    /* The API takes the body and frees it: an exact-size copy, so that
     * ASan sees reads past its end. */
    char *body = malloc(len ? len : 1);
    if (!body)
        return 0;
    memcpy(body, data + 1, len);
    /* What the request is, parsed here as the server parses it. */
    json_error_t jerr;
    json_t *req = json_loadb((const char *)data + 1, len, JSON_ALLOW_NUL, &jerr);

    char *out = NULL;
    size_t out_len = 0;
    unsigned status = fjx_api_answer(api, detect, body, len, &out, &out_len);
    /* Only a failed allocation makes no answer (and the fuzzer's allocator
     * aborts rather than fail). */
    FUZZ_ASSERT(out != NULL);
    FUZZ_ASSERT(status == 200 || status == 400 || status == 500);
    FUZZ_ASSERT(out_len > 0 && out[out_len - 1] == '\n');

    json_t *ans = json_loadb(out, out_len, JSON_ALLOW_NUL, &jerr);
    FUZZ_ASSERT(json_is_object(ans));
    const json_t *error = json_object_get(ans, "error");
    FUZZ_ASSERT((status != 200) == (error != NULL));
    if (error)
        FUZZ_ASSERT(json_is_string(error) && json_string_length(error) > 0 &&
                    json_object_size(ans) == 1);
    if (status == 500) {
        /* "conversion failed: out of memory" and nothing else. */
        const char *nomem = fj_strerror(FJ_ERR_NOMEM), *msg = json_string_value(error);
        size_t n = strlen(nomem), m = json_string_length(error);
        FUZZ_ASSERT(m >= n && memcmp(msg + m - n, nomem, n) == 0);
    }

    const json_t *text = json_is_object(req) ? json_object_get(req, "text") : NULL;
    if (!json_is_string(text))
        FUZZ_ASSERT(status == 400);
    else if (detect)
        FUZZ_ASSERT(status == 200);
    if (status == 200 && detect)
        check_detect(req, ans);
    else if (status == 200)
        check_convert(req, ans);

    json_decref(ans);
    json_decref(req);
    free(out);
    return 0;
}
