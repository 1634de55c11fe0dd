"""Convolutions, pooling and batch norm on CUDA against tessera's CPU kernels (themselves
tested against PyTorch in nn/test_conv_ops.py, nn/test_pool_ops.py, nn/test_batch_norm.py).

Every convolution case runs twice: through cuDNN (skipped where it does not load) and through
tessera's own CUDA kernels (``ts.backends.cudnn.enabled = False`` forces them), checking
``ts.backends.cudnn.last_conv_path()`` says which ran. float32 compares without TF32
(``allow_tf32 = False``) at float32 tolerances; bfloat16/float16 compare with the CPU's
float32 result on the same rounded inputs. Skips without a CUDA device (CI).
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator, List, Sequence, Tuple

import numpy as np
import pytest

import tessera as ts
from tessera import nn
from tessera.nn import functional as F

# TS_TEST_CONV_DEVICE=cpu runs the file CPU-against-CPU, to check the tests themselves
# where there is no GPU.
DEV = os.environ.get("TS_TEST_CONV_DEVICE", "cuda")
pytestmark = pytest.mark.skipif(DEV == "cuda" and not ts.cuda.is_available(),
                                reason="no CUDA device")

CUDNN = ts.backends.cudnn


@contextlib.contextmanager
def conv_path(path: str) -> Iterator[None]:
    """'cudnn' (skips without it) or 'fallback' (tessera's kernels); float32 without TF32."""
    if path == "cudnn" and not CUDNN.is_available():
        pytest.skip(f"cuDNN does not load here: {CUDNN.load_error()}")
    old = CUDNN.enabled, CUDNN.allow_tf32
    CUDNN.enabled, CUDNN.allow_tf32 = path == "cudnn", False
    try:
        yield
    finally:
        CUDNN.enabled, CUDNN.allow_tf32 = old


PATHS = ["cudnn", "fallback"]
# (cuDNN may decline a problem, which then runs on tessera's kernels: the result is checked
# either way; test_cudnn_switches_steer_the_path checks cuDNN takes the common case.)
EXPECTED = {"cudnn": {"cudnn", "cuda_gemm", "cuda_depthwise"},
            "fallback": {"cuda_gemm", "cuda_depthwise"}}
if DEV == "cpu":
    EXPECTED = {"cudnn": {"cpu"}, "fallback": {"cpu"}}


def npf(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().to(ts.float32).numpy(), dtype=np.float64)


def rand(shape: Sequence[int], seed: int, dtype: Any = ts.float32) -> Any:
    r = np.random.default_rng(seed)
    return ts.asarray(r.standard_normal(shape).astype(np.float32)).to(dtype)


def tol(dtype: Any) -> Tuple[float, float]:
    # (float32: cuDNN may pick Winograd or FFT engines, a few 1e-5 off.)
    return {ts.float32: (5e-4, 5e-4), ts.float64: (1e-10, 1e-10), ts.bfloat16: (4e-2, 4e-2),
            ts.float16: (1e-2, 1e-2)}[dtype]


def close(got: Any, want: Any, dtype: Any, what: str, scale: float = 1.0) -> None:
    g, w = npf(got), npf(want)
    assert g.shape == w.shape, (what, g.shape, w.shape)
    rtol, atol = tol(dtype)
    mag = max(1.0, float(np.abs(w).max()) if w.size else 1.0) * scale
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * mag, err_msg=what)


def run_both(fn: Callable[..., Any], inputs: List[Any], dtype: Any, grads: bool = True) -> None:
    """fn(*inputs) on CUDA (in `dtype`) and on the CPU (float32 of the same rounded values),
    outputs and (if `grads`) the gradients of sum(y * r) for a random r compared."""
    cpu_in = [x.detach().to(dtype).to(ts.float32 if dtype != ts.float64 else ts.float64).clone()
              for x in inputs]
    gpu_in = [x.detach().to(dtype).to(DEV).clone() for x in inputs]
    for t in cpu_in + gpu_in:
        t.requires_grad_(grads)
    y_cpu, y_gpu = fn(*cpu_in), fn(*gpu_in)
    assert y_gpu.device.type == ts.device(DEV).type and y_gpu.dtype == dtype
    close(y_gpu, y_cpu, dtype, "output")
    if not grads:
        return
    r = rand(y_cpu.shape, 99).to(dtype)
    (y_cpu * r.to(y_cpu.dtype)).sum().backward()
    (y_gpu * r.to(DEV)).sum().backward()
    for i, (a, b) in enumerate(zip(gpu_in, cpu_in)):
        # Gradients sum over many products: scale the tolerance with the reduction length.
        close(a.grad, b.grad, dtype, f"grad of input {i}", scale=4.0)


# ---------------------------------------------------------------- convolutions
CONV_CASES = [
    # (name, x shape, w shape, kwargs, F function)
    ("conv1d", (4, 6, 33), (8, 6, 5), dict(stride=2, padding=2), F.conv1d),
    ("conv1d_dil_groups", (3, 6, 20), (9, 2, 3), dict(dilation=3, groups=3, padding=1), F.conv1d),
    ("conv2d", (2, 8, 17, 15), (12, 4, 3, 3),
     dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2), F.conv2d),
    ("conv2d_pointwise", (3, 16, 8, 8), (32, 16, 1, 1), {}, F.conv2d),
    ("conv2d_pointwise_strided", (3, 16, 9, 9), (8, 16, 1, 1), dict(stride=2), F.conv2d),
    ("conv2d_same", (2, 5, 11, 10), (7, 5, 4, 3), dict(padding="same", dilation=2), F.conv2d),
    ("conv2d_valid", (2, 5, 11, 10), (7, 5, 3, 3), dict(padding="valid"), F.conv2d),
    ("conv2d_resnet", (8, 64, 16, 16), (64, 64, 3, 3), dict(padding=1), F.conv2d),
    ("conv2d_depthwise", (2, 16, 12, 12), (16, 1, 3, 3), dict(padding=1, groups=16), F.conv2d),
    ("conv2d_depthwise_x2", (2, 8, 11, 9), (16, 1, 5, 3),
     dict(stride=2, padding=(2, 1), groups=8), F.conv2d),
    ("conv3d", (2, 4, 6, 7, 5), (6, 4, 3, 3, 2), dict(stride=(1, 2, 1), padding=1), F.conv3d),
    ("conv3d_groups", (1, 6, 5, 5, 5), (4, 3, 2, 2, 2), dict(groups=2, dilation=2), F.conv3d),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_conv_float32(case: Any, path: str) -> None:
    name, xs, wsh, kw, fn = case
    x, w, b = rand(xs, 1), rand(wsh, 2), rand((wsh[0],), 3)
    with conv_path(path):
        run_both(lambda x, w, b: fn(x, w, b, **kw), [x, w, b], ts.float32)
        assert CUDNN.last_conv_path() in EXPECTED[path]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", [ts.bfloat16, ts.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("case", [c for c in CONV_CASES if c[0] in (
    "conv1d", "conv2d", "conv2d_resnet", "conv2d_depthwise", "conv3d", "conv2d_pointwise")],
    ids=lambda c: c[0])
def test_conv_half(case: Any, dtype: Any, path: str) -> None:
    name, xs, wsh, kw, fn = case
    x, w, b = rand(xs, 4), rand(wsh, 5), rand((wsh[0],), 6)
    with conv_path(path):
        run_both(lambda x, w, b: fn(x, w, b, **kw), [x, w, b], dtype)


def test_conv_float64_fallback() -> None:
    x, w = rand((2, 3, 9, 9), 7).to(ts.float64), rand((4, 3, 3, 3), 8).to(ts.float64)
    with conv_path("fallback"):
        run_both(lambda x, w: F.conv2d(x, w, stride=2, padding=1), [x, w], ts.float64)


TRANSPOSE_CASES = [
    ("ct1d", (3, 6, 10), (6, 4, 3), dict(stride=2, padding=1, output_padding=1),
     F.conv_transpose1d),
    ("ct2d", (2, 8, 7, 6), (8, 3, 3, 4),
     dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=1),
     F.conv_transpose2d),
    ("ct2d_dil", (2, 4, 5, 5), (4, 5, 3, 3), dict(stride=2, dilation=2), F.conv_transpose2d),
    ("ct3d", (1, 4, 4, 5, 3), (4, 2, 3, 3, 3), dict(stride=2, padding=1), F.conv_transpose3d),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=[c[0] for c in TRANSPOSE_CASES])
def test_conv_transpose(case: Any, path: str) -> None:
    name, xs, wsh, kw, fn = case
    cout = wsh[1] * kw.get("groups", 1)
    x, w, b = rand(xs, 11), rand(wsh, 12), rand((cout,), 13)
    with conv_path(path):
        run_both(lambda x, w, b: fn(x, w, b, **kw), [x, w, b], ts.float32)
        run_both(lambda x, w, b: fn(x, w, b, **kw), [x, w, b], ts.bfloat16)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", [ts.float32, ts.bfloat16], ids=["fp32", "bf16"])
def test_conv_channels_last(path: str, dtype: Any) -> None:
    x, w, b = rand((4, 16, 10, 9), 21), rand((24, 16, 3, 3), 22), rand((24,), 23)
    with conv_path(path):
        xg = x.to(dtype).to(DEV).to(memory_format=ts.channels_last)
        wg = w.to(dtype).to(DEV).to(memory_format=ts.channels_last)
        y = F.conv2d(xg, wg, b.to(dtype).to(DEV), padding=1, stride=2)
        assert y.is_contiguous(memory_format=ts.channels_last)
        want = F.conv2d(x.to(dtype).float(), w.to(dtype).float(), b.to(dtype).float(),
                        padding=1, stride=2)
        close(y, want, dtype, "channels_last output")
        run_both(lambda x, w, b: F.conv2d(x.to(memory_format=ts.channels_last), w, b,
                                          padding=1), [x, w, b], dtype)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_module_padding_modes(mode: str) -> None:
    ts.manual_seed(0)
    m = nn.Conv2d(3, 5, 3, padding=2, padding_mode=mode, dilation=2)
    x = rand((2, 3, 9, 8), 31)
    want = m(x)
    m.to(DEV)
    with conv_path("fallback"):
        close(m(x.to(DEV)), want, ts.float32, mode)
    if CUDNN.is_available():
        with conv_path("cudnn"):
            close(m(x.to(DEV)), want, ts.float32, mode)


@pytest.mark.parametrize("path", PATHS)
def test_conv_noncontiguous_and_empty(path: str) -> None:
    x = rand((6, 10, 8, 4), 41)
    w = rand((5, 4, 3, 3), 42)
    with conv_path(path):
        run_both(lambda x, w: F.conv2d(x.transpose(1, 3), w, padding=1), [x, w], ts.float32)
        e = F.conv2d(ts.zeros((0, 4, 8, 8), device=DEV), w.to(DEV), padding=1)
        assert tuple(e.shape) == (0, 5, 8, 8)


def test_conv_tf32_is_close() -> None:
    x, w = rand((4, 32, 16, 16), 51), rand((32, 32, 3, 3), 52)
    want = F.conv2d(x, w, padding=1)
    for path in PATHS:
        if path == "cudnn" and not CUDNN.is_available():
            continue
        with conv_path(path):
            CUDNN.allow_tf32 = True
            got = F.conv2d(x.to(DEV), w.to(DEV), padding=1)
        np.testing.assert_allclose(npf(got), npf(want), rtol=2e-2, atol=2e-2 * 10)


def test_conv_errors_on_cuda() -> None:
    x = ts.zeros((1, 4, 5, 5), device=DEV)
    with pytest.raises(ValueError, match="conv2d"):
        F.conv2d(x, ts.zeros((2, 3, 3, 3), device=DEV))
    with pytest.raises(ValueError, match="larger than the padded input"):
        F.conv2d(x, ts.zeros((2, 4, 7, 7), device=DEV))
    if DEV == "cuda":
        with pytest.raises(ValueError, match="device|cuda"):
            F.conv2d(x, ts.zeros((2, 4, 3, 3)))


@pytest.mark.skipif(DEV != "cuda", reason="CUDA paths")
def test_cudnn_switches_steer_the_path() -> None:
    x, w = rand((2, 3, 8, 8), 61).to(DEV), rand((4, 3, 3, 3), 62).to(DEV)
    with conv_path("fallback"):
        F.conv2d(x, w)
        assert CUDNN.last_conv_path() == "cuda_gemm"
    F.conv2d(x.cpu(), w.cpu())
    assert CUDNN.last_conv_path() == "cpu"
    if CUDNN.is_available():
        assert CUDNN.version() >= 90000
        with conv_path("cudnn"):
            for bench, det in [(False, False), (True, False), (False, True)]:
                with CUDNN.flags(enabled=True, benchmark=bench, deterministic=det,
                                 allow_tf32=False):
                    y = F.conv2d(x, w, padding=1)
                    assert CUDNN.last_conv_path() == "cudnn"
                    close(y, F.conv2d(x.cpu(), w.cpu(), padding=1), ts.float32, "flags")


# ---------------------------------------------------------------- pooling
POOL_CASES = [
    ("max1d", lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True), (3, 4, 17)),
    ("max2d", lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), (2, 5, 13, 12)),
    ("max2d_ceil_dil", lambda x: F.max_pool2d(x, (3, 2), (2, 3), (1, 1), dilation=(2, 1),
                                              ceil_mode=True, return_indices=True),
     (2, 3, 14, 11)),
    ("max3d", lambda x: F.max_pool3d(x, 2, ceil_mode=True, return_indices=True), (2, 3, 5, 7, 6)),
    ("avg1d", lambda x: F.avg_pool1d(x, 4, 3, 2, ceil_mode=True, count_include_pad=False),
     (3, 4, 19)),
    ("avg2d", lambda x: F.avg_pool2d(x, 3, 2, 1), (2, 5, 13, 12)),
    ("avg2d_div", lambda x: F.avg_pool2d(x, (2, 3), (1, 2), (1, 1), ceil_mode=True,
                                         divisor_override=5), (2, 3, 9, 10)),
    ("avg3d", lambda x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False), (2, 3, 7, 6, 5)),
    ("amax1d", lambda x: F.adaptive_max_pool1d(x, 5, return_indices=True), (2, 3, 17)),
    ("amax2d", lambda x: F.adaptive_max_pool2d(x, (4, 3), return_indices=True), (2, 3, 13, 7)),
    ("amax2d_up", lambda x: F.adaptive_max_pool2d(x, (9, 8), return_indices=True), (2, 3, 5, 4)),
    ("amax3d", lambda x: F.adaptive_max_pool3d(x, 2, return_indices=True), (1, 3, 5, 6, 7)),
    ("aavg1d", lambda x: F.adaptive_avg_pool1d(x, 6), (2, 3, 17)),
    ("aavg2d", lambda x: F.adaptive_avg_pool2d(x, (1, 1)), (4, 8, 4, 4)),
    ("aavg2d_odd", lambda x: F.adaptive_avg_pool2d(x, (5, 3)), (2, 3, 13, 7)),
    ("aavg3d", lambda x: F.adaptive_avg_pool3d(x, (2, 3, 4)), (1, 3, 5, 6, 7)),
]


@pytest.mark.parametrize("dtype", [ts.float32, ts.bfloat16, ts.float16],
                         ids=["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("case", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pool(case: Any, dtype: Any) -> None:
    name, fn, shape = case
    x = rand(shape, 71)
    xc = x.to(dtype).to(ts.float32).clone()
    xg = x.to(dtype).to(DEV).clone()
    xc.requires_grad_(True)
    xg.requires_grad_(True)
    yc, yg = fn(xc), fn(xg)
    if isinstance(yc, tuple):
        (yc, ic), (yg, ig) = yc, yg
        assert ig.device.type == DEV
        if dtype == ts.float32:  # 16-bit rounding can make ties
            np.testing.assert_array_equal(ig.cpu().numpy(), ic.numpy())
    close(yg, yc, dtype, name)
    r = rand(yc.shape, 72).to(dtype)
    (yc * r.to(ts.float32)).sum().backward()
    (yg * r.to(DEV)).sum().backward()
    if dtype == ts.float32 or not name.startswith(("max", "amax")):
        close(xg.grad, xc.grad, dtype, name + " grad")


def layout_of(shape: Sequence[int]) -> Any:
    return ts.channels_last if len(shape) == 4 else ts.channels_last_3d


@pytest.mark.parametrize("dtype", [ts.float32, ts.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("case", [c for c in POOL_CASES if len(c[2]) >= 4],
                         ids=[c[0] for c in POOL_CASES if len(c[2]) >= 4])
def test_pool_channels_last(case: Any, dtype: Any) -> None:
    # Note [CUDA channels-last pools]: a channels-last input pools on CUDA without layout
    # copies; the output, the indices and the input's gradient stay channels-last (PyTorch's
    # rule), with the values of the contiguous CPU path.
    name, fn, shape = case
    fmt = layout_of(shape)
    x = rand(shape, 75)
    xc = x.to(dtype).to(ts.float32).clone().requires_grad_(True)
    xg = x.to(dtype).to(DEV).to(memory_format=fmt).detach().requires_grad_(True)
    assert xg.is_contiguous(memory_format=fmt) and not xg.is_contiguous()
    yc, yg = fn(xc), fn(xg)
    if isinstance(yc, tuple):
        (yc, ic), (yg, ig) = yc, yg
        assert ig.is_contiguous(memory_format=fmt), (name, ig.stride())
        if dtype == ts.float32:
            np.testing.assert_array_equal(ig.cpu().numpy(), ic.numpy())
    assert yg.is_contiguous(memory_format=fmt), (name, yg.stride())
    close(yg, yc, dtype, name)
    r = rand(yc.shape, 76).to(dtype)
    (yc * r.to(ts.float32)).sum().backward()
    (yg * r.to(DEV)).sum().backward()
    assert xg.grad.is_contiguous(memory_format=fmt), (name, xg.grad.stride())
    if dtype == ts.float32 or not name.startswith(("max", "amax")):
        close(xg.grad, xc.grad, dtype, name + " grad")
    # A contiguous input on the same device keeps the contiguous layout.
    xn = x.to(dtype).to(DEV).requires_grad_(True)
    yn = fn(xn)
    yn = yn[0] if isinstance(yn, tuple) else yn
    assert yn.is_contiguous()
    (yn * r.to(DEV)).sum().backward()
    assert xn.grad.is_contiguous()
    close(yn, yc, dtype, name + " contiguous")


def nonunit_strides(t: Any) -> List[Tuple[int, int]]:
    return [(d, s) for d, s in zip(t.shape, t.stride()) if d != 1]


def test_pool_and_activation_strides_match_torch() -> None:
    # The ResNet's pools, ReLU and residual add on a channels-last input: the strides of every
    # output and input gradient (size-1 dims aside) are PyTorch's.
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    x = rand((4, 16, 9, 8), 77)
    cases = [
        ("max", lambda f, v: f.max_pool2d(v, 3, 2, 1)),
        ("avg", lambda f, v: f.avg_pool2d(v, 2)),
        ("aavg1", lambda f, v: f.adaptive_avg_pool2d(v, 1)),
        ("aavg", lambda f, v: f.adaptive_avg_pool2d(v, (3, 2))),
        ("relu_add", lambda f, v: f.relu(v) + v * 2),
    ]
    for name, fn in cases:
        xt = torch.tensor(x.numpy()).to(memory_format=torch.channels_last).requires_grad_(True)
        yt = fn(TF, xt)
        (yt * 1.5).sum().backward()
        xg = x.to(DEV).to(memory_format=ts.channels_last).detach().requires_grad_(True)
        yg = fn(F, xg)
        (yg * 1.5).sum().backward()
        assert nonunit_strides(yg) == nonunit_strides(yt), (name, yg.stride(), yt.stride())
        assert nonunit_strides(xg.grad) == nonunit_strides(xt.grad), (
            name, xg.grad.stride(), xt.grad.stride())
        np.testing.assert_allclose(npf(yg), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(npf(xg.grad), xt.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_pool_channels_last_and_unpool() -> None:
    x = rand((2, 6, 10, 8), 81)
    xg = x.to(DEV).to(memory_format=ts.channels_last)
    y, i = F.max_pool2d(xg, 2, return_indices=True)
    yc, ic = F.max_pool2d(x, 2, return_indices=True)
    assert y.is_contiguous(memory_format=ts.channels_last)
    close(y, yc, ts.float32, "channels_last max")
    close(F.max_unpool2d(y, i, 2), F.max_unpool2d(yc, ic, 2), ts.float32, "unpool")
    a = F.avg_pool2d(xg, 3, 1, 1)
    assert a.is_contiguous(memory_format=ts.channels_last)
    close(a, F.avg_pool2d(x, 3, 1, 1), ts.float32, "channels_last avg")


# ---------------------------------------------------------------- normalization
@pytest.mark.parametrize("dtype", [ts.float32, ts.bfloat16, ts.float16],
                         ids=["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("shape", [(8, 16, 6, 5), (64, 32), (4, 3, 50), (2, 4, 3, 3, 3)],
                         ids=["2d", "1d", "1d_len", "3d"])
def test_batch_norm_train_and_eval(shape: Tuple[int, ...], dtype: Any) -> None:
    C = shape[1]
    x, w, b = rand(shape, 91), rand((C,), 92), rand((C,), 93)
    rm_c, rv_c = ts.zeros(C), ts.ones(C)
    rm_g, rv_g = rm_c.to(DEV), rv_c.to(DEV)
    calls = [0]  # run_both calls the CPU side first

    def buffers() -> Tuple[Any, Any]:
        calls[0] += 1
        return (rm_c, rv_c) if calls[0] % 2 == 1 else (rm_g, rv_g)

    def train(x: Any, w: Any, b: Any) -> Any:
        rm, rv = buffers()
        return F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2, eps=1e-4)

    run_both(train, [x, w, b], dtype)
    close(rm_g, rm_c, dtype, "running_mean")
    close(rv_g, rv_c, dtype, "running_var")

    def evaluate(x: Any, w: Any, b: Any) -> Any:
        rm, rv = buffers()
        return F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-4)

    run_both(evaluate, [x, w, b], dtype)


def test_batch_norm_large_channel_stats() -> None:
    # Many values per channel (the split reduction) and an offset mean (cancellation).
    x = rand((64, 4, 32, 32), 101) * 3 + 100
    run_both(lambda x: F.batch_norm(x, None, None, training=True), [x], ts.float32)


def test_batch_norm_module_channels_last() -> None:
    ts.manual_seed(0)
    m = nn.BatchNorm2d(8)
    x = rand((4, 8, 6, 6), 111)
    want = m(x)
    m.to(DEV)
    m.running_mean.zero_()
    m.running_var.fill_(1.0)
    got = m(x.to(DEV).to(memory_format=ts.channels_last))
    assert got.is_contiguous(memory_format=ts.channels_last)
    close(got, want, ts.float32, "module")
    m.eval()
    m_cpu = nn.BatchNorm2d(8)
    m_cpu.load_state_dict({k: v.cpu() for k, v in m.state_dict().items()})
    m_cpu.eval()
    close(m(x.to(DEV)), m_cpu(x), ts.float32, "eval")


@pytest.mark.parametrize("dtype", [ts.float32, ts.bfloat16], ids=["fp32", "bf16"])
def test_group_and_instance_norm(dtype: Any) -> None:
    x, w, b = rand((3, 8, 5, 6), 121), rand((8,), 122), rand((8,), 123)
    run_both(lambda x, w, b: F.group_norm(x, 4, w, b), [x, w, b], dtype)
    run_both(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), [x, w, b], dtype)


# ---------------------------------------------------------------- a small CNN end to end
@pytest.mark.parametrize("path", PATHS)
def test_small_cnn_training_step_matches_cpu(path: str) -> None:
    def build() -> Any:
        ts.manual_seed(3)
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                             nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, groups=8, padding=1),
                             nn.Conv2d(8, 16, 1), nn.BatchNorm2d(16), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 4))

    x, y = rand((8, 3, 16, 16), 131), ts.asarray(np.arange(8) % 4)
    results = []
    with conv_path(path):
        for dev in ("cpu", DEV):
            m = build().to(dev)
            opt = ts.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
            for _ in range(2):
                opt.zero_grad()
                loss = F.cross_entropy(m(x.to(dev)), y.to(dev))
                loss.backward()
                opt.step()
            results.append([npf(p) for p in m.parameters()] + [npf(loss)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
