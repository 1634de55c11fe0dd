"""Hostile sizes and arguments, third pass (issue 22): a factor whose square overflows int64
(a SIGFPE), DLPack capsules with absurd fields, dtypes too narrow for randperm's values,
negative num_classes, empty kernels, shifts that sum past int64, unchecked cov weights, a hang
on a huge expanded view, duplicate checkpoint records, NaN hyperparameters and module
arguments PyTorch refuses. The earlier passes are test_hostile_inputs.py, test_hostile_values.py
and test_hostile_checkpoints.py; probes that could crash or hang run in a child interpreter
(harness.run_probes) under a memory limit and a timeout.
"""
from __future__ import annotations

import io
import warnings
import zipfile

import numpy as np
import pytest
import torch

import tessera as ts
from harness import run_probes


def test_pixel_shuffle_factor_whose_square_overflows_raises_like_torch() -> None:
    # Before: upscale_factor=2**32 squared wrapped to 0 and `c % 0` killed the process (SIGFPE).
    res = run_probes("""
        probe("2^32", lambda: F.pixel_shuffle(ts.ones(1, 4, 2, 2), 2**32))
        probe("2^62", lambda: F.pixel_shuffle(ts.ones(1, 4, 2, 2), 2**62))
        probe("module", lambda: ts.nn.PixelShuffle(2**32)(ts.ones(1, 4, 2, 2)))
        """)
    for name, (cls, msg) in res.items():
        assert cls == "ValueError" and "upscale_factor^2 overflows int64" in msg, (name, msg)
    for r in (2**32, 2**62):
        with pytest.raises(ValueError, match="overflow"):
            torch.nn.functional.pixel_shuffle(torch.ones(1, 4, 2, 2), r)
    x = np.arange(32.0, dtype=np.float32).reshape(2, 4, 2, 2)
    assert ts.nn.functional.pixel_shuffle(ts.tensor(x), 2).tolist() == \
        torch.nn.functional.pixel_shuffle(torch.tensor(x), 2).tolist()


def test_from_dlpack_capsules_with_hostile_fields_raise() -> None:
    # Before: ndim=2^30 copied 8 GiB from past the 1-entry shape array (torch: SIGSEGV), a NULL
    # data pointer imported 4 elements of address 0, and byte_offset=2^64-8 wrapped to the 8
    # bytes before the data (torch: garbage values).
    res = run_probes("""
        import sys
        sys.path[:0] = ["tests", "tests/interop"]
        from test_interop import FakeProducer  # a ctypes DLPack producer
        def cap(shape, strides, **kw):
            return FakeProducer(np.arange(4, dtype=np.float32), shape, strides, legacy=True, **kw)
        probe("ndim", lambda: ts.from_dlpack(cap((4,), (1,), ndim=2**30)))
        probe("null data", lambda: ts.from_dlpack(cap((4,), (1,), null_data=True)))
        probe("offset wraps", lambda: ts.from_dlpack(cap((4,), (1,), byte_offset=2**64 - 8)))
        probe("offset past int64", lambda: ts.from_dlpack(cap((1,), (1,), byte_offset=2**63)))
        probe("null empty", lambda: ts.from_dlpack(cap((0,), (1,), null_data=True)).shape)
        probe("offset", lambda: ts.from_dlpack(cap((2,), (1,), byte_offset=8)).tolist())
        probe("negative stride", lambda: ts.from_dlpack(cap((2,), (-1,), byte_offset=4)).tolist())
        """, timeout=120)
    expect = {"ndim": "ndim 1073741824 is larger than 1024", "null data": "data pointer is NULL",
              "offset wraps": "reaches outside the address space",
              "offset past int64": "reaches outside the address space"}
    for name, text in expect.items():
        cls, msg = res[name]
        assert cls == "ValueError" and msg.startswith("from_dlpack:") and text in msg, (name, msg)
    assert res["null empty"] == ["ok", "(0,)"]
    assert res["offset"] == ["ok", "[2.0, 3.0]"]
    assert res["negative stride"] == ["ok", "[1.0, 0.0]"]  # torch aborts on this one


@pytest.mark.parametrize("n,dtype", [(300, "int8"), (129, "int8"), (257, "uint8"),
                                     (2050, "float16"), (2**24 + 2, "float32")])
def test_randperm_values_a_dtype_cannot_hold_raise_like_torch(n: int, dtype: str) -> None:
    # Before: randperm(300, dtype=int8) returned wrapped, repeated values; float16 past 2049
    # rounded values together (a permutation no more).
    with pytest.raises(RuntimeError):
        torch.randperm(n, dtype=getattr(torch, dtype))
    with pytest.raises(ValueError, match=f"randperm: .*{n - 1}.*{dtype}|randperm: n={n} .*{dtype}"):
        ts.randperm(n, dtype=getattr(ts, dtype))


@pytest.mark.parametrize("n,dtype", [(128, "int8"), (256, "uint8"), (2049, "float16"),
                                     (257, "bfloat16"), (0, "int8"), (1, "float16")])
def test_randperm_in_a_narrow_dtype_is_still_a_permutation(n: int, dtype: str) -> None:
    got = ts.randperm(n, dtype=getattr(ts, dtype))
    assert got.dtype == getattr(ts, dtype) and sorted(got.tolist()) == list(range(n))


def test_one_hot_num_classes_below_minus_one_raises_like_torch() -> None:
    # Before: num_classes=-2 was inferred from the data like -1.
    with pytest.raises(RuntimeError):
        torch.nn.functional.one_hot(torch.tensor([1]), num_classes=-2)
    with pytest.raises(ValueError, match="one_hot: num_classes must be -1 .* got -2"):
        ts.nn.functional.one_hot(ts.tensor([1]), num_classes=-2)
    assert ts.nn.functional.one_hot(ts.tensor([1, 0]), num_classes=-1).tolist() == \
        torch.nn.functional.one_hot(torch.tensor([1, 0]), num_classes=-1).tolist()


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.conv1d(m.ones(1, 1, 4), m.ones(1, 1, 0)),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 4, 4), m.ones(1, 1, 2, 0)),
    lambda m: m.nn.functional.conv_transpose1d(m.ones(1, 1, 4), m.ones(1, 1, 0)),
])
def test_convolution_with_an_empty_kernel_raises_like_torch(call) -> None:
    # Before: a kernel of size 0 gave an output of zeros (conv1d: shape (1, 1, 5)).
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero"):
        call(torch)
    with pytest.raises(ValueError, match="kernel size should be greater than zero"):
        call(ts)


def test_roll_by_shifts_summing_past_int64_matches_torch() -> None:
    # Before: the shifts of one axis were summed in int64: (2^63-1) + (2^63-1) wrapped to -2 and
    # rolled by the wrong amount (signed overflow, undefined behaviour).
    M = 2**63 - 1
    for n, shifts in ((3, (M, M)), (5, (M, M, M)), (7, (-M, -M, 3)), (6, (-2**63, -2**63))):
        dims = (0,) * len(shifts)
        want = np.roll(np.arange(n), sum(shifts) % n).tolist()  # Python ints: no overflow
        assert ts.roll(ts.arange(n), shifts, dims).tolist() == want, (n, shifts)
    assert torch.roll(torch.arange(3), (M, M), (0, 0)).tolist() == np.roll(np.arange(3), 2).tolist()
    x = np.arange(12).reshape(3, 4)
    assert ts.roll(ts.tensor(x), (M, M, -M), (0, 0, 1)).tolist() == \
        np.roll(x, (2 * M % 3, -M % 4), (0, 1)).tolist()


@pytest.mark.parametrize("kw,match", [
    ({"fweights": [1, -1, 1]}, "fweights cannot be negative"),
    ({"aweights": [1.0, -1.0, 1.0]}, "aweights cannot be negative"),
    ({"fweights": [1.0, 1.0, 1.0]}, "fweights to have integral dtype"),
    ({"aweights": [1, 1, 1]}, "aweights to have floating point dtype"),
    ({"fweights": [1, 1]}, "fweights"),
    ({"fweights": [[1], [1], [1]]}, "fweights"),
])
def test_cov_weights_are_checked_like_torch(kw, match) -> None:
    # Before: negative weights gave NaN, float fweights were used, a (3, 1) weight broadcast.
    x = [[1.0, 2.0, 4.0], [0.0, 1.0, 5.0]]
    with pytest.raises(RuntimeError, match=match):
        torch.cov(torch.tensor(x), **{k: torch.tensor(v) for k, v in kw.items()})
    with pytest.raises(RuntimeError, match=f"cov: .*{match}"):
        ts.cov(ts.tensor(x), **{k: ts.tensor(v) for k, v in kw.items()})


def test_cov_with_valid_weights_matches_torch() -> None:
    x = np.random.default_rng(0).standard_normal((3, 5))
    fw, aw = [1, 2, 0, 3, 1], [0.5, 1.0, 2.0, 0.1, 1.0]
    got = ts.cov(ts.tensor(x), fweights=ts.tensor(fw), aweights=ts.tensor(aw))
    want = torch.cov(torch.tensor(x), fweights=torch.tensor(fw), aweights=torch.tensor(aw))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_unique_along_a_dim_of_a_huge_expanded_view_fails_fast() -> None:
    # Before: 2^20 column sorts of 2^20 elements each (a hang); torch raises at its copy.
    res = run_probes("""
        probe("unique", lambda: ts.unique(ts.ones(1, 1).expand(2**20, 2**20), dim=0))
        """, timeout=30)
    cls, msg = res["unique"]
    assert cls == "MemoryError" and "GiB" in msg, res
    x = np.array([[1, 2, 1], [0, 1, 0]])
    for dim in (0, 1):
        got = ts.unique(ts.tensor(x).expand(2, 2, 3), dim=dim, return_inverse=True,
                        return_counts=True)
        want = torch.unique(torch.tensor(x).expand(2, 2, 3), dim=dim, return_inverse=True,
                            return_counts=True)
        assert [g.tolist() for g in got] == [w.tolist() for w in want], dim


def test_checkpoint_with_two_records_of_one_name_is_refused() -> None:
    # Before: the last record of the name was loaded (another tool may read the first: a file
    # showing one tensor to a checker and another to the loader).
    buf = io.BytesIO()
    ts.save({"x": ts.zeros(4)}, buf)
    with zipfile.ZipFile(buf, "a") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile's "Duplicate name"
        name = next(n for n in zf.namelist() if n.endswith("/data/0"))
        zf.writestr(name, b"\x01" * 16)
    with pytest.raises(ValueError, match=r"load: .* two records named '.*/data/0'"):
        ts.load(io.BytesIO(buf.getvalue()))
    buf = io.BytesIO()
    ts.save({"x": ts.arange(4.0)}, buf)
    assert ts.load(io.BytesIO(buf.getvalue()))["x"].tolist() == [0.0, 1.0, 2.0, 3.0]


NAN = float("nan")


@pytest.mark.parametrize("name,kw", [
    ("Adam", {"lr": NAN}), ("Adam", {"eps": NAN}), ("Adam", {"weight_decay": NAN}),
    ("AdamW", {"lr": NAN}), ("AdamW", {"betas": (0.9, NAN)}), ("RMSprop", {"alpha": NAN}),
    ("RMSprop", {"lr": NAN}), ("Adagrad", {"lr": NAN}), ("Adagrad", {"eps": NAN}),
    ("LBFGS", {"lr": NAN}), ("NAdam", {"lr": NAN}), ("RAdam", {"eps": NAN}),
    ("Adamax", {"eps": NAN}), ("Adadelta", {"lr": NAN}), ("ASGD", {"lr": NAN}),
    ("Rprop", {"lr": NAN}), ("Adam", {"betas": (1.5, 0.9)}), ("Adam", {"lr": -1.0}),
])
def test_nan_or_out_of_range_hyperparameters_raise_like_torch(name, kw) -> None:
    # Before: lr, eps, weight_decay and alpha = NaN were taken (`v < 0` is False for NaN) and
    # the first step made every parameter NaN.
    with pytest.raises(ValueError, match="Invalid"):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kw)
    with pytest.raises(ValueError, match="Invalid"):
        getattr(ts.optim, name)([ts.zeros(2, requires_grad=True)], **kw)


def test_sgd_refuses_a_nan_learning_rate() -> None:
    # torch.optim.SGD takes lr=NaN (its check is lr < 0) and its first step makes every
    # parameter NaN: tessera refuses it with Adam's message.
    for kw in ({"lr": NAN}, {"lr": 0.1, "momentum": NAN}, {"lr": 0.1, "weight_decay": NAN}):
        with pytest.raises(ValueError, match="Invalid"):
            ts.optim.SGD([ts.zeros(2, requires_grad=True)], **kw)
    p = ts.zeros(2, requires_grad=True)
    opt = ts.optim.SGD([p], lr=ts.tensor(0.5))
    p.grad = ts.ones(2)
    opt.step()
    assert p.tolist() == [-0.5, -0.5]


@pytest.mark.parametrize("make,match", [
    (lambda m: m.nn.MultiheadAttention(4, 0), "embed_dim and num_heads must be greater than 0"),
    (lambda m: m.nn.MultiheadAttention(4, -2), "embed_dim and num_heads must be greater than 0"),
    (lambda m: m.nn.MultiheadAttention(0, 1), "embed_dim and num_heads must be greater than 0"),
    (lambda m: m.nn.Conv2d(1, 1, 3, stride=2, padding="same"), "not supported for strided"),
    (lambda m: m.nn.Conv1d(1, 1, 3, padding="full"), "(?i)invalid padding string 'full'"),
])
def test_module_arguments_torch_refuses_are_refused(make, match) -> None:
    # Before: num_heads=0 raised ZeroDivisionError, -2 built a module; padding='full' and
    # padding='same' with a stride were taken and failed (or not) at the first call.
    with pytest.raises(ValueError, match=match):
        make(torch)
    with pytest.raises(ValueError, match=match):
        make(ts)
    assert ts.nn.Conv2d(1, 1, 3, padding="same")(ts.ones(1, 1, 5, 5)).shape == (1, 1, 5, 5)
    assert ts.nn.MultiheadAttention(4, 2).num_heads == 2


def test_repr_of_a_huge_expanded_view_prints_its_corners() -> None:
    # Before: NumPy's "array is too big" (ValueError) from repr and str of a (2^31, 2^31) view
    # of one element; torch prints its corners.
    t = ts.ones(1, 1).expand(2**31, 2**31)
    lines = repr(t).splitlines()
    assert lines[0] == "tensor([[1., 1., 1., ..., 1., 1., 1.]," and lines[3].strip() == "...,"
    assert len(lines) == 7 and len(repr(torch.ones(1, 1).expand(2**31, 2**31)).splitlines()) == 7
    assert str(t).splitlines()[0] == "[[1. 1. 1. ... 1. 1. 1.]"
    # a tensor past the threshold prints as NumPy prints all of it
    rng = np.random.default_rng(0)
    for a in (rng.standard_normal((40, 50)), rng.integers(-10**9, 10**9, (3, 7, 100)),
              rng.standard_normal(5000) * 1e-8, rng.standard_normal((8, 2, 100))):
        want = np.array2string(a, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3)
        assert repr(ts.tensor(a)).startswith(f"tensor({want}"), a.shape


def test_avg_pool_negative_divisor_names_the_argument() -> None:
    # Before: "divisor must be not zero, got -1" (torch divides by it; tessera refuses it).
    with pytest.raises(ValueError, match="avg_pool2d: divisor_override must be positive, got -1"):
        ts.nn.functional.avg_pool2d(ts.ones(1, 1, 4, 4), 2, divisor_override=-1)
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        torch.nn.functional.avg_pool2d(torch.ones(1, 1, 4, 4), 2, divisor_override=0)
    got = ts.nn.functional.avg_pool2d(ts.ones(1, 1, 4, 4), 2, divisor_override=2)
    assert got.tolist() == torch.nn.functional.avg_pool2d(
        torch.ones(1, 1, 4, 4), 2, divisor_override=2).tolist()


@pytest.mark.parametrize("p,y,which", [
    ([0.5, 0.5], [2.0, 0.0], "target"), ([1.5, 0.5], [1.0, 0.0], "input"),
    ([NAN, 0.5], [1.0, 0.0], "input"), ([0.5, -0.1], [1.0, 0.0], "input"),
    ([0.5, 0.5], [1.0, -1.0], "target"),
])
def test_binary_cross_entropy_outside_zero_one_raises_like_torch(p, y, which) -> None:
    # Before: NaN, or a finite loss of values that are no probabilities (silent garbage).
    with pytest.raises(RuntimeError, match=f"all elements of {which} should be between 0 and 1"):
        torch.nn.functional.binary_cross_entropy(torch.tensor(p), torch.tensor(y))
    with pytest.raises(RuntimeError, match=f"binary_cross_entropy: all elements of {which} "
                                           f"should be between 0 and 1"):
        ts.nn.functional.binary_cross_entropy(ts.tensor(p), ts.tensor(y))
    good = ([0.0, 1.0, 0.3], [0.0, 1.0, 1.0])
    assert ts.nn.functional.binary_cross_entropy(*map(ts.tensor, good)).item() == \
        pytest.approx(torch.nn.functional.binary_cross_entropy(*map(torch.tensor, good)).item())


@pytest.mark.parametrize("a", [[[NAN, 1.0], [1.0, 2.0]], [[1.0, NAN], [NAN, 2.0]],
                               [[float("inf"), 1.0], [1.0, 2.0]]])
def test_cholesky_of_a_non_finite_matrix_raises_like_torch(a) -> None:
    # Before: OpenBLAS's potrf took the NaN pivot for positive and the "factor" was NaN.
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.cholesky(torch.tensor(a))
    with pytest.raises(ts.linalg.LinAlgError, match="not positive-definite"):
        ts.linalg.cholesky(ts.tensor(a))
    assert ts.linalg.cholesky_ex(ts.tensor(a)).info.item() > 0
    good = [[4.0, 2.0], [2.0, 3.0]]
    np.testing.assert_allclose(ts.linalg.cholesky(ts.tensor(good)).numpy(),
                               torch.linalg.cholesky(torch.tensor(good)).numpy(), rtol=1e-6)
