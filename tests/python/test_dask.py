"""fanjian.dask on a distributed.LocalCluster of 2 worker processes, against the CLI.

The shards are real text: ../shared/opencc/compat/input.txt split into text shards
and into JSON lines shards. Every output is compared with `fanjian -c P shard`
byte for byte (text; JSON lines whose only Han is the field), or with the CLI
on each field's text (JSON lines with other keys, values and escapings, whose
other bytes must come out as they went in).

make python builds a flat module (build/python/fanjian.so); fanjian.dask is a
module of the package, so the test lays the package out as pip installs it
($TMP/dask-pkg/fanjian/: __init__<ext> and dask.py, linked to the build's and the
source's) and puts it first on the path, for this process and the workers.
Without Dask (python3-dask, python3-distributed) every test here is skipped.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.environ.get("ROOT") or os.path.abspath(os.path.join(HERE, "..", ".."))
_TMP = os.environ.get("TMP") or "/tmp"
PKG_DIR = os.path.join(_TMP, "dask-pkg")


def _lay_out_package():
    """$TMP/dask-pkg/fanjian/ from the module on the path and python/fanjian/dask.py."""
    spec = importlib.util.find_spec("fanjian")
    if spec is None or not spec.origin:
        raise RuntimeError("no fanjian module on the path (make python)")
    if spec.submodule_search_locations:  # already a package (an installed fanjian)
        return None
    pkg = os.path.join(PKG_DIR, "fanjian")
    shutil.rmtree(PKG_DIR, ignore_errors=True)
    os.makedirs(pkg)
    os.symlink(os.path.abspath(spec.origin),
               os.path.join(pkg, "__init__" + sysconfig.get_config_var("EXT_SUFFIX")))
    os.symlink(os.path.join(_ROOT, "python", "fanjian", "dask.py"), os.path.join(pkg, "dask.py"))
    sys.path.insert(0, PKG_DIR)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [PKG_DIR, os.environ.get("PYTHONPATH")]))
    return PKG_DIR


if __name__ == "__main__":  # not in the workers, which spawn re-imports this file in
    _lay_out_package()

from fjtest import FJ, SHARED, TMP, Skip, cli, run, test  # noqa: E402

try:
    import distributed
    import fanjian.dask as fjdask
    NO_DASK = None
except ImportError as e:
    NO_DASK = "Dask is not importable (%s): apt-get install python3-dask python3-distributed" % e

INPUT = os.path.join(SHARED, "opencc", "compat", "input.txt")
WORK = os.path.join(TMP, "dask")
_cluster = []


def client():
    """The LocalCluster's client, started on first use."""
    if NO_DASK:
        raise Skip(NO_DASK)
    if not os.path.exists(INPUT):
        raise Skip("%s not found (the shared OpenCC test data)" % INPUT)
    if not _cluster:
        cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                           host="127.0.0.1", dashboard_address=None,
                                           local_directory=os.path.join(WORK, "workers"))
        _cluster.append((cluster, distributed.Client(cluster)))
    return _cluster[0][1]


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def input_lines():
    with open(INPUT, "rb") as f:
        return f.read().decode("utf-8").split("\n")


def write_shards(d, lines, count, ext, encode=lambda line: line):
    """`lines` in `count` shards of consecutive lines: their paths."""
    size = -(-len(lines) // count)
    paths = []
    for k in range(count):
        part = lines[k * size:(k + 1) * size]
        path = os.path.join(d, "part-%d.%s" % (k, ext))
        with open(path, "wb") as f:
            f.write("".join(encode(line) + "\n" for line in part).encode("utf-8"))
        paths.append(path)
    return paths


def cli_on(path, args):
    status, out, err = cli(*args, path)
    assert status == 0, "%s %s %s: %s" % (FJ, " ".join(args), path, err[:300])
    return out


def read(path):
    with open(path, "rb") as f:
        return f.read()


# The CLI's options and the same as convert_shards' keywords: a plain profile,
# one that repairs (document-level choices), the phrase profile, --compat, --to.
CASES = [
    (["-c", "s2t"], {"profile": "s2t"}),
    (["-c", "t2tw"], {"profile": "t2tw"}),
    (["-c", "s2twp"], {"profile": "s2twp"}),
    (["-c", "s2tw", "--compat"], {"profile": "s2tw", "compat": True}),
    (["--to", "hk"], {"to": "hk"}),
    (["-c", "t2tw", "--repair", "thorough"], {"profile": "t2tw", "repair": "thorough"}),
]


@test("dask: text shards on 2 worker processes, byte-identical to the CLI on each shard")
def text_shards():
    c = client()
    d = fresh("text")
    shards = write_shards(d, input_lines(), 4, "txt")
    # A shard in GBK: the CLI detects its encoding, and so does convert_shards.
    gbk = os.path.join(d, "part-gbk.txt")
    with open(gbk, "wb") as f:
        f.write("头发干了，这是一个测试。鼠标和打印机都在桌子上。\n".encode("gbk"))
    shards.append(gbk)
    before = {p: read(p) for p in shards}
    for args, kw in CASES:
        out = os.path.join(d, "out-" + "-".join(a.strip("-") for a in args))
        results = fjdask.convert_shards(os.path.join(d, "part-*.txt"), out, client=c, **kw)
        assert [r["input"] for r in results] == sorted(shards), results
        for p in shards:
            got, want = read(os.path.join(out, os.path.basename(p))), cli_on(p, args)
            assert got == want, "%s %s: %d bytes, not the CLI's %d" % (
                args, os.path.basename(p), len(got), len(want))
        assert sorted(os.listdir(out)) == sorted(os.path.basename(p) for p in shards), os.listdir(out)
    assert {p: read(p) for p in shards} == before, "an input changed"


@test("dask: JSON lines shards (field text) byte-identical to the CLI on each shard")
def json_shards():
    c = client()
    d = fresh("jsonl")
    # The CLI converts every byte of the file; here only the field holds Han,
    # its text has nothing JSON escapes, and these options leave ASCII quotes
    # as they are (s2twp's typography would turn JSON's own quotes into 「」),
    # so the two must agree.
    lines = [line for line in input_lines() if line and '"' not in line and "\\" not in line]
    records = [json.dumps({"id": n, "text": line, "score": n / 8, "ok": n % 2 == 0}, ensure_ascii=False)
               for n, line in enumerate(lines)]
    shards = write_shards(d, records, 3, "jsonl")
    for args, kw in CASES:
        if args[1] in ("t2tw", "s2twp", "hk"):
            continue  # the next test
        out = os.path.join(d, "out-" + "-".join(a.strip("-") for a in args))
        fjdask.convert_shards(shards, out, field="text", client=c, **kw)
        for p in shards:
            got, want = read(os.path.join(out, os.path.basename(p))), cli_on(p, args)
            assert got == want, "%s %s: differs from the CLI's" % (args, os.path.basename(p))


@test("dask: JSON lines, t2tw (repair), s2twp, --to hk: each field as the CLI converts that text alone")
def json_per_record():
    c = client()
    d = fresh("jsonl-record")
    # Repair's and --to's choices are per document (a record here, the whole
    # file for the CLI on the shard); s2twp turns ASCII quotes into 「」: these
    # are compared record by record, with texts that hold quotes.
    lines = [line for line in input_lines() if line]
    lines = [t for t in lines if '"' in t][:15] + [t for t in lines if '"' not in t][:25]
    path = os.path.join(d, "records.jsonl")
    with open(path, "wb") as f:
        f.write("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in lines).encode("utf-8"))
    one = os.path.join(d, "one.txt")
    for args, kw in [(["-c", "t2tw"], {"profile": "t2tw"}), (["-c", "s2twp"], {"profile": "s2twp"}),
                     (["--to", "hk"], {"to": "hk"})]:
        profile = args[1]
        out = os.path.join(d, "out-" + profile)
        fjdask.convert_shards(path, out, field="text", client=c, **kw)
        got = [json.loads(line)["text"] for line in read(os.path.join(out, "records.jsonl")).decode().splitlines()]
        assert len(got) == len(lines), "%d records out of %d" % (len(got), len(lines))
        changed = 0
        for n, text in enumerate(lines):
            with open(one, "wb") as f:
                f.write(text.encode("utf-8"))
            want = cli_on(one, args).decode("utf-8")
            assert got[n] == want, "%s record %d: %r, the CLI %r" % (profile, n + 1, got[n], want)
            changed += want != text
        assert changed, "%s changed no record" % profile


@test("dask: JSON lines: only the field's value changes (keys, order, spacing, escapes, CRLF, BOM)")
def json_only_field():
    c = client()
    d = fresh("jsonl-field")
    texts = ['头发干了，"鼠标"和打印机。', "这是一个软件\\n测试\t结束", "内存 123 abc 发展"]

    def value(text, ascii_only):
        return json.dumps(text, ensure_ascii=ascii_only)
    # (prefix, the field's text, how it is escaped, suffix): the expected line is
    # the same prefix and suffix around the CLI's text in the same escaping.
    rows = [
        ('{"text": ', texts[0], False, ', "meta": "头发", "n": 1}'),
        ('{"发": "发",  "text":', texts[1], True, '  ,"x":[1,"头发",{"text":"头发"}]}'),
        ('\t{ "id":3,"text" :', texts[2], False, ' }\r'),
        ('{"text": null, "other": "头发"}', None, None, ""),
        ('{"meta": "头发"}', None, None, ""),
        ("", None, None, ""),
        ('{"text": "\\u5934\\u53d1\\/ok", "n": 2}', None, None, ""),
        ('{"te\\u0078t": ', texts[0], False, "}"),  # the key escaped: still the field
    ]
    src = "\ufeff" + "\n".join(p + (value(t, a) if t is not None else "") + s for p, t, a, s in rows)
    path = os.path.join(d, "mixed.jsonl")
    with open(path, "wb") as f:
        f.write(src.encode("utf-8"))
    out = os.path.join(d, "out")
    fjdask.convert_shards(path, out, "s2tw", field="text", client=c)
    got = read(os.path.join(out, "mixed.jsonl")).decode("utf-8")
    one = os.path.join(d, "one.txt")

    def cli_text(text):
        with open(one, "wb") as f:
            f.write(text.encode("utf-8"))
        return cli_on(one, ["-c", "s2tw"]).decode("utf-8")
    want_rows = [p + (value(cli_text(t), a) if t is not None else "") + s for p, t, a, s in rows]
    # A value escaped another way (\/): its characters as they stand, escapes kept.
    want_rows[6] = '{"text": "\\u5934\\u53d1\\/ok", "n": 2}'
    want = "\ufeff" + "\n".join(want_rows)
    assert got.split("\n") == want.split("\n"), "got %r" % got
    assert cli_text(texts[0]) != texts[0], "the test text does not change under s2tw"


@test("dask: a bad JSON line and an output onto an input are errors; nothing is written")
def errors():
    c = client()
    d = fresh("errors")
    path = os.path.join(d, "bad.jsonl")
    good = '{"text": "头发干了"}\n'
    out = os.path.join(d, "out")
    for line in ['{"text": "头发"', '[1, "头发"]', '{"text": "头发"} x', '"头发"', '{"text": "头发",}',
                 '{"text": "头\x01发"}']:
        with open(path, "wb") as f:
            f.write((good + line + "\n" + good).encode("utf-8"))
        try:
            fjdask.convert_shards(path, out, "s2t", field="text", client=c)
        except ValueError as e:
            assert "bad.jsonl:2:" in str(e), str(e)
        else:
            raise AssertionError("a line that is not one JSON object was accepted: %r" % line)
        assert os.listdir(out) == [], "left in the output directory: %s" % os.listdir(out)
    text = os.path.join(d, "in.txt")
    with open(text, "wb") as f:
        f.write("头发干了\n".encode("utf-8"))
    try:
        fjdask.convert_shards(text, d, "s2t", client=c)
    except ValueError as e:
        assert "replace the input" in str(e), str(e)
    else:
        raise AssertionError("an output onto its input was accepted")
    assert read(text) == "头发干了\n".encode("utf-8"), "the input changed"


@test("dask: one converter per worker process; dask.bag map_partitions with convert_lines")
def per_worker():
    c = client()
    d = fresh("bag")
    shards = write_shards(d, [line for line in input_lines() if line], 8, "txt")
    fjdask.convert_shards(shards, os.path.join(d, "out"), "s2twp", client=c)

    def count():
        import fanjian.dask as m
        return sum(1 for key in m._converters if dict(key)["profile"] == "s2twp")
    counts = c.run(count)
    assert len(counts) == 2 and all(n == 1 for n in counts.values()), counts
    import dask.bag
    lines = [line for line in input_lines() if line][:300]
    got = dask.bag.from_sequence(lines, npartitions=4).map_partitions(
        fjdask.convert_lines, profile="s2twp").compute()
    assert got == [fjdask.converter("s2twp").convert(line) for line in lines], "bag output differs"
    one = os.path.join(d, "lines.txt")
    with open(one, "wb") as f:
        f.write("\n".join(lines).encode("utf-8"))
    assert "\n".join(got).encode("utf-8") == cli_on(one, ["-c", "s2twp"]), "differs from the CLI's"


@test("dask: client=None: dask's current scheduler (here the threaded one), the same bytes")
def current_scheduler():
    client()  # the same skips
    import dask
    d = fresh("threads")
    shards = write_shards(d, input_lines(), 2, "txt")
    with dask.config.set(scheduler="threads"):
        fjdask.convert_shards(shards, os.path.join(d, "out"), "s2twp")
    for p in shards:
        assert read(os.path.join(d, "out", os.path.basename(p))) == cli_on(p, ["-c", "s2twp"]), p


@test("dask: fanjian itself imports without Dask")
def module_without_dask():
    code = ("import sys; sys.modules['dask'] = None; import fanjian; print(fanjian.convert('头发'))\n"
            "try:\n    import fanjian.dask\nexcept ImportError as e:\n    print('ImportError', e)\n")
    p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.decode("utf-8")
    assert p.returncode == 0 and out.startswith("頭髮\nImportError fanjian.dask needs Dask"), (
        out + p.stderr.decode("utf-8", "replace"))


if __name__ == "__main__":
    run()
    for cluster, cl in _cluster:
        cl.close()
        cluster.close()
