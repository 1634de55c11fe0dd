"""Gradients of the LAPACK-backed linalg functions against PyTorch, and gradcheck."""
import numpy as np
import pytest
import torch

import tessera as ts
from tessera.testing import gradcheck, gradgradcheck
from harness import compare_grads

rng = np.random.default_rng(7)


def spd(*batch, n=3):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_inv_det_slogdet():
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    compare_grads(ts.linalg.inv, torch.linalg.inv, [a], generator=rng)
    compare_grads(ts.linalg.det, torch.linalg.det, [a], generator=rng)
    compare_grads(lambda x: ts.linalg.slogdet(x).logabsdet, lambda x: torch.linalg.slogdet(x).logabsdet, [a], generator=rng)


def test_solve_matrix_and_vector():
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    compare_grads(ts.linalg.solve, torch.linalg.solve, [a, rng.standard_normal((3, 2))], generator=rng)
    compare_grads(ts.linalg.solve, torch.linalg.solve, [a, rng.standard_normal(3)], generator=rng)


def test_cholesky_lower_and_upper():
    # Symmetric perturbations only: the gradient is defined on symmetric inputs.
    a = spd(2)
    compare_grads(lambda x: ts.linalg.cholesky((x + x.mT) / 2), lambda x: torch.linalg.cholesky((x + x.mT) / 2), [a], generator=rng)
    compare_grads(lambda x: ts.linalg.cholesky((x + x.mT) / 2, upper=True),
                  lambda x: torch.linalg.cholesky((x + x.mT) / 2, upper=True), [a], generator=rng)


def test_eigh_and_eigvalsh():
    a = spd(n=4)
    compare_grads(lambda x: ts.linalg.eigvalsh((x + x.mT) / 2), lambda x: torch.linalg.eigvalsh((x + x.mT) / 2), [a], generator=rng)
    # eigenvectors have a sign gauge: use a gauge-invariant function of them
    compare_grads(lambda x: ts.linalg.eigh((x + x.mT) / 2).eigenvectors ** 2,
                  lambda x: torch.linalg.eigh((x + x.mT) / 2).eigenvectors ** 2, [a], rtol=1e-6, generator=rng)


def test_svdvals_and_norms():
    a = rng.standard_normal((4, 3))
    compare_grads(ts.linalg.svdvals, torch.linalg.svdvals, [a], generator=rng)
    compare_grads(lambda x: ts.linalg.matrix_norm(x, ord="nuc"), lambda x: torch.linalg.matrix_norm(x, ord="nuc"), [a], generator=rng)
    compare_grads(lambda x: ts.linalg.vector_norm(x, ord=3), lambda x: torch.linalg.vector_norm(x, ord=3), [a], generator=rng)
    compare_grads(lambda x: ts.linalg.matrix_norm(x), lambda x: torch.linalg.matrix_norm(x), [a], generator=rng)


@pytest.mark.parametrize("fn", [ts.linalg.inv, ts.linalg.det, lambda x: ts.linalg.solve(x, x[:, :1] * 2.0 + 1.0)])
def test_gradcheck(fn):
    assert gradcheck(fn, (ts.asarray(rng.standard_normal((3, 3)) + 3 * np.eye(3), requires_grad=True),))


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 5, 11])
def test_fft_ifft_grads_match_torch(norm, n):
    x = rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))
    compare_grads(lambda t: ts.abs(ts.fft.fft(t, n=n, norm=norm)) ** 2, lambda t: torch.fft.fft(t, n=n, norm=norm).abs() ** 2, [x], generator=rng)
    compare_grads(lambda t: ts.real(ts.fft.ifft(t, n=n, axis=0, norm=norm)),
                  lambda t: torch.fft.ifft(t, n=n, dim=0, norm=norm).real, [x], generator=rng)


def test_fftn_grads_and_real_input():
    x = rng.standard_normal((4, 6))
    compare_grads(lambda t: ts.real(ts.fft.fftn(t)) * 2.0, lambda t: torch.fft.fftn(t).real * 2.0, [x], generator=rng)
    compare_grads(lambda t: ts.imag(ts.fft.ifftn(t, s=(3, 8), axes=(0, 1), norm="ortho")),
                  lambda t: torch.fft.ifftn(t, s=(3, 8), dim=(0, 1), norm="ortho").imag, [x], generator=rng)


# ---- pinv and the infinity vector norms: C++ formulas (csrc/autograd/formulas_linalg.cpp)
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 4, 4)])
def test_pinv_grad_matches_torch_and_gradgradcheck(shape):
    a = rng.standard_normal(shape)
    compare_grads(ts.linalg.pinv, torch.linalg.pinv, [a], generator=rng)
    x = ts.asarray(a, requires_grad=True)
    assert ts.linalg.pinv(x).grad_fn.name() == "LinalgPinvBackward0"
    assert gradcheck(ts.linalg.pinv, (x,))
    assert gradgradcheck(ts.linalg.pinv, (x,))


def test_pinv_rank_deficient_and_complex():
    a = rng.standard_normal((4, 2)) @ rng.standard_normal((2, 3))  # rank 2
    compare_grads(ts.linalg.pinv, torch.linalg.pinv, [a], rtol=1e-6, generator=rng)
    z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    compare_grads(ts.linalg.pinv, torch.linalg.pinv, [z], generator=rng)
    assert int(ts.linalg.matrix_rank(ts.asarray(a))) == 2
    # a tensor rtol broadcasts against the batch, as torch's: shape (1,) here
    assert ts.linalg.matrix_rank(ts.asarray(a), rtol=ts.asarray([1e-12])).shape == (1,)


@pytest.mark.parametrize("ord", [np.inf, -np.inf])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), ((0, 2), True), ((0, 2), False)])
def test_inf_vector_norm_grad_matches_torch(ord, axis, keepdims):
    a = np.round(rng.standard_normal((3, 4, 2)), 1)  # ties: the gradient is shared
    a[0, 0, 0] = a[0, 1, 0] = 3.0
    a[1, 2, 1] = -a[1, 2, 0]
    compare_grads(lambda t: ts.linalg.vector_norm(t, ord=ord, axis=axis, keepdims=keepdims),
                  lambda t: torch.linalg.vector_norm(t, ord=ord, dim=axis, keepdim=keepdims),
                  [a], generator=rng)
    x = ts.asarray(rng.standard_normal((3, 4, 2)), requires_grad=True)
    f = lambda t: ts.linalg.vector_norm(t, ord=ord, axis=axis, keepdims=keepdims)  # noqa: E731
    assert f(x).grad_fn.name() == "LinalgVectorNormBackward0"
    assert gradgradcheck(f, (x,))


def test_inf_vector_norm_of_empty_is_zero():
    x = ts.zeros((0, 3), requires_grad=True)
    out = ts.linalg.vector_norm(x, ord=np.inf, axis=0)
    assert np.asarray(out.detach()).tolist() == [0.0, 0.0, 0.0]
