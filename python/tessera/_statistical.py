"""Statistical and utility functions (sum, mean, var, max, all, cumulative_sum, ...)."""
from __future__ import annotations

__all__: list = []
