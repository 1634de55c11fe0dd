"""einsum: bound in C++ with every call form (csrc/python/bind_einsum.cpp; the op, parsing and
greedy pairwise contraction through matmul in csrc/ops/einsum.cpp)."""
from ._C import einsum

__all__ = ["einsum"]
