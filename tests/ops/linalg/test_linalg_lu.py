"""The LU family, triangular solves and cond as C++ bindings (csrc/python/bind_linalg_lu.cpp):
linalg.lu_factor / lu_factor_ex / lu / lu_solve / solve_triangular / cond and the legacy
ts.lu, ts.lu_solve, ts.lu_unpack, ts.triangular_solve, differential against torch (batched,
empty, real and complex, non-contiguous inputs), gradients against torch and finite differences,
singular matrices and error paths."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import assert_same, compare_grads, randn, strided_views, to_np

DTYPES = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-4, "float64": 1e-10, "complex64": 2e-4, "complex128": 1e-10}


def well_conditioned(batch, n, dtype, k=None):
    """(..., n, k or n) matrices with a dominant diagonal (square part), so pivots and solves are
    stable in float32."""
    k = n if k is None else k
    a = randn(*batch, n, k, dtype=dtype)
    m = min(n, k)
    a[..., range(m), range(m)] += 4 * (1 if np.dtype(dtype).kind == "f" else 1 + 1j)
    return a


def pair(a):
    """(tessera, torch) tensors of the array a (its layout kept)."""
    return ts.asarray(a), torch.from_numpy(np.array(a))


def close(got, want, dtype):
    tol = TOL[dtype]
    if hasattr(want, "detach"):
        want = want.detach().resolve_conj().numpy()
    np.testing.assert_allclose(to_np(got), want, rtol=tol, atol=tol)


@st.composite
def matrices(draw, square=True):
    dtype = draw(st.sampled_from(DTYPES))
    batch = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    n = draw(st.integers(0, 5))
    k = n if square else draw(st.integers(0, 5))
    a = well_conditioned(batch, n, dtype, k)
    return dtype, strided_views(draw, a)


# ----------------------------------------------------------------------------- values vs torch
@settings(max_examples=60, deadline=None)
@given(matrices(square=False))
def test_lu_factor_and_lu_match_torch(case):
    dtype, a = case
    sa, ta = pair(a)
    lu, piv = ts.linalg.lu_factor_ex(sa)[:2]
    want = torch.linalg.lu_factor_ex(ta)
    close(lu, want.LU, dtype)
    assert piv.dtype == ts.int32 and np.array_equal(to_np(piv), want.pivots.numpy())
    assert np.array_equal(to_np(ts.linalg.lu_factor_ex(sa).info), want.info.numpy())
    for got, exp in zip(ts.linalg.lu(sa), torch.linalg.lu(ta)):
        close(got, exp, dtype)
    for got, exp in zip(ts.lu_unpack(lu, piv), torch.lu_unpack(want.LU, want.pivots)):
        close(got, exp, dtype)


@settings(max_examples=60, deadline=None)
@given(matrices(), st.integers(0, 3), st.booleans(), st.booleans())
def test_lu_solve_matches_torch(case, k, left, adjoint):
    dtype, a = case
    n = a.shape[-1]
    b = randn(*a.shape[:-2], *((n, k) if left else (k, n)), dtype=dtype)
    sa, ta = pair(a)
    sb, tb = pair(b)
    got = ts.linalg.lu_solve(*ts.linalg.lu_factor(sa), sb, left=left, adjoint=adjoint)
    want = torch.linalg.lu_solve(*torch.linalg.lu_factor(ta), tb, left=left, adjoint=adjoint)
    assert got.dtype.name == str(want.dtype)[6:]
    close(got, want, dtype)


@settings(max_examples=60, deadline=None)
@given(matrices(), st.integers(0, 3), st.booleans(), st.booleans(), st.booleans())
def test_solve_triangular_matches_torch(case, k, upper, left, unit):
    dtype, a = case
    n = a.shape[-1]
    b = randn(*a.shape[:-2], *((n, k) if left else (k, n)), dtype=dtype)
    sa, ta = pair(a)
    sb, tb = pair(b)
    kw = dict(upper=upper, left=left, unitriangular=unit)
    close(ts.linalg.solve_triangular(sa, sb, **kw), torch.linalg.solve_triangular(ta, tb, **kw),
          dtype)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cond_every_p(p, dtype):
    a = well_conditioned((2,), 4, dtype)
    sa, ta = pair(a)
    got, want = ts.linalg.cond(sa, p), torch.linalg.cond(ta, p)
    assert got.dtype.name == str(want.dtype)[6:]
    np.testing.assert_allclose(to_np(got), want.numpy(), rtol=1e-4)


def test_broadcast_batches():
    a, b = well_conditioned((3, 1), 3, "float64"), randn(4, 3, 2, dtype=np.float64)
    for f in (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False),
              lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b)):
        assert_same(f(ts, *map(ts.asarray, (a, b))), f(torch, *map(torch.tensor, (a, b))),
                    rtol=1e-10, atol=1e-12)


def test_legacy_forms():
    a, b = well_conditioned((2,), 3, "float64"), randn(2, 3, 2, dtype=np.float64)
    sa, ta = pair(np.triu(a))
    sb, tb = pair(b)
    for kw in ({}, {"upper": False}, {"transpose": True}, {"unitriangular": True}):
        got, want = ts.triangular_solve(sb, sa, **kw), torch.triangular_solve(tb, ta, **kw)
        assert type(got).__name__ == "triangular_solve"
        assert_same(got.solution, want.solution, rtol=1e-10, atol=1e-12)
        assert_same(got.cloned_coefficient, want.cloned_coefficient)
    assert_same(sb.triangular_solve(sa).solution, tb.triangular_solve(ta).solution, rtol=1e-10)
    assert_same(ts.triangular_solve(b=sb, A=sa).solution, tb.triangular_solve(ta).solution,
                rtol=1e-10)
    sa, ta = pair(a)
    assert_same(tuple(sa.lu()), tuple(ta.lu()))
    assert_same(tuple(ts.lu(sa, get_infos=True)), tuple(torch.lu(ta, get_infos=True)))
    lu, piv = ts.lu(sa)
    assert_same(sb.lu_solve(lu, piv), tb.lu_solve(*ta.lu()), rtol=1e-10)
    assert_same(ts.lu_solve(sb, lu, piv), torch.lu_solve(tb, *ta.lu()), rtol=1e-10)
    # every spelling is the one binding (Note [One function, two spellings])
    assert ts.Tensor.lu is ts.lu and ts.Tensor.lu_solve is ts.lu_solve
    assert ts.Tensor.triangular_solve is ts.triangular_solve


def test_keyword_aliases_and_out():
    a, b = well_conditioned((), 3, "float64"), randn(3, 2, dtype=np.float64)
    sa, sb = ts.asarray(a), ts.asarray(b)
    x = ts.linalg.solve_triangular(sa, sb, upper=True)
    for kw in ({"input": sa, "B": sb}, {"A": sa, "b": sb}, {"A": sa, "other": sb}):
        assert_same(ts.linalg.solve_triangular(upper=True, **kw), x.numpy())
    out = ts.empty((3, 2), dtype=ts.float64)
    assert ts.linalg.solve_triangular(sa, sb, upper=True, out=out) is out
    assert_same(out, x.numpy())
    assert_same(tuple(ts.linalg.lu_factor(input=sa)), tuple(ts.linalg.lu_factor(sa)))
    outs = (ts.empty((3, 3), dtype=ts.float64), ts.empty((3,), dtype=ts.int32))
    r = ts.linalg.lu_factor(sa, out=outs)
    assert r.LU is outs[0] and r.pivots is outs[1]
    assert_same(ts.linalg.cond(input=sa, p="fro"), ts.linalg.cond(sa, "fro").numpy())


def test_signatures_are_cpp():
    for fn, params in ((ts.linalg.solve_triangular, ["A", "B", "upper", "left", "unitriangular"]),
                       (ts.linalg.lu_factor_ex, ["A", "pivot", "check_errors"]),
                       (ts.linalg.lu_solve, ["LU", "pivots", "B", "left", "adjoint"]),
                       (ts.lu_unpack, ["LU_data", "LU_pivots", "unpack_data", "unpack_pivots"]),
                       (ts.lu, ["A", "pivot", "get_infos"]), (ts.linalg.cond, ["A", "p"])):
        assert not inspect.isfunction(fn)  # a binding, not Python
        sig = inspect.signature(fn)
        assert list(sig.parameters)[:len(params)] == params
        assert fn.__doc__
    assert inspect.signature(ts.linalg.solve_triangular).parameters["upper"].kind \
        == inspect.Parameter.KEYWORD_ONLY


def test_empty():
    for shape in [(0, 0), (2, 0, 0), (0, 3, 3), (3, 0), (0, 2)]:
        sz, tz = pair(np.zeros(shape))
        assert_same(tuple(ts.linalg.lu_factor_ex(sz)), tuple(torch.linalg.lu_factor_ex(tz)))
        assert_same(tuple(ts.linalg.lu(sz)), tuple(torch.linalg.lu(tz)))
    sa, ta = pair(np.zeros((0, 0)))
    sb, tb = pair(np.zeros((0, 2)))
    assert_same(ts.linalg.solve_triangular(sa, sb, upper=True),
                torch.linalg.solve_triangular(ta, tb, upper=True))
    assert_same(ts.linalg.lu_solve(*ts.linalg.lu_factor(sa), sb),
                torch.linalg.lu_solve(*torch.linalg.lu_factor(ta), tb))
    for p in (None, 1, "nuc"):
        assert_same(ts.linalg.cond(ts.zeros((2, 0, 0), dtype=ts.float64), p),
                    torch.linalg.cond(torch.zeros((2, 0, 0), dtype=torch.float64), p))


# ----------------------------------------------------------------------------- singular inputs
def test_singular_infos_and_errors():
    z = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    sz, tz = pair(z)
    r, w = ts.linalg.lu_factor_ex(sz), torch.linalg.lu_factor_ex(tz)
    assert_same(tuple(r), tuple(w))
    for f in (lambda m: m.linalg.lu_factor(sz if m is ts else tz),
              lambda m: m.linalg.lu_factor_ex(sz if m is ts else tz, check_errors=True)):
        with pytest.raises(ts.linalg.LinAlgError, match=r"\(Batch element 0\): U\[2,2\] is zero"):
            f(ts)
        with pytest.raises(RuntimeError):
            f(torch)
    with pytest.raises(RuntimeError, match=r"linalg.lu_factor: U\[1,1\] is zero"):
        ts.linalg.lu_factor(ts.zeros((2, 2)))
    # torch.lu never raises; P L U reproduces singular matrices too
    assert_same(tuple(ts.lu(sz, get_infos=True)), tuple(torch.lu(tz, get_infos=True)))
    P, L, U = ts.linalg.lu(sz)
    np.testing.assert_allclose(to_np(P @ L @ U), z, atol=1e-12)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_zero_diagonal_gives_inf_nan(upper, left):
    a = np.triu(np.ones((3, 3))) if upper else np.tril(np.ones((3, 3)))
    a[1, 1] = 0
    b = np.ones((3, 2)) if left else np.ones((2, 3))
    got = ts.linalg.solve_triangular(ts.asarray(a), ts.asarray(b), upper=upper, left=left)
    want = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(b), upper=upper, left=left)
    assert_same(got, want)


@pytest.mark.parametrize("p", ["fro", "nuc", math.inf, 1, None, 2])
def test_cond_singular(p):
    sing = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[2.0, 0.0], [0, 1]]])
    got = to_np(ts.linalg.cond(ts.asarray(sing), p))
    want = torch.linalg.cond(torch.tensor(sing), p).numpy()
    big = lambda v: np.where(np.abs(v) > 1e15, np.inf, v)  # noqa: E731 (SVD rounding)
    np.testing.assert_allclose(big(got), big(want), equal_nan=True)


# ----------------------------------------------------------------------------- gradients
GRAD_CASES = {
    "lu_factor": (lambda m, a, b: m.linalg.lu_factor(a)[0], (3, 4, 4)),
    "lu_factor_wide": (lambda m, a, b: m.linalg.lu_factor(a)[0], (2, 3, 5)),
    "lu_factor_tall": (lambda m, a, b: m.linalg.lu_factor(a)[0], (2, 5, 3)),
    "lu_PLU": (lambda m, a, b: m.linalg.lu(a)[1:], (2, 4, 4)),
    "lu_L_only": (lambda m, a, b: m.linalg.lu(a)[1], (4, 4)),
    "lu_wide": (lambda m, a, b: m.linalg.lu(a)[1:], (3, 5)),
    "lu_tall": (lambda m, a, b: m.linalg.lu(a)[1:], (5, 3)),
    "lu_tall_U_only": (lambda m, a, b: m.linalg.lu(a)[2], (5, 3)),
    "lu_unpack": (lambda m, a, b: m.lu_unpack(*m.linalg.lu_factor(a))[1:], (2, 4, 3)),
    "lu_solve": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b), (2, 4, 4)),
    "lu_solve_adjoint": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b,
                                                           adjoint=True), (2, 4, 4)),
    "lu_solve_right": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b.mT,
                                                         left=False), (2, 4, 4)),
    "lu_solve_right_adjoint": (lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b.mT,
                                                                 left=False, adjoint=True),
                               (2, 4, 4)),
    "solve_triangular": (lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True), (2, 4, 4)),
    "solve_triangular_right_unit": (lambda m, a, b: m.linalg.solve_triangular(
        a, b.mT, upper=False, left=False, unitriangular=True), (2, 4, 4)),
    "triangular_solve": (lambda m, a, b: m.triangular_solve(b, a, transpose=True)[0], (2, 4, 4)),
    "cond_2": (lambda m, a, b: m.linalg.cond(a), (2, 4, 4)),
    "cond_-2": (lambda m, a, b: m.linalg.cond(a, -2), (2, 4, 4)),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_gradients_match_torch(name, dtype):
    fn, shape = GRAD_CASES[name]
    if dtype == "complex128" and name.startswith("cond"):
        pytest.skip("torch's cond is real-valued; its complex gradient is checked in float64")
    a = well_conditioned(shape[:-2], shape[-2], dtype, shape[-1])
    if "solve" not in name:  # functions of A alone
        compare_grads(lambda x: fn(ts, x, None), lambda x: fn(torch, x, None), [a], rtol=1e-8,
                      dtype=dtype)
        return
    b = randn(*shape[:-2], shape[-2], 2, dtype=dtype)
    compare_grads(lambda x, y: fn(ts, x, y), lambda x, y: fn(torch, x, y), [a, b], rtol=1e-8,
                  dtype=dtype)


@pytest.mark.parametrize("name", ["lu_factor", "lu_factor_wide", "lu_tall", "lu_solve",
                                  "lu_solve_right_adjoint", "solve_triangular_right_unit",
                                  "cond_1", "cond_fro", "cond_nuc", "cond_inf"])
def test_gradcheck_finite_differences(name):
    # (torch's own backward of cond with p != +-2 fails: its inv_ex output is modified in
    # place, so those are checked against finite differences only)
    fn, shape = GRAD_CASES.get(name, (None, (2, 3, 3)))
    if fn is None:
        p = {"cond_1": 1, "cond_fro": "fro", "cond_nuc": "nuc", "cond_inf": math.inf}[name]
        fn = lambda m, a, b: m.linalg.cond(a, p)  # noqa: E731
    a = ts.asarray(well_conditioned(shape[:-2], shape[-2], "float64", shape[-1]),
                   requires_grad=True)
    b = ts.asarray(randn(*shape[:-2], shape[-2], 2, dtype=np.float64), requires_grad=True)

    def f(x, y):
        r = fn(ts, x, y)
        return tuple(r) if isinstance(r, (tuple, list)) else r
    assert ts.testing.gradcheck(f, [a, b] if "solve" in name else [a, b.detach()])


def test_double_backward():
    a = ts.asarray(well_conditioned((), 3, "float64"), requires_grad=True)
    b = ts.asarray(randn(3, 2, dtype=np.float64), requires_grad=True)
    assert ts.testing.gradgradcheck(
        lambda x, y: ts.linalg.lu_solve(*ts.linalg.lu_factor(x), y), [a, b])
    assert ts.testing.gradgradcheck(
        lambda x, y: ts.linalg.solve_triangular(x, y, upper=True), [a, b])
    wide = ts.asarray(randn(2, 3, 5, dtype=np.float64), requires_grad=True)
    assert ts.testing.gradgradcheck(lambda x: ts.linalg.lu_factor(x).LU, [wide])
    assert ts.testing.gradgradcheck(lambda x: tuple(ts.linalg.lu(x)[1:]), [a])


def test_grad_fn_names():
    a = ts.asarray(well_conditioned((), 3, "float64"), requires_grad=True)
    b = ts.asarray(randn(3, 1, dtype=np.float64), requires_grad=True)
    assert ts.linalg.lu_factor(a).LU.grad_fn.name().startswith("LinalgLuFactorEx")
    assert ts.linalg.lu(a).L.grad_fn.name().startswith("LinalgLu")
    assert ts.linalg.solve_triangular(a, b, upper=True).grad_fn.name().startswith(
        "LinalgSolveTriangular")
    assert ts.linalg.lu_factor(a).pivots.grad_fn is None


# ----------------------------------------------------------------------------- errors
ERRORS = [
    (lambda m: m.linalg.lu_factor(m.zeros(3)), RuntimeError, "at least 2 dimensions"),
    (lambda m: m.linalg.lu_factor(m.eye(2), pivot=False), RuntimeError,
     "LU without pivoting is not implemented"),
    (lambda m: m.linalg.lu_factor(m.eye(2), pivot="yes"), TypeError, "pivot"),
    (lambda m: m.linalg.lu_factor(m.ones((2, 2), dtype=m.int64)), NotImplementedError,
     "int64|Long"),
    (lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(2)), m.ones((3, 1))), RuntimeError,
     r"Incompatible shapes of A and B for the equation AX = B \(2x2 and 3x1\)"),
    (lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(2)), m.ones(2)), RuntimeError,
     "B must have at least 2 dimensions"),
    (lambda m: m.linalg.solve_triangular(m.eye(2), m.ones((3, 1)), upper=True), RuntimeError,
     "Incompatible shapes"),
    (lambda m: m.linalg.solve_triangular(m.ones((2, 3)), m.ones((2, 1)), upper=True), RuntimeError,
     "square matrices, but they are 2 by 3"),
    (lambda m: m.linalg.solve_triangular(m.eye(2), m.ones((2, 1))), TypeError, "upper"),
    (lambda m: m.linalg.solve_triangular(m.eye(2), [[1.0], [2.0]], upper=True), TypeError, ""),
    (lambda m: m.linalg.cond(m.ones((2, 3)), 1), RuntimeError,
     r"linalg.cond\(ord=1\): A must be batches of square matrices"),
    (lambda m: m.linalg.cond(m.ones((2, 2)), 3), RuntimeError, "invalid norm type"),
    (lambda m: m.linalg.cond(m.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda m: m.lu_unpack(m.eye(2), m.tensor([3, 2], dtype=m.int32)), RuntimeError,
     "between 1 and"),
    (lambda m: m.lu(m.eye(2), "abc"), TypeError, "pivot"),
]


def test_bad_pivots_and_outs_raise():
    """Pivots out of range would make getrs swap rows out of bounds: they raise instead."""
    a, b = ts.eye(3, dtype=ts.float64), ts.ones((3, 1), dtype=ts.float64)
    for piv in ([0, 2, 3], [1, 2, 4], [-100, 2 ** 30, 0]):
        with pytest.raises(RuntimeError, match="pivots must be between 1 and 3"):
            ts.linalg.lu_solve(a, ts.asarray(piv, dtype=ts.int32), b)
    with pytest.raises(TypeError, match="out"):
        ts.linalg.lu_factor(a, out=[1, 2])
    outs = [ts.empty((3, 3), dtype=ts.float64), ts.empty((3,), dtype=ts.int32)]
    assert ts.linalg.lu_factor(a, out=outs).LU is outs[0]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch_class(case):
    f, cls, msg = ERRORS[case]
    with pytest.raises(cls):
        f(torch)
    with pytest.raises(cls, match=msg) as info:
        f(ts)
    if cls is RuntimeError:  # tessera's message names the op
        assert "linalg." in str(info.value) or "lu_unpack" in str(info.value)


def test_integer_lu_raises_as_torch():
    """The Python version factored integer matrices in their own dtype (truncating the
    multipliers); torch raises NotImplementedError, and so does tessera now."""
    with pytest.raises(NotImplementedError, match="lu_factor"):
        ts.linalg.lu_factor(ts.asarray([[4, 3], [6, 3]]))
    with pytest.raises(NotImplementedError):
        ts.asarray([[4, 3], [6, 3]]).lu()
