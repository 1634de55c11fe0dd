"""tessera.optim: optimizers with PyTorch's update rules (trajectories match) and
learning-rate schedulers (``ts.optim.lr_scheduler``)."""
from .optimizer import (Optimizer, register_optimizer_step_pre_hook,  # noqa: F401
                        register_optimizer_step_post_hook)
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .rmsprop import RMSprop, Adagrad  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .rprop import Rprop  # noqa: F401
from .nadam import NAdam, RAdam  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .adafactor import Adafactor  # noqa: F401
from .muon import Muon  # noqa: F401
from . import swa_utils  # noqa: F401
from . import lr_scheduler  # noqa: F401
