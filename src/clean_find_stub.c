/* STUB (dropped at merge): fj_clean_find on top of fj_clean_line, so the
 * formats can be built before the span-level clean-up lands. A line that
 * is wholly boilerplate is one span covering it; any other line has none. */
#include "fanjian.h"

size_t fj_clean_find(const fj_clean *clean, const char *text, size_t len, fj_clean_span *spans,
                     size_t cap, int *whole)
{
    int score = 0;
    size_t n = len;
    if (n && text[n - 1] == '\n')
        n--;
    if (n && text[n - 1] == '\r')
        n--;
    int drop = n > 0 && fj_clean_line(clean, text, len, &score);
    if (whole)
        *whole = drop;
    if (!drop)
        return 0;
    if (cap > 0) {
        spans[0].start = 0;
        spans[0].end = n;
        spans[0].score = score;
    }
    return 1;
}
