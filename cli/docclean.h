/* fanjian CLI: what the formats share to remove boilerplate from a
 * document (fjx_clean_document in files.h). Private to cli/.
 *
 * A format's walker finds its blocks (a paragraph element, a <br> line, a
 * Markdown paragraph, a cue) and hands each block's text to the cleaner
 * piece by piece: raw text (input bytes as they are) or decoded text (a
 * character reference: judged, never cut into). fjxc_judge asks
 * fj_clean_find about the block and cuts the spans that fall inside one
 * raw piece; a block that is wholly boilerplate is left to the walker,
 * which knows what markup goes with it (fjxc_cut_whole). The output is the
 * input minus the cuts. */
#ifndef FANJIAN_CLI_DOCCLEAN_H
#define FANJIAN_CLI_DOCCLEAN_H

#include "files.h"

typedef struct fjxc_piece {
    size_t text_at, in_at, len;
    int raw; /* 1: as in the input; 2: so, but cut whole or not at all;
                0: decoded, so text and input differ (never cut) */
} fjxc_piece;

typedef struct fjxc_cut {
    size_t start, end;
} fjxc_cut;

typedef struct fjx_cleaner {
    const fjx_rewrite *rw;
    const char *in;
    size_t len;
    fjx_error *err;
    fjxc_cut *cuts;
    size_t ncuts, capcuts;
    /* the block being read */
    fjx_buf text;
    fjxc_piece *pieces;
    size_t npieces, cappieces;
    /* line and column of in[pos_at] */
    size_t pos_at;
    unsigned long long line, column;
} fjx_cleaner;

void fjxc_init(fjx_cleaner *c, const char *in, size_t len, const fjx_rewrite *rw, fjx_error *err);
void fjxc_free(fjx_cleaner *c);
void fjxc_block_reset(fjx_cleaner *c);
/* The block's text goes on with in[a..b) as it is. 0, or -1 (no memory). */
int fjxc_add_raw(fjx_cleaner *c, size_t a, size_t b);
/* ... with in[a..b), which a span removes whole or not at all (a URL). */
int fjxc_add_atomic(fjx_cleaner *c, size_t a, size_t b);
/* ... with text[0..n), which is what in[a..b) means (a character reference). */
int fjxc_add_decoded(fjx_cleaner *c, size_t a, size_t b, const char *text, size_t n);
/* Judges the block: cuts its spans when it is partly boilerplate; sets
 * *whole (and cuts nothing) when it is wholly. 0, or -1 with err set. */
int fjxc_judge(fjx_cleaner *c, int *whole);
/* Removes in[a..b) for the whole block just judged (reported as the
 * block's text). 0, or -1 with err set. */
int fjxc_cut_whole(fjx_cleaner *c, size_t a, size_t b);
/* The start of the line `at` is on when only blanks come before it there;
 * the end of the line after `at` (past its line ending) when only blanks
 * come after it; else FJX_NO_OFFSET. So a block alone on its lines goes
 * with them, and leaves no blank line. */
size_t fjxc_line_start(const char *in, size_t at);
size_t fjxc_line_end(const char *in, size_t len, size_t at);
/* Appends the input minus the cuts. 0, or -1 with err set. */
int fjxc_output(const fjx_cleaner *c, fjx_buf *out);

/* The walkers (html.c, subtitle.c, markdown.c): 0, or -1 with err set. */
int fjx_html_clean_blocks(fjx_cleaner *c, int xml);
int fjx_srt_clean_blocks(fjx_cleaner *c, int vtt);
int fjx_ass_clean_blocks(fjx_cleaner *c);
int fjx_markdown_clean_blocks(fjx_cleaner *c);

/* Cleans, then runs `rewrite` on what is left with rw minus the clean-up.
 * An error the rewrite finds in the cleaned text is looked for again in
 * the input, so its offset is the input's. */
typedef int (*fjx_rewrite_fn)(const char *in, size_t len, const fjx_rewrite *rw, fjx_buf *out,
                              fjx_error *err);
int fjx_clean_then_rewrite(fjx_format format, const char *in, size_t len, const fjx_rewrite *rw,
                           fjx_buf *out, fjx_error *err, fjx_rewrite_fn rewrite);

#endif
