"""Invertible transforms with a computable log |det Jacobian| (torch.distributions.transforms),
for TransformedDistribution. The math is tessera ops, so transforms are differentiable."""
from __future__ import annotations

import math as _math
import numbers as _numbers
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, List

import tessera as ts
from tessera.nn.functional import logsigmoid, pad, softplus

from . import constraints
from .utils import _sum_rightmost, clamp_probs, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]


class Transform:
    """y = T(x), invertible (`inv`), with `log_abs_det_jacobian(x, y)`. `cache_size=1` keeps
    the last (x, y) pair so that inverting a value the transform just produced returns the x
    it came from."""
    bijective = False
    domain: Any = constraints.real
    codomain: Any = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv: Any = None
        self._cached_x_y: Any = (None, None)

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> "Transform":
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    @property
    def sign(self) -> Any:
        """The sign of the Jacobian's determinant, where it is constant."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> "Transform":
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Any) -> Any:
        return self._cached(x, forward=True)

    def _inv_call(self, y: Any) -> Any:
        return self._cached(y, forward=False)

    def _cached(self, v: Any, forward: bool) -> Any:
        """_call(v) (forward) or _inverse(v), served from the last pair when v is its x (y)."""
        fn = self._call if forward else self._inverse
        if self._cache_size == 0:
            return fn(v)
        pair = self._cached_x_y if forward else self._cached_x_y[::-1]
        if v is pair[0]:
            return pair[1]
        out = fn(v)
        self._cached_x_y = (v, out) if forward else (out, v)
        return out

    def _call(self, x: Any) -> Any:
        raise NotImplementedError

    def _inverse(self, y: Any) -> Any:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        raise NotImplementedError

    def forward_shape(self, shape: Any) -> Any:
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        return shape

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform (`t.inv`)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> Any:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x: Any) -> Any:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """The transforms in `parts` applied in order."""

    def __init__(self, parts: List[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self) -> Any:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> Any:
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def __call__(self, x: Any) -> Any:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        if not self.parts:
            return ts.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, x_, y_ in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(x_, y_),
                                        event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        result = terms[0]
        for t in terms[1:]:
            result = result + t
        return result

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        return (self.__class__.__name__ + "(\n    "
                + ",\n    ".join(repr(p) for p in self.parts) + "\n)")


identity_transform = ComposeTransform([])


class _ParameterFree(Transform):
    """A transform without parameters: equal to every instance of its class."""
    bijective = True
    sign = +1

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, type(self))

    __hash__ = object.__hash__


class ExpTransform(_ParameterFree):
    """y = exp(x)."""
    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x: Any) -> Any:
        return x.exp()

    def _inverse(self, y: Any) -> Any:
        return y.log()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return x


class AbsTransform(Transform):
    """y = |x| (not bijective: its inverse is the identity)."""
    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x: Any) -> Any:
        return x.abs()

    def _inverse(self, y: Any) -> Any:
        return y


class PowerTransform(Transform):
    """y = x ** exponent (on positive x)."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _as_tensors(exponent)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self) -> Any:
        return self.exponent.sign()

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    def _call(self, x: Any) -> Any:
        return x.pow(self.exponent)

    def _inverse(self, y: Any) -> Any:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return (self.exponent * y / x).abs().log()


def _as_tensors(*values: Any) -> tuple:
    return tuple(v if ts.is_tensor(v) else ts.tensor(v, dtype=ts.get_default_dtype())
                 for v in values)


def _clipped_sigmoid(x: Any) -> Any:
    return clamp_probs(ts.sigmoid(x))


class SigmoidTransform(_ParameterFree):
    """y = sigmoid(x), clamped into (0, 1) by the dtype's eps."""
    domain = constraints.real
    codomain = constraints.unit_interval

    def _call(self, x: Any) -> Any:
        return _clipped_sigmoid(x)

    def _inverse(self, y: Any) -> Any:
        finfo = ts.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -softplus(-x) - softplus(x)


class TanhTransform(_ParameterFree):
    """y = tanh(x)."""
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x: Any) -> Any:
        return x.tanh()

    def _inverse(self, y: Any) -> Any:
        return ts.atanh(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        # log(1 - tanh(x)^2), stably
        return 2.0 * (_math.log(2.0) - x - softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale * x, over `event_dim` event dims."""
    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self) -> Any:  # type: ignore[override]
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return self.domain

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, _numbers.Number) and isinstance(b, _numbers.Number):
                if a != b:
                    return False
            elif not bool((ts.as_tensor(a) == ts.as_tensor(b)).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, _numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x: Any) -> Any:
        return self.loc + self.scale * x

    def _inverse(self, y: Any) -> Any:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        shape = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, _numbers.Real):
            result = ts.full_like(x, _math.log(abs(scale)))
        else:
            result = ts.abs(scale).log()
        if self.event_dim:
            result_size = tuple(result.shape[:result.dim() - self.event_dim]) + (-1,)
            result = result.reshape(result_size).sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape: Any) -> Any:
        return tuple(ts.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                         tuple(getattr(self.scale, "shape", ()))))

    def inverse_shape(self, shape: Any) -> Any:
        return self.forward_shape(shape)


class SoftplusTransform(_ParameterFree):
    """y = softplus(x) = log(1 + exp(x))."""
    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x: Any) -> Any:
        return softplus(x)

    def _inverse(self, y: Any) -> Any:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -softplus(-x)


def _shape_at_least_1(shape: Any) -> tuple:
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return tuple(shape)


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by exp then normalizing (not bijective: its
    inverse is log)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x: Any) -> Any:
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Any) -> Any:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        return _shape_at_least_1(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return _shape_at_least_1(shape)


def _stick_offset(x: Any, k: int) -> Any:
    """k - [0, 1, ..., n-1] over x's last dim (n): the stick-breaking shift."""
    n = x.shape[-1]
    return k - ts.ones(n, dtype=x.dtype, device=x.device).cumsum(-1)


class StickBreakingTransform(_ParameterFree):
    """Unconstrained R^(n) to the n-simplex in R^(n+1) by stick breaking: a bijection
    (used by LogisticNormal and biject_to(simplex))."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x: Any) -> Any:
        z = _clipped_sigmoid(x - _stick_offset(x, x.shape[-1] + 1).log())
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y: Any) -> Any:
        y_crop = y[..., :-1]
        sf = (1 - y_crop.cumsum(-1)).clamp(min=ts.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + _stick_offset(y_crop, y.shape[-1]).log()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        x = x - _stick_offset(x, x.shape[-1] + 1).log()
        # 1 - sigmoid(x) = exp(-x) sigmoid(x)
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        shape = _shape_at_least_1(shape)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape: Any) -> Any:
        shape = _shape_at_least_1(shape)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal (exp of the
    diagonal, the strict lower triangle kept)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x: Any) -> Any:
        return x.tril(-1) + ts.diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y: Any) -> Any:
        return y.tril(-1) + ts.diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: L L^T of LowerCholeskyTransform's L."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x: Any) -> Any:
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y: Any) -> Any:
        return LowerCholeskyTransform().inv(ts.linalg.cholesky(y))


class ReshapeTransform(Transform):
    """Reshapes the rightmost dims from `in_shape` to `out_shape` (log-det 0)."""
    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape = ts.Size(tuple(in_shape))
        self.out_shape = ts.Size(tuple(out_shape))
        if _math.prod(self.in_shape) != _math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    @staticmethod
    def _swap(v: Any, old: Any, new: Any) -> Any:
        return v.reshape(tuple(v.shape[:v.dim() - len(old)]) + tuple(new))

    def _call(self, x: Any) -> Any:
        return self._swap(x, self.in_shape, self.out_shape)

    def _inverse(self, y: Any) -> Any:
        return self._swap(y, self.out_shape, self.in_shape)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    @staticmethod
    def _swap_shape(shape: Any, old: Any, new: Any) -> Any:
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {ts.Size(tuple(shape[cut:]))} but got "
                             f"{old}")
        return tuple(shape[:cut]) + tuple(new)

    def forward_shape(self, shape: Any) -> Any:
        return self._swap_shape(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._swap_shape(shape, self.out_shape, self.in_shape)


class IndependentTransform(Transform):
    """`base_transform` with its `reinterpreted_batch_ndims` rightmost batch dims taken as
    event dims (its log-det summed over them)."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Any) -> Any:
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Any) -> Any:
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x), onto the unit interval (its inverse is icdf)."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: Any) -> Any:
        return self.distribution.cdf(x)

    def _inverse(self, y: Any) -> Any:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)


class _PiecewiseTransform(Transform):
    """One transform per piece of dim `dim` (the base of CatTransform and StackTransform):
    `_pieces(z)` cuts a tensor into the pieces, `_join(list)` puts them back."""

    def __init__(self, tseq: Any, dim: int, cache_size: int) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def _count(self) -> int:
        raise NotImplementedError

    def _check(self, z: Any, name: str) -> None:
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(f"dim {self.dim} out of range for tensor with {z.dim()} "
                                 "dimensions")
        if z.size(self.dim) != self._count:
            raise AssertionError(f"{name}.size({self.dim}) = {z.size(self.dim)} must equal "
                                 f"{self._count}")

    def _map(self, z: Any, name: str, forward: bool) -> Any:
        self._check(z, name)
        return self._join([t(p) if forward else t.inv(p)
                           for t, p in zip(self.transforms, self._pieces(z))])

    def _call(self, x: Any) -> Any:
        return self._map(x, "x", True)

    def _inverse(self, y: Any) -> Any:
        return self._map(y, "y", False)

    def _piece_jacobians(self, x: Any, y: Any) -> list:
        self._check(x, "x")
        self._check(y, "y")
        return [t.log_abs_det_jacobian(xp, yp)
                for t, xp, yp in zip(self.transforms, self._pieces(x), self._pieces(y))]

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)


class CatTransform(_PiecewiseTransform):
    """`tseq[i]` on the i-th of the pieces of lengths `lengths` along `dim` (torch.cat's
    split), the results concatenated."""

    def __init__(self, tseq: Any, dim: int = 0, lengths: Any = None,
                 cache_size: int = 0) -> None:
        super().__init__(tseq, dim, cache_size)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    _count = length

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, z: Any) -> list:
        starts = [sum(self.lengths[:i]) for i in range(len(self.lengths))]
        return [z.narrow(self.dim, s, n) for s, n in zip(starts, self.lengths)]

    def _join(self, parts: list) -> Any:
        return ts.cat(parts, dim=self.dim)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        jacs = [j if t.event_dim >= self.event_dim else
                _sum_rightmost(j, self.event_dim - t.event_dim)
                for t, j in zip(self.transforms, self._piece_jacobians(x, y))]
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return ts.cat(jacs, dim=dim)
        return sum(jacs[1:], jacs[0])

    @constraints.dependent_property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(_PiecewiseTransform):
    """`tseq[i]` on the i-th slice along `dim` (torch.stack's), the results stacked."""

    def __init__(self, tseq: Any, dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(tseq, dim, cache_size)

    @property
    def _count(self) -> int:
        return len(self.transforms)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _pieces(self, z: Any) -> list:
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _join(self, parts: list) -> Any:
        return ts.stack(parts, dim=self.dim)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return ts.stack(self._piece_jacobians(x, y), dim=self.dim)

    @constraints.dependent_property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CorrCholeskyTransform(_ParameterFree):
    """Unconstrained vectors of length D(D-1)/2 to Cholesky factors of D x D correlation
    matrices: tanh to partial correlations in (-1, 1), then stick breaking along each row so
    that rows have unit norm (used by LKJCholesky and biject_to(corr_cholesky))."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky

    def _call(self, x: Any) -> Any:
        eps = ts.finfo(x.dtype).eps
        x = ts.tanh(x).clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + ts.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y: Any) -> Any:
        y_cumsum = 1 - ts.cumsum(y * y, dim=-1)
        y_cumsum_shifted = pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        y1m_cumsum_tril = tril_matrix_to_vec(1 - (y * y).cumsum(dim=-1), diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - _math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape: Any) -> Any:
        shape = _shape_at_least_1(shape)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape: Any) -> Any:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)
