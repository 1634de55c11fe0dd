"""LazyModuleMixin (torch.nn.modules.lazy), behind LazyLinear, LazyConv*, LazyConvTranspose*,
LazyBatchNorm* and LazyInstanceNorm* (each defined next to its regular class): the input size
is inferred on the first forward.

Until then the weights are UninitializedParameter placeholders (nn/_uninitialized.py). The
first call runs ``initialize_parameters(input)`` from a forward pre-hook, materializes the
placeholders in place (an optimizer built earlier keeps them), runs ``reset_parameters`` and
turns the module into its regular class (``cls_to_become``: LazyLinear becomes Linear), as
torch's LazyModuleMixin. Loading a state dict into a lazy module materializes the placeholders
with the loaded shapes.
"""
from __future__ import annotations

import itertools as _itertools
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

from .._uninitialized import is_lazy
from .module import Module


def _no_grad() -> Any:
    from ...autograd import no_grad
    return no_grad()


class LazyModuleMixin:
    """Mixin (listed first) for modules whose parameters' shapes come from the first input:
    subclasses implement ``initialize_parameters(*args, **kwargs)``."""

    cls_to_become: Optional[type] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._load_hook = self._register_load_state_dict_pre_hook(  # type: ignore[attr-defined]
            self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        # Placeholders are saved as themselves (torch: detach would lose the marker).
        for name, param in self._parameters.items():  # type: ignore[attr-defined]
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars \
                    else param.detach()
        for name, buf in self._buffers.items():  # type: ignore[attr-defined]
            if buf is not None and name not in self._non_persistent_buffers:  # type: ignore
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict: Dict[str, Any], prefix: str, local_metadata: Any,
                        strict: bool, missing_keys: List[str], unexpected_keys: List[str],
                        error_msgs: List[str]) -> None:
        """Materializes each placeholder that the state dict gives a real tensor for."""
        for name, param in _itertools.chain(self._parameters.items(),  # type: ignore
                                           self._buffers.items()):  # type: ignore
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with _no_grad():
                        param.materialize(tuple(value.shape))

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materializes the placeholders from the first input (subclasses implement it)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether some parameter or buffer of this module is still a placeholder."""
        return any(is_lazy(t) for t in _itertools.chain(
            self._parameters.values(), self._buffers.values()))  # type: ignore[attr-defined]

    def _infer_parameters(self, module: Module, args: Any, kwargs: Any = None) -> None:
        """The forward pre-hook: initializes, removes the hooks, becomes cls_to_become."""
        module.initialize_parameters(*args, **(kwargs or {}))  # type: ignore[attr-defined]
        if module.has_uninitialized_params():  # type: ignore[attr-defined]
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")  # type: ignore
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:  # type: ignore[attr-defined]
            module.__class__ = module.cls_to_become  # type: ignore[attr-defined]

    def _replicate_for_data_parallel(self) -> None:
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


def _lazy_hooks(mod: Any) -> None:
    """The two hooks LazyModuleMixin.__init__ registers (for classes whose __init__ calls the
    regular base's __init__ directly)."""
    mod._load_hook = mod._register_load_state_dict_pre_hook(mod._lazy_load_hook)
    mod._initialize_hook = mod.register_forward_pre_hook(mod._infer_parameters,
                                                         with_kwargs=True)
