"""tessera.onnx.export: each model family is traced, checked with onnx.checker (full check),
run in onnxruntime and compared with tessera's own outputs (float32, 1e-5); dynamic axes run
with another size than the traced one."""
from __future__ import annotations

import io
import math

import numpy as np
import onnx  # the test extra installs onnx and onnxruntime: these tests always run
import onnxruntime as ort
import pytest

import tessera as ts
from tessera import nn
from tessera.nn import functional as F
from harness import REPO_ROOT

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
    here = str(REPO_ROOT / "examples")
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


# ------------------------------------------------------------------ ops
class _Ops(nn.Module):
    def forward(self, x, y):
        a = (x + 2) * y - x / (y.abs() + 1) + 3 - x ** 2 + 2 ** y.clamp(-1, 1)
        a = a + ts.maximum(x, y) - ts.minimum(x, 0.5) + (-x).exp().sqrt() + ts.where(x > y, x, 1.0)
        b = a.permute(0, 2, 1).reshape(x.shape[0], -1)  # (N, 20)
        c = ts.cat([b, b[:, :4] * 2], dim=1)  # (N, 24)
        p, q = c.chunk(2, dim=1)
        s = ts.stack([p, q], dim=1).sum(dim=1) + p.mean(-1, keepdim=True)
        m = s.masked_fill(s < 0, 0.0) + s.max(dim=1).values[:, None] + s.amin(1, keepdim=True)
        m = m + ts.tanh(m).sigmoid() * ts.log(m.abs() + 1) + m.var(dim=1, keepdim=True)
        idx = s.argmax(dim=1)
        r = m[..., 1::2] + m[:, None, :6].squeeze(1)[:, :6:1].sum() * 0.01
        eq = ((x == y) | (x != x)).float().sum() + (~(x >= 0)).float().mean()
        z = r.transpose(0, 1).T + ts.zeros_like(r) + eq
        h = x.mT @ y
        return z, idx, x.flatten(1).unsqueeze(-1).expand(-1, -1, 2), h.softmax(-1), \
            F.log_softmax(b, dim=1)[:, 2], F.leaky_relu(b, 0.2) + F.silu(b) + F.elu(b) + \
            F.hardtanh(b) + F.relu6(b) + F.softplus(b) + F.gelu(b), ts.split(b, [5, 15], dim=1)[1]


def test_elementwise_shape_reduction_indexing_ops():
    x, y = ts.randn(3, 4, 5), ts.randn(3, 4, 5)
    proto = _check(_Ops(), (x, y), (ts.randn(6, 4, 5), ts.randn(6, 4, 5)),
                   dynamic_axes={"input_0": {0: "n"}, "input_1": {0: "n"}})
    assert len(proto.graph.output) == 7


def test_embedding_gather_and_index_tensor():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.table = nn.Parameter(ts.randn(6, 3))

        def forward(self, idx, sel):
            e = self.emb(idx)  # (N, T, 4)
            return e[:, sel] + 1, self.table[sel], ts.index_select(e, 1, sel), e[:, -1]
    _check(M(), (ts.randint(0, 10, (2, 5)), ts.asarray([4, 0, 2])),
           (ts.randint(0, 10, (3, 5)), ts.asarray([1, 1, 3])),
           dynamic_axes={"input_0": [0]})


def test_layer_norm_below_opset_17_is_decomposed():
    m = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6))
    proto = _check(m, ts.randn(2, 4), opset_version=14)
    assert "LayerNormalization" not in _ops(proto)
    assert proto.opset_import[0].version == 14


# ------------------------------------------------------------------ arguments
def test_export_params_false_kwargs_and_file(tmp_path):
    m = nn.Linear(3, 2)
    path = tmp_path / "lin.onnx"
    ts.onnx.export(m, (ts.randn(4, 3),), str(path), export_params=False, input_names=["x"])
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    assert not proto.graph.initializer
    assert [i.name for i in proto.graph.input] == ["x", "weight", "bias"]
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = ts.randn(4, 3)
    got = sess.run(None, {"x": x.numpy(), "weight": m.weight.detach().numpy(),
                          "bias": m.bias.detach().numpy()})[0]
    np.testing.assert_allclose(got, m(x).detach().numpy(), rtol=TOL, atol=TOL)

    class Scale(nn.Module):
        def forward(self, x, *, factor, shift=None):
            return x * factor + (0 if shift is None else shift)
    x, s = ts.randn(2, 3), ts.randn(3)
    proto, sess = _export(Scale(), (x,), kwargs={"factor": 2.0, "shift": s},
                          input_names=["x", "shift"],
                          dynamic_shapes={"x": {0: "batch"}})
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy(), "shift": s.numpy()})[0],
                               (x * 2.0 + s).numpy(), rtol=TOL)
    # torch's legacy form: a trailing dict in args holds the keyword arguments
    proto, _ = _export(Scale(), (x, {"factor": 3.0}))
    assert len(proto.graph.input) == 1


def test_plain_function_and_list_dynamic_axes_names():
    def fn(a, b):
        return (a @ b).relu(), a.sum(0)
    a, b = ts.randn(3, 4), ts.randn(4, 2)
    proto = _check(fn, (a, b), (ts.randn(5, 4), b), dynamic_axes={"input_0": [0]})
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == \
        "input_0_dynamic_axes_1"


# ------------------------------------------------------------------ errors and warnings
def test_unsupported_op_raises_naming_op_and_opset():
    class M(nn.Module):
        def forward(self, x):
            return ts.linalg.det(x)
    with pytest.raises(ts.onnx.UnsupportedOperatorError, match=r"'linalg\.det'.*opset version 17"):
        ts.onnx.export(M(), (ts.randn(2, 3, 3),), io.BytesIO())
    with pytest.raises(ts.onnx.UnsupportedOperatorError, match=r"Trilu.*opset 14"):
        ts.onnx.export(lambda x: ts.triu(x), (ts.randn(3, 3),), io.BytesIO(), opset_version=13)


def test_inplace_and_training_errors():
    def inplace(x):
        y = x * 2
        y[0] = 1.0
        return y
    with pytest.raises(ts.onnx.UnsupportedOperatorError, match="__setitem__"):
        ts.onnx.export(inplace, (ts.randn(3),), io.BytesIO())
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    with pytest.raises(ts.onnx.OnnxExporterError, match="dropout in training mode"):
        ts.onnx.export(m, (ts.randn(2, 3),), io.BytesIO(), training=ts.onnx.TrainingMode.TRAINING)
    with pytest.raises(TypeError, match="input_name"):
        ts.onnx.export(m, (ts.randn(2, 3),), io.BytesIO(), input_name=["x"])
    with pytest.raises(ValueError, match="opset_version=7"):
        ts.onnx.export(m, (ts.randn(2, 3),), io.BytesIO(), opset_version=7)


def test_tracer_warning_on_python_value_and_unrolled_control_flow():
    def fn(x):
        if x.sum() > 0:  # data-dependent branch: traced as taken
            return x * 2
        return x - 1
    x = ts.ones(3)
    with pytest.warns(ts.onnx.TracerWarning, match="Python value"):
        proto, sess = _export(fn, (x,))
    neg = -ts.ones(3)
    np.testing.assert_allclose(_run(sess, neg)[0], (neg * 2).numpy())  # the traced branch


def test_patching_is_undone():
    before = (ts.Tensor.__add__, ts.Tensor.T, F.linear, ts.matmul, nn.ReLU._fn,
              vars(ts.Tensor)["shape"])
    ts.onnx.export(nn.Sequential(nn.Linear(2, 2), nn.ReLU()), (ts.randn(1, 2),), io.BytesIO())
    with pytest.raises(ts.onnx.UnsupportedOperatorError):
        ts.onnx.export(lambda x: ts.linalg.det(x), (ts.randn(2, 2),), io.BytesIO())
    assert (ts.Tensor.__add__, ts.Tensor.T, F.linear, ts.matmul, nn.ReLU._fn,
            vars(ts.Tensor)["shape"]) == before
    assert type(ts.ones(2).shape[0]) is int
    assert not ts.onnx.is_in_onnx_export()


def test_dynamic_batch_and_sequence_reshapes():
    class SelfAttn(nn.Module):
        def __init__(self, c=12, heads=3):
            super().__init__()
            self.heads, self.qkv, self.out = heads, nn.Linear(c, 3 * c), nn.Linear(c, c)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).unbind(2)
            y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                               v.transpose(1, 2), is_causal=True)
            y = y.transpose(1, 2).reshape(B, T, C)  # two dynamic dims: read at run time
            return self.out(y).reshape(B * T, C)
    proto = _check(SelfAttn(), ts.randn(2, 5, 12), (ts.randn(3, 8, 12),),
                   dynamic_axes={"input_0": {0: "batch", 1: "seq"}})
    assert "Shape" in _ops(proto)


def test_sizes_read_from_a_dynamic_shape_stay_dynamic():
    # _Block builds its causal mask with ts.ones(T, T) and slices it with [:T, :T], T read
    # from x.shape: the mask follows the run-time sequence length
    proto = _check(_Block(), ts.randn(2, 6, 16), (ts.randn(3, 9, 16),),
                   dynamic_axes={"input_0": {0: "batch", 1: "seq"}})
    assert "ConstantOfShape" in _ops(proto)
    gpt = _example("char_gpt")  # ts.arange(T) for the positions: a Range
    m = gpt.GPT(vocab_size=30, block_size=16, n_layer=1, n_head=2, n_embd=16)
    proto = _check(m, ts.randint(0, 30, (2, 7)), (ts.randint(0, 30, (3, 12)),),
                   dynamic_axes={"input_0": {0: "batch", 1: "seq"}})
    assert "Range" in _ops(proto)

    class Split(nn.Module):  # (B*T, C) -> (B, T, C): both dims from the shape
        def forward(self, x):
            B, T, C = x.size(0), x.size()[1], x.shape[2]
            y = (x.reshape(B * T, C) * 2).reshape(B, T, C)
            return y + ts.zeros(B, 1, C) + x.new_ones(T, C) + ts.ones(1, T, 1).expand(B, T, C)
    x = ts.randn(2, 3, 4)
    _check(Split(), x, (ts.randn(5, 7, 4),), dynamic_axes={"input_0": {0: "b", 1: "t"}})
    assert type(x.size(0)) is int and type(x.size()[1]) is int  # nothing traced stays behind


def test_size_baked_from_dynamic_axis_warns():
    def fn(x):
        n = int(x.shape[1])  # a plain int: the trace cannot follow it
        return x + ts.ones(n)
    with pytest.warns(ts.onnx.TracerWarning, match="'ones' was called with the size 6"):
        ts.onnx.export(fn, (ts.randn(2, 6),), io.BytesIO(), dynamic_axes={"input_0": [1]})


@pytest.mark.parametrize("name,model,shape", [
    ("rms_norm", lambda: nn.RMSNorm(6), (2, 6)),
    ("group_norm", lambda: nn.GroupNorm(2, 4), (2, 4, 5)),
    ("instance_norm", lambda: nn.InstanceNorm1d(4, affine=True), (2, 4, 5)),
    ("normalize", lambda: (lambda x: F.normalize(x, dim=-1)), (2, 6)),
    ("normalize_p3", lambda: (lambda x: F.normalize(x, 3.0, (1, 2))), (2, 3, 4)),
    ("local_response_norm", lambda: nn.LocalResponseNorm(2, 1e-2, 0.7, 1.5), (2, 5, 3)),
    ("interpolate", lambda: nn.Upsample(scale_factor=2), (1, 2, 3, 3)),
    ("conv_transpose", lambda: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1,
                                                  output_padding=1), (1, 2, 4, 4)),
    ("iterate_rows", lambda: (lambda x: sum(r * i for i, r in enumerate(x))), (3, 4)),
    ("activations", lambda: nn.Sequential(nn.PReLU(), nn.Mish(), nn.Hardswish(),
                                          nn.LogSigmoid(), nn.Softmin(1)), (2, 3)),
    ("activations_cpp", lambda: nn.Sequential(nn.Softsign(), nn.Tanhshrink(), nn.CELU(0.7),
                                              nn.Hardshrink(0.3), nn.Softshrink(0.2),
                                              nn.Threshold(0.1, -2.0), nn.RReLU().eval(),
                                              nn.GLU(1)), (2, 6)),
    ("softmax2d", lambda: nn.Softmax2d(), (1, 3, 2, 2)),
    ("pixel_shuffle", lambda: nn.PixelShuffle(2), (1, 4, 3, 3)),
    ("flip_topk", lambda: (lambda x: x.flip(1).topk(2, dim=1).values + ts.flip(x, axis=0)[:, :2]),
     (2, 5)),
    ("norms", lambda: (lambda x: x.std(1) + ts.linalg.vector_norm(x, dim=1)), (2, 3)),
])
def test_composite_and_extra_ops(name, model, shape):
    _check(model(), ts.randn(*shape), (ts.randn(*shape),))  # other values: nothing baked


def test_inplace_through_a_view_is_refused_and_plain_inplace_works():
    def through_view(x):
        y = x * 1
        v = y[:, 0]
        v += 1.0  # writes into y's memory
        return y
    with pytest.raises(ts.onnx.OnnxExporterError, match="in place"):
        ts.onnx.export(through_view, (ts.randn(2, 3),), io.BytesIO())

    def plain(x):
        y = x * 2
        y += 1.0
        y = F.relu(y, inplace=True)
        y *= y
        return y.contiguous()
    _check(plain, (ts.randn(2, 3),), (ts.randn(2, 3),))


def test_full_transformer_padding_mask_and_sdpa_masks():
    tr = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                        dim_feedforward=16, dropout=0.0, batch_first=True)
    _check(tr, (ts.randn(2, 5, 8), ts.randn(2, 4, 8)), (ts.randn(3, 5, 8), ts.randn(3, 4, 8)),
           dynamic_axes={"input_0": [0], "input_1": [0]})

    class KeyPadding(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x, pad):
            return self.mha(x, x, x, key_padding_mask=pad, need_weights=False)[0]
    pad = ts.asarray([[False, False, True], [False, True, True]])
    _check(KeyPadding(), (ts.randn(2, 3, 8), pad),
           (ts.randn(2, 3, 8), ts.asarray([[False, True, False], [False, False, False]])))

    def sdpa(q, k, v, bool_mask, float_mask):
        return (F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask)
                + F.scaled_dot_product_attention(q, k, v, attn_mask=float_mask, scale=0.3))
    qkv = (ts.randn(1, 2, 3, 4), ts.randn(1, 2, 5, 4), ts.randn(1, 2, 5, 4))
    bm = ts.asarray(np.array([[1, 0, 1, 1, 0], [1, 1, 0, 0, 1], [0, 1, 1, 1, 1]], dtype=bool))
    _check(sdpa, qkv + (bm, ts.randn(3, 5)))


def test_boolean_mask_index_is_refused():
    for key in (lambda x: x > 0, lambda x: [True, False, True]):
        with pytest.raises(ts.onnx.UnsupportedOperatorError, match="boolean mask"):
            ts.onnx.export(lambda x, k=key: (x * 1)[k(x)], (ts.randn(3),), io.BytesIO())
    _check(lambda x: (x * 1)[[2, 0]] + x[np.array([1, 1])], (ts.randn(3, 2),),
           (ts.randn(3, 2),))


@pytest.mark.parametrize("opset", [14, 18, 21])
def test_opsets(opset):
    """Reduce*/Split/LayerNormalization change form across opsets."""
    x, y = ts.randn(3, 4, 5), ts.randn(3, 4, 5)
    proto = _check(_Ops(), (x, y), opset_version=opset)
    assert proto.opset_import[0].version == opset
    _check(_Block(), ts.randn(2, 6, 16), opset_version=opset)


def test_expand_to_a_dynamic_size():
    class Cls(nn.Module):  # ViT's class token: expanded to the batch size read from a shape
        def __init__(self, plain_int=False):
            super().__init__()
            self.cls = nn.Parameter(ts.randn(1, 1, 4))
            self.plain_int = plain_int

        def forward(self, x):
            b = int(x.shape[0]) if self.plain_int else x.shape[0]
            return ts.cat([self.cls.expand(b, -1, -1), x], dim=1)
    _check(Cls(), ts.randn(3, 5, 4), (ts.randn(6, 5, 4),), dynamic_axes={"input_0": {0: "b"}})
    with pytest.warns(ts.onnx.TracerWarning, match="size 3"):
        ts.onnx.export(Cls(plain_int=True), (ts.randn(3, 5, 4),), io.BytesIO(),
                       dynamic_axes={"input_0": {0: "batch"}})


@pytest.mark.parametrize("kw", [dict(scale_factor=2), dict(scale_factor=1.5),
                                dict(size=(5, 7), mode="bilinear"),
                                dict(scale_factor=1.7, mode="bilinear", align_corners=True),
                                dict(size=(6, 4), mode="bicubic"),
                                dict(scale_factor=2.5, mode="nearest-exact")])
def test_interpolate_exports_as_resize(kw):
    _check(lambda x: F.interpolate(x, **kw), (ts.randn(2, 3, 4, 5),), (ts.randn(2, 3, 4, 5),))
