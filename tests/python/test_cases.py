"""The module against the case files and OpenCC 1.4.2's output, next to the CLI.

tests/cases/*.tsv run in the mode their first line names (default, thorough
repair or compat, as tests/run.sh
runs them through the CLI); ../shared/cases/{s2tw,t2s,repair,detect,clean}.tsv in
the default mode (as tests/cases.c runs them). The "clean" (drop or keep) and
"cleaned" (the exact line that remains) cases run through fanjian.clean()
and `fanjian clean`.

One test per case file: every case must give the expected output and the
CLI's output for the same mode and options. A case whose input is not text a
str can hold (bytes that are not UTF-8) is skipped, and counted in a SKIP
line for its file. Lone surrogates (\\xED\\xA0\\x80) are decoded with
'surrogatepass': the module passes them through as the library does.
"""
import glob
import json
import os
import re

import fanjian
from fjtest import (CASES, PROFILES, SHARED, TMP, Skip, cli, read_cases, run,
                    test)


def as_text(b):
    try:
        return b.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


def cli_convert(mode, opts, profile, data):
    path = os.path.join(TMP, "py-case.in")
    with open(path, "wb") as f:
        f.write(data)
    which = ["--to", profile[3:]] if profile.startswith("to:") else ["-c", profile]
    args = {"compat": ["--compat"], "thorough": ["--repair=thorough"]}.get(mode, []) + opts + which + [path]
    rc, out, err = cli(*args)
    if rc != 0:
        raise AssertionError("CLI %s: exit %d: %s" % (" ".join(args), rc, err.decode("utf-8", "replace")[:200]))
    return out


def cli_detect(data):
    rc, out, err = cli("detect", input=data)
    if rc != 0:
        raise AssertionError("CLI detect: exit %d: %s" % (rc, err[:200]))
    # the label, without the encoding read after it
    return re.sub(r" \([^()]*\)$", "", out.decode().strip())


def cli_clean(data):
    path = os.path.join(TMP, "py-case.in")
    with open(path, "wb") as f:
        f.write(data)
    rc, out, err = cli("clean", path)
    if rc != 0:
        raise AssertionError("CLI clean: exit %d: %s" % (rc, err[:200]))
    return out


def case_file_test(path, label, force_mode=None):
    def body():
        mode, opts, cases = read_cases(path)
        mode = force_mode or mode
        failures = []
        checked = 0
        not_text = []
        for n, profile, inp, exp in cases:
            text = as_text(inp)
            if text is None:
                not_text.append(n)
                continue
            try:
                if profile in ("clean", "cleaned"):
                    got = fanjian.clean(text).encode("utf-8", "surrogatepass")
                    want = exp if profile == "cleaned" else b"" if exp == b"drop" else inp
                    by_cli = cli_clean(inp)
                    if got != want or got != by_cli:
                        failures.append("line %d: clean gave %r, expected %r, CLI %r"
                                        % (n, got[:120], want[:120], by_cli[:120]))
                elif profile == "detect":
                    got = fanjian.detect(text).script
                    want = exp.decode()
                    by_cli = cli_detect(inp)
                    if got != want or got != by_cli:
                        failures.append("line %d: detect gave %s, expected %s, CLI %s" % (n, got, want, by_cli))
                else:
                    conv_profile = "t2tw" if profile == "repair" else profile
                    cmode = "default" if profile == "repair" else mode
                    how = {"to": conv_profile[3:]} if conv_profile.startswith("to:") else \
                        {"profile": conv_profile, "compat": cmode == "compat"}
                    got = fanjian.convert(text, repair="thorough" if cmode == "thorough" else "auto", **how)
                    got_b = got.encode("utf-8", "surrogatepass")
                    by_cli = cli_convert(cmode, opts if profile != "repair" else [], conv_profile, inp)
                    if got_b != exp or got_b != by_cli:
                        failures.append("line %d %s: got %r, expected %r, CLI %r"
                                        % (n, profile, got_b[:120], exp[:120], by_cli[:120]))
            except Exception as e:  # noqa: BLE001
                failures.append("line %d %s: %s: %s" % (n, profile, type(e).__name__, e))
            checked += 1
        if failures:
            raise AssertionError("%d of %d cases differ: %s" % (len(failures), checked, "; ".join(failures[:8])))
        if not_text:
            # Reported after the PASS line by the caller.
            skipped_not_text.append((label, not_text))
    return body


skipped_not_text = []

def counted(path):
    """'N cases' for a test's name: those a str can hold."""
    cases = read_cases(path)[2]
    n = sum(as_text(inp) is not None for _, _, inp, _ in cases)
    return "%d cases" % n + ("" if n == len(cases) else " of %d" % len(cases))


files = sorted(glob.glob(os.path.join(CASES, "*.tsv")))
for p in files:
    label = os.path.basename(p)
    test("python cases %s: %s, module = expected = CLI" % (label, counted(p)))(case_file_test(p, label))
for name in ("s2tw.tsv", "t2s.tsv", "repair.tsv", "detect.tsv", "clean.tsv"):
    p = os.path.join(SHARED, "cases", name)
    if os.path.exists(p):
        # Default mode, as tests/cases.c runs them.
        test("python shared/cases/%s: %s, module = expected = CLI" % (name, counted(p)))(
            case_file_test(p, "shared/" + name, force_mode="default"))
    else:
        @test("python shared/cases/%s" % name)
        def _missing(p=p):
            raise Skip("%s not found (no ../shared)" % p)


@test("python cases: not-UTF-8 inputs skipped and counted")
def report_not_text():
    if not files:
        raise AssertionError("no .tsv files in %s" % CASES)
    if skipped_not_text:
        raise Skip("; ".join("%s: %d cases (lines %s) have bytes that are not UTF-8, so no str holds them"
                             % (label, len(ns), ",".join(map(str, ns[:12])) + ("..." if len(ns) > 12 else ""))
                             for label, ns in skipped_not_text))


# ---- OpenCC 1.4.2's own output, through fanjian.OpenCC ------------------------------

COMPAT = os.path.join(SHARED, "opencc", "compat")


def compat_test(profile):
    def body():
        inp = os.path.join(COMPAT, "input.txt")
        if not os.path.exists(inp):
            raise Skip("%s not found (no ../shared)" % inp)
        with open(inp, encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(COMPAT, profile + ".txt"), "rb") as f:
            expected = f.read()
        rc, by_cli, err = cli("--compat", "-c", profile, "-i", inp)
        assert rc == 0, "CLI exit %d: %r" % (rc, err[:200])
        got = fanjian.OpenCC(profile).convert(text).encode("utf-8")
        got_json = fanjian.OpenCC(profile + ".json").convert(text).encode("utf-8")
        got_fn = fanjian.convert(text, profile, compat=True).encode("utf-8")
        for what, g in (("OpenCC(%r)" % profile, got), ("OpenCC(%r)" % (profile + ".json"), got_json),
                        ("convert(compat=True)", got_fn)):
            if g != expected:
                i = next((k for k in range(min(len(g), len(expected))) if g[k] != expected[k]),
                         min(len(g), len(expected)))
                raise AssertionError("%s differs from OpenCC 1.4.2 at byte %d: %r vs %r"
                                     % (what, i, g[i:i + 60], expected[i:i + 60]))
        assert got == by_cli, "differs from the CLI's --compat output"
    return body


for p in PROFILES:
    test("python OpenCC(%r) = OpenCC 1.4.2 = CLI --compat on shared compat input" % p)(compat_test(p))


@test("python OpenCC passes OpenCC 1.4.2's own test cases (shared/opencc/testcases.json)")
def opencc_testcases():
    path = os.path.join(SHARED, "opencc", "testcases.json")
    if not os.path.exists(path):
        raise Skip("%s not found (no ../shared)" % path)
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    converters = {}
    failures = []
    n = 0
    for case in data.get("cases", []):
        for cfg, want in (case.get("expected") or {}).items():
            cc = converters.get(cfg) or converters.setdefault(cfg, fanjian.OpenCC(cfg + ".json"))
            got = cc.convert(case["input"])
            n += 1
            if got != want:
                failures.append("%s: %r -> %r, expected %r" % (cfg, case["input"][:40], got[:40], want[:40]))
    assert n > 0, "no cases read"
    assert not failures, "%d of %d differ: %s" % (len(failures), n, "; ".join(failures[:5]))


run()
