/* fanjian formats: Legado (阅读) replacement rules as removals (fanjian-formats.h).
 *
 * A Legado rule file is JSON: an array of rule objects (or one object)
 * with pattern, replacement, isRegex, isEnabled, scope, scopeTitle,
 * scopeContent, excludeScope, timeoutMillisecond and order. The rules that
 * remove text (no replacement) and apply to a book's content are used;
 * their regular expressions, written for Java, are compiled by PCRE2 after
 * the few Java spellings PCRE2 reads otherwise are rewritten. Every match
 * runs under PCRE2's match, depth and heap limits, and every rule under
 * its own time budget for the whole run: a rule that passes one is not
 * used again, and the line it was working on keeps its text. */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <ctype.h>
#include <jansson.h>
#include <limits.h>
#include <pcre2.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dynload.h"
#include "fanjian-formats.h"

/* What may change while threads share the rules. */
typedef struct rule_state {
    atomic_int disabled;     /* passed a bound: not used again */
    atomic_llong spent_ns;   /* time spent matching, over the whole run */
} rule_state;

typedef struct legado_rule {
    char *label;             /* `FILE: rule N "NAME"`, safe to print */
    char *literal;           /* isRegex false: the text to remove */
    size_t literal_len;
    pcre2_code *code;        /* isRegex true */
    char **scope, **exclude; /* book names; NULL-terminated, NULL when none */
    long long budget_ns;
    long long order;
    size_t index;            /* in its file, for a stable sort */
    rule_state *state;
} legado_rule;

struct fjf_legado {
    legado_rule *rules;
    size_t count, cap;
    pcre2_code *blank;       /* a line of only white space and punctuation */
};

int fjf_legado_detect(const char *text, size_t len)
{
    size_t i = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
        i++;
    return i < len && (text[i] == '[' || text[i] == '{');
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- reading rules ---------------------------------------------------------------- */

static void free_names(char **names)
{
    for (size_t i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
}

static void free_rule(legado_rule *r)
{
    free(r->label);
    free(r->literal);
    PCRE2(pcre2_code_free)(r->code);
    free_names(r->scope);
    free_names(r->exclude);
    free(r->state);
}

void fjf_legado_free(fjf_legado *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->count; i++)
        free_rule(&set->rules[i]);
    free(set->rules);
    PCRE2(pcre2_code_free)(set->blank);
    free(set);
}

/* Splits a scope ("书名;书源 URL,另一本") at ; , ； ， into trimmed names;
 * NULL when it names none (or no memory: *nomem). */
static char **split_names(const char *s, size_t len, int *nomem)
{
    size_t cap = 4, n = 0;
    char **names = malloc(cap * sizeof *names);
    if (!names) {
        *nomem = 1;
        return NULL;
    }
    size_t i = 0;
    while (i <= len) {
        size_t start = i;
        size_t sep_len = 0;
        while (i < len) {
            if (s[i] == ';' || s[i] == ',') {
                sep_len = 1;
                break;
            }
            if (len - i >= 3 && (memcmp(s + i, "\xEF\xBC\x9B", 3) == 0 ||   /* ； */
                                 memcmp(s + i, "\xEF\xBC\x8C", 3) == 0)) { /* ， */
                sep_len = 3;
                break;
            }
            i++;
        }
        size_t end = i;
        while (start < end && isspace((unsigned char)s[start]))
            start++;
        while (end > start && isspace((unsigned char)s[end - 1]))
            end--;
        if (end > start) {
            if (n + 2 > cap) {
                char **grown = realloc(names, (cap *= 2) * sizeof *names);
                if (!grown) {
                    names[n] = NULL;
                    free_names(names);
                    *nomem = 1;
                    return NULL;
                }
                names = grown;
            }
            if (!(names[n] = strndup(s + start, end - start))) {
                free_names(names);
                *nomem = 1;
                return NULL;
            }
            n++;
        }
        i += sep_len ? sep_len : 1;
    }
    if (n == 0) {
        free(names);
        return NULL;
    }
    names[n] = NULL;
    return names;
}

/* Java's POSIX-named classes (ASCII, as Java has them by default). */
static const char *java_posix_class(const char *name, size_t len)
{
    static const struct {
        const char *name, *body;
    } classes[] = {
        {"Lower", "a-z"},        {"Upper", "A-Z"},      {"ASCII", "\\x00-\\x7F"},
        {"Alpha", "a-zA-Z"},     {"Digit", "0-9"},      {"Alnum", "a-zA-Z0-9"},
        {"Punct", "!-/:-@\\[-`{-~"}, {"Graph", "!-~"},   {"Print", " -~"},
        {"Blank", " \\t"},       {"Cntrl", "\\x00-\\x1F\\x7F"}, {"XDigit", "0-9a-fA-F"},
        {"Space", " \\t\\n\\x0B\\f\\r"},
    };
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strlen(classes[i].name) == len && memcmp(classes[i].name, name, len) == 0)
            return classes[i].body;
    return NULL;
}

static int hex4(const char *s, size_t avail, unsigned *out)
{
    if (avail < 4)
        return 0;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int c = (unsigned char)s[k];
        if (!isxdigit(c))
            return 0;
        v = v * 16 + (unsigned)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
    }
    *out = v;
    return 1;
}

/* Rewrites a Java regular expression for PCRE2: \uXXXX (and surrogate
 * pairs) as \x{...}; \p{IsX} as \p{X}; Java's ASCII POSIX classes
 * (\p{Punct} ...) as ranges; Java's flags u, U and d, which PCRE2 lacks or
 * reads otherwise ((?U) is ungreedy there), dropped. Class intersection
 * (&&) and nested classes mean something else in PCRE2: refused (*why). */
static int java_to_pcre(const char *in, size_t len, fjf_buf *out, const char **why)
{
    int in_class = 0, ok = 1;
    size_t i = 0;
#define EMIT(p, n) (ok = ok && fjf_buf_append(out, (p), (n)) == 0)
    while (i < len && ok) {
        char c = in[i];
        if (c == '\\' && i + 1 < len) {
            char d = in[i + 1];
            unsigned cp, low;
            if (d == 'Q') {
                const char *e = NULL;
                for (size_t k = i + 2; k + 1 < len && !e; k++)
                    if (in[k] == '\\' && in[k + 1] == 'E')
                        e = in + k;
                size_t n = e ? (size_t)(e - in) + 2 - i : len - i;
                EMIT(in + i, n);
                i += n;
            } else if (d == 'u' && hex4(in + i + 2, len - i - 2, &cp)) {
                i += 6;
                if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < len && in[i] == '\\' &&
                    in[i + 1] == 'u' && hex4(in + i + 2, len - i - 2, &low) && low >= 0xDC00 &&
                    low < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    i += 6;
                }
                char x[16];
                int n = snprintf(x, sizeof x, "\\x{%X}", cp);
                EMIT(x, (size_t)n);
            } else if ((d == 'p' || d == 'P') && i + 2 < len && in[i + 2] == '{') {
                const char *close = memchr(in + i + 3, '}', len - i - 3);
                if (!close) {
                    EMIT(in + i, len - i);
                    i = len;
                    continue;
                }
                const char *name = in + i + 3;
                size_t name_len = (size_t)(close - name), whole = (size_t)(close - in) + 1 - i;
                const char *posix = java_posix_class(name, name_len);
                if (name_len > 2 && name[0] == 'I' && name[1] == 's') {
                    EMIT(in + i, 3);
                    EMIT(name + 2, name_len - 2 + 1);
                } else if (posix && d == 'p') {
                    if (!in_class)
                        EMIT("[", 1);
                    EMIT(posix, strlen(posix));
                    if (!in_class)
                        EMIT("]", 1);
                } else if (posix && !in_class) {
                    EMIT("[^", 2);
                    EMIT(posix, strlen(posix));
                    EMIT("]", 1);
                } else {
                    EMIT(in + i, whole);
                }
                i += whole;
            } else {
                EMIT(in + i, 2);
                i += 2;
            }
            continue;
        }
        if (in_class) {
            if (c == '[') {
                *why = "a character class inside a class ([a[b]]) is Java's union, which PCRE2 "
                       "reads otherwise";
                return -1;
            }
            if (c == '&' && i + 1 < len && in[i + 1] == '&') {
                *why = "class intersection (&&) is Java's, not PCRE2's";
                return -1;
            }
            if (c == ']')
                in_class = 0;
            EMIT(&c, 1);
            i++;
            continue;
        }
        if (c == '[') {
            in_class = 1;
            size_t n = 1;
            if (i + n < len && in[i + n] == '^')
                n++;
            if (i + n < len && in[i + n] == ']') /* a ']' first is literal */
                n++;
            EMIT(in + i, n);
            i += n;
            continue;
        }
        if (c == '(' && i + 2 < len && in[i + 1] == '?') {
            size_t j = i + 2;
            while (j < len && strchr("idmsuxU-", in[j]) && in[j])
                j++;
            if (j > i + 2 && j < len && (in[j] == ')' || in[j] == ':')) {
                char flags[64];
                size_t n = 0;
                for (size_t k = i + 2; k < j && n < sizeof flags - 1; k++)
                    if (in[k] != 'u' && in[k] != 'U' && in[k] != 'd')
                        flags[n++] = in[k];
                while (n > 0 && flags[n - 1] == '-')
                    n--;
                if (n > 0 || in[j] == ':') {
                    EMIT("(?", 2);
                    EMIT(flags, n);
                    EMIT(in + j, 1);
                }
                i = j + 1;
                continue;
            }
        }
        EMIT(&c, 1);
        i++;
    }
#undef EMIT
    if (!ok) {
        *why = "out of memory";
        return -1;
    }
    return 0;
}

/* A field: 1 present (value in *out), 0 absent or null, -1 of the wrong type. */
static int field_bool(const json_t *o, const char *key, int *out)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return -1;
    *out = json_is_true(v);
    return 1;
}

static int field_string(const json_t *o, const char *key, const char **s, size_t *len)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    *s = json_string_value(v);
    *len = json_string_length(v);
    return 1;
}

static int field_int(const json_t *o, const char *key, long long *out)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v)) {
        *out = (long long)json_integer_value(v);
        return 1;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d > -9e15 && d < 9e15) {
            *out = (long long)d;
            return 1;
        }
    }
    return -1;
}

typedef struct skip_counts {
    size_t replacement, disabled, title_only, invalid, used, scoped;
} skip_counts;

static char *rule_label(const char *shown, size_t index, const json_t *o)
{
    const char *name = NULL;
    size_t name_len = 0;
    char buf[128];
    if (field_string(o, "name", &name, &name_len) == 1 && name_len > 0 && !memchr(name, 0, name_len)) {
        /* Long names are cut: the message must stay a line. */
        char cut[96];
        snprintf(cut, sizeof cut, "%s", name);
        char shown_name[FJF_DISPLAY_MAX];
        fjf_display_name(cut, shown_name, sizeof shown_name);
        size_t n = strlen(shown) + strlen(shown_name) + 48;
        char *label = malloc(n);
        if (label)
            snprintf(label, n, "%s: rule %zu \"%s\"", shown, index + 1, shown_name);
        return label;
    }
    snprintf(buf, sizeof buf, ": rule %zu", index + 1);
    size_t n = strlen(shown) + strlen(buf) + 1;
    char *label = malloc(n);
    if (label)
        snprintf(label, n, "%s%s", shown, buf);
    return label;
}

/* A pattern ending in an unescaped '|' matches everywhere; Legado refuses it too. */
static int ends_in_bar(const char *p, size_t len)
{
    if (len == 0 || p[len - 1] != '|')
        return 0;
    size_t slashes = 0;
    while (slashes + 1 < len && p[len - 2 - slashes] == '\\')
        slashes++;
    return slashes % 2 == 0;
}

/* Reads one rule object into *r; 1 used, 0 skipped (counted, and reported
 * when invalid), -1 no memory. */
static int read_rule(const json_t *o, size_t index, const char *shown, legado_rule *r,
                     skip_counts *counts)
{
    memset(r, 0, sizeof *r);
    r->index = index;
    if (!(r->label = rule_label(shown, index, o)))
        return -1;
    if (!json_is_object(o)) {
        fprintf(stderr, "fanjian: %s: not a rule object; skipped\n", r->label);
        counts->invalid++;
        return 0;
    }
    const char *pattern = NULL, *replacement = NULL, *scope = NULL, *exclude = NULL;
    size_t pattern_len = 0, replacement_len = 0, scope_len = 0, exclude_len = 0;
    int is_regex = 1, enabled = 1, scope_content = 1, scope_title = 0;
    long long timeout = 0, order = LLONG_MIN;
    const char *bad = NULL;
    if (field_string(o, "pattern", &pattern, &pattern_len) != 1)
        bad = "pattern";
    else if (field_string(o, "replacement", &replacement, &replacement_len) < 0)
        bad = "replacement";
    else if (field_bool(o, "isRegex", &is_regex) < 0)
        bad = "isRegex";
    else if (field_bool(o, "isEnabled", &enabled) < 0)
        bad = "isEnabled";
    else if (field_bool(o, "scopeContent", &scope_content) < 0)
        bad = "scopeContent";
    else if (field_bool(o, "scopeTitle", &scope_title) < 0)
        bad = "scopeTitle";
    else if (field_string(o, "scope", &scope, &scope_len) < 0)
        bad = "scope";
    else if (field_string(o, "excludeScope", &exclude, &exclude_len) < 0)
        bad = "excludeScope";
    else if (field_int(o, "timeoutMillisecond", &timeout) < 0)
        bad = "timeoutMillisecond";
    else if (field_int(o, "order", &order) < 0 ||
             (order == LLONG_MIN && field_int(o, "sortOrder", &order) < 0))
        bad = "order";
    if (bad) {
        fprintf(stderr, "fanjian: %s: %s is %s; skipped\n", r->label, bad,
                strcmp(bad, "pattern") == 0 ? "missing or not a string"
                                            : "not of the type Legado gives it");
        counts->invalid++;
        return 0;
    }
    r->order = order;
    if (replacement_len > 0) {
        counts->replacement++;
        return 0;
    }
    if (!enabled) {
        counts->disabled++;
        return 0;
    }
    if (!scope_content) {
        counts->title_only++;
        return 0;
    }
    if (pattern_len == 0 || pattern_len > FJF_LEGADO_MAX_PATTERN) {
        fprintf(stderr, "fanjian: %s: the pattern is %s; skipped\n", r->label,
                pattern_len ? "longer than 4096 bytes" : "empty");
        counts->invalid++;
        return 0;
    }
    if (is_regex && ends_in_bar(pattern, pattern_len)) {
        fprintf(stderr, "fanjian: %s: the pattern ends in '|', which matches everywhere; "
                        "skipped\n", r->label);
        counts->invalid++;
        return 0;
    }
    int nomem = 0;
    if (scope)
        r->scope = split_names(scope, scope_len, &nomem);
    if (exclude && !nomem)
        r->exclude = split_names(exclude, exclude_len, &nomem);
    if (nomem)
        return -1;
    if (timeout <= 0)
        timeout = FJF_LEGADO_DEFAULT_TIMEOUT;
    if (timeout > 86400000LL)
        timeout = 86400000LL;
    r->budget_ns = timeout * 1000000LL;
    if (!is_regex) {
        if (!(r->literal = malloc(pattern_len)))
            return -1;
        memcpy(r->literal, pattern, pattern_len);
        r->literal_len = pattern_len;
    } else {
        fjf_buf translated = {0};
        const char *why = NULL;
        if (java_to_pcre(pattern, pattern_len, &translated, &why) != 0) {
            fjf_buf_free(&translated);
            if (strcmp(why, "out of memory") == 0)
                return -1;
            fprintf(stderr, "fanjian: %s: not compiled: %s; skipped\n", r->label, why);
            counts->invalid++;
            return 0;
        }
        int changed = translated.len != pattern_len || memcmp(translated.data, pattern, pattern_len);
        int code_err;
        PCRE2_SIZE offset;
        r->code = PCRE2(pcre2_compile)((PCRE2_SPTR)(translated.data ? translated.data : ""),
                                translated.len,
                                PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code_err,
                                &offset, NULL);
        if (!r->code) {
            PCRE2_UCHAR message[256];
            PCRE2(pcre2_get_error_message)(code_err, message, sizeof message);
            fprintf(stderr, "fanjian: %s: not compiled: %s at byte %zu of the pattern%s; skipped\n",
                    r->label, (const char *)message, (size_t)offset,
                    changed ? " as rewritten for PCRE2" : "");
            fjf_buf_free(&translated);
            counts->invalid++;
            return 0;
        }
        fjf_buf_free(&translated);
        /* JIT where the platform has it; the match limit binds it too. */
        (void)PCRE2(pcre2_jit_compile)(r->code, PCRE2_JIT_COMPLETE);
    }
    if (!(r->state = calloc(1, sizeof *r->state)))
        return -1;
    counts->used++;
    counts->scoped += r->scope != NULL;
    return 1;
}

static int by_order(const void *a, const void *b)
{
    const legado_rule *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int fjf_legado_add(fjf_legado **setp, const char *text, size_t len, const char *shown)
{
    char unloaded[200];
    if (!fjf_pcre2_api_load(unloaded, sizeof unloaded)) {
        fprintf(stderr, "fanjian: %s: %s\n", shown, unloaded);
        return -1;
    }
    if (len > FJF_LEGADO_MAX_FILE) {
        fprintf(stderr, "fanjian: %s: a Legado rules file of more than 16 MiB is refused\n",
                shown);
        return -1;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_ALLOW_NUL, &jerr);
    if (!root) {
        /* jansson may quote the file's bytes: shown safely. */
        char why[FJF_DISPLAY_MAX];
        fprintf(stderr, "fanjian: %s: not valid Legado rules (JSON): %s at line %d, column %d\n",
                shown, fjf_display_name(jerr.text, why, sizeof why), jerr.line, jerr.column);
        return -1;
    }
    size_t n = json_is_array(root) ? json_array_size(root) : 1;
    if (!json_is_array(root) && !json_is_object(root)) {
        fprintf(stderr, "fanjian: %s: Legado rules are an array of objects or one object\n",
                shown);
        json_decref(root);
        return -1;
    }
    if (n > FJF_LEGADO_MAX_RULES) {
        fprintf(stderr, "fanjian: %s: more than %d Legado rules in one file are refused\n",
                shown, FJF_LEGADO_MAX_RULES);
        json_decref(root);
        return -1;
    }
    fjf_legado *set = *setp;
    if (!set) {
        int code_err;
        PCRE2_SIZE offset;
        if (!(set = calloc(1, sizeof *set)) ||
            !(set->blank = PCRE2(pcre2_compile)((PCRE2_SPTR) "\\A[\\p{P}\\p{Z}\\s\\p{Cf}]*\\z",
                                         PCRE2_ZERO_TERMINATED,
                                         PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF,
                                         &code_err, &offset, NULL))) {
            free(set);
            fprintf(stderr, "fanjian: out of memory\n");
            json_decref(root);
            return -1;
        }
        *setp = set;
    }
    if (set->count + n > set->cap) {
        size_t cap = set->count + n + 8;
        legado_rule *grown = realloc(set->rules, cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "fanjian: out of memory\n");
            json_decref(root);
            return -1;
        }
        set->rules = grown;
        set->cap = cap;
    }
    skip_counts counts = {0};
    size_t first = set->count;
    for (size_t i = 0; i < n; i++) {
        const json_t *o = json_is_array(root) ? json_array_get(root, i) : root;
        legado_rule r;
        int got = read_rule(o, i, shown, &r, &counts);
        if (got == 1) {
            set->rules[set->count++] = r;
            continue;
        }
        free_rule(&r);
        if (got < 0) {
            fprintf(stderr, "fanjian: out of memory\n");
            json_decref(root);
            return -1;
        }
    }
    json_decref(root);
    /* Legado applies a book's rules by their order; ties keep the file's. */
    qsort(set->rules + first, set->count - first, sizeof *set->rules, by_order);
    size_t skipped = counts.replacement + counts.disabled + counts.title_only + counts.invalid;
    if (skipped || counts.scoped) {
        char why[256] = "";
        size_t w = 0;
        const struct {
            size_t n;
            const char *one, *many;
        } parts[] = {
            {counts.replacement, "replacement (not a removal)", "replacements (not removals)"},
            {counts.disabled, "disabled", "disabled"},
            {counts.title_only, "for titles only", "for titles only"},
            {counts.invalid, "invalid", "invalid"},
        };
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
            if (parts[k].n && w < sizeof why)
                w += (size_t)snprintf(why + w, sizeof why - w, "%s%zu %s", w ? ", " : "",
                                      parts[k].n, parts[k].n == 1 ? parts[k].one : parts[k].many);
        fprintf(stderr, "fanjian: %s: Legado rules: %zu removals used", shown, counts.used);
        if (counts.scoped)
            fprintf(stderr, " (%zu only for the books their scope names)", counts.scoped);
        if (skipped)
            fprintf(stderr, ", %zu skipped: %s", skipped, why);
        fputc('\n', stderr);
    }
    return 0;
}

/* ---- applying rules --------------------------------------------------------------- */

typedef struct span {
    size_t start, end;
} span;

/* A removal waiting for its line's verdict (reported only if the line stays). */
typedef struct pending_report {
    unsigned long long column;
    size_t text_at, len; /* in the stage's report_text */
} pending_report;

struct fjf_legado_stage {
    const fjf_legado *set;
    const char *input;
    int report;
    int quiet_summary;     /* a document's span: its caller sums up */
    fj_write_fn next;
    void *next_ctx;
    unsigned char *active; /* per rule: this input is in its scope */
    size_t active_count;
    pcre2_match_data *match;
    pcre2_match_context *limits;
    fjf_buf line;          /* the line being collected, without its line ending */
    int passing;           /* the line is too long: passed on as it comes */
    unsigned long long line_no; /* of the line being collected, from 1 */
    unsigned long long passed;  /* lines passed on */
    unsigned long long removed, whole, long_lines;
    unsigned long long *dropped; /* input line numbers of the lines dropped, in order */
    size_t dropped_count, dropped_cap;
    /* Work: the line as the rules have left it so far, with, for each of
     * its bytes, where it was in the line as read. */
    char *cur, *alt;
    uint32_t *origin, *alt_origin;
    size_t work_cap;
    span *spans;
    size_t span_count, span_cap;
    pending_report *reports;
    size_t report_count, report_cap;
    fjf_buf report_text;
};

static int name_listed(char *const *names, const char *book)
{
    if (!names || !book)
        return 0;
    const char *dot = strrchr(book, '.');
    size_t stem = dot && dot != book ? (size_t)(dot - book) : strlen(book);
    for (size_t i = 0; names[i]; i++)
        if (strcmp(names[i], book) == 0 ||
            (strlen(names[i]) == stem && memcmp(names[i], book, stem) == 0))
            return 1;
    return 0;
}

int fjf_legado_stage_new(const fjf_legado *set, const char *input, const char *book, int report,
                         fj_write_fn next, void *next_ctx, fjf_legado_stage **out)
{
    fjf_legado_stage *st = calloc(1, sizeof *st);
    if (!st || !(st->active = calloc(set->count ? set->count : 1, 1)) ||
        !(st->match = PCRE2(pcre2_match_data_create)(1, NULL)) ||
        !(st->limits = PCRE2(pcre2_match_context_create)(NULL))) {
        fjf_legado_stage_free(st);
        fprintf(stderr, "fanjian: out of memory\n");
        return -1;
    }
    PCRE2(pcre2_set_match_limit)(st->limits, FJF_LEGADO_MATCH_LIMIT);
    PCRE2(pcre2_set_depth_limit)(st->limits, FJF_LEGADO_DEPTH_LIMIT);
    PCRE2(pcre2_set_heap_limit)(st->limits, FJF_LEGADO_HEAP_LIMIT);
    st->set = set;
    st->input = input;
    st->report = report;
    st->next = next;
    st->next_ctx = next_ctx;
    st->line_no = 1;
    for (size_t i = 0; i < set->count; i++) {
        const legado_rule *r = &set->rules[i];
        st->active[i] = (!r->scope || name_listed(r->scope, book)) && !name_listed(r->exclude, book);
        st->active_count += st->active[i];
    }
    *out = st;
    return 0;
}

void fjf_legado_stage_free(fjf_legado_stage *st)
{
    if (!st)
        return;
    free(st->active);
    PCRE2(pcre2_match_data_free)(st->match);
    PCRE2(pcre2_match_context_free)(st->limits);
    fjf_buf_free(&st->line);
    free(st->dropped);
    free(st->cur);
    free(st->alt);
    free(st->origin);
    free(st->alt_origin);
    free(st->spans);
    free(st->reports);
    fjf_buf_free(&st->report_text);
    free(st);
}

unsigned long long fjf_legado_stage_line(const fjf_legado_stage *st, unsigned long long passed)
{
    /* The passed-th line passed on is the input's line passed + k, k the
     * number of lines dropped before it: those i with dropped[i] - i <=
     * passed, a prefix of the list (dropped[i] - i never decreases). */
    size_t lo = 0, hi = st->dropped_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->dropped[mid] - mid <= passed)
            lo = mid + 1;
        else
            hi = mid;
    }
    return passed + lo;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap ? *cap : 16;
    while (cap2 < need)
        cap2 *= 2;
    void *q = realloc(*p, cap2 * size);
    if (!q)
        return -1;
    *p = q;
    *cap = cap2;
    return 0;
}

static int add_span(fjf_legado_stage *st, size_t start, size_t end)
{
    if (grow((void **)&st->spans, &st->span_cap, st->span_count + 1, sizeof *st->spans) != 0)
        return -1;
    st->spans[st->span_count++] = (span){start, end};
    return 0;
}

/* Disables rule `r` for the rest of the run, saying why once. */
static void disable(const fjf_legado_stage *st, const legado_rule *r, const char *bound)
{
    if (atomic_exchange(&r->state->disabled, 1) == 0)
        fprintf(stderr, "fanjian: %s: skipped from here on: it passed %s at %s line %llu, "
                        "which keeps the text this rule would have removed\n",
                r->label, bound, st->input, st->line_no);
}

/* The first occurrence of needle[0..n) in hay[0..len), or NULL. */
static const char *find_bytes(const char *hay, size_t len, const char *needle, size_t n)
{
    const char *p = hay, *end = hay + len;
    while ((size_t)(end - p) >= n && (p = memchr(p, needle[0], (size_t)(end - p) - n + 1)) != NULL) {
        if (memcmp(p, needle, n) == 0)
            return p;
        p++;
    }
    return NULL;
}

/* The spans of `r` in cur[0..len), into st->spans. 0; 1 the rule passed a
 * bound (disabled, no spans); -1 no memory. */
static int find_spans(fjf_legado_stage *st, const legado_rule *r, const char *cur, size_t len)
{
    st->span_count = 0;
    if (r->literal) {
        size_t at = 0;
        while (at + r->literal_len <= len) {
            const char *hit = find_bytes(cur + at, len - at, r->literal, r->literal_len);
            if (!hit)
                break;
            size_t start = (size_t)(hit - cur);
            if (add_span(st, start, start + r->literal_len) != 0)
                return -1;
            at = start + r->literal_len;
        }
        return 0;
    }
    size_t at = 0;
    while (at <= len) {
        long long t0 = now_ns();
        /* NOTEMPTY: an empty match would remove nothing. */
        int rc = PCRE2(pcre2_match)(r->code, (PCRE2_SPTR)cur, len, at, PCRE2_NOTEMPTY, st->match,
                             st->limits);
        long long dt = now_ns() - t0;
        long long spent = atomic_fetch_add(&r->state->spent_ns, dt) + dt;
        char bound[160];
        if (spent > r->budget_ns) {
            snprintf(bound, sizeof bound, "its time budget (%lld ms for the run)",
                     r->budget_ns / 1000000LL);
            st->span_count = 0;
            disable(st, r, bound);
            return 1;
        }
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            if (rc == PCRE2_ERROR_MATCHLIMIT)
                snprintf(bound, sizeof bound, "the match limit (%u steps per match)",
                         FJF_LEGADO_MATCH_LIMIT);
            else if (rc == PCRE2_ERROR_DEPTHLIMIT)
                snprintf(bound, sizeof bound, "the depth limit (%u per match)",
                         FJF_LEGADO_DEPTH_LIMIT);
            else if (rc == PCRE2_ERROR_HEAPLIMIT)
                snprintf(bound, sizeof bound, "the heap limit (%u KiB per match)",
                         FJF_LEGADO_HEAP_LIMIT);
            else if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
                snprintf(bound, sizeof bound, "the JIT stack limit (32 KiB)");
            else {
                PCRE2_UCHAR message[120];
                PCRE2(pcre2_get_error_message)(rc, message, sizeof message);
                snprintf(bound, sizeof bound, "a matching error (%s)", (const char *)message);
            }
            st->span_count = 0;
            disable(st, r, bound);
            return 1;
        }
        const PCRE2_SIZE *ov = PCRE2(pcre2_get_ovector_pointer)(st->match);
        size_t start = ov[0], end = ov[1];
        if (end > start && start >= at) {
            if (add_span(st, start, end) != 0)
                return -1;
            at = end;
        } else {
            /* \K games: go on one character further. */
            at = (end > at ? end : at) + 1;
            while (at < len && ((unsigned char)cur[at] & 0xC0) == 0x80)
                at++;
        }
    }
    return 0;
}

static int keep_report(fjf_legado_stage *st, unsigned long long column, const char *text,
                       size_t len)
{
    if (grow((void **)&st->reports, &st->report_cap, st->report_count + 1,
             sizeof *st->reports) != 0)
        return -1;
    st->reports[st->report_count++] = (pending_report){column, st->report_text.len, len};
    return fjf_buf_append(&st->report_text, text, len);
}

static int by_column(const void *a, const void *b)
{
    const pending_report *x = a, *y = b;
    return x->column < y->column ? -1 : x->column > y->column;
}

static void print_removal(const fjf_legado_stage *st, unsigned long long column, const char *text,
                          size_t len)
{
    /* One line, whole, even when tree mode's threads report at once. */
    flockfile(stderr);
    fprintf(stderr, "%s:%llu:%llu: ", st->input, st->line_no, column);
    fjf_display_text(stderr, text, len);
    fputc('\n', stderr);
    funlockfile(stderr);
}

static int is_blank(const fjf_legado_stage *st, const char *text, size_t len)
{
    return PCRE2(pcre2_match)(st->set->blank, (PCRE2_SPTR)(len ? text : ""), len, 0, 0, st->match,
                       st->limits) >= 0;
}

/* Applies the rules to one whole line and passes on what is left, with its
 * line ending. 0, -1 (no memory: reported; or `next` failed). */
static int finish_line(fjf_legado_stage *st, const char *line, size_t len, const char *ending,
                       size_t ending_len)
{
    const fjf_legado *set = st->set;
    size_t removals = 0;
    /* A byte order mark opening the input is not the line's text. */
    if (st->line_no == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
        if (st->next(st->next_ctx, line, 3) != 0)
            return -1;
        line += 3;
        len -= 3;
    }
    if (st->active_count && len > 0) {
        if (len + 1 > st->work_cap) {
            size_t cap = len + 1;
            char *a = realloc(st->cur, cap), *b = a ? realloc(st->alt, cap) : NULL;
            if (a)
                st->cur = a;
            if (b)
                st->alt = b;
            uint32_t *o = b ? realloc(st->origin, cap * sizeof *o) : NULL;
            if (o)
                st->origin = o;
            uint32_t *p = o ? realloc(st->alt_origin, cap * sizeof *p) : NULL;
            if (p)
                st->alt_origin = p;
            if (!p) {
                fprintf(stderr, "fanjian: out of memory\n");
                return -1;
            }
            st->work_cap = cap;
        }
        memcpy(st->cur, line, len);
        for (size_t i = 0; i < len; i++)
            st->origin[i] = (uint32_t)i;
        size_t cur_len = len;
        st->report_count = 0;
        st->report_text.len = 0;
        for (size_t k = 0; k < set->count && cur_len > 0; k++) {
            const legado_rule *r = &set->rules[k];
            if (!st->active[k] || atomic_load(&r->state->disabled))
                continue;
            int got = find_spans(st, r, st->cur, cur_len);
            if (got < 0) {
                fprintf(stderr, "fanjian: out of memory\n");
                return -1;
            }
            if (st->span_count == 0)
                continue;
            /* Columns count characters in the line as read: walk it once. */
            size_t read_at = 0;
            unsigned long long chars = 0;
            size_t out = 0, from = 0;
            for (size_t s = 0; s < st->span_count; s++) {
                const span *sp = &st->spans[s];
                size_t orig = st->origin[sp->start];
                for (; read_at < orig; read_at++)
                    chars += ((unsigned char)line[read_at] & 0xC0) != 0x80;
                if (st->report &&
                    keep_report(st, chars + 1, st->cur + sp->start, sp->end - sp->start) != 0) {
                    fprintf(stderr, "fanjian: out of memory\n");
                    return -1;
                }
                size_t keep = sp->start - from;
                memcpy(st->alt + out, st->cur + from, keep);
                memcpy(st->alt_origin + out, st->origin + from, keep * sizeof *st->origin);
                out += keep;
                from = sp->end;
            }
            memcpy(st->alt + out, st->cur + from, cur_len - from);
            memcpy(st->alt_origin + out, st->origin + from, (cur_len - from) * sizeof *st->origin);
            out += cur_len - from;
            removals += st->span_count;
            char *t = st->cur;
            st->cur = st->alt;
            st->alt = t;
            uint32_t *o = st->origin;
            st->origin = st->alt_origin;
            st->alt_origin = o;
            cur_len = out;
        }
        if (removals) {
            st->removed += removals;
            if (is_blank(st, st->cur, cur_len)) {
                if (grow((void **)&st->dropped, &st->dropped_cap, st->dropped_count + 1,
                         sizeof *st->dropped) != 0) {
                    fprintf(stderr, "fanjian: out of memory\n");
                    return -1;
                }
                st->dropped[st->dropped_count++] = st->line_no;
                st->whole++;
                if (st->report)
                    print_removal(st, 1, line, len);
                return 0;
            }
            /* In the order they stand in the line (distinct bytes: distinct columns). */
            if (st->report_count > 1)
                qsort(st->reports, st->report_count, sizeof *st->reports, by_column);
            for (size_t i = 0; i < st->report_count; i++)
                print_removal(st, st->reports[i].column,
                              st->report_text.data + st->reports[i].text_at, st->reports[i].len);
            st->passed++;
            if (st->next(st->next_ctx, st->cur, cur_len) != 0 ||
                (ending_len && st->next(st->next_ctx, ending, ending_len) != 0))
                return -1;
            return 0;
        }
    }
    st->passed++;
    if ((len && st->next(st->next_ctx, line, len) != 0) ||
        (ending_len && st->next(st->next_ctx, ending, ending_len) != 0))
        return -1;
    return 0;
}

/* The line collected so far, ended by `ending` (empty at the input's end). */
static int end_line(fjf_legado_stage *st, const char *ending, size_t ending_len)
{
    int rc;
    if (st->passing) {
        rc = ending_len ? st->next(st->next_ctx, ending, ending_len) : 0;
        st->passing = 0;
        st->passed++;
    } else {
        const char *line = st->line.data ? st->line.data : "";
        size_t len = st->line.len;
        /* A CR before the LF belongs to the line ending. */
        if (ending_len && len && line[len - 1] == '\r') {
            char crlf[2] = {'\r', '\n'};
            rc = finish_line(st, line, len - 1, crlf, 2);
        } else {
            rc = finish_line(st, line, len, ending, ending_len);
        }
    }
    st->line.len = 0;
    st->line_no++;
    return rc;
}

int fjf_legado_stage_feed(fjf_legado_stage *st, const char *data, size_t len)
{
    if (st->active_count == 0) /* no rule for this input: nothing to hold back */
        return len ? st->next(st->next_ctx, data, len) : 0;
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t take = nl ? (size_t)(nl - data) : len;
        if (st->passing) {
            if (take && st->next(st->next_ctx, data, take) != 0)
                return -1;
        } else if (st->line.len + take > FJF_LEGADO_MAX_LINE) {
            /* Too long for the rules: passed on unchanged, said once per input. */
            if (st->long_lines++ == 0)
                fprintf(stderr, "fanjian: %s: line %llu is longer than 1 MiB: the Legado rules "
                                "leave it (and any like it) as it is\n", st->input, st->line_no);
            if ((st->line.len && st->next(st->next_ctx, st->line.data, st->line.len) != 0) ||
                (take && st->next(st->next_ctx, data, take) != 0))
                return -1;
            st->line.len = 0;
            st->passing = 1;
        } else if (take && fjf_buf_append(&st->line, data, take) != 0) {
            fprintf(stderr, "fanjian: out of memory\n");
            return -1;
        }
        if (!nl)
            break;
        if (end_line(st, "\n", 1) != 0)
            return -1;
        data += take + 1;
        len -= take + 1;
    }
    return 0;
}

int fjf_legado_stage_finish(fjf_legado_stage *st)
{
    if (st->active_count && (st->line.len || st->passing) && end_line(st, "", 0) != 0)
        return -1;
    if (st->report && !st->quiet_summary)
        fprintf(stderr, "fanjian: %s: Legado rules removed %llu matches (%llu whole lines)\n",
                st->input, st->removed, st->whole);
    return 0;
}

static int append_to_buf(void *ctx, const char *data, size_t len)
{
    return fjf_buf_append(ctx, data, len);
}

int fjf_legado_apply_text(const fjf_legado *set, const char *input, const char *book, int report,
                          unsigned long long first_line, const char *text, size_t len,
                          fjf_buf *out, fjf_legado_counts *counts)
{
    fjf_legado_stage *st = NULL;
    if (fjf_legado_stage_new(set, input, book, report, append_to_buf, out, &st) != 0)
        return -1;
    st->quiet_summary = 1;
    st->line_no = first_line ? first_line : 1;
    int rc = fjf_legado_stage_feed(st, text, len) == 0 && fjf_legado_stage_finish(st) == 0 ? 0 : -1;
    if (rc == 0 && counts) {
        counts->removed += st->removed;
        counts->whole_lines += st->whole;
    }
    fjf_legado_stage_free(st);
    return rc;
}

/* Spans, not a rewrite: a document's bytes stay where they are, so each
 * rule is matched against the block as read (not against what the rules
 * before it left, as the text stage does), and the matches' union is
 * what goes. A rule that only matches once an earlier one has removed
 * something therefore finds nothing here. */
static int by_start(const void *a, const void *b)
{
    const fj_clean_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : (x->end > y->end) - (x->end < y->end);
}

size_t fjf_legado_merge_spans(fj_clean_span *spans, size_t n, int adjacent)
{
    if (n < 2)
        return n;
    qsort(spans, n, sizeof *spans, by_start);
    size_t out = 0;
    for (size_t i = 1; i < n; i++) {
        fj_clean_span *last = &spans[out];
        if (spans[i].start < last->end || (adjacent && spans[i].start == last->end)) {
            if (spans[i].end > last->end)
                last->end = spans[i].end;
        } else {
            spans[++out] = spans[i];
        }
    }
    return out + 1;
}

int fjf_legado_find(const fjf_legado *set, const char *input, const char *book,
                    unsigned long long line, const char *text, size_t len, fj_clean_span **spans,
                    size_t *count)
{
    *spans = NULL;
    *count = 0;
    if (!set || len == 0 || len > FJF_LEGADO_MAX_LINE)
        return 0;
    fjf_legado_stage *st = NULL;
    if (fjf_legado_stage_new(set, input, book, 0, NULL, NULL, &st) != 0)
        return -1;
    st->line_no = line ? line : 1;
    fj_clean_span *all = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (size_t k = 0; k < set->count && st->active_count && rc == 0; k++) {
        const legado_rule *r = &set->rules[k];
        if (!st->active[k] || atomic_load(&r->state->disabled))
            continue;
        if (find_spans(st, r, text, len) < 0 ||
            grow((void **)&all, &cap, n + st->span_count, sizeof *all) != 0) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < st->span_count; i++)
            all[n++] = (fj_clean_span){st->spans[i].start, st->spans[i].end, 0};
    }
    fjf_legado_stage_free(st);
    if (rc != 0) {
        free(all);
        fprintf(stderr, "fanjian: out of memory\n");
        return -1;
    }
    *count = fjf_legado_merge_spans(all, n, 1);
    *spans = all;
    return 0;
}

int fjf_legado_leaves_blank(const fjf_legado *set, const char *text, size_t len,
                            const fj_clean_span *spans, size_t n)
{
    fjf_buf left = {0};
    size_t at = 0;
    int ok = 1;
    for (size_t i = 0; i <= n && ok; i++) {
        size_t end = i < n ? spans[i].start : len;
        if (end > at)
            ok = fjf_buf_append(&left, text + at, end - at) == 0;
        if (i < n && spans[i].end > at)
            at = spans[i].end;
    }
    pcre2_match_data *md = ok ? PCRE2(pcre2_match_data_create)(1, NULL) : NULL;
    int blank = md && PCRE2(pcre2_match)(set->blank, (PCRE2_SPTR)(left.len ? left.data : ""),
                                         left.len, 0, 0, md, NULL) >= 0;
    PCRE2(pcre2_match_data_free)(md);
    fjf_buf_free(&left);
    return blank;
}
