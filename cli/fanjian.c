/* fanjian: the command-line converter. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
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
            "usage: fanjian -c PROFILE [-i INPUT] [-o OUTPUT] [--compat] [--dict IMAGE]\n"
            "               [--clean [--rules FILE] [--report]] [--quotes=tw|cn|keep]\n"
            "               [--punct] [FILE...]\n"
            "       fanjian clean [--rules FILE] [--report] [-o OUTPUT] [FILE...]\n"
            "       fanjian detect [--json] [FILE...]\n"
            "       fanjian --list | --version | --help\n"
            "\n"
            "Converts Chinese text between Simplified and Traditional script and their\n"
            "regional standards. Reads FILEs (or INPUT, or standard input) and writes\n"
            "standard output, or OUTPUT, which is replaced atomically.\n"
            "\n"
            "  clean                 drop the lines that are site boilerplate (本章未完，\n"
            "                        请点击下一页…) and keep every other line as it is\n"
            "  detect                print each input's script: simplified, traditional,\n"
            "                        both (valid in either), mixed or none (no Han);\n"
            "                        --json adds confidence, counts and minority spans\n"
            "\n"
            "  -c, --config PROFILE  s2t t2s s2tw tw2s s2twp tw2sp s2hk hk2s s2hkp hk2sp\n"
            "                        t2tw tw2t t2hk hk2t t2jp jp2t (OpenCC names like\n"
            "                        s2t.json are accepted)\n"
            "  -i, --input FILE      input file (same as a FILE operand)\n"
            "  -o, --output FILE     output file (default: standard output)\n"
            "      --compat          OpenCC 1.4.2-identical output (maximum matching);\n"
            "                        by default forms are chosen from context\n"
            "      --fsync           flush OUTPUT to disk before it replaces the old file\n"
            "      --clean           drop site boilerplate lines before converting\n"
            "      --rules FILE      more clean rules (format: data/clean-rules.txt);\n"
            "                        implies --clean; may be given more than once\n"
            "      --report          list each dropped line on standard error as\n"
            "                        FILE:LINE: text; implies --clean\n"
            "      --quotes=STYLE    quotation marks: tw (「」『』), cn (“”‘’) or keep; the\n"
            "                        default is keep, except s2twp/s2hkp (tw) and\n"
            "                        tw2sp/hk2sp (cn); --compat keeps them\n"
            "      --punct           in Chinese text, 。。。 and ... become ……, and\n"
            "                        , ! ? : ; between Han characters become full-width\n"
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

/* Reads a whole file (or standard input, fd 0) into a new buffer. */
static char *read_all(int fd, size_t *len)
{
    struct stat sb;
    size_t cap = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0
                     ? (size_t)sb.st_size + 1
                     : 65536;
    char *buf = malloc(cap);
    size_t n = 0;
    while (buf) {
        if (n == cap) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = b;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *len = n;
    return buf;
}

/* ---- fanjian detect ----------------------------------------------------------- */

/* A JSON string: escapes, and U+FFFD for bytes that are not UTF-8. */
static void json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    putc('"', f);
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
            p++;
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
            p++;
        } else if (c < 0x80) {
            putc((int)c, f);
            p++;
        } else {
            int n = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
            int ok = n > 0;
            for (int k = 1; k < n && ok; k++)
                ok = (p[k] & 0xC0) == 0x80;
            if (ok && n == 3)
                ok = !(c == 0xE0 && p[1] < 0xA0) && !(c == 0xED && p[1] >= 0xA0);
            if (ok && n == 4)
                ok = !(c == 0xF0 && p[1] < 0x90) && !(c == 0xF4 && p[1] >= 0x90);
            if (ok) {
                fwrite(p, 1, (size_t)n, f);
                p += n;
            } else {
                fputs("\\ufffd", f);
                p++;
            }
        }
    }
    putc('"', f);
}

static int detect_main(int argc, char **argv)
{
    const char *dict_path = NULL;
    const char **inputs = calloc((size_t)argc + 1, sizeof(char *));
    size_t ninputs = 0;
    int json = 0;
    if (!inputs)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0)
            json = 1;
        else if (strcmp(a, "-d") == 0 || strcmp(a, "--dict") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: %s needs a value\n", prog, a);
                free(inputs);
                return 2;
            }
            dict_path = argv[++i];
        } else if (strncmp(a, "--dict=", 7) == 0)
            dict_path = a + 7;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            free(inputs);
            return 0;
        } else if (strcmp(a, "-") == 0 || a[0] != '-')
            inputs[ninputs++] = a;
        else {
            fprintf(stderr, "%s: detect: unknown option %s (see --help)\n", prog, a);
            free(inputs);
            return 2;
        }
    }
    fj_dict *dict = NULL;
    fj_error err;
    if (open_dict(dict_path, &dict, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        free(inputs);
        return 1;
    }
    if (ninputs == 0)
        inputs[ninputs++] = "-";
    int rc = 0;
    for (size_t i = 0; i < ninputs; i++) {
        int is_stdin = strcmp(inputs[i], "-") == 0;
        int fd = is_stdin ? 0 : open(inputs[i], O_RDONLY | O_CLOEXEC);
        size_t len = 0;
        char *text = fd < 0 ? NULL : read_all(fd, &len);
        if (!text) {
            fprintf(stderr, "%s: cannot read %s: %s\n", prog,
                    is_stdin ? "standard input" : inputs[i], strerror(errno));
            rc = 1;
            if (fd > 0)
                close(fd);
            continue;
        }
        if (fd > 0)
            close(fd);
        fj_detection r;
        memset(&r, 0, sizeof r);
        fj_status st = fj_detect(dict, text, len, &r);
        fj_script_span *spans = NULL;
        if (st == FJ_OK && json && r.span_count > 0) {
            spans = malloc(r.span_count * sizeof *spans);
            if (!spans)
                st = FJ_ERR_NOMEM;
            else {
                r.spans = spans;
                r.span_capacity = r.span_count;
                st = fj_detect(dict, text, len, &r);
            }
        }
        if (st != FJ_OK) {
            fprintf(stderr, "%s: %s: %s\n", prog, is_stdin ? "standard input" : inputs[i],
                    fj_strerror(st));
            rc = 1;
        } else if (json) {
            fputs("{\"file\":", stdout);
            json_string(stdout, inputs[i]);
            printf(",\"label\":\"%s\",\"confidence\":%.3f,\"han\":%zu,\"simplified\":%zu,"
                   "\"traditional\":%zu,\"spans\":[",
                   fj_script_name(r.script), r.confidence, r.han, r.simplified, r.traditional);
            for (size_t k = 0; k < r.span_count && k < r.span_capacity; k++)
                printf("%s{\"offset\":%zu,\"length\":%zu,\"script\":\"%s\"}", k ? "," : "",
                       spans[k].offset, spans[k].length, fj_script_name(spans[k].script));
            fputs("]}\n", stdout);
        } else if (is_stdin) {
            printf("%s\n", fj_script_name(r.script));
        } else {
            printf("%s: %s\n", inputs[i], fj_script_name(r.script));
        }
        free(spans);
        free(text);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write standard output: %s\n", prog, strerror(errno));
        rc = 1;
    }
    fj_dict_close(dict);
    free(inputs);
    return rc;
}

/* ---- conversion and clean-up --------------------------------------------------- */

/* Input goes through the clean-up stream (when cleaning), then the
 * conversion stream (when converting), then to the sink. */
typedef struct chain {
    fj_clean_stream *clean;
    fj_stream *conv;
    fj_punct *punct; /* after conversion, or NULL */
    sink *out;
    fj_status conv_status; /* the conversion stream's failure, seen by the clean-up stream */
    const char *name;      /* the current input, for --report */
} chain;

static int feed_conv(void *ctx, const char *data, size_t len)
{
    chain *ch = ctx;
    fj_status st = fj_stream_feed(ch->conv, data, len);
    if (st != FJ_OK) {
        ch->conv_status = st;
        return -1;
    }
    return 0;
}

static int feed_punct(void *ctx, const char *data, size_t len)
{
    return fj_punct_feed(ctx, data, len) == FJ_OK ? 0 : -1;
}

static int report_line(void *ctx, unsigned long long line_no, const char *line, size_t len)
{
    const chain *ch = ctx;
    fprintf(stderr, "%s:%llu: ", ch->name, line_no);
    fwrite(line, 1, len, stderr);
    putc('\n', stderr);
    return 0;
}

/* The status of the last failed step: a write, the conversion, or `st`. */
static int chain_error(const chain *ch, fj_status st)
{
    if (ch->out->failed)
        return (int)FJ_ERR_CALLBACK;
    if (ch->conv_status != FJ_OK)
        return (int)ch->conv_status;
    return (int)st;
}

static int convert_fd(chain *ch, int fd, const char *name, char *buf)
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
        fj_status st = ch->clean  ? fj_clean_stream_feed(ch->clean, buf, (size_t)n)
                       : ch->conv ? fj_stream_feed(ch->conv, buf, (size_t)n)
                       : (write_all(ch->out, buf, (size_t)n) ? FJ_ERR_CALLBACK : FJ_OK);
        if (st != FJ_OK)
            return chain_error(ch, st);
    }
}

/* Reads the --rules files and opens the clean-up rules; 0 on success. */
static int open_clean(const fj_dict *dict, const char **files, size_t nfiles, fj_clean **out)
{
    fj_clean_rules *rules = calloc(nfiles ? nfiles : 1, sizeof *rules);
    int rc = rules ? 0 : 1;
    for (size_t i = 0; i < nfiles && rc == 0; i++) {
        int fd = open(files[i], O_RDONLY | O_CLOEXEC);
        char *text = fd < 0 ? NULL : read_all(fd, &rules[i].len);
        if (!text) {
            fprintf(stderr, "%s: cannot read rules %s: %s\n", prog, files[i], strerror(errno));
            rc = 1;
        }
        if (fd >= 0)
            close(fd);
        rules[i].name = files[i];
        rules[i].text = text;
    }
    fj_error err;
    if (rc == 0 && fj_clean_open(dict, rules, nfiles, 0, out, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        rc = 1;
    }
    for (size_t i = 0; rules && i < nfiles; i++)
        free((void *)(uintptr_t)rules[i].text);
    free(rules);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "detect") == 0)
        return detect_main(argc - 1, argv + 1);
    /* `fanjian clean ...` is `fanjian --clean ...` without a profile. */
    int clean_cmd = argc > 1 && strcmp(argv[1], "clean") == 0;
    const char *profile = NULL, *output = NULL, *dict_path = NULL;
    const char **inputs = calloc((size_t)argc + 1, sizeof(char *));
    const char **rules = calloc((size_t)argc + 1, sizeof(char *));
    size_t ninputs = 0, nrules = 0;
    int list = 0, sync_output = 0, clean = clean_cmd, report = 0;
    unsigned conv_flags = FJ_DEFAULT, punct_flags = 0;
    int quotes = -1; /* not given */
    if (!inputs || !rules)
        return 1;
    for (int i = clean_cmd ? 2 : 1; i < argc; i++) {
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
        else if (TAKES("--rules", "--rules")) {
            rules[nrules++] = val;
            clean = 1;
        } else if (strcmp(a, "--clean") == 0)
            clean = 1;
        else if (strcmp(a, "--report") == 0)
            clean = report = 1;
        else if (strcmp(a, "--fsync") == 0)
            sync_output = 1;
        else if (strcmp(a, "--compat") == 0)
            conv_flags = FJ_COMPAT;
        else if (TAKES("--quotes", "--quotes")) {
            if (strcmp(val, "tw") == 0 || strcmp(val, "hk") == 0)
                quotes = FJ_QUOTES_CORNER;
            else if (strcmp(val, "cn") == 0)
                quotes = FJ_QUOTES_CURLY;
            else if (strcmp(val, "keep") == 0)
                quotes = FJ_QUOTES_KEEP;
            else {
                fprintf(stderr, "%s: --quotes takes tw, cn or keep, not %s\n", prog, val);
                free(inputs);
                free(rules);
                return 2;
            }
        } else if (strcmp(a, "--punct") == 0)
            punct_flags = FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH;
        else if (strcmp(a, "--list") == 0)
            list = 1;
        else if (strcmp(a, "--version") == 0) {
            printf("fanjian %s\n", fj_version());
            free(inputs);
            free(rules);
            return 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            free(inputs);
            free(rules);
            return 0;
        } else if (strcmp(a, "-") == 0 || a[0] != '-')
            inputs[ninputs++] = a;
        else {
            fprintf(stderr, "%s: unknown option %s (see --help)\n", prog, a);
            free(inputs);
            free(rules);
            return 2;
        }
#undef TAKES
    }

    fj_dict *dict = NULL;
    fj_error err;
    if (open_dict(dict_path, &dict, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        free(inputs);
        free(rules);
        return 1;
    }
    if (list) {
        for (size_t i = 0; i < fj_dict_profile_count(dict); i++)
            printf("%s\n", fj_dict_profile_name(dict, i));
        fj_dict_close(dict);
        free(inputs);
        free(rules);
        return 0;
    }
    if (!profile && !clean_cmd) {
        fprintf(stderr, "%s: no profile given: use -c PROFILE (see --list)\n", prog);
        fj_dict_close(dict);
        free(inputs);
        free(rules);
        return 2;
    }
    fj_converter *conv = NULL;
    if (profile && fj_converter_open(dict, profile, conv_flags, &conv, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        fj_dict_close(dict);
        free(inputs);
        free(rules);
        return 2;
    }
    fj_clean *cleaner = NULL;
    if (clean && open_clean(dict, rules, nrules, &cleaner) != 0) {
        fj_converter_close(conv);
        fj_dict_close(dict);
        free(inputs);
        free(rules);
        return 2;
    }

    /* Open every input first, so a missing file stops us before any output. */
    if (ninputs == 0)
        inputs[ninputs++] = "-";
    int *fds = calloc(ninputs, sizeof(int));
    int rc = fds ? 0 : 1;
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
    chain ch = {NULL, NULL, NULL, &out, FJ_OK, NULL};
    /* Typography after conversion: asked for, or the localising profiles'
     * own style (never in --compat unless asked). */
    if (quotes < 0)
        quotes = (conv_flags & FJ_COMPAT) ? FJ_QUOTES_KEEP : (int)fj_profile_quotes(profile);
    if (rc == 0 && conv && (quotes != FJ_QUOTES_KEEP || punct_flags) &&
        fj_punct_new((fj_quotes)quotes, punct_flags, NULL, write_all, &out, &ch.punct) != FJ_OK)
        rc = 1;
    if (rc == 0 && (!buf || (conv && fj_stream_new(conv, ch.punct ? feed_punct : write_all,
                                                   ch.punct ? (void *)ch.punct : (void *)&out,
                                                   &ch.conv) != FJ_OK))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        rc = 1;
    }
    for (size_t i = 0; i < ninputs && rc == 0; i++) {
        const char *name = fds[i] == 0 ? "standard input" : inputs[i];
        ch.name = name;
        /* Each file is cleaned on its own: its lines are numbered from 1. */
        if (cleaner && fj_clean_stream_new(cleaner, conv ? feed_conv : write_all,
                                           conv ? (void *)&ch : (void *)&out,
                                           report ? report_line : NULL, &ch,
                                           &ch.clean) != FJ_OK) {
            fprintf(stderr, "%s: out of memory\n", prog);
            rc = 1;
            break;
        }
        int r = convert_fd(&ch, fds[i], name, buf);
        if (r == 0 && ch.clean) {
            fj_status st = fj_clean_stream_finish(ch.clean);
            r = st == FJ_OK ? 0 : chain_error(&ch, st);
        }
        fj_clean_stream_free(ch.clean);
        ch.clean = NULL;
        if (r > 0 && !out.failed)
            fprintf(stderr, "%s: %s\n", prog, fj_strerror((fj_status)r));
        if (r != 0)
            rc = 1;
    }
    if (rc == 0 && ch.conv) {
        fj_status st = fj_stream_finish(ch.conv);
        if (st == FJ_OK && ch.punct)
            st = fj_punct_finish(ch.punct);
        if (st != FJ_OK)
            rc = 1;
    }
    if (out.failed)
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, out.name, strerror(out.err));
    for (size_t i = 0; fds && i < ninputs; i++)
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
    fj_stream_free(ch.conv);
    fj_punct_free(ch.punct);
    fj_clean_close(cleaner);
    free(buf);
    free(fds);
    free(inputs);
    free(rules);
    fj_converter_close(conv);
    fj_dict_close(dict);
    return rc;
}
