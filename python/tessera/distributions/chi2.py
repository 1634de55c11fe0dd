"""The Chi2 distribution (torch.distributions.Chi2): Gamma(df / 2, 1 / 2)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi-squared with `df` degrees of freedom."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: Optional[bool] = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Chi2":
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Any:
        return self.concentration * 2
