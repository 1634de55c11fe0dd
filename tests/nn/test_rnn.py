"""RNN/LSTM/GRU and their cells vs PyTorch with identical weights (loaded through
load_state_dict): outputs, final states, gradients of the input, the initial states and
every parameter; reprs, state-dict keys, initialization, float64 gradchecks, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn
from tessera.testing import gradcheck
from harness import close, randn, tt


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in _flat(o)]
    return [out]


def run_both(sm, tm, x: np.ndarray, hx=None, tol: float = 1e-5) -> None:
    """Loads tm's weights into sm, runs both, compares every output, then backpropagates the
    same random cotangents and compares the gradients of x, hx and every parameter."""
    sm.load_state_dict(tm.state_dict())
    xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    hs = ht = None
    if hx is not None:
        hs = tuple(tt(h, requires_grad=True) for h in hx)
        ht = tuple(torch.tensor(h, requires_grad=True) for h in hx)
    arg_s = None if hs is None else (hs if len(hs) == 2 else hs[0])
    arg_t = None if ht is None else (ht if len(ht) == 2 else ht[0])
    outs_s, outs_t = _flat(sm(xs, arg_s)), _flat(tm(xt, arg_t))
    assert len(outs_s) == len(outs_t)
    loss_s, loss_t = 0, 0
    for a, b in zip(outs_s, outs_t):
        close(a, b, tol, tol)
        g = randn(*b.shape, dtype=x.dtype)
        loss_s = loss_s + (a * tt(g)).sum()
        loss_t = loss_t + (b * torch.tensor(g)).sum()
    loss_s.backward()
    loss_t.backward()
    close(xs.grad, xt.grad, tol, tol)
    if hs is not None:
        for a, b in zip(hs, ht):
            close(a.grad, b.grad, tol, tol)
    tp = dict(tm.named_parameters())
    for k, p in sm.named_parameters():
        close(p.grad, tp[k].grad, tol, tol)


CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True),
    dict(num_layers=3, bidirectional=True, batch_first=True),
    dict(bias=False),
    dict(num_layers=2, dropout=0.3),  # dropout only acts in training; compared in eval
]


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("case", range(len(CONFIGS)))
@pytest.mark.parametrize("with_h0", [False, True])
def test_recurrent_layers_match_torch(name: str, case: int, with_h0: bool) -> None:
    kw = CONFIGS[case]
    torch.manual_seed(case)
    tm, sm = getattr(torch.nn, name)(5, 6, **kw), getattr(nn, name)(5, 6, **kw)
    assert repr(sm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in sm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    if kw.get("dropout"):
        sm.eval()
        tm.eval()
    n_state = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    x = randn(3, 7, 5) if kw.get("batch_first") else randn(7, 3, 5)
    hx = None
    if with_h0:
        hx = (randn(n_state, 3, 6),) + ((randn(n_state, 3, 6),) if name == "LSTM" else ())
    run_both(sm, tm, x, hx)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_float64_and_relu(name: str) -> None:
    kw = {"nonlinearity": "relu"} if name == "RNN" else {}
    tm = getattr(torch.nn, name)(4, 3, num_layers=2, bidirectional=True, **kw).double()
    sm = getattr(nn, name)(4, 3, num_layers=2, bidirectional=True, dtype=ts.float64, **kw)
    assert repr(sm) == repr(tm)
    hx = (randn(4, 3, dtype=np.float64),) * (2 if name == "LSTM" else 1)
    run_both(sm, tm, randn(5, 4, dtype=np.float64), hx, tol=1e-12)
    run_both(sm, tm, randn(1, 2, 4, dtype=np.float64), None, tol=1e-12)  # one timestep


@pytest.mark.parametrize("kw", [dict(proj_size=2), dict(proj_size=3, num_layers=2,
                                                         bidirectional=True, batch_first=True)])
def test_lstm_projection(kw) -> None:
    tm, sm = torch.nn.LSTM(5, 4, **kw), nn.LSTM(5, 4, **kw)
    assert repr(sm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in sm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    n = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    batch = 6 if kw.get("batch_first") else 3
    run_both(sm, tm, randn(6, 3, 5), (randn(n, batch, kw["proj_size"]), randn(n, batch, 4)))


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("unbatched", [False, True])
@pytest.mark.parametrize("with_h", [False, True])
def test_cells_match_torch(name: str, unbatched: bool, with_h: bool) -> None:
    for kw in ({}, {"bias": False}) + (({"nonlinearity": "relu"},) if name == "RNNCell" else ()):
        tm, sm = getattr(torch.nn, name)(5, 4, **kw), getattr(nn, name)(5, 4, **kw)
        assert repr(sm) == repr(tm)
        assert list(sm.state_dict()) == list(tm.state_dict())
        lead = () if unbatched else (3,)
        hx = None
        if with_h:
            hx = (randn(*lead, 4),) * (2 if name == "LSTMCell" else 1)
        run_both(sm, tm, randn(*lead, 5), hx)


def test_gradcheck_float64() -> None:
    for cls in (nn.LSTM, nn.GRU, nn.RNN):
        m = cls(2, 3, num_layers=2, bidirectional=True, dtype=ts.float64)
        x = tt(randn(3, 2, 2, dtype=np.float64), requires_grad=True)
        assert gradcheck(lambda v: m(v)[0], (x,))
    cell = nn.LSTMCell(2, 3, dtype=ts.float64)
    h = tt(randn(2, 3, dtype=np.float64), requires_grad=True)
    c = tt(randn(2, 3, dtype=np.float64), requires_grad=True)
    x = tt(randn(2, 2, dtype=np.float64), requires_grad=True)
    assert gradcheck(lambda a, b, d: cell(a, (b, d))[1], (x, h, c))


def test_init_dropout_and_long_sequence() -> None:
    m = nn.LSTM(8, 16, num_layers=2)
    for p in m.parameters():
        v = p.numpy()
        assert np.abs(v).max() <= 0.25 and np.abs(v).max() > 0.2  # U(-1/sqrt(16), 1/sqrt(16))
    assert len(m.all_weights) == 2 and len(m.all_weights[0]) == 4
    m.flatten_parameters()
    d = nn.GRU(4, 8, num_layers=2, dropout=0.5)
    x = tt(randn(5, 2, 4))
    d.eval()
    a, b = d(x)[0].numpy(), d(x)[0].numpy()
    np.testing.assert_array_equal(a, b)
    d.train()
    assert not np.allclose(d(x)[0].numpy(), a)  # inter-layer dropout in training
    # a long sequence stays linear in its length (one stacked gradient per projection)
    tm, sm = torch.nn.GRU(3, 4), nn.GRU(3, 4)
    run_both(sm, tm, randn(300, 2, 3), tol=1e-4)


def test_errors() -> None:
    m = nn.LSTM(5, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"LSTM: expected a 2-D \(unbatched\) or 3-D input, got "
                                         r"shape \(2, 3, 4, 5\)"):
        m(tt(randn(2, 3, 4, 5)))
    with pytest.raises(ValueError, match=r"LSTM: input.size\(-1\) must be equal to input_size 5"):
        m(tt(randn(3, 2, 6)))
    with pytest.raises(ValueError, match=r"LSTM: expected h_0 of shape \(2, 2, 4\), got \(1, 2, 4\)"):
        m(tt(randn(3, 2, 5)), (tt(randn(1, 2, 4)), tt(randn(2, 2, 4))))
    with pytest.raises(ValueError, match="LSTM: hx must be a tuple"):
        m(tt(randn(3, 2, 5)), tt(randn(2, 2, 4)))
    with pytest.raises(ValueError, match=r"GRU: expected hidden state h_0 of shape \(1, 2, 4\)"):
        nn.GRU(5, 4)(tt(randn(3, 2, 5)), tt(randn(1, 3, 4)))
    with pytest.raises(ValueError, match="RNN: unknown nonlinearity"):
        nn.RNN(5, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number"):
        nn.GRU(5, 4, dropout=1.5)
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(5, 4, proj_size=4)
    with pytest.raises(ValueError, match="proj_size"):
        nn.GRU(5, 4, proj_size=2)
    with pytest.raises(ValueError, match=r"GRUCell: expected input of shape \(N, 5\)"):
        nn.GRUCell(5, 4)(tt(randn(2, 3)))
    with pytest.raises(ValueError, match=r"LSTMCell: expected hidden state of shape \(2, 4\)"):
        nn.LSTMCell(5, 4)(tt(randn(2, 5)), (tt(randn(3, 4)), tt(randn(2, 4))))
    with pytest.raises(ValueError, match="at least one timestep"):
        nn.RNN(5, 4)(tt(randn(0, 2, 5)))
