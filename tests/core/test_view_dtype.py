"""x.view(dtype): the same bytes read as another dtype, differential against torch (shapes,
strides, bytes and which layouts are refused), plus write-through and autograd."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tessera as ts
from harness import same_as_torch

torch = pytest.importorskip("torch")

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]
# (shape, how to take a view of it): contiguous, row window, column window (offset and a
# non-unit outer stride), stepped rows, transposed (last stride not 1), 0-d, empty, size-1 last.
LAYOUTS = [((2, 8), None), ((4, 8), (slice(1, 3),)), ((2, 8), (slice(None), slice(2, 6))),
           ((3, 8), (slice(None, None, 2),)), ((8, 2), "T"), ((), None), ((0, 8), None),
           ((2, 1), None)]


def _pair(src: str, shape: tuple, key, rng: np.random.Generator):
    n = int(np.prod(shape))
    raw = rng.integers(0, 2 if src == "bool" else 256, size=max(1, n) * 16, dtype=np.uint8)
    tt = torch.from_numpy(raw.copy()).view(getattr(torch, src))[:n].reshape(shape)
    st = ts.asarray(raw.copy()).view(getattr(ts, src))[:n].reshape(shape)
    if key == "T":
        return tt.T, st.T
    if key is not None:
        return tt[key], st[key]
    return tt, st


def _bytes(x, lib) -> np.ndarray:
    flat = x.contiguous().reshape(-1).view(lib.uint8)
    return flat.numpy() if lib is torch else np.asarray(flat)


@pytest.mark.parametrize("src", DTYPES)
def test_view_dtype_matches_torch(src):
    rng = np.random.default_rng(DTYPES.index(src))
    for dst, (shape, key) in itertools.product(DTYPES, LAYOUTS):
        if "bool" in (src, dst) and src != dst:
            continue  # bytes other than 0/1 are not valid bools in either library
        tt, st = _pair(src, shape, key, rng)
        try:
            want = tt.view(getattr(torch, dst))
        except RuntimeError:
            with pytest.raises(RuntimeError, match="view"):
                st.view(getattr(ts, dst))
            continue
        got = st.view(getattr(ts, dst))
        where = (src, dst, shape, key)
        assert got.dtype == getattr(ts, dst), where
        assert got.shape == tuple(want.shape), where
        assert got.stride() == tuple(want.stride()), where
        if want.numel():
            np.testing.assert_array_equal(_bytes(got, ts), _bytes(want, torch), err_msg=str(where))


def test_view_dtype_bool_bytes():
    x = ts.asarray(np.array([0, 1, 1, 0], dtype=np.uint8))
    assert x.view(ts.bool).tolist() == [False, True, True, False]


def test_view_dtype_shares_storage():
    x = ts.zeros(4)
    v = x.view(ts.int32)
    v[1] = 0x3F800000  # the bits of 1.0f
    assert x.tolist() == [0.0, 1.0, 0.0, 0.0]
    b = x.view(ts.uint8)
    assert b.shape == (16,) and np.shares_memory(np.asarray(b), np.asarray(x))


def test_view_dtype_errors_name_the_problem():
    with pytest.raises(RuntimeError, match="stride 1.*contiguous"):
        ts.zeros((4, 2)).T.view(ts.float64)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        ts.zeros((2, 3)).view(ts.float64)
    with pytest.raises(RuntimeError, match="0-d"):
        ts.zeros(()).view(ts.int16)


def test_view_dtype_is_not_differentiable():
    x = ts.ones((2, 4), requires_grad=True)
    assert not x.view(ts.int32).requires_grad
    same = x.view(ts.float32)
    assert same.requires_grad
    same.sum().backward()
    assert x.grad.tolist() == [[1.0] * 4] * 2


# ---- view_as_real / view_as_complex: views like torch's, differentiable

@pytest.mark.parametrize("make", [
    lambda m: m.zeros(3, 4, dtype=m.complex64).t()[1:],
    lambda m: m.zeros((), dtype=m.complex128),
    lambda m: m.zeros(5, dtype=m.complex64)[::2],
    lambda m: m.zeros(3),  # not complex: refused
])
def test_view_as_real_geometry(make):
    same_as_torch(lambda m: (tuple(m.view_as_real(make(m)).shape), m.view_as_real(make(m)).stride(),
                     m.view_as_real(make(m)).storage_offset()))


@pytest.mark.parametrize("make", [
    lambda m: m.zeros(8)[2:].view(3, 2),
    lambda m: m.zeros(3, 4)[:, 1:3],   # odd offset
    lambda m: m.zeros(2, 2).t(),       # last stride not 1
    lambda m: m.zeros(3),              # last dim not 2
    lambda m: m.zeros(()),
    lambda m: m.zeros(4, 2).expand(3, 4, 2),
    lambda m: m.zeros(3, 2, dtype=m.int32),
    lambda m: m.zeros(4, 6, dtype=m.float64)[:, 2:4],
])
def test_view_as_complex_geometry(make):
    same_as_torch(lambda m: (tuple(m.view_as_complex(make(m)).shape),
                     m.view_as_complex(make(m)).stride(),
                     m.view_as_complex(make(m)).storage_offset()))


def test_view_as_real_and_complex_write_through():
    x = ts.zeros(2, dtype=ts.complex64)
    ts.view_as_real(x)[0, 1] = 5.0
    assert x.tolist() == [5j, 0j]
    r = ts.zeros((2, 2))
    ts.view_as_complex(r)[1] = 1 + 2j
    assert r.tolist() == [[0.0, 0.0], [1.0, 2.0]]


def test_view_as_real_and_complex_gradients_match_torch():
    def real_grad(m):
        x = m.tensor([1 + 2j, 3 - 1j], dtype=m.complex128, requires_grad=True)
        r = m.view_as_real(x)
        (r * m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64)).sum().backward()
        return x.grad.tolist()

    def complex_grad(m):
        x = m.tensor([[1.0, 2.0], [3.0, -4.0]], dtype=m.float64, requires_grad=True)
        c = m.view_as_complex(x)
        (c * c).abs().sum().backward()
        return np.round(np.array(x.grad.tolist()), 10).tolist()

    same_as_torch(real_grad)
    same_as_torch(complex_grad)
    x = ts.asarray([[0.3, -1.2], [2.0, 0.5]], dtype=ts.float64, requires_grad=True)
    assert ts.autograd.gradcheck(lambda t: ts.view_as_real(ts.view_as_complex(t) ** 2), (x,))


def test_view_as_real_and_complex_are_cpp_with_cpp_gradients():
    """One definition: the public functions are the bindings, the gradients C++ formulas named
    as torch's (ViewAsRealBackward0 / ViewAsComplexBackward0), and double backward works."""
    assert ts.view_as_real is ts._C.view_as_real and ts.view_as_complex is ts._C.view_as_complex
    x = ts.asarray([1 + 2j, 3 - 1j], dtype=ts.complex128, requires_grad=True)
    y = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex128, requires_grad=True)
    assert ts.view_as_real(x).grad_fn.name() == torch.view_as_real(y).grad_fn.name()
    gx, = ts.autograd.grad((ts.view_as_real(x) ** 3).sum(), x, create_graph=True)
    gy, = torch.autograd.grad((torch.view_as_real(y) ** 3).sum(), y, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), gy.detach().numpy())
    gx.abs().sum().backward()
    gy.abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12)
    a = ts.asarray([[0.3, -1.2], [2.0, 0.5], [1.0, 1.0]], dtype=ts.float64, requires_grad=True)
    assert ts.autograd.gradgradcheck(lambda t: ts.view_as_real(ts.view_as_complex(t) ** 2), (a,))
    with pytest.raises(TypeError, match="view_as_real"):
        ts.view_as_real([1.0, 2.0])
    with pytest.raises(RuntimeError, match="view_as_complex"):
        ts.view_as_complex(ts.zeros((3, 3)))
