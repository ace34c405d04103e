"""Memory: loops of conversions, detections, converters and errors leak nothing.

No timing. For each operation, after a warm-up:
  - the bytes the C allocator has handed out (glibc's mallinfo2, or ASan's
    own count when the ASan runtime is loaded) do not grow over the loop by
    more than a few bytes per call, and the process's RSS stays bounded;
  - tracemalloc sees no growth of Python's memory, and the arguments'
    reference counts are what they were (no reference leaks).
Each call's input is a new str, so the UTF-8 form cached in it is freed too.
"""
import ctypes
import gc
import os
import sys
import tracemalloc

import fanjian
from fjtest import QUICK, TMP, run, test

SANITIZED = os.environ.get("FJ_SANITIZED") == "1"
N = 100_000
# The other operations' loops, shorter in the sanitizer build (FANJIAN_TEST_QUICK).
M = N // 40 if QUICK else N // 4
LINE = "这是只有一个人的世界，头发干了，鼠标和打印机。他说：“你好。”"


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(f, ctypes.c_size_t) for f in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


def _allocated_bytes_fn():
    lib = ctypes.CDLL(None)
    try:
        f = lib.__sanitizer_get_current_allocated_bytes
        f.restype = ctypes.c_size_t
        return "ASan", f
    except AttributeError:
        pass
    try:
        mi = lib.mallinfo2
    except AttributeError:
        return None, None
    mi.restype = _Mallinfo2

    def f():
        m = mi()
        return m.uordblks + m.hblkhd
    return "mallinfo2", f


ALLOC_SOURCE, allocated_bytes = _allocated_bytes_fn()


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


MISSING = os.path.join(TMP, "py-missing.fjd")
conv = fanjian.Converter("s2twp")
occ = fanjian.OpenCC("s2t")
texts = [LINE + str(i) for i in range(64)]

# name, calls, fn(i): each makes its own input
OPS = [
    ("Converter.convert", N, lambda i: conv.convert(LINE + str(i))),
    ("convert() with quotes and punct", M,
     lambda i: fanjian.convert(LINE + str(i), "s2tw", quotes="tw", punct=True)),
    ("OpenCC.convert", M, lambda i: occ.convert(LINE + str(i))),
    ("Converter.convert(bytes)", M, lambda i: conv.convert((LINE + str(i)).encode("utf-8"))),
    ("OpenCC.convert(bytes)", M, lambda i: occ.convert((LINE + str(i)).encode("utf-8"))),
    ("detect()", M, lambda i: fanjian.detect("这里有简体，這裡有繁體，兩者混在一起了。" + str(i))),
    ("text with lone surrogates", M, lambda i: conv.convert(LINE + "\udc80" + str(i))),
    # Opening builds the profile's tables (0.1 to 1 ms): fewer calls.
    ("Converter opened and closed", M // 12,
     lambda i: fanjian.Converter("t2s", compat=bool(i & 1)).close()),
    ("OpenCC made and dropped", M // 12, lambda i: fanjian.OpenCC("s2t").convert(LINE)),
]


def expect_error(exc, fn):
    try:
        fn()
    except exc:
        return
    raise AssertionError("no %s" % exc.__name__)


ERROR_OPS = [
    ("unknown profile", M, lambda i: expect_error(ValueError, lambda: fanjian.convert("x", "nonesuch"))),
    ("not str", M, lambda i: expect_error(TypeError, lambda: conv.convert(bytearray(b"x")))),
    ("missing dictionary", M // 5, lambda i: expect_error(FileNotFoundError,
                                                          lambda: fanjian.Converter(dict=MISSING))),
]


def loop(fn, n):
    for i in range(n):
        fn(i)


def c_memory_test(name, n, fn):
    def body():
        if allocated_bytes is None:
            raise fjtest_skip("neither mallinfo2 nor the ASan runtime is available")
        loop(fn, min(n // 10, 2000))
        gc.collect()
        a0, r0 = allocated_bytes(), rss()
        loop(fn, n)
        gc.collect()
        a1, r1 = allocated_bytes(), rss()
        grown = a1 - a0
        # Less than 4 bytes a call: a leak of any allocation shows.
        limit = max(64 * 1024, 4 * n)
        assert grown < limit, "%s: %d calls: allocated bytes (%s) grew by %d (limit %d)" % (
            name, n, ALLOC_SOURCE, grown, limit)
        if not SANITIZED:  # ASan's quarantine holds freed memory for a while
            assert r1 - r0 < 16 << 20, "%s: RSS grew by %d bytes" % (name, r1 - r0)
    return body


def py_memory_test(name, fn, n):
    def body():
        loop(fn, 500)
        gc.collect()
        refs = sys.getrefcount(conv), sys.getrefcount(occ), sys.getrefcount(LINE)
        tracemalloc.start()
        try:
            loop(fn, 200)
            gc.collect()
            t0 = tracemalloc.get_traced_memory()[0]
            loop(fn, n)
            gc.collect()
            t1 = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        assert t1 - t0 < 32 * 1024, "%s: Python memory grew by %d bytes over %d calls" % (name, t1 - t0, n)
        after = sys.getrefcount(conv), sys.getrefcount(occ), sys.getrefcount(LINE)
        assert after == refs, "%s: reference counts changed: %s -> %s" % (name, refs, after)
    return body


def fjtest_skip(reason):
    from fjtest import Skip
    return Skip(reason)


for name, n, fn in OPS + ERROR_OPS:
    test("python memory: %d x %s: C allocations and RSS bounded" % (n, name))(c_memory_test(name, n, fn))
for name, n, fn in OPS + ERROR_OPS:
    test("python memory: %s: no Python memory or reference leaks (tracemalloc)" % name)(
        py_memory_test(name, fn, min(n // 10, 10_000)))

run()
