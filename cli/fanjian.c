/* fanjian: the command-line converter. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fanjian.h"

#define READ_CHUNK (1u << 20)

static const char *prog = "fanjian";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fanjian -c PROFILE [-i INPUT] [-o OUTPUT] [--compat] [--dict IMAGE] [FILE...]\n"
            "       fanjian --list | --version | --help\n"
            "\n"
            "Converts Chinese text between Simplified and Traditional script and their\n"
            "regional standards. Reads FILEs (or INPUT, or standard input) and writes\n"
            "standard output, or OUTPUT, which is replaced atomically.\n"
            "\n"
            "  -c, --config PROFILE  s2t t2s s2tw tw2s s2twp tw2sp s2hk hk2s s2hkp hk2sp\n"
            "                        t2tw tw2t t2hk hk2t t2jp jp2t (OpenCC names like\n"
            "                        s2t.json are accepted)\n"
            "  -i, --input FILE      input file (same as a FILE operand)\n"
            "  -o, --output FILE     output file (default: standard output)\n"
            "      --compat          OpenCC 1.4.2-identical output (maximum matching);\n"
            "                        by default forms are chosen from context\n"
            "      --fsync           flush OUTPUT to disk before it replaces the old file\n"
            "      --dict IMAGE      dictionary image (default: $FANJIAN_DICT, then the\n"
            "                        image next to this program, then %s)\n"
            "      --list            list the profiles\n"
            "      --version         print the version\n",
            fj_dict_default_path());
}

typedef struct sink {
    int fd;
    const char *name;
    int failed;
    int err;
} sink;

static int write_all(void *ctx, const char *data, size_t len)
{
    sink *s = ctx;
    while (len) {
        ssize_t n = write(s->fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            s->failed = 1;
            s->err = errno;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The dictionary: --dict, $FANJIAN_DICT, next to the executable, installed. */
static fj_status open_dict(const char *path, fj_dict **dict, fj_error *err)
{
    if (path || getenv("FANJIAN_DICT"))
        return fj_dict_open(path, NULL, dict, err);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char beside[PATH_MAX + 32];
        snprintf(beside, sizeof beside, "%s/fanjian.fjd", dirname(exe));
        if (access(beside, R_OK) == 0)
            return fj_dict_open(beside, NULL, dict, err);
    }
    return fj_dict_open(NULL, NULL, dict, err);
}

static int convert_fd(fj_stream *stream, int fd, const char *name, char *buf)
{
    for (;;) {
        ssize_t n = read(fd, buf, READ_CHUNK);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "%s: cannot read %s: %s\n", prog, name, strerror(errno));
            return -1;
        }
        if (n == 0)
            return 0;
        fj_status st = fj_stream_feed(stream, buf, (size_t)n);
        if (st != FJ_OK)
            return (int)st;
    }
}

int main(int argc, char **argv)
{
    const char *profile = NULL, *output = NULL, *dict_path = NULL;
    const char **inputs = calloc((size_t)argc + 1, sizeof(char *));
    size_t ninputs = 0;
    int list = 0, sync_output = 0;
    unsigned conv_flags = FJ_DEFAULT;
    if (!inputs)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define TAKES(shortopt, longopt)                                                       \
    ((strcmp(a, shortopt) == 0 || strcmp(a, longopt) == 0)                             \
         ? (i + 1 < argc ? (val = argv[++i], 1)                                        \
                         : (fprintf(stderr, "%s: %s needs a value\n", prog, a), exit(2), 0)) \
         : (strncmp(a, longopt "=", sizeof(longopt)) == 0 ? (val = a + sizeof(longopt), 1) : 0))
        if (TAKES("-c", "--config"))
            profile = val;
        else if (TAKES("-i", "--input"))
            inputs[ninputs++] = val;
        else if (TAKES("-o", "--output"))
            output = val;
        else if (TAKES("-d", "--dict"))
            dict_path = val;
        else if (strcmp(a, "--fsync") == 0)
            sync_output = 1;
        else if (strcmp(a, "--compat") == 0)
            conv_flags = FJ_COMPAT;
        else if (strcmp(a, "--list") == 0)
            list = 1;
        else if (strcmp(a, "--version") == 0) {
            printf("fanjian %s\n", fj_version());
            free(inputs);
            return 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            free(inputs);
            return 0;
        } else if (strcmp(a, "-") == 0 || a[0] != '-')
            inputs[ninputs++] = a;
        else {
            fprintf(stderr, "%s: unknown option %s (see --help)\n", prog, a);
            free(inputs);
            return 2;
        }
#undef TAKES
    }

    fj_dict *dict = NULL;
    fj_error err;
    if (open_dict(dict_path, &dict, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        free(inputs);
        return 1;
    }
    if (list) {
        for (size_t i = 0; i < fj_dict_profile_count(dict); i++)
            printf("%s\n", fj_dict_profile_name(dict, i));
        fj_dict_close(dict);
        free(inputs);
        return 0;
    }
    if (!profile) {
        fprintf(stderr, "%s: no profile given: use -c PROFILE (see --list)\n", prog);
        fj_dict_close(dict);
        free(inputs);
        return 2;
    }
    fj_converter *conv = NULL;
    if (fj_converter_open(dict, profile, conv_flags, &conv, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        fj_dict_close(dict);
        free(inputs);
        return 2;
    }

    /* Open every input first, so a missing file stops us before any output. */
    if (ninputs == 0)
        inputs[ninputs++] = "-";
    int *fds = calloc(ninputs, sizeof(int));
    int rc = 0;
    for (size_t i = 0; i < ninputs && rc == 0; i++) {
        fds[i] = strcmp(inputs[i], "-") == 0 ? 0 : open(inputs[i], O_RDONLY | O_CLOEXEC);
        if (fds[i] < 0) {
            fprintf(stderr, "%s: cannot open %s: %s\n", prog, inputs[i], strerror(errno));
            rc = 1;
            for (size_t j = 0; j < i; j++)
                if (fds[j] > 0)
                    close(fds[j]);
        }
    }
    char tmp[PATH_MAX];
    sink out = {1, "standard output", 0, 0};
    if (rc == 0 && output && strcmp(output, "-") != 0) {
        /* Write beside the target and rename, so failure never leaves a partial file. */
        snprintf(tmp, sizeof tmp, "%s.fanjian-XXXXXX", output);
        out.fd = mkstemp(tmp);
        out.name = output;
        if (out.fd < 0) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog, output, strerror(errno));
            rc = 1;
        }
    }
    char *buf = rc == 0 ? malloc(READ_CHUNK) : NULL;
    fj_stream *stream = NULL;
    if (rc == 0 && (!buf || fj_stream_new(conv, write_all, &out, &stream) != FJ_OK)) {
        fprintf(stderr, "%s: out of memory\n", prog);
        rc = 1;
    }
    for (size_t i = 0; i < ninputs && rc == 0; i++) {
        const char *name = fds[i] == 0 ? "standard input" : inputs[i];
        int r = convert_fd(stream, fds[i], name, buf);
        if (r > 0)
            fprintf(stderr, "%s: %s\n", prog,
                    out.failed ? "write failed" : fj_strerror((fj_status)r));
        if (r != 0)
            rc = 1;
    }
    if (rc == 0) {
        fj_status st = fj_stream_finish(stream);
        if (st != FJ_OK)
            rc = 1;
    }
    if (out.failed)
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, out.name, strerror(out.err));
    for (size_t i = 0; i < ninputs; i++)
        if (fds[i] > 0)
            close(fds[i]);
    if (output && strcmp(output, "-") != 0 && out.fd >= 0 && out.fd != 1) {
        if (rc == 0) {
            mode_t mask = umask(0);
            umask(mask);
            struct stat sb;
            /* Keep an existing file's permissions; a new file gets the usual ones. */
            mode_t mode = stat(output, &sb) == 0 ? (sb.st_mode & 07777) : (0666 & ~mask);
            if (fchmod(out.fd, mode) != 0 || (sync_output && fsync(out.fd) != 0)) {
                fprintf(stderr, "%s: cannot write %s: %s\n", prog, output, strerror(errno));
                rc = 1;
            }
        }
        if (close(out.fd) != 0 && rc == 0) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog, output, strerror(errno));
            rc = 1;
        }
        if (rc == 0 && rename(tmp, output) != 0) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog, output, strerror(errno));
            rc = 1;
        }
        if (rc != 0)
            unlink(tmp);
    }
    fj_stream_free(stream);
    free(buf);
    free(fds);
    free(inputs);
    fj_converter_close(conv);
    fj_dict_close(dict);
    return rc;
}
