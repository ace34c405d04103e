/* fanjian CLI: the HTML rewriter's entry for pieces of a document (the raw
 * HTML inside Markdown). Private to cli/. */
#ifndef FANJIAN_CLI_HTML_H
#define FANJIAN_CLI_HTML_H

#include "files.h"

/* As fjx_html_rewrite, but in[0..len) is a piece of a document, not the
 * whole: an <html> tag in it gets no lang added. */
int fjx_html_fragment_rewrite(const char *in, size_t len, const fjx_rewrite *rw, fjx_buf *out,
                              fjx_error *err);

#endif
