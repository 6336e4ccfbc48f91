"""TER, translation edit rate (Snover et al., 2006), exactly as SacreBLEU 2.x computes it.

Per sentence the statistics are ``[fewest edits over the references, mean reference
length]``; the corpus TER is ``100 * sum(edits) / sum(mean reference lengths)`` (100 when
the references are empty but the hypotheses are not, 0 when both are empty). Lower is better.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bleucli.errors import InputError
from bleucli.metrics.base import Metric, Number, Score
from bleucli.metrics.options import Option
from bleucli.native import native as _NATIVE  # the engine, chosen once per process

# tercom's tokeniser and the pure-Python edit distance are imported when a TER is made:
# the command line reads TER's declared options (OPTIONS) without paying for them

#: The largest hypothesis x reference word product of one line pair: TER's shift search
#: keeps tables of that size (a pair of 10,000-word lines takes some 50 MB; two
#: 100,000-word lines would take gigabytes). The compiled core refuses the same pairs.
MAX_WORD_PAIRS = 100_000_000


class TERScore(Score):
    """A TER value with its summed edits and reference length."""

    def __init__(self, score: float, num_edits: float, ref_length: float) -> None:
        super().__init__("TER", score)
        self.num_edits = int(num_edits)
        self.ref_length = ref_length


class TER(Metric):
    """TER with tercom's normalisation options; keywords are SacreBLEU 2.x's ``TER``'s."""

    name = "TER"
    key = "ter"
    higher_is_better = False
    integer_stats = False
    signature_abbreviations = {"case": "c", "tok": "t", "norm": "nr", "punct": "pn", "asian": "as"}
    signature_keys = {
        "tok": "tok", "norm": "norm", "nr": "norm", "punct": "punct", "pn": "punct",
        "asian": "asian", "as": "asian",
    }  # fmt: skip
    OPTIONS = (
        Option("case_sensitive", ("--ter-case-sensitive",), signature="case",
               help="Case-sensitive TER."),
        Option("asian_support", ("--ter-asian-support",), signature="asian",
               help="TER: split CJK characters."),
        Option("no_punct", ("--ter-no-punct",), signature="punct", help="TER: remove punctuation."),
        Option("normalized", ("--ter-normalized",), signature="norm",
               help="TER: tercom normalisation/tokenisation."),
    )  # fmt: skip

    @classmethod
    def options_from_signature(cls, fields: dict[str, str], name: str) -> dict[str, Any]:
        """Keywords that reproduce a signature (2.x fields, or 1.x's one ``tok`` field)."""
        from bleucli.metrics.fields import flag_value, legacy_ter_tokenizer

        options: dict[str, Any] = {}
        for key, value in fields.items():
            if key == "case":
                options["case_sensitive"] = value == "mixed"
            elif key == "norm":
                options["normalized"] = flag_value(key, value)
            elif key == "punct":
                options["no_punct"] = not flag_value(key, value)
            elif key == "asian":
                options["asian_support"] = flag_value(key, value)
            elif key == "tok":
                options.update(legacy_ter_tokenizer(value))
        return options

    def __init__(
        self,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        references: Sequence[Sequence[str | None]] | None = None,
    ) -> None:
        self.normalized = normalized
        self.no_punct = no_punct
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        from bleucli.tokenizers.tercom import TercomTokenizer

        self.tokenizer = TercomTokenizer(
            normalized=normalized,
            no_punct=no_punct,
            asian_support=asian_support,
            case_sensitive=case_sensitive,
        )
        self.tokenizer_signature = self.tokenizer.signature()
        super().__init__(references)

    def preprocess(self, sentence: str) -> str:
        return self.tokenizer(sentence.rstrip())

    def reference_info(self, references: list[str]) -> Any:
        return [ref.split() for ref in references]

    def sentence_stats(self, hypothesis: str, ref_info: Any) -> list[Number]:
        words = hypothesis.split()
        best_edits: Number = 10**16
        ref_lengths = 0
        for ref_words in ref_info:
            if len(words) * len(ref_words) > MAX_WORD_PAIRS:
                raise InputError(
                    f"TER: a line of {len(words):,} words against a reference of "
                    f"{len(ref_words):,} words is beyond TER's limit of {MAX_WORD_PAIRS:,} "
                    f"word pairs per line (its shift search would need gigabytes); split "
                    f"long lines into sentences (bleucli resegment) or score them with BLEU "
                    f"or chrF"
                )
            edits = _edits(words, ref_words)
            ref_lengths += len(ref_words)
            if edits < best_edits:
                best_edits = edits
        return [best_edits, ref_lengths / len(ref_info)]

    def engine_flags(self, lowers: bool) -> int | None:
        """How the compiled batch engine, which splits texts on whitespace, preprocesses raw
        texts itself: in the default configuration the tercom tokeniser only lowercases (2
        where the engine lowercases) and normalises spaces. None: preprocess_many first."""
        t = self.tokenizer
        if t.normalized or t.no_punct or t.asian_support:
            return None
        if t.case_sensitive:
            return 0
        return 2 if lowers else None

    def batch_spec(self) -> tuple[int, tuple] | None:
        """What the compiled batch engine (bleucli.batch) needs: metric 2 (TER takes its
        options in preprocessing)."""
        return 2, ()

    @property
    def stats_length(self) -> int:
        """Edits and (average) reference length."""
        return 2

    def score_from_values(self, values: Sequence[Number]) -> TERScore:
        edits, ref_length = values[0], values[1]
        if ref_length > 0:
            score = edits / ref_length
        elif edits > 0:
            score = 1.0  # empty references, non-empty hypotheses
        else:
            score = 0.0
        return TERScore(100 * score, edits, ref_length)

    def signature_fields(self) -> dict[str, Any]:
        return {
            "case": "mixed" if self.case_sensitive else "lc",
            "tok": self.tokenizer_signature,
            "norm": self.normalized,
            "punct": not self.no_punct,
            "asian": self.asian_support,
        }


def _native_edits(words: list[str], ref_words: list[str]) -> int:
    """The compiled edit count: words become integer ids (equal words, equal ids)."""
    if not ref_words:
        return len(words)
    assert _NATIVE is not None
    vocabulary: dict[str, int] = {}
    ref = [vocabulary.setdefault(w, len(vocabulary)) for w in ref_words]
    hyp = [vocabulary.setdefault(w, len(vocabulary)) for w in words]
    return _NATIVE.ter_edits(hyp, ref)


def _python_edits(words: list[str], ref_words: list[str]) -> int:
    from bleucli.metrics.ter_edit import translation_edit_rate

    return translation_edit_rate(words, ref_words)[0]


#: Edits (shifts included) of one hypothesis against one reference, by the chosen engine.
_edits = _native_edits if _NATIVE is not None else _python_edits
