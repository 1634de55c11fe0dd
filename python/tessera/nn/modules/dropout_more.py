"""Dropout1d, Dropout3d, AlphaDropout, FeatureAlphaDropout (same arguments and repr as
Dropout)."""
from __future__ import annotations

from .. import functional as F
from .activation import Dropout


class Dropout1d(Dropout):
    """Zeroes whole channels of (N, C, L) or (C, L) input in training."""
    _fn = staticmethod(F.dropout1d)


class Dropout3d(Dropout):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input in training."""
    _fn = staticmethod(F.dropout3d)


class AlphaDropout(Dropout):
    """SELU-preserving dropout in training; identity in eval."""
    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(Dropout):
    """SELU-preserving dropout of whole channels in training; identity in eval."""
    _fn = staticmethod(F.feature_alpha_dropout)
