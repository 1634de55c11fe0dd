"""tessera.onnx.export: each model family is traced, checked with onnx.checker (full check),
run in onnxruntime and compared with tessera's own outputs (float32, 1e-5); dynamic axes run
with another size than the traced one."""
from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pytest

import tessera as ts
from tessera import nn
from tessera.nn import functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

TOL = 1e-5


def _export(model, args, **kw):
    buf = io.BytesIO()
    ts.onnx.export(model, args, buf, **kw)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return proto, ort.InferenceSession(buf.getvalue(), opts, providers=["CPUExecutionProvider"])


def _run(sess, *xs):
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: x.numpy() for n, x in zip(names, xs)})


def _check(model, args, run_args=None, **kw):
    """Export ``model`` traced on ``args``; compare onnxruntime with tessera on ``run_args``
    (default: args). Returns the ONNX proto."""
    if isinstance(args, ts.Tensor):
        args = (args,)
    proto, sess = _export(model, args, **kw)
    for xs in [args] + ([run_args] if run_args is not None else []):
        got = _run(sess, *xs)
        if hasattr(model, "eval"):
            model.eval()
        with ts.no_grad():
            want = model(*xs)
        flat = []

        def walk(o):
            if isinstance(o, ts.Tensor):
                flat.append(o)
            elif isinstance(o, (list, tuple)):
                for e in o:
                    walk(e)
        walk(want)
        assert len(got) == len(flat)
        for g, w in zip(got, flat):
            assert g.shape == tuple(w.shape)
            np.testing.assert_allclose(g, w.numpy(), rtol=TOL, atol=TOL)
    return proto


def _ops(proto):
    return {n.op_type for n in proto.graph.node}


@pytest.fixture(autouse=True)
def _seed():
    ts.manual_seed(0)


# ------------------------------------------------------------------ MLP
def test_mlp_names_and_dynamic_batch():
    m = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(), nn.Tanh(),
                      nn.Linear(16, 8), nn.Sigmoid(), nn.Dropout(0.5), nn.Linear(8, 4),
                      nn.Softmax(dim=-1))
    m.train()  # export traces in eval mode (TrainingMode.EVAL) and switches back
    ts.onnx.export(m, (ts.randn(3, 6),), io.BytesIO())
    assert m.training
    proto = _check(m, ts.randn(3, 6), (ts.randn(11, 6),), input_names=["features"],
                   output_names=["probs"],
                   dynamic_axes={"features": {0: "batch"}, "probs": {0: "batch"}})
    assert [i.name for i in proto.graph.input] == ["features"]
    assert [o.name for o in proto.graph.output] == ["probs"]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    inits = {i.name for i in proto.graph.initializer}
    assert {"0.weight", "0.bias", "8.weight"} <= inits  # state_dict names
    assert "Dropout" not in _ops(proto) and "Gemm" in _ops(proto)


# ------------------------------------------------------------------ CNN
class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding="same" if False else 1, groups=2)
        self.c3 = nn.Conv2d(8, 6, 3, padding="same", dilation=2)
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(2, stride=1)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        x = F.relu(self.bn(self.c1(x)))
        x = self.pool(x)
        x = self.c2(x).relu()
        x = self.avg(self.c3(x))
        return self.fc(ts.flatten(self.gap(x), 1))


def test_cnn_conv_pool_batchnorm_dynamic_batch():
    m = _CNN()
    with ts.no_grad():  # non-trivial running statistics
        m.bn.running_mean[...] = ts.randn(8) * 0.1
        m.bn.running_var[...] = ts.rand(8) + 0.5
    proto = _check(m, ts.randn(2, 3, 16, 16), (ts.randn(5, 3, 16, 16),), input_names=["img"],
                   dynamic_axes={"img": {0: "n"}})
    assert {"Conv", "BatchNormalization", "MaxPool", "AveragePool",
            "GlobalAveragePool"} <= _ops(proto)


def test_cnn_1d_and_flatten_module():
    m = nn.Sequential(nn.Conv1d(4, 6, 5, stride=2, padding=2), nn.ReLU(), nn.MaxPool1d(2),
                      nn.AvgPool1d(3, stride=1, padding=1), nn.AdaptiveAvgPool1d(4),
                      nn.Flatten(), nn.Linear(24, 3))
    _check(m, ts.randn(2, 4, 32), (ts.randn(7, 4, 32),), dynamic_axes={"input_0": [0]})


# ------------------------------------------------------------------ LSTM / GRU
@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
@pytest.mark.parametrize("batch_first,bidirectional,layers", [(False, False, 1),
                                                                (True, True, 2)])
def test_recurrent(cls, batch_first, bidirectional, layers):
    m = cls(5, 7, num_layers=layers, batch_first=batch_first, bidirectional=bidirectional)
    x = ts.randn(3, 4, 5)
    x2 = ts.randn(6, 4, 5) if batch_first else ts.randn(3, 6, 5)
    ax = 0 if batch_first else 1
    names = ["y", "h", "c"] if cls is nn.LSTM else ["y", "h"]
    proto = _check(m, x, (x2,), input_names=["x"], output_names=names,
                   dynamic_axes={"x": {ax: "batch"}, "y": {ax: "batch"}})
    assert cls.__name__ in _ops(proto)


def test_lstm_with_initial_state_and_head():
    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 6)
            self.lstm = nn.LSTM(6, 8, batch_first=True)
            self.head = nn.Linear(8, 3)

        def forward(self, idx, h0, c0):
            y, (h, c) = self.lstm(self.emb(idx), (h0, c0))
            return self.head(y), h

    m = Tagger()
    idx = ts.randint(0, 20, (2, 5))
    h0, c0 = ts.randn(1, 2, 8), ts.randn(1, 2, 8)
    _check(m, (idx, h0, c0))


# ------------------------------------------------------------------ Transformer layers
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer(norm_first):
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.1, batch_first=True,
                                       norm_first=norm_first, activation="gelu")
    m = nn.TransformerEncoder(layer, 2)
    proto = _check(m, ts.randn(2, 5, 16), (ts.randn(4, 5, 16),), input_names=["src"],
                   dynamic_axes={"src": {0: "batch"}})
    assert "LayerNormalization" in _ops(proto)


def test_transformer_encoder_causal_mask_seq_first():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    mask = nn.Transformer.generate_square_subsequent_mask(6)

    class Enc(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = layer

        def forward(self, src):
            return self.layer(src, src_mask=mask)
    _check(Enc(), ts.randn(6, 3, 8), (ts.randn(6, 5, 8),), dynamic_axes={"input_0": {1: "b"}})


def test_transformer_decoder_layer():
    m = nn.TransformerDecoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True)
    tgt, memory = ts.randn(2, 5, 16), ts.randn(2, 7, 16)
    _check(m, (tgt, memory), (ts.randn(3, 5, 16), ts.randn(3, 7, 16)),
           input_names=["tgt", "memory"],
           dynamic_axes={"tgt": {0: "batch"}, "memory": {0: "batch"}})


def test_multihead_attention_weights():
    m = nn.MultiheadAttention(12, 3, batch_first=True)
    q, k, v = ts.randn(2, 4, 12), ts.randn(2, 6, 12), ts.randn(2, 6, 12)
    _check(m, (q, k, v), (ts.randn(5, 4, 12), ts.randn(5, 6, 12), ts.randn(5, 6, 12)),
           dynamic_axes={"input_0": [0], "input_1": [0], "input_2": [0]})


# ------------------------------------------------------------------ GPT (the examples' models)
def _example(name):
    import importlib
    import os
    import sys
    here = os.path.join(os.path.dirname(__file__), "..", "examples")
    sys.path.insert(0, os.path.abspath(here))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def test_example_char_gpt_causal_sdpa():
    gpt = _example("char_gpt")
    m = gpt.GPT(vocab_size=30, block_size=16, n_layer=2, n_head=2, n_embd=16)
    idx = ts.randint(0, 30, (2, 12))
    proto = _check(m, idx, (ts.randint(0, 30, (5, 12)),), input_names=["idx"],
                   output_names=["logits"],
                   dynamic_axes={"idx": {0: "batch"}, "logits": {0: "batch"}})
    assert {"Gather", "LayerNormalization", "Softmax", "MatMul"} <= _ops(proto)


def test_example_mnist_models():
    mlp, cnn = _example("mnist_mlp"), _example("mnist_cnn")
    _check(mlp.make_model(), ts.randn(2, 1, 28, 28), (ts.randn(3, 1, 28, 28),),
           dynamic_axes={"input_0": {0: "b"}})
    _check(cnn.ConvNet(), ts.randn(2, 1, 28, 28), (ts.randn(3, 1, 28, 28),),
           dynamic_axes={"input_0": {0: "b"}})


class _Block(nn.Module):
    """A GPT block written with explicit ops: masked_fill + softmax attention, split, views."""

    def __init__(self, c=16, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
        self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = ts.tril(ts.ones(T, T)).view(1, 1, T, T)
        att = att.masked_fill(mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


def test_gpt_block_explicit_attention():
    _check(_Block(), ts.randn(2, 6, 16), (ts.randn(4, 6, 16),),
           dynamic_axes={"input_0": {0: "batch"}})


def test_sdpa_causal_dynamic_sequence():
    class Attn(nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    qkv = [ts.randn(2, 3, 5, 4) for _ in range(3)]
    run = [ts.randn(1, 3, 9, 4) for _ in range(3)]
    dyn = {f"input_{i}": {0: "b", 2: "t"} for i in range(3)}
    _check(Attn(), tuple(qkv), tuple(run), dynamic_axes=dyn)
