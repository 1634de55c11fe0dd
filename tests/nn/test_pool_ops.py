"""The C++ pooling ops (csrc/ops/pool.h) against PyTorch: max_pool{1,2,3}d (indices, ceil_mode,
dilation, padding) and avg_pool{1,2,3}d (count_include_pad, divisor_override, ceil_mode),
values and gradients, double backward, channels-last, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
import tessera.nn.functional as F
from harness import compare_fn, double_backward_pairs

TF = torch.nn.functional


@st.composite
def pool_cases(draw):
    nsp = draw(st.integers(1, 3))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    s = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    d = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    p = tuple(draw(st.integers(0, kk // 2)) for kk in k)
    size = tuple(draw(st.integers(3, 7)) for _ in range(nsp))
    return nsp, k, s, p, d, draw(st.booleans()), (draw(st.integers(0, 2)), 2) + size


@settings(max_examples=30, deadline=None)
@given(pool_cases(), st.integers(0, 2 ** 31))
def test_max_pool_matches_torch(case, seed):
    nsp, k, s, p, d, ceil, shape = case
    x = np.random.default_rng(seed).standard_normal(shape)
    tx, sx = torch.tensor(x, requires_grad=True), ts.tensor(x, requires_grad=True)
    try:
        ty, ti = getattr(TF, f"max_pool{nsp}d")(tx, k, s, p, d, ceil, True)
    except RuntimeError:
        with pytest.raises(ValueError):
            getattr(F, f"max_pool{nsp}d")(sx, k, s, p, d, ceil, True)
        return
    sy, si = getattr(F, f"max_pool{nsp}d")(sx, k, s, p, d, ceil, True)
    np.testing.assert_array_equal(sy.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(si.numpy(), ti.numpy())
    g = np.random.default_rng(seed + 1).standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    sy.backward(ts.tensor(g))
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(pool_cases(), st.booleans(), st.sampled_from([None, 3]), st.integers(0, 2 ** 31))
def test_avg_pool_matches_torch(case, cip, div, seed):
    nsp, k, s, p, _, ceil, shape = case
    x = np.random.default_rng(seed).standard_normal(shape)
    tx, sx = torch.tensor(x, requires_grad=True), ts.tensor(x, requires_grad=True)
    kw = dict(ceil_mode=ceil, count_include_pad=cip)
    if nsp > 1:
        kw["divisor_override"] = div
    try:
        ty = getattr(TF, f"avg_pool{nsp}d")(tx, k, s, p, **kw)
    except RuntimeError:
        with pytest.raises(ValueError):
            getattr(F, f"avg_pool{nsp}d")(sx, k, s, p, **kw)
        return
    sy = getattr(F, f"avg_pool{nsp}d")(sx, k, s, p, **kw)
    np.testing.assert_allclose(sy.detach().numpy(), ty.detach().numpy(), atol=1e-12)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    sy.backward(ts.tensor(g))
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("fn,tfn,shape", [
    (lambda x: F.max_pool2d(x, 2, 1, 1) ** 2, lambda x: TF.max_pool2d(x, 2, 1, 1) ** 2,
     (2, 2, 4, 4)),
    (lambda x: F.avg_pool2d(x, 3, 2, 1) ** 2, lambda x: TF.avg_pool2d(x, 3, 2, 1) ** 2,
     (2, 2, 5, 4)),
    (lambda x: F.max_pool3d(x, 2) ** 2, lambda x: TF.max_pool3d(x, 2) ** 2, (1, 2, 4, 4, 4)),
])
def test_pool_double_backward(fn, tfn, shape):
    raw = [np.random.default_rng(0).standard_normal(shape)]
    for a, b in double_backward_pairs(fn, tfn, raw):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-10)


def test_pool_channels_last_bfloat16_and_errors():
    x = np.random.default_rng(1).standard_normal((2, 3, 6, 6)).astype(np.float32)
    sy = F.max_pool2d(ts.tensor(x).to(memory_format=ts.channels_last), 2)
    assert sy.is_contiguous(memory_format=ts.channels_last)
    np.testing.assert_array_equal(sy.numpy(), TF.max_pool2d(torch.tensor(x), 2).numpy())
    ay = F.avg_pool2d(ts.tensor(x).astype(ts.bfloat16), 2)
    ty = TF.avg_pool2d(torch.tensor(x).bfloat16(), 2)
    np.testing.assert_allclose(ay.astype(ts.float32).numpy(), ty.float().numpy(), atol=2e-2)
    with pytest.raises(ValueError, match="max_pool2d: padding .* at most half"):
        F.max_pool2d(ts.zeros((1, 1, 4, 4)), 2, padding=2)
    with pytest.raises(ValueError, match=r"avg_pool2d: given input size .* too small"):
        F.avg_pool2d(ts.zeros((1, 1, 2, 2)), 3)
    with pytest.raises(ValueError, match="max_pool1d: .* must be positive"):
        F.max_pool1d(ts.zeros((1, 1, 4)), 2, stride=0)
    with pytest.raises(ValueError, match="divisor must be not zero"):
        F.avg_pool2d(ts.zeros((1, 1, 4, 4)), 2, divisor_override=0)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.data(), st.booleans(), st.integers(0, 2 ** 31))
def test_adaptive_pools_match_torch(nsp, data, is_max, seed):
    size = tuple(data.draw(st.integers(1, 7)) for _ in range(nsp))
    out = tuple(data.draw(st.integers(1, 5)) for _ in range(nsp))
    x = np.random.default_rng(seed).standard_normal((2, 3) + size)
    tx, sx = torch.tensor(x, requires_grad=True), ts.tensor(x, requires_grad=True)
    if is_max:
        ty, ti = getattr(TF, f"adaptive_max_pool{nsp}d")(tx, out, True)
        sy, si = getattr(F, f"adaptive_max_pool{nsp}d")(sx, out, True)
        np.testing.assert_array_equal(si.numpy(), ti.numpy())
    else:
        ty = getattr(TF, f"adaptive_avg_pool{nsp}d")(tx, out)
        sy = getattr(F, f"adaptive_avg_pool{nsp}d")(sx, out)
    np.testing.assert_allclose(sy.detach().numpy(), ty.detach().numpy(), atol=1e-12)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    sy.backward(ts.tensor(g))
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_avg_pool_is_the_cpp_op(nsp) -> None:
    # One definition (issue 17): F.avg_pool{n}d is the binding, with torch's parameters; its
    # argument forms (stride None or [], int or tuple sizes, divisor_override) and float64
    # gradients match torch's.
    import inspect
    from tessera import _C
    name = f"avg_pool{nsp}d"
    assert getattr(F, name) is getattr(_C, name)
    doc = getattr(torch.nn.functional, name).__doc__.strip().split("\n")[0]
    want = [a.split("=")[0].strip() for a in doc[doc.index("(") + 1:doc.rindex(")")].split(",")]
    assert list(inspect.signature(getattr(F, name)).parameters) == want
    x = np.random.default_rng(nsp).standard_normal((2, 3) + (5,) * nsp)
    kw = [dict(kernel_size=3), dict(kernel_size=(3,) * nsp, stride=[], padding=1),
          dict(kernel_size=2, stride=1, ceil_mode=True, count_include_pad=False)]
    if nsp > 1:
        kw.append(dict(kernel_size=2, stride=2, padding=1, divisor_override=3))
    for k in kw:
        compare_fn(lambda a: getattr(F, name)(a, **k),
                   lambda a: getattr(torch.nn.functional, name)(a, **k), x,
                   rtol=1e-10, atol=1e-12)
        assert ts.testing.gradcheck(lambda a: getattr(F, name)(a, **k),
                                    [ts.asarray(x[:1, :1], requires_grad=True)])
    if nsp > 1:
        with pytest.raises(ValueError, match="divisor must be not zero"):
            getattr(F, name)(ts.asarray(x), 2, divisor_override=0)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_max_pool_is_the_cpp_op(nsp) -> None:
    # One definition (issue 17): F.max_pool{n}d(_with_indices) are the bindings, with torch's
    # parameters; values, indices and float64 gradients match torch's.
    import inspect
    from tessera import _C
    for name in (f"max_pool{nsp}d", f"max_pool{nsp}d_with_indices"):
        assert getattr(F, name) is getattr(_C, name)
        assert list(inspect.signature(getattr(F, name)).parameters) == [
            "input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"]
    x = np.random.default_rng(nsp).standard_normal((2, 3) + (6,) * nsp)
    fs, ft = getattr(F, f"max_pool{nsp}d"), getattr(torch.nn.functional, f"max_pool{nsp}d")
    for k in [dict(kernel_size=3), dict(kernel_size=(3,) * nsp, stride=[], padding=1),
              dict(kernel_size=2, stride=1, dilation=2, ceil_mode=True)]:
        compare_fn(lambda a: fs(a, **k), lambda a: ft(a, **k), x, rtol=1e-10, atol=1e-12)
        ys, iis = getattr(F, f"max_pool{nsp}d_with_indices")(ts.asarray(x), **k)
        yt, it = ft(torch.tensor(x), return_indices=True, **k)
        np.testing.assert_array_equal(iis.numpy(), it.numpy())
        assert ts.testing.gradcheck(lambda a: fs(a, **k),
                                    [ts.asarray(x[:1, :1], requires_grad=True)])


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_max_pool_integer_input_as_torch(dtype) -> None:
    # Integer input runs the C++ kernel on the CPU, as PyTorch's: values and indices (the
    # Python window path this replaced refused return_indices=True for integers).
    x = np.random.default_rng(0).integers(0 if dtype == "uint8" else -100, 100,
                                          (2, 3, 7, 7)).astype(dtype)
    for k in [dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2, ceil_mode=True),
              dict(kernel_size=(2, 3), dilation=2)]:
        ys, iis = F.max_pool2d(ts.asarray(x), return_indices=True, **k)
        yt, it = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **k)
        assert str(ys.dtype) == dtype
        np.testing.assert_array_equal(ys.numpy(), yt.numpy())
        np.testing.assert_array_equal(iis.numpy(), it.numpy())
    y1 = F.max_pool1d(ts.asarray(x[0]), 2)  # (torch's has integers only with indices)
    np.testing.assert_array_equal(y1.numpy(), torch.nn.functional.max_pool1d(
        torch.tensor(x[0]), 2, return_indices=True)[0].numpy())


def test_max_pool_bool_input_is_refused_as_torch() -> None:
    x = np.ones((1, 1, 4, 4), dtype=bool)
    with pytest.raises(RuntimeError):
        torch.nn.functional.max_pool2d(torch.tensor(x), 2)
    with pytest.raises(TypeError, match="max_pool2d: expected a floating-point input"):
        F.max_pool2d(ts.asarray(x), 2)
