/* Compiles data/char-classes.txt (its format is described there) into the
 * const tables of src/charclass.h, as C on standard output:
 *   charclass data/char-classes.txt > build/gen/char_classes.c
 * The names are those src/charclass.h lists. A line it cannot read, a name
 * not listed or listed as the other kind, a name defined twice, a bad
 * character, overlapping items of a class, a character a map gives twice,
 * and a listed name the file lacks all stop it with FILE:LINE: and exit
 * status 1. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/charclass.h"
#include "../src/utf8.h"

#define MAX_CP 0x10FFFFu
#define BMP 0x10000u

typedef struct item {
    uint32_t first, last, to; /* a map: first..last to to..; a class: to unused */
    unsigned line;
} item;

typedef struct def {
    const char *name;
    int is_map;
    unsigned line; /* 0: not defined */
    item *items;
    size_t count, cap;
} def;

static def defs[FJ_CC_COUNT + FJ_MAP_COUNT];
static const char *path;

static _Noreturn void fail(unsigned line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void fail(unsigned line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%u: ", path, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static def *find_def(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof defs / sizeof *defs; i++)
        if (strlen(defs[i].name) == len && memcmp(defs[i].name, name, len) == 0)
            return &defs[i];
    return NULL;
}

static void add_item(def *d, item it)
{
    if (d->count == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 16;
        d->items = realloc(d->items, d->cap * sizeof *d->items);
        if (!d->items) {
            perror("charclass");
            exit(1);
        }
    }
    d->items[d->count++] = it;
}

static int hex_digit(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                                                 : -1;
}

/* The characters of one item (s[0..n)), written as themselves or U+XXXX. */
static size_t read_units(unsigned line, const char *s, size_t n, uint32_t *units, size_t max)
{
    size_t count = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        if (s[i] == 'U' && i + 1 < n && s[i + 1] == '+') {
            size_t j = i + 2, digits = 0;
            cp = 0;
            while (j < n && digits < 6 && hex_digit((unsigned char)s[j]) >= 0) {
                cp = cp << 4 | (uint32_t)hex_digit((unsigned char)s[j++]);
                digits++;
            }
            if (digits < 4)
                fail(line, "\"%.*s\": U+ takes 4 to 6 hex digits", (int)n, s);
            if (cp > MAX_CP || (cp >= 0xD800 && cp <= 0xDFFF))
                fail(line, "\"%.*s\": U+%04X is not a character", (int)n, s, (unsigned)cp);
            i = j;
        } else {
            const unsigned char *p = (const unsigned char *)s + i;
            int k = fj_utf8_decode(p, (const unsigned char *)s + n, &cp);
            if (k <= 0)
                fail(line, "\"%.*s\" is not valid UTF-8", (int)n, s);
            if (cp < 0x20 || cp == 0x7F)
                fail(line, "a control character written as itself (write U+%04X)", (unsigned)cp);
            i += (size_t)k;
        }
        if (count == max)
            fail(line, "\"%.*s\" is not an item (too many characters)", (int)n, s);
        units[count++] = cp;
    }
    return count;
}

static int is_range(const uint32_t *u, size_t k, size_t at)
{
    return k >= at + 4 && u[at + 1] == '.' && u[at + 2] == '.';
}

static void parse_item(def *d, unsigned line, const char *s, size_t n)
{
    uint32_t u[9];
    size_t k = read_units(line, s, n, u, 9);
    item it = {0, 0, 0, line};
    if (!d->is_map) {
        if (k == 1)
            it.first = it.last = u[0];
        else if (k == 4 && is_range(u, k, 0))
            it.first = u[0], it.last = u[3];
        else
            fail(line, "\"%.*s\": a class item is a character or FIRST..LAST", (int)n, s);
        if (it.first > it.last)
            fail(line, "\"%.*s\": the range ends before it starts", (int)n, s);
        add_item(d, it);
        return;
    }
    uint32_t to_last;
    if (k == 2) {
        it.first = it.last = u[0];
        it.to = to_last = u[1];
    } else if (k == 3 && u[1] == '=') {
        it.first = it.last = u[0];
        it.to = to_last = u[2];
    } else if (k == 9 && is_range(u, k, 0) && u[4] == '=' && is_range(u, k, 5)) {
        it.first = u[0], it.last = u[3], it.to = u[5], to_last = u[8];
        if (it.first > it.last || it.to > to_last)
            fail(line, "\"%.*s\": a range ends before it starts", (int)n, s);
        if (it.last - it.first != to_last - it.to)
            fail(line, "\"%.*s\": the ranges differ in length", (int)n, s);
    } else {
        fail(line, "\"%.*s\": a map item is FROM TO side by side, FROM=TO or A..B=C..D", (int)n, s);
    }
    if (it.last >= BMP || to_last >= BMP)
        fail(line, "\"%.*s\": a map's characters are in the BMP", (int)n, s);
    if (it.to == 0)
        fail(line, "\"%.*s\": a map cannot give U+0000", (int)n, s);
    if (it.first == it.to)
        fail(line, "\"%.*s\": maps a character to itself", (int)n, s);
    add_item(d, it);
}

static void parse_line(unsigned line, char *s)
{
    size_t len = strlen(s);
    while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
        s[--len] = 0;
    size_t i = 0;
    while (s[i] == ' ' || s[i] == '\t')
        i++;
    if (s[i] == 0 || s[i] == '#')
        return;
    int is_map = 0;
    if (strncmp(s + i, "class ", 6) == 0)
        is_map = 0;
    else if (strncmp(s + i, "map ", 4) == 0)
        is_map = 1;
    else
        fail(line, "a line is \"class NAME: ...\" or \"map NAME: ...\"");
    i += is_map ? 4 : 6;
    while (s[i] == ' ')
        i++;
    const char *colon = strchr(s + i, ':');
    size_t name_len = colon ? (size_t)(colon - (s + i)) : 0;
    while (name_len && s[i + name_len - 1] == ' ')
        name_len--;
    if (!colon || !name_len)
        fail(line, "no \"NAME:\"");
    def *d = find_def(s + i, name_len);
    if (!d)
        fail(line, "unknown %s \"%.*s\" (src/charclass.h lists the names the code uses)",
             is_map ? "map" : "class", (int)name_len, s + i);
    if (d->is_map != is_map)
        fail(line, "\"%s\" is a %s, not a %s", d->name, d->is_map ? "map" : "class",
             is_map ? "map" : "class");
    if (d->line)
        fail(line, "\"%s\" is defined twice (first on line %u)", d->name, d->line);
    d->line = line;
    for (const char *p = colon + 1;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, " \t");
        parse_item(d, line, p, n);
        p += n;
    }
    if (!d->count)
        fail(line, "\"%s\" has no characters", d->name);
}

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

/* Sorts d's items; overlapping ones (a character given twice) fail. */
static void sort_items(def *d)
{
    qsort(d->items, d->count, sizeof *d->items, cmp_item);
    for (size_t i = 1; i < d->count; i++)
        if (d->items[i].first <= d->items[i - 1].last)
            fail(d->items[i].line, "\"%s\": U+%04X is given twice", d->name,
                 (unsigned)d->items[i].first);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int in_class(const def *d, uint32_t cp)
{
    size_t lo = 0, hi = d->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < d->items[mid].first)
            hi = mid;
        else if (cp > d->items[mid].last)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

/* cp's classes, with the maps it is a key of (FJ_CC_MAP_KEYS). */
static uint32_t classes_of(uint32_t cp)
{
    uint32_t bits = 0;
    for (unsigned c = 0; c < FJ_CC_COUNT + FJ_MAP_COUNT; c++)
        bits |= (uint32_t)in_class(&defs[c], cp) << c;
    return bits;
}

static uint32_t map_of(const def *d, uint32_t cp)
{
    for (size_t i = 0; i < d->count; i++)
        if (cp >= d->items[i].first && cp <= d->items[i].last)
            return d->items[i].to + (cp - d->items[i].first);
    return 0;
}

/* Rows of 256 values, identical ones shared; row 0 is all zeros. */
typedef struct rows {
    uint32_t (*v)[256];
    size_t count;
} rows;

static unsigned add_row(rows *r, const uint32_t *row)
{
    for (size_t i = 0; i < r->count; i++)
        if (memcmp(r->v[i], row, sizeof r->v[i]) == 0)
            return (unsigned)i;
    if (r->count == 256) {
        fprintf(stderr, "%s: more than 256 distinct blocks\n", path);
        exit(1);
    }
    memcpy(r->v[r->count], row, sizeof r->v[0]);
    return (unsigned)r->count++;
}

static void print_rows(const rows *r, const char *type, const char *name, int digits)
{
    printf("const %s %s[][256] = {\n", type, name);
    for (size_t i = 0; i < r->count; i++) {
        printf("    {");
        for (int k = 0; k < 256; k++) {
            printf("%s", k == 0 ? "" : k % 8 ? ", " : ",\n     ");
            printf("0x%0*x", digits, (unsigned)r->v[i][k]);
        }
        printf("},\n");
    }
    printf("};\n");
}

static void print_index(const unsigned *index)
{
    printf("{");
    for (int b = 0; b < 256; b++)
        printf("%s%u", b ? (b % 16 ? ", " : ",\n     ") : "", index[b]);
    printf("}");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: charclass data/char-classes.txt > char_classes.c\n");
        return 2;
    }
    path = argv[1];
    size_t n = 0;
#define NAME_CLASS(id, name) defs[n++] = (def){name, 0, 0, NULL, 0, 0};
#define NAME_MAP(id, name) defs[n++] = (def){name, 1, 0, NULL, 0, 0};
    FJ_CHAR_CLASSES(NAME_CLASS)
    FJ_CHAR_MAPS(NAME_MAP)
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    char buf[8192];
    unsigned line = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        if (!strchr(buf, '\n') && !feof(f))
            fail(line, "a line longer than %zu bytes", sizeof buf - 2);
        parse_line(line, buf);
    }
    fclose(f);
    for (size_t i = 0; i < n; i++) {
        if (!defs[i].line)
            fail(line, "%s \"%s\" is missing (src/charclass.h lists it)",
                 defs[i].is_map ? "map" : "class", defs[i].name);
        sort_items(&defs[i]);
    }

    printf("/* Generated by tools/charclass.c from %s: do not edit. */\n", path);
    printf("#include \"charclass.h\"\n\n");

    static rows r;
    r.v = calloc(256, sizeof *r.v);
    if (!r.v) {
        perror("charclass");
        return 1;
    }
    uint32_t row[256] = {0};
    unsigned index[256];
    add_row(&r, row);
    for (uint32_t b = 0; b < 256; b++) {
        for (uint32_t k = 0; k < 256; k++)
            row[k] = classes_of(b << 8 | k);
        index[b] = add_row(&r, row);
    }
    printf("const uint8_t fj__cc_row[256] = ");
    print_index(index);
    printf(";\n");
    print_rows(&r, "uint32_t", "fj__cc_bits", 5);

    /* Above the BMP: spans between the points where an item starts or ends. */
    uint32_t *edges = NULL;
    size_t edge_count = 0, edge_cap = 0;
    for (size_t c = 0; c < FJ_CC_COUNT; c++)
        for (size_t i = 0; i < defs[c].count; i++) {
            uint32_t ends[2] = {defs[c].items[i].first, defs[c].items[i].last + 1};
            for (int e = 0; e < 2; e++) {
                if (ends[e] <= BMP || ends[e] > MAX_CP)
                    continue;
                if (edge_count == edge_cap) {
                    edge_cap = edge_cap ? 2 * edge_cap : 64;
                    if (!(edges = realloc(edges, edge_cap * sizeof *edges))) {
                        perror("charclass");
                        return 1;
                    }
                }
                edges[edge_count++] = ends[e];
            }
        }
    qsort(edges, edge_count, sizeof *edges, cmp_u32);
    printf("const fj_char_span fj__cc_astral[] = {\n");
    unsigned spans = 0;
    for (size_t e = 0; e <= edge_count; e++) {
        uint32_t first = e == 0 ? BMP : edges[e - 1];
        uint32_t last = e == edge_count ? MAX_CP : edges[e] - 1;
        uint32_t bits = first <= last ? classes_of(first) : 0;
        if (!bits)
            continue;
        printf("    {0x%X, 0x%X, 0x%05x},\n", (unsigned)first, (unsigned)last, (unsigned)bits);
        spans++;
    }
    if (!spans)
        printf("    {1, 0, 0},\n"); /* never matches: C has no empty arrays */
    printf("};\nconst unsigned fj__cc_astral_count = %u;\n\n", spans);
    free(edges);

    printf("const fj_char_range fj__cc_members[] = {\n");
    unsigned at = 0, starts[FJ_CC_COUNT + 1];
    for (size_t c = 0; c < FJ_CC_COUNT; c++) {
        starts[c] = at;
        printf("    /* %s */\n", defs[c].name);
        for (size_t i = 0; i < defs[c].count; i++, at++) {
            uint32_t first = defs[c].items[i].first, last = defs[c].items[i].last;
            while (i + 1 < defs[c].count && defs[c].items[i + 1].first == last + 1)
                last = defs[c].items[++i].last; /* adjacent items: one range */
            printf("    {0x%X, 0x%X},\n", (unsigned)first, (unsigned)last);
        }
    }
    starts[FJ_CC_COUNT] = at;
    printf("};\nconst unsigned fj__cc_member_start[FJ_CC_COUNT + 1] = {");
    for (size_t c = 0; c <= FJ_CC_COUNT; c++)
        printf("%s%u", c ? ", " : "", starts[c]);
    printf("};\n\n");

    static rows m;
    m.v = calloc(256, sizeof *m.v);
    if (!m.v) {
        perror("charclass");
        return 1;
    }
    memset(row, 0, sizeof row);
    add_row(&m, row);
    printf("const uint8_t fj__cm_row[FJ_MAP_COUNT][256] = {\n");
    for (size_t d = FJ_CC_COUNT; d < n; d++) {
        for (uint32_t b = 0; b < 256; b++) {
            for (uint32_t k = 0; k < 256; k++)
                row[k] = map_of(&defs[d], b << 8 | k);
            index[b] = add_row(&m, row);
        }
        printf("    /* %s */\n    ", defs[d].name);
        print_index(index);
        printf(",\n");
    }
    printf("};\n");
    print_rows(&m, "uint16_t", "fj__cm_value", 4);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("charclass: standard output");
        return 1;
    }
    return 0;
}
