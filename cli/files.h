/* fanjian CLI: reading and writing files as readers have them.
 *
 * Internal to the command-line tool (and its tests and fuzz targets); the
 * library itself stays free of file formats and their dependencies.
 *
 * The rule every reader and writer here keeps: bytes that are not text a
 * reader would read pass through unchanged. Each format finds the text
 * spans of a document and hands them to a fjx_text_fn; everything between
 * the spans is copied byte for byte.
 */
#ifndef FANJIAN_CLI_FILES_H
#define FANJIAN_CLI_FILES_H

#include <stddef.h>

#include "fanjian.h"

/* ---- shared types ----------------------------------------------------------- */

/* A growable output buffer (files.c). */
typedef struct fjx_buf {
    char *data;
    size_t len, cap;
} fjx_buf;

int fjx_buf_append(fjx_buf *b, const char *data, size_t len); /* 0, or -1 (no memory) */
void fjx_buf_free(fjx_buf *b);

/* An error and where it was found. offset is a byte offset into the input
 * the function was given, in [0, len]: an error at the end of the input
 * (a document cut short, an empty one) is at len, also where the parser
 * reports no position (expat does not for some errors at the end of input,
 * depending on its version). FJX_NO_OFFSET when the error is about no
 * place in the input (out of memory, an argument, a limit on the whole, an
 * archive entry); callers show the offset only when it is not that. */
#define FJX_NO_OFFSET ((size_t)-1)
typedef struct fjx_error {
    size_t offset;
    char message[256];
} fjx_error;

void fjx_error_set(fjx_error *err, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Converts one span of UTF-8 text and appends the result to `out`;
 * 0 on success, -1 on failure (the callee reports). The span is always
 * whole characters and ends where the document's text ends (a tag, a
 * line of markup), so the callee may treat it as one text. */
typedef int (*fjx_text_fn)(void *ctx, const char *text, size_t len, fjx_buf *out);

/* What a rewrite changes besides text, or NULL/0 for nothing. */
/* Told of each piece of boilerplate a document's clean-up removed. `part`
 * names the EPUB entry it is in (NULL outside an EPUB); line and column are
 * in that document (bytes -> characters, from 1). Non-zero stops the
 * rewrite with an error. */
typedef int (*fjx_clean_report_fn)(void *ctx, const char *part, const fj_clean_removal *removal);

typedef struct fjx_rewrite {
    fjx_text_fn text;
    void *text_ctx;
    const char *lang;    /* BCP 47 tag (zh-TW, zh-HK, zh-CN, ja): sets lang,
                            xml:lang and dc:language where they name Chinese */
    const char *charset; /* output charset name to declare in <meta charset>,
                            <?xml encoding?> (NULL: leave declarations alone) */
    const fj_clean *clean; /* NULL, or remove site boilerplate first (docclean.c) */
    fjx_clean_report_fn report; /* NULL, or told of each removal */
    void *report_ctx;
    const char *part;           /* passed to report (epub.c sets it per entry) */
    /* With clean: Legado removals too (legado.h), scopes checked against
     * `book` (the file's base name, for an EPUB the .epub's; NULL: none);
     * `input` names the document in messages. */
    const struct fjx_legado *legado;
    const char *book, *input;
} fjx_rewrite;

/* For the rewriters: append in[a..b) as it is, or through rw->text (as it
 * is when rw or rw->text is NULL). 0, or -1 with err set at offset a. */
int fjx_emit_copy(const char *in, size_t a, size_t b, fjx_buf *out, fjx_error *err);
int fjx_emit_text(const fjx_rewrite *rw, const char *in, size_t a, size_t b, fjx_buf *out,
                  fjx_error *err);

/* ---- formats ------------------------------------------------------------------ */

typedef enum fjx_format {
    FJX_TEXT = 0, /* plain text, streamed */
    FJX_HTML,     /* .html .htm: HTML, not necessarily well-formed */
    FJX_XHTML,    /* .xhtml .xht: XML, must be well-formed */
    FJX_MARKDOWN, /* .md .markdown */
    FJX_SRT,      /* .srt */
    FJX_ASS,      /* .ass .ssa */
    FJX_VTT,      /* .vtt */
    FJX_EPUB      /* .epub */
} fjx_format;

/* By name (text html xhtml markdown md srt ass ssa vtt epub); -1 if unknown. */
int fjx_format_from_name(const char *name);
/* By file name extension, case-insensitive; FJX_TEXT when none matches. */
fjx_format fjx_format_from_path(const char *path);
const char *fjx_format_name(fjx_format format);

/* Each rewrite reads in[0..len) (UTF-8), appends the rewritten document to
 * out, and returns 0, or -1 with err set (offset into `in`). A text callback
 * that fails makes the rewrite fail. With a callback that copies its text,
 * every rewrite gives back its input byte for byte. */

/* html.c: text content and the human-visible attributes (title, alt,
 * placeholder, aria-label); never tags, other attributes, comments,
 * <script>, <style>, or character references. */
int fjx_html_rewrite(const char *in, size_t len, const fjx_rewrite *rw, fjx_buf *out,
                     fjx_error *err);

/* xml.c (expat): XHTML content documents and the EPUB navigation document
 * (as html, but the input must be well-formed XML); the OPF package
 * document (Dublin Core title, creator, contributor, description, subject,
 * publisher; dc:language); the NCX table of contents (its <text>). */
typedef enum fjx_xml_kind { FJX_XML_XHTML, FJX_XML_OPF, FJX_XML_NCX } fjx_xml_kind;
int fjx_xml_rewrite(fjx_xml_kind kind, const char *in, size_t len, const fjx_rewrite *rw,
                    fjx_buf *out, fjx_error *err);

/* subtitle.c: dialogue text only, never numbering, timing, styles or
 * override tags ({\an8}, <i>). */
int fjx_srt_rewrite(const char *in, size_t len, const fjx_rewrite *rw, fjx_buf *out,
                    fjx_error *err);
int fjx_ass_rewrite(const char *in, size_t len, const fjx_rewrite *rw, fjx_buf *out,
                    fjx_error *err);
int fjx_vtt_rewrite(const char *in, size_t len, const fjx_rewrite *rw, fjx_buf *out,
                    fjx_error *err);

/* markdown.c: everything but code spans, code blocks, link destinations,
 * autolinks and the markup of inline HTML. */
int fjx_markdown_rewrite(const char *in, size_t len, const fjx_rewrite *rw, fjx_buf *out,
                         fjx_error *err);

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
int fjx_clean_document(fjx_format format, const char *in, size_t len, const fjx_rewrite *rw,
                       fjx_buf *out, fjx_error *err);

/* ---- EPUB (epub.c, libzip + xml.c) ---------------------------------------------- */

typedef struct fjx_epub_limits {
    unsigned long long max_total; /* uncompressed bytes, all entries (0: 1 GiB) */
    unsigned long long max_entry; /* uncompressed bytes, one entry (0: 256 MiB) */
    unsigned max_entries;         /* entries (0: 65536) */
} fjx_epub_limits;

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
int fjx_epub_convert(const char *in, size_t len, int out_fd, const fjx_rewrite *rw,
                     const fjx_epub_limits *limits, fjx_error *err);

/* ---- encodings (encoding.c, uchardet + iconv) ------------------------------------- */

/* What detection found. `name` is an iconv name: UTF-8, UTF-16LE,
 * UTF-16BE, GB18030, BIG5-HKSCS, ... */
typedef struct fjx_encoding {
    char name[32];
    size_t bom_len;     /* bytes of byte-order mark at the start (skipped) */
    const char *source; /* "bom", "utf-8", "detector", "fallback", "given" */
} fjx_encoding;

/* Detects the encoding of a file's first bytes (`complete`: they are the
 * whole file, so a sequence cut at the end is an error, not a cut). The
 * guess is one whose decoding of the sample succeeds; 0, or -1 with err
 * (nothing decodes cleanly: offset of the first bad byte under the best
 * guess). */
int fjx_encoding_detect(const char *data, size_t len, int complete, fjx_encoding *out,
                        fjx_error *err);

/* Normalises a user's encoding name (utf8, gbk, gb2312, big5, big5hkscs,
 * utf-16 ...) to the iconv name used here; NULL if iconv does not know it. */
const char *fjx_encoding_canonical(const char *name, char buf[32]);

/* A streaming recoder from one encoding to another, writing through
 * `write`. FJX_LOSSY: bytes that do not decode become U+FFFD and
 * characters the target cannot hold become '?' (or the target's own
 * replacement); without it they are an error naming the byte offset. */
enum { FJX_LOSSY = 1u << 0, FJX_WRITE_BOM = 1u << 1 };
typedef struct fjx_recoder fjx_recoder;
int fjx_recoder_new(const char *from, const char *to, unsigned flags, fj_write_fn write,
                    void *write_ctx, fjx_recoder **out, fjx_error *err);
/* 0, or -1 with err (offset: bytes of input fed before the bad byte). */
int fjx_recoder_feed(fjx_recoder *r, const char *data, size_t len, fjx_error *err);
int fjx_recoder_finish(fjx_recoder *r, fjx_error *err);
/* Bytes replaced under FJX_LOSSY so far (for a warning). */
unsigned long long fjx_recoder_replaced(const fjx_recoder *r);
void fjx_recoder_free(fjx_recoder *r);

#endif
