"""Conv3d / ConvTranspose3d (and F.conv3d / F.conv_transpose3d) vs PyTorch with identical
weights: outputs, input and parameter gradients, reprs, float64 gradchecks, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn
from tessera.testing import gradcheck
from harness import close, compare_module, randn, tt

F = nn.functional


LAYERS = [
    (lambda m: m.Conv3d(2, 3, 3), (2, 2, 5, 6, 5)),
    (lambda m: m.Conv3d(2, 4, (2, 3, 1), stride=(2, 1, 2), padding=(1, 0, 1), dilation=(2, 1, 1)),
     (2, 2, 7, 6, 5)),
    (lambda m: m.Conv3d(4, 6, 3, groups=2, bias=False, padding="same"), (1, 4, 5, 4, 6)),
    (lambda m: m.Conv3d(2, 3, 2, padding=1, padding_mode="reflect"), (1, 2, 4, 4, 4)),
    (lambda m: m.Conv3d(2, 3, 3, padding=1, padding_mode="circular"), (1, 2, 4, 4, 4)),
    (lambda m: m.Conv3d(2, 3, 3, padding="valid"), (2, 4, 5, 6)),  # unbatched
    (lambda m: m.ConvTranspose3d(2, 3, 3), (2, 2, 3, 4, 3)),
    (lambda m: m.ConvTranspose3d(2, 4, (2, 3, 2), stride=(2, 1, 3), padding=(1, 1, 0),
                                 output_padding=(1, 0, 2)), (2, 2, 3, 4, 3)),
    (lambda m: m.ConvTranspose3d(4, 6, 3, stride=2, groups=2, dilation=(2, 1, 1), bias=False),
     (1, 4, 3, 3, 2)),
    (lambda m: m.ConvTranspose3d(2, 3, 2, stride=2), (2, 3, 2, 3)),  # unbatched
]


@pytest.mark.parametrize("case", range(len(LAYERS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv3d_layers_match_torch(case: int, dtype) -> None:
    make, shape = LAYERS[case]
    torch.manual_seed(case)
    tm, sm = make(torch.nn), make(nn)
    assert repr(sm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in sm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    if dtype == np.float64:
        tm, sm = tm.double(), sm.to(ts.float64)
    tol = 2e-5 if dtype == np.float32 else 1e-10
    compare_module(sm, tm, randn(*shape, dtype=dtype), rtol=tol, atol=tol)


def test_conv_transpose3d_output_size_and_gradcheck() -> None:
    tm, sm = torch.nn.ConvTranspose3d(2, 3, 3, stride=2), nn.ConvTranspose3d(2, 3, 3, stride=2)
    sm.load_state_dict(tm.state_dict())
    x = randn(1, 2, 3, 3, 3)
    close(sm(tt(x), output_size=(8, 7, 8)), tm(torch.tensor(x), output_size=(8, 7, 8)), 1e-5, 1e-5)
    xs = tt(randn(1, 2, 3, 2, 3, dtype=np.float64), requires_grad=True)
    w = tt(randn(2, 2, 2, 3, 2, dtype=np.float64), requires_grad=True)
    b = tt(randn(2, dtype=np.float64), requires_grad=True)
    assert gradcheck(lambda a, c, d: F.conv3d(a, c, d, stride=(1, 2, 1), padding=1), (xs, w, b))
    assert gradcheck(lambda a, c, d: F.conv_transpose3d(a, c, d, stride=2, padding=(1, 0, 0),
                                                        output_padding=1), (xs, w, b))


def test_conv3d_errors() -> None:
    with pytest.raises(ValueError, match=r"conv3d: expected a 4-D or 5-D input, got shape \(2, 3\)"):
        F.conv3d(tt(randn(2, 3)), tt(randn(1, 1, 1, 1, 1)))
    with pytest.raises(ValueError, match=r"conv3d: input with 3 channels, weight \(2, 2, 1, 1, 1\)"):
        F.conv3d(tt(randn(1, 3, 2, 2, 2)), tt(randn(2, 2, 1, 1, 1)))
    with pytest.raises(ValueError, match="conv3d: kernel size"):
        nn.Conv3d(1, 1, 3)(tt(randn(1, 1, 2, 4, 4)))
    with pytest.raises(ValueError, match="conv_transpose3d: input with 3 channels"):
        F.conv_transpose3d(tt(randn(1, 3, 2, 2, 2)), tt(randn(2, 2, 1, 1, 1)))
    with pytest.raises(ValueError, match="ConvTranspose3d: requested an output size"):
        nn.ConvTranspose3d(1, 1, 3, stride=2)(tt(randn(1, 1, 3, 3, 3)), output_size=(12, 7, 7))
