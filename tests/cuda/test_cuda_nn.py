"""The fused nn kernels on CUDA (csrc/cuda/nn_*_kernels.cu): every op's forward and backward on
the GPU equals the CPU kernel's result on the same inputs, for the four float dtypes and row
lengths that take each kernel layout (a warp per row with vector loads or without, a block per
row), and a bad cross-entropy target raises IndexError at the next synchronization."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from harness import randn64, rng

pytestmark = pytest.mark.skipif(not ts.cuda.is_available(), reason="no CUDA device")


# Tolerance relative to the reference's largest magnitude: the kernels round the same float
# (double) results, but sum rows in another order, which may move the last bit.
TOL = {"float64": 1e-12, "float32": 2e-5, "float16": 3e-3, "bfloat16": 2e-2}
DTYPES = list(TOL)
# 1: one element a lane; 65: vocab-sized, no vector loads; 256/1000/1024: registers, vector
# loads where n allows; 1025/4097: a block per row; 0: empty rows.
NS = [1, 65, 256, 1000, 1024, 1025, 4097, 0]


def host(t: ts.Tensor) -> np.ndarray:
    return t.to("cpu").astype(ts.float64).numpy()


def same(gpu: ts.Tensor, cpu: ts.Tensor, dtype: str, scale: float = 1.0) -> None:
    assert gpu.device.type == "cuda" and gpu.dtype == cpu.dtype
    assert tuple(gpu.shape) == tuple(cpu.shape)
    a, b = host(gpu), host(cpu)
    finite = np.isfinite(b)
    big = float(np.max(np.abs(b[finite]))) if finite.any() else 1.0
    np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype] * scale * max(big, 1.0))


def pair(a: np.ndarray, dtype: str):
    """The same values as a CPU tensor and a CUDA tensor of `dtype`."""
    c = ts.asarray(a).astype(getattr(ts, dtype))
    return c, c.to("cuda")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax(n, log, dtype) -> None:
    for rows in (1, 7):
        x, xg = pair(randn64(rows, n, scale=2), dtype)
        y, yg = _C._softmax_last(x, log), _C._softmax_last(xg, log)
        same(yg, y, dtype)
        g, gg = pair(randn64(rows, n, scale=2), dtype)
        same(_C._softmax_last_backward(yg, gg, log), _C._softmax_last_backward(y, g, log), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_unaligned_rows_and_extremes(dtype) -> None:
    """A view starting one element into its buffer cannot take the vector loads."""
    flat = randn64(1 + 3 * 256, scale=2)
    x, xg = pair(flat, dtype)
    x, xg = ts.reshape(x[1:], (3, 256)), ts.reshape(xg[1:], (3, 256))
    same(_C._softmax_last(xg, False), _C._softmax_last(x, False), dtype)
    odd = np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0], [-np.inf, -np.inf, -np.inf]])
    x, xg = pair(odd, dtype)
    for log in (False, True):
        a, b = host(_C._softmax_last(xg, log)), host(_C._softmax_last(x, log))
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=TOL[dtype], atol=1e-30)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(1, 1), (5, 7), (7, 5), (65, 65), (256, 256), (3, 1000),
                                 (2, 4097), (4, 0)])
def test_attention_softmax(L, S, causal, dtype) -> None:
    s, sg = pair(randn64(2, L, S, scale=2), dtype)
    y, yg = _C._attention_softmax(s, 0.37, causal), _C._attention_softmax(sg, 0.37, causal)
    same(yg, y, dtype)
    g, gg = pair(randn64(2, L, S, scale=2), dtype)
    same(_C._attention_softmax_backward(yg, gg, 0.37), _C._attention_softmax_backward(y, g, 0.37),
         dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 65, 256, 384, 1000, 1024, 1025, 4097])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_layer_norm(n, affine, dtype) -> None:
    for rows in (1, 7, 300):
        x, xg = pair(randn64(rows, n, scale=2) + 1, dtype)
        w, wg = pair(randn64(n, scale=2), dtype) if affine != "none" else (None, None)
        b, bg = pair(randn64(n, scale=2), dtype) if affine == "both" else (None, None)
        y, mean, rstd = _C._layer_norm(x, n, w, b, 1e-5)
        yg, meang, rstdg = _C._layer_norm(xg, n, wg, bg, 1e-5)
        same(yg, y, dtype)
        same(meang, mean, "float64" if dtype == "float64" else "float32")
        same(rstdg, rstd, "float64" if dtype == "float64" else "float32")
        g, gg = pair(randn64(rows, n, scale=2), dtype)
        ref = _C._layer_norm_backward(g, x, mean, rstd, w, b is not None)
        out = _C._layer_norm_backward(gg, xg, meang, rstdg, wg, bg is not None)
        for o, r in zip(out, ref):
            assert (o is None) == (r is None)
            if r is not None:
                same(o, r, dtype, scale=4.0)


def test_layer_norm_weight_gradient_is_deterministic() -> None:
    x = ts.asarray(randn64(4096, 384, scale=2), device="cuda")
    w = ts.asarray(randn64(384, scale=2), device="cuda")
    y, mean, rstd = _C._layer_norm(x, 384, w, w, 1e-5)
    g = ts.asarray(randn64(4096, 384, scale=2), device="cuda")
    first = _C._layer_norm_backward(g, x, mean, rstd, w, True)
    for _ in range(3):
        again = _C._layer_norm_backward(g, x, mean, rstd, w, True)
        for a, b in zip(again, first):
            np.testing.assert_array_equal(host(a), host(b))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 65, 1000, 4097, 0])
def test_gelu_and_relu_backward(n, dtype) -> None:
    x, xg = pair(randn64(n, scale=2) * 2, dtype)
    g, gg = pair(randn64(n, scale=2), dtype)
    for approx in (False, True):
        same(_C._gelu(xg, approx), _C._gelu(x, approx), dtype)
        same(_C._gelu_backward(xg, gg, approx), _C._gelu_backward(x, g, approx), dtype)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0])
    y, yg = pair(np.concatenate([randn64(n, scale=2), special]), dtype)
    g, gg = pair(randn64(n + special.size, scale=2), dtype)
    np.testing.assert_array_equal(host(_C._relu_backward(yg, gg)), host(_C._relu_backward(y, g)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("C", [1, 65, 1000, 2048, 2049, 4097])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_op(C, weighted, smoothing, dtype) -> None:
    rows = 9
    x, xg = pair(randn64(rows, C, scale=2), dtype)
    t = rng.integers(0, C, rows)
    t[::4] = -100
    tc, tg = ts.asarray(t), ts.asarray(t, device="cuda")
    w, wg = pair(rng.random(C) + 0.2, dtype) if weighted else (None, None)
    ref = _C._cross_entropy(x, tc, w, -100, smoothing)
    out = _C._cross_entropy(xg, tg, wg, -100, smoothing)
    same(out[0], ref[0], dtype)
    same(out[1], ref[1], "float64" if dtype == "float64" else "float32")
    same(out[2], ref[2], dtype)
    g, gg = pair(randn64(rows, scale=2), dtype)
    same(_C._cross_entropy_backward(gg, xg, tg, wg, out[1], -100, smoothing),
         _C._cross_entropy_backward(g, x, tc, w, ref[1], -100, smoothing), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_functional_paths_on_cuda(dtype) -> None:
    """F.cross_entropy (class indices, every reduction) and SDPA on CUDA take the fused
    kernels and give the CPU's values and gradients."""
    x = randn64(4, 65, 3, scale=2)
    t = rng.integers(0, 65, (4, 3))
    t[0, 0] = -100
    for red in ("mean", "sum", "none"):
        xc, xg = pair(x, dtype)
        xc.requires_grad_(True)
        xg.requires_grad_(True)
        lc = F.cross_entropy(xc, ts.asarray(t), reduction=red, label_smoothing=0.1)
        lg = F.cross_entropy(xg, ts.asarray(t, device="cuda"), reduction=red, label_smoothing=0.1)
        same(lg, lc, dtype)
        lc.sum().backward()
        lg.sum().backward()
        same(xg.grad, xc.grad, dtype)
    # Small scores: a last-bit difference of a 16-bit matmul moves softmax little.
    q, k, v = randn64(2, 4, 16, 8, scale=2) * 0.3, randn64(2, 4, 16, 8, scale=2) * 0.3, randn64(2, 4, 16, 8, scale=2)
    for causal in (False, True):
        cpu, gpu = zip(*(pair(a, dtype) for a in (q, k, v)))
        for a in cpu + gpu:
            a.requires_grad_(True)
        yc = F.scaled_dot_product_attention(*cpu, is_causal=causal)
        yg = F.scaled_dot_product_attention(*gpu, is_causal=causal)
        same(yg, yc, dtype, scale=2.0)
        yc.sum().backward()
        yg.sum().backward()
        for a, b in zip(gpu, cpu):
            same(a.grad, b.grad, dtype, scale=4.0)


def test_cross_entropy_bad_target_raises_at_next_sync() -> None:
    x = ts.asarray(randn64(4, 5, scale=2), device="cuda")
    bad = ts.asarray([0, 7, 1, 2], device="cuda")
    loss = F.cross_entropy(x, bad)  # no host round trip here
    with pytest.raises(IndexError, match=r"cross_entropy: target 7 is out of range \[0, 5\)"):
        loss.item()
    # The report is cleared: the device still works and later results are right.
    good = np.array([0, 4, 1, 2])
    ref = F.cross_entropy(ts.asarray(host(x)), ts.asarray(good)).item()
    assert abs(F.cross_entropy(x, ts.asarray(good, device="cuda")).item() - ref) < 1e-5
    neg = F.cross_entropy(x, ts.asarray([0, -3, 1, 2], device="cuda"), reduction="none")
    with pytest.raises(IndexError, match="target -3 is out of range"):
        host(neg)
    assert abs(F.cross_entropy(x, ts.asarray(good, device="cuda")).item() - ref) < 1e-5


# ---- sliding windows (csrc/cuda/nn_window_kernels.cu)
WINDOWS = [  # (N, C, H, W), (kh, kw), stride, padding, dilation
    ((2, 3, 7, 9), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((1, 2, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1)),
    ((2, 1, 11, 6), (3, 2), (2, 3), (1, 0), (2, 1)),
    ((1, 4, 5, 5), (5, 5), (1, 1), (2, 2), (1, 1)),
    ((3, 2, 1, 13), (1, 4), (1, 3), (0, 1), (1, 2)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,k,s,p,d", WINDOWS)
def test_im2col_col2im(dtype, shape, k, s, p, d) -> None:
    x, xg = pair(randn64(*shape, scale=2), dtype)
    cols, colsg = _C._im2col(x, k, s, p, d), _C._im2col(xg, k, s, p, d)
    same(colsg, cols, dtype)
    c, h, w = shape[1:]
    # col2im gathers taps in the CPU's order, so even its sums match to the last bit.
    back, backg = _C._col2im(cols, c, h, w, k, s, p, d), _C._col2im(colsg, c, h, w, k, s, p, d)
    np.testing.assert_array_equal(host(backg), host(back))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,k,s,p,d", WINDOWS)
def test_max_pool_with_indices_and_backward(dtype, shape, k, s, p, d) -> None:
    if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
        pytest.skip("PyTorch's rule: padding at most half the kernel")
    a = randn64(*shape, scale=2)
    a[0, 0, 0, :2] = np.nan  # NaN wins, the last NaN's index
    a.reshape(-1)[5::7] = a.reshape(-1)[4::7][: a.reshape(-1)[5::7].size]  # ties: first wins
    x, xg = pair(a, dtype)
    ho = (shape[2] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    wo = (shape[3] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    y, idx = _C._max_pool2d(x, k, s, p, d, ho, wo)
    yg, idxg = _C._max_pool2d(xg, k, s, p, d, ho, wo)
    np.testing.assert_array_equal(host(yg), host(y))
    np.testing.assert_array_equal(idxg.cpu().numpy(), idx.numpy())
    g, gg = pair(randn64(*y.shape, scale=2), dtype)
    same(_C._max_pool2d_backward(gg, idxg, shape[2], shape[3]),
         _C._max_pool2d_backward(g, idx, shape[2], shape[3]), dtype)


def test_max_pool_backward_reports_a_bad_index() -> None:
    g = ts.ones((1, 1, 2, 2), device="cuda")
    idx = ts.asarray(np.array([[[[0, 1], [2, 9]]]]), device="cuda")
    with pytest.raises(IndexError, match="max_pool2d_backward: index 9"):
        _C._max_pool2d_backward(g, idx, 2, 2)
        ts.cuda.synchronize()
    assert float(ts.sum(ts.ones(3, device="cuda"))) == 3.0  # the device stays usable


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_and_pool_layers_train_on_cuda_like_cpu(dtype) -> None:
    """Conv2d (im2col + GEMM), ConvTranspose2d (col2im), MaxPool2d: outputs and gradients."""
    grads = []
    for dev in ["cpu", "cuda"]:
        ts.manual_seed(0)
        net = ts.nn.Sequential(ts.nn.Conv2d(3, 4, 3, padding=1), ts.nn.ReLU(), ts.nn.MaxPool2d(2),
                               ts.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1))
        net = net.to(dev).to(getattr(ts, dtype))
        x = ts.asarray(np.random.default_rng(1).standard_normal((2, 3, 8, 8)), device=dev).astype(getattr(ts, dtype))
        y = net(x)
        ts.sum(y * y).backward()
        grads.append([host(y)] + [host(p.grad) for p in net.parameters()])
    for c, g in zip(*grads):
        np.testing.assert_allclose(g, c, rtol=1e-5 if dtype == "float32" else 1e-12,
                                   atol=(1e-4 if dtype == "float32" else 1e-10) * max(1, np.abs(c).max()))
