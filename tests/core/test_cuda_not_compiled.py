"""CUDA asked of a build without the CUDA backend raises tessera.errors.CudaNotCompiledError: an
AssertionError as PyTorch's CPU build raises ("Torch not compiled with CUDA enabled"), and a
RuntimeError as tessera raised before (and raises when the backend is built but no GPU is
found)."""
import pytest
import torch

import tessera as ts
from tessera.errors import CudaNotCompiledError

pytestmark = pytest.mark.skipif(ts.backends.cuda.is_built(), reason="this build has CUDA")

CASES = {
    "zeros": lambda M: M.zeros(2, device="cuda"),
    "tensor": lambda M: M.tensor([1.0], device="cuda"),
    "asarray": lambda M: M.asarray([1.0], device="cuda"),
    "randn": lambda M: M.randn(2, device="cuda"),
    "arange": lambda M: M.arange(3, device="cuda"),
    "Tensor.cuda": lambda M: M.ones(2).cuda(),
    "Tensor.to": lambda M: M.ones(2).to("cuda"),
    "cuda.current_device": lambda M: M.cuda.current_device(),
    "cuda.synchronize": lambda M: M.cuda.synchronize(),
    "cuda.get_device_name": lambda M: M.cuda.get_device_name(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cuda_without_the_backend_is_an_assertion_error_as_torch(name):
    with pytest.raises(AssertionError):
        CASES[name](torch)
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled") as info:
        CASES[name](ts)
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value, CudaNotCompiledError)
