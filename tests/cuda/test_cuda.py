"""The CUDA backend: device model, allocator, kernels and DLPack on the GPU.

Without a GPU (CI), only the CPU-side behaviour runs: ts.cuda answers "not available" and every
attempt to use a CUDA device raises a RuntimeError that says why. On a GPU machine, every CUDA
result is compared with the CPU's on the same inputs.
"""
import numpy as np
import pytest

import tessera as ts

HAS_CUDA = ts.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
nogpu = pytest.mark.skipif(HAS_CUDA, reason="checks the CPU-only behaviour")


# ---------------------------------------------------------------- without a GPU
@nogpu
def test_queries_without_cuda():
    assert ts.cuda.is_available() is False
    assert ts.cuda.device_count() == 0
    assert [str(d) for d in ts.__array_namespace_info__().devices()] == ["cpu"]
    ts.cuda.empty_cache()  # a no-op, never an error


@nogpu
@pytest.mark.parametrize("make", [
    lambda: ts.zeros(3, device="cuda"),
    lambda: ts.ones((2, 2), device="cuda:0"),
    lambda: ts.asarray([1.0, 2.0], device="cuda"),
    lambda: ts.arange(4, device="cuda"),
    lambda: ts.asarray([1.0]).cuda(),
    lambda: ts.asarray([1.0]).to("cuda"),
    lambda: ts.asarray([1.0]).pin_memory(),
    lambda: ts.cuda.current_device(),
    lambda: ts.cuda.synchronize(),
    lambda: ts.cuda.Stream(),
    lambda: ts.cuda.get_device_name(),
])
def test_cuda_use_without_cuda_raises(make):
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        make()


def test_allow_tf32_flag_round_trips():
    assert ts.backends.cuda.matmul.allow_tf32 is False  # PyTorch's default
    ts.backends.cuda.matmul.allow_tf32 = True
    try:
        assert ts.backends.cuda.matmul.allow_tf32 is True
    finally:
        ts.backends.cuda.matmul.allow_tf32 = False


def test_out_of_memory_error_is_a_memory_error():
    assert issubclass(ts.cuda.OutOfMemoryError, MemoryError)


def test_cpu_tensor_conveniences():
    x = ts.asarray([1.0, 2.0])
    assert x.is_cpu and not x.is_cuda
    assert x.cpu() is x
    assert not x.is_pinned()


# ---------------------------------------------------------------- on a GPU
DEV = "cuda:0"


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def both(a):
    """The same data on the CPU and on the GPU."""
    c = ts.asarray(a)
    return c, c.to(DEV)


def same(cpu, gpu_t, exact=True, rtol=1e-5, atol=1e-6):
    assert gpu_t.device == DEV, gpu_t.device
    assert gpu_t.dtype == cpu.dtype and gpu_t.shape == cpu.shape
    g = gpu_t.cpu().numpy()
    c = cpu.numpy()
    if exact:
        np.testing.assert_array_equal(g, c)
    else:
        np.testing.assert_allclose(g, c, rtol=rtol, atol=atol, equal_nan=True)


@gpu
def test_device_queries():
    assert ts.cuda.device_count() >= 1
    assert ts.cuda.current_device() == 0
    assert isinstance(ts.cuda.get_device_name(), str)
    props = ts.cuda.get_device_properties(0)
    assert props.total_memory > 0 and props.multi_processor_count > 0
    assert str(ts.__array_namespace_info__().devices()[1]) == "cuda:0"


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64",
                                   "float16", "float32", "float64", "complex64", "complex128"])
def test_round_trip_and_creation(dtype):
    a = rand((3, 5), dtype)
    g = ts.asarray(a, device=DEV)
    assert g.device == DEV and g.is_cuda
    np.testing.assert_array_equal(g.cpu().numpy(), a)
    z = ts.zeros((4, 3), dtype=getattr(ts, dtype), device=DEV)
    assert not z.cpu().numpy().any()
    f = ts.full((2, 3), 1, dtype=getattr(ts, dtype), device=DEV)
    np.testing.assert_array_equal(f.cpu().numpy(), np.full((2, 3), 1, dtype=dtype))


@gpu
def test_bfloat16_round_trip_and_arithmetic():
    c, g = both(rand((64,), "float32"))
    cb, gb = c.astype(ts.bfloat16), g.astype(ts.bfloat16)
    same(cb, gb)
    same(cb * cb + cb, gb * gb + gb)


@gpu
def test_strided_copies_and_views():
    c, g = both(rand((6, 7, 5), "float32"))
    for f in [lambda x: x.mT, lambda x: x[::2, 1:, ::-1], lambda x: ts.permute_dims(x, (2, 0, 1)),
              lambda x: x[1], lambda x: ts.broadcast_to(x[:, :1], (6, 7, 5))]:
        same(ts.asarray(f(c), copy=True), f(g).contiguous() if hasattr(f(g), "contiguous") else f(g))
        same(f(c) + 0, f(g) + 0)
    gc = g.clone()
    gc[1:3, ::2] = 5.0
    cc = c.to("cpu", copy=True)
    cc[1:3, ::2] = 5.0
    same(cc, gc)


ARITH = ["add", "subtract", "multiply", "maximum", "minimum", "equal", "not_equal", "less",
         "less_equal", "greater", "greater_equal", "floor_divide", "remainder", "logical_and",
         "logical_or", "logical_xor"]
BITS = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]


@gpu
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "float16", "float32", "float64"])
@pytest.mark.parametrize("name", ARITH + BITS + ["divide", "pow", "atan2", "hypot", "copysign",
                                                 "logaddexp"])
def test_binary_ops_match_cpu(name, dtype):
    f = getattr(ts, name)
    a, b = rand((33, 17), dtype, 1), rand((17,), dtype, 2)
    if name in ("bitwise_left_shift", "bitwise_right_shift", "pow"):
        b = np.abs(b) % 5
    try:
        ref = f(ts.asarray(a), ts.asarray(b))
    except TypeError:
        with pytest.raises(TypeError):
            f(ts.asarray(a, device=DEV), ts.asarray(b, device=DEV))
        return
    out = f(ts.asarray(a, device=DEV), ts.asarray(b, device=DEV))
    # Integer/boolean results are bit-exact; transcendental float results within rounding.
    exact = name not in ("pow", "atan2", "hypot", "logaddexp") or "int" in str(ref.dtype)
    same(ref, out, exact=exact, rtol=2e-3 if dtype == "float16" else 1e-5)
    # a transposed, non-contiguous operand and a Python scalar
    at = ts.asarray(rand((17, 33), dtype, 3)).mT
    same(f(at, ts.asarray(b)), f(at.to(DEV), ts.asarray(b, device=DEV)), exact=exact,
         rtol=2e-3 if dtype == "float16" else 1e-5)


UNARY = ["abs", "negative", "positive", "square", "sign", "ceil", "floor", "trunc", "round",
         "isnan", "isinf", "isfinite", "logical_not", "exp", "expm1", "log", "log1p", "log2",
         "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
         "asinh", "acosh", "atanh", "reciprocal", "signbit", "bitwise_invert"]


@gpu
@pytest.mark.parametrize("dtype", ["int32", "float16", "bfloat16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_match_cpu(name, dtype):
    f = getattr(ts, name)
    a = rand((257,), "float32" if dtype == "bfloat16" else dtype, 4)
    if name in ("acosh",):
        a = np.abs(a) + 1 if a.dtype.kind != "c" else a
    c = ts.asarray(a).astype(getattr(ts, dtype))
    try:
        ref = f(c)
    except TypeError:
        with pytest.raises(TypeError):
            f(c.to(DEV))
        return
    # Bit-exact where no rounding of a transcendental function is involved.
    exact = (name in ("abs", "negative", "positive", "square", "sign", "ceil", "floor", "trunc",
                      "round", "isnan", "isinf", "isfinite", "logical_not", "signbit",
                      "bitwise_invert") and dtype != "complex64") or "int" in str(ref.dtype)
    tol = {"float16": 2e-3, "bfloat16": 1e-2, "complex64": 1e-5}.get(
        dtype, 2e-6 if dtype != "float64" else 1e-12)
    same(ref, f(c.to(DEV)), exact=exact, rtol=tol, atol=tol)


@gpu
def test_scalars_and_zero_d_cpu_tensors_mix_with_cuda():
    c, g = both(rand((5, 4), "float32"))
    same(c * 2.5 + 1, g * 2.5 + 1)
    same(2 - c, 2 - g)
    s = ts.asarray(3.0)  # a 0-d CPU tensor
    same(c * s, g * s)
    with pytest.raises(RuntimeError, match="cpu.*cuda|cuda.*cpu"):
        g + ts.asarray([1.0, 2.0, 3.0, 4.0])


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
def test_reductions_match_cpu(dtype, axis):
    a = rand((37, 65, 9), dtype, 5)
    c, g = both(a)
    for name in ["sum", "prod", "max", "min", "mean", "all", "any"]:
        f = getattr(ts, name)
        try:
            ref = f(c, axis=axis)
        except TypeError:
            continue
        out = f(g, axis=axis)
        exact = dtype in ("bool", "int32", "int64") or name in ("max", "min", "all", "any")
        if name == "prod" and dtype in ("float16",):
            continue  # overflows to inf on both sides in different orders
        tol = 2e-2 if dtype == "float16" else 1e-4
        same(ref, out, exact=exact, rtol=tol, atol=tol)
    if dtype not in ("complex64", "bool") and (axis is None or isinstance(axis, int)):
        for name in ["argmax", "argmin"]:
            same(getattr(ts, name)(c, axis=axis), getattr(ts, name)(g, axis=axis))


@gpu
def test_large_sum_is_accurate_and_max_propagates_nan():
    a = np.random.default_rng(0).random(1 << 24, dtype=np.float32)
    g = ts.asarray(a, device=DEV)
    exact = a.astype(np.float64).sum()
    assert abs(float(ts.sum(g)) - exact) / exact < 1e-6
    a[12345] = np.nan
    assert np.isnan(float(ts.max(ts.asarray(a, device=DEV))))
    assert int(ts.argmax(ts.asarray(a, device=DEV))) == 12345


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64"])
def test_matmul_matches_cpu(dtype):
    for sa, sb in [((64, 32), (32, 48)), ((3, 17, 9), (9, 5)), ((2, 1, 8, 4), (3, 4, 6)), ((7,), (7, 3))]:
        a, b = rand(sa, dtype, 6), rand(sb, dtype, 7)
        ref = ts.asarray(a) @ ts.asarray(b)
        out = ts.asarray(a, device=DEV) @ ts.asarray(b, device=DEV)
        same(ref, out, exact=False, rtol=2e-2 if dtype == "float16" else 1e-4, atol=1e-3)
    a = rand((40, 30), dtype, 8)
    ref = ts.asarray(a).mT @ ts.asarray(a)
    same(ref, ts.asarray(a, device=DEV).mT @ ts.asarray(a, device=DEV), exact=False,
         rtol=2e-2 if dtype == "float16" else 1e-4, atol=1e-3)


@gpu
def test_matmul_tf32_and_integer_error():
    a = rand((256, 256), "float32", 9)
    g = ts.asarray(a, device=DEV)
    ref = a.astype(np.float64) @ a.astype(np.float64)
    ts.backends.cuda.matmul.allow_tf32 = True
    try:
        err = np.linalg.norm((g @ g).cpu().numpy() - ref) / np.linalg.norm(ref)
        assert err < 3e-3
    finally:
        ts.backends.cuda.matmul.allow_tf32 = False
    err = np.linalg.norm((g @ g).cpu().numpy() - ref) / np.linalg.norm(ref)
    assert err < 1e-5
    with pytest.raises(TypeError, match="CUDA"):
        ts.ones((2, 2), dtype=ts.int64, device=DEV) @ ts.ones((2, 2), dtype=ts.int64, device=DEV)


@gpu
def test_autograd_on_cuda_matches_cpu():
    rng = np.random.default_rng(1)
    w1, x = rng.standard_normal((8, 5)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)
    grads = []
    for dev in ["cpu", DEV]:
        w = ts.asarray(w1, device=dev, requires_grad=True)
        y = ts.tanh(ts.asarray(x, device=dev) @ w).sum()
        y.backward()
        grads.append(w.grad.cpu().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)
    # a device move is differentiable: the gradient comes back to the CPU leaf
    w = ts.asarray(w1, requires_grad=True)
    (w.cuda() * 2).sum().backward()
    assert w.grad.device == "cpu"
    np.testing.assert_array_equal(w.grad.numpy(), np.full_like(w1, 2))


@gpu
def test_memory_stats_and_caching():
    ts.cuda.synchronize()
    base = ts.cuda.memory_allocated()
    x = ts.empty((1 << 20,), device=DEV)  # 4 MiB
    assert ts.cuda.memory_allocated() >= base + 4 * (1 << 20)
    assert ts.cuda.memory_reserved() >= ts.cuda.memory_allocated()
    peak = ts.cuda.max_memory_allocated()
    del x
    assert ts.cuda.memory_allocated() == base
    assert ts.cuda.max_memory_allocated() == peak
    ts.cuda.reset_peak_memory_stats()
    assert ts.cuda.max_memory_allocated() == base
    ts.cuda.empty_cache()
    stats = ts.cuda.memory_stats()
    assert "num_ooms" in stats and "reserved_bytes.all.current" in stats


@gpu
def test_out_of_memory_then_recover():
    total = ts.cuda.get_device_properties(0).total_memory
    with pytest.raises(ts.cuda.OutOfMemoryError, match="out of memory.*cuda:0"):
        ts.empty((total,), dtype=ts.float32, device=DEV)  # 4x the card
    assert ts.cuda.memory_stats()["num_ooms"] >= 1
    x = ts.ones((1000,), device=DEV)
    assert float(x.sum()) == 1000.0


@gpu
def test_streams_and_events():
    s = ts.cuda.Stream()
    start, end = ts.cuda.Event(enable_timing=True), ts.cuda.Event(enable_timing=True)
    x = ts.ones((1 << 20,), device=DEV)
    with ts.cuda.stream(s):
        assert ts.cuda.current_stream().cuda_stream == s.cuda_stream
        start.record()
        y = (x * 3).sum()
        end.record()
    assert ts.cuda.current_stream().cuda_stream == 0
    end.synchronize()
    assert end.query() and s.query()
    assert start.elapsed_time(end) >= 0
    assert float(y) == 3.0 * (1 << 20)
    s.wait_stream(ts.cuda.current_stream())
    ts.cuda.synchronize()


@gpu
def test_pinned_and_non_blocking_copies():
    a = rand((1000,), "float32")
    p = ts.asarray(a).pin_memory()
    assert p.is_pinned()
    g = p.to(DEV, non_blocking=True)
    back = g.to("cpu", non_blocking=True)
    ts.cuda.synchronize()
    assert back.is_pinned()
    np.testing.assert_array_equal(back.numpy(), a)


@gpu
def test_numpy_of_cuda_tensor_raises_with_hint():
    g = ts.ones(3, device=DEV)
    with pytest.raises(TypeError, match="cuda:0"):
        g.numpy()
    np.testing.assert_array_equal(g.numpy(force=True), np.ones(3, np.float32))
    assert "device='cuda:0'" in repr(g)
    assert g.tolist() == [1.0, 1.0, 1.0] and float(g[1]) == 1.0


@gpu
def test_dlpack_with_torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    x = ts.from_dlpack(t)
    assert x.device == DEV and x.shape == (3, 4)
    t += 1  # shared memory
    np.testing.assert_array_equal(x.cpu().numpy(), t.cpu().numpy())
    y = ts.asarray(rand((5, 6), "float32"), device=DEV)
    u = torch.from_dlpack(y)
    assert u.device.type == "cuda"
    np.testing.assert_array_equal(u.cpu().numpy(), y.cpu().numpy())
    # a producer on a side stream: the consumer's stream waits for it
    s = ts.cuda.Stream()
    with ts.cuda.stream(s):
        z = ts.ones((1 << 22,), device=DEV) * 7
    v = torch.from_dlpack(z)
    assert float(v.sum()) == 7.0 * (1 << 22)
    assert y.__dlpack_device__() == (2, 0)


@gpu
def test_dlpack_with_cupy():
    cp = pytest.importorskip("cupy")
    a = cp.arange(10, dtype=cp.float64)
    x = ts.from_dlpack(a)
    assert x.device == DEV
    a[3] = 100
    assert float(x[3]) == 100.0
    b = cp.from_dlpack(x * 2)
    assert float(b[3]) == 200.0


@gpu
@pytest.mark.parametrize("make_opt", [
    lambda p: ts.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
    lambda p: ts.optim.Adam(p, lr=1e-2, amsgrad=True),
    lambda p: ts.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
])
def test_fused_optimizer_steps_match_cpu(make_opt):
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((7, 5)).astype(np.float32)
    x = rng.standard_normal((16, 7)).astype(np.float32)
    result = []
    for dev in ["cpu", DEV]:
        w = ts.nn.Parameter(ts.asarray(w0, device=dev, copy=True))  # no alias of w0
        opt = make_opt([w])
        xd = ts.asarray(x, device=dev)
        for _ in range(5):
            opt.zero_grad()
            ts.tanh(xd @ w).square().mean().backward()
            opt.step()
        result.append(w.detach().cpu().numpy())
    np.testing.assert_allclose(result[0], result[1], rtol=1e-5, atol=1e-6)


@gpu
def test_mlp_training_step_on_cuda_matches_cpu():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((32, 20)).astype(np.float32)
    y = rng.integers(0, 5, 32)
    out = []
    for dev in ["cpu", DEV]:
        ts.manual_seed(0)
        model = ts.nn.Sequential(ts.nn.Linear(20, 16), ts.nn.GELU(), ts.nn.LayerNorm(16),
                                 ts.nn.Linear(16, 5)).to(dev)
        opt = ts.optim.AdamW(model.parameters(), lr=1e-2)
        xd = ts.asarray(x, device=dev)
        for _ in range(3):
            opt.zero_grad()
            logits = model(xd)
            target = ts.asarray(np.eye(5, dtype=np.float32)[y], device=dev)
            loss = ts.nn.functional.mse_loss(ts.nn.functional.softmax(logits, dim=-1), target)
            loss.backward()
            opt.step()
        out.append(model(xd).detach().cpu().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-4, atol=1e-5)


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "float64", "complex128"])
def test_where_matches_cpu(dtype):
    c = rand((9, 1, 7), "bool", 5)
    a, b = rand((9, 6, 7), dtype, 6), rand((7,), dtype, 7)
    ref = ts.where(ts.asarray(c), ts.asarray(a), ts.asarray(b))
    out = ts.where(ts.asarray(c, device=DEV), ts.asarray(a, device=DEV), ts.asarray(b, device=DEV))
    same(ref, out)
    same(ts.where(ts.asarray(c), ts.asarray(a), 0), ts.where(ts.asarray(c, device=DEV),
                                                             ts.asarray(a, device=DEV), 0))


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("shape,axis", [((5000,), 0), ((37, 3001), 1), ((37, 301, 5), 1), ((6, 4), 0)])
def test_cumulative_ops_match_cpu(dtype, shape, axis):
    a = rand(shape, dtype, 8)
    if dtype in ("float16", "float32", "float64", "complex64"):
        a = (a * 0.01).astype(dtype) + (1 if dtype != "complex64" else 0)  # keep products finite
    c, g = both(a)
    for f in (ts.cumulative_sum, ts.cumulative_prod):
        for include_initial in (False, True):
            ref = f(c, axis=axis, include_initial=include_initial)
            out = f(g, axis=axis, include_initial=include_initial)
            exact = "int" in str(ref.dtype) or dtype == "bool"
            tol = 2e-2 if dtype == "float16" else 1e-4
            same(ref, out, exact=exact, rtol=tol, atol=tol)


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint16", "float16", "float32", "float64"])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort_topk_match_cpu(dtype, descending):
    a = rand((13, 1000), dtype, 9)
    if a.dtype.kind == "f":
        a[0, :10] = np.nan
        a[1, :4] = [0.0, -0.0, 0.0, -0.0]
        a[2] = np.round(a[2])  # many ties: stability decides the order
    c, g = both(a)
    for axis in (-1, 0):
        same(ts.sort(c, axis=axis, descending=descending), ts.sort(g, axis=axis, descending=descending))
        same(ts.argsort(c, axis=axis, descending=descending),
             ts.argsort(g, axis=axis, descending=descending))
    if dtype != "bool":
        for largest in (True, False):
            vc, ic = ts.topk(c, 7, dim=1, largest=largest)
            vg, ig = ts.topk(g, 7, dim=1, largest=largest)
            same(vc, vg)
            same(ic, ig)


@gpu
def test_advanced_indexing_and_scatter_match_cpu():
    a = rand((50, 6, 4), "float32", 10)
    c, g = both(a)
    idx = np.array([3, -1, 7, 3, 49, 0])
    for key in [(idx,), (slice(None), [1, 0, 5]), (idx, slice(1, 3), [0, 3, 1, 2, 0, 3]),
                (a[:, 0, 0] > 0,)]:
        same(c[key], g[key])
        cc, gc = c.to("cpu", copy=True), g.clone()
        cc[key] = 1.5
        gc[key] = 1.5
        same(cc, gc)
    # repeated indices: the last write wins, like NumPy
    cc, gc = c.to("cpu", copy=True), g.clone()
    vals = rand((6, 6, 4), "float32", 11)
    cc[idx] = ts.asarray(vals)
    gc[idx] = ts.asarray(vals, device=DEV)
    same(cc, gc)
    with pytest.raises(IndexError, match="out of bounds"):
        g[np.array([0, 50])]
    i2 = rand((50, 3, 4), "int64", 12) % 6
    same(ts.take_along_axis(c, ts.asarray(i2), axis=1), ts.take_along_axis(g, ts.asarray(i2, device=DEV), axis=1))
    src = rand((50, 3, 4), "float32", 13)
    ref = ts.scatter_add(c, 1, ts.asarray(i2), ts.asarray(src)) if hasattr(ts, "scatter_add") else None
    if ref is not None:
        same(ref, ts.scatter_add(g, 1, ts.asarray(i2, device=DEV), ts.asarray(src, device=DEV)),
             exact=False)


@gpu
def test_embedding_cross_entropy_and_attention_on_cuda_match_cpu():
    rng = np.random.default_rng(14)
    tokens = rng.integers(0, 11, (4, 9))
    grads, losses = [], []
    for dev in ["cpu", DEV]:
        ts.manual_seed(1)
        emb = ts.nn.Embedding(11, 16).to(dev)
        attn = ts.nn.MultiheadAttention(16, 2, batch_first=True).to(dev)
        head = ts.nn.Linear(16, 11).to(dev)
        x = emb(ts.asarray(tokens, device=dev))
        mask = ts.asarray(np.triu(np.ones((9, 9), bool), 1), device=dev)
        h, _ = attn(x, x, x, attn_mask=mask, need_weights=False)
        logits = head(h + x)
        loss = ts.nn.functional.cross_entropy(logits.reshape(-1, 11),
                                              ts.asarray(tokens.reshape(-1), device=dev),
                                              label_smoothing=0.1)
        loss.backward()
        losses.append(float(loss))
        grads.append(emb.weight.grad.cpu().numpy())
        y = ts.nn.functional.scaled_dot_product_attention(x, x, x, is_causal=True)
        assert y.device == dev
    assert abs(losses[0] - losses[1]) < 1e-5
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-6)


@gpu
def test_set_default_device_places_creations_on_cuda():
    ts.set_default_device("cuda")
    try:
        cuda = ts.Device("cuda:0")
        assert ts.get_default_device() == cuda
        assert ts.__array_namespace_info__().default_device() == cuda
        for t in (ts.zeros(3), ts.ones((2, 2)), ts.empty(4), ts.full(2, 7), ts.arange(5),
                  ts.linspace(0, 1, 3), ts.eye(2), ts.asarray([1.0, 2.0]), ts.asarray(3),
                  ts.tensor(np.ones(3))):
            assert t.device == cuda
        assert ts.asarray(np.ones(3)).device == cuda  # torch.asarray: a default-device constructor
        assert ts.zeros(2, device="cpu").device == ts.Device("cpu")
        assert ts.zeros_like(ts.zeros(2, device="cpu")).device == ts.Device("cpu")
    finally:
        ts.set_default_device(None)
    assert ts.zeros(1).device == ts.Device("cpu")


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "float64"])
@pytest.mark.parametrize("inner", [1, 3, 4, 64, 1152, 1153])
def test_row_and_column_broadcasts_match_cpu(dtype, inner):
    # The contiguous kernel's broadcast modes: a bias (row) and a per-row statistic (column),
    # with aligned and unaligned (offset-by-one) operands.
    rng = np.random.default_rng(inner)
    rows = 37
    x = ts.asarray(rng.standard_normal((rows, inner)) * 8).astype(getattr(ts, dtype))
    big = ts.asarray(rng.standard_normal(inner + 1) * 8).astype(getattr(ts, dtype))
    col = ts.asarray(rng.standard_normal((rows + 1, 1)) * 8).astype(getattr(ts, dtype))
    for b in (big[:inner], big[1:]):
        for c in (col[:rows], col[1:]):
            for f in (lambda x, b, c: x + b, lambda x, b, c: b * x, lambda x, b, c: x - c,
                      lambda x, b, c: ts.where(x > 0, b, c), lambda x, b, c: (x + b) * c):
                want = f(x, b, c)
                got = f(x.cuda(), b.cuda(), c.cuda())
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got.cpu().astype(ts.float64).numpy(),
                                              want.astype(ts.float64).numpy())


@gpu
@pytest.mark.parametrize("shape,axis", [((3, 0), 1), ((0, 4), 0), ((2, 0, 5), 1), ((0,), 0)])
def test_reductions_over_empty_axes_match_cpu(shape, axis):
    x = ts.zeros(shape, device="cpu")
    for f in (ts.sum, ts.mean, ts.prod, ts.any, ts.all):
        want = f(x, axis=axis)
        got = f(x.cuda(), axis=axis)
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("sa,sb", [((0, 3), (3, 4)), ((2, 3), (3, 0)), ((4, 0), (0, 2)),
                                   ((2, 0, 3), (3, 5)), ((0, 2, 3), (0, 3, 1))])
def test_matmul_with_empty_dims_matches_cpu(dtype, sa, sb):
    a = ts.ones(sa, dtype=getattr(ts, dtype), device="cpu")
    b = ts.ones(sb, dtype=getattr(ts, dtype), device="cpu")
    want = a @ b
    got = a.cuda() @ b.cuda()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@gpu
def test_float64_to_float16_rounds_once_like_numpy():
    # Through float32 it would round twice (65519.99999 -> 65520.0 -> inf).
    vals = np.array([65519.99999, -65519.99999, 65520.0, 1 + 2**-11 + 2**-40, 1e-8, -0.0])
    got = ts.asarray(vals).cuda().astype(ts.float16).cpu().numpy()
    np.testing.assert_array_equal(got.view(np.uint16), vals.astype(np.float16).view(np.uint16))


def _arr(shape, dtype, seed, dev):
    src = "float32" if dtype == "bfloat16" else dtype
    return ts.asarray(rand(shape, src, seed), device=dev).astype(getattr(ts, dtype))


def _qkv_views(dev, dtype, b=3, t=5, h=4, d=8, seed=11):
    # q, k, v split from one (B, T, 3C) projection and moved to (B, H, T, D): the batch dims
    # B and H walk unrelated strides, so the GEMMs read them in place (Note [Strided batches]).
    qkv = _arr((b, t, 3 * h * d), dtype, seed, dev)
    c = h * d
    return [qkv[..., i * c:(i + 1) * c].reshape(b, t, h, d).transpose(1, 2) for i in range(3)]


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_matmul_over_unmergeable_strided_batches_matches_cpu(dtype):
    tol = dict(exact=False, rtol=3e-2 if dtype in ("float16", "bfloat16") else 1e-4, atol=2e-2)
    qc, kc, vc = _qkv_views("cpu", dtype)
    qg, kg, vg = _qkv_views(DEV, dtype)
    same(qc @ kc.mT, qg @ kg.mT, **tol)
    same((qc @ kc.mT) @ vc, (qg @ kg.mT) @ vg, **tol)
    same(qc.mT @ vc, qg.mT @ vg, **tol)
    # A broadcast operand beside a strided one, and more batch positions than the loop takes.
    same(qc @ _arr((4, 8, 6), dtype, 12, "cpu"), qg @ _arr((4, 8, 6), dtype, 12, DEV), **tol)
    bc, bg = _arr((40, 3, 2, 6, 5), dtype, 13, "cpu"), _arr((40, 3, 2, 6, 5), dtype, 13, DEV)
    same(bc[..., ::2, :].mT @ bc[..., ::2, :], bg[..., ::2, :].mT @ bg[..., ::2, :], **tol)
    ones_c, ones_g = _arr((5, 2), dtype, 15, "cpu"), _arr((5, 2), dtype, 15, DEV)
    same(ts.permute_dims(bc, (1, 0, 2, 3, 4)) @ ones_c, ts.permute_dims(bg, (1, 0, 2, 3, 4)) @ ones_g, **tol)
    # Three unmergeable batch dims (2 x 40 x 40): one pointer-array batched GEMM.
    mc, mg = _arr((40, 40, 2, 3, 4), dtype, 16, "cpu"), _arr((40, 40, 2, 3, 4), dtype, 16, DEV)
    pc, pg = ts.permute_dims(mc, (2, 1, 0, 3, 4)), ts.permute_dims(mg, (2, 1, 0, 3, 4))
    same(pc @ pc.mT, pg @ pg.mT, **tol)


@gpu
def test_attention_gradients_through_strided_batches_match_cpu():
    grads = []
    for dev in ["cpu", DEV]:
        base = ts.asarray(rand((2, 6, 3 * 16), "float32", 14), device=dev, requires_grad=True)
        q, k, v = [base[..., i * 16:(i + 1) * 16].reshape(2, 6, 2, 8).transpose(1, 2) for i in range(3)]
        ts.sum(ts.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True) ** 2).backward()
        grads.append(base.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "float16", "float32", "float64", "complex128"])
def test_fills_of_every_length_and_offset_match_cpu(dtype):
    # 16-byte word stores with an element-wise head and tail (fill_contig in copy_kernels.cu).
    for n in [0, 1, 3, 7, 8, 15, 16, 17, 33, 1000, 4099]:
        for start in [0, 1, 3]:
            c = ts.zeros(n + 4, dtype=getattr(ts, dtype))
            g = c.cuda()
            c[start:start + n] = 1
            g[start:start + n] = 1
            same(c, g)


@gpu
@pytest.mark.parametrize("dtype", ["int8", "bfloat16", "float32", "float64"])
def test_head_transposes_copy_in_words_match_cpu(dtype):
    # (B, T, H, D) <-> (B, H, T, D) copies with D contiguous move 16-byte words (Note [Word copies]).
    for shape in [(2, 5, 3, 16), (2, 5, 3, 8), (3, 4, 2, 6), (1, 7, 4, 64)]:
        c = _arr(shape, dtype, 17, "cpu")
        g = _arr(shape, dtype, 17, DEV)
        same(ts.reshape(c.transpose(1, 2), (-1,)), ts.reshape(g.transpose(1, 2), (-1,)))
        same(ts.reshape(c[:, 1:].transpose(1, 2), (-1,)), ts.reshape(g[:, 1:].transpose(1, 2), (-1,)))
        same(ts.reshape(c[..., 1:].transpose(1, 2), (-1,)), ts.reshape(g[..., 1:].transpose(1, 2), (-1,)))


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("shape", [(4, 8), (3, 5, 7), (1, 1), (64, 384), (2, 0, 3)])
def test_linear_with_fused_bias_matches_cpu(dtype, shape):
    # Linear's forward is one cuBLASLt GEMM with a bias epilogue (linear_cublaslt.cpp);
    # float64 and non-contiguous inputs take matmul + add.
    # Tolerances scale with the largest |value|: the GPU rounds once after adding the bias, the
    # CPU's half types round the product and then the sum (1 ulp apart at worst).
    rel = 1e-2 if dtype in ("float16", "bfloat16") else 1e-5

    def close(g, c):
        c = c.astype(np.float64)
        np.testing.assert_allclose(g.astype(np.float64), c, rtol=rel, atol=rel * max(1.0, np.abs(c).max(initial=0)))

    k, n = shape[-1], 2 * shape[-1] + 1
    for make in [lambda t: t, lambda t: t.mT.mT if t.ndim > 1 else t]:
        xc, wc, bc = _arr(shape, dtype, 18, "cpu"), _arr((n, k), dtype, 19, "cpu"), _arr((n,), dtype, 20, "cpu")
        xg, wg, bg = _arr(shape, dtype, 18, DEV), _arr((n, k), dtype, 19, DEV), _arr((n,), dtype, 20, DEV)
        want, got = ts._C._linear_bias(make(xc), wc, bc), ts._C._linear_bias(make(xg), wg, bg)
        assert got.device == DEV and got.dtype == want.dtype and got.shape == want.shape
        close(got.astype(ts.float32).cpu().numpy(), want.astype(ts.float32).numpy())
    if dtype == "float32" and 0 not in shape:
        grads = []
        for dev in ["cpu", DEV]:
            lin = ts.nn.Linear(k, n).to(dev)
            lin.load_state_dict({"weight": _arr((n, k), dtype, 19, dev), "bias": _arr((n,), dtype, 20, dev)})
            x = _arr(shape, dtype, 18, dev)
            x.requires_grad_(True)
            ts.sum(lin(x) ** 2).backward()
            grads.append([t.cpu().numpy() for t in (x.grad, lin.weight.grad, lin.bias.grad)])
        for c, g in zip(*grads):
            close(g, c)


@gpu
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "int64", "complex128"])
def test_tril_triu_match_cpu(dtype):
    c = ts.asarray(rand((2, 5, 7), dtype, 21))
    g = c.cuda()
    for k in [-7, -2, 0, 1, 3, 9]:
        same(ts.tril(c, k=k), ts.tril(g, k=k))
        same(ts.triu(c, k=k), ts.triu(g, k=k))


@gpu
def test_causal_multihead_attention_matches_cpu():
    outs = []
    for dev in ["cpu", DEV]:
        ts.manual_seed(0)
        mha = ts.nn.MultiheadAttention(16, 4, batch_first=True).to(dev)
        x = ts.asarray(rand((2, 6, 16), "float32", 22), device=dev)
        mask = ts.nn.Transformer.generate_square_subsequent_mask(6) if hasattr(ts.nn, "Transformer") else \
            ts.triu(ts.full((6, 6), -float("inf")), k=1)
        y, w = mha(x, x, x, attn_mask=mask.to(dev), need_weights=True)
        outs.append((y.cpu().numpy(), w.cpu().numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-5)


@gpu
def test_float32_sums_stay_accurate_like_cpu():
    # 2^24 x 0.1: the partials of ~1000 blocks meet in a tree (reduce_partials_block).
    n = 1 << 24
    got = float(ts.sum(ts.asarray(np.full(n, 0.1, np.float32), device=DEV)))
    want = n * float(np.float32(0.1))
    assert abs(got - want) / want < 1e-6
    col = ts.sum(ts.asarray(np.full((1 << 16, 32), 0.1, np.float32), device=DEV), axis=0).cpu().numpy()
    assert np.max(np.abs(col - (1 << 16) * float(np.float32(0.1)))) / ((1 << 16) * 0.1) < 1e-5
    a = rand((3, 1 << 20), "float32", 23)
    np.testing.assert_allclose(ts.sum(ts.asarray(a, device=DEV), axis=1).cpu().numpy(),
                               a.astype(np.float64).sum(axis=1), rtol=1e-6, atol=1e-3)
    assert int(ts.argmax(ts.asarray(np.ones(1 << 22, np.float32), device=DEV))) == 0


@gpu
def test_repeat_permutation_and_multinomial_take_device_tensors():
    x = ts.arange(6.0, device=DEV)
    reps = ts.asarray([1, 0, 2, 1, 3, 1], device=DEV)
    same(ts.repeat(ts.arange(6.0), ts.asarray([1, 0, 2, 1, 3, 1])), ts.repeat(x, reps))
    g1, g2 = ts.random.Generator(5), ts.random.Generator(5)
    rows = ts.reshape(ts.arange(12.0), (6, 2))
    same(g1.permutation(rows), g2.permutation(rows.cuda()))
    y = rows.cuda()
    ts.random.shuffle(y, generator=ts.random.Generator(7))
    z = ts.asarray(rows, copy=True)
    ts.random.shuffle(z, generator=ts.random.Generator(7))
    same(z, y)
    p = ts.asarray([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 1.0, 1.0]])
    a = ts.multinomial(p, 3, generator=ts.random.Generator(9)) if hasattr(ts, "multinomial") else \
        ts.random.multinomial(p, 3, generator=ts.random.Generator(9))
    b = ts.random.multinomial(p.cuda(), 3, generator=ts.random.Generator(9))
    same(a, b)
    with pytest.raises(ValueError, match="multinomial"):
        ts.random.multinomial(-p.cuda(), 1)


@gpu
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "NAdam", "ASGD", "RMSprop", "Adagrad"])
def test_optimizers_step_on_cuda_under_a_cuda_default_device(name):
    results = []
    for dev in ["cpu", DEV]:
        ts.set_default_device(dev)
        try:
            p = ts.nn.Parameter(ts.asarray(rand((5,), "float32", 24)))
            kw = {"momentum": 0.9} if name == "SGD" else {}
            opt = getattr(ts.optim, name)([p], lr=0.1, **kw)
            for _ in range(3):
                opt.zero_grad()
                ts.sum(p * p).backward()
                opt.step()
            results.append(p.detach().cpu().numpy())
        finally:
            ts.set_default_device("cpu")
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


@gpu
def test_linalg_and_fft_on_cuda_tensors_match_cpu():
    # Note [Host linear algebra]: computed by the CPU's LAPACK / FFT engine, results on the device.
    a = rand((3, 4, 4), "float64", 25) + 4 * np.eye(4)
    spd = a @ np.swapaxes(a, -1, -2)
    c, g = ts.asarray(spd), ts.asarray(spd, device=DEV)
    tol = dict(exact=False, rtol=1e-10, atol=1e-10)
    same(ts.linalg.cholesky(c), ts.linalg.cholesky(g), **tol)
    same(ts.linalg.det(c), ts.linalg.det(g), **tol)
    same(ts.linalg.inv(c), ts.linalg.inv(g), **tol)
    same(ts.linalg.solve(c, c[..., :1]), ts.linalg.solve(g, g[..., :1]), **tol)
    same(ts.linalg.eigvalsh(c), ts.linalg.eigvalsh(g), **tol)
    same(ts.linalg.svdvals(c), ts.linalg.svdvals(g), **tol)
    q, r = ts.linalg.qr(g)
    same(c, q @ r, **tol)
    with pytest.raises(ts.linalg.LinAlgError):
        ts.linalg.cholesky(-g)
    x = ts.asarray(spd, device=DEV, requires_grad=True)
    ts.sum(ts.linalg.inv(x)).backward()
    xc = ts.asarray(spd, requires_grad=True)
    ts.sum(ts.linalg.inv(xc)).backward()
    same(xc.grad, x.grad, **tol)
    sig = rand((5, 64), "complex64", 26)
    same(ts.fft.fft(ts.asarray(sig)), ts.fft.fft(ts.asarray(sig, device=DEV)), exact=False, rtol=1e-5, atol=1e-5)
    re = rand((5, 63), "float32", 27)
    same(ts.fft.rfft(ts.asarray(re)), ts.fft.rfft(ts.asarray(re, device=DEV)), exact=False, rtol=1e-5, atol=1e-5)
    same(ts.fft.irfftn(ts.asarray(sig)), ts.fft.irfftn(ts.asarray(sig, device=DEV)), exact=False, rtol=1e-5, atol=1e-5)


@gpu
def test_asarray_follows_the_default_device_for_every_input_kind():
    """torch.asarray is one of torch's default-device constructors: NumPy arrays, buffers and
    sequences all go to the default device when no device= is given."""
    ts.set_default_device("cuda")
    try:
        for obj in (np.arange(4.0), [1.0, 2.0], 3.0, ts.arange(3, device="cpu")):
            assert ts.asarray(obj).device.type == "cuda", type(obj)
        assert ts.asarray(np.arange(4.0), device="cpu").device.type == "cpu"
    finally:
        ts.set_default_device(None)


@gpu
def test_cuda_tensors_pickle_and_deepcopy_onto_their_device():
    import copy
    import pickle
    x = ts.arange(6.0, device="cuda").reshape(2, 3)
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert y.device == x.device and np.array_equal(y.cpu().numpy(), x.cpu().numpy())
