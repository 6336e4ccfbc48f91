"""Readers for the formats test sets come in, producing named, aligned fields.

Each reader returns ``{field: lines}`` with ``src``, the reference fields (``ref`` or
``ref:<n>`` / ``ref:<translator>``), and whatever metadata the format carries (``docid``,
``genre``, ``origlang``, ``domain``, system outputs). Text is normalised as SacreBLEU does
for each format, so references, and thus scores, are identical.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path

from bleucli.errors import InputError
from bleucli.io import decode_lines
from bleucli.testsets.registry import LangPair

_SEG = re.compile(r"<seg.*?>(.*)</seg>.*?")
_WHITESPACE = re.compile(r"\s+")
_DOC_ORIGLANG = re.compile(r'.* origlang="([^"]+)".*')
_DOC_ID = re.compile(r'.* docid="([^"]+)".*')


def clean(text: str) -> str:
    """Strip and collapse whitespace (how SGML and XML segments are normalised)."""
    return _WHITESPACE.sub(" ", text.strip())


def read_text(path: Path) -> str:
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        decode_lines(data, str(path))  # raises with the line number
        raise


def raw_lines(path: Path) -> list[str]:
    """Lines split at ``\\n`` only, as SacreBLEU reads test-set files (``\\r`` is kept)."""
    lines = read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass
class Segments:
    """Aligned fields of one language pair, plus per-segment document info for filters."""

    fields: dict[str, list[str]]
    references: list[str]
    #: Per segment: (document's origlang or None, docid or None, domain or None).
    documents: list[tuple[str | None, str | None, str | None]] | None = None
    filterable: bool = False
    extra: dict[str, object] = field(default_factory=dict)


def _plain(path: Path) -> list[str]:
    return [line.rstrip() for line in raw_lines(path)]


def _sgm_segments(path: Path) -> list[str]:
    return [clean(_SEG.sub(r"\1", line)) for line in raw_lines(path) if line.startswith("<seg ")]


def _sgm_or_plain(path: Path) -> list[str]:
    """WMT addition sets mix an SGML source with plain-text references."""
    name = path.name.lower().removesuffix(".gz")
    return _sgm_segments(path) if name.endswith((".sgm", ".xml")) else _plain(path)


def _sgm_metadata(path: Path, key: str) -> list[str]:
    """A document attribute repeated for each of its segments (last value carries over)."""
    values, current = [], ""
    pattern = re.compile(rf'{key}="(.*?)"')
    for line in raw_lines(path):
        if line.startswith("<doc "):
            match = pattern.search(line)
            if match is not None:
                current = match.group(1)
        elif line.startswith("<seg "):
            values.append(current)
    return values


def _sgm_documents(path: Path) -> list[tuple[str | None, str | None, str | None]]:
    docs: list[tuple[str | None, str | None, str | None]] = []
    current: tuple[str | None, str | None, str | None] = (None, None, None)
    for line in raw_lines(path):
        if line.startswith("<doc "):
            origlang = _DOC_ORIGLANG.match(line)
            docid = _DOC_ID.match(line)
            current = (
                origlang.group(1) if origlang else None,
                docid.group(1) if docid else None,
                None,
            )
        elif line.startswith("<seg "):
            docs.append(current)
    return docs


def _ref_names(count: int) -> list[str]:
    return ["ref"] if count == 1 else [f"ref:{i}" for i in range(count)]


def read_sgm(pair: LangPair, files: list[Path]) -> Segments:
    source, refs = files[0], files[1:]
    names = _ref_names(len(refs))
    fields = {"src": _sgm_or_plain(source)}
    fields.update({name: _sgm_or_plain(path) for name, path in zip(names, refs)})
    filterable = source.name.lower().endswith(".sgm")
    if pair.metadata:
        for key in ("docid", "genre", "origlang"):
            fields[key] = _sgm_metadata(source, key)
    return Segments(fields, names, _sgm_documents(source) if filterable else None, filterable)


def read_plain(pair: LangPair, files: list[Path]) -> Segments:
    names = _ref_names(len(files) - 1)
    fields = {"src": _plain(files[0])}
    fields.update({name: _plain(path) for name, path in zip(names, files[1:])})
    return Segments(fields, names)


def read_tsv(pair: LangPair, files: list[Path]) -> Segments:
    def column(path: Path, index: int) -> list[str]:
        out = []
        for line_no, line in enumerate(raw_lines(path), 1):
            cells = line.split("\t")
            if index >= len(cells):
                raise InputError(f"{path}: line {line_no}: no column {index}")
            out.append(cells[index])
        return out

    names = _ref_names(len(files) - 1)
    fields = {"src": column(files[0], pair.source_column)}
    for name, path, index in zip(names, files[1:], pair.reference_columns):
        fields[name] = column(path, index)
    return Segments(fields, names)


def _translator_field(translator: str | None) -> str:
    return f"ref:{translator}" if translator else "ref"


def read_xml(pair: LangPair, files: list[Path]) -> Segments:
    """WMT21+ XML: one file with source, references by translator and system outputs."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(read_text(files[0]))
    except ET.ParseError as err:
        raise InputError(f"{files[0]}: invalid XML ({err})") from None
    translators = sorted({ref.get("translator") or "" for ref in root.iter("ref")})
    ref_fields: dict[str, list[str]] = {_translator_field(t): [] for t in translators}
    src: list[str] = []
    docids: list[str] = []
    origlangs: list[str] = []
    domains: list[str | None] = []
    systems: dict[str, list[str]] = {}
    seen_domain = False

    def segments(node) -> dict[int, str]:
        return {int(seg.get("id")): seg.text or "" for seg in node.iter("seg")}

    for doc in root.iter("doc"):
        if "testsuite" in doc.attrib:
            continue
        sources = {}
        for src_node in doc.iter("src"):
            sources.update(segments(src_node))
        by_translator = {ref.get("translator") or "": segments(ref) for ref in doc.iter("ref")}
        outputs = {hyp.get("system") or "": segments(hyp) for hyp in doc.iter("hyp")}
        for seg_id in sorted(sources):
            if not any(sents.get(seg_id, "") for sents in by_translator.values()):
                continue  # no reference for this segment: not part of the test set
            for translator in translators:
                ref_fields[_translator_field(translator)].append(
                    by_translator.get(translator, {}).get(seg_id, "")
                )
            src.append(sources[seg_id])
            for system, sents in outputs.items():
                systems.setdefault(system, []).append(sents.get(seg_id, ""))
            docids.append(doc.get("id", ""))
            origlangs.append(doc.get("origlang", ""))
            domains.append(doc.get("domain"))
            seen_domain = doc.get("domain") is not None
    fields: dict[str, list[str]] = {
        "src": src,
        **ref_fields,
        "docid": docids,
        "origlang": origlangs,
        **systems,
    }
    if seen_domain:
        fields["domain"] = [d or "" for d in domains]
    fields = {name: [clean(v) for v in values] for name, values in fields.items()}
    wanted = (
        [_translator_field(t) for t in pair.translators]
        if pair.translators
        else ([next(iter(ref_fields))] if ref_fields else [])
    )
    missing = [w for w in wanted if w not in fields]
    if missing:
        raise InputError(
            f"{files[0]}: no reference by translator {missing[0][4:]!r}; "
            f"available: {', '.join(ref_fields) or 'none'}"
        )
    # like SacreBLEU, domains count only if the last document has one
    documents: list[tuple[str | None, str | None, str | None]] = [
        (o, d, m if seen_domain else None) for o, d, m in zip(origlangs, docids, domains)
    ]
    return Segments(fields, wanted, documents, filterable=True)


READERS = {
    "plain": read_plain,
    "sgm": read_sgm,
    "iwslt": read_sgm,
    "tsv": read_tsv,
    "xml": read_xml,
}


def read_langpair(pair: LangPair, files: list[Path]) -> Segments:
    """Read source and references of a language pair from its (verified) local files."""
    segments = READERS[pair.format](pair, files)
    lengths = {name: len(values) for name, values in segments.fields.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(
            f"{files[0].name}: fields have different lengths: "
            + ", ".join(f"{k}={v}" for k, v in lengths.items())
        )
    return segments
