"""The generator classes (csrc/python/bind_generator.cpp): torch's state API on both (a uint8
tensor, checked before use; ts.random.Generator's set_state also takes (seed, offset)), the
seeds torch accepts, and the default generator's state functions, with errors of torch's
classes."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts


def test_torch_generator_state_round_trip() -> None:
    g = ts.Generator().manual_seed(11)
    assert g.device == ts.Device("cpu") and ts.Generator(device="cpu").device == ts.Device("cpu")
    ts.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype == ts.uint8 and state.shape == (16,)
    a = ts.rand(5, generator=g).tolist()
    assert g.set_state(state) is g  # torch returns the generator
    assert ts.rand(5, generator=g).tolist() == a
    assert g.rand(5).tolist() != a  # the sampling methods draw from the same stream
    # another generator takes the state (and the state tensor is copied, not aliased)
    h = ts.Generator().set_state(state)
    state.fill_(0)
    assert ts.rand(5, generator=h).tolist() == a


@pytest.mark.parametrize("bad", [
    lambda lib: (1, 2),
    lambda lib: None,
    lambda lib: [0] * 16,
    lambda lib: lib.zeros(16),                       # float32
    lambda lib: lib.zeros(16, dtype=lib.int64),
    lambda lib: lib.zeros(3, dtype=lib.uint8),       # wrong size
    lambda lib: lib.zeros(0, dtype=lib.uint8),
])
def test_bad_states_raise_torchs_class(bad) -> None:
    with pytest.raises(Exception) as want:
        torch.Generator().set_state(bad(torch))
    g = ts.Generator().manual_seed(4)
    before = g.get_state().tolist()
    for call in (lambda: g.set_state(bad(ts)), lambda: ts.set_rng_state(bad(ts))):
        with pytest.raises(want.type, match="set_state|set_rng_state"):
            call()
    assert g.get_state().tolist() == before  # checked before anything is touched


@pytest.mark.parametrize("make", [lambda lib: lib.default_generator, lambda lib: lib.Generator()])
def test_default_generator_state_is_torchs_tensor(make) -> None:
    g, gt = make(ts), make(torch)
    state, want = g.get_state(), gt.get_state()
    assert isinstance(state, ts.Tensor) and state.dtype == ts.uint8 and want.dtype == torch.uint8
    assert state.ndim == want.ndim == 1 and state.device == ts.Device("cpu")
    a = ts.rand(4, generator=g).tolist()
    assert g.set_state(state) is g
    assert ts.rand(4, generator=g).tolist() == a
    if g is ts.default_generator:
        assert ts.get_rng_state().tolist() == g.get_state().tolist()
    before = g.get_state().tolist()
    for bad in (ts.zeros(16), ts.zeros(15, dtype=ts.uint8), (1, 2, 3), "state"):
        with pytest.raises((TypeError, ValueError), match="set_state"):
            g.set_state(bad)
    assert g.get_state().tolist() == before
    # any 16 bytes are a state (seed, offset): a non-contiguous one reads the same words
    wide = ts.zeros(32, dtype=ts.uint8)
    wide[::2] = state
    g.set_state(wide[::2])
    assert g.get_state().tolist() == state.tolist()


def test_rng_state_functions_reproduce() -> None:
    ts.manual_seed(5)
    state = ts.get_rng_state()
    assert state.dtype == ts.uint8 and ts.initial_seed() == 5
    a = ts.randn(4).tolist()
    ts.set_rng_state(state)
    assert ts.randn(4).tolist() == a
    ts.random.default_generator.set_state(state)  # the NumPy-style one takes a tensor too
    assert ts.randn(4).tolist() == a


@pytest.mark.parametrize("seed", [0, -1, -2**63, 2**63, 2**64 - 1])
def test_seeds_torch_accepts(seed) -> None:
    assert ts.manual_seed(seed).initial_seed() == torch.manual_seed(seed).initial_seed()
    assert ts.Generator().manual_seed(seed).initial_seed() == \
        torch.Generator().manual_seed(seed).initial_seed()
    assert ts.random.Generator(seed).initial_seed() == torch.manual_seed(seed).initial_seed()


@pytest.mark.parametrize("seed", [2**64, -2**63 - 1])
def test_seeds_out_of_range_raise_value_error(seed) -> None:
    with pytest.raises(ValueError):
        torch.manual_seed(seed)
    with pytest.raises(ValueError, match="manual_seed"):
        ts.manual_seed(seed)
    with pytest.raises(ValueError, match="manual_seed"):
        ts.Generator().manual_seed(seed)


def test_non_int_seeds_raise() -> None:
    with pytest.raises(RuntimeError):  # torch: RuntimeError "manual_seed expected a long"
        torch.Generator().manual_seed(1.5)
    for s in (1.5, "3", None):
        with pytest.raises(TypeError, match="manual_seed"):
            ts.Generator().manual_seed(s)
        with pytest.raises(RuntimeError, match="manual_seed"):  # tessera's TypeError is both
            ts.manual_seed(s)


def test_numpy_style_generator_state() -> None:
    g = ts.random.Generator(3)
    g.rand(2)
    state = g.get_state()  # torch's form: a uint8 tensor of the words (seed, offset)
    assert state.dtype == ts.uint8 and state.shape == (16,)
    assert np.frombuffer(bytes(state.tolist()), "<u8").tolist() == [3, 1]
    assert (g.initial_seed(), g.get_offset()) == (3, 1)
    a = g.randn(3).tolist()
    g.set_state(state)
    assert g.randn(3).tolist() == a
    g.set_state((3, 1))
    assert g.randn(3).tolist() == a
    g.set_state(3, 1)
    assert g.randn(3).tolist() == a
    with pytest.raises(ValueError, match="set_state"):
        g.set_state((1, 2, 3))
    with pytest.raises(TypeError, match="generator"):
        g.rand(2, generator=g)


def test_seed_is_fresh_and_kept() -> None:
    g = ts.Generator()
    s = g.seed()
    assert 0 <= s < 2**63 and g.initial_seed() == s
    t = ts.seed()
    assert isinstance(t, int) and ts.initial_seed() == t
