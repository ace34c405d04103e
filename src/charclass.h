/* Character classes and maps: the punctuation, spaces and script ranges of
 * clean-up (src/clean.c), detection (src/detect.c), typography
 * (src/punct.c) and repair (src/context.c). The characters are data, in
 * data/char-classes.txt; tools/charclass.c compiles that file into the
 * const tables below (build/gen/char_classes.c) and fails the build when a
 * name listed here is missing there, or the file names one not listed. */
#ifndef FJ_CHARCLASS_H
#define FJ_CHARCLASS_H

#include <stdint.h>

/* The classes: X(ID, "name in data/char-classes.txt"). With the maps, at
 * most 32. */
#define FJ_CHAR_CLASSES(X)                                                                    \
    X(CLEAN_SPACE, "clean-space")                                                             \
    X(SPACE_BEFORE_REMOVAL, "space-before-removal")                                           \
    X(MARK, "mark")                                                                           \
    X(SENTENCE_END, "sentence-end")                                                           \
    X(FULL_STOP, "full-stop")                                                                 \
    X(ADDRESS_STOP, "address-stop")                                                           \
    X(CLOSER, "closer")                                                                       \
    X(ADDRESS_DOT, "address-dot")                                                             \
    X(WORD_DOT, "word-dot")                                                                   \
    X(CLAUSE_SEPARATOR, "clause-separator")                                                   \
    X(HAN_DETECT, "han-detect")                                                               \
    X(CLAUSE_END, "clause-end")                                                               \
    X(LINE_BREAK, "line-break")                                                               \
    X(DETECT_SPACE, "detect-space")                                                           \
    X(EXTRA_TRADITIONAL, "extra-traditional")                                                 \
    X(TYPOGRAPHY_CJK, "typography-cjk")                                                       \
    X(TYPOGRAPHY_HAN, "typography-han")                                                       \
    X(BEFORE_HAN, "before-han")

/* The maps (code point to code point, both in the BMP): X(ID, "name"). */
#define FJ_CHAR_MAPS(X)                                                                       \
    X(FOLD_WIDTH, "fold-width")                                                               \
    X(BRACKET_GROUP, "bracket-group")                                                         \
    X(BRACKET_QUOTE, "bracket-quote")                                                         \
    X(QUOTE_PAIR, "quote-pair")                                                               \
    X(ELLIPSIS, "ellipsis")                                                                   \
    X(FULLWIDTH, "fullwidth")                                                                 \
    X(QUOTES_TO_CORNER, "quotes-to-corner")                                                   \
    X(QUOTES_TO_CURLY, "quotes-to-curly")                                                     \
    X(STRAIGHT_QUOTE_OPEN, "straight-quote-open")                                             \
    X(STRAIGHT_QUOTE_CLOSE, "straight-quote-close")

#define FJ_CHAR_ENUM_(id, name) FJ_CC_##id,
enum { FJ_CHAR_CLASSES(FJ_CHAR_ENUM_) FJ_CC_COUNT };
#undef FJ_CHAR_ENUM_
#define FJ_CHAR_ENUM_(id, name) FJ_MAP_##id,
enum { FJ_CHAR_MAPS(FJ_CHAR_ENUM_) FJ_MAP_COUNT };
#undef FJ_CHAR_ENUM_
/* A map's keys are a class too (its bit is in the class word a character
 * already looked up has): class FJ_CC_MAP_KEYS(FJ_MAP_...). */
#define FJ_CC_MAP_KEYS(m) (FJ_CC_COUNT + (m))
_Static_assert(FJ_CC_COUNT + FJ_MAP_COUNT <= 32, "a class is one bit of a uint32_t");

/* fj__char_classes's bit for class c (FJ_CC_... or FJ_CC_MAP_KEYS()). */
#define FJ_CC_BIT(c) (1u << (c))

typedef struct fj_char_range {
    uint32_t first, last;
} fj_char_range;

typedef struct fj_char_span {
    uint32_t first, last, classes;
} fj_char_span;

/* The generated tables. A BMP character's classes are
 * fj__cc_bits[fj__cc_row[cp >> 8]][cp & 0xFF]; identical blocks of 256
 * share a row. Above the BMP, disjoint spans with their classes. */
extern const uint8_t fj__cc_row[256];
extern const uint32_t fj__cc_bits[][256];
extern const fj_char_span fj__cc_astral[];
extern const unsigned fj__cc_astral_count;
/* Each class's members as sorted ranges: fj__cc_members[fj__cc_member_start[c]]
 * up to fj__cc_member_start[c + 1]. */
extern const fj_char_range fj__cc_members[];
extern const unsigned fj__cc_member_start[FJ_CC_COUNT + 1];
/* Map m of a BMP character: fj__cm_value[fj__cm_row[m][cp >> 8]][cp & 0xFF],
 * 0 when it maps nowhere (row 0 is all zeros). */
extern const uint8_t fj__cm_row[FJ_MAP_COUNT][256];
extern const uint16_t fj__cm_value[][256];

/* Above the BMP (rare: kept out of the callers' loops). */
static __attribute__((noinline, cold, unused)) uint32_t fj__char_classes_astral(uint32_t cp)
{
    for (unsigned i = 0; i < fj__cc_astral_count; i++)
        if (cp <= fj__cc_astral[i].last)
            return cp >= fj__cc_astral[i].first ? fj__cc_astral[i].classes : 0;
    return 0;
}

/* All the classes of cp as FJ_CC_BIT()s (any uint32_t: 0 past U+10FFFF). */
static inline uint32_t fj__char_classes(uint32_t cp)
{
    if (cp < 0x10000)
        return fj__cc_bits[fj__cc_row[cp >> 8]][cp & 0xFF];
    return fj__char_classes_astral(cp);
}

/* Whether cp is in class c (FJ_CC_... or FJ_CC_MAP_KEYS()). */
static inline int fj__char_is(uint32_t cp, unsigned c)
{
    return (fj__char_classes(cp) >> c) & 1u;
}

/* What map m (FJ_MAP_...) gives cp, or 0. */
static inline uint32_t fj__char_map(unsigned m, uint32_t cp)
{
    return cp < 0x10000 ? fj__cm_value[fj__cm_row[m][cp >> 8]][cp & 0xFF] : 0;
}

#endif
