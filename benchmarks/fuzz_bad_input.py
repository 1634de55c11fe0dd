"""Bad-input fuzzer for the public tessera API (exploration tool, not a test).

Calls every public callable of ``tessera``, ``tessera.linalg``, ``tessera.fft``,
``tessera.random`` and the Tensor methods/operators with systematically bad arguments, each
case in a crash-guarded child process with a per-case timeout, and writes one JSON line per
case to the output file: ``{"i", "case", "status", "type", "msg"}`` where status is
``ok`` (no exception), ``raised``, ``crash`` (child died) or ``hang`` (timeout).

    PYTHONPATH=python python benchmarks/fuzz_bad_input.py out.jsonl [--workers 2] [--only NAME]
    PYTHONPATH=python python benchmarks/fuzz_bad_input.py --report out.jsonl
"""
from __future__ import annotations

import json
import math
import os
import re
import select
import subprocess
import sys
import time
from typing import Any, Callable, Iterator

SKIP = {"save", "load", "set_num_threads", "seed", "from_dlpack", "set_rng_state"}
CASE_TIMEOUT = 15.0


def _bad_values(ts: Any) -> list[tuple[str, Any]]:
    """Named bad argument values (built lazily: needs the tessera module)."""
    return [
        ("None", None),
        ("str", "abc"),
        ("list_str", ["a", "b"]),
        ("dict", {"a": 1}),
        ("object", object()),
        ("float1.5", 1.5),
        ("nan", math.nan),
        ("inf", math.inf),
        ("neg1", -1),
        ("huge", 2**62),
        ("huge70", 2**70),
        ("neghuge", -(2**62)),
        ("shape_huge", (2**31, 2**31)),
        ("shape_neg", (2, -3)),
        ("bool_t", ts.asarray([True, False, True])),
        ("int_t", ts.asarray([[1, 2, 3], [4, 5, 6]])),
        ("complex_t", ts.asarray([1 + 1j, 2, 3], dtype=ts.complex64)),
        ("zero_d", ts.asarray(1.5)),
        ("empty", ts.zeros((0,))),
        ("mismatch", ts.ones((4, 5))),
        ("dtype", ts.float32),
    ]


def _kw_bad(ts: Any) -> list[tuple[str, str, Any]]:
    """(name, keyword, value) keyword cases."""
    out = []
    for kw in ("axis", "dim"):
        for n, v in (("100", 100), ("-100", -100), ("huge", 2**62), ("1.5", 1.5), ("str", "a"),
                     ("dup", (0, 0)), ("tup_oob", (0, 7))):
            out.append((f"{kw}={n}", kw, v))
    out += [("dtype=bogus", "dtype", "bogus"), ("dtype=obj", "dtype", object()),
            ("device=cuda", "device", "cuda"), ("device=bogus", "device", "tpu:3"),
            ("keepdims=str", "keepdims", "yes"), ("out=str", "out", "x"),
            ("typo", "axsi", 0)]
    return out


def _public(ts: Any) -> list[tuple[str, Callable]]:
    import inspect
    mods = [("ts", ts), ("linalg", ts.linalg), ("fft", ts.fft), ("random", ts.random)]
    out = []
    for mname, mod in mods:
        for n in sorted(dir(mod)):
            if n.startswith("_") or n in SKIP:
                continue
            f = getattr(mod, n)
            if inspect.ismodule(f) or isinstance(f, type) or not callable(f):
                continue
            if getattr(f, "__module__", "") in ("typing",):
                continue
            out.append((f"{mname}.{n}", f))
    return out


def _methods(ts: Any) -> list[str]:
    x = ts.ones((2, 3))
    out = []
    for n in sorted(dir(ts.Tensor)):
        if n.startswith("_"):
            continue
        try:
            if callable(getattr(x, n)):
                out.append(n)
        except Exception:
            pass
    return out


OPS = ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__",
       "__matmul__", "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__lt__",
       "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__iadd__", "__imul__", "__itruediv__",
       "__imatmul__", "__getitem__", "__setitem__"]


# A plausible good value per parameter name, so that a bad value in one slot reaches the
# op's own validation instead of failing on a neighbour.
def _good_by_name(ts: Any) -> dict[str, Callable[[], Any]]:
    i = lambda v: (lambda: v)  # noqa: E731
    t = lambda: ts.ones((2, 3))  # noqa: E731
    table = {
        "axis": i(0), "dim": i(0), "dim0": i(0), "dim1": i(1), "axis1": i(0), "axis2": i(1),
        "source": i(0), "destination": i(1), "k": i(1), "n": i(2), "num": i(3), "steps": i(3),
        "p": i(2), "q": i(0.5), "bins": i(4), "chunks": i(2), "sections": i(2),
        "shape": i((2, 3)), "size": i((2, 3)), "sizes": i((2, 3)), "dims": i((0, 1)),
        "repeats": i(2), "reps": i((1, 2)), "shifts": i(1), "start": i(0), "stop": i(3),
        "end": i(3), "step": i(1), "length": i(1), "index": i(0), "offset": i(0),
        "num_samples": i(2), "low": i(0), "high": i(5), "fill_value": i(1.0), "value": i(1.0),
        "dtype": i(ts.float32), "device": i("cpu"), "keepdims": i(False), "correction": i(0),
        "decimals": i(0), "diagonal": i(0), "row": i(3), "col": i(3), "n_rows": i(3),
        "N": i(3), "M": i(3), "ord": i(2), "norm": i("backward"), "descending": i(False),
        "stable": i(True), "indices": lambda: ts.asarray([0, 1]), "mask": lambda: ts.ones(
            (2, 3), dtype=ts.bool), "condition": lambda: ts.ones((2, 3), dtype=ts.bool),
    }
    return {**table, "_default": t}


def _param_names(f: Callable) -> list[str] | None:
    import inspect
    try:
        ps = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def named_cases(ts: Any) -> list[tuple[str, Callable[[], Any]]]:
    """Each public Python function called with name-aware good arguments, one slot bad."""
    bads = _bad_values(ts)
    goods = _good_by_name(ts)
    out = []
    for name, f in _public(ts):
        names = _param_names(f)
        if not names:
            continue
        names = names[:4]
        for p in range(len(names)):
            for bn, bv in bads:
                def thunk(f=f, names=names, p=p, bv=bv):
                    args = [goods.get(n, goods["_default"])() for n in names]
                    args[p] = bv
                    return f(*args)
                out.append((f"N:{name}({names[p]}={bn})", thunk))
    for m in _methods(ts):
        names = _param_names(getattr(ts.Tensor, m))
        if not names or len(names) < 2:
            continue
        names = names[1:5]  # after self
        for p in range(len(names)):
            for bn, bv in bads:
                def thunk(m=m, names=names, p=p, bv=bv):
                    args = [goods.get(n, goods["_default"])() for n in names]
                    args[p] = bv
                    return getattr(ts.ones((2, 3)), m)(*args)
                out.append((f"N:Tensor.{m}({names[p]}={bn})", thunk))
    return out


def cases(ts: Any) -> list[tuple[str, Callable[[], Any]]]:
    """Every case as (description, thunk). Deterministic order."""
    bads = _bad_values(ts)
    kws = _kw_bad(ts)
    good = lambda: ts.ones((2, 3))  # noqa: E731
    out: list[tuple[str, Callable[[], Any]]] = []

    def add_calls(name: str, get: Callable[[], Callable]) -> None:
        out.append((f"{name}()", lambda: get()()))
        for k in (1, 2, 3):
            for p in range(k):
                for bn, bv in bads:
                    def thunk(k=k, p=p, bv=bv):
                        args = [good() for _ in range(k)]
                        args[p] = bv
                        return get()(*args)
                    out.append((f"{name}(args{k}[{p}]={bn})", thunk))
        for kn, kw, kv in kws:
            out.append((f"{name}(x, {kn})", lambda kw=kw, kv=kv: get()(good(), **{kw: kv})))

    for name, f in _public(ts):
        add_calls(name, lambda f=f: f)
    for m in _methods(ts):
        add_calls(f"Tensor.{m}", lambda m=m: getattr(ts.ones((2, 3)), m))
    out += named_cases(ts)
    for op in OPS:
        for bn, bv in bads:
            if op == "__setitem__":
                out.append((f"x[{bn}]=1", lambda bv=bv: ts.ones((2, 3)).__setitem__(bv, 1)))
                out.append((f"x[0]={bn}", lambda bv=bv: ts.ones((2, 3)).__setitem__(0, bv)))
            else:
                out.append((f"x.{op}({bn})", lambda op=op, bv=bv: getattr(ts.ones((2, 3)), op)(bv)))
    return out


def child(start: int, stop: int) -> None:
    import faulthandler
    faulthandler.enable()
    import tessera as ts
    cs = cases(ts)
    for i in range(start, min(stop, len(cs))):
        desc, thunk = cs[i]
        print(f"S {i}", flush=True)
        try:
            thunk()
            rec = {"status": "ok", "type": "", "msg": ""}
        except BaseException as e:  # noqa: BLE001 - we classify everything
            rec = {"status": "raised", "type": type(e).__name__, "msg": str(e)[:300]}
        rec.update(i=i, case=desc)
        print("E " + json.dumps(rec), flush=True)
        try:
            ts.set_default_dtype(ts.float32)
            ts.set_default_device("cpu")
            ts.set_autocast_enabled(False)
        except Exception:
            pass


def drive(start: int, stop: int, out: Any) -> None:
    i = start
    while i < stop:
        p = subprocess.Popen([sys.executable, "-X", "faulthandler", __file__, "--child", str(i),
                              str(stop)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, bufsize=1)
        cur = None
        deadline = time.time() + 4 * CASE_TIMEOUT  # the child imports and builds the cases
        while True:
            r, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.time()))
            if not r:
                p.kill()
                p.wait()
                out.write(json.dumps({"i": cur, "status": "hang"}) + "\n")
                i = (cur if cur is not None else i) + 1
                break
            line = p.stdout.readline()
            if not line:
                p.wait()
                if cur is not None:
                    err = p.stderr.read()[-600:]
                    out.write(json.dumps({"i": cur, "status": "crash", "rc": p.returncode,
                                          "msg": err}) + "\n")
                    i = cur + 1
                else:
                    i = stop
                break
            if line.startswith("S "):
                cur = int(line[2:])
                deadline = time.time() + CASE_TIMEOUT
            elif line.startswith("E "):
                out.write(line[2:])
                cur = None
                deadline = time.time() + CASE_TIMEOUT
                i = json.loads(line[2:])["i"] + 1
        out.flush()


BAD_TYPES = {"TypeError", "ValueError", "IndexError", "RuntimeError", "MemoryError",
             "NotImplementedError"}


def report(path: str) -> None:
    recs = [json.loads(line) for line in open(path)]
    cats: dict[str, list] = {}
    for r in recs:
        st = r["status"]
        if st in ("crash", "hang"):
            cats.setdefault(st, []).append(r)
        elif st == "raised":
            if r["type"] not in BAD_TYPES:
                cats.setdefault("odd_type:" + r["type"], []).append(r)
            elif "incompatible function arguments" in r["msg"] or "Invoked with" in r["msg"]:
                cats.setdefault("pybind_dump", []).append(r)
    for k, v in sorted(cats.items()):
        print(f"== {k}: {len(v)}")
        for r in v[:400]:
            print("  ", r.get("case", r["i"]), "|", r.get("msg", "")[:160].replace("\n", " "))


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1] == "--report":
        report(sys.argv[2])
    else:
        import tessera as ts
        n = len(cases(ts))
        workers = int(sys.argv[sys.argv.index("--workers") + 1]) if "--workers" in sys.argv else 1
        path = sys.argv[1]
        if workers == 1:
            with open(path, "w") as f:
                drive(0, n, f)
        else:
            import multiprocessing as mp
            step = (n + workers - 1) // workers

            def work(w: int) -> None:
                with open(f"{path}.{w}", "w") as f:
                    drive(w * step, min(n, (w + 1) * step), f)
            ps = [mp.Process(target=work, args=(w,)) for w in range(workers)]
            for q in ps:
                q.start()
            for q in ps:
                q.join()
            with open(path, "w") as f:
                for w in range(workers):
                    f.write(open(f"{path}.{w}").read())
                    os.remove(f"{path}.{w}")
        print("cases:", n)
