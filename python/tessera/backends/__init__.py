"""ts.backends: switches for the compute backends (``ts.backends.cuda.matmul.allow_tf32``,
``ts.backends.cudnn.benchmark``), as torch.backends."""
from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
