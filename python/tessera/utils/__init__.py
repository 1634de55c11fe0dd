"""tessera.utils: checkpoint (and data, with the training issue)."""
from . import checkpoint  # noqa: F401
