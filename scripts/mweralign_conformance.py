"""Resegmentation against mweralign on real data: every system of every WMT XML test set.

    python scripts/mweralign_conformance.py ../shared/data/wmt22-xml/*.xml [--tokenize none 13a char]

Each system's segments are joined per document (one line per document, as a document-level
system writes them) and realigned to the first reference with document ids, by bleucli
and by mweralign 1.4.1 (``align_texts``, what ``mweralign -m none -d DOCIDS`` runs per
document) on the same tokens. Prints the segments that differ per system and in all;
exits 1 when any does. Needs the test extras (mweralign).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import xml.etree.ElementTree as ET

from bleucli import mwer


def documents(path: str) -> tuple[list[list[str]], dict[str, list[str]]]:
    """Reference lines per document and, per system, its document lines (segments with a
    reference only, as SacreBLEU's reader keeps them)."""
    references: list[list[str]] = []
    systems: dict[str, list[str]] = {}
    for doc in ET.parse(path).getroot().iter("doc"):
        ref = doc.find("ref")
        if ref is None:
            continue
        segments = {s.get("id"): (s.text or "").strip() for s in ref.iter("seg")}
        ids = [k for k, text in segments.items() if text]
        if not ids:
            continue
        references.append([segments[k] for k in ids])
        for hyp in doc.findall("hyp"):
            own = {s.get("id"): (s.text or "").strip() for s in hyp.iter("seg")}
            systems.setdefault(hyp.get("system", ""), []).append(
                " ".join(own.get(k, "") for k in ids)
            )
    return references, systems


@contextlib.contextmanager
def quiet_stderr():
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def mweralign_counts(lines: list[list[str]], hyp: list[str]) -> list[int]:
    import mweralign

    kept = max((k + 1 for k, tokens in enumerate(lines) if tokens), default=0)
    if not hyp or kept == 0:
        return [len(hyp)] + [0] * (len(lines) - 1)
    with quiet_stderr():  # its C++ core reports each alignment on file descriptor 2
        out = mweralign.align_texts("\n".join(" ".join(t) for t in lines[:kept]), " ".join(hyp))
    counts = [len(mwer.TOKENIZERS["none"](line)) for line in out.split("\n")][:kept]
    return counts + [0] * (len(lines) - kept)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("xml", nargs="+")
    parser.add_argument("--tokenize", nargs="+", default=["none", "13a", "char"])
    args = parser.parse_args()
    differing = total = 0
    for tokenize in args.tokenize:
        split = mwer.TOKENIZERS[tokenize]
        for path in args.xml:
            references, systems = documents(path)
            ref_tokens = [[split(line) for line in lines] for lines in references]
            for system, hyps in sorted(systems.items()):
                bad = count = 0
                for lines, hyp in zip(ref_tokens, hyps):
                    tokens = split(hyp)
                    ours = mwer.align_counts(tokens, lines) if tokens else [0] * len(lines)
                    theirs = mweralign_counts(lines, tokens)
                    bad += sum(a != b for a, b in zip(ours, theirs))
                    count += len(lines)
                differing += bad
                total += count
                if bad:
                    print(f"{tokenize} {os.path.basename(path)} {system}: {bad} of {count} differ")
    print(f"{differing} of {total} segments differ from mweralign's")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
