"""The LKJ distribution over Cholesky factors of correlation matrices
(torch.distributions.LKJCholesky): density proportional to det(L L^T)^(concentration - 1);
draws by the onion method (Lewandowski, Kurowicka & Joe 2009)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ over the lower Cholesky factors of `dim` x `dim` correlation matrices with shape
    `concentration` (1: uniform over correlation matrices)."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0,
                 validate_args: Optional[bool] = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = ts.arange(self.dim - 1, dtype=self.concentration.dtype,
                           device=self.concentration.device)
        offset = ts.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), (dim, dim), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LKJCholesky":
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return self._expanded(new, batch_shape)

    def sample(self, sample_shape: Any = ()) -> Any:
        """Row i: sqrt(y_i) times a uniform direction on the unit sphere of its first i
        coordinates (y_i ~ Beta), the diagonal completing it to unit norm."""
        with ts.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = ts.randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype,
                                device=y.device).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            first_row = ts.arange(self.dim, device=y.device) == 0
            u_hypersphere = ts.where(first_row.unsqueeze(-1), 0.0, u_hypersphere)
            w = ts.sqrt(y) * u_hypersphere
            eps = ts.finfo(w.dtype).tiny
            diag_elems = ts.clamp(1 - ts.sum(w ** 2, dim=-1), min=eps).sqrt()
            return w + ts.diag_embed(diag_elems)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = ts.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = ts.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ts.lgamma(alpha) * dm1
        numerator = ts.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * _math.log(_math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
