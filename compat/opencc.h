/*
 * fanjian's OpenCC-compatible C API (libopencc from fanjian).
 *
 * A program written against OpenCC's C API (its <opencc.h>) compiles and
 * links unchanged against this header and `-lopencc` from fanjian: the
 * names, types, constants and documented behaviour are OpenCC's. The
 * conversion is fanjian's FJ_COMPAT mode, which gives output byte-identical
 * to OpenCC 1.4.2. This header is fanjian's own; it declares only the C API
 * (OpenCC's C++ classes are not provided).
 *
 * Installed as include/fanjian-opencc/opencc.h with the library in
 * lib/fanjian-opencc/, outside the usual names, so it never shadows a real
 * OpenCC: `pkg-config --cflags --libs fanjian-opencc` selects it.
 *
 * Configurations. opencc_open takes OpenCC's configuration names: "s2t.json",
 * a path such as "/usr/share/opencc/s2twp.json" (only the file name counts;
 * the file is not read), or the bare profile name "s2twp". The 16 profiles
 * are s2t t2s s2tw tw2s s2twp tw2sp s2hk hk2s s2hkp hk2sp t2tw tw2t t2hk hk2t
 * t2jp jp2t. Any other name fails.
 *
 * The dictionary. fanjian's converters need its dictionary image, found as
 * the command-line tool finds it: $FANJIAN_DICT when set; else
 * ../../share/fanjian/fanjian.fjd relative to this library's own file (the
 * installed layout PREFIX/lib/fanjian-opencc/ -> PREFIX/share/fanjian/, also
 * tried three levels up for a multiarch lib/TRIPLET/fanjian-opencc/), or
 * ../fanjian.fjd (the build tree); else the library's compiled-in default
 * (/usr/local/share/fanjian/fanjian.fjd). All handles that use the same image
 * share one mapping of it.
 *
 * Thread safety: an opencc_t may be used by any number of threads at once
 * (conversion reads only immutable tables). opencc_error() is per thread
 * here (OpenCC keeps one global string), so it is safe to call from any
 * thread and reports that thread's last failure.
 *
 * Differences from OpenCC, all on input OpenCC rejects or crashes on: bytes
 * that are not UTF-8 are copied unchanged instead of failing the call; a NULL
 * or (opencc_t)-1 handle, or a NULL input, is an error with a message
 * instead of a crash.
 */
#ifndef FANJIAN_OPENCC_H
#define FANJIAN_OPENCC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by this header, for programs that want to know which one they got. */
#define FANJIAN_OPENCC 1

#ifndef OPENCC_EXPORT
#define OPENCC_EXPORT
#endif

/* The configuration opencc_open(NULL) loads: Simplified to Traditional. */
#define OPENCC_DEFAULT_CONFIG_SIMP_TO_TRAD "s2t.json"
/* Traditional to Simplified. */
#define OPENCC_DEFAULT_CONFIG_TRAD_TO_SIMP "t2s.json"

/* A converter handle. */
typedef void *opencc_t;

/* Makes a converter for the configuration `configFileName` (NULL:
 * OPENCC_DEFAULT_CONFIG_SIMP_TO_TRAD). Returns (opencc_t)-1 on failure, not
 * NULL; opencc_error() then says why (an unknown configuration, or a
 * dictionary that cannot be opened). */
OPENCC_EXPORT opencc_t opencc_open(const char *configFileName);

/* Destroys a converter. Returns 0, or -1 (with opencc_error() set) for a
 * NULL or (opencc_t)-1 handle. */
OPENCC_EXPORT int opencc_close(opencc_t opencc);

/* Converts UTF-8 text into `output` and NUL-terminates it.
 *
 * `length` is the maximum number of bytes of `input` to convert; the input
 * also ends at its first NUL byte, as in OpenCC. (size_t)-1 converts the
 * whole NUL-terminated string. Returns the length of the converted text
 * (without the NUL), or (size_t)-1 on error (see opencc_error()).
 *
 * HAZARD: `output` has no size; as in OpenCC, the caller MUST make it large
 * enough. With the tables of OpenCC 1.4.2's data, the output of any profile
 * is at most 40/9 (about 4.45) times the converted input: one table of a
 * profile's chain replaces a key of k bytes with at most 2.5 k (TWPhrases:
 * 外鍵 -> 外部索引鍵, 6 -> 15 bytes; tw2sp's TWPhrasesRev: 7/3 k), and each
 * other step at most 4/3 k (a 3-byte character whose form is a 4-byte one,
 * in normalization and in the character tables): s2twp 4/3 * 4/3 * 2.5.
 * Bytes that are not converted are copied one for one. So
 * FANJIAN_OPENCC_BUFFER_SIZE(n) = 5 n + 1 bytes always suffice for n input
 * bytes, the NUL included. This library enforces that bound: it never
 * writes more than FANJIAN_OPENCC_BUFFER_SIZE(n) bytes, and should another
 * dictionary image ever need more, the call fails with (size_t)-1 rather
 * than overrun. It writes only the converted text and its NUL, so a buffer
 * of the exact size (as measured with opencc_convert_utf8) also works. */
OPENCC_EXPORT size_t opencc_convert_utf8_to_buffer(opencc_t opencc, const char *input,
                                                   size_t length, char *output);

/* A buffer size that always suffices for opencc_convert_utf8_to_buffer on
 * `length` bytes of input (a real length, not (size_t)-1). fanjian's own. */
#define FANJIAN_OPENCC_BUFFER_SIZE(length) ((size_t)(length) * 5 + 1)

/* Converts UTF-8 text into a new NUL-terminated string, which the caller
 * releases with opencc_convert_utf8_free(). `length` is as for
 * opencc_convert_utf8_to_buffer. Returns NULL on error (see opencc_error()). */
OPENCC_EXPORT char *opencc_convert_utf8(opencc_t opencc, const char *input, size_t length);

/* Releases a string returned by opencc_convert_utf8(). NULL is ignored. */
OPENCC_EXPORT void opencc_convert_utf8_free(char *str);

/* The last error message of the calling thread ("" if none yet). A
 * successful call leaves it as it was, as in OpenCC. The string belongs to
 * the library; its content changes at the thread's next failing call. */
OPENCC_EXPORT const char *opencc_error(void);

#ifdef __cplusplus
}
#endif

#endif /* FANJIAN_OPENCC_H */
