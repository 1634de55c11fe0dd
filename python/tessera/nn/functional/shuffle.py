"""pixel_shuffle, pixel_unshuffle, channel_shuffle: reshapes and one permutation each."""
from __future__ import annotations

from typing import Any

from ..._C import Tensor


def _ts() -> Any:
    import tessera
    return tessera


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C*r^2, H, W) -> (*, C, H*r, W*r) (sub-pixel convolution's rearrangement)."""
    t = _ts()
    x, r = input, int(upscale_factor)
    if r <= 0:
        raise ValueError(f"pixel_shuffle: upscale_factor must be positive, got {r}")
    if x.ndim < 3 or x.shape[-3] % (r * r):
        raise ValueError(f"pixel_shuffle: expected an input of at least 3 dims whose channel "
                         f"dim (-3) is divisible by upscale_factor^2 = {r * r}, got shape "
                         f"{tuple(x.shape)}")
    lead = tuple(x.shape[:-3])
    c, h, w = x.shape[-3:]
    nl = len(lead)
    y = t.reshape(x, lead + (c // (r * r), r, r, h, w))
    perm = tuple(range(nl)) + tuple(nl + i for i in (0, 3, 1, 4, 2))
    return t.reshape(t.permute_dims(y, perm), lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H*r, W*r) -> (*, C*r^2, H, W) (pixel_shuffle's inverse)."""
    t = _ts()
    x, r = input, int(downscale_factor)
    if r <= 0:
        raise ValueError(f"pixel_unshuffle: downscale_factor must be positive, got {r}")
    if x.ndim < 3 or x.shape[-2] % r or x.shape[-1] % r:
        raise ValueError(f"pixel_unshuffle: expected an input of at least 3 dims whose height "
                         f"and width are divisible by downscale_factor {r}, got shape "
                         f"{tuple(x.shape)}")
    lead = tuple(x.shape[:-3])
    c, h, w = x.shape[-3:]
    nl = len(lead)
    y = t.reshape(x, lead + (c, h // r, r, w // r, r))
    perm = tuple(range(nl)) + tuple(nl + i for i in (0, 2, 4, 1, 3))
    return t.reshape(t.permute_dims(y, perm), lead + (c * r * r, h // r, w // r))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with C = g * k: channel order (g, k) becomes (k, g) (ShuffleNet)."""
    t = _ts()
    x, g = input, int(groups)
    if g <= 0:
        raise ValueError(f"channel_shuffle: groups must be positive, got {g}")
    if x.ndim < 3 or x.shape[1] % g:
        raise ValueError(f"channel_shuffle: expected an input of at least 3 dims whose "
                         f"channel dim (1) is divisible by groups {g}, got shape "
                         f"{tuple(x.shape)}")
    n, c = x.shape[0], x.shape[1]
    rest = tuple(x.shape[2:])
    y = t.reshape(x, (n, g, c // g) + rest)
    y = t.permute_dims(y, (0, 2, 1) + tuple(range(3, y.ndim)))
    return t.reshape(y, tuple(x.shape))


native_channel_shuffle = channel_shuffle
