"""fanjian.detect against `fanjian detect --json`, spans as str indices."""
import json

import fanjian
from fjtest import B, ROOT, cli, run, test

MIXED = "这里有简体，這裡有繁體，兩者混在一起了。"


def cli_json(text):
    rc, out, err = cli("detect", "--json", input=text.encode("utf-8", "surrogatepass"))
    assert rc == 0, "CLI detect --json: exit %d: %r" % (rc, err[:200])
    return json.loads(out.decode())


def check_like_cli(text):
    d = fanjian.detect(text)
    j = cli_json(text)
    assert d.script == j["script"], (d.script, j["script"])
    assert "%.3f" % d.confidence == "%.3f" % j["confidence"], (d.confidence, j["confidence"])
    assert (d.han, d.simplified, d.traditional) == (j["han"], j["simplified"], j["traditional"])
    assert (None if d.damage is None else "%.2f" % d.damage) == \
        (None if j["damage"] is None else "%.2f" % j["damage"]), (d.damage, j["damage"])
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
    assert d == ("mixed", 0.875, 17, 3, 4, [(0, 6, "simplified")], None), d
    script, confidence, han, simp, trad, spans, damage = d
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


@test("python detect(): damage of our dev sentences converted character by character, as the CLI says")
def detect_damage():
    import os
    import subprocess
    data = os.environ.get("FANJIAN_OPENCC_DATA") or os.path.join(B, "opencc-data")
    if not os.path.isfile(os.path.join(data, "dictionary", "STCharacters.txt")):
        return
    with open(os.path.join(ROOT, "bench", "fiction", "dev.tsv"), "rb") as f:
        head = b"".join(f.readlines()[:200])
    damaged = subprocess.run(["python3", os.path.join(ROOT, "tests", "repair-damage.py"), "damage", data],
                             input=head, capture_output=True, check=True).stdout.decode()
    d = check_like_cli(damaged)
    assert d.script == "traditional" and d.damage > 0.8, d
    gold = "\n".join(line.split(b"\t")[1].decode() for line in head.splitlines())
    g = check_like_cli(gold)
    assert g.damage is not None and g.damage < 0.2, g


run()
