"""What a metric takes, declared once in its own module: each option's keyword (SacreBLEU's),
command-line flags, type, default, range, help and signature field. The command line's
options, their ranges, ``--from-signature``, the evaluation server's validation, the
warnings about options of metrics not selected and the SacreBLEU keywords all come from
these declarations, so a new metric (built in, or a plugin of the ``bleucli.metrics``
entry-point group) is one module."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bleucli.errors import UsageError

#: Option kinds and the Python types their values have.
KINDS = {"flag": bool, "int": int, "float": float, "str": str}


@dataclass(frozen=True)
class Option:
    """One option of a metric."""

    keyword: str  # the metric class's keyword argument (SacreBLEU's)
    flags: tuple[str, ...]  # command-line flags, short first: ("-cc", "--chrf-char-order")
    help: str
    kind: str = "flag"  # flag, int, float or str
    default: Any = None
    low: float | None = None  # the accepted range of a number (inclusive)
    high: float | None = None
    metavar: str | None = None
    show_default: bool = False
    signature: str | None = None  # the signature field it sets, if any
    choices: tuple[str, ...] = ()
    cli: bool = True  # False: a keyword of the library only (BLEU's effective order: -sl)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"option {self.keyword}: kind {self.kind!r} is not one of {list(KINDS)}"
            )
        if self.cli and not any(flag.startswith("--") for flag in self.flags):
            raise ValueError(f"option {self.keyword}: needs a long flag")

    @property
    def param(self) -> str:
        """The command line's parameter name: the long flag's words (``chrf_char_order``)."""
        long = next((flag for flag in self.flags if flag.startswith("--")), "--" + self.keyword)
        return long[2:].replace("-", "_")

    @property
    def label(self) -> str:
        """How messages name it: ``-cc/--chrf-char-order`` (a library keyword: itself)."""
        return "/".join(self.flags) or self.keyword

    def check(self, value: Any, source: str | None = None) -> Any:
        """``value`` if it is of the option's kind and range, else a usage error naming the
        option (or ``source``: a signature's field, a server's stored setting)."""
        name = source or self.label
        if value is None:
            return None
        if self.kind == "flag":
            if not isinstance(value, bool):
                raise UsageError(f"{name} is a yes/no setting, got {value!r}")
            return value
        if self.kind == "str":
            if not isinstance(value, str):
                raise UsageError(f"{name} must be a string, got {value!r}")
            if self.choices and value not in self.choices:
                raise UsageError(f"{name} must be one of {', '.join(self.choices)}, got {value!r}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError(f"{name} must be a number, got {value!r}")
        if self.kind == "int" and not isinstance(value, int):
            raise UsageError(f"{name} must be a whole number, got {value!r}")
        if not math.isfinite(value):
            raise UsageError(f"{name} must be a finite number, got {value}")
        low = self.low if self.low is not None else -math.inf
        high = self.high if self.high is not None else math.inf
        if not low <= value <= high:
            low_text = _number(self.low) if self.low is not None else None
            high_text = _number(self.high) if self.high is not None else None
            if low_text is not None and high_text is not None:
                raise UsageError(f"{name} must be between {low_text} and {high_text}, got {value}")
            raise UsageError(f"{name} must be >= {low_text}, got {value}")
        return value


def _number(value: float | None) -> str:
    return str(int(value)) if value is not None and float(value).is_integer() else str(value)
