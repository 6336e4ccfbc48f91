"""Parse published signatures back into options, in SacreBLEU 2.x and 1.x forms.

2.x: ``BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0`` (the metric name
prefix is optional; ``--short`` keys such as ``#:1|c:mixed`` are accepted).
1.x: ``BLEU+case.mixed+lang.en-de+numrefs.1+smooth.exp+test.wmt14+tok.13a+version.1.4.14``
(or its short form ``BLEU+c.mixed+l.en-de+#.1+s.exp+t.wmt14+tok.13a+v.1.4.14``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bleucli.errors import ConfigError

#: Every key spelling (2.x long/short, 1.x long/short) -> the 2.x long key.
_KEY_ALIASES: dict[str, str] = {
    "nrefs": "nrefs", "#": "nrefs", "numrefs": "nrefs",
    "case": "case", "c": "case",
    "eff": "eff", "e": "eff",
    "tok": "tok",
    "smooth": "smooth", "s": "smooth",
    "version": "version", "v": "version",
    "test": "test", "t": "test",
    "lang": "lang", "l": "lang",
    "origlang": "origlang", "o": "origlang",
    "subset": "subset", "S": "subset",
    "bs": "bs", "ar": "ar", "seed": "seed", "rs": "seed",
}

#: Metric names as printed in signatures -> the ``-m`` name.
_METRIC_NAMES = {"bleu": "bleu"}

_SMOOTH = re.compile(r"^(none|floor|add-k|exp)(?:\[([0-9.eE+-]+)\]|-([0-9.eE+-]+))?$")


@dataclass
class ParsedSignature:
    """A signature as data: the metric, its fields (long 2.x keys) and the form it came in."""

    metric: str
    fields: dict[str, str] = field(default_factory=dict)
    legacy: bool = False

    def bleu_options(self) -> dict[str, object]:
        """Keyword arguments for :class:`bleucli.BLEU` that reproduce this signature."""
        options: dict[str, object] = {}
        for key, value in self.fields.items():
            if key == "case":
                if value not in ("mixed", "lc"):
                    raise ConfigError(f"signature field case:{value} is not 'mixed' or 'lc'")
                options["lowercase"] = value == "lc"
            elif key == "eff":
                if value not in ("yes", "no"):
                    raise ConfigError(f"signature field eff:{value} is not 'yes' or 'no'")
                options["effective_order"] = value == "yes"
            elif key == "tok":
                options["tokenize"] = _tokenizer_name(value)
            elif key == "smooth":
                match = _SMOOTH.match(value)
                if not match:
                    raise ConfigError(f"signature field smooth:{value} is not a smoothing method")
                options["smooth_method"] = match.group(1)
                number = match.group(2) or match.group(3)
                if number is not None:
                    options["smooth_value"] = float(number)
        return options


def _tokenizer_name(value: str) -> str:
    """Tokeniser signatures may carry versions (``ja-mecab-0.996-IPA``); keep the name."""
    for prefix in ("ja-mecab", "ko-mecab"):
        if value.startswith(prefix):
            return prefix
    return value


def parse_signature(text: str) -> ParsedSignature:
    """Read a signature in any form SacreBLEU 1.x or 2.x (or bleucli) prints."""
    text = text.strip()
    if not text:
        raise ConfigError("empty signature")
    legacy = "|" not in text and "+" in text and ":" not in text
    parts = text.split("+") if legacy else text.split("|")
    metric = "bleu"
    separator = "." if legacy else ":"
    if separator not in parts[0]:
        name = parts.pop(0)
        base = re.sub(r"\d+$", "", name).lower()  # chrF2 -> chrf
        if base not in _METRIC_NAMES:
            raise ConfigError(f"signature names metric {name!r}, which bleucli cannot score yet")
        metric = _METRIC_NAMES[base]
    fields: dict[str, str] = {}
    for part in parts:
        key, sep, value = part.partition(separator)
        if not sep or not key:
            raise ConfigError(f"cannot parse signature field {part!r} in {text!r}")
        if key not in _KEY_ALIASES:
            raise ConfigError(f"unknown signature field {key!r} in {text!r}")
        fields[_KEY_ALIASES[key]] = value
    return ParsedSignature(metric, fields, legacy)
