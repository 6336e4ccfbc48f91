"""Character error rate (CER) as a bleucli metric plugin.

Per sentence the statistics are ``[character edits to the closest reference, that
reference's length]``; the corpus CER is ``100 * edits / length`` (lower is better). The
options are declared once, in ``OPTIONS``: bleucli makes them command-line flags, checks
their values, writes them into the signature and reads them back from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bleucli.metrics.base import Metric, Score
from bleucli.metrics.options import Option


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance between two strings (insertions, deletions, substitutions)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


class CER(Metric):
    name = "CER"
    higher_is_better = False
    integer_stats = True
    signature_abbreviations = {"lc": "lc", "spaces": "sp"}
    signature_keys = {"lc": "lc", "spaces": "spaces", "sp": "spaces"}
    OPTIONS = (
        Option("lowercase", ("--cer-lowercase",), signature="lc", help="Case-insensitive CER."),
        Option("spaces", ("--cer-spaces",), kind="str", default="keep", choices=("keep", "drop"),
               signature="spaces", show_default=True, metavar="keep|drop",
               help="CER: keep or drop spaces before comparing."),
    )  # fmt: skip

    def __init__(
        self,
        lowercase: bool = False,
        spaces: str = "keep",
        references: Sequence[Sequence[str | None]] | None = None,
    ) -> None:
        for option, value in (("lowercase", lowercase), ("spaces", spaces)):
            next(o for o in self.OPTIONS if o.keyword == option).check(value)
        self.lowercase = lowercase
        self.spaces = spaces
        super().__init__(references)

    def preprocess(self, sentence: str) -> str:
        sentence = sentence.lower() if self.lowercase else sentence
        return "".join(sentence.split()) if self.spaces == "drop" else sentence

    def reference_info(self, references: list[str]) -> Any:
        return references

    def sentence_stats(self, hypothesis: str, ref_info: Any) -> list[int | float]:
        best = min(ref_info, key=lambda ref: (edit_distance(hypothesis, ref), len(ref)))
        return [edit_distance(hypothesis, best), len(best)]

    def score_from_values(self, values: Sequence[int | float]) -> Score:
        edits, length = values
        if length == 0:
            return Score(self.name, 0.0 if edits == 0 else 100.0)
        return Score(self.name, 100.0 * edits / length)

    def signature_fields(self) -> dict[str, Any]:
        return {"lc": "yes" if self.lowercase else "no", "spaces": self.spaces}

    @property
    def stats_length(self) -> int:
        return 2
