/* Fuzz: the document readers (HTML, XHTML/OPF/NCX, SRT, ASS, WebVTT,
 * Markdown). Input: a format byte, then the document.
 * Invariants: with a callback that copies, the output is the input byte
 * for byte; with one that brackets each span, removing the brackets gives
 * the input back, spans are never empty, and in valid UTF-8 every span is
 * whole characters; with lang and charset set, nothing crashes. */
#include <string.h>

#include "fanjian-formats.h"
#include "fuzz.h"

static int copy_span(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    (void)ctx;
    return fjf_buf_append(out, text, len);
}

static int mark_span(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    const int *valid = ctx;
    FUZZ_ASSERT(len > 0);
    if (*valid)
        FUZZ_ASSERT(fuzz_valid_utf8((const unsigned char *)text, len));
    return fjf_buf_append(out, "\x01", 1) || fjf_buf_append(out, text, len) ||
                   fjf_buf_append(out, "\x02", 1)
               ? -1
               : 0;
}

static int rewrite(int format, const char *in, size_t n, const fjf_rewrite *rw, fjf_buf *out,
                   fjf_error *err)
{
    switch (format) {
    case 0: return fjf_html_rewrite(in, n, rw, out, err);
    case 1: return fjf_srt_rewrite(in, n, rw, out, err);
    case 2: return fjf_ass_rewrite(in, n, rw, out, err);
    case 3: return fjf_vtt_rewrite(in, n, rw, out, err);
    case 4: return fjf_markdown_rewrite(in, n, rw, out, err);
    case 5: return fjf_xml_rewrite(FJF_XML_XHTML, in, n, rw, out, err);
    case 6: return fjf_xml_rewrite(FJF_XML_OPF, in, n, rw, out, err);
    default: return fjf_xml_rewrite(FJF_XML_NCX, in, n, rw, out, err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int format = data[0] % 8, xml = format >= 5;
    const char *in = (const char *)data + 1;
    size_t n = size - 1;
    fjf_error err;

    fjf_buf out = {0};
    fjf_rewrite copy = {copy_span, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int rc = rewrite(format, in, n, &copy, &out, &err);
    /* Only XML may refuse a document (not well-formed); the others never do. */
    FUZZ_ASSERT(rc == 0 || xml);
    if (rc == 0)
        FUZZ_ASSERT(out.len == n && (n == 0 || memcmp(out.data, in, n) == 0));
    fjf_buf_free(&out);

    int valid = fuzz_valid_utf8((const unsigned char *)in, n);
    fjf_rewrite mark = {mark_span, &valid, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int rc_mark = rewrite(format, in, n, &mark, &out, &err);
    FUZZ_ASSERT(rc_mark == rc);
    if (rc_mark == 0 && !memchr(in, 1, n) && !memchr(in, 2, n)) {
        size_t k = 0;
        for (size_t i = 0; i < out.len; i++)
            if (out.data[i] != 1 && out.data[i] != 2)
                out.data[k++] = out.data[i];
        FUZZ_ASSERT(k == n && (n == 0 || memcmp(out.data, in, n) == 0));
    }
    fjf_buf_free(&out);

    fjf_rewrite all = {copy_span, NULL, "zh-TW", "UTF-8", NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    rewrite(format, in, n, &all, &out, &err);
    fjf_buf_free(&out);
    return 0;
}
