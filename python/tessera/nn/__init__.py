"""tessera.nn: modules, functional ops, initialization and utilities, PyTorch-compatible
(a torch ``state_dict`` loads directly into the matching tessera module)."""
from .parameter import (Parameter, Buffer, UninitializedParameter,  # noqa: F401
                        UninitializedBuffer)
from .modules import *  # noqa: F401,F403
from . import functional, init, parameter, utils, parallel, attention  # noqa: F401
from .parallel import DataParallel  # noqa: F401
