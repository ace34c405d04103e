/* OpenCC's binary dictionaries (.ocd2, its MarisaDict): the header
 * "OPENCC_MARISA_0.2.5", a marisa-trie of the keys, then the values
 * serialized by key id. Read into the oc_dict a text dictionary gives.
 * formats/marisa_shim.cc is the trie's C++ side. Not installed. */
#ifndef FJ_OCD2_H
#define FJ_OCD2_H

#include <stddef.h>

#include "ocdata.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads the .ocd2 at path; NULL and err (naming path) when it cannot,
 * "out of memory" included. */
oc_dict *oc_dict_read_ocd2(const char *path, char *err, size_t errlen);

/* ---- the shim over libmarisa --------------------------------------------- */

typedef struct fjf_marisa fjf_marisa;
/* The trie at data[0..len), read in place (data must stay and be 8-byte
 * aligned while it is used): *used the bytes it takes, *keys its key count.
 * NULL and err when it does not load. */
fjf_marisa *fjf__marisa_map(const void *data, size_t len, size_t *used, size_t *keys,
                            char *err, size_t errlen);
/* Called for each key with its id; non-zero stops (and the caller's err
 * says why). */
typedef int (*fjf_marisa_key_fn)(void *ctx, const char *key, size_t len, size_t id);
/* 0 when every key was given, -1 when fn stopped or err says what failed. */
int fjf__marisa_each_key(const fjf_marisa *t, fjf_marisa_key_fn fn, void *ctx, char *err,
                         size_t errlen);
void fjf__marisa_free(fjf_marisa *t);

#ifdef __cplusplus
}
#endif

#endif
