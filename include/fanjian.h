/*
 * fanjian — Chinese script conversion (Simplified, Traditional, Taiwan,
 * Hong Kong and Japanese kanji forms).
 *
 * Reading order:
 *   1. Errors        fj_status, fj_error, fj_strerror
 *   2. Memory        fj_allocator
 *   3. Dictionary    fj_dict_open / fj_dict_close
 *   4. Converter     fj_converter_open / fj_converter_open_options / fj_converter_close
 *   5. One-shot      fj_convert, fj_convert_alloc, fj_free
 *   6. Streaming     fj_stream_new / fj_stream_feed / fj_stream_finish / fj_stream_free,
 *                    fj_independent_prefix (pieces for several threads)
 *   6b. Inspection   fj_inspect: where the model chose a form, for proofreading
 *   7. Detection     fj_detect, fj_script_name
 *   8. Clean-up      fj_clean_open / fj_clean_find / fj_clean_stream_*: site boilerplate
 *
 * Text is UTF-8 in and UTF-8 out. Bytes that are not valid UTF-8 (including
 * NUL, lone surrogates and truncated sequences) are never converted: they are
 * copied to the output unchanged, as is everything that is not Han text the
 * profile converts (a converter opened with FJ_UTF8_STRICT rejects them
 * instead).
 *
 * Thread safety: there is no global state. An opened fj_dict and the
 * fj_converters made from it are immutable and may be shared by any number of
 * threads. An fj_stream belongs to one thread at a time.
 *
 * Ownership: what fj_X_open gives (a dictionary, a converter, clean-up
 * rules) is read-only once open, may be shared, and is released with
 * fj_X_close; what fj_X_new gives (a stream) holds changing state, belongs
 * to one caller, and is released with fj_X_free. Both take NULL as a no-op.
 * Output a function allocates (fj_convert_alloc) is released with fj_free
 * on the converter that made it. Strings a handle returns belong to it and
 * stay valid until it is closed.
 *
 * Structs that may grow start with `size_t size`, which the caller sets to
 * sizeof the struct it was compiled with (fj_dict_options, fj_dict_info_rec,
 * fj_dict_source, fj_options, fj_detection, fj_profile_info); the library
 * reads and writes no field past it, and a size too small for the first
 * release's fields is FJ_ERR_INVALID_ARGUMENT. Fixed for the 1.x series,
 * without a size: fj_error, fj_allocator, and the elements of arrays
 * (fj_clean_rules, fj_clean_span, fj_script_span); fj_clean_removal is the
 * library's and only read by callbacks.
 */
#ifndef FANJIAN_H
#define FANJIAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header. FJ_VERSION_NUMBER grows with every release:
 * 0xMMmmpp (major, minor, patch), so 0.1.0 is 0x000100. */
#define FJ_VERSION_MAJOR 0
#define FJ_VERSION_MINOR 1
#define FJ_VERSION_PATCH 0
#define FJ_VERSION_NUMBER (FJ_VERSION_MAJOR << 16 | FJ_VERSION_MINOR << 8 | FJ_VERSION_PATCH)
#define FJ_VERSION_STRING "0.1.0"

/* ---- 1. Errors ---------------------------------------------------------- */

typedef enum fj_status {
    FJ_OK = 0,
    FJ_ERR_INVALID_ARGUMENT,  /* a NULL pointer or a bad flag */
    FJ_ERR_NOMEM,             /* the allocator returned NULL */
    FJ_ERR_IO,                /* the dictionary file could not be opened or mapped */
    FJ_ERR_DICT_FORMAT,       /* not a fanjian dictionary, or its structure is damaged */
    FJ_ERR_DICT_VERSION,      /* a dictionary of an unsupported format version */
    FJ_ERR_DICT_CHECKSUM,     /* the dictionary's bytes do not match its checksum */
    FJ_ERR_UNKNOWN_PROFILE,   /* no such conversion profile */
    FJ_ERR_BUFFER_TOO_SMALL,  /* the output did not fit; the required size is reported */
    FJ_ERR_STREAM_STATE,      /* feed or finish on a finished stream */
    FJ_ERR_CALLBACK,          /* the caller's write callback reported failure */
    FJ_ERR_RULES,             /* a clean rules text is malformed (fj_clean_open) */
    FJ_ERR_INVALID_UTF8       /* input that is not UTF-8, under FJ_UTF8_STRICT */
} fj_status;

/* Details of a failure. `offset` is a byte position: into the dictionary
 * file for dictionary errors, to the start of the bad line for rules
 * errors, to the first byte that is not UTF-8 for FJ_ERR_INVALID_UTF8,
 * otherwise 0. `message` is always
 * NUL-terminated and names what went wrong. */
typedef struct fj_error {
    fj_status code;
    size_t offset;
    char message[160];
} fj_error;

/* A static, human-readable description of a status code. Never NULL. */
const char *fj_strerror(fj_status status);

/* The library's version, e.g. "0.1.0", and as a number (FJ_VERSION_NUMBER
 * of the library that is running, which may be newer than the header). */
const char *fj_version(void);
unsigned fj_version_number(void);

/* ---- 2. Memory ---------------------------------------------------------- */

/* Optional custom allocator. Every allocation fanjian makes goes through it,
 * with `ctx` passed back. NULL in any API that takes one means malloc/free.
 * `free` receives the allocation's size, or 0 for a buffer released by
 * fj_free (whose size is not kept). */
typedef struct fj_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} fj_allocator;

/* ---- 3. Dictionary ------------------------------------------------------ */

/* An opened dictionary image (built by `fjdict`). It is memory-mapped and
 * used in place, and checked in parts: opening checks the header, the
 * section table and the records that name everything else; opening a
 * converter checks the checksums and every offset of the parts it uses,
 * the first time anything uses them. A damaged or hostile file is an error
 * (of fj_dict_open, fj_converter_open or fj_dict_verify), never a crash. */
typedef struct fj_dict fj_dict;

typedef struct fj_dict_options {
    size_t size;                   /* sizeof(fj_dict_options) */
    const fj_allocator *allocator; /* NULL: malloc/free */
} fj_dict_options;

/* Opens the dictionary at `path`. When `path` is NULL, uses the environment
 * variable FANJIAN_DICT if set, else the compiled-in default
 * (fj_dict_default_path()). `options` and `error` may be NULL. */
fj_status fj_dict_open(const char *path, const fj_dict_options *options, fj_dict **out,
                       fj_error *error);

/* Opens an image that is already in memory. The bytes must stay valid and
 * unchanged until fj_dict_close. */
fj_status fj_dict_open_memory(const void *data, size_t size, const fj_dict_options *options,
                              fj_dict **out, fj_error *error);

void fj_dict_close(fj_dict *dict);

/* Checks the whole image now: every checksum and every offset, as if every
 * profile had been opened. FJ_OK, or the first damage found
 * (FJ_ERR_DICT_CHECKSUM, FJ_ERR_DICT_FORMAT) with its byte offset. For a
 * program that would rather fail at start than at its first converter. */
fj_status fj_dict_verify(const fj_dict *dict, fj_error *error);

/* The path fj_dict_open(NULL, ...) tries last. */
const char *fj_dict_default_path(void);

/* What an image says of itself. The caller sets `size` to
 * sizeof(fj_dict_info_rec); fields added later lie beyond it. */
typedef struct fj_dict_info_rec {
    size_t size;
    unsigned format_version; /* the image format */
    size_t source_count;     /* the third-party data it was built from */
} fj_dict_info_rec;

/* One source of an image's data. The caller sets `size` to
 * sizeof(fj_dict_source). The strings belong to the image and stay valid
 * until fj_dict_close. */
typedef struct fj_dict_source {
    size_t size;
    const char *name;    /* "OpenCC", "rime-essay", ... */
    const char *version; /* as its publisher numbers it: "1.4.2" */
    const char *license; /* its terms, an SPDX expression: "Apache-2.0" */
    const char *role;    /* what the image takes from it */
} fj_dict_source;

/* Fills `info` (FJ_ERR_INVALID_ARGUMENT when its size is too small). An
 * image built without the sources named has a source_count of 0. */
fj_status fj_dict_info(const fj_dict *dict, fj_dict_info_rec *info);

/* Source i, 0 <= i < source_count (FJ_ERR_INVALID_ARGUMENT past it, or
 * when `source->size` is too small). */
fj_status fj_dict_source_at(const fj_dict *dict, size_t i, fj_dict_source *source);

/* Profile names the dictionary offers ("s2t", "t2s", "s2tw", ...). Returns
 * the number of profiles; index past the end gives NULL. */
size_t fj_dict_profile_count(const fj_dict *dict);
const char *fj_dict_profile_name(const fj_dict *dict, size_t index);

/* ---- 4. Converter --------------------------------------------------------- */

/* A conversion profile bound to an opened dictionary; immutable once open,
 * and the dictionary must outlive it. Opening builds per-step lookup
 * tables (a few hundred KiB; about 0.1 ms in FJ_COMPAT, 1 ms in the
 * default mode), so open each profile once and share it across threads. */
typedef struct fj_converter fj_converter;

enum {
    /* The default (flags 0): forms are chosen from context, by the cheapest
     * segmentation into known words (see docs/DESIGN.md). The profiles whose
     * input is Traditional (t2tw, t2hk, tw2t, hk2t, t2jp) first repair text
     * damaged by character-by-character conversion (衹 -> 只, 沖鋒 -> 衝鋒)
     * and leave correct text as it is. */
    FJ_DEFAULT = 0,
    /* Reproduce OpenCC 1.4.2's output byte for byte (maximum matching over
     * its phrase tables). */
    FJ_COMPAT = 1u << 0,
    /* For Traditional input known to be carelessly converted (profiles that
     * repair: t2tw, t2hk, tw2t, hk2t, t2jp): also re-choose the words
     * written in a spelling that the word list marks as unpreferred (關系,
     * 仿佛, 詞匯). This leaves about a third fewer errors in damaged text,
     * but changes correct text that uses the less common of two standard
     * spellings (借助, 注定). No effect with FJ_COMPAT or other profiles. */
    FJ_REPAIR_THOROUGH = 1u << 1,
    /* Repair as if the text were correct wherever it is: only the forms
     * that are never right change, and words whose spelling shows damage.
     * Without FJ_REPAIR_CAREFUL or FJ_REPAIR_THOROUGH the level is estimated
     * from the text (the default, "auto"): where the evidence so far says it
     * was converted character by character, every character written in its
     * reading's first form may change, as in a conversion from Simplified;
     * forms such a converter never writes stay. */
    FJ_REPAIR_CAREFUL = 1u << 2,
    /* No repair: Traditional input goes through the profile's variant
     * steps only, as in FJ_COMPAT. */
    FJ_REPAIR_OFF = 1u << 3
};

/* `profile` is a name such as "s2twp", or an OpenCC config file name such as
 * "s2twp.json" (a leading directory is ignored). */
fj_status fj_converter_open(const fj_dict *dict, const char *profile, unsigned flags,
                            fj_converter **out, fj_error *error);
void fj_converter_close(fj_converter *conv);

/* Target-only conversion: a converter that writes one standard from any
 * input, in one pass. `target` is "tw" (Taiwan characters), "twp" (and
 * Taiwan vocabulary, as s2twp), "hk", "hkp", "hant" (OpenCC's standard
 * Traditional), "cn" or "hans" (Simplified). The text is cut into clauses
 * (after ，。！？；：、 . , ! ? ; : or a line break); a clause with more
 * Simplified-only characters than Traditional-only ones is converted from
 * Simplified (s2tw, s2twp, s2hk, s2hkp, s2t; for cn and hans it stays as
 * written), one with more Traditional-only characters is repaired and
 * converted from Traditional (t2tw, t2hk, tw2t, t2s), and one with neither
 * goes the way of the clause before it (at the start: from Traditional, so
 * text already in the target stays as written). Vocabulary (twp, hkp)
 * applies to Simplified clauses only. `flags` as fj_converter_open's, but
 * not FJ_COMPAT. The converter works with fj_convert and fj_stream_new as
 * any other; fj_converter_profile names its conversion from Simplified (for
 * cn and hans: t2s). FJ_ERR_UNKNOWN_PROFILE for another target. */
fj_status fj_converter_open_target(const fj_dict *dict, const char *target, unsigned flags,
                                   fj_converter **out, fj_error *error);

/* The names fj_converter_open_target takes: index 0, 1, ... until NULL. */
const char *fj_target_name(size_t index);

/* The canonical profile name ("s2twp"); for a target, as said above. NULL
 * for a converter that converts no script (fj_converter_open_options with
 * neither profile nor target). */
const char *fj_converter_profile(const fj_converter *conv);

/* The whole conversion policy in one converter: UTF-8 checking, clean-up,
 * script conversion and typography, applied in that order, one-shot and
 * streaming alike. Fill the struct with fj_options_init, then set what you
 * need. */

/* fj_options.quotes: the profile's own style (fj_profile_quotes of
 * fj_converter_profile), but none under FJ_COMPAT or without a profile. */
#define FJ_QUOTES_PROFILE (-1)

enum {
    FJ_UTF8_PASS = 0,  /* bytes that are not UTF-8 pass through unchanged */
    FJ_UTF8_STRICT = 1 /* they are an error, FJ_ERR_INVALID_UTF8 with their offset */
};

typedef struct fj_options {
    /* sizeof(fj_options), set by fj_options_init. A caller built against an
     * older, shorter struct passes its own size: the fields past it take
     * their defaults. */
    size_t size;
    /* A profile, as fj_converter_open takes it ("s2twp"), or a target
     * standard, as fj_converter_open_target takes it ("tw"), or neither
     * (both NULL: no script conversion, only the other stages). */
    const char *profile;
    const char *target;
    /* FJ_COMPAT and one FJ_REPAIR_* level, as fj_converter_open's flags. */
    unsigned flags;
    /* An fj_quotes, or FJ_QUOTES_PROFILE (the default). */
    int quotes;
    /* FJ_PUNCT_* (default 0). */
    unsigned punct;
    /* NULL (the default), or clean-up rules (fj_clean_open) whose
     * boilerplate is removed before conversion, exactly as
     * fj_clean_stream does. The caller keeps it open while the converter
     * is. */
    const struct fj_clean *clean;
    /* FJ_UTF8_PASS (the default) or FJ_UTF8_STRICT. */
    int utf8;
    /* User phrases: where a `from` starts, `to` is written as given,
     * whatever the model and the built-in tables would write, in every mode
     * (FJ_COMPAT included). Keys are found leftmost first, then longest;
     * the text on either side is converted as if it ended there. The same
     * key twice: the later entry counts. Strings are copied at open. */
    const struct fj_phrase *phrases;
    size_t phrase_count;
    /* Terms written as they are, never converted (names, brands, Cantonese
     * 係): phrases whose value is their key, given after `phrases`. */
    const char *const *protect;
    size_t protect_count;
    /* FJ_MARKUP_INLINE: honour -{…}- in the text (see below); 0: they are
     * text like any other. */
    unsigned markup;
} fj_options;

/* One user phrase: NUL-terminated UTF-8, neither empty. */
typedef struct fj_phrase {
    const char *from;
    const char *to;
} fj_phrase;

/* Inline rules, MediaWiki's and zhconv's syntax, stripped from the output:
 * -{text}- writes text as it is; -{zh-hans:计算机; zh-hant:電腦}- writes the
 * variant that fits the converter's output standard (zh-tw, then zh-hant,
 * zh-hk, ... for Taiwan: data/markup-variants.txt), or, when none fits,
 * converts the first. A -{ without a }- in the next 1 KiB is text. */
enum { FJ_MARKUP_INLINE = 1u << 0 };

/* Sets `size`, quotes FJ_QUOTES_PROFILE, and everything else 0. */
void fj_options_init(fj_options *options);

/* Opens the converter `options` describe. It works with fj_convert,
 * fj_convert_alloc and fj_stream_new as any other, is immutable and may be
 * shared by threads; its output is that of fj_clean_stream, then the
 * converter of fj_converter_open (or _open_target), then fj_punct, however
 * a stream is split. FJ_ERR_INVALID_ARGUMENT (with the field at fault in
 * `error`) for unknown flag bits, two repair levels, both a profile and a
 * target, a quotes, punct or utf8 value out of range, a size smaller than
 * the struct's first four fields or cutting a field in two, or bytes past
 * sizeof(fj_options) that are not zero; otherwise the errors of the open
 * calls. */
fj_status fj_converter_open_options(const fj_dict *dict, const fj_options *options,
                                    fj_converter **out, fj_error *error);

/* ---- 5. One-shot conversion ------------------------------------------- */

/* Converts `input` into the caller's buffer `out` of `out_size` bytes. On
 * FJ_OK, *out_len is the number of bytes written. On FJ_ERR_BUFFER_TOO_SMALL,
 * *out_len is the size that would have been needed (nothing useful is in
 * `out`); call again with a buffer that large. On FJ_ERR_INVALID_UTF8 (a
 * converter with FJ_UTF8_STRICT), *out_len is the offset of the first byte
 * that is not valid UTF-8 (the start of a sequence the input's end cuts
 * short included), and nothing is written. The output is not
 * NUL-terminated. `out` may be NULL when `out_size` is 0, to ask the size. */
fj_status fj_convert(const fj_converter *conv, const char *input, size_t input_len, char *out,
                     size_t out_size, size_t *out_len);

/* Converts `input` into a new buffer, NUL-terminated for convenience
 * (*out_len excludes the NUL). Release it with fj_free on the same converter.
 * On FJ_ERR_INVALID_UTF8, *out is NULL and *out_len the offset, as above. */
fj_status fj_convert_alloc(const fj_converter *conv, const char *input, size_t input_len,
                           char **out, size_t *out_len);

void fj_free(const fj_converter *conv, char *buffer);

/* ---- 6. Streaming --------------------------------------------------------- */

/* Converts input that arrives in pieces, with memory bounded by the longest
 * stretch of text that one dictionary match can depend on, not by the input.
 * The output is byte-identical to fj_convert on the concatenated input,
 * however the input is split. Output is delivered through a callback. */
typedef struct fj_stream fj_stream;

/* Receives converted bytes. Return 0 to continue, non-zero to stop with
 * FJ_ERR_CALLBACK. */
typedef int (*fj_write_fn)(void *ctx, const char *data, size_t len);

fj_status fj_stream_new(const fj_converter *conv, fj_write_fn write, void *write_ctx,
                        fj_stream **out);

/* Feeds the next piece. Output for the text that is now decided is written
 * before this returns; the undecided tail is kept. */
fj_status fj_stream_feed(fj_stream *stream, const char *input, size_t len);

/* Ends the input and writes the rest. The stream can then only be freed. */
fj_status fj_stream_finish(fj_stream *stream);

/* The failure that stopped the stream (its first one, from feed or
 * finish): its code (FJ_OK when there was none), and a message. For FJ_ERR_INVALID_UTF8 (a converter with FJ_UTF8_STRICT)
 * `offset` counts the bytes fed before the sequence that is not UTF-8; a
 * piece holding one is not passed on at all, and from then on feed and
 * finish fail the same way. fj_stream_finish reports a sequence the end of
 * the input cuts short, at the offset where it starts. `error` may be NULL;
 * returns the code. */
fj_status fj_stream_error(const fj_stream *stream, fj_error *error);

/* Bytes held back waiting for more input (for monitoring memory use; the
 * line a clean-up stage holds is not counted). */
size_t fj_stream_pending(const fj_stream *stream);

void fj_stream_free(fj_stream *stream);

/* The length of the longest prefix of text[0..len) that converts the same
 * on its own as inside text: fj_convert of the prefix, then of the rest,
 * gives fj_convert of the whole. It ends after a newline. 0 when there is
 * none, and always 0 for a converter whose output depends on the text
 * before it (a target, user entries, clean-up, typography, FJ_UTF8_STRICT).
 * What lets a caller convert one large text on several threads. */
size_t fj_independent_prefix(const fj_converter *conv, const char *text, size_t len);

/* ---- 6b. Inspection, for proofreading ------------------------------------ */

/* One other form the model weighed for a character. */
typedef struct fj_alternative {
    const char *form; /* UTF-8, not NUL-terminated */
    size_t form_len;
    /* How much costlier the best reading with this form is than the chosen
     * one, in nats (-ln of the probability ratio; 0 is a tie). */
    double margin;
} fj_alternative;

/* A place where the default mode chose a character's form among several. */
typedef struct fj_choice {
    size_t offset, length; /* the source character's bytes in the input */
    size_t line, column;   /* where it starts: line from 1, column in code points from 1 */
    const char *source;    /* input + offset */
    const char *chosen;    /* the form written, not NUL-terminated */
    size_t chosen_len;
    const fj_alternative *alternatives; /* the others, smallest margin first */
    size_t alternative_count;
} fj_choice;

/* Receives one choice; its strings live until the callback returns. Return
 * 0 to continue, non-zero to stop with FJ_ERR_CALLBACK. */
typedef int (*fj_choice_fn)(void *ctx, const fj_choice *choice);

/* Calls `fn` for each character of `input` whose form the model chose
 * among several (repair's choices included), in input order, as fj_convert
 * would convert `input` (clean-up and typography aside). The forms are each
 * written as the steps after the model write the character alone. Text a
 * user phrase, a protected term or -{…}- writes is not the model's and is
 * not reported, nor is a choice that a later step undoes where the output
 * shows it (a regional word: s2twp's 聯絡). FJ_COMPAT chooses nothing. */
fj_status fj_inspect(const fj_converter *conv, const char *input, size_t input_len,
                     fj_choice_fn fn, void *ctx);

/* ---- 7. Script detection --------------------------------------------------- */

/* What script a text is written in. */
typedef enum fj_script {
    FJ_SCRIPT_NONE = 0,    /* no Han characters */
    FJ_SCRIPT_SIMPLIFIED,  /* Simplified-only characters, at most a stray Traditional one */
    FJ_SCRIPT_TRADITIONAL, /* Traditional-only characters, at most a stray Simplified one */
    FJ_SCRIPT_BOTH,        /* Han characters, none specific to one script: valid in either */
    FJ_SCRIPT_MIXED,       /* both kinds in substantial amounts */
    FJ_SCRIPT_BINARY       /* not text: a NUL, or many bytes not UTF-8 text (see fj_detect) */
} fj_script;

/* "none", "simplified", "traditional", "both", "mixed", "binary". Never NULL. */
const char *fj_script_name(fj_script script);

/* A stretch of text in the minority script: clauses (up to and including
 * their punctuation: ，。！？；：、 and ASCII , . ! ? ; :) in which that script's
 * characters outnumber the other's, merged with the clauses between them
 * that have neither. Never crosses a line break; leading white space is
 * left out. */
typedef struct fj_script_span {
    size_t offset; /* bytes from the start of the text */
    size_t length; /* bytes */
    fj_script script; /* FJ_SCRIPT_SIMPLIFIED or FJ_SCRIPT_TRADITIONAL */
} fj_script_span;

/* The result of fj_detect. The caller sets `size` to sizeof(fj_detection),
 * and `spans` and `span_capacity` (NULL and 0 when the spans are not
 * wanted); fj_detect fills the rest. */
typedef struct fj_detection {
    size_t size;
    fj_script script;
    double confidence;  /* in [0, 1]; see below */
    size_t han;         /* Han characters */
    size_t simplified;  /* of them, found only in Simplified text */
    size_t traditional; /* of them, found only in Traditional text */
    /* For Traditional text (labels traditional, mixed, both): how much of it
     * looks converted character by character, in [0, 1], or -1 when the text
     * shows too little or the dictionary has no repair model. See below. */
    double damage;
    fj_script_span *spans; /* in: the caller's array */
    size_t span_capacity;  /* in: its length */
    size_t span_count;     /* out: how many spans there are; when more than
                            * span_capacity, only the first span_capacity were
                            * written (call again with a larger array) */
} fj_detection;

/* Detects the script of text[0..len) (UTF-8; bytes that are not UTF-8 are
 * skipped).
 *
 * Binary: BINARY, before anything else, for data that is not text, judged
 * by its first 8 KiB: a NUL byte there, or at least 30 % of those bytes
 * (and at least 8) that are neither part of valid UTF-8 nor a control
 * character text uses (tab, line feed, vertical tab, form feed, carriage
 * return, escape). A text with a few stray bytes is text. Text in another
 * encoding (GB18030, Big5, UTF-16) must be decoded to UTF-8 first, or it
 * may be BINARY. Its confidence is 1, its counts 0, it has no spans.
 *
 * A character is Simplified-only when OpenCC's STCharacters converts it and
 * does not list it among its own forms (发 -> 發 髮), Traditional-only when
 * TSCharacters does the same (發 -> 发) and STCharacters does not keep it
 * (plus old forms such as 衹 竝 that the tables leave out); every other Han
 * character (中, 干, 里) is valid in both scripts.
 *
 * Label: NONE without Han characters; BOTH when none is script-specific;
 * MIXED when the less frequent kind (the minority) makes up at least 10 % of
 * the script-specific characters and at least 2 of them; else the majority's
 * script, so one stray character never makes a text mixed.
 *
 * Confidence: NONE 1; BOTH 1 - 0.75^han (how unlikely it is that a text of
 * that length in one script shows none of its specific characters);
 * SIMPLIFIED / TRADITIONAL share^2 * (1 - 0.3^majority), where share is the
 * majority's part of the script-specific characters (a stray character
 * lowers it); MIXED min(1, minority share / 0.2) * (1 - 0.5^minority).
 *
 * Spans: the stretches in the minority script (see fj_script_span), for
 * every label with script-specific characters of both kinds. On a tie the
 * minority is the script whose first character comes later.
 *
 * Damage: a careless converter writes a Simplified character with several
 * Traditional forms in its first one (发 always as 發, never 髮). Over the
 * characters that are a form of such a reading, correct text shows the
 * other forms about as often as the word list does (its share per reading);
 * damage is 1 - (other forms seen) / (other forms expected), within [0, 1],
 * and -1 when fewer than 3 are expected. About 0.9 for text converted so,
 * 0 for native text.
 *
 * The character tables are built from the dictionary for each call (about
 * 22 KB, allocated through the dictionary's allocator and freed before
 * returning; about 0.1 ms), and for the damage estimate a careful t2tw
 * converter is opened and closed (fj_converter_open). FJ_ERR_DICT_FORMAT when the image
 * lacks the two source tables, FJ_ERR_NOMEM when the allocation fails. */
fj_status fj_detect(const fj_dict *dict, const char *text, size_t len, fj_detection *result);

/* A detection as JSON members, the one shape every caller writes (the
 * CLI's detect --json, the HTTP API's /v1/detect):
 *   "script":"mixed","confidence":0.875,"han":17,"simplified":3,
 *   "traditional":4,"damage":null,"spans":[{"offset":0,"length":18,"script":"simplified"}]
 * without the braces, so that a caller can put its own members first.
 * "damage" is null when it is -1; "spans" is null without `with_spans`
 * (a document's text is not one run of its bytes), else the first
 * min(span_count, span_capacity) spans. Writes at most `size` bytes with a
 * NUL (none when size is 0; out may then be NULL) and returns the length
 * of the whole, as snprintf does: call again with more room when it is
 * size or more. */
size_t fj_detection_json(const fj_detection *result, int with_spans, char *out, size_t size);

/* ---- 8. Boilerplate removal ------------------------------------------------ */

/* Scraped chapters carry text that is the site's, not the story's:
 * 天才一秒记住本站地址：…, 本章未完，请点击下一页继续阅读, （本章完）, often
 * inside a paragraph of story. An fj_clean finds such notices by rules:
 * weighted phrases, web addresses and markers. The format and the default
 * rules are in data/clean-rules.txt, which is compiled into the library;
 * callers may add their own. Rules match in either script: the text and the
 * patterns are folded to Simplified with the dictionary's TSCharacters
 * table, full-width Latin to ASCII and ASCII to lower case.
 *
 * A line is judged in units: sentences (ended by 。！？!?；… or a '.'
 * before a space) and bracketed groups （…）【…】(…)[…]《…》「…」. A unit
 * whose score reaches the threshold, or that is a marker, is a notice; so
 * is a run of sentences that are mostly (60 %) notice phrases next to one,
 * and a bracketed group that is mostly notice phrases with a strong one.
 * Of a notice sentence, only the clauses (split at ，、：:,; and spaces) from
 * the first to the last that holds a notice go: a story clause before or
 * after stays, and the sentence's end mark stays with it. A unit of more
 * than `maxchars` characters (200 by default) is never a notice. Immutable
 * once opened; may be shared by any number of threads. */
typedef struct fj_clean fj_clean;

/* A rules text and the name used in its error messages (a file name). */
typedef struct fj_clean_rules {
    const char *name;
    const char *text;
    size_t len;
} fj_clean_rules;

enum {
    FJ_CLEAN_NO_DEFAULTS = 1u << 0 /* start from no rules instead of the default ones */
};

/* Opens the default rules followed by `extra[0..extra_count)` (later
 * settings replace earlier ones; phrases and markers add up). `dict` may be
 * NULL: then nothing is folded between the scripts, and a rule matches only
 * as written. Allocations go through the dictionary's allocator; the
 * dictionary need not outlive the result. FJ_ERR_RULES names the text and
 * line that is malformed. */
fj_status fj_clean_open(const fj_dict *dict, const fj_clean_rules *extra, size_t extra_count,
                        unsigned flags, fj_clean **out, fj_error *error);
void fj_clean_close(fj_clean *clean);

/* The default rules (data/clean-rules.txt), not NUL-terminated. */
const char *fj_clean_default_rules(size_t *len);

/* One piece of boilerplate in a text: bytes [start, end) of the text given,
 * including the punctuation or space that joined it to the rest. */
typedef struct fj_clean_span {
    size_t start, end;
    int score;
} fj_clean_span;

/* The boilerplate of one line or paragraph text[0..len) (a final "\n" or
 * "\r\n" is ignored; the text holds no other line break that matters):
 * writes at most `cap` spans into spans[], in order and disjoint, and
 * returns how many there are (possibly more than cap: call again with more
 * room). *whole, when not NULL, is set to 1 when what the spans leave is
 * only white space and punctuation, so the caller drops the whole line or
 * element instead of editing it (then the spans cover the text). Where a
 * boundary is uncertain, the span is left out: story text is never in a
 * span. Allocates nothing; uses about 24 KB of stack. */
size_t fj_clean_find(const fj_clean *clean, const char *text, size_t len, fj_clean_span *spans,
                     size_t cap, int *whole);

/* Whether the line line[0..len) (a final "\n" or "\r\n" is ignored) is
 * wholly boilerplate (fj_clean_find's *whole): 1 to drop it, 0 to keep it.
 * *score, when not NULL, receives the highest score of a unit of it (a
 * marker scores at least the threshold). Allocates nothing. */
int fj_clean_line(const fj_clean *clean, const char *line, size_t len, int *score);

/* Removes the boilerplate of a text that arrives in pieces: a line that is
 * wholly boilerplate is dropped with its line ending; of any other line
 * only the spans go, and the rest is written byte for byte (line endings, a
 * missing final newline and bytes that are not UTF-8 included). Memory is
 * bounded: one line of at most 64 KiB is held back. A longer line is judged
 * in pieces of at most 64 KiB, each ending at a sentence end where it has
 * one (else at a character boundary); such a line is never dropped whole,
 * and a notice that straddles a cut may be left partly in. */
typedef struct fj_clean_stream fj_clean_stream;

/* A removal the stream made, for its report callback. */
typedef struct fj_clean_removal {
    unsigned long long line;   /* from 1 */
    unsigned long long column; /* characters (code points) before the span in its line, plus 1 */
    const char *text;          /* the bytes removed, without a line ending */
    size_t len;
    int whole_line;            /* the line was dropped whole */
} fj_clean_removal;

/* Told of each removal; return 0 to continue, non-zero to stop with FJ_ERR_CALLBACK. */
typedef int (*fj_clean_report_fn)(void *ctx, const fj_clean_removal *removal);

/* `report` may be NULL. The fj_clean must outlive the stream. */
fj_status fj_clean_stream_new(const fj_clean *clean, fj_write_fn write, void *write_ctx,
                              fj_clean_report_fn report, void *report_ctx,
                              fj_clean_stream **out);
fj_status fj_clean_stream_feed(fj_clean_stream *stream, const char *data, size_t len);
/* Judges the last line (one without a final newline). */
fj_status fj_clean_stream_finish(fj_clean_stream *stream);
void fj_clean_stream_free(fj_clean_stream *stream);

/* For a stream of a converter with clean-up (fj_options.clean): tell
 * `report` of each removal this stream makes, as fj_clean_stream_new's
 * report (NULL: no longer). Only before the first feed: FJ_ERR_STREAM_STATE
 * after; FJ_ERR_INVALID_ARGUMENT when the converter has no clean-up. */
fj_status fj_stream_set_clean_report(fj_stream *stream, fj_clean_report_fn report, void *ctx);

/* ---- 9. Typography ------------------------------------------------------ */

/* Quotation marks after conversion. FJ_QUOTES_CORNER writes Taiwan and Hong
 * Kong's 「」 and 『』 for “” and ‘’, FJ_QUOTES_CURLY the mainland's “” and ‘’
 * for 「」 and 『』; nesting is kept, since each mark maps to one mark. A
 * straight " in Chinese text becomes an opening or closing mark in turn
 * (reset at each line). Curly marks change only next to CJK characters, so
 * an apostrophe in English (don’t) stays. */
typedef enum { FJ_QUOTES_KEEP = 0, FJ_QUOTES_CORNER, FJ_QUOTES_CURLY } fj_quotes;

enum {
    FJ_PUNCT_ELLIPSIS = 1u << 0,  /* 。。。 or ... (three or more) in Chinese text -> …… */
    FJ_PUNCT_FULLWIDTH = 1u << 1  /* , ! ? : ; between Han characters -> ，！？：； */
};

/* The quotation style a profile uses unless told otherwise: the localising
 * profiles s2twp and s2hkp write 「」, tw2sp and hk2sp “”; every other
 * profile keeps quotation marks as they are. */
fj_quotes fj_profile_quotes(const char *profile);

/* A filter over UTF-8 text, streamed like fj_stream: output goes to `write`.
 * Bytes it does not change pass through unchanged. `allocator` may be NULL. */
typedef struct fj_punct fj_punct;
fj_status fj_punct_new(fj_quotes quotes, unsigned flags, const fj_allocator *allocator,
                       fj_write_fn write, void *write_ctx, fj_punct **out);
fj_status fj_punct_feed(fj_punct *p, const char *data, size_t len);
fj_status fj_punct_finish(fj_punct *p);
void fj_punct_free(fj_punct *p);

/* ---- 10. Profiles and UTF-8 ---------------------------------------------- */

/* What the library knows of a profile, from its one list (data/profiles.tsv,
 * compiled in). The caller sets `size` to sizeof(fj_profile_info); fields
 * added later lie beyond it. The strings are static. */
typedef struct fj_profile_info {
    size_t size;
    const char *name;        /* canonical: "s2twp" */
    int quotes;              /* an fj_quotes: fj_profile_quotes(name) */
    const char *lang;        /* BCP 47 tag of the output ("zh-TW"), NULL when none fits */
    int repairs;             /* 1: FJ_DEFAULT repairs the input first (see FJ_DEFAULT) */
    const char *from, *to;   /* the standard read and written: "hans", "hant",
                              * "tw", "hk" or "jp" */
    const char *description; /* one line of English */
} fj_profile_info;

/* Fills `info` for `profile` (a name as fj_converter_open takes it).
 * FJ_ERR_UNKNOWN_PROFILE when the library does not know it, or when `dict`
 * is not NULL and its image has no such profile; FJ_ERR_INVALID_ARGUMENT
 * for a NULL pointer or a `size` too small. With `dict`, `repairs` says
 * what its converters do: 0 when the image was built without the repair
 * model. */
fj_status fj_profile_info_get(const fj_dict *dict, const char *profile, fj_profile_info *info);

/* The profiles the library knows, in the image's order: index 0, 1, ...
 * until NULL. fj_dict_profile_name lists those an image holds. */
const char *fj_profile_name(size_t index);

/* The length of the longest prefix of text[0..len) that is valid UTF-8
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
 * When it stops before `len` only because the last sequence is cut short
 * by the end, *cut is set to 1, else to 0; `cut` may be NULL. SSE2 and,
 * where the CPU has it, AVX2 check ASCII and three-byte text in blocks. */
size_t fj_utf8_valid(const char *text, size_t len, int *cut);

#ifdef __cplusplus
}
#endif

#endif /* FANJIAN_H */
