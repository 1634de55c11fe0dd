"""The fuzzer's worker: runs one batch of calls to tessera's public API in this (disposable)
process and records how each ended. Usage: fuzz_worker.py BATCH PROGRESS RESULT.

BATCH is a pickled list of call specs (plain Python data, see fuzz_api.py); before each call
the worker appends its index to PROGRESS (unbuffered), so the parent knows which call was in
flight when the process died of a signal or hung; RESULT receives a pickled list with one
(status, detail) pair per call: status "ok", "raised" (an allowed exception class) or "bad"
(an unexpected class, a hang caught in Python, or C++ text in the message).
"""
from __future__ import annotations

import math
import os
import pickle
import re
import resource
import signal
import sys
import warnings

# C++ or binding internals in a message users see
LEAK = re.compile(r"incompatible function arguments|Unable to cast|C\+\+ type|\bstoi\b|std::|"
                  r"pybind11|[Ii]nvoked with|basic_string|vector<|__cxx|terminate called")
ALLOWED = (TypeError, ValueError, IndexError, RuntimeError, NotImplementedError, OverflowError,
           MemoryError)
NEVER = (RecursionError,)  # a RuntimeError subclass, but always a defect here


class CallTimeout(BaseException):
    """Raised by SIGALRM when one call runs past its time limit (a Python-level hang)."""


def _alarm(signum: int, frame: object) -> None:
    raise CallTimeout()


def resolve(name: str):
    import tessera as ts
    import tessera.nn.functional as F
    space, attr = name.split(".", 1)
    if space == "selftest" and os.environ.get("TESSERA_FUZZ_SELFTEST") == "1":
        import time  # the harness's own test: each kind of finding on demand
        return {"abort": os.abort,  # a hang the alarm cannot break, as in C++ code:
                "hang": lambda: (signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM}),
                                 time.sleep(10 ** 6)),
                "spin": lambda: [None for _ in iter(int, 1)],
                "keyerror": lambda: {}["k"], "leak": lambda: (_ for _ in ()).throw(
                    RuntimeError("Unable to cast Python instance to C++ type '?'"))}[attr]
    mod = {"ts": ts, "F": F, "linalg": ts.linalg, "fft": ts.fft, "special": ts.special}
    if space == "Tensor":
        return None
    return getattr(mod[space], attr)


def make_tensor(shape, dtype, layout, fill, requires_grad, seed):
    import numpy as np
    import tessera as ts
    shape = tuple(shape)
    rng = np.random.default_rng(seed)
    base = list(shape)
    if layout == "s" and base:
        base[0] = base[0] * 2
    if layout == "e" and base:
        base[0] = 1
    if layout == "t":
        base = base[::-1]
    n = math.prod(base)
    if fill == "special":
        vals = rng.choice(np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e38, -1e300,
                                    2.0 ** 31, 255.0, 3.5]), size=n)
    elif fill == "int":
        vals = rng.integers(-5, 6, size=n).astype(np.float64)
    elif fill == "zero":
        vals = np.zeros(n)
    else:
        vals = rng.standard_normal(n) * 3
    arr = vals.reshape(base)
    if dtype in ("complex64", "complex128"):
        arr = arr + 1j * arr[::-1].reshape(base) if arr.ndim else arr + 0.5j
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if dtype == "bfloat16":
            t = ts.asarray(arr.astype(np.float32)).astype(ts.bfloat16)
        elif dtype == "bool":
            t = ts.asarray(np.nan_to_num(arr) > 0)
        elif dtype.startswith(("int", "uint")):
            t = ts.asarray(np.nan_to_num(arr, posinf=7, neginf=-7).astype(np.int64)
                           .astype(dtype))
        else:
            t = ts.asarray(arr.astype(dtype))
    if requires_grad and ts.isdtype(t.dtype, ("real floating", "complex floating")):
        t = t.detach().requires_grad_(True)
    if layout == "s" and shape:
        t = t[::2]
    elif layout == "e" and shape:
        t = ts.broadcast_to(t, shape)
    elif layout == "t" and len(shape) >= 2:
        t = ts.permute_dims(t, tuple(reversed(range(len(shape)))))
    elif layout == "f" and shape:
        t = ts.flip(t, axis=0)
    return t


def build(spec, seed):
    import numpy as np
    import tessera as ts
    kind = spec[0]
    if kind == "T":
        return make_tensor(*spec[1:], seed=seed)
    if kind == "py":
        return spec[1]
    if kind == "obj":
        return object()
    if kind == "ellipsis":
        return Ellipsis
    if kind == "slice":
        return slice(*spec[1])
    if kind == "dtype":
        return getattr(ts, spec[1])
    if kind == "list":
        return [build(s, seed + i + 1) for i, s in enumerate(spec[1])]
    if kind == "tuple":
        return tuple(build(s, seed + i + 1) for i, s in enumerate(spec[1]))
    if kind == "np":
        return {"f64": lambda: np.ones(3), "obj": lambda: np.array([1, None], dtype=object),
                "str": lambda: np.array(["a", "b"]), "nan0d": lambda: np.float64("nan"),
                "dt64": lambda: np.array(["2020-01-01"], dtype="datetime64[D]"),
                "big": lambda: np.full((2, 3), 2 ** 62, dtype=np.int64),
                "int0d": lambda: np.int64(3), "empty": lambda: np.empty((0, 4)),
                "f16nc": lambda: np.ones((4, 6), dtype=np.float16)[:, ::2],
                "ragged": lambda: np.array([[1], [2, 3]], dtype=object),
                "struct": lambda: np.zeros(2, dtype=[("a", "i4"), ("b", "f4")])}[spec[1]]()
    raise ValueError(f"unknown spec {spec!r}")


def classify(exc: BaseException, name: str) -> "tuple[str, str]":
    msg = f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"[:400]
    if isinstance(exc, CallTimeout):
        return "bad", "hang: " + msg
    if isinstance(exc, NEVER):
        return "bad", msg
    extra: tuple = ()
    if "dlpack" in name or "buffer" in name.lower():
        extra = (BufferError, AttributeError)  # as NumPy's and torch's DLPack consumers
    if not isinstance(exc, ALLOWED + extra):
        return "bad", msg
    if LEAK.search(str(exc)):
        return "bad", "C++ text: " + msg
    return "raised", msg


def run_call(call, seed, timeout):
    name, arg_specs, kw_specs = call
    args = [build(s, seed + i) for i, s in enumerate(arg_specs)]
    kwargs = {k: build(s, seed + 100 + i) for i, (k, s) in enumerate(kw_specs)}
    fn = resolve(name)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        if fn is None:  # a Tensor method: bound on the first argument when it is a tensor
            import tessera as ts
            attr = name.split(".", 1)[1]
            if args and isinstance(args[0], ts.Tensor):
                out = getattr(args[0], attr)
                if callable(out):
                    out(*args[1:], **kwargs)
            else:
                getattr(ts.Tensor, attr)(*args, **kwargs)
        else:
            fn(*args, **kwargs)
        return "ok", ""
    except BaseException as e:  # noqa: BLE001 - every class is classified
        return classify(e, name)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def main() -> None:
    batch_path, progress_path, result_path = sys.argv[1:4]
    limit = int(os.environ.get("TESSERA_FUZZ_RLIMIT_AS", str(3 << 30)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    timeout = float(os.environ.get("TESSERA_FUZZ_CALL_TIMEOUT", "10"))
    signal.signal(signal.SIGALRM, _alarm)
    warnings.simplefilter("ignore")
    os.chdir(os.path.dirname(os.path.abspath(result_path)))  # anything written lands there
    import tessera  # noqa: F401
    import tessera.nn.functional  # noqa: F401
    with open(batch_path, "rb") as f:
        batch, seed = pickle.load(f)
    fd = os.open(progress_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    results = []
    for i, call in enumerate(batch):
        os.write(fd, f"{i}\n".encode())
        try:
            results.append(run_call(call, seed + 1000 * i, timeout))
        except BaseException as e:  # building the arguments failed: the fuzzer's own bug
            results.append(("bad", f"fuzzer: could not build {call!r}: {e!r}"))
    os.write(fd, b"gc\n")  # freeing what the batch left behind is under test too
    import gc
    gc.collect()
    os.close(fd)
    with open(result_path, "wb") as f:
        pickle.dump(results, f)


if __name__ == "__main__":
    main()
