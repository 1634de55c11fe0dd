"""LowRankMultivariateNormal (torch.distributions.LowRankMultivariateNormal): covariance
cov_factor @ cov_factor.T + diag(cov_diag), handled through the m x m capacitance matrix
(Woodbury identity, matrix determinant lemma) instead of the n x n covariance."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _add_identity(K: Any) -> Any:
    return K + ts.eye(K.shape[-1], dtype=K.dtype, device=K.device)


def _batch_capacitance_tril(W: Any, D: Any) -> Any:
    """The Cholesky factor of the capacitance matrix I + W^T D^-1 W."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    return ts.linalg.cholesky(_add_identity(ts.matmul(Wt_Dinv, W)))


def _batch_lowrank_logdet(W: Any, D: Any, capacitance_tril: Any) -> Any:
    """log det(W W^T + D) = log det(C) + log det(D) (matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W: Any, D: Any, x: Any, capacitance_tril: Any) -> Any:
    """x^T (W W^T + D)^-1 x by the Woodbury identity."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal with mean `loc` (n) and covariance cov_factor @ cov_factor.T +
    diag(cov_diag), cov_factor n x m (m, the rank, usually much smaller than n)."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, cov_factor: Any, cov_diag: Any,
                 validate_args: Optional[bool] = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape "
                             f"{ts.Size(event_shape)}")
        try:
            loc_, self.cov_factor, cov_diag_ = ts.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(tuple(self.loc.shape[:-1]), event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LowRankMultivariateNormal":
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Any:
        return self.loc

    mode = mean

    def _full(self, m: Any, matrix: bool = True) -> Any:
        event = tuple(self._event_shape) * (2 if matrix else 1)
        return m.expand(tuple(self._batch_shape) + event)

    @lazy_property
    def variance(self) -> Any:  # type: ignore[override]
        return self._full(self._unbroadcasted_cov_factor.pow(2).sum(-1)
                          + self._unbroadcasted_cov_diag, matrix=False)

    @lazy_property
    def scale_tril(self) -> Any:
        """W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2, whose middle factor has
        eigenvalues >= 1 (a well-conditioned Cholesky)."""
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze
        K = _add_identity(ts.matmul(Dinvsqrt_W, Dinvsqrt_W.mT))
        return self._full(cov_diag_sqrt_unsqueeze * ts.linalg.cholesky(K))

    @lazy_property
    def covariance_matrix(self) -> Any:
        W = self._unbroadcasted_cov_factor
        return self._full(ts.matmul(W, W.mT) + ts.diag_embed(self._unbroadcasted_cov_diag))

    @lazy_property
    def precision_matrix(self) -> Any:
        """inv(W W^T + D) = inv(D) - inv(D) W inv(C) W^T inv(D) (Woodbury)."""
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = ts.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        return self._full(ts.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        W_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_W = _standard_normal(W_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self) -> Any:
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                     self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, value - self.loc,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * _math.log(2 * _math.pi) + self._log_det() + M)

    def entropy(self) -> Any:
        H = 0.5 * (self._event_shape[0] * (1.0 + _math.log(2 * _math.pi)) + self._log_det())
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))
