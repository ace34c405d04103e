"""Threads: one Converter shared by many threads, and the GIL released while converting.

No timing is asserted. To show that the GIL is released, the switch interval
is set to 100 s: then a thread that wants the GIL gets it only when the thread
holding it blocks or releases it, never by preemption. Another thread waits to
increment a counter; if the counter moved during a call, that call released
the GIL (the converse does not hold: the other thread might not have been
woken in time, so a try that sees no movement is repeated with a longer
text). A control call that holds the GIL (sum() over a range, in C) must
leave the counter where it was.
"""
import os
import sys
import threading

import fanjian
from fjtest import QUICK, run, test

SANITIZED = os.environ.get("FJ_SANITIZED") == "1"
LINE = ("这是只有一个人的世界，头发干了，鼠标和打印机。他说：“你好。”\n"
        "這裡有繁體，頭髮乾了，滑鼠和印表機。\n"
        "plain ASCII text between the lines, 123.\n")
BIG = LINE * (800 if (QUICK or SANITIZED) else 4000)


@test("python threads: 8 threads share one Converter, results equal one thread's")
def shared_converter():
    jobs = [
        (fanjian.Converter("s2twp"), None),
        (fanjian.Converter("s2t", compat=True), None),
        (fanjian.OpenCC("t2s"), None),
        (None, "tw2sp"),  # module-level convert
    ]
    expected = [c.convert(BIG) if c else fanjian.convert(BIG, p) for c, p in jobs]
    expected_detect = fanjian.detect(BIG)
    errors = []
    rounds = 2 if (QUICK or SANITIZED) else 4

    def worker(k):
        try:
            for r in range(rounds):
                i = (k + r) % len(jobs)
                c, p = jobs[i]
                got = c.convert(BIG) if c else fanjian.convert(BIG, p)
                if got != expected[i]:
                    errors.append("thread %d round %d job %d: output differs" % (k, r, i))
                if fanjian.detect(BIG) != expected_detect:
                    errors.append("thread %d: detect differs" % k)
        except Exception as e:  # noqa: BLE001
            errors.append("thread %d: %r" % (k, e))
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, "; ".join(errors[:5])


def counter_moves_during(call):
    """Whether a thread waiting for the GIL ran while call() ran (see the module docstring)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        counter = [0]
        go = threading.Event()

        def other():
            go.wait()
            for _ in range(1000):
                counter[0] += 1
        t = threading.Thread(target=other)
        t.start()
        go.set()  # other() now wants the GIL, which this thread keeps
        before = counter[0]
        call()
        after = counter[0]
        t.join()
        return before == 0 and after == 1000
    finally:
        sys.setswitchinterval(old)


def gil_test(what, make_call):
    for attempt in range(5):
        call = make_call(BIG * (2 ** attempt))
        if counter_moves_during(call):
            return
    raise AssertionError("%s: no other thread ran during 5 calls" % what)


@test("python threads: control: a call that holds the GIL lets no other thread run")
def gil_control():
    n = 3_000_000 if not SANITIZED else 1_000_000
    assert not counter_moves_during(lambda: sum(range(n))), "the method cannot tell"


@test("python threads: Converter.convert releases the GIL (another thread counts meanwhile)")
def gil_converter():
    c = fanjian.Converter("s2twp")
    gil_test("Converter.convert", lambda text: (lambda: c.convert(text)))


@test("python threads: convert(), OpenCC.convert and detect() release the GIL")
def gil_others():
    o = fanjian.OpenCC("s2t")
    gil_test("fanjian.convert", lambda text: (lambda: fanjian.convert(text, "s2t", compat=True)))
    gil_test("OpenCC.convert", lambda text: (lambda: o.convert(text)))
    gil_test("fanjian.detect", lambda text: (lambda: fanjian.detect(text)))


def during_conversion(c, text, action):
    """Runs action() while another thread is inside c.convert(text), known for
    certain: with the switch interval at 100 s this thread gets the GIL back only
    when the converting thread releases it, and `done` tells whether the
    conversion had finished by then. Returns (ran during it, result or exception)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        entering = threading.Event()
        state = {"done": False}

        def worker():
            entering.set()
            try:
                state["result"] = c.convert(text)
            except Exception as e:  # noqa: BLE001
                state["result"] = e
            state["done"] = True
        t = threading.Thread(target=worker)
        t.start()
        entering.wait()
        running = not state["done"]
        action()
        t.join()
        return running, state["result"]
    finally:
        sys.setswitchinterval(old)


@test("python threads: close() during another thread's conversion waits for it")
def close_while_converting():
    text = BIG
    for attempt in range(5):
        c = fanjian.Converter("s2t")
        want = fanjian.convert(text, "s2t")
        running, result = during_conversion(c, text, c.close)
        assert result == want, "the conversion in flight gave %r" % (result if isinstance(result, Exception) else result[:80])
        try:
            c.convert("x")
            raise AssertionError("convert after close did not raise")
        except ValueError:
            pass
        if running:
            return
        text = text * 2
    raise AssertionError("close() never came during a conversion in 5 tries")


@test("python threads: set_conversion() during another thread's conversion")
def switch_while_converting():
    text = BIG
    for attempt in range(5):
        o = fanjian.OpenCC("s2t")
        want = o.convert(text)
        running, result = during_conversion(o, text, lambda: o.set_conversion("s2twp"))
        assert result == want, "the conversion in flight did not keep its profile"
        assert o.conversion == "s2twp" and o.convert("鼠标") == "滑鼠"
        if running:
            return
        text = text * 2
    raise AssertionError("set_conversion() never came during a conversion in 5 tries")


@test("python threads: converters opened and closed in 8 threads at once")
def open_close_threads():
    errors = []
    n = 50 if (QUICK or SANITIZED) else 300

    def worker(k):
        try:
            for i in range(n):
                p = ("s2t", "t2s", "s2twp", "tw2sp")[(i + k) % 4]
                with fanjian.Converter(p, compat=bool(i & 1)) as c:
                    c.convert(LINE)
                fanjian.OpenCC(p).convert(LINE)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


@test("python threads: fork while other threads open dictionaries: the child converts")
def fork_while_opening():
    import time
    stop = threading.Event()
    paths = [os.environ["FANJIAN_DICT"], os.path.join(os.path.dirname(fanjian.__file__), "fanjian.fjd")]

    def worker(k):
        i = 0
        while not stop.is_set():
            fanjian.Converter(compat=True, dict=paths[(i + k) % 2]).convert(LINE)
            i += 1
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    try:
        for _ in range(10):
            pid = os.fork()
            if pid == 0:  # the child: one thread, the parent's caches
                try:
                    ok = (fanjian.convert("头发干了") == "頭髮乾了" and
                          fanjian.Converter("s2t", dict=paths[1]).convert("头发") == "頭髮")
                finally:
                    os._exit(0 if ok else 1)
            # A child that hangs is killed after a minute (a deadlock, not slowness).
            for _ in range(600):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                raise AssertionError("a forked child hung")
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "child status %d" % status
    finally:
        stop.set()
        for t in threads:
            t.join()


run()
