"""The metrics' parameters as a user gives them (log base, threshold, beta, zero_division),
checked once at the edge and carried in a :class:`~polars_rankmetrics.metrics.registry.Context`."""

from __future__ import annotations

import math

from polars_rankmetrics.metrics.registry import Context


def check_log_base(log_base: float) -> None:
    """dcg's discounts 1 / log_b(r + 1) are positive and falling only for a base above 1 (1 has
    no logarithm, a base below 1 makes every discount negative)."""
    if isinstance(log_base, bool) or not isinstance(log_base, int | float) or not log_base > 1:
        raise ValueError(f"log_base must be a number > 1, not {log_base!r}")


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    return float(value)


def parameters(
    *, log_base: float = 2, threshold: float = 0.5, beta: float = 1.0,
    zero_division: float | str = "warn",
) -> Context:  # fmt: skip
    """The metrics' parameters, checked: ``log_base`` > 1, a finite ``threshold``, ``beta`` > 0,
    ``zero_division`` 0, 1, NaN (``"nan"``) or ``"warn"`` (0, with a warning where a 0/0
    happens, as scikit-learn's default)."""
    check_log_base(log_base)
    if _number("beta", beta) <= 0:
        raise ValueError(f"beta must be positive, not {beta!r}")
    text = zero_division.lower() if isinstance(zero_division, str) else None
    warn = text == "warn"
    zero = float("nan") if text == "nan" else 0.0 if warn else zero_division
    if (
        isinstance(zero, bool)
        or not isinstance(zero, int | float)
        or not (math.isnan(zero) or zero in (0, 1))
    ):
        raise ValueError(f"zero_division must be 0, 1, nan or 'warn', not {zero_division!r}")
    return Context(
        log_base=log_base, threshold=_number("threshold", threshold), beta=float(beta),
        zero_division=float(zero), warn_zero_division=warn,
    )  # fmt: skip
