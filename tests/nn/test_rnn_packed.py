"""nn.utils.rnn (PackedSequence, pack/pad helpers) and RNN/LSTM/GRU over packed sequences vs
PyTorch: packed data and batch sizes, outputs, final states, gradients, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as trnn

from tessera import nn
from tessera.nn.utils import rnn as srnn
from harness import close, randn, tt


@pytest.mark.parametrize("lengths,enforce", [([5, 3, 3, 1], True), ([2, 5, 1, 4], False),
                                             ([4, 4], True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_pad_roundtrip(lengths, enforce: bool, batch_first: bool) -> None:
    b, T = len(lengths), max(lengths)
    x = randn(b, T, 3) if batch_first else randn(T, b, 3)
    xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ps = srnn.pack_padded_sequence(xs, lengths, batch_first, enforce)
    pt = trnn.pack_padded_sequence(xt, torch.tensor(lengths), batch_first, enforce)
    close(ps.data, pt.data, 0, 0)
    np.testing.assert_array_equal(ps.batch_sizes.numpy(), pt.batch_sizes.numpy())
    for a, c in ((ps.sorted_indices, pt.sorted_indices), (ps.unsorted_indices, pt.unsorted_indices)):
        assert (a is None) == (c is None)
        if a is not None:
            np.testing.assert_array_equal(a.numpy(), c.numpy())
    ys, ls = srnn.pad_packed_sequence(ps, batch_first, padding_value=-1.0, total_length=T + 1)
    yt, lt = trnn.pad_packed_sequence(pt, batch_first, padding_value=-1.0, total_length=T + 1)
    close(ys, yt, 0, 0)
    np.testing.assert_array_equal(ls.numpy(), lt.numpy())
    g = randn(*yt.shape)
    ys.backward(tt(g))
    yt.backward(torch.tensor(g))
    close(xs.grad, xt.grad, 0, 0)


def test_pad_pack_sequence_helpers() -> None:
    seqs = [randn(4, 2), randn(1, 2), randn(3, 2)]
    for bf in (False, True):
        for side in ("right", "left"):
            close(srnn.pad_sequence([tt(s) for s in seqs], bf, 9.0, side),
                  trnn.pad_sequence([torch.tensor(s) for s in seqs], bf, 9.0, side), 0, 0)
    ps = srnn.pack_sequence([tt(s) for s in seqs], enforce_sorted=False)
    pt = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    close(ps.data, pt.data, 0, 0)
    for a, c in zip(srnn.unpack_sequence(ps), seqs):
        close(a, c, 0, 0)
    padded = srnn.pad_sequence([tt(s) for s in seqs], batch_first=True)
    for a, c in zip(srnn.unpad_sequence(padded, [4, 1, 3], batch_first=True), seqs):
        close(a, c, 0, 0)
    with pytest.raises(ValueError, match="must be sorted in decreasing order"):
        srnn.pack_padded_sequence(tt(randn(3, 2, 1)), [1, 3])
    with pytest.raises(ValueError, match=r"lengths must be in \[1, 3\]"):
        srnn.pack_padded_sequence(tt(randn(3, 2, 1)), [4, 3])
    with pytest.raises(ValueError, match="expected 2 lengths"):
        srnn.pack_padded_sequence(tt(randn(3, 2, 1)), [3])
    with pytest.raises(ValueError, match="trailing shape"):
        srnn.pad_sequence([tt(randn(2, 3)), tt(randn(2, 4))])
    with pytest.raises(ValueError, match="total_length 2 is smaller"):
        srnn.pad_packed_sequence(srnn.pack_sequence([tt(randn(3, 1))]), total_length=2)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("kw", [dict(), dict(num_layers=2, bidirectional=True),
                                dict(batch_first=True, bidirectional=True)])
@pytest.mark.parametrize("with_h0,enforce", [(False, True), (True, False)])
def test_rnn_packed_matches_torch(name: str, kw, with_h0: bool, enforce: bool) -> None:
    torch.manual_seed(0)
    tm, sm = getattr(torch.nn, name)(3, 4, **kw), getattr(nn, name)(3, 4, **kw)
    sm.load_state_dict(tm.state_dict())
    lengths = [5, 4, 2, 2, 1] if enforce else [2, 5, 1, 4, 2]
    bf = kw.get("batch_first", False)
    x = randn(5, 5, 3)
    xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ps = srnn.pack_padded_sequence(xs, lengths, bf, enforce)
    pt = trnn.pack_padded_sequence(xt, torch.tensor(lengths), bf, enforce)
    nst = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    hs = ht = None
    if with_h0:
        hn = [randn(nst, 5, 4) for _ in range(2 if name == "LSTM" else 1)]
        hs = [tt(h, requires_grad=True) for h in hn]
        ht = [torch.tensor(h, requires_grad=True) for h in hn]
    os_, hs_out = sm(ps, None if hs is None else (tuple(hs) if name == "LSTM" else hs[0]))
    ot, ht_out = tm(pt, None if ht is None else (tuple(ht) if name == "LSTM" else ht[0]))
    assert isinstance(os_, srnn.PackedSequence)
    close(os_.data, ot.data, 1e-5, 1e-5)
    ys, _ = srnn.pad_packed_sequence(os_, bf)
    yt, _ = trnn.pad_packed_sequence(ot, bf)
    close(ys, yt, 1e-5, 1e-5)
    fs = list(hs_out) if name == "LSTM" else [hs_out]
    ft = list(ht_out) if name == "LSTM" else [ht_out]
    loss_s, loss_t = (ys * tt(g := randn(*yt.shape))).sum(), (yt * torch.tensor(g)).sum()
    for a, b in zip(fs, ft):
        close(a, b, 1e-5, 1e-5)
        gg = randn(*b.shape)
        loss_s = loss_s + (a * tt(gg)).sum()
        loss_t = loss_t + (b * torch.tensor(gg)).sum()
    loss_s.backward()
    loss_t.backward()
    close(xs.grad, xt.grad, 1e-5, 1e-5)
    if with_h0:
        for a, b in zip(hs, ht):
            close(a.grad, b.grad, 1e-5, 1e-5)
    tp = dict(tm.named_parameters())
    for k, p in sm.named_parameters():
        close(p.grad, tp[k].grad, 1e-5, 1e-5)


def test_rnn_packed_errors() -> None:
    m = nn.GRU(3, 4)
    ps = srnn.pack_sequence([tt(randn(3, 2))])
    with pytest.raises(ValueError, match=r"GRU: expected packed data of shape \(\*, 3\)"):
        m(ps)
    ps = srnn.pack_sequence([tt(randn(3, 3))])
    with pytest.raises(ValueError, match=r"GRU: expected h_0 of shape \(1, 1, 4\)"):
        m(ps, tt(randn(1, 2, 4)))
