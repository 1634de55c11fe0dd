"""F.conv{1,2,3}d and F.conv_transpose{1,2,3}d as C++ bindings (csrc/python/bind_conv.cpp) and
torch's top-level nn functions of csrc/python/bind_torch_nn.cpp (torch.convolution, the RNN
cells, grid_sampler, affine_grid_generator, embedding, rrelu): one definition each, PyTorch's
signatures, values and float64 gradients against torch (hypothesis over shapes, strided and
empty inputs) and finite differences, and the errors naming the op."""
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
from tessera.autograd import gradcheck
from harness import compare_grads, randn, randn64, to_np

CONVS = [f"conv{n}d" for n in (1, 2, 3)] + [f"conv_transpose{n}d" for n in (1, 2, 3)]


@pytest.mark.parametrize("name", CONVS)
def test_the_binding_is_the_function(name) -> None:
    assert getattr(F, name) is getattr(_C, name) is getattr(ts, name)
    want = ["input", "weight", "bias", "stride", "padding", "dilation", "groups"] \
        if name.startswith("conv") and "transpose" not in name else \
        ["input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation"]
    assert list(inspect.signature(getattr(F, name)).parameters) == want


@settings(max_examples=30, deadline=None)
@given(nsp=st.sampled_from([1, 2, 3]), n=st.integers(0, 2), groups=st.sampled_from([1, 2]),
       k=st.integers(1, 3), stride=st.integers(1, 2), dilation=st.integers(1, 2),
       padding=st.sampled_from([0, 1, "same", "valid"]), bias=st.booleans(),
       flip=st.booleans(), batched=st.booleans())
def test_conv_matches_torch(nsp, n, groups, k, stride, dilation, padding, bias, flip,
                            batched) -> None:
    if padding == "same":
        stride = 1
    side = 2 + dilation * (k - 1)
    shape = ((n,) if batched else ()) + (2 * groups,) + (side,) * nsp
    x = randn(*shape)
    w = randn(3 * groups, 2, *(k,) * nsp)
    b = randn(3 * groups) if bias else None
    name = f"conv{nsp}d"
    xt, xu = ts.asarray(x), torch.tensor(x)
    if flip:
        xt, xu = ts.flip(xt, axis=-1), torch.flip(xu, [-1])
    args = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    got = getattr(F, name)(xt, ts.asarray(w), None if b is None else ts.asarray(b), **args)
    want = getattr(TF, name)(xu, torch.tensor(w), None if b is None else torch.tensor(b), **args)
    # float32 convolutions on CUDA use TF32 (ts.backends.cudnn.allow_tf32, True as PyTorch's)
    tol = 1e-4 if str(ts.get_default_device()) == "cpu" else 5e-3
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=tol, atol=tol)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_conv_transpose_and_convolution_match_torch(nsp) -> None:
    x, w, b = randn64(2, 4, *(3,) * nsp), randn64(4, 3, *(2,) * nsp), randn64(6)
    name = f"conv_transpose{nsp}d"
    compare_grads(lambda x, w, b: getattr(F, name)(x, w, b, 2, 1, 1, 2, 1),
                  lambda x, w, b: getattr(TF, name)(x, w, b, 2, 1, 1, 2, 1), [x, w, b])
    compare_grads(lambda x, w, b: ts.convolution(x, w, b, [2] * nsp, [1] * nsp, [1] * nsp, True,
                                                 [1] * nsp, 2),
                  lambda x, w, b: torch.convolution(x, w, b, [2] * nsp, [1] * nsp, [1] * nsp, True,
                                                    [1] * nsp, 2), [x, w, b])
    wc = randn64(6, 2, *(2,) * nsp)
    compare_grads(lambda x, w, b: ts.convolution(x, w, b, [1] * nsp, [1] * nsp, [1] * nsp, False,
                                                 [0] * nsp, 2),
                  lambda x, w, b: torch.convolution(x, w, b, [1] * nsp, [1] * nsp, [1] * nsp,
                                                    False, [0] * nsp, 2), [x, wc, b])


def test_conv_gradcheck() -> None:
    x = ts.asarray(randn64(1, 2, 5, 4), requires_grad=True)
    w = ts.asarray(randn64(3, 2, 2, 3), requires_grad=True)
    assert gradcheck(lambda x, w: F.conv2d(x, w, padding="same", dilation=(1, 2)), (x, w))
    assert gradcheck(lambda x, w: F.conv_transpose2d(x, w.transpose(0, 1).contiguous(),
                                                     stride=2), (x[:, :2], w[:2]))


@pytest.mark.parametrize("name,k", [("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1),
                                    ("rnn_relu_cell", 1)])
@pytest.mark.parametrize("batched,bias", [(True, True), (True, False)])
def test_rnn_cells_match_torch(name, k, batched, bias) -> None:
    b_shape = (3,) if batched else ()
    arrays = [randn64(*b_shape, 4), randn64(*b_shape, 5), randn64(k * 5, 4), randn64(k * 5, 5)]
    if bias:
        arrays += [randn64(k * 5), randn64(k * 5)]
    if name == "lstm_cell":
        arrays.insert(2, randn64(*b_shape, 5))
        compare_grads(lambda x, h, c, *w: ts.lstm_cell(x, (h, c), *w),
                      lambda x, h, c, *w: torch.lstm_cell(x, (h, c), *w), arrays)
        return
    compare_grads(getattr(ts, name), getattr(torch, name), arrays)


def test_rnn_relu_cell_gradient_at_zero_follows_torch() -> None:
    # relu's gradient at 0 is 0 (PyTorch's); the Python version's clip(min=0) passed it.
    x, h = np.zeros((1, 2)), np.zeros((1, 2))
    w = np.eye(2)
    compare_grads(ts.rnn_relu_cell, torch.rnn_relu_cell, [x, h, w, w])


def test_cell_gradcheck() -> None:
    xs = [ts.asarray(randn64(*s), requires_grad=True) for s in ((2, 3), (2, 4), (12, 3), (12, 4))]
    assert gradcheck(lambda x, h, wi, wh: ts.gru_cell(x, h, wi, wh), xs)


def test_grid_sampler_and_affine_grid_generator_match_torch() -> None:
    theta = randn64(2, 2, 3)
    compare_grads(lambda t: ts.affine_grid_generator(t, [2, 3, 4, 5], False),
                  lambda t: torch.affine_grid_generator(t, [2, 3, 4, 5], False), [theta])
    x, grid = randn64(2, 3, 4, 5), randn64(2, 3, 2, 2) * 0.8
    for mode in (0, 2):
        for pad in (0, 1, 2):
            compare_grads(lambda x, g: ts.grid_sampler(x, g, mode, pad, True),
                          lambda x, g: torch.grid_sampler(x, g, mode, pad, True), [x, grid])
    g = grid + 0.01  # nearest: the input's gradient (the grid's is zero)
    compare_grads(lambda x: ts.grid_sampler(x, ts.asarray(g), 1, 0, False),
                  lambda x: torch.grid_sampler(x, torch.tensor(g), 1, 0, False), [x])


def test_embedding_and_rrelu_match_torch() -> None:
    w = randn64(6, 3)
    idx = np.array([[0, 2, 5], [5, 1, 0]])
    for pad in (-1, 2):
        compare_grads(lambda w: ts.embedding(w, ts.asarray(idx), pad),
                      lambda w: torch.embedding(w, torch.tensor(idx), pad), [w])
    compare_grads(lambda w: ts.embedding(w, ts.asarray(idx), -1, True),
                  lambda w: torch.embedding(w, torch.tensor(idx), -1, True), [w])
    x = randn64(4, 5)
    compare_grads(lambda x: ts.rrelu(x, 0.1, 0.3), lambda x: torch.rrelu(x, 0.1, 0.3), [x])
    y = to_np(ts.rrelu(ts.asarray(x), 0.1, 0.3, True, ts.random.Generator(3)))
    neg = x < 0
    assert np.all((y[neg] <= 0.1 * x[neg] + 1e-12) & (y[neg] >= 0.3 * x[neg] - 1e-12))


@pytest.mark.parametrize("call,cls,match", [
    (lambda: ts.convolution(ts.ones((1, 1, 3)), ts.ones((1, 1)), None, [1], [0], [1], False,
                            [0], 1), ValueError, r"convolution: expected a 3-D, 4-D or 5-D weight"),
    (lambda: ts.grid_sampler(ts.ones((1, 1, 2, 2)), ts.ones((1, 2, 2, 2)), 5, 0, False),
     ValueError, r"grid_sampler: unknown interpolation_mode 5"),
    (lambda: ts.lstm_cell(ts.ones((2, 3)), (ts.ones((2, 4)),), ts.ones((16, 3)),
                          ts.ones((16, 4))), ValueError, r"lstm_cell: hx must be \(h, c\)"),
    (lambda: ts.gru_cell(ts.ones((2, 3)), ts.ones((2, 4)), ts.ones((13, 3)), ts.ones((13, 4))),
     ValueError, r"gru_cell: expected weights"),
    (lambda: F.conv2d(ts.ones((1, 2, 4, 4)), ts.ones((3, 3, 2, 2))), ValueError, r"conv2d"),
    (lambda: F.conv2d(ts.ones((1, 2, 4, 4)), "w"), TypeError, r"conv2d"),
    (lambda: F.conv_transpose1d(ts.ones((1, 2, 4)), ts.ones((2, 1, 2)), stride=0), ValueError,
     r"conv_transpose1d"),
])
def test_errors_name_the_op(call, cls, match) -> None:
    with pytest.raises(cls, match=match):
        call()


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (1, 2), "same", "valid"])
def test_conv_module_padding_modes_match_torch(mode, padding) -> None:
    # the Conv modules' forward is _C._conv with padding_mode (F.pad, then the convolution)
    from harness import compare_module
    compare_module(ts.nn.Conv2d(2, 3, (3, 2), padding=padding, padding_mode=mode, dilation=(1, 2)),
                   torch.nn.Conv2d(2, 3, (3, 2), padding=padding, padding_mode=mode,
                                   dilation=(1, 2)), randn(2, 2, 6, 7))


def test_conv_transpose_output_size_forms_and_errors() -> None:
    sm, tm = ts.nn.ConvTranspose2d(2, 3, 3, stride=2), torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    sm.weight = ts.nn.Parameter(ts.asarray(tm.weight.detach().numpy()))
    sm.bias = ts.nn.Parameter(ts.asarray(tm.bias.detach().numpy()))
    x = randn(1, 2, 4, 5)
    for size in ((10, 12), [1, 3, 10, 12], (9, 11)):
        np.testing.assert_allclose(to_np(sm(ts.asarray(x), output_size=size)),
                                   to_np(tm(torch.tensor(x), output_size=size)), rtol=1e-5,
                                   atol=1e-5)
    with pytest.raises(ValueError, match=r"ConvTranspose2d: requested an output size of "
                                         r"\[12, 12\], but valid sizes range from 9 to 10"):
        sm(ts.asarray(x), output_size=(12, 12))
    with pytest.raises(ValueError, match=r"output_size must have 2 or 4 elements, got \[3\]"):
        sm(ts.asarray(x), output_size=(3,))
    with pytest.raises(ValueError, match=r"conv2d: padding_mode must be"):
        _C._conv(ts.ones((1, 1, 4, 4)), ts.ones((1, 1, 2, 2)), None, 1, 1, 1, 1, 2, "conv2d",
                 "wrap")
