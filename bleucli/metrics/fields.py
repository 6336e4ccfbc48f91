"""Reading signature fields back into option values: the helpers metric classes use in
``options_from_signature``. Below the metric registry; :mod:`bleucli.signature`, which needs
the registry to tell which metric a signature names, is above it."""

from __future__ import annotations

from typing import Any

from bleucli.errors import UsageError

_TRUE, _FALSE = ("yes", "true"), ("no", "false")


def flag_value(key: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise UsageError(f"signature field {key}:{value} is not yes/no")


def integer_value(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"signature field {key}:{value} is not a number") from None


def legacy_ter_tokenizer(value: str) -> dict[str, Any]:
    """``tercom`` (2.x) or 1.x's ``tercom-nonorm-punct-noasian-uncased``."""
    parts = value.split("-")
    if parts[0] != "tercom":
        raise UsageError(f"signature field tok:{value}: TER only uses the tercom tokenizer")
    options: dict[str, Any] = {}
    words = {
        "norm": ("normalized", True),
        "nonorm": ("normalized", False),
        "punct": ("no_punct", False),
        "nopunct": ("no_punct", True),
        "asian": ("asian_support", True),
        "noasian": ("asian_support", False),
        "cased": ("case_sensitive", True),
        "uncased": ("case_sensitive", False),
    }
    for part in parts[1:]:
        if part not in words:
            raise UsageError(f"signature field tok:{value}: unknown TER setting {part!r}")
        name, setting = words[part]
        options[name] = setting
    return options


def tokenizer_name(value: str) -> str:
    """Tokeniser signatures may carry versions (``ja-mecab-0.996-IPA``); keep the name."""
    for prefix in ("ja-mecab", "ko-mecab"):
        if value.startswith(prefix):
            return prefix
    return value
