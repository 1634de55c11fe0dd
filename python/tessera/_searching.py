"""Searching: searchsorted (array API 2024.12, with PyTorch's side=/right=/sorter=/out_int32=
and N-D form) is the C++ binding (csrc/python/bind_index_forms.cpp); argmax/argmin/where/
count_nonzero live in _statistical, nonzero in _indexing."""
from ._C import searchsorted  # noqa: F401

__all__ = ["searchsorted"]
