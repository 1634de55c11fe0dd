"""nn.functional entry points that are the C++ ops themselves (issue 17: no Python layer
between F.linear and csrc/ops/nn): PyTorch's signatures through inspect.signature, PyTorch's
TypeError for non-tensor arguments (raised by the binding, csrc/python/arg_errors.cpp), the
legacy size_average/reduce warning, and one node per call."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
from tessera import _C
from tessera.nn import functional as F

CPP = ["linear", "layer_norm", "rms_norm", "softmax", "log_softmax", "gelu", "cross_entropy",
       "nll_loss", "scaled_dot_product_attention"]


@pytest.mark.parametrize("name", CPP)
def test_entry_point_is_the_cpp_op(name: str) -> None:
    f = getattr(F, name)
    assert f is getattr(_C, name) and not inspect.isfunction(f)
    ours = [(p.name, p.default) for p in inspect.signature(f).parameters.values()]
    try:
        theirs = [(p.name, p.default)
                  for p in inspect.signature(getattr(TF, name)).parameters.values()]
    except ValueError:  # torch's C builtins: the names from their docstring's first line
        doc = getattr(TF, name).__doc__.strip()
        inner = doc[doc.index("(") + 1:doc.index(")")]
        names = [a.split("=")[0].strip(" *\n") for a in inner.split(",")]
        assert [n for n, _ in ours] == [n for n in names if n]
        return
    assert ours == theirs


def _tensor_params(name: str) -> list:
    """(position, name, optional) of the Tensor parameters of F.<name>'s binding."""
    sig = getattr(F, name)
    out = []
    for i, p in enumerate(inspect.signature(sig).parameters.values()):
        if p.name in ("input", "weight", "bias", "target", "query", "key", "value", "attn_mask"):
            if name in ("layer_norm", "rms_norm") and p.name == "weight" or p.name in (
                    "bias", "attn_mask") or (p.name == "weight" and name in (
                        "cross_entropy", "nll_loss")):
                out.append((i, p.name, True))
            else:
                out.append((i, p.name, False))
    return out


CASES = [(n, *t) for n in CPP for t in _tensor_params(n)]


@pytest.mark.parametrize("name,pos,pname,optional", CASES,
                         ids=[f"{n}-{p}" for n, _, p, _ in CASES])
def test_non_tensor_argument_is_torchs_typeerror(name: str, pos: int, pname: str,
                                                 optional: bool) -> None:
    f = getattr(F, name)
    x = ts.ones((2, 3, 4, 4))
    # the arguments before pos: tensors or the shape layer norms take
    before = [(4,) if (name in ("layer_norm", "rms_norm") and i == 1) else x for i in range(pos)]
    for bad in ["a", 1.5, [1.0, 2.0], np.ones(3)] + ([] if optional else [None]):
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument '{pname}' \(position "
                                            rf"{pos + 1}\) must be Tensor.*, not "):
            f(*before, bad)
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument '{pname}' must be Tensor"):
            f(*before, **{pname: bad})


def test_torch_raises_the_same_class() -> None:
    for bad in ("a", 1.5, None):
        for m in (TF, F):
            with pytest.raises(TypeError):
                m.linear(bad, (torch if m is TF else ts).ones((2, 2)))


def test_legacy_reduction_warns_at_the_caller() -> None:
    x = ts.asarray(np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32))
    t = ts.asarray(np.array([1, 0, 4, 2]))
    xt, tt = torch.tensor(x.numpy()), torch.tensor(t.numpy())
    for kw, want in (({"reduce": False}, "none"), ({"size_average": False}, "sum"),
                     ({"size_average": True, "reduce": True}, "mean")):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = F.cross_entropy(x, t, **kw)
        assert any(f"reduction='{want}'" in str(m.message) for m in w)
        assert w[0].filename == __file__
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = TF.cross_entropy(xt, tt, **kw)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="size_average and reduce take bools"):
        F.nll_loss(x, t, None, "sum")


def test_positional_legacy_slots_bind_as_torchs() -> None:
    """cross_entropy(input, target, weight, size_average, ignore_index, reduce, reduction)."""
    x = ts.asarray(np.random.default_rng(1).standard_normal((3, 4)))
    t = ts.asarray(np.array([1, -1, 3]))
    got = F.cross_entropy(x, t, None, None, -1, None, "sum", 0.1)
    ref = TF.cross_entropy(torch.tensor(x.numpy()), torch.tensor(t.numpy()), None, None, -1,
                           None, "sum", 0.1)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12)
    assert F.softmax(x, 1, 3, ts.float32).dtype == ts.float32  # _stacklevel before dtype


def test_one_node_per_call() -> None:
    x = ts.ones((2, 3), requires_grad=True)
    w = ts.ones((4, 3), requires_grad=True)
    assert F.linear(x, w).grad_fn.name() == "LinearBackward0"
    assert F.softmax(x, -1).grad_fn.name() == "SoftmaxBackward0"
    assert F.layer_norm(x, (3,)).grad_fn.name() == "NativeLayerNormBackward0"
