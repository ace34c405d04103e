/* fanjian formats: what the formats share to remove boilerplate from a
 * document (fjf_clean_document in fanjian-formats.h). Private to formats/.
 *
 * A format's walker finds its blocks (a paragraph element, a <br> line, a
 * Markdown paragraph, a cue) and hands each block's text to the cleaner
 * piece by piece: raw text (input bytes as they are) or decoded text (a
 * character reference: judged, never cut into). fjfc_judge asks
 * fj_clean_find about the block and cuts the spans that fall inside one
 * raw piece; a block that is wholly boilerplate is left to the walker,
 * which knows what markup goes with it (fjfc_cut_whole). The output is the
 * input minus the cuts. */
#ifndef FANJIAN_FORMATS_DOCCLEAN_H
#define FANJIAN_FORMATS_DOCCLEAN_H

#include "fanjian-formats.h"

typedef struct fjfc_piece {
    size_t text_at, in_at, len;
    int raw; /* 1: as in the input; 2: so, but cut whole or not at all;
                0: decoded, so text and input differ (never cut) */
} fjfc_piece;

typedef struct fjfc_cut {
    size_t start, end;
} fjfc_cut;

typedef struct fjf_cleaner {
    const fjf_rewrite *rw;
    const char *in;
    size_t len;
    fjf_error *err;
    fjfc_cut *cuts;
    size_t ncuts, capcuts;
    /* the block being read */
    fjf_buf text;
    fjfc_piece *pieces;
    size_t npieces, cappieces;
    /* line and column of in[pos_at] */
    size_t pos_at;
    unsigned long long line, column;
} fjf_cleaner;

void fjfc_init(fjf_cleaner *c, const char *in, size_t len, const fjf_rewrite *rw, fjf_error *err);
void fjfc_free(fjf_cleaner *c);
void fjfc_block_reset(fjf_cleaner *c);
/* The block's text goes on with in[a..b) as it is. 0, or -1 (no memory). */
int fjfc_add_raw(fjf_cleaner *c, size_t a, size_t b);
/* ... with in[a..b), which a span removes whole or not at all (a URL). */
int fjfc_add_atomic(fjf_cleaner *c, size_t a, size_t b);
/* ... with text[0..n), which is what in[a..b) means (a character reference). */
int fjfc_add_decoded(fjf_cleaner *c, size_t a, size_t b, const char *text, size_t n);
/* Judges the block: cuts its spans when it is partly boilerplate; sets
 * *whole (and cuts nothing) when it is wholly. 0, or -1 with err set. */
int fjfc_judge(fjf_cleaner *c, int *whole);
/* Removes in[a..b) for the whole block just judged (reported as the
 * block's text). 0, or -1 with err set. */
int fjfc_cut_whole(fjf_cleaner *c, size_t a, size_t b);
/* The start of the line `at` is on when only blanks come before it there;
 * the end of the line after `at` (past its line ending) when only blanks
 * come after it; else FJF_NO_OFFSET. So a block alone on its lines goes
 * with them, and leaves no blank line. */
size_t fjfc_line_start(const char *in, size_t at);
size_t fjfc_line_end(const char *in, size_t len, size_t at);
/* Appends the input minus the cuts. 0, or -1 with err set. */
int fjfc_output(const fjf_cleaner *c, fjf_buf *out);

/* The walkers (html.c, subtitle.c, markdown.c): 0, or -1 with err set. */
int fjf_html_clean_blocks(fjf_cleaner *c, int xml);
int fjf_srt_clean_blocks(fjf_cleaner *c, int vtt);
int fjf_ass_clean_blocks(fjf_cleaner *c);
int fjf_markdown_clean_blocks(fjf_cleaner *c);

/* Cleans, then runs `rewrite` on what is left with rw minus the clean-up.
 * An error the rewrite finds in the cleaned text is looked for again in
 * the input, so its offset is the input's. */
typedef int (*fjf_rewrite_fn)(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                              fjf_error *err);
int fjf_clean_then_rewrite(fjf_format format, const char *in, size_t len, const fjf_rewrite *rw,
                           fjf_buf *out, fjf_error *err, fjf_rewrite_fn rewrite);

#endif
