"""The Distribution base class (torch.distributions.Distribution): shapes, argument and
sample validation, and the defaults the concrete distributions override."""
from __future__ import annotations

import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional

import tessera as ts

from . import constraints
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Distribution"]


def _size(shape: Any) -> Any:
    return ts.Size(tuple(shape))


class Distribution:
    """Distribution is the abstract base class for probability distributions.

    `batch_shape` indexes independent distributions, `event_shape` the dims of one draw;
    `sample(sample_shape)` has shape sample_shape + batch_shape + event_shape. Parameters
    and values are checked against `arg_constraints` / `support` when validation is on
    (the default; `Distribution.set_default_validate_args(False)` turns it off)."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Sets whether validation is enabled or disabled by default."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (),
                 validate_args: Optional[bool] = None) -> None:
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                _warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                             lazy_property):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Distribution":
        """A new distribution (or `_instance`, filled in) with batch dims expanded to
        `batch_shape`; parameters are expanded views, nothing is copied. The default expands
        every parameter present in `arg_constraints` (its constraint's event dims kept)."""
        new = self._get_checked_instance(type(self), _instance)
        batch_shape = _size(batch_shape)
        for param, constraint in self.arg_constraints.items():
            if param in self.__dict__:
                value = self.__dict__[param]
                event_dim = 0 if constraints.is_dependent(constraint) else constraint.event_dim
                event = tuple(value.shape[value.dim() - event_dim:]) if event_dim else ()
                setattr(new, param, value.expand(tuple(batch_shape) + event))
        return self._expanded(new, batch_shape)

    def _expanded(self, new: "Distribution", batch_shape: Any) -> Any:
        """Finishes an expand: `new` gets batch_shape, this event_shape and this validation
        setting (its parameters are already expanded)."""
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def batch_shape(self) -> Any:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Any:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> Dict[str, Any]:
        """Each argument's constraint (a dict name -> Constraint)."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The Constraint object representing this distribution's support."""
        raise NotImplementedError

    @property
    def mean(self) -> Any:
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self) -> Any:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Any:
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self) -> Any:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> Any:
        """A sample (or a batch of them, shape sample_shape + batch_shape + event_shape),
        not differentiable."""
        with ts.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        """A reparameterized sample: differentiable w.r.t. the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Any:
        _warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning,
                      stacklevel=2)
        return self.sample(ts.Size((n,)))

    def log_prob(self, value: Any) -> Any:
        raise NotImplementedError

    def cdf(self, value: Any) -> Any:
        raise NotImplementedError

    def icdf(self, value: Any) -> Any:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Any:
        raise NotImplementedError

    def entropy(self) -> Any:
        raise NotImplementedError

    def perplexity(self) -> Any:
        return ts.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = ()) -> Any:
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, tuple):
            sample_shape = tuple(sample_shape)
        return ts.Size(sample_shape + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Any) -> None:
        """Raises ValueError unless value is a tensor whose rightmost dims broadcast with
        batch_shape + event_shape and whose values lie in the support."""
        if not ts.is_tensor(value):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {_size(expected_shape)}.")
        try:
            support = self.support
        except NotImplementedError:
            _warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        assert support is not None
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p].item() if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names)
        return self.__class__.__name__ + "(" + args_string + ")"


class _ProbsOrLogits:
    """The probs/logits pair of Bernoulli, Binomial and Categorical: one is given (and
    `_param`), the other is derived lazily; `_binary` says whether logits are log-odds
    (sigmoid) or unnormalized log-probabilities over the last dim (softmax)."""
    _binary = True
    _param: Any

    def _set_probs_or_logits(self, probs: Any, logits: Any, convert: Any) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        setattr(self, name, convert(value))
        self._param = getattr(self, name)

    def _set_count_and_probs_or_logits(self, total_count: Any, probs: Any, logits: Any) -> None:
        """Sets probs or logits and `total_count` broadcast together (the count in the
        parameter's dtype): Binomial's and NegativeBinomial's parameters."""
        counts = []

        def convert(v: Any) -> Any:
            n, p = broadcast_all(total_count, v)
            counts.append(n.type_as(p))
            return p

        self._set_probs_or_logits(probs, logits, convert)
        self.total_count = counts[0]

    def _expand_count_and_probs_or_logits(self, new: Any, batch_shape: Any) -> None:
        new.total_count = self.total_count.expand(tuple(batch_shape))
        self._expand_probs_or_logits(new, tuple(batch_shape))

    def _expand_probs_or_logits(self, new: Any, shape: tuple) -> None:
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(shape))
                new._param = getattr(new, name)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=self._binary)

    @property
    def param_shape(self) -> Any:
        return self._param.size()
