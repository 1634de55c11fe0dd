"""Hostile sizes given to ops, fourth pass (issue 22): pads, scale factors, counts and lengths at
the ends of int64 that wrapped around into a small, wrong result (silent garbage) or reached
the allocator unchecked. The earlier passes are test_hostile_inputs.py (the sweep of extreme
integer arguments), test_hostile_sizes.py and test_hardening_inputs.py; probes that could
crash or hang run in a child interpreter (harness.run_probes)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from harness import run_probes

F = ts.nn.functional
M = 2**63 - 1


@pytest.mark.parametrize("pad,mode", [
    ((M, M), "replicate"), ((M, M), "circular"), ((M, 0), "replicate"),
    ((2**62, 2**62), "replicate"), ((-1, M), "reflect"), ((M, M), "constant"),
    ((-2**63, 0), "constant"), ((-2**63, 0), "circular"),
])
def test_pads_whose_padded_size_overflows_int64_raise(pad, mode) -> None:
    # Before: (2^63-1, 2^63-1) replicate-padded a dim of 3 to 3 + 2(2^63-1), wrapped around to
    # 1: a (1, 1, 1) result (torch: [[[0.]]], as wrong); (2^63-1, 0) leaked "cannot create
    # std::vector larger than max_size()".
    x = ts.ones(1, 1, 3)
    with pytest.raises(ValueError, match=rf"pad: {mode} padding .* gives a size past int64"):
        F.pad(x, pad, mode=mode)
    with pytest.raises(ValueError, match="past int64"):
        F.pad(ts.ones(1, 1, 3, dtype=ts.int64), pad, mode=mode)  # the per-axis path


def test_large_pads_raise_memory_error_naming_the_size() -> None:
    res = run_probes("""
        probe("replicate", lambda: F.pad(ts.ones(1, 1, 3), (2**40, 0), mode="replicate"))
        probe("constant", lambda: F.pad(ts.ones(3), (2**40, 2**40)))
        """)
    for name, (cls, msg) in res.items():
        assert cls == "MemoryError" and "GiB" in msg, (name, cls, msg)


@pytest.mark.parametrize("pad,mode", [
    ((-1, 2), "replicate"), ((-4, 5), "replicate"), ((-1, 2), "reflect"), ((2, 3), "reflect"),
    ((-1, 2), "circular"), ((2, -1), "circular"), ((-1, -1), "circular"), ((3, 4), "replicate"),
    ((-2**62, 2**62 + 5), "replicate"), ((4, 4), "circular"),
])
def test_pads_that_fit_match_torch(pad, mode) -> None:
    x = np.arange(4.0).reshape(1, 1, 4)
    want = torch.nn.functional.pad(torch.tensor(x), pad, mode=mode)
    for dtype in (ts.float64, ts.int64):  # the kernel and the per-axis path
        got = F.pad(ts.tensor(x, dtype=dtype), pad, mode=mode)
        assert got.tolist() == want.tolist(), (pad, mode, dtype)
    # (torch cannot take this one: "SymIntArrayRef expected to contain only concrete integers")
    assert F.pad(ts.tensor(x), (-M, M), mode="replicate").tolist() == [[[3.0] * 4]]


@pytest.mark.parametrize("make,x", [
    (lambda m: m.nn.Flatten(5, 9), (4,)), (lambda m: m.nn.Flatten(1, 0), (2, 3, 4)),
    (lambda m: m.nn.Unflatten(5, (2, 2)), (4,)), (lambda m: m.nn.Unflatten(0, (2, 2)), ()),
    (lambda m: m.nn.Unflatten(-3, (2, 2)), (4,)), (lambda m: m.nn.Unflatten(0, (0, -1)), (0,)),
], ids=["Flatten dims", "Flatten order", "Unflatten dim", "Unflatten 0-d", "Unflatten -3",
        "Unflatten 0"])
def test_flatten_modules_check_their_dims_like_torch(make, x) -> None:
    # Before: the modules took dims modulo ndim: Flatten(5, 9) returned a 1-D input as it was,
    # Flatten(1, 0) inserted a dim of 1 ((2, 1, 3, 4)), Unflatten(5, ...) split dim 0, a 0-d
    # input raised ZeroDivisionError, Unflatten(0, (0, -1)) of an empty dim made (0, 0).
    with pytest.raises((IndexError, RuntimeError)):
        make(torch)(torch.ones(x))
    with pytest.raises((IndexError, RuntimeError, ValueError), match="flatten"):
        make(ts)(ts.ones(x))


def test_flatten_modules_match_torch() -> None:
    x = np.arange(120.0).reshape(2, 3, 4, 5)
    for make in (lambda m: m.nn.Flatten(), lambda m: m.nn.Flatten(0, -2),
                 lambda m: m.nn.Flatten(-3, 2), lambda m: m.nn.Unflatten(1, (3, 1)),
                 lambda m: m.nn.Unflatten(-1, [5, -1]), lambda m: m.nn.Unflatten(2, (2, 2))):
        assert make(ts)(ts.tensor(x)).tolist() == make(torch)(torch.tensor(x)).tolist()
    with pytest.raises(TypeError, match="unflatten: dim must be an int, got str"):
        ts.nn.Unflatten("x", (2, 2))(ts.ones(4))  # was "not all arguments converted during..."


def test_istft_of_a_two_sided_spectrum_of_the_wrong_size_raises_like_torch() -> None:
    # Before: onesided=False with 9 frequencies for n_fft=16 ran an ifft of 16 points over
    # them (padding silently) and returned a signal; length=-1 returned an empty tensor.
    spec = np.ones((9, 5), dtype=np.complex64)
    with pytest.raises(RuntimeError, match="match n_fft when onesided=False"):
        torch.istft(torch.tensor(spec), 16, onesided=False)
    with pytest.raises(RuntimeError, match="match n_fft when onesided=False, but got 9"):
        ts.istft(ts.tensor(spec), 16, onesided=False)
    x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    s = ts.stft(ts.tensor(x), 16, return_complex=True)
    with pytest.raises(RuntimeError):
        torch.istft(torch.stft(torch.tensor(x), 16, return_complex=True), 16, length=-1)
    with pytest.raises(RuntimeError, match="istft: length must be non-negative, got -1"):
        ts.istft(s, 16, length=-1)
    for kw in ({"length": M}, {"hop_length": 2**62}):  # start + length, hop * frames overflowed
        with pytest.raises(ValueError, match="istft: .*overflows int64"):
            ts.istft(s, 16, **kw)
    two = ts.stft(ts.tensor(x), 16, return_complex=True, onesided=False)
    want = torch.istft(torch.stft(torch.tensor(x), 16, return_complex=True, onesided=False), 16,
                       onesided=False, return_complex=True)
    np.testing.assert_allclose(ts.istft(two, 16, onesided=False, return_complex=True).numpy(),
                               want.numpy(), atol=1e-5)


U64_MAX = 2**64 - 1


@pytest.mark.parametrize("call", [
    lambda x, u: x[u], lambda x, u: x[[U64_MAX]],
    lambda x, u: x[np.array([U64_MAX], dtype=np.uint64)], lambda x, u: ts.take(x, u),
    lambda x, u: ts.index_select(x, 0, u), lambda x, u: ts.gather(x, 0, u),
    lambda x, u: ts.take_along_dim(x, u), lambda x, u: x.clone().scatter_(0, u, 1.0),
    lambda x, u: x.index_add(0, u, ts.ones(1)), lambda x, u: x.clone().index_put_((u,), x[:1]),
    lambda x, u: x.clone().__setitem__(u, 5.0), lambda x, u: x.clone().put_(u, ts.ones(1)),
    lambda x, u: x.scatter_reduce(0, u, ts.ones(1), "sum"),
], ids=["getitem", "list", "numpy", "take", "index_select", "gather", "take_along_dim",
        "scatter_", "index_add", "index_put_", "setitem", "put_", "scatter_reduce"])
def test_uint64_indices_past_int64_are_out_of_bounds(call) -> None:
    # Before: the cast to int64 wrapped 2**64 - 1 to -1, an index from the end: x[[2**64 - 1]]
    # was x[-1] and scatter wrote the last element. torch refuses uint64 indices (and the int
    # 2**64 - 1); NumPy wraps them as tessera did.
    x = ts.arange(10.0)
    with pytest.raises(IndexError):
        torch.arange(10.0)[torch.tensor([U64_MAX], dtype=torch.uint64)]
    with pytest.raises(IndexError, match="uint64 index of 2\\*\\*63 or more is out of bounds"):
        call(x, ts.tensor([U64_MAX], dtype=ts.uint64))
    with pytest.raises(IndexError, match="out of bounds"):
        call(x, ts.tensor([2**63], dtype=ts.uint64))
    assert x.tolist() == list(range(10))


def test_uint64_indices_that_fit_still_index() -> None:
    x = ts.arange(10.0)
    u = ts.tensor([3, 9], dtype=ts.uint64)
    assert x[u].tolist() == [3.0, 9.0] and ts.gather(x, 0, u).tolist() == [3.0, 9.0]
    assert x[np.array([4], dtype=np.uint64)].tolist() == [4.0]


def test_tolist_of_a_huge_expanded_view_names_its_size() -> None:
    # Before: a bare MemoryError with no message (NumPy's list building).
    res = run_probes("""
        probe("tolist", lambda: ts.ones(1).expand(2**40).tolist())
        probe("small", lambda: ts.ones(1).expand(3).tolist())
        """)
    cls, msg = res["tolist"]
    assert cls == "MemoryError" and msg.startswith("tolist: out of memory") and \
        "1099511627776 Python numbers" in msg, res
    assert res["small"] == ["ok", "[1.0, 1.0, 1.0]"]


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.lp_pool2d(m.ones(1, 1, 4, 4), 0.0, 2),
    lambda m: m.nn.functional.lp_pool1d(m.ones(1, 1, 4), 0, 2),
    lambda m: m.nn.LPPool2d(0, 2)(m.ones(1, 1, 4, 4)),
], ids=["lp_pool2d", "lp_pool1d", "LPPool2d"])
def test_lp_pool_of_norm_type_zero_raises_like_torch(call) -> None:
    # Before: (sum x^0)^(1/0) gave inf for every window.
    with pytest.raises(ZeroDivisionError):
        call(torch)
    with pytest.raises(ZeroDivisionError, match="lp_pool.d: norm_type must be non-zero"):
        call(ts)
