"""Random numbers (``ts.random``) from a counter-based Philox4x32-10 generator.

Every number is a function of (seed, call offset, element index) only, so results do not
depend on the thread count and can be reproduced on another device (Note [Counter-based RNG]
in csrc/ops/random.h). Module functions draw from the default generator (``seed(n)``,
``ts.manual_seed(n)``); pass ``generator=`` or use :class:`Generator` methods for an
independent stream.

    >>> g = ts.random.Generator(42)
    >>> g.normal(0.0, 1.0, size=(2, 3)).shape
    (2, 3)
"""
from __future__ import annotations

import operator
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as _np

from . import _C
from ._C import Tensor

__all__ = ["Generator", "seed", "manual_seed", "default_generator", "rand", "randn", "randint",
           "randperm", "uniform", "normal", "bernoulli", "exponential", "permutation", "shuffle",
           "choice", "multinomial", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]

Size = Union[None, int, Sequence[int]]


class Generator:
    """An independent random stream: a seed plus the offset of its next call."""

    def __init__(self, seed: int = 0) -> None:
        self._g = _C._Generator(operator.index(seed) % (1 << 64))

    @classmethod
    def _wrap(cls, g: Any) -> "Generator":
        obj = cls.__new__(cls)
        obj._g = g
        return obj

    def manual_seed(self, seed: int) -> "Generator":
        """Restarts the stream from `seed`."""
        self._g.manual_seed(operator.index(seed) % (1 << 64))
        return self

    def seed(self) -> int:
        """Seeds this generator non-deterministically and returns the seed (torch's
        Generator.seed)."""
        s = int(_np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._g.initial_seed()

    def get_state(self) -> Tuple[int, int]:
        """(seed, offset): everything needed to replay the stream from here."""
        return self._g.get_state()

    def set_state(self, state: Tuple[int, int]) -> None:
        self._g.set_state(*state)

    def __repr__(self) -> str:
        s, o = self.get_state()
        return f"Generator(seed={s}, offset={o})"

    def rand(self, *shape: Any, dtype: Any = None, device: Any = None) -> Tensor:
        return rand(*shape, dtype=dtype, device=device, generator=self)

    def randn(self, *shape: Any, dtype: Any = None, device: Any = None) -> Tensor:
        return randn(*shape, dtype=dtype, device=device, generator=self)

    def random(self, size: Size = None, *, dtype: Any = None, device: Any = None) -> Tensor:
        return uniform(0.0, 1.0, size, dtype=dtype, device=device, generator=self)

    def randint(self, low: int, high: Any = None, size: Size = None, *, dtype: Any = None,
                device: Any = None) -> Tensor:
        return randint(low, high, size, dtype=dtype, device=device, generator=self)

    integers = randint

    def randperm(self, n: int, *, dtype: Any = None, device: Any = None) -> Tensor:
        return randperm(n, dtype=dtype, device=device, generator=self)

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Size = None, *,
                dtype: Any = None, device: Any = None) -> Tensor:
        return uniform(low, high, size, dtype=dtype, device=device, generator=self)

    def normal(self, mean: Any = 0.0, std: Any = 1.0, size: Size = None, *, dtype: Any = None,
               device: Any = None) -> Tensor:
        return normal(mean, std, size, dtype=dtype, device=device, generator=self)

    def bernoulli(self, p: Any, size: Size = None, *, dtype: Any = None,
                  device: Any = None) -> Tensor:
        return bernoulli(p, size, dtype=dtype, device=device, generator=self)

    def exponential(self, scale: float = 1.0, size: Size = None, *, lambd: Optional[float] = None,
                    dtype: Any = None, device: Any = None) -> Tensor:
        return exponential(scale, size, lambd=lambd, dtype=dtype, device=device, generator=self)

    def permutation(self, x: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
        return permutation(x, dtype=dtype, device=device, generator=self)

    def shuffle(self, x: Tensor) -> None:
        shuffle(x, generator=self)

    def choice(self, a: Any, size: Size = None, replace: bool = True, p: Any = None, *,
               dtype: Any = None, device: Any = None) -> Tensor:
        return choice(a, size, replace, p, dtype=dtype, device=device, generator=self)

    def multinomial(self, probs: Tensor, num_samples: int, replacement: bool = False, *,
                    dtype: Any = None, device: Any = None) -> Tensor:
        return multinomial(probs, num_samples, replacement, dtype=dtype, device=device,
                           generator=self)


class TorchGenerator(Generator):
    """torch.Generator (``ts.Generator``): ``ts.Generator(device="cpu").manual_seed(0)``,
    usable wherever a ``generator=`` is taken (ts.rand, DataLoader, random_split, ...). Same
    engine as ``ts.random.Generator(seed)``, the NumPy-style spelling; a fresh one starts from
    PyTorch's default seed. Its argument is a device, as torch's (an int raises)."""

    def __init__(self, device: Any = "cpu") -> None:
        if isinstance(device, int) and not isinstance(device, bool):
            raise TypeError("Generator: the argument is a device (torch.Generator(device)); "
                            "seed it with .manual_seed(n) or use ts.random.Generator(seed)")
        super().__init__(67280421310721)
        self.device = _C.Device(device) if isinstance(device, str) else device


default_generator = Generator._wrap(_C._default_generator())


def seed(n: Optional[int] = None) -> Any:
    """seed(n) reseeds the default generator with n and returns it; PyTorch's seed() (no
    argument) seeds it non-deterministically and returns the seed."""
    if n is None:
        return default_generator.seed()
    return default_generator.manual_seed(n)


def manual_seed(n: int) -> Generator:
    """Reseeds the default generator with n (returns it, as torch.manual_seed)."""
    return default_generator.manual_seed(n)


# The samplers in every argument form (varargs sizes, size=, generator=, dtype=, device=,
# out=, requires_grad=), each one C++ binding: rand / randn / uniform / randint / randperm
# (csrc/python/bind_random_forms.cpp); normal / bernoulli / multinomial / poisson / binomial
# and ts.random's exponential / permutation / shuffle / choice
# (csrc/python/bind_random_samplers.cpp, which also binds Tensor's in-place fills).
from ._C import rand, randn, uniform, randint, randperm  # noqa: E402
from ._C import normal, bernoulli, multinomial, poisson, binomial  # noqa: E402
from ._C._random import exponential, permutation, shuffle, choice  # noqa: E402


# ---- torch.random's functions of the default generator
def initial_seed() -> int:
    """The seed of the default generator."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state as a uint8 tensor (for set_rng_state)."""
    state = default_generator.get_state()
    raw = _np.array([int(v) for v in state], dtype=_np.uint64).view(_np.uint8)
    from ._creation import asarray
    return asarray(raw.copy())


def set_rng_state(new_state: Tensor) -> None:
    """Restores a state from get_rng_state."""
    raw = _np.asarray(new_state.cpu()).astype(_np.uint8)
    if raw.shape != (16,):
        raise RuntimeError(f"set_rng_state: expected a state of 16 bytes, got shape {raw.shape}")
    vals = raw.view(_np.uint64)
    default_generator.set_state((int(vals[0]), int(vals[1])))


def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Any:
    """A context manager that restores the default generator's state on exit (torch.random.
    fork_rng); with enabled=False it does nothing."""
    import contextlib
    if devices is not None and (isinstance(devices, (str, bytes))
                                or not hasattr(devices, "__iter__")):
        raise TypeError(f"fork_rng: devices must be None or a list of devices, got "
                        f"{type(devices).__name__}")

    @contextlib.contextmanager
    def ctx() -> Any:
        if not enabled:
            yield
            return
        g = default_generator
        state = g.get_state()
        try:
            yield
        finally:
            g.set_state(state)
    return ctx()


from ._arg_errors import guarded as _guarded  # noqa: E402

globals().update(_guarded(globals()))  # non-tensor arguments raise TypeError naming the op
