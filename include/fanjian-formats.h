/*
 * fanjian formats (libfanjian-formats): files as readers have them, on top
 * of libfanjian. The core library stays free of file formats and their
 * dependencies; this one links expat, jansson and PCRE2 and opens libzip
 * and uchardet on first use.
 *
 * Reading order:
 *   1. Shared types   fjf_buf, fjf_error, fjf_rewrite
 *   2. Formats        fjf_html_rewrite ... fjf_markdown_rewrite
 *   3. Clean-up       fjf_clean_document
 *   4. EPUB           fjf_epub_convert
 *   5. Encodings      fjf_encoding_detect, fjf_recoder_*
 *   6. Messages       fjf_display_name, fjf_display_text
 *   7. Legado rules   fjf_legado_add, fjf_legado_stage_*, fjf_legado_find
 *   8. OpenCC configs fjf_opencc_config_load
 *
 * The rule every reader and writer here keeps: bytes that are not text a
 * reader would read pass through unchanged. Each format finds the text
 * spans of a document and hands them to a fjf_text_fn; everything between
 * the spans is copied byte for byte.
 */
#ifndef FANJIAN_FORMATS_H
#define FANJIAN_FORMATS_H

#include <stddef.h>
#include <stdio.h>

#include "fanjian.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shared types ----------------------------------------------------------- */

/* A growable output buffer (files.c). */
typedef struct fjf_buf {
    char *data;
    size_t len, cap;
} fjf_buf;

int fjf_buf_append(fjf_buf *b, const char *data, size_t len); /* 0, or -1 (no memory) */
void fjf_buf_free(fjf_buf *b);

/* An error and where it was found. offset is a byte offset into the input
 * the function was given, in [0, len]: an error at the end of the input
 * (a document cut short, an empty one) is at len, also where the parser
 * reports no position (expat does not for some errors at the end of input,
 * depending on its version). FJF_NO_OFFSET when the error is about no
 * place in the input (out of memory, an argument, a limit on the whole, an
 * archive entry); callers show the offset only when it is not that. */
#define FJF_NO_OFFSET ((size_t)-1)
/* What kind of failure an fjf_error is, for a caller that says more than
 * the message (what option would help) or already knows why (its writer). */
typedef enum fjf_error_kind {
    FJF_ERR_FORMAT = 0,   /* the document's structure, a limit, anything else */
    FJF_ERR_NOMEM,        /* out of memory */
    FJF_ERR_READ,         /* reading the input failed (the message has errno's text) */
    FJF_ERR_WRITE,        /* the caller's writer failed: the caller knows why */
    FJF_ERR_DETECT,       /* no encoding decodes the input cleanly */
    FJF_ERR_DECODE,       /* the input is not valid in its encoding */
    FJF_ERR_INVALID_UTF8, /* UTF-8 input, strict: a byte that is not UTF-8 (offset) */
    FJF_ERR_CUT_UTF8,     /* UTF-8 input, strict: it ends inside a character (offset) */
    FJF_ERR_ENCODE,       /* the output encoding cannot hold a character */
    FJF_ERR_CONVERT       /* the conversion itself failed (fj_status in the message) */
} fjf_error_kind;

typedef struct fjf_error {
    size_t offset;
    char message[256];
    fjf_error_kind kind; /* fjf_error_set: FJF_ERR_FORMAT */
    /* What the message is about: an input or output name the caller gave
     * (borrowed), or NULL. Shown before it: "SUBJECT: MESSAGE"; for
     * FJF_ERR_READ, "cannot read SUBJECT: MESSAGE". */
    const char *subject;
} fjf_error;

void fjf_error_set(fjf_error *err, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Converts one span of UTF-8 text and appends the result to `out`;
 * 0 on success, -1 on failure (the callee reports). The span is always
 * whole characters and ends where the document's text ends (a tag, a
 * line of markup), so the callee may treat it as one text. */
typedef int (*fjf_text_fn)(void *ctx, const char *text, size_t len, fjf_buf *out);

/* What a rewrite changes besides text, or NULL/0 for nothing. */
/* Told of each piece of boilerplate a document's clean-up removed. `part`
 * names the EPUB entry it is in (NULL outside an EPUB); line and column are
 * in that document (bytes -> characters, from 1). Non-zero stops the
 * rewrite with an error. */
typedef int (*fjf_clean_report_fn)(void *ctx, const char *part, const fj_clean_removal *removal);

typedef struct fjf_rewrite {
    fjf_text_fn text;
    void *text_ctx;
    const char *lang;    /* BCP 47 tag (zh-TW, zh-HK, zh-CN, ja): sets lang,
                            xml:lang and dc:language where they name Chinese */
    const char *charset; /* output charset name to declare in <meta charset>,
                            <?xml encoding?> (NULL: leave declarations alone) */
    const fj_clean *clean; /* NULL, or remove site boilerplate first (docclean.c) */
    fjf_clean_report_fn report; /* NULL, or told of each removal */
    void *report_ctx;
    const char *part;           /* passed to report (epub.c sets it per entry) */
    /* With clean: Legado removals too (section 7), scopes checked against
     * `book` (the file's base name, for an EPUB the .epub's; NULL: none);
     * `input` names the document in messages. */
    const struct fjf_legado *legado;
    const char *book, *input;
} fjf_rewrite;

/* For the rewriters: append in[a..b) as it is, or through rw->text (as it
 * is when rw or rw->text is NULL). 0, or -1 with err set at offset a. */
int fjf_emit_copy(const char *in, size_t a, size_t b, fjf_buf *out, fjf_error *err);
int fjf_emit_text(const fjf_rewrite *rw, const char *in, size_t a, size_t b, fjf_buf *out,
                  fjf_error *err);

/* ---- formats ------------------------------------------------------------------ */

typedef enum fjf_format {
    FJF_TEXT = 0, /* plain text, streamed */
    FJF_HTML,     /* .html .htm: HTML, not necessarily well-formed */
    FJF_XHTML,    /* .xhtml .xht: XML, must be well-formed */
    FJF_MARKDOWN, /* .md .markdown */
    FJF_SRT,      /* .srt */
    FJF_ASS,      /* .ass .ssa */
    FJF_VTT,      /* .vtt */
    FJF_EPUB      /* .epub */
} fjf_format;

/* By name (text html xhtml markdown md srt ass ssa vtt epub); -1 if unknown. */
int fjf_format_from_name(const char *name);
/* By file name extension, case-insensitive; FJF_TEXT when none matches. */
fjf_format fjf_format_from_path(const char *path);
const char *fjf_format_name(fjf_format format);

/* Each rewrite reads in[0..len) (UTF-8), appends the rewritten document to
 * out, and returns 0, or -1 with err set (offset into `in`). A text callback
 * that fails makes the rewrite fail. With a callback that copies its text,
 * every rewrite gives back its input byte for byte. */

/* html.c: text content and the human-visible attributes (title, alt,
 * placeholder, aria-label); never tags, other attributes, comments,
 * <script>, <style>, or character references. */
int fjf_html_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                     fjf_error *err);

/* xml.c (expat): XHTML content documents and the EPUB navigation document
 * (as html, but the input must be well-formed XML); the OPF package
 * document (Dublin Core title, creator, contributor, description, subject,
 * publisher; dc:language); the NCX table of contents (its <text>). */
typedef enum fjf_xml_kind { FJF_XML_XHTML, FJF_XML_OPF, FJF_XML_NCX } fjf_xml_kind;
int fjf_xml_rewrite(fjf_xml_kind kind, const char *in, size_t len, const fjf_rewrite *rw,
                    fjf_buf *out, fjf_error *err);

/* subtitle.c: dialogue text only, never numbering, timing, styles or
 * override tags ({\an8}, <i>). */
int fjf_srt_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                    fjf_error *err);
int fjf_ass_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                    fjf_error *err);
int fjf_vtt_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                    fjf_error *err);

/* markdown.c: everything but code spans, code blocks, link destinations,
 * autolinks and the markup of inline HTML. */
int fjf_markdown_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                         fjf_error *err);

/* ---- clean-up of documents (docclean.c) ----------------------------------------------- */

/* Removes the site boilerplate of a document (rw->clean; see fj_clean_find)
 * before it is converted: whole paragraph elements, <br> lines, Markdown
 * blocks and subtitle cues that are wholly boilerplate, and the spans of
 * those that are partly. Only bytes of text are removed (with the markup of
 * an element removed whole), never inside code, scripts, styles,
 * attributes or comments; a span that crosses markup or a character
 * reference is kept. Appends in[0..len) minus the removals to out; 0, or
 * -1 with err set. The format is one of HTML, XHTML, MARKDOWN, SRT, ASS,
 * VTT; XHTML output stays well-formed. */
int fjf_clean_document(fjf_format format, const char *in, size_t len, const fjf_rewrite *rw,
                       fjf_buf *out, fjf_error *err);

/* ---- EPUB (epub.c, libzip + xml.c) ---------------------------------------------- */

typedef struct fjf_epub_limits {
    unsigned long long max_total; /* uncompressed bytes, all entries (0: 1 GiB) */
    unsigned long long max_entry; /* uncompressed bytes, one entry (0: 256 MiB) */
    unsigned max_entries;         /* entries (0: 65536) */
} fjf_epub_limits;

/* Converts the EPUB in[0..len) and writes a new EPUB to the open file
 * descriptor `out_fd` (positioned at 0, empty). Content documents, the
 * navigation document, the NCX and the OPF metadata are rewritten; every
 * other entry is copied unchanged; mimetype is written first, stored.
 * Refuses unsafe entry names (absolute, "..", backslash, NUL) and archives
 * past the limits (NULL: the defaults). With rw->clean, boilerplate is
 * removed from the content documents only: the navigation document, the
 * NCX and the OPF metadata are not cleaned (a TOC entry or a title is not a
 * site notice); rw->part names the entry for rw->report. With out_fd -1
 * it only reads: rw->text is given the text of every document it would
 * rewrite (for detection) and nothing is written or cleaned. */
int fjf_epub_convert(const char *in, size_t len, int out_fd, const fjf_rewrite *rw,
                     const fjf_epub_limits *limits, fjf_error *err);

/* ---- encodings (encoding.c, uchardet + iconv) ------------------------------------- */

/* What detection found. `name` is an iconv name: UTF-8, UTF-16LE,
 * UTF-16BE, GB18030, BIG5-HKSCS, ... */
typedef struct fjf_encoding {
    char name[32];
    size_t bom_len;     /* bytes of byte-order mark at the start (skipped) */
    const char *source; /* "bom", "utf-8", "detector", "fallback", "given" */
} fjf_encoding;

/* Detects the encoding of a file's first bytes (`complete`: they are the
 * whole file, so a sequence cut at the end is an error, not a cut). The
 * guess is one whose decoding of the sample succeeds; 0, or -1 with err
 * (nothing decodes cleanly: offset of the first bad byte under the best
 * guess). */
int fjf_encoding_detect(const char *data, size_t len, int complete, fjf_encoding *out,
                        fjf_error *err);

/* Normalises a user's encoding name (utf8, gbk, gb2312, big5, big5hkscs,
 * utf-16 ...) to the iconv name used here; NULL if iconv does not know it. */
const char *fjf_encoding_canonical(const char *name, char buf[32]);

/* A streaming recoder from one encoding to another, writing through
 * `write`. FJF_LOSSY: bytes that do not decode become U+FFFD and
 * characters the target cannot hold become '?' (or the target's own
 * replacement); without it they are an error naming the byte offset. */
enum { FJF_LOSSY = 1u << 0, FJF_WRITE_BOM = 1u << 1 };
typedef struct fjf_recoder fjf_recoder;
int fjf_recoder_new(const char *from, const char *to, unsigned flags, fj_write_fn write,
                    void *write_ctx, fjf_recoder **out, fjf_error *err);
/* 0, or -1 with err (offset: bytes of input fed before the bad byte). */
int fjf_recoder_feed(fjf_recoder *r, const char *data, size_t len, fjf_error *err);
int fjf_recoder_finish(fjf_recoder *r, fjf_error *err);
/* Bytes replaced under FJF_LOSSY so far (for a warning). */
unsigned long long fjf_recoder_replaced(const fjf_recoder *r);
void fjf_recoder_free(fjf_recoder *r);

/* ---- messages: names made safe to print (display.c) ------------------------------ */

/* Room for most names as shown; longer ones end in "...". */
#define FJF_DISPLAY_MAX 1024

/* Writes `name` into buf[0..size) as a message may show it: printable
 * UTF-8 as it is; control characters (C0, DEL, C1), bidirectional
 * controls, line and paragraph separators and bytes that are not UTF-8 as
 * escapes (\n, \t, \x1b, \xff, \u202e), so that a hostile name cannot move the cursor, recolour the
 * terminal, reorder text or add a line. Returns buf. */
const char *fjf_display_name(const char *name, char *buf, size_t size);

/* Writes text[0..len) to f escaped as fjf_display_name does, whatever its
 * length (NUL as \x00): for lines of a file quoted in a message. */
void fjf_display_text(FILE *f, const char *text, size_t len);

/* ---- Legado rules (legado.c, jansson + PCRE2) ---------------------------------- */

/* Legado (阅读) 替换净化 replacement rules, read from JSON and
 * applied as removals, line by line, before the built-in clean-up; in
 * documents, as spans of each block (fjf_legado_find, docclean.c). docs/clean-rules.md describes which rules are used and the bounds. */
/* Bounds on what a rules file may ask of a run. */
#define FJF_LEGADO_MAX_FILE (16u << 20)   /* bytes of one rules file */
#define FJF_LEGADO_MAX_RULES 100000       /* rules in one file */
#define FJF_LEGADO_MAX_PATTERN 4096       /* bytes of one pattern */
#define FJF_LEGADO_MATCH_LIMIT 2000000u   /* pcre2_set_match_limit, per match */
#define FJF_LEGADO_DEPTH_LIMIT 10000u     /* pcre2_set_depth_limit, per match */
#define FJF_LEGADO_HEAP_LIMIT 20000u      /* pcre2_set_heap_limit, KiB per match */
#define FJF_LEGADO_DEFAULT_TIMEOUT 3000   /* ms: a rule's budget when it gives none */
#define FJF_LEGADO_MAX_LINE (1u << 20)    /* longer lines pass the rules unchanged */

/* Every Legado rule the --rules files gave: immutable once read, except for
 * each rule's time spent and whether it passed a bound (atomic), so that
 * tree mode's threads share it. */
typedef struct fjf_legado fjf_legado;

/* Whether a rules file is Legado JSON: its first byte other than white
 * space (or a UTF-8 byte order mark) is '[' or '{'. */
int fjf_legado_detect(const char *text, size_t len);

/* Adds the rules of one file (an array of rule objects, or one object) to
 * *set, creating it when NULL. Rules that are not removals, disabled, for
 * titles only, malformed or not compilable are skipped; one message on
 * stderr sums up what was skipped. `shown` names the file in messages.
 * 0, or -1 when the file cannot be used at all (reported). */
int fjf_legado_add(fjf_legado **set, const char *text, size_t len, const char *shown);
void fjf_legado_free(fjf_legado *set);

/* Applies the rules to one input as it streams: each line (without its
 * "\n" or "\r\n") loses the rules' matches; a line they leave with only
 * white space and punctuation is dropped whole. What is left goes to
 * `next`. `input` names the input in messages; `book` is its base name,
 * which scoped rules are checked against (NULL: standard input, where only
 * unscoped rules apply). With `report`, each removal is listed on stderr as
 * INPUT:LINE:COLUMN: text, and finish prints a summary line. */
typedef struct fjf_legado_stage fjf_legado_stage;

int fjf_legado_stage_new(const fjf_legado *set, const char *input, const char *book, int report,
                         fj_write_fn next, void *next_ctx, fjf_legado_stage **out);
/* 0, or -1: no memory (reported) or `next` failed (its caller reports). */
int fjf_legado_stage_feed(fjf_legado_stage *st, const char *data, size_t len);
int fjf_legado_stage_finish(fjf_legado_stage *st);
void fjf_legado_stage_free(fjf_legado_stage *st);

/* The input's line number of the `passed`-th line the stage passed on: a
 * later stage's line numbers, made the input's again. */
unsigned long long fjf_legado_stage_line(const fjf_legado_stage *st, unsigned long long passed);

/* For a document's text span (a paragraph of EPUB, HTML, Markdown,
 * subtitles): text[0..len) with the rules applied, appended to `out`, as
 * the stage would pass it on; lines left with only white space and
 * punctuation are gone, so an empty result means the whole span was
 * boilerplate. Removals are reported (with `report`) from line
 * `first_line`; no summary line: counts add up into *counts (may be NULL)
 * for the caller to print. 0, or -1 (no memory; reported). */
typedef struct fjf_legado_counts {
    unsigned long long removed, whole_lines;
} fjf_legado_counts;

int fjf_legado_apply_text(const fjf_legado *set, const char *input, const char *book, int report,
                          unsigned long long first_line, const char *text, size_t len,
                          fjf_buf *out, fjf_legado_counts *counts);

/* For one block of a document's text (docclean.c): where the rules would
 * remove text, as spans of text[0..len) in order, neither overlapping nor
 * touching (*spans malloc'd, NULL when none). The stage's rules, scopes
 * and bounds; but each rule is matched against the text as read and the
 * matches are united, where the stage applies the rules one after
 * another. `line` is for messages about a bound. A block over
 * FJF_LEGADO_MAX_LINE has none. 0, or -1 (no memory; reported). */
int fjf_legado_find(const fjf_legado *set, const char *input, const char *book,
                    unsigned long long line, const char *text, size_t len, fj_clean_span **spans,
                    size_t *count);
/* Sorts spans[0..n) and unites those that overlap (or, with `adjacent`,
 * touch); returns how many are left. */
size_t fjf_legado_merge_spans(fj_clean_span *spans, size_t n, int adjacent);
/* Whether what spans[0..n) (in order) leave of text[0..len) is only white
 * space and punctuation: the stage's test for a line dropped whole. */
int fjf_legado_leaves_blank(const fjf_legado *set, const char *text, size_t len,
                            const fj_clean_span *spans, size_t n);

/* ---- files: one input through the whole conversion (file.c) ---------------------- */

/* What to do with every input; immutable while threads convert. */
typedef struct fjf_settings {
    const fj_converter *conv; /* NULL: no script conversion (clean-up only) */
    const fj_clean *clean;    /* NULL: keep every line */
    const fjf_legado *legado; /* Legado removals before clean (with clean in documents), or NULL */
    int quotes;               /* fj_quotes, after conversion */
    unsigned punct_flags;     /* FJ_PUNCT_* */
    const char *from_encoding; /* iconv name, or NULL: detect each input */
    const char *to_encoding;   /* iconv name, or NULL: UTF-8 */
    unsigned recode_flags;     /* FJF_LOSSY, FJF_WRITE_BOM */
    const char *lang;          /* language tag for markup (zh-TW ...), or NULL */
    fjf_epub_limits limits;
    /* NULL, or told of each removal clean-up makes: `input` as the call
     * named it, `part` the EPUB entry (NULL elsewhere), lines and columns
     * the input's (lines Legado rules dropped count). Non-zero stops the
     * conversion. Legado rules list their own removals on stderr when it is
     * set. */
    int (*report)(void *ctx, const char *input, const char *part, const fj_clean_removal *removal);
    void *report_ctx;
    /* Text from a file descriptor: before a read that would wait (a pipe
     * or terminal with nothing more ready), what has arrived is converted
     * and written, so that each line comes out as it comes in. 0: reads
     * fill whole chunks first. */
    int write_when_idle;
    /* Text: threads converting one input at once (fjf_parallel); 0 or 1:
     * one. The output is the same. */
    unsigned jobs;
} fjf_settings;

/* One text converted on several threads: fed in pieces, cut where
 * fj_independent_prefix allows into pieces of at least `block` bytes
 * (0: FJF_PARALLEL_BLOCK), converted by `jobs` threads sharing `conv` (the
 * feeding one among them, while it waits for a piece to write), and
 * written through `write` in order: the bytes fj_stream would write. With
 * one job, or a converter that allows no cut, it is an fj_stream; so it
 * becomes one after 16 blocks with nowhere to cut. Memory: about two
 * pieces a thread (blocks of 256 KiB by default). */
#define FJF_PARALLEL_BLOCK (1u << 18)
typedef struct fjf_parallel fjf_parallel;
fj_status fjf_parallel_new(const fj_converter *conv, unsigned jobs, size_t block, fj_write_fn write,
                           void *write_ctx, fjf_parallel **out);
fj_status fjf_parallel_feed(fjf_parallel *p, const char *data, size_t len);
fj_status fjf_parallel_finish(fjf_parallel *p);
void fjf_parallel_free(fjf_parallel *p);

/* What one input came to, for the caller to tell. */
typedef struct fjf_file_stats {
    unsigned long long bytes_read;
    unsigned long long replaced_in;  /* bytes not valid in `encoding`, now U+FFFD (FJF_LOSSY) */
    char encoding[32];               /* the input's encoding, when it was decoded */
    unsigned long long replaced_out; /* characters the output encoding has no form for, now '?' */
    unsigned long long removed_spans, removed_wholes, removed_chars; /* clean-up, with report */
} fjf_file_stats;

/* Text, streamed: a run of inputs into one output (`output` names it in
 * messages), each read from a file descriptor to its end and decoded as
 * detected (or as given), through the stages to `write`. Every function
 * returns 0, or -1 with err (its message names the input or the output;
 * FJF_ERR_WRITE when `write` failed, whose caller knows why). */
typedef struct fjf_text fjf_text;
int fjf_text_begin(const fjf_settings *s, const char *output, fj_write_fn write, void *write_ctx,
                   fjf_text **out, fjf_error *err);
/* stats may be NULL. */
int fjf_text_input(fjf_text *t, int fd, const char *name, fjf_file_stats *stats, fjf_error *err);
/* The same for an input in memory, data[0..len). */
int fjf_text_input_memory(fjf_text *t, const char *data, size_t len, const char *name,
                          fjf_file_stats *stats, fjf_error *err);
/* Flushes; stats (may be NULL) gets replaced_out. */
int fjf_text_end(fjf_text *t, fjf_file_stats *stats, fjf_error *err);
void fjf_text_free(fjf_text *t);

/* A whole document, data[0..len), converted as `format` and written to
 * `write`; an EPUB is written to the empty file `out_fd` instead (and
 * read from data as the archive's bytes). `name` names it in messages and
 * is the book Legado scopes are checked against (its base name; "standard
 * input": none). stats may be NULL. 0, or -1 with err. */
int fjf_document_convert(const fjf_settings *s, fjf_format format, const char *data, size_t len,
                         const char *name, fj_write_fn write, void *write_ctx, int out_fd,
                         fjf_file_stats *stats, fjf_error *err);
/* The most bytes of a document fjf_document_convert is given (0: none). */
unsigned long long fjf_document_limit(const fjf_settings *s, fjf_format format);

/* Hands the text of the document in[0..len) to `fn`, span by span, as the
 * conversion would see it, and writes nothing (for detection). `in` is
 * UTF-8 (fjf_decode_whole), an EPUB the archive's bytes. 0, or -1 with err. */
int fjf_document_text(const fjf_settings *s, fjf_format format, const char *in, size_t len,
                      fjf_text_fn fn, void *ctx, fjf_error *err);

/* Decodes data[0..len) (a whole file) to UTF-8 as s->from_encoding says or
 * as detected; *utf8 is `data` itself when it already is UTF-8 (else
 * free() it). stats (may be NULL) gets replaced_in and encoding. 0, or -1
 * with err naming `name`. */
int fjf_decode_whole(const fjf_settings *s, const char *data, size_t len, const char *name,
                     char **utf8, size_t *utf8_len, fjf_encoding *enc, fjf_file_stats *stats,
                     fjf_error *err);

/* Converts a file name (one path component) with s->conv, without
 * typography; a new string (free()), or NULL (no memory). */
char *fjf_convert_name(const fjf_settings *s, const char *name);

/* User phrases and protected terms read from files, for fj_options'
 * phrases/phrase_count and protect/protect_count. Zero it before use. */
typedef struct fjf_user_entries {
    fj_phrase *phrases;
    size_t phrase_count, phrase_cap;
    char **protect;
    size_t protect_count, protect_cap;
    char **owned; /* the phrases' strings */
    size_t owned_count, owned_cap;
} fjf_user_entries;

/* Adds the entries of the file at `path`: with `protect` 0, phrases in
 * OpenCC's text dictionary format (KEY<TAB>VALUE, further values after a
 * space ignored); with 1, protected terms, one a line. Empty lines are
 * skipped. 0, or -1 with `err` naming the file and line. */
int fjf_user_entries_read(fjf_user_entries *u, const char *path, int protect, fjf_error *err);
void fjf_user_entries_free(fjf_user_entries *u);

/* One fj_inspect choice in text[0..len) (the text inspected) as a JSON
 * object on one line: file (when `name` is not NULL), line, column,
 * offset, source, chosen, alternatives [{form, margin}], and the line's
 * text before and after it (up to 8 characters each). A new string
 * (free()), or NULL when out of memory. */
char *fjf_choice_json(const fj_choice *choice, const char *text, size_t len, const char *name);

/* Reads a whole file descriptor into a new buffer (free(); errno on
 * failure). At most `limit` bytes (0: no limit); more is E2BIG. */
char *fjf_read_all(int fd, size_t *len, unsigned long long limit);

/* ---- OpenCC configs (opencc_config.c) ------------------------------------------ */

/* What `-c CONFIG` means when CONFIG names a config file (it has a '/' or
 * ends in ".json", and a regular file is there). A stock OpenCC config,
 * told by its content (normalization, segmentation and chain; the name
 * field aside) from data/opencc-stock-configs.tsv, is that profile of
 * `stock`. Any other is loaded as OpenCC 1.4.2 loads it: its chain, its
 * "text" dictionaries (found in the config's directory, then in
 * paths[0..path_count), then in /usr/share/opencc) and OpenCC's stock
 * dictionaries named as .ocd2 (taken from `stock`'s image, OpenCC 1.4.2's
 * data), compiled into an image of its own with one profile, which the
 * compatible engine runs (OpenCC's maximum matching).
 * Returns 0 with *out NULL when CONFIG is no such file (open it as a
 * profile name), 0 with *out set, or -1 with err, whose message names the
 * file (and line) that cannot be honoured: malformed JSON or dictionary
 * line, a missing file, an unknown dictionary type, a binary dictionary
 * that is not a stock one. `stock` must outlive the result, and the
 * result every converter opened on its dictionary. */
typedef struct fjf_opencc_config fjf_opencc_config;
int fjf_opencc_config_load(const fj_dict *stock, const char *config, const char *const *paths,
                           size_t path_count, fjf_opencc_config **out, fjf_error *err);
/* The dictionary and profile to open the converter with (`stock` and the
 * profile's name for a stock config). */
const fj_dict *fjf_opencc_config_dict(const fjf_opencc_config *config);
const char *fjf_opencc_config_profile(const fjf_opencc_config *config);
/* 1 for a custom config (its own image), 0 for a stock one. */
int fjf_opencc_config_custom(const fjf_opencc_config *config);
void fjf_opencc_config_free(fjf_opencc_config *config);

#ifdef __cplusplus
}
#endif

#endif /* FANJIAN_FORMATS_H */
