"""fanjian.dask: a sharded corpus converted on a Dask cluster, one converter per worker.

    from distributed import Client
    import fanjian.dask
    client = Client("tcp://scheduler:8786")            # or LocalCluster(); none: dask's default
    fanjian.dask.convert_shards("corpus/*.txt", "out/", "s2t")
    fanjian.dask.convert_shards("dump/*.jsonl", "out/", to="tw", field="text")

Each shard is one task. Its output is out_dir/<the shard's name>, written under a
temporary name in out_dir and renamed, so it is there whole or not at all; an
output that would be one of the inputs is refused before anything runs.

Text shards (field=None) give what `fanjian -c PROFILE shard > out` gives: a UTF-8
shard is converted whole by the worker's Converter; any other (GBK, Big5, UTF-16,
...) goes through fanjian.convert_bytes, which detects its encoding as the CLI does.

JSON lines (field="text"): each line must be one JSON object (blank lines are kept).
Only the string values of its top-level key `field` change; every other byte of
the line (the keys, their order, the other values, the spacing, the line ending,
a byte order mark) is copied as it was. Each value is one document: it is decoded,
converted as the CLI converts a file holding that text alone, and written back in
the escaping it had, when it had Python's json.dumps escaping, with or without
ensure_ascii (so Han written as \\uXXXX is converted and stays escaped). A value
escaped any other way (say \\/ or upper-case hex) has its characters between the
quotes converted as they stand, its escapes kept. A field that is absent, or not
a string, leaves the line as it was. A line that is not a JSON object, or a shard
that is not UTF-8, is an error naming the shard and line; its output is not written.

One converter per worker process: converter() keeps one fanjian.Converter per set
of options in each process (a converter is immutable and may be shared by threads,
include/fanjian.h), so a task opens none after the first.

The workers import this module, so fanjian is to be installed (pip install . or
make python-install) where they run, with the same dictionary ($FANJIAN_DICT or
the package's image). The paths are the workers' too (one file system, shared by
the client and the workers). A shard that fails (its error is raised here) leaves
no output; the shards that did not fail have theirs.
"""
import glob as _glob
import json
import os
import re
import threading
import uuid

try:
    import dask
except ImportError as e:  # the extension module itself never needs Dask
    raise ImportError("fanjian.dask needs Dask: apt-get install python3-dask python3-distributed "
                      "(or pip install 'dask[distributed]')") from e

import fanjian

__all__ = ["convert_shards", "convert_shard", "convert_lines", "converter"]

_converters = {}
_converters_lock = threading.Lock()


def _options(profile=None, to=None, compat=False, repair="auto", dict=None):
    if profile is not None and to is not None:
        raise ValueError("give profile or to=, not both")
    return {"profile": profile, "to": to, "compat": bool(compat), "repair": repair,
            "dict": None if dict is None else os.fsdecode(os.fspath(dict))}


def converter(profile=None, *, to=None, compat=False, repair="auto", dict=None):
    """This process's fanjian.Converter for these options (the CLI's: -c PROFILE or
    --to, --compat, --repair, --dict), made on first use and kept."""
    opts = _options(profile, to, compat, repair, dict)
    key = tuple(sorted(opts.items()))
    with _converters_lock:
        conv = _converters.get(key)
        if conv is None:
            conv = fanjian.Converter(opts["profile"], to=opts["to"], compat=opts["compat"],
                                     repair=opts["repair"], dict=opts["dict"])
            _converters[key] = conv
    return conv


# ---- JSON lines -----------------------------------------------------------------

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_scanstring = json.decoder.scanstring  # the C scanner: (the string, the index past it)


def _value_spans(line, field):
    """The top-level string values of key `field` in the JSON object `line`, as
    (start, end, text) with start and end around the quotes; ValueError (a
    json.JSONDecodeError or ours) when `line` is not exactly one JSON object."""
    spans = []
    i = _SPACE.match(line).end()
    if line[i:i + 1] != "{":
        raise ValueError("not a JSON object")
    i = _SPACE.match(line, i + 1).end()
    if line[i:i + 1] != "}":
        while True:
            if line[i:i + 1] != '"':
                raise ValueError("no key at column %d" % (i + 1))
            key, i = _scanstring(line, i + 1)
            i = _SPACE.match(line, i).end()
            if line[i:i + 1] != ":":
                raise ValueError("no ':' at column %d" % (i + 1))
            i = _SPACE.match(line, i + 1).end()
            if line[i:i + 1] == '"':
                text, end = _scanstring(line, i + 1)
                if key == field:
                    spans.append((i, end, text))
            else:
                end = _DECODER.raw_decode(line, i)[1]
            i = _SPACE.match(line, end).end()
            c = line[i:i + 1]
            if c == "}":
                break
            if c != ",":
                raise ValueError("no ',' or '}' at column %d" % (i + 1))
            i = _SPACE.match(line, i + 1).end()
    if _SPACE.match(line, i + 1).end() != len(line):
        raise ValueError("more after the object at column %d" % (i + 2))
    return spans


def _convert_token(conv, token, text):
    """A JSON string token (with its quotes) whose value is `text`: converted, its escaping kept."""
    new = conv.convert(text)
    if new == text:
        return token
    for ascii_only in (False, True):
        if json.dumps(text, ensure_ascii=ascii_only) == token:
            return json.dumps(new, ensure_ascii=ascii_only)
    # Escaped some other way: the characters as they stand (escapes are ASCII,
    # which conversion never changes).
    out = '"' + conv.convert(token[1:-1]) + '"'
    try:
        json.loads(out)
    except ValueError:
        raise ValueError("the field's value is escaped as json.dumps does not escape, and its "
                         "conversion (say, of \\\" into a quotation mark) would break it") from None
    return out


def _convert_json_line(conv, line, field, field_token):
    body = line[:-1] if line.endswith("\r") else line
    if not body.strip(" \t\r\n"):
        return line
    if field_token not in body and "\\" not in body:
        # Without escapes the key would be written as field_token: not here.
        if not isinstance(json.loads(body), dict):
            raise ValueError("not a JSON object")
        return line
    spans = _value_spans(body, field)
    if not spans:
        return line
    parts, last = [], 0
    for start, end, text in spans:
        parts += [line[last:start], _convert_token(conv, line[start:end], text)]
        last = end
    parts.append(line[last:])
    return "".join(parts)


def _convert_json_lines(conv, data, field, where):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ValueError("%s:%d: not UTF-8 (byte %d); JSON lines are UTF-8" % (where, line, e.start)) from None
    bom = ""
    if text.startswith("\ufeff"):
        bom, text = "\ufeff", text[1:]
    lines = text.split("\n")
    field_token = json.dumps(field, ensure_ascii=False)
    for n, line in enumerate(lines):
        try:
            lines[n] = _convert_json_line(conv, line, field, field_token)
        except ValueError as e:  # json.JSONDecodeError is one
            raise ValueError("%s:%d: %s" % (where, n + 1, e)) from None
    return (bom + "\n".join(lines)).encode("utf-8")


def convert_lines(lines, field=None, *, profile=None, to=None, compat=False, repair="auto", dict=None):
    """A list of str lines converted: each line as a document (field=None), or each a
    JSON object whose `field` is converted as convert_shards does. For dask.bag:
    bag.map_partitions(fanjian.dask.convert_lines, field="text", profile="s2t")."""
    conv = converter(profile, to=to, compat=compat, repair=repair, dict=dict)
    if field is None:
        return [conv.convert(line) for line in lines]
    out = []
    field_token = json.dumps(field, ensure_ascii=False)
    for n, line in enumerate(lines):
        try:
            out.append(_convert_json_line(conv, line, field, field_token))
        except ValueError as e:
            raise ValueError("line %d of the partition: %s" % (n + 1, e)) from None
    return out


# ---- shards -----------------------------------------------------------------------

def _write_atomic(path, data):
    tmp = os.path.join(os.path.dirname(path) or ".",
                       ".%s.%d.%s.tmp" % (os.path.basename(path), os.getpid(), uuid.uuid4().hex[:8]))
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def convert_shard(src, dst, options, field=None):
    """One shard (a task; runs on a worker): src converted into dst. options: a dict
    with the keys of converter()'s arguments. Returns {"input", "output", "bytes"}."""
    if os.path.exists(dst) and os.path.samefile(src, dst):
        raise ValueError("%s: the output would replace the input" % dst)
    with open(src, "rb") as f:
        data = f.read()
    conv = converter(**options)
    if field is not None:
        out = _convert_json_lines(conv, data, field, src)
    else:
        try:
            data.decode("utf-8")
            utf8 = True
        except UnicodeDecodeError:
            utf8 = False
        if utf8:
            out = conv.convert(data)
        else:  # the CLI's encoding detection, through the formats library
            out = fanjian.convert_bytes(data, options["profile"], to=options["to"], format="text",
                                        compat=options["compat"], repair=options["repair"],
                                        dict=options["dict"])
    _write_atomic(dst, out)
    return {"input": src, "output": dst, "bytes": len(data)}


def _shard_list(shards):
    if isinstance(shards, (str, bytes, os.PathLike)):
        shards = [shards]
    paths = []
    for s in shards:
        s = os.fsdecode(os.fspath(s))
        if _glob.has_magic(s):
            found = sorted(_glob.glob(s))
            if not found:
                raise FileNotFoundError("no shard matches %s" % s)
            paths += found
        else:
            paths.append(s)
    if not paths:
        raise ValueError("no shards given")
    return paths


def convert_shards(shards, out_dir, profile=None, *, to=None, compat=False, repair="auto",
                   field=None, dict=None, client=None):
    """Converts each shard (paths or glob patterns) into out_dir/<its name>, one task
    a shard, on `client` (a distributed.Client; None: dask's current scheduler).
    Returns one {"input", "output", "bytes"} per shard, in the shards' order."""
    paths = _shard_list(shards)
    options = _options(profile, to, compat, repair, dict)
    out_dir = os.fsdecode(os.fspath(out_dir))
    os.makedirs(out_dir, exist_ok=True)
    inputs = {}
    for p in paths:
        if not os.path.isfile(p):
            raise FileNotFoundError("%s: not a file" % p)
        inputs[os.path.realpath(p)] = p
    outputs = {}
    for p in paths:
        dst = os.path.join(out_dir, os.path.basename(p))
        real = os.path.realpath(dst)
        if real in inputs:
            raise ValueError("%s: the output would replace the input %s" % (dst, inputs[real]))
        if real in outputs:
            raise ValueError("%s and %s would both be written to %s" % (outputs[real], p, dst))
        outputs[real] = p
    tasks = [dask.delayed(convert_shard, pure=False)(p, os.path.join(out_dir, os.path.basename(p)),
                                                      options, field) for p in paths]
    if client is not None:
        return client.gather(client.compute(tasks))
    return list(dask.compute(*tasks))
