"""F.affine_grid and F.grid_sample: the C++ bindings themselves (csrc/python/bind_resample.cpp;
the ops and Note [Sampling by gathered corners] in csrc/ops/nn/grid_sample.cpp)."""
from ..._C import affine_grid, grid_sample  # noqa: F401
