"""The Wishart distribution (torch.distributions.Wishart) over positive-definite matrices,
parameterized like MultivariateNormal (covariance, precision or scale_tril) plus `df`;
draws by the Bartlett decomposition."""
from __future__ import annotations

import math as _math
import numbers as _numbers
import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _scale_tril_of
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = _math.log(2)


def _mvdigamma(x: Any, p: int) -> Any:
    """The multivariate digamma: sum_i digamma(x - i / 2), i < p."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = ts.arange(p, dtype=x.dtype, device=x.device).div(2)
    return ts.digamma(x.unsqueeze(-1) - halves.expand(tuple(x.shape) + (-1,))).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart(df, V): the law of sum_k x_k x_k^T over df draws x_k ~ N(0, V) (real df >
    dim - 1 allowed); V given as covariance_matrix, precision_matrix or scale_tril."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict:  # type: ignore[override]
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: Optional[bool] = None) -> None:
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, _numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = ts.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = tuple(ts.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        name = ("scale_tril" if scale_tril is not None else
                "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if bool(self.df.lt(event_shape[-1]).any()):
            _warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(covariance_matrix, precision_matrix,
                                                        scale_tril)
        self._set_chi2()

    def _set_chi2(self) -> None:
        """The Bartlett diagonal's chi-squares: df - i degrees of freedom in row i."""
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        tril = self._unbroadcasted_scale_tril
        offsets = ts.arange(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1)
                               - offsets.expand(tuple(self._batch_shape) + (-1,)))

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Wishart":
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(tuple(batch_shape))
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        self._expanded(new, batch_shape)
        new._set_chi2()
        return new

    def _full(self, m: Any) -> Any:
        return m.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self) -> Any:
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self) -> Any:
        L = self._unbroadcasted_scale_tril
        return self._full(L @ L.transpose(-2, -1))

    @lazy_property
    def precision_matrix(self) -> Any:
        L = self._unbroadcasted_scale_tril
        identity = ts.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return self._full(ts.cholesky_solve(identity, L))

    def _df_matrix(self, df: Any) -> Any:
        return df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Any:
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Any:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        return self._df_matrix(ts.where(factor <= 0, _math.nan, factor)) * self.covariance_matrix

    @property
    def variance(self) -> Any:
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + ts.einsum("...i,...j->...ij", diag_V,
                                                                 diag_V))

    def _bartlett_sampling(self, sample_shape: tuple) -> Any:
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        diag = diag.clamp(min=ts.finfo(diag.dtype).eps)
        below = ts.randn(sample_shape + tuple(self._batch_shape) + (p * (p - 1) // 2,),
                         dtype=diag.dtype, device=diag.device)
        noise = ts.diag_embed(diag) + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _singular(self, sample: Any) -> Any:
        """Per draw (over sample_shape): whether any matrix of its batch is not positive
        definite."""
        bad = ~self.support.check(sample)
        return bad.amax(self._batch_dims) if self._batch_shape else bad

    def rsample(self, sample_shape: Any = (), max_try_correction: Optional[int] = None) -> Any:
        """Bartlett draws; draws with a singular matrix (possible for df < dim) are redrawn
        up to `max_try_correction` (10) times."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = tuple(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._singular(sample)
        if bool(is_singular.any()):
            _warnings.warn("Singular sample detected.", stacklevel=2)
            pad = (1,) * (len(self._batch_shape) + 2)
            for _ in range(max_try_correction):
                redo = is_singular.reshape(tuple(is_singular.shape) + pad)
                sample = ts.where(redo, self._bartlett_sampling(sample_shape), sample)
                is_singular = self._singular(sample)
                if not bool(is_singular.any()):
                    break
        return sample

    def _log_det_scale(self) -> Any:
        """p log(2) / 2 + log det(scale_tril)."""
        p = self._event_shape[-1]
        return (p * _LOG_2 / 2
                + self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = ts.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * self._log_det_scale() - ts.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * ts.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self) -> Any:
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * self._log_det_scale() + ts.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-ts.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + ts.mvlgamma(y + (p + 1) / 2, p=p))
