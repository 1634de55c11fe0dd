"""torch.stft / torch.istft (and the Tensor methods), built from pad, unfold and the FFTs, so
autograd flows through them.

stft frames the (optionally reflect-padded) signal every `hop_length` samples, multiplies
each frame by the window (zero-padded to n_fft, centered) and takes its (r)fft: the result
is (..., freq, n_frames). istft inverts it by windowed overlap-add divided by the summed
squared window (the NOLA condition must hold, as torch checks).
"""
from __future__ import annotations

import math
from typing import Any, Optional

from ._C import Tensor


def _ts() -> Any:
    import tessera
    return tessera


def _window_of(window: Optional[Tensor], win_length: int, n_fft: int, like: Tensor) -> Tensor:
    ts = _ts()
    real = like.real if ts.isdtype(like.dtype, "complex floating") else like
    if window is None:
        window = ts.ones((win_length,), dtype=real.dtype, device=like.device)
    if window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or n_fft != win_length:
        window = ts.concat([ts.zeros((left,), dtype=window.dtype, device=window.device), window,
                            ts.zeros((n_fft - win_length - left,), dtype=window.dtype,
                                     device=window.device)])
    return window


def stft(input: Tensor, n_fft: int, hop_length: Optional[int] = None,
         win_length: Optional[int] = None, window: Optional[Tensor] = None,
         center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: Optional[bool] = None, return_complex: Optional[bool] = None) -> Tensor:
    """The short-time Fourier transform of a 1-D (L,) or batched (B, L) signal:
    (..., n_fft // 2 + 1 or n_fft, n_frames), complex (or (..., 2) reals without
    return_complex)."""
    ts = _ts()
    from .nn.functional import pad as _pad
    is_complex = ts.isdtype(input.dtype, "complex floating")
    if return_complex is None:
        if not is_complex and not (window is not None
                                   and ts.isdtype(window.dtype, "complex floating")):
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if n_fft <= 0 or hop <= 0 or not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < n_fft, 0 < hop_length and 0 < win_length <= "
                           f"n_fft, but got n_fft={n_fft}, hop_length={hop}, win_length={win}")
    x = input if input.ndim == 2 else input[None]
    if not ts.isdtype(x.dtype, ("real floating", "complex floating")):
        x = x.astype(ts.get_default_dtype())
    if center:
        x = _pad(x[:, None], (n_fft // 2, n_fft // 2), mode=pad_mode)[:, 0]
    if x.shape[-1] < n_fft:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {x.shape[-1]}, but got n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop) * _window_of(window, win, n_fft, x)  # (B, F, n_fft)
    complex_any = is_complex or (window is not None
                                 and ts.isdtype(window.dtype, "complex floating"))
    one = (not complex_any) if onesided is None else onesided
    if one and complex_any:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    spec = ts.fft.rfft(frames, axis=-1) if one else ts.fft.fft(frames, axis=-1)
    if normalized:
        spec = spec * (1.0 / math.sqrt(n_fft))
    spec = ts.moveaxis(spec, -1, -2)  # (B, freq, frames)
    if input.ndim == 1:
        spec = spec[0]
    if not return_complex:
        spec = ts.stack([ts.real(spec), ts.imag(spec)], axis=-1)
    return spec


def istft(input: Tensor, n_fft: int, hop_length: Optional[int] = None,
          win_length: Optional[int] = None, window: Optional[Tensor] = None,
          center: bool = True, normalized: bool = False, onesided: Optional[bool] = None,
          length: Optional[int] = None, return_complex: bool = False) -> Tensor:
    """The inverse of stft: windowed overlap-add of the inverse FFTs of the frames, divided
    by the overlapped squared window."""
    ts = _ts()
    if not ts.isdtype(input.dtype, "complex floating"):
        raise RuntimeError("istft requires a complex-valued input tensor")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    spec = input if input.ndim == 3 else input[None]
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    one = (n_freq != n_fft) if onesided is None else onesided
    if one and n_freq != n_fft // 2 + 1:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{n_freq}")
    frames_f = ts.moveaxis(spec, -2, -1)  # (B, frames, freq)
    if normalized:
        frames_f = frames_f * math.sqrt(n_fft)
    if one and not return_complex:
        frames = ts.fft.irfft(frames_f, n=n_fft, axis=-1)
    else:
        frames = ts.fft.ifft(frames_f, n=n_fft, axis=-1)
        if not return_complex:
            frames = ts.real(frames)
    w = _window_of(window, win, n_fft, frames)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    batch = frames.shape[0]
    # overlap-add through a scatter of each frame into its span
    idx = (ts.arange(n_frames, device=frames.device)[:, None] * hop
           + ts.arange(n_fft, device=frames.device)[None, :]).reshape(-1)
    out = ts.zeros((batch, total), dtype=frames.dtype, device=frames.device)
    out = out.index_add(1, idx, frames.reshape(batch, -1))
    wsq = ts.zeros((total,), dtype=w.real.dtype if ts.isdtype(w.dtype, "complex floating")
                   else w.dtype, device=w.device)
    wsq = wsq.index_add(0, idx, ts.broadcast_to(ts.abs(w) ** 2, (n_frames, n_fft)).reshape(-1))
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = start + length
    env = wsq[start:min(end, total)]
    if bool((ts.abs(env) < 1e-11).any()):
        raise RuntimeError("istft: window overlap add min: 0 (the NOLA condition failed)")
    y = out[:, start:min(end, total)] / env
    if length is not None and y.shape[-1] < length:
        y = ts.concat([y, ts.zeros((batch, length - y.shape[-1]), dtype=y.dtype,
                                   device=y.device)], axis=-1)
    return y if input.ndim == 3 else y[0]
