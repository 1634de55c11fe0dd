"""tessera.nn: modules, functional ops, initialization and utilities, PyTorch-compatible
(a torch ``state_dict`` loads directly into the matching tessera module)."""
from .parameter import Parameter, Buffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import functional, init, utils  # noqa: F401
