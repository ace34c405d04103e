/* Strict UTF-8 validation (RFC 3629): the one validator of the library,
 * the command line, the tools and the bindings. */
#include <stdint.h>

#include "fanjian.h"

#if defined(__GNUC__) && defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#include <immintrin.h>
#define FJ_UTF8_SIMD 1
#endif

/* The length of the valid UTF-8 sequence at s[i], or 0: invalid, or (with
 * *cut set) only cut short by the end at n. */
static size_t sequence_length(const unsigned char *s, size_t n, size_t i, int *cut)
{
    unsigned c = s[i];
    if (c < 0x80)
        return 1;
    size_t need = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2
                : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
    if (!need)
        return 0;
    unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    for (size_t k = 1; k <= need; k++) {
        if (i + k >= n) {
            *cut = 1;
            return 0;
        }
        unsigned b = s[i + k];
        if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80)
            return 0;
    }
    return need + 1;
}

/* Validation sits on the hot path of strict input, so blocks of ASCII and
 * ordinary three-byte sequences (all of common Han) are checked at once:
 * every lead E1..EF (not ED) must own exactly the next two bytes, and every
 * continuation byte must be owed. A block with anything else goes byte by
 * byte. `carry` holds the continuation bytes a block owes the next one's
 * first two bytes (bit 0: its first byte, bit 1: its second). */
#ifdef FJ_UTF8_SIMD
/* The same test 32 bytes at a time, where the CPU has AVX2: the bytes of
 * [s, s + n) it passed as whole blocks, stopping before the first block it
 * cannot pass. */
__attribute__((target("avx2"))) static size_t simple_blocks_avx2(const unsigned char *s, size_t n,
                                                                  unsigned *carry)
{
    const __m256i c0 = _mm256_set1_epi8((char)0xC0), x80 = _mm256_set1_epi8((char)0x80);
    const __m256i f0 = _mm256_set1_epi8((char)0xF0), e0 = _mm256_set1_epi8((char)0xE0);
    const __m256i ed = _mm256_set1_epi8((char)0xED);
    size_t i = 0;
    uint64_t owed_in = *carry;
    for (; n - i >= 32; i += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        uint32_t high = (uint32_t)_mm256_movemask_epi8(v);
        if (!high && !owed_in)
            continue;
        uint32_t cont = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(v, c0), x80));
        uint32_t lead3 = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(v, f0), e0));
        uint32_t ranged = (uint32_t)_mm256_movemask_epi8(
            _mm256_or_si256(_mm256_cmpeq_epi8(v, e0), _mm256_cmpeq_epi8(v, ed)));
        uint64_t owed = (uint64_t)lead3 << 1 | (uint64_t)lead3 << 2 | owed_in;
        if ((high & ~(cont | lead3)) != 0 || ranged || (uint32_t)owed != cont)
            break;
        owed_in = owed >> 32;
    }
    *carry = (unsigned)owed_in;
    return i;
}
#endif

size_t fj_utf8_valid(const char *text, size_t len, int *cut)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t n = len, i = 0;
    int cut_here = 0;
    if (!cut)
        cut = &cut_here;
    *cut = 0;
    if (!s)
        return 0;
#ifdef FJ_UTF8_SIMD
    const __m128i c0 = _mm_set1_epi8((char)0xC0), x80 = _mm_set1_epi8((char)0x80);
    const __m128i f0 = _mm_set1_epi8((char)0xF0), e0 = _mm_set1_epi8((char)0xE0);
    const __m128i ed = _mm_set1_epi8((char)0xED);
    unsigned carry = 0;
    const int avx2 = __builtin_cpu_supports("avx2");
    while (n - i >= 16) {
        if (avx2 && n - i >= 32) {
            i += simple_blocks_avx2(s + i, n - i, &carry);
            if (n - i < 16)
                break;
        }
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        unsigned high = (unsigned)_mm_movemask_epi8(v);
        if (!high && !carry) {
            i += 16;
            continue;
        }
        unsigned cont = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, c0), x80));
        unsigned lead3 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, f0), e0));
        unsigned ranged = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, e0), _mm_cmpeq_epi8(v, ed)));
        unsigned owed = (lead3 << 1) | (lead3 << 2) | carry;
        if ((high & ~(cont | lead3)) == 0 && !ranged && (owed & 0xFFFF) == cont) {
            carry = owed >> 16;
            i += 16;
            continue;
        }
        /* From the start of the sequence the carry belongs to. */
        size_t end = i + 16;
        i -= carry == 3 ? 1 : carry == 1 ? 2 : 0;
        while (i < end) {
            size_t k = sequence_length(s, n, i, cut);
            if (!k)
                return i;
            i += k;
        }
        carry = 0;
    }
    i -= carry == 3 ? 1 : carry == 1 ? 2 : 0;
#endif
    while (i < n) {
        size_t k = sequence_length(s, n, i, cut);
        if (!k)
            return i;
        i += k;
    }
    return n;
}
