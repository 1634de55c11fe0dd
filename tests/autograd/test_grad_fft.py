"""Gradients of the fft transforms (C++ formulas, csrc/autograd/formulas_fft.cpp) against
PyTorch, finite differences in float64, and second derivatives through create_graph."""
import numpy as np
import pytest
import torch

import tessera as ts
from tessera.testing import gradcheck, gradgradcheck
from harness import compare_grads

rng = np.random.default_rng(17)


def _c(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 5, 12])
def test_real_transforms_match_torch(norm, n):
    x = rng.standard_normal((3, 8))
    compare_grads(lambda t: ts.fft.rfft(t, n=n, norm=norm), lambda t: torch.fft.rfft(t, n=n, norm=norm),
                  [x], generator=rng)
    compare_grads(lambda t: ts.fft.ihfft(t, n=n, axis=0, norm=norm),
                  lambda t: torch.fft.ihfft(t, n=n, dim=0, norm=norm), [x], generator=rng)
    z = _c(3, 5)
    compare_grads(lambda t: ts.fft.irfft(t, n=n, norm=norm), lambda t: torch.fft.irfft(t, n=n, norm=norm),
                  [z], generator=rng)
    compare_grads(lambda t: ts.fft.hfft(t, n=n, norm=norm), lambda t: torch.fft.hfft(t, n=n, norm=norm),
                  [z], generator=rng)


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_nd_transforms_match_torch(norm):
    x = rng.standard_normal((4, 3, 6))
    compare_grads(lambda t: ts.fft.rfftn(t, s=(5, 4), axes=(0, 2), norm=norm),
                  lambda t: torch.fft.rfftn(t, s=(5, 4), dim=(0, 2), norm=norm), [x], generator=rng)
    z = _c(4, 3, 4)
    compare_grads(lambda t: ts.fft.irfftn(t, axes=(1, 2), norm=norm),
                  lambda t: torch.fft.irfftn(t, dim=(1, 2), norm=norm), [z], generator=rng)
    compare_grads(lambda t: ts.fft.irfftn(t, s=(2, 7), axes=(0, 2), norm=norm),
                  lambda t: torch.fft.irfftn(t, s=(2, 7), dim=(0, 2), norm=norm), [z], generator=rng)
    compare_grads(lambda t: ts.fft.fftn(t, s=(3, 5), norm=norm),
                  lambda t: torch.fft.fftn(t, s=(3, 5), norm=norm), [z], generator=rng)
    compare_grads(lambda t: ts.fft.ifft2(t, norm=norm), lambda t: torch.fft.ifft2(t, norm=norm),
                  [z], generator=rng)


def test_node_names_as_torch():
    x = ts.asarray(rng.standard_normal(6), requires_grad=True)
    assert ts.fft.fft(x).grad_fn.name() == "FftC2CBackward0"
    assert ts.fft.rfft(x).grad_fn.name() == "FftR2CBackward0"
    z = ts.asarray(_c(6), requires_grad=True)
    assert ts.fft.irfft(z).grad_fn.name() == "FftC2RBackward0"
    assert ts.fft.fftn(z, axes=()).grad_fn is not None  # no axes: a recorded cast


@pytest.mark.parametrize("fn", [
    lambda t: ts.fft.fft(t, n=7, norm="ortho"),
    lambda t: ts.fft.ifftn(t, s=(2, 6)),
    lambda t: ts.fft.rfft(ts.real(t), n=5),
    lambda t: ts.fft.irfft(t, n=9, axis=0, norm="forward"),
    lambda t: ts.fft.hfft(t, norm="ortho"),
    lambda t: ts.fft.ihfft(ts.imag(t), n=4),
])
def test_gradcheck_and_gradgradcheck(fn):
    # Squared, so the gradient depends on the input (a linear map's gradient would not) and the
    # output is real (gradcheck's finite differences compare real outputs).
    def sq(t):
        y = fn(t)
        return ts.real(y * y)
    z = ts.asarray(_c(3, 5), requires_grad=True)
    assert gradcheck(sq, (z,))
    assert gradgradcheck(sq, (z,))


def test_double_backward_matches_torch():
    x = rng.standard_normal((2, 6))
    w = rng.standard_normal((2, 4))

    tt = ts.asarray(x, requires_grad=True)
    gt = ts.autograd.grad(((ts.real(ts.fft.rfft(tt)) ** 2 * ts.asarray(w)).sum()
                           + (ts.fft.irfft(ts.fft.rfft(tt) ** 2, n=6) ** 2).sum()), tt,
                          create_graph=True)[0]
    ht = ts.autograd.grad((gt ** 2).sum(), tt)[0]
    tr = torch.tensor(x, requires_grad=True)
    gr = torch.autograd.grad(((torch.fft.rfft(tr).real ** 2 * torch.tensor(w)).sum()
                              + (torch.fft.irfft(torch.fft.rfft(tr) ** 2, n=6) ** 2).sum()), tr,
                             create_graph=True)[0]
    hr = torch.autograd.grad((gr ** 2).sum(), tr)[0]
    np.testing.assert_allclose(np.asarray(gt.detach()), gr.detach().numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.asarray(ht), hr.numpy(), rtol=1e-9, atol=1e-9)


def test_integer_input_promotes_in_cpp():
    out = ts._C._fft.fft(ts.arange(4), None, -1, "backward")
    assert out.dtype == ts.complex64
    np.testing.assert_allclose(np.asarray(out), np.fft.fft(np.arange(4)), atol=1e-5)
    assert ts.fft.rfftn(ts.asarray([[1, 2], [3, 4]])).dtype == ts.complex64
