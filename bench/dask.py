"""Throughput of fanjian.dask at 1 and 2 workers (make bench-dask).

    PYTHONPATH=build/python FANJIAN_DICT=build/fanjian.fjd /usr/bin/python3 bench/dask.py \
        [--mb 40] [--shards 8] [--profile s2t] [--workers 1,2] [--runs 3] [--jsonl] [--fanjian build/fanjian]

A corpus of --mb MB made from real text repeated (--text, default the shared
OpenCC test input), cut into --shards shards in a temporary directory; for each
worker count, a distributed.LocalCluster of that many worker processes (one
thread each) converts every shard with fanjian.dask.convert_shards. The time is
the best of --runs runs, after one warm-up run that opens each worker's
converter. MB/s counts the input's bytes. Every run's outputs must be the same
bytes as the first worker count's, and one shard is compared with the CLI's
(--fanjian). --jsonl makes JSON lines shards ({"id": N, "text": LINE}) and
converts field "text". Prints a Markdown table.
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# This file is dask.py too: its directory off the path, or `import dask` finds it.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]


def package_view(tmp):
    """make python builds a flat module; fanjian.dask needs the package layout
    (as pip installs it): tmp/pkg/fanjian/ linked to the build and the source."""
    spec = importlib.util.find_spec("fanjian")
    if spec is None:
        sys.exit("bench/dask.py: no fanjian module on the path (make python; PYTHONPATH=build/python)")
    if spec.submodule_search_locations:
        return
    pkg = os.path.join(tmp, "pkg", "fanjian")
    os.makedirs(pkg)
    os.symlink(os.path.abspath(spec.origin),
               os.path.join(pkg, "__init__" + sysconfig.get_config_var("EXT_SUFFIX")))
    os.symlink(os.path.join(ROOT, "python", "fanjian", "dask.py"), os.path.join(pkg, "dask.py"))
    sys.path.insert(0, os.path.dirname(pkg))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.dirname(pkg), os.environ.get("PYTHONPATH")]))


def make_shards(d, text, mb, count, jsonl):
    lines = [line for line in text.decode("utf-8").split("\n") if line]
    if jsonl:
        lines = [json.dumps({"id": n, "text": line}, ensure_ascii=False) for n, line in enumerate(lines)]
    block = ("\n".join(lines) + "\n").encode("utf-8")
    per_shard = mb * 1000000 // count
    paths = []
    for k in range(count):
        path = os.path.join(d, "part-%03d.%s" % (k, "jsonl" if jsonl else "txt"))
        with open(path, "wb") as f:
            written = 0
            while written < per_shard:
                f.write(block)
                written += len(block)
        paths.append(path)
    return paths


def outputs(paths, out):
    result = {}
    for p in paths:
        with open(os.path.join(out, os.path.basename(p)), "rb") as f:
            result[os.path.basename(p)] = f.read()
    return result


def main():
    ap = argparse.ArgumentParser(description="fanjian.dask throughput at 1 and 2 workers")
    ap.add_argument("--mb", type=int, default=40)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--profile", default="s2t")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jsonl", action="store_true")
    ap.add_argument("--text", default=os.path.join(os.environ.get("FANJIAN_SHARED") or os.path.join(ROOT, "..", "shared"),
                                                   "opencc", "compat", "input.txt"))
    ap.add_argument("--fanjian", default=os.path.join(ROOT, "build", "fanjian"))
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="fanjian-bench-dask-")
    try:
        package_view(tmp)
        import distributed
        import fanjian
        import fanjian.dask as fjdask

        with open(a.text, "rb") as f:
            text = f.read()
        shards = make_shards(tmp, text, a.mb, a.shards, a.jsonl)
        total = sum(os.path.getsize(p) for p in shards)
        field = "text" if a.jsonl else None
        print("fanjian.dask, %s, %s: %d shards, %.1f MB (%s repeated), LocalCluster(processes=True, "
              "threads_per_worker=1), best of %d runs after a warm-up; fanjian %s, dask %s, distributed %s, "
              "%d cores" % (a.profile, "JSON lines (field text)" if a.jsonl else "text", len(shards), total / 1e6,
                            os.path.relpath(a.text, ROOT) if a.text.startswith(ROOT) else a.text, a.runs,
                            fanjian.__version__, __import__("dask").__version__, distributed.__version__,
                            os.cpu_count()))
        print()
        print("| workers | seconds (best) | all runs | MB/s | vs 1 worker |")
        print("|---:|---:|---|---:|---:|")
        first = None
        base = None
        for n in [int(x) for x in a.workers.split(",")]:
            out = os.path.join(tmp, "out-%d" % n)
            with distributed.LocalCluster(n_workers=n, processes=True, threads_per_worker=1, host="127.0.0.1",
                                          dashboard_address=None,
                                          local_directory=os.path.join(tmp, "workers")) as cluster, \
                    distributed.Client(cluster) as client:
                fjdask.convert_shards(shards, out, a.profile, field=field, client=client)  # warm-up
                times = []
                for _ in range(a.runs):
                    shutil.rmtree(out)
                    t0 = time.perf_counter()
                    fjdask.convert_shards(shards, out, a.profile, field=field, client=client)
                    times.append(time.perf_counter() - t0)
            got = outputs(shards, out)
            if first is None:
                first = got
            elif got != first:
                sys.exit("bench/dask.py: the outputs at %d workers differ from the first run's" % n)
            best = min(times)
            mbs = total / 1e6 / best
            base = base or mbs
            print("| %d | %.3f | %s | %.1f | %.2f× |" % (n, best, " ".join("%.3f" % t for t in times), mbs, mbs / base))
            sys.stdout.flush()
        if os.path.exists(a.fanjian) and not a.jsonl:
            cli = subprocess.run([a.fanjian, "-c", a.profile, shards[0]], stdout=subprocess.PIPE, check=True).stdout
            if cli != first[os.path.basename(shards[0])]:
                sys.exit("bench/dask.py: %s differs from `fanjian -c %s`" % (shards[0], a.profile))
            print()
            print("Output checked: every run's shards the same bytes; %s identical to `%s -c %s`."
                  % (os.path.basename(shards[0]), os.path.relpath(a.fanjian, ROOT), a.profile))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
