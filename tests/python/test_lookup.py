"""Which dictionary: dict=, else $FANJIAN_DICT, else fanjian.fjd beside the
module, else fanjian.DEFAULT_DICT; and each file is opened once per process.
"""
import glob
import os
import shutil

import fanjian
from fjtest import B, TMP, Skip, python, run, test

DICT = os.path.realpath(os.environ["FANJIAN_DICT"])
MODULE = os.path.abspath(fanjian.__file__)
BESIDE = os.path.join(os.path.dirname(MODULE), "fanjian.fjd")
MISSING = os.path.join(TMP, "py-lookup-missing.fjd")


def env_without_dict(**extra):
    env = dict(os.environ)
    env.pop("FANJIAN_DICT", None)
    env.update(extra)
    return env


def mappings(path):
    """How many times the file `path` is mapped into this process."""
    st = os.stat(path)
    n = 0
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[4] != "0":
                dev, ino = parts[3], int(parts[4])
                major, minor = (int(x, 16) for x in dev.split(":"))
                if ino == st.st_ino and os.makedev(major, minor) == st.st_dev:
                    n += 1
    return n


@test("python dictionary lookup: dict= comes before $FANJIAN_DICT")
def dict_arg_first():
    old = os.environ.get("FANJIAN_DICT")
    os.environ["FANJIAN_DICT"] = MISSING
    try:
        c = fanjian.Converter(dict=DICT)
        assert c.dict_path == DICT and c.convert("头发") == "頭髮"
        assert fanjian.convert("头发", dict=DICT) == "頭髮"
        # ... and $FANJIAN_DICT is read at each call, not at import.
        try:
            fanjian.Converter()
            raise AssertionError("FANJIAN_DICT=%s was not used" % MISSING)
        except FileNotFoundError as e:
            assert MISSING in str(e), e
    finally:
        if old is None:
            del os.environ["FANJIAN_DICT"]
        else:
            os.environ["FANJIAN_DICT"] = old


@test("python dictionary lookup: $FANJIAN_DICT comes before the one beside the module")
def env_second():
    if not os.path.exists(BESIDE):
        raise Skip("%s missing (make python copies it)" % BESIDE)
    code = "import fanjian; print(fanjian.Converter().dict_path)"
    rc, out, err = python(code, env=dict(os.environ, FANJIAN_DICT=DICT))
    assert rc == 0 and out.strip() == DICT, (rc, out, err[-300:])
    rc, out, err = python("import fanjian; fanjian.convert('x')", env=dict(os.environ, FANJIAN_DICT=MISSING))
    assert rc != 0 and "FileNotFoundError" in err and MISSING in err, err[-300:]


@test("python dictionary lookup: fanjian.fjd beside the module when $FANJIAN_DICT is unset or empty")
def beside_third():
    if not os.path.exists(BESIDE):
        raise Skip("%s missing (make python copies it)" % BESIDE)
    code = "import fanjian; c = fanjian.Converter('s2t'); print(c.dict_path); print(c.convert('头发'))"
    moddir = os.path.dirname(MODULE)
    for env in (env_without_dict(PYTHONPATH=moddir), env_without_dict(FANJIAN_DICT="", PYTHONPATH=moddir)):
        rc, out, err = python(code, env=env, cwd="/")
        assert rc == 0, err[-300:]
        path, conv = out.split("\n")[:2]
        assert os.path.samefile(path, BESIDE), (path, BESIDE)
        assert conv == "頭髮", conv


@test("python dictionary lookup: DEFAULT_DICT last (module alone in a directory)")
def default_last():
    alone = os.path.join(TMP, "py-alone")
    os.makedirs(alone, exist_ok=True)
    shutil.copy(MODULE, alone)
    env = env_without_dict(PYTHONPATH=alone)
    code = ("import fanjian\n"
            "assert fanjian.__file__.startswith(%r), fanjian.__file__\n"
            "try:\n"
            "    print('opened', fanjian.Converter().dict_path)\n"
            "except OSError as e:\n"
            "    print('error', e.strerror or e)\n"
            "print(fanjian.DEFAULT_DICT)\n" % alone)
    rc, out, err = python(code, env=env)
    assert rc == 0, err[-500:]
    first, default = out.strip().split("\n")
    if first.startswith("opened"):
        assert first == "opened " + default, (first, default)
    else:
        assert default in first, (first, default)


@test("python dictionary sharing: 200 converters and calls map the file once")
def shared_once():
    fanjian.Converter(dict=DICT)
    n0 = mappings(DICT)
    assert n0 == 1, "mapped %d times" % n0
    keep = [fanjian.Converter(("s2t", "t2s", "s2twp")[i % 3], compat=bool(i & 1), dict=DICT)
            for i in range(100)]
    keep += [fanjian.OpenCC("s2t", dict=DICT) for _ in range(50)]
    for i in range(50):
        fanjian.convert("头发", dict=DICT)
        fanjian.detect("头发", dict=DICT)
    # Other spellings of the same file: relative, with ./, through a symlink.
    link = os.path.join(TMP, "py-link.fjd")
    if not os.path.lexists(link):
        os.symlink(DICT, link)
    rel = os.path.relpath(DICT)
    for spelling in (rel, "./" + rel, link, os.fsencode(DICT)):
        keep.append(fanjian.Converter(dict=spelling))
    assert mappings(DICT) == 1, "mapped %d times" % mappings(DICT)
    assert all(c.convert("头发") for c in keep)


@test("python dictionary sharing: a replaced file is opened anew, old converters go on")
def replaced_file():
    path = os.path.join(TMP, "py-replaced.fjd")
    shutil.copyfile(DICT, path)
    old = fanjian.Converter("s2t", dict=path)
    assert mappings(path) == 1
    tmp = path + ".new"
    shutil.copyfile(DICT, tmp)
    os.replace(tmp, path)  # a new inode at the same path
    new = fanjian.Converter("s2t", dict=path)
    assert mappings(path) == 1, "the new file is not mapped once"
    assert old.convert("头发") == new.convert("头发") == "頭髮"
    fanjian.Converter("s2t", dict=path)
    assert mappings(path) == 1


run()
