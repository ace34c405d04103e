/* fanjian CLI: libmicrohttpd, loaded on first use as formats/dynload.h
 * loads libzip and uchardet: with GnuTLS behind it, it would add
 * milliseconds to every start, and only `fanjian serve` needs it. */
#ifndef FANJIAN_CLI_DYNLIB_H
#define FANJIAN_CLI_DYNLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

#define FJX_MHD_FUNCTIONS(X) \
    X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_queue_response) \
    X(MHD_create_response_from_buffer) X(MHD_destroy_response) X(MHD_add_response_header) \
    X(MHD_lookup_connection_value) X(MHD_get_connection_info)

#define FJX_POINTER(f) __typeof__(f) *f;
typedef struct fjx_mhd_api {
    FJX_MHD_FUNCTIONS(FJX_POINTER)
} fjx_mhd_api;
#undef FJX_POINTER

/* The loaded library, or NULL when it cannot be loaded (why[] says why).
 * Loaded once per process; safe from any thread. */
const fjx_mhd_api *fjx_mhd_api_load(char *why, size_t why_size);

#endif
