#define _GNU_SOURCE /* memfd_create */
/* Fuzz: the EPUB reader and writer. Input: the archive's bytes.
 * Invariants: a book is converted or refused with a message, never a
 * crash; a converted book, read again, converts again (the output is an
 * archive the reader accepts); the read-only pass (out_fd -1, for detect)
 * reads every book the conversion converts. Limits are low so bombs stay
 * cheap. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fanjian-formats.h"
#include "fuzz.h"

static int copy_span(void *ctx, const char *text, size_t len, fjf_buf *out)
{
    (void)ctx;
    return fjf_buf_append(out, text, len);
}

static int convert(const char *in, size_t n, char **out, size_t *out_len)
{
    int fd = memfd_create("fuzz-epub", 0);
    FUZZ_ASSERT(fd >= 0);
    fjf_rewrite rw = {copy_span, NULL, "zh-TW", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    fjf_epub_limits limits = {8u << 20, 4u << 20, 512};
    fjf_error err;
    int rc = fjf_epub_convert(in, n, fd, &rw, &limits, &err);
    if (rc != 0) {
        FUZZ_ASSERT(err.message[0] != 0);
    } else {
        off_t size = lseek(fd, 0, SEEK_END);
        FUZZ_ASSERT(size > 0);
        *out = malloc((size_t)size);
        FUZZ_ASSERT(*out && pread(fd, *out, (size_t)size, 0) == size);
        *out_len = (size_t)size;
    }
    close(fd);
    return rc;
}

/* The read-only pass: a book is read or refused with a message. */
static int read_only(const char *in, size_t n)
{
    fjf_rewrite rw = {copy_span, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    fjf_epub_limits limits = {8u << 20, 4u << 20, 512};
    fjf_error err;
    int rc = fjf_epub_convert(in, n, -1, &rw, &limits, &err);
    FUZZ_ASSERT(rc == 0 || err.message[0] != 0);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *out = NULL;
    size_t out_len = 0;
    int readable = read_only((const char *)data, size) == 0;
    if (convert((const char *)data, size, &out, &out_len) == 0) {
        FUZZ_ASSERT(readable);
        char *again = NULL;
        size_t again_len = 0;
        FUZZ_ASSERT(convert(out, out_len, &again, &again_len) == 0);
        free(again);
        free(out);
    }
    return 0;
}
