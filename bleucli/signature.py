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
from bleucli.metrics.fields import (  # re-exported: the names metric plugins import
    flag_value,
    integer_value,
    legacy_ter_tokenizer,
    tokenizer_name,
)

__all__ = [
    "ParsedSignature",
    "flag_value",
    "integer_value",
    "legacy_ter_tokenizer",
    "parse_signature",
    "tokenizer_name",
]

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


@dataclass
class ParsedSignature:
    """A signature as data: the metric, its fields (long 2.x keys) and the form it came in."""

    metric: str
    fields: dict[str, str] = field(default_factory=dict)
    legacy: bool = False
    name: str = "BLEU"

    def metric_options(self) -> dict[str, Any]:
        """Keyword arguments for the metric class that reproduce this signature."""
        from bleucli.metrics import metric_class

        return metric_class(self.metric).options_from_signature(self.fields, self.name)


def _metric_of(name: str) -> Any:
    """The metric class a signature names (``BLEU``, ``chrF2++``, ``TER``, a plugin's)."""
    from bleucli.metrics import metric_classes

    for cls in metric_classes():
        if cls.names_signature(name):
            return cls
    raise UsageError(f"signature names metric {name!r}, which bleucli cannot score")


def _unknown_field(key: str, name: str, text: str, named: bool) -> str:
    """The refusal of a field the metric does not have; for a signature without a metric
    name (as ``-f json``'s ``"signature"`` holds it), which metric's fields these are."""
    from bleucli.metrics import available_metrics, metric_class

    owners = []
    for candidate in available_metrics():
        try:
            cls = metric_class(candidate)
        except Exception:  # noqa: BLE001 - an uninstalled plugin claims no field
            continue
        if key in cls.signature_keys:
            owners.append(cls.name)
    if named or not owners:
        return f"unknown signature field {key!r} for {name} in {text!r}"
    whose = f" (a field of {', '.join(dict.fromkeys(owners))})"
    return (
        f"signature field {key!r}{whose} in {text!r}, which names no metric: a signature "
        f"without a name is read as BLEU's; put the metric's name first, as the text output "
        f"prints it ({owners[0]}|{text})"
    )


def signature_of(name: str, signature: str) -> ParsedSignature:
    """A result's signature as data, from its score name and its name-less signature
    (``-f json``'s ``name`` and ``signature`` fields, a receipt's, a record's)."""
    return parse_signature(f"{name}|{signature}")


def parse_signature(text: str) -> ParsedSignature:
    """Read a signature in any form SacreBLEU 1.x or 2.x (or bleucli) prints."""
    text = text.strip()
    if not text:
        raise UsageError("empty signature")
    legacy = "|" not in text and "+" in text and ":" not in text
    parts = re.split(r"\+(?=[^+]*\.)", text) if legacy else text.split("|")
    separator = "." if legacy else ":"
    name = "BLEU"  # SacreBLEU's JSON writes BLEU's signature without its name
    named = separator not in parts[0]
    if named:
        name = parts.pop(0)
    cls = _metric_of(name)
    metric = cls.key
    aliases = {**_COMMON_KEYS, **cls.signature_keys}
    fields: dict[str, str] = {}
    for part in parts:
        key, sep, value = part.partition(separator)
        if not sep or not key:
            raise UsageError(f"cannot parse signature field {part!r} in {text!r}")
        if metric == "ter" and key == "t" and value.startswith("tercom"):
            key = "tok"  # TER's short form abbreviates tok as t, like test
        if key not in aliases:
            raise UsageError(_unknown_field(key, name, text, named))
        fields[aliases[key]] = value
    return ParsedSignature(metric, fields, legacy, name)
