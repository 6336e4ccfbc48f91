"""Language pairs as every command takes them (``-l SRC-TRG``): two ISO 639 codes (639-1's
two letters, or 639-3's three, as SacreBLEU's test sets use them: ``en-de``, ``en-liv``),
checked before anything is read; and what a target language implies (BLEU's tokeniser for
Chinese, Japanese and Korean), with a warning when the references contradict it."""

from __future__ import annotations

import re

from bleucli.errors import UsageError

#: Targets whose BLEU tokeniser the pair picks (``-l en-zh``: tok:zh), and the script their
#: references are written in.
CJK_TARGETS = {"zh": "Chinese", "ja": "Japanese", "ko": "Korean"}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def check_pair(value: str, option: str = "-l") -> tuple[str, str]:
    """(source, target) of ``value``; a usage error naming the flag otherwise."""
    from bleucli.iso639 import ALPHA_2, ALPHA_3, NAMES

    parts = value.split("-")
    if len(parts) != 2 or not all(parts):
        hint = ""
        if len(parts) > 2:
            hint = f": {len(parts)} parts; one source and one target language"
        raise UsageError(
            f"{option} {value!r} is not a language pair SRC-TRG (two language codes, e.g. "
            f"en-de){hint}"
        )
    unknown = [part for part in parts if part not in ALPHA_2 and part not in ALPHA_3]
    if unknown:
        lowered = [part.lower() for part in parts]
        if all(part in ALPHA_2 or part in ALPHA_3 for part in lowered):
            suggestion = f"; did you mean {'-'.join(lowered)}?"
        elif all(part in NAMES for part in lowered):
            suggestion = f"; did you mean {'-'.join(NAMES[part] for part in lowered)}?"
        else:
            suggestion = ""
        what = "is not an ISO 639 language code" if len(unknown) == 1 else (
            "are not ISO 639 language codes"
        )  # fmt: skip
        raise UsageError(
            f"{option} {value}: {' and '.join(repr(p) for p in unknown)} {what} (639-1 like de, "
            f"or 639-3 like liv){suggestion}"
        )
    return parts[0], parts[1]


def cjk_warning(pair: str | None, references: list[list[str]], sample: int = 200) -> str | None:
    """A warning when the pair's target picks a CJK tokeniser but the references hold no
    CJK character (a mistyped ``-l``, or references of another language)."""
    if not pair or "-" not in pair:
        return None
    target = pair.split("-")[-1]
    if target not in CJK_TARGETS:
        return None
    for reference in references:
        if any(_CJK.search(line) for line in reference[:sample]):
            return None
    return (
        f"-l {pair}: the target {target} ({CJK_TARGETS[target]}) picks BLEU's tok:"
        f"{'zh' if target == 'zh' else target + '-mecab'} tokeniser, but the references hold no "
        f"{CJK_TARGETS[target]} characters: is the language pair right?"
    )
