/* libchewing 0.5's system dictionary (Debian's libchewing3-data): its
 * phrases with their Taiwan frequencies, as a word list. */
#ifndef FJ_CHEWING_H
#define FJ_CHEWING_H

#include "model.h"

/* Reads DIR/index_tree.dat and DIR/dictionary.dat. Each phrase once, with
 * the sum of its frequencies over its readings (0 included). NULL and err on
 * failure, also when the files are not in the expected format. */
model_words *chewing_words_load(const char *dir, char *err, size_t errlen);

#endif
