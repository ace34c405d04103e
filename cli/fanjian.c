/* fanjian: the command-line converter. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "convert.h"
#include "fanjian.h"
#include "serve.h"

static const char *prog = "fanjian";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fanjian [-c PROFILE] [OPTIONS] [-i INPUT] [-o OUTPUT] [FILE...]\n"
            "       fanjian [-c PROFILE] [OPTIONS] -r DIR (-o OUTDIR | --in-place)\n"
            "       fanjian [-c PROFILE] [OPTIONS] --in-place FILE...\n"
            "       fanjian clean [--rules FILE] [--report] [-o OUTPUT] [FILE...]\n"
            "       fanjian detect [--json] [--format FMT] [FILE...]\n"
            "       fanjian serve [--listen HOST:PORT] [--dict IMAGE] [--max-body BYTES]\n"
            "                     [--threads N]   (the web page and JSON API; serve --help)\n"
            "       fanjian --list | --version | --help\n"
            "\n"
            "Converts Chinese text between Simplified and Traditional script and their\n"
            "regional standards. Reads FILEs (or INPUT, or standard input) and writes\n"
            "standard output, or OUTPUT, which is replaced atomically. Several text\n"
            "inputs are one text. When the input pauses (a pipe, a terminal), what has\n"
            "come in is written before it waits: `tail -f log | fanjian` works line by\n"
            "line. Input in GB18030/GBK, Big5 or UTF-16 is detected and decoded; HTML,\n"
            "XHTML, Markdown, SRT, ASS, WebVTT and EPUB files (by their extension, or\n"
            "--format) have their text converted and nothing else.\n"
            "\n"
            "  clean                 drop the lines that are site boilerplate (本章未完，\n"
            "                        请点击下一页…) and keep every other line as it is\n"
            "                        (fanjian clean --help)\n"
            "  detect                print each input's script: simplified, traditional,\n"
            "                        both (valid in either), mixed, none (no Han) or\n"
            "                        binary (not text), and the encoding read:\n"
            "                        a.txt: simplified (UTF-8); of a document (EPUB,\n"
            "                        HTML, Markdown, subtitles) the text a reader\n"
            "                        sees: b.epub: traditional (EPUB, UTF-8); --json\n"
            "                        adds format, confidence, counts, minority spans\n"
            "                        (fanjian detect --help)\n"
            "\n"
            "  -c, --config PROFILE  s2t t2s s2tw tw2s s2twp tw2sp s2hk hk2s s2hkp hk2sp\n"
            "                        t2tw tw2t t2hk hk2t t2jp jp2t (OpenCC names like\n"
            "                        s2t.json are accepted), or none (only re-encode);\n"
            "                        an OpenCC config file of your own (./my.json) is\n"
            "                        converted as OpenCC does (README: OpenCC configs);\n"
            "                        the default is s2t, as OpenCC's\n"
            "      --path DIR        look for a -c file, and the dictionaries a config\n"
            "                        names, in DIR too (as OpenCC does); may be given\n"
            "                        more than once\n"
            "      --noflush [BOOL]  OpenCC's: no line-by-line writing (true/1, the default\n"
            "                        when given alone, or false/0); chunks are read whole\n"
            "      --to TARGET       instead of -c: any input, Simplified or Traditional\n"
            "                        (damaged or not), to one standard in one pass:\n"
            "                        tw twp hk hkp hant cn hans (twp, hkp: also the\n"
            "                        region's vocabulary in Simplified clauses)\n"
            "  -i, --input FILE      input file (same as a FILE operand)\n"
            "  -o, --output FILE     output file (default: standard output)\n"
            "      --compat          OpenCC 1.4.2-identical output (maximum matching);\n"
            "                        by default forms are chosen from context\n"
            "      --repair=LEVEL    Traditional input (t2tw t2hk tw2t hk2t t2jp) is\n"
            "                        repaired: auto (default) estimates from the text\n"
            "                        read so far whether it was converted character by\n"
            "                        character, and then re-chooses every character\n"
            "                        in its first form; careful keeps every spelling\n"
            "                        natives use; thorough also fixes spellings the\n"
            "                        word list marks unpreferred (關系, 仿佛); off\n"
            "                        leaves Traditional input as the profile writes it\n"
            "      --fsync           flush each output to disk before it replaces the old file\n"
            "      --clean           remove site boilerplate before converting: the notice\n"
            "                        alone inside a line, a line or block that is nothing\n"
            "                        else whole (text and documents)\n"
            "      --rules FILE      more clean rules: fanjian's format or Legado (阅读)\n"
            "                        replacement-rule JSON, whose removals are applied\n"
            "                        first (docs/clean-rules.md); implies --clean; may\n"
            "                        be given more than once\n"
            "      --report          list each removal on standard error as\n"
            "                        FILE:LINE:COLUMN: text, then a summary per input;\n"
            "                        implies --clean\n"
            "      --quotes=STYLE    quotation marks: tw (「」『』), cn (“”‘’) or keep; the\n"
            "                        default is keep, except s2twp/s2hkp (tw) and\n"
            "                        tw2sp/hk2sp (cn); --compat keeps them\n"
            "      --punct           in Chinese text, 。。。 and ... become ……, and\n"
            "                        , ! ? : ; between Han characters become full-width\n"
            "      --phrases FILE    your own entries, KEY<TAB>VALUE a line (OpenCC's text\n"
            "                        format): they win over everything else; repeatable\n"
            "      --protect FILE    terms never converted (names, brands), one a line\n"
            "      --markup          honour -{text}- (kept as written) and\n"
            "                        -{zh-hans:计算机; zh-hant:電腦}- (the fitting one)\n"
            "      --inspect         instead of the conversion, a JSON line for each\n"
            "                        character whose form the model chose among several:\n"
            "                        line, column, chosen form, the others with their\n"
            "                        margin (nats: how much less likely), for proofreading\n"
            "\n"
            "Encodings and formats:\n"
            "      --from-encoding ENC  the inputs' encoding (default: detected per input;\n"
            "                        UTF-8, GB18030, GBK, Big5, Big5-HKSCS, UTF-16 ...)\n"
            "      --to-encoding ENC    write ENC instead of UTF-8 (not for EPUB); same:\n"
            "                        each output in its input's encoding (-r, --in-place,\n"
            "                        or one FILE)\n"
            "      --lossy           bytes that do not decode become U+FFFD, characters\n"
            "                        ENC cannot hold become '?' (default: an error that\n"
            "                        names the file and byte)\n"
            "      --format FMT      text html xhtml markdown srt ass vtt epub (default:\n"
            "                        by extension; standard input is text)\n"
            "\n"
            "Trees and many files:\n"
            "  -r, --recursive DIR   convert every file below DIR whose format is known\n"
            "                        (.txt .html .md .srt .ass .vtt .epub ...); with -o\n"
            "                        OUTDIR the tree is rebuilt there, other files copied\n"
            "      --in-place        replace each input with its conversion (atomically)\n"
            "      --rename          convert file and directory names too\n"
            "  -j, --jobs N          worker threads (default: one per core): files of a\n"
            "                        tree, or pieces of one text (by default for a file\n"
            "                        over 8 MB); the output is the same\n"
            "      --progress, --no-progress  progress bar on standard error (default:\n"
            "                        when it is a terminal)\n"
            "\n"
            "      --dict IMAGE      dictionary image (default: $FANJIAN_DICT, then the\n"
            "                        image next to this program, then\n"
            "                        ../share/fanjian/fanjian.fjd from it, then %s)\n"
            "      --list            list the profiles\n"
            "      --version         print the version\n",
            fj_dict_default_path());
}

static void clean_usage(FILE *f)
{
    fputs("usage: fanjian clean [OPTIONS] [-i INPUT] [-o OUTPUT] [FILE...]\n"
          "       fanjian clean [OPTIONS] -r DIR (-o OUTDIR | --in-place)\n"
          "       fanjian clean [OPTIONS] --in-place FILE...\n"
          "\n"
          "Removes site boilerplate (本章未完，请点击下一页…, 天才一秒记住本站地址…) and\n"
          "converts nothing: a notice alone inside a line goes, a line or block that is\n"
          "nothing else goes whole, and every other byte stays as it is (line endings,\n"
          "a missing final newline). Text and documents (HTML, Markdown, subtitles,\n"
          "EPUB) as in conversion; `fanjian -c PROFILE --clean` cleans, then converts.\n"
          "\n"
          "      --rules FILE      more rules: fanjian's format or Legado (阅读)\n"
          "                        replacement-rule JSON, whose removals are applied\n"
          "                        first (docs/clean-rules.md); may be given more than once\n"
          "      --report          list each removal on standard error as\n"
          "                        FILE:LINE:COLUMN: text, then a summary per input\n"
          "  -i, -o, -r, --in-place, --rename, -j, --format, --from-encoding,\n"
          "  --to-encoding, --lossy, --fsync, --noflush, --dict: as for conversion\n"
          "                        (fanjian --help)\n",
          f);
}

static void detect_usage(FILE *f)
{
    fputs("usage: fanjian detect [--json] [--format FMT] [--dict IMAGE] [FILE...]\n"
          "\n"
          "Prints each input's script (standard input when no FILE is given):\n"
          "simplified, traditional, both (valid in either), mixed, none (no Han) or\n"
          "binary (not text), then the encoding read, one line per input:\n"
          "  a.txt: simplified (UTF-8)\n"
          "  b.epub: traditional (EPUB, UTF-8)\n"
          "Of a document (EPUB, HTML, Markdown, subtitles) it is the text a reader sees.\n"
          "Text converted character by character is said so, with its damage.\n"
          "\n"
          "      --json            one JSON object a line: file, format, encoding,\n"
          "                        script, confidence, counts, damage, minority spans\n"
          "      --format FMT      text html xhtml markdown srt ass vtt epub (default:\n"
          "                        by extension; standard input is text)\n"
          "      --dict IMAGE      dictionary image (as for conversion: fanjian --help)\n"
          "\n"
          "Exit status: 0; 1 when an input could not be read or decoded (the others\n"
          "are still reported); 2 for a bad option.\n",
          f);
}

/* An input as a message names it: "standard input" for -, else its path
 * made safe to print (fjf_display_name). */
static const char *input_shown(const char *input, char *buf)
{
    return strcmp(input, "-") == 0 ? "standard input"
                                   : fjf_display_name(input, buf, FJF_DISPLAY_MAX);
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
            size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            int ok = strnlen((const char *)p, n) == n && fj_utf8_valid((const char *)p, n, NULL) == n;
            if (ok) {
                fwrite(p, 1, n, f);
                p += n;
            } else {
                fputs("\\ufffd", f);
                p++;
            }
        }
    }
    putc('"', f);
}

/* The UTF-8 text of raw[0..len) for detection, and the name of the
 * encoding read (fjf_encoding_canonical). Decoded when detected cleanly;
 * a damaged text in an encoding that detection still names (a GBK file
 * with a bad byte, a UTF-16 file cut short) with replacement characters,
 * except UTF-16 or UTF-32 whose bytes read as UTF-8 are text (a mark
 * before UTF-8); otherwise the bytes are read as UTF-8, whose invalid
 * bytes fj_detect skips or counts against text. *text is raw itself or a
 * new buffer. 0, or -1 (reported). */
static int detect_decode(const fj_dict *dict, char *raw, size_t len, const char *shown,
                         char **text, size_t *text_len, char encoding[32])
{
    fjf_encoding enc;
    fjf_error err;
    int clean = fjf_encoding_detect(raw, len, 1, &enc, &err) == 0;
    *text = raw;
    *text_len = len;
    snprintf(encoding, 32, "UTF-8");
    if (strcmp(enc.name, "UTF-8") == 0)
        return 0;
    if (!clean && strncmp(enc.name, "UTF-", 4) == 0) {
        fj_detection as_utf8;
        memset(&as_utf8, 0, sizeof as_utf8);
        as_utf8.size = sizeof as_utf8;
        if (fj_detect(dict, raw, len, &as_utf8) == FJ_OK && as_utf8.script != FJ_SCRIPT_BINARY)
            return 0;
    }
    fjx_settings given;
    memset(&given, 0, sizeof given);
    given.format = -1;
    given.f.from_encoding = enc.name;
    given.f.recode_flags = clean ? 0 : FJF_LOSSY;
    fjf_encoding read;
    if (fjx_decode_whole(&given, raw, len, shown, text, text_len, &read) != 0)
        return -1;
    snprintf(encoding, 32, "%s", enc.name);
    return 0;
}

/* A document's text spans, one per line (a span ends where a tag or a
 * line of markup does), for fj_detect. */
static int collect_text(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    (void)out;
    fjf_buf *all = ctx;
    if (all->len && fjf_buf_append(all, "\n", 1) != 0)
        return -1;
    return fjf_buf_append(all, text, len);
}

/* What `fanjian detect` found in one input. */
typedef struct detected {
    fj_detection r;
    fj_script_span *spans; /* with --json, for plain text */
    fjf_format format;
    const char *encoding; /* as read; NULL for binary */
} detected;

/* Upper case for display: EPUB, HTML. */
static void format_shown(fjf_format format, char *buf, size_t size)
{
    const char *name = fjf_format_name(format);
    size_t i = 0;
    for (; name[i] && i + 1 < size; i++)
        buf[i] = name[i] >= 'a' && name[i] <= 'z' ? (char)(name[i] - 'a' + 'A') : name[i];
    buf[i] = 0;
}

/* The text line: NAME: LABEL (FORMAT, ENCODING), NAME left out for
 * standard input, FORMAT for documents, no parenthesis for binary. */
/* From this damage on, detect says the text was converted character by
 * character (native text stays near 0, such text near 0.9). */
#define FJX_DAMAGE_SHOWN 0.5

static void print_detected(FILE *f, const char *shown, const detected *d)
{
    if (shown)
        fprintf(f, "%s: ", shown);
    fputs(fj_script_name(d->r.script), f);
    if (d->r.damage >= FJX_DAMAGE_SHOWN)
        fprintf(f, ", converted character by character (damage %.2f)", d->r.damage);
    if (d->encoding) {
        char format[16];
        format_shown(d->format, format, sizeof format);
        if (d->format != FJF_TEXT)
            fprintf(f, " (%s, %s)", format, d->encoding);
        else
            fprintf(f, " (%s)", d->encoding);
    }
    putc('\n', f);
}

/* One JSON object a line: file, format, encoding (null for binary),
 * then fj_detection_json's members: script, confidence, counts, damage,
 * spans (byte offsets; null for a document, whose text is not one run of
 * its bytes). */
static void print_detected_json(FILE *f, const char *input, const detected *d)
{
    const fj_detection *r = &d->r;
    fputs("{\"file\":", f);
    json_string(f, input);
    fprintf(f, ",\"format\":\"%s\",\"encoding\":", fjf_format_name(d->format));
    if (d->encoding)
        json_string(f, d->encoding);
    else
        fputs("null", f);
    putc(',', f);
    /* The library's shape, as the HTTP API's. */
    char small[512];
    int with_spans = d->format == FJF_TEXT;
    size_t n = fj_detection_json(r, with_spans, small, sizeof small);
    char *big = n < sizeof small ? NULL : malloc(n + 1);
    if (big)
        fj_detection_json(r, with_spans, big, n + 1);
    else if (n >= sizeof small)
        fprintf(stderr, "fanjian: out of memory\n");
    fputs(big ? big : small, f);
    free(big);
    fputs("}\n", f);
}

/* fj_detect, with room for every span when they are wanted. */
static fj_status detect_text(const fj_dict *dict, const char *text, size_t len, int want_spans,
                             detected *d)
{
    memset(&d->r, 0, sizeof d->r);
    d->r.size = sizeof d->r;
    fj_status st = fj_detect(dict, text, len, &d->r);
    if (st == FJ_OK && want_spans && d->r.span_count > 0) {
        d->spans = malloc(d->r.span_count * sizeof *d->spans);
        if (!d->spans)
            return FJ_ERR_NOMEM;
        d->r.spans = d->spans;
        d->r.span_capacity = d->r.span_count;
        st = fj_detect(dict, text, len, &d->r);
    }
    return st;
}

/* Detects one input's bytes raw[0..len) as `format` into *d; 0, or -1
 * (reported, naming `shown`). */
static int detect_input(const fj_dict *dict, const fjx_settings *s, char *raw, size_t len,
                        const char *shown, int json, detected *d, char encoding[32])
{
    fjf_error err;
    fjf_buf all = {0};
    char *text = raw;
    size_t text_len = len;
    fj_status st = FJ_OK;
    int rc = 0;
    snprintf(encoding, 32, "UTF-8"); /* EPUB content is read as UTF-8 */
    if (d->format != FJF_EPUB &&
        detect_decode(dict, raw, len, shown, &text, &text_len, encoding) != 0)
        return -1;
    if (d->format == FJF_TEXT) {
        st = detect_text(dict, text, text_len, json, d);
    } else {
        /* A document that is not text at all is binary, whatever its markup
         * (fj_detect judges that by the first 8 KiB). */
        if (d->format != FJF_EPUB)
            st = fj_detect(dict, text, text_len < 8192 ? text_len : 8192, &d->r);
        if (st == FJ_OK && d->r.script != FJ_SCRIPT_BINARY) {
            if (fjf_document_text(&s->f, d->format, text, text_len, collect_text, &all, &err) != 0) {
                if (err.offset != FJF_NO_OFFSET)
                    fprintf(stderr, "%s: %s: %s (byte %zu)\n", prog, shown, err.message,
                            err.offset);
                else
                    fprintf(stderr, "%s: %s: %s\n", prog, shown, err.message);
                rc = -1;
            } else {
                st = detect_text(dict, all.data ? all.data : "", all.len, 0, d);
            }
        }
    }
    if (rc == 0 && st != FJ_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, shown, fj_strerror(st));
        rc = -1;
    }
    d->encoding = d->r.script == FJ_SCRIPT_BINARY ? NULL : encoding;
    fjf_buf_free(&all);
    if (text != raw)
        free(text);
    return rc;
}

static int detect_main(int argc, char **argv)
{
    const char *dict_path = NULL;
    const char **inputs = calloc((size_t)argc + 1, sizeof(char *));
    size_t ninputs = 0;
    int json = 0, format = -1;
    if (!inputs)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0)
            json = 1;
        else if (strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0) {
            const char *val = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : NULL;
            format = val ? fjf_format_from_name(val) : -1;
            if (format < 0) {
                fprintf(stderr, "%s: detect: --format takes text, html, xhtml, markdown, srt, "
                                "ass, vtt or epub%s%s\n", prog, val ? ", not " : "", val ? val : "");
                free(inputs);
                return 2;
            }
        }
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
            detect_usage(stdout);
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
    if (fjx_open_dict(dict_path, &dict, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        free(inputs);
        return 1;
    }
    if (ninputs == 0)
        inputs[ninputs++] = "-";
    int rc = 0;
    fjx_settings plain;
    memset(&plain, 0, sizeof plain);
    plain.format = -1;
    char shown[FJF_DISPLAY_MAX];
    for (size_t i = 0; i < ninputs; i++) {
        int is_stdin = strcmp(inputs[i], "-") == 0;
        input_shown(inputs[i], shown);
        int fd = is_stdin ? 0 : open(inputs[i], O_RDONLY | O_CLOEXEC);
        size_t len = 0;
        char *raw = fd < 0 ? NULL : fjf_read_all(fd, &len, 0);
        if (!raw) {
            fprintf(stderr, "%s: cannot read %s: %s\n", prog, shown, strerror(errno));
            rc = 1;
            if (fd > 0)
                close(fd);
            continue;
        }
        if (fd > 0)
            close(fd);
        detected d;
        memset(&d, 0, sizeof d);
        d.r.size = sizeof d.r;
        d.format = format >= 0 ? (fjf_format)format
                   : is_stdin  ? FJF_TEXT
                               : fjf_format_from_path(inputs[i]);
        char encoding[32];
        if (detect_input(dict, &plain, raw, len, shown, json, &d, encoding) != 0)
            rc = 1;
        else if (json)
            print_detected_json(stdout, inputs[i], &d);
        else
            print_detected(stdout, is_stdin ? NULL : shown, &d);
        free(d.spans);
        free(raw);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: cannot write standard output: %s\n", prog, strerror(errno));
        rc = 1;
    }
    fj_dict_close(dict);
    free(inputs);
    return rc;
}


/* ---- conversion ------------------------------------------------------------------ */

/* Reads the --rules files and opens the clean-up rules; 0 on success. A
 * file whose text starts with '[' or '{' holds Legado rules (fanjian-formats.h),
 * which go into *legado; the others are in the native format. */
static int open_clean(const fj_dict *dict, const char **files, size_t nfiles, fj_clean **out,
                      fjf_legado **legado)
{
    fj_clean_rules *rules = calloc(nfiles ? nfiles : 1, sizeof *rules);
    size_t nnative = 0;
    int rc = rules ? 0 : 1;
    for (size_t i = 0; i < nfiles && rc == 0; i++) {
        char shown[FJF_DISPLAY_MAX];
        input_shown(files[i], shown);
        int fd = open(files[i], O_RDONLY | O_CLOEXEC);
        size_t len = 0;
        char *text = fd < 0 ? NULL : fjf_read_all(fd, &len, 0);
        if (!text) {
            fprintf(stderr, "%s: cannot read rules %s: %s\n", prog, shown, strerror(errno));
            rc = 1;
        }
        if (fd >= 0)
            close(fd);
        if (text && fjf_legado_detect(text, len)) {
            rc = fjf_legado_add(legado, text, len, shown) == 0 ? 0 : 1;
            free(text);
            continue;
        }
        rules[nnative].name = files[i];
        rules[nnative].text = text;
        rules[nnative].len = len;
        nnative += text != NULL;
    }
    fj_error err;
    if (rc == 0 && fj_clean_open(dict, rules, nnative, 0, out, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        rc = 1;
    }
    for (size_t i = 0; rules && i < nnative; i++)
        free((void *)(uintptr_t)rules[i].text);
    free(rules);
    return rc;
}

/* The format of an input: --format, else its extension; standard input is text. */
static fjf_format input_format(const fjx_settings *s, const char *input)
{
    if (s->format >= 0)
        return (fjf_format)s->format;
    return strcmp(input, "-") == 0 ? FJF_TEXT : fjf_format_from_path(input);
}

/* Converts one input (text or document) into `out`. */
static int convert_input(const fjx_settings *s, int fd, const char *name, fjf_format format,
                         fjx_sink *out)
{
    if (format != FJF_TEXT)
        return fjx_document_convert(s, format, fd, name, out, NULL);
    fjx_text *t = NULL;
    int rc = fjx_text_begin(s, fd, name, out, &t);
    if (rc == 0)
        rc = fjx_text_input(t, fd, name, NULL);
    if (rc == 0)
        rc = fjx_text_end(t);
    fjx_text_free(t);
    return rc;
}

/* The directory part of `path` ("." when it has none), in a new string. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
}

/* One --in-place file: replaced by its conversion, under its converted name
 * with --rename. A new name already taken is an error: both files are kept. */
static int convert_one_in_place(const fjx_settings *s, const char *in, int rename_files, int sync)
{
    char shown[FJF_DISPLAY_MAX];
    fjf_display_name(in, shown, sizeof shown);
    struct stat link_sb;
    if (rename_files && lstat(in, &link_sb) == 0 && S_ISLNK(link_sb.st_mode)) {
        fprintf(stderr, "%s: %s: a symbolic link is not renamed: convert its target\n", prog, shown);
        return 1;
    }
    /* Non-blocking, so that a FIFO given by mistake does not hang us. */
    int fd = open(in, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        fprintf(stderr, "%s: cannot open %s: %s\n", prog, shown, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    if (S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: %s is a directory: to replace the files in a tree, use -r %s "
                        "--in-place\n", prog, shown, shown);
        close(fd);
        return 1;
    }
    if (!S_ISREG(sb.st_mode)) {
        fprintf(stderr, "%s: %s: not a regular file: --in-place only replaces regular files\n",
                prog, shown);
        close(fd);
        return 1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const char *slash = strrchr(in, '/');
    const char *base = slash ? slash + 1 : in;
    char *converted = rename_files ? fjf_convert_name(&s->f, base) : NULL;
    int renamed = converted && strcmp(converted, base) != 0;
    char *dir = renamed ? directory_of(in) : NULL;
    char *target = NULL;
    int dir_fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (renamed && dir_fd >= 0) {
        size_t n = strlen(dir) + strlen(converted) + 2;
        if ((target = malloc(n)) != NULL)
            snprintf(target, n, "%s/%s", slash ? dir : ".", converted);
    }
    if ((rename_files && !converted) || (renamed && (dir_fd < 0 || !target))) {
        fprintf(stderr, "%s: cannot convert %s: %s\n", prog, shown,
                dir && dir_fd < 0 ? strerror(errno) : strerror(ENOMEM));
        if (dir_fd >= 0)
            close(dir_fd);
        free(dir);
        free(converted);
        free(target);
        close(fd);
        return 1;
    }
    fjx_outfile of;
    int r = renamed ? fjx_outfile_openat(&of, dir_fd, converted, target) : fjx_outfile_open(&of, in);
    if (r == 0 && of.through) {
        /* A standard-stream name (/dev/stdout) that leads to a regular file. */
        fprintf(stderr, "%s: %s: not a regular file: --in-place only replaces regular files\n",
                prog, shown);
        fjx_outfile_abort(&of);
        r = -1;
    } else if (r == 0) {
        /* The new name must be free, unless it is this very file (a hard link). */
        struct stat taken;
        of.no_replace = renamed && !(fstatat(dir_fd, converted, &taken, AT_SYMLINK_NOFOLLOW) == 0 &&
                                     taken.st_dev == sb.st_dev && taken.st_ino == sb.st_ino);
        of.like_fd = fd;
        int clash = 0;
        r = convert_input(s, fd, shown, input_format(s, in), &of.sink);
        if (r == 0) {
            r = fjx_outfile_commit(&of, sync, sb.st_mode & 07777);
            clash = r != 0 && errno == EEXIST && of.no_replace;
        } else {
            fjx_outfile_abort(&of);
        }
        if (clash) {
            char taken_shown[FJF_DISPLAY_MAX];
            fprintf(stderr, "%s: %s: not converted: its new name %s is taken (both kept)\n", prog,
                    shown, fjf_display_name(target, taken_shown, sizeof taken_shown));
        }
    }
    close(fd);
    if (r == 0 && renamed && unlink(in) != 0) {
        fprintf(stderr, "%s: cannot remove %s: %s\n", prog, shown, strerror(errno));
        r = -1;
    }
    if (dir_fd >= 0)
        close(dir_fd);
    free(dir);
    free(converted);
    free(target);
    return r != 0;
}

/* --in-place FILE...: each file replaced by its conversion, one by one. */
static int convert_in_place(const fjx_settings *s, const char **inputs, size_t ninputs,
                            int rename_files, int sync)
{
    int rc = 0;
    for (size_t i = 0; i < ninputs; i++) {
        if (strcmp(inputs[i], "-") == 0) {
            fprintf(stderr, "%s: --in-place needs files, not standard input\n", prog);
            rc = 1;
        } else if (convert_one_in_place(s, inputs[i], rename_files, sync) != 0) {
            rc = 1;
        }
    }
    return rc;
}

/* Canonical encoding name for an option, or exits. */
static const char *encoding_option(const char *option, const char *value, char *buf)
{
    const char *name = fjf_encoding_canonical(value, buf);
    if (!name) {
        fprintf(stderr, "%s: %s: unknown encoding %s\n", prog, option, value);
        exit(2);
    }
    return name;
}

/* An option that takes one value: a second, different one is an error
 * (which would win is not for us to guess). 0, or -1 (reported). */
static int set_once(const char **slot, const char *value, const char *option)
{
    if (*slot && strcmp(*slot, value) != 0) {
        fprintf(stderr, "%s: %s given twice (%s, then %s): give it once\n", prog, option, *slot,
                value);
        return -1;
    }
    *slot = value;
    return 0;
}

/* OpenCC's --noflush takes a boolean; 1, 0, or -1 when `v` is none. */
static int boolean_value(const char *v)
{
    if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
        return 1;
    if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
        return 0;
    return -1;
}

/* Whether `name` (s2t, s2t.json) is a profile the image holds. */
static int is_stock_profile(const fj_dict *dict, const char *name)
{
    size_t len = strlen(name);
    if (len > 5 && strcmp(name + len - 5, ".json") == 0)
        len -= 5;
    for (size_t i = 0; i < fj_dict_profile_count(dict); i++) {
        const char *p = fj_dict_profile_name(dict, i);
        if (strlen(p) == len && strncmp(p, name, len) == 0)
            return 1;
    }
    return 0;
}

/* -c NAME as OpenCC finds a config: the stock profiles are built in; any
 * other name that is no file here is looked for in each --path DIR. The
 * path found (in a new string, *found), or `name` itself. */
static const char *find_config(const fj_dict *dict, const char *name, const char **paths,
                               size_t npaths, char **found)
{
    *found = NULL;
    if (npaths == 0 || strchr(name, '/') || is_stock_profile(dict, name) ||
        strcmp(name, "none") == 0 || access(name, F_OK) == 0)
        return name;
    for (size_t i = 0; i < npaths; i++) {
        size_t n = strlen(paths[i]) + strlen(name) + 2;
        char *candidate = malloc(n);
        struct stat sb;
        if (candidate) {
            snprintf(candidate, n, "%s/%s", paths[i], name);
            if (stat(candidate, &sb) == 0 && S_ISREG(sb.st_mode))
                return *found = candidate;
        }
        free(candidate);
    }
    return name;
}

/* The conversion command; `inputs`, `rules` and `paths` have room for every argument. */
/* A regular file larger than this is converted on every core by default. */
#define ONE_TEXT_PARALLEL_SIZE (8LL << 20)

/* --inspect: where the model chose a form, as JSON lines. */
typedef struct inspect_out {
    const char *text;
    size_t len;
    const char *name; /* NULL for standard input */
    fjx_sink *out;
    size_t count;
} inspect_out;

static int write_choice(void *ctx, const fj_choice *choice)
{
    inspect_out *io = ctx;
    char *line = fjf_choice_json(choice, io->text, io->len, io->name);
    if (!line) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    int failed = fjx_sink_write(io->out, line, strlen(line)) || fjx_sink_write(io->out, "\n", 1);
    free(line);
    io->count++;
    return failed;
}

/* Each input's choices, in turn; every input is read whole (as UTF-8 after
 * decoding, which the offsets count in). */
static int inspect_inputs(const fjx_settings *set, const fj_converter *conv, const char **inputs,
                          const int *fds, size_t ninputs, unsigned flags, fjx_sink *out)
{
    size_t total = 0;
    for (size_t i = 0; i < ninputs; i++) {
        char shown[FJF_DISPLAY_MAX];
        input_shown(inputs[i], shown);
        size_t len;
        char *data = fjf_read_all(fds[i], &len, 0);
        if (!data) {
            fprintf(stderr, "%s: cannot read %s: %s\n", prog, shown, strerror(errno));
            return 1;
        }
        char *utf8;
        size_t utf8_len;
        fjf_error ferr;
        fjf_encoding enc;
        if (fjf_decode_whole(&set->f, data, len, shown, &utf8, &utf8_len, &enc, NULL, &ferr) != 0) {
            fprintf(stderr, "%s: %s\n", prog, ferr.message);
            free(data);
            return 1;
        }
        inspect_out io = {utf8, utf8_len, strcmp(inputs[i], "-") == 0 ? NULL : inputs[i], out, 0};
        fj_status st = fj_inspect(conv, utf8, utf8_len, write_choice, &io);
        if (utf8 != data)
            free(utf8);
        free(data);
        if (st != FJ_OK) {
            if (st != FJ_ERR_CALLBACK || !out->failed)
                fprintf(stderr, "%s: --inspect %s: %s\n", prog, shown, fj_strerror(st));
            return 1;
        }
        total += io.count;
    }
    if (total == 0 && (flags & FJ_COMPAT))
        fprintf(stderr, "%s: warning: --inspect: --compat chooses no forms (maximum matching): "
                        "nothing to report\n", prog);
    return out->failed ? 1 : 0;
}

static int convert_run(int argc, char **argv, const char **inputs, const char **rules,
                       const char **paths, fjf_user_entries *user);

/* The user's entries are freed whichever way the run ends. */
static int convert_main(int argc, char **argv, const char **inputs, const char **rules,
                        const char **paths)
{
    fjf_user_entries user;
    memset(&user, 0, sizeof user);
    int rc = convert_run(argc, argv, inputs, rules, paths, &user);
    fjf_user_entries_free(&user);
    return rc;
}

static int convert_run(int argc, char **argv, const char **inputs, const char **rules,
                       const char **paths, fjf_user_entries *user)
{
    /* `fanjian clean ...` is `fanjian --clean ...` without a profile. */
    int clean_cmd = argc > 1 && strcmp(argv[1], "clean") == 0;
    const char *profile = NULL, *target = NULL, *output = NULL, *dict_path = NULL, *tree = NULL;
    const char *from_encoding = NULL, *to_encoding = NULL, *format = NULL, *repair = NULL;
    const char *quotes = NULL, *jobs_given = NULL;
    size_t ninputs = 0, nrules = 0, npaths = 0;
    int list = 0, sync_output = 0, clean = clean_cmd, in_place = 0, rename_files = 0;
    int jobs = 0, progress = -1, noflush = 0;
    unsigned conv_flags = FJ_DEFAULT;
    char from_buf[32], to_buf[32];
    fjx_settings set;
    memset(&set, 0, sizeof set);
    set.format = -1;
    set.f.quotes = -1; /* not given */
    int markup = 0, inspect = 0;
    for (int i = clean_cmd ? 2 : 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define TAKES(shortopt, longopt)                                                       \
    ((strcmp(a, shortopt) == 0 || strcmp(a, longopt) == 0)                             \
         ? (i + 1 < argc ? (val = argv[++i], 1)                                        \
                         : (fprintf(stderr, "%s: %s needs a value\n", prog, a), exit(2), 0)) \
         : (strncmp(a, longopt "=", sizeof(longopt)) == 0 ? (val = a + sizeof(longopt), 1) : 0))
        if (TAKES("-c", "--config")) {
            if (set_once(&profile, val, "-c") != 0)
                return 2;
        } else if (TAKES("--to", "--to")) {
            if (set_once(&target, val, "--to") != 0)
                return 2;
        } else if (TAKES("-i", "--input"))
            inputs[ninputs++] = val;
        else if (TAKES("-o", "--output")) {
            if (set_once(&output, val, "-o") != 0)
                return 2;
        } else if (TAKES("-d", "--dict")) {
            if (set_once(&dict_path, val, "--dict") != 0)
                return 2;
        } else if (TAKES("-r", "--recursive")) {
            if (set_once(&tree, val, "-r") != 0)
                return 2;
        } else if (TAKES("--path", "--path"))
            paths[npaths++] = val;
        else if (strcmp(a, "--noflush") == 0 || strncmp(a, "--noflush=", 10) == 0) {
            /* OpenCC's takes a value (--noflush 1); alone, it means true. */
            const char *v = a[9] == '=' ? a + 10
                            : i + 1 < argc && boolean_value(argv[i + 1]) >= 0 ? argv[++i]
                                                                             : "1";
            noflush = boolean_value(v);
            if (noflush < 0) {
                fprintf(stderr, "%s: --noflush takes true, false, 1 or 0, not %s\n", prog, v);
                return 2;
            }
        } else if (TAKES("-j", "--jobs") || (strncmp(a, "-j", 2) == 0 && a[2] && (val = a + 2))) {
            if (set_once(&jobs_given, val, "-j") != 0)
                return 2;
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || n < 1 || n > 256) {
                fprintf(stderr, "%s: --jobs takes a number from 1 to 256, not %s\n", prog, val);
                return 2;
            }
            jobs = (int)n;
        } else if (TAKES("--from-encoding", "--from-encoding")) {
            if (set_once(&from_encoding, val, "--from-encoding") != 0)
                return 2;
            set.f.from_encoding = encoding_option(a, val, from_buf);
        } else if (TAKES("--to-encoding", "--to-encoding")) {
            if (set_once(&to_encoding, val, "--to-encoding") != 0)
                return 2;
            set.same_encoding = strcmp(val, "same") == 0;
            set.f.to_encoding = set.same_encoding ? NULL : encoding_option(a, val, to_buf);
        } else if (TAKES("--format", "--format")) {
            if (set_once(&format, val, "--format") != 0)
                return 2;
            set.format = fjf_format_from_name(val);
            if (set.format < 0) {
                fprintf(stderr, "%s: --format takes text, html, xhtml, markdown, srt, ass, vtt "
                                "or epub, not %s\n", prog, val);
                return 2;
            }
        } else if (TAKES("--rules", "--rules")) {
            rules[nrules++] = val;
            clean = 1;
        } else if (strcmp(a, "--clean") == 0)
            clean = 1;
        else if (strcmp(a, "--report") == 0)
            clean = set.report = 1;
        else if (strcmp(a, "--fsync") == 0)
            sync_output = 1;
        else if (strcmp(a, "--lossy") == 0)
            set.f.recode_flags |= FJF_LOSSY;
        else if (strcmp(a, "--in-place") == 0)
            in_place = 1;
        else if (strcmp(a, "--rename") == 0)
            rename_files = 1;
        else if (strcmp(a, "--progress") == 0)
            progress = 1;
        else if (strcmp(a, "--no-progress") == 0)
            progress = 0;
        else if (strcmp(a, "--compat") == 0)
            conv_flags |= FJ_COMPAT;
        else if (TAKES("--repair", "--repair")) {
            if (set_once(&repair, val, "--repair") != 0)
                return 2;
            unsigned level = strcmp(val, "thorough") == 0  ? FJ_REPAIR_THOROUGH
                             : strcmp(val, "careful") == 0 ? FJ_REPAIR_CAREFUL
                             : strcmp(val, "off") == 0     ? FJ_REPAIR_OFF
                             : strcmp(val, "auto") == 0    ? 0
                                                           : ~0u;
            if (level == ~0u) {
                fprintf(stderr, "%s: --repair takes auto, careful, thorough or off, not %s\n",
                        prog, val);
                return 2;
            }
            conv_flags = (conv_flags & ~(unsigned)(FJ_REPAIR_THOROUGH | FJ_REPAIR_CAREFUL |
                                                   FJ_REPAIR_OFF)) |
                         level;
        }
        else if (TAKES("--quotes", "--quotes")) {
            if (set_once(&quotes, val, "--quotes") != 0)
                return 2;
            if (strcmp(val, "tw") == 0 || strcmp(val, "hk") == 0)
                set.f.quotes = FJ_QUOTES_CORNER;
            else if (strcmp(val, "cn") == 0)
                set.f.quotes = FJ_QUOTES_CURLY;
            else if (strcmp(val, "keep") == 0)
                set.f.quotes = FJ_QUOTES_KEEP;
            else {
                fprintf(stderr, "%s: --quotes takes tw, cn or keep, not %s\n", prog, val);
                return 2;
            }
        } else if (strcmp(a, "--punct") == 0)
            set.f.punct_flags = FJ_PUNCT_ELLIPSIS | FJ_PUNCT_FULLWIDTH;
        else if (TAKES("--phrases", "--phrases") || TAKES("--protect", "--protect")) {
            fjf_error ferr;
            if (fjf_user_entries_read(user, val, a[4] == 'o', &ferr) != 0) {
                fprintf(stderr, "%s: %s\n", prog, ferr.message);
                fjf_user_entries_free(user);
                return 2;
            }
        } else if (strcmp(a, "--markup") == 0)
            markup = 1;
        else if (strcmp(a, "--inspect") == 0)
            inspect = 1;
        else if (strcmp(a, "--list") == 0)
            list = 1;
        else if (strcmp(a, "--version") == 0) {
            printf("fanjian %s\n", fj_version());
            return 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (clean_cmd)
                clean_usage(stdout);
            else
                usage(stdout);
            return 0;
        } else if (strcmp(a, "-") == 0 || a[0] != '-')
            inputs[ninputs++] = a;
        else {
            fprintf(stderr, "%s: unknown option %s (see --help)\n", prog, a);
            return 2;
        }
#undef TAKES
    }
    if (tree && ninputs) {
        fprintf(stderr, "%s: -r DIR converts a tree; give no other inputs\n", prog);
        return 2;
    }
    if (tree && !output == !in_place) {
        fprintf(stderr, "%s: -r DIR needs -o OUTDIR or --in-place (one of them)\n", prog);
        return 2;
    }
    if (!tree && in_place && ninputs == 0) {
        fprintf(stderr, "%s: --in-place needs the FILEs to replace (or -r DIR): none given\n",
                prog);
        return 2;
    }
    if (!tree && in_place && output) {
        fprintf(stderr, "%s: --in-place replaces its FILEs: give no -o\n", prog);
        return 2;
    }
    if (rename_files && !tree && !in_place) {
        fprintf(stderr, "%s: --rename works with -r DIR or --in-place\n", prog);
        return 2;
    }
    /* As OpenCC: s2t when no profile is given; -c none only re-encodes. */
    if (!profile && !target && !clean_cmd)
        profile = "s2t";
    int converts = target || (profile && strcmp(profile, "none") != 0);
    int one_input = !tree && !in_place;
    if (inspect && (!converts || tree || in_place || clean)) {
        fprintf(stderr, "%s: --inspect reports the forms a conversion chose in text FILEs or "
                        "standard input: %s\n", prog,
                !converts ? "give -c PROFILE or --to TARGET"
                : tree || in_place ? "give FILEs, not -r or --in-place"
                                   : "leave out --clean");
        return 2;
    }
    fjf_format first_format = one_input && ninputs ? input_format(&set, inputs[0]) : FJF_TEXT;
    /* Options that cannot be honoured are errors: the output would not be
     * what was asked. */
    if ((conv_flags & FJ_COMPAT) && repair && converts) {
        fprintf(stderr, "%s: --repair does not apply with --compat (OpenCC 1.4.2's output is "
                        "not repaired): give one of them\n", prog);
        return 2;
    }
    if ((quotes || set.f.punct_flags) && !converts) {
        fprintf(stderr, "%s: %s applies to converted text, and %s converts nothing: give -c "
                        "PROFILE or --to TARGET\n", prog, quotes ? "--quotes" : "--punct",
                clean_cmd && !profile ? "fanjian clean" : "-c none");
        return 2;
    }
    if (set.same_encoding && one_input && ninputs > 1) {
        fprintf(stderr, "%s: --to-encoding same writes an output in its input's encoding: give "
                        "one FILE, --in-place FILE... or -r DIR\n", prog);
        return 2;
    }
    if (set.f.to_encoding && one_input && first_format == FJF_EPUB) {
        fprintf(stderr, "%s: --to-encoding %s does not apply to EPUB (an EPUB is UTF-8): leave "
                        "it out\n", prog, to_encoding);
        return 2;
    }
    /* Options that change nothing are warnings: the output is still what
     * was asked. (A tree says so of its EPUBs itself.) */
    size_t epubs = 0;
    for (size_t i = 0; set.f.to_encoding && in_place && !tree && i < ninputs; i++)
        epubs += input_format(&set, inputs[i]) == FJF_EPUB;
    if (epubs)
        fprintf(stderr, "%s: warning: --to-encoding %s does not apply to EPUB: %zu EPUB%s stay%s "
                        "UTF-8\n", prog, set.f.to_encoding, epubs, epubs == 1 ? "" : "s",
                epubs == 1 ? "s" : "");
    if (set.f.from_encoding && one_input && first_format == FJF_EPUB)
        fprintf(stderr, "%s: warning: --from-encoding does not apply to EPUB (its documents "
                        "are read as UTF-8): ignored\n", prog);
    if ((conv_flags & FJ_COMPAT) && !converts)
        fprintf(stderr, "%s: warning: --compat: nothing is converted: ignored\n", prog);
    if (repair && !converts)
        fprintf(stderr, "%s: warning: --repair: nothing is converted: ignored\n", prog);
    if (jobs_given && in_place && !tree)
        fprintf(stderr, "%s: warning: -j: --in-place converts its FILEs one by one (-r DIR "
                        "converts files in parallel): ignored\n", prog);
    if (progress == 1 && !tree)
        fprintf(stderr, "%s: warning: --progress: only -r DIR shows progress: ignored\n", prog);
    if (sync_output && one_input && !(output && strcmp(output, "-") != 0))
        fprintf(stderr, "%s: warning: --fsync: standard output is not a file fanjian replaces: "
                        "ignored\n", prog);
    for (size_t i = 0; i < npaths; i++) {
        struct stat sb;
        if (stat(paths[i], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            char shown[FJF_DISPLAY_MAX];
            fprintf(stderr, "%s: warning: --path %s: not a directory: ignored\n", prog,
                    fjf_display_name(paths[i], shown, sizeof shown));
        }
    }
    set.f.write_when_idle = !noflush;

    fj_dict *dict = NULL;
    fj_error err;
    if (fjx_open_dict(dict_path, &dict, &err) != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        return 1;
    }
    if (list) {
        for (size_t i = 0; i < fj_dict_profile_count(dict); i++)
            printf("%s\n", fj_dict_profile_name(dict, i));
        fj_dict_close(dict);
        return 0;
    }
    if (target && profile) {
        fprintf(stderr, "%s: --to and -c exclude each other\n", prog);
        fj_dict_close(dict);
        return 2;
    }
    /* One converter from one options struct. Typography stays with the
     * formats library (fjf_settings), which leaves it out of file names. */
    char *config_found = NULL;
    if (profile)
        profile = find_config(dict, profile, paths, npaths, &config_found);
    fj_converter *conv = NULL;
    fj_options opts;
    fj_options_init(&opts);
    opts.target = target;
    opts.profile = !target && profile && strcmp(profile, "none") != 0 ? profile : NULL;
    opts.flags = conv_flags;
    opts.quotes = FJ_QUOTES_KEEP;
    opts.phrases = user->phrases;
    opts.phrase_count = user->phrase_count;
    opts.protect = (const char *const *)user->protect;
    opts.protect_count = user->protect_count;
    opts.markup = markup ? FJ_MARKUP_INLINE : 0;
    int user_entries = user->phrase_count || user->protect_count || markup;
    /* A config file: a stock one is its profile, any other brings its own
     * image (formats/opencc_config.c). */
    fjf_opencc_config *config = NULL;
    fjf_error config_err;
    if (opts.profile && fjf_opencc_config_load(dict, opts.profile, paths, npaths, &config, &config_err)) {
        fprintf(stderr, "%s: %s\n", prog, config_err.message);
        free(config_found);
        fjf_user_entries_free(user);
        fj_dict_close(dict);
        return 2;
    }
    if (config)
        opts.profile = fjf_opencc_config_profile(config);
    fj_status open_st = FJ_OK;
    if (opts.target || opts.profile || user_entries)
        open_st = fj_converter_open_options(config ? fjf_opencc_config_dict(config) : dict, &opts,
                                            &conv, &err);
    fjf_user_entries_free(user); /* the converter has copied them */
    if (open_st != FJ_OK) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        free(config_found);
        fjf_opencc_config_free(config);
        fj_dict_close(dict);
        return 2;
    }
    fj_profile_info info;
    info.size = sizeof info;
    if (repair && opts.profile && !(conv_flags & FJ_COMPAT) &&
        fj_profile_info_get(NULL, fj_converter_profile(conv), &info) == FJ_OK && !info.repairs)
        fprintf(stderr, "%s: warning: --repair: %s does not repair (t2tw t2hk tw2t hk2t t2jp "
                        "do): ignored\n", prog, info.name);
    fj_clean *cleaner = NULL;
    fjf_legado *legado = NULL;
    if (clean && open_clean(dict, rules, nrules, &cleaner, &legado) != 0) {
        fj_clean_close(cleaner);
        fjf_legado_free(legado);
        fj_converter_close(conv);
        fjf_opencc_config_free(config);
        free(config_found);
        fj_dict_close(dict);
        return 2;
    }
    set.f.conv = conv;
    set.f.clean = cleaner;
    set.f.legado = legado;
    if (set.report)
        set.f.report = fjx_report_removal;
    /* Typography after conversion: asked for, or the localising profiles'
     * own style (never in --compat unless asked). */
    if (set.f.quotes < 0)
        set.f.quotes = (conv_flags & FJ_COMPAT) || !conv ? FJ_QUOTES_KEEP
                                                       : (int)fj_profile_quotes(fj_converter_profile(conv));
    if (!conv)
        set.f.punct_flags = 0;
    set.f.lang = conv && fj_profile_info_get(NULL, fj_converter_profile(conv), &info) == FJ_OK
                     ? info.lang
                     : NULL;
    fjx_outfile_install_signals();

    int rc = 0;
    if (tree) {
        fjx_batch b = {&set, tree, output, in_place, rename_files, jobs, progress, sync_output};
        rc = fjx_batch_run(&b);
    } else if (in_place) {
        rc = convert_in_place(&set, inputs, ninputs, rename_files, sync_output);
    } else {
        if (ninputs == 0)
            inputs[ninputs++] = "-";
        /* Documents are converted one by one; text inputs are one text. */
        size_t documents = 0;
        for (size_t i = 0; i < ninputs; i++)
            documents += input_format(&set, inputs[i]) != FJF_TEXT;
        int to_file = output && strcmp(output, "-") != 0;
        char shown[FJF_DISPLAY_MAX];
        if (inspect && documents) {
            fprintf(stderr, "%s: --inspect reads text: %s is a document (%s)\n", prog,
                    input_shown(inputs[0], shown), fjf_format_name(input_format(&set, inputs[0])));
            rc = 2;
        } else if (documents && ninputs > 1) {
            fprintf(stderr, "%s: %s is a document (%s): convert documents one at a time, "
                            "or a tree with -r\n", prog, input_shown(inputs[0], shown),
                    fjf_format_name(input_format(&set, inputs[0])));
            rc = 2;
        } else if (documents && input_format(&set, inputs[0]) == FJF_EPUB && !to_file &&
                   isatty(1)) {
            fprintf(stderr, "%s: an EPUB is not written to a terminal: use -o FILE\n", prog);
            rc = 2;
        }
        /* Open every input first, so a missing file stops us before any output. */
        int *fds = rc == 0 ? calloc(ninputs, sizeof(int)) : NULL;
        if (rc == 0 && !fds)
            rc = 1;
        for (size_t i = 0; i < ninputs && rc == 0; i++) {
            fds[i] = strcmp(inputs[i], "-") == 0 ? 0 : open(inputs[i], O_RDONLY | O_CLOEXEC);
            struct stat sb;
            int is_dir = fds[i] > 0 && fstat(fds[i], &sb) == 0 && S_ISDIR(sb.st_mode);
            if (is_dir) {
                input_shown(inputs[i], shown);
                fprintf(stderr, "%s: %s is a directory: to convert a tree, use -r %s -o OUTDIR "
                                "(or --in-place)\n", prog, shown, shown);
                close(fds[i]);
                fds[i] = -1;
            } else if (fds[i] < 0) {
                fprintf(stderr, "%s: cannot open %s: %s\n", prog, input_shown(inputs[i], shown),
                        strerror(errno));
            }
            if (fds[i] < 0) {
                rc = 1;
                for (size_t j = 0; j < i; j++)
                    if (fds[j] > 0)
                        close(fds[j]);
            }
        }
        fjx_outfile of;
        fjx_sink stdout_sink = {1, "standard output", 0, 0, 0};
        fjx_sink *out = &stdout_sink;
        if (rc == 0 && to_file) {
            if (fjx_outfile_open(&of, output) != 0) {
                rc = 1;
                for (size_t j = 0; j < ninputs; j++)
                    if (fds[j] > 0)
                        close(fds[j]);
            } else if (documents && input_format(&set, inputs[0]) == FJF_EPUB && of.through &&
                       isatty(of.sink.fd)) {
                fprintf(stderr, "%s: an EPUB is not written to a terminal: use -o FILE\n", prog);
                fjx_outfile_abort(&of);
                rc = 2;
                for (size_t j = 0; j < ninputs; j++)
                    if (fds[j] > 0)
                        close(fds[j]);
            } else {
                out = &of.sink;
            }
        }
        /* One text on several threads: asked for, or a large regular file. */
        if (rc == 0 && !documents && !inspect && conv) {
            struct stat sb;
            long cores = sysconf(_SC_NPROCESSORS_ONLN);
            int big = ninputs == 1 && fstat(fds[0], &sb) == 0 && S_ISREG(sb.st_mode) &&
                      sb.st_size > ONE_TEXT_PARALLEL_SIZE;
            set.f.jobs = jobs_given ? (unsigned)jobs : big && cores > 1 ? (unsigned)(cores < 64 ? cores : 64) : 0;
            if (jobs_given && jobs > 1 && fj_independent_prefix(conv, "\n", 1) != 1)
                fprintf(stderr, "%s: warning: -j: this conversion depends on all the text before "
                                "(--to, repair, --phrases, --markup): one thread\n", prog);
        }
        if (rc == 0) {
            if (inspect) {
                rc = inspect_inputs(&set, conv, inputs, fds, ninputs, conv_flags, out);
            } else if (documents) {
                rc = fjx_document_convert(&set, input_format(&set, inputs[0]), fds[0],
                                          input_shown(inputs[0], shown), out, NULL)
                         ? 1
                         : 0;
            } else {
                fjx_text *t = NULL;
                rc = fjx_text_begin(&set, fds[0], input_shown(inputs[0], shown), out, &t) ? 1 : 0;
                for (size_t i = 0; i < ninputs && rc == 0; i++)
                    rc = fjx_text_input(t, fds[i], input_shown(inputs[i], shown), NULL)
                             ? 1
                             : 0;
                if (rc == 0)
                    rc = fjx_text_end(t) ? 1 : 0;
                fjx_text_free(t);
            }
            for (size_t i = 0; i < ninputs; i++)
                if (fds[i] > 0)
                    close(fds[i]);
            if (to_file) {
                /* Keep an existing file's permissions; a new file gets the usual ones. */
                if (rc == 0)
                    rc = fjx_outfile_commit(&of, sync_output, fjx_output_mode(output, NULL)) ? 1 : 0;
                else
                    fjx_outfile_abort(&of);
            }
        }
        free(fds);
    }
    fj_clean_close(cleaner);
    fjf_legado_free(legado);
    fj_converter_close(conv);
    fjf_opencc_config_free(config);
    free(config_found);
    fj_dict_close(dict);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "detect") == 0)
        return detect_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return fjx_serve_main(argc - 1, argv + 1);
    const char **inputs = calloc((size_t)argc + 1, sizeof(char *));
    const char **rules = calloc((size_t)argc + 1, sizeof(char *));
    const char **paths = calloc((size_t)argc + 1, sizeof(char *));
    int rc = inputs && rules && paths ? convert_main(argc, argv, inputs, rules, paths) : 1;
    free(inputs);
    free(rules);
    free(paths);
    return rc;
}
