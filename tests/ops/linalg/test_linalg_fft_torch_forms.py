"""Differential tests of ts.linalg / ts.fft against torch: torch's call forms (A=, input=,
positional n/dim/norm/ord, UPLO=, left=, driver=, atol=/rtol=/hermitian=, ...), torch's results
for singular / empty / batched-with-failures inputs, and fft gradients. The array API forms of
the same functions must keep their standard meaning (checked where the two could be confused)."""
import inspect
import math

import numpy as np
import pytest

import tessera as ts
from harness import to_np

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1234)


def T(a, **kw):
    return torch.tensor(np.asarray(a), **kw)


def S(a, **kw):
    return ts.asarray(np.asarray(a), **kw)


def close(a, b, rtol=1e-7, atol=1e-9):
    a, b = to_np(a), to_np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True)


def same_dtype(t, s):
    assert str(t.dtype).rsplit(".", 1)[-1] == str(s.dtype).rsplit(".", 1)[-1] \
        .replace("dtype('", "").replace("')", ""), (t.dtype, s.dtype)


# ----------------------------------------------------------------------------- fft gradients
FFT_GRAD_CASES = [
    ("fftn", dict(s=(3, 4))), ("fftn", dict(s=(2, 6))), ("fftn", dict(dim=(0, 2))),
    ("fftn", dict(s=(3, 2), dim=(0, 1))), ("fftn", dict(s=(5,))),
    ("ifftn", dict(s=(3, 4))), ("ifftn", dict(s=(2, 6), norm="ortho")),
    ("ifftn", dict(dim=(0, 2))), ("ifftn", dict(s=(3, 2), dim=(0, 1))),
    ("fft2", dict(s=(3, 4))), ("fft2", dict(s=(5, 2), norm="forward")),
    ("fft2", dict(dim=(0, 2))), ("fft2", dict(s=(4, 3), dim=(0, 1))),
    ("ifft2", dict(s=(3, 4))), ("ifft2", dict(dim=(0, 2))), ("ifft2", dict(s=(1, 5), dim=(2, 0))),
    ("rfftn", dict(s=(3, 4))), ("irfftn", dict(s=(3, 4))),
]


@pytest.mark.parametrize("name,kw", FFT_GRAD_CASES)
@pytest.mark.parametrize("cplx", [False, True])
def test_fft_grad_matches_torch(name, kw, cplx):
    if cplx and name.startswith("r"):
        pytest.skip("real-input transform")
    x = RNG.standard_normal((2, 3, 4))
    if cplx:
        x = x + 1j * RNG.standard_normal((2, 3, 4))
    w = RNG.standard_normal((6, 6, 6))
    t = T(x).requires_grad_(True)
    out_t = getattr(torch.fft, name)(t, **kw)
    wt = T(w[tuple(slice(0, k) for k in out_t.shape)])
    ((out_t.real if out_t.is_complex() else out_t) * wt).sum().backward()
    s = S(x)
    s.requires_grad_(True)
    out_s = getattr(ts.fft, name)(s, **kw)
    ws = S(w[tuple(slice(0, k) for k in out_s.shape)])
    re = ts.real(out_s) if ts.isdtype(out_s.dtype, "complex floating") else out_s
    (re * ws).sum().backward()
    close(out_t, out_s)
    close(t.grad, s.grad)


def test_fftn_s_only_grad_regression():
    x = np.arange(24.).reshape(2, 3, 4)
    t = T(x).requires_grad_(True)
    torch.fft.fftn(t, s=(3, 4)).real.sum().backward()
    s = S(x)
    s.requires_grad_(True)
    ts.real(ts.fft.fftn(s, s=(3, 4))).sum().backward()
    close(t.grad, s.grad)


# ----------------------------------------------------------------------------- fft call forms
def _x(shape=(4, 6), cplx=False):
    a = RNG.standard_normal(shape)
    return a + 1j * RNG.standard_normal(shape) if cplx else a


FFT_FORMS = [
    ("fft", lambda F, x: F.fft(x, 8, 0, "ortho")),
    ("fft", lambda F, x: F.fft(x, 3)),
    ("fft", lambda F, x: F.fft(x, None, 0)),
    ("fft", lambda F, x: F.fft(input=x, n=5, dim=0)),
    ("ifft", lambda F, x: F.ifft(x, 7, -2, "forward")),
    ("rfft", lambda F, x: F.rfft(x, dim=1)),
    ("rfft", lambda F, x: F.rfft(x, 5, 0)),
    ("irfft", lambda F, x: F.irfft(x, 6, 1, "ortho")),
    ("hfft", lambda F, x: F.hfft(x, 4, 0)),
    ("ihfft", lambda F, x: F.ihfft(x, None, 1, "ortho")),
    ("fftn", lambda F, x: F.fftn(x, (3, 6), (0, 1), "ortho")),
    ("fftn", lambda F, x: F.fftn(x, (3, 5))),
    ("ifftn", lambda F, x: F.ifftn(input=x, s=(2, 2), dim=(1, 0))),
    ("rfftn", lambda F, x: F.rfftn(x, None, (0,), "forward")),
    ("irfftn", lambda F, x: F.irfftn(x, (4, 4), (0, 1))),
    ("fftshift", lambda F, x: F.fftshift(x, 0)),
    ("fftshift", lambda F, x: F.fftshift(x, dim=(0, 1))),
    ("fftshift", lambda F, x: F.fftshift(input=x, dim=-1)),
    ("ifftshift", lambda F, x: F.ifftshift(x, (1,))),
]


@pytest.mark.parametrize("i", range(len(FFT_FORMS)))
def test_fft_torch_call_forms(i):
    _, call = FFT_FORMS[i]
    x = _x()
    close(call(torch.fft, T(x)), call(ts.fft, S(x)))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "fftn", "rfftn", "hfft",
                                  "irfft"])
def test_fft_promotes_integer_input(dtype, name):
    a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    rt = getattr(torch.fft, name)(T(a))
    rs = getattr(ts.fft, name)(S(a))
    same_dtype(rt, rs)
    close(rt, rs, rtol=1e-5, atol=1e-5)


def test_fft_promotion_follows_default_dtype():
    torch.set_default_dtype(torch.float64)
    ts.set_default_dtype(ts.float64)
    try:
        same_dtype(torch.fft.fft(torch.arange(4)), ts.fft.fft(ts.arange(4)))
        same_dtype(torch.fft.fftfreq(4), ts.fft.fftfreq(4))
        same_dtype(torch.fft.rfftfreq(5), ts.fft.rfftfreq(5))
    finally:
        torch.set_default_dtype(torch.float32)
        ts.set_default_dtype(ts.float32)
    same_dtype(torch.fft.fftfreq(4), ts.fft.fftfreq(4))


@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n", [0, 1, 5, 8])
def test_fftfreq_torch_forms(fn, n):
    close(getattr(torch.fft, fn)(n), getattr(ts.fft, fn)(n))
    close(getattr(torch.fft, fn)(n, 0.25), getattr(ts.fft, fn)(n, 0.25))
    rt = getattr(torch.fft, fn)(n, d=2.0, dtype=torch.float64, requires_grad=True)
    rs = getattr(ts.fft, fn)(n, d=2.0, dtype=ts.float64, requires_grad=True)
    close(rt, rs)
    same_dtype(rt, rs)
    assert rs.requires_grad


def test_fft_standard_signatures_unchanged():
    assert str(inspect.signature(ts.fft.fft)).startswith("(x, /, *, n=None, axis=-1") or \
        list(inspect.signature(ts.fft.fft).parameters)[:3] == ["x", "n", "axis"]
    p = inspect.signature(ts.fft.fftn).parameters
    assert p["x"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert p["axes"].kind is inspect.Parameter.KEYWORD_ONLY
    # the standard's keyword forms keep their meaning
    x = _x((3, 5))
    close(np.fft.fft(x, n=4, axis=0, norm="ortho"), ts.fft.fft(S(x), n=4, axis=0, norm="ortho"))
    close(np.fft.fftn(x, s=(2, 3), axes=(1, 0)), ts.fft.fftn(S(x), s=(2, 3), axes=(1, 0)))
    close(np.fft.fftshift(x, axes=1), ts.fft.fftshift(S(x), axes=1))


# ----------------------------------------------------------------------------- linalg forms
def _spd(n=3, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


A3 = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
B32 = RNG.standard_normal((3, 2))
R43 = RNG.standard_normal((4, 3))
SPD = _spd(3)
SPD2 = _spd(3, (2,))
UP = np.triu(RNG.standard_normal((3, 3))) + 4 * np.eye(3)

LINALG_FORMS = [
    ("det A=", lambda L, M: L.det(A=M(A3))),
    ("inv A=", lambda L, M: L.inv(A=M(A3))),
    ("slogdet A=", lambda L, M: L.slogdet(A=M(A3)).logabsdet),
    ("cholesky input= upper", lambda L, M: L.cholesky(input=M(SPD), upper=True)),
    ("solve A= B=", lambda L, M: L.solve(A=M(A3), B=M(B32))),
    ("solve left=False", lambda L, M: L.solve(M(A3), M(B32.T), left=False)),
    ("solve_ex left=False", lambda L, M: L.solve_ex(M(A3), M(B32.T), left=False).result),
    ("svdvals A= driver", lambda L, M: L.svdvals(A=M(R43), driver=None)),
    ("svd driver", lambda L, M: L.svd(M(R43), False, driver=None).S),
    ("svd full_matrices positional", lambda L, M: abs(L.svd(M(R43), False).U)),
    ("eigvalsh UPLO=U", lambda L, M: L.eigvalsh(M(UP), UPLO="U")),
    ("eigvalsh UPLO positional", lambda L, M: L.eigvalsh(M(UP), "U")),
    ("eigh UPLO=U vals", lambda L, M: L.eigh(input=M(UP), UPLO="U").eigenvalues),
    ("eigh UPLO=L", lambda L, M: L.eigh(M(UP), UPLO="L").eigenvalues),
    ("qr A= mode=r R", lambda L, M: abs(L.qr(A=M(R43), mode="r").R)),
    ("qr mode=r Q", lambda L, M: L.qr(M(R43), mode="r").Q),
    ("qr mode positional", lambda L, M: abs(L.qr(M(R43), "complete").R)),
    ("matrix_rank atol", lambda L, M: L.matrix_rank(M(np.diag([1., .1, .01])), atol=0.05)),
    ("matrix_rank atol rtol", lambda L, M: L.matrix_rank(M(np.diag([1., .1, .01])), atol=0.001,
                                                         rtol=0.5)),
    ("matrix_rank tol positional", lambda L, M: L.matrix_rank(M(np.diag([1., .1, .01])), 0.05)),
    ("matrix_rank hermitian", lambda L, M: L.matrix_rank(M(np.diag([1., -.1, 1e-20])),
                                                         hermitian=True)),
    ("matrix_rank hermitian tol", lambda L, M: L.matrix_rank(M(np.diag([1., -.1, .01])),
                                                             tol=0.05, hermitian=True)),
    ("matrix_rank batch atol", lambda L, M: L.matrix_rank(M(np.stack([np.diag([1., .1]),
                                                                      np.diag([3., 0.5])])),
                                                          atol=0.2)),
    ("matrix_rank input=", lambda L, M: L.matrix_rank(input=M(R43), tol=0.1)),
    ("pinv hermitian", lambda L, M: L.pinv(M(SPD), hermitian=True)),
    ("pinv hermitian indefinite", lambda L, M: L.pinv(M(np.diag([2., -4., 1e-30])),
                                                     hermitian=True)),
    ("pinv rcond positional", lambda L, M: L.pinv(M(np.diag([1., 0.01])), 0.05)),
    ("pinv rcond hermitian positional", lambda L, M: L.pinv(M(np.diag([1., 0.01])), 0.05, True)),
    ("pinv atol", lambda L, M: L.pinv(M(np.diag([1., 0.1, 0.01])), atol=0.05)),
    ("pinv rtol=", lambda L, M: L.pinv(input=M(np.diag([1., 0.1, 0.01])), rtol=0.05)),
    ("matrix_norm dim keepdim", lambda L, M: L.matrix_norm(M(np.ones((2, 3, 4))), dim=(0, 2),
                                                           keepdim=True)),
    ("matrix_norm ord positional", lambda L, M: L.matrix_norm(M(A3), "nuc")),
    ("matrix_norm ord dim positional", lambda L, M: L.matrix_norm(M(np.ones((2, 3, 4))), 1,
                                                                  (2, 1))),
    ("matrix_norm dtype", lambda L, M: L.matrix_norm(M(A3.astype(np.float32)),
                                                     dtype=getattr(L, "_f64"))),
    ("vector_norm ord positional", lambda L, M: L.vector_norm(M(R43), 1)),
    ("vector_norm ord dim keepdim positional", lambda L, M: L.vector_norm(M(R43), 3, 0, True)),
    ("vector_norm dim list", lambda L, M: L.vector_norm(M(R43), 2, [0, 1])),
    ("vector_norm dtype", lambda L, M: L.vector_norm(M(R43.astype(np.float32)),
                                                     dtype=getattr(L, "_f64"))),
    ("vector_norm input=", lambda L, M: L.vector_norm(input=M(R43), ord=math.inf, dim=1)),
    ("vecdot dim=0", lambda L, M: L.vecdot(M(R43), M(R43), dim=0)),
    ("vecdot dim=-2", lambda L, M: L.vecdot(M(R43), M(R43 + 1), dim=-2)),
    ("diagonal dim1 dim2", lambda L, M: L.diagonal(M(np.arange(24.).reshape(2, 3, 4)),
                                                   dim1=0, dim2=2)),
    ("diagonal offset dims", lambda L, M: L.diagonal(A=M(np.arange(24.).reshape(2, 3, 4)),
                                                     offset=1, dim1=2, dim2=1)),
    ("matrix_power n=", lambda L, M: L.matrix_power(M(A3), n=3)),
    ("matrix_power input=", lambda L, M: L.matrix_power(input=M(A3), n=-2)),
    ("cross input other dim", lambda L, M: L.cross(input=M(R43), other=M(R43[::-1].copy()),
                                                   dim=1)),
    ("norm input=", lambda L, M: L.norm(input=M(R43))),
    ("norm ord dim", lambda L, M: L.norm(M(R43), 2, (0, 1))),
    ("matrix_exp input=", lambda L, M: L.matrix_exp(input=M(A3 / 4))),
    ("cond input=", lambda L, M: L.cond(input=M(A3), p="fro")),
    ("lstsq input= b=", lambda L, M: L.lstsq(input=M(R43), b=M(R43[:, :2])).solution),
    ("inv_ex A=", lambda L, M: L.inv_ex(A=M(A3)).inverse),
    ("cholesky_ex input=", lambda L, M: L.cholesky_ex(input=M(SPD)).L),
    ("solve_triangular input=", lambda L, M: L.solve_triangular(input=M(UP), B=M(B32),
                                                               upper=True)),
    ("solve batch of vectors", lambda L, M: L.solve(M(SPD2), M(B32.T))),
]


class _TorchL:
    def __getattr__(self, n):
        return torch.float64 if n == "_f64" else getattr(torch.linalg, n)


class _TsL:
    def __getattr__(self, n):
        return ts.float64 if n == "_f64" else getattr(ts.linalg, n)


@pytest.mark.parametrize("i", range(len(LINALG_FORMS)), ids=[c[0] for c in LINALG_FORMS])
def test_linalg_torch_call_forms(i):
    _, call = LINALG_FORMS[i]
    rt = call(_TorchL(), T)
    rs = call(_TsL(), S)
    if isinstance(rt, torch.Tensor):
        same_dtype(rt, rs)
    close(rt, rs, rtol=1e-6, atol=1e-8)


def test_solve_batch_of_vectors_shape_and_standard_conflict_kept():
    A = _spd(3, (2,))
    b = RNG.standard_normal((2, 3))
    close(torch.linalg.solve(T(A), T(b)), ts.linalg.solve(S(A), S(b)))
    # A (3,3,3), B (3,3): the standard reads B as one (3, 3) matrix broadcast over the batch
    A3b = np.stack([np.eye(3) * k for k in (1., 2., 3.)])
    b3 = np.arange(9.).reshape(3, 3)
    close(np.linalg.solve(A3b, np.broadcast_to(b3, (3, 3, 3))), ts.linalg.solve(S(A3b), S(b3)))


def test_linalg_standard_signatures_unchanged():
    assert ts.linalg.vecdot is ts.vecdot
    for name in ("det", "inv", "solve", "eigh", "qr", "svd", "matrix_rank", "pinv",
                 "matrix_norm", "vector_norm", "vecdot", "diagonal", "cross", "matrix_power"):
        p = list(inspect.signature(getattr(ts.linalg, name)).parameters.values())
        assert p[0].kind is inspect.Parameter.POSITIONAL_ONLY, name
    with pytest.raises(ValueError):
        ts.linalg.qr(ts.eye(2), mode="r2")
    # keyword forms of the standard keep working
    x = S(R43)
    close(np.linalg.matrix_norm(R43, ord=1, keepdims=True),
          ts.linalg.matrix_norm(x, ord=1, keepdims=True))
    close(np.linalg.vector_norm(R43, axis=0, keepdims=True, ord=3),
          ts.linalg.vector_norm(x, axis=0, keepdims=True, ord=3))
    assert int(ts.linalg.matrix_rank(S(np.diag([1., .1])), rtol=0.5)) == 1


def test_svd_driver_rejects_unknown():
    with pytest.raises(RuntimeError):
        ts.linalg.svd(ts.eye(2), driver="nope")


# ----------------------------------------------------------------------------- lstsq
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (2, 4), (2, 6, 3)])
def test_lstsq_matches_torch(driver, shape):
    A = RNG.standard_normal(shape)
    B = RNG.standard_normal(shape[:-1] + (2,))
    rt = torch.linalg.lstsq(T(A), T(B), driver=driver)
    rs = ts.linalg.lstsq(S(A), S(B), driver=driver)
    if shape[-2] >= shape[-1]:  # unique solution (torch's gels is not min-norm otherwise)
        close(rt.solution, rs.solution, rtol=1e-6, atol=1e-8)
    close(rt.residuals, rs.residuals, rtol=1e-6, atol=1e-8)
    same_dtype(rt.residuals, rs.residuals)
    close(rt.rank, rs.rank)
    close(rt.singular_values, rs.singular_values, rtol=1e-6, atol=1e-8)


def test_lstsq_rcond_and_rank_deficient_residuals():
    A = np.diag([1., 1e-3])
    b = np.ones((2, 1))
    for rc in (None, 1e-2, 1e-4):
        close(torch.linalg.lstsq(T(A), T(b), rcond=rc).solution,
              ts.linalg.lstsq(S(A), S(b), rcond=rc).solution)
        close(torch.linalg.lstsq(T(A), T(b), rc, driver="gelsd").rank,
              ts.linalg.lstsq(S(A), S(b), rc, driver="gelsd").rank)
    M = np.array([[1., 0], [0, 1], [0, 0]]) @ np.array([[1., 1], [1, 1]])  # rank 1, m > n
    y = np.ones((3, 1))
    for drv in ("gelsd", "gelss"):
        rt = torch.linalg.lstsq(T(M), T(y), driver=drv)
        rs = ts.linalg.lstsq(S(M), S(y), driver=drv)
        close(rt.residuals, rs.residuals)
        close(rt.solution, rs.solution, rtol=1e-6, atol=1e-8)


def test_lstsq_complex_residuals_real():
    A = RNG.standard_normal((5, 2)) + 1j * RNG.standard_normal((5, 2))
    b = RNG.standard_normal((5, 1)) + 1j * RNG.standard_normal((5, 1))
    rt = torch.linalg.lstsq(T(A), T(b), driver="gelsd")
    rs = ts.linalg.lstsq(S(A), S(b), driver="gelsd")
    same_dtype(rt.residuals, rs.residuals)
    same_dtype(rt.singular_values, rs.singular_values)
    close(rt.residuals, rs.residuals, rtol=1e-6)
    close(rt.solution, rs.solution, rtol=1e-6)
    same_dtype(torch.linalg.lstsq(T(A[:2]), T(b[:2])).residuals,
               ts.linalg.lstsq(S(A[:2]), S(b[:2])).residuals)


# ----------------------------------------------------------------------------- *_ex
def test_inv_ex_partial_batch():
    A = np.stack([np.eye(2) * 2, np.diag([1., 0.]), np.array([[1., 2], [3, 4]]),
                  np.array([[1., 2], [2, 4]])])
    rt, rs = torch.linalg.inv_ex(T(A)), ts.linalg.inv_ex(S(A))
    close(rt.info, rs.info)
    same_dtype(rt.info, rs.info)
    good = to_np(rt.info) == 0
    close(to_np(rt.inverse)[good], to_np(rs.inverse)[good])
    assert list(to_np(rs.info)) == [0, 2, 0, 2]
    with pytest.raises(ts.linalg.LinAlgError):
        ts.linalg.inv_ex(S(A), check_errors=True)


def test_cholesky_ex_info_is_minor_order():
    for d in ([1., 2, -3], [-1., 2, 3], [1., 0, 3], [1., 2, 3]):
        rt = torch.linalg.cholesky_ex(T(np.diag(d)))
        rs = ts.linalg.cholesky_ex(S(np.diag(d)))
        assert int(rt.info) == int(rs.info), d
    A = np.stack([_spd(3), np.diag([1., 2, -3]), _spd(3), -np.eye(3)])
    rt, rs = torch.linalg.cholesky_ex(T(A), upper=True), ts.linalg.cholesky_ex(S(A), upper=True)
    close(rt.info, rs.info)
    good = to_np(rt.info) == 0
    close(to_np(rt.L)[good], to_np(rs.L)[good])


def test_solve_ex_partial_batch():
    A = np.stack([A3, np.array([[1., 2, 3], [2, 4, 6], [0, 0, 1]]), _spd(3)])
    B = RNG.standard_normal((3, 3, 2))
    rt, rs = torch.linalg.solve_ex(T(A), T(B)), ts.linalg.solve_ex(S(A), S(B))
    close(rt.info, rs.info)
    good = to_np(rt.info) == 0
    close(to_np(rt.result)[good], to_np(rs.result)[good])
    # broadcast B batch and vector right-hand sides
    rt, rs = torch.linalg.solve_ex(T(A), T(B[0, :, 0])), ts.linalg.solve_ex(S(A), S(B[0, :, 0]))
    close(rt.info, rs.info)
    close(to_np(rt.result)[good], to_np(rs.result)[good])
    Bb = RNG.standard_normal((4, 1, 3, 2))
    rt, rs = torch.linalg.solve_ex(T(A), T(Bb)), ts.linalg.solve_ex(S(A), S(Bb))
    close(rt.info, rs.info)
    good = np.broadcast_to(good[:, None, None], (4, 3, 3, 2))
    close(to_np(rt.result)[np.broadcast_to(good, rt.result.shape)],
          to_np(rs.result)[np.broadcast_to(good, tuple(rs.result.shape))])


# ----------------------------------------------------------------------------- LU
def test_lu_singular_and_empty():
    for a in ([[1., 2], [2, 4]], np.zeros((3, 3)), [[0., 1], [0, 2]], np.ones((2, 3))):
        rt, rs = torch.linalg.lu(T(np.asarray(a, float))), ts.linalg.lu(S(np.asarray(a, float)))
        for k in range(3):
            close(rt[k], rs[k])
    for shape in ((0, 0), (2, 0, 0), (0, 3), (3, 0), (0, 2, 2)):
        z = np.zeros(shape)
        ft, fs = torch.linalg.lu_factor(T(z)), ts.linalg.lu_factor(S(z))
        assert tuple(ft.LU.shape) == tuple(fs.LU.shape)
        assert tuple(ft.pivots.shape) == tuple(fs.pivots.shape)
        rt, rs = torch.linalg.lu(T(z)), ts.linalg.lu(S(z))
        for k in range(3):
            assert tuple(rt[k].shape) == tuple(rs[k].shape), (shape, k)


# ----------------------------------------------------------------------------- cond
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf])
def test_cond_singular_batched_and_empty(p):
    # (exactly singular for the SVD too where p goes through it)
    sing = np.diag([1., 0.]) if p in (None, 2, -2) else np.ones((2, 2))
    A = np.stack([np.eye(2) * 3, sing, np.zeros((2, 2)), np.array([[1., 2], [3, 4]])])
    want, got = torch.linalg.cond(T(A), p).numpy(), np.asarray(ts.linalg.cond(S(A), p))
    # A singular matrix's cond is inf, or huge where an SVD leaves rounding in its smallest
    # singular value (it depends on the LAPACK build): compare those as "huge".
    big = lambda v: np.where(np.isfinite(v) & (np.abs(v) < 1e15), v, np.inf)  # noqa: E731
    np.testing.assert_allclose(big(got), big(want), rtol=1e-7, atol=1e-9, equal_nan=True)
    np.testing.assert_allclose(big(np.asarray(ts.linalg.cond(S(sing), p))),
                               big(torch.linalg.cond(T(sing), p).numpy()), equal_nan=True)
    for shape in ((0, 0), (3, 0, 0)):
        rt, rs = torch.linalg.cond(T(np.zeros(shape)), p), ts.linalg.cond(S(np.zeros(shape)), p)
        close(rt, rs)


# ----------------------------------------------------------------------------- solve_triangular
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_zero_diagonal(upper, left):
    A = np.array([[1., 1, 2], [0, 0, 1], [3, 0, 2]])
    A = np.triu(A) if upper else np.tril(A)
    B = np.ones((3, 2)) if left else np.ones((2, 3))
    close(torch.linalg.solve_triangular(T(A), T(B), upper=upper, left=left),
          ts.linalg.solve_triangular(S(A), S(B), upper=upper, left=left))


def test_solve_triangular_grad_nonsingular():
    A, B = UP, B32
    ta, tb = T(A).requires_grad_(True), T(B).requires_grad_(True)
    torch.linalg.solve_triangular(ta, tb, upper=True).square().sum().backward()
    sa, sb = S(A), S(B)
    sa.requires_grad_(True)
    sb.requires_grad_(True)
    ts.square(ts.linalg.solve_triangular(sa, sb, upper=True)).sum().backward()
    close(ta.grad, sa.grad, rtol=1e-6)
    close(tb.grad, sb.grad, rtol=1e-6)


# ----------------------------------------------------------------------------- misc
@pytest.mark.parametrize("a", [[[1 + 1j, 0], [0, 2 - 1j]], [[-1 + 0j, 0], [0, 1]],
                               [[0j, 0], [0, 0]], [[1j, 2], [3, 4 - 1j]]])
def test_logdet_complex(a):
    a = np.asarray(a, complex)
    close(torch.logdet(T(a)), ts.logdet(S(a)))
    close(T(a).logdet(), S(a).logdet())


def test_logdet_real_unchanged():
    for a in ([[2., 0], [0, 3]], [[-1., 0], [0, 1]], [[0., 0], [0, 1]]):
        close(torch.logdet(T(a)), ts.logdet(S(a)))


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("some", [True, False])
def test_svd_no_uv_shapes(shape, some):
    a = RNG.standard_normal(shape)
    rt, rs = torch.svd(T(a), some=some, compute_uv=False), ts.svd(S(a), some=some,
                                                                    compute_uv=False)
    for k in range(3):
        close(rt[k], rs[k])


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "float32"])
def test_vander_dtype(dtype):
    x = np.arange(4).astype(dtype)
    rt, rs = torch.linalg.vander(T(x), N=3), ts.linalg.vander(S(x), N=3)
    same_dtype(rt, rs)
    close(rt, rs)


def test_tensor_triangular_solve_method():
    rt = T(B32).triangular_solve(T(UP))
    rs = S(B32).triangular_solve(S(UP))
    close(rt.solution, rs.solution)


def test_norms_are_the_bindings_and_follow_torch_where_they_disagreed():
    # issue 17: vector_norm / matrix_norm / norm are the C++ bindings (one signature, both forms)
    for name in ("vector_norm", "matrix_norm", "norm"):
        assert type(getattr(ts.linalg, name)).__name__ == "builtin_function_or_method", name
    # keepdims/keepdim: None is "not given" (False), the binding's real default
    assert "keepdim=None, *, axis=None, keepdims=None" in str(inspect.signature(ts.linalg.vector_norm))
    x = RNG.standard_normal((2, 3, 4))
    # a non-number ord is a TypeError (as torch; was ValueError)
    for bad in ("fro", None, object()):
        with pytest.raises(TypeError):
            torch.linalg.vector_norm(T(x), bad)
        with pytest.raises(TypeError):
            ts.linalg.vector_norm(S(x), bad)
    # an out-of-range dim of matrix_norm raises IndexError (as torch; was wrapped modulo ndim)
    with pytest.raises(IndexError):
        torch.linalg.matrix_norm(T(x), dim=(5, 1))
    with pytest.raises(IndexError):
        ts.linalg.matrix_norm(S(x), dim=(5, 1))
    with pytest.raises(TypeError, match="keepdims"):
        ts.linalg.vector_norm(S(x), keepdim=True, keepdims=True)
    # torch's forms and the standard's agree on the values
    close(torch.linalg.matrix_norm(T(x), "nuc", (2, 0), True),
          ts.linalg.matrix_norm(S(x), "nuc", (2, 0), True))
    close(torch.linalg.norm(T(x), 3, 1, True), ts.linalg.norm(S(x), 3, 1, True))
    close(torch.linalg.norm(T(x[0]), -2), ts.linalg.norm(A=S(x[0]), ord=-2))


def test_matrix_functions_are_the_bindings():
    # det / inv / eigvalsh / cholesky: one C++ binding each, with torch's A=, input=, UPLO
    for name in ("det", "inv", "eigvalsh", "cholesky", "matrix_power"):
        assert type(getattr(ts.linalg, name)).__name__ == "builtin_function_or_method", name
    close(torch.linalg.det(A=T(A3)), ts.linalg.det(A=S(A3)))
    close(torch.linalg.inv(A=T(A3)), ts.linalg.inv(input=S(A3)))
    close(torch.linalg.eigvalsh(T(UP), "U"), ts.linalg.eigvalsh(S(UP), "U"))
    with pytest.raises(TypeError, match="multiple values"):
        ts.linalg.det(S(A3), A=S(A3))
    # upper must be a bool (as torch; None / 1.5 were taken for their truth value)
    for bad in (None, 1.5, "abc"):
        with pytest.raises(TypeError):
            torch.linalg.cholesky(T(SPD), upper=bad)
        with pytest.raises(TypeError):
            ts.linalg.cholesky(S(SPD), upper=bad)
