"""The namespace's matrix products (csrc/ops/matmul_products.cpp, bound in
csrc/python/bind_matmul.cpp) against PyTorch: values and dtypes over contiguous, strided, empty
and 0-d inputs, float64 gradients, errors (class and the op's name) and the argument forms
(keyword-only beta=/alpha=, out=, tensordot's dims/axes, vecdot's dim=/axis=)."""
import inspect

import numpy as np
import pytest
import torch

import tessera as ts
from harness import compare_grads, randn, same_result


def lift(m, a, strided):
    """`a` as a tensor of module m; with `strided`, a non-contiguous view of the same values."""
    if not strided or a.ndim == 0:
        return m.asarray(a.copy()) if m is ts else torch.from_numpy(a.copy())
    if a.ndim == 1:
        t = np.repeat(a, 2)
        return (ts.asarray(t) if m is ts else torch.from_numpy(t))[::2]
    t = np.ascontiguousarray(a.swapaxes(-1, -2))
    return (ts.asarray(t) if m is ts else torch.from_numpy(t)).mT


# name, fn(module, *tensors), input shapes
CASES = [
    ("mm", lambda m, a, b: m.mm(a, b), [(4, 3), (3, 5)]),
    ("mm method", lambda m, a, b: a.mm(b), [(2, 3), (3, 1)]),
    ("bmm", lambda m, a, b: m.bmm(a, b), [(2, 4, 3), (2, 3, 5)]),
    ("mv", lambda m, a, v: m.mv(a, v), [(4, 3), (3,)]),
    ("dot", lambda m, a, b: m.dot(a, b), [(5,), (5,)]),
    ("vdot", lambda m, a, b: a.vdot(b), [(5,), (5,)]),
    ("inner", lambda m, a, b: m.inner(a, b), [(2, 3, 4), (5, 4)]),
    ("inner 0-d", lambda m, a, b: m.inner(a, b), [(), (3, 2)]),
    ("outer", lambda m, a, b: m.outer(a, b), [(4,), (3,)]),
    ("ger", lambda m, a, b: a.ger(b), [(2,), (3,)]),
    ("kron", lambda m, a, b: m.kron(a, b), [(2, 3), (3, 2)]),
    ("kron ranks", lambda m, a, b: a.kron(b), [(2, 1, 3), (4, 2)]),
    ("kron 0-d", lambda m, a, b: m.kron(a, b), [(), (2, 3)]),
    ("tensordot", lambda m, a, b: m.tensordot(a, b, dims=([1, 0], [0, 2])), [(3, 4, 2), (4, 5, 3)]),
    ("tensordot 1", lambda m, a, b: m.tensordot(a, b, 1), [(3, 4), (4, 2)]),
    ("vecdot", lambda m, a, b: (m.linalg.vecdot if m is torch else m.vecdot)(a, b, dim=0),
     [(4, 3), (4, 1)]),
    ("addmm", lambda m, x, a, b: m.addmm(x, a, b, beta=0.5, alpha=2), [(4, 5), (4, 3), (3, 5)]),
    ("addmm bcast", lambda m, x, a, b: x.addmm(a, b, alpha=-1), [(5,), (4, 3), (3, 5)]),
    ("addmv", lambda m, x, a, v: m.addmv(x, a, v, beta=2), [(4,), (4, 3), (3,)]),
    ("addr", lambda m, x, a, b: m.addr(x, a, b, beta=0.25, alpha=3), [(4, 3), (4,), (3,)]),
    ("baddbmm", lambda m, x, a, b: m.baddbmm(x, a, b, alpha=0.5),
     [(2, 4, 5), (2, 4, 3), (2, 3, 5)]),
    ("addbmm", lambda m, x, a, b: m.addbmm(x, a, b, beta=-1), [(4, 5), (3, 4, 2), (3, 2, 5)]),
    ("cdist", lambda m, a, b: m.cdist(a, b), [(4, 3), (5, 3)]),
    ("cdist p=1", lambda m, a, b: m.cdist(a, b, p=1.0), [(2, 4, 3), (2, 5, 3)]),
    ("chain_matmul", lambda m, a, b, c: m.chain_matmul(a, b, c), [(2, 3), (3, 4), (4, 2)]),
]
INT_OK = {"mm", "mm method", "bmm", "mv", "dot", "inner", "inner 0-d", "outer", "ger", "kron",
          "kron ranks", "kron 0-d", "addmm bcast", "addmv", "addbmm",
          "chain_matmul", "tensordot", "tensordot 1", "vdot"}
# (torch casts a float beta/alpha to an integer input's dtype, or raises; tessera promotes to
# the default float as before: those cases are compared in floating dtypes only. torch's
# linalg.vecdot has no integer form; tessera's, as the standard's, has.)
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64"])
@pytest.mark.parametrize("name,fn,shapes", CASES, ids=IDS)
def test_values_match_torch(name, fn, shapes, dtype, strided):
    if dtype == "int64" and name not in INT_OK:
        pytest.skip("torch has no integer form")
    if dtype == "complex64" and name.startswith("cdist"):
        pytest.skip("torch's cdist is real only")
    arrays = [np.asarray(randn(*s, dtype=np.float64)) for s in shapes]
    if dtype == "int64":
        arrays = [np.asarray(np.round(a * 3)).astype(np.int64) for a in arrays]
    elif dtype == "complex64":
        arrays = [np.asarray(a + 1j * randn(*a.shape, dtype=np.float64)).astype(np.complex64)
                  for a in arrays]
    else:
        arrays = [a.astype(dtype) for a in arrays]
    want = fn(torch, *[lift(torch, a, False) for a in arrays])  # (torch's kron refuses some views)
    got = fn(ts, *[lift(ts, a, strided) for a in arrays])
    tol = 1e-12 if dtype == "float64" else 1e-5
    same_result(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("fn,shapes", [
    (lambda m, a, b: m.mm(a, b), [(0, 3), (3, 2)]),
    (lambda m, a, b: m.mm(a, b), [(2, 0), (0, 3)]),  # an empty sum: zeros
    (lambda m, a, b: m.bmm(a, b), [(0, 2, 3), (0, 3, 4)]),
    (lambda m, a, b: m.dot(a, b), [(0,), (0,)]),
    (lambda m, a, b: m.outer(a, b), [(0,), (3,)]),
    (lambda m, a, b: m.kron(a, b), [(0, 2), (3, 2)]),
    (lambda m, a, b: m.inner(a, b), [(2, 0), (3, 0)]),
    (lambda m, x, a, b: m.addbmm(x, a, b), [(2, 3), (0, 2, 4), (0, 4, 3)]),
    (lambda m, x, a, b: m.addmm(x, a, b, beta=2), [(2, 3), (2, 0), (0, 3)]),
    (lambda m, a, b: m.cdist(a, b), [(0, 3), (2, 3)]),
    (lambda m, a, b: m.tensordot(a, b, 0), [(2,), (0, 3)]),
])
def test_empty_inputs(fn, shapes):
    arrays = [np.asarray(randn(*s)) for s in shapes]
    same_result(fn(ts, *[ts.asarray(a) for a in arrays]),
                fn(torch, *[torch.from_numpy(a) for a in arrays]))


def test_dtypes_promote_where_torch_does():
    f = randn(3)
    d = f.astype(np.float64)
    i = np.arange(3, dtype=np.int64)
    for fn in (lambda m, a, b: m.outer(a, b), lambda m, a, b: m.kron(a, b)):
        for a, b in ((f, d), (f, i), (i, d)):
            same_result(fn(ts, ts.asarray(a), ts.asarray(b)),
                        fn(torch, torch.from_numpy(a), torch.from_numpy(b)))


@pytest.mark.parametrize("name,fn,shapes", CASES, ids=IDS)
def test_gradients_match_torch(name, fn, shapes):
    arrays = [np.asarray(randn(*s, dtype=np.float64) + 0.1) for s in shapes]
    compare_grads(lambda *xs: fn(ts, *xs), lambda *ys: fn(torch, *ys), arrays)


@pytest.mark.parametrize("fn,shapes", [
    (lambda x, a, b: ts.addmm(x, a, b, beta=0.5, alpha=2), [(3, 4), (3, 2), (2, 4)]),
    (lambda x, a, b: ts.addbmm(x, a, b), [(3, 4), (2, 3, 2), (2, 2, 4)]),
    (lambda a, b: ts.kron(a, b), [(2, 2), (3, 1)]),
    (lambda a, b: ts.cdist(a, b), [(3, 2), (2, 2)]),
    (lambda a, b: ts.vdot(a, b), [(3,), (3,)]),
])
def test_gradcheck_and_double_backward(fn, shapes):
    xs = [ts.asarray(randn(*s, dtype=np.float64) + 0.1, requires_grad=True) for s in shapes]
    assert ts.testing.gradcheck(fn, xs)
    # (addmm's input enters linearly: its gradient is constant, so the second order is taken
    # over the product's operands)
    if len(xs) == 3:
        xs[0] = xs[0].detach()
    assert ts.testing.gradgradcheck(fn, xs)


def test_beta_zero_ignores_input_but_gives_it_a_zero_gradient():
    nan = np.full((2, 2), np.nan, np.float64)
    a = randn(2, 3, dtype=np.float64)
    b = randn(3, 2, dtype=np.float64)
    x = ts.asarray(nan, requires_grad=True)
    y = torch.tensor(nan, requires_grad=True)
    got = ts.addmm(x, ts.asarray(a), ts.asarray(b), beta=0)
    want = torch.addmm(y, torch.from_numpy(a), torch.from_numpy(b), beta=0)
    same_result(got, want)
    got.sum().backward()
    want.sum().backward()
    same_result(x.grad, y.grad)
    # without autograd the input is still checked against the product's shape
    with pytest.raises(ValueError, match="addmm: "):
        ts.addmm(ts.ones((3, 3)), ts.asarray(a), ts.asarray(b), beta=0)


def test_argument_forms():
    a, b = randn(2, 3), randn(3, 4)
    A, B = ts.asarray(a), ts.asarray(b)
    TA, TB = torch.from_numpy(a), torch.from_numpy(b)
    x = np.ones((2, 4), np.float32)
    # beta=/alpha= are keyword-only (as torch); a one-element tensor is a number
    same_result(ts.addmm(ts.asarray(x), A, B, beta=ts.asarray(0.5), alpha=ts.asarray([2.0])),
                torch.addmm(torch.from_numpy(x), TA, TB, beta=0.5, alpha=2.0))
    with pytest.raises(TypeError):
        ts.addmm(ts.asarray(x), A, B, 0.5)
    with pytest.raises(TypeError, match="addmm: beta must be a number"):
        ts.addmm(ts.asarray(x), A, B, beta="half")
    # out= writes the result into the given tensor and returns it
    out = ts.empty((2, 4))
    assert ts.mm(A, B, out=out) is out
    same_result(out, torch.mm(TA, TB))
    out2 = ts.empty((2, 4))
    assert ts.addmm(ts.asarray(x), A, B, alpha=2, out=out2) is out2
    same_result(out2, torch.addmm(torch.from_numpy(x), TA, TB, alpha=2))
    # keyword names are torch's
    same_result(ts.mm(input=A, mat2=B), torch.mm(input=TA, mat2=TB))
    same_result(ts.addmm(input=ts.asarray(x), mat1=A, mat2=B),
                torch.addmm(input=torch.from_numpy(x), mat1=TA, mat2=TB))
    # tensordot: the standard's axes= and torch's dims (positional, keyword, tensor)
    for dims in (1, ([1], [0]), (1, 0), ts.asarray(1)):
        same_result(ts.tensordot(A, B, dims), torch.tensordot(TA, TB, 1))
        same_result(ts.tensordot(A, B, axes=dims), torch.tensordot(TA, TB, 1))
    with pytest.raises(TypeError, match="tensordot"):
        ts.tensordot(A, B, 1, axes=1)
    with pytest.raises(TypeError, match="tensordot: axes must be"):
        ts.tensordot(A, B, "1")
    # vecdot: axis= (negative) and torch's dim= (either sign)
    c = randn(3, 4)
    same_result(ts.vecdot(ts.asarray(c), ts.asarray(c), axis=-2),
                torch.linalg.vecdot(torch.from_numpy(c), torch.from_numpy(c), dim=0))
    with pytest.raises(TypeError, match="vecdot"):
        ts.vecdot(ts.asarray(c), ts.asarray(c), axis=-2, dim=0)
    same_result(ts.matrix_transpose(A), TA.mT)


def test_one_function_per_name_with_signatures():
    for name in ("mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "kron", "addmm",
                 "addmv", "addr", "baddbmm", "addbmm"):
        assert getattr(ts.Tensor, name) is getattr(ts, name), name
        assert getattr(ts, name) is getattr(ts._C, name), name
    for name in ("tensordot", "vecdot", "matrix_transpose", "cdist", "chain_matmul"):
        assert getattr(ts, name) is getattr(ts._C, name), name
    assert ts.linalg.vecdot is ts.vecdot and ts.linalg.tensordot is ts.tensordot
    assert str(inspect.signature(ts.addmm)) == "(input, mat1, mat2, *, beta=1, alpha=1, out=None)"
    assert str(inspect.signature(ts.tensordot)) == "(x1, x2, /, dims=None, *, axes=None, out=None)"
    assert str(inspect.signature(ts.vecdot)) == "(x1, x2, /, *, axis=-1, dim=None, out=None)"
    assert "Kronecker" in ts.kron.__doc__


def test_inplace_twins_match_torch():
    x, a, b = randn(4, 5), randn(4, 3), randn(3, 5)
    t, tt_ = ts.asarray(x.copy()), torch.from_numpy(x.copy())
    assert t.addmm_(ts.asarray(a), ts.asarray(b), beta=0.5) is t
    tt_.addmm_(torch.from_numpy(a), torch.from_numpy(b), beta=0.5)
    same_result(t, tt_)


ERRORS = [
    # (fn, shapes / dtypes, the op named in tessera's message)
    (lambda m, a, b: m.mm(a, b), [((2, 3), "float32"), ((2, 3), "float32")], "mm"),
    (lambda m, a, b: m.mm(a, b), [((2, 3), "float32"), ((3,), "float32")], "mm"),
    (lambda m, a, b: m.mm(a, b), [((2, 3), "float32"), ((3, 2), "float64")], "mm"),
    (lambda m, a, b: m.bmm(a, b), [((2, 2, 3), "float32"), ((3, 3, 2), "float32")], "bmm"),
    (lambda m, a, b: m.mv(a, b), [((2, 3), "float32"), ((2,), "float32")], "mv"),
    (lambda m, a, b: m.dot(a, b), [((3,), "float32"), ((2,), "float32")], "dot"),
    (lambda m, a, b: m.dot(a, b), [((3,), "float32"), ((3,), "int64")], "dot"),
    (lambda m, a, b: m.vdot(a, b), [((3,), "float32"), ((3,), "float64")], "vdot"),
    (lambda m, a, b: m.outer(a, b), [((3, 1), "float32"), ((3,), "float32")], "outer"),
    (lambda m, a, b: m.inner(a, b), [((3, 2), "float32"), ((3,), "float32")], "inner"),
    (lambda m, x, a, b: m.addmm(x, a, b), [((5, 5), "float32"), ((2, 2), "float32"),
                                            ((2, 2), "float32")], "addmm"),
    (lambda m, x, a, b: m.addmm(x, a, b), [((2,), "float32"), ((2, 3), "float32"),
                                            ((2, 2), "float32")], "addmm"),
    (lambda m, x, a, b: m.addmm(x, a, b), [((2, 2, 2), "float32"), ((2, 2), "float32"),
                                            ((2, 2), "float32")], "addmm"),
    (lambda m, x, a, b: m.addmv(x, a, b), [((2,), "float32"), ((2, 3), "float32"),
                                            ((2,), "float32")], "addmv"),
    (lambda m, x, a, b: m.baddbmm(x, a, b), [((2, 2, 2), "float32"), ((2, 2, 3), "float32"),
                                              ((3, 3, 2), "float32")], "baddbmm"),
    (lambda m, x, a, b: m.addbmm(x, a, b), [((2, 2), "float32"), ((2, 2, 3), "float32"),
                                             ((2, 2, 2), "float32")], "addbmm"),
    (lambda m, a, b: m.cdist(a, b), [((3, 2), "float32"), ((3, 3), "float32")], "cdist"),
    (lambda m, a, b: m.cdist(a, b), [((3,), "float32"), ((3,), "float32")], "cdist"),
    (lambda m, a, b: m.cdist(a, b, p=-1.0), [((3, 2), "float32"), ((3, 2), "float32")], "cdist"),
    (lambda m, a, b: m.chain_matmul(a, b), [((3,), "float32"), ((3, 2), "float32")],
     "chain_matmul"),
    (lambda m, a, b: m.tensordot(a, b, 3), [((3, 2), "float32"), ((3, 2), "float32")],
     "tensordot"),
]


@pytest.mark.parametrize("fn,specs,op", ERRORS)
def test_errors_are_torchs_class_and_name_the_op(fn, specs, op):
    arrays = [randn(*s).astype(d) for s, d in specs]
    with pytest.raises(Exception) as want:
        fn(torch, *[torch.from_numpy(a) for a in arrays])
    with pytest.raises(Exception) as got:
        fn(ts, *[ts.asarray(a) for a in arrays])
    assert isinstance(got.value, type(want.value)), (want.value, got.value)
    assert str(got.value).startswith(op + ":"), got.value


@pytest.mark.parametrize("call", [
    lambda m, a: m.mm(a, 3), lambda m, a: m.addmm(a, a, [[1.0]]), lambda m, a: m.kron(a, 2),
    lambda m, a: m.outer(a[0], None), lambda m, a: m.cdist(a, "x"),
])
def test_non_tensor_operands_are_type_errors(call):
    a = np.ones((2, 2), np.float32)
    with pytest.raises(TypeError):
        call(torch, torch.from_numpy(a))
    with pytest.raises(TypeError):
        call(ts, ts.asarray(a))


# ---- PyTorch's spellings over the linalg ops (def_torch_linalg in bind_matmul.cpp)
def spd(n, dtype=np.float64, batch=()):
    a = np.asarray(randn(*batch, n, n, dtype=np.float64))
    return (a @ a.swapaxes(-1, -2) + n * np.eye(n)).astype(dtype)


LINALG_CASES = [
    ("det", lambda m, a: m.det(a)),
    ("det method", lambda m, a: a.det()),
    ("logdet", lambda m, a: m.logdet(a)),
    ("logdet negative", lambda m, a: m.logdet(-a[..., :3, :3])),
    ("inverse", lambda m, a: a.inverse()),
    ("pinverse", lambda m, a: m.pinverse(a[..., :3], rcond=1e-10)),
    ("matrix_power", lambda m, a: a.matrix_power(-2)),
    ("slogdet", lambda m, a: m.slogdet(a)),
    ("cholesky", lambda m, a: m.cholesky(a)),
    ("cholesky upper", lambda m, a: a.cholesky(upper=True)),
    ("cholesky_inverse", lambda m, a: m.cholesky_inverse(m.linalg.cholesky(a))),
    ("cholesky_inverse upper", lambda m, a: m.cholesky_inverse(m.linalg.cholesky(a).mT, True)),
    ("cholesky_solve", lambda m, a: m.cholesky_solve(a[..., :2], m.linalg.cholesky(a))),
    ("cholesky_solve upper",
     lambda m, a: a[..., :2].cholesky_solve(m.linalg.cholesky(a).mT, upper=True)),
    ("svd values", lambda m, a: m.svd(a)[1]),
    ("svd compute_uv=False", lambda m, a: m.svd(a[..., :3], compute_uv=False)),
    ("svd product", lambda m, a: (lambda r: r.U @ m.diag_embed(r.S) @ r.V.mT)(m.svd(a[..., :3]))),
    ("svd some=False", lambda m, a: [t.shape for t in m.svd(a[..., :3], some=False)]),
    ("qr R", lambda m, a: m.qr(a[..., :3]).R.abs()),
    ("qr some=False", lambda m, a: [t.shape for t in a[..., :3].qr(some=False)]),
]


@pytest.mark.parametrize("batch", [(), (2,)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn", LINALG_CASES, ids=[c[0] for c in LINALG_CASES])
def test_linalg_spellings_match_torch(name, fn, dtype, batch):
    a = spd(4, dtype, batch)
    tol = 1e-9 if dtype == "float64" else 2e-4
    got, want = fn(ts, ts.asarray(a)), fn(torch, torch.from_numpy(a))
    if name.startswith(("svd some", "qr some")):
        assert [tuple(s) for s in got] == [tuple(s) for s in want]
        return
    if name == "svd compute_uv=False":
        assert type(got).__name__ == "svd" and got._fields == ("U", "S", "V")
    same_result(got, want, rtol=tol, atol=tol)


def test_complex_logdet_and_named_tuples():
    a = spd(3).astype(np.complex128) * np.exp(0.3j)
    same_result(ts.logdet(ts.asarray(a)), torch.logdet(torch.from_numpy(a)))
    s = ts.zeros((2, 2), dtype=ts.complex128)
    same_result(ts.logdet(s), torch.logdet(torch.zeros(2, 2, dtype=torch.complex128)))
    r = ts.slogdet(ts.asarray(spd(3)))
    assert r._fields == ("sign", "logabsdet") and type(r).__name__ == "slogdet"
    assert ts.qr(ts.asarray(spd(3)))._fields == ("Q", "R")


@pytest.mark.parametrize("name,fn", [c for c in LINALG_CASES if "some" not in c[0]
                                     and c[0] not in ("svd compute_uv=False", "qr R")],
                         ids=[c[0] for c in LINALG_CASES if "some" not in c[0]
                              and c[0] not in ("svd compute_uv=False", "qr R")])
def test_linalg_spelling_gradients_match_torch(name, fn):
    compare_grads(lambda x: fn(ts, x), lambda y: fn(torch, y), [spd(4)], rtol=1e-7)


def test_linalg_spellings_are_one_function_each():
    for name in ("det", "logdet", "inverse", "slogdet", "pinverse", "matrix_power", "cholesky",
                 "cholesky_inverse", "cholesky_solve", "svd", "qr"):
        assert getattr(ts.Tensor, name) is getattr(ts, name) is getattr(ts._C, name), name
    assert str(inspect.signature(ts.svd)) == "(input, some=True, compute_uv=True)"
    assert str(inspect.signature(ts.pinverse)) == "(input, rcond=1e-15)"


@pytest.mark.parametrize("call", [
    lambda m: m.det(m.ones((2, 3))), lambda m: m.inverse(m.ones(3)),
    lambda m: m.cholesky(-m.eye(2)), lambda m: m.svd([[1.0]]), lambda m: m.det(None),
    lambda m: m.matrix_power(m.eye(2), 1.5), lambda m: m.cholesky_solve(m.eye(2), "L"),
])
def test_linalg_spelling_errors_are_torchs_class(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(Exception) as got:
        call(ts)
    # (torch's LinAlgError is its own class: its builtin base, RuntimeError, is what must match)
    base = next(c for c in type(want.value).__mro__ if c.__module__ == "builtins")
    assert isinstance(got.value, base), (want.value, got.value)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool", "complex64"])
@pytest.mark.parametrize("N,inc", [(None, False), (0, True), (1, False), (4, True), (3, False)])
def test_vander_matches_torch(dtype, N, inc):
    a = np.asarray(randn(10) * 2).astype(dtype) if dtype != "bool" else randn(10) > 0
    got = ts.vander(ts.asarray(a)[::2], N, inc)  # a strided 1-D view
    want = torch.vander(torch.from_numpy(a)[::2], N, inc)
    same_result(got, want)


def test_vander_gradient_and_errors():
    # (torch's own vander backward fails on its in-place cumprod: finite differences instead)
    x = ts.asarray(randn(3, dtype=np.float64) + 0.5, requires_grad=True)
    assert ts.testing.gradcheck(lambda t: ts.vander(t, 4), [x])
    assert ts.testing.gradcheck(lambda t: ts.vander(t, 3, True), [x])
    assert str(inspect.signature(ts.vander)) == "(x, N=None, increasing=False)"
    for call in (lambda m: m.vander(m.ones((2, 2))), lambda m: m.vander(m.ones(3), -1),
                 lambda m: m.vander(m.ones(3), 2, 1), lambda m: m.vander([1.0, 2.0])):
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)) as got:
            call(ts)
        assert "vander" in str(got.value)
