"""The module's interface: convert, Converter, OpenCC, fanjian.opencc, errors."""
import os
import pathlib
import shutil

import fanjian
from fjtest import PROFILES, TMP, cli, run, test

GOOD = "这是只有一个人的世界，头发干了，鼠标和打印机。"
GOOD_S2T = "這是只有一個人的世界，頭髮乾了，鼠標和打印機。"
GOOD_COMPAT = "這是隻有一個人的世界，頭髮幹了，鼠標和打印機。"
QUOTES = "他说：“你好，‘朋友’。”等等。。。\n"


def cli_text(*args, text):
    rc, out, err = cli(*args, input=text.encode("utf-8"))
    assert rc == 0, "CLI %s: exit %d: %r" % (args, rc, err[:200])
    return out.decode("utf-8")


def cli_error(*args):
    """The CLI's one-line message for a failing run, without the program name."""
    rc, out, err = cli(*args, input=b"x")
    assert rc != 0, "CLI %s succeeded" % (args,)
    line = err.decode("utf-8", "replace").strip().split("\n")[0]
    return line.split(": ", 1)[1]


def raises(exc, fn, *args, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise AssertionError("%s(%s) did not raise %s" % (getattr(fn, "__name__", fn), args, exc.__name__))


# ---- module ------------------------------------------------------------------------

@test("python __version__ is the CLI's version")
def version():
    out = cli_text("--version", text="")
    assert out.strip() == "fanjian " + fanjian.__version__, (out, fanjian.__version__)


@test("python profiles() lists the 16 profiles, as fanjian --list")
def profiles():
    got = fanjian.profiles()
    assert len(got) == 16 and len(set(got)) == 16, got  # OpenCC 1.4.2's profiles
    assert tuple(got) == PROFILES, got
    assert got == cli_text("--list", text="").split(), got


@test("python convert(): default mode, compat=True, default profile s2t")
def convert_basic():
    assert fanjian.convert(GOOD) == GOOD_S2T
    assert fanjian.convert(GOOD, "s2t") == GOOD_S2T
    assert fanjian.convert(GOOD, profile="s2t", compat=True) == GOOD_COMPAT
    assert fanjian.convert(text=GOOD, profile="t2s") == GOOD
    assert fanjian.convert("鼠标和打印机", "s2twp") == "滑鼠和印表機"
    assert fanjian.convert("頭髮乾了", "t2s") == "头发干了"


@test("python repair='auto' (default) and 'careful' keep 老板 and 仿佛 in a short text; 'thorough' changes them; 'off' is --compat; others refused")
def convert_repair():
    damaged = "老板說她仿佛聽懂了"
    assert fanjian.convert(damaged, "t2tw") == damaged
    assert fanjian.convert(damaged, "t2tw", repair="careful") == damaged
    assert fanjian.convert(damaged, "t2tw", repair="thorough") == "老闆說她彷彿聽懂了"
    c = fanjian.Converter("t2tw", repair="thorough")
    assert (c.repair, c.convert(damaged)) == ("thorough", "老闆說她彷彿聽懂了")
    assert fanjian.Converter("t2tw").repair == "auto"
    assert fanjian.Converter("t2tw", repair="careful").repair == "careful"
    assert fanjian.convert("衹是頭發", "t2tw", repair="off") == fanjian.convert("衹是頭發", "t2tw", compat=True)
    assert fanjian.Converter("t2tw", repair="off").repair == "off"
    for bad in ("eager", ""):
        try:
            fanjian.convert(damaged, "t2tw", repair=bad)
        except ValueError as e:
            assert "careful" in str(e)
        else:
            raise AssertionError("repair=%r accepted" % bad)


@test("python convert() equals the CLI for every profile, both modes")
def convert_like_cli():
    text = GOOD + "\n" + GOOD_S2T + "\n" + QUOTES
    for p in PROFILES:
        for compat in (False, True):
            args = (["--compat"] if compat else []) + ["-c", p]
            want = cli_text(*args, text=text)
            got = fanjian.convert(text, p, compat=compat)
            assert got == want, "%s compat=%s: %r != %r" % (p, compat, got[:80], want[:80])
            with fanjian.Converter(p, compat=compat) as c:
                assert c.convert(text) == want, "Converter(%r, compat=%s)" % (p, compat)


@test("python profile names: 's2t.json' and 'DIR/s2twp.json' accepted, .profile canonical")
def profile_names():
    assert fanjian.convert(GOOD, "s2t.json") == GOOD_S2T
    c = fanjian.Converter("/usr/share/opencc/s2twp.json")
    assert c.profile == "s2twp", c.profile
    assert fanjian.Converter("tw2sp.json").profile == "tw2sp"


@test("python quotes=/punct= equal the CLI's --quotes/--punct")
def quotes_like_cli():
    combos = [
        ("s2twp", False, None, False, []),
        ("s2tw", False, None, False, []),
        ("s2tw", False, "tw", True, ["--quotes=tw", "--punct"]),
        ("s2twp", False, "keep", False, ["--quotes=keep"]),
        ("s2twp", True, None, False, []),
        ("s2twp", True, "tw", False, ["--quotes=tw"]),
        ("s2t", False, "hk", False, ["--quotes=hk"]),
        ("s2t", False, None, True, ["--punct"]),
        ("tw2sp", False, None, False, []),
        ("tw2s", False, "cn", False, ["--quotes=cn"]),
    ]
    tw_text = "他說：「你好」……等等...\n" + QUOTES
    for p, compat, q, punct, opts in combos:
        for text in (QUOTES, tw_text):
            want = cli_text(*((["--compat"] if compat else []) + opts + ["-c", p]), text=text)
            got = fanjian.convert(text, p, compat=compat, quotes=q, punct=punct)
            assert got == want, "%s compat=%s quotes=%r punct=%s: %r != CLI %r" % (p, compat, q, punct, got, want)
            c = fanjian.Converter(p, compat=compat, quotes=q, punct=punct)
            assert c.convert(text) == want
    assert fanjian.convert(QUOTES, "s2twp") == "他說：「你好，『朋友』。」等等。。。\n"
    assert fanjian.Converter("s2twp").quotes == "tw"
    assert fanjian.Converter("tw2sp").quotes == "cn"
    assert fanjian.Converter("s2twp", compat=True).quotes == "keep"
    assert fanjian.Converter("s2t", quotes="hk").quotes == "tw"


@test("python text: empty, NUL, astral characters, str subclasses, large")
def texts():
    assert fanjian.convert("") == ""
    assert fanjian.convert("a\0头发\0") == "a\0頭髮\0"
    assert fanjian.convert("是刈是濩，為絺為綌。", "t2s") == "是刈是濩，为𫄨为绤。"
    assert fanjian.convert("𠀀头发😀", "s2t") == "𠀀頭髮😀"
    assert fanjian.convert("𫄨", "s2t") == "絺"

    class S(str):
        pass
    r = fanjian.convert(S("头发"))
    assert r == "頭髮" and type(r) is str
    big = GOOD * 20000  # 0.7 MB of UTF-8
    assert fanjian.convert(big) == GOOD_S2T * 20000
    ascii_only = "plain ASCII text, nothing to do\n" * 1000
    assert fanjian.convert(ascii_only) == ascii_only


@test("python lone surrogates pass through in place (surrogatepass)")
def surrogates():
    assert fanjian.convert("\ud800头发\udfff", "s2t") == "\ud800頭髮\udfff"
    assert fanjian.convert("头\udc80发", "s2t", compat=True) == "頭\udc80發"
    # Two surrogates that would pair up stay two code points.
    assert fanjian.convert("\ud83d\ude00头发") == "\ud83d\ude00頭髮"
    c = fanjian.Converter("s2twp")
    assert c.convert("“鼠标”\udcff") == "「滑鼠」\udcff"
    assert fanjian.OpenCC("s2t").convert("\udfff") == "\udfff"


# ---- Converter ------------------------------------------------------------------------

@test("python Converter: attributes, repr, context manager, close")
def converter_object():
    c = fanjian.Converter("s2twp.json", punct=True)
    assert (c.profile, c.compat, c.quotes, c.punct, c.closed) == ("s2twp", False, "tw", True, False)
    assert os.path.samefile(c.dict_path, os.environ.get("FANJIAN_DICT") or c.dict_path)
    assert "s2twp" in repr(c) and "closed" not in repr(c), repr(c)
    with c as same:
        assert same is c
        assert c.convert("鼠标") == "滑鼠"
    assert c.closed and "closed" in repr(c)
    e = raises(ValueError, c.convert, "x")
    assert "closed" in str(e), e
    c.close()  # twice is fine
    raises(ValueError, c.__enter__)
    assert c.profile == "s2twp"  # still readable


@test("python Converter: re-initialising and subclassing")
def converter_reinit():
    c = fanjian.Converter("s2t")
    c.__init__("t2s", compat=True)
    assert c.profile == "t2s" and c.compat and c.convert("頭髮") == "头发"

    class Mine(fanjian.Converter):
        def __init__(self):
            super().__init__("s2tw")
            self.extra = 1

        def __call__(self, text):
            return self.convert(text)
    m = Mine()
    assert m("头发") == "頭髮" and m.extra == 1
    raw = fanjian.Converter.__new__(fanjian.Converter)
    e = raises(ValueError, raw.convert, "x")
    assert "not initialised" in str(e), e
    assert raw.profile is None


# ---- OpenCC ------------------------------------------------------------------------------

@test("python OpenCC: the opencc package's class (t2s default, .config, set_conversion)")
def opencc_class():
    o = fanjian.OpenCC()
    assert o.conversion == "t2s" and o.config == "t2s.json", (o.conversion, o.config)
    assert o.convert("頭髮乾了") == "头发干了"
    o = fanjian.OpenCC("s2t")
    assert o.config == "s2t.json" and o.profile == "s2t"
    assert o.convert(GOOD) == GOOD_COMPAT  # OpenCC 1.4.2's own mistakes: 隻有, 幹了
    assert fanjian.OpenCC("s2t.json").convert(GOOD) == GOOD_COMPAT
    assert fanjian.OpenCC(config="s2twp").convert(QUOTES) == cli_text("--compat", "-c", "s2twp", text=QUOTES)
    assert fanjian.OpenCC(conversion="s2tw").conversion == "s2tw"
    o.set_conversion("s2tw")
    assert (o.conversion, o.config) == ("s2tw", "s2tw.json")
    assert o.convert("鼠标") == "鼠標"
    o.set_conversion("s2twp.json")
    assert o.convert("鼠标") == "滑鼠" and o.quotes == "keep" and o.compat
    raises(ValueError, o.set_conversion, "nonesuch")
    assert o.conversion == "s2twp" and o.convert("鼠标") == "滑鼠", "a failed set_conversion changed it"
    raises(TypeError, o.set_conversion, None)
    raises(TypeError, fanjian.OpenCC, "s2t", conversion="t2s")
    assert isinstance(o, fanjian.Converter)
    with fanjian.OpenCC("s2t") as o2:
        assert o2.convert("头发") == "頭髮"
    assert o2.closed


@test("python import fanjian.opencc as opencc: OpenCC and CONFIGS")
def opencc_submodule():
    import fanjian.opencc as opencc
    from fanjian.opencc import OpenCC
    assert OpenCC is fanjian.OpenCC and opencc is fanjian.opencc
    assert sorted(opencc.CONFIGS) == sorted(p + ".json" for p in fanjian.profiles())
    for cfg in opencc.CONFIGS:
        opencc.OpenCC(cfg).convert("汉字")
    assert opencc.OpenCC("s2t").convert("汉字") == "漢字"


# ---- errors --------------------------------------------------------------------------------

@test("python unknown profile: ValueError with the library's message")
def unknown_profile():
    e = raises(ValueError, fanjian.convert, "x", "nonesuch")
    assert str(e) == cli_error("-c", "nonesuch"), (str(e), cli_error("-c", "nonesuch"))
    assert "nonesuch" in str(e)
    raises(ValueError, fanjian.Converter, "s2t\0x")
    raises(ValueError, fanjian.Converter, "")
    e = raises(ValueError, fanjian.OpenCC, "nonesuch.json")
    assert "nonesuch" in str(e)


@test("python bad options: quotes ValueError, wrong types TypeError")
def bad_options():
    e = raises(ValueError, fanjian.convert, "x", "s2t", quotes="fancy")
    assert "fancy" in str(e)
    raises(ValueError, fanjian.Converter, quotes=1)
    raises(TypeError, fanjian.convert, "x", 5)
    raises(TypeError, fanjian.convert, "x", "s2t", True)  # compat is keyword-only
    raises(TypeError, fanjian.convert, "x", nonesuch=1)
    raises(TypeError, fanjian.Converter, "s2t", "t2s")
    raises(TypeError, fanjian.convert)


@test("python text that is not str (or bytes, for convert): TypeError")
def not_str():
    c = fanjian.Converter()
    o = fanjian.OpenCC("s2t")
    for bad in (b"\xe5\xa4\xb4", bytearray(b"x"), None, 1, ["头"], memoryview(b"x")):
        for fn in (fanjian.convert, c.convert, o.convert, fanjian.detect):
            if isinstance(bad, bytes) and fn is not fanjian.detect:
                continue  # convert() takes UTF-8 bytes (tests/python/test_opencc.py)
            e = raises(TypeError, fn, bad)
            assert "str" in str(e), e


@test("python missing dictionary: FileNotFoundError with the library's message")
def missing_dict():
    path = os.path.join(TMP, "nonexistent.fjd")
    e = raises(FileNotFoundError, fanjian.Converter, dict=path)
    assert isinstance(e, OSError) and e.errno == 2
    assert e.strerror == cli_error("--dict", path, "-c", "s2t"), (e.strerror, cli_error("--dict", path, "-c", "s2t"))
    for fn in (lambda: fanjian.convert("x", dict=path), lambda: fanjian.detect("x", dict=path),
               lambda: fanjian.profiles(dict=path), lambda: fanjian.OpenCC("s2t", dict=path)):
        raises(FileNotFoundError, fn)


@test("python damaged, truncated and non-dictionary files: DictionaryError (an OSError)")
def damaged_dict():
    src = os.environ["FANJIAN_DICT"]
    damaged = os.path.join(TMP, "py-damaged.fjd")
    shutil.copyfile(src, damaged)
    size = os.path.getsize(damaged)
    with open(damaged, "r+b") as f:
        f.seek(size // 2)
        b = f.read(1)
        f.seek(size // 2)
        f.write(bytes([b[0] ^ 0x55]))
    e = raises(fanjian.DictionaryError, fanjian.Converter, dict=damaged)
    assert isinstance(e, OSError)
    assert str(e) == cli_error("--dict", damaged, "-c", "s2t"), (str(e), cli_error("--dict", damaged, "-c", "s2t"))
    short = os.path.join(TMP, "py-short.fjd")
    with open(src, "rb") as f, open(short, "wb") as g:
        g.write(f.read(1000))
    e = raises(fanjian.DictionaryError, fanjian.convert, "x", dict=short)
    assert str(e) == cli_error("--dict", short, "-c", "s2t")
    text = os.path.join(TMP, "py-text.fjd")
    with open(text, "w") as f:
        f.write("not a dictionary\n" * 1000)
    raises(fanjian.DictionaryError, fanjian.detect, "x", dict=text)
    raises(OSError, fanjian.Converter, dict=TMP)  # a directory
    os.remove(damaged)


@test("python dict= takes str, bytes and os.PathLike")
def dict_arg_types():
    path = os.environ["FANJIAN_DICT"]
    for arg in (path, os.fsencode(path), pathlib.Path(path)):
        assert fanjian.convert("头发", dict=arg) == "頭髮"
        assert fanjian.Converter(dict=arg).dict_path == os.path.realpath(path)
    raises(TypeError, fanjian.Converter, dict=5)
    raises(ValueError, fanjian.Converter, dict="a\0b")


run()
