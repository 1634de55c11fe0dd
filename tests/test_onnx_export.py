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
