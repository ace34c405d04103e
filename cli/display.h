/* fanjian CLI: file names made safe to print in a message. */
#ifndef FANJIAN_CLI_DISPLAY_H
#define FANJIAN_CLI_DISPLAY_H

#include <stddef.h>
#include <stdio.h>

/* Room for most names as shown; longer ones end in "...". */
#define FJX_DISPLAY_MAX 1024

/* Writes `name` into buf[0..size) as a message may show it: printable
 * UTF-8 as it is; control characters (C0, DEL, C1), bidirectional
 * controls, line and paragraph separators and bytes that are not UTF-8 as
 * escapes (\n, \t, \x1b, \xff, \u202e), so that a hostile name cannot move the cursor, recolour the
 * terminal, reorder text or add a line. Returns buf. */
const char *fjx_display_name(const char *name, char *buf, size_t size);

/* Writes text[0..len) to f escaped as fjx_display_name does, whatever its
 * length (NUL as \x00): for lines of a file quoted in a message. */
void fjx_display_text(FILE *f, const char *text, size_t len);

#endif
