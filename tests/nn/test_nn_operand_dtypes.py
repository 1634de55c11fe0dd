"""nn ops taking a weight do not promote mixed dtypes: PyTorch raises, so does tessera.

F.linear, F.bilinear, torch.cdist, F.prelu, F.layer_norm, F.group_norm, F.nll_loss,
F.cross_entropy, F.multi_margin_loss, F.binary_cross_entropy and
F.scaled_dot_product_attention against PyTorch
over pairs of dtypes: the same error class when torch raises (a mismatch), the same values and
dtype when it does not (matching dtypes; 16-bit inputs with float32 norm parameters; a BCE
weight of another dtype; BCE with logits, which promotes). ts.matmul / ts.add still promote
(the array-API standard, docs/design.md).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tessera as ts
import tessera.nn.functional as F
from harness import compare_grads, randn, same_as_torch

torch = pytest.importorskip("torch")
import torch.nn.functional as TF  # noqa: E402

DTYPES = ["float32", "float64", "bfloat16", "int64"]
FLOATS = ["float32", "float64", "bfloat16"]


def fn(m):
    return TF if m is torch else F


def mk(m, a, dtype):
    return m.tensor(np.asarray(a, dtype=np.float64)).to(getattr(m, dtype))


def agree(call) -> None:
    """call(m) in torch and tessera: both raise (tessera's class an instance of torch's), or
    both return tensors of the same dtype and close values."""
    try:
        want = call(torch)
    except Exception as e:  # noqa: BLE001 - the class is what we compare
        with pytest.raises(type(e)) as got:
            call(ts)
        assert "dtype" in str(got.value), got.value
        return
    got = call(ts)
    assert str(got.dtype).replace("tessera.", "").replace("torch.", "") == \
        str(want.dtype).replace("torch.", ""), (got.dtype, want.dtype)
    tol = 3e-2 if "bfloat16" in str(want.dtype) else 1e-5
    np.testing.assert_allclose(np.asarray(got.to(ts.float64).numpy()),
                               want.to(torch.float64).detach().numpy(), rtol=tol, atol=tol)


dt = st.sampled_from(DTYPES)
fdt = st.sampled_from(FLOATS)
maybe = st.one_of(st.none(), st.sampled_from(DTYPES))


@settings(max_examples=30, deadline=None)
@given(x=dt, w=dt, b=maybe, lead=st.sampled_from([(), (3,), (2, 3)]))
def test_linear(x, w, b, lead) -> None:
    a, wt, bias = randn(*lead, 4), randn(5, 4), randn(5)
    agree(lambda m: fn(m).linear(mk(m, a, x), mk(m, wt, w),
                                 None if b is None else mk(m, bias, b)))


@settings(max_examples=20, deadline=None)
@given(x1=st.sampled_from(["float32", "float64"]), x2=st.sampled_from(["float32", "float64"]),
       p=st.sampled_from([1.0, 2.0, 3.0]))
def test_cdist(x1, x2, p) -> None:
    a, b = randn(3, 4), randn(2, 4)
    agree(lambda m: m.cdist(mk(m, a, x1), mk(m, b, x2), p=p))


def test_cdist_integer_raises() -> None:
    same_as_torch(lambda m: m.cdist(m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)))


@settings(max_examples=30, deadline=None)
@given(x=fdt, w=st.one_of(st.none(), fdt), b=st.one_of(st.none(), fdt))
def test_layer_norm(x, w, b) -> None:
    a, wt, bias = randn(3, 4), randn(4), randn(4)
    agree(lambda m: fn(m).layer_norm(mk(m, a, x), (4,), None if w is None else mk(m, wt, w),
                                     None if b is None else mk(m, bias, b)))


@settings(max_examples=30, deadline=None)
@given(x=fdt, w=st.one_of(st.none(), fdt), b=st.one_of(st.none(), fdt))
def test_group_norm(x, w, b) -> None:
    a, wt, bias = randn(2, 4, 3), randn(4), randn(4)
    agree(lambda m: fn(m).group_norm(mk(m, a, x), 2, None if w is None else mk(m, wt, w),
                                     None if b is None else mk(m, bias, b)))


@pytest.mark.parametrize("op", ["layer_norm", "group_norm"])
def test_norm_mixed_precision_gradients(op) -> None:
    """A bfloat16 input with float32 parameters: computed in float32, bfloat16 out, gradients
    in each operand's dtype."""
    a, wt, bias = randn(2, 4, 3), randn(4 if op == "group_norm" else 3), randn(
        4 if op == "group_norm" else 3)

    def run(m):
        x = mk(m, a, "bfloat16").requires_grad_()
        w, b = mk(m, wt, "float32").requires_grad_(), mk(m, bias, "float32").requires_grad_()
        y = (fn(m).group_norm(x, 2, w, b) if op == "group_norm"
             else fn(m).layer_norm(x, (3,), w, b))
        (y.to(m.float32) * mk(m, np.linspace(-1, 1, y.numel()).reshape(y.shape), "float32")
         ).sum().backward()
        return y, x.grad, w.grad, b.grad

    for got, want in zip(run(ts), run(torch)):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(got.detach().to(ts.float64).numpy(),
                                   want.detach().to(torch.float64).numpy(), rtol=5e-2, atol=5e-2)


@settings(max_examples=30, deadline=None)
@given(x=fdt, t=dt, w=maybe)
def test_binary_cross_entropy(x, t, w) -> None:
    p, y, wt = 0.05 + 0.9 * np.random.default_rng(1).random((3, 4)), \
        np.random.default_rng(2).integers(0, 2, (3, 4)), randn(3, 4) ** 2
    agree(lambda m: fn(m).binary_cross_entropy(mk(m, p, x), mk(m, y, t),
                                               None if w is None else mk(m, wt, w)))


@settings(max_examples=20, deadline=None)
@given(x=st.sampled_from(["float32", "float64"]), t=st.sampled_from(["float32", "float64"]))
def test_binary_cross_entropy_with_logits_accepts_mixed(x, t) -> None:
    """torch does not raise here; its result takes the target's dtype (an in-place product),
    tessera's the promoted one: the values are compared."""
    a, y = randn(3, 4), np.random.default_rng(3).random((3, 4))
    got, want = (fn(m).binary_cross_entropy_with_logits(mk(m, a, x), mk(m, y, t))
                 for m in (ts, torch))
    np.testing.assert_allclose(float(got), float(want), rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(x1=fdt, x2=fdt, w=fdt, b=st.one_of(st.none(), fdt))
def test_bilinear(x1, x2, w, b) -> None:
    a1, a2, wt, bias = randn(2, 3), randn(2, 4), randn(5, 3, 4), randn(5)
    agree(lambda m: fn(m).bilinear(mk(m, a1, x1), mk(m, a2, x2), mk(m, wt, w),
                                   None if b is None else mk(m, bias, b)))


@settings(max_examples=20, deadline=None)
@given(x=fdt, w=fdt)
def test_prelu(x, w) -> None:
    a, wt = randn(2, 4, 3), randn(4)
    agree(lambda m: fn(m).prelu(mk(m, a, x), mk(m, wt, w)))


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(["nll_loss", "cross_entropy", "cross_entropy_smooth",
                           "cross_entropy_probs", "multi_margin_loss"]),
       x=st.sampled_from(["float32", "float64"]), w=st.sampled_from(["float32", "float64"]))
def test_class_weight(op, x, w) -> None:
    a, wt, probs = randn(3, 4), randn(4) ** 2, np.full((3, 4), 0.25)
    target = [0, 3, 1]

    def call(m):
        f, xs, ws = fn(m), mk(m, a, x), mk(m, wt, w)
        t = m.tensor(target)
        if op == "cross_entropy_smooth":
            return f.cross_entropy(xs, t, weight=ws, label_smoothing=0.1)
        if op == "cross_entropy_probs":  # probability targets: torch promotes
            return f.cross_entropy(xs, mk(m, probs, x), weight=ws)
        return getattr(f, op)(xs, t, weight=ws)

    agree(call)


@settings(max_examples=20, deadline=None)
@given(q=fdt, k=fdt, v=fdt)
def test_scaled_dot_product_attention(q, k, v) -> None:
    a, b, c = randn(1, 2, 3, 4), randn(1, 2, 3, 4), randn(1, 2, 3, 4)
    agree(lambda m: fn(m).scaled_dot_product_attention(mk(m, a, q), mk(m, b, k), mk(m, c, v)))


@settings(max_examples=30, deadline=None)
@given(x=fdt, stats=fdt, training=st.booleans())
def test_batch_norm_running_stats(x, stats, training) -> None:
    a = randn(2, 4, 3)
    agree(lambda m: fn(m).batch_norm(mk(m, a, x), mk(m, np.zeros(4), stats),
                                     mk(m, np.ones(4), stats), training=training))


def test_instance_norm_running_stats_of_another_dtype_accepted() -> None:
    a = randn(2, 4, 3)
    agree(lambda m: fn(m).instance_norm(mk(m, a, "float32"), mk(m, np.zeros(4), "float64"),
                                        mk(m, np.ones(4), "float64"), use_input_stats=True))


def test_matching_dtype_gradients_float64() -> None:
    x, w, b = randn(3, 4), randn(5, 4), randn(5)
    compare_grads(lambda x, w, b: F.linear(x, w, b), lambda x, w, b: TF.linear(x, w, b),
                  [x, w, b])
    compare_grads(lambda x, w, b: F.layer_norm(x, (4,), w, b),
                  lambda x, w, b: TF.layer_norm(x, (4,), w, b), [x, randn(4), randn(4)])
    compare_grads(lambda x, y: ts.cdist(x, y), lambda x, y: torch.cdist(x, y), [x, w])


def test_array_api_namespace_still_promotes() -> None:
    a = ts.ones((2, 3), dtype=ts.float32)
    assert ts.matmul(a, ts.ones((3, 2), dtype=ts.float64)).dtype == ts.float64
    assert ts.add(a, ts.ones(3, dtype=ts.float64)).dtype == ts.float64
