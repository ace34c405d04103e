"""fanjian.convert_file() and convert_bytes(): files through libfanjian-formats,
byte for byte what the CLI writes for the same options."""
import os
import zipfile

import fanjian
from fjtest import TMP, cli, run, test

D = os.path.join(TMP, "py-files")
os.makedirs(D, exist_ok=True)

TEXT = "这是只有一个人的世界，头发干了。\n我们去打印机那里取文件。\n"
SRT = ("1\n00:00:01,000 --> 00:00:02,000\n<i>头发干了</i>\n\n"
       "2\n00:00:03,000 --> 00:00:04,500\n这是只有一个人的世界。\n")


def write(name, data):
    path = os.path.join(D, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def epub(name):
    """A small EPUB 3 book: mimetype first and stored, a chapter, the OPF, the nav."""
    path = os.path.join(D, name)
    opf = ('<?xml version="1.0" encoding="UTF-8"?>\n'
           '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">\n'
           '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
           '<dc:identifier id="id">urn:uuid:12345678-1234-1234-1234-123456789abc</dc:identifier>'
           '<dc:title>头发干了</dc:title><dc:language>zh-CN</dc:language>'
           '<meta property="dcterms:modified">2026-01-01T00:00:00Z</meta></metadata>\n'
           '<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
           '<item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/></manifest>'
           '<spine><itemref idref="c1"/></spine></package>\n')
    nav = ('<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" '
           'xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="zh-CN" lang="zh-CN"><head><title>目录</title></head>'
           '<body><nav epub:type="toc"><ol><li><a href="ch1.xhtml">第一章 头发</a></li></ol></nav></body></html>\n')
    ch1 = ('<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" '
           'xml:lang="zh-CN" lang="zh-CN"><head><title>第一章</title></head>'
           '<body><h1>第一章 头发</h1><p>头发干了，这是只有一个人的世界。</p></body></html>\n')
    container = ('<?xml version="1.0"?>\n<container version="1.0" '
                 'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                 '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                 '</rootfiles></container>\n')
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", container, zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/nav.xhtml", nav, zipfile.ZIP_DEFLATED)
        z.writestr("OEBPS/ch1.xhtml", ch1, zipfile.ZIP_DEFLATED)
    return path


def cli_output(src, dst, *args):
    rc, out, err = cli("-c", "s2twp", *args, "-i", src, "-o", dst)
    assert rc == 0, (rc, err)
    return read(dst)


@test("files: convert_file of a GBK text file is what the CLI writes")
def _():
    src = write("gbk.txt", TEXT.encode("gbk"))
    want = cli_output(src, os.path.join(D, "gbk.cli.txt"))
    dst = os.path.join(D, "gbk.py.txt")
    assert fanjian.convert_file(src, dst, "s2twp") is None
    got = read(dst)
    assert got == want, (got, want)
    assert "頭髮".encode() in got, got  # really converted, and written as UTF-8


@test("files: convert_file to GBK output, as the CLI's --to-encoding")
def _():
    src = write("gbk2.txt", TEXT.encode("gbk"))
    want = cli_output(src, os.path.join(D, "gbk2.cli.txt"), "--to-encoding=big5")
    dst = os.path.join(D, "gbk2.py.txt")
    fanjian.convert_file(src, dst, "s2twp", to_encoding="big5")
    assert read(dst) == want
    assert read(dst).decode("big5").startswith("這是")


@test("files: convert_file of an EPUB is what the CLI writes")
def _():
    src = epub("book.epub")
    want = cli_output(src, os.path.join(D, "book.cli.epub"))
    dst = os.path.join(D, "book.py.epub")
    fanjian.convert_file(src, dst, "s2twp")
    got = read(dst)
    assert got == want, (len(got), len(want))
    with zipfile.ZipFile(dst) as z:
        assert z.namelist()[0] == "mimetype"
        assert "頭髮乾了" in z.read("OEBPS/ch1.xhtml").decode()
        assert "zh-TW" in z.read("OEBPS/content.opf").decode()


@test("files: convert_file of an SRT file is what the CLI writes")
def _():
    src = write("subs.srt", SRT.encode())
    want = cli_output(src, os.path.join(D, "subs.cli.srt"))
    dst = os.path.join(D, "subs.py.srt")
    fanjian.convert_file(src, dst, "s2twp")
    got = read(dst)
    assert got == want, (got, want)
    assert b"00:00:03,000 --> 00:00:04,500" in got and "<i>頭髮乾了</i>".encode() in got, got


@test("files: convert_bytes gives convert_file's bytes (text, SRT, EPUB)")
def _():
    for name, data, fmt in (("b.txt", TEXT.encode("gbk"), "text"), ("b.srt", SRT.encode(), "srt")):
        src = write(name, data)
        dst = src + ".out"
        fanjian.convert_file(src, dst, "s2twp")
        assert fanjian.convert_bytes(data, "s2twp", format=fmt) == read(dst), name
    src = epub("b.epub")
    fanjian.convert_file(src, src + ".out", "s2twp")
    assert fanjian.convert_bytes(read(src), "s2twp", format="epub") == read(src + ".out")


@test("files: convert_bytes with an encoding given, and clean=True as the CLI's --clean")
def _():
    data = ("第一章\n天才一秒记住本站地址：www.example.com\n头发干了。\n").encode("gb18030")
    src = write("clean.txt", data)
    want = cli_output(src, os.path.join(D, "clean.cli.txt"), "--clean")
    got = fanjian.convert_bytes(data, "s2twp", encoding="gb18030", clean=True)
    assert got == want, (got, want)
    assert "本站".encode() not in got and "頭髮".encode() in got, got


@test("files: bad input raises ValueError naming the byte; nothing is left behind")
def _():
    src = write("bad.txt", b"\xe5\xa4\xb4\xff\xfe rest")
    dst = os.path.join(D, "bad.out")
    if os.path.exists(dst):
        os.unlink(dst)
    try:
        fanjian.convert_file(src, dst, "s2t", from_encoding="utf-8")
    except ValueError as e:
        assert "byte 3" in str(e), str(e)
    else:
        raise AssertionError("no ValueError")
    assert not os.path.exists(dst)
    assert not [n for n in os.listdir(D) if n.startswith(".fanjian-")], os.listdir(D)
    # lossy: the bytes pass through, as the CLI's --lossy
    assert fanjian.convert_bytes(b"\xe5\xa4\xb4\xff\xfe rest", "s2t", lossy=True,
                                 encoding="utf-8").startswith("頭".encode())


@test("files: a missing input is OSError; an existing dst keeps its permissions")
def _():
    try:
        fanjian.convert_file(os.path.join(D, "nope.txt"), os.path.join(D, "x.out"), "s2t")
    except OSError:
        pass
    else:
        raise AssertionError("no OSError")
    src = write("perm.txt", TEXT.encode())
    dst = write("perm.out", b"old")
    os.chmod(dst, 0o640)
    fanjian.convert_file(src, dst, "s2t")
    assert os.stat(dst).st_mode & 0o777 == 0o640
    assert read(dst).startswith("這是".encode())


@test("files: unknown format or encoding is ValueError")
def _():
    for kw in ({"format": "docx"}, {"encoding": "no-such-encoding"}):
        try:
            fanjian.convert_bytes(b"x", "s2t", **kw)
        except ValueError:
            pass
        else:
            raise AssertionError(kw)



@test("stream: Converter.stream() pieces joined equal convert(), every cut, with typography")
def _():
    text = ("他说：“头发干了。”这是只有一个人的世界……鼠标和打印机。\n"
            "English, 中文,混合!\U0001F600 and \ud800 lone surrogate。。。") * 2
    for profile, kw in (("s2twp", {}), ("s2t", {"punct": True}), ("tw2sp", {}),
                        ("t2tw", {}), ("s2tw", {"quotes": "tw"})):
        c = fanjian.Converter(profile, **kw)
        want = c.convert(text)
        for cut in range(1, 8):
            s = c.stream()
            got = "".join(s.feed(text[i:i + cut]) for i in range(0, len(text), cut)) + s.finish()
            assert got == want, (profile, kw, cut, got, want)


@test("stream: a finished stream refuses more; a closed converter refuses a stream")
def _():
    c = fanjian.Converter("s2t")
    s = c.stream()
    assert s.feed("头发") + s.finish() == "頭髮"
    for call in (lambda: s.feed("x"), s.finish):
        try:
            call()
        except ValueError:
            pass
        else:
            raise AssertionError("no ValueError")
    s2 = c.stream()
    c.close()  # the stream keeps the converter it was made with
    assert s2.feed("干了") + s2.finish() == "乾了"
    try:
        c.stream()
    except ValueError:
        pass
    else:
        raise AssertionError("no ValueError")


run()
