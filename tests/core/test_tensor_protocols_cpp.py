"""The Tensor methods bound in csrc/python/bind_tensor_protocols.cpp (and the metadata in-place
ops, new_empty_strided, dtype.to_complex / to_real) against PyTorch: the callable x.size,
x.real / x.imag views and setters, NumPy interop, __contains__ / __format__, apply_ / map_ /
map2_, clone(memory_format=), conj_physical_, torch's constant queries; errors."""
import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import arrays, assert_same, compare_grads, same_as_torch, shapes, strided_views

DTYPES = ["float32", "float64", "int64", "int32", "bool", "complex64", "complex128", "uint8"]


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_size_matches_torch(data) -> None:
    a = data.draw(arrays(data.draw(st.sampled_from(DTYPES)), shapes(0, 4)))
    a = strided_views(data.draw, a)
    x, t = ts.asarray(a), torch.from_numpy(a.copy())
    assert x.size == t.numel() and isinstance(x.size, int)
    assert x.size() == t.size() and type(x.size()).__name__ == "Size"
    assert x.size() is x.size()  # made once per tensor
    for d in range(-x.ndim, x.ndim):
        assert x.size(d) == t.size(d) == x.size(dim=d)
    for bad in (x.ndim, -x.ndim - 1):
        same_as_torch(lambda m: (x if m is ts else t).size(bad))
    assert pickle.loads(pickle.dumps(x.size)) == x.size


def test_size_after_shape_change_and_errors() -> None:
    x = ts.zeros((2, 3))
    assert x.size() == (2, 3)
    x.t_()
    assert x.size() == (3, 2) and x.size(0) == 3
    x.resize_(4)
    assert x.size() == (4,) and x.size == 4
    with pytest.raises(TypeError, match="size: dim must be an int"):
        x.size("a")
    with pytest.raises(IndexError, match="size: dimension specified as 0 but tensor has no dim"):
        ts.zeros(()).size(0)
    same_as_torch(lambda m: m.zeros(2, 3).size(1.0))
    same_as_torch(lambda m: m.zeros(()).size(0))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_real_imag_views(data) -> None:
    dtype = data.draw(st.sampled_from(["complex64", "complex128"]))
    a = strided_views(data.draw, data.draw(arrays(dtype, shapes(0, 3))))
    x, t = ts.asarray(a), torch.from_numpy(a.copy())
    assert_same(x.real, t.real)
    assert_same(x.imag, t.imag)
    x.real = 2.5
    t.real = 2.5
    x.imag = ts.asarray(np.full(a.shape, -1.0, x.real.dtype.name))
    t.imag = torch.full(a.shape, -1.0, dtype=t.real.dtype)
    assert_same(x, t)
    r = x.real
    r += 1  # a view: writes reach x
    t.real += 1
    assert_same(x, t)


def test_real_imag_of_real_tensors_and_grad() -> None:
    x = ts.arange(3.0)
    assert x.real is x
    x.real = 4
    assert_same(x, torch.full((3,), 4.0))
    same_as_torch(lambda m: m.zeros(2).imag, exact_error=True)
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        ts.zeros(2).imag = 1
    rng = np.random.default_rng(0)
    c = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    compare_grads(lambda z: z.real * 2 + z.imag, lambda z: z.real * 2 + z.imag, [c])


def test_dtype_to_complex_to_real() -> None:
    for name in ("float32", "float64", "complex64", "complex128"):
        d, td = getattr(ts, name), getattr(torch, name)
        assert d.to_complex().name == str(td.to_complex()).replace("torch.", "")
        assert d.to_real().name == str(td.to_real()).replace("torch.", "")
    assert ts.int64.to_real() is ts.int64
    with pytest.raises(RuntimeError, match="to_complex: no complex counterpart of int64"):
        ts.int64.to_complex()


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_numpy_tolist_iter(data) -> None:
    dtype = data.draw(st.sampled_from(DTYPES))
    a = strided_views(data.draw, data.draw(arrays(dtype, shapes(0, 3))))
    x, t = ts.asarray(a), torch.from_numpy(a.copy())
    assert x.tolist() == t.tolist()
    np.testing.assert_array_equal(x.numpy(), a)
    assert x.numpy(force=True) is not x.numpy(force=True)
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), a.astype(np.float64))
    if a.ndim == 0:
        same_as_torch(lambda m: list(x if m is ts else t))
    else:
        assert [r.tolist() for r in x] == [r.tolist() for r in t]


@pytest.mark.cpu_only  # numpy() shares host memory
def test_numpy_interop_details() -> None:
    x = ts.arange(4.0)
    a = x.numpy()
    a[0] = 9  # shares memory
    assert x[0].item() == 9
    assert x.__array__(copy=True) is not None and x.__array__(copy=True)[0] == 9
    with pytest.raises(ValueError, match="__array__: copy=False but converting float32"):
        x.__array__(np.float64, copy=False)
    assert ts.asarray([1.5], dtype=ts.bfloat16).tolist() == [1.5]
    assert ts.asarray(2.5).tolist() == 2.5


def test_contains_and_format() -> None:
    x = ts.asarray([[1, 2], [3, 4]])
    t = torch.tensor([[1, 2], [3, 4]])
    for v in (3, 5, 2.0, True, ts.asarray([3, 4])):
        tv = torch.tensor([3, 4]) if isinstance(v, ts.Tensor) else v
        assert (v in x) == (tv in t)
    same_as_torch(lambda m: "a" in m.zeros(2), exact_error=True)
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        [1] in x  # noqa: B015
    assert f"{ts.asarray(3.14159):.2f}" == f"{torch.tensor(3.14159):.2f}" == "3.14"
    assert f"{x}" == str(x)
    same_as_torch(lambda m: f"{m.zeros(2):.2f}", exact_error=True)


@pytest.mark.cpu_only  # apply_/map_ are CPU-only, as PyTorch's
def test_apply_map_map2() -> None:
    for dtype in ("float32", "int64", "float64"):
        a = np.arange(6).reshape(2, 3).astype(dtype)
        x, t = ts.asarray(a.copy()), torch.from_numpy(a.copy())
        assert x.apply_(lambda v: v * 2 + 1) is x
        t.apply_(lambda v: v * 2 + 1)
        assert_same(x, t)
        x.map_(ts.asarray(np.arange(3).astype(dtype)), lambda p, q: p - q)
        t.map_(torch.from_numpy(np.arange(3).astype(dtype)), lambda p, q: p - q)
        assert_same(x, t)
        x.map2_(ts.asarray(a), ts.asarray(a[:1]), lambda p, q, r: p + q * r)
        t.map2_(torch.from_numpy(a), torch.from_numpy(a[:1]), lambda p, q, r: p + q * r)
        assert_same(x, t)
    # a non-contiguous self is written through
    b = ts.zeros((3, 2)).t()
    b.apply_(lambda v: 5)
    assert_same(b, torch.full((2, 3), 5.0))
    same_as_torch(lambda m: m.zeros(2, requires_grad=True).apply_(lambda v: v), exact_error=True)
    same_as_torch(lambda m: m.zeros(2, requires_grad=True).map_(m.zeros(2), lambda a, b: a),
                  exact_error=True)
    with pytest.raises(RuntimeError, match=r"Can't call apply_\(\) on Variable"):
        ts.zeros(2, requires_grad=True).apply_(lambda v: v)


def test_clone_memory_format_and_detach() -> None:
    a = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    x, t = ts.asarray(a), torch.from_numpy(a)
    for fmt in ("channels_last", "contiguous_format"):
        got = x.clone(memory_format=getattr(ts, fmt))
        want = t.clone(memory_format=getattr(torch, fmt))
        assert_same(got, want)
        assert got.stride() == want.stride()
        assert ts.clone(x, memory_format=getattr(ts, fmt)).stride() == want.stride()
    assert x.contiguous(memory_format=ts.channels_last).stride() == \
        t.contiguous(memory_format=torch.channels_last).stride()
    same_as_torch(lambda m: m.zeros(2, 3).clone(memory_format=m.channels_last))
    with pytest.raises(TypeError, match="memory_format must be a tessera memory format"):
        x.clone(memory_format="channels_last")
    y = ts.ones(2, requires_grad=True) * 2
    d = ts.detach(y)
    assert not d.requires_grad and d.data_ptr() == y.data_ptr()
    compare_grads(lambda z: ts.clone(z) * 3, lambda z: torch.clone(z) * 3, [np.ones(3)])


def test_metadata_inplace_ops() -> None:
    for name, args in (("t_", ()), ("transpose_", (0, 1)), ("swapaxes_", (0, 1)),
                       ("swapdims_", (1, 0)), ("unsqueeze_", (1,)), ("as_strided_", ((3,), (2,)))):
        x, t = ts.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
        assert getattr(x, name)(*args) is x
        getattr(t, name)(*args)
        assert_same(x, t)
    x, t = ts.zeros((2, 1, 3)), torch.zeros(2, 1, 3)
    x.squeeze_(1)
    t.squeeze_(1)
    assert x.size() == t.size()
    with pytest.raises(RuntimeError, match="t_: a leaf Variable that requires grad"):
        ts.zeros((2, 2), requires_grad=True).t_()


def test_new_empty_strided_conj_physical_and_queries() -> None:
    x, t = ts.zeros(3, dtype=ts.float64), torch.zeros(3, dtype=torch.float64)
    e, te = x.new_empty_strided((2, 3), (1, 2)), t.new_empty_strided((2, 3), (1, 2))
    assert e.shape == tuple(te.shape) and e.stride() == te.stride() and e.dtype == ts.float64
    e = x.new_empty_strided([2], [1], dtype=ts.int32, requires_grad=False)
    assert e.dtype == ts.int32
    with pytest.raises(RuntimeError, match="empty_strided: mismatch in length"):
        x.new_empty_strided((2, 3), (1,))
    c, tc = ts.asarray([1 + 2j, 3 - 1j]), torch.tensor([1 + 2j, 3 - 1j])
    assert c.conj_physical_() is c
    assert_same(c, tc.conj_physical_())
    compare_grads(lambda z: (z * 1).conj_physical_(), lambda z: (z * 1).conj_physical_(),
                  [np.array([1 + 2j, 3 - 1j])])
    r = ts.arange(3.0)
    assert r.conj_physical_() is r
    for attr in ("is_sparse", "is_quantized", "is_meta", "is_nested", "volatile"):
        assert getattr(x, attr) is False
    assert x.layout is ts.strided and x.name is None
    assert x.dense_dim() == 1 and x.sparse_dim() == 0
    assert x.to_dense() is x and x.to_dense(ts.float32).dtype == ts.float32
    assert not x.is_conj() and not x.is_neg() and not x.is_inference() and not x.is_shared()
    assert x.resolve_conj() is x and x.resolve_neg() is x and x.share_memory_() is x
    assert not x.is_pinned()
    with pytest.raises(TypeError, match="record_stream: argument 1 cannot be a tensor"):
        x.record_stream(x)
    for name in ("is_conj", "resolve_conj", "resolve_neg"):
        same_as_torch(lambda m: getattr(m.Tensor, name)(3))


def test_module_load() -> None:
    # torch's module_load is self.copy_(other).detach(): a leaf that requires grad refuses it
    # outside no_grad (the Python version wrote under no_grad)
    same_as_torch(lambda m: m.zeros(3, requires_grad=True).module_load(m.ones(3)))
    x, t = ts.zeros(3, requires_grad=True), torch.zeros(3, requires_grad=True)
    with ts.no_grad(), torch.no_grad():
        got, want = x.module_load(ts.ones(3) * 2), t.module_load(torch.ones(3) * 2)
    assert_same(got, want)
    assert_same(x, want)  # copied into x, without recording
    assert not got.requires_grad and got.data_ptr() == x.data_ptr()
    o = ts.ones(3, requires_grad=True) * 5
    got = x.module_load(o, assign=True)
    assert not got.requires_grad and got.data_ptr() == o.data_ptr()
    y = ts.zeros(3)
    y.module_load([7.0, 8.0, 9.0])  # array-likes are written as y[...] = other
    assert y.tolist() == [7.0, 8.0, 9.0]


def test_astype_method() -> None:
    x = ts.asarray([1.5, -2.5, 3.0])
    assert_same(x.astype(ts.int64), np.array([1, -2, 3]))
    assert x.astype("float64").dtype == ts.float64 and x.astype(np.float16).dtype == ts.float16
    assert x.astype(ts.float32, copy=False).data_ptr() == x.data_ptr()
    assert x.astype(ts.float32).data_ptr() != x.data_ptr()
    with pytest.raises(TypeError):
        x.astype(dtype=ts.int64)  # positional-only, as the standard
    compare_grads(lambda z: z.astype(ts.float32) * 2, lambda z: z.to(torch.float32) * 2,
                  [np.ones(3)])
