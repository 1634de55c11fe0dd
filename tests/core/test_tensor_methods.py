"""Tensor's conversions and queries, C++ methods (csrc/python/bind_tensor_methods.cpp), against
PyTorch: x.to's forms, x.type / x.type_as / x.float()..., x.stride(dim), x.element_size(),
x.nelement(), x.storage_offset(), x.is_same_size, x.dim_order(), x.H / x.mH / x.adjoint(), on
empty, 0-d, strided inputs and several dtypes; gradients in float64; error classes and the op
named in the message."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import tessera as ts
from harness import compare_grads, randn, same_as_torch, same_result

torch = pytest.importorskip("torch")


def agree(f, exact_error=False):
    """f(ts) and f(torch) return the same tensors/values (same_result), or both raise
    (same_as_torch compares the classes)."""
    try:
        want, got = f(torch), f(ts)
    except Exception:  # noqa: BLE001 - same_as_torch compares the errors
        same_as_torch(f, exact_error=exact_error)
        return
    same_result(got, want)


DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool", "complex64", "float16"]


def make(m, shape, dtype="float32", transposed=False):
    a = randn(*shape, generator=np.random.default_rng(len(shape))).astype(np.complex64 if dtype.startswith("complex") else np.float64)
    t = m.zeros(shape, dtype=getattr(m, dtype))  # row-major strides, also when empty
    t.copy_(m.asarray(a) if m is ts else m.tensor(a))
    return t.mT if transposed else t


SHAPES = [(), (0,), (2, 0), (3,), (2, 3), (2, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_to_dtype_forms_match_torch(shape, dtype):
    for target in ("float64", "int32", "bool", "complex128"):
        agree(lambda m: make(m, shape, dtype).to(getattr(m, target)))
        agree(lambda m: make(m, shape, dtype).to(dtype=getattr(m, target)))
        agree(lambda m: make(m, shape, dtype).to("cpu", getattr(m, target)))
        agree(lambda m: make(m, shape, dtype).to(make(m, (1,), target)))


def test_to_identity_copy_and_positional_flags():
    for m in (torch, ts):
        x = make(m, (2, 3))
        assert x.to(m.float32) is x and x.to("cpu") is x and x.to(x) is x
        assert x.to(m.float32, copy=True) is not x
        y = x.to("cpu", m.float32, False, True)  # (device, dtype, non_blocking, copy)
        assert y is not x and y.data_ptr() != x.data_ptr()
        z = x.to(m.float64, True, True)  # (dtype, non_blocking, copy)
        assert z.dtype == m.float64
        assert x.to("cpu", non_blocking=True) is x
        assert x.to(device="cpu", dtype=m.float64).dtype == m.float64


def test_to_strided_keeps_values_and_memory_format():
    agree(lambda m: make(m, (3, 4), transposed=True).to(m.float64))
    for m in (torch, ts):
        x = make(m, (2, 3, 4, 5))
        y = x.to(memory_format=m.channels_last)
        assert y.is_contiguous(memory_format=m.channels_last)
        assert y.float(memory_format=m.channels_last).is_contiguous(memory_format=m.channels_last)


def test_to_gradients_match_torch():
    x = randn(3, 4)
    compare_grads(lambda t: t.to(ts.float32).to(ts.float64) * 2,
                  lambda t: t.to(torch.float32).to(torch.float64) * 2, [x], rtol=1e-6)
    compare_grads(lambda t: t.to("cpu", copy=True) ** 2, lambda t: t.to("cpu", copy=True) ** 2, [x])
    compare_grads(lambda t: t.double() * t.type_as(t), lambda t: t.double() * t.type_as(t), [x])
    compare_grads(lambda t: t.mT.to(ts.float64).sin(), lambda t: t.mT.to(torch.float64).sin(), [x])


def test_to_errors_name_the_op():
    x = ts.ones((2, 3))
    with pytest.raises(TypeError):
        x.to(foo=1)
    with pytest.raises(TypeError, match="to"):
        x.to(ts.float64, True, ts.float32)
    with pytest.raises(TypeError, match="memory_format"):
        x.to(memory_format="channels_last")


@pytest.mark.parametrize("dtype", DTYPES)
def test_type_and_conversions_match_torch(dtype):
    for name in ("float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte",
                 "bool", "cfloat", "cdouble"):
        agree(lambda m: getattr(make(m, (2, 3), dtype, transposed=True), name)())
    agree(lambda m: make(m, (2, 3), dtype).type(m.float64))
    agree(lambda m: make(m, (2, 3), dtype).type("torch.DoubleTensor"))
    agree(lambda m: make(m, (2, 3), dtype).type_as(make(m, (), "int64")))
    for m in (torch, ts):
        x = make(m, (2, 3), dtype)
        assert getattr(x, {"float32": "float", "float64": "double", "int64": "long",
                           "int32": "int", "uint8": "byte", "bool": "bool",
                           "complex64": "cfloat", "float16": "half"}[dtype])() is x
        assert x.type(x.dtype) is x and x.type_as(x) is x


def test_type_names():
    for dtype, name in [("float32", "FloatTensor"), ("float64", "DoubleTensor"),
                        ("int64", "LongTensor"), ("bool", "BoolTensor"), ("uint8", "ByteTensor"),
                        ("complex64", "ComplexFloatTensor"), ("bfloat16", "BFloat16Tensor")]:
        assert make(ts, (2,), dtype).type() == "tessera." + name
        assert make(torch, (2,), dtype).type() == "torch." + name
    assert make(ts, (2,), "uint16").type() == "tessera.uint16Tensor"


def test_type_as_and_is_same_size_errors_match_torch():
    for call in (lambda m: make(m, (2,)).type_as(3), lambda m: make(m, (2,)).is_same_size(3),
                 lambda m: make(m, (2,)).is_set_to("a"), lambda m: m.Tensor.float(3),
                 lambda m: make(m, (2,)).float("abc"), lambda m: m.Tensor.to(3, m.float64)):
        agree(call, exact_error=True)
    with pytest.raises(TypeError, match="type_as.*other.*must be Tensor, not int"):
        ts.ones(2).type_as(3)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("transposed", [False, True])
def test_queries_match_torch(shape, transposed):
    transposed = transposed and len(shape) >= 2
    for q in (lambda x: x.stride(), lambda x: x.element_size(), lambda x: x.nelement(),
              lambda x: x.ndimension(), lambda x: x.storage_offset(), lambda x: x.is_signed(),
              lambda x: x.get_device(), lambda x: x.dim_order(), lambda x: x.is_cuda,
              lambda x: x.is_cpu, lambda x: x.is_same_size(x), lambda x: x.is_set_to(x)):
        same_result(q(make(ts, shape, transposed=transposed)),
                    q(make(torch, shape, transposed=transposed)))
    for d in range(-len(shape), len(shape)):
        agree(lambda m: make(m, shape, transposed=transposed).stride(d))
    agree(lambda m: make(m, shape).stride(len(shape) + 1))


def test_queries_on_views_and_dtypes():
    for m in (torch, ts):
        x = make(m, (4, 6))
        v = x[1:, 2:]
        assert v.storage_offset() == 8 and v.stride(-1) == 1 and v.stride(0) == 6
        assert not v.is_set_to(x) and x.is_set_to(x) and not x.is_same_size(v)
        assert make(m, (2,), "uint8").is_signed() is False
        assert make(m, (2,), "int32").element_size() == 4
        if hasattr(x, "const_data_ptr"):  # torch 2.13 has it, older ones not
            assert x.const_data_ptr() == x.data_ptr()
        assert make(m, (2, 3, 4)).permute(2, 0, 1).dim_order() == (1, 2, 0)


def test_stride_errors_match_torch():
    for call in (lambda m: make(m, (2, 3)).stride(2), lambda m: make(m, ()).stride(0),
                 lambda m: make(m, (2, 3)).stride("a"), lambda m: make(m, (2, 3)).stride(1.0)):
        agree(call, exact_error=True)
    with pytest.raises(IndexError, match="stride"):
        ts.ones((2, 3)).stride(5)


@pytest.mark.parametrize("dtype", ["float64", "complex64", "int64", "bool"])
@pytest.mark.parametrize("shape", [(2, 3), (4, 2, 3), (0, 3), (2, 0, 3)])
def test_adjoint_mH_H_match_torch(dtype, shape):
    agree(lambda m: make(m, shape, dtype).adjoint())
    agree(lambda m: make(m, shape, dtype).mH)
    if len(shape) == 2:
        agree(lambda m: make(m, shape, dtype).H)
        agree(lambda m: make(m, shape, dtype, transposed=True).H)


def test_adjoint_gradients_and_errors():
    compare_grads(lambda t: t.mH * 3, lambda t: t.mH * 3, [randn(2, 3, 4)])
    compare_grads(lambda t: t.H.exp(), lambda t: t.H.exp(), [randn(3, 4)])
    compare_grads(lambda t: t.adjoint().sum(-1), lambda t: t.adjoint().sum(-1),
                  [randn(3, 4, dtype=np.complex128)])
    for call in (lambda m: make(m, (3,)).adjoint(), lambda m: make(m, (3,)).mH,
                 lambda m: make(m, (3,)).H, lambda m: make(m, (2, 3, 4)).H):
        agree(call)
    for call, op in ((lambda: ts.ones(3).adjoint(), "adjoint"), (lambda: ts.ones(3).mH, "mH"),
                     (lambda: ts.ones((2, 2, 2)).H, "H")):
        with pytest.raises(RuntimeError, match=f"^{op}: .*shape"):
            call()


def test_signatures_are_the_bindings():
    """The methods are C++ (one definition) with signatures help() shows."""
    for name in ("to", "type", "type_as", "stride", "element_size", "float", "adjoint", "cpu"):
        assert "builtin" in type(ts.Tensor.__dict__[name].__func__).__name__ or \
            type(ts.Tensor.__dict__[name]).__name__ == "instancemethod", name
    assert "memory_format" in ts.Tensor.to.__doc__
    assert "dim" in ts.Tensor.stride.__doc__


# ---- resize_ / resize_as_ / resize / resize_as / set_ / new (C++ methods)
def test_resize_keeps_storage_or_moves_like_torch():
    for m in (torch, ts):
        x = m.arange(6.0).clone()
        ptr = x.data_ptr()
        assert x.resize_(2, 2) is x and tuple(x.shape) == (2, 2) and x.data_ptr() == ptr
        assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        assert tuple(x.resize_((3,)).shape) == (3,) and x.stride() == (1,)
        g = m.arange(6.0).clone()  # (tolist exports x's storage to NumPy: no more growing)
        g.resize_(2, 5)  # larger than the storage: new memory holding the first elements
        assert tuple(g.shape) == (2, 5) and g.reshape(-1)[:6].tolist() == [0, 1, 2, 3, 4, 5]
        v = m.arange(10.0)[2:]  # from the view's offset
        assert v.resize_(2, 2).tolist() == [[2.0, 3.0], [4.0, 5.0]]
        assert v.storage_offset() == 2
        y = m.arange(4.0).reshape(2, 2).t()  # non-contiguous: row-major order of its storage
        assert y.resize_(4).tolist() == [0.0, 1.0, 2.0, 3.0]
        e = m.ones(0)
        assert tuple(e.resize_(0, 3).shape) == (0, 3)
        t = m.ones(3)
        assert t.resize_as_(m.ones(2, 2)) is t and tuple(t.shape) == (2, 2)
        r = m.arange(4.0)
        assert tuple(r.resize(2, 2).shape) == (2, 2) and tuple(r.shape) == (4,)
        assert tuple(r.resize_as(m.ones(1, 4)).shape) == (1, 4) and tuple(r.shape) == (4,)


def test_resize_errors_match_torch():
    for call in (lambda m: m.ones(3).resize_("a"), lambda m: m.ones(3).resize_(2.0),
                 lambda m: m.ones(3).resize_as_(3), lambda m: m.ones(3).resize_(-1),
                 lambda m: m.ones(3, requires_grad=True).resize_(2)):
        agree(call)
    with pytest.raises(RuntimeError, match="^resize_: .*negative dimension"):
        ts.ones(3).resize_(2, -1)
    with pytest.raises(RuntimeError, match="^resize_: a leaf Variable"):
        ts.ones(3, requires_grad=True).resize_(2)
    with pytest.raises(RuntimeError, match="^resize_: Trying to resize storage that is not"):
        ts.from_numpy(np.ones(3, np.float32)).resize_(5)
    with ts.no_grad():
        w = ts.ones(3, requires_grad=True)
        assert tuple(w.resize_(2).shape) == (2,)


def test_set_forms_match_torch():
    for m in (torch, ts):
        b = m.arange(10.0)
        s = m.ones(3)
        assert s.set_(b, 2, (2, 2), (3, 1)) is s
        assert s.tolist() == [[2.0, 3.0], [5.0, 6.0]] and s.storage_offset() == 2
        assert s.set_(b, 1, (3,)).tolist() == [1.0, 2.0, 3.0]
        t = m.ones(2, 2)
        t.set_(b)
        assert t.is_set_to(b) and t.data_ptr() == b.data_ptr()
        assert tuple(m.ones(2).set_().shape) == (0,)
    agree(lambda m: m.ones(3).set_(m.ones(2, dtype=m.int64)))
    agree(lambda m: m.ones(3).set_(3))
    with pytest.raises(RuntimeError, match="^set_: Expected object of scalar type float32"):
        ts.ones(3).set_(ts.ones(2, dtype=ts.int64))


def test_new_forms_match_torch():
    for m in (torch, ts):
        z = m.ones((2, 3), dtype=m.float64)
        assert tuple(z.new().shape) == (0,) and z.new().dtype == m.float64
        assert tuple(z.new(2, 3).shape) == (2, 3) and z.new(2, 3).dtype == m.float64
        assert tuple(z.new(m.ones(4, 5).size()).shape) == (4, 5)  # a Size is a shape
        assert z.new([1, 2]).tolist() == [1.0, 2.0] and z.new([1, 2]).dtype == m.float64
        assert z.new((4, 5)).tolist() == [4.0, 5.0]  # a tuple is data, as in torch
        assert z.new(3, device="cpu").shape[0] == 3
    agree(lambda m: m.ones(2).new(2, -1))


def test_data_property_matches_torch():
    for m in (torch, ts):
        x = m.ones(2, requires_grad=True)
        d = x.data
        assert not d.requires_grad and d.data_ptr() == x.data_ptr()
        x.data = m.zeros(3, 2)  # takes the shape and storage, keeps identity and requires_grad
        assert tuple(x.shape) == (3, 2) and x.requires_grad and x.size(0) == 3
        x.data = m.zeros(2, dtype=m.float64)
        assert x.dtype == m.float64
    for call in (lambda m: setattr(m.ones(2, requires_grad=True), "data", 3),
                 lambda m: setattr(m.ones(2, requires_grad=True), "data", m.ones(2, dtype=m.int64))):
        agree(call, exact_error=True)
    with pytest.raises(RuntimeError, match="^data: .*floating point or complex dtype, got int64"):
        ts.ones(2, requires_grad=True).data = ts.ones(2, dtype=ts.int64)
    y = ts.ones(2, dtype=ts.int64)
    y.data = ts.ones(2, dtype=ts.int32)  # no requires_grad: any dtype
    assert y.dtype == ts.int32


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int64", "bool"])
def test_conj_physical_matches_torch(dtype):
    agree(lambda m: make(m, (2, 3), dtype, transposed=True).conj_physical())
    agree(lambda m: m.conj_physical(make(m, (0, 3), dtype)))
    for m in (torch, ts):
        x = make(m, (2, 3), dtype)
        same = x.conj_physical().data_ptr() == x.data_ptr()
        assert same == (dtype != "complex64")  # a real tensor is returned as it is
    compare_grads(lambda t: t.conj_physical() * 2, lambda t: t.conj_physical() * 2,
                  [randn(2, 3, dtype=np.complex128)])
    agree(lambda m: m.conj_physical(3), exact_error=True)


@pytest.mark.skipif(not ts.cuda.is_available(), reason="needs a CUDA device")
def test_device_moves_are_differentiable_on_cuda():
    x = ts.asarray(randn(3, 4).astype(np.float64), requires_grad=True)
    y = x.cuda()
    assert y.is_cuda and y.get_device() == 0 and y.grad_fn.name() == "ToCopyBackward0"
    assert y.cuda() is y and y.to("cuda:0") is y
    z = y.to("cpu", ts.float32) * 3
    (z.sum() + (y * y).sum().cpu()).backward()
    assert x.grad.device.type == "cpu"
    np.testing.assert_allclose(x.grad.numpy(), 3 + 2 * x.detach().numpy(), rtol=1e-6)
    g, = ts.autograd.grad(x.to("cuda").sum(), x, create_graph=True)  # double backward records
    assert g.device.type == "cpu" and float(g.sum()) == 12.0
    w = ts.ones(2).to(ts.ones(1).cuda())
    assert w.is_cuda and w.type() == "tessera.cuda.FloatTensor"
    assert ts.ones(2).cuda(0, non_blocking=True).is_cuda
