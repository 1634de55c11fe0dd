"""Gathers the namespace's functions: those bound in C++ and one Python module per family."""
from __future__ import annotations

from ._C import add, subtract, multiply, divide, negative, conj, matmul  # noqa: F401
from ._elementwise import *  # noqa: F401,F403
from ._statistical import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._linalg_core import *  # noqa: F401,F403
from ._interop import *  # noqa: F401,F403
from ._einsum import einsum  # noqa: F401
from .random import (rand, randn, randint, randperm, seed,  # noqa: F401
                     bernoulli, multinomial, normal, initial_seed, get_rng_state,
                     set_rng_state, manual_seed, poisson, binomial)
from ._C import Generator  # noqa: F401  (torch.Generator; csrc/python/bind_generator.cpp)
from ._indexing import *  # noqa: F401,F403
from ._searching import *  # noqa: F401,F403
from ._C import sort, argsort, topk  # noqa: F401  (csrc/python/bind_search.cpp)
from ._C import (unique, unique_consecutive, unique_all, unique_counts,  # noqa: F401
                 unique_inverse, unique_values, isin)  # (csrc/python/bind_sets.cpp)

