"""ts.backends: switches for the compute backends (``ts.backends.cuda.matmul.allow_tf32``)."""
from . import cuda

__all__ = ["cuda"]
