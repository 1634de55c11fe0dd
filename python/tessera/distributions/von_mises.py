"""The von Mises distribution (torch.distributions.VonMises): a circular normal on angles.
log I0 / log I1 are torch's polynomial approximations (Abramowitz & Stegun 9.8.1-9.8.4), so
values agree with torch's; draws are Best & Fisher's rejection sampler on tessera's
generator."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .distribution import Distribution
from .utils import _broadcast_params, lazy_property

__all__ = ["VonMises"]

_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
                  -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2,
                  0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
                  0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y: Any, coef: list) -> Any:
    """sum coef[i] y^i by Horner's rule."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x: Any, order: int = 0) -> Any:
    """log(I_order(x)) for x > 0, order 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return ts.where(x < 3.75, small, large)


def _rejection_sample(loc: Any, concentration: Any, proposal_r: Any, x: Any) -> Any:
    """Best & Fisher (1979): redraw (u1, u2, u3) where not yet accepted."""
    done = ts.zeros(tuple(x.shape), dtype=ts.bool, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = ts.rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = ts.cos(_math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = ts.where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return ts.remainder(x + _math.pi + loc, 2 * _math.pi) - _math.pi


class VonMises(Distribution):
    """The circular von Mises distribution: density exp(concentration cos(x - loc)) /
    (2 pi I0(concentration)); loc and values are angles (any real, taken modulo 2 pi)."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any,
                 validate_args: Optional[bool] = None) -> None:
        (self.loc, self.concentration), _ = _broadcast_params(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ts.cos(value - self.loc)
        return (log_prob - _math.log(2 * _math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self) -> Any:
        return self.loc.to(ts.float64)

    @lazy_property
    def _concentration(self) -> Any:
        return self.concentration.to(ts.float64)

    @lazy_property
    def _proposal_r(self) -> Any:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        return ts.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape: Any = ()) -> Any:
        """Draws in float64 (a float32 proposal hangs for tiny concentrations, as in torch),
        returned in the parameters' dtype."""
        with ts.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            x = ts.zeros(shape, dtype=ts.float64, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    @property
    def mean(self) -> Any:
        """The circular mean (also the mode)."""
        return self.loc

    mode = mean

    @lazy_property
    def variance(self) -> Any:  # type: ignore[override]
        """The circular variance 1 - I1(k) / I0(k)."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
