"""tessera.utils: checkpoint and data."""
from . import checkpoint  # noqa: F401
from . import data  # noqa: F401
# tessera.utils.tensorboard is imported on use (it needs the optional tensorboard package),
# as torch.utils.tensorboard is.
