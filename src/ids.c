/* Ideographic description sequences: parsed with OpenCC's limits (depth 16,
 * 64 code points) so that the same sequences pass through unconverted. */
#include "utf8.h"

static int parse(const unsigned char *p, const unsigned char *end, int depth_left, int *count,
                 size_t *len)
{
    if (p >= end)
        return FJ_IDS_INCOMPLETE;
    if (depth_left == 0 || *count >= FJ_IDS_MAX_CODEPOINTS)
        return FJ_IDS_INVALID;
    uint32_t cp;
    int n = fj_utf8_decode(p, end, &cp);
    if (n == FJ_U8_INVALID)
        return FJ_IDS_INVALID;
    if (n == FJ_U8_INCOMPLETE)
        return FJ_IDS_INCOMPLETE;
    ++*count;
    int arity = fj_ids_arity(cp);
    size_t off = (size_t)n;
    for (int i = 0; i < arity; i++) {
        if (p + off >= end)
            return FJ_IDS_INCOMPLETE;
        size_t operand = 0;
        int st = parse(p + off, end, depth_left - 1, count, &operand);
        if (st != FJ_IDS_COMPLETE)
            return st;
        off += operand;
    }
    *len = off;
    return FJ_IDS_COMPLETE;
}

int fj_ids_parse(const unsigned char *p, const unsigned char *end, size_t *len)
{
    int count = 0;
    return parse(p, end, FJ_IDS_MAX_DEPTH, &count, len);
}
