/* A program written to OpenCC's documented C API only (<opencc.h>, -lopencc):
 * tests/suite-install.sh builds it against fanjian's libopencc.
 *
 *   opencc_consumer CONFIG [FILE]      CONFIG as given to opencc_open ("-": NULL)
 *
 * Converts FILE (default: standard input) line by line, each line (with its
 * newline) through opencc_convert_utf8 with its length, through
 * opencc_convert_utf8_to_buffer, and, when it holds no NUL byte, through
 * opencc_convert_utf8 with (size_t)-1. It writes the conversion once and
 * exits 1, naming the line, when the three disagree; on any error it prints
 * opencc_error() and exits 1. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <opencc.h>

/* OpenCC documents no bound for the output buffer; fanjian's opencc.h does:
 * five bytes per input byte, plus the NUL. Exactly that much is allocated,
 * so a sanitizer build catches any write past it. */
static size_t buffer_size(size_t len) { return len * 5 + 1; }

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: opencc_consumer CONFIG [FILE]\n");
        return 2;
    }
    FILE *in = stdin;
    if (argc == 3 && !(in = fopen(argv[2], "rb"))) {
        perror(argv[2]);
        return 1;
    }
    opencc_t cc = opencc_open(strcmp(argv[1], "-") == 0 ? NULL : argv[1]);
    if (cc == (opencc_t)-1) {
        fprintf(stderr, "opencc_open: %s\n", opencc_error());
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    unsigned long lineno = 0;
    int rc = 0;
    while (rc == 0 && (got = getline(&line, &cap, in)) >= 0) {
        size_t len = (size_t)got;
        lineno++;
        char *a = opencc_convert_utf8(cc, line, len);
        char *buf = malloc(buffer_size(len));
        size_t blen = buf ? opencc_convert_utf8_to_buffer(cc, line, len, buf) : (size_t)-1;
        if (!a || blen == (size_t)-1) {
            fprintf(stderr, "line %lu: %s\n", lineno, opencc_error());
            rc = 1;
        } else if (strlen(a) != blen || memcmp(a, buf, blen + 1) != 0) {
            fprintf(stderr, "line %lu: opencc_convert_utf8 and _to_buffer differ\n", lineno);
            rc = 1;
        } else if (memchr(line, 0, len) == NULL) {
            char *c = opencc_convert_utf8(cc, line, (size_t)-1);
            if (!c || strcmp(a, c) != 0) {
                fprintf(stderr, "line %lu: length (size_t)-1 differs: %s\n", lineno,
                        c ? "other output" : opencc_error());
                rc = 1;
            }
            opencc_convert_utf8_free(c);
        }
        if (rc == 0 && fwrite(a, 1, blen, stdout) != blen)
            rc = 1;
        opencc_convert_utf8_free(a);
        free(buf);
    }
    free(line);
    if (in != stdin)
        fclose(in);
    if (opencc_close(cc) != 0) {
        fprintf(stderr, "opencc_close: %s\n", opencc_error());
        rc = 1;
    }
    if (fflush(stdout) != 0)
        rc = 1;
    return rc;
}
