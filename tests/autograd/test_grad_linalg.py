"""Gradients of the LAPACK-backed linalg functions against PyTorch, and gradcheck."""
import numpy as np
import pytest
import torch

import tessera as ts
from tessera.testing import gradcheck

rng = np.random.default_rng(7)


def spd(*batch, n=3):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def compare(fn_ts, fn_t, arrays, rtol=1e-8):
    xs = [ts.asarray(a.copy(), requires_grad=True) for a in arrays]
    ys = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    ot, oy = fn_ts(*xs), fn_t(*ys)
    cot = rng.standard_normal(tuple(oy.shape))
    ot.backward(ts.asarray(cot))
    oy.backward(torch.tensor(cot))
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=rtol, atol=rtol)


def test_inv_det_slogdet():
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    compare(ts.linalg.inv, torch.linalg.inv, [a])
    compare(ts.linalg.det, torch.linalg.det, [a])
    compare(lambda x: ts.linalg.slogdet(x).logabsdet, lambda x: torch.linalg.slogdet(x).logabsdet, [a])


def test_solve_matrix_and_vector():
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    compare(ts.linalg.solve, torch.linalg.solve, [a, rng.standard_normal((3, 2))])
    compare(ts.linalg.solve, torch.linalg.solve, [a, rng.standard_normal(3)])


def test_cholesky_lower_and_upper():
    # Symmetric perturbations only: the gradient is defined on symmetric inputs.
    a = spd(2)
    compare(lambda x: ts.linalg.cholesky((x + x.mT) / 2), lambda x: torch.linalg.cholesky((x + x.mT) / 2), [a])
    compare(lambda x: ts.linalg.cholesky((x + x.mT) / 2, upper=True),
            lambda x: torch.linalg.cholesky((x + x.mT) / 2, upper=True), [a])


def test_eigh_and_eigvalsh():
    a = spd(n=4)
    compare(lambda x: ts.linalg.eigvalsh((x + x.mT) / 2), lambda x: torch.linalg.eigvalsh((x + x.mT) / 2), [a])
    # eigenvectors have a sign gauge: use a gauge-invariant function of them
    compare(lambda x: ts.linalg.eigh((x + x.mT) / 2).eigenvectors ** 2,
            lambda x: torch.linalg.eigh((x + x.mT) / 2).eigenvectors ** 2, [a], rtol=1e-6)


def test_svdvals_and_norms():
    a = rng.standard_normal((4, 3))
    compare(ts.linalg.svdvals, torch.linalg.svdvals, [a])
    compare(lambda x: ts.linalg.matrix_norm(x, ord="nuc"), lambda x: torch.linalg.matrix_norm(x, ord="nuc"), [a])
    compare(lambda x: ts.linalg.vector_norm(x, ord=3), lambda x: torch.linalg.vector_norm(x, ord=3), [a])
    compare(lambda x: ts.linalg.matrix_norm(x), lambda x: torch.linalg.matrix_norm(x), [a])


@pytest.mark.parametrize("fn", [ts.linalg.inv, ts.linalg.det, lambda x: ts.linalg.solve(x, x[:, :1] * 2.0 + 1.0)])
def test_gradcheck(fn):
    assert gradcheck(fn, (ts.asarray(rng.standard_normal((3, 3)) + 3 * np.eye(3), requires_grad=True),))


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 5, 11])
def test_fft_ifft_grads_match_torch(norm, n):
    x = rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))
    compare(lambda t: ts.abs(ts.fft.fft(t, n=n, norm=norm)) ** 2, lambda t: torch.fft.fft(t, n=n, norm=norm).abs() ** 2, [x])
    compare(lambda t: ts.real(ts.fft.ifft(t, n=n, axis=0, norm=norm)),
            lambda t: torch.fft.ifft(t, n=n, dim=0, norm=norm).real, [x])


def test_fftn_grads_and_real_input():
    x = rng.standard_normal((4, 6))
    compare(lambda t: ts.real(ts.fft.fftn(t)) * 2.0, lambda t: torch.fft.fftn(t).real * 2.0, [x])
    compare(lambda t: ts.imag(ts.fft.ifftn(t, s=(3, 8), axes=(0, 1), norm="ortho")),
            lambda t: torch.fft.ifftn(t, s=(3, 8), dim=(0, 1), norm="ortho").imag, [x])
