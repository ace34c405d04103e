/* fanjian formats: the HTML rewriter's entry for pieces of a document (the raw
 * HTML inside Markdown). Private to formats/. */
#ifndef FANJIAN_FORMATS_HTML_H
#define FANJIAN_FORMATS_HTML_H

#include "fanjian-formats.h"

/* As fjf_html_rewrite, but in[0..len) is a piece of a document, not the
 * whole: an <html> tag in it gets no lang added. */
int fjf_html_fragment_rewrite(const char *in, size_t len, const fjf_rewrite *rw, fjf_buf *out,
                              fjf_error *err);

#endif
