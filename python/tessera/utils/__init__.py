"""tessera.utils: checkpoint, data and swap_tensors."""
from __future__ import annotations

from .._C import Tensor
from .._tensor import TRANSIENT_ATTRS
from . import checkpoint  # noqa: F401
from . import data  # noqa: F401
# tessera.utils.tensorboard is imported on use (it needs the optional tensorboard package),
# as torch.utils.tensorboard is.


__all__ = ["checkpoint", "data", "swap_tensors"]


def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Exchanges everything two tensors hold (data, shape, dtype, requires_grad, .grad and
    Python attributes such as the Parameter marker) while both keep their identity
    (torch.utils.swap_tensors). Tensors with autograd history cannot be swapped."""
    if not isinstance(t1, Tensor) or not isinstance(t2, Tensor):
        raise TypeError(f"swap_tensors: expected two tensors, got {type(t1).__name__} and "
                        f"{type(t2).__name__}")
    if t1 is t2:
        return
    if t1.grad_fn is not None or t2.grad_fn is not None:
        raise RuntimeError("swap_tensors: cannot swap tensors that have autograd history "
                           "(grad_fn); detach them first")
    g1, g2 = t1.grad, t2.grad
    r1, r2 = t1.requires_grad, t2.requires_grad
    d1, d2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.grad = None
    t2.grad = None
    data1 = t1.detach()
    t1._set_data(t2.detach())
    t2._set_data(data1)
    t1.requires_grad_(r2)
    t2.requires_grad_(r1)
    t1.__dict__.clear()
    t1.__dict__.update({k: v for k, v in d2.items() if k not in TRANSIENT_ATTRS})
    t2.__dict__.clear()
    t2.__dict__.update({k: v for k, v in d1.items() if k not in TRANSIENT_ATTRS})
    t1.grad, t2.grad = g2, g1
