"""tessera.nn.utils.prune: PyTorch's pruning API (torch.nn.utils.prune).

Pruning parameter `name` of a module moves the original tensor to the parameter
``name_orig``, registers the binary mask as the buffer ``name_mask`` and installs the pruning
method as a forward pre-hook that recomputes the plain attribute ``name`` as
``name_orig * name_mask`` before every forward (so gradients reach ``name_orig`` only where
the mask is 1). Pruning an already pruned tensor again chains the methods in a
PruningContainer: the new method only sees the entries (or channels) the earlier masks kept.
``remove`` makes the pruning permanent: ``name`` becomes a Parameter again holding the
masked values.
"""
from __future__ import annotations

import numbers as _numbers
import typing as _t
from abc import ABC, abstractmethod
from collections.abc import Iterable

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Optional, Tuple

from ..._C import Tensor

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]

_Amount = _t.Union[int, float]


def _ts() -> Any:
    import tessera
    return tessera


class PruningShapeError(ValueError, AssertionError):
    """A mask or importance_scores shaped unlike the tensor pruned (torch asserts there, so
    this is also an AssertionError)."""


class BasePruningMethod(ABC):
    """Base of the pruning methods: subclasses define ``compute_mask`` and ``PRUNING_TYPE``
    ('unstructured', 'structured' or 'global'); an instance is the forward pre-hook that
    recomputes the pruned tensor."""

    _tensor_name: Optional[str]
    PRUNING_TYPE: str = "unstructured"

    def __call__(self, module: Any, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for `t`, combined with `default_mask` (the mask so far)."""

    def apply_mask(self, module: Any) -> Tensor:
        """``name_orig * name_mask`` of `module` for the tensor this method prunes."""
        name = getattr(self, "_tensor_name", None)
        if name is None:
            raise RuntimeError(f"Module {module} has to be pruned before its mask can be applied")
        mask = getattr(module, name + "_mask")
        orig = getattr(module, name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def _composite(cls, module: Any, name: str, *args: Any, **kwargs: Any
                   ) -> "BasePruningMethod":
        """The new method, or a container chaining it after the method already pruning
        `name` (whose hook is taken off `module`)."""
        old, keys = None, []
        for key, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old = hook
                keys.append(key)
        if len(keys) > 1:
            raise RuntimeError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                               f"of module {module}. Use a PruningContainer.")
        for key in keys:
            del module._forward_pre_hooks[key]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old is None:
            return method
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            return old
        container = PruningContainer(old)
        container.add_pruning_method(method)
        return container

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any,
              importance_scores: Optional[Tensor] = None, **kwargs: Any) -> "BasePruningMethod":
        """Prunes parameter `name` of `module` in place (see the module docstring) and
        returns the method installed as its forward pre-hook."""
        t = _ts()
        method = cls._composite(module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                raise PruningShapeError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}: got {tuple(importance_scores.shape)}, expected "
                    f"{tuple(orig.shape)}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = t.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # put the parameter back as it was
                orig = getattr(module, name + "_orig")
                module.__dict__.pop(name, None)
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Optional[Tensor] = None,
              importance_scores: Optional[Tensor] = None) -> Tensor:
        """`t` times the mask this method computes for it (from `importance_scores` if
        given)."""
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(t.shape):
                raise PruningShapeError(
                    "importance_scores should have the same shape as tensor t: got "
                    f"{tuple(importance_scores.shape)}, expected {tuple(t.shape)}")
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = _ts().ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Any) -> None:
        """Makes the pruning permanent: `name` becomes a Parameter holding
        ``name_orig * name_mask``; ``name_orig`` and ``name_mask`` are dropped. The hook
        itself is taken off by the function ``remove``."""
        name = getattr(self, "_tensor_name", None)
        if name is None:
            raise RuntimeError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods for one tensor, applied iteratively: the last one
    computes its mask only over what the earlier masks kept."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: Tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: Optional[BasePruningMethod]) -> None:
        """Appends `method` (which must prune the same tensor) to the container."""
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and getattr(self, "_tensor_name", None) != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{getattr(self, '_tensor_name', None)}' to PruningContainer "
                             f"{self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)  # type: ignore[operator]

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """`default_mask` with the last method's mask written over the part it kept:
        unstructured methods see the unpruned entries, structured ones the unpruned
        channels along their dim, global ones the whole tensor."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc: Any = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to "
                                     "have the attribute `dim` defined.")
            ndim = t.ndim
            dim = method.dim  # type: ignore[attr-defined]
            if dim < 0:
                dim += ndim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            others = [d for d in range(ndim) if d != dim]
            keep = default_mask.sum(dim=others) != 0
            parts: List[Any] = [slice(None)] * ndim
            parts[dim] = keep
            slc = tuple(parts)
        elif kind == "global":
            slc = tuple([slice(None)] * t.ndim)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> "Identity":  # type: ignore[override]
        return super().apply(module, name)  # type: ignore[return-value]


def _check_amount(amount: Any) -> None:
    """torch's checks of `amount` at construction (a bool, which torch lets through to fail
    in topk with a TypeError, is refused here with the same class)."""
    if isinstance(amount, bool) or not isinstance(amount, _numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, _numbers.Integral) and amount < 0) or (
            not isinstance(amount, _numbers.Integral)
            and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _n_to_prune(amount: _Amount, size: int) -> int:
    """How many of `size` units `amount` prunes (a float is a fraction, rounded as Python's
    round); an int larger than `size` raises."""
    n = amount if isinstance(amount, _numbers.Integral) else round(amount * size)
    if n > size:
        raise ValueError(f"amount={n} should be smaller than the number of parameters to "
                         f"prune={size}")
    return int(n)


def _check_structured(t: Tensor, dim: int) -> None:
    if t.ndim <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {tuple(t.shape)} with {t.ndim} dims")
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _channel_mask(t: Tensor, dim: int, index: Tensor) -> Tensor:
    """Zeros shaped as `t` with ones on the channels `index` (bool or int) of `dim`."""
    mask = _ts().zeros_like(t)
    parts: List[Any] = [slice(None)] * t.ndim
    parts[dim] = index
    mask[tuple(parts)] = 1
    return mask


class _UnstructuredByScore(BasePruningMethod):
    """Prunes `amount` (a count or fraction) of the entries: those with the largest
    ``_scores`` (or the smallest, when ``_LARGEST`` is False)."""

    PRUNING_TYPE = "unstructured"
    _LARGEST = True

    def __init__(self, amount: _Amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def _scores(self, t: Tensor) -> Tensor:
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        n = _n_to_prune(self.amount, t.numel())
        mask = default_mask.clone().contiguous()
        if n != 0:
            idx = _ts().topk(self._scores(t).reshape(-1), k=n, largest=self._LARGEST).indices
            mask.view(-1)[idx] = 0
        return mask


class RandomUnstructured(_UnstructuredByScore):
    """Prunes `amount` (a count or fraction) of the entries, chosen at random."""

    def _scores(self, t: Tensor) -> Tensor:
        return _ts().rand_like(t)

    @classmethod
    def apply(cls, module: Any, name: str, amount: _Amount  # type: ignore[override]
              ) -> "RandomUnstructured":
        return super().apply(module, name, amount=amount)  # type: ignore[return-value]


class L1Unstructured(_UnstructuredByScore):
    """Prunes `amount` (a count or fraction) of the entries with the smallest magnitude."""

    _LARGEST = False

    def _scores(self, t: Tensor) -> Tensor:
        return _ts().abs(t)

    @classmethod
    def apply(cls, module: Any, name: str, amount: _Amount,  # type: ignore[override]
              importance_scores: Optional[Tensor] = None) -> "L1Unstructured":
        return super().apply(module, name, amount=amount,  # type: ignore[return-value]
                             importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` (a count or fraction) of the channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: _Amount, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        ts = _ts()
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        n = _n_to_prune(self.amount, size)
        if n == 0:
            return default_mask
        prob = ts.rand(size)
        threshold = ts.kthvalue(prob, k=n).values
        mask = _channel_mask(t, self.dim, prob > threshold)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, amount: _Amount,  # type: ignore[override]
              dim: int = -1) -> "RandomStructured":
        return super().apply(module, name, amount=amount, dim=dim)  # type: ignore[return-value]


class LnStructured(BasePruningMethod):
    """Prunes `amount` (a count or fraction) of the channels along `dim` with the smallest
    L`n` norm (`n` as ``tessera.norm``'s p: a number, inf, -inf, 'fro' or 'nuc')."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: _Amount, n: Any, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        ts = _ts()
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        n_prune = _n_to_prune(self.amount, size)
        dim = self.dim + t.ndim if self.dim < 0 else self.dim
        norm = ts.norm(t, p=self.n, dim=[d for d in range(t.ndim) if d != dim])
        keep = ts.topk(norm, k=size - n_prune, largest=True).indices
        if n_prune == 0:
            return default_mask
        mask = _channel_mask(t, dim, keep)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, amount: _Amount, n: Any,  # type: ignore[override]
              dim: int, importance_scores: Optional[Tensor] = None) -> "LnStructured":
        return super().apply(module, name, amount=amount, n=n,  # type: ignore[return-value]
                             dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (combined with the mask so far)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise PruningShapeError(f"CustomFromMask: the mask has shape "
                                    f"{tuple(self.mask.shape)}, the tensor pruned "
                                    f"{tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Tensor  # type: ignore[override]
              ) -> "CustomFromMask":
        return super().apply(module, name, mask=mask)  # type: ignore[return-value]


def identity(module: Any, name: str) -> Any:
    """Prunes nothing of `name` but installs the pruning reparametrization; returns
    `module`."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: _Amount) -> Any:
    """Prunes `amount` random entries of `name` of `module`; returns `module`."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: _Amount,
                    importance_scores: Optional[Tensor] = None) -> Any:
    """Prunes the `amount` entries of `name` with the smallest |importance_scores| (default
    the tensor itself); returns `module`."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: _Amount, dim: int) -> Any:
    """Prunes `amount` random channels along `dim` of `name`; returns `module`."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Any, name: str, amount: _Amount, n: Any, dim: int,
                  importance_scores: Optional[Tensor] = None) -> Any:
    """Prunes the `amount` channels along `dim` of `name` with the smallest Ln norm of
    importance_scores (default the tensor itself); returns `module`."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable, pruning_method: type,
                        importance_scores: Optional[Dict[Tuple[Any, str], Tensor]] = None,
                        **kwargs: Any) -> None:
    """Prunes the (module, name) pairs of `parameters` together: `pruning_method` (an
    unstructured method class, built with `kwargs`) computes one mask over all their
    entries (scored by `importance_scores[(module, name)]`, default the current tensor),
    which is then applied to each as ``custom_from_mask``."""
    ts = _ts()
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    from .convert_parameters import parameters_to_vector
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for (m, n) in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", None)
                                         if hasattr(m, n + "_mask")
                                         else ts.ones_like(getattr(m, n))
                                         for (m, n) in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[start:start + count].view_as(param))
        start += count


def custom_from_mask(module: Any, name: str, mask: Tensor) -> Any:
    """Prunes `name` of `module` with `mask`; returns `module`."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Any, name: str) -> Any:
    """Makes the pruning of `name` permanent (see BasePruningMethod.remove) and takes the
    pruning hook off `module`; returns `module`."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module: Any) -> bool:
    """Whether `module` or any of its submodules has a pruning hook."""
    for _, sub in module.named_modules():
        for hook in sub._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
