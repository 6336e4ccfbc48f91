"""Parse published signatures back into options, in SacreBLEU 2.x and 1.x forms.

2.x: ``BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0``,
``chrF2++|nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.0.0``,
``TER|nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.0.0``; the metric
prefix is optional for BLEU, and ``--short`` keys (``#:1|c:mixed|...``) are accepted.
1.x: ``BLEU+case.mixed+lang.en-de+numrefs.1+smooth.exp+test.wmt14+tok.13a+version.1.4.14``
(or its short form ``BLEU+c.mixed+l.en-de+#.1+s.exp+t.wmt14+tok.13a+v.1.4.14``), and the 1.x
chrF and TER forms (``chrF2+numchars.6+space.false+version.1.4.14``,
``TER+tok.tercom-nonorm-punct-noasian-uncased+version.1.5.0``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bleucli.errors import UsageError

#: Key spellings every metric shares (2.x long/short, 1.x) -> the 2.x long key.
_COMMON_KEYS = {
    "nrefs": "nrefs",
    "#": "nrefs",
    "numrefs": "nrefs",
    "case": "case",
    "c": "case",
    "version": "version",
    "v": "version",
    "test": "test",
    "t": "test",
    "lang": "lang",
    "l": "lang",
    "origlang": "origlang",
    "o": "origlang",
    "subset": "subset",
    "S": "subset",
    "bs": "bs",
    "ar": "ar",
    "seed": "seed",
    "rs": "seed",
    "reseg": "reseg",
}
#: Metric-specific spellings (they reuse letters: ``s`` is smooth for BLEU, space for chrF).
_METRIC_KEYS = {
    "bleu": {"eff": "eff", "e": "eff", "tok": "tok", "smooth": "smooth", "s": "smooth"},
    "chrf": {
        "eff": "eff",
        "e": "eff",
        "nc": "nc",
        "numchars": "nc",
        "charorder": "nc",
        "nw": "nw",
        "numwords": "nw",
        "wordorder": "nw",
        "space": "space",
        "s": "space",
    },
    "ter": {
        "tok": "tok",
        "norm": "norm",
        "nr": "norm",
        "punct": "punct",
        "pn": "punct",
        "asian": "asian",
        "as": "asian",
    },
}

_SMOOTH = re.compile(r"^(none|floor|add-k|exp)(?:\[([0-9.eE+-]+)\]|-([0-9.eE+-]+))?$")
_METRIC_NAME = re.compile(r"^(BLEU|chrF(\d*)(\+*)|TER)$", re.IGNORECASE)
_TRUE, _FALSE = ("yes", "true"), ("no", "false")


def _flag(key: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise UsageError(f"signature field {key}:{value} is not yes/no")


def _integer(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"signature field {key}:{value} is not a number") from None


@dataclass
class ParsedSignature:
    """A signature as data: the metric, its fields (long 2.x keys) and the form it came in."""

    metric: str
    fields: dict[str, str] = field(default_factory=dict)
    legacy: bool = False
    name: str = "BLEU"

    def metric_options(self) -> dict[str, Any]:
        """Keyword arguments for the metric class that reproduce this signature."""
        return {"bleu": self.bleu_options, "chrf": self.chrf_options, "ter": self.ter_options}[
            self.metric
        ]()

    def bleu_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        for key, value in self.fields.items():
            if key == "case":
                if value not in ("mixed", "lc"):
                    raise UsageError(f"signature field case:{value} is not 'mixed' or 'lc'")
                options["lowercase"] = value == "lc"
            elif key == "eff":
                options["effective_order"] = _flag(key, value)
            elif key == "tok":
                options["tokenize"] = _tokenizer_name(value)
            elif key == "smooth":
                match = _SMOOTH.match(value)
                if not match:
                    raise UsageError(f"signature field smooth:{value} is not a smoothing method")
                options["smooth_method"] = match.group(1)
                number = match.group(2) or match.group(3)
                if number is not None:
                    try:
                        options["smooth_value"] = float(number)
                    except ValueError:
                        raise UsageError(
                            f"signature field smooth:{value}: {number!r} is not a number"
                        ) from None
        return options

    def chrf_options(self) -> dict[str, Any]:
        match = _METRIC_NAME.match(self.name)
        beta = match.group(2) if match else ""
        options: dict[str, Any] = {"beta": int(beta) if beta else 2}
        if match and match.group(3):
            options["word_order"] = len(match.group(3))
        for key, value in self.fields.items():
            if key == "case":
                options["lowercase"] = value == "lc"
            elif key == "eff":
                options["eps_smoothing"] = not _flag(key, value)
            elif key == "nc":
                options["char_order"] = _integer(key, value)
            elif key == "nw":
                options["word_order"] = _integer(key, value)
            elif key == "space":
                options["whitespace"] = _flag(key, value)
        return options

    def ter_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        for key, value in self.fields.items():
            if key == "case":
                options["case_sensitive"] = value == "mixed"
            elif key == "norm":
                options["normalized"] = _flag(key, value)
            elif key == "punct":
                options["no_punct"] = not _flag(key, value)
            elif key == "asian":
                options["asian_support"] = _flag(key, value)
            elif key == "tok":
                options.update(_legacy_ter_tokenizer(value))
        return options


def _legacy_ter_tokenizer(value: str) -> dict[str, Any]:
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


def _tokenizer_name(value: str) -> str:
    """Tokeniser signatures may carry versions (``ja-mecab-0.996-IPA``); keep the name."""
    for prefix in ("ja-mecab", "ko-mecab"):
        if value.startswith(prefix):
            return prefix
    return value


def _metric_of(name: str) -> str:
    """``BLEU`` -> bleu, ``chrF2++`` -> chrf, ``TER`` -> ter."""
    if not _METRIC_NAME.match(name):
        raise UsageError(f"signature names metric {name!r}, which bleucli cannot score")
    lowered = name.lower()
    return "chrf" if lowered.startswith("chrf") else lowered


def parse_signature(text: str) -> ParsedSignature:
    """Read a signature in any form SacreBLEU 1.x or 2.x (or bleucli) prints."""
    text = text.strip()
    if not text:
        raise UsageError("empty signature")
    legacy = "|" not in text and "+" in text and ":" not in text
    parts = re.split(r"\+(?=[^+]*\.)", text) if legacy else text.split("|")
    separator = "." if legacy else ":"
    name = "BLEU"
    if separator not in parts[0]:
        name = parts.pop(0)
    metric = _metric_of(name)
    aliases = {**_COMMON_KEYS, **_METRIC_KEYS[metric]}
    fields: dict[str, str] = {}
    for part in parts:
        key, sep, value = part.partition(separator)
        if not sep or not key:
            raise UsageError(f"cannot parse signature field {part!r} in {text!r}")
        if metric == "ter" and key == "t" and value.startswith("tercom"):
            key = "tok"  # TER's short form abbreviates tok as t, like test
        if key not in aliases:
            raise UsageError(f"unknown signature field {key!r} for {name} in {text!r}")
        fields[aliases[key]] = value
    return ParsedSignature(metric, fields, legacy, name)
