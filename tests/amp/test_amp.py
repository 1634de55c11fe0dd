"""ts.autocast and ts.amp.GradScaler against PyTorch's CPU autocast and torch.amp.GradScaler."""
from __future__ import annotations

import threading
import warnings
from typing import Any, Callable, List

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
import tessera.nn.functional as F
from harness import randn, rng

DTYPES = [("bfloat16", ts.bfloat16, torch.bfloat16), ("float16", ts.float16, torch.float16)]


def to_np(x: Any) -> np.ndarray:
    if isinstance(x, ts.Tensor):
        return x.astype(ts.float32).numpy() if x.dtype in (ts.bfloat16, ts.float16) else x.numpy()
    return x.detach().float().numpy() if x.dtype in (torch.bfloat16, torch.float16) \
        else x.detach().numpy()


def dtype_name(d: Any) -> str:
    return str(d).replace("torch.", "").replace("tessera.", "")


def pair(a: np.ndarray, requires_grad: bool = False) -> tuple:
    t = torch.tensor(a, requires_grad=requires_grad)
    x = ts.asarray(a.copy())
    if requires_grad:
        x.requires_grad_(True)
    return x, t


def run_both(fn_ts: Callable, fn_torch: Callable, arrays: List[np.ndarray], dtype: str,
             rtol: float = 2e-2, atol: float = 2e-2) -> None:
    """fn under autocast('cpu', dtype) in both libraries: same output dtype and close values."""
    td = {"bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    sd = {"bfloat16": ts.bfloat16, "float16": ts.float16}[dtype]
    xs = [ts.asarray(a.copy()) for a in arrays]
    ys = [torch.tensor(a) for a in arrays]
    with ts.autocast("cpu", dtype=sd):
        got = fn_ts(*xs)
    with torch.autocast("cpu", dtype=td):
        want = fn_torch(*ys)
    assert dtype_name(got.dtype) == dtype_name(want.dtype), (got.dtype, want.dtype)
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- the lower-precision list
LOWER_CASES = {
    "matmul": (lambda m: (lambda a, b: m.matmul(a, b)), [(4, 8), (8, 5)]),
    "matmul_operator": (lambda m: (lambda a, b: a @ b), [(3, 4, 8), (8, 5)]),
    "matmul_vector": (lambda m: (lambda a, b: a @ b), [(8,), (8, 5)]),
    "linear": (lambda m: (lambda x, w, b: (F if m is ts else TF).linear(x, w, b)),
               [(4, 8), (6, 8), (6,)]),
    "linear_3d": (lambda m: (lambda x, w: (F if m is ts else TF).linear(x, w)), [(2, 3, 8), (6, 8)]),
    "conv1d": (lambda m: (lambda x, w, b: (F if m is ts else TF).conv1d(x, w, b, padding=1)),
               [(2, 3, 9), (4, 3, 3), (4,)]),
    "conv2d": (lambda m: (lambda x, w, b: (F if m is ts else TF).conv2d(x, w, b, stride=2)),
               [(2, 3, 8, 8), (4, 3, 3, 3), (4,)]),
    "conv_transpose1d": (lambda m: (lambda x, w: (F if m is ts else TF).conv_transpose1d(x, w)),
                         [(2, 3, 7), (3, 4, 3)]),
    "conv_transpose2d": (lambda m: (lambda x, w, b: (F if m is ts else TF).conv_transpose2d(x, w, b)),
                         [(2, 3, 5, 5), (3, 2, 3, 3), (2,)]),
    "sdpa": (lambda m: (lambda q, k, v: (F if m is ts else TF).scaled_dot_product_attention(q, k, v)),
             [(2, 3, 5, 8), (2, 3, 6, 8), (2, 3, 6, 8)]),
    "sdpa_causal": (lambda m: (lambda q, k, v: (F if m is ts else TF).scaled_dot_product_attention(
        q, k, v, is_causal=True)), [(2, 5, 8), (2, 5, 8), (2, 5, 8)]),
    "vecdot": (lambda m: (lambda a, b: ts.vecdot(a, b) if m is ts else torch.linalg.vecdot(a, b)),
               [(4, 8), (4, 8)]),
    "tensordot": (lambda m: (lambda a, b: m.tensordot(a, b, 1) if m is torch
                             else ts.tensordot(a, b, axes=1)), [(4, 8), (8, 3)]),
}


@pytest.mark.parametrize("name", list(LOWER_CASES))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_lower_precision_ops(name: str, dtype: str) -> None:
    make, shapes = LOWER_CASES[name]
    run_both(make(ts), make(torch), [randn(*s) for s in shapes], dtype, rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_rmatmul_and_mixed_inputs(dtype: str) -> None:
    # A 16-bit operand of the other kind is cast too (to the autocast dtype).
    other = "float16" if dtype == "bfloat16" else "bfloat16"
    a = randn(4, 8)
    b = randn(8, 3)
    xa = ts.asarray(a).astype(getattr(ts, other))
    ta = torch.tensor(a).to(getattr(torch, other))
    with ts.autocast("cpu", dtype=getattr(ts, dtype)):
        got = ts.matmul(xa, ts.asarray(b))
        got_r = ts.asarray(b).__rmatmul__(xa)
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        want = torch.matmul(ta, torch.tensor(b))
    assert dtype_name(got.dtype) == dtype_name(want.dtype) == dtype_name(got_r.dtype)
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=3e-2, atol=3e-2)


def test_bilinear_follows_pytorch_cpu() -> None:
    # PyTorch's CPU list leaves bilinear alone; its decomposition's products autocast and
    # the result is float32.
    run_both(lambda a, b, w, c: F.bilinear(a, b, w, c), lambda a, b, w, c: TF.bilinear(a, b, w, c),
             [randn(4, 5), randn(4, 6), randn(3, 5, 6), randn(3)], "bfloat16", rtol=5e-2, atol=5e-2)


def test_op_decorator_excludes_covered_device_types() -> None:
    from tessera.amp import _policy
    seen = []

    @_policy.op("binary_cross_entropy")  # float32 on CPU, none on CUDA
    def f(a: ts.Tensor, *, b: ts.Tensor) -> ts.Tensor:
        seen.append((a.dtype, b.dtype, ts.is_autocast_enabled("cpu")))
        return a @ b

    x = ts.ones((2, 2), dtype=ts.bfloat16)
    with ts.autocast("cpu"):
        assert f(x, b=x).dtype == ts.float32  # cast to float32, body not autocast
        assert ts.is_autocast_enabled("cpu")
    assert f(x, b=x).dtype == ts.bfloat16  # autocast off: untouched
    assert seen == [(ts.float32, ts.float32, False), (ts.bfloat16, ts.bfloat16, False)]


# ---------------------------------------------------------------- the float32 list (CPU)
def _labels(n: int, c: int) -> np.ndarray:
    return rng.integers(0, c, n).astype(np.int64)


FP32_CASES = {
    "cross_entropy": (lambda f: (lambda x, y: f.cross_entropy(x, y)), [(6, 5)], lambda: _labels(6, 5)),
    "cross_entropy_probs": (lambda f: (lambda x, y: f.cross_entropy(x, f.softmax(y, dim=1))),
                            [(6, 5), (6, 5)], None),
    "nll_loss": (lambda f: (lambda x, y: f.nll_loss(f.log_softmax(x, dim=1), y)), [(6, 5)],
                 lambda: _labels(6, 5)),
    "mse_loss": (lambda f: (lambda x, y: f.mse_loss(x, y)), [(6, 5), (6, 5)], None),
    "l1_loss": (lambda f: (lambda x, y: f.l1_loss(x, y, reduction="sum")), [(6, 5), (6, 5)], None),
    "smooth_l1_loss": (lambda f: (lambda x, y: f.smooth_l1_loss(x, y)), [(6, 5), (6, 5)], None),
    "huber_loss": (lambda f: (lambda x, y: f.huber_loss(x, y, delta=0.5)), [(6, 5), (6, 5)], None),
    "bce": (lambda f: (lambda x, y: f.binary_cross_entropy(x, y.abs() / (1 + y.abs()))),
            [(6, 5), (6, 5)], None),  # x: probabilities (a sigmoid is applied first, below)
    "bce_with_logits": (lambda f: (lambda x, y: f.binary_cross_entropy_with_logits(
        x, y.abs() / (1 + y.abs()))), [(6, 5), (6, 5)], None),
    "kl_div": (lambda f: (lambda x, y: f.kl_div(f.log_softmax(x, dim=1), f.softmax(y, dim=1),
                                                reduction="batchmean")), [(6, 5), (6, 5)], None),
    "poisson_nll_loss": (lambda f: (lambda x, y: f.poisson_nll_loss(x, y.abs())), [(6, 5), (6, 5)], None),
    "soft_margin_loss": (lambda f: (lambda x, y: f.soft_margin_loss(x, y.sign())), [(6, 5), (6, 5)], None),
    "cosine_embedding_loss": (lambda f: (lambda a, b, y: f.cosine_embedding_loss(a, b, y)),
                              [(6, 5), (6, 5)], lambda: np.where(rng.random(6) < 0.5, 1, -1).astype(np.float32)),
}


@pytest.mark.parametrize("name", list(FP32_CASES))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_float32_ops(name: str, dtype: str) -> None:
    # Inputs already in the low dtype (as the outputs of autocast matmuls are): the loss
    # still runs in, and returns, float32.
    make, shapes, extra = FP32_CASES[name]
    arrays = [randn(*s) for s in shapes]
    tsd, td = getattr(ts, dtype), getattr(torch, dtype)
    xs = [ts.asarray(a).astype(tsd) for a in arrays]
    ys = [torch.tensor(a).to(td) for a in arrays]
    if extra is not None:
        e = extra()
        xs.append(ts.asarray(e))
        ys.append(torch.tensor(e))
    if name == "bce":
        xs[0], ys[0] = F.sigmoid(xs[0]), torch.sigmoid(ys[0])
    with ts.autocast("cpu", dtype=tsd):
        got = make(F)(*xs)
    with torch.autocast("cpu", dtype=td):
        want = make(TF)(*ys)
    assert got.dtype == ts.float32 and want.dtype == torch.float32
    # (the 16-bit inputs made inside the lambdas by sigmoid/softmax may differ by an ulp)
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-2, atol=1e-4)


def test_prod_runs_in_float32_on_cpu() -> None:
    a = (1 + 0.1 * randn(5, 4))
    run_both(lambda x: ts.prod(x.astype(ts.bfloat16), axis=0),
             lambda x: torch.prod(x.bfloat16(), 0), [a], "bfloat16", rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- ops outside the lists
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_ops_outside_lists_keep_dtypes(dtype: str) -> None:
    tsd, td = getattr(ts, dtype), getattr(torch, dtype)
    a = randn(4, 6)
    x16, t16 = ts.asarray(a).astype(tsd), torch.tensor(a).to(td)
    x32, t32 = ts.asarray(a), torch.tensor(a)
    with ts.autocast("cpu", dtype=tsd):
        got = [x16 + x16, F.relu(x16), ts.exp(x16), ts.sum(x16), F.softmax(x16, dim=-1),
               F.log_softmax(x16, dim=-1), F.gelu(x16), x32 + x32, ts.exp(x32), ts.sum(x32),
               F.softmax(x32, dim=-1), ts.mean(x16), ts.cumulative_sum(x16, axis=0)]
    with torch.autocast("cpu", dtype=td):
        want = [t16 + t16, TF.relu(t16), torch.exp(t16), torch.sum(t16), TF.softmax(t16, -1),
                TF.log_softmax(t16, -1), TF.gelu(t16), t32 + t32, torch.exp(t32), torch.sum(t32),
                TF.softmax(t32, -1), torch.mean(t16), torch.cumsum(t16, 0)]
    for g, w in zip(got, want):
        assert dtype_name(g.dtype) == dtype_name(w.dtype), (g.dtype, w.dtype)
        np.testing.assert_allclose(to_np(g), to_np(w), rtol=2e-2, atol=2e-2)


def test_float64_and_integer_inputs_are_not_cast() -> None:
    a = randn(3, 4, dtype=np.float64)
    b = randn(4, 2, dtype=np.float64)
    i = rng.integers(-3, 3, (3, 4))
    j = rng.integers(-3, 3, (4, 2))
    with ts.autocast("cpu"):
        assert (ts.asarray(a) @ ts.asarray(b)).dtype == ts.float64
        assert (ts.asarray(i) @ ts.asarray(j)).dtype == ts.int64
        mixed = ts.asarray(a) @ ts.asarray(b.astype(np.float32))  # f64 stays; f32 -> bf16
        assert mixed.dtype == ts.float64
        assert F.mse_loss(ts.asarray(a), ts.asarray(a)).dtype == ts.float64
    with torch.autocast("cpu"):
        assert (torch.tensor(a) @ torch.tensor(b)).dtype == torch.float64


def test_autocast_does_not_touch_other_device_type() -> None:
    # Only CPU tensors exist here; an autocast("cuda") region (disabled with a warning on a
    # machine without CUDA) and set_autocast_enabled("cuda") must leave CPU ops alone.
    x = ts.ones((2, 3))
    ts.set_autocast_enabled("cuda", True)
    try:
        assert ts.is_autocast_enabled("cuda")
        assert (x @ x.mT).dtype == ts.float32
        h = x.astype(ts.float16)
        assert F.softmax(h, dim=-1).dtype == ts.float16
        assert ts.exp(h).dtype == h.exp().dtype == (h ** 2).dtype == ts.pow(h, 2).dtype \
            == h.pow(h).dtype == (2 ** h).dtype == ts.sum(h).dtype == ts.float16
    finally:
        ts.set_autocast_enabled("cuda", False)


# ---------------------------------------------------------------- state, nesting, threads
def test_state_nesting_and_restore() -> None:
    x = ts.ones((2, 3))
    assert not ts.is_autocast_enabled("cpu")
    assert ts.get_autocast_dtype("cpu") == ts.bfloat16
    assert ts.get_autocast_dtype("cuda") == ts.float16
    with ts.autocast("cpu"):
        assert ts.is_autocast_enabled("cpu") and (x @ x.mT).dtype == ts.bfloat16
        with ts.autocast("cpu", dtype=ts.float16):
            assert ts.get_autocast_dtype("cpu") == ts.float16
            assert (x @ x.mT).dtype == ts.float16
            with ts.autocast("cpu", enabled=False):
                assert not ts.is_autocast_enabled("cpu")
                assert (x @ x.mT).dtype == ts.float32
            assert (x @ x.mT).dtype == ts.float16
        assert ts.get_autocast_dtype("cpu") == ts.bfloat16
        assert (x @ x.mT).dtype == ts.bfloat16
    assert not ts.is_autocast_enabled("cpu")
    assert (x @ x.mT).dtype == ts.float32


def test_state_restored_after_exception() -> None:
    with pytest.raises(ZeroDivisionError):
        with ts.autocast("cpu", dtype=ts.float16):
            1 / 0
    assert not ts.is_autocast_enabled("cpu")
    assert ts.get_autocast_dtype("cpu") == ts.bfloat16


def test_decorator_form_and_amp_alias() -> None:
    assert ts.amp.autocast is ts.autocast

    @ts.amp.autocast("cpu", dtype=ts.float16)
    def f(a: ts.Tensor) -> ts.Tensor:
        return a @ a.mT

    @torch.autocast("cpu", dtype=torch.float16)
    def g(a: torch.Tensor) -> torch.Tensor:
        return a @ a.mT

    a = randn(3, 4)
    assert f(ts.asarray(a)).dtype == ts.float16 and g(torch.tensor(a)).dtype == torch.float16
    assert f.__name__ == "f"
    assert not ts.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match="callable"):
        ts.autocast("cpu")(3)


def test_state_is_thread_local() -> None:
    seen: dict = {}

    def worker() -> None:
        x = ts.ones((2, 2))
        seen["enabled"] = ts.is_autocast_enabled("cpu")
        seen["dtype"] = (x @ x).dtype
        with ts.autocast("cpu", dtype=ts.float16):
            seen["inner"] = (x @ x).dtype

    with ts.autocast("cpu"):
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        x = ts.ones((2, 2))
        assert (x @ x).dtype == ts.bfloat16  # the worker's region did not leak here
    assert seen == {"enabled": False, "dtype": ts.float32, "inner": ts.float16}


def test_thread_exiting_with_autocast_on_leaves_others_alone() -> None:
    th = threading.Thread(target=lambda: ts.set_autocast_enabled("cpu", True))
    th.start()
    th.join()
    x = ts.ones((2, 2))
    assert not ts.is_autocast_enabled("cpu") and (x @ x).dtype == ts.float32
    with ts.autocast("cpu"):
        assert (x @ x).dtype == ts.bfloat16
    assert (x @ x).dtype == ts.float32


def test_errors_and_unsupported_dtype() -> None:
    with pytest.raises(ValueError, match="device_type"):
        ts.autocast(0)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        ts.autocast("tpu")
    with pytest.raises(RuntimeError, match="device_type"):
        ts.is_autocast_enabled("tpu")
    with pytest.raises(RuntimeError):
        torch.autocast("tpu")
    x = ts.ones((2, 2))
    with pytest.warns(UserWarning, match="not supported. Disabling autocast"):
        ctx = ts.autocast("cpu", dtype=ts.float32)
    with ctx:
        assert not ts.is_autocast_enabled("cpu") and (x @ x).dtype == ts.float32
    with pytest.warns(UserWarning, match="not supported. Disabling autocast"):
        torch.autocast("cpu", dtype=torch.float32)
    with pytest.warns(UserWarning, match="Disabling autocast"):
        with ts.autocast("cpu", dtype=ts.float64):
            assert (x @ x).dtype == ts.float32


@pytest.mark.skipif(ts.cuda.is_available(), reason="checks the no-CUDA warning")
def test_cuda_autocast_without_cuda_warns_and_disables() -> None:
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with ts.autocast("cuda"):
            assert not ts.is_autocast_enabled("cuda")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        s = ts.amp.GradScaler("cuda")
    assert not s.is_enabled() and s.get_scale() == 1.0


def test_hook_passes_non_tensors_and_checks_arity() -> None:
    from tessera.amp import _policy
    x = ts.ones(3)
    assert _policy.cast("matmul", x) is x
    assert _policy.cast("matmul", x, None, 2.0)[1:] == (None, 2.0)
    with ts.autocast("cpu"):
        y, none, num = _policy.cast("matmul", x, None, 2.0)
        assert y.dtype == ts.bfloat16 and none is None and num == 2.0
        assert _policy.cast("mse_loss", y).dtype == ts.float32
        assert _policy.cast("exp", y) is y  # float32 on CUDA only
    with pytest.raises(TypeError):
        _policy.cast("matmul")
    with pytest.raises(TypeError):
        with ts.autocast("cpu"):
            _policy.cast(1, x)
    with pytest.raises(KeyError, match="not in the autocast policy table"):
        with ts.autocast("cpu"):
            _policy.cast("lower", x)


# ---------------------------------------------------------------- the weight cache
def test_weight_cast_cache() -> None:
    w = ts.nn.Parameter(ts.asarray(randn(4, 4)))
    x = ts.asarray(randn(2, 4))
    with ts.autocast("cpu"):
        y1 = F.linear(x, w)
        y2 = F.linear(x, w)
        assert ts.all(y1 == y2)
        (y1.sum() + y2.sum()).astype(ts.float32).backward()
    g_cached = w.grad.numpy().copy()
    w.grad = None
    with ts.autocast("cpu", cache_enabled=False):
        (F.linear(x, w).sum() + F.linear(x, w).sum()).astype(ts.float32).backward()
    np.testing.assert_array_equal(g_cached, w.grad.numpy())


def _cast_nodes(*outs: Any) -> int:
    """The number of distinct cast (ToCopyBackward) nodes in the graphs of `outs`."""
    # (The node objects are kept alive in `alive`, so their ids stay unique.)
    seen, stack, casts, alive = set(), [o.grad_fn for o in outs], set(), []
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        alive.append(f)
        seen.add(id(f))
        if f.name().startswith("ToCopyBackward"):
            casts.add(id(f))
        stack.extend(n for n, _ in f.next_functions)
    return len(casts)


@pytest.mark.parametrize("cache", [True, False])
def test_weight_used_three_times_is_cast_once(cache: bool) -> None:
    # PyTorch's autocast cache: within a region, a float32 leaf that requires grad is cast to
    # the lower dtype once however many ops use it; the input x (no grad) and a non-leaf are
    # cast at each use. Gradients equal those without the cache.
    w = ts.nn.Parameter(ts.asarray(randn(4, 4)))
    x = ts.asarray(randn(2, 4))
    with ts.autocast("cpu", cache_enabled=cache):
        assert ts.is_autocast_cache_enabled() is cache
        ys = [F.linear(x, w) for _ in range(3)]
        assert _cast_nodes(*ys) == (1 if cache else 3)
        loss = sum(y.astype(ts.float32).sum() for y in ys)
    loss.backward()
    wt = torch.tensor(w.detach().numpy(), requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=cache):
        lt = sum(torch.nn.functional.linear(torch.tensor(x.numpy()), wt).float().sum()
                 for _ in range(3))
    lt.backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-2, atol=1e-2)
    assert ts.is_autocast_cache_enabled()  # restored on exit


def test_cache_lives_until_the_outermost_region_exits() -> None:
    w = ts.nn.Parameter(ts.asarray(randn(3, 3)))
    x = ts.asarray(randn(1, 3))

    def cast_node(y: Any) -> Any:
        return [f for f, _ in y.grad_fn.next_functions if f is not None][0]

    with ts.autocast("cpu"):
        a = F.linear(x, w)
        with ts.autocast("cpu"):
            b = F.linear(x, w)
        c = F.linear(x, w)  # the inner region's exit keeps the cache
        assert cast_node(a) is cast_node(b) is cast_node(c)
    with ts.autocast("cpu"):
        d = F.linear(x, w)  # a new outermost region casts afresh
    assert cast_node(d) is not cast_node(a)
    with ts.autocast("cpu"):
        e = F.linear(x, w)
        ts.clear_autocast_cache()
        f = F.linear(x, w)
    assert cast_node(e) is not cast_node(f)
    ts.set_autocast_cache_enabled(False)
    try:
        with ts.autocast("cpu"):  # cache_enabled=None: the thread's setting
            assert not ts.is_autocast_cache_enabled()
            assert _cast_nodes(F.linear(x, w), F.linear(x, w)) == 2
    finally:
        ts.set_autocast_cache_enabled(True)
    # Not a leaf that requires grad: cast at each use (as PyTorch).
    with ts.autocast("cpu"):
        v = w * 1.0
        assert _cast_nodes(F.linear(x, v), F.linear(x, v)) == 2


def test_cache_sees_in_place_updates_and_no_grad() -> None:
    w = ts.nn.Parameter(ts.ones((2, 2)))
    x = ts.ones((1, 2))
    with ts.autocast("cpu"):
        with ts.no_grad():
            a = F.linear(x, w)
            w.mul_(2.0)  # inside the region: the cached cast must not be reused
        b = F.linear(x, w)
        assert float(a[0, 0]) == 2.0 and float(b[0, 0]) == 4.0
        b.astype(ts.float32).sum().backward()  # a cast made under no_grad has no history
    assert w.grad is not None and w.grad.dtype == ts.float32


# ---------------------------------------------------------------- gradients
def _mlp_params(din: int, dh: int, dout: int) -> List[np.ndarray]:
    return [randn(dh, din) * 0.3, randn(dh) * 0.1, randn(dout, dh) * 0.3, randn(dout) * 0.1]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_mlp_gradients_match_torch(dtype: str) -> None:
    params = _mlp_params(8, 16, 5)
    xa, ya = randn(12, 8), _labels(12, 5)
    pts = [ts.nn.Parameter(ts.asarray(p.copy())) for p in params]
    pto = [torch.tensor(p, requires_grad=True) for p in params]
    with ts.autocast("cpu", dtype=getattr(ts, dtype)):
        h = F.relu(F.linear(ts.asarray(xa), pts[0], pts[1]))
        out = F.linear(h, pts[2], pts[3])
        assert out.dtype == getattr(ts, dtype)
        loss = F.cross_entropy(out, ts.asarray(ya))
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        th = TF.relu(TF.linear(torch.tensor(xa), pto[0], pto[1]))
        tout = TF.linear(th, pto[2], pto[3])
        tloss = TF.cross_entropy(tout, torch.tensor(ya))
    assert loss.dtype == ts.float32 and tloss.dtype == torch.float32
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(float(loss), float(tloss), rtol=1e-2)
    for p, q in zip(pts, pto):
        assert p.grad.dtype == ts.float32  # each parameter's own dtype
        np.testing.assert_allclose(to_np(p.grad), to_np(q.grad), rtol=5e-2, atol=1e-2)


def test_transformer_block_gradients_match_torch() -> None:
    d, heads, seq, batch = 16, 2, 5, 2
    names = ["wq", "wk", "wv", "wo", "w1", "w2"]
    shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d), "w1": (2 * d, d), "w2": (d, 2 * d)}
    arrays = {n: randn(*shapes[n]) * 0.2 for n in names}
    arrays["ln_w"], arrays["ln_b"] = 1 + 0.1 * randn(d), 0.1 * randn(d)
    xa = randn(batch, seq, d)
    p = {n: ts.nn.Parameter(ts.asarray(a.copy())) for n, a in arrays.items()}
    q = {n: torch.tensor(a, requires_grad=True) for n, a in arrays.items()}

    def block(m: Any, f: Any, P: dict, x: Any) -> Any:
        def split(t: Any) -> Any:
            return t.reshape(batch, seq, heads, d // heads).transpose(1, 2) if m is torch else \
                ts.permute_dims(ts.reshape(t, (batch, seq, heads, d // heads)), (0, 2, 1, 3))
        hx = f.layer_norm(x, (d,), P["ln_w"], P["ln_b"])
        att = f.scaled_dot_product_attention(split(f.linear(hx, P["wq"])), split(f.linear(hx, P["wk"])),
                                             split(f.linear(hx, P["wv"])), is_causal=True)
        att = att.transpose(1, 2).reshape(batch, seq, d) if m is torch else \
            ts.reshape(ts.permute_dims(att, (0, 2, 1, 3)), (batch, seq, d))
        x = x + f.linear(att, P["wo"])
        x = x + f.linear(f.gelu(f.linear(x, P["w1"])), P["w2"])
        return f.mse_loss(x, ts.zeros_like(x) if m is ts else torch.zeros_like(x))

    with ts.autocast("cpu"):
        loss = block(ts, F, p, ts.asarray(xa))
    with torch.autocast("cpu"):
        tloss = block(torch, TF, q, torch.tensor(xa))
    assert loss.dtype == ts.float32 and tloss.dtype == torch.float32
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(float(loss), float(tloss), rtol=3e-2)
    for n in arrays:
        assert p[n].grad.dtype == ts.float32, n
        g, w = to_np(p[n].grad), to_np(q[n].grad)
        np.testing.assert_allclose(g, w, rtol=0.1, atol=0.05 * np.abs(w).max() + 1e-3, err_msg=n)


def test_gradient_of_16bit_input_comes_back_16bit() -> None:
    a = ts.asarray(randn(3, 4)).astype(ts.float16)
    a.requires_grad_(True)
    b = ts.nn.Parameter(ts.asarray(randn(4, 2)))
    with ts.autocast("cpu"):  # bfloat16: both cast
        out = a @ b
    assert out.dtype == ts.bfloat16
    out.astype(ts.float32).sum().backward()
    assert a.grad.dtype == ts.float16 and b.grad.dtype == ts.float32


# ---------------------------------------------------------------- GradScaler
class _Pair:
    """The same tiny linear model in tessera and in torch, with an SGD optimizer each."""

    def __init__(self) -> None:
        w, b = randn(3, 4) * 0.5, randn(3) * 0.1
        self.p = [ts.nn.Parameter(ts.asarray(w.copy())), ts.nn.Parameter(ts.asarray(b.copy()))]
        self.q = [torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)]
        self.opt = ts.optim.SGD(self.p, lr=0.1)
        self.topt = torch.optim.SGD(self.q, lr=0.1)

    def losses(self, xa: np.ndarray, poison: bool) -> tuple:
        x, tx = ts.asarray(xa), torch.tensor(xa)
        loss = ts.sum(F.linear(x, self.p[0], self.p[1]) ** 2)
        tloss = torch.sum(TF.linear(tx, self.q[0], self.q[1]) ** 2)
        if poison:  # an overflowing gradient in one step
            loss = loss * float("inf")
            tloss = tloss * float("inf")
        return loss, tloss


def test_grad_scaler_matches_torch_sequence() -> None:
    m = _Pair()
    kw = dict(init_scale=2.0 ** 10, growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
    s, ts_ = ts.amp.GradScaler("cpu", **kw), torch.amp.GradScaler("cpu", **kw)
    poison_steps = {2, 7, 8}
    for step in range(12):
        m.opt.zero_grad()
        m.topt.zero_grad()
        loss, tloss = m.losses(randn(5, 4), step in poison_steps)
        scaled, tscaled = s.scale(loss), ts_.scale(tloss)
        np.testing.assert_allclose(float(scaled), float(tscaled), rtol=1e-5)
        scaled.backward()
        tscaled.backward()
        s.step(m.opt)
        ts_.step(m.topt)
        s.update()
        ts_.update()
        assert s.get_scale() == ts_.get_scale(), step
        assert s._get_growth_tracker() == ts_._get_growth_tracker(), step
        for a, b in zip(m.p, m.q):
            np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert s.state_dict() == ts_.state_dict()


def test_grad_scaler_skips_step_on_inf_and_nan() -> None:
    for bad in (float("inf"), float("nan")):
        p = ts.nn.Parameter(ts.ones(3))
        opt = ts.optim.SGD([p], lr=1.0)
        s = ts.amp.GradScaler("cpu", init_scale=8.0)
        loss = ts.sum(p * bad)
        s.scale(loss).backward()
        assert s.step(opt) is None
        np.testing.assert_array_equal(p.numpy(), np.ones(3, np.float32))  # not stepped
        s.update()
        assert s.get_scale() == 4.0


def test_grad_scaler_unscale_then_clip() -> None:
    m = _Pair()
    s, ts_ = ts.amp.GradScaler("cpu", init_scale=256.0), torch.amp.GradScaler("cpu", init_scale=256.0)
    loss, tloss = m.losses(randn(5, 4), False)
    s.scale(loss).backward()
    ts_.scale(tloss).backward()
    np.testing.assert_allclose(m.p[0].grad.numpy(), m.q[0].grad.numpy(), rtol=1e-5)  # scaled
    s.unscale_(m.opt)
    ts_.unscale_(m.topt)
    np.testing.assert_allclose(m.p[0].grad.numpy(), m.q[0].grad.numpy(), rtol=1e-5)  # true grads
    n = ts.nn.utils.clip_grad_norm_(m.p, 0.5)
    tn = torch.nn.utils.clip_grad_norm_(m.q, 0.5)
    np.testing.assert_allclose(float(n), float(tn), rtol=1e-5)
    with pytest.raises(RuntimeError, match="already been called"):
        s.unscale_(m.opt)
    s.step(m.opt)
    ts_.step(m.topt)
    with pytest.raises(RuntimeError, match="after step"):
        s.unscale_(m.opt)
    with pytest.raises(RuntimeError, match="already been called since the last update"):
        s.step(m.opt)
    s.update()
    ts_.update()
    for a, b in zip(m.p, m.q):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_grad_scaler_bf16_grads_and_fp16_rejection() -> None:
    p = ts.nn.Parameter(ts.ones(4, dtype=ts.bfloat16))
    opt = ts.optim.SGD([p], lr=0.5)
    s = ts.amp.GradScaler("cpu", init_scale=4.0)
    scaled = s.scale(ts.sum(p * 3))
    assert scaled.dtype == ts.bfloat16
    scaled.backward()
    s.unscale_(opt)
    np.testing.assert_array_equal(p.grad.astype(ts.float32).numpy(), np.full(4, 3.0, np.float32))
    q = ts.nn.Parameter(ts.ones(2, dtype=ts.float16))
    s2 = ts.amp.GradScaler("cpu")
    s2.scale(ts.sum(q)).backward()
    with pytest.raises(ValueError, match="FP16 gradients"):
        s2.unscale_(ts.optim.SGD([q], lr=0.1))


def test_grad_scaler_scale_containers_and_fp16_loss() -> None:
    s = ts.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    a, b = ts.asarray([1.0, 2.0]), ts.asarray([0.001], dtype=ts.float16)
    out = s.scale([a, (b, a)])
    assert isinstance(out, list) and isinstance(out[1], tuple)
    np.testing.assert_array_equal(out[0].numpy(), [65536.0, 131072.0])
    # float16 times the float32 scale computes in float32 (65.5 fits; a float16 scale would not)
    assert out[1][0].dtype == ts.float16 and abs(float(out[1][0]) - 65.536) < 0.1
    with pytest.raises(ValueError, match="Tensor or an iterable"):
        s.scale(3.0)


def test_grad_scaler_state_dict_round_trip_and_update_new_scale() -> None:
    m = _Pair()
    s = ts.amp.GradScaler("cpu", init_scale=32.0, growth_interval=2)
    for _ in range(3):
        m.opt.zero_grad()
        s.scale(m.losses(randn(2, 4), False)[0]).backward()
        s.step(m.opt)
        s.update()
    sd = s.state_dict()
    assert sd == {"scale": 64.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2,
                  "_growth_tracker": 1}
    t = torch.amp.GradScaler("cpu")
    t.load_state_dict(sd)
    assert t.state_dict() == sd
    s2 = ts.amp.GradScaler("cpu")
    s2.load_state_dict(t.state_dict())
    assert s2.state_dict() == sd
    s.update(new_scale=3.0)
    assert s.get_scale() == 3.0
    s.update(new_scale=ts.asarray([5.0]))
    assert s.get_scale() == 5.0
    with pytest.raises(RuntimeError, match="empty"):
        s.load_state_dict({})
    with pytest.raises(RuntimeError, match="no inf checks"):
        s.update()


def test_grad_scaler_disabled_and_errors() -> None:
    p = ts.nn.Parameter(ts.ones(2))
    opt = ts.optim.SGD([p], lr=1.0)
    s = ts.amp.GradScaler("cpu", enabled=False)
    loss = ts.sum(p)
    assert s.scale(loss) is loss and not s.is_enabled() and s.state_dict() == {}
    loss.backward()
    s.unscale_(opt)
    s.step(opt)
    s.update()
    np.testing.assert_array_equal(p.numpy(), [0.0, 0.0])
    with pytest.raises(ValueError, match="growth factor"):
        ts.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff factor"):
        ts.amp.GradScaler("cpu", backoff_factor=1.0)
    with pytest.raises(ValueError, match="device"):
        ts.amp.GradScaler("tpu")
    s = ts.amp.GradScaler("cpu")
    with pytest.raises(RuntimeError, match="no scale yet"):
        s.step(opt)
    s.scale(ts.sum(p))
    with pytest.raises(RuntimeError, match="Closure"):
        s.step(opt, closure=lambda: 0)
    q = ts.nn.Parameter(ts.ones(2))
    with pytest.raises(RuntimeError, match="no gradients"):
        s.step(ts.optim.SGD([q], lr=1.0))


def test_grad_scaler_pickle_round_trip() -> None:
    import pickle
    s = ts.amp.GradScaler("cpu", init_scale=16.0)
    s.scale(ts.ones(1))
    s2 = pickle.loads(pickle.dumps(s))
    assert s2.get_scale() == 16.0 and s2.state_dict() == s.state_dict()


def test_custom_fwd_bwd() -> None:
    seen = {}

    class Mul(ts.autograd.Function):
        @staticmethod
        @ts.amp.custom_fwd(device_type="cpu", cast_inputs=ts.float32)
        def forward(ctx: Any, a: ts.Tensor, b: ts.Tensor) -> ts.Tensor:
            seen["fwd"] = (a.dtype, ts.is_autocast_enabled("cpu"))
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        @ts.amp.custom_bwd(device_type="cpu")
        def backward(ctx: Any, g: ts.Tensor) -> Any:
            seen["bwd"] = ts.is_autocast_enabled("cpu")
            a, b = ctx.saved_tensors
            return g @ b.mT, a.mT @ g

    a = ts.nn.Parameter(ts.ones((2, 3)))
    b = ts.nn.Parameter(ts.ones((3, 2)))
    with ts.autocast("cpu"):
        out = Mul.apply(a.astype(ts.bfloat16), b)
    assert out.dtype == ts.float32 and seen["fwd"] == (ts.float32, False)
    out.sum().backward()
    assert seen["bwd"] is False and a.grad.dtype == ts.float32


def test_nesting_check_sees_op_modules_through_transparent_wrappers() -> None:
    # The float32-on-CUDA hooks skip inside tessera's op implementations (PyTorch runs an
    # op's insides with autocast excluded); the check reads the calling frame's module.
    from tessera import _C
    assert _C._autocast_is_nested_call() is False  # this test module
    for module, nested in [("tessera._statistical", True), ("tessera.nn.functional.activation", True),
                           ("tessera.linalg", True), ("tessera.nn.modules.linear", False),
                           ("tesseract", False), ("user_model", False)]:
        g = {"__name__": module, "_C": _C}
        exec("def f():\n    return _C._autocast_is_nested_call()\n", g)
        assert g["f"]() is nested, module
    g = {"__name__": "tessera._wrappers", "_C": _C}
    exec("def wrap():\n    return _C._autocast_is_nested_call()\n", g)
    assert g["wrap"]() is True
    _C._autocast_transparent(g["wrap"])
    assert g["wrap"]() is False  # looked through to this (user) module
    with pytest.raises(AttributeError):
        _C._autocast_transparent(3)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_nn_modules_under_autocast_match_torch(dtype: str) -> None:
    # (tanh, not relu: 16-bit rounding of pre-activations near 0 would flip relu's mask
    # between the two libraries' convolutions)
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Tanh(), torch.nn.Flatten(),
                             torch.nn.Linear(4 * 6 * 6, 10))
    sm = ts.nn.Sequential(ts.nn.Conv2d(3, 4, 3), ts.nn.Tanh(), ts.nn.Flatten(),
                          ts.nn.Linear(4 * 6 * 6, 10))
    sm.load_state_dict({k: ts.asarray(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    xa, ya = randn(2, 3, 8, 8), _labels(2, 10)
    with ts.autocast("cpu", dtype=getattr(ts, dtype)):
        out = sm(ts.asarray(xa))
        loss = ts.nn.CrossEntropyLoss()(out, ts.asarray(ya))
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        tout = tm(torch.tensor(xa))
        tloss = torch.nn.CrossEntropyLoss()(tout, torch.tensor(ya))
    assert dtype_name(out.dtype) == dtype_name(tout.dtype) == dtype
    assert loss.dtype == ts.float32 and tloss.dtype == torch.float32
    np.testing.assert_allclose(to_np(out), to_np(tout), rtol=5e-2, atol=5e-2)
    loss.backward()
    tloss.backward()
    for (name, p), q in zip(sm.named_parameters(), tm.parameters()):
        assert p.grad.dtype == ts.float32, name
        np.testing.assert_allclose(to_np(p.grad), to_np(q.grad), rtol=0.1,
                                   atol=0.05 * float(q.grad.abs().max()) + 1e-3, err_msg=name)


def test_torch_style_calls_autocast_like_the_namespace_functions() -> None:
    # ts.prod(x, 0) goes through the PyTorch-style wrapper (tessera._arg_forms), which
    # must not count as "inside an op" for the autocast nesting check.
    x = ts.ones((3, 2), dtype=ts.bfloat16)
    xt = torch.ones((3, 2), dtype=torch.bfloat16)
    with ts.autocast("cpu", dtype=ts.bfloat16), torch.autocast("cpu", dtype=torch.bfloat16):
        assert str(ts.prod(x, 0).dtype) == str(torch.prod(xt, 0).dtype).replace("torch.", "")
        assert str(ts.prod(x).dtype) == str(torch.prod(xt).dtype).replace("torch.", "")
