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

import math
import operator
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as _np

from . import _C
from ._C import Tensor

__all__ = ["Generator", "seed", "manual_seed", "default_generator", "rand", "randn", "randint",
           "randperm", "uniform", "normal", "bernoulli", "exponential", "permutation", "shuffle",
           "choice", "multinomial", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]

Size = Union[None, int, Sequence[int]]


def _ns() -> Any:
    """The tessera namespace (imported lazily: this module is loaded while it is built)."""
    import sys
    return sys.modules[__package__]


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


def _gen(generator: Optional[Generator]) -> Any:
    if generator is None:
        return default_generator._g
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a tessera.random.Generator, got "
                        f"{type(generator).__name__}")
    return generator._g


# rand / randn / uniform / randint / randperm in every argument form (varargs sizes, size=,
# generator=, dtype=, device=, out=, requires_grad=): the C++ bindings themselves
# (csrc/python/bind_random_forms.cpp).
from ._C import rand, randn, uniform, randint, randperm  # noqa: E402


def _size(size: Size, *more: int) -> Tuple[int, ...]:
    """A shape from rand(2, 3)-style varargs or a size argument (None -> 0-d)."""
    if more:
        return tuple(operator.index(s) for s in (size,) + more)
    if size is None:
        return ()
    if hasattr(size, "__index__") and not isinstance(size, Tensor):
        return (operator.index(size),)
    return tuple(operator.index(s) for s in size)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Size = None, *, dtype: Any = None,
           device: Any = None, generator: Optional[Generator] = None) -> Tensor:
    """Normal numbers: scalar mean/std with shape `size`, or tensor mean/std broadcast
    together (and with `size`)."""
    t = _ns()
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m, s = t.asarray(mean), t.asarray(std)
        shape = _np.broadcast_shapes(tuple(m.shape), tuple(s.shape), _size(size))
        dt = dtype if dtype is not None else t.result_type(m, s)
        if t.isdtype(s.dtype, "real floating") and bool(t.any(s < 0)):
            raise ValueError("normal: std must be >= 0")
        return m + s * randn(shape, dtype=dt, device=device, generator=generator)
    x = _C.empty(_size(size), dtype=dtype, device=device)
    if not t.isdtype(x.dtype, "real floating"):
        raise TypeError(f"normal: expected a floating-point dtype, got {x.dtype}")
    _C._normal_(x, float(mean), float(std), _gen(generator))
    return x


def bernoulli(p: Any, size: Any = None, *, dtype: Any = None, device: Any = None,
              generator: Optional[Generator] = None) -> Tensor:
    """1 with probability p else 0: p a float (shape `size`) or a tensor of probabilities
    (its shape; the dtype defaults to p's floating dtype, as in PyTorch). PyTorch's
    ``bernoulli(input, p)`` (a float p) draws with probability p in input's shape and dtype."""
    t = _ns()
    if isinstance(p, Tensor) and isinstance(size, float):  # torch.bernoulli(input, p)
        out = bernoulli(t.full(tuple(p.shape), size, dtype=t.float32), generator=generator)
        return _C._astype(out, p.dtype if dtype is None else dtype, True)
    if isinstance(p, Tensor):
        p = p.detach()
        if not t.isdtype(p.dtype, "real floating"):
            raise TypeError(f"bernoulli: expected floating-point probabilities, got {p.dtype}")
        if p.size and not bool(t.all((p >= 0) & (p <= 1))):
            raise ValueError("bernoulli: probabilities must be in [0, 1]")
        dt = p.dtype if dtype is None else dtype
        shape = _np.broadcast_shapes(tuple(p.shape), _size(size))
        u = rand(shape, dtype=p.dtype, device=device, generator=generator)
        return (u < p).astype(dt)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"bernoulli: p must be in [0, 1], got {p}")
    u = rand(_size(size), dtype=t.float64, device=device, generator=generator)
    return (u < p).astype(t.float32 if dtype is None else dtype)


def exponential(scale: float = 1.0, size: Size = None, *, lambd: Optional[float] = None,
                dtype: Any = None, device: Any = None,
                generator: Optional[Generator] = None) -> Tensor:
    """Exponential numbers with mean `scale` (NumPy) or rate `lambd` (PyTorch): -log(1-u) *
    scale with u uniform in [0, 1), so every value is finite."""
    t = _ns()
    if lambd is not None:
        if lambd <= 0:
            raise ValueError(f"exponential: lambd must be positive, got {lambd}")
        scale = 1.0 / lambd
    if scale < 0:
        raise ValueError(f"exponential: scale must be non-negative, got {scale}")
    u = rand(_size(size), dtype=dtype, device=device, generator=generator)
    return t.negative(t.log1p(t.negative(u))) * scale


def permutation(x: Any, *, dtype: Any = None, device: Any = None,
                generator: Optional[Generator] = None) -> Tensor:
    """A permutation of range(x) for an int, else a copy of x shuffled along axis 0."""
    if hasattr(x, "__index__") and not isinstance(x, Tensor):
        return randperm(operator.index(x), dtype=dtype, device=device, generator=generator)
    x = _ns().asarray(x)
    if x.ndim == 0:
        raise ValueError("permutation: x must be an int or have at least 1 dimension")
    return _placed(_C._take_rows(x, randperm(x.shape[0], generator=generator)), dtype, device)


def shuffle(x: Tensor, *, generator: Optional[Generator] = None) -> None:
    """Shuffles x in place along axis 0."""
    if not isinstance(x, Tensor):
        raise TypeError(f"shuffle: expected a tessera Tensor, got {type(x).__name__}")
    _C._shuffle_(x, _gen(generator))


def _placed(t: Tensor, dtype: Any, device: Any) -> Tensor:
    """t cast to `dtype` and moved to `device` when they are given."""
    if dtype is not None:
        t = _ns().astype(t, dtype)
    return t if device is None else t.to_device(device)


def multinomial(probs: Tensor, num_samples: int, replacement: bool = False, *,
                dtype: Any = None, device: Any = None,
                generator: Optional[Generator] = None) -> Tensor:
    """PyTorch's multinomial: for each row of probs ((N,) or (R, N) non-negative weights,
    not necessarily normalized), num_samples category indices (int64 unless `dtype`), drawn
    without replacement unless `replacement`."""
    probs = _ns().asarray(probs)
    out = _C._multinomial(probs, operator.index(num_samples), bool(replacement), _gen(generator))
    return _placed(out, dtype, device)


def choice(a: Any, size: Size = None, replace: bool = True, p: Any = None, *,
           dtype: Any = None, device: Any = None, generator: Optional[Generator] = None) -> Tensor:
    """NumPy's choice: samples of a 1-D tensor (or of range(a) for an int), with or without
    replacement, uniform or with probabilities p (which must sum to 1)."""
    t = _ns()
    pool = t.arange(operator.index(a)) if hasattr(a, "__index__") and not isinstance(a, Tensor) \
        else t.asarray(a)
    if pool.ndim != 1:
        raise ValueError(f"choice: a must be 1-D or an int, got shape {tuple(pool.shape)}")
    n = pool.shape[0]
    shape = _size(size)
    k = math.prod(shape)
    if n == 0 and k > 0:
        raise ValueError("choice: cannot take a non-empty sample from an empty population")
    if p is not None:
        pp = t.asarray(p, dtype=t.float64)
        if tuple(pp.shape) != (n,):
            raise ValueError(f"choice: p must have shape ({n},), got {tuple(pp.shape)}")
        if bool(t.any(pp < 0)) or abs(float(t.sum(pp)) - 1.0) > 1e-8:
            raise ValueError("choice: probabilities must be non-negative and sum to 1")
    if not replace and k > n:
        raise ValueError(f"choice: cannot take {k} samples from {n} without replacement")
    if k == 0:
        idx = t.zeros((0,), dtype=t.int64)
    elif p is not None:
        idx = multinomial(pp, k, replace, generator=generator)
    elif replace:
        idx = randint(0, n, (k,), generator=generator)
    else:
        idx = randperm(n, generator=generator)[:k]
    return _placed(t.reshape(_C._take_rows(pool, idx), shape), dtype, device)


def _uniform_method(self: Tensor, a: float = 0.0, b: float = 1.0, *,
                    generator: Optional[Generator] = None) -> Tensor:
    """Fills self in place with uniform numbers in [a, b) (PyTorch's Tensor.uniform_)."""
    _C._uniform_(self, float(a), float(b), _gen(generator))
    return self


def _normal_method(self: Tensor, mean: float = 0.0, std: float = 1.0, *,
                   generator: Optional[Generator] = None) -> Tensor:
    """Fills self in place with normal numbers (PyTorch's Tensor.normal_)."""
    from ._arg_checks import float_arg
    _C._normal_(self, float_arg("normal_", "mean", mean), float_arg("normal_", "std", std),
                _gen(generator))
    return self



# ---- PyTorch's in-place random fills (Tensor methods)
def _fill_random(self: Tensor, values: Tensor, op: str) -> Tensor:
    from ._inplace import check_leaf
    check_leaf(self, op)
    with _ns().no_grad():
        _C._copy_(self, _C._astype(values, self.dtype, True))
    return self


def _bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fills self with 0/1 draws of probability p (a number or a tensor)."""
    probs = p if isinstance(p, Tensor) else \
        _ns().full(tuple(self.shape), float(p), dtype=_ns().float32)
    probs = _C._broadcast_to(probs.detach(), tuple(self.shape))
    return _fill_random(self, bernoulli(probs, generator=generator), "bernoulli_")


def _mantissa_bits(dt: Any) -> int:
    """Explicit mantissa bits of a float dtype (23 for float32): eps is 2**-bits."""
    return round(-math.log2(_ns().finfo(dt).eps))


def _random_(self: Tensor, from_: int = 0, to: Optional[int] = None, *, generator: Any = None) -> Tensor:
    """Fills self with integers uniform in [from, to) (one bound: [0, from); none: [0, 2**mantissa])."""
    if to is None:
        if from_ == 0:
            to = 2 ** (_mantissa_bits(self.dtype) + 1) if _ns().isdtype(self.dtype, "real floating") else \
                int(_ns().iinfo(self.dtype).max) + 1 if self.dtype != _ns().bool else 2
        else:
            from_, to = 0, from_
    if from_ >= to:
        raise RuntimeError(f"random_: expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    vals = randint(from_, to, tuple(self.shape), generator=generator)
    return _fill_random(self, vals, "random_")


def _exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fills self with exponential draws of rate lambd."""
    if lambd <= 0:
        raise RuntimeError(f"exponential_: expects lambda > 0.0, but found lambda={lambd}")
    vals = exponential(size=tuple(self.shape), lambd=lambd, generator=generator)
    return _fill_random(self, vals, "exponential_")


def _geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fills self with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_: expects p to be in (0, 1), but got p={p}")
    u = rand(*self.shape, dtype=_ns().float64, generator=generator)
    vals = _C.ceil(_C.log1p(-u) / math.log1p(-p))
    return _fill_random(self, _C.clamp(vals, 1, None), "geometric_")


def _cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fills self with Cauchy draws."""
    u = rand(*self.shape, dtype=_ns().float64, generator=generator)
    return _fill_random(self, median + sigma * _C.tan(math.pi * (u - 0.5)), "cauchy_")


def _log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
    """Fills self with exp(N(mean, std)) draws."""
    n = randn(*self.shape, dtype=_ns().float64, generator=generator)
    return _fill_random(self, _C.exp(mean + std * n), "log_normal_")


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


# ---- torch.poisson and torch.binomial
def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Samples Poisson(rate) for each element of the rate tensor `input` (torch.poisson)."""
    import numpy as np
    ts = _ns()
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' must be a tensor, not {type(input).__name__}")
    rates = input.detach().cpu().numpy()
    if (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    seed = int(ts.randint(0, 2 ** 31 - 1, (1,), generator=generator).item()) \
        if generator is not None else int(ts.randint(0, 2 ** 31 - 1, (1,)).item())
    vals = np.asarray(np.random.default_rng(seed).poisson(rates)).astype(rates.dtype)
    return ts.asarray(vals, device=input.device)


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Samples Binomial(count, prob) elementwise (float result like count)."""
    import numpy as np
    ts = _ns()
    n = count.detach().cpu().numpy()
    p = prob.detach().cpu().numpy()
    if (p < 0).any() or (p > 1).any() or (n < 0).any():
        raise RuntimeError("binomial: expected 0 <= prob <= 1 and count >= 0")
    draw = ts.randint(0, 2 ** 31 - 1, (1,), generator=generator) if generator is not None \
        else ts.randint(0, 2 ** 31 - 1, (1,))
    vals = np.random.default_rng(int(draw.item())).binomial(n.astype(np.int64), p)
    return ts.asarray(vals.astype(n.dtype), device=count.device)


from ._arg_errors import guarded as _guarded  # noqa: E402

globals().update(_guarded(globals()))  # non-tensor arguments raise TypeError naming the op
