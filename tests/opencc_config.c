/* The oracle for custom OpenCC configs (tests/suite-opencc-config.sh):
 * converts standard input with OpenCC's algorithm done literally
 * (formats/ocdata.c, oc_reference_convert) over the config's dictionaries,
 * read from their text: "text" files beside the config, and OpenCC's stock
 * dictionaries (named as .ocd2) from OpenCC's data directory as the image
 * is built from it.
 *   tests/opencc-reference CONFIG OPENCC_DATA_DIR < in > out
 * The whole input is one text, as the CLI sees it. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../formats/ocdata.h"

typedef struct oracle {
    const char *dir, *data_dir;
    oc_data *data; /* loaded when a stock dictionary is named */
    oc_dict *texts[64];
    size_t text_count;
} oracle;

static const oc_dict *resolve(void *ctx, const char *type, const char *file, char *err,
                              size_t errlen)
{
    oracle *o = ctx;
    if (strcmp(type, "text") == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", o->dir, file);
        if (o->text_count == 64) {
            snprintf(err, errlen, "too many dictionaries");
            return NULL;
        }
        oc_dict *d = oc_dict_parse(path, path, err, errlen);
        if (d)
            o->texts[o->text_count++] = d;
        return d;
    }
    if (!o->data && !(o->data = oc_data_load(o->data_dir, err, errlen)))
        return NULL;
    char name[256];
    snprintf(name, sizeof name, "%s", file);
    char *dot = strrchr(name, '.');
    if (dot)
        *dot = 0;
    const oc_dict *d = oc_data_dict(o->data, name);
    if (!d)
        snprintf(err, errlen, "no stock dictionary %s", name);
    return d;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: opencc-reference CONFIG OPENCC_DATA_DIR < in > out\n");
        return 2;
    }
    json_error_t jerr;
    json_t *root = json_load_file(argv[1], 0, &jerr);
    if (!root) {
        fprintf(stderr, "%s:%d: %s\n", argv[1], jerr.line, jerr.text);
        return 1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", argv[1]);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    oracle o = {dir, argv[2], NULL, {0}, 0};
    char err[1024] = "";
    oc_profile *p = oc_profile_parse(root, "reference", argv[1], resolve, &o, err, sizeof err);
    json_decref(root);
    if (!p) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    size_t cap = 1 << 16, len = 0, got;
    char *in = malloc(cap);
    while (in && (got = fread(in + len, 1, cap - len, stdin)) > 0)
        if ((len += got) == cap)
            in = realloc(in, cap *= 2);
    if (!in)
        return 1;
    size_t out_len;
    char *out = oc_reference_convert(p, in, len, &out_len, 1);
    int rc = fwrite(out, 1, out_len, stdout) == out_len && fflush(stdout) == 0 ? 0 : 1;
    free(out);
    free(in);
    oc_profile_free(p);
    for (size_t i = 0; i < o.text_count; i++)
        oc_dict_free(o.texts[i]);
    oc_data_free(o.data);
    return rc;
}
