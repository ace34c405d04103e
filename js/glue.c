/*
 * fanjian for JavaScript: a few flat entry points over include/fanjian.h, so
 * that the wrapper (js/fanjian.js) passes only numbers and pointers and never
 * lays out a C struct. Built with emcc by js/js.mk.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fanjian.h"
#include "glue.h"

/* The last failure's message, for the wrapper's Error (one thread: wasm). */
static fj_error last_error;

const char *fjjs_last_error(void)
{
    return last_error.message;
}

/* Bytes of the heap in use, for the tests' leak checks. */
size_t fjjs_heap_used(void)
{
    return (size_t)mallinfo().uordblks;
}

void *fjjs_alloc(size_t size)
{
    return malloc(size ? size : 1);
}

void fjjs_release(void *p)
{
    free(p);
}

static void set_error(fj_status st, const fj_error *err)
{
    last_error.code = st;
    if (err && err->message[0])
        memcpy(last_error.message, err->message, sizeof last_error.message);
    else
        strncpy(last_error.message, fj_strerror(st), sizeof last_error.message - 1);
    last_error.message[sizeof last_error.message - 1] = '\0';
}

/* The image's bytes stay in the wasm heap, owned by the wrapper, until
 * fj_dict_close. */
fj_dict *fjjs_dict_open(const void *data, size_t size)
{
    fj_dict *dict = NULL;
    fj_error err = {0};
    fj_status st = fj_dict_open_memory(data, size, NULL, &dict, &err);
    if (st != FJ_OK) {
        set_error(st, &err);
        return NULL;
    }
    return dict;
}

/* The default clean-up rules, opened on first use and kept until
 * fjjs_clean_close: a converter with the clean stage needs them open. */
static fj_clean *clean_rules;

void fjjs_clean_close(void)
{
    fj_clean_close(clean_rules);
    clean_rules = NULL;
}

/* A profile or a target (or neither), as fj_options takes them; quotes an
 * fj_quotes or FJ_QUOTES_PROFILE; clean: the default clean-up rules first;
 * phrases: phrase_count pairs of from, to; protect: terms kept as written. */
fj_converter *fjjs_converter_open(const fj_dict *dict, const char *profile, const char *target,
                                  unsigned flags, int quotes, unsigned punct, int clean,
                                  int markup, const char *const *phrases, size_t phrase_count,
                                  const char *const *protect, size_t protect_count)
{
    fj_error err = {0};
    fj_status st;
    if (clean && !clean_rules && (st = fj_clean_open(dict, NULL, 0, 0, &clean_rules, &err)) != FJ_OK) {
        set_error(st, &err);
        return NULL;
    }
    fj_phrase *pairs = NULL;
    if (phrase_count > 0) {
        pairs = malloc(phrase_count * sizeof *pairs);
        if (!pairs) {
            set_error(FJ_ERR_NOMEM, NULL);
            return NULL;
        }
        for (size_t i = 0; i < phrase_count; i++) {
            pairs[i].from = phrases[2 * i];
            pairs[i].to = phrases[2 * i + 1];
        }
    }
    fj_options o;
    fj_options_init(&o);
    o.profile = profile;
    o.target = target;
    o.flags = flags;
    o.quotes = quotes;
    o.punct = punct;
    o.clean = clean ? clean_rules : NULL;
    o.markup = markup ? FJ_MARKUP_INLINE : 0;
    o.phrases = pairs;
    o.phrase_count = phrase_count;
    o.protect = protect;
    o.protect_count = protect_count;
    fj_converter *conv = NULL;
    st = fj_converter_open_options(dict, &o, &conv, &err);
    free(pairs); /* the strings are copied at open */
    if (st != FJ_OK) {
        set_error(st, &err);
        return NULL;
    }
    return conv;
}

/* The output, released by the caller with fj_free; NULL on failure. */
char *fjjs_convert(const fj_converter *conv, const char *input, size_t len, size_t *out_len)
{
    char *out = NULL;
    fj_status st = fj_convert_alloc(conv, input, len, &out, out_len);
    if (st != FJ_OK) {
        set_error(st, NULL);
        return NULL;
    }
    return out;
}

/* The detection as a JSON object with its spans (fj_detection_json),
 * released with fjjs_release; NULL on failure. */
char *fjjs_detect(const fj_dict *dict, const char *text, size_t len)
{
    fj_detection d;
    memset(&d, 0, sizeof d);
    d.size = sizeof d;
    fj_status st = fj_detect(dict, text, len, &d);
    if (st == FJ_OK && d.span_count > 0) {
        d.span_capacity = d.span_count;
        d.spans = malloc(d.span_count * sizeof *d.spans);
        if (!d.spans) {
            set_error(FJ_ERR_NOMEM, NULL);
            return NULL;
        }
        st = fj_detect(dict, text, len, &d);
    }
    char *json = NULL;
    if (st == FJ_OK) {
        size_t n = fj_detection_json(&d, 1, NULL, 0);
        json = malloc(n + 3);
        if (json) {
            json[0] = '{';
            fj_detection_json(&d, 1, json + 1, n + 1);
            json[n + 1] = '}';
            json[n + 2] = '\0';
        } else {
            st = FJ_ERR_NOMEM;
        }
    }
    free(d.spans);
    if (st != FJ_OK)
        set_error(st, NULL);
    return json;
}

/* UTF-8 as UTF-16 code units into out (room for len units), for a string:
 * JavaScript builds one from UTF-16 with a copy, from UTF-8 with a slower
 * decode. A byte that starts no valid sequence becomes U+FFFD (the output
 * of a string's UTF-8 is valid UTF-8). Returns the number of units. */
size_t fjjs_utf16(const unsigned char *s, size_t len, uint16_t *out)
{
    size_t i = 0, n = 0;
    while (i < len) {
        /* The common cases first: ASCII, and Chinese text's three bytes
         * (no surrogate, not overlong). */
        while (i + 3 <= len) {
            unsigned c = s[i];
            if (c < 0x80) {
                out[n++] = (uint16_t)c;
                i++;
                continue;
            }
            unsigned c1 = s[i + 1], c2 = s[i + 2];
            if ((c & 0xF0) != 0xE0 || ((c1 & 0xC0) ^ 0x80) | ((c2 & 0xC0) ^ 0x80))
                break;
            unsigned u = (c & 0x0F) << 12 | (c1 & 0x3F) << 6 | (c2 & 0x3F);
            if (u < 0x800 || u - 0xD800 < 0x800)
                break;
            out[n++] = (uint16_t)u;
            i += 3;
        }
        if (i >= len)
            break;
        unsigned c = s[i];
        if (c < 0x80) {
            out[n++] = (uint16_t)c;
            i++;
            continue;
        }
        size_t k = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC2 ? 1 : 0;
        uint32_t cp = k == 3 ? c & 0x07 : k == 2 ? c & 0x0F : c & 0x1F;
        size_t j = 1;
        for (; k && j <= k && i + j < len && (s[i + j] & 0xC0) == 0x80; j++)
            cp = cp << 6 | (s[i + j] & 0x3F);
        if (k == 0 || j <= k || c > 0xF4 || (k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000))) ||
            (k == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
            /* not a whole, shortest, valid sequence: one U+FFFD for its start */
            out[n++] = 0xFFFD;
            i++;
            continue;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            out[n++] = (uint16_t)(0xD800 | cp >> 10);
            out[n++] = (uint16_t)(0xDC00 | (cp & 0x3FF));
        } else {
            out[n++] = (uint16_t)cp;
        }
        i += k + 1;
    }
    return n;
}
