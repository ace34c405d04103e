/* include/fanjian.h from C99 and from C++ (tests/suite-install.sh compiles
 * this file both ways, with -pedantic and -Werror): the header is plain
 * C99, wrapped in extern "C", and links as such.
 *
 *   header_consumer DICT     prints "VERSION NUMBER OUTPUT" for 头发干了 (s2t)
 *
 * Exits 1 with the error's message on failure. */
#include <stdio.h>
#include <string.h>

#include <fanjian.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: header_consumer DICT\n");
        return 2;
    }
    if (fj_version_number() != (unsigned)FJ_VERSION_NUMBER ||
        strcmp(fj_version(), FJ_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s, library %s\n", FJ_VERSION_STRING, fj_version());
        return 1;
    }
    fj_dict *dict = NULL;
    fj_converter *conv = NULL;
    fj_error err;
    if (fj_dict_open(argv[1], NULL, &dict, &err) != FJ_OK ||
        fj_converter_open(dict, "s2t", FJ_DEFAULT, &conv, &err) != FJ_OK) {
        fprintf(stderr, "%s\n", err.message);
        fj_dict_close(dict);
        return 1;
    }
    char out[64];
    size_t len = 0;
    const char text[] = "头发干了";
    fj_status st = fj_convert(conv, text, sizeof text - 1, out, sizeof out, &len);
    fj_converter_close(conv);
    fj_dict_close(dict);
    if (st != FJ_OK) {
        fprintf(stderr, "%s\n", fj_strerror(st));
        return 1;
    }
    printf("%s %06x %.*s\n", fj_version(), fj_version_number(), (int)len, out);
    return 0;
}
