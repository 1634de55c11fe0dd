"""linalg through cuSOLVER and fft through cuFFT on CUDA tensors, each checked against the CPU.

The CPU path (LAPACK, the CPU FFT engine) is the reference: same dtypes, shapes and exceptions,
values to a dtype-dependent tolerance. Factorizations that are unique only up to signs or phases
(eigenvectors, singular vectors, QR) are checked through what is unique: reconstructions,
orthonormality, and absolute values. Without a GPU every test skips.
"""
import numpy as np
import pytest

import tessera as ts
from harness import randn

HAS_CUDA = ts.cuda.is_available()
pytestmark = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
DEV = "cuda:0"
DTYPES = ["float32", "float64", "complex64", "complex128"]
SHAPES = [(4, 4), (3, 5, 5), (2, 2, 3, 3), (0, 3, 3), (2, 0, 0), (1, 1)]


def tol(dtype):
    return (2e-3, 2e-3) if dtype in ("float32", "complex64") else (1e-9, 1e-9)


def spd(shape, dtype, seed=0):
    """Well-conditioned Hermitian positive-definite matrices."""
    a = randn(*shape, dtype=dtype, generator=np.random.default_rng(seed))
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def both(a):
    c = ts.asarray(a)
    return c, c.to(DEV)


def close(cpu, gpu_t, dtype, scale=1.0):
    assert str(gpu_t.device) == DEV, gpu_t.device
    assert gpu_t.dtype == cpu.dtype and gpu_t.shape == cpu.shape, (gpu_t.dtype, gpu_t.shape)
    rtol, atol = tol(dtype)
    np.testing.assert_allclose(gpu_t.cpu().numpy(), cpu.numpy(), rtol=rtol, atol=atol * scale)


def host(t):
    return t.cpu().numpy()


def adj(a):
    return np.conj(np.swapaxes(a, -1, -2))


def assert_np_close(x, y, dtype, scale=1.0):
    rtol, atol = tol(dtype)
    np.testing.assert_allclose(x, y, rtol=rtol, atol=atol * scale)


# ---------------------------------------------------------------- factorizations vs the CPU
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_cholesky_det_slogdet_inv_solve_match_cpu(dtype, shape):
    c, g = both(spd(shape, dtype, 1))
    for upper in (False, True):
        close(ts.linalg.cholesky(c, upper=upper), ts.linalg.cholesky(g, upper=upper), dtype)
    close(ts.linalg.det(c), ts.linalg.det(g), dtype, scale=10.0 ** shape[-1])
    for a, b in zip(ts.linalg.slogdet(c), ts.linalg.slogdet(g)):
        close(a, b, dtype)
    close(ts.linalg.inv(c), ts.linalg.inv(g), dtype)
    bc, bg = both(randn(*(shape[:-1] + (2,)), dtype=dtype, generator=np.random.default_rng(2)))
    close(ts.linalg.solve(c, bc), ts.linalg.solve(g, bg), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_general_lu_paths_match_cpu(dtype):
    # Non-symmetric, pivoting inputs, a transposed (non-contiguous) view, a broadcast batch and
    # a vector right-hand side.
    a = randn(3, 6, 6, dtype=dtype, generator=np.random.default_rng(3)) + 2 * np.eye(6, dtype=dtype)
    c, g = both(a)
    ct, gt = c.mT, g.mT
    close(ts.linalg.det(ct), ts.linalg.det(gt), dtype, scale=100.0)
    for x, y in zip(ts.linalg.slogdet(ct), ts.linalg.slogdet(gt)):
        close(x, y, dtype)
    close(ts.linalg.inv(ct), ts.linalg.inv(gt), dtype)
    bc, bg = both(randn(2, 1, 6, 4, dtype=dtype, generator=np.random.default_rng(4)))
    close(ts.linalg.solve(c, bc), ts.linalg.solve(g, bg), dtype)
    vc, vg = both(randn(6, dtype=dtype, generator=np.random.default_rng(5)))
    close(ts.linalg.solve(c, vc), ts.linalg.solve(g, vg), dtype)


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
@pytest.mark.parametrize("shape", [(2, 40, 40), (40, 40), (3, 33, 33)])
def test_large_matrices_take_the_unbatched_kernels(dtype, shape):
    # n > 32: cuSOLVER's per-matrix getrf/getrs and syevd instead of the batched small-matrix
    # calls (cuBLAS LU, syevjBatched) that the other tests exercise.
    c, g = both(spd(shape, dtype, 22))
    close(ts.linalg.inv(c), ts.linalg.inv(g), dtype)
    for x, y in zip(ts.linalg.slogdet(c), ts.linalg.slogdet(g)):
        close(x, y, dtype, scale=10.0)
    bc, bg = both(randn(*(shape[:-1] + (3,)), dtype=dtype, generator=np.random.default_rng(23)))
    close(ts.linalg.solve(c, bc), ts.linalg.solve(g, bg), dtype)
    close(ts.linalg.cholesky(c), ts.linalg.cholesky(g), dtype)
    close(ts.linalg.eigvalsh(c), ts.linalg.eigvalsh(g), dtype, scale=100.0)
    close(ts.linalg.svdvals(c), ts.linalg.svdvals(g), dtype, scale=100.0)
    singular = np.ones(shape, dtype=dtype)
    sc, sg = both(singular)
    close(ts.linalg.det(sc), ts.linalg.det(sg), dtype)
    assert raised(ts.linalg.inv, sg) == raised(ts.linalg.inv, sc)


@pytest.mark.parametrize("dtype", DTYPES)
def test_singular_det_is_zero_with_sign_zero(dtype):
    a = np.ones((2, 3, 3), dtype=dtype)
    a[1] = np.eye(3)
    c, g = both(a)
    close(ts.linalg.det(c), ts.linalg.det(g), dtype)
    sc, lc = ts.linalg.slogdet(c)
    sg, lg = ts.linalg.slogdet(g)
    close(sc, sg, dtype)
    np.testing.assert_array_equal(host(lg), host(lc))  # -inf and 0 exactly


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_eigh_eigvalsh_match_cpu(dtype, shape):
    c, g = both(spd(shape, dtype, 6) - 2 * np.eye(shape[-1], dtype=dtype))
    close(ts.linalg.eigvalsh(c), ts.linalg.eigvalsh(g), dtype, scale=10.0)
    wc, _ = ts.linalg.eigh(c)
    w, v = ts.linalg.eigh(g)
    close(wc, w, dtype, scale=10.0)
    assert v.dtype == g.dtype and v.shape == g.shape and str(v.device) == DEV
    a, wn, vn = host(g), host(w), host(v)
    assert_np_close(a @ vn, vn * wn[..., None, :], dtype, scale=10.0)
    assert_np_close(adj(vn) @ vn, np.broadcast_to(np.eye(shape[-1]), vn.shape), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4), (2, 4, 6), (0, 3, 2), (3, 0),
                                   (0, 3), (1, 1)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_matches_cpu(dtype, shape, mode):
    c, g = both(randn(*shape, dtype=dtype, generator=np.random.default_rng(7)))
    qc, rc = ts.linalg.qr(c, mode=mode)
    q, r = ts.linalg.qr(g, mode=mode)
    assert (q.shape, r.shape, q.dtype, r.dtype) == (qc.shape, rc.shape, qc.dtype, rc.dtype)
    assert str(q.device) == DEV and str(r.device) == DEV
    qn, rn = host(q), host(r)
    assert_np_close(qn @ rn, host(c), dtype)
    assert_np_close(adj(qn) @ qn, np.broadcast_to(np.eye(qn.shape[-1]), qn.shape[:-2] +
                                                  (qn.shape[-1],) * 2), dtype)
    assert_np_close(np.triu(rn), rn, dtype)
    assert_np_close(np.abs(rn), np.abs(host(rc)), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4), (2, 4, 6), (0, 3, 2), (3, 0),
                                   (1, 1)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_svdvals_match_cpu(dtype, shape, full):
    c, g = both(randn(*shape, dtype=dtype, generator=np.random.default_rng(8)))
    close(ts.linalg.svdvals(c), ts.linalg.svdvals(g), dtype)
    uc, sc, vhc = ts.linalg.svd(c, full_matrices=full)
    u, s, vh = ts.linalg.svd(g, full_matrices=full)
    for x, y in ((uc, u), (sc, s), (vhc, vh)):
        assert (x.shape, x.dtype) == (y.shape, y.dtype) and str(y.device) == DEV
    close(sc, s, dtype)
    un, sn, vn = host(u), host(s), host(vh)
    k = sn.shape[-1]
    assert_np_close((un[..., :, :k] * sn[..., None, :]) @ vn[..., :k, :], host(c), dtype)
    for m in (un, adj(vn)):
        assert_np_close(adj(m) @ m, np.broadcast_to(np.eye(m.shape[-1]), m.shape[:-2] +
                                                    (m.shape[-1],) * 2), dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_inputs_compute_in_float32(dtype):
    a = spd((2, 3, 3), "float32", 9)
    c, g = ts.asarray(a).astype(getattr(ts, dtype)), ts.asarray(a, device=DEV).astype(getattr(ts, dtype))
    for f in (ts.linalg.cholesky, ts.linalg.inv, ts.linalg.det, ts.linalg.eigvalsh, ts.linalg.svdvals):
        x, y = f(c), f(g)
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_allclose(host(y.astype(ts.float32)), host(x.astype(ts.float32)), rtol=2e-2,
                                   atol=2e-2)


# ---------------------------------------------------------------- errors as on the CPU
def raised(f, *args):
    try:
        f(*args)
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("dtype", DTYPES)
def test_error_paths_raise_as_on_cpu(dtype):
    not_pd = -spd((2, 3, 3), dtype, 10)
    singular = np.ones((2, 3, 3), dtype=dtype)
    cases = [(ts.linalg.cholesky, not_pd), (ts.linalg.inv, singular),
             (lambda x: ts.linalg.solve(x, x), singular), (ts.linalg.cholesky, randn(3, 4, dtype=dtype, generator=np.random.default_rng(0))),
             (ts.linalg.det, randn(2, 3, dtype=dtype, generator=np.random.default_rng(0)))]
    for f, a in cases:
        c, g = both(a)
        rc, rg = raised(f, c), raised(f, g)
        assert rc is not None and rg == rc, (rc, rg)
    with pytest.raises(ts.linalg.LinAlgError):
        ts.linalg.cholesky(both(not_pd)[1])
    with pytest.raises(TypeError):
        ts.linalg.inv(ts.ones((2, 2), dtype=ts.int32, device=DEV))


def test_batch_entry_is_named_like_cpu():
    a = spd((3, 2, 2), "float64", 11)
    a[1] = -a[1]
    c, g = both(a)
    assert raised(ts.linalg.cholesky, g) == raised(ts.linalg.cholesky, c)
    assert "batch entry 1" in raised(ts.linalg.cholesky, g)[1]


# ---------------------------------------------------------------- autograd through CUDA linalg
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_autograd_matches_cpu(dtype):
    a = spd((2, 4, 4), dtype, 12)
    b = randn(2, 4, 3, dtype=dtype, generator=np.random.default_rng(13))
    tall = randn(2, 5, 3, dtype=dtype, generator=np.random.default_rng(14))

    def losses(x, y, t):
        yield ts.sum(ts.abs(ts.linalg.inv(x)))
        yield ts.sum(ts.abs(ts.linalg.cholesky(x)))
        yield ts.sum(ts.abs(ts.linalg.solve(x, y)))
        yield ts.sum(ts.linalg.slogdet(x)[1])
        yield ts.sum(ts.linalg.eigvalsh(x))
        yield ts.sum(ts.abs(ts.linalg.eigh(x)[1][..., 0, :]) ** 2 * ts.arange(4, dtype=ts.float64,
                                                                           device=x.device))
        q, r = ts.linalg.qr(t)
        yield ts.sum(ts.abs(r))
        yield ts.sum(ts.linalg.svdvals(t))
        if dtype == "float64":
            yield ts.sum(ts.linalg.det(x))

    def grads(device):
        xs = [ts.asarray(v, device=device, requires_grad=True) for v in (a, b, tall)]
        out = []
        for loss in losses(*xs):
            for v in xs:
                v.grad = None
            loss.backward()
            out.append([None if v.grad is None else host(v.grad) for v in xs])
        return out

    for gc, gg in zip(grads("cpu"), grads(DEV)):
        for x, y in zip(gc, gg):
            assert (x is None) == (y is None)
            if x is not None:
                np.testing.assert_allclose(y, x, rtol=1e-7, atol=1e-7)


# ---------------------------------------------------------------- fft through cuFFT
FFT_DTYPES = ["float32", "float64", "complex64", "complex128"]


def fft_close(cpu, gpu_t, dtype, n=1):
    rtol, atol = (1e-4, 1e-4 * np.sqrt(n)) if dtype in ("float32", "complex64") else (1e-10, 1e-10 * np.sqrt(n))
    assert str(gpu_t.device) == DEV
    assert gpu_t.dtype == cpu.dtype and gpu_t.shape == cpu.shape, (gpu_t.shape, cpu.shape)
    np.testing.assert_allclose(host(gpu_t), host(cpu), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", FFT_DTYPES)
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 1, 7, 16, 33])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_fft_1d_matches_cpu(dtype, norm, n, axis):
    c, g = both(randn(6, 10, 3, dtype=dtype, generator=np.random.default_rng(15)))
    for f in (ts.fft.fft, ts.fft.ifft):
        fft_close(f(c, n=n, axis=axis, norm=norm), f(g, n=n, axis=axis, norm=norm), dtype, 64)
    if not dtype.startswith("complex"):
        fft_close(ts.fft.rfft(c, n=n, axis=axis, norm=norm), ts.fft.rfft(g, n=n, axis=axis, norm=norm),
                  dtype, 64)
        fft_close(ts.fft.ihfft(c, n=n, axis=axis, norm=norm),
                  ts.fft.ihfft(g, n=n, axis=axis, norm=norm), dtype, 64)
    for f in (ts.fft.irfft, ts.fft.hfft):
        fft_close(f(c, n=n, axis=axis, norm=norm), f(g, n=n, axis=axis, norm=norm), dtype, 64)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [None, 8, 9, 2])
def test_irfft_drops_imaginary_dc_and_nyquist_like_cpu(dtype, n):
    # Arbitrary complex input (not a real signal's spectrum): the zero and Nyquist bins'
    # imaginary parts must be ignored as on the CPU; the input is left untouched.
    a = randn(4, 5, dtype=dtype, generator=np.random.default_rng(16))
    c, g = both(a)
    fft_close(ts.fft.irfft(c, n=n), ts.fft.irfft(g, n=n), dtype, 16)
    np.testing.assert_array_equal(host(g), a)


@pytest.mark.parametrize("dtype", FFT_DTYPES)
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_fft_nd_matches_cpu(dtype, norm):
    c, g = both(randn(4, 6, 5, dtype=dtype, generator=np.random.default_rng(17)))
    for f in (ts.fft.fftn, ts.fft.ifftn):
        fft_close(f(c, norm=norm), f(g, norm=norm), dtype, 128)
        # fft2's transform: the last two axes
        fft_close(f(c, axes=(-2, -1), norm=norm), f(g, axes=(-2, -1), norm=norm), dtype, 128)
    fft_close(ts.fft.fftn(c, s=(3, 8), axes=(0, 2), norm=norm),
              ts.fft.fftn(g, s=(3, 8), axes=(0, 2), norm=norm), dtype, 128)
    fft_close(ts.fft.irfftn(c, norm=norm), ts.fft.irfftn(g, norm=norm), dtype, 128)
    fft_close(ts.fft.irfftn(c, s=(5, 7), norm=norm), ts.fft.irfftn(g, s=(5, 7), norm=norm), dtype, 128)
    if not dtype.startswith("complex"):
        fft_close(ts.fft.rfftn(c, norm=norm), ts.fft.rfftn(g, norm=norm), dtype, 128)
        fft_close(ts.fft.rfftn(c, axes=(-2, -1), norm=norm),
                  ts.fft.rfftn(g, axes=(-2, -1), norm=norm), dtype, 128)
        fft_close(ts.fft.rfftn(c, s=(3, 4), norm=norm), ts.fft.rfftn(g, s=(3, 4), norm=norm), dtype,
                  128)


@pytest.mark.parametrize("shape,axis", [((3, 1000), -1), ((1000, 3), 0), ((2, 257, 64), 1),
                                        ((64, 257, 2), 1), ((5,), 0)])
def test_fft_layouts_and_sizes(shape, axis):
    # Long, prime-length and strided (middle-axis) transforms, both batch orders of the
    # middle-axis layout, non-contiguous input, and the plan cache's reuse on a second call.
    c, g = both(randn(*shape, dtype="complex128", generator=np.random.default_rng(18)))
    for _ in range(2):
        fft_close(ts.fft.fft(c, axis=axis), ts.fft.fft(g, axis=axis), "complex128", 1000)
    ct, gt = both(randn(*(shape[::-1]), dtype="float64", generator=np.random.default_rng(19)))
    fft_close(ts.fft.rfft(ct.mT if ct.ndim > 1 else ct, axis=axis),
              ts.fft.rfft(gt.mT if gt.ndim > 1 else gt, axis=axis), "float64", 1000)


def test_fft_autograd_matches_cpu():
    a = randn(3, 8, dtype="float64", generator=np.random.default_rng(20))

    def grad(device):
        x = ts.asarray(a, device=device, requires_grad=True)
        loss = ts.sum(ts.abs(ts.fft.rfft(x, norm="ortho")) ** 2) + ts.sum(ts.fft.irfft(ts.fft.fft(x)))
        loss.backward()
        return host(x.grad)

    np.testing.assert_allclose(grad(DEV), grad("cpu"), rtol=1e-9, atol=1e-9)


def test_fft_errors_as_on_cpu():
    c, g = both(randn(4, dtype="float32", generator=np.random.default_rng(21)))
    for f in (lambda x: ts.fft.fft(x, n=0), lambda x: ts.fft.fft(x, norm="bad"),
              lambda x: ts.fft.rfft(x.astype(ts.complex64))):
        rc, rg = raised(f, c), raised(f, g)
        assert rc is not None and rc == rg, (rc, rg)
    # Integer input is promoted to the default float (torch) on both devices.
    ci, gi = ts.fft.fft(c.astype(ts.int32)), ts.fft.fft(g.astype(ts.int32))
    assert ci.dtype == gi.dtype == ts.complex64
    np.testing.assert_allclose(host(gi), host(ci), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nonfinite_inputs_behave_as_on_cpu(dtype):
    # Note [Non-finite factorizations]: svd/svdvals raise, cholesky raises for a NaN pivot (as
    # PyTorch), det gives NaN; a NaN off the pivots leaves cholesky's NaNs in place.
    a = np.array([[[np.nan, 1.0], [1.0, 2.0]], [[2.0, 1.0], [1.0, 2.0]]], dtype=dtype)
    c, g = both(a)
    for f in (ts.linalg.svd, ts.linalg.svdvals, lambda x: ts.linalg.svd(x.mT),
              ts.linalg.cholesky):
        rc, rg = raised(f, c), raised(f, g)
        assert rc is not None and rc == rg, (rc, rg)
    assert np.isnan(host(ts.linalg.det(g))[0])
    close(ts.linalg.det(c), ts.linalg.det(g), dtype)
    b = np.array([[[2.0, np.nan], [np.nan, 2.0]], [[2.0, 1.0], [1.0, 2.0]]], dtype=dtype)
    c, g = both(b)
    rc, rg = raised(ts.linalg.cholesky, c), raised(ts.linalg.cholesky, g)
    assert rc == rg, (rc, rg)
    if rc is None:
        close(ts.linalg.cholesky(c), ts.linalg.cholesky(g), dtype)
