/* fj_inspect's choices as JSON lines, for proofreading: what the CLI's
 * --inspect writes and what the HTTP API returns. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fanjian-formats.h"

/* Characters of context on each side, within the choice's line. */
#define FJF_INSPECT_CONTEXT 8

static const char *context_start(const char *text, const char *at)
{
    const char *p = at;
    for (int n = 0; n < FJF_INSPECT_CONTEXT && p > text && p[-1] != '\n';) {
        p--;
        if (((unsigned char)*p & 0xC0) != 0x80)
            n++;
    }
    while (p < at && ((unsigned char)*p & 0xC0) == 0x80)
        p++;
    return p;
}

static const char *context_end(const char *at, const char *end)
{
    const char *p = at;
    for (int n = 0; n < FJF_INSPECT_CONTEXT && p < end && *p != '\n' && *p != '\r'; n++) {
        p++;
        while (p < end && ((unsigned char)*p & 0xC0) == 0x80)
            p++;
    }
    return p;
}

/* m to two decimals (without libm, which not every user of this library links). */
static double hundredths(double m)
{
    return (double)(long long)(m * 100.0 + (m < 0 ? -0.5 : 0.5)) / 100.0;
}

static json_t *string_n(const char *s, size_t n)
{
    /* Invalid UTF-8 in the context (a byte fj_inspect passed by) is left out. */
    json_t *j = json_stringn(s, n);
    return j ? j : json_string("");
}

char *fjf_choice_json(const fj_choice *ch, const char *text, size_t len, const char *name)
{
    json_t *o = json_object();
    json_t *alts = json_array();
    if (!o || !alts) {
        json_decref(o);
        json_decref(alts);
        return NULL;
    }
    const char *at = text + ch->offset, *after = at + ch->length;
    const char *from = context_start(text, at), *to = context_end(after, text + len);
    if (name)
        json_object_set_new(o, "file", json_string(name));
    json_object_set_new(o, "line", json_integer((json_int_t)ch->line));
    json_object_set_new(o, "column", json_integer((json_int_t)ch->column));
    json_object_set_new(o, "offset", json_integer((json_int_t)ch->offset));
    json_object_set_new(o, "source", string_n(at, ch->length));
    json_object_set_new(o, "chosen", string_n(ch->chosen, ch->chosen_len));
    for (size_t i = 0; i < ch->alternative_count; i++) {
        json_t *a = json_object();
        if (!a)
            break;
        json_object_set_new(a, "form", string_n(ch->alternatives[i].form, ch->alternatives[i].form_len));
        json_object_set_new(a, "margin", json_real(hundredths(ch->alternatives[i].margin)));
        json_array_append_new(alts, a);
    }
    json_object_set_new(o, "alternatives", alts);
    json_object_set_new(o, "before", string_n(from, (size_t)(at - from)));
    json_object_set_new(o, "after", string_n(after, (size_t)(to - after)));
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(o);
    return s;
}
