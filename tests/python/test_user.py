"""User phrases, protected terms and -{...}-: the case files
tests/cases/user/*.tsv through the Python module (phrases=, protect=,
markup=), the CLI (--phrases, --protect, --markup) and the HTTP API
("phrases", "protect", "markup"); tests/user.c runs them through the library.
"""
import glob
import json
import os
import subprocess

import fanjian
from fjtest import CASES, FJ, TMP, Server, run, test


def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append({"t": "\t", "n": "\n", "r": "\r"}.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def load(path):
    with open(path, encoding="utf-8", newline="\n") as f:
        lines = f.read().split("\n")
    compat = lines[0] != "# mode: default"
    phrases, protect, cases = [], [], []
    for n, line in enumerate(lines, 1):
        fields = line.split("\t")
        if fields[0] == "#phrase":
            phrases.append((fields[1], fields[2]))
        elif fields[0] == "#protect":
            protect.append(fields[1])
        elif line and not line.startswith("#"):
            assert len(fields) == 3, "%s:%d: not a case" % (path, n)
            cases.append((n, fields[0], unescape(fields[1]), unescape(fields[2])))
    return compat, phrases, protect, cases


FILES = sorted(glob.glob(os.path.join(CASES, "user", "*.tsv")))


def check(name, got, want):
    assert got == want, "%s: got %r, want %r" % (name, got, want)


def for_each_file(label):
    def register(fn):
        for path in FILES:
            test("%s: %s" % (label, os.path.relpath(path, os.path.dirname(CASES))))(
                lambda path=path: fn(path, *load(path)))
        return fn
    return register


@for_each_file("python user cases")
def python_cases(path, compat, phrases, protect, cases):
    assert len(cases) >= 5
    for n, profile, text, want in cases:
        got = fanjian.convert(text, profile, compat=compat, phrases=dict(phrases),
                              protect=protect, markup=True)
        check("%s:%d" % (path, n), got, want)
        conv = fanjian.Converter(profile, compat=compat, phrases=phrases, protect=protect,
                                 markup=True)
        check("%s:%d (Converter)" % (path, n), conv.convert(text), want)


def write_entry_files(tag, phrases, protect):
    ph = os.path.join(TMP, "user-%s.phrases" % tag)
    pr = os.path.join(TMP, "user-%s.protect" % tag)
    with open(ph, "w", encoding="utf-8") as f:
        f.write("".join("%s\t%s\n" % p for p in phrases))
    with open(pr, "w", encoding="utf-8") as f:
        f.write("".join("%s\n" % t for t in protect))
    return ph, pr


@for_each_file("CLI user cases")
def cli_cases(path, compat, phrases, protect, cases):
    ph, pr = write_entry_files(os.path.basename(path), phrases, protect)
    for n, profile, text, want in cases:
        args = [FJ, "-c", profile, "--phrases", ph, "--protect", pr, "--markup"]
        if compat:
            args.append("--compat")
        r = subprocess.run(args, input=text.encode(), capture_output=True)
        assert r.returncode == 0, "%s:%d: exit %d: %r" % (path, n, r.returncode, r.stderr[:200])
        check("%s:%d" % (path, n), r.stdout.decode(), want)


@test("HTTP user cases: tests/cases/user/*.tsv through POST /v1/convert")
def http_cases():
    with Server() as s:
        total = 0
        for path in FILES:
            compat, phrases, protect, cases = load(path)
            for n, profile, text, want in cases:
                code, body = s.post({"text": text, "profile": profile, "compat": compat,
                                     "phrases": dict(phrases), "protect": protect,
                                     "markup": True})
                assert code == 200, "%s:%d: HTTP %d %r" % (path, n, code, body)
                check("%s:%d" % (path, n), body["text"], want)
                total += 1
        assert total >= 20, total
        # Bad entries are a 400 with a message, never a crash.
        for bad in ({"phrases": ["x"]}, {"phrases": {"头": ""}}, {"protect": "x"},
                    {"protect": [1]}, {"markup": "yes"}):
            code, body = s.post(dict({"text": "头发", "profile": "s2t"}, **bad))
            assert code == 400 and "error" in body, (bad, code, body)
        code, body = s.post({"text": "头发", "profile": "s2t",
                             "phrases": {str(i): "x" for i in range(10001)}})
        assert code == 400 and "10000" in body["error"], (code, body)
        # Without entries the answer is the plain conversion's.
        code, body = s.post({"text": "-{后}-来", "profile": "s2tw"})
        assert code == 200 and body["text"] == "-{後}-來", body


@test("HTTP user cases: the same through POST /v1/file, entries as JSON in the query")
def http_file_cases():
    with Server() as s:
        total = 0
        for path in FILES:
            compat, phrases, protect, cases = load(path)
            for n, profile, text, want in cases:
                code, body = s.post_file(text.encode(), name="case.txt", profile=profile,
                                         compat=str(compat).lower(), markup="true",
                                         phrases=json.dumps(dict(phrases), ensure_ascii=False),
                                         protect=json.dumps(protect, ensure_ascii=False))
                assert code == 200, "%s:%d: HTTP %d %r" % (path, n, code, body)
                check("%s:%d" % (path, n), body.decode("utf-8"), want)
                total += 1
        assert total >= 20, total
        for bad in ({"phrases": "[1]"}, {"phrases": "{not json"}, {"protect": "{}"},
                    {"phrases": '{"a": 1}'}, {"markup": "maybe"}):
            code, body = s.post_file(b"x", **dict({"name": "a.txt", "profile": "s2t"}, **bad))
            assert code == 400 and "error" in body, (bad, code, body)


@test("python user entries: bad arguments raise")
def bad_arguments():
    for kw, exc in (({"phrases": {"": "a"}}, ValueError), ({"phrases": {"a": "b\0"}}, ValueError),
                    ({"phrases": [("a",)]}, TypeError), ({"protect": "abc"}, TypeError),
                    ({"protect": [1]}, TypeError), ({"phrases": 3}, TypeError)):
        try:
            fanjian.convert("头发", "s2t", **kw)
        except exc:
            continue
        raise AssertionError("%r did not raise %s" % (kw, exc.__name__))


@test("CLI --phrases: a malformed line names the file and line")
def cli_bad_file():
    bad = os.path.join(TMP, "user-bad.phrases")
    with open(bad, "w", encoding="utf-8") as f:
        f.write("头发\t頭毛\nno tab here\n")
    r = subprocess.run([FJ, "-c", "s2t", "--phrases", bad], input=b"x", capture_output=True)
    assert r.returncode == 2 and b"user-bad.phrases:2:" in r.stderr, (r.returncode, r.stderr)
    r = subprocess.run([FJ, "-c", "s2t", "--protect", os.path.join(TMP, "no-such-file")],
                       input=b"x", capture_output=True)
    assert r.returncode == 2 and b"no-such-file" in r.stderr, (r.returncode, r.stderr)


run()
