"""A hypothesis-driven fuzzer of tessera's public API (issue 22).

Hypothesis draws batches of calls: a public callable (the top-level namespace, linalg, fft,
special, nn.functional and Tensor methods) with hostile arguments: tensors of every dtype with
odd shapes (empty, 0-d, size 1), non-contiguous layouts (transposed, strided, expanded, flipped),
NaN/inf/huge values and requires_grad; huge, negative and non-integral sizes; None, strings,
bytes, dicts, object(), nested and ragged lists, NumPy arrays of object/str/datetime dtype,
dtypes and devices. Each batch runs in a fresh subprocess (fuzz_worker.py) under an address-space
limit, so a crash, an abort or a runaway allocation is a finding instead of taking the test run
down. A batch fails on

  - a signal or a nonzero exit (reported with the call in flight),
  - a hang (a call past its time limit, or the whole batch past its deadline),
  - an exception outside TypeError, ValueError, IndexError, RuntimeError (tessera.errors are
    subclasses), NotImplementedError, OverflowError, MemoryError (RecursionError never),
  - C++ or binding text in a message ("Unable to cast", "stoi", pybind11's dumps).

Run it:
  pytest tests/fuzz                                   bounded (CI): about 40 s, derandomized
  TESSERA_FUZZ_LONG=1 TESSERA_FUZZ_SECONDS=1800 pytest tests/fuzz -s     long, random seeds
  python tests/fuzz/fuzz_api.py --seconds 600 [--seed N] [--only ts.add,F.conv2d]
"""
from __future__ import annotations

import argparse
import inspect
import os
import pickle
import subprocess
import sys
import tempfile
import time
import types
from typing import Any, List, Optional, Sequence, Tuple

from hypothesis import strategies as st

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Global state, files, processes or the interpreter itself: not what this fuzzer is about.
EXCLUDED = {
    "ts.save", "ts.load", "ts.from_file", "ts.set_num_threads", "ts.set_num_interop_threads",
    "ts.set_default_dtype", "ts.set_default_device", "ts.set_default_tensor_type",
    "ts.set_printoptions", "ts.use_deterministic_algorithms", "ts.set_flush_denormal",
    "ts.set_warn_always", "ts.compile", "ts.set_rng_state", "ts.set_anomaly_enabled",
    "ts.set_grad_enabled", "ts.build_config", "Tensor.share_memory_",
}

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
HOSTILE_INTS = [0, 1, -1, 2, 3, -2, 7, 1000, 2 ** 31 - 1, 2 ** 31, -2 ** 31, 2 ** 32, 2 ** 40,
                2 ** 62, 2 ** 63 - 1, 2 ** 63, -2 ** 63, -2 ** 63 - 1, 2 ** 64, 2 ** 100,
                -2 ** 100]
HOSTILE_FLOATS = [0.0, -0.0, 0.5, 1.5, -2.5, 1e-300, 1e308, float("nan"), float("inf"),
                  float("-inf"), 2.0 ** 63]
KW_NAMES = ["dim", "axis", "keepdim", "keepdims", "dtype", "out", "device", "shape", "size", "k",
            "n", "p", "alpha", "weight", "bias", "stride", "padding", "kernel_size", "correction",
            "copy", "ord", "norm", "descending", "stable", "return_counts", "offset", "min", "max",
            "value", "index", "groups", "reduction", "mode", "eps", "generator", "requires_grad"]


def public_targets() -> List[str]:
    """Every public callable the fuzzer calls, as 'space.name'."""
    import tessera as ts
    import tessera.nn.functional as F
    out = []
    for space, mod in [("ts", ts), ("linalg", ts.linalg), ("fft", ts.fft),
                       ("special", ts.special), ("F", F)]:
        for n in sorted(dir(mod)):
            f = getattr(mod, n, None)
            if n.startswith("_") or isinstance(f, (types.ModuleType, type)) or not callable(f):
                continue
            out.append(f"{space}.{n}")
    for n in sorted(vars(ts.Tensor)):
        if n.startswith("_") or not callable(getattr(ts.Tensor, n, None)):
            continue
        out.append(f"Tensor.{n}")
    return [t for t in out if t not in EXCLUDED]


# ----------------------------------------------------------------------------- strategies
small_shapes = st.lists(st.sampled_from([0, 1, 2, 3, 5]), min_size=0, max_size=4).map(tuple)


@st.composite
def tensors(draw: Any) -> tuple:
    shape = draw(small_shapes)
    dtype = draw(st.sampled_from(DTYPES))
    layout = draw(st.sampled_from(["c", "c", "t", "s", "e", "f"]))
    fill = draw(st.sampled_from(["normal", "normal", "int", "special", "zero"]))
    grad = draw(st.booleans()) if draw(st.integers(0, 3)) == 0 else False
    return ("T", shape, dtype, layout, fill, grad)


def _py(values: Sequence[Any]) -> Any:
    return st.sampled_from(values).map(lambda v: ("py", v))


sizes = st.one_of(
    st.lists(st.sampled_from(HOSTILE_INTS[:8]), min_size=0, max_size=3).map(
        lambda v: ("py", tuple(v))),
    st.lists(st.sampled_from(HOSTILE_INTS), min_size=1, max_size=3).map(lambda v: ("py", tuple(v))),
    st.lists(st.sampled_from([1, 2, 2.5, -1, None, "a", float("nan")]), min_size=1,
             max_size=3).map(lambda v: ("py", tuple(v))),
)
odd = st.one_of(
    _py([None, "a", "", "cpu", "cuda", "cuda:99", "float32", "mean", "sum", "none", "fro",
         "nuc", "reflect", "ortho", b"x", {}, {"a": 1}, [], [[]], [1, [2]], [[1], [2, 3]],
         [1, "a"], [1.5, None], (1, (2, "x")), 1j, complex("nan+1j"), True, False]),
    st.just(("obj",)), st.just(("ellipsis",)),
    st.sampled_from([(None, None, None), (None, None, -1), (-2 ** 70, 2 ** 70, 0),
                     (1, 2, 2 ** 63)]).map(lambda s: ("slice", s)),
    st.sampled_from(["f64", "obj", "str", "nan0d", "dt64", "big", "int0d", "empty", "f16nc",
                     "ragged", "struct"]).map(lambda s: ("np", s)),
    st.sampled_from(DTYPES).map(lambda d: ("dtype", d)),
)
scalars = st.one_of(_py(HOSTILE_INTS), _py(HOSTILE_FLOATS))
values = st.deferred(lambda: st.one_of(
    tensors(), tensors(), tensors(), scalars, sizes, odd,
    st.lists(tensors(), min_size=0, max_size=3).map(lambda v: ("list", v)),
    st.lists(st.one_of(tensors(), scalars, odd), min_size=1, max_size=3).map(
        lambda v: ("tuple", v)),
))


def calls(targets: Sequence[str]) -> Any:
    return st.tuples(
        st.sampled_from(list(targets)),
        st.lists(values, min_size=0, max_size=4),
        st.lists(st.tuples(st.sampled_from(KW_NAMES), values), min_size=0, max_size=2).map(
            lambda kv: list(dict(kv).items())),
    )


def valid_first(targets: Sequence[str]) -> Any:
    """Calls whose first argument is a plain tensor: they get past the type checks and reach
    the ops' own validation (sizes, dims, dtypes) more often."""
    return st.tuples(
        st.sampled_from(list(targets)),
        st.tuples(tensors(), st.lists(st.one_of(tensors(), scalars, sizes, odd), min_size=0,
                                      max_size=3)).map(lambda t: [t[0]] + t[1]),
        st.lists(st.tuples(st.sampled_from(KW_NAMES), st.one_of(scalars, odd, sizes)),
                 min_size=0, max_size=2).map(lambda kv: list(dict(kv).items())),
    )


def plausible(targets: Sequence[str]) -> Any:
    """Tensors, small dims and shapes only: calls that often succeed, so the ops' edge cases
    (empty, 0-d, non-contiguous, NaN, every dtype) are exercised rather than their checks."""
    small = _py([0, 1, -1, 2, -2, 3, 0.5, True])
    return st.tuples(
        st.sampled_from(list(targets)),
        st.lists(st.one_of(tensors(), tensors(), small, small_shapes.map(lambda s: ("py", s))),
                 min_size=1, max_size=3),
        st.just([]),
    )


def batches(targets: Sequence[str], size: int) -> Any:
    return st.lists(st.one_of(calls(targets), valid_first(targets), plausible(targets)),
                    min_size=size, max_size=size)


# ----------------------------------------------------------------------------- runner
def describe(call: tuple) -> str:
    name, args, kwargs = call
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs]
    return f"{name}({', '.join(parts)})"


def _package_parent() -> str:
    """The folder holding the tessera this process imports (the installed wheel under CI, the
    source tree's python/ in development), so the worker tests the same build."""
    import tessera
    return os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))


def run_batch(batch: List[tuple], seed: int = 0, deadline: float = 120.0) -> List[str]:
    """Runs `batch` in a fresh worker; returns the findings (empty when all is well)."""
    with tempfile.TemporaryDirectory(prefix="tessera-fuzz-") as d:
        paths = [os.path.join(d, n) for n in ("batch.pkl", "progress", "result.pkl")]
        with open(paths[0], "wb") as f:
            pickle.dump((batch, seed), f)
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   PYTHONPATH=os.pathsep.join([_package_parent()] + [p for p in sys.path if p]))
        cmd = [sys.executable, os.path.join(HERE, "fuzz_worker.py")] + paths
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=deadline, env=env)
            rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-1500:]
        except subprocess.TimeoutExpired as e:
            rc, tail = None, str(e.stdout or "")[-500:] + str(e.stderr or "")[-1000:]
        progress = open(paths[1]).read().split() if os.path.exists(paths[1]) else []
        last = progress[-1] if progress else None
        in_flight = (f"call {last}: {describe(batch[int(last)])}" if last and last.isdigit()
                     else f"stage {last!r}")
        if rc is None:
            return [f"HANG: the batch passed its {deadline:.0f} s deadline "
                    f"({time.monotonic() - t0:.0f} s) in {in_flight}\n{tail}"]
        if rc != 0 or not os.path.exists(paths[2]):
            how = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
            return [f"CRASH ({how}) in {in_flight}\n{tail}"]
        with open(paths[2], "rb") as f:
            results = pickle.load(f)
    return [f"{detail}\n    in {describe(call)}" for call, (status, detail)
            in zip(batch, results) if status == "bad"]


class _TimeUp(BaseException):
    """Ends a fuzzing session (a BaseException, so hypothesis neither catches nor shrinks it)."""


def fuzz_for(seconds: float, seed: Optional[int], batch_size: int = 150,
             only: Optional[Sequence[str]] = None,
             max_batches: int = 10 ** 6, log: Any = None) -> List[str]:
    """Runs hypothesis-drawn batches until `seconds` pass (or `max_batches` ran); returns the
    findings. seed None: a random session; an int: the same batches every time.

    Hypothesis starts each run with its simplest examples and, given a large max_examples,
    spends long on small variations of them; short runs of 10 examples under successive seeds
    keep the batches diverse."""
    import random
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    targets = list(only) if only else public_targets()
    findings: List[str] = []
    end = time.monotonic() + seconds
    count = [0]
    master = random.Random(seed)

    @settings(max_examples=10, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(batches(targets, batch_size), st.integers(0, 2 ** 20))
    def session(batch: List[tuple], worker_seed: int) -> None:
        if time.monotonic() > end or count[0] >= max_batches:
            raise _TimeUp()
        if len({c[0] for c in batch}) < min(batch_size // 4, len(targets)):
            return  # one of hypothesis's simplest examples: nothing new to learn
        new = run_batch(batch, seed=worker_seed)
        findings.extend(new)
        count[0] += 1
        if log:
            for f in new:
                log("FINDING: " + f)
            log(f"batch {count[0]}: {len(batch)} calls, {len(findings)} findings so far")

    try:
        while True:
            hseed(master.getrandbits(64))(session)()
    except _TimeUp:
        pass
    return findings


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--batch", type=int, default=150)
    ap.add_argument("--only", default="", help="comma-separated targets, e.g. ts.add,F.conv2d")
    a = ap.parse_args(argv)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    findings = fuzz_for(a.seconds, a.seed, a.batch, [t for t in a.only.split(",") if t] or None,
                        log=lambda m: print(m, file=sys.stderr, flush=True))
    seen = set()
    for f in findings:
        key = f.split("\n")[0][:160]
        if key not in seen:
            seen.add(key)
            print(f, "\n")
    print(f"{len(findings)} findings ({len(seen)} distinct)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
