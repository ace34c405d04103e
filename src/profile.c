/* Profile metadata: the table data/profiles.tsv compiles into. */
#include <string.h>

#include "image_format.h"
#include "internal.h"
#include "profiles.h"

const fj_profile_info *fj__profile_find(const char *profile)
{
    if (!profile)
        return NULL;
    char key[64];
    fj__profile_key(profile, key, sizeof key);
    for (const fj_profile_info *p = fj__profiles; p->name; p++)
        if (strcmp(p->name, key) == 0)
            return p;
    return NULL;
}

const char *fj_profile_name(size_t index)
{
    for (size_t i = 0; fj__profiles[i].name; i++)
        if (i == index)
            return fj__profiles[i].name;
    return NULL;
}

fj_status fj_profile_info_get(const fj_dict *dict, const char *profile, fj_profile_info *info)
{
    if (!profile || !info || info->size < sizeof *info)
        return FJ_ERR_INVALID_ARGUMENT;
    const fj_profile_info *p = fj__profile_find(profile);
    if (!p)
        return FJ_ERR_UNKNOWN_PROFILE;
    int repairs = p->repairs;
    if (dict) {
        const fj_image *img = fj__dict_image(dict);
        uint32_t i = 0;
        while (i < img->profile_count && strcmp(img->profiles[i].name, p->name) != 0)
            i++;
        if (i == img->profile_count)
            return FJ_ERR_UNKNOWN_PROFILE;
        repairs = repairs && img->contexts && (img->contexts[i].flags & FJ_CONTEXT_REPAIR);
    }
    size_t size = info->size;
    *info = *p;
    info->size = size;
    info->repairs = repairs;
    return FJ_OK;
}
