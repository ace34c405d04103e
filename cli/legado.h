/* fanjian CLI: Legado (阅读) 替换净化 replacement rules, read from JSON and
 * applied as removals, line by line, before the built-in clean-up; in
 * documents, as spans of each block (fjx_legado_find, docclean.c). docs/clean-rules.md describes which rules are used and the bounds. */
#ifndef FANJIAN_CLI_LEGADO_H
#define FANJIAN_CLI_LEGADO_H

#include <stddef.h>

#include "fanjian.h"
#include "files.h"

/* Bounds on what a rules file may ask of a run. */
#define FJX_LEGADO_MAX_FILE (16u << 20)   /* bytes of one rules file */
#define FJX_LEGADO_MAX_RULES 100000       /* rules in one file */
#define FJX_LEGADO_MAX_PATTERN 4096       /* bytes of one pattern */
#define FJX_LEGADO_MATCH_LIMIT 2000000u   /* pcre2_set_match_limit, per match */
#define FJX_LEGADO_DEPTH_LIMIT 10000u     /* pcre2_set_depth_limit, per match */
#define FJX_LEGADO_HEAP_LIMIT 20000u      /* pcre2_set_heap_limit, KiB per match */
#define FJX_LEGADO_DEFAULT_TIMEOUT 3000   /* ms: a rule's budget when it gives none */
#define FJX_LEGADO_MAX_LINE (1u << 20)    /* longer lines pass the rules unchanged */

/* Every Legado rule the --rules files gave: immutable once read, except for
 * each rule's time spent and whether it passed a bound (atomic), so that
 * tree mode's threads share it. */
typedef struct fjx_legado fjx_legado;

/* Whether a rules file is Legado JSON: its first byte other than white
 * space (or a UTF-8 byte order mark) is '[' or '{'. */
int fjx_legado_detect(const char *text, size_t len);

/* Adds the rules of one file (an array of rule objects, or one object) to
 * *set, creating it when NULL. Rules that are not removals, disabled, for
 * titles only, malformed or not compilable are skipped; one message on
 * stderr sums up what was skipped. `shown` names the file in messages.
 * 0, or -1 when the file cannot be used at all (reported). */
int fjx_legado_add(fjx_legado **set, const char *text, size_t len, const char *shown);
void fjx_legado_free(fjx_legado *set);

/* Applies the rules to one input as it streams: each line (without its
 * "\n" or "\r\n") loses the rules' matches; a line they leave with only
 * white space and punctuation is dropped whole. What is left goes to
 * `next`. `input` names the input in messages; `book` is its base name,
 * which scoped rules are checked against (NULL: standard input, where only
 * unscoped rules apply). With `report`, each removal is listed on stderr as
 * INPUT:LINE:COLUMN: text, and finish prints a summary line. */
typedef struct fjx_legado_stage fjx_legado_stage;

int fjx_legado_stage_new(const fjx_legado *set, const char *input, const char *book, int report,
                         fj_write_fn next, void *next_ctx, fjx_legado_stage **out);
/* 0, or -1: no memory (reported) or `next` failed (its caller reports). */
int fjx_legado_stage_feed(fjx_legado_stage *st, const char *data, size_t len);
int fjx_legado_stage_finish(fjx_legado_stage *st);
void fjx_legado_stage_free(fjx_legado_stage *st);

/* The input's line number of the `passed`-th line the stage passed on: a
 * later stage's line numbers, made the input's again. */
unsigned long long fjx_legado_stage_line(const fjx_legado_stage *st, unsigned long long passed);

/* For a document's text span (a paragraph of EPUB, HTML, Markdown,
 * subtitles): text[0..len) with the rules applied, appended to `out`, as
 * the stage would pass it on; lines left with only white space and
 * punctuation are gone, so an empty result means the whole span was
 * boilerplate. Removals are reported (with `report`) from line
 * `first_line`; no summary line: counts add up into *counts (may be NULL)
 * for the caller to print. 0, or -1 (no memory; reported). */
typedef struct fjx_legado_counts {
    unsigned long long removed, whole_lines;
} fjx_legado_counts;

int fjx_legado_apply_text(const fjx_legado *set, const char *input, const char *book, int report,
                          unsigned long long first_line, const char *text, size_t len,
                          fjx_buf *out, fjx_legado_counts *counts);

/* For one block of a document's text (docclean.c): where the rules would
 * remove text, as spans of text[0..len) in order, neither overlapping nor
 * touching (*spans malloc'd, NULL when none). The stage's rules, scopes
 * and bounds; but each rule is matched against the text as read and the
 * matches are united, where the stage applies the rules one after
 * another. `line` is for messages about a bound. A block over
 * FJX_LEGADO_MAX_LINE has none. 0, or -1 (no memory; reported). */
int fjx_legado_find(const fjx_legado *set, const char *input, const char *book,
                    unsigned long long line, const char *text, size_t len, fj_clean_span **spans,
                    size_t *count);
/* Sorts spans[0..n) and unites those that overlap (or, with `adjacent`,
 * touch); returns how many are left. */
size_t fjx_legado_merge_spans(fj_clean_span *spans, size_t n, int adjacent);
/* Whether what spans[0..n) (in order) leave of text[0..len) is only white
 * space and punctuation: the stage's test for a line dropped whole. */
int fjx_legado_leaves_blank(const fjx_legado *set, const char *text, size_t len,
                            const fj_clean_span *spans, size_t n);

#endif
