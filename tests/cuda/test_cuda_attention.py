"""The fused attention kernels on CUDA (csrc/cuda/attention_mma.cu on tensor cores:
float16/bfloat16 on their 16-bit mma, float32 by 3xTF32): forward (out, lse) and backward
(dq, dk, dv) equal the CPU reference kernel's on the same inputs, causal or not, each padded
head dim (16/32 -> 32, 48/64 -> 64, 80/96/128 -> 128), sequence lengths around the 64-row
tiles, L != S both ways, E != Ev, head dims off the 16-byte vector loads, more (batch, tile)
blocks than a grid's y/z limit, and the char-GPT shape (64*6, 256, 64); float32 keeps float32
accuracy against a float64 reference; scaled_dot_product_attention on CUDA takes the kernel
at every size and falls back to the GEMM paths for float64, float32 head dims above 64 and
head dims above 128."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from tessera.nn.functional import attention as A

pytestmark = pytest.mark.skipif(not ts.cuda.is_available(), reason="no CUDA device")

rng = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _tessera_kernels():
    """This file tests tessera's own kernels (their dropout mask is the CPU kernel's): cuDNN's
    fused attention, which would take float16/bfloat16, is off here and tested in
    test_cuda_attention_cudnn.py."""
    on = ts.backends.cuda.cudnn_sdp_enabled()
    ts.backends.cuda.enable_cudnn_sdp(False)
    yield
    ts.backends.cuda.enable_cudnn_sdp(on)

# Relative to the reference's largest magnitude: both sides compute in float from the same
# rounded inputs, but in another order and with exp2f on the GPU; 16-bit outputs round once.
# The 16-bit kernels also round P and dS to the input dtype before their matmuls (relative
# error 2^-11 for float16, 2^-8 for bfloat16 per term, averaging out over the sums), well
# inside these bounds. float32's 3xTF32 products are within about 2^-21 of float products
# (plain TF32, 2^-11, would miss the float32 bound by far).
TOL = {"float32": 5e-5, "float16": 4e-3, "bfloat16": 3e-2}
DTYPES = list(TOL)


@pytest.fixture(autouse=True)
def attention_paths():
    """Restores the attention path settings (csrc/ops/nn/attention.h) after each test and
    records the fused paths its calls take, as (path, device type, block)."""
    with A.attention_settings(flash_on_cpu=A.attention_settings()["flash_on_cpu"]), \
            A.attention_trace() as trace:
        yield trace


class FlashCalls:
    """The number of flash-path calls in an attention trace (live)."""

    def __init__(self, trace) -> None:
        self.trace = trace

    def __len__(self) -> int:
        return sum(1 for path, _, _ in self.trace if path == "flash")


def host(t: ts.Tensor) -> np.ndarray:
    return t.to("cpu").astype(ts.float64).numpy()


def same(gpu: ts.Tensor, cpu: ts.Tensor, dtype: str) -> None:
    assert gpu.device.type == "cuda" and gpu.dtype == cpu.dtype
    assert tuple(gpu.shape) == tuple(cpu.shape)
    a, b = host(gpu), host(cpu)
    finite = np.isfinite(b)
    big = float(np.max(np.abs(b[finite]))) if finite.any() else 1.0
    np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype] * max(big, 1.0))


def pair(a: np.ndarray, dtype: str):
    c = ts.asarray(a).astype(getattr(ts, dtype))
    return c, c.to("cuda")


def check_op(N, L, S, E, Ev, causal, dtype, scale=None, drop=(0.0, 0, 0)) -> None:
    """Forward and backward of the op on CUDA vs CPU; drop = (dropout_p, seed, offset): both
    kernels draw the same mask from it (Note [Attention dropout])."""
    scale = 1.0 / np.sqrt(E) if scale is None else scale
    (q, qg), (k, kg), (v, vg) = (pair(rng.standard_normal(s), dtype)
                                 for s in ((N, L, E), (N, S, E), (N, S, Ev)))
    out, lse = _C._flash_attention(q, k, v, scale, causal, *drop)
    outg, lseg = _C._flash_attention(qg, kg, vg, scale, causal, *drop)
    same(outg, out, dtype)
    same(lseg, lse, "float32")
    g, gg = pair(rng.standard_normal((N, L, Ev)), dtype)
    # Both backwards from the CPU forward's out/lse, so only the backward kernels differ.
    ref = _C._flash_attention_backward(q, k, v, out, lse, g, scale, causal, *drop)
    got = _C._flash_attention_backward(qg, kg, vg, out.to("cuda"), lse.to("cuda"), gg, scale,
                                       causal, *drop)
    for a, b in zip(got, ref):
        same(a, b, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("N,L,S,E,Ev", [(3, 77, 77, 64, 64), (2, 130, 65, 32, 48),
                                        (2, 63, 200, 128, 128), (6, 256, 256, 64, 64)])
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_flash_dropout_matches_cpu(N, L, S, E, Ev, causal, dtype, p) -> None:
    """Dropout inside the tensor-core kernels: the same mask as the CPU kernel's from the same
    (seed, offset), forward and backward (so the backward regenerates the forward's mask)."""
    check_op(N, L, S, E, Ev, causal, dtype, drop=(p, 1234 + N, 17 * L))


def test_sdpa_dropout_cuda_matches_cpu_kernel(monkeypatch) -> None:
    """scaled_dot_product_attention with dropout takes the fused kernel on CUDA (no score or
    mask tensor) and, under the same seed, gives the CPU kernel's output and gradients."""
    _C._set_attention_settings(flash_on_cpu=True)
    res = {}
    arrays = [rng.standard_normal((4, 6, 128, 64)).astype(np.float32) for _ in range(3)]
    for dev in ("cpu", "cuda"):
        ts.manual_seed(7)
        q, k, v = (ts.asarray(a).to(dev).requires_grad_() for a in arrays)
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.2, is_causal=True)
        out.sum().backward()
        res[dev] = (out, q.grad, k.grad, v.grad)
    for a, b in zip(res["cuda"], res["cpu"]):
        same(a.detach(), b.detach(), "float32")


def test_flash_dropout_mask_on_cuda_is_the_kernels() -> None:
    """Note [Attention dropout mask]: with v = I and uniform probabilities the kernel's output
    is its mask / S; it equals _attention_dropout_mask built for CUDA, rows and columns off
    the 16-element groups included (L = 77, S = 90); the keep rate is 1 - p."""
    N, L, S, p, seed, offset = 6, 77, 90, 0.25, 99, 5
    q = ts.zeros((N, L, 8), device="cuda")
    k = ts.zeros((N, S, 8), device="cuda")
    v = ts.broadcast_to(ts.eye(S, device="cuda"), (N, S, S))
    out, _ = _C._flash_attention(q, k, v.contiguous(), 1.0, False, p, seed, offset)
    mask = _C._attention_dropout_mask(N, L, S, p, seed, offset, ts.float32, "cuda")
    assert mask.device.type == "cuda"
    np.testing.assert_allclose(host(out) * S, host(mask), rtol=1e-5, atol=1e-5)
    keep = host(mask) > 0
    assert abs(keep.mean() - (1 - p)) < 4 * np.sqrt(p * (1 - p) / keep.size)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_sdpa_dropout_create_graph_matches_kernel_backward(monkeypatch, dtype) -> None:
    """The create_graph backward (composite, with the mask op's tensor) and the kernels' own
    backward agree on CUDA: both regenerate the forward's mask."""
    arrays = [rng.standard_normal((2, 3, 70, 64)).astype(np.float32) for _ in range(3)]
    q, k, v = (ts.asarray(a).to("cuda").astype(getattr(ts, dtype)).requires_grad_()
               for a in arrays)
    ts.manual_seed(11)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=True)
    g = ts.asarray(rng.standard_normal(out.shape).astype(np.float32)).to("cuda").astype(
        getattr(ts, dtype))
    got = ts.autograd.grad(out, (q, k, v), g, retain_graph=True)
    got_cg = ts.autograd.grad(out, (q, k, v), g, create_graph=True)
    for a, b in zip(got, got_cg):
        same(a, b.detach(), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("E", [16, 32, 64, 80, 128])
def test_flash_head_dims(E, causal, dtype) -> None:
    check_op(3, 77, 77, E, E, causal, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S,E,Ev", [(1, 1, 8, 8), (5, 130, 64, 64), (130, 5, 64, 64),
                                      (33, 65, 80, 16), (100, 37, 16, 128), (64, 64, 1, 3)])
def test_flash_shapes(L, S, E, Ev, causal, dtype) -> None:
    check_op(2, L, S, E, Ev, causal, dtype, scale=0.3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L", [1, 63, 64, 65, 130])
@pytest.mark.parametrize("S", [1, 63, 64, 65, 130])
def test_flash_tile_edges(L, S, causal, dtype) -> None:
    """Sequence lengths at and around the tensor-core kernels' 64-row tiles, both ways."""
    check_op(2, L, S, 32, 32, causal, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("E,Ev", [(48, 48), (96, 96), (128, 40), (24, 96), (20, 12), (8, 128),
                                  (64, 12), (12, 64), (128, 128), (17, 40), (40, 18), (6, 10),
                                  (127, 3)])
def test_flash_head_dims_mixed(E, Ev, causal, dtype) -> None:
    """Padded head dims 32/64/128 from either E or Ev; a width off the 16-byte chunks (16-bit:
    % 8 != 0, float32: % 4 != 0) takes the scalar tile loads (for one of the two, or both), and
    an odd width the scalar stores."""
    check_op(2, 100, 70, E, Ev, causal, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(300, 300), (70, 330), (330, 70)])
@pytest.mark.parametrize("E,Ev", [(64, 64), (36, 64)])
def test_flash_many_tiles(L, S, E, Ev, causal, dtype) -> None:
    """Five or six 64-row tiles streamed per block, so the tensor-core kernels' two cp.async
    buffers alternate several times (S > L causal: key tiles that no query sees, L > S: query
    tiles past the keys); E = 36 mixes plain loads of Q/K with cp.async copies of V/dO."""
    check_op(2, L, S, E, Ev, causal, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_flash_many_blocks(dtype) -> None:
    """N * tiles past 65535 blocks (the grid's y/z limit): the batch index rides in x."""
    check_op(70000, 3, 5, 8, 8, True, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_flash_backward_deterministic(dtype) -> None:
    """Every gradient is written once (no atomics): two runs agree bit for bit."""
    q, k, v, g = (pair(rng.standard_normal((4, 130, 64)), dtype)[1] for _ in range(4))
    out, lse = _C._flash_attention(q, k, v, 0.125, True)
    first = [host(x) for x in _C._flash_attention_backward(q, k, v, out, lse, g, 0.125, True)]
    again = [host(x) for x in _C._flash_attention_backward(q, k, v, out, lse, g, 0.125, True)]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_flash_char_gpt_shape(dtype) -> None:
    check_op(64 * 6, 256, 256, 64, 64, True, dtype)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("E,Ev", [(64, 64), (36, 100)])
def test_flash_float32_accuracy(E, Ev, causal) -> None:
    """float32 (3xTF32) against a float64 reference (from the same float32 inputs) to float32
    accuracy: inputs of magnitude ~10 and scale / 100 (scores ~1), where operands rounded to
    TF32 alone would be off by ~1e-3 relative."""
    N, L, S, scale = 2, 150, 140, 1e-2 / np.sqrt(E)
    raw = [10 * rng.standard_normal(s) for s in ((N, L, E), (N, S, E), (N, S, Ev), (N, L, Ev))]
    q, k, v, g = (ts.asarray(r).astype(ts.float32) for r in raw)
    q64, k64, v64, g64 = (x.astype(ts.float64) for x in (q, k, v, g))
    out, lse = _C._flash_attention(q64, k64, v64, scale, causal)
    ref = [out, lse] + list(_C._flash_attention_backward(q64, k64, v64, out, lse, g64,
                                                         scale, causal))
    cq, ck, cv, cg = (x.to("cuda") for x in (q, k, v, g))
    outg, lseg = _C._flash_attention(cq, ck, cv, scale, causal)
    got = [outg, lseg] + list(_C._flash_attention_backward(
        cq, ck, cv, out.astype(ts.float32).to("cuda"), lse.astype(ts.float32).to("cuda"), cg,
        scale, causal))
    for a, b in zip(got, ref):
        a, b = host(a), host(b)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * np.abs(b).max())


@pytest.mark.parametrize("causal", [False, True])
def test_flash_empty(causal) -> None:
    for N, L, S in ((0, 4, 4), (2, 0, 4), (2, 4, 0)):
        check_op(N, L, S, 8, 8, causal, "float32")


def test_flash_cuda_errors() -> None:
    x = ts.zeros((2, 4, 8), dtype=ts.float64, device="cuda")
    with pytest.raises(TypeError, match="flash_attention: not supported for dtype float64"):
        _C._flash_attention(x, x, x, 1.0, False)
    big = ts.zeros((2, 4, 129), device="cuda")
    with pytest.raises(NotImplementedError, match="flash_attention: head dims up to 128"):
        _C._flash_attention(big, big, big, 1.0, False)
    cpu = ts.zeros((2, 4, 8))
    with pytest.raises(ValueError, match="flash_attention: query on cuda:0 and key on cpu"):
        _C._flash_attention(cpu.to("cuda"), cpu, cpu, 1.0, False)


@pytest.mark.parametrize("dtype,E", [("float32", 64), ("bfloat16", 64), ("float16", 32),
                                     ("float64", 64), ("float32", 160), ("float32", 96),
                                     ("bfloat16", 96)])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_cuda(attention_paths, dtype, E, causal) -> None:
    """F.scaled_dot_product_attention on CUDA (fused where it applies, else the matmul path)
    vs the CPU flash kernel, values and gradients (the CPU side forced onto its flash kernel
    so that 16-bit runs compare two float computations on the same rounded inputs)."""
    _C._set_attention_settings(flash_on_cpu=True)
    raw = [rng.standard_normal((2, 3, 40, E)) for _ in range(4)]
    tol = {"float64": 1e-10, **TOL}[dtype]
    res = {}
    for dev in ("cpu", "cuda"):
        xs = [ts.asarray(r).astype(getattr(ts, dtype)).to(dev).requires_grad_(True)
              for r in raw[:3]]
        out = F.scaled_dot_product_attention(*xs, is_causal=causal)
        out.backward(ts.asarray(raw[3]).astype(getattr(ts, dtype)).to(dev))
        res[dev] = [host(out)] + [host(x.grad) for x in xs]
    flash = {"float64": 0, "float32": 64}.get(dtype, 128)  # largest head dim on the kernel
    assert [d for p, d, _ in attention_paths if p == "flash"].count("cuda") == \
        (1 if E <= flash else 0)
    for a, b in zip(res["cuda"], res["cpu"]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(np.abs(b).max(), 1.0))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_sdpa_cuda_non_contiguous(monkeypatch, dtype) -> None:
    """q/k/v as (B, H, T, E) views of (B, T, H, E) projections, on CUDA vs CPU (flash both)."""
    _C._set_attention_settings(flash_on_cpu=True)
    raw = [rng.standard_normal((2, 37, 3, 64)) for _ in range(3)]
    g = rng.standard_normal((2, 3, 37, 64))
    res = {}
    for dev in ("cpu", "cuda"):
        xs = [ts.asarray(r).astype(getattr(ts, dtype)).to(dev).requires_grad_(True) for r in raw]
        out = F.scaled_dot_product_attention(*(x.permute(0, 2, 1, 3) for x in xs),
                                             is_causal=True)
        out.backward(ts.asarray(g).astype(getattr(ts, dtype)).to(dev))
        res[dev] = [host(out)] + [host(x.grad) for x in xs]
    for a, b in zip(res["cuda"], res["cpu"]):
        np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype] * max(np.abs(b).max(), 1.0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["gpt", "gpt_odd", "last_strided", "lead3", "lead1"])
def test_flash_reads_strided_inputs_in_place(monkeypatch, dtype, layout) -> None:
    """The kernels read q/k/v through their (B, H, row) strides: views of one (B, T, 3 * H * E)
    projection (E a multiple of the 16-byte loads, and not: the element-wise fallback), a
    non-unit stride along E (copied first), more or fewer leading dims; the output of 4-D
    inputs is laid out (B, L, H, Ev), so transpose(1, 2).reshape(B, L, H * Ev) is a view;
    values and gradients equal the CPU reference's."""
    _C._set_attention_settings(flash_on_cpu=True)
    B, T, H = 2, 70, 3
    E = 13 if layout == "gpt_odd" else 32
    g_raw = rng.standard_normal((B, H, T, E))
    if layout in ("gpt", "gpt_odd"):
        raw = rng.standard_normal((B, T, 3 * H * E))

        def qkv(x):
            return [x[..., i * H * E:(i + 1) * H * E].reshape(B, T, H, E).permute(0, 2, 1, 3)
                    for i in range(3)]
    elif layout == "last_strided":
        raw = rng.standard_normal((B, H, T, 2 * E))

        def qkv(x):
            return [x[..., ::2], x[..., 1::2], x[..., ::2] * 0.5]
    else:
        shape = (2, 2, 3, T, E) if layout == "lead3" else (6, T, E)
        raw = rng.standard_normal(shape)
        g_raw = rng.standard_normal(shape)

        def qkv(x):
            return [x, x * 0.7, x * -0.3]
    res = {}
    for dev in ("cpu", "cuda"):
        x = ts.asarray(raw).astype(getattr(ts, dtype)).to(dev).requires_grad_(True)
        out = F.scaled_dot_product_attention(*qkv(x), is_causal=True)
        if dev == "cuda" and layout.startswith("gpt"):
            flat = out.transpose(1, 2)
            assert flat.is_contiguous()  # (B, L, H, Ev) memory: the head merge is free
        out.backward(ts.asarray(g_raw).astype(getattr(ts, dtype)).to(dev))
        res[dev] = [host(out), host(x.grad)]
    for a, b in zip(res["cuda"], res["cpu"]):
        np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype] * max(np.abs(b).max(), 1.0))


def test_flash_op_shapes_and_errors() -> None:
    """_C._flash_attention takes (B, H, L, E) and (N, L, E) forms, lse follows the leading
    dims, and mismatched or wrong-rank inputs raise ValueError naming the op."""
    q = ts.zeros((2, 3, 5, 16), device="cuda")
    out, lse = _C._flash_attention(q, q, q, 0.25, False)
    assert tuple(out.shape) == (2, 3, 5, 16) and tuple(lse.shape) == (2, 3, 5)
    out3, lse3 = _C._flash_attention(q[0], q[0], q[0], 0.25, False)
    assert tuple(out3.shape) == (3, 5, 16) and tuple(lse3.shape) == (3, 5)
    with pytest.raises(ValueError, match="flash_attention"):
        _C._flash_attention(q, q[0], q, 0.25, False)
    with pytest.raises(ValueError, match="flash_attention"):
        _C._flash_attention(q, ts.zeros((2, 4, 5, 16), device="cuda"), q, 0.25, False)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_cuda_picks_flash_at_every_size(attention_paths, causal) -> None:
    """float16/bfloat16/float32 take the fused kernel on CUDA at every size, float32 causal
    too where the CPU would take the causal block path (L >= 128); float64, float32 head dims
    above 64 and other head dims above 128 take the GEMM paths."""
    calls = FlashCalls(attention_paths)
    for shape in ((2, 3, 4, 16), (2, 3, 40, 16), (2, 3, 256, 64)):
        q = ts.zeros(shape, device="cuda")
        for dt in (ts.float32, ts.bfloat16, ts.float16):
            F.scaled_dot_product_attention(q.astype(dt), q.astype(dt), q.astype(dt),
                                           is_causal=causal)
    assert len(calls) == 9
    for dt, E in ((ts.float64, 16), (ts.float32, 160), (ts.float32, 65), (ts.bfloat16, 160)):
        q = ts.zeros((2, 3, 256, E), dtype=dt, device="cuda")
        F.scaled_dot_product_attention(q, q, q, is_causal=causal)
    assert len(calls) == 9
    q = ts.zeros((2, 3, 256, 128), dtype=ts.bfloat16, device="cuda")
    F.scaled_dot_product_attention(q, q, q, is_causal=causal)
    assert len(calls) == 10
    # float32 head dims 65..128 take the fused kernel where the GEMM paths' score tensor
    # would pass the memory threshold (here lowered to the test's size).
    _C._set_attention_settings(flash_min_score_bytes=2 * 3 * 256 * 256 * 4 - 1)
    q = ts.zeros((2, 3, 256, 128), device="cuda")
    F.scaled_dot_product_attention(q, q, q, is_causal=causal)
    assert len(calls) == 11
