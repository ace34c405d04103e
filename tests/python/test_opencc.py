"""OpenCC(config, compat=False) and UTF-8 bytes in convert().

OpenCC(config) stays OpenCC 1.4.2-identical; compat=False gives the default
(context) mode, as Converter(config). The `opencc` package's convert() took
UTF-8 bytes and returned str (1.1's pybind11 binding returns its std::string
as str; 1.0's ctypes binding decoded the result): fanjian.OpenCC does the same.
fanjian's own convert() turns bytes into bytes.
"""
import glob
import os

import fanjian
from fjtest import CASES, PROFILES, cli, read_cases, run, test

GOOD = "这是只有一个人的世界，头发干了，鼠标和打印机。"
GOOD_S2T = "這是只有一個人的世界，頭髮乾了，鼠標和打印機。"
GOOD_COMPAT = "這是隻有一個人的世界，頭髮幹了，鼠標和打印機。"
QUOTES = "他说：“你好，‘朋友’。”鼠标和打印机。\n"


def raises(exc, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise AssertionError("%s(%s) did not raise %s" % (getattr(fn, "__name__", fn), args, exc.__name__))


def cli_text(*args, text):
    rc, out, err = cli(*args, input=text.encode("utf-8"))
    assert rc == 0, "CLI %s: exit %d: %r" % (args, rc, err[:200])
    return out.decode("utf-8")


# ---- OpenCC(config, compat=False) ------------------------------------------------------

@test("python OpenCC(config) is compat mode; compat=False is the default mode")
def opencc_modes():
    o = fanjian.OpenCC("s2t")
    assert o.compat and o.quotes == "keep" and o.convert(GOOD) == GOOD_COMPAT
    assert fanjian.OpenCC("s2t", compat=True).convert(GOOD) == GOOD_COMPAT
    d = fanjian.OpenCC("s2t", compat=False)
    assert not d.compat and d.convert(GOOD) == GOOD_S2T, d.convert(GOOD)
    assert (d.config, d.conversion) == ("s2t.json", "s2t")
    assert "compat=False" in repr(d), repr(d)
    assert fanjian.OpenCC(conversion="s2tw", compat=False).convert(GOOD) == fanjian.convert(GOOD, "s2tw")
    assert not fanjian.OpenCC(compat=False).compat  # the default config t2s


@test("python OpenCC(p, compat=False) = Converter(p) = CLI without --compat, every profile")
def opencc_default_mode_all_profiles():
    for p in PROFILES:
        text = QUOTES + GOOD + "頭髮乾了，滑鼠和印表機。"
        got = fanjian.OpenCC(p + ".json", compat=False).convert(text)
        assert got == fanjian.Converter(p).convert(text), p
        assert got == cli_text("-c", p, text=text), p
        assert fanjian.OpenCC(p).convert(text) == cli_text("--compat", "-c", p, text=text), p


@test("python OpenCC(compat=False): the profile's quotation marks; set_conversion keeps the mode")
def opencc_default_mode_quotes():
    d = fanjian.OpenCC("s2twp", compat=False)
    assert d.quotes == "tw" and d.convert("“鼠标”") == "「滑鼠」"
    assert fanjian.OpenCC("s2twp").convert("“鼠标”") == "“滑鼠”"
    d.set_conversion("s2t.json")
    assert not d.compat and d.convert(GOOD) == GOOD_S2T and d.quotes == "keep"
    c = fanjian.OpenCC("s2twp")
    c.set_conversion("s2t")
    assert c.compat and c.convert(GOOD) == GOOD_COMPAT
    raises(TypeError, fanjian.OpenCC, "s2t", True)  # compat is keyword-only
    raises(TypeError, fanjian.OpenCC, "s2t", compat=False, conversion="t2s")


# ---- bytes -------------------------------------------------------------------------------

@test("python OpenCC.convert(bytes) returns str, as the opencc package's")
def opencc_bytes():
    o = fanjian.OpenCC("s2t")
    got = o.convert(GOOD.encode("utf-8"))
    assert type(got) is str and got == GOOD_COMPAT, got
    assert o.convert(b"") == "" and type(o.convert(b"")) is str
    assert o.convert(b"plain\0ASCII\n") == "plain\0ASCII\n"
    assert fanjian.OpenCC("s2t", compat=False).convert(GOOD.encode("utf-8")) == GOOD_S2T
    import fanjian.opencc as opencc
    assert opencc.OpenCC("t2s.json").convert("頭髮".encode("utf-8")) == "头发"


@test("python OpenCC.convert(bytes not UTF-8): UnicodeDecodeError naming the byte")
def opencc_bad_bytes():
    o = fanjian.OpenCC("s2t")
    e = raises(UnicodeDecodeError, o.convert, "头发".encode("utf-8") + b"\xff")
    assert isinstance(e, ValueError) and e.start == 6 and "0xff" in str(e), e
    raises(UnicodeDecodeError, o.convert, "头".encode("utf-8")[:2])  # cut in the middle
    for bad in (bytearray(b"x"), memoryview(b"x"), None, 1):
        e = raises(TypeError, o.convert, bad)
        assert "str or bytes" in str(e), e


@test("python convert(bytes) and Converter.convert(bytes) return bytes")
def convert_bytes_in():
    b = GOOD.encode("utf-8")
    got = fanjian.convert(b)
    assert type(got) is bytes and got == GOOD_S2T.encode("utf-8"), got
    assert fanjian.convert(b, "s2t", compat=True) == GOOD_COMPAT.encode("utf-8")
    c = fanjian.Converter("s2twp")
    assert c.convert("“鼠标”".encode("utf-8")) == "「滑鼠」".encode("utf-8")
    assert fanjian.convert("他说：“你好”".encode("utf-8"), "s2tw", quotes="tw", punct=True) == \
        fanjian.convert("他说：“你好”", "s2tw", quotes="tw", punct=True).encode("utf-8")
    assert fanjian.convert(b"") == b"" and c.convert(b"") == b""
    # With the caller's own phrases (a converter for the call alone).
    assert fanjian.convert("头发".encode("utf-8"), "s2t", phrases={"头发": "頭毛"}) == "頭毛".encode("utf-8")
    assert fanjian.Converter("s2t", phrases={"头发": "頭毛"}).convert(b"\xff" + "头发".encode("utf-8")) == \
        b"\xff" + "頭毛".encode("utf-8")
    for p in PROFILES:
        assert fanjian.convert(QUOTES.encode("utf-8"), p) == fanjian.convert(QUOTES, p).encode("utf-8"), p


@test("python convert(bytes): bytes that are not UTF-8 are copied unchanged")
def convert_bytes_invalid():
    raw = b"\xff\xfe" + "头发".encode("utf-8") + b"\x80\0" + "头发".encode("utf-8")[:4]
    got = fanjian.convert(raw, "s2t")
    assert got == b"\xff\xfe" + "頭髮".encode("utf-8") + b"\x80\0" + "頭".encode("utf-8") + b"\xe5", got
    assert fanjian.Converter("t2s", compat=True).convert(b"\xc0\xaf" + "頭髮".encode("utf-8")) == \
        b"\xc0\xaf" + "头发".encode("utf-8")


@test("python convert(bytes): the case files' inputs that are not UTF-8 (no str holds them)")
def convert_bytes_cases():
    checked, failures = 0, []
    for path in sorted(glob.glob(os.path.join(CASES, "*.tsv"))):
        mode, opts, cases = read_cases(path)
        # Only the CLI's decoding options (invalid.tsv's --from-encoding utf-8 --lossy).
        if any(o not in ("--from-encoding", "utf-8", "--lossy") for o in opts):
            continue
        for n, profile, inp, exp in cases:
            if profile in ("clean", "cleaned", "detect", "repair"):
                continue
            try:
                inp.decode("utf-8", "surrogatepass")
                continue  # test_cases.py runs it as a str
            except UnicodeDecodeError:
                pass
            how = {"to": profile[3:]} if profile.startswith("to:") else \
                {"profile": profile, "compat": mode == "compat"}
            got = fanjian.convert(inp, repair="thorough" if mode == "thorough" else "auto", **how)
            checked += 1
            if got != exp:
                failures.append("%s:%d: %r, expected %r" % (os.path.basename(path), n, got[:80], exp[:80]))
    assert checked >= 20, "only %d cases with bytes that are not UTF-8 in %s" % (checked, CASES)
    assert not failures, "%d of %d differ: %s" % (len(failures), checked, "; ".join(failures[:8]))


@test("python bytes-like objects other than bytes, and detect(bytes): TypeError")
def other_buffers():
    c = fanjian.Converter()
    for bad in (bytearray(b"x"), memoryview(b"x")):
        for fn in (fanjian.convert, c.convert):
            e = raises(TypeError, fn, bad)
            assert "str or bytes" in str(e), e
    raises(TypeError, fanjian.detect, b"x")
    s = c.stream()
    raises(TypeError, s.feed, b"x")


run()
