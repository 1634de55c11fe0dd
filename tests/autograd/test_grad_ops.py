"""Gradients of every differentiable op: equal to PyTorch's on the same inputs and cotangents
(float32 and float64, broadcasting, non-contiguous inputs) and gradcheck in float64."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera.testing import gradcheck, gradgradcheck


def run_both(fn_ts, fn_torch, inputs, dtype="float64", cot_seed=0, transpose=False):
    """Runs fn on tessera and torch leaves made from `inputs`; backward with the same random
    cotangent; returns (ts grads, torch grads, ts out, torch out)."""
    arrs = [np.asarray(a, dtype=dtype) for a in inputs]
    if transpose:  # non-contiguous leaves
        arrs = [np.ascontiguousarray(a.T).T if a.ndim >= 2 else a for a in arrs]
    xs = [ts.asarray(a.copy(), requires_grad=True) for a in arrs]
    ys = [torch.tensor(a.copy(), requires_grad=True) for a in arrs]
    out_t, out_y = fn_ts(*xs), fn_torch(*ys)
    cot = np.random.default_rng(cot_seed).standard_normal(tuple(out_y.shape)).astype(dtype)
    out_t.backward(ts.asarray(cot))
    out_y.backward(torch.tensor(cot))
    return [x.grad for x in xs], [y.grad for y in ys], out_t, out_y


def assert_grads(fn_ts, fn_torch, inputs, dtype="float64", rtol=None, **kw):
    gt, gy, ot, oy = run_both(fn_ts, fn_torch, inputs, dtype, **kw)
    r = rtol or (1e-9 if dtype == "float64" else 2e-4)
    np.testing.assert_allclose(ot.detach().numpy(), oy.detach().numpy(), rtol=r, atol=r)
    for a, b in zip(gt, gy):
        if b is None:
            assert a is None or np.allclose(a.numpy(), 0)
            continue
        assert a is not None, "tessera produced no gradient where torch did"
        assert a.shape == tuple(b.shape) and a.dtype.name == str(b.dtype).replace("torch.", "")
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=r, atol=r)


rng = np.random.default_rng(42)
POS = lambda *s: rng.uniform(0.5, 2.0, s)  # noqa: E731
UNIT = lambda *s: rng.uniform(-0.9, 0.9, s)  # noqa: E731
ANY = lambda *s: rng.standard_normal(s)  # noqa: E731

UNARY = {
    "negative": (ts.negative, torch.negative, ANY), "abs": (ts.abs, torch.abs, ANY),
    "sqrt": (ts.sqrt, torch.sqrt, POS), "exp": (ts.exp, torch.exp, ANY),
    "expm1": (ts.expm1, torch.expm1, ANY), "log": (ts.log, torch.log, POS),
    "log1p": (ts.log1p, torch.log1p, POS), "log2": (ts.log2, torch.log2, POS),
    "log10": (ts.log10, torch.log10, POS), "sin": (ts.sin, torch.sin, ANY),
    "cos": (ts.cos, torch.cos, ANY), "tan": (ts.tan, torch.tan, UNIT),
    "sinh": (ts.sinh, torch.sinh, ANY), "cosh": (ts.cosh, torch.cosh, ANY),
    "tanh": (ts.tanh, torch.tanh, ANY), "asin": (ts.asin, torch.asin, UNIT),
    "acos": (ts.acos, torch.acos, UNIT), "atan": (ts.atan, torch.atan, ANY),
    "asinh": (ts.asinh, torch.asinh, ANY), "acosh": (ts.acosh, torch.acosh, lambda *s: 1.5 + POS(*s)),
    "atanh": (ts.atanh, torch.atanh, UNIT), "reciprocal": (ts.reciprocal, torch.reciprocal, POS),
    "square": (ts.square, torch.square, ANY), "positive": (ts.positive, torch.positive, ANY),
    "floor": (ts.floor, torch.floor, ANY), "ceil": (ts.ceil, torch.ceil, ANY),
    "trunc": (ts.trunc, torch.trunc, ANY), "round": (ts.round, torch.round, ANY),
    "sign": (ts.sign, torch.sign, ANY),
}
BINARY = {
    "add": (ts.add, torch.add, ANY, ANY), "subtract": (ts.subtract, torch.subtract, ANY, ANY),
    "multiply": (ts.multiply, torch.multiply, ANY, ANY), "divide": (ts.divide, torch.divide, ANY, POS),
    "pow": (ts.pow, torch.pow, POS, ANY), "atan2": (ts.atan2, torch.atan2, ANY, POS),
    "hypot": (ts.hypot, torch.hypot, POS, POS), "logaddexp": (ts.logaddexp, torch.logaddexp, ANY, ANY),
    "maximum": (ts.maximum, torch.maximum, ANY, ANY), "minimum": (ts.minimum, torch.minimum, ANY, ANY),
    "copysign": (ts.copysign, torch.copysign, ANY, ANY),
    "remainder": (ts.remainder, torch.remainder, ANY, POS),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_grads_match_torch(name, dtype):
    f, g, gen = UNARY[name]
    assert_grads(f, g, [gen(3, 4)], dtype)
    assert_grads(f, g, [gen(3, 4)], dtype, transpose=True)


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"floor", "ceil", "trunc", "round", "sign"}))
def test_unary_gradcheck(name):
    f, _, gen = UNARY[name]
    assert gradcheck(f, (ts.asarray(gen(2, 3), requires_grad=True),))


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (4,)), ((2, 3, 4), (1, 4))])
def test_binary_grads_match_torch_with_broadcasting(name, shapes):
    f, g, ga, gb = BINARY[name]
    assert_grads(f, g, [ga(*shapes[0]), gb(*shapes[1])])


@pytest.mark.parametrize("name", sorted(set(BINARY) - {"remainder", "copysign"}))
def test_binary_gradcheck(name):
    f, _, ga, gb = BINARY[name]
    assert gradcheck(f, (ts.asarray(ga(2, 3), requires_grad=True), ts.asarray(gb(3), requires_grad=True)))


def test_scalar_operands_and_operators():
    assert_grads(lambda x: (2.0 - x) * 3 / (x + 1.5) ** 2, lambda x: (2.0 - x) * 3 / (x + 1.5) ** 2,
                 [POS(5)])


def test_maximum_tie_split_and_abs_at_zero_like_torch():
    assert_grads(ts.maximum, torch.maximum, [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]])
    assert_grads(ts.minimum, torch.minimum, [[1.0, 2.0, 3.0], [1.0, 0.0, 3.0]])
    assert_grads(ts.abs, torch.abs, [[-1.0, 0.0, 2.0]])


def test_complex_multiply_and_abs_conjugate_wirtinger():
    a = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    b = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    xa, xb = ts.asarray(a, requires_grad=True), ts.asarray(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ts.abs(xa * xb).sum().backward()
    torch.abs(ta * tb).sum().backward()
    np.testing.assert_allclose(xa.grad.numpy(), ta.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(xb.grad.numpy(), tb.grad.numpy(), rtol=1e-10)


REDUCTIONS = {
    "sum": (lambda x, **k: ts.sum(x, **k), lambda x, axis=None, keepdims=False: x.sum(dim=axis, keepdim=keepdims) if axis is not None else x.sum()),
    "mean": (lambda x, **k: ts.mean(x, **k), lambda x, axis=None, keepdims=False: x.mean(dim=axis, keepdim=keepdims) if axis is not None else x.mean()),
    "prod": (lambda x, **k: ts.prod(x, **k), lambda x, axis=None, keepdims=False: x.prod(dim=axis, keepdim=keepdims) if axis is not None else x.prod()),
    "var": (lambda x, **k: ts.var(x, correction=1, **k), lambda x, axis=None, keepdims=False: x.var(dim=axis, keepdim=keepdims, correction=1)),
    "std": (lambda x, **k: ts.std(x, correction=0, **k), lambda x, axis=None, keepdims=False: x.std(dim=axis, keepdim=keepdims, correction=0)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), (-1, False)])
def test_reduction_grads_match_torch(name, axis, keepdims):
    f, g = REDUCTIONS[name]
    kw = {} if axis is None else {"axis": axis}
    assert_grads(lambda x: f(x, keepdims=keepdims, **kw) if axis is not None else f(x),
                 lambda x: g(x, axis=axis, keepdims=keepdims) if axis is not None else g(x),
                 [POS(3, 4)], transpose=True)


def test_reduction_tuple_axes_and_gradcheck():
    assert_grads(lambda x: ts.sum(x, axis=(0, 2)), lambda x: x.sum(dim=(0, 2)), [ANY(2, 3, 4)])
    assert_grads(lambda x: ts.mean(x, axis=(0, 2), keepdims=True), lambda x: x.mean(dim=(0, 2), keepdim=True), [ANY(2, 3, 4)])
    for f in (lambda x: ts.prod(x, axis=1), lambda x: ts.var(x, axis=0), lambda x: ts.std(x)):
        assert gradcheck(f, (ts.asarray(POS(3, 3), requires_grad=True),))


def test_prod_with_zeros_matches_torch():
    assert_grads(lambda x: ts.prod(x, axis=1), lambda x: x.prod(dim=1), [[[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [1.0, 2.0, 3.0]]])
    assert_grads(lambda x: ts.prod(x), lambda x: x.prod(), [[2.0, 0.0, 3.0]])


def test_max_min_tie_conventions_match_torch():
    x = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]
    assert_grads(lambda t: ts.max(t), lambda t: t.max(), [x])          # all elements: split evenly
    assert_grads(lambda t: ts.min(t), lambda t: t.min(), [x])
    assert_grads(lambda t: ts.max(t, axis=1), lambda t: t.max(dim=1).values, [x])  # along an axis: one


def test_view_grads_match_torch():
    a = ANY(2, 3, 4)
    cases = [
        (lambda x: ts.reshape(x, (4, 6)), lambda x: x.reshape(4, 6)),
        (lambda x: ts.permute_dims(x, (2, 0, 1)), lambda x: x.permute(2, 0, 1)),
        (lambda x: x.mT, lambda x: x.mT),
        (lambda x: ts.expand_dims(x, axis=1), lambda x: x.unsqueeze(1)),
        (lambda x: ts.flip(x, axis=1), lambda x: x.flip(1)),
        (lambda x: ts.broadcast_to(x, (5, 2, 3, 4)), lambda x: x.expand(5, 2, 3, 4)),
        (lambda x: ts.moveaxis(x, 0, -1), lambda x: x.movedim(0, -1)),
        (lambda x: x[1, ::-2, None, 1:], lambda x: x[1].flip(0)[::2, None, 1:]),  # torch lacks step < 0
        (lambda x: x[..., 0], lambda x: x[..., 0]),
        (lambda x: ts.squeeze(x[:, :1], axis=1), lambda x: x[:, :1].squeeze(1)),
        (lambda x: x.reshape(6, 4).T, lambda x: x.reshape(6, 4).T),
    ]
    for f, g in cases:
        assert_grads(f, g, [a])
        assert_grads(f, g, [a], transpose=True)


def test_matmul_grads_all_shape_rules():
    for sa, sb in [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                   ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (2, 4, 5))]:
        assert_grads(ts.matmul, torch.matmul, [ANY(*sa), ANY(*sb)])
    assert_grads(lambda a, b: a @ b.mT, lambda a, b: a @ b.mT, [ANY(3, 4), ANY(5, 4)], dtype="float32")
    assert gradcheck(ts.matmul, (ts.asarray(ANY(2, 3), requires_grad=True), ts.asarray(ANY(3, 2), requires_grad=True)))


def test_tensordot_vecdot_grads():
    assert_grads(lambda a, b: ts.tensordot(a, b, axes=([1, 2], [0, 1])),
                 lambda a, b: torch.tensordot(a, b, dims=([1, 2], [0, 1])), [ANY(2, 3, 4), ANY(3, 4, 5)])
    assert_grads(lambda a, b: ts.vecdot(a, b), lambda a, b: torch.linalg.vecdot(a, b), [ANY(3, 4), ANY(4)])


def test_where_clip_concat_stack_cumsum_grads():
    c = np.array([True, False, True, False])
    assert_grads(lambda a, b: ts.where(ts.asarray(c), a, b), lambda a, b: torch.where(torch.tensor(c), a, b), [ANY(4), ANY(3, 4)])
    assert_grads(lambda a, b: ts.concat([a, b], axis=1), lambda a, b: torch.cat([a, b], dim=1), [ANY(2, 3), ANY(2, 5)])
    assert_grads(lambda a, b: ts.stack([a, b], axis=1), lambda a, b: torch.stack([a, b], dim=1), [ANY(2, 3), ANY(2, 3)])
    assert_grads(lambda a: ts.cumulative_sum(a, axis=1), lambda a: a.cumsum(1), [ANY(3, 4)])
    assert_grads(lambda a: ts.diff(a, axis=0), lambda a: torch.diff(a, dim=0), [ANY(4, 3)])


def test_casts_and_clone():
    x = ts.asarray(ANY(3), requires_grad=True)
    y = ts.astype(x, ts.float32).clone()
    assert y.grad_fn is not None
    (y * 2).sum().backward()
    assert x.grad.dtype == ts.float64
    np.testing.assert_allclose(x.grad.numpy(), 2.0)


def test_setitem_gradients():
    x = ts.asarray(ANY(3, 4), requires_grad=True)
    v = ts.asarray(ANY(4), requires_grad=True)
    y = x * 1.0
    y[1] = v * 2
    y.sum().backward()
    expect = np.ones((3, 4))
    expect[1] = 0
    np.testing.assert_allclose(x.grad.numpy(), expect)
    np.testing.assert_allclose(v.grad.numpy(), np.full(4, 2.0))
    with pytest.raises(RuntimeError, match="leaf"):
        x[0] = 1.0
    with ts.no_grad():
        x[0] = 1.0  # allowed, like PyTorch's parameter updates


def test_inplace_on_nonleaf_rebases_history():
    x = ts.asarray([1.0, 2.0], requires_grad=True)
    y = x * 3
    y += x
    y *= 2
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 8.0])


def test_int_outputs_are_not_differentiable():
    x = ts.asarray([1.5, -2.0], requires_grad=True)
    assert not ts.argmax(x).requires_grad
    assert not (x > 0).requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        (x > 0).sum().backward()


@pytest.mark.parametrize("fn", [
    lambda x: ts.tanh(x) * ts.exp(x),
    lambda x: ts.sum(x * x, axis=0),
    lambda x: ts.mean(ts.sin(x)),
    lambda x: x @ x.mT,
    lambda x: ts.sqrt(x) / (x + 1.0),
    lambda x: ts.log(x) ** 2,
])
def test_second_order(fn):
    assert gradgradcheck(fn, (ts.asarray(POS(2, 3), requires_grad=True),))


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["add", "multiply", "divide", "maximum", "subtract"]),
       st.lists(st.integers(1, 3), min_size=1, max_size=3), st.booleans())
def test_hypothesis_binary_broadcast_grads(name, shape, swap):
    f, g, ga, gb = BINARY[name]
    sa = tuple(shape)
    sb = tuple(1 if i % 2 else s for i, s in enumerate(shape))[-2:]
    ins = [ga(*sa), gb(*sb)]
    if swap:
        ins = ins[::-1]
    assert_grads(f, g, ins, dtype="float32")


def test_roll_repeat_tile_tril_grads():
    assert_grads(lambda x: ts.roll(x, (1, -2), axis=(0, 1)), lambda x: torch.roll(x, (1, -2), (0, 1)), [ANY(3, 4)])
    assert_grads(lambda x: ts.roll(x, 5), lambda x: torch.roll(x, 5), [ANY(3, 4)])
    assert_grads(lambda x: ts.repeat(x, 3, axis=1), lambda x: torch.repeat_interleave(x, 3, dim=1), [ANY(2, 3)])
    assert_grads(lambda x: ts.repeat(x, 2), lambda x: torch.repeat_interleave(x, 2), [ANY(2, 3)])
    assert_grads(lambda x: ts.tile(x, (2, 1, 3)), lambda x: x.repeat(2, 1, 3), [ANY(2, 3)])
    assert_grads(lambda x: ts.tril(x, k=-1), lambda x: torch.tril(x, -1), [ANY(3, 4)])
    assert_grads(lambda x: ts.triu(x, k=1), lambda x: torch.triu(x, 1), [ANY(3, 4)])
    assert_grads(lambda x: ts.fft.fftshift(x), lambda x: torch.fft.fftshift(x), [ANY(3, 5)])


def test_nextafter_has_no_derivative_and_says_so():
    x = ts.asarray(POS(4), requires_grad=True)
    y = ts.nextafter(x, ts.asarray(POS(4)))
    with pytest.raises(NotImplementedError, match="Nextafter"):
        y.sum().backward()


def test_advanced_indexing_grads():
    idx = np.array([2, 0, 2])
    mask = np.array([[True, False, True, False], [False, True, True, True], [True, True, False, False]])
    assert_grads(lambda x: x[ts.asarray(idx)], lambda x: x[torch.tensor(idx)], [ANY(3, 4)])
    assert_grads(lambda x: x[ts.asarray(mask)], lambda x: x[torch.tensor(mask)], [ANY(3, 4)])
    assert_grads(lambda x: x[1:, ts.asarray([3, 1])], lambda x: x[1:, torch.tensor([3, 1])], [ANY(3, 4)])
    assert_grads(lambda x: x[ts.asarray([0, 2]), ts.asarray([1, 1])], lambda x: x[torch.tensor([0, 2]), torch.tensor([1, 1])], [ANY(3, 4)])


def test_gather_scatter_index_family_grads():
    index = np.array([[0, 2], [1, 1], [2, 0]])
    assert_grads(lambda x: ts.gather(x, 1, ts.asarray(index)), lambda x: torch.gather(x, 1, torch.tensor(index)), [ANY(3, 4)])
    assert_grads(lambda x, s: ts.scatter(x, 1, ts.asarray(np.array([[0, 2], [1, 3], [2, 0]])), s),
                 lambda x, s: torch.scatter(x, 1, torch.tensor(np.array([[0, 2], [1, 3], [2, 0]])), s), [ANY(3, 4), ANY(3, 2)])
    assert_grads(lambda x, s: ts.scatter_add(x, 1, ts.asarray(index), s),
                 lambda x, s: torch.scatter_add(x, 1, torch.tensor(index), s), [ANY(3, 4), ANY(3, 2)])
    assert_grads(lambda x: ts.index_select(x, 0, ts.asarray([2, 2, 0])), lambda x: torch.index_select(x, 0, torch.tensor([2, 2, 0])), [ANY(3, 4)])
    assert_grads(lambda x, s: ts.index_add(x, 0, ts.asarray([2, 0]), s), lambda x, s: torch.index_add(x, 0, torch.tensor([2, 0]), s), [ANY(3, 4), ANY(2, 4)])
    assert_grads(lambda x: ts.take_along_axis(x, ts.asarray(index), axis=1), lambda x: torch.take_along_dim(x, torch.tensor(index), dim=1), [ANY(3, 4)])
    assert_grads(lambda x: ts.masked_fill(x, ts.asarray(np.array([True, False, True, False])), 0.5),
                 lambda x: x.masked_fill(torch.tensor(np.array([True, False, True, False])), 0.5), [ANY(3, 4)])


def test_sort_topk_value_grads():
    assert_grads(lambda x: ts.sort(x, axis=1), lambda x: torch.sort(x, dim=1).values, [ANY(3, 5)])
    assert_grads(lambda x: ts.sort(x, axis=0, descending=True), lambda x: torch.sort(x, dim=0, descending=True).values, [ANY(3, 5)])
    assert_grads(lambda x: ts.topk(x, 2, dim=1)[0], lambda x: torch.topk(x, 2, dim=1).values, [ANY(3, 5)])


def test_advanced_setitem_grads():
    x = ts.asarray(ANY(3, 4), requires_grad=True)
    v = ts.asarray(ANY(2, 4), requires_grad=True)
    y = x * 1.0
    y[ts.asarray([0, 2])] = v * 3
    y.sum().backward()
    expect = np.ones((3, 4))
    expect[[0, 2]] = 0
    np.testing.assert_allclose(x.grad.numpy(), expect)
    np.testing.assert_allclose(v.grad.numpy(), np.full((2, 4), 3.0))


def test_inplace_write_into_a_view_in_the_graph_rebases_the_base():
    # Note [Writes into views]; the full coverage is in autograd/test_grad_decompositions_scans_views.py.
    x = ts.asarray(ANY(3, 4), requires_grad=True)
    y = x * 2.0
    v = y[0]
    v += 1.0
    y[1:][0] = ts.asarray(ANY(4), requires_grad=True)
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    expect = np.full((3, 4), 2.0)
    expect[1] = 0
    np.testing.assert_allclose(x.grad.numpy(), expect)
    with ts.no_grad():
        y[0] += 1.0  # outside the graph it is allowed


def test_pow_gradient_with_a_python_float_exponent_keeps_float64():
    # b - 1 of a weak exponent was formed in float32 (two weak operands), off by ~1e-7.
    x = ts.asarray([2.0, 0.5], dtype=ts.float64, requires_grad=True)
    (x ** (1 / 3)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (1 / 3) * np.array([2.0, 0.5]) ** (1 / 3 - 1), rtol=1e-15)


def test_real_and_imag_are_attributes_like_numpy_and_torch():
    z = ts.asarray([1 + 2j, -3 - 4j])
    np.testing.assert_array_equal(z.real.numpy(), [1.0, -3.0])
    np.testing.assert_array_equal(z.imag.numpy(), [2.0, -4.0])
