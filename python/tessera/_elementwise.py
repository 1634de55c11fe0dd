"""Elementwise functions of the array API (those not bound directly in C++)."""
from __future__ import annotations

__all__: list = []
