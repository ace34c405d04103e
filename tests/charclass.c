/* The generated character tables (src/charclass.h) against the file they
 * come from: this program reads data/char-classes.txt itself (its own
 * reader, not tools/charclass.c's) and compares every code point's
 * membership in each class and image under each map, U+0000 to U+10FFFF
 * and beyond. Then characters whose classes the code relies on.
 *
 * Environment: FANJIAN_CHAR_CLASSES, the data file (default:
 * data/char-classes.txt, from the repository's root). */
#include "testutil.h"

#include <ctype.h>

#include "../src/charclass.h"

#define CP_LIMIT 0x110000u

static const char *const class_names[] = {
#define NAME(id, name) name,
    FJ_CHAR_CLASSES(NAME)
#undef NAME
};
static const char *const map_names[] = {
#define NAME(id, name) name,
    FJ_CHAR_MAPS(NAME)
#undef NAME
};

/* ---- reading the data file ------------------------------------------------ */

typedef struct entry {
    int is_map;
    char name[64];
    unsigned line;
    size_t count;
    uint32_t from[512], to[512]; /* a class: ranges from[i]..to[i]; a map: from[i] -> to[i] */
} entry;

static entry entries[64];
static size_t entry_count;

static const char *data_path(void) { return t_env("FANJIAN_CHAR_CLASSES", "data/char-classes.txt"); }

/* One character at *s (UTF-8 or U+XXXX); advances *s. */
static uint32_t next_char(const char **s, unsigned line)
{
    const unsigned char *p = (const unsigned char *)*s;
    uint32_t cp = 0;
    if (p[0] == 'U' && p[1] == '+') {
        int digits = 0;
        for (p += 2; digits < 6 && isxdigit(*p); p++, digits++)
            cp = cp * 16 + (uint32_t)(isdigit(*p) ? *p - '0' : (tolower(*p) - 'a' + 10));
        if (digits < 4)
            fail_msg("%s:%u: short U+", data_path(), line);
    } else {
        int n = p[0] < 0x80 ? 1 : p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : 2;
        cp = n == 1 ? p[0] : (uint32_t)(p[0] & (0x7F >> n));
        for (int k = 1; k < n; k++) {
            if ((p[k] & 0xC0) != 0x80)
                fail_msg("%s:%u: bad UTF-8", data_path(), line);
            cp = cp << 6 | (p[k] & 0x3F);
        }
        p += n;
    }
    *s = (const char *)p;
    return cp;
}

static void read_item(entry *e, const char *tok, size_t len, unsigned line)
{
    char buf[64];
    assert_true(len < sizeof buf);
    memcpy(buf, tok, len);
    buf[len] = 0;
    uint32_t u[9] = {0};
    size_t n = 0;
    for (const char *s = buf; *s && n < 9;)
        u[n++] = next_char(&s, line);
    if (!e->is_map) {
        assert_true(e->count < sizeof e->from / sizeof *e->from);
        uint32_t first = u[0], last = n == 4 ? u[3] : u[0];
        if (n != 1 && !(n == 4 && u[1] == '.' && u[2] == '.'))
            fail_msg("%s:%u: bad class item %s", data_path(), line, buf);
        e->from[e->count] = first;
        e->to[e->count++] = last;
        return;
    }
    if (n == 2 || (n == 3 && u[1] == '=')) {
        assert_true(e->count < sizeof e->from / sizeof *e->from);
        e->from[e->count] = u[0];
        e->to[e->count++] = u[n - 1];
    } else if (n == 9 && u[4] == '=') {
        for (uint32_t k = 0; k <= u[3] - u[0]; k++) {
            assert_true(e->count < sizeof e->from / sizeof *e->from);
            e->from[e->count] = u[0] + k;
            e->to[e->count++] = u[5] + k;
        }
    } else {
        fail_msg("%s:%u: bad map item %s", data_path(), line, buf);
    }
}

static int read_data(void **state)
{
    (void)state;
    FILE *f = fopen(data_path(), "r");
    if (!f) {
        fprintf(stderr, "charclass: cannot open %s\n", data_path());
        return -1;
    }
    char line[8192];
    unsigned number = 0;
    entry_count = 0;
    while (fgets(line, sizeof line, f)) {
        number++;
        line[strcspn(line, "\r\n")] = 0;
        int is_map = strncmp(line, "map ", 4) == 0;
        if (!is_map && strncmp(line, "class ", 6) != 0)
            continue;
        char *colon = strchr(line, ':');
        if (!colon || entry_count == sizeof entries / sizeof *entries) {
            fclose(f);
            return -1;
        }
        entry *e = &entries[entry_count++];
        memset(e, 0, sizeof *e);
        e->is_map = is_map;
        e->line = number;
        snprintf(e->name, sizeof e->name, "%.*s", (int)(colon - line - (is_map ? 4 : 6)),
                 line + (is_map ? 4 : 6));
        for (char *tok = strtok(colon + 1, " \t"); tok; tok = strtok(NULL, " \t"))
            read_item(e, tok, strlen(tok), number);
    }
    fclose(f);
    return 0;
}

static const entry *find(const char *name, int is_map)
{
    for (size_t i = 0; i < entry_count; i++)
        if (entries[i].is_map == is_map && strcmp(entries[i].name, name) == 0)
            return &entries[i];
    fail_msg("%s: no %s \"%s\"", data_path(), is_map ? "map" : "class", name);
    return NULL;
}

/* ---- the tables against the data ------------------------------------------- */

/* Every name the code uses is in the file once, and the file has no other. */
static void test_names(void **state)
{
    (void)state;
    size_t listed = FJ_CC_COUNT + FJ_MAP_COUNT;
    assert_int_equal(entry_count, listed);
    for (unsigned c = 0; c < FJ_CC_COUNT; c++)
        find(class_names[c], 0);
    for (unsigned m = 0; m < FJ_MAP_COUNT; m++)
        find(map_names[m], 1);
}

static void test_classes(void **state)
{
    (void)state;
    unsigned char *want = malloc(CP_LIMIT);
    assert_non_null(want);
    for (unsigned c = 0; c < FJ_CC_COUNT; c++) {
        const entry *e = find(class_names[c], 0);
        memset(want, 0, CP_LIMIT);
        for (size_t i = 0; i < e->count; i++)
            for (uint32_t cp = e->from[i]; cp <= e->to[i]; cp++)
                want[cp] = 1;
        size_t members = 0;
        for (uint32_t cp = 0; cp < CP_LIMIT; cp++) {
            members += want[cp];
            if (fj__char_is(cp, c) != want[cp])
                fail_msg("%s:%u: class %s: U+%04X is %sa member in the tables", data_path(),
                         e->line, e->name, (unsigned)cp, want[cp] ? "not " : "");
        }
        /* Past U+10FFFF (FJ_NONE, a byte that is not UTF-8) nothing is. */
        assert_false(fj__char_is(CP_LIMIT, c));
        assert_false(fj__char_is(0xFFFFFFFFu, c));
        /* The member list (fj__cc_members) holds the same characters. */
        size_t listed = 0;
        for (unsigned r = fj__cc_member_start[c]; r < fj__cc_member_start[c + 1]; r++)
            for (uint32_t cp = fj__cc_members[r].first; cp <= fj__cc_members[r].last; cp++) {
                assert_true(cp < CP_LIMIT && want[cp]);
                listed++;
            }
        assert_int_equal(listed, members);
    }
    free(want);
}

static void test_maps(void **state)
{
    (void)state;
    uint32_t *want = malloc(CP_LIMIT * sizeof *want);
    assert_non_null(want);
    for (unsigned m = 0; m < FJ_MAP_COUNT; m++) {
        const entry *e = find(map_names[m], 1);
        memset(want, 0, CP_LIMIT * sizeof *want);
        for (size_t i = 0; i < e->count; i++)
            want[e->from[i]] = e->to[i];
        for (uint32_t cp = 0; cp < CP_LIMIT; cp++) {
            if (fj__char_map(m, cp) != want[cp])
                fail_msg("%s:%u: map %s: U+%04X gives U+%04X in the tables, U+%04X in the file",
                         data_path(), e->line, e->name, (unsigned)cp,
                         (unsigned)fj__char_map(m, cp), (unsigned)want[cp]);
            /* its keys' class */
            if (fj__char_is(cp, FJ_CC_MAP_KEYS(m)) != (want[cp] != 0))
                fail_msg("%s:%u: map %s: U+%04X is %sa key in the class tables", data_path(),
                         e->line, e->name, (unsigned)cp, want[cp] ? "not " : "");
        }
        assert_false(fj__char_is(0xFFFFFFFFu, FJ_CC_MAP_KEYS(m)));
        assert_int_equal(fj__char_map(m, 0xFFFFFFFFu), 0);
    }
    free(want);
}

/* ---- what the code relies on ---------------------------------------------- */

/* Characters in and out of classes, as clean-up, detection and typography
 * need them (written here as themselves, independently of the file). */
static void test_known_characters(void **state)
{
    (void)state;
    static const struct {
        const char *ch;
        unsigned cls;
        int in;
    } cases[] = {
        {"\xe3\x80\x80", FJ_CC_CLEAN_SPACE, 1},  /* U+3000 */
        {"\xe2\x80\x8b", FJ_CC_CLEAN_SPACE, 1},  /* U+200B */
        {"\xe2\x80\x8b", FJ_CC_DETECT_SPACE, 0}, /* detection does not skip it */
        {"\n", FJ_CC_CLEAN_SPACE, 1},
        {"\n", FJ_CC_SPACE_BEFORE_REMOVAL, 0},
        {"\n", FJ_CC_LINE_BREAK, 1},
        {"a", FJ_CC_MARK, 0},
        {"Z", FJ_CC_MARK, 0},
        {"7", FJ_CC_MARK, 0},
        {"-", FJ_CC_MARK, 1},
        {"。", FJ_CC_MARK, 1},
        {"中", FJ_CC_MARK, 0},
        {"。", FJ_CC_SENTENCE_END, 1},
        {"…", FJ_CC_SENTENCE_END, 1},
        {".", FJ_CC_SENTENCE_END, 0},
        {".", FJ_CC_FULL_STOP, 1},
        {"，", FJ_CC_SENTENCE_END, 0},
        {"」", FJ_CC_CLOSER, 1},
        {"「", FJ_CC_CLOSER, 0},
        {"点", FJ_CC_WORD_DOT, 1},
        {"點", FJ_CC_ADDRESS_DOT, 1},
        {"店", FJ_CC_ADDRESS_DOT, 0},
        {"、", FJ_CC_CLAUSE_SEPARATOR, 1},
        {"中", FJ_CC_HAN_DETECT, 1},
        {"中", FJ_CC_TYPOGRAPHY_HAN, 1},
        {"\xf0\xa0\x80\x80", FJ_CC_HAN_DETECT, 1},     /* U+20000 */
        {"\xf0\xb1\x8d\x90", FJ_CC_HAN_DETECT, 1},     /* U+31350: plane 3 */
        {"\xf0\xb1\x8d\x90", FJ_CC_TYPOGRAPHY_HAN, 0}, /* past extension G */
        {"あ", FJ_CC_HAN_DETECT, 0},
        {"あ", FJ_CC_TYPOGRAPHY_CJK, 1},
        {"\xef\xb8\x8f", FJ_CC_TYPOGRAPHY_CJK, 0},     /* U+FE0F: a variation selector */
        {"é", FJ_CC_TYPOGRAPHY_CJK, 0},
        {"；", FJ_CC_CLAUSE_END, 1},
        {"\xc2\x85", FJ_CC_LINE_BREAK, 1},             /* U+0085 */
        {"衹", FJ_CC_EXTRA_TRADITIONAL, 1},
        {"紙", FJ_CC_EXTRA_TRADITIONAL, 0},
        {"ㄅ", FJ_CC_BEFORE_HAN, 1},
        {"\xe3\x90\x80", FJ_CC_BEFORE_HAN, 0},         /* U+3400 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *s = cases[i].ch;
        uint32_t cp = next_char(&s, 0);
        if (fj__char_is(cp, cases[i].cls) != cases[i].in)
            fail_msg("U+%04X should %sbe in class %s", (unsigned)cp, cases[i].in ? "" : "not ",
                     class_names[cases[i].cls]);
    }
    static const struct {
        unsigned map;
        const char *from, *to; /* "" : not mapped */
    } maps[] = {
        {FJ_MAP_FOLD_WIDTH, "Ａ", "A"},
        {FJ_MAP_FOLD_WIDTH, "～", "~"},
        {FJ_MAP_FOLD_WIDTH, "\xe3\x80\x80", " "},
        {FJ_MAP_FOLD_WIDTH, "。", ""},
        {FJ_MAP_BRACKET_GROUP, "【", "】"},
        {FJ_MAP_BRACKET_GROUP, "「", ""},
        {FJ_MAP_BRACKET_QUOTE, "『", "』"},
        {FJ_MAP_QUOTE_PAIR, "“", "”"},
        {FJ_MAP_ELLIPSIS, "。", "…"},
        {FJ_MAP_ELLIPSIS, "．", ""},
        {FJ_MAP_FULLWIDTH, "?", "？"},
        {FJ_MAP_FULLWIDTH, ".", ""},
        {FJ_MAP_QUOTES_TO_CORNER, "‘", "『"},
        {FJ_MAP_QUOTES_TO_CORNER, "\"", ""},
        {FJ_MAP_QUOTES_TO_CURLY, "」", "”"},
        {FJ_MAP_STRAIGHT_QUOTE_OPEN, "\"", "“"},
        {FJ_MAP_STRAIGHT_QUOTE_CLOSE, "\"", "”"},
        {FJ_MAP_STRAIGHT_QUOTE_CLOSE, "'", ""},
    };
    for (size_t i = 0; i < sizeof maps / sizeof *maps; i++) {
        const char *s = maps[i].from, *t = maps[i].to;
        uint32_t from = next_char(&s, 0), to = *t ? next_char(&t, 0) : 0;
        if (fj__char_map(maps[i].map, from) != to)
            fail_msg("map %s: U+%04X should give U+%04X, gives U+%04X", map_names[maps[i].map],
                     (unsigned)from, (unsigned)to, (unsigned)fj__char_map(maps[i].map, from));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_maps),
        cmocka_unit_test(test_known_characters),
    };
    return cmocka_run_group_tests(tests, read_data, NULL);
}
