"""Auto-wrap policies of FullyShardedDataParallel (PyTorch's ``torch.distributed.fsdp.wrap``).

A policy answers, for each submodule (children first), whether it gets its own FSDP wrapper:
``policy(module=m, recurse=False, nonwrapped_numel=n) -> bool`` as PyTorch calls them, so
``functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})`` and
``ModuleWrapPolicy({Block})`` both work.
"""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Iterable, Set, Type

__all__ = ["ModuleWrapPolicy", "transformer_auto_wrap_policy", "size_based_auto_wrap_policy"]


class ModuleWrapPolicy:
    """Wraps every submodule that is an instance of one of `module_classes`."""

    def __init__(self, module_classes: Iterable[Type[Any]]) -> None:
        self._module_classes: Set[Type[Any]] = set(module_classes)

    def __call__(self, module: Any, recurse: bool, nonwrapped_numel: int = 0) -> bool:
        return True if recurse else isinstance(module, tuple(self._module_classes))


def transformer_auto_wrap_policy(module: Any, recurse: bool, nonwrapped_numel: int,
                                 transformer_layer_cls: Set[Type[Any]]) -> bool:
    """Wraps instances of `transformer_layer_cls` (use with functools.partial)."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module: Any, recurse: bool, nonwrapped_numel: int,
                                min_num_params: int = int(1e8)) -> bool:
    """Wraps a submodule once the parameters not yet wrapped below it reach min_num_params."""
    return True if recurse else nonwrapped_numel >= min_num_params
