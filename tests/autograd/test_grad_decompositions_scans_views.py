"""Gradients that used to raise at backward (issue #4's gaps): qr, svd, pinv, cumulative_prod,
repeat with per-element counts, the real FFTs, and in-place writes into views of tensors in
the graph. Each is compared with PyTorch on the same inputs and cotangents (float32 and
float64) and checked with gradcheck in float64."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera.testing import gradcheck, gradgradcheck
from harness import compare_grads, compare_leaf_grads, to_np

rng = np.random.default_rng(11)


def leaf(a):
    return ts.asarray(np.asarray(a, dtype=np.result_type(np.asarray(a).dtype, np.float64)).copy(),
                      requires_grad=True)


# ---- qr
@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (2, 4, 3), (3, 5), (2, 2, 4)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_qr_reduced_matches_torch(shape, dtype):
    a = rng.standard_normal(shape)
    compare_grads(lambda x: tuple(ts.linalg.qr(x)), lambda x: tuple(torch.linalg.qr(x)), [a], dtype=dtype, generator=rng)


def test_qr_complete_square_or_wide_and_complex():
    compare_grads(lambda x: tuple(ts.linalg.qr(x, mode="complete")),
                  lambda x: tuple(torch.linalg.qr(x, mode="complete")), [rng.standard_normal((3, 5))], generator=rng)
    c = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))
    compare_grads(lambda x: tuple(ts.linalg.qr(x)), lambda x: tuple(torch.linalg.qr(x)), [c], generator=rng)
    w = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    compare_grads(lambda x: tuple(ts.linalg.qr(x)), lambda x: tuple(torch.linalg.qr(x)), [w], generator=rng)


def test_qr_transposed_input_and_gradcheck():
    compare_grads(lambda x: tuple(ts.linalg.qr(x)), lambda x: tuple(torch.linalg.qr(x)),
                  [rng.standard_normal((4, 3))], transpose=True, generator=rng)
    assert gradcheck(lambda x: ts.linalg.qr(x).Q, (leaf(rng.standard_normal((4, 3))),))
    assert gradcheck(lambda x: ts.linalg.qr(x).R, (leaf(rng.standard_normal((3, 5))),))
    assert gradgradcheck(lambda x: ts.linalg.qr(x).R, (leaf(rng.standard_normal((3, 2))),))


def test_qr_complete_tall_raises_like_torch():
    x = leaf(rng.standard_normal((4, 2)))
    q, _ = ts.linalg.qr(x, mode="complete")
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        q.sum().backward()


# ---- svd (gauge-invariant losses: singular vectors are defined up to sign / phase)
def _svd_loss_ts(x, full=False):
    u, s, vh = ts.linalg.svd(x, full_matrices=full)
    k = s.shape[-1]
    w = ts.asarray(np.linspace(0.5, 1.5, k))
    return ts.sum(ts.abs(u[..., :, :k]) ** 2 * w) + ts.sum(ts.abs(vh[..., :k, :]) ** 3) + ts.sum(s * w), \
        (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]


def _svd_loss_torch(x, full=False):
    u, s, vh = torch.linalg.svd(x, full_matrices=full)
    k = s.shape[-1]
    w = torch.tensor(np.linspace(0.5, 1.5, k))
    return (u[..., :, :k].abs() ** 2 * w).sum() + (vh[..., :k, :].abs() ** 3).sum() + (s * w).sum(), \
        (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]


@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5), (2, 4, 3), (2, 3, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_matches_torch(shape, full):
    compare_grads(lambda x: _svd_loss_ts(x, full), lambda x: _svd_loss_torch(x, full), [rng.standard_normal(shape)], generator=rng)


def test_svd_float32_complex_and_gradcheck():
    compare_grads(_svd_loss_ts, _svd_loss_torch, [rng.standard_normal((4, 3))], dtype="float32", generator=rng)
    c = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))
    compare_grads(_svd_loss_ts, _svd_loss_torch, [c], rtol=1e-7, generator=rng)
    compare_grads(_svd_loss_ts, _svd_loss_torch, [c.T.copy()], rtol=1e-7, generator=rng)
    assert gradcheck(lambda x: _svd_loss_ts(x)[0], (leaf(rng.standard_normal((4, 3))),))
    assert gradcheck(lambda x: _svd_loss_ts(x)[0], (leaf(rng.standard_normal((2, 5))),))
    assert gradcheck(lambda x: ts.linalg.svd(x, full_matrices=False).S, (leaf(rng.standard_normal((3, 4))),))


def test_svd_only_singular_values_used_with_repeated_values():
    # gU, gVh undefined: no 1/(s_i^2 - s_j^2) terms, so repeated singular values are fine.
    x = leaf(np.eye(3))
    _, s, _ = ts.linalg.svd(x)
    s.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.eye(3), atol=1e-12)


def test_svd_complex_phase_dependent_loss_raises_like_torch():
    c = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    x = ts.asarray(c, requires_grad=True)
    u, _, _ = ts.linalg.svd(x, full_matrices=False)
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        ts.sum(ts.real(u)).backward()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2), st.integers(1, 5), st.integers(1, 5), st.booleans(), st.integers(0, 2**31 - 1))
def test_hypothesis_qr_svd_shapes(batch, m, n, transposed, seed):
    r = np.random.default_rng(seed)
    a = r.standard_normal((batch, m, n) if batch else (m, n))
    compare_grads(lambda x: tuple(ts.linalg.qr(x)), lambda x: tuple(torch.linalg.qr(x)), [a],
                  transpose=transposed, rtol=1e-7, generator=rng)
    compare_grads(_svd_loss_ts, _svd_loss_torch, [a], transpose=transposed, rtol=1e-6, generator=rng)


# ---- pinv
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 3, 2)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pinv_matches_torch(shape, dtype):
    compare_grads(ts.linalg.pinv, torch.linalg.pinv, [rng.standard_normal(shape)], dtype=dtype, generator=rng)


def test_pinv_rank_deficient_complex_and_gradcheck():
    a = np.outer(rng.standard_normal(4), rng.standard_normal(3))  # rank 1
    compare_grads(ts.linalg.pinv, torch.linalg.pinv, [a], rtol=1e-6, generator=rng)
    c = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    compare_grads(ts.linalg.pinv, torch.linalg.pinv, [c], generator=rng)
    assert gradcheck(ts.linalg.pinv, (leaf(rng.standard_normal((4, 3))),))
    assert gradgradcheck(ts.linalg.pinv, (leaf(rng.standard_normal((2, 3))),))


def test_matrix_rank_stays_non_differentiable():
    r = ts.linalg.matrix_rank(leaf(rng.standard_normal((3, 3))))
    assert r.dtype == ts.int64 and not r.requires_grad


# ---- cumulative_prod
CUMPROD_CASES = [
    np.array([2.0, 3.0, 0.5, 1.5]),
    np.array([2.0, 0.0, 3.0, 4.0, 0.5]),
    np.array([0.0, 2.0, 0.0, 3.0, 4.0]),
    np.array([2.0, 3.0, 0.0]),
    np.array([0.0, 0.0, 0.0]),
    np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.5], [2.0, 2.0, 0.0], [1.5, -1.0, 2.0]]),
]


@pytest.mark.parametrize("a", CUMPROD_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cumprod_with_zeros_matches_torch(a, dtype):
    for axis in range(a.ndim):
        compare_grads(lambda x: ts.cumulative_prod(x, axis=axis), lambda x: torch.cumprod(x, dim=axis), [a],
                      dtype=dtype, generator=rng)


@pytest.mark.parametrize("a", CUMPROD_CASES)
def test_cumprod_gradcheck_and_double_backward(a):
    for axis in range(a.ndim):
        assert gradcheck(lambda x: ts.cumulative_prod(x, axis=axis), (leaf(a),))
        assert gradgradcheck(lambda x: ts.cumulative_prod(x, axis=axis), (leaf(a),))


def test_cumprod_include_initial_dtype_complex_and_transposed():
    a = rng.uniform(0.5, 2, (3, 4))
    compare_grads(lambda x: ts.cumulative_prod(x, axis=1, include_initial=True),
                  lambda x: torch.cumprod(torch.cat([torch.ones(3, 1, dtype=x.dtype), x], 1), dim=1), [a], generator=rng)
    compare_grads(lambda x: ts.cumulative_prod(x, axis=0), lambda x: torch.cumprod(x, dim=0), [a], transpose=True, generator=rng)
    compare_grads(lambda x: ts.cumulative_prod(x, axis=1, dtype=ts.float64),
                  lambda x: torch.cumprod(x, dim=1, dtype=torch.float64), [a], dtype="float32", generator=rng)
    c = a + 1j * rng.standard_normal((3, 4))
    c[1, 2] = 0
    compare_grads(lambda x: ts.cumulative_prod(x, axis=1), lambda x: torch.cumprod(x, dim=1), [c], generator=rng)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_hypothesis_cumprod_with_random_zeros(rows, n, seed):
    r = np.random.default_rng(seed)
    a = r.uniform(0.5, 2, (rows, n)) * (r.random((rows, n)) > 0.3)
    compare_grads(lambda x: ts.cumulative_prod(x, axis=1), lambda x: torch.cumprod(x, dim=1), [a], generator=rng)


# ---- repeat with per-element counts
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_repeat_counts_matches_torch(dtype):
    a = rng.standard_normal((3, 4))
    counts = np.array([2, 0, 1, 3])
    compare_grads(lambda x: ts.repeat(x, ts.asarray(counts), axis=1),
                  lambda x: torch.repeat_interleave(x, torch.tensor(counts), dim=1), [a], dtype=dtype, generator=rng)
    compare_grads(lambda x: ts.repeat(x, ts.asarray(np.array([1, 3, 2])), axis=0),
                  lambda x: torch.repeat_interleave(x, torch.tensor([1, 3, 2]), dim=0), [a], dtype=dtype,
                  transpose=True, generator=rng)
    flat = np.arange(12) % 3
    compare_grads(lambda x: ts.repeat(x, ts.asarray(flat)), lambda x: torch.repeat_interleave(x, torch.tensor(flat)),
                  [a], dtype=dtype, generator=rng)


def test_repeat_counts_gradcheck():
    c = ts.asarray(np.array([1, 0, 2]))
    assert gradcheck(lambda x: ts.repeat(x, c, axis=0), (leaf(rng.standard_normal((3, 2))),))
    assert gradgradcheck(lambda x: ts.repeat(x, c, axis=0) ** 2, (leaf(rng.standard_normal((3, 2))),))


# ---- real FFTs
NORMS = ["backward", "ortho", "forward"]


@pytest.mark.parametrize("name,complex_in", [("rfft", False), ("ihfft", False), ("irfft", True), ("hfft", True)])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 6, 7, 3, 12])
@pytest.mark.parametrize("double", [True, False])
def test_1d_real_ffts_match_torch(name, complex_in, norm, n, double):
    a = rng.standard_normal((3, 8))
    if complex_in:
        a = a[:, :5] + 1j * rng.standard_normal((3, 5))
    dtype = {(False, True): "float64", (False, False): "float32", (True, True): "complex128",
             (True, False): "complex64"}[complex_in, double]
    for axis, transposed in ((-1, False), (0, True)):
        compare_grads(lambda x: getattr(ts.fft, name)(x, n=n, axis=axis, norm=norm),
                      lambda x: getattr(torch.fft, name)(x, n=n, dim=axis, norm=norm), [a], dtype=dtype,
                      transpose=transposed, generator=rng)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s_axes", [(None, None), ((4, 6), None), ((5, 7), (0, 2)), ((3,), (1,)), (None, (2, 0))])
@pytest.mark.parametrize("double", [True, False])
def test_rfftn_irfftn_match_torch(norm, s_axes, double):
    s, axes = s_axes
    a = rng.standard_normal((4, 3, 6))
    compare_grads(lambda x: ts.fft.rfftn(x, s=s, axes=axes, norm=norm),
                  lambda x: torch.fft.rfftn(x, s=s, dim=axes, norm=norm), [a],
                  dtype="float64" if double else "float32", generator=rng)
    c = rng.standard_normal((4, 3, 4)) + 1j * rng.standard_normal((4, 3, 4))
    compare_grads(lambda x: ts.fft.irfftn(x, s=s, axes=axes, norm=norm),
                  lambda x: torch.fft.irfftn(x, s=s, dim=axes, norm=norm), [c],
                  dtype="complex128" if double else "complex64", transpose=True, generator=rng)


def test_real_ffts_transposed_inputs_and_gradcheck():
    a = rng.standard_normal((5, 4))
    compare_grads(lambda x: ts.fft.rfft(x, axis=0), lambda x: torch.fft.rfft(x, dim=0), [a], transpose=True, generator=rng)
    r = leaf(rng.standard_normal((2, 7)))
    c = ts.asarray(rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4)), requires_grad=True)
    assert gradcheck(lambda x: ts.real(ts.fft.rfft(x, n=6, norm="ortho")), (r,))
    assert gradcheck(lambda x: ts.imag(ts.fft.ihfft(x, n=9)), (r,))
    assert gradcheck(lambda x: ts.fft.irfft(x, n=7), (c,))
    assert gradcheck(lambda x: ts.fft.hfft(x, n=6, norm="forward"), (c,))
    assert gradcheck(lambda x: ts.fft.irfftn(x, s=(3, 5)), (c,))
    assert gradgradcheck(lambda x: ts.abs(ts.fft.rfft(x)) ** 2, (r,))


# ---- in-place writes into views of tensors in the graph
def _setitem_row(lib, x):
    y = x * 2
    y[0] = 5
    return y


def _mul_column(lib, x):
    y = x * 2
    y[:, 1].mul_(3)
    return y


def _write_value_into_view(lib, x, w):
    y = x * 2
    v = y[1:]
    v[0] = w * 3
    return y * y


def _strided_view_add(lib, x, w):
    y = x + 0
    v = y[:, ::2]
    v += w
    return lib.sin(y)


def _chained_views_and_transpose(lib, x, w):
    y = x * 1.5
    y.mT[1][1:] = w ** 2
    y[0][1:].mul_(w[1:3])
    return y


def _other_views_see_the_write(lib, x):
    y = x * 2
    a, b = y[0], y[:, 0]
    a.mul_(3)  # b shares y[0, 0]
    return b * a[0] + a.sum()


def _view_used_after_its_write(lib, x):
    y = x * 3.0
    v = y[1]
    v.mul_(2)
    return v ** 2


def _base_written_then_old_view_used(lib, x):
    y = x * 2
    v = y[:, 1:]
    y.mul_(x)  # the base changes: v reads the new values
    return v * 1.0


def _advanced_writes_into_views(lib, x, w):
    y = x * 2
    y[1][lib.tensor([0, 2]) if lib is torch else ts.asarray([0, 2])] = w[:2] * 3
    row = y[:, 1]
    row[row > 0] = 0.5
    return y


@pytest.mark.parametrize("fn,shapes", [
    (_setitem_row, [(3, 4)]), (_mul_column, [(3, 4)]), (_write_value_into_view, [(3, 4), (4,)]),
    (_strided_view_add, [(3, 5), (3, 3)]), (_chained_views_and_transpose, [(4, 3), (3,)]),
    (_other_views_see_the_write, [(3, 3)]), (_advanced_writes_into_views, [(3, 3), (3,)]), (_view_used_after_its_write, [(3, 2)]),
    (_base_written_then_old_view_used, [(2, 3)]),
])
def test_inplace_writes_into_views_match_torch(fn, shapes):
    compare_leaf_grads(lambda lib, dt, *xs: fn(lib, *xs), [rng.standard_normal(s) for s in shapes],
                       generator=rng)


def test_writes_into_negative_step_and_flipped_views():
    # PyTorch has neither negative steps nor flip views: compare with its index writes.
    a, b = rng.standard_normal((3, 3)), rng.standard_normal(3)
    x, w = leaf(a), leaf(b)
    y = x * 2
    y[::-2, 1] = w[:2] * 4
    v = ts.flip(y, axis=1)[0]
    v += w
    xt = torch.tensor(a, requires_grad=True)
    wt = torch.tensor(b, requires_grad=True)
    yt = xt * 2
    yt[[2, 0], 1] = wt[:2] * 4
    yt[0, [2, 1, 0]] += wt
    np.testing.assert_allclose(y.detach().numpy(), to_np(yt), rtol=1e-12)
    cot = rng.standard_normal((3, 3))
    ts.sum(y * ts.asarray(cot)).backward()
    (yt * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-12)


def test_view_write_grad_fn_names_and_gradcheck():
    x = leaf(rng.standard_normal((3, 4)))
    y = x * 2
    v = y[1]
    v.mul_(3)
    assert y.grad_fn.name() == "CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"

    def f(x):
        y = x * x
        y[1:, ::2] = y[:2, 1::2] + x[0, 0]  # (a product would save the view it reads)
        y[0].mul_(x[2])
        return y
    assert gradcheck(f, (leaf(rng.standard_normal((3, 4))),))
    assert gradgradcheck(f, (leaf(rng.standard_normal((3, 4))),))


def test_view_writes_that_cannot_be_followed_raise():
    x = leaf(rng.standard_normal((3, 4)))
    with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
        x[0].mul_(2.0)
    with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
        x[1:][0] = 1.0
    base = ts.zeros((3, 4))
    with ts.no_grad():
        v = base[0]  # made under no_grad: autograd can't name its base (PyTorch raises too)
    with pytest.raises(RuntimeError, match="does not track"):
        v[1:] = x[0, 1:]
    with pytest.raises(RuntimeError, match="does not track"):
        v += x[0]
    with pytest.raises(RuntimeError, match="does not track"):
        v[1:] += x[0, 1:]  # a view of such a view can't name the base either
    with ts.no_grad():
        x[0].mul_(2.0)  # parameter-update style writes stay allowed
    alone = (x * 2.0).detach()  # an alias of a temporary: nothing else sees its storage
    alone += x
    alone.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((3, 4)))
    x.grad = None
    y = x * 2.0
    y[0] = 1.0  # not a view: fine
    w = y.exp()
    y[1].mul_(2.0)  # exp saved its output, not y: still fine
    (w.sum() + y.sum()).backward()


def test_inplace_op_keeps_the_inputs_it_overwrites():
    # PyTorch keeps the original self for mul_/div_ (it raises for y.mul_(y); tessera keeps
    # the copy there too).
    a = rng.standard_normal((2, 3))
    x = leaf(a)
    y = x * 1.5
    y.mul_(y)
    y.div_(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 2.25), rtol=1e-12)
    compare_leaf_grads(lambda lib, dt, x, w: (lambda y: (y[1:].mul_(w), y)[1])(x * 2),
                       [a, rng.standard_normal(3)], generator=rng)


def test_saved_tensor_modified_through_a_view_still_raises():
    x = leaf(rng.standard_normal((3, 3)))
    y = x * 1.0
    z = y * y  # saves y
    y[0].mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an in-place"):
        z.sum().backward()


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(2, 5), st.integers(0, 2**31 - 1))
def test_hypothesis_setitem_into_basic_views(rows, cols, seed):
    r = np.random.default_rng(seed)
    r0, c0 = int(r.integers(0, rows - 1)), int(r.integers(0, cols - 1))
    step = int(r.integers(1, 3))
    key = (slice(r0, None), slice(c0, None, step))
    view_shape = (rows - r0, len(range(c0, cols, step)))

    def fn(lib, x, w):
        y = x * 3
        v = y[key]
        v[...] = w * w
        return y.T * 1.0

    xa, wa = r.standard_normal((rows, cols)), r.standard_normal(view_shape)
    compare_leaf_grads(lambda lib, dt, *xs: fn(lib, *xs), [xa, wa], generator=rng)


# ---- split: one node for all pieces (SplitWithSizesBackward), gradients concatenated
@pytest.mark.parametrize("sizes,dim", [([2, 3, 1], 1), (2, 0), ([0, 4, 2], -1), ([6], 1)])
@pytest.mark.parametrize("used", [(0, 1, 2), (1,), (0, 2)])
def test_split_gradients_match_torch(sizes, dim, used):
    shape = (4, 6)
    a = rng.standard_normal(shape)
    w = rng.standard_normal(shape)

    def run(M, x):
        parts = M.split(x, sizes, dim)
        ws = M.split(M.asarray(w) if M is ts else torch.tensor(w), sizes, dim)
        picked = [i for i in used if i < len(parts)] or [0]
        return sum(((parts[i] * ws[i]) ** 2).sum() for i in picked)

    x = leaf(a)
    tx = torch.tensor(a, requires_grad=True)
    out, tout = run(ts, x), run(torch, tx)
    out.backward()
    tout.backward()
    np.testing.assert_allclose(to_np(x.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_split_one_node_gradcheck_double_backward_and_inplace():
    x = leaf(rng.standard_normal((3, 7)))
    parts = ts.split(x, [3, 4], 1)
    assert type(parts[0].grad_fn).__name__ in ("SplitWithSizesBackward", "Node") or \
        "SplitWithSizes" in str(parts[0].grad_fn)
    assert parts[0].grad_fn is parts[1].grad_fn
    assert gradcheck(lambda t: ts.split(t, [3, 4], 1), (x,))
    assert gradgradcheck(lambda t: tuple(p * p for p in ts.split(t, [2, 5], 1)), (x,))
    # qkv = x.split(n, dim=2) as in nanoGPT, then an in-place write into one piece
    y = x * 1.0
    q, k = y.split([3, 4], 1)
    q.mul_(2.0)
    (y * y).sum().backward()
    tx = torch.tensor(to_np(x.detach()), requires_grad=True)
    ty = tx * 1.0
    ty[:, :3].mul_(2.0)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), tx.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="split"):
        ts.split(x, [3, 3], 1)
