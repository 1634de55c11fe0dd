"""ts.backends.cuda: ``matmul.allow_tf32`` (default False, like PyTorch), and the switch of
cuDNN's fused attention: ``enable_cudnn_sdp(bool)`` / ``cudnn_sdp_enabled()`` (default on, as
PyTorch's), and torch's other backend switches ``enable_{math,flash,mem_efficient}_sdp``. Where cuDNN 9 loads (ts.backends.cudnn) and ``ts.backends.cudnn.enabled`` holds,
float16/bfloat16 ``scaled_dot_product_attention`` on CUDA runs cuDNN's flash attention forward
and backward for the problems it takes, else tessera's own kernels; ``last_attention_path()``
tells which ran the calling thread's last attention kernel."""
from __future__ import annotations

from .. import _C


class _MatmulSettings:
    """float32 matmuls on CUDA may use TF32 tensor cores when ``allow_tf32`` is True (about
    10 bits of mantissa in the products, float32 accumulation)."""

    @property
    def allow_tf32(self) -> bool:
        return _C._cuda.get_allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _C._cuda.set_allow_tf32(bool(value))

    # torch's switches for reduced-precision reductions inside float16 / bfloat16 matmuls
    # (default True, as torch); accepted and kept, tessera's kernels accumulate in float32.
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True
    allow_fp16_accumulation = False

    @property
    def fp32_precision(self) -> str:
        """torch's newer spelling of allow_tf32: 'tf32', or 'ieee' / 'none' (the default)."""
        return "tf32" if self.allow_tf32 else getattr(self, "_fp32_precision", "none")

    @fp32_precision.setter
    def fp32_precision(self, value: str) -> None:
        if value not in ("tf32", "ieee", "none"):
            raise ValueError(f"fp32_precision must be 'tf32', 'ieee' or 'none', got {value!r}")
        self.allow_tf32 = value == "tf32"
        self._fp32_precision = "none" if value == "tf32" else value


matmul = _MatmulSettings()


def is_built() -> bool:
    return _C._cuda.is_built()


def enable_cudnn_sdp(enabled: bool) -> None:
    """Turns cuDNN's fused attention on or off (tessera's flash kernels run when off)."""
    _C._cuda.cudnn_sdp_set_enabled(bool(enabled))


def cudnn_sdp_enabled() -> bool:
    """Whether cuDNN's fused attention may run (the switch; cuDNN must also load)."""
    return bool(_C._cuda.cudnn_sdp_enabled())


def _sdp_switch(name: str, enabled: bool) -> None:
    _C._set_attention_settings(**{name: bool(enabled)})


def enable_math_sdp(enabled: bool) -> None:
    """torch's switch of the math attention backend (with flash off too, a CPU call to
    scaled_dot_product_attention is a RuntimeError, as in PyTorch)."""
    _sdp_switch("math_sdp", enabled)


def math_sdp_enabled() -> bool:
    return bool(_C._attention_settings()["math_sdp"])


def enable_flash_sdp(enabled: bool) -> None:
    """torch's switch of the flash attention backend (kept; tessera's paths compute the same
    function, see torch.nn.attention)."""
    _sdp_switch("flash_sdp", enabled)


def flash_sdp_enabled() -> bool:
    return bool(_C._attention_settings()["flash_sdp"])


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """torch's switch of the memory-efficient attention backend (CUDA only, as in PyTorch)."""
    _sdp_switch("mem_efficient_sdp", enabled)


def mem_efficient_sdp_enabled() -> bool:
    return bool(_C._attention_settings()["mem_efficient_sdp"])


def last_attention_path() -> str:
    """What ran the calling thread's last fused attention kernel, forward or backward:
    'cudnn', 'cuda_flash' (tessera's CUDA kernels), 'cpu', or 'none' before the first."""
    return str(_C._cuda.attention_last_path())


def _cudnn_sdp_status() -> str:
    """Why the calling thread's last attention problem did not run on cuDNN ('' if it did)."""
    return str(_C._cuda.cudnn_sdp_status())
