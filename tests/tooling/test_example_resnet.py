"""examples/resnet.py in its CI setting: a ResNet-18 (narrow) trains a few steps on synthetic
32x32 images in both memory formats, with a progress bar and a loss plot."""
from __future__ import annotations

import math
import os
import sys

import pytest
from harness import REPO_ROOT

EXAMPLES = str(REPO_ROOT / "examples")


@pytest.mark.parametrize("channels_last", [False, True])
def test_resnet_example_small(tmp_path, capsys, channels_last):
    sys.path.insert(0, EXAMPLES)
    try:
        import resnet
    finally:
        sys.path.remove(EXAMPLES)
    plot = str(tmp_path / "loss.png")
    argv = ["--synthetic", "--small", "--width", "4", "--steps", "3", "--batch-size", "16",
            "--threads", "1", "--plot", plot] + (["--channels-last"] if channels_last else [])
    losses = resnet.main(argv)
    assert len(losses) == 3 and all(math.isfinite(v) for v in losses)
    assert os.path.getsize(plot) > 0
    out = capsys.readouterr().out
    assert "3/3" in out and "test accuracy" in out


def test_resnet18_shape_matches_torch():
    import torch
    import tessera as ts
    sys.path.insert(0, EXAMPLES)
    try:
        import resnet
    finally:
        sys.path.remove(EXAMPLES)
    tm, sm = resnet.resnet18(torch.nn, 10, 3, 4), resnet.resnet18(ts.nn, 10, 3, 4)
    assert sorted(tm.state_dict()) == sorted(sm.state_dict())
    sm.load_state_dict({k: ts.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = torch.randn(2, 3, 32, 32)
    import numpy as np
    np.testing.assert_allclose(sm(ts.tensor(x.numpy())).detach().numpy(),
                               tm(x).detach().numpy(), atol=1e-4)
