/* fanjian formats: libraries loaded on first use. Private to formats/
 * (and cli/dynlib.c, which loads libmicrohttpd the same way).
 *
 * libzip (with libcrypto behind it) and uchardet (with libstdc++) add
 * milliseconds to every start of a program, which most runs, plain UTF-8
 * text, never use; expat and PCRE2 about 0.1 ms each. So they are opened
 * with dlopen when an EPUB, an XHTML document, a non-UTF-8 sample or a
 * Legado rules file first needs them; their headers still type-check every
 * call. */
#ifndef FANJIAN_FORMATS_DYNLOAD_H
#define FANJIAN_FORMATS_DYNLOAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <expat.h>
#include <pcre2.h>
#include <uchardet/uchardet.h>
#include <zip.h>

#define FJF_ZIP_FUNCTIONS(X) \
    X(zip_close) \
    X(zip_discard) \
    X(zip_error_fini) \
    X(zip_error_init) \
    X(zip_error_strerror) \
    X(zip_fclose) \
    X(zip_file_add) \
    X(zip_file_extra_field_get) \
    X(zip_file_extra_field_set) \
    X(zip_file_extra_fields_count) \
    X(zip_file_get_comment) \
    X(zip_file_get_external_attributes) \
    X(zip_file_set_comment) \
    X(zip_file_set_external_attributes) \
    X(zip_file_set_mtime) \
    X(zip_file_strerror) \
    X(zip_fopen_index) \
    X(zip_fread) \
    X(zip_get_archive_comment) \
    X(zip_get_name) \
    X(zip_get_num_entries) \
    X(zip_name_locate) \
    X(zip_open_from_source) \
    X(zip_set_archive_comment) \
    X(zip_set_file_compression) \
    X(zip_source_buffer) \
    X(zip_source_buffer_create) \
    X(zip_source_close) \
    X(zip_source_error) \
    X(zip_source_free) \
    X(zip_source_keep) \
    X(zip_source_open) \
    X(zip_source_read) \
    X(zip_source_zip) \
    X(zip_stat_index) \
    X(zip_strerror) \
    /* end */

#define FJF_UCHARDET_FUNCTIONS(X) \
    X(uchardet_new) X(uchardet_delete) X(uchardet_handle_data) X(uchardet_data_end) \
    X(uchardet_get_charset)

#define FJF_EXPAT_FUNCTIONS(X) \
    X(XML_ErrorString) X(XML_GetCurrentByteCount) X(XML_GetCurrentByteIndex) \
    X(XML_GetCurrentColumnNumber) X(XML_GetCurrentLineNumber) X(XML_GetErrorCode) \
    X(XML_Parse) X(XML_ParserCreate) X(XML_ParserFree) X(XML_SetCharacterDataHandler) \
    X(XML_SetDefaultHandler) X(XML_SetElementHandler) X(XML_SetEntityDeclHandler) \
    X(XML_SetUserData) X(XML_SetXmlDeclHandler) X(XML_StopParser)

/* pcre2.h names the 8-bit functions by macros (pcre2_match is
 * pcre2_match_8): members and symbol names take the expanded names. */
#define FJF_PCRE2_FUNCTIONS(X) \
    X(pcre2_code_free) X(pcre2_compile) X(pcre2_get_error_message) \
    X(pcre2_get_ovector_pointer) X(pcre2_jit_compile) X(pcre2_match) \
    X(pcre2_match_context_create) X(pcre2_match_context_free) X(pcre2_match_data_create) \
    X(pcre2_match_data_free) X(pcre2_set_depth_limit) X(pcre2_set_heap_limit) \
    X(pcre2_set_match_limit)

#define FJF_POINTER(f) __typeof__(f) *f;
typedef struct fjf_zip_api {
    FJF_ZIP_FUNCTIONS(FJF_POINTER)
} fjf_zip_api;
typedef struct fjf_uchardet_api {
    FJF_UCHARDET_FUNCTIONS(FJF_POINTER)
} fjf_uchardet_api;
typedef struct fjf_expat_api {
    FJF_EXPAT_FUNCTIONS(FJF_POINTER)
} fjf_expat_api;
typedef struct fjf_pcre2_api {
    FJF_PCRE2_FUNCTIONS(FJF_POINTER)
} fjf_pcre2_api;
#undef FJF_POINTER

/* One library's symbols: where each goes in its api struct. */
typedef struct fjf__symbol {
    const char *name;
    size_t offset;
} fjf__symbol;

/* One library, loaded once per process (the one piece of process-wide
 * state, as a loaded library is process-wide itself) and then only read. */
#define FJF__LIBRARY(api_type)                                                            \
    struct {                                                                              \
        pthread_once_t once;                                                              \
        int ok;                                                                           \
        char why[200];                                                                    \
        api_type api;                                                                     \
    }

/* Opens `soname` (from Debian's `package`) and fills `api` with the n
 * symbols; 1, or 0 with why[]. */
int fjf__dl_load(const char *soname, const char *package, const fjf__symbol *syms, size_t n,
                 void *api, char *why, size_t why_size);

/* The loaded library, or NULL when it cannot be loaded (why[] says why).
 * Loaded once per process; safe from any thread. */
const fjf_zip_api *fjf_zip_api_load(char *why, size_t why_size);
const fjf_uchardet_api *fjf_uchardet_api_load(void);
const fjf_expat_api *fjf_expat_api_load(char *why, size_t why_size);
const fjf_pcre2_api *fjf_pcre2_api_load(char *why, size_t why_size);

/* A call through a library that the caller has already loaded. */
#define EXPAT(f) (fjf_expat_api_load(NULL, 0)->f)
#define PCRE2(f) (fjf_pcre2_api_load(NULL, 0)->f)

#endif
