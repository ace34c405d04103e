/* A program built against an installed fanjian with
 * `pkg-config --cflags --libs fanjian` (tests/suite-install.sh).
 *
 *   pkgconfig_consumer [PROFILE [TEXT]]     default: s2t 头发干了
 *
 * Opens the dictionary as fj_dict_open(NULL, ...) does ($FANJIAN_DICT, else
 * the library's default), converts TEXT in the default mode and prints it
 * with a newline. Exits 1 with the error's message on failure. */
#include <stdio.h>
#include <string.h>

#include <fanjian.h>

int main(int argc, char **argv)
{
    const char *profile = argc > 1 ? argv[1] : "s2t";
    const char *text = argc > 2 ? argv[2] : "头发干了";
    fj_dict *dict = NULL;
    fj_converter *conv = NULL;
    fj_error err;
    if (fj_dict_open(NULL, NULL, &dict, &err) != FJ_OK) {
        fprintf(stderr, "fj_dict_open: %s\n", err.message);
        return 1;
    }
    if (fj_converter_open(dict, profile, FJ_DEFAULT, &conv, &err) != FJ_OK) {
        fprintf(stderr, "fj_converter_open: %s\n", err.message);
        fj_dict_close(dict);
        return 1;
    }
    char *out = NULL;
    size_t len = 0;
    fj_status st = fj_convert_alloc(conv, text, strlen(text), &out, &len);
    if (st != FJ_OK) {
        fprintf(stderr, "fj_convert_alloc: %s\n", fj_strerror(st));
    } else {
        fwrite(out, 1, len, stdout);
        putchar('\n');
    }
    fj_free(conv, out);
    fj_converter_close(conv);
    fj_dict_close(dict);
    return st == FJ_OK ? 0 : 1;
}
