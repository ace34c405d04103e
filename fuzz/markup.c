/* Fuzz: the document readers (HTML, XHTML/OPF/NCX, SRT, ASS, WebVTT,
 * Markdown). Input: a format byte, then the document.
 * Invariants: with a callback that copies, the output is the input byte
 * for byte; with one that brackets each span, removing the brackets gives
 * the input back, spans are never empty, and in valid UTF-8 every span is
 * whole characters; with lang and charset set, nothing crashes. */
#include <string.h>

#include "../cli/files.h"
#include "fuzz.h"

static int copy_span(void *ctx, const char *text, size_t len, fjx_buf *out)
{
    (void)ctx;
    return fjx_buf_append(out, text, len);
}

static int mark_span(void *ctx, const char *text, size_t len, fjx_buf *out)
{
    const int *valid = ctx;
    FUZZ_ASSERT(len > 0);
    if (*valid)
        FUZZ_ASSERT(fuzz_valid_utf8((const unsigned char *)text, len));
    return fjx_buf_append(out, "\x01", 1) || fjx_buf_append(out, text, len) ||
                   fjx_buf_append(out, "\x02", 1)
               ? -1
               : 0;
}

static int rewrite(int format, const char *in, size_t n, const fjx_rewrite *rw, fjx_buf *out,
                   fjx_error *err)
{
    switch (format) {
    case 0: return fjx_html_rewrite(in, n, rw, out, err);
    case 1: return fjx_srt_rewrite(in, n, rw, out, err);
    case 2: return fjx_ass_rewrite(in, n, rw, out, err);
    case 3: return fjx_vtt_rewrite(in, n, rw, out, err);
    case 4: return fjx_markdown_rewrite(in, n, rw, out, err);
    case 5: return fjx_xml_rewrite(FJX_XML_XHTML, in, n, rw, out, err);
    case 6: return fjx_xml_rewrite(FJX_XML_OPF, in, n, rw, out, err);
    default: return fjx_xml_rewrite(FJX_XML_NCX, in, n, rw, out, err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int format = data[0] % 8, xml = format >= 5;
    const char *in = (const char *)data + 1;
    size_t n = size - 1;
    fjx_error err;

    fjx_buf out = {0};
    fjx_rewrite copy = {copy_span, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int rc = rewrite(format, in, n, &copy, &out, &err);
    /* Only XML may refuse a document (not well-formed); the others never do. */
    FUZZ_ASSERT(rc == 0 || xml);
    if (rc == 0)
        FUZZ_ASSERT(out.len == n && (n == 0 || memcmp(out.data, in, n) == 0));
    fjx_buf_free(&out);

    int valid = fuzz_valid_utf8((const unsigned char *)in, n);
    fjx_rewrite mark = {mark_span, &valid, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int rc_mark = rewrite(format, in, n, &mark, &out, &err);
    FUZZ_ASSERT(rc_mark == rc);
    if (rc_mark == 0 && !memchr(in, 1, n) && !memchr(in, 2, n)) {
        size_t k = 0;
        for (size_t i = 0; i < out.len; i++)
            if (out.data[i] != 1 && out.data[i] != 2)
                out.data[k++] = out.data[i];
        FUZZ_ASSERT(k == n && (n == 0 || memcmp(out.data, in, n) == 0));
    }
    fjx_buf_free(&out);

    fjx_rewrite all = {copy_span, NULL, "zh-TW", "UTF-8", NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    rewrite(format, in, n, &all, &out, &err);
    fjx_buf_free(&out);
    return 0;
}
