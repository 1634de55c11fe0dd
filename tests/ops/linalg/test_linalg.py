"""ts.linalg against NumPy: batched shapes, the four LAPACK dtypes, strided inputs, and the
error paths. Factorizations with sign/phase freedom (eigh, qr, svd) are compared through
reconstructions and invariants, not raw vectors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import assert_same, randn, strided_views

LA_DTYPES = ["float32", "float64", "complex64", "complex128"]
TOLS = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def well_conditioned(rng, batch, n, dtype) -> np.ndarray:
    """Diagonally dominant: far from singular."""
    return (randn(*(batch + (n, n)), dtype=dtype, generator=rng) + 3 * n * np.eye(n)).astype(dtype)


def hpd(rng, batch, n, dtype) -> np.ndarray:
    """Hermitian positive-definite: B B^H + n I."""
    b = randn(*(batch + (n, n)), dtype=dtype, generator=rng)
    return (b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)).astype(dtype)


def close(got, want, dtype, scale=1.0):
    tol = TOLS[dtype] * max(1.0, scale)
    np.testing.assert_allclose(np.asarray(got.numpy() if isinstance(got, ts.Tensor) else got),
                               want, rtol=tol, atol=tol)


batches = st.lists(st.integers(0, 3), min_size=0, max_size=2).map(tuple)
sizes = st.integers(0, 6)
dtypes = st.sampled_from(LA_DTYPES)
seeds = st.integers(0, 2**32 - 1)


@st.composite
def matrix_case(draw, kind="general"):
    dtype, batch, n, seed = draw(dtypes), draw(batches), draw(sizes), draw(seeds)
    rng = np.random.default_rng(seed)
    a = {"general": well_conditioned, "hpd": hpd}[kind](rng, batch, n, dtype)
    return strided_views(draw, a), dtype


def ct(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


@given(matrix_case("hpd"), st.booleans())
def test_cholesky(case, upper):
    a, dtype = case
    got = ts.linalg.cholesky(ts.asarray(a), upper=upper)
    want = np.linalg.cholesky(a, upper=upper)
    assert got.dtype.name == dtype and got.shape == want.shape
    close(got, want, dtype, np.abs(a).max(initial=1) ** 0.5)


@given(matrix_case())
def test_det_slogdet(case):
    a, dtype = case
    x = ts.asarray(a)
    n = a.shape[-1]
    want_sign, want_log = np.linalg.slogdet(a)
    sign, logabs = ts.linalg.slogdet(x)
    assert sign.dtype.name == dtype and logabs.dtype.name == want_log.dtype.name
    close(sign, want_sign, dtype)
    close(logabs, want_log, dtype, max(n, 1))
    d = ts.linalg.det(x)
    want = np.linalg.det(a)
    assert d.dtype.name == dtype and d.shape == want.shape
    np.testing.assert_allclose(d.numpy(), want, rtol=TOLS[dtype] * max(n, 1) * 10)


@given(matrix_case("hpd"))
def test_eigh(case):
    a, dtype = case
    w, v = ts.linalg.eigh(ts.asarray(a))
    want = np.linalg.eigvalsh(a)
    assert w.dtype.name == want.dtype.name and v.dtype.name == dtype
    scale = np.abs(a).max(initial=1)
    close(w, want, dtype, scale)
    vn = v.numpy()
    close(vn @ (w.numpy()[..., None] * ct(vn)), a, dtype, scale)  # V diag(w) V^H == A
    close(ct(vn) @ vn, np.broadcast_to(np.eye(a.shape[-1]), a.shape), dtype)
    close(ts.linalg.eigvalsh(ts.asarray(a)), want, dtype, scale)


@given(matrix_case())
def test_inv(case):
    a, dtype = case
    got = ts.linalg.inv(ts.asarray(a))
    want = np.linalg.inv(a)
    assert got.dtype.name == dtype and got.shape == want.shape
    close(got, want, dtype)


@given(dtypes, batches, batches, sizes, st.integers(0, 3), st.booleans(), seeds)
def test_solve(dtype, ba, bb, n, k, vector, seed):
    rng = np.random.default_rng(seed)
    # Batch shapes that broadcast: bb's dims become 1 where they differ from ba's.
    bb = tuple(1 if i < len(ba) and d != ba[-1 - i] else d for i, d in enumerate(reversed(bb)))[::-1]
    a = well_conditioned(rng, ba, n, dtype)
    b = randn(*((n,) if vector else bb + (n, k)), dtype=dtype, generator=rng)
    got = ts.linalg.solve(ts.asarray(a), ts.asarray(b))
    want = np.linalg.solve(a, b)
    assert got.dtype.name == dtype and got.shape == want.shape
    close(got, want, dtype)


def test_solve_vector_rule():
    # 2024.12: x2 is a vector only when 1-D; a (2, 3) x2 is a stack of matrices... of 2 rows.
    a = np.eye(3) * 2
    assert ts.linalg.solve(ts.asarray(a), ts.asarray(np.ones(3))).shape == (3,)
    assert ts.linalg.solve(ts.asarray(np.stack([a, a])), ts.asarray(np.ones(3))).shape == (2, 3)
    with pytest.raises(ValueError, match="solve"):
        ts.linalg.solve(ts.asarray(a), ts.asarray(np.ones((2, 3))))


@given(dtypes, batches, sizes, sizes, st.sampled_from(["reduced", "complete"]), seeds, st.data())
def test_qr(dtype, batch, m, n, mode, seed, data):
    a = strided_views(data.draw, randn(*(batch + (m, n)), dtype=dtype, generator=np.random.default_rng(seed)))
    q, r = ts.linalg.qr(ts.asarray(a), mode=mode)
    wq, wr = np.linalg.qr(a, mode=mode)
    assert q.shape == wq.shape and r.shape == wr.shape and q.dtype.name == dtype
    qn, rn = q.numpy(), r.numpy()
    close(qn @ rn, a, dtype, 4)
    close(ct(qn) @ qn, np.broadcast_to(np.eye(qn.shape[-1]), qn.shape[:-2] + (qn.shape[-1],) * 2), dtype)
    np.testing.assert_array_equal(np.tril(rn, -1), 0)
    close(np.abs(np.diagonal(rn, axis1=-2, axis2=-1)), np.abs(np.diagonal(wr, axis1=-2, axis2=-1)),
          dtype, 4)


@given(dtypes, batches, sizes, sizes, st.booleans(), seeds, st.data())
def test_svd(dtype, batch, m, n, full, seed, data):
    a = strided_views(data.draw, randn(*(batch + (m, n)), dtype=dtype, generator=np.random.default_rng(seed)))
    u, s, vh = ts.linalg.svd(ts.asarray(a), full_matrices=full)
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
    assert s.dtype.name == ws.dtype.name and u.dtype.name == dtype
    close(s, ws, dtype, 4)
    un, sn, vhn = u.numpy(), s.numpy(), vh.numpy()
    k = sn.shape[-1]
    close((un[..., :, :k] * sn[..., None, :]) @ vhn[..., :k, :], a, dtype, 4)
    close(ts.linalg.svdvals(ts.asarray(a)), ws, dtype, 4)


@given(dtypes, batches, st.integers(1, 5), st.integers(1, 5),
       st.sampled_from(["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]), st.booleans(), seeds)
def test_matrix_norm(dtype, batch, m, n, ord, keepdims, seed):
    a = randn(*(batch + (m, n)), dtype=dtype, generator=np.random.default_rng(seed))
    got = ts.linalg.matrix_norm(ts.asarray(a), ord=ord, keepdims=keepdims)
    want = np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims)
    assert got.dtype.name == want.dtype.name and got.shape == want.shape
    close(got, want, dtype, 4)


@given(dtypes, st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       st.sampled_from([2, 1, 0, math.inf, -math.inf, 3, 0.5, -1]), st.booleans(), st.data())
def test_vector_norm(dtype, shape, ord, keepdims, data):
    a = randn(*shape, dtype=dtype, generator=np.random.default_rng(data.draw(seeds)))
    axis = data.draw(st.sampled_from([None, -1, 0, (0, -1)]))
    if isinstance(axis, tuple) and len(shape) < 2:
        axis = None
    got = ts.linalg.vector_norm(ts.asarray(a), axis=axis, keepdims=keepdims, ord=ord)
    want = np.linalg.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord)
    assert got.dtype.name == want.dtype.name and got.shape == want.shape
    close(got, want, dtype, 4)


@given(matrix_case(), st.integers(-3, 5))
def test_matrix_power(case, p):
    a, dtype = case
    a = a / (3 * max(a.shape[-1], 1))  # keep powers of the diagonally dominant matrix tame
    got = ts.linalg.matrix_power(ts.asarray(a), p)
    want = np.linalg.matrix_power(a, p)
    assert got.dtype.name == dtype and got.shape == want.shape
    close(got, want, dtype, np.abs(want).max(initial=1))


def test_matrix_power_int():
    a = np.array([[1, 1], [1, 0]], dtype=np.int64)
    assert_same(ts.linalg.matrix_power(ts.asarray(a), 10), np.linalg.matrix_power(a, 10))


@given(dtypes, batches, st.integers(1, 5), st.integers(1, 5), st.integers(0, 5), seeds)
def test_matrix_rank_pinv(dtype, batch, m, n, r, seed):
    rng = np.random.default_rng(seed)
    a = randn(*(batch + (m, r)), dtype=dtype, generator=rng) @ randn(*(batch + (r, n)), dtype=dtype, generator=rng)
    got = ts.linalg.matrix_rank(ts.asarray(a))
    want = np.linalg.matrix_rank(a)
    assert got.dtype == ts.int64
    np.testing.assert_array_equal(got.numpy(), want)
    b = randn(*(batch + (m, n)), dtype=dtype, generator=rng)  # full rank almost surely
    p = ts.linalg.pinv(ts.asarray(b))
    wp = np.linalg.pinv(b, rtol=None)
    assert p.dtype.name == dtype and p.shape == wp.shape
    cond = np.linalg.cond(b).max(initial=1) if b.size else 1
    close(p, wp, dtype, min(cond, 1e3) * 10)


def test_torch_aliases():
    a = np.arange(12.0).reshape(3, 4)
    assert_same(ts.linalg.vector_norm(ts.asarray(a), dim=1, keepdim=True),
                np.linalg.vector_norm(a, axis=1, keepdims=True))
    b = np.arange(6.0).reshape(3, 2)
    assert_same(ts.linalg.cross(ts.asarray(b), ts.asarray(b[::-1].copy()), dim=0),
                np.linalg.cross(b, b[::-1], axis=0))
    with pytest.raises(TypeError, match="vector_norm"):
        ts.linalg.vector_norm(ts.asarray(a), axis=0, dim=1)


def test_rank_rtol():
    a = ts.asarray(np.diag([1.0, 1e-3, 1e-9]))
    assert int(ts.linalg.matrix_rank(a)) == 3
    assert int(ts.linalg.matrix_rank(a, rtol=1e-6)) == 2
    assert int(ts.linalg.matrix_rank(a, rtol=1e-2)) == 1


@given(st.sampled_from(["float64", "complex64", "int32", "int64"]), batches, sizes, sizes,
       st.integers(-3, 3), st.data())
def test_trace_diagonal(dtype, batch, m, n, offset, data):
    a = (randn(*(batch + (m, n)), dtype="float64", generator=np.random.default_rng(data.draw(seeds))) * 10).astype(dtype)
    a = strided_views(data.draw, a)
    x = ts.asarray(a)
    assert_same(ts.linalg.diagonal(x, offset=offset), np.linalg.diagonal(a, offset=offset))
    assert_same(ts.linalg.trace(x, offset=offset), np.linalg.trace(a, offset=offset), rtol=1e-5)
    if not dtype.startswith("complex"):
        assert_same(ts.linalg.trace(x, offset=offset, dtype=ts.float64),
                    np.linalg.trace(a, offset=offset, dtype=np.float64), rtol=1e-5)


@given(st.sampled_from(["float32", "float64", "complex128", "int64"]), batches, seeds,
       st.sampled_from([-1, -2, 0]))
def test_cross_outer(dtype, batch, seed, axis):
    rng = np.random.default_rng(seed)
    shape = batch + (3,) if axis == -1 else (3,) + batch if axis == 0 else batch[:1] + (3, 2)
    if axis == 0 and not batch:
        axis = -1
    a = (randn(*shape, dtype="float64", generator=rng) * 5).astype(dtype)
    b = (randn(*shape, dtype="float64", generator=rng) * 5).astype(dtype)
    assert_same(ts.linalg.cross(ts.asarray(a), ts.asarray(b), axis=axis),
                np.linalg.cross(a, b, axis=axis), rtol=1e-5, atol=1e-5)
    u, v = a.reshape(-1), b.reshape(-1)[:4]
    assert_same(ts.linalg.outer(ts.asarray(u), ts.asarray(v)), np.linalg.outer(u, v), rtol=1e-6)


def test_cross_broadcast_and_errors():
    a = np.arange(6.0).reshape(2, 3)
    b = np.array([1.0, -2.0, 0.5])
    assert_same(ts.linalg.cross(ts.asarray(a), ts.asarray(b)), np.linalg.cross(a, b))
    with pytest.raises(ValueError, match="cross"):
        ts.linalg.cross(ts.asarray(np.ones((2, 4))), ts.asarray(np.ones((2, 4))))
    with pytest.raises(ValueError, match="outer"):
        ts.linalg.outer(ts.asarray(np.ones((2, 2))), ts.asarray(np.ones(2)))


def test_shared_functions():
    assert ts.linalg.matmul is ts.matmul
    assert ts.linalg.tensordot is ts.tensordot
    assert ts.linalg.vecdot is ts.vecdot
    assert ts.linalg.matrix_transpose is ts.matrix_transpose
    assert set(ts.linalg.__all__) >= {"cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh",
                                      "inv", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
                                      "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
                                      "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"}


def test_named_results():
    a = ts.asarray(np.eye(3) * 2)
    assert ts.linalg.slogdet(a).logabsdet.shape == ()
    assert ts.linalg.eigh(a).eigenvectors.shape == (3, 3)
    assert ts.linalg.qr(a).R.shape == (3, 3)
    assert ts.linalg.svd(a).Vh.shape == (3, 3)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_det_of_pivoting_matrices_matches_numpy(dtype):
    # Row swaps flip the sign: permutation matrices and general (pivoting) random matrices.
    rng = np.random.default_rng(7)
    perms = np.stack([np.eye(5)[p] for p in (rng.permutation(5) for _ in range(6))])
    a = rng.standard_normal((8, 6, 6))
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal((8, 6, 6))
    for m in (perms.astype(dtype), a.astype(dtype), np.swapaxes(a, -1, -2).astype(dtype)):
        got = ts.linalg.det(ts.asarray(m)).numpy()
        np.testing.assert_allclose(got, np.linalg.det(m), rtol=1e-10 if dtype in ("float64", "complex128") else 1e-4)
        sign, logabs = ts.linalg.slogdet(ts.asarray(m))
        ws, wl = np.linalg.slogdet(m)
        np.testing.assert_allclose(sign.numpy(), ws, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(logabs.numpy(), wl, rtol=1e-4, atol=1e-5)
    assert ts.linalg.det(ts.asarray([[0.0, 1.0], [1.0, 0.0]])).item() == -1.0


def test_singular_det_slogdet():
    a = ts.asarray(np.ones((2, 3, 3)))
    sign, logabs = ts.linalg.slogdet(a)
    np.testing.assert_array_equal(sign.numpy(), [0, 0])
    assert np.all(np.isneginf(logabs.numpy()))
    np.testing.assert_array_equal(ts.linalg.det(a).numpy(), [0, 0])


def test_errors():
    assert issubclass(ts.linalg.LinAlgError, ValueError)
    sing = ts.asarray(np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]))
    with pytest.raises(ts.linalg.LinAlgError, match="inv: the matrix is singular"):
        ts.linalg.inv(sing)
    with pytest.raises(ts.linalg.LinAlgError, match="solve"):
        ts.linalg.solve(sing, ts.asarray(np.ones((2, 2, 1))))
    with pytest.raises(ts.linalg.LinAlgError, match="positive-definite"):
        ts.linalg.cholesky(ts.asarray(np.array([[1.0, 2.0], [2.0, 1.0]])))
    with pytest.raises(ts.linalg.LinAlgError):
        ts.linalg.matrix_power(sing, -1)
    for f in (ts.linalg.inv, ts.linalg.det, ts.linalg.cholesky, ts.linalg.eigh, ts.linalg.slogdet):
        with pytest.raises(ValueError, match="square"):
            f(ts.asarray(np.ones((2, 3))))
        with pytest.raises(ValueError, match="at least 2 dims"):
            f(ts.asarray(np.ones(3)))
    ints = ts.asarray(np.eye(3, dtype=np.int64))
    for f in (ts.linalg.inv, ts.linalg.det, ts.linalg.cholesky, ts.linalg.eigh, ts.linalg.svd,
              ts.linalg.qr, ts.linalg.svdvals, ts.linalg.pinv, ts.linalg.matrix_rank,
              ts.linalg.matrix_norm, ts.linalg.vector_norm, ts.linalg.eigvalsh, ts.linalg.slogdet):
        with pytest.raises(TypeError, match="int64.*hint: cast"):
            f(ints)
    with pytest.raises(TypeError, match="solve"):
        ts.linalg.solve(ints, ints)
    with pytest.raises(ValueError, match="mode"):
        ts.linalg.qr(ts.asarray(np.eye(2)), mode="bogus")
    q, r = ts.linalg.qr(ts.asarray(np.eye(2)), mode="r")  # torch's mode: (empty Q, R)
    assert q.shape == (0,) and r.shape == (2, 2)
    with pytest.raises(ValueError, match="ord"):
        ts.linalg.matrix_norm(ts.asarray(np.eye(2)), ord=3)
    with pytest.raises(ValueError, match="solve: shapes"):
        ts.linalg.solve(ts.asarray(np.eye(3)), ts.asarray(np.ones((2, 1))))


@pytest.mark.parametrize("dtype", LA_DTYPES)
def test_nonfinite_inputs_do_not_crash(dtype):
    a = np.array([[np.nan, 1.0], [1.0, 2.0]], dtype=dtype)
    x = ts.asarray(a)
    with pytest.raises(ts.linalg.LinAlgError, match="SVD did not converge"):
        ts.linalg.svd(x)
    with pytest.raises(ts.linalg.LinAlgError, match="svdvals"):
        ts.linalg.svdvals(x)
    assert np.isnan(ts.linalg.det(x).numpy())  # NumPy: nan, no error
    with pytest.raises(ts.linalg.LinAlgError, match="not positive-definite"):  # as torch
        ts.linalg.cholesky(x)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_inputs_compute_in_float32(dt):
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    x = ts.asarray(a).astype(getattr(ts, dt))
    got = ts.linalg.inv(x)
    assert got.dtype == getattr(ts, dt)
    np.testing.assert_allclose(got.astype(ts.float32).numpy(), np.linalg.inv(a), rtol=1e-2)
    w = ts.linalg.eigvalsh(x)
    assert w.dtype == getattr(ts, dt)
    np.testing.assert_allclose(w.astype(ts.float32).numpy(), np.linalg.eigvalsh(a), rtol=1e-2)


def test_batched_parallel_matches_serial():
    # Many small matrices take the per-thread path; results must not depend on threads.
    a = well_conditioned(np.random.default_rng(0), (300,), 4, "float64")
    n = ts.get_num_threads()
    try:
        ts.set_num_threads(1)
        r1 = ts.linalg.inv(ts.asarray(a)).numpy()
        ts.set_num_threads(2)
        r2 = ts.linalg.inv(ts.asarray(a)).numpy()
    finally:
        ts.set_num_threads(n)
    np.testing.assert_array_equal(r1, r2)
    close(r1, np.linalg.inv(a), "float64")


def test_vector_norm_ord_0_counts_and_is_differentiable_like_torch():
    """ord=0 counts nonzero elements (NaN and inf included) as torch, and its result takes part
    in autograd (torch: a grad_fn whose gradient is zero) instead of cutting the graph."""
    import torch
    a = np.array([[0.0, 1.5, np.nan], [np.inf, 0.0, -2.0]])
    for axis, keep in ((None, False), (1, True), (0, False)):
        x = ts.asarray(a, requires_grad=True)
        got = ts.linalg.vector_norm(x, 0, axis=axis, keepdims=keep)
        want = torch.linalg.vector_norm(torch.tensor(a), 0, dim=axis, keepdim=keep)
        np.testing.assert_array_equal(got.detach().numpy(), want.numpy())
        assert got.requires_grad and got.dtype == ts.float64
        (got.sum() + (x * 0).nansum()).backward()
        assert not np.isnan(x.grad.numpy()).any()
    c = np.array([1 + 1j, 0j, complex(np.nan, 0)])
    assert float(ts.linalg.vector_norm(ts.asarray(c), 0)) == 2.0
