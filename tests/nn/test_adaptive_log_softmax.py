"""AdaptiveLogSoftmaxWithLoss vs PyTorch with identical weights: output, loss, gradients,
log_prob, predict, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn
from harness import close, tt

rng = np.random.default_rng(0)


@pytest.mark.parametrize("kw", [dict(cutoffs=[5, 12], div_value=2.0),
                                dict(cutoffs=[3], head_bias=True),
                                dict(cutoffs=[2, 6, 15], div_value=1.5)])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_log_softmax_matches_torch(kw, batched: bool) -> None:
    torch.manual_seed(0)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, **kw)
    sm = nn.AdaptiveLogSoftmaxWithLoss(8, 20, **kw)
    assert repr(sm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in sm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    sm.load_state_dict(tm.state_dict())
    x = rng.standard_normal((10, 8) if batched else (8,)).astype(np.float32)
    y = rng.integers(0, 20, 10 if batched else ()).astype(np.int64)
    if batched:
        y[:3] = [0, 19, 4]
    xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    os_, ot = sm(xs, ts.asarray(y)), tm(xt, torch.tensor(y))
    close(os_.output, ot.output, 1e-5, 1e-5)
    close(os_.loss, ot.loss, 1e-5, 1e-5)
    os_.loss.backward()
    ot.loss.backward()
    close(xs.grad, xt.grad, 1e-5, 1e-5)
    tp = dict(tm.named_parameters())
    for k, p in sm.named_parameters():
        close(p.grad if p.grad is not None else np.zeros(p.shape, np.float32),
              tp[k].grad if tp[k].grad is not None else torch.zeros(tuple(p.shape)), 1e-5, 1e-5)
    xb = x if batched else x[None]  # PyTorch's log_prob/predict take (N, in) only
    close(sm.log_prob(tt(xb)), tm.log_prob(torch.tensor(xb)), 1e-5, 1e-5)
    np.testing.assert_array_equal(sm.predict(tt(xb)).numpy(),
                                  tm.predict(torch.tensor(xb)).numpy())


def test_adaptive_log_softmax_errors() -> None:
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3])
    with pytest.raises(ValueError, match="cutoffs should be a sequence of length"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])
    with pytest.raises(IndexError, match=r"target values should be in \[0, 9\]"):
        m(tt(np.zeros((2, 8), np.float32)), ts.asarray(np.array([1, 10])))
    with pytest.raises(ValueError, match=r"expected input \(N, 8\) with target \(N,\)"):
        m(tt(np.zeros((2, 8), np.float32)), ts.asarray(np.array([1, 2, 3])))
