"""How a number is written: the decimals ``-w`` may ask for, and scores as text without a
negative zero. Below the metric registry (metric classes format their own details with it);
which metric gets how many decimals is :mod:`bleucli.precision`'s."""

from __future__ import annotations

from typing import Any

from bleucli.errors import UsageError

#: Decimals a score may be printed with (``-w``).
WIDTH_RANGE = (0, 30)
#: Decimals of a score no registered metric names (external segment scores).
UNKNOWN_DECIMALS = 4


def check_width(value: Any, what: str = "-w/--width") -> int:
    """A number of decimals within :data:`WIDTH_RANGE` (booleans and text refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{what}: {value!r} is not a whole number")
    if not WIDTH_RANGE[0] <= value <= WIDTH_RANGE[1]:
        raise UsageError(
            f"{what} must be between {WIDTH_RANGE[0]} and {WIDTH_RANGE[1]}, got {value}"
        )
    return value


def rounded(value: float, places: int) -> float:
    """``value`` rounded to ``places``, never a negative zero."""
    return round(float(value), places) + 0.0


def shown(value: float, places: int) -> str:
    """``value`` as text with ``places`` decimals, never ``-0.0``."""
    text = f"{float(value):.{places}f}"
    if text.startswith("-") and not text.strip("-0."):
        return text[1:]
    return text
