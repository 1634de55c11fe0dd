"""ts.linalg's factorizations as C++ bindings (issue 17; csrc/python/bind_linalg_decomp.cpp):
slogdet, eigh, solve, qr, svd, svdvals, matrix_rank, pinv. Values against torch (empty, batched,
non-contiguous, float32 / float64 / complex128), gradients against torch in float64, torch's
named-tuple results, and the errors (class and a message naming the op)."""
import inspect

import numpy as np
import pytest

import tessera as ts
from harness import compare_grads, to_np

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(17)
NAMES = ("slogdet", "eigh", "solve", "qr", "svd", "svdvals", "matrix_rank", "pinv")


def T(a):
    return torch.tensor(np.asarray(a))


def S(a):
    return ts.asarray(np.asarray(a))


def close(want, got, rtol=1e-6, atol=1e-8):
    w, g = to_np(want), to_np(got)
    assert w.shape == g.shape, (w.shape, g.shape)
    assert w.dtype == g.dtype, (w.dtype, g.dtype)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def mat(shape, dtype=np.float64, shift=True):
    a = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * RNG.standard_normal(shape)
    if shift and shape[-1] == shape[-2]:
        a = a + shape[-1] * np.eye(shape[-1])
    return a.astype(dtype)


def herm(shape, dtype=np.float64):
    a = mat(shape, dtype, shift=False)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def test_each_is_one_binding_with_a_signature():
    for name in NAMES:
        fn = getattr(ts.linalg, name)
        assert type(fn).__name__ == "builtin_function_or_method", name
        assert fn is getattr(ts._C._linalg, name), name
        params = list(inspect.signature(fn).parameters.values())
        assert params[0].kind is inspect.Parameter.POSITIONAL_ONLY, name
        assert "out" in inspect.signature(fn).parameters, name
        assert fn.__doc__, name
    assert "full_matrices=True" in str(inspect.signature(ts.linalg.svd))
    assert "UPLO='L'" in str(inspect.signature(ts.linalg.eigh))


# ---- values: the gauge-free parts (|Q|, |U| are sign-ambiguous) against torch
DTYPES = [np.float32, np.float64, np.complex128]
SHAPES = [(3, 3), (2, 4, 4), (0, 0), (2, 0, 0), (3, 1, 1)]


def _norms(x):
    return np.abs(to_np(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_square_values_match_torch(shape, dtype):
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else {}
    a, h = mat(shape, dtype), herm(shape, dtype)
    for got, want in [
        (ts.linalg.slogdet(S(a)), torch.linalg.slogdet(T(a))),
        (ts.linalg.svdvals(S(a)), torch.linalg.svdvals(T(a))),
        (ts.linalg.pinv(S(a)), torch.linalg.pinv(T(a))),
        (ts.linalg.pinv(S(h), hermitian=True), torch.linalg.pinv(T(h), hermitian=True)),
        (ts.linalg.matrix_rank(S(a)), torch.linalg.matrix_rank(T(a))),
        (ts.linalg.matrix_rank(S(h), hermitian=True), torch.linalg.matrix_rank(T(h), hermitian=True)),
        (ts.linalg.eigh(S(h)).eigenvalues, torch.linalg.eigh(T(h)).eigenvalues),
        (ts.linalg.eigh(S(h), "U").eigenvalues, torch.linalg.eigh(T(h), "U").eigenvalues),
        (ts.linalg.solve(S(a), S(a[..., :1] if shape[-1] else a)),
         torch.linalg.solve(T(a), T(a[..., :1] if shape[-1] else a))),
    ]:
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            close(w, g, **tol)
    u, s, vh = ts.linalg.svd(S(a))
    close(torch.linalg.svd(T(a)).S, s, **tol)
    close(T(a), ts.matmul(u * ts.astype(s, u.dtype)[..., None, :], vh), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 2), (0, 3), (3, 0), (2, 0, 4)], ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_and_svd_rectangular_match_torch(shape, mode):
    a = mat(shape)
    q, r = ts.linalg.qr(S(a), mode)
    tq, tr = torch.linalg.qr(T(a), mode)
    assert tuple(q.shape) == tuple(tq.shape) and tuple(r.shape) == tuple(tr.shape)
    close(np.abs(tr.numpy()), _norms(r))
    if mode != "r":
        close(T(a), ts.matmul(q, r), atol=1e-12)
    for full in (True, False):
        u, s, vh = ts.linalg.svd(S(a), full_matrices=full)
        tu, ts_, tvh = torch.linalg.svd(T(a), full_matrices=full)
        assert (tuple(u.shape), tuple(vh.shape)) == (tuple(tu.shape), tuple(tvh.shape))
        close(ts_, s)
    close(torch.linalg.pinv(T(a)), ts.linalg.pinv(S(a)))
    close(torch.linalg.matrix_rank(T(a)), ts.linalg.matrix_rank(S(a)))


def test_non_contiguous_inputs():
    base = mat((4, 6, 6))
    a = base[::2, ::2, ::2]  # strided
    at = np.swapaxes(base[1], 0, 1)  # transposed
    for x in (a, at):
        sx, tx = S(base)[::2, ::2, ::2] if x is a else S(base)[1].mT, T(x)
        assert not sx.is_contiguous()
        close(torch.linalg.slogdet(tx).logabsdet, ts.linalg.slogdet(sx).logabsdet)
        close(torch.linalg.svdvals(tx), ts.linalg.svdvals(sx))
        close(torch.linalg.pinv(tx), ts.linalg.pinv(sx))
        close(torch.linalg.solve(tx, tx), ts.linalg.solve(sx, sx), atol=1e-10)
        close(torch.linalg.matrix_rank(tx, atol=1.0), ts.linalg.matrix_rank(sx, atol=1.0))


def test_tolerances_match_torch():
    d = np.stack([np.diag([3., 1., 0.1, 1e-3]), np.diag([5., -2., 0.5, 0.])])
    h = d  # diagonal: Hermitian, with a negative eigenvalue
    for kw in [dict(), dict(atol=0.2), dict(rtol=0.1), dict(atol=0.05, rtol=0.1),
               dict(atol=0.0), dict(atol=np.array([0.05, 1.0])),
               dict(rtol=np.array([0.5, 0.01]))]:
        tkw = {k: (T(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        skw = {k: (S(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        for herm_ in (False, True):
            close(torch.linalg.matrix_rank(T(h), hermitian=herm_, **tkw),
                  ts.linalg.matrix_rank(S(h), hermitian=herm_, **skw))
            close(torch.linalg.pinv(T(h), hermitian=herm_, **tkw),
                  ts.linalg.pinv(S(h), hermitian=herm_, **skw))
    # torch's positional forms: matrix_rank's tol is absolute, pinv's rcond relative
    close(torch.linalg.matrix_rank(T(d), 0.05), ts.linalg.matrix_rank(S(d), 0.05))
    close(torch.linalg.pinv(T(d), 0.05, True), ts.linalg.pinv(S(d), 0.05, True))


def test_named_tuple_results():
    a, h = mat((3, 3)), herm((3, 3))
    r = ts.linalg.slogdet(S(a))
    assert r._fields == ("sign", "logabsdet")
    tr = torch.linalg.slogdet(T(a))
    assert (tr.sign, tr.logabsdet) == tuple(tr)  # torch's field names
    assert ts.linalg.eigh(S(h))._fields == ("eigenvalues", "eigenvectors")
    assert ts.linalg.qr(S(a))._fields == ("Q", "R")
    assert ts.linalg.svd(S(a))._fields == ("U", "S", "Vh")
    assert isinstance(r, ts.linalg.SlogdetResult) and isinstance(r, tuple)
    assert type(r).__module__ == "tessera.linalg"


def test_torch_keyword_forms():
    a, b = mat((3, 3)), mat((3, 2))
    close(torch.linalg.solve(A=T(a), B=T(b)), ts.linalg.solve(A=S(a), B=S(b)))
    close(torch.linalg.solve(A=T(a), B=T(b)), ts.linalg.solve(input=S(a), other=S(b)))
    close(torch.linalg.solve(T(a), T(b.T), left=False), ts.linalg.solve(S(a), S(b.T), left=False))
    # a vector b with left=False is x A = b (torch raises; tessera kept its former answer)
    close(np.linalg.solve(a.T, b[:, 0]), ts.linalg.solve(S(a), S(b[:, 0]), left=False))
    close(torch.linalg.pinv(input=T(a), rtol=0.3), ts.linalg.pinv(A=S(a), rtol=0.3))
    # driver= (torch's cuSOLVER choice, refused by torch on the CPU) is checked and ignored
    close(torch.linalg.svdvals(T(a)), ts.linalg.svdvals(S(a), driver="gesvd"))


# ---- gradients (float64) against torch
def test_gradients_match_torch():
    a, b, h = mat((2, 3, 3)), mat((2, 3, 2)), herm((2, 3, 3))
    rect = mat((2, 4, 3))
    for transpose in (False, True):
        kw = dict(generator=RNG, transpose=transpose)
        compare_grads(lambda x: ts.linalg.slogdet(x).logabsdet,
                      lambda x: torch.linalg.slogdet(x).logabsdet, [a], **kw)
        compare_grads(ts.linalg.solve, torch.linalg.solve, [a, b], **kw)
        compare_grads(lambda x, y: ts.linalg.solve(x, y, left=False),
                      lambda x, y: torch.linalg.solve(x, y, left=False), [a, b.swapaxes(-1, -2)],
                      **kw)
        compare_grads(lambda x, y: ts.linalg.solve(x, y), lambda x, y: torch.linalg.solve(x, y),
                      [a, b[..., 0]], **kw)  # torch's batch of vectors
        compare_grads(ts.linalg.svdvals, torch.linalg.svdvals, [rect], **kw)
        compare_grads(ts.linalg.pinv, torch.linalg.pinv, [rect], **kw)
        compare_grads(lambda x: ts.linalg.pinv(x, atol=0.5), lambda x: torch.linalg.pinv(x, atol=0.5),
                      [rect], **kw)
        compare_grads(lambda x: ts.linalg.qr(x).R.abs(), lambda x: torch.linalg.qr(x).R.abs(),
                      [rect], **kw)
        compare_grads(lambda x: ts.linalg.eigh((x + x.mT) / 2).eigenvalues,
                      lambda x: torch.linalg.eigh((x + x.mT) / 2).eigenvalues, [h], **kw)


def test_pinv_hermitian_gradient_is_torchs():
    # torch differentiates pinv(hermitian=True) with pinv_backward, like the general case
    h = herm((2, 3, 3))
    compare_grads(lambda x: ts.linalg.pinv((x + x.mT) / 2, hermitian=True),
                  lambda x: torch.linalg.pinv((x + x.mT) / 2, hermitian=True), [h],
                  generator=RNG)


# ---- errors: the op raises the final class, naming itself
@pytest.mark.parametrize("name", NAMES)
def test_integer_and_vector_inputs_raise_naming_the_op(name):
    args = (S(np.eye(3, dtype=np.int64)),) * (2 if name == "solve" else 1)
    with pytest.raises(TypeError, match=name):
        getattr(ts.linalg, name)(*args)
    with pytest.raises(RuntimeError):  # torch's class for both
        getattr(torch.linalg, name)(*(T(np.eye(3, dtype=np.int64)),) * len(args))
    vec = (S(np.ones(3)),) * len(args)
    with pytest.raises(ValueError, match=name):
        getattr(ts.linalg, name)(*vec)


def test_argument_errors():
    a = S(mat((3, 3)))
    with pytest.raises(ts.linalg.LinAlgError, match="solve"):
        ts.linalg.solve(S(np.zeros((2, 2))), S(np.ones((2, 1))))
    with pytest.raises(RuntimeError, match="UPLO"):
        ts.linalg.eigh(a, "X")
    with pytest.raises(RuntimeError, match="svd.*driver"):
        ts.linalg.svd(a, driver="nope")
    with pytest.raises(ValueError, match="qr: mode"):
        ts.linalg.qr(a, mode="r2")
    with pytest.raises(TypeError, match="pinv.*hermitian"):
        ts.linalg.pinv(a, hermitian="yes")
    with pytest.raises(RuntimeError, match="matrix_rank.*not both"):
        ts.linalg.matrix_rank(a, 0.1, atol=0.1)
    with pytest.raises(TypeError, match="multiple values"):
        ts.linalg.svd(a, A=a)
    with pytest.raises(TypeError, match="missing required argument 'B'"):
        ts.linalg.solve(a)
    with pytest.raises(TypeError, match="argument 'out' must be a tuple of 2 tensors"):
        ts.linalg.slogdet(a, out=a)
    with pytest.raises(TypeError, match="slogdet"):
        ts.linalg.slogdet("abc")


# ---- lstsq
def test_lstsq_is_the_binding_with_torchs_forms():
    assert type(ts.linalg.lstsq).__name__ == "builtin_function_or_method"
    # A and B may come as input= and b=/other= instead: Ellipsis is the binding's "not given"
    assert str(inspect.signature(ts.linalg.lstsq)).startswith(
        "(A=Ellipsis, B=Ellipsis, rcond=None, *, driver=None")
    a, b = mat((2, 5, 3)), mat((2, 5, 2))
    for kw in (dict(), dict(driver="gelsd"), dict(driver="gels"), dict(rcond=0.5, driver="gelss")):
        got, want = ts.linalg.lstsq(S(a), S(b), **kw), torch.linalg.lstsq(T(a), T(b), **kw)
        assert got._fields == ("solution", "residuals", "rank", "singular_values")
        for g, w in zip(got, want):
            close(w, g, atol=1e-10)
    # torch's batch of vectors, b= / input=, empty and non-contiguous inputs
    close(torch.linalg.lstsq(T(a), T(b[..., 0])).solution,
          ts.linalg.lstsq(input=S(a), b=S(b[..., 0])).solution)
    close(torch.linalg.lstsq(T(mat((0, 3))), T(mat((0, 2)))).solution,
          ts.linalg.lstsq(S(mat((0, 3))), S(mat((0, 2)))).solution)
    close(torch.linalg.lstsq(T(a).mT, T(a[..., :3, :]).mT).solution,
          ts.linalg.lstsq(S(a).mT, S(a[..., :3, :]).mT).solution, atol=1e-10)
    compare_grads(lambda x, y: ts.linalg.lstsq(x, y).solution,
                  lambda x, y: torch.linalg.lstsq(x, y).solution, [a, b], generator=RNG)


def test_lstsq_errors_name_the_op():
    a = S(mat((3, 2)))
    with pytest.raises(RuntimeError, match="lstsq.*driver"):
        ts.linalg.lstsq(a, a, driver="nope")
    with pytest.raises(TypeError, match="lstsq"):
        ts.linalg.lstsq(S(np.ones((3, 2), np.int64)), a)
    with pytest.raises(TypeError, match="rcond"):
        ts.linalg.lstsq(a, a, "x")
    with pytest.raises(TypeError, match="multiple values"):
        ts.linalg.lstsq(a, a, b=a)


# ---- inv_ex / cholesky_ex / solve_ex: LAPACK's info from the C++ kernels
def test_ex_functions_are_bindings_with_lapack_info():
    for name in ("inv_ex", "cholesky_ex", "solve_ex"):
        assert type(getattr(ts.linalg, name)).__name__ == "builtin_function_or_method", name
    sing = np.array([[1., 2, 3], [2, 4, 6], [0, 0, 1]])  # second pivot zero
    A = np.stack([mat((3, 3)), sing, np.zeros((3, 3))])
    rt, rs = torch.linalg.inv_ex(T(A)), ts.linalg.inv_ex(S(A))
    close(rt.info, rs.info)
    assert rs._fields == ("inverse", "info")
    close(rt.inverse[0], rs.inverse[0])
    assert np.isnan(to_np(rs.inverse)[1:]).all()
    # a non-contiguous batch, and the upper triangle read by cholesky_ex(upper=True)
    H = np.stack([herm((3, 3)), np.diag([1., -1, 2]), herm((3, 3))])
    Ht = np.swapaxes(H, -1, -2).copy()
    for upper in (False, True):
        rt = torch.linalg.cholesky_ex(T(Ht).mT, upper=upper)
        rs = ts.linalg.cholesky_ex(S(Ht).mT, upper=upper)
        close(rt.info, rs.info)
        close(rt.L[0], rs.L[0])
    # empty batches and matrices
    for shape in ((0, 3, 3), (2, 0, 0)):
        for name in ("inv_ex", "cholesky_ex"):
            rt, rs = getattr(torch.linalg, name)(T(np.zeros(shape))), \
                getattr(ts.linalg, name)(S(np.zeros(shape)))
            close(rt.info, rs.info)
            assert tuple(rt[0].shape) == tuple(rs[0].shape)
    b = mat((3, 3, 2))
    rt, rs = torch.linalg.solve_ex(T(A), T(b)), ts.linalg.solve_ex(S(A), S(b))
    close(rt.info, rs.info)
    close(rt.result[0], rs.result[0])


def test_ex_gradients_and_errors():
    a = mat((2, 3, 3))
    compare_grads(lambda x: ts.linalg.inv_ex(x).inverse, lambda x: torch.linalg.inv_ex(x).inverse,
                  [a], generator=RNG)
    compare_grads(lambda x, y: ts.linalg.solve_ex(x, y).result,
                  lambda x, y: torch.linalg.solve_ex(x, y).result, [a, mat((2, 3, 2))],
                  generator=RNG)
    compare_grads(lambda x: ts.linalg.cholesky_ex((x + x.mT) / 2).L,
                  lambda x: torch.linalg.cholesky_ex((x + x.mT) / 2).L, [herm((2, 3, 3))],
                  generator=RNG)
    with pytest.raises(ts.linalg.LinAlgError, match="inv"):
        ts.linalg.inv_ex(S(np.zeros((2, 2))), check_errors=True)
    with pytest.raises(ts.linalg.LinAlgError, match="cholesky"):
        ts.linalg.cholesky_ex(S(-np.eye(2)), check_errors=True)
    with pytest.raises(TypeError, match="inv_ex"):
        ts.linalg.inv_ex(S(np.eye(2, dtype=np.int64)))
    with pytest.raises(ValueError, match="cholesky_ex|cholesky"):
        ts.linalg.cholesky_ex(S(np.ones((2, 3))))
    with pytest.raises(TypeError, match="upper"):
        ts.linalg.cholesky_ex(S(np.eye(2)), upper=None)


# ---- multi_dot, tensorinv, tensorsolve
def test_multi_dot_tensorinv_tensorsolve_match_torch():
    for name in ("multi_dot", "tensorinv", "tensorsolve"):
        assert type(getattr(ts.linalg, name)).__name__ == "builtin_function_or_method", name
    x = mat((3, 4))
    close(torch.linalg.multi_dot([T(x[0]), T(x.T), T(x)]),
          ts.linalg.multi_dot([S(x[0]), S(x).mT, S(x)]))  # 1-D first, non-contiguous middle
    a = mat((4, 6, 8, 3), shift=False) + np.eye(24).reshape(4, 6, 8, 3) * 5
    close(torch.linalg.tensorinv(T(a), ind=2), ts.linalg.tensorinv(S(a), ind=2), atol=1e-10)
    close(torch.linalg.tensorinv(T(a.reshape(24, 2, 12)), 1),
          ts.linalg.tensorinv(input=S(a.reshape(24, 2, 12)), ind=1), atol=1e-10)
    A = mat((2, 3, 6), shift=False) + np.eye(6).reshape(2, 3, 6) * 4
    B = mat((2, 3), shift=False)
    close(torch.linalg.tensorsolve(T(A), T(B)), ts.linalg.tensorsolve(S(A), S(B)), atol=1e-10)
    A2 = np.moveaxis(A, 2, 0).copy()  # (6, 2, 3): dims=(0,) moves the 6-axis back to the end
    close(torch.linalg.tensorsolve(T(A2), T(B), dims=(0,)),
          ts.linalg.tensorsolve(S(A2), S(B), dims=(0,)), atol=1e-10)
    compare_grads(lambda y: ts.linalg.tensorinv(y, 1), lambda y: torch.linalg.tensorinv(y, 1),
                  [a.reshape(24, 2, 12)], generator=RNG)
    compare_grads(ts.linalg.tensorsolve, torch.linalg.tensorsolve, [A, B], generator=RNG)


def test_multi_dot_tensorinv_errors():
    with pytest.raises(RuntimeError, match="tensorinv.*positive"):
        ts.linalg.tensorinv(S(np.eye(4)), 0)
    with pytest.raises(RuntimeError):
        torch.linalg.tensorinv(T(np.eye(4)), 0)
    with pytest.raises(RuntimeError, match="tensorinv.*prod"):
        ts.linalg.tensorinv(S(np.ones((2, 3))), 1)
    with pytest.raises(RuntimeError, match="tensorsolve.*requirement"):
        ts.linalg.tensorsolve(S(np.ones((2, 3, 4))), S(np.ones((2, 3))))
    with pytest.raises(RuntimeError):
        torch.linalg.tensorsolve(T(np.ones((2, 3, 4))), T(np.ones((2, 3))))
    with pytest.raises(TypeError, match="multi_dot"):
        ts.linalg.multi_dot(S(np.eye(2)))
    out = S(np.zeros((2, 2)))
    assert ts.linalg.multi_dot([S(np.eye(2))] * 2, out=out) is out  # out= as torch's
    np.testing.assert_array_equal(to_np(out), np.eye(2))


# ---- matrix_exp, vander
def test_matrix_exp_is_one_binding_matching_torch():
    assert ts.matrix_exp is ts.linalg.matrix_exp is ts._C._linalg.matrix_exp
    for shape, scale in (((3, 3), 0.3), ((2, 4, 4), 3.0), ((0, 2, 2), 1.0), ((2, 0, 0), 1.0)):
        for dtype in (np.float64, np.complex128, np.float32):
            a = (mat(shape, dtype, shift=False) * scale).astype(dtype)
            tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
            close(torch.linalg.matrix_exp(T(a)), ts.linalg.matrix_exp(S(a)), **tol)
            close(torch.matrix_exp(T(a)), S(a).matrix_exp(), **tol)
    a = mat((4, 4), shift=False)
    close(torch.linalg.matrix_exp(T(a).mT), ts.linalg.matrix_exp(A=S(a).mT), rtol=1e-9, atol=1e-9)
    compare_grads(ts.linalg.matrix_exp, torch.linalg.matrix_exp, [mat((2, 3, 3), shift=False)],
                  generator=RNG, rtol=1e-7)
    with pytest.raises(RuntimeError, match="matrix_exp.*square"):
        ts.linalg.matrix_exp(S(np.ones((2, 3))))
    with pytest.raises(TypeError, match="matrix_exp"):  # torch: RuntimeError (tessera's is one)
        ts.linalg.matrix_exp(S(np.eye(2, dtype=np.int64)))


def test_vander_matches_torch_and_its_checks():
    for x in (np.array([1., 2, 3]), np.arange(6).reshape(2, 3), np.array([1 + 2j, 3 - 1j]),
              np.arange(8.)[::2]):
        for N in (None, 2, 5):
            close(torch.linalg.vander(T(x), N=N), ts.linalg.vander(S(x), N=N))
    compare_grads(lambda x: ts.linalg.vander(x, N=4), lambda x: torch.linalg.vander(x, N=4),
                  [mat((2, 3), shift=False)], generator=RNG)
    # torch's checks (N = 1 and bool were accepted before)
    for N in (1, 0):
        with pytest.raises(RuntimeError, match="N must be greater than 1"):
            torch.linalg.vander(T(np.ones(3)), N=N)
        with pytest.raises(RuntimeError, match="N must be greater than 1"):
            ts.linalg.vander(S(np.ones(3)), N=N)
    with pytest.raises(RuntimeError, match="vander"):
        ts.linalg.vander(S(np.array([True, False])))
    with pytest.raises(RuntimeError, match="vander"):
        ts.linalg.vander(S(np.float64(2.0)))


# ---- cross, outer
def test_cross_and_outer_are_bindings_matching_torch_and_numpy():
    for name in ("cross", "outer"):
        assert type(getattr(ts.linalg, name)).__name__ == "builtin_function_or_method", name
    a, b = mat((4, 3), shift=False), mat((1, 3), shift=False)
    close(torch.linalg.cross(T(a), T(b)), ts.linalg.cross(S(a), S(b)))
    b3 = mat((2, 1, 3), shift=False)  # NumPy's broadcasting over different ranks
    close(np.cross(a, b3), ts.linalg.cross(S(a), S(b3)))
    c, d = mat((3, 5), shift=False), mat((3, 5), shift=False)
    close(torch.linalg.cross(T(c), T(d), dim=0), ts.linalg.cross(S(c), S(d), axis=0))
    close(torch.linalg.cross(input=T(c), other=T(d), dim=0),
          ts.linalg.cross(input=S(c), other=S(d), dim=0))
    close(torch.linalg.cross(T(c).T, T(d).T), ts.linalg.cross(S(c).mT, S(d).mT))  # strided
    close(torch.linalg.cross(T(np.zeros((0, 3))), T(np.zeros((0, 3)))),
          ts.linalg.cross(S(np.zeros((0, 3))), S(np.zeros((0, 3)))))
    close(torch.linalg.cross(T(np.arange(3)), T(np.arange(3, 6))),
          ts.linalg.cross(S(np.arange(3)), S(np.arange(3, 6))))  # int64
    compare_grads(ts.linalg.cross, torch.linalg.cross, [a, b], generator=RNG)
    x, y = mat((4,), shift=False), mat((0,), shift=False)
    close(np.outer(x, x), ts.linalg.outer(S(x), S(x)))
    close(np.outer(x, y), ts.linalg.outer(S(x), S(y)))
    compare_grads(ts.linalg.outer, torch.outer, [x, x[:3]], generator=RNG)
    with pytest.raises(IndexError, match="cross: axis 2"):
        ts.linalg.cross(S(a), S(a), axis=2)
    with pytest.raises(ValueError, match="cross: expected size 3"):
        ts.linalg.cross(S(c), S(d))
    with pytest.raises(ValueError, match="outer: expected 1-D"):
        ts.linalg.outer(S(a), S(x))
    with pytest.raises(TypeError, match="missing required argument 'other'"):
        ts.linalg.cross(S(a))


# ---- diagonal, trace
def test_diagonal_and_trace_are_bindings():
    for name in ("diagonal", "trace"):
        assert type(getattr(ts.linalg, name)).__name__ == "builtin_function_or_method", name
    x = np.arange(24.).reshape(2, 3, 4)
    close(np.linalg.diagonal(x, offset=1), ts.linalg.diagonal(S(x), offset=1))
    close(torch.linalg.diagonal(T(x), offset=-1, dim1=0, dim2=2),
          ts.linalg.diagonal(A=S(x), offset=-1, dim1=0, dim2=2))
    close(np.linalg.trace(x, offset=1), ts.linalg.trace(S(x), offset=1))
    close(np.linalg.trace(x[:, ::2, ::-1], dtype=np.float32),
          ts.linalg.trace(S(x)[:, ::2, ::-1], dtype=ts.float32))
    close(np.linalg.trace(np.zeros((2, 0, 0))), ts.linalg.trace(S(np.zeros((2, 0, 0)))))
    for fn in (ts.linalg.diagonal, ts.linalg.trace):
        with pytest.raises(ValueError, match=fn.__name__):
            fn(S(np.ones(3)))


@pytest.mark.parametrize("shape,k", [((4, 4), 4), ((5, 3), 3), ((5, 3), 2), ((2, 6, 4), 3),
                                     ((4, 2), 0), ((0, 3, 2), 2)])
def test_householder_product_matches_torch(shape, k):
    a = mat(shape, shift=False)
    tau = RNG.uniform(0.2, 1.8, size=shape[:-2] + (k,))
    close(torch.linalg.householder_product(T(a), T(tau)), ts.linalg.householder_product(S(a), S(tau)))
    close(torch.orgqr(T(a), T(tau)), ts.orgqr(S(a), S(tau)))
    close(T(a).orgqr(T(tau)), S(a).orgqr(S(tau)))
    if k and a.size:
        compare_grads(ts.linalg.householder_product, torch.linalg.householder_product, [a, tau])
    # the Q of geqrf's reflectors is the Q of the QR decomposition
    if shape == (5, 3):
        x, t = torch.geqrf(T(a))
        close(torch.linalg.qr(T(a)).Q, ts.linalg.householder_product(S(x.numpy()), S(t.numpy())))
    c = (mat((3, 2)) + 1j * mat((3, 2))).astype(np.complex128)
    ct = (RNG.uniform(0.2, 1.8, 2) + 0.3j).astype(np.complex128)
    close(torch.linalg.householder_product(T(c), T(ct)), ts.linalg.householder_product(S(c), S(ct)))


def test_householder_product_errors_name_the_op():
    a, tau = np.zeros((3, 4)), np.ones(2)
    for x, t, exc in [(a, tau, RuntimeError), (a.T, np.ones(4), RuntimeError),
                      (a.T, np.ones((2, 2)), RuntimeError),
                      (a.T.astype(np.int64), tau.astype(np.int64), TypeError),
                      (a.T, tau.astype(np.float32), TypeError)]:
        with pytest.raises(exc, match="householder_product"):
            ts.linalg.householder_product(S(x), S(t))
        with pytest.raises(Exception):
            torch.linalg.householder_product(T(x), T(t))
    with pytest.raises(TypeError, match="tau"):
        ts.linalg.householder_product(S(a.T))
