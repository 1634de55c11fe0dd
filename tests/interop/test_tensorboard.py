"""ts.utils.tensorboard.SummaryWriter against torch.utils.tensorboard: the same calls write
event files that TensorBoard's EventAccumulator reads back with the same contents."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch.utils.tensorboard import SummaryWriter as TorchWriter

import tessera as ts
from tessera.utils.tensorboard import SummaryWriter

ea_mod = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


def _read(path):
    acc = ea_mod.EventAccumulator(str(path), size_guidance={"images": 0, "histograms": 0,
                                                            "scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def _log(writer, lib, rng):
    arr = rng.standard_normal(1000).astype(np.float32)
    img = rng.random((3, 8, 10)).astype(np.float32)
    imgs = (rng.random((5, 1, 4, 6)) * 255).astype(np.uint8)
    for step in range(5):
        writer.add_scalar("loss", lib.tensor(1.0 / (step + 1)), step)
        writer.add_scalar("lr", 0.1 * step, step)
    writer.add_histogram("w", lib.tensor(arr), 3)
    writer.add_histogram("w_auto", lib.tensor(arr), 4, bins="auto")
    writer.add_image("img", lib.tensor(img), 0)
    writer.add_image("img_hwc", lib.tensor(img.transpose(1, 2, 0)), 1, dataformats="HWC")
    writer.add_image("img_hw", lib.tensor(img[0]), 1, dataformats="HW")
    writer.add_images("batch", lib.tensor(imgs), 2)
    writer.add_text("note", "hello **world**", 7)


def test_same_events_as_torch(tmp_path):
    with SummaryWriter(tmp_path / "ts") as w:
        _log(w, ts, np.random.default_rng(0))
    tw = TorchWriter(str(tmp_path / "torch"))
    _log(tw, torch, np.random.default_rng(0))
    tw.close()
    ours, theirs = _read(tmp_path / "ts"), _read(tmp_path / "torch")
    for kind in ("scalars", "histograms", "images", "tensors"):
        assert sorted(ours.Tags()[kind]) == sorted(theirs.Tags()[kind]), kind
    for tag in ("loss", "lr"):
        a, b = ours.Scalars(tag), theirs.Scalars(tag)
        assert [(e.step, e.value) for e in a] == [(e.step, e.value) for e in b]
    for tag in ("w", "w_auto"):
        (a,), (b,) = ours.Histograms(tag), theirs.Histograms(tag)
        assert a.step == b.step
        np.testing.assert_allclose(a.histogram_value.bucket_limit, b.histogram_value.bucket_limit)
        assert list(a.histogram_value.bucket) == list(b.histogram_value.bucket)
        np.testing.assert_allclose([a.histogram_value.sum, a.histogram_value.sum_squares],
                                   [b.histogram_value.sum, b.histogram_value.sum_squares], rtol=1e-5)
    from PIL import Image
    for tag in ("img", "img_hwc", "img_hw", "batch"):
        (a,), (b,) = ours.Images(tag), theirs.Images(tag)
        assert (a.step, a.width, a.height) == (b.step, b.width, b.height)
        pa = np.asarray(Image.open(io.BytesIO(a.encoded_image_string)))
        pb = np.asarray(Image.open(io.BytesIO(b.encoded_image_string)))
        np.testing.assert_array_equal(pa, pb)
    (a,), (b,) = ours.Tensors("note/text_summary"), theirs.Tensors("note/text_summary")
    assert a.step == b.step == 7 and a.tensor_proto.string_val == b.tensor_proto.string_val


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    for lib, W, d in ((ts, SummaryWriter, "ts"), (torch, TorchWriter, "torch")):
        w = W(str(tmp_path / d))
        for step in range(3):
            w.add_scalars("run", {"a": step * 1.0, "b": -step * 1.0}, step)
        w.close()
    for d in ("ts", "torch"):
        assert sorted(x for x in os.listdir(tmp_path / d) if not x.startswith("events")) == ["run_a", "run_b"]
    for sub in ("run_a", "run_b"):
        a = [(e.step, e.value) for e in _read(tmp_path / "ts" / sub).Scalars("run")]
        b = [(e.step, e.value) for e in _read(tmp_path / "torch" / sub).Scalars("run")]
        assert a == b and len(a) == 3


def test_add_hparams_same_as_torch(tmp_path):
    hp = {"lr": 0.01, "bsize": 32, "opt": "adam", "nesterov": True}
    metrics = {"hparam/accuracy": 0.9, "hparam/loss": 0.25}
    for W, d in ((SummaryWriter, "ts"), (TorchWriter, "torch")):
        w = W(str(tmp_path / d))
        w.add_hparams(hp, metrics, run_name="trial")
        w.close()
    from tensorboard.plugins.hparams import plugin_data_pb2
    contents = []
    for d in ("ts", "torch"):
        acc = _read(tmp_path / d / "trial")
        meta = acc.SummaryMetadata("_hparams_/session_start_info")
        data = plugin_data_pb2.HParamsPluginData.FromString(meta.plugin_data.content)
        contents.append(dict(data.session_start_info.hparams))
        assert [e.value for e in acc.Scalars("hparam/accuracy")] == pytest.approx([0.9])
    # torch logs a bool as a number (its bool branch comes after the int one); tessera keeps
    # it a bool, which the HParams dashboard shows as one
    assert contents[0].pop("nesterov").bool_value is True
    assert contents[1].pop("nesterov").number_value == 1
    assert contents[0] == contents[1]
    with pytest.raises(TypeError):
        SummaryWriter(str(tmp_path / "bad")).add_hparams([1], {})


def test_add_graph_of_a_model(tmp_path):
    model = ts.nn.Sequential(ts.nn.Linear(3, 4), ts.nn.ReLU(), ts.nn.Linear(4, 2))
    with SummaryWriter(tmp_path) as w:
        w.add_graph(model, ts.ones(5, 3))
    acc = _read(tmp_path)
    g = acc.Graph()
    names = {n.name: n for n in g.node}
    assert "Sequential/0.weight" in names and "Sequential/2.bias" in names
    ops = [n.op for n in g.node]
    assert ops.count("LinearBackward0") == 2 or ops.count("AddmmBackward0") == 2, ops
    linear_nodes = [n for n in g.node if n.op.startswith("Linear")]
    assert any(n.name.startswith("Sequential/Linear[2]/") for n in linear_nodes)
    # the last Linear consumes the ReLU's output and its own parameters
    last = next(n for n in linear_nodes if n.name.startswith("Sequential/Linear[2]/"))
    assert "Sequential/2.weight" in last.input
    assert any(names[i].op.startswith("Relu") for i in last.input)
    assert any(n.name == "output/0" for n in g.node)


def test_flush_close_and_reopen(tmp_path):
    w = SummaryWriter(tmp_path)
    w.add_scalar("x", 1.0, 0)
    w.flush()
    assert [e.value for e in _read(tmp_path).Scalars("x")] == [1.0]
    w.close()
    w.close()  # a second close is a no-op
    w.add_scalar("x", 2.0, 1)  # reopens a new event file, as torch's
    w.close()
    assert sorted(e.value for e in _read(tmp_path).Scalars("x")) == [1.0, 2.0]
    assert w.get_logdir() == str(tmp_path)


def test_bad_values_raise_clearly(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(ValueError, match="add_scalar"):
            w.add_scalar("x", ts.ones(3))
        with pytest.raises(ValueError, match="add_histogram"):
            w.add_histogram("h", ts.ones(0))
        with pytest.raises(ValueError, match="dataformats"):
            w.add_image("i", ts.ones(3, 4, 4), dataformats="HWCN")
        with pytest.raises(ValueError, match="dims"):
            w.add_image("i", ts.ones(4, 4))


def test_import_error_names_the_package():
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "try:\n    import tessera.utils.tensorboard\nexcept ImportError as e:\n"
            "    print('IMPORTERROR', e)\n")
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert "IMPORTERROR" in out.stdout and "'tensorboard'" in out.stdout, out.stdout + out.stderr
    assert "pip install tensorboard" in out.stdout
