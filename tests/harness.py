"""The shared test harness: every test file takes its helpers from here (tests/README.md).

Inputs: ``randn`` (the one source of random arrays) and ``rng`` (the current test's NumPy
generator; tests/conftest.py reseeds it before every test and before every module's import, so a
test draws the same data whichever tests ran before it). ``tt`` makes tessera tensors,
``to_np`` reads tessera or torch tensors back.

Comparisons against NumPy or PyTorch: ``check`` / ``check_torch`` run the same lambda on both
libraries; ``assert_same`` compares values, dtypes and shapes; ``close`` values and shapes;
``close_to_largest`` values relative to the largest; ``same_result`` results of any structure;
``same_as_torch`` values or error classes; ``compare_fn`` / ``compare_grads`` /
``compare_leaf_grads`` values and gradients of functions, ``compare_module`` of a module and its
torch twin; ``double_backward_pairs`` second derivatives. Hostile inputs: ``run_probes`` runs
calls that could crash, hang or exhaust memory in a child interpreter under limits;
``checkpoint_zip`` wraps hand-written pickle bytes in a torch.save zip archive.

    check(lambda m, x, y: m.add(x, y), x_np, y_np)         # m is tessera or numpy
    check_torch(lambda m, x: m.tanh(x), x_np)              # m is tessera or torch
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tessera as ts

REPO_ROOT = Path(__file__).resolve().parent.parent  # the repository: examples/, docs/, tools/

# ---- random inputs
_generator = np.random.default_rng(0)


def reseed(seed: int = 0) -> None:
    """Restarts the generator behind ``rng`` and ``randn`` (conftest.py calls it before every
    test and before importing every test module)."""
    global _generator
    _generator = np.random.default_rng(seed)


class _CurrentGenerator:
    """``rng``: forwards to the current test's ``np.random.Generator`` (``rng.integers(...)``)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_generator, name)


rng = _CurrentGenerator()


def randn(*shape: int, dtype: Any = np.float32, scale: float = 1.0,
          generator: Optional[np.random.Generator] = None) -> np.ndarray:
    """Normal samples (standard deviation `scale`) of `shape` as a NumPy array of `dtype`
    (float32 by default, as ``torch.randn``), drawn from ``rng`` or from `generator`. Complex
    dtypes get an imaginary part drawn the same way."""
    g = _generator if generator is None else generator
    a = g.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * g.standard_normal(shape)
    return (a * scale if scale != 1.0 else a).astype(dtype)


def randn64(*shape: int, scale: float = 1.0) -> np.ndarray:
    """``randn`` in float64 (gradient checks, finite differences)."""
    return randn(*shape, dtype=np.float64, scale=scale)


# NumPy dtype names that tessera shares (bfloat16 is checked separately through ml_dtypes).
ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
NUMERIC_DTYPES = INT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES

TOL = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-6),
       "float64": (1e-12, 1e-14), "complex64": (1e-5, 1e-6), "complex128": (1e-12, 1e-14)}


def to_np(x: Any) -> Any:
    """A tessera or torch tensor as a NumPy array (bfloat16 as float32); anything else as is."""
    if isinstance(x, ts.Tensor):
        return np.asarray(x.numpy()) if x.dtype != ts.bfloat16 else x.numpy().astype(np.float32)
    if hasattr(x, "detach"):  # torch tensor
        x = x.detach().cpu().resolve_conj().resolve_neg()
        return x.float().numpy() if str(x.dtype) == "torch.bfloat16" else x.numpy()
    return x


def rounded(a: np.ndarray, dtype: str) -> np.ndarray:
    """`a` rounded to tessera's `dtype` (a name) and back to float64: the values a 16-bit
    computation and its float64 reference both see."""
    return ts.asarray(a).astype(getattr(ts, dtype)).astype(ts.float64).numpy()


def tt(a: Any, requires_grad: bool = False) -> ts.Tensor:
    """A C-contiguous tessera tensor holding a copy of `a` (a NumPy array or nested list)."""
    return ts.asarray(np.array(a, order="C"), requires_grad=requires_grad)


def assert_same(got: Any, want: Any, *, rtol: Optional[float] = None, atol: Optional[float] = None,
                check_dtype: bool = True) -> None:
    """got (tessera) equals want (NumPy/PyTorch): dtype, shape and values (NaNs equal)."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol=rtol, atol=atol, check_dtype=check_dtype)
        return
    if hasattr(want, "detach"):  # torch tensor
        want = want.detach().numpy()
    want = np.asarray(want)
    assert isinstance(got, ts.Tensor), f"expected a tessera Tensor, got {type(got)}"
    g = to_np(got)
    if check_dtype:
        assert got.dtype.name == want.dtype.name, f"dtype {got.dtype} != {want.dtype}"
    assert g.shape == want.shape, f"shape {g.shape} != {want.shape}"
    r, a = TOL.get(want.dtype.name, (0, 0))
    np.testing.assert_allclose(g, want, rtol=rtol if rtol is not None else r,
                               atol=atol if atol is not None else a, equal_nan=True)


def check(fn: Callable, *arrays: np.ndarray, **tol: Any) -> None:
    """fn(module, *inputs) on tessera and NumPy; compares the results, or that both raise."""
    try:
        want = fn(np, *arrays)
    except (TypeError, ValueError, IndexError, ZeroDivisionError, FloatingPointError) as e:
        try:
            fn(ts, *[ts.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays])
        except (TypeError, ValueError, IndexError):
            return
        raise AssertionError(f"NumPy raised {e!r} but tessera did not")
    got = fn(ts, *[ts.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays])
    assert_same(got, want, **tol)


def check_torch(fn: Callable, *arrays: np.ndarray, **tol: Any) -> None:
    """fn(module, *inputs) on tessera and PyTorch."""
    import torch
    want = fn(torch, *[torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a for a in arrays])
    got = fn(ts, *[ts.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays])
    assert_same(got, want, **tol)


def same_result(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """got (tessera) equals want (torch) in any structure: tensors (through ``assert_same``:
    dtype, shape, values), namedtuples (field names too), tuples, lists, bools/ints/floats (floats
    within rtol/atol, NaN equal to NaN), sizes."""
    import torch
    if isinstance(want, torch.Size):
        assert tuple(got) == tuple(want)
        return
    if isinstance(want, tuple) and hasattr(want, "_fields") or hasattr(want, "values") and \
            hasattr(want, "indices") and not isinstance(want, torch.Tensor):
        fields = getattr(want, "_fields", ("values", "indices"))
        for f in fields:
            same_result(getattr(got, f), getattr(want, f), rtol, atol)
        return
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"expected a sequence, got {type(got)}"
        assert len(got) == len(want), f"length {len(got)} != {len(want)}"
        for g, w in zip(got, want):
            same_result(g, w, rtol, atol)
        return
    if isinstance(want, torch.Tensor):
        want = want.detach().resolve_conj().resolve_neg()
        if want.dtype == torch.bfloat16:
            want = want.float()
            got = got.float()
        assert_same(got, want, rtol=rtol, atol=atol)
        return
    assert type(got) is type(want) or isinstance(got, type(want)), f"{type(got)} != {type(want)}"
    if isinstance(want, float):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        assert got == want


# ---- hypothesis strategies
def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int = 5):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def arrays(dtype: str, shape=None, *, elements=None, **kw):
    """Arrays of `dtype` (finite values unless `elements` says otherwise)."""
    if shape is None:
        shape = shapes(**kw)
    if elements is None:
        if dtype.startswith("float"):
            elements = st.floats(-100, 100, width=16 if dtype == "float16" else 32)
        elif dtype.startswith("complex"):
            elements = st.complex_numbers(max_magnitude=100, allow_nan=False, allow_infinity=False,
                                          width=64 if dtype == "complex64" else 128)
    return hnp.arrays(np.dtype(dtype), shape, elements=elements)


def strided_views(draw, a: np.ndarray) -> np.ndarray:
    """A transposed, negative-step or sliced view of `a` with the same values' layout varied."""
    kind = draw(st.sampled_from(["plain", "transpose", "flip", "step"]))
    if kind == "transpose" and a.ndim >= 2:
        return np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
    if kind == "flip" and a.ndim >= 1:
        return np.ascontiguousarray(a[..., ::-1])[..., ::-1]
    if kind == "step" and a.ndim >= 1:
        big = np.repeat(a, 2, axis=-1)
        return big[..., ::2]
    return a


def double_backward_pairs(ts_fn: Callable, torch_fn: Callable, raw: list) -> list:
    """(tessera, torch) pairs of the gradients of fn(*raw).sum() taken with create_graph=True,
    then of the gradients of those gradients' squared norm, for float64 inputs `raw`."""
    import torch
    xs = [ts.asarray(r, requires_grad=True) for r in raw]
    xt = [torch.tensor(r, requires_grad=True) for r in raw]
    gs = ts.autograd.grad(ts_fn(*xs).sum(), xs, create_graph=True)
    gt = torch.autograd.grad(torch_fn(*xt).sum(), xt, create_graph=True)
    pairs = list(zip(gs, gt))
    sum(((a * a).sum() for a in gs), ts.asarray(0.0)).backward()
    sum((b * b).sum() for b in gt).backward()
    return pairs + [(a.grad, b.grad) for a, b in zip(xs, xt)]


def record_applies(monkeypatch, fn_class, record=lambda args: args) -> list:
    """Wraps an autograd Function's apply (for the test's duration) so that every call first
    appends record(args) to the returned list, then runs as before."""
    calls: list = []
    apply = fn_class.apply

    def counted(*args):
        calls.append(record(args))
        return apply(*args)

    monkeypatch.setattr(fn_class, "apply", staticmethod(counted))
    return calls


def same_as_torch(f: Callable[[Any], Any], *, exact_error: bool = False) -> None:
    """f(torch) and f(ts) give the same value, or both raise: tessera's error is an instance of
    torch's class (the same class name with ``exact_error``)."""
    import torch
    out = []
    for m in (torch, ts):
        try:
            out.append(("ok", f(m)))
        except Exception as e:  # noqa: BLE001 - the class is what we compare
            out.append(("err", e))
    if out[0][0] == "err" and out[1][0] == "err":
        want, got = out[0][1], out[1][1]
        if exact_error:
            assert type(got).__name__ == type(want).__name__, (want, got)
        else:
            assert isinstance(got, type(want)), (want, got)
    else:
        assert out[1] == out[0]


# ---- modules and functions against their torch twins
def close(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """a (tessera or NumPy) and b (torch or NumPy) have the same shape and close values."""
    an = np.asarray(a.numpy() if isinstance(a, ts.Tensor) else a)
    bn = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert an.shape == bn.shape, (an.shape, bn.shape)
    np.testing.assert_allclose(an, bn, rtol=rtol, atol=atol)


def close_to_largest(a: ts.Tensor, b: Any, tol: float) -> None:
    """a (tessera) and b (torch) in float64 agree within `tol` relative to each element and to
    b's largest magnitude (at least 1): for results summed in another order than PyTorch's."""
    an = a.astype(ts.float64).numpy()
    bn = b.detach().double().numpy()
    assert an.shape == bn.shape, (an.shape, bn.shape)
    big = max(float(np.max(np.abs(bn))) if bn.size else 0.0, 1.0)
    np.testing.assert_allclose(an, bn, rtol=tol, atol=tol * big)


def compare_grads(fn_ts: Callable, fn_torch: Callable, arrays: list, rtol: Optional[float] = None,
                  dtype: str = "float64", transpose: bool = False,
                  generator: Optional[np.random.Generator] = None) -> None:
    """fn on the same inputs (cast to at least `dtype`; transposed layouts with `transpose`) in
    tessera and torch: compares every output (a tensor or a tuple of them), then backpropagates
    the same random cotangents (complex ones for complex outputs, drawn from `generator` or
    ``rng``) and compares each input's gradient, dtype included. Tolerance: `rtol` (also as
    atol), default 1e-8 in float64 and 2e-3 otherwise."""
    import torch
    g = _generator if generator is None else generator
    arrs = [np.asarray(a).astype(np.result_type(np.asarray(a).dtype, dtype)) for a in arrays]
    if transpose:
        arrs = [np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2) if a.ndim >= 2 else a
                for a in arrs]
    xs = [ts.asarray(a.copy(), requires_grad=True) for a in arrs]
    ys = [torch.tensor(a.copy(), requires_grad=True) for a in arrs]
    ot, oy = fn_ts(*xs), fn_torch(*ys)
    single = isinstance(oy, torch.Tensor)
    ot, oy = ([ot], [oy]) if single else (list(ot), list(oy))
    r = rtol or (1e-8 if dtype == "float64" else 2e-3)
    lt, ly = 0, 0
    for a, b in zip(ot, oy):
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=r, atol=r)
        cot = g.standard_normal(tuple(b.shape))
        if b.is_complex():
            cot = cot + 1j * g.standard_normal(tuple(b.shape))
            lt = lt + ts.sum(ts.real(a * ts.asarray(cot.astype(to_np(b).dtype))))
            ly = ly + (b * torch.tensor(cot.astype(to_np(b).dtype))).real.sum()
        else:
            c = cot.astype(to_np(b).dtype)
            lt = lt + ts.sum(a * ts.asarray(c))
            ly = ly + (b * torch.tensor(c)).sum()
    lt.backward()
    ly.backward()
    for x, y in zip(xs, ys):
        assert x.grad is not None
        assert x.grad.dtype.name == str(y.grad.dtype).replace("torch.", "")
        np.testing.assert_allclose(x.grad.numpy(), to_np(y.grad), rtol=r, atol=r)


def compare_leaf_grads(fn: Callable, arrays: list, dtype: str = "float64",
                       generator: Optional[np.random.Generator] = None) -> None:
    """fn(lib, lib_dtype, *leaves) on tessera and torch, the leaves made from `arrays` in
    `dtype`: compares the results (and whether they require grad), then backpropagates the same
    random cotangent (from `generator` or ``rng``) and compares every leaf's gradient (a leaf
    torch leaves without one must have none or zeros). Tolerance 1e-12 in float64, else 1e-5."""
    import torch
    g = _generator if generator is None else generator
    arrs = [np.asarray(a, dtype=dtype) for a in arrays]
    xs = [ts.asarray(a.copy(), requires_grad=True) for a in arrs]
    ys = [torch.tensor(a.copy(), requires_grad=True) for a in arrs]
    ot, oy = fn(ts, getattr(ts, dtype), *xs), fn(torch, getattr(torch, dtype), *ys)
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(to_np(ot), to_np(oy), rtol=tol, atol=tol)
    assert ot.requires_grad == oy.requires_grad
    cot = g.standard_normal(tuple(oy.shape)).astype(dtype)
    ts.sum(ot * ts.asarray(cot)).backward()
    (oy * torch.tensor(cot)).sum().backward()
    for x, y in zip(xs, ys):
        if y.grad is None:
            assert x.grad is None or np.allclose(x.grad.numpy(), 0)
        else:
            assert x.grad is not None and x.grad.dtype == x.dtype
            np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=tol, atol=tol)


def compare_module(t_mod: Any, torch_mod: Any, x: np.ndarray, *, rtol: float = 1e-5,
                   atol: float = 1e-5, grad_input: bool = True, train: bool = True) -> None:
    """Loads torch_mod's weights into t_mod, then compares output, input gradient and
    every parameter gradient (for a random output cotangent)."""
    import torch
    t_mod.load_state_dict(torch_mod.state_dict())
    t_mod.train(train)
    torch_mod.train(train)
    float_in = np.issubdtype(x.dtype, np.floating)
    xt = torch.tensor(x, requires_grad=grad_input and float_in)
    xs = tt(x, requires_grad=grad_input and float_in)
    yt = torch_mod(xt)
    ys = t_mod(xs)
    close(ys, yt, rtol, atol)
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(x.dtype if float_in else np.float32)
    yt.backward(torch.tensor(g))
    ys.backward(tt(g))
    if grad_input and float_in:
        close(xs.grad, xt.grad, rtol, atol)
    tparams = dict(torch_mod.named_parameters())
    for name, p in t_mod.named_parameters():
        if tparams[name].grad is None:
            assert p.grad is None, name
        else:
            close(p.grad, tparams[name].grad, rtol, atol)
    for name, b in t_mod.named_buffers():
        close(b, dict(torch_mod.named_buffers())[name], rtol, atol)


def compare_fn(fn_ts: Callable, fn_torch: Callable, *arrays: np.ndarray,
               rtol: float = 1e-5, atol: float = 1e-6, grad: Optional[list] = None) -> None:
    """Runs fn on tessera and torch inputs; compares outputs and gradients of the inputs
    whose indices are in `grad` (default: all floating inputs)."""
    import torch
    if grad is None:
        grad = [i for i, a in enumerate(arrays) if np.issubdtype(a.dtype, np.floating)]
    ts_in = [tt(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
    th_in = [torch.tensor(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
    ys, yt = fn_ts(*ts_in), fn_torch(*th_in)
    close(ys, yt, rtol, atol)
    if grad:
        g = np.random.default_rng(2).standard_normal(tuple(yt.shape)).astype(yt.detach().numpy().dtype)
        yt.backward(torch.tensor(g))
        ys.backward(tt(g))
        for i in grad:
            close(ts_in[i].grad, th_in[i].grad, rtol, atol)


# ---- hostile inputs (tests/hardening, tests/serialization)
def checkpoint_zip(pkl: bytes) -> bytes:
    """`pkl` as the data.pkl of a checkpoint zip (torch.save's layout, no storages)."""
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pkl)
        zf.writestr("archive/byteorder", "little")
        zf.writestr("archive/version", "3\n")
    return buf.getvalue()


# probes that could crash: in a child interpreter
def run_probes(body: str, timeout: float = 60) -> dict:
    """Runs `body` in a fresh interpreter under a 4 GiB address-space limit, importing the
    tessera under test (installed or the source tree's, whichever this process imported);
    `body` calls probe(name, fn) for each case (``ts``, ``F`` = tessera.nn.functional, ``np``
    and ``io`` are imported). Returns {name: ["ok", repr] or [exception class, message]};
    fails the test on a crash (a signal), a hang or a non-zero exit."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    import pytest
    code = textwrap.dedent("""
        import io, json, resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        import numpy as np
        import tessera as ts
        import tessera.nn.functional as F
        out = {}
        def probe(name, fn):
            try:
                out[name] = ["ok", repr(fn())[:200]]
            except Exception as e:
                out[name] = [type(e).__name__, str(e)]
        """) + textwrap.dedent(body) + "\nprint(json.dumps(out))\n"
    tessera_dir = os.path.dirname(os.path.dirname(ts.__file__))
    env = dict(os.environ, PYTHONPATH=tessera_dir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd=str(REPO_ROOT))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the probes timed out after {timeout} s (a hang)")
    assert r.returncode == 0, f"exit {r.returncode} (a crash?)\n{r.stdout}\n{r.stderr[-3000:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
