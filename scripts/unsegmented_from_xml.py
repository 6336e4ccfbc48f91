"""Make an unsegmented system output from a WMT XML test set, for resegmentation checks.

    python scripts/unsegmented_from_xml.py wmttest2022.uk-en.all.xml OUT_DIR [--system NAME]

writes ``OUT_DIR/ref.txt`` (the first reference, one segment a line), ``OUT_DIR/docids.txt``
(the document id of every reference line), ``OUT_DIR/hyp.txt`` (the system's segments, as
submitted) and ``OUT_DIR/hyp.unseg`` (the system's segments joined per document: one line
per document, as a document-level or speech system would produce them). Segments without a
reference are left out, as SacreBLEU's reader does.
"""

from __future__ import annotations

import argparse
import os
import xml.etree.ElementTree as ET


def extract(path: str, system: str | None) -> tuple[list[str], list[str], list[str], str]:
    root = ET.parse(path).getroot()
    refs: list[str] = []
    docids: list[str] = []
    hyps: list[str] = []
    chosen = system
    for doc in root.iter("doc"):
        ref = doc.find("ref")
        if ref is None:
            continue
        systems = {h.get("system"): h for h in doc.findall("hyp")}
        if chosen is None:
            chosen = sorted(systems)[0]
        hyp = systems[chosen]
        ref_segs = {s.get("id"): (s.text or "").strip() for s in ref.iter("seg")}
        hyp_segs = {s.get("id"): (s.text or "").strip() for s in hyp.iter("seg")}
        for seg_id, text in ref_segs.items():
            if not text:
                continue
            refs.append(text)
            docids.append(doc.get("id", ""))
            hyps.append(hyp_segs.get(seg_id, ""))
    assert chosen is not None
    return refs, docids, hyps, chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("xml")
    parser.add_argument("out")
    parser.add_argument("--system", default=None, help="default: the first by name")
    args = parser.parse_args()
    refs, docids, hyps, system = extract(args.xml, args.system)
    os.makedirs(args.out, exist_ok=True)
    documents: dict[str, list[str]] = {}
    for doc, hyp in zip(docids, hyps):
        documents.setdefault(doc, []).append(hyp)
    files = {
        "ref.txt": refs,
        "docids.txt": docids,
        "hyp.txt": hyps,
        "hyp.unseg": [" ".join(lines) for lines in documents.values()],
    }
    for name, lines in files.items():
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as handle:
            handle.write("".join(f"{line}\n" for line in lines))
    print(f"{system}: {len(refs)} lines, {len(documents)} documents -> {args.out}")


if __name__ == "__main__":
    main()
