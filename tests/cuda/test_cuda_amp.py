"""ts.autocast("cuda") and ts.amp.GradScaler("cuda") on CUDA tensors, against the same
computation on the CPU (PyTorch's CUDA lists: matmul-type ops in float16/bfloat16, softmax,
layer_norm, losses and exp/log-type ops in float32)."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts
import tessera.nn.functional as F
from harness import randn, rng

pytestmark = pytest.mark.skipif(not ts.cuda.is_available(), reason="no CUDA device")


def cuda(a: np.ndarray) -> ts.Tensor:
    return ts.asarray(a).to("cuda")


def host(x: ts.Tensor) -> np.ndarray:
    return x.to("cpu").astype(ts.float32).numpy()


@pytest.mark.parametrize("dtype", [ts.float16, ts.bfloat16])
def test_lower_precision_ops_on_cuda(dtype: object) -> None:
    a, b, w, bias = randn(4, 8), randn(8, 5), randn(6, 8), randn(6)
    img, k = randn(2, 3, 8, 8), randn(4, 3, 3, 3)
    q = randn(2, 2, 5, 8)
    with ts.autocast("cuda", dtype=dtype):
        assert ts.is_autocast_enabled("cuda") and ts.get_autocast_dtype("cuda") == dtype
        outs = {"matmul": ts.matmul(cuda(a), cuda(b)), "operator": cuda(a) @ cuda(b),
                "linear": F.linear(cuda(a), cuda(w), cuda(bias)),
                "conv2d": F.conv2d(cuda(img), cuda(k)),
                "sdpa": F.scaled_dot_product_attention(cuda(q), cuda(q), cuda(q))}
    want = {"matmul": a @ b, "operator": a @ b, "linear": a @ w.T + bias,
            "conv2d": host(F.conv2d(ts.asarray(img), ts.asarray(k))),
            "sdpa": host(F.scaled_dot_product_attention(ts.asarray(q), ts.asarray(q), ts.asarray(q)))}
    for name, out in outs.items():
        assert out.dtype == dtype and out.device.type == "cuda", name
        np.testing.assert_allclose(host(out), want[name], rtol=5e-2, atol=5e-2, err_msg=name)


def test_float32_ops_on_cuda() -> None:
    x = randn(4, 10)
    y = rng.integers(0, 10, 4)
    x16 = cuda(x).astype(ts.float16)
    with ts.autocast("cuda"):
        outs = {"softmax": F.softmax(x16, dim=-1), "log_softmax": F.log_softmax(x16, dim=-1),
                "layer_norm": F.layer_norm(x16, (10,)),
                "cross_entropy": F.cross_entropy(x16, cuda(y)),
                "mse_loss": F.mse_loss(x16, x16 * 0.5), "sum": ts.sum(x16),
                "softmax_dtype": F.softmax(x16, dim=-1, dtype=ts.float16),
                "exp": ts.exp(x16), "log1p_method": (x16 * x16).log1p(), "pow": x16 ** 2,
                "rpow": 2 ** x16, "relu": F.relu(x16), "add": x16 + x16}
    xr = ts.asarray(x).astype(ts.float16).astype(ts.float32)  # the same (rounded) inputs
    want = {"softmax": F.softmax(xr, dim=-1), "log_softmax": F.log_softmax(xr, dim=-1),
            "layer_norm": F.layer_norm(xr, (10,)), "cross_entropy": F.cross_entropy(xr, ts.asarray(y)),
            "mse_loss": F.mse_loss(xr, xr * 0.5), "sum": ts.sum(xr), "softmax_dtype": F.softmax(xr, dim=-1),
            "exp": ts.exp(xr), "log1p_method": (xr * xr).log1p(), "pow": xr ** 2, "rpow": 2 ** xr,
            "relu": F.relu(xr), "add": xr + xr}
    for name, out in outs.items():
        # an explicit dtype wins; ops off the lists keep float16
        want_dtype = ts.float16 if name in ("softmax_dtype", "relu", "add") else ts.float32
        assert out.dtype == want_dtype, name
        np.testing.assert_allclose(host(out), want[name].numpy(), rtol=5e-3, atol=5e-3, err_msg=name)


def test_cpu_tensors_untouched_by_cuda_autocast_and_bce_banned() -> None:
    x = ts.ones((2, 2))
    with ts.autocast("cuda"):
        assert (x @ x).dtype == ts.float32
        with pytest.raises(RuntimeError, match="binary_cross_entropy_with_logits"):
            F.binary_cross_entropy(cuda(np.full((2, 2), 0.5, np.float32)), cuda(np.ones((2, 2), np.float32)))


def test_mlp_gradients_on_cuda_match_cpu_autocast_dtypes() -> None:
    w1, w2 = randn(16, 8) * 0.3, randn(4, 16) * 0.3
    xa = randn(6, 8)
    p = [ts.nn.Parameter(cuda(w1)), ts.nn.Parameter(cuda(w2))]
    with ts.autocast("cuda"):
        out = F.linear(F.relu(F.linear(cuda(xa), p[0])), p[1])
        assert out.dtype == ts.float16
        loss = F.mse_loss(out, ts.zeros_like(out))
    assert loss.dtype == ts.float32
    loss.backward()
    q = [ts.nn.Parameter(ts.asarray(w1)), ts.nn.Parameter(ts.asarray(w2))]
    ref = F.mse_loss(F.linear(F.relu(F.linear(ts.asarray(xa), q[0])), q[1]), ts.zeros((6, 4)))
    ref.backward()
    for a, b in zip(p, q):
        assert a.grad.dtype == ts.float32 and a.grad.device.type == "cuda"
        np.testing.assert_allclose(host(a.grad), b.grad.numpy(), rtol=5e-2, atol=5e-3)


def test_grad_scaler_on_cuda() -> None:
    w = randn(3, 4)
    p = ts.nn.Parameter(cuda(w))
    opt = ts.optim.SGD([p], lr=0.1)
    s = ts.amp.GradScaler("cuda", init_scale=2.0 ** 8, growth_interval=1)
    x = cuda(randn(5, 4))
    with ts.autocast("cuda"):
        loss = ts.sum(F.linear(x, p).astype(ts.float32) ** 2)
    scaled = s.scale(loss)
    assert scaled.device.type == "cuda"
    scaled.backward()
    s.step(opt)
    s.update()
    assert s.get_scale() == 2.0 ** 9  # grew after one clean step
    # the same step on the CPU, without scaling
    q = ts.nn.Parameter(ts.asarray(w))
    ref_opt = ts.optim.SGD([q], lr=0.1)
    ts.sum(F.linear(x.to("cpu"), q) ** 2).backward()
    ref_opt.step()
    np.testing.assert_allclose(host(p), q.numpy(), rtol=2e-2, atol=2e-2)
    # an inf gradient: skipped, scale backs off
    opt.zero_grad()
    before = host(p)
    s.scale(ts.sum(F.linear(x, p)) * float("inf")).backward()
    assert s.step(opt) is None
    s.update()
    np.testing.assert_array_equal(host(p), before)
    assert s.get_scale() == 2.0 ** 8


def test_composites_off_the_lists_keep_float16_on_cuda() -> None:
    # gelu/silu/elu are composites of pow/exp/tanh on CUDA: their insides must not autocast
    # (PyTorch runs them as float16 kernels); called directly, exp and sum do.
    x16 = cuda(randn(4, 6)).astype(ts.float16)
    with ts.autocast("cuda"):
        for f in (F.gelu, lambda t: F.gelu(t, approximate="tanh"), F.silu, F.elu, F.mish):
            assert f(x16).dtype == ts.float16
        assert F.softmax(x16, dim=-1, dtype=ts.float16).dtype == ts.float16
        assert x16.sum().dtype == ts.float32 and x16.cumsum(0).dtype == ts.float32
        assert ts.exp(x16).dtype == ts.float32 and x16.exp().dtype == ts.float32


@pytest.mark.parametrize("dtype", [ts.bfloat16, ts.float16])
@pytest.mark.parametrize("opts", [dict(), dict(label_smoothing=0.1), dict(reduction="sum"),
                                  dict(reduction="none", ignore_index=2), dict(weight=True),
                                  dict(weight=True, label_smoothing=0.2, reduction="none")])
@pytest.mark.parametrize("classes", [7, 3000])
def test_cross_entropy_reads_16bit_logits_under_autocast(dtype, opts, classes) -> None:
    """Note [Cross entropy on 16-bit logits]: under CUDA autocast, 16-bit logits go to the
    fused kernels as they are; the loss is float32 and equal (bit for bit) to the loss of the
    float32 cast, and the logits' gradient is the float32 gradient rounded once to their dtype,
    as the cast's backward gives it."""
    opts = dict(opts)
    n = 37
    logits = cuda(randn(n, classes) * 3).astype(dtype)
    target = cuda(rng.integers(0, min(classes, 5), n))
    if opts.pop("weight", False):
        opts["weight"] = cuda(np.abs(randn(classes)) + 0.5).astype(dtype)
    x1 = logits.detach().requires_grad_(True)
    with ts.autocast("cuda", dtype=dtype):
        loss = F.cross_entropy(x1, target, **opts)
    assert loss.dtype == ts.float32
    x2 = logits.detach().requires_grad_(True)
    ref_opts = dict(opts)
    if "weight" in ref_opts:
        ref_opts["weight"] = ref_opts["weight"].astype(ts.float32)
    ref = F.cross_entropy(x2.astype(ts.float32), target, **ref_opts)
    np.testing.assert_array_equal(host(loss), host(ref))
    gout = cuda(np.abs(randn(*loss.shape)) + 0.1) if loss.ndim else None
    loss.backward(gout)
    ref.backward(gout)
    assert x1.grad.dtype == dtype
    np.testing.assert_array_equal(host(x1.grad), host(x2.grad))
    # double backward goes through the float32 formula and reaches the 16-bit logits
    x3 = logits.detach().requires_grad_(True)
    with ts.autocast("cuda", dtype=dtype):
        l3 = F.cross_entropy(x3, target, **opts)
    (g3,) = ts.autograd.grad(l3.sum(), x3, create_graph=True)
    (gg,) = ts.autograd.grad((g3.astype(ts.float32) ** 2).sum(), x3)
    assert g3.dtype == dtype and gg.dtype == dtype
    x4 = logits.detach().requires_grad_(True)
    F.cross_entropy(x4.astype(ts.float32), target, **ref_opts).sum().backward()
    np.testing.assert_allclose(host(g3), host(x4.grad), rtol=2e-2, atol=1e-3)
    assert np.isfinite(host(gg)).all()
