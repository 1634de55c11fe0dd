"""tessera.nn.parallel: DistributedDataParallel (one process per device) and DataParallel
(one device), PyTorch's names and state-dict layouts."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
