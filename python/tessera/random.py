"""Random numbers (``ts.random``) from a counter-based Philox4x32-10 generator.

Every number is a function of (seed, call offset, element index) only, so results do not
depend on the thread count and can be reproduced on another device (Note [Counter-based RNG]
in csrc/ops/random.h). Module functions draw from the default generator (``seed(n)``,
``ts.manual_seed(n)``); pass ``generator=`` or use :class:`Generator` methods for an
independent stream. The generator classes and the state functions are C++
(csrc/python/bind_generator.cpp), the samplers too (bind_random_forms.cpp,
bind_random_samplers.cpp).

    >>> g = ts.random.Generator(42)
    >>> g.normal(0.0, 1.0, size=(2, 3)).shape
    (2, 3)
"""
from __future__ import annotations

import contextlib as _contextlib
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Iterator

from . import _C
from ._C import rand, randn, uniform, randint, randperm  # noqa: F401
from ._C import normal, bernoulli, multinomial, poisson, binomial  # noqa: F401
from ._C._random import (Generator, manual_seed, seed, initial_seed,  # noqa: F401
                         get_rng_state, set_rng_state, exponential, permutation, shuffle, choice)

__all__ = ["Generator", "seed", "manual_seed", "default_generator", "rand", "randn", "randint",
           "randperm", "uniform", "normal", "bernoulli", "exponential", "permutation", "shuffle",
           "choice", "multinomial", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]

default_generator: Generator = _C._default_generator()


def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Any:
    """A context manager that restores the default generator's state on exit (torch.random.
    fork_rng, same signature; one generator serves every device); with enabled=False it does
    nothing."""
    if devices is not None and (isinstance(devices, (str, bytes))
                                or not hasattr(devices, "__iter__")):
        raise TypeError(f"fork_rng: devices must be None or a list of devices, got "
                        f"{type(devices).__name__}")
    return _forked(enabled)


@_contextlib.contextmanager
def _forked(enabled: bool) -> Iterator[None]:
    state = default_generator.get_state() if enabled else None
    try:
        yield
    finally:
        if state is not None:
            default_generator.set_state(state)
