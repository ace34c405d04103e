/* Status codes as text. */
#include "internal.h"

const char *fj_strerror(fj_status status)
{
    switch (status) {
    case FJ_OK: return "success";
    case FJ_ERR_INVALID_ARGUMENT: return "invalid argument";
    case FJ_ERR_NOMEM: return "out of memory";
    case FJ_ERR_IO: return "cannot read the dictionary file";
    case FJ_ERR_DICT_FORMAT: return "not a valid fanjian dictionary";
    case FJ_ERR_DICT_VERSION: return "unsupported dictionary format version";
    case FJ_ERR_DICT_CHECKSUM: return "dictionary checksum mismatch";
    case FJ_ERR_UNKNOWN_PROFILE: return "unknown conversion profile";
    case FJ_ERR_BUFFER_TOO_SMALL: return "output buffer too small";
    case FJ_ERR_STREAM_STATE: return "stream already finished";
    case FJ_ERR_CALLBACK: return "write callback failed";
    case FJ_ERR_RULES: return "malformed clean rules";
    case FJ_ERR_INVALID_UTF8: return "input is not valid UTF-8";
    }
    return "unknown status";
}

const char *fj_version(void) { return FJ_VERSION_STRING; }

unsigned fj_version_number(void) { return FJ_VERSION_NUMBER; }
