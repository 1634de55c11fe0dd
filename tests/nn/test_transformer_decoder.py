"""TransformerDecoderLayer, TransformerDecoder and Transformer vs PyTorch with identical
weights: state-dict keys, outputs, gradients of the inputs and every parameter, masks,
norm_first/activation/batch_first/bias variants, generate_square_subsequent_mask, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn
from harness import close, randn, tt


def _keys(m) -> list:
    return [(k, tuple(v.shape)) for k, v in m.state_dict().items()]


def run_both(sm, tm, arrays, kwargs_s=None, kwargs_t=None, train=True, tol=2e-5) -> None:
    assert _keys(sm) == _keys(tm)
    sm.load_state_dict(tm.state_dict())
    sm.train(train)
    tm.train(train)
    ins_s = [tt(a, requires_grad=True) for a in arrays]
    ins_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    ys, yt = sm(*ins_s, **(kwargs_s or {})), tm(*ins_t, **(kwargs_t or {}))
    close(ys, yt, tol, tol)
    g = randn(*yt.shape)
    ys.backward(tt(g))
    yt.backward(torch.tensor(g))
    for a, b in zip(ins_s, ins_t):
        close(a.grad, b.grad, tol, tol)
    tp = dict(tm.named_parameters())
    for k, p in sm.named_parameters():
        close(p.grad, tp[k].grad, tol, tol)


def _masks(L: int, S: int, n: int):
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L)
    tkpm = np.zeros((n, L), bool)
    tkpm[0, -1] = True
    mkpm = np.zeros((n, S), bool)
    mkpm[1, :2] = True
    mem_mask = np.zeros((L, S), bool)
    mem_mask[0, 1] = True
    s = dict(tgt_mask=ts.asarray(causal.numpy()), tgt_key_padding_mask=ts.asarray(tkpm),
             memory_key_padding_mask=ts.asarray(mkpm), memory_mask=ts.asarray(mem_mask))
    t = dict(tgt_mask=causal, tgt_key_padding_mask=torch.tensor(tkpm),
             memory_key_padding_mask=torch.tensor(mkpm), memory_mask=torch.tensor(mem_mask))
    return s, t


LAYER_KW = [dict(), dict(norm_first=True), dict(activation="gelu"), dict(batch_first=True),
            dict(bias=False), dict(norm_first=True, batch_first=True, layer_norm_eps=1e-3)]


@pytest.mark.parametrize("case", range(len(LAYER_KW)))
@pytest.mark.parametrize("masked", [False, True])
def test_decoder_layer_matches_torch(case: int, masked: bool) -> None:
    kw = LAYER_KW[case]
    torch.manual_seed(case)
    tm = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **kw)
    sm = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **kw)
    bf = kw.get("batch_first", False)
    tgt = randn(3, 4, 8) if bf else randn(4, 3, 8)
    mem = randn(3, 5, 8) if bf else randn(5, 3, 8)
    ks, kt = _masks(4, 5, 3) if masked else ({}, {})
    run_both(sm, tm, [tgt, mem], ks, kt)


def test_decoder_layer_unbatched_causal_and_eval() -> None:
    tm = torch.nn.TransformerDecoderLayer(8, 4, 16, dropout=0.3)
    sm = nn.TransformerDecoderLayer(8, 4, 16, dropout=0.3)
    run_both(sm, tm, [randn(4, 8), randn(6, 8)], dict(tgt_is_causal=True,
             tgt_mask=nn.Transformer.generate_square_subsequent_mask(4)),
             dict(tgt_is_causal=True, tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4)),
             train=False)
    # dropout acts in training
    sm.train()
    x, m = tt(randn(4, 2, 8)), tt(randn(5, 2, 8))
    assert not np.allclose(sm(x, m).numpy(), sm(x, m).numpy())


@pytest.mark.parametrize("with_norm", [False, True])
def test_decoder_stack_matches_torch(with_norm: bool) -> None:
    tl = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    sl = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    tm = torch.nn.TransformerDecoder(tl, 3, torch.nn.LayerNorm(8) if with_norm else None)
    sm = nn.TransformerDecoder(sl, 3, nn.LayerNorm(8) if with_norm else None)
    ks, kt = _masks(4, 5, 3)
    run_both(sm, tm, [randn(4, 3, 8), randn(5, 3, 8)], ks, kt)


@pytest.mark.parametrize("kw", [dict(), dict(norm_first=True, activation="gelu"),
                                dict(batch_first=True, bias=False)])
def test_transformer_matches_torch(kw) -> None:
    torch.manual_seed(1)
    tm = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, **kw)
    sm = nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, **kw)
    bf = kw.get("batch_first", False)
    src = randn(3, 5, 8) if bf else randn(5, 3, 8)
    tgt = randn(3, 4, 8) if bf else randn(4, 3, 8)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4)
    skpm = np.zeros((3, 5), bool)
    skpm[2, -2:] = True
    run_both(sm, tm, [src, tgt],
             dict(tgt_mask=ts.asarray(causal.numpy()), src_key_padding_mask=ts.asarray(skpm),
                  memory_key_padding_mask=ts.asarray(skpm)),
             dict(tgt_mask=causal, src_key_padding_mask=torch.tensor(skpm),
                  memory_key_padding_mask=torch.tensor(skpm)))


def test_transformer_init_mask_and_errors() -> None:
    m = nn.Transformer(16, 4, 1, 1, 32)
    w = m.encoder.layers[0].linear1.weight.numpy()
    bound = np.sqrt(6.0 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound  # xavier_uniform
    assert isinstance(m.encoder.norm, nn.LayerNorm) and isinstance(m.decoder.norm, nn.LayerNorm)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ts.float64)
    assert mask.dtype == ts.float64
    close(mask, torch.nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64), 0, 0)
    with pytest.raises(ValueError, match=r"Transformer: the batch number of src \(5, 3, 16\) and "
                                         r"tgt \(4, 2, 16\) must be equal"):
        m(tt(randn(5, 3, 16)), tt(randn(4, 2, 16)))
    with pytest.raises(ValueError, match="must be equal to d_model 16"):
        m(tt(randn(5, 3, 8)), tt(randn(4, 3, 8)))
    with pytest.raises(ValueError, match="both be batched"):
        m(tt(randn(5, 3, 16)), tt(randn(4, 16)))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerDecoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize("kw", [dict(kdim=3, vdim=5), dict(add_bias_kv=True),
                                dict(add_zero_attn=True),
                                dict(add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5,
                                     bias=False),
                                dict(add_bias_kv=True, batch_first=True)])
@pytest.mark.parametrize("masked", [False, True])
def test_multihead_attention_kdim_vdim_bias_kv_zero_attn(kw, masked: bool) -> None:
    torch.manual_seed(0)
    tm, sm = torch.nn.MultiheadAttention(8, 2, **kw), nn.MultiheadAttention(8, 2, **kw)
    assert _keys(sm) == _keys(tm)
    sm.load_state_dict(tm.state_dict())
    bf = kw.get("batch_first", False)
    arrays = [randn(4, 3, 8), randn(6, 3, kw.get("kdim", 8)), randn(6, 3, kw.get("vdim", 8))]
    if bf:
        arrays = [np.ascontiguousarray(a.transpose(1, 0, 2)) for a in arrays]
    ks, kt = {}, {}
    if masked:
        kpm = np.zeros((3, 6), bool)
        kpm[0, -1] = True
        am = np.zeros((4, 6), np.float32)
        am[1, 2] = -np.inf
        am[2, 0] = 0.5
        ks = dict(key_padding_mask=ts.asarray(kpm), attn_mask=ts.asarray(am))
        kt = dict(key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(am))
    ins_s = [tt(a, requires_grad=True) for a in arrays]
    ins_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    ys, ws = sm(*ins_s, **ks)
    yt, wt = tm(*ins_t, **kt)
    close(ys, yt, 2e-5, 2e-5)
    close(ws, wt, 2e-5, 2e-5)
    g = randn(*yt.shape)
    ys.backward(tt(g))
    yt.backward(torch.tensor(g))
    for a, b in zip(ins_s, ins_t):
        close(a.grad, b.grad, 2e-5, 2e-5)
    tp = dict(tm.named_parameters())
    for k, p in sm.named_parameters():
        close(p.grad, tp[k].grad, 2e-5, 2e-5)


def test_multihead_attention_init_layouts() -> None:
    m = nn.MultiheadAttention(8, 2, kdim=4, vdim=6, add_bias_kv=True)
    assert m.in_proj_weight is None and not m._qkv_same_embed_dim
    assert tuple(m.k_proj_weight.shape) == (8, 4) and tuple(m.v_proj_weight.shape) == (8, 6)
    assert tuple(m.bias_k.shape) == (1, 1, 8) and np.abs(m.bias_k.numpy()).max() > 0
    bound = np.sqrt(6.0 / (8 + 4))
    assert np.abs(m.k_proj_weight.numpy()).max() <= bound
