"""F.batch_norm, group_norm, instance_norm, local_response_norm and normalize as C++ bindings
(csrc/python/bind_norm.cpp, csrc/ops/nn/norm.cpp), and torch's top-level forms (ts.batch_norm,
ts.group_norm, ts.instance_norm, ts.layer_norm: csrc/python/bind_torch_nn.cpp): one definition
each, PyTorch's signatures, values (hypothesis over shapes, dtypes, strided and empty inputs)
and float64 gradients against torch and finite differences, and the errors naming the op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
import tessera.nn.functional as F
from tessera import _C
from tessera.autograd import gradcheck
from harness import compare_grads, randn, randn64, to_np

NAMES = ["batch_norm", "group_norm", "instance_norm", "local_response_norm", "normalize",
         "layer_norm", "rms_norm"]


@pytest.mark.parametrize("name", NAMES)
def test_the_binding_is_the_function(name) -> None:
    assert getattr(F, name) is getattr(_C, name)
    ours = list(inspect.signature(getattr(F, name)).parameters)
    want = [p for p in inspect.signature(getattr(TF, name)).parameters if p != "out"]
    assert ours == want


@pytest.mark.parametrize("name", ["batch_norm", "group_norm", "instance_norm", "layer_norm"])
def test_top_level_signatures(name) -> None:
    ours = list(inspect.signature(getattr(ts, name)).parameters)
    assert ours == [p.split("=")[0] for p in _torch_params(getattr(torch, name))]


def _torch_params(fn) -> list:
    doc = fn.__doc__ or ""
    if "(" in doc.split("\n")[0]:
        line = doc.split("\n")[0]
        return [a.strip() for a in line[line.index("(") + 1:line.rindex(")")].split(",")
                if a.strip() not in ("*", "")]
    return {"batch_norm": ["input", "weight", "bias", "running_mean", "running_var", "training",
                           "momentum", "eps", "cudnn_enabled"],
            "group_norm": ["input", "num_groups", "weight", "bias", "eps", "cudnn_enabled"],
            "instance_norm": ["input", "weight", "bias", "running_mean", "running_var",
                              "use_input_stats", "momentum", "eps", "cudnn_enabled"],
            "layer_norm": ["input", "normalized_shape", "weight", "bias", "eps",
                           "cudnn_enable"]}[fn.__name__]


def _strided(a: np.ndarray, flip: bool) -> tuple:
    """(tessera, torch) views of a: reversed along the last axis when `flip` (non-contiguous)."""
    t, u = ts.asarray(a.copy()), torch.tensor(a.copy())
    return (ts.flip(t, axis=-1), torch.flip(u, [-1])) if flip else (t, u)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 3), groups=st.sampled_from([1, 2, 3]), per=st.integers(1, 2),
       spatial=st.lists(st.integers(1, 4), min_size=0, max_size=2),
       dtype=st.sampled_from(["float32", "float64"]), flip=st.booleans(), affine=st.booleans())
def test_group_norm_matches_torch(n, groups, per, spatial, dtype, flip, affine) -> None:
    shape = (n, groups * per, *spatial)
    x = randn(*shape, dtype=np.dtype(dtype))
    if n and np.prod(shape) // (n * groups) == 1 and n * per * np.prod(spatial) // per == 1:
        return
    w = randn(groups * per, dtype=np.dtype(dtype)) if affine else None
    b = randn(groups * per, dtype=np.dtype(dtype)) if affine else None
    xt, xu = _strided(x, flip and len(shape) > 2)
    args_t = [None if v is None else ts.asarray(v) for v in (w, b)]
    args_u = [None if v is None else torch.tensor(v) for v in (w, b)]
    try:
        want = TF.group_norm(xu, groups, *args_u)
    except (RuntimeError, ValueError) as e:
        with pytest.raises(type(e)):
            F.group_norm(xt, groups, *args_t)
        return
    got = F.group_norm(xt, groups, *args_t)
    assert got.dtype.name == dtype
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_np(ts.group_norm(xt, groups, *args_t)), to_np(want), rtol=1e-4,
                               atol=1e-4)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 4), spatial=st.lists(st.integers(1, 4), min_size=1,
                                                                   max_size=3),
       dtype=st.sampled_from(["float32", "float64"]), flip=st.booleans(),
       stats=st.booleans(), running=st.booleans())
def test_instance_norm_matches_torch(n, c, spatial, dtype, flip, stats, running) -> None:
    if stats and np.prod(spatial) <= 1:
        spatial = spatial + [2]
    shape = (n, c, *spatial)
    x = randn(*shape, dtype=np.dtype(dtype))
    xt, xu = _strided(x, flip)
    rm, rv = randn(c, dtype=np.dtype(dtype)), np.abs(randn(c, dtype=np.dtype(dtype))) + 0.5
    if not stats:
        running = True
    rts = (ts.asarray(rm.copy()), ts.asarray(rv.copy())) if running else (None, None)
    rtu = (torch.tensor(rm.copy()), torch.tensor(rv.copy())) if running else (None, None)
    got = F.instance_norm(xt, *rts, use_input_stats=stats, momentum=0.3)
    want = TF.instance_norm(xu, *rtu, use_input_stats=stats, momentum=0.3)
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-4, atol=1e-4)
    if running:
        for a, b in zip(rts, rtu):
            np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,size", [((2, 5, 4), 3), ((1, 3, 2, 2), 2), ((2, 4, 3), 1),
                                        ((0, 3, 4), 2), ((2, 3, 2, 1, 2), 5)])
def test_local_response_norm_matches_torch(shape, size) -> None:
    compare_grads(lambda x: F.local_response_norm(x, size, 1e-2, 0.7, 1.5),
                  lambda x: TF.local_response_norm(x, size, 1e-2, 0.7, 1.5), [randn(*shape)])


@pytest.mark.parametrize("p,dim", [(2.0, 1), (1.0, -1), (float("inf"), 0), (3.0, (0, 2))])
def test_normalize_matches_torch(p, dim) -> None:
    x = randn(3, 4, 5)
    x[0, :, 0] = 0.0  # a zero vector: the eps branch
    compare_grads(lambda v: F.normalize(v, p, dim), lambda v: TF.normalize(v, p, dim), [x])


def test_batch_norm_forms_match_torch() -> None:
    x, w, b = randn64(4, 3, 5), randn64(3), randn64(3)
    rm, rv = randn64(3), np.abs(randn64(3)) + 0.5
    for training in (True, False):
        compare_grads(lambda *a: F.batch_norm(a[0], ts.asarray(rm.copy()), ts.asarray(rv.copy()),
                                              a[1], a[2], training, 0.2),
                      lambda *a: TF.batch_norm(a[0], torch.tensor(rm.copy()),
                                               torch.tensor(rv.copy()), a[1], a[2], training, 0.2),
                      [x, w, b])
        compare_grads(lambda *a: ts.batch_norm(a[0], a[1], a[2], ts.asarray(rm.copy()),
                                               ts.asarray(rv.copy()), training, 0.2, 1e-5, True),
                      lambda *a: torch.batch_norm(a[0], a[1], a[2], torch.tensor(rm.copy()),
                                                  torch.tensor(rv.copy()), training, 0.2, 1e-5,
                                                  True),
                      [x, w, b])
    # momentum=None: as the Python version, no running update
    m = ts.asarray(rm.copy())
    F.batch_norm(ts.asarray(x), m, ts.asarray(rv.copy()), training=True, momentum=None)
    np.testing.assert_array_equal(to_np(m), rm)


def test_top_level_norm_forms_match_torch() -> None:
    x, w, b = randn64(2, 4, 3), randn64(4), randn64(4)
    compare_grads(lambda *a: ts.group_norm(a[0], 2, a[1], a[2], 1e-4, False),
                  lambda *a: torch.group_norm(a[0], 2, a[1], a[2], 1e-4, False), [x, w, b])
    compare_grads(lambda *a: ts.instance_norm(a[0], a[1], a[2], None, None, True, 0.1, 1e-5,
                                              False),
                  lambda *a: torch.instance_norm(a[0], a[1], a[2], None, None, True, 0.1, 1e-5,
                                                 False), [x, w, b])
    compare_grads(lambda *a: ts.layer_norm(a[0], (3,), a[1][:3], a[2][:3], 1e-5, False),
                  lambda *a: torch.layer_norm(a[0], (3,), a[1][:3], a[2][:3], 1e-5, False),
                  [x, w, b])


def test_gradcheck_finite_differences() -> None:
    x = ts.asarray(randn64(2, 4, 3), requires_grad=True)
    w = ts.asarray(randn64(4), requires_grad=True)
    b = ts.asarray(randn64(4), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))
    assert gradcheck(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (x, w, b))
    assert gradcheck(lambda x: F.local_response_norm(x, 3), (x,))
    assert gradcheck(lambda x: F.normalize(x, 2.0, 1), (x,))


def test_group_norm_integer_layout_and_double_backward() -> None:
    x = randn64(2, 4, 1)  # one value per group and sample: the composed path
    compare_grads(lambda v: F.group_norm(v, 4), lambda v: TF.group_norm(v, 4), [x])
    xt = ts.asarray(randn64(2, 4, 3), requires_grad=True)
    xu = torch.tensor(to_np(xt), requires_grad=True)
    (gt,) = ts.autograd.grad(F.group_norm(xt, 2).pow(3).sum(), xt, create_graph=True)
    (gu,) = torch.autograd.grad(TF.group_norm(xu, 2).pow(3).sum(), xu, create_graph=True)
    gt.sum().backward()
    gu.sum().backward()
    np.testing.assert_allclose(to_np(xt.grad), to_np(xu.grad), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("call,cls,match", [
    (lambda: F.group_norm(ts.ones((2, 5, 3)), 2), ValueError, r"group_norm: 5 channels .* 2 groups"),
    (lambda: F.group_norm(ts.ones((1, 2)), 2), ValueError, r"more than 1 value per channel"),
    (lambda: F.group_norm(ts.ones((2, 4, 3)), 2, ts.ones(3)), ValueError,
     r"group_norm: weight of shape \(3,\) does not match the 4 channels"),
    (lambda: F.instance_norm(ts.ones((2, 3))), ValueError, r"instance_norm: expected .* 3 dims"),
    (lambda: F.instance_norm(ts.ones((2, 3, 1))), ValueError, r"more than 1 spatial element"),
    (lambda: F.instance_norm(ts.ones((2, 3, 4)), use_input_stats=False), ValueError,
     r"instance_norm: running_mean and running_var are required"),
    (lambda: F.batch_norm(ts.ones((2, 3)), None, None), ValueError,
     r"batch_norm: running_mean and running_var are required in eval mode"),
    (lambda: F.local_response_norm(ts.ones((2, 3)), 2), ValueError,
     r"local_response_norm: expected a 3-D"),
    (lambda: F.local_response_norm(ts.ones((2, 3, 4)), 0), ValueError, r"size must be positive"),
    (lambda: F.group_norm("x", 2), TypeError, r"group_norm"),
])
def test_errors_name_the_op(call, cls, match) -> None:
    with pytest.raises(cls, match=match):
        call()
    if cls is ValueError:
        with pytest.raises(RuntimeError):  # PyTorch's class too
            call()
