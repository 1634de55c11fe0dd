"""Index-based selection and update: take (array API and torch), nonzero / argwhere, and
PyTorch's index_fill / index_copy / index_put / scatter_reduce / masked_scatter / put / the
*_scatter family (as_strided_scatter too) / nonzero_static / index_reduce / unravel_index,
with the matching Tensor methods (x.fill_diagonal_ among them). All are C++ functions with
their argument forms parsed in the bindings (csrc/python/bind_search.cpp,
csrc/python/bind_index_forms.cpp); this module gathers them into the namespace.

``ts.nonzero(x)`` follows the standard (and NumPy): a tuple of ``x.ndim`` int64 index
tensors. The method ``x.nonzero()`` follows PyTorch: one ``(count, x.ndim)`` int64 tensor
(``x.nonzero(as_tuple=True)`` gives the standard's tuple). ``ts.argwhere(x)`` is NumPy's name
for the PyTorch form.

Indices may be negative (counted from the end) in every function here, as in NumPy; an
out-of-range index raises IndexError naming the axis, the index and the size.
"""
from __future__ import annotations

from ._C import (  # noqa: F401  (the C++ functions: csrc/python/bind_search.cpp)
    argwhere, gather, index_add, index_copy, index_fill, index_select, masked_fill,
    masked_select, nonzero, scatter, scatter_add, take_along_axis,
)
from ._C import (  # noqa: F401  (csrc/python/bind_index_forms.cpp)
    as_strided_scatter, diagonal_scatter, index_put, index_reduce, masked_scatter,
    nonzero_static, put, scatter_reduce, select_scatter, slice_scatter, take, unravel_index,
)

__all__ = ["take", "take_along_axis", "nonzero", "argwhere", "gather", "scatter",
           "scatter_add", "index_select", "index_add", "masked_fill", "masked_select"]

# ---- PyTorch's indexing functions (scatter_reduce, index_put, masked_scatter, put and their
# methods and in-place forms are C++: csrc/python/bind_index_forms.cpp)
_TORCH_NAMES = ["index_fill", "index_copy"]  # PyTorch's (the standard's are above)
__all__ += _TORCH_NAMES + ["scatter_reduce", "index_put", "masked_scatter", "put",
                          "select_scatter", "slice_scatter", "diagonal_scatter", "nonzero_static",
                          "as_strided_scatter", "index_reduce", "unravel_index"]


METHODS: dict = {}  # (every method of this family is C++ now)
