"""Constraint -> transform registries (torch.distributions.constraint_registry):
`biject_to(c)` is a bijection from unconstrained space onto c's set (for HMC-style
reparameterization), `transform_to(c)` any transform onto it (for optimization), with
torch's mapping; `register` adds factories for more constraint classes."""
from __future__ import annotations

import numbers as _numbers
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Maps a Constraint subclass to a factory constraint -> Transform."""

    def __init__(self) -> None:
        self._registry: Dict[type, Callable] = {}
        super().__init__()

    def register(self, constraint: Any, factory: Optional[Callable] = None) -> Any:
        """Registers `factory` for a Constraint subclass (or the class of a singleton
        constraint); usable as a decorator when factory is left out."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: Any) -> transforms.Transform:
        """The transform onto `constraint`'s set; NotImplementedError when none is
        registered for its class."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register_both(constraint: Any, factory: Callable) -> None:
    biject_to.register(constraint, factory)
    transform_to.register(constraint, factory)


def _to_greater_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)])


def _to_less_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)])


def _to_interval(constraint: Any) -> transforms.Transform:
    lower_is_0 = isinstance(constraint.lower_bound, _numbers.Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, _numbers.Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc, scale = constraint.lower_bound, constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(loc, scale)])


def _registered_in(registry: ConstraintRegistry) -> tuple:
    """The factories that recurse into `registry` (independent, cat, stack)."""
    def independent(constraint: Any) -> transforms.Transform:
        return transforms.IndependentTransform(registry(constraint.base_constraint),
                                               constraint.reinterpreted_batch_ndims)

    def cat(constraint: Any) -> transforms.Transform:
        return transforms.CatTransform([registry(c) for c in constraint.cseq], constraint.dim,
                                       constraint.lengths)

    def stack(constraint: Any) -> transforms.Transform:
        return transforms.StackTransform([registry(c) for c in constraint.cseq], constraint.dim)

    return independent, cat, stack


_register_both(constraints.real, lambda constraint: transforms.identity_transform)
_register_both(constraints.positive, lambda constraint: transforms.ExpTransform())
_register_both(constraints.nonnegative, lambda constraint: transforms.ExpTransform())
# greater_than's class is positive's (and greater_than_eq's nonnegative's): these win, as in torch
_register_both(constraints.greater_than, _to_greater_than)
_register_both(constraints.greater_than_eq, _to_greater_than)
_register_both(constraints.less_than, _to_less_than)
_register_both(constraints.interval, _to_interval)
_register_both(constraints.half_open_interval, _to_interval)
biject_to.register(constraints.simplex, lambda constraint: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda constraint: transforms.SoftmaxTransform())
_register_both(constraints.corr_cholesky, lambda constraint: transforms.CorrCholeskyTransform())
transform_to.register(constraints.lower_cholesky,
                      lambda constraint: transforms.LowerCholeskyTransform())
transform_to.register(constraints.positive_definite,
                      lambda constraint: transforms.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite,
                      lambda constraint: transforms.PositiveDefiniteTransform())
for _registry in (biject_to, transform_to):
    _independent, _cat, _stack = _registered_in(_registry)
    _registry.register(constraints.independent, _independent)
    _registry.register(constraints.cat, _cat)
    _registry.register(constraints.stack, _stack)
