"""The CPU pad kernels (Note [Pad kernels] in csrc/ops/nn/pad.h): reflect, replicate and
circular padding of 1-3 trailing dims against PyTorch — values, first and second derivatives
(float64, also against finite differences), shapes with size-1 dims, reflect pads of size - 1,
negative pads (cropping), non-contiguous inputs, the 16-bit floats, and the errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings, strategies as st

import tessera as ts
from harness import double_backward_pairs, to_np, tt

F = ts.nn.functional
TF = torch.nn.functional
MODES = ["reflect", "replicate", "circular"]


@st.composite
def cases(draw):
    mode = draw(st.sampled_from(MODES))
    k = draw(st.integers(1, 3))
    batch = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    spatial = draw(st.lists(st.integers(1, 5), min_size=k, max_size=k))
    pad = []
    for n in reversed(spatial):  # pairs from the last dim
        lim = n - 1 if mode == "reflect" else n
        left, right = draw(st.integers(-n, lim)), draw(st.integers(-n, lim))
        # PyTorch's circular padding wraps what the crop leaves, and reads uninitialized memory
        # (or raises) when that is smaller than a pad: tessera raises there (test_errors)
        assume(mode != "circular" or max(left, right) <= n + min(left, 0) + min(right, 0))
        # PyTorch raises for an empty 1-D reflect/replicate result but not for 2-D/3-D ones;
        # tessera returns the empty tensor
        assume(n + left + right > 0)
        pad += [left, right]
    layout = draw(st.sampled_from(["plain", "transpose", "step"]))
    return mode, tuple(batch + spatial), tuple(pad), layout


def _layout(a: np.ndarray, layout: str) -> np.ndarray:
    if layout == "transpose":
        return np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
    if layout == "step":
        return np.repeat(a, 2, axis=-1)[..., ::2]
    return a


def _run_both(x: np.ndarray, pad, mode):
    """(tessera result, torch result), or the two errors."""
    try:
        want = TF.pad(torch.tensor(x), pad, mode=mode)
    except (RuntimeError, ValueError, IndexError) as e:
        with pytest.raises((ValueError, RuntimeError, IndexError)):
            F.pad(tt(x), pad, mode=mode)
        return None, e
    return F.pad(tt(x), pad, mode=mode), want


@settings(max_examples=300, deadline=None)
@given(cases())
def test_values_and_gradients_match_torch(case) -> None:
    mode, shape, pad, layout = case
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    x = _layout(rng.standard_normal(shape), layout)
    got, want = _run_both(x, pad, mode)
    if got is None:
        return
    np.testing.assert_array_equal(to_np(got), want.numpy())
    xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    cot = rng.standard_normal(tuple(want.shape))
    (F.pad(xs, pad, mode=mode) * tt(cot)).sum().backward()
    (TF.pad(xt, pad, mode=mode) * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(to_np(xs.grad), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(cases())
def test_second_derivatives_match_torch(case) -> None:
    mode, shape, pad, layout = case
    x = _layout(np.random.default_rng(1).standard_normal(shape), layout)
    if _run_both(x, pad, mode)[0] is None:
        return
    # the square makes the gradient depend on x through pad_backward(pad(x))
    pairs = double_backward_pairs(lambda a: F.pad(a, pad, mode=mode) ** 2,
                                  lambda a: TF.pad(a, pad, mode=mode) ** 2, [x])
    for a, b in pairs:
        np.testing.assert_allclose(to_np(a), b.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape,pad", [((2, 5), (2, 3)), ((1, 2, 4, 3), (2, 1, -1, 3)),
                                       ((1, 1, 3, 2, 4), (1, 2, 1, 1, 2, -1))])
def test_finite_differences(mode, shape, pad) -> None:
    x = tt(np.random.default_rng(3).standard_normal(shape), requires_grad=True)
    f = lambda t: F.pad(t, pad, mode=mode) ** 2  # noqa: E731
    assert ts.autograd.gradcheck(f, (x,))
    assert ts.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_lower_precision_dtypes(mode, dtype) -> None:
    x = np.random.default_rng(4).standard_normal((2, 3, 6, 7)).astype(np.float32)
    pad = (3, 2, 1, 4)
    tdt = getattr(torch, dtype)
    xs = tt(x).to(getattr(ts, dtype)).requires_grad_(True)
    xt = torch.tensor(x).to(tdt).requires_grad_(True)
    ys, yt = F.pad(xs, pad, mode=mode), TF.pad(xt, pad, mode=mode)
    assert str(ys.dtype).endswith(dtype)
    np.testing.assert_array_equal(to_np(ys.to(ts.float32)), yt.float().detach().numpy())
    cot = np.random.default_rng(5).standard_normal(tuple(yt.shape)).astype(np.float32)
    (ys * tt(cot).to(getattr(ts, dtype))).sum().backward()
    (yt * torch.tensor(cot).to(tdt)).sum().backward()
    # up to 4 cotangents meet in a corner: tessera adds them in float (one rounding)
    tol = {"float32": 1e-6, "float16": 2e-3, "bfloat16": 2e-2}[dtype]
    np.testing.assert_allclose(to_np(xs.grad.to(ts.float32)), xt.grad.float().numpy(),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("mode,pad,shape", [("reflect", (3, 0), (1, 3)), ("reflect", (0, -4), (1, 3)),
                                            ("circular", (4, 0), (1, 3)), ("circular", (-4, 0), (1, 3)),
                                            ("replicate", (1, 0), (1, 0)), ("replicate", (-2, -2), (1, 3))])
def test_errors(mode, pad, shape) -> None:
    with pytest.raises(ValueError, match="pad: "):
        F.pad(tt(np.zeros(shape)), pad, mode=mode)


# (the node names are the CPU kernels'; CUDA pads through the composite)
@pytest.mark.cpu_only
def test_empty_batch_and_grad_fn() -> None:
    x = tt(np.zeros((0, 2, 3)), requires_grad=True)
    y = F.pad(x, (1, 2), mode="reflect")
    assert tuple(y.shape) == (0, 2, 6)
    y.sum().backward()
    assert tuple(x.grad.shape) == (0, 2, 3)
    z = F.pad(tt(np.ones((1, 2, 3)), requires_grad=True), (1, 1), mode="replicate")
    assert "Pad" in type(z.grad_fn).__name__ or "Pad" in str(z.grad_fn)
