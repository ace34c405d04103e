/* What js/glue.c exports to the wrapper (js/core.js), and js/glue-check.c
 * drives natively: one list for both. */
#ifndef FJJS_GLUE_H
#define FJJS_GLUE_H

#include <stddef.h>
#include <stdint.h>

#include "fanjian.h"

const char *fjjs_last_error(void);
void *fjjs_alloc(size_t size);
void fjjs_release(void *p);
fj_dict *fjjs_dict_open(const void *data, size_t size);
fj_converter *fjjs_converter_open(const fj_dict *dict, const char *profile, const char *target,
                                  unsigned flags, int quotes, unsigned punct, int clean,
                                  int markup, const char *const *phrases, size_t phrase_count,
                                  const char *const *protect, size_t protect_count);
void fjjs_clean_close(void);
size_t fjjs_utf16(const unsigned char *s, size_t len, uint16_t *out);
size_t fjjs_heap_used(void);
char *fjjs_convert(const fj_converter *conv, const char *input, size_t len, size_t *out_len);
char *fjjs_detect(const fj_dict *dict, const char *text, size_t len);

#endif
