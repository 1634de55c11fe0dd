"""F.dropout, dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout as C++ bindings
(csrc/python/bind_dropout.cpp, csrc/ops/nn/dropout.cpp) and torch's top-level forms
(ts.dropout(input, p, train), ts.feature_dropout, ts.alpha_dropout,
ts.feature_alpha_dropout: csrc/python/bind_torch_nn.cpp): one definition each, PyTorch's
signatures, masks per channel, the identity in eval mode, in-place writes under autograd, the
statistics of alpha dropout, gradients, and the errors naming the op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
import tessera.nn.functional as F
from tessera import _C
from harness import randn, to_np

NAMES = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
         "feature_alpha_dropout"]


@pytest.mark.parametrize("name", NAMES)
def test_the_binding_is_the_function(name) -> None:
    assert getattr(F, name) is getattr(_C, name)
    ours = inspect.signature(getattr(F, name)).parameters
    want = inspect.signature(getattr(TF, name)).parameters
    assert list(ours) == list(want)
    assert [p.default for p in ours.values()][1:] == [p.default for p in want.values()][1:]


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_top_level_forms(name) -> None:
    assert list(inspect.signature(getattr(ts, name)).parameters) == ["input", "p", "train"]
    x = ts.ones((4, 3, 5))
    assert getattr(ts, name)(x, 0.3, False) is not None
    np.testing.assert_array_equal(to_np(getattr(ts, name)(x, 0.0, True)), to_np(x))
    y = to_np(getattr(ts, name)(x, 1.0, True))
    want = to_np(getattr(torch, name)(torch.ones(4, 3, 5), 1.0, True))
    np.testing.assert_allclose(y, want, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_eval_and_p0_return_the_input_object(name) -> None:
    x = ts.asarray(randn(2, 3, 4) if name == "dropout1d" else randn(2, 3, 4, 5, 2))
    training_off = getattr(F, name)(x, 0.5, False)
    assert training_off is x
    assert getattr(F, name)(x, 0.0, True) is x


@settings(max_examples=20, deadline=None)
@given(nsp=st.sampled_from([1, 2, 3]), batched=st.booleans(), n=st.integers(0, 3),
       c=st.integers(1, 6), side=st.integers(1, 3), dtype=st.sampled_from(["float32", "float64"]),
       flip=st.booleans())
def test_channel_masks(nsp, batched, n, c, side, dtype, flip) -> None:
    shape = ((n,) if batched else ()) + (c,) + (side,) * nsp
    x = ts.asarray(np.abs(randn(*shape, dtype=np.dtype(dtype))) + 1.0)
    if flip:
        x = ts.flip(x, axis=-1)
    y = getattr(F, f"dropout{nsp}d")(x, 0.4)
    assert y.dtype == x.dtype and y.shape == x.shape
    if n == 0 and batched:
        return
    ratio = to_np(y) / to_np(x)
    lead = 2 if batched else 1
    flat = ratio.reshape(shape[:lead] + (-1,))
    assert np.allclose(flat, flat[..., :1])  # whole channels
    assert np.all((flat == 0) | np.isclose(flat, 1 / 0.6, rtol=1e-6))


def test_dropout2d_of_other_ranks_follows_torch() -> None:
    # PyTorch (with a warning): a 2-D input is unbatched (C, L); each row is one channel. The
    # Python version dropped all or nothing.
    x = ts.ones((400, 3))
    y = to_np(F.dropout2d(x, 0.5))
    assert np.all(y == y[:, :1])
    assert 0.3 < (y[:, 0] == 0).mean() < 0.7


def test_feature_dropout_of_2d_input_follows_torch() -> None:
    # torch.feature_dropout: a (N, C) input drops each element of (N, C) (the Python version
    # treated it as unbatched dropout1d, one value per row).
    y = to_np(ts.feature_dropout(ts.ones((30, 40)), 0.5, True))
    assert not np.all(y == y[:, :1])
    z = to_np(ts.feature_dropout(ts.ones((30, 40, 5)), 0.5, True))
    assert np.all(z == z[..., :1])


@pytest.mark.parametrize("name", ["dropout", "dropout2d", "alpha_dropout"])
def test_inplace_under_autograd(name) -> None:
    leaf = ts.asarray(np.abs(randn(8, 6, 3, 3)) + 1.0, requires_grad=True)
    x = leaf * 1.0
    y = getattr(F, name)(x, 0.5, True, True)
    assert y is x
    y.sum().backward()
    g = to_np(leaf.grad)
    assert g.shape == (8, 6, 3, 3) and np.any(g != 1.0)
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(F, name)(leaf, 0.5, True, True)
    with ts.no_grad():
        z = ts.ones((4, 5, 2, 2))
        assert getattr(F, name)(z, 0.5, True, True) is z


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_statistics_and_gradient(feature) -> None:
    x = ts.asarray(randn(64, 32, 8, dtype=np.float64), requires_grad=True)
    f = F.feature_alpha_dropout if feature else F.alpha_dropout
    y = f(x, 0.2, True)
    yn = to_np(y)
    assert abs(yn.mean()) < 0.1 and abs(yn.std() - 1) < 0.1
    y.sum().backward()
    g = to_np(x.grad)
    # the gradient is the per-element scale: 0 where dropped, a where kept
    a = 1.0 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8)
    assert np.all(np.isclose(g, 0) | np.isclose(g, a))
    if feature:
        assert np.all(g == g[..., :1])
    np.testing.assert_allclose(to_np(f(x, 1.0, True)), np.zeros((64, 32, 8)))


def test_dropout_gradient_is_the_mask() -> None:
    x = ts.asarray(randn(20, 30, dtype=np.float64), requires_grad=True)
    y = F.dropout(x, 0.25)
    y.sum().backward()
    keep = to_np(y) != 0
    np.testing.assert_allclose(to_np(x.grad), np.where(keep, 1 / 0.75, 0.0))
    e = ts.asarray(np.zeros((0, 3, 4)))
    for name in NAMES[:3]:
        assert getattr(F, name)(e, 0.5).shape == (0, 3, 4)


@pytest.mark.parametrize("call,cls,match", [
    (lambda: F.dropout(ts.ones(3), 1.5), ValueError, r"dropout: probability has to be between"),
    (lambda: F.dropout(ts.ones(3), -0.1, False), ValueError, r"probability"),
    (lambda: F.dropout2d(ts.ones((2, 3, 4)), 2.0), ValueError, r"dropout2d: probability"),
    (lambda: F.dropout1d(ts.ones((2, 3, 4, 5)), 0.5), ValueError,
     r"dropout1d: expected a 2-D or 3-D input"),
    (lambda: F.dropout3d(ts.ones((2, 3)), 0.5), ValueError, r"dropout3d: expected a 4-D or 5-D"),
    (lambda: F.alpha_dropout(ts.ones(3), 7.0, True), ValueError, r"alpha_dropout: probability"),
    (lambda: F.feature_alpha_dropout(ts.ones(3), 0.5, True), ValueError,
     r"feature_alpha_dropout: expected an input of at least 2 dims"),
    (lambda: F.dropout("x"), TypeError, r"dropout"),
])
def test_errors_name_the_op(call, cls, match) -> None:
    with pytest.raises(cls, match=match):
        call()
