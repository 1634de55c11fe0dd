"""The MultivariateNormal distribution (torch.distributions.MultivariateNormal), on the
Cholesky factor of its covariance (tessera.linalg.cholesky / solve_triangular)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Any, bvec: Any) -> Any:
    """Matrix-vector products over broadcast batch dims."""
    return ts.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Any, bx: Any) -> Any:
    """x^T (L L^T)^-1 x for the lower-triangular bL and the vectors bx over their broadcast
    batch dims."""
    n = bx.shape[-1]
    batch = tuple(ts.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1])))
    L = bL.expand(batch + (n, n))
    x = bx.expand(batch + (n,))
    sol = ts.linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return sol.pow(2).sum(-1)


def _precision_to_scale_tril(P: Any) -> Any:
    """The lower Cholesky factor of P^-1, through the Cholesky factor of P flipped."""
    Lf = ts.linalg.cholesky(ts.flip(P, (-2, -1)))
    L_inv = ts.flip(Lf, (-2, -1)).mT
    Id = ts.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return ts.linalg.solve_triangular(L_inv, Id.expand(tuple(L_inv.shape)), upper=False)


def _scale_tril_of(covariance_matrix: Any, precision_matrix: Any, scale_tril: Any) -> Any:
    """The lower Cholesky factor of the covariance from whichever of the three is given."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return ts.linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


class MultivariateNormal(Distribution):
    """A multivariate normal with mean `loc` (..., n) and exactly one of a positive-definite
    `covariance_matrix`, a positive-definite `precision_matrix` or a lower-triangular
    `scale_tril` with positive diagonal (each (..., n, n)); batch dims broadcast."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: Optional[bool] = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (
                precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        loc_batch = tuple(loc.shape[:-1])
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError("scale_tril matrix must be at least two-dimensional, with "
                                 "optional leading batch dimensions")
            batch_shape = tuple(ts.broadcast_shapes(tuple(scale_tril.shape[:-2]), loc_batch))
            self.scale_tril = scale_tril.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError("covariance_matrix must be at least two-dimensional, with "
                                 "optional leading batch dimensions")
            batch_shape = tuple(ts.broadcast_shapes(tuple(covariance_matrix.shape[:-2]),
                                                    loc_batch))
            self.covariance_matrix = covariance_matrix.expand(batch_shape + (-1, -1))
        else:
            if precision_matrix.dim() < 2:
                raise ValueError("precision_matrix must be at least two-dimensional, with "
                                 "optional leading batch dimensions")
            batch_shape = tuple(ts.broadcast_shapes(tuple(precision_matrix.shape[:-2]),
                                                    loc_batch))
            self.precision_matrix = precision_matrix.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        event_shape = tuple(self.loc.shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

        self._unbroadcasted_scale_tril = _scale_tril_of(covariance_matrix, precision_matrix,
                                                        scale_tril)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "MultivariateNormal":
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        return self._expanded(new, batch_shape)

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self) -> Any:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Any:
        L = self._unbroadcasted_scale_tril
        return ts.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Any:
        return ts.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self) -> Any:
        return self.loc

    mode = mean

    @property
    def variance(self) -> Any:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * _math.log(2 * _math.pi) + M) - half_log_det

    def entropy(self) -> Any:
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + _math.log(2 * _math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
