"""Helpers for the Python module's tests (run by tests/suite-python.sh).

Each test file registers functions with @test("name") and ends with run().
Every test prints one line on stdout, which the suite turns into ok/bad/skip:

    PASS<TAB>name
    FAIL<TAB>name<TAB>detail<TAB>detail...
    SKIP<TAB>name<TAB>reason

A test fails by raising (assert with a message, or any exception) and is
skipped by raising Skip(reason).

Environment (set by tests/suite-python.sh): FJ (the CLI), B (the build
directory), ROOT, FANJIAN_DICT, FANJIAN_SHARED, FANJIAN_CASES, TMP,
FANJIAN_TEST_QUICK, FJ_PYTHON (this interpreter, for subprocesses).
"""
import json
import os
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

import fanjian

ROOT = os.environ.get("ROOT") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
B = os.environ.get("B", "build")
FJ = os.environ.get("FJ", os.path.join(B, "fanjian"))
SHARED = os.environ.get("FANJIAN_SHARED") or os.path.join(ROOT, "..", "shared")
CASES = os.environ.get("FANJIAN_CASES") or os.path.join(ROOT, "tests", "cases")
TMP = os.environ.get("TMP") or "/tmp"
QUICK = os.environ.get("FANJIAN_TEST_QUICK", "0") == "1"
PYTHON = os.environ.get("FJ_PYTHON") or sys.executable
# The profiles, as the library lists them (the image's list); the tests
# iterate them, and test_api checks there are OpenCC's 16.
PROFILES = tuple(fanjian.profiles())


class Server:
    """`fanjian serve` on a free port of 127.0.0.1, for a with block: post()
    to /v1/convert (status, JSON), post_file() to /v1/file (status, bytes or
    JSON)."""

    def __enter__(self):
        self.err = open(os.path.join(TMP, "serve-%d.err" % os.getpid()), "w+")
        self.p = subprocess.Popen([FJ, "serve", "--listen", "127.0.0.1:0"], stderr=self.err)
        text = ""
        for _ in range(600):
            self.err.seek(0)
            text = self.err.read()
            if "serving on http://" in text:
                self.url = text.split("serving on ")[1].split()[0].rstrip("/")
                return self
            if self.p.poll() is not None:
                break
            time.sleep(0.1)
        self.p.kill()
        raise AssertionError("fanjian serve did not start: %r" % text[:300])

    def post(self, body):
        req = urllib.request.Request(self.url + "/v1/convert", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def post_file(self, data, **query):
        req = urllib.request.Request(self.url + "/v1/file?" + urllib.parse.urlencode(query),
                                     data=data, headers={"Content-Type": "application/octet-stream"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def __exit__(self, *exc):
        self.p.terminate()
        self.p.wait(timeout=60)
        self.err.close()


class Skip(Exception):
    """Raised by a test that cannot run here."""


_tests = []


def test(name):
    def register(fn):
        _tests.append((name, fn))
        return fn
    return register


def _line(*fields):
    clean = [str(f).replace("\t", " ").replace("\r", "\\r").replace("\n", " | ") for f in fields]
    sys.stdout.write("\t".join(clean) + "\n")
    sys.stdout.flush()


def run():
    for name, fn in _tests:
        try:
            fn()
        except Skip as e:
            _line("SKIP", name, str(e))
        except Exception as e:  # noqa: BLE001 - every failure is reported
            tb = traceback.extract_tb(e.__traceback__)
            where = "%s:%d" % (os.path.basename(tb[-1].filename), tb[-1].lineno) if tb else "?"
            _line("FAIL", name, "%s: %s (at %s)" % (type(e).__name__, str(e)[:1500], where))
        else:
            _line("PASS", name)


def cli(*args, input=None, env=None):
    """Runs the CLI: (exit status, stdout bytes, stderr bytes)."""
    p = subprocess.run([FJ, *args], input=input, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    return p.returncode, p.stdout, p.stderr


def python(code, env=None, cwd=None):
    """Runs `code` in a fresh interpreter (the one under test): (status, stdout, stderr) as str."""
    p = subprocess.run([PYTHON, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, cwd=cwd)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def unescape(field):
    """A case file's field (escapes \\t \\n \\r \\\\ \\xHH) as bytes."""
    out = bytearray()
    raw = field.encode("utf-8")
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == 0x5C and i + 1 < len(raw):  # backslash
            n = raw[i + 1]
            if n == ord("t"):
                out.append(9)
            elif n == ord("n"):
                out.append(10)
            elif n == ord("r"):
                out.append(13)
            elif n == 0x5C:
                out.append(0x5C)
            elif n == ord("x") and i + 3 < len(raw):
                out.append(int(raw[i + 2:i + 4].decode("ascii"), 16))
                i += 4
                continue
            else:
                out.append(c)
                i += 1
                continue
            i += 2
        else:
            out.append(c)
            i += 1
    return bytes(out)


def read_cases(path):
    """A case file: (mode, cli options, [(line number, profile, input bytes, expected bytes)])."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    first = lines[0] if lines else ""
    mode = {"# mode: default": "default", "# mode: thorough": "thorough"}.get(first, "compat")
    opts = []
    cases = []
    for n, line in enumerate(lines, 1):
        if line.startswith("# cli: ") and not opts:
            opts = line[len("# cli: "):].split()
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise ValueError("%s:%d: want three tab-separated fields" % (path, n))
        cases.append((n, fields[0], unescape(fields[1]), unescape(fields[2])))
    return mode, opts, cases


def check_equal(what, got, expected):
    if got != expected:
        raise AssertionError("%s: expected %r, got %r" % (what, expected[:300], got[:300]))
