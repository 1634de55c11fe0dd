"""torch.cuda's generator and capability functions (ts.cuda.get_rng_state, seed, is_bf16_supported,
...): one counter-based generator serves every device, so the CUDA state functions save and restore
that generator; on a host without a GPU the capability queries say False, as torch's do."""
import pytest
import torch

import tessera as ts


def test_cuda_rng_state_round_trip() -> None:
    ts.manual_seed(3)
    state = ts.cuda.get_rng_state()
    assert state.dtype == ts.uint8 and state.device.type == "cpu"
    a = ts.rand(5)
    ts.cuda.set_rng_state(state)
    assert ts.rand(5).tolist() == a.tolist()
    # the same generator as ts.get_rng_state
    assert ts.cuda.get_rng_state().tolist() == ts.get_rng_state().tolist()
    states = ts.cuda.get_rng_state_all()
    assert len(states) == ts.cuda.device_count()
    ts.cuda.set_rng_state_all(states)


def test_cuda_seed_functions() -> None:
    ts.cuda.manual_seed_all(11)
    assert ts.cuda.initial_seed() == 11 == ts.initial_seed()
    ts.cuda.seed()
    first = ts.cuda.initial_seed()
    ts.cuda.seed_all()
    assert isinstance(first, int) and isinstance(ts.cuda.initial_seed(), int)


def test_cuda_rng_state_checked() -> None:
    with pytest.raises(TypeError):
        ts.cuda.set_rng_state(ts.zeros(16))  # float, not uint8
    with pytest.raises(ValueError):
        ts.cuda.set_rng_state(ts.zeros(3, dtype=ts.uint8))


def test_capabilities_follow_availability() -> None:
    if ts.cuda.is_available():
        major, minor = ts.cuda.get_device_capability()
        assert isinstance(major, int) and isinstance(minor, int)
        assert ts.cuda.is_tf32_supported() == (major >= 8)
        assert ts.cuda.is_bf16_supported()
        assert ts.cuda.is_bf16_supported(including_emulation=False) == (major >= 8)
    else:
        assert ts.cuda.is_bf16_supported() is False is ts.cuda.is_tf32_supported()
        if not torch.cuda.is_available():
            assert torch.cuda.is_bf16_supported() is False
