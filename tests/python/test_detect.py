"""fanjian.detect against `fanjian detect --json`, spans as str indices."""
import json

import fanjian
from fjtest import cli, run, test

MIXED = "这里有简体，這裡有繁體，兩者混在一起了。"


def cli_json(text):
    rc, out, err = cli("detect", "--json", input=text.encode("utf-8", "surrogatepass"))
    assert rc == 0, "CLI detect --json: exit %d: %r" % (rc, err[:200])
    return json.loads(out.decode())


def check_like_cli(text):
    d = fanjian.detect(text)
    j = cli_json(text)
    assert d.script == j["label"], (d.script, j["label"])
    assert "%.3f" % d.confidence == "%.3f" % j["confidence"], (d.confidence, j["confidence"])
    assert (d.han, d.simplified, d.traditional) == (j["han"], j["simplified"], j["traditional"])
    raw = text.encode("utf-8", "surrogatepass")
    assert len(d.spans) == len(j["spans"]), (d.spans, j["spans"])
    for s, js in zip(d.spans, j["spans"]):
        start = len(raw[:js["offset"]].decode("utf-8", "surrogatepass"))
        end = start + len(raw[js["offset"]:js["offset"] + js["length"]].decode("utf-8", "surrogatepass"))
        assert (s.start, s.end, s.script) == (start, end, js["script"]), (s, js)
        assert text[s.start:s.end].encode("utf-8", "surrogatepass") == raw[js["offset"]:js["offset"] + js["length"]]
    return d


@test("python detect(): fields equal fanjian detect --json")
def detect_fields():
    d = check_like_cli(MIXED)
    assert d == ("mixed", 0.875, 17, 3, 4, [(0, 6, "simplified")]), d
    script, confidence, han, simp, trad, spans = d
    assert isinstance(d, fanjian.Detection) and isinstance(spans[0], fanjian.Span)
    assert MIXED[spans[0].start:spans[0].end] == "这里有简体，"
    for text in ("这是简体中文。", "這是繁體中文。", "中文字", "Hello", "",
                 "頭髮很長，这个人很好，他們都說" * 3):
        check_like_cli(text)
    e = fanjian.detect("")
    assert (e.script, e.confidence, e.han, e.spans) == ("none", 1.0, 0, []), e


@test("python detect(): span offsets are str indices after astral and surrogate characters")
def detect_offsets():
    prefix = "😀𠀀\udc80ab，"
    text = prefix + "這裡有繁體，這裡有繁體，兩者混在一起了。\n这里有简体，兩者混在一起了。"
    d = check_like_cli(text)
    assert d.spans, d
    assert text[d.spans[0].start:d.spans[0].end] == "这里有简体，", d.spans


@test("python detect(): more spans than the first array holds (60)")
def detect_many_spans():
    text = "".join("這裡有繁體，兩者混在一起了。这里有简体。\n" if i % 2 else "這是繁體中文的句子。\n"
                   for i in range(120))
    d = check_like_cli(text)
    assert len(d.spans) == 60, len(d.spans)


@test("python detect(): text that is not text is binary, as the CLI says")
def detect_binary():
    # A NUL, and a string that is mostly control characters: the CLI reads
    # the same bytes as UTF-8 and agrees.
    for text in ("這是繁體\x00中文", "\x01\x02发\x03\x04" * 10):
        d = check_like_cli(text)
        assert (d.script, d.han, d.spans) == ("binary", 0, []), d
    # one stray control character in a text is still text
    assert fanjian.detect("这是\x01简体中文，头发干了。").script == "simplified"


run()
