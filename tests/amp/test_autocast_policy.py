"""The autocast policy table (csrc/ops/autocast_policy.h) against PyTorch's CPU autocast:
every op in the table, fed mixed bfloat16/float32 inputs under autocast('cpu', bfloat16), gives
torch's output dtype; gradients come back in the parameters' dtypes; the table is one table."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
import tessera.nn.functional as F
from harness import randn, rng
from tessera.amp import _policy

BF = "b"  # an input given in bfloat16
FP = "f"  # an input given in float32


def _labels(n: int, c: int) -> np.ndarray:
    return rng.integers(0, c, n).astype(np.int64)


def _signs(*shape: int) -> np.ndarray:
    return np.where(randn(*shape) > 0, 1.0, -1.0).astype(np.float32)


# op -> (tessera fn, torch fn, float inputs, their dtypes, extra non-float inputs)
Case = Tuple[Callable[..., Any], Callable[..., Any], List[np.ndarray], str, List[np.ndarray]]
CASES: Dict[str, Case] = {
    "matmul": (lambda a, b: a @ b, lambda a, b: a @ b, [randn(3, 4), randn(4, 5)], "bf", []),
    "vecdot": (lambda a, b: ts.linalg.vecdot(a, b), lambda a, b: torch.linalg.vecdot(a, b),
               [randn(3, 4), randn(3, 4)], "bf", []),
    "linear": (F.linear, TF.linear, [randn(3, 4), randn(5, 4), randn(5)], "bff", []),
    "conv": (F.conv1d, TF.conv1d, [randn(2, 3, 8), randn(4, 3, 3), randn(4)], "bff", []),
    "scaled_dot_product_attention": (
        F.scaled_dot_product_attention, TF.scaled_dot_product_attention,
        [randn(2, 5, 4), randn(2, 6, 4), randn(2, 6, 4)], "bff", []),
    # torch's CPU tensordot checks dtypes before autocasting: same-dtype inputs.
    "tensordot": (lambda a, b: ts.tensordot(a, b, 1), lambda a, b: torch.tensordot(a, b, 1),
                  [randn(3, 4), randn(4, 5)], "ff", []),
    "bilinear": (F.bilinear, TF.bilinear, [randn(4, 5), randn(4, 6), randn(3, 5, 6), randn(3)],
                 "ffff", []),  # torch checks its dtypes first
    "pow": (lambda a, b: a ** b, lambda a, b: a ** b,
            [np.abs(randn(3, 4)) + 0.5, randn(3, 4)], "bf", []),
    "softplus": (F.softplus, TF.softplus, [randn(3, 4)], "b", []),
    "layer_norm": (lambda x: F.layer_norm(x, (4,)), lambda x: TF.layer_norm(x, (4,)),
                   [randn(3, 4)], "b", []),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b),
                   lambda x, w, b: TF.group_norm(x, 2, w, b),
                   [randn(2, 4, 3), randn(4), randn(4)], "bbb", []),
    "instance_norm": (F.instance_norm, TF.instance_norm, [randn(2, 4, 5)], "b", []),
    "cosine_similarity": (F.cosine_similarity, TF.cosine_similarity,
                          [randn(3, 4), randn(3, 4)], "bf", []),
    "logsumexp": (lambda x: ts.logsumexp(x, 1), lambda x: torch.logsumexp(x, 1),
                  [randn(3, 4)], "b", []),
    "vector_norm": (ts.linalg.vector_norm, torch.linalg.vector_norm, [randn(3, 4)], "b", []),
    "matrix_norm": (ts.linalg.matrix_norm, torch.linalg.matrix_norm, [randn(3, 4)], "b", []),
    "softmax": (lambda x: F.softmax(x, 1), lambda x: TF.softmax(x, 1), [randn(3, 4)], "b", []),
    "log_softmax": (lambda x: F.log_softmax(x, 1), lambda x: TF.log_softmax(x, 1),
                    [randn(3, 4)], "b", []),
    "sum": (lambda x: x.sum(), lambda x: x.sum(), [randn(3, 4)], "b", []),
    "cumsum": (lambda x: ts.cumsum(x, 0), lambda x: torch.cumsum(x, 0), [randn(3, 4)], "b", []),
    "cumprod": (lambda x: ts.cumprod(x, 0), lambda x: torch.cumprod(x, 0), [randn(3, 4)], "b",
                []),
    "prod": (lambda x: x.prod(), lambda x: x.prod(), [randn(3, 4)], "b", []),
    "cross_entropy": (lambda x, w, t: F.cross_entropy(x, t, weight=w),
                      lambda x, w, t: TF.cross_entropy(x, t, weight=w),
                      [randn(6, 5), np.abs(randn(5))], "bf", [_labels(6, 5)]),
    "nll_loss": (lambda x, t: F.nll_loss(x, t), lambda x, t: TF.nll_loss(x, t),
                 [randn(6, 5)], "b", [_labels(6, 5)]),
    "mse_loss": (F.mse_loss, TF.mse_loss, [randn(3, 4), randn(3, 4)], "bf", []),
    "l1_loss": (F.l1_loss, TF.l1_loss, [randn(3, 4), randn(3, 4)], "bf", []),
    "smooth_l1_loss": (F.smooth_l1_loss, TF.smooth_l1_loss, [randn(3, 4), randn(3, 4)], "bf",
                       []),
    "huber_loss": (F.huber_loss, TF.huber_loss, [randn(3, 4), randn(3, 4)], "bf", []),
    "binary_cross_entropy": (F.binary_cross_entropy, TF.binary_cross_entropy,
                             [rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32),
                              rng.uniform(0, 1, (3, 4)).astype(np.float32)], "bf", []),
    "binary_cross_entropy_with_logits": (
        F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits,
        [randn(3, 4), rng.uniform(0, 1, (3, 4)).astype(np.float32)], "bf", []),
    "kl_div": (lambda a, b: F.kl_div(a, b, reduction="batchmean"),
               lambda a, b: TF.kl_div(a, b, reduction="batchmean"),
               [randn(3, 4), rng.uniform(0, 1, (3, 4)).astype(np.float32)], "bf", []),
    "poisson_nll_loss": (F.poisson_nll_loss, TF.poisson_nll_loss,
                         [randn(3, 4), np.abs(randn(3, 4))], "bf", []),
    "soft_margin_loss": (F.soft_margin_loss, TF.soft_margin_loss, [randn(3, 4), _signs(3, 4)],
                         "bf", []),
    "cosine_embedding_loss": (F.cosine_embedding_loss, TF.cosine_embedding_loss,
                              [randn(3, 4), randn(3, 4), _signs(3)], "bff", []),
    "margin_ranking_loss": (F.margin_ranking_loss, TF.margin_ranking_loss,
                            [randn(5), randn(5), _signs(5)], "bff", []),
    "hinge_embedding_loss": (F.hinge_embedding_loss, TF.hinge_embedding_loss,
                             [randn(3, 4), _signs(3, 4)], "bf", []),
    "multilabel_margin_loss": (F.multilabel_margin_loss, TF.multilabel_margin_loss,
                               [randn(2, 4)], "b", [np.array([[0, 1, -1, 0], [2, -1, 0, 0]])]),
    "multi_margin_loss": (F.multi_margin_loss, TF.multi_margin_loss, [randn(4, 5)], "b",
                          [_labels(4, 5)]),
    "triplet_margin_loss": (F.triplet_margin_loss, TF.triplet_margin_loss,
                            [randn(3, 4), randn(3, 4), randn(3, 4)], "bff", []),
    "ctc_loss": (lambda lp, t, il, tl: F.ctc_loss(lp, t, il, tl),
                 lambda lp, t, il, tl: TF.ctc_loss(lp, t, il, tl),
                 [np.log(rng.dirichlet(np.ones(5), (6, 2)).astype(np.float32))], "b",
                 [np.array([[1, 2], [3, 1]]), np.array([6, 6]), np.array([2, 2])]),
    "batch_norm": (lambda x, m, v: F.batch_norm(x, m, v), lambda x, m, v: TF.batch_norm(x, m, v),
                   [randn(4, 3), np.zeros(3, np.float32), np.ones(3, np.float32)], "bff", []),
}
# The elementwise rows: float32 on CUDA only, untouched by CPU autocast.
for _name in ("acos", "asin", "cosh", "exp", "expm1", "log", "log10", "log2", "log1p",
              "reciprocal", "sinh", "tan"):
    CASES[_name] = (getattr(ts, _name), getattr(torch, _name),
                    [rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32)], "b", [])


def _inputs(arrays: List[np.ndarray], dtypes: str, extra: List[np.ndarray]) -> Tuple[list, list]:
    xs, ys = [], []
    for a, d in zip(arrays, dtypes):
        x, y = ts.asarray(a.copy()), torch.tensor(a)
        if d == BF:
            x, y = x.astype(ts.bfloat16), y.to(torch.bfloat16)
        xs.append(x)
        ys.append(y)
    for e in extra:
        xs.append(ts.asarray(e.copy()))
        ys.append(torch.tensor(e))
    return xs, ys


def _name(d: Any) -> str:
    return str(d).replace("torch.", "").replace("tessera.", "")


def test_every_row_has_a_case() -> None:
    assert set(_policy.POLICIES) == set(CASES)


@pytest.mark.parametrize("op", sorted(CASES))
def test_output_dtype_matches_torch_cpu_autocast(op: str) -> None:
    fn_ts, fn_torch, arrays, dtypes, extra = CASES[op]
    xs, ys = _inputs(arrays, dtypes, extra)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = fn_torch(*ys)
    with ts.autocast("cpu", dtype=ts.bfloat16):
        got = fn_ts(*xs)
    assert _name(got.dtype) == _name(want.dtype), (op, got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.astype(ts.float32).numpy(),
                               want.detach().float().numpy(), rtol=5e-2, atol=5e-2)


def test_table_view_is_read_only_and_is_cs() -> None:
    assert dict(_policy.POLICIES) == ts._C._autocast_policy_table()
    with pytest.raises(TypeError):
        _policy.POLICIES["matmul"] = ("none", "none", False)  # type: ignore[index]
    assert _policy.POLICIES["linear"] == ("lower", "lower", False)
    assert _policy.POLICIES["softmax"] == ("none", "fp32", True)
    assert _policy.POLICIES["cross_entropy"] == ("fp32", "fp32", False)


@pytest.mark.parametrize("weight_dtype", ["float32", "bfloat16"])
def test_gradients_come_back_in_the_parameters_dtypes(weight_dtype: str) -> None:
    wd = getattr(ts, weight_dtype)
    twd = getattr(torch, weight_dtype)
    x_np, w_np, b_np = randn(4, 6), randn(3, 6), randn(3)
    t = _labels(4, 3)
    x = ts.asarray(x_np.copy()).requires_grad_(True)
    w = ts.asarray(w_np.copy()).astype(wd).detach().requires_grad_(True)
    b = ts.asarray(b_np.copy()).requires_grad_(True)
    tx = torch.tensor(x_np, requires_grad=True)
    tw = torch.tensor(w_np).to(twd).detach().requires_grad_(True)
    tb = torch.tensor(b_np, requires_grad=True)
    with ts.autocast("cpu"):
        y = F.linear(x, w, b)
        loss = F.cross_entropy(F.layer_norm(y, (3,)), ts.asarray(t))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ty = TF.linear(tx, tw, tb)
        tloss = TF.cross_entropy(TF.layer_norm(ty, (3,)), torch.tensor(t))
    assert _name(y.dtype) == _name(ty.dtype) and _name(loss.dtype) == _name(tloss.dtype)
    loss.backward()
    tloss.backward()
    for p, tp in ((x, tx), (w, tw), (b, tb)):
        assert _name(p.grad.dtype) == _name(tp.grad.dtype) == _name(p.dtype)
        np.testing.assert_allclose(p.grad.astype(ts.float32).numpy(), tp.grad.float().numpy(),
                                   rtol=5e-2, atol=5e-2)


def test_nested_autocast_disabled() -> None:
    a, b = ts.asarray(randn(3, 4)), ts.asarray(randn(4, 5))
    with ts.autocast("cpu"):
        assert (a @ b).dtype == ts.bfloat16
        with ts.autocast("cpu", enabled=False):
            assert not ts.is_autocast_enabled("cpu")
            assert (a @ b).dtype == ts.float32
            assert F.linear(a, b.mT).dtype == ts.float32
            assert F.mse_loss(a.astype(ts.bfloat16), a.astype(ts.bfloat16)).dtype == ts.bfloat16
        assert ts.is_autocast_enabled("cpu")
        assert F.linear(a, b.mT).dtype == ts.bfloat16
    assert not ts.is_autocast_enabled("cpu")


def test_op_leaves_autocast_as_it_found_it() -> None:
    # OpScope turns autocast off inside the op and back on when it returns, errors included.
    a = ts.asarray(randn(3, 4))
    with ts.autocast("cpu"):
        F.linear(a, ts.asarray(randn(2, 4)))
        assert ts.is_autocast_enabled("cpu")
        with pytest.raises(ValueError):
            F.linear(a, ts.asarray(randn(2, 5)))
        assert ts.is_autocast_enabled("cpu")
        assert (a @ a.mT).dtype == ts.bfloat16


def test_backward_formulas_run_with_autocast_off() -> None:
    # The built-in formulas don't autocast, even when backward() runs inside the region: the
    # float32 matmul's gradient is the float32 product, not one rounded through bfloat16.
    x = ts.asarray(randn(16, 16)).requires_grad_(True)
    w = ts.asarray(randn(16, 16))
    g = ts.asarray(randn(16, 16))
    y = x @ w
    with ts.autocast("cpu"):
        y.backward(g)
    np.testing.assert_allclose(x.grad.numpy(), g.numpy() @ w.numpy().T, rtol=1e-5, atol=1e-5)
