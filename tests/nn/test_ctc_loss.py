"""F.ctc_loss (the C++ op csrc/ops/nn/loss_ctc.cpp) against torch.nn.functional.ctc_loss:
values and gradients over every target form (padded, concatenated, unbatched), length form
(tensors of any integer dtype, int lists and tuples), reduction, zero_infinity, blank, empty
targets and impossible alignments; gradcheck in float64; the module; double backward; errors
(class as torch's, message naming the op)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import tessera as ts
from tessera import nn
from tessera.nn import functional as F
from harness import close, same_as_torch, to_np, tt

TF = torch.nn.functional
REDUCTIONS = ["mean", "sum", "none"]
DTYPES = [np.float32, np.float64]


def _ctc_case(seed, T=12, N=4, C=6, blank=0, s_max=5, impossible=False):
    """Random log-probs, lengths and targets (labels avoid blank; some repeats)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, N, C))
    in_len = rng.integers(max(1, T // 2), T + 1, N)
    in_len[0] = T
    tgt_len = rng.integers(0, s_max + 1, N)
    labels = [c for c in range(C) if c != blank]
    tg = rng.choice(labels, size=(N, s_max))
    if s_max > 1:
        tg[:, 1] = tg[:, 0]  # repeated labels need a blank between them
    if impossible:
        tg[-1] = labels[0]
        tgt_len[-1] = s_max
        in_len[-1] = s_max  # s_max repeats need 2 s_max - 1 frames
    return x, tg, in_len, tgt_len


def _ctc_both(x, tg, in_len, tgt_len, dt, concat=False, leaf_logp=False, lengths="tensor",
              seed=5, **kw):
    """ctc_loss on tessera and torch (through log_softmax of the logits, or on leaf
    log-probabilities); returns (outputs, input gradients) of each. lengths: 'tensor',
    'int32' (int32 tensors), 'list' or 'tuple'."""
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    src = (lp if leaf_logp else x).astype(dt)
    if concat:
        tg = np.concatenate([row[:n] for row, n in zip(tg, tgt_len)]).astype(np.int64)
    res = []
    for mod, Fn in ((ts, F), (torch, TF)):
        leaf = (mod.asarray(src, requires_grad=True) if mod is ts
                else torch.tensor(src, requires_grad=True))
        logp = leaf if leaf_logp else Fn.log_softmax(leaf, dim=-1)
        tgt = mod.asarray(tg) if mod is ts else torch.tensor(tg)
        if lengths in ("list", "tuple"):
            conv = list if lengths == "list" else tuple
            il, tl = conv(int(v) for v in in_len), conv(int(v) for v in tgt_len)
        else:
            dtype = np.int32 if lengths == "int32" else np.int64
            il, tl = (mod.asarray(a.astype(dtype)) if mod is ts else torch.tensor(a.astype(dtype))
                      for a in (np.asarray(in_len), np.asarray(tgt_len)))
        out = Fn.ctc_loss(logp, tgt, il, tl, **kw)
        g = np.random.default_rng(seed).standard_normal(tuple(out.shape)).astype(dt)
        out.backward(mod.asarray(g) if mod is ts else torch.tensor(g))
        res.append((out, leaf.grad))
    return res


def _tol(dt):
    return dict(rtol=1e-4, atol=1e-5) if dt == np.float32 else dict(rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("concat", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_ctc_matches_torch(seed, concat, red, dt) -> None:
    blank = [0, 5, 2, 0][seed]
    case = _ctc_case(seed, T=[12, 7, 20, 3][seed], N=[4, 1, 3, 2][seed], blank=blank,
                     s_max=[5, 3, 6, 1][seed])
    for leaf_logp in (False, True):
        (ys, gs), (yt, gt) = _ctc_both(*case, dt, concat=concat, leaf_logp=leaf_logp,
                                       blank=blank, reduction=red)
        assert ys.dtype.name == str(yt.dtype).replace("torch.", "")
        close(ys, yt, **_tol(dt))
        close(gs, gt, **_tol(dt))


@st.composite
def _ctc_cases(draw):
    T = draw(st.integers(1, 12))
    N = draw(st.integers(1, 4))
    C = draw(st.integers(2, 6))
    S = draw(st.integers(0, 5))
    blank = draw(st.integers(0, C - 1))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((T, N, C)) * draw(st.sampled_from([1.0, 4.0]))
    in_len = rng.integers(0, T + 1, N)
    tgt_len = rng.integers(0, S + 1, N)
    labels = [c for c in range(C) if c != blank]
    tg = rng.choice(labels, size=(N, S + draw(st.integers(0, 2))))  # padding past S too
    if S > 1 and draw(st.booleans()):
        tg[:, 1] = tg[:, 0]  # repeats
    return x, tg, in_len, tgt_len, blank


@given(_ctc_cases(), st.sampled_from(["padded", "concat", "unbatched"]),
       st.sampled_from(["tensor", "int32", "list", "tuple"]), st.sampled_from(REDUCTIONS),
       st.booleans(), st.booleans(), st.sampled_from(DTYPES))
def test_ctc_hypothesis(case, form, lengths, red, zero_infinity, leaf_logp, dt) -> None:
    """Every shape/form/length combination, incl. zero-length targets, zero-length inputs and
    impossible alignments (infinite losses: NaN gradients without zero_infinity, as torch's)."""
    x, tg, in_len, tgt_len, blank = case
    if form == "unbatched":
        x, tg, in_len, tgt_len = x[:, 0], tg[0, :tgt_len[0]], in_len[:1], tgt_len[:1]
        if lengths in ("tensor", "int32"):  # 0-d length tensors
            in_len, tgt_len = in_len.reshape(()), tgt_len.reshape(())
    (ys, gs), (yt, gt) = _ctc_both(x, tg, in_len, tgt_len, dt, concat=form == "concat",
                                   leaf_logp=leaf_logp, lengths=lengths, blank=blank,
                                   reduction=red, zero_infinity=zero_infinity)
    assert tuple(ys.shape) == tuple(yt.shape)
    close(ys, yt, **_tol(dt))
    close(gs, gt, **_tol(dt))


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("red", REDUCTIONS)
def test_ctc_impossible_alignments_and_empty(red, zero_infinity) -> None:
    x, tg, in_len, tgt_len = _ctc_case(7, T=10, N=4, s_max=4, impossible=True)
    tgt_len[1], in_len[2], tgt_len[2] = 0, 0, 0  # empty target; no frames and no labels
    (ys, gs), (yt, gt) = _ctc_both(x, tg, in_len, tgt_len, np.float64,
                                   zero_infinity=zero_infinity, reduction=red)
    close(ys, yt, 1e-9, 1e-11)
    # (without zero_infinity torch's gradient of the impossible sample is NaN: ours too)
    close(gs, gt, 1e-9, 1e-11)
    assert np.isnan(gs.numpy()).any() == (not zero_infinity)


def test_ctc_unbatched_module_and_gradcheck() -> None:
    x, tg, in_len, tgt_len = _ctc_case(8, T=9, N=1, s_max=3)
    tgt_len[0] = 3  # unbatched 1-D targets hold exactly target_lengths labels
    lp = x[:, 0] - np.log(np.exp(x[:, 0]).sum(-1, keepdims=True))
    for red in REDUCTIONS:
        ours = nn.CTCLoss(blank=0, reduction=red)(tt(lp), tt(tg[0]), tt(in_len[0]), tt(tgt_len[0]))
        theirs = torch.nn.CTCLoss(blank=0, reduction=red)(torch.tensor(lp), torch.tensor(tg[0]),
                                                           torch.tensor(in_len[0]),
                                                           torch.tensor(tgt_len[0]))
        close(ours, theirs, 1e-10, 1e-12)
    # gradcheck through log_softmax (torch's CTC gradient is the logits' gradient)
    x, tg, in_len, tgt_len = _ctc_case(9, T=6, N=2, C=4, s_max=2)
    assert ts.testing.gradcheck(
        lambda a: F.ctc_loss(F.log_softmax(a, dim=-1), tt(tg), tt(in_len), tt(tgt_len),
                             reduction="sum"), [tt(x, requires_grad=True)])
    assert ts.testing.gradcheck(
        lambda a: F.ctc_loss(F.log_softmax(a, dim=-1), tt(tg), list(in_len), list(tgt_len),
                             reduction="mean", zero_infinity=True), [tt(x, requires_grad=True)])


@pytest.mark.parametrize("blank", [0, 3])
def test_ctc_gradcheck_float64_forms(blank) -> None:
    """gradcheck (through log_softmax) with concatenated targets, a blank other than 0,
    a zero-length target and an impossible alignment zeroed by zero_infinity."""
    x, tg, in_len, tgt_len = _ctc_case(11, T=7, N=3, C=5, blank=blank, s_max=3, impossible=True)
    tgt_len[0] = 0
    cat = np.concatenate([row[:n] for row, n in zip(tg, tgt_len)]).astype(np.int64)
    for red in REDUCTIONS:
        assert ts.testing.gradcheck(
            lambda a, r=red: F.ctc_loss(F.log_softmax(a, dim=-1), tt(cat), tuple(in_len),
                                        tuple(tgt_len), blank=blank, reduction=r,
                                        zero_infinity=True), [tt(x, requires_grad=True)])


def test_ctc_is_one_cpp_op() -> None:
    """F.ctc_loss is the binding itself, with torch's signature; one CtcLossBackward0 node."""
    assert F.ctc_loss is ts._C.ctc_loss
    assert nn.functional.loss.ctc_loss is F.ctc_loss
    assert list(inspect.signature(F.ctc_loss).parameters) == \
        list(inspect.signature(TF.ctc_loss).parameters)
    assert {k: p.default for k, p in inspect.signature(F.ctc_loss).parameters.items()} == \
        {k: p.default for k, p in inspect.signature(TF.ctc_loss).parameters.items()}
    lp = tt(np.log(np.full((4, 2, 3), 1 / 3)), requires_grad=True)
    out = F.ctc_loss(lp, tt([[1, 2], [2, 2]]), [4, 4], [2, 1], reduction="none")
    assert out.grad_fn.name() == "CtcLossBackward0"
    # the module passes its settings through
    m = nn.CTCLoss(blank=2, reduction="sum", zero_infinity=True)
    got = m(lp, tt([[1, 0], [0, 1]]), tt([4, 1]), tt([2, 2]))
    want = torch.nn.CTCLoss(blank=2, reduction="sum", zero_infinity=True)(
        torch.tensor(lp.detach().numpy()), torch.tensor([[1, 0], [0, 1]]), torch.tensor([4, 1]),
        torch.tensor([2, 2]))
    close(got, want, 1e-12, 1e-12)


def test_ctc_double_backward_raises_as_torch() -> None:
    x, tg, in_len, tgt_len = _ctc_case(3, T=6, N=2, C=4, s_max=2)

    def run(m):
        leaf = m.asarray(x) if m is ts else torch.tensor(x)
        leaf.requires_grad_(True)
        Fn = F if m is ts else TF
        loss = Fn.ctc_loss(Fn.log_softmax(leaf, dim=-1), m.asarray(tg) if m is ts else
                           torch.tensor(tg), [int(v) for v in in_len], [int(v) for v in tgt_len])
        g, = m.autograd.grad(loss, leaf, create_graph=True)
        return m.autograd.grad(g.sum(), leaf)
    same_as_torch(run)
    with pytest.raises(RuntimeError, match="CtcLossBackward.*not implemented"):
        run(ts)


def test_ctc_torch_forms_where_the_python_version_differed() -> None:
    """PyTorch's behaviour (the Python version differed): non-integer targets are cast as
    torch casts them; 16-bit and integer log_probs are NotImplementedError; lengths must be
    both tensors or both int sequences; empty log_probs raise."""
    lp = np.log(np.random.default_rng(0).dirichlet(np.ones(4), (5, 2)))
    tg = np.array([[1, 2], [3, 3]])

    def call(m, lp=lp, tg=tg, il=(5, 5), tl=(2, 2), **kw):
        Fn = F if m is ts else TF
        mk = ts.asarray if m is ts else torch.tensor
        return Fn.ctc_loss(mk(lp) if isinstance(lp, np.ndarray) else lp,
                           mk(tg) if isinstance(tg, np.ndarray) else tg,
                           mk(il) if isinstance(il, np.ndarray) else il,
                           mk(tl) if isinstance(tl, np.ndarray) else tl, **kw)

    def val(f):
        same_as_torch(lambda m: to_np(f(m)).tolist())

    val(lambda m: call(m, tg=tg.astype(np.float32)))
    val(lambda m: call(m, tg=tg.astype(np.uint8)))
    val(lambda m: call(m, tg=(tg > 1)[:, :1], tl=(1, 1), blank=2))
    val(lambda m: call(m, il=np.array([[5], [5]]), tl=np.array([2, 2])))  # 2-D lengths flatten
    for dt in ("float16", "bfloat16", "int64"):
        same_as_torch(lambda m, dt=dt: call(m, lp=(ts.asarray(lp) if m is ts else torch.tensor(lp))
                                            .to(getattr(m, dt))), exact_error=True)
    with pytest.raises(NotImplementedError, match="ctc_loss: not implemented for log_probs of "
                       "dtype float16"):
        call(ts, lp=ts.asarray(lp).astype(ts.float16))
    for il, tl in ((np.array([5, 5]), (2, 2)), ((5, 5), np.array([2, 2])), (5, 2),
                   (np.array([5.0, 5.0]), np.array([2, 2]))):
        same_as_torch(lambda m, il=il, tl=tl: call(m, il=il, tl=tl))
    with pytest.raises(TypeError, match="both be Tensors or both be lists/tuples of ints"):
        call(ts, il=np.array([5, 5]))
    with pytest.raises(TypeError, match="input_lengths must be integers, got float64"):
        call(ts, il=np.array([5.0, 5.0]), tl=np.array([2, 2]))
    same_as_torch(lambda m: call(m, lp=lp[:0], il=(0, 0), tl=(0, 0)))
    same_as_torch(lambda m: call(m, lp=lp[:, :0], tg=tg[:0], il=(), tl=()))
    with pytest.raises(ValueError, match=r"must not be empty, got shape \(0, 2, 4\)"):
        call(ts, lp=lp[:0], il=(0, 0), tl=(0, 0))


def test_ctc_errors() -> None:
    lp = ts.zeros((5, 2, 4))
    tg = ts.asarray([[1, 2], [3, 3]])
    with pytest.raises(ValueError, match=r"ctc_loss: blank must be in label range \[0, 4\)"):
        F.ctc_loss(lp, tg, [5, 5], [2, 2], blank=4)
    with pytest.raises(ValueError, match="blank must be in label range"):
        F.ctc_loss(lp, tg, [5, 5], [2, 2], blank=-1)
    with pytest.raises(ValueError, match=r"input_lengths must be in \[0, 5\].*got 6 at index 0"):
        F.ctc_loss(lp, tg, [6, 5], [2, 2])
    with pytest.raises(ValueError, match="input_lengths must be in"):
        F.ctc_loss(lp, tg, [-1, 5], [2, 2])
    with pytest.raises(ValueError, match="target_lengths must be non-negative, got -1 at index 1"):
        F.ctc_loss(lp, tg, [5, 5], [2, -1])
    with pytest.raises(ValueError, match="batch_size 2"):
        F.ctc_loss(lp, tg, [5, 5, 5], [2, 2])
    with pytest.raises(ValueError, match=r"padded targets must be \(N=2, S >= 3\).*\(2, 2\)"):
        F.ctc_loss(lp, tg, [5, 5], [3, 2])
    with pytest.raises(ValueError, match="padded targets"):
        F.ctc_loss(lp, ts.asarray([[1, 2]]), [5, 5], [2, 2])
    with pytest.raises(ValueError, match="sum\\(target_lengths\\) = 2 entries, got 3"):
        F.ctc_loss(lp, ts.asarray([1, 2, 3]), [5, 5], [1, 1])
    with pytest.raises(IndexError, match=r"target labels must be in \[0, 4\).*got 4 at sample 0"):
        F.ctc_loss(lp, ts.asarray([[1, 4], [3, 3]]), [5, 5], [2, 2])
    with pytest.raises(IndexError, match="target labels"):
        F.ctc_loss(lp, ts.asarray([[1, -1], [3, 3]]), [5, 5], [2, 2])
    # a label past the target's length is padding, never read
    F.ctc_loss(lp, ts.asarray([[1, 9], [3, 3]]), [5, 5], [1, 2])
    # PyTorch documents that targets cannot contain blank but computes a meaningless number
    with pytest.raises(ValueError, match="must not contain the blank index 0 .sample 0, "
                       "position 1"):
        F.ctc_loss(lp, ts.asarray([[1, 0], [3, 3]]), [5, 5], [2, 2])
    with pytest.raises(ValueError, match="blank index 3"):
        F.ctc_loss(lp, ts.asarray([1, 3, 2]), [5, 5], [1, 2], blank=3)
    with pytest.raises(NotImplementedError, match="log_probs of dtype int64"):
        F.ctc_loss(ts.zeros((5, 2, 4), dtype=ts.int64), tg, [5, 5], [2, 2])
    with pytest.raises(TypeError, match="input_lengths must be integers"):
        F.ctc_loss(lp, tg, [5.0, 5.0], [2, 2])
    with pytest.raises(TypeError, match="input_lengths must be integers"):
        F.ctc_loss(lp, tg, [True, 5], [2, 2])
    with pytest.raises(TypeError, match="target_lengths must be a Tensor or a list/tuple"):
        F.ctc_loss(lp, tg, [5, 5], {2, 3})
    with pytest.raises(TypeError, match="target_lengths must be integers, got bool"):
        F.ctc_loss(lp, tg, ts.asarray([5, 5]), ts.asarray([True, True]))
    with pytest.raises(TypeError, match="complex"):
        F.ctc_loss(lp, tg.astype(ts.complex64), [5, 5], [2, 2])
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.ctc_loss(lp, tg, [5, 5], [2, 2], reduction="avg")
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.ctc_loss(lp, tg, [5, 5], [2, 2], reduction=1)
    with pytest.raises(ValueError, match=r"\(T, N, C\)"):
        F.ctc_loss(ts.zeros(5), tg, [5, 5], [2, 2])
    with pytest.raises(ValueError, match=r"targets must be 1-D \(concatenated\) or 2-D"):
        F.ctc_loss(lp, ts.zeros((2, 2, 1), dtype=ts.int64), [5, 5], [2, 2])
    with pytest.raises(TypeError):
        F.ctc_loss(lp, [[1, 2], [3, 3]], [5, 5], [2, 2])  # targets must be a Tensor (torch)


@pytest.mark.skipif(not ts.cuda.is_available(), reason="needs a CUDA device")
def test_ctc_cuda_matches_cpu() -> None:
    """Device tensors (Note [CTC on the host]): same values and gradients as on the CPU, on
    the input's device."""
    x, tg, in_len, tgt_len = _ctc_case(4, T=15, N=3, C=5, s_max=4)
    outs = []
    for dev in ("cpu", "cuda"):
        leaf = ts.asarray(x, device=dev, requires_grad=True)
        loss = F.ctc_loss(F.log_softmax(leaf, dim=-1), ts.asarray(tg, device=dev),
                          ts.asarray(in_len, device=dev), ts.asarray(tgt_len), reduction="mean")
        loss.backward()
        assert loss.device.type == dev and leaf.grad.device.type == dev
        outs.append((loss.cpu().numpy(), leaf.grad.cpu().numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-10, atol=1e-12)


def test_torch_top_level_form() -> None:
    """torch.ctc_loss takes the reduction as its enum (0 none, 1 mean, 2 sum) and reduces
    nothing when it is left out: _C._torch_nn.ctc_loss (python/tessera/_nn_ops.py's form)."""
    x, tg, in_len, tgt_len = _ctc_case(6, T=8, N=3, C=5, s_max=3)
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    il, tl = [int(v) for v in in_len], [int(v) for v in tgt_len]
    ours, theirs = ts._C._torch_nn.ctc_loss, torch.ctc_loss
    close(ours(tt(lp), tt(tg), il, tl), theirs(torch.tensor(lp), torch.tensor(tg), il, tl),
          1e-12, 1e-12)
    for r in (0, 1, 2):
        close(ours(tt(lp), tt(tg), tt(in_len), tt(tgt_len), 0, r, True),
              theirs(torch.tensor(lp), torch.tensor(tg), torch.tensor(in_len),
                     torch.tensor(tgt_len), 0, r, True), 1e-12, 1e-12)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        ours(tt(lp), tt(tg), il, tl, 0, 3)
