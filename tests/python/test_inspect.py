"""Where the model chose a form: the case file tests/cases/inspect/choices.tsv
through the Python module (Converter.inspect), the CLI (--inspect, JSON lines)
and the HTTP API ("inspect": true); tests/inspect.c runs it through the
library."""
import json
import os
import subprocess

import fanjian
from fjtest import CASES, FJ, TMP, Server, run, test

PATH = os.path.join(CASES, "inspect", "choices.tsv")


def unescape(s):
    return s.replace("\\n", "\n").replace("\\r", "\r").replace("\\t", "\t")


def load():
    cases = []
    with open(PATH, encoding="utf-8", newline="\n") as f:
        for n, line in enumerate(f.read().split("\n"), 1):
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            assert len(fields) == 3, "%s:%d: not a case" % (PATH, n)
            cases.append((n, fields[0], unescape(fields[1]), fields[2]))
    assert len(cases) >= 8
    return cases


def written(choices):
    """The case file's form of a list of choices."""
    out = []
    for c in choices:
        at = str(c["column"]) if c["line"] == 1 else "%d.%d" % (c["line"], c["column"])
        forms = [c["chosen"]] + [a["form"] for a in c["alternatives"]]
        out.append("%s:%s=%s" % (at, c["source"], "/".join(forms)))
    return " ".join(out)


def margins_hold(choices):
    for c in choices:
        m = [a["margin"] for a in c["alternatives"]]
        assert m and all(x >= 0 for x in m) and m == sorted(m), c


@test("python inspect cases: tests/cases/inspect/choices.tsv")
def python_cases():
    for n, profile, text, want in load():
        got = fanjian.Converter(profile).inspect(text)
        assert written(got) == want, "%s:%d: got %r, want %r" % (PATH, n, written(got), want)
        margins_hold(got)
        # offset: an index into the str; for bytes, into the bytes.
        for c in got:
            assert text[c["offset"]] == c["source"], c
        raw = text.encode()
        for c in fanjian.Converter(profile).inspect(raw):
            assert raw[c["offset"]:].decode(errors="ignore").startswith(c["source"]), c


@test("python inspect: compat chooses nothing; a closed converter raises")
def python_edges():
    assert fanjian.Converter("s2t", compat=True).inspect("头发干了") == []
    c = fanjian.Converter("s2t")
    c.close()
    try:
        c.inspect("头发")
    except ValueError:
        pass
    else:
        raise AssertionError("inspect on a closed converter did not raise")
    try:
        fanjian.Converter("s2t").inspect(3)
    except TypeError:
        pass
    else:
        raise AssertionError("inspect(3) did not raise TypeError")


@test("CLI --inspect cases: JSON lines")
def cli_cases():
    for n, profile, text, want in load():
        r = subprocess.run([FJ, "--inspect", "-c", profile], input=text.encode(), capture_output=True)
        assert r.returncode == 0, "%s:%d: exit %d %r" % (PATH, n, r.returncode, r.stderr[:200])
        got = [json.loads(l) for l in r.stdout.decode().splitlines()]
        assert written(got) == want, "%s:%d: got %r, want %r" % (PATH, n, written(got), want)
        margins_hold(got)
        for c in got:
            b = text.encode()
            assert b[c["offset"]:c["offset"] + len(c["source"].encode())].decode() == c["source"], c
            line = text.split("\n")[c["line"] - 1]
            i = c["column"] - 1
            assert line[:i].endswith(c["before"]) and line[i + 1:].startswith(c["after"]), c


@test("CLI --inspect: files, encodings and refusals")
def cli_files():
    a = os.path.join(TMP, "inspect-a.txt")
    g = os.path.join(TMP, "inspect-gbk.txt")
    with open(a, "w", encoding="utf-8") as f:
        f.write("头发干了\n")
    with open(g, "wb") as f:
        f.write("第二行\n他的头发很长，我们去理发店吧。\n".encode("gbk"))
    out = os.path.join(TMP, "inspect.jsonl")
    r = subprocess.run([FJ, "--inspect", a, g, "-o", out], capture_output=True)
    assert r.returncode == 0, r.stderr
    got = [json.loads(l) for l in open(out, encoding="utf-8")]
    files = [c["file"] for c in got]
    assert files[0] == a and g in files and files == sorted(files, key=[a, g].index), files
    # GBK is decoded; the place is the line and column of the text read.
    gb = [c for c in got if c["file"] == g]
    assert gb and all(c["line"] == 2 for c in gb) and gb[0]["source"] == "发", gb
    # What cannot be inspected is an error naming why.
    for args, word in (([FJ, "--inspect", "-c", "none", a], b"-c PROFILE"),
                       ([FJ, "--inspect", "--clean", a], b"--clean"),
                       ([FJ, "--inspect", "-r", TMP, "-o", os.path.join(TMP, "x")], b"-r")):
        r = subprocess.run(args, capture_output=True)
        assert r.returncode == 2 and word in r.stderr and not r.stdout, (args, r.returncode, r.stderr)
    r = subprocess.run([FJ, "--inspect", "--compat", a], capture_output=True)
    assert r.returncode == 0 and not r.stdout and b"--compat" in r.stderr, r


@test("HTTP inspect cases: POST /v1/convert with \"inspect\": true")
def http_cases():
    with Server() as s:
        for n, profile, text, want in load():
            code, body = s.post({"text": text, "profile": profile, "inspect": True})
            assert code == 200, "%s:%d: HTTP %d %r" % (PATH, n, code, body)
            assert written(body["choices"]) == want, "%s:%d: got %r" % (PATH, n, body["choices"])
            assert body["text"] == fanjian.convert(text, profile), body
        code, body = s.post({"text": "头发", "profile": "s2t"})
        assert code == 200 and "choices" not in body, body
        code, body = s.post({"text": "头发", "profile": "s2t", "inspect": "yes"})
        assert code == 400 and "inspect" in body["error"], body
        code, body = s.post({"text": "头发", "profile": "s2t", "compat": True, "inspect": True})
        assert code == 200 and body["choices"] == [], body


run()
