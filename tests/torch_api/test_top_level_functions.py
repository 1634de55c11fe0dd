"""torch top-level functions and Tensor methods that tessera adds for parity, checked against
torch 2.13 (values, dtypes, shapes, exception types and, for assert_close, messages)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest
import torch

import tessera as ts
from harness import same_result


def _raised(fn: Callable[[], Any]) -> Any:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e), str(e)
    return None


def _conv(x: Any, lib: Any) -> Any:
    """A nested structure of NumPy arrays as `lib`'s tensors."""
    if isinstance(x, np.ndarray):
        return ts.asarray(x) if lib is ts else torch.from_numpy(x)
    if isinstance(x, list):
        return [_conv(v, lib) for v in x]
    if isinstance(x, tuple):
        return tuple(_conv(v, lib) for v in x)
    if isinstance(x, dict):
        return {k: _conv(v, lib) for k, v in x.items()}
    return x


f32, f64, i64 = np.float32, np.float64, np.int64
A = np.array
CLOSE_CASES = [
    (A([1., 2., 3.], f32), A([1., 2.5, 3.], f32), {}),
    (A([1., 2.], f32), A([1., 2., 3.], f32), {}),
    (A([1., 2.], f32), A([1., 2.], f64), {}),
    (A([1., 2.], f32), A([1., 2.], f64), {"check_dtype": False}),
    (A(1., f32), 1.0, {}),
    (1.0, 1.0 + 1e-9, {}),
    (1, 1.0, {}),
    (1.0, 2.0, {}),
    ([A(1., f32)], (A(1., f32),), {}),
    ({"a": A(1., f32)}, {"a": A(2., f32)}, {}),
    ([A([1.], f32), A([2.], f32)], [A([1.], f32), A([3.], f32)], {}),
    ([1, 2], [1, 2, 3], {}),
    (A([np.nan], f32), A([np.nan], f32), {}),
    (A([np.nan], f32), A([np.nan], f32), {"equal_nan": True}),
    (A([1, 2], i64), A([1, 3], i64), {}),
    (A([1.], f32), A([1.1], f32), {"rtol": 0.2}),
    (A([1.], f32), A([1.1], f32), {"rtol": 0.2, "atol": 0}),
    (A([1.], f32), A([1.1], f32), {"msg": "custom"}),
    (A([1.], f32), A([1.1], f32), {"msg": lambda m: "pre " + m}),
    (A([True]), A([False]), {}),
    (A([[1., 2.], [3., 4.]], f32), A([[1., 2.], [3., 5.]], f32), {}),
    (A([[1., 2.], [3., 4.]], f64), A([[1., 2.], [3., 4. + 1e-9]], f64), {}),
    (A(1., f32), A(2., f32), {}),
    (None, None, {}),
    (None, 1, {}),
    ("a", "a", {}),
    (True, False, {}),
    (A([1.], f32), A([1.], f32), {"rtol": 1e-3, "atol": 1e-3}),
    (A([0., 1.], f32), A([1e-6, 1.], f32), {}),
    (A([], f32), A([], f32), {}),
    (A([1 + 1j], np.complex64), A([1 + 2j], np.complex64), {}),
]


@pytest.mark.parametrize("case", range(len(CLOSE_CASES)))
def test_assert_close_matches_torch(case: int) -> None:
    a, e, kw = CLOSE_CASES[case]
    want = _raised(lambda: torch.testing.assert_close(_conv(a, torch), _conv(e, torch), **kw))
    got = _raised(lambda: ts.testing.assert_close(_conv(a, ts), _conv(e, ts), **kw))
    if want is None:
        assert got is None
    else:
        assert got is not None and got[0] is want[0]
        if want[0] is AssertionError:
            # Shapes and dtypes print as torch.Size / torch.float32 there: compare up to ':'.
            if "do not match:" in want[1]:
                assert got[1].split(":")[0] == want[1].split(":")[0]
            else:
                assert got[1] == want[1]


def test_assert_close_message_details() -> None:
    with pytest.raises(AssertionError) as info:
        ts.testing.assert_close(ts.asarray([1., 2., 3.]), ts.asarray([1., 2.5, 3.]))
    assert str(info.value) == ("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 "
                               "(33.3%)\nGreatest absolute difference: 0.5 at index (1,) (up to "
                               "1e-05 allowed)\nGreatest relative difference: 0.20000000298023224"
                               " at index (1,) (up to 1.3e-06 allowed)")
    with pytest.raises(AssertionError, match=r"The failure occurred for item \['a'\]"):
        ts.testing.assert_close({"a": 1.0}, {"a": 2.0})
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        ts.testing.assert_close(ts.ones(1), ts.ones(1), atol=1.0)
    ts.testing.assert_close(ts.ones(2), np.ones(2, np.float32))
    ts.testing.assert_allclose(ts.ones(2), np.ones(2))


# ----------------------------------------------------------------------------- functions
def both(fn: Callable[[Any, Callable[[np.ndarray], Any]], Any], **tol: Any) -> None:
    """Runs fn(lib, to_tensor) with tessera and torch; compares results or exception types."""
    def run(lib: Any) -> Any:
        conv = (lambda a: ts.asarray(a)) if lib is ts else (lambda a: torch.from_numpy(np.array(a)))
        try:
            return False, fn(lib, conv)
        except Exception as e:  # noqa: BLE001
            return True, type(e)
    (terr, tval), (serr, sval) = run(torch), run(ts)
    assert terr == serr, (tval, sval)
    if terr:
        assert sval is tval or issubclass(sval, tval) or issubclass(tval, sval), (sval, tval)
    else:
        same_result(sval, tval, **tol)


rng = np.random.default_rng(0)
V = rng.standard_normal(5)
M = rng.standard_normal((3, 4))
I = np.array([3, 1, 4, 1, 5])


@pytest.mark.parametrize("r,rep", [(2, False), (3, False), (2, True), (0, False), (6, False)])
@pytest.mark.parametrize("data", [V, I, np.array([], np.float64)])
def test_combinations(data: np.ndarray, r: int, rep: bool) -> None:
    both(lambda lib, t: lib.combinations(t(data), r, with_replacement=rep))


def test_combinations_errors() -> None:
    both(lambda lib, t: lib.combinations(t(M)))
    both(lambda lib, t: lib.combinations(t(V), -1))


@pytest.mark.parametrize("fn", ["trapezoid", "trapz", "cumulative_trapezoid"])
@pytest.mark.parametrize("data,kw", [(V, {}), (M, {"dim": 0}), (M, {"dx": 0.5}),
                                     (I, {}), (M, {"dim": 1}), (np.ones((2, 1)), {}),
                                     (np.ones((0, 3)), {"dim": 0})])
def test_trapezoid(fn: str, data: np.ndarray, kw: dict) -> None:
    both(lambda lib, t: getattr(lib, fn)(t(data), **kw))


@pytest.mark.parametrize("fn", ["trapezoid", "cumulative_trapezoid"])
def test_trapezoid_with_x(fn: str) -> None:
    x = np.sort(rng.standard_normal(4))
    both(lambda lib, t: getattr(lib, fn)(t(M), t(x)))
    x5 = np.sort(rng.standard_normal(5))
    both(lambda lib, t: getattr(lib, fn)(t(V), t(x5)))
    both(lambda lib, t: getattr(lib, fn)(t(M), t(np.cumsum(np.ones((3, 4)), 1)), dim=1))
    both(lambda lib, t: getattr(lib, fn)(t(M), t(np.ones(3))))


@pytest.mark.parametrize("data", [V, I, np.array([True, False]), np.array([], np.float32)])
@pytest.mark.parametrize("N,inc", [(None, False), (3, True), (0, False), (1, True)])
def test_vander(data: np.ndarray, N: Any, inc: bool) -> None:
    both(lambda lib, t: lib.vander(t(data), N, inc), rtol=1e-6)


def test_vander_errors() -> None:
    both(lambda lib, t: lib.vander(t(M)))
    both(lambda lib, t: lib.vander(t(V), -1))


@pytest.mark.parametrize("idx,shape", [(np.array([0, 5, 11]), (3, 4)), (np.array(7), (2, 2, 2)),
                                       (np.array([[1, 2], [3, 0]]), (2, 2)),
                                       (np.array([-1, -12]), (3, 4)), (np.array([12]), (3, 4)),
                                       (np.array([1.0]), (3,)), (np.array([3]), 5)])
def test_unravel_index(idx: np.ndarray, shape: Any) -> None:
    both(lambda lib, t: lib.unravel_index(t(idx), shape))


def test_complex_polar_view_as_real() -> None:
    re, im = rng.standard_normal(4), rng.standard_normal(4)
    both(lambda lib, t: lib.complex(t(re), t(im)))
    both(lambda lib, t: lib.complex(t(re.astype(np.float32)), t(im.astype(np.float32))))
    both(lambda lib, t: lib.complex(t(re), t(im.astype(np.float32))))
    both(lambda lib, t: lib.polar(t(np.abs(re)), t(im)))
    both(lambda lib, t: lib.view_as_real(lib.complex(t(re), t(im))))
    both(lambda lib, t: lib.view_as_real(t(re)))
    both(lambda lib, t: lib.view_as_complex(t(M[:, :2].copy())))
    both(lambda lib, t: lib.view_as_complex(t(M)))
    both(lambda lib, t: lib.view_as_real_copy(lib.complex(t(re), t(im))))


@pytest.mark.parametrize("a,b", [("float32", "int64"), ("int8", "uint8"), ("bool", "int16"),
                                 ("float16", "bfloat16"), ("complex64", "float64")])
def test_promote_types(a: str, b: str) -> None:
    want = torch.promote_types(getattr(torch, a), getattr(torch, b))
    got = ts.promote_types(getattr(ts, a), getattr(ts, b))
    assert str(got).rsplit(".", 1)[-1] == str(want).rsplit(".", 1)[-1]


def test_typename() -> None:
    for dt in ("float32", "float64", "int64", "bool", "uint8"):
        want = torch.typename(torch.ones(1, dtype=getattr(torch, dt)))
        assert ts.typename(ts.ones(1, dtype=getattr(ts, dt))) == want.replace("torch", "tessera")
    assert ts.typename(3) == torch.typename(3) == "int"
    assert ts.typename(np.ones(1)) == torch.typename(np.ones(1))


@pytest.mark.parametrize("args,kw", [((1, 4), {}), ((0, 1, 0.25), {}), ((5, 9, 2), {}),
                                     ((1, 4), {"dtype": "int64"}), ((3, 0, -1), {}),
                                     ((0, 1, 0.3), {}), ((1, 0), {})])
def test_range(args: tuple, kw: dict) -> None:
    with pytest.raises(TypeError):
        ts.range(5)
    def fn(lib: Any, t: Any) -> Any:
        k = {"dtype": getattr(lib, kw["dtype"])} if kw else {}
        with pytest.warns(UserWarning):
            return lib.range(*args, **k)
    both(fn)


def test_empty_strided_and_frombuffer() -> None:
    for lib in (ts, torch):
        e = lib.empty_strided((2, 3), (1, 2))
        assert tuple(e.shape) == (2, 3)
        assert (tuple(e.strides) == (4, 8)) if lib is ts else (e.stride() == (1, 2))
    buf = np.arange(6, dtype=np.int32).tobytes()
    both(lambda lib, t: lib.frombuffer(bytearray(buf), dtype=lib.int32))
    both(lambda lib, t: lib.frombuffer(bytearray(buf), dtype=lib.int32, count=2, offset=8))
    both(lambda lib, t: lib.frombuffer(bytearray(buf), dtype=lib.float64))


@pytest.mark.parametrize("data,kw", [(V, {}), (M, {}), (M, {"dim": 1}), (M, {"spacing": 2.0}),
                                     (M, {"spacing": [0.5, 2.0]}), (M, {"edge_order": 2}),
                                     (I, {}), (M, {"dim": 0, "edge_order": 2, "spacing": 3.0}),
                                     (np.ones((1, 3)), {}), (V, {"edge_order": 3})])
def test_gradient(data: np.ndarray, kw: dict) -> None:
    both(lambda lib, t: lib.gradient(t(data), **kw))


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates(edge_order: int) -> None:
    x = np.sort(rng.standard_normal(4)) + np.arange(4)
    both(lambda lib, t: lib.gradient(t(M), spacing=(t(x),), dim=1, edge_order=edge_order))


def test_legacy_linalg() -> None:
    A = rng.standard_normal((4, 3))
    S = A.T @ A + np.eye(3)

    def svd_check(lib: Any, t: Any) -> Any:
        u, s, v = lib.svd(t(A))
        return (u @ lib.diag_embed(s) @ v.mT if lib is torch else u @ ts.diag_embed(s) @ v.mT), s
    both(svd_check)
    both(lambda lib, t: lib.svd(t(A), compute_uv=False)[1])
    both(lambda lib, t: [x.shape for x in lib.svd(t(A), some=False)] and
         lib.svd(t(A), some=False)[0].abs().sum(0) * 0)
    both(lambda lib, t: (lambda q, r: q @ r)(*lib.qr(t(A))))
    both(lambda lib, t: lib.qr(t(A), some=False)[0].abs() @ lib.zeros((4, 1), dtype=lib.float64))
    both(lambda lib, t: lib.cholesky(t(S)))
    both(lambda lib, t: lib.cholesky(t(S), upper=True))
    both(lambda lib, t: tuple(lib.slogdet(t(S))))
    r = ts.slogdet(ts.asarray(S))
    assert r.sign.shape == () and r.logabsdet.shape == ()


def test_top_level_nn_functions() -> None:
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3)).astype(np.float32)
    both(lambda lib, t: lib.conv1d(t(x), t(w), padding=1), rtol=1e-4, atol=1e-5)
    both(lambda lib, t: lib.layer_norm(t(x), (8,)), rtol=1e-4, atol=1e-5)
    both(lambda lib, t: lib.group_norm(t(x), 3), rtol=1e-4, atol=1e-5)
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
    g, b = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    both(lambda lib, t: lib.batch_norm(t(x), t(g), t(b), t(rm.copy()), t(rv.copy()), False, 0.1,
                                       1e-5, False), rtol=1e-4, atol=1e-5)
    both(lambda lib, t: lib.instance_norm(t(x), None, None, None, None, True, 0.1, 1e-5, False),
         rtol=1e-4, atol=1e-5)
    emb = rng.standard_normal((5, 2)).astype(np.float32)
    both(lambda lib, t: lib.embedding(t(emb), t(np.array([[0, 4], [2, 2]]))))
    both(lambda lib, t: lib.dropout(t(x), 0.5, False))
    both(lambda lib, t: lib.max_pool1d(t(x), 2))
    both(lambda lib, t: lib.max_pool2d(t(x[None]), 2, 1))
    both(lambda lib, t: lib.adaptive_max_pool1d(t(x), 3))
    both(lambda lib, t: lib.avg_pool1d(t(x), 3))
    both(lambda lib, t: lib.selu(t(x)), rtol=1e-5)
    both(lambda lib, t: lib.cosine_similarity(t(x), t(x[::-1].copy())), rtol=1e-5)
    both(lambda lib, t: lib.pdist(t(x[0])), rtol=1e-5)
    ps = rng.standard_normal((1, 4, 2, 2))
    both(lambda lib, t: lib.pixel_shuffle(t(ps), 2))
    tgt = (rng.random((2, 3, 8)) > 0.5).astype(np.float32)
    for red in (0, 1, 2):
        both(lambda lib, t: lib.binary_cross_entropy_with_logits(t(x), t(tgt), None, None, red),
             rtol=1e-5)
        both(lambda lib, t: lib.kl_div(t(x), t(np.abs(x)), red), rtol=1e-5)
    both(lambda lib, t: lib.rms_norm(t(x), (8,), None, 1e-6), rtol=1e-5)
    both(lambda lib, t: lib.margin_ranking_loss(t(x), t(x * 0.5), t(np.sign(x)), 0.1, 2),
         rtol=1e-5)


def test_inplace_and_copy_functions() -> None:
    for name in ("abs_", "exp_", "sigmoid_", "zero_", "neg_", "relu_", "sqrt_", "tanh_"):
        both(lambda lib, t: (lambda x: (getattr(lib, name)(x), x)[1])(t(np.abs(M) + 0.1)))
    both(lambda lib, t: (lambda x: (lib.fill_(x, 2.5), x)[1])(t(M.copy())))
    both(lambda lib, t: lib.fill(t(M), 1.5))
    both(lambda lib, t: (lambda x: (lib.clamp_(x, -0.5, 0.5), x)[1])(t(M.copy())))
    both(lambda lib, t: lib.permute_copy(t(M), (1, 0)))
    both(lambda lib, t: lib.transpose_copy(t(M), 0, 1))
    both(lambda lib, t: lib.unbind_copy(t(M), 1))
    both(lambda lib, t: lib.split_with_sizes(t(V), [2, 3]))
    both(lambda lib, t: lib.split_with_sizes(t(V), [2, 2]))
    both(lambda lib, t: lib.diagonal_copy(t(M)))
    both(lambda lib, t: lib.squeeze_copy(t(M[None])))
    both(lambda lib, t: lib.expand_copy(t(V), (2, 5)))
    src = ts.asarray(M)
    cp = ts.permute_copy(src, (1, 0))
    cp[0, 0] = 100.0
    assert float(src[0, 0]) != 100.0


def test_switches() -> None:
    for lib in (ts, torch):
        assert not lib.are_deterministic_algorithms_enabled()
        lib.use_deterministic_algorithms(True, warn_only=True)
        assert lib.are_deterministic_algorithms_enabled()
        assert lib.is_deterministic_algorithms_warn_only_enabled()
        assert lib.get_deterministic_debug_mode() == 1
        lib.set_deterministic_debug_mode("error")
        assert lib.get_deterministic_debug_mode() == 2
        lib.use_deterministic_algorithms(False)
        assert lib.get_deterministic_debug_mode() == 0
        with pytest.raises(RuntimeError):
            lib.set_deterministic_debug_mode("bogus")
        assert lib.get_float32_matmul_precision() == "highest"
        lib.set_float32_matmul_precision("high")
        assert lib.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning):
            lib.set_float32_matmul_precision("bogus")
        assert lib.get_float32_matmul_precision() == "high"
        lib.set_float32_matmul_precision("highest")
    model = ts.nn.Linear(2, 2)
    assert ts.compile(model) is model
    assert ts.compile()(len) is len


@pytest.mark.parametrize("in_dims,out_dims", [(0, 0), (1, 0), ((0, None), 1)])
def test_vmap(in_dims: Any, out_dims: int) -> None:
    a = rng.standard_normal((3, 3))
    bvec = rng.standard_normal(3)

    def fn(lib: Any, t: Any) -> Any:
        if isinstance(in_dims, tuple):
            return lib.vmap(lambda x, y: x * y + 1, in_dims=in_dims, out_dims=out_dims)(t(a), t(bvec))
        return lib.vmap(lambda x: (x ** 2).sum(), in_dims=in_dims, out_dims=out_dims)(t(a))
    both(fn)
    both(lambda lib, t: lib.vmap(lambda x: (x, x * 2))(t(a)))


def test_device_size_layout_typed_tensors() -> None:
    assert ts.device("cpu") == ts.ones(1).device
    assert ts.Size((2, 3)) == (2, 3) and ts.Size((2, 3)).numel() == 6
    assert repr(ts.strided) == "tessera.strided" and repr(ts.channels_last) == "tessera.channels_last"
    for name, dt in (("FloatTensor", "float32"), ("LongTensor", "int64"), ("DoubleTensor", "float64"),
                     ("BoolTensor", "bool"), ("ByteTensor", "uint8")):
        for lib in (ts, torch):
            cls = getattr(lib, name)
            x = cls(2, 3)
            assert tuple(x.shape) == (2, 3) and str(x.dtype).endswith(dt)
            assert isinstance(x, cls)
            y = cls([1, 0])
            assert str(y.dtype).endswith(dt) and y.tolist() == ([1, 0] if dt not in ("float32", "float64", "bool") else y.tolist())
    assert not isinstance(ts.ones(2), ts.LongTensor)


def test_legacy_tensor_constructor_and_type_classes() -> None:
    """torch.Tensor(*sizes) / Tensor(data) / Tensor(size) / Tensor(tensor), as old tutorials
    write nn.Parameter(torch.Tensor(out, in)); x.type(torch.DoubleTensor)."""
    for args in ((), (2, 3), ([1, 2],), ((1, 2),), (np.arange(3),), (np.float64(2.5) * np.ones(2),)):
        got, ref = ts.Tensor(*args), torch.Tensor(*args)
        assert tuple(got.shape) == tuple(ref.shape) and str(got.dtype) == "float32"
        if ref.numel() and args and not isinstance(args[0], int):
            assert got.tolist() == ref.tolist()
    assert tuple(ts.Tensor(ts.Size([2, 4])).shape) == (2, 4)
    for data in ([1.0, 2.0], [1, 2]):  # a tensor argument is that tensor, of any dtype
        x = ts.asarray(data)
        y = ts.Tensor(x)
        assert y.dtype == x.dtype and y.data_ptr() == x.data_ptr()
    for bad in ((2.5,), (2, 2.5), ("ab",)):
        with pytest.raises(TypeError):
            torch.Tensor(*bad)
        with pytest.raises(TypeError):
            ts.Tensor(*bad)
    w = ts.nn.Parameter(ts.Tensor(3, 4))
    assert isinstance(w, ts.nn.Parameter) and w.requires_grad and tuple(w.shape) == (3, 4)
    old = ts.get_default_dtype()
    try:
        ts.set_default_dtype(ts.float64)
        assert ts.Tensor(2).dtype == ts.float64 and ts.Tensor([1]).dtype == ts.float64
    finally:
        ts.set_default_dtype(old)
    x = ts.ones(2)
    for cls, dt in ((ts.DoubleTensor, ts.float64), (ts.LongTensor, ts.int64)):
        assert x.type(cls).dtype == dt
    assert x.type(ts.FloatTensor) is x
    assert torch.ones(2).type(torch.LongTensor).dtype == torch.int64


def test_misc_top_level() -> None:
    both(lambda lib, t: lib.matrix_rank(t(M)) if lib is ts else torch.linalg.matrix_rank(t(M)))
    both(lambda lib, t: lib.nuclear_norm(t(M)))
    both(lambda lib, t: lib.frobenius_norm(t(M), (0, 1)))
    both(lambda lib, t: lib.constant_pad_nd(t(M), (1, 2), 3.0))
    both(lambda lib, t: lib.unsafe_chunk(t(V), 2))
    both(lambda lib, t: lib.unsafe_split(t(V), 2))
    both(lambda lib, t: lib.nonzero_static(t(np.array([[0, 1], [2, 0]])), size=4))
    both(lambda lib, t: lib.nonzero_static(t(np.array([0, 1, 2, 3])), size=2, fill_value=7))
    both(lambda lib, t: lib.is_same_size(t(M), t(M)))
    both(lambda lib, t: lib.is_signed(t(I)))
    x = ts.ones(3)
    assert ts.from_dlpack(ts.to_dlpack(x)).tolist() == [1.0] * 3


# ----------------------------------------------------------------------------- Tensor methods
@pytest.mark.parametrize("name,args", [("t_", ()), ("transpose_", (0, 1)), ("swapaxes_", (0, 1)),
                                       ("swapdims_", (1, 0)), ("unsqueeze_", (1,)),
                                       ("squeeze_", ()), ("as_strided_", ((2, 2), (1, 3))),
                                       ("unsqueeze_", (5,))])
def test_metadata_inplace_methods(name: str, args: tuple) -> None:
    def fn(lib: Any, t: Any) -> Any:
        x = t(M.copy())
        out = getattr(x, name)(*args)
        assert out is x
        return x, tuple(x.shape)
    both(fn)


def test_metadata_inplace_autograd_rules() -> None:
    for lib in (ts, torch):
        x = lib.ones(3, requires_grad=True) if lib is ts else torch.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            x.unsqueeze_(0)
        with lib.no_grad():
            y = lib.ones(3, requires_grad=True) if lib is ts else torch.ones(3, requires_grad=True)
    s = ts.arange(6.0)
    v = s.reshape(2, 3)
    v.t_()
    v[0, 1] = 100.0  # still a view of s's memory: element (1, 0) of the (2, 3) view
    assert float(s[3]) == 100.0


@pytest.mark.parametrize("sizes", [(2, 2), (3, 3), ((6,),), (0,), (1, 6)])
def test_resize_(sizes: tuple) -> None:
    def fn(lib: Any, t: Any) -> Any:
        x = t(np.arange(6.0)).clone()  # torch cannot resize NumPy-owned memory
        assert x.resize_(*sizes) is x
        n = min(6, int(np.prod(x.shape)))
        return tuple(x.shape), x.reshape(-1)[:n]
    both(fn)
    both(lambda lib, t: t(np.arange(6.0)).clone().resize_(-1, 2))
    both(lambda lib, t: tuple(t(np.arange(6.0)).clone().resize_as_(t(M)).shape))


def test_set_() -> None:
    for lib in (ts, torch):
        x = lib.ones(3) if lib is ts else torch.ones(3)
        src = lib.zeros((2, 2)) if lib is ts else torch.zeros(2, 2)
        assert x.set_(src) is x and tuple(x.shape) == (2, 2)
        src[0, 0] = 5.0
        assert float(x[0, 0]) == 5.0
        x.set_()
        assert tuple(x.shape) == (0,)
        with pytest.raises(RuntimeError):
            x.set_(lib.zeros(2, dtype=lib.int64) if lib is ts else torch.zeros(2, dtype=torch.int64))
        base = lib.arange(6.0) if lib is ts else torch.arange(6.0)
        x.set_(base, 1, (2, 2), (1, 2))
        assert x.tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_new_and_new_empty_strided() -> None:
    for lib in (ts, torch):
        x = lib.ones(2, dtype=lib.float64) if lib is ts else torch.ones(2, dtype=torch.float64)
        assert tuple(x.new(2, 3).shape) == (2, 3) and x.new(2, 3).dtype == lib.float64
        assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new([1, 2]).dtype == lib.float64
        assert tuple(x.new().shape) == (0,)
        e = x.new_empty_strided((2, 3), (1, 2))
        assert tuple(e.shape) == (2, 3) and e.dtype == lib.float64


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_reduce(reduce: str, include_self: bool, dim: int) -> None:
    base = rng.standard_normal((3, 4))
    n = 5
    index = np.array([0, 2, 0, 1, 2]) if dim == 0 else np.array([3, 0, 3, 1, 1])
    src = rng.standard_normal((n, 4) if dim == 0 else (3, n))
    both(lambda lib, t: t(base).index_reduce(dim, t(index), t(src), reduce,
                                             include_self=include_self))

    def inplace(lib: Any, t: Any) -> Any:
        x = t(base.copy())
        assert x.index_reduce_(dim, t(index), t(src), reduce, include_self=include_self) is x
        return x
    both(inplace)


def test_index_reduce_errors() -> None:
    both(lambda lib, t: t(M).index_reduce(0, t(np.array([0])), t(M[:1].copy()), "sum"))


def test_map_and_map2_() -> None:
    def fn(lib: Any, t: Any) -> Any:
        x = t(M.copy())
        x.map_(t(V[:4].copy()), lambda a, b: a * 2 + b)
        y = t(M.copy())
        y.map2_(t(M.copy()), t(np.ones(4)), lambda a, b, c: a - b + c)
        return x, y
    both(fn)


def test_misc_methods() -> None:
    both(lambda lib, t: t(M).as_strided_scatter(t(np.zeros((2, 2))), (2, 2), (1, 4), 1))
    both(lambda lib, t: t(np.array([1 + 2j, 3 - 1j])).conj_physical())
    both(lambda lib, t: (lambda x: (x.conj_physical_(), x)[1])(t(np.array([1 + 2j]))))
    for lib in (ts, torch):
        x = lib.ones(3) if lib is ts else torch.ones(3)
        assert x.name is None and x.dense_dim() == 1 and x.sparse_dim() == 0
        assert x.to_dense() is x
        assert repr(x.layout).endswith("strided")
        other = lib.zeros(3) if lib is ts else torch.zeros(3)
        assert x.module_load(other).tolist() == [0.0] * 3 and x.tolist() == [0.0] * 3
        assert x.module_load(other + 1, assign=True).tolist() == [1.0] * 3


def test_grad_identity() -> None:
    for lib in (ts, torch):
        x = lib.ones(2, requires_grad=True) if lib is ts else torch.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        g = x.grad
        assert x.grad is g
        (x * 3).sum().backward()
        assert x.grad is g and x.grad.tolist() == [5.0, 5.0]
        x.grad = None
        assert x.grad is None
        (x * 1).sum().backward()
        del x.grad
        assert x.grad is None


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_det_sign_with_row_swaps(dtype: str) -> None:
    """getrf's row exchanges flip the determinant's sign (det was missing that)."""
    mats = [np.array([[0., 1.], [1., 0.]]), np.array([[1., 2.], [3., 4.]]),
            rng.standard_normal((3, 4, 4)), np.array([[14., -24.], [-24., 77.]])]
    for a in mats:
        a = a.astype(dtype) if dtype != "complex128" else a + 0.5j * np.ones_like(a)
        both(lambda lib, t: lib.linalg.det(t(a)), rtol=1e-4, atol=1e-4)
        both(lambda lib, t: lib.linalg.slogdet(t(a))[0], rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- submodules
X = np.array([[1., -2., 3.], [4., 5., -6.]], np.float32)


@pytest.mark.parametrize("args,kw", [((), {}), (("fro",), {}), ((2,), {}), ((-2,), {}),
                                     (("nuc",), {}), ((float("inf"),), {}), ((), {"dim": 1}),
                                     ((1,), {"dim": 0}), ((), {"dim": (0, 1), "keepdim": True}),
                                     ((-1,), {}), ((0,), {"dim": 1})])
def test_linalg_norm(args: tuple, kw: dict) -> None:
    both(lambda lib, t: lib.linalg.norm(t(X), *args, **kw), rtol=1e-5)


def test_linalg_norm_more() -> None:
    both(lambda lib, t: lib.linalg.norm(t(X[None]), "fro", dim=(1, 2)), rtol=1e-5)
    both(lambda lib, t: lib.linalg.norm(t(X[None]), 2))
    both(lambda lib, t: lib.linalg.norm(t(X.reshape(-1)), 3), rtol=1e-5)
    both(lambda lib, t: lib.linalg.norm(t(X[None]), dtype=lib.float64), rtol=1e-5)


def test_linalg_extras() -> None:
    sq = X[:, :2] + 5 * np.eye(2, dtype=np.float32)
    both(lambda lib, t: lib.linalg.multi_dot([t(X), t(X.T), t(X)]), rtol=1e-5)
    both(lambda lib, t: lib.linalg.multi_dot([t(X[0]), t(X.T), t(X[:, 0].copy())]), rtol=1e-5)
    both(lambda lib, t: lib.linalg.multi_dot([t(X)]))
    both(lambda lib, t: lib.linalg.vander(t(X)))
    both(lambda lib, t: lib.linalg.vander(t(I), N=4))
    both(lambda lib, t: lib.linalg.matrix_exp(t(X[:, :2].copy())), rtol=1e-4)
    both(lambda lib, t: lib.linalg.matrix_exp(t(np.linspace(-1, 1, 48).reshape(3, 4, 4))),
         rtol=1e-9)
    both(lambda lib, t: lib.linalg.matrix_exp(t(np.zeros((0, 0), np.float32))))
    both(lambda lib, t: lib.linalg.matrix_exp(t(X)))
    for kw in ({"upper": True}, {"upper": False, "unitriangular": True}):
        both(lambda lib, t: lib.linalg.solve_triangular(t(sq), t(X), **kw), rtol=1e-5)
    both(lambda lib, t: lib.linalg.solve_triangular(t(sq), t(X.T.copy()), upper=True, left=False),
         rtol=1e-5)
    for p in (None, "fro", 1, -2, float("inf")):
        both(lambda lib, t: lib.linalg.cond(t(X[:, :2].copy()), p), rtol=1e-4)
    both(lambda lib, t: lib.linalg.lstsq(t(X.T.copy()), t(X.T.copy())).solution, atol=1e-5)
    both(lambda lib, t: lib.linalg.lstsq(t(X.T.copy()), t(X[0].copy())).solution, atol=1e-5)
    both(lambda lib, t: lib.linalg.lstsq(t(X.T.copy()), t(X.T.copy()))[1:3])
    both(lambda lib, t: tuple(lib.linalg.inv_ex(t(sq))), rtol=1e-5)
    both(lambda lib, t: lib.linalg.inv_ex(t(np.zeros((2, 2), np.float32)))[1])
    both(lambda lib, t: tuple(lib.linalg.cholesky_ex(t(X @ X.T))), rtol=1e-5)
    both(lambda lib, t: lib.linalg.cholesky_ex(t(-(X @ X.T)))[1])
    both(lambda lib, t: tuple(lib.linalg.solve_ex(t(sq), t(X))), rtol=1e-5)
    both(lambda lib, t: lib.linalg.tensorinv(t(np.eye(4).reshape(4, 2, 2)), ind=1))
    both(lambda lib, t: lib.linalg.tensorsolve(t(np.eye(6).reshape(2, 3, 6)), t(np.ones((2, 3)))))
    with pytest.raises(ts.linalg.LinAlgError):
        ts.linalg.inv_ex(ts.zeros((2, 2)), check_errors=True)


def test_matrix_exp_gradient() -> None:
    a = np.linspace(-0.5, 0.5, 9).reshape(3, 3)
    xs = ts.asarray(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    ts.linalg.matrix_exp(xs).sum().backward()
    torch.linalg.matrix_exp(xt).sum().backward()
    same_result(xs.grad, xt.grad, rtol=1e-8)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fft2(name: str, norm: Any) -> None:
    both(lambda lib, t: getattr(lib.fft, name)(t(X), norm=norm), rtol=1e-5, atol=1e-5)
    both(lambda lib, t: getattr(lib.fft, name)(t(X[None]), dim=(0, 2)), rtol=1e-5, atol=1e-5)


def test_irfft2_roundtrip() -> None:
    both(lambda lib, t: lib.fft.irfft2(lib.fft.rfft2(t(X)), s=(2, 3)), rtol=1e-5, atol=1e-5)


def test_make_tensor_and_variable() -> None:
    for lib in (ts, torch):
        mk = lib.testing.make_tensor
        x = mk(2, 3, dtype=lib.float32, device="cpu")
        assert tuple(x.shape) == (2, 3) and x.dtype == lib.float32
        assert bool((x >= -9).all()) and bool((x <= 9).all())
        y = mk((4, 5), dtype=lib.int64, device="cpu", low=0, high=3)
        assert y.dtype == lib.int64 and bool((y >= 0).all()) and bool((y < 3).all())
        assert not mk(4, 3, dtype=lib.float32, device="cpu", noncontiguous=True).is_contiguous()
        assert bool((mk(50, dtype=lib.float32, device="cpu", exclude_zero=True) != 0).all())
        assert mk(3, dtype=lib.bool, device="cpu").dtype == lib.bool
        assert mk(3, dtype=lib.float32, device="cpu", requires_grad=True).requires_grad
        with pytest.raises(ValueError):
            mk(3, dtype=lib.float32, device="cpu", low=2, high=1)
        with pytest.raises(TypeError):
            mk(3, dtype=lib.float32)
        t = lib.ones(2)
        assert isinstance(t, lib.autograd.Variable)
        assert lib.autograd.Variable(t, requires_grad=True).requires_grad


def test_nn_utils_and_init_extras() -> None:
    for lib in (ts, torch):
        p = [lib.nn.Parameter(lib.ones(3) if lib is ts else torch.ones(3)) for _ in range(2)]
        for q in p:
            q.grad = (lib.ones(3) if lib is ts else torch.ones(3)) * 2
        total = lib.nn.utils.get_total_norm([q.grad for q in p])
        assert abs(float(total) - math.sqrt(24)) < 1e-5
        lib.nn.utils.clip_grads_with_norm_(p, 1.0, total)
        assert abs(float(lib.nn.utils.get_total_norm([q.grad for q in p])) - 1.0) < 1e-4
        w = lib.empty((4, 2, 3, 3)) if lib is ts else torch.empty(4, 2, 3, 3)
        lib.nn.init.dirac_(w, groups=2)
        assert float(w.sum()) == 4.0 and float(w[0, 0, 1, 1]) == 1.0 and float(w[2, 0, 1, 1]) == 1.0
        s = lib.empty((10, 3)) if lib is ts else torch.empty(10, 3)
        lib.nn.init.sparse_(s, 0.5)
        assert int((s == 0).sum()) == 15
        with pytest.warns(FutureWarning):
            lib.nn.init.constant(s, 1.0)
        m = lib.nn.utils.skip_init(lib.nn.Linear, 3, 2)
        assert tuple(m.weight.shape) == (2, 3)


# ----------------------------------------------------------------------------- torch keywords
IV = np.array([3, 1, 2, -5, 7])


@pytest.mark.parametrize("expr", [
    "lib.tensordot(t(X), t(X), dims=([1], [1]))", "lib.tensordot(t(X), t(X.T.copy()), 1)",
    "lib.tensordot(t(X), t(X), ([1], [1]))", "lib.tensordot(t(X), t(X.T.copy()), dims=1)",
    "lib.nonzero(t(X) > 0, as_tuple=True)", "lib.nonzero(t(X) > 0, as_tuple=False)",
    "lib.concat([t(X), t(X)], 1)", "lib.concat([t(X), t(X)], dim=1)",
    "lib.count_nonzero(t(X), 1)", "lib.count_nonzero(t(X), dim=0)",
    "lib.searchsorted(t(np.array([1., 2.])), t(np.array([1.5, 2.])), right=True)",
    "lib.searchsorted(t(np.array([1., 2.])), t(np.array([1.5, 2.])), side='right')",
    "lib.searchsorted(t(np.array([1., 2.])), t(np.array([2.])), out_int32=True)",
    "lib.searchsorted(t(np.array([1., 2.])), t(np.array([2.])), side='left', right=True)",
    "lib.round(t(X) / 3, decimals=1)", "lib.round(t(X) * 100, decimals=-2)",
    "lib.div(t(IV), 2, rounding_mode='floor')", "lib.div(t(IV), -2, rounding_mode='trunc')",
    "lib.div(-t(IV), t(IV), rounding_mode='trunc')", "lib.div(7, t(IV), rounding_mode='trunc')",
    "lib.div(t(X), 4, rounding_mode='trunc')", "lib.divide(t(X), 4, rounding_mode='floor')",
    "lib.true_divide(t(IV), 2)", "lib.div(t(X), 4, rounding_mode='bogus')",
    "lib.sub(t(X), t(X), alpha=2)", "lib.add(t(X), 1, alpha=2)", "lib.add(t(IV), t(IV), alpha=2)",
    "lib.add(t(IV), t(IV), alpha=2.5)", "lib.subtract(t(IV), 1, alpha=3)",
    "lib.add(t(X), t(IV[:3].copy()), alpha=0.5)",
])
def test_torch_keywords(expr: str) -> None:
    both(lambda lib, t: eval(expr, {"lib": lib, "t": t, "np": np, "X": X, "IV": IV}), rtol=1e-6)


def test_standard_calls_unchanged() -> None:
    x = ts.asarray(X)
    assert ts.nonzero(x > 0)[0].tolist() == [0, 0, 1, 1]
    assert ts.tensordot(x, x, axes=([1], [1])).shape == (2, 2)
    assert ts.round(ts.asarray([0.5, 1.5, 2.5])).tolist() == [0.0, 2.0, 2.0]
    assert ts.linalg.tensordot is ts.tensordot
    with pytest.raises(TypeError, match=r"^add\(\): invalid argument types"):
        ts.add(x, x, 1, 2)


# ----------------------------------------------------------------------------- special
F64 = np.array([0., 1e-3, 1., -2.5, 10., 14.9, 15.1, 30., -100.])


@pytest.mark.parametrize("name,data", [
    ("erf", X), ("erfc", IV), ("erfcx", np.array([-3., 0., 1., 10., 30., 100.])),
    ("erfinv", np.array([0.5, -0.9, 0.0], np.float32)), ("ndtr", X),
    ("ndtri", np.array([0.1, 0.5, 0.975, 0., 1.])),
    ("log_ndtr", np.array([-40., -25., -10., 0., 3.])), ("expit", X), ("exp2", IV),
    ("expm1", X), ("log1p", np.abs(X)), ("gammaln", np.array([2.5, 0.1, 7.0])),
    ("digamma", np.array([2.5, 0.3])), ("psi", np.array([2.5])), ("i0", F64), ("i0e", F64),
    ("i1", F64), ("i1e", F64), ("i0", X), ("i1e", IV), ("modified_bessel_i0", F64[:6]),
    ("modified_bessel_i1", F64[:6]), ("entr", np.array([-1., 0., 0.5, 2., np.nan])),
    ("sinc", X), ("logit", np.array([0.3, 0.9]))])
def test_special_unary(name: str, data: np.ndarray) -> None:
    both(lambda lib, t: getattr(lib.special, name)(t(data)), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u",
                                  "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                                  "hermite_polynomial_h", "hermite_polynomial_he",
                                  "laguerre_polynomial_l", "legendre_polynomial_p"])
@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_special_polynomials(name: str, n: int) -> None:
    both(lambda lib, t: getattr(lib.special, name)(t(X / 7), n), rtol=1e-5, atol=1e-6)


def test_special_misc() -> None:
    both(lambda lib, t: lib.special.polygamma(1, t(np.array([2.5]))), rtol=1e-6)
    both(lambda lib, t: lib.special.multigammaln(t(np.array([2.5])), 2), rtol=1e-6)
    both(lambda lib, t: lib.special.xlogy(t(X), t(np.abs(X))), rtol=1e-6)
    both(lambda lib, t: lib.special.xlog1py(t(np.array([1., 2.])), t(np.array([0.5, -1.]))))
    both(lambda lib, t: lib.special.xlog1py(t(np.array([0.])), t(np.array([0.5]))))
    both(lambda lib, t: lib.special.softmax(t(X), 1), rtol=1e-6)
    both(lambda lib, t: lib.special.log_softmax(t(X), 0), rtol=1e-6)
    both(lambda lib, t: lib.special.logsumexp(t(X), 1), rtol=1e-6)
    both(lambda lib, t: lib.special.round(t(X) / 3))
    both(lambda lib, t: lib.special.legendre_polynomial_p(t(X / 7), t(np.array([0, 1, 2]))),
         rtol=1e-5)
    both(lambda lib, t: lib.i0(t(X)), rtol=1e-6)
    both(lambda lib, t: t(X).i0(), rtol=1e-6)
    both(lambda lib, t: (lambda y: (y.i0_(), y)[1])(t(X.copy())), rtol=1e-6)


def test_special_gradients() -> None:
    a = np.array([0.5, 3.0, 20.0, -1.5])
    for name in ("i0", "i1", "ndtr", "log_ndtr", "erfcx", "entr"):
        data = np.abs(a) if name == "entr" else a
        xs = ts.asarray(data, requires_grad=True)
        xt = torch.tensor(data, requires_grad=True)
        getattr(ts.special, name)(xs).sum().backward()
        getattr(torch.special, name)(xt).sum().backward()
        same_result(xs.grad, xt.grad, rtol=1e-7)


def test_ambiguous_truth_value_is_value_and_runtime_error() -> None:
    for exc in (ValueError, RuntimeError):
        with pytest.raises(exc, match="ambiguous"):
            bool(ts.ones(2))
        with pytest.raises(exc):
            if ts.zeros(0):
                pass
    with pytest.raises(RuntimeError):
        bool(torch.ones(2))
    assert bool(ts.ones(1)) and not bool(ts.zeros(()))


def test_item_error_and_memory_format() -> None:
    for exc in (ValueError, RuntimeError):
        with pytest.raises(exc):
            ts.ones(3).item()
    assert ts.ones(1).item() == 1.0
    for lib in (ts, torch):
        x = lib.ones((1, 3, 2, 2)) if lib is ts else torch.ones(1, 3, 2, 2)
        assert tuple(x.clone(memory_format=lib.contiguous_format).shape) == (1, 3, 2, 2)
        assert tuple(x.contiguous(memory_format=lib.contiguous_format).shape) == (1, 3, 2, 2)
        assert tuple(x.to(memory_format=lib.channels_last).shape) == (1, 3, 2, 2)
        assert x.to(lib.float64, memory_format=lib.preserve_format).dtype == lib.float64
    with pytest.raises(TypeError, match="memory_format"):
        ts.ones(2).clone(memory_format=3)


@pytest.mark.parametrize("expr", [
    "lib.einsum(t(X), [0, 1], t(X), [0, 1], [0])", "lib.einsum(t(X), [0, 1], t(X), [2, 1])",
    "lib.einsum(t(np.ones((2, 3, 4))), [Ellipsis, 1], [Ellipsis])",
    "lib.einsum('i,i', t(np.ones(2)), t(np.ones(3)))", "lib.einsum('ij->k', t(X))",
    "lib.einsum('ij', t(np.ones(2)))", "lib.einsum('ij,jk', t(X), t(X.T.copy()))",
    "lib.diff(t(X), n=2, dim=1)", "lib.diff(t(X), dim=0)", "lib.diff(t(X), 1, dim=1)",
    "lib.searchsorted(t(np.array([[1., 3.], [2., 4.]])), t(np.array([[2.], [3.]])))",
    "lib.searchsorted(t(np.array([[1., 3.], [2., 4.]])), t(np.array([[2., 5.], [3., 0.]])), right=True)",
    "lib.searchsorted(t(np.array([[1., 3.], [2., 4.]])), t(np.array([[2.]])))",
])
def test_einsum_diff_searchsorted(expr: str) -> None:
    both(lambda lib, t: eval(expr, {"lib": lib, "t": t, "np": np, "X": X}), rtol=1e-6)


def test_einsum_error_is_value_and_runtime_error() -> None:
    for exc in (ValueError, RuntimeError):
        with pytest.raises(exc):
            ts.einsum("i,i", ts.ones(2), ts.ones(3))


def test_random_extras() -> None:
    for lib in (ts, torch):
        g = lib.Generator()
        s = g.seed()
        assert isinstance(s, int) and g.initial_seed() == s
        assert lib.random.get_rng_state().dtype == lib.uint8
        lib.manual_seed(3)
        with lib.random.fork_rng():
            a = lib.rand(2)
        b = lib.rand(2)
        assert a.tolist() == b.tolist()
        with lib.random.fork_rng(enabled=False):
            c = lib.rand(2)
        assert c.tolist() != lib.rand(2).tolist()
        assert type(lib.default_generator).__name__ == "Generator"


@pytest.mark.parametrize("expr", ["x.__iadd__(0.5)", "x.add_(0.5)", "x.div_(2)",
                                  "x.__itruediv__(2)", "x.mul_(1.5)", "x.exp_()",
                                  "x.sub_(t(np.ones(3)))"])
def test_inplace_cast_errors_are_runtime_errors(expr: str) -> None:
    def fn(lib: Any, t: Any) -> Any:
        x = t(np.arange(3))
        return eval(expr, {"x": x, "t": t, "np": np})
    both(fn)
    with pytest.raises(TypeError):  # still tessera's dtype-error type
        fn(ts, ts.asarray)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_incomplete_gamma(dtype: Any) -> None:
    a = np.array([0.5, 1., 2., 5., 10., 0.1, 3., 30., 0., 1., -1., 2., 0.], dtype)
    x = np.array([0.1, 1., 3., 2., 15., 5., 0., 25., 1., 0., 1., np.nan, 0.], dtype)
    tol = {"rtol": 1e-9, "atol": 1e-9} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}
    for name in ("gammainc", "gammaincc"):
        both(lambda lib, t: getattr(lib.special, name)(t(a), t(x)), **tol)
    both(lambda lib, t: lib.igamma(t(a), t(x)), **tol)
    both(lambda lib, t: t(a).igammac(t(x)), **tol)
    both(lambda lib, t: (lambda y: (y.igamma_(t(x)), y)[1])(t(a.copy())), **tol)


def test_resize_and_volatile() -> None:
    both(lambda lib, t: t(np.arange(6.0)).resize(2, 3))
    both(lambda lib, t: t(np.arange(6.0)).resize_as(t(np.ones((3, 2)))))
    assert ts.ones(1).volatile is False


LU_A = np.array([[4., 3., 1.], [6., 3., 2.], [1., 5., 9.]])


@pytest.mark.parametrize("expr", [
    "lib.linalg.lu_factor(t(np.array([[1., 2.], [3., 4.]])))",
    "lib.linalg.lu_factor(t(np.array([[1., 2., 3.], [4., 5., 6.]])))",
    "lib.linalg.lu_factor(t(np.array([[1., 2.], [3., 4.], [5., 7.]])))",
    "lib.linalg.lu_factor(t(np.array([[[0., 1.], [1., 0.]], [[2., 1.], [1., 3.]]])))",
    "lib.linalg.lu_factor(t(np.zeros((2, 2))))", "lib.linalg.lu_factor_ex(t(np.zeros((2, 2))))",
    "lib.linalg.lu(t(np.array([[1., 2.], [3., 4.]])))",
    "lib.linalg.lu(t(np.array([[1., 2., 3.], [4., 5., 6.]])))",
    "lib.linalg.lu(t(np.array([[1., 2.], [3., 4.], [5., 7.]])))",
    "lib.lu_unpack(*lib.linalg.lu_factor(t(LU_A)))",
    "lib.linalg.lu_solve(*lib.linalg.lu_factor(t(LU_A)), t(np.ones((3, 2))))",
    "lib.linalg.lu_solve(*lib.linalg.lu_factor(t(LU_A)), t(np.ones((2, 3))), left=False)",
    "lib.linalg.lu_solve(*lib.linalg.lu_factor(t(LU_A)), t(np.ones((3, 1))), adjoint=True)",
    "t(LU_A).lu()", "t(LU_A).lu(get_infos=True)",
    "lib.lu_solve(t(np.ones((3, 1))), *lib.linalg.lu_factor(t(LU_A)))",
])
def test_lu_family(expr: str) -> None:
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda lib, t: eval(expr, {"lib": lib, "t": t, "np": np, "LU_A": LU_A}),
             rtol=1e-10, atol=1e-12)


def test_linalg_error_is_value_and_runtime_error() -> None:
    for exc in (ValueError, RuntimeError, ts.linalg.LinAlgError):
        with pytest.raises(exc):
            ts.linalg.inv(ts.zeros((2, 2)))
    for lib in (ts, torch):  # torch's LinAlgError is a RuntimeError
        with pytest.raises(RuntimeError):
            lib.linalg.cholesky(-lib.eye(2))


SIG = np.random.default_rng(5).standard_normal((2, 64))


@pytest.mark.parametrize("kw", [
    {"n_fft": 16}, {"n_fft": 16, "hop_length": 4, "win": 16}, {"n_fft": 15, "hop_length": 5,
                                                               "normalized": True},
    {"n_fft": 16, "win_length": 10, "win": 10, "center": False}, {"n_fft": 16, "onesided": False},
    {"n_fft": 8, "pad_mode": "constant"}, {"n_fft": 16, "return_complex": False},
    {"n_fft": 16, "one_d": True}])
def test_stft_istft(kw: dict) -> None:
    kw = dict(kw)
    win = kw.pop("win", None)
    one_d = kw.pop("one_d", False)
    rc = kw.pop("return_complex", True)
    sig = SIG[0] if one_d else SIG

    def window(lib: Any) -> Any:
        return None if win is None else lib.hann_window(win, dtype=lib.float64)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda lib, t: lib.stft(t(sig), window=window(lib), return_complex=rc, **kw),
             rtol=1e-9, atol=1e-12)
        if kw.get("onesided", True) and rc and kw.get("win_length") is None \
                and kw.get("pad_mode") is None:
            spec = torch.stft(torch.tensor(sig), window=window(torch), return_complex=True, **kw)
            ikw = {k: v for k, v in kw.items() if k not in ("onesided",)}
            both(lambda lib, t: lib.istft(t(spec.numpy()), window=window(lib),
                                          length=sig.shape[-1], **ikw), rtol=1e-9, atol=1e-12)


def test_stft_errors_and_grad() -> None:
    both(lambda lib, t: lib.stft(t(SIG), 16))  # return_complex is required for real input
    both(lambda lib, t: lib.stft(t(SIG), 128, return_complex=True, center=False))
    both(lambda lib, t: lib.istft(t(SIG), 16))  # istft wants complex input
    xs = ts.asarray(SIG, requires_grad=True)
    xt = torch.tensor(SIG, requires_grad=True)
    ts.abs(ts.stft(xs, 16, return_complex=True)).sum().backward()
    torch.stft(xt, 16, return_complex=True, window=torch.ones(16, dtype=torch.float64)).abs().sum().backward()
    same_result(xs.grad, xt.grad, rtol=1e-9, atol=1e-12)


def test_storage_objects() -> None:
    import warnings
    for lib in (ts, torch):
        x = lib.arange(6.0)
        u = x.untyped_storage()
        assert u.nbytes() == u.size() == len(u) == 24 and u.element_size() == 1
        assert u.data_ptr() == x.data_ptr() == x[2:].untyped_storage().data_ptr()
        assert lib.ones(2).untyped_storage().data_ptr() != u.data_ptr()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = x[2:].storage()
            assert s.size() == len(s) == 6 and s.element_size() == 4 and s.nbytes() == 24
            assert s.tolist()[:3] == [0.0, 1.0, 2.0]


def test_adam_beta_message() -> None:
    for lib in (ts, torch):
        with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
            lib.optim.Adam([lib.nn.Parameter(lib.ones(1))], betas=(0.9, 1.0))


def test_finfo_default() -> None:
    assert ts.finfo().eps == torch.finfo().eps
    old = ts.get_default_dtype()
    try:
        ts.set_default_dtype(ts.float64)
        assert ts.finfo().eps == torch.finfo(torch.float64).eps
    finally:
        ts.set_default_dtype(old)


# ----------------------------------------------------------------------------- more top-level ops
CX = np.random.default_rng(7).standard_normal((1, 2, 6, 6))
CW = np.random.default_rng(8).standard_normal((3, 2, 3, 3))
CELL_X = np.random.default_rng(9).standard_normal((2, 3))
CELL_H = np.random.default_rng(10).standard_normal((2, 4))


@pytest.mark.parametrize("expr", [
    "lib.convolution(t(CX), t(CW), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)",
    "lib.convolution(t(CX), t(CW), t(np.ones(3)), [2, 2], [0, 0], [1, 1], False, [0, 0], 1)",
    "lib.convolution(t(CX[:, :, 0]), t(CW[:, :, 0]), None, [1], [0], [1], False, [0], 1)",
    "lib.convolution(t(CX), t(CW.transpose(1, 0, 2, 3).copy()), None, [2, 2], [1, 1], [1, 1], True, [1, 1], 1)",
    "lib.grid_sampler(t(CX), t(np.random.default_rng(3).uniform(-1, 1, (1, 4, 4, 2))), 0, 0, False)",
    "lib.grid_sampler(t(CX), t(np.random.default_rng(3).uniform(-1, 1, (1, 4, 4, 2))), 1, 1, True)",
    "lib.affine_grid_generator(t(np.array([[[1., 0.2, 0.], [0.1, 1., 0.3]]])), [1, 1, 3, 4], False)",
    "lib.lstm_cell(t(CELL_X), (t(CELL_H), t(CELL_H * 0.5)), t(np.linspace(-1, 1, 48).reshape(16, 3)), t(np.linspace(1, -1, 64).reshape(16, 4)), t(np.ones(16) * 0.1), t(np.ones(16) * -0.1))",
    "lib.gru_cell(t(CELL_X), t(CELL_H), t(np.linspace(-1, 1, 36).reshape(12, 3)), t(np.linspace(1, -1, 48).reshape(12, 4)), t(np.ones(12) * 0.1), t(np.ones(12) * -0.2))",
    "lib.rnn_tanh_cell(t(CELL_X), t(CELL_H), t(np.linspace(-1, 1, 12).reshape(4, 3)), t(np.linspace(1, -1, 16).reshape(4, 4)))",
    "lib.rnn_relu_cell(t(CELL_X), t(CELL_H), t(np.linspace(-1, 1, 12).reshape(4, 3)), t(np.linspace(1, -1, 16).reshape(4, 4)), t(np.ones(4)), None)",
    "tuple(lib.triangular_solve(t(np.ones((3, 2))), t(np.triu(LU_A))))",
    "tuple(lib.triangular_solve(t(np.ones((3, 2))), t(np.tril(LU_A)), upper=False, transpose=True))",
    "tuple(lib.triangular_solve(t(np.ones((3, 2))), t(LU_A), unitriangular=True))",
    "lib.empty_permuted((2, 3, 4), (0, 2, 1)).shape", "lib.empty_permuted((2, 3), (0, 0))",
    "lib.cond(t(np.array(True)), lambda a: a + 1, lambda a: a - 1, (t(np.ones(2)),))",
    "lib.cond(False, lambda a: a + 1, lambda a: a - 1, [t(np.ones(2))])",
    "lib.solve(t(LU_A), t(LU_A))", "lib.lstsq(t(LU_A), t(LU_A))", "lib.eig(t(LU_A))",
    "lib.symeig(t(LU_A))", "lib.as_strided_(t(np.arange(6.)), (2, 2), (1, 2))",
    "lib.as_strided_scatter(t(np.zeros(6)), t(np.ones((2, 2))), (2, 2), (1, 2))",
    "lib.index_reduce(t(np.ones((3, 2))), 0, t(np.array([0, 0, 2])), t(np.arange(6.).reshape(3, 2)), 'amax')",
])
def test_more_top_level_ops(expr: str) -> None:
    env = {"np": np, "CX": CX, "CW": CW, "CELL_X": CELL_X, "CELL_H": CELL_H, "LU_A": LU_A}
    both(lambda lib, t: eval(expr, dict(env, lib=lib, t=t)), rtol=1e-9, atol=1e-12)


def test_while_loop_binomial_anomaly() -> None:
    for lib in (ts, torch):
        out = lib.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                             (lib.asarray(0) if lib is ts else torch.tensor(0),
                              lib.ones(2) if lib is ts else torch.ones(2)))
        assert int(out[0]) == 3 and out[1].tolist() == [8.0, 8.0]
        counts = lib.full((1000,), 10.0) if lib is ts else torch.full((1000,), 10.0)
        probs = lib.full((1000,), 0.3) if lib is ts else torch.full((1000,), 0.3)
        draw = lib.binomial(counts, probs)
        assert draw.dtype == lib.float32 and 2.6 < float(draw.mean()) < 3.4
        assert float(draw.max()) <= 10.0 and float(draw.min()) >= 0.0
        lib.set_anomaly_enabled(True)
        assert lib.is_anomaly_enabled()
        lib.set_anomaly_enabled(False)
        assert not lib.is_anomaly_enabled()
