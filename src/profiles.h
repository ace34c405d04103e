/* The profiles and their metadata, generated from data/profiles.tsv
 * (scripts/profiles.sh). */
#ifndef FJ_PROFILES_H
#define FJ_PROFILES_H

#include "fanjian.h"

/* In the file's order, ended by an entry whose name is NULL. */
extern const fj_profile_info fj__profiles[];

/* The entry of a profile name as fj_converter_open takes it ("s2twp",
 * "s2twp.json", ".../s2twp.json"), or NULL. */
const fj_profile_info *fj__profile_find(const char *profile);

#endif
