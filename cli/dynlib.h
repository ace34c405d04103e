/* fanjian CLI: libraries loaded on first use.
 *
 * libzip (with libcrypto behind it), uchardet (with libstdc++) and
 * libmicrohttpd (with GnuTLS) add about 5 ms to every start of the
 * program, which most runs, plain UTF-8 text, never use. So they are opened
 * with dlopen when an EPUB, a non-UTF-8 sample or `fanjian serve` first
 * needs them; their headers still type-check every call. */
#ifndef FANJIAN_CLI_DYNLIB_H
#define FANJIAN_CLI_DYNLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>
#include <uchardet/uchardet.h>
#include <zip.h>

#define FJX_ZIP_FUNCTIONS(X) \
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

#define FJX_UCHARDET_FUNCTIONS(X) \
    X(uchardet_new) X(uchardet_delete) X(uchardet_handle_data) X(uchardet_data_end) \
    X(uchardet_get_charset)

#define FJX_MHD_FUNCTIONS(X) \
    X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_queue_response) \
    X(MHD_create_response_from_buffer) X(MHD_destroy_response) X(MHD_add_response_header) \
    X(MHD_lookup_connection_value) X(MHD_get_connection_info)

#define FJX_POINTER(f) __typeof__(f) *f;
typedef struct fjx_zip_api {
    FJX_ZIP_FUNCTIONS(FJX_POINTER)
} fjx_zip_api;
typedef struct fjx_uchardet_api {
    FJX_UCHARDET_FUNCTIONS(FJX_POINTER)
} fjx_uchardet_api;
typedef struct fjx_mhd_api {
    FJX_MHD_FUNCTIONS(FJX_POINTER)
} fjx_mhd_api;
#undef FJX_POINTER

/* The loaded library, or NULL when it cannot be loaded (why[] says why).
 * Loaded once per process; safe from any thread. */
const fjx_zip_api *fjx_zip_api_load(char *why, size_t why_size);
const fjx_uchardet_api *fjx_uchardet_api_load(void);
const fjx_mhd_api *fjx_mhd_api_load(char *why, size_t why_size);

#endif
