"""torch's keyword spellings, backends.cudnn/mps, cuda.amp/cpu.amp aliases, round(decimals=),
memory_format=, special polynomials with non-integral n and special.zeta: differential
tests against torch (CPU)."""
import warnings

import numpy as np
import pytest

import tessera as ts
from harness import close, same_result, to_np

torch = pytest.importorskip("torch")


def _pair():
    v = np.arange(24.0).reshape(2, 3, 4)
    return ts.asarray(v), torch.tensor(v)


METHOD_CASES = {
    "permute": lambda t, m: t.permute(dims=(2, 0, 1)),
    "view": lambda t, m: t.view(size=(6, 4)),
    "reshape": lambda t, m: t.reshape(shape=(4, 6)),
    "expand": lambda t, m: t[:, :1].expand(size=(2, 5, 4)),
    "repeat": lambda t, m: t.repeat(repeats=(1, 2, 1)),
    "tile": lambda t, m: t.tile(dims=(2,)),
    "flip": lambda t, m: t.flip(dims=[0, 2]),
    "split": lambda t, m: t.split(split_size=2, dim=1),
    "split_pos_dim": lambda t, m: t.split(2, dim=2),
    "transpose": lambda t, m: t.transpose(dim0=0, dim1=2),
    "transpose_mixed": lambda t, m: t.transpose(0, dim1=2),
    "swapaxes": lambda t, m: t.swapaxes(axis0=0, axis1=2),
    "swapdims": lambda t, m: t.swapdims(dim0=1, dim1=2),
    "unsqueeze": lambda t, m: t.unsqueeze(dim=1),
    "squeeze": lambda t, m: t[:, :1].squeeze(dim=1),
    "narrow": lambda t, m: t.narrow(dim=2, start=1, length=2),
    "movedim": lambda t, m: t.movedim(source=0, destination=2),
    "moveaxis": lambda t, m: t.moveaxis(source=0, destination=2),
    "tensor_split": lambda t, m: t.tensor_split(sections=2, dim=2),
    "max_other": lambda t, m: t.max(other=t * 0 + 5),
    "min_other": lambda t, m: t.min(other=t * 0 + 5),
    "round_decimals": lambda t, m: (t / 7).round(decimals=2),
    "round_neg_decimals": lambda t, m: (t * 37.3).round(decimals=-1),
    "round_plain": lambda t, m: (t / 4).round(),
    "view_positional": lambda t, m: t.view(4, 6),
    "permute_positional": lambda t, m: t.permute(1, 0, 2),
}


@pytest.mark.parametrize("name", sorted(METHOD_CASES))
def test_method_keywords_match_torch(name):
    x, y = _pair()
    same_result(METHOD_CASES[name](x, ts), METHOD_CASES[name](y, torch))


def test_round_inplace_decimals():
    x, y = _pair()
    x, y = x / 7, y / 7
    assert x.round_(decimals=1) is x
    y.round_(decimals=1)
    same_result(x, y)


def test_shape_keyword_conflicts_raise():
    x, _ = _pair()
    with pytest.raises(TypeError):
        x.reshape((4, 6), shape=(6, 4))
    with pytest.raises(TypeError):
        x.permute(0, 1, 2, dims=(0, 1, 2))
    with pytest.raises(TypeError):
        x.transpose(0, 1, dim0=0)


FUNCTION_CASES = {
    "stack": lambda t, m: m.stack(tensors=[t, t], dim=1),
    "concat": lambda t, m: m.concat(tensors=[t, t], dim=2),
    "full": lambda t, m: m.full(size=(2, 3), fill_value=2.5, dtype=m.float64),
    "eye": lambda t, m: m.eye(n=3, m=4, dtype=m.float64),
    "eye_mixed": lambda t, m: m.eye(3, m=2, dtype=m.float64),
    "take": lambda t, m: m.take(t, index=m.tensor([0, 5, 23])),
    "take_input": lambda t, m: m.take(input=t, index=m.tensor([1])),
    "swapaxes": lambda t, m: m.swapaxes(t, axis0=0, axis1=2),
    "swapdims": lambda t, m: m.swapdims(t, dim0=0, dim1=1),
    "moveaxis": lambda t, m: m.moveaxis(t, source=0, destination=2),
    "broadcast_to": lambda t, m: m.broadcast_to(t[:, :1], size=(2, 3, 4)),
    "tile": lambda t, m: m.tile(t, dims=(2, 1)),
    "isin": lambda t, m: m.isin(elements=t, test_elements=m.tensor([1.0, 5.0]),
                                assume_unique=False, invert=True),
    "where": lambda t, m: m.where(condition=t > 3, input=t, other=t * 0 - 1),
    "zeros": lambda t, m: m.zeros(size=(2, 3)),
    "ones": lambda t, m: m.ones(size=(2, 3)),
    "max_other": lambda t, m: m.max(t, other=t * 0 + 5),
    "min_other": lambda t, m: m.min(t, other=t * 0 + 5),
    "tensor_split": lambda t, m: m.tensor_split(t, sections=3, dim=2),
}


@pytest.mark.parametrize("name", sorted(FUNCTION_CASES))
def test_function_keywords_match_torch(name):
    x, y = _pair()
    a, b = FUNCTION_CASES[name](x, ts), FUNCTION_CASES[name](y, torch)
    if isinstance(b, torch.Tensor) and b.dtype == torch.bool:
        assert a.dtype == ts.bool
        np.testing.assert_array_equal(np.asarray(a.tolist()), b.numpy())
    else:
        same_result(a, b)


@pytest.mark.parametrize("name", ["rand", "randn", "empty"])
def test_random_size_keyword(name):
    assert tuple(getattr(ts, name)(size=(2, 3)).shape) == tuple(getattr(torch, name)(size=(2, 3)).shape)


def test_randint_keywords():
    assert tuple(ts.randint(low=0, high=5, size=(2, 3)).shape) == (2, 3)
    r = ts.randint(high=3, size=(50,))
    assert r.shape == (50,) and int(ts.min(r)) >= 0 and int(ts.max(r)) < 3


def test_manual_seed_keyword_reproduces():
    ts.manual_seed(seed=7)
    a = ts.rand(4)
    ts.manual_seed(7)
    close(a, ts.rand(4), rtol=1e-6, atol=1e-7)


def test_standard_signatures_still_work():
    x, _ = _pair()
    assert ts.full((2,), 1.0).shape == (2,)
    assert ts.stack([x, x], axis=0).shape == (2, 2, 3, 4)
    assert ts.take(x, ts.asarray([1, 2]), axis=2).shape == (2, 3, 2)
    assert ts.moveaxis(x, 0, -1).shape == (3, 4, 2)
    assert ts.eye(2, 3).shape == (2, 3)
    assert ts.broadcast_to(x[:1], shape=(2, 3, 4)).shape == (2, 3, 4)
    assert ts.isin(x, ts.asarray([1.0]), invert=True).dtype == ts.bool
    assert tuple(ts.max(x, axis=1).shape) == (2, 4)


# ---- memory_format=
LIKE = ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]


@pytest.mark.parametrize("name", LIKE + ["full_like"])
@pytest.mark.parametrize("fmt", ["preserve_format", "contiguous_format", "channels_last"])
def test_like_memory_format_strides_match_torch(name, fmt):
    v = np.arange(120.0).reshape(2, 3, 4, 5)
    x, y = ts.asarray(v).transpose(2, 3), torch.tensor(v).transpose(2, 3)  # a permuted layout
    args = (3.0,) if name == "full_like" else ()
    a = getattr(ts, name)(x, *args, memory_format=getattr(ts, fmt))
    b = getattr(torch, name)(y, *args, memory_format=getattr(torch, fmt))
    assert tuple(a.shape) == tuple(b.shape)
    assert tuple(a.stride()) == tuple(b.stride())
    if name in ("zeros_like", "ones_like", "full_like"):
        same_result(a, b)


@pytest.mark.parametrize("fmt", ["preserve_format", "contiguous_format", "channels_last"])
def test_clone_memory_format(fmt):
    v = np.arange(120.0).reshape(2, 3, 4, 5)
    x, y = ts.asarray(v), torch.tensor(v)
    for a, b in ((ts.clone(x, memory_format=getattr(ts, fmt)),
                  torch.clone(y, memory_format=getattr(torch, fmt))),
                 (x.clone(memory_format=getattr(ts, fmt)), y.clone(memory_format=getattr(torch, fmt)))):
        same_result(a, b)
        assert tuple(a.stride()) == tuple(b.stride())


def test_channels_last_needs_rank_4():
    with pytest.raises(RuntimeError):
        ts.zeros_like(ts.zeros((2, 3)), memory_format=ts.channels_last)


# ---- backends
def test_backends_cudnn_like_torch():
    c, tc = ts.backends.cudnn, torch.backends.cudnn
    for attr in ("enabled", "deterministic", "benchmark", "allow_tf32"):
        assert getattr(c, attr) == getattr(tc, attr), attr
    # cuDNN loads at run time where there is a GPU and the library (never in CI).
    assert c.is_available() is (c.version() is not None)
    if not ts.cuda.is_available():
        assert c.is_available() is False and c.load_error()
    old = c.benchmark
    c.benchmark = True
    try:
        assert ts.backends.cudnn.benchmark is True
    finally:
        c.benchmark = old
    with c.flags(enabled=True, deterministic=True):
        assert c.enabled and c.deterministic and not c.benchmark
    assert c.deterministic is False and c.benchmark == old


def test_backends_mps_and_cuda_matmul():
    assert ts.backends.mps.is_available() is False and ts.backends.mps.is_built() is False
    m, tm = ts.backends.cuda.matmul, torch.backends.cuda.matmul
    assert m.allow_tf32 == tm.allow_tf32
    assert m.allow_fp16_reduced_precision_reduction == tm.allow_fp16_reduced_precision_reduction
    assert m.allow_bf16_reduced_precision_reduction == tm.allow_bf16_reduced_precision_reduction
    import tessera.backends.cudnn  # noqa: F401  (importable, as torch's)


# ---- amp aliases
def test_cuda_amp_aliases_warn_and_match():
    with pytest.warns(FutureWarning):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            a = ts.cuda.amp.autocast()
    assert a.device == "cuda" and a.fast_dtype == ts.float16
    assert isinstance(a, ts.amp.autocast)
    with pytest.warns(FutureWarning):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            s = ts.cuda.amp.GradScaler(init_scale=1024.0)
    assert isinstance(s, ts.amp.GradScaler)
    from tessera.cuda.amp import autocast, GradScaler  # noqa: F401


def test_cpu_amp_autocast_runs_bfloat16():
    x, w = ts.randn(3, 4), ts.randn(4, 5)
    with pytest.warns(FutureWarning):
        ctx = ts.cpu.amp.autocast()
    with ctx:
        assert (x @ w).dtype == ts.bfloat16
    assert (x @ w).dtype == ts.float32
    xt, wt = torch.randn(3, 4), torch.randn(4, 5)
    with pytest.warns(FutureWarning):
        with torch.cpu.amp.autocast():
            assert (xt @ wt).dtype == torch.bfloat16


def test_chalf_names_missing_dtype():
    with pytest.raises((TypeError, RuntimeError), match="complex32"):
        ts.ones(2).chalf()


# ---- special
POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLYS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polynomials_non_integral_n(name, dtype):
    xs = np.linspace(-1.5, 1.5, 13)[:, None].astype(dtype)
    ns = np.array([-2.5, -1, -0.3, 0, 0.7, 1, 1.9, 2.7, 3, 4.99, 5.5])[None, :].astype(dtype)
    a = getattr(ts.special, name)(ts.asarray(xs), ts.asarray(ns))
    b = getattr(torch.special, name)(torch.tensor(xs), torch.tensor(ns))
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    same_result(a, b, rtol=1e-5, atol=1e-5)
    same_result(getattr(ts.special, name)(ts.asarray(xs[:, 0]), 2.7),
          getattr(torch.special, name)(torch.tensor(xs[:, 0]), 2.7), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zeta_matches_torch(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(0.5, 30, 300), [1, 2, 3, 4, 0.9, 50, 3, 4, 2]]).astype(dtype)
    q = np.concatenate([rng.uniform(-5, 20, 300), [1, 0, -1, -2.5, 0.5, 0.1, -2.5, -7.3, 1e-3]]).astype(dtype)
    a = ts.special.zeta(ts.asarray(x), ts.asarray(q))
    b = torch.special.zeta(torch.tensor(x), torch.tensor(q))
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    an, bn = to_np(a).astype(np.float64), to_np(b).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(an), np.isnan(bn))
    np.testing.assert_array_equal(np.isposinf(an), np.isposinf(bn))
    np.testing.assert_allclose(an, bn, rtol=1e-12 if dtype == "float64" else 2e-6, equal_nan=True)


def test_zeta_scalar_arguments():
    same_result(ts.special.zeta(2.0, ts.asarray([1.0, 2.0, 0.5])),
          torch.special.zeta(2.0, torch.tensor([1.0, 2.0, 0.5])))
    same_result(ts.special.zeta(ts.asarray([2.0, 3.5]), 1.5), torch.special.zeta(torch.tensor([2.0, 3.5]), 1.5))
    assert abs(float(ts.special.zeta(ts.asarray(2.0, dtype=ts.float64), 1.0)) - np.pi ** 2 / 6) < 1e-15
