"""Test-set formats read exactly as SacreBLEU reads them (its dataset classes as the oracle)."""

from __future__ import annotations

import gzip
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bleucli.testsets import TestSets
from bleucli.testsets.formats import read_langpair
from bleucli.testsets.registry import LangPair
from tests.testsets.conftest import make_tgz, md5, sgm, write_registry

# Segment text: anything on one line, including markup-like characters and odd spacing.
segment = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="\n\r"), max_size=30
) | st.sampled_from(["  spaced   out ", "a <b> c", "x &amp; y", "</seg> trick", ""])


def sacrebleu_fields(dataset, tmp: Path, langpair: str) -> dict[str, list[str]]:
    """Run SacreBLEU's processing on raw files already placed in ``tmp/raw``."""
    dataset._outdir = str(tmp)
    dataset._rawdir = str(tmp / "raw")
    dataset.maybe_download = lambda: None
    names = dataset.fieldnames(langpair)
    files = dataset.get_files(langpair)
    out = {}
    for name, path in zip(names, files):
        lines = Path(path).read_text(encoding="utf-8").split("\n")
        out[name] = [line.rstrip() for line in lines[:-1]]
    return out


def ours(pair: LangPair, raw: Path) -> dict[str, list[str]]:
    files = [raw / p for p in (pair.source, *pair.references)]
    fields = read_langpair(pair, files).fields
    return {name: [v.rstrip() for v in values] for name, values in fields.items()}


@given(lines=st.lists(segment, min_size=1, max_size=6), refs=st.data())
def test_sgm_like_sacrebleu(tmp_path_factory, lines, refs) -> None:
    from sacrebleu.dataset.fake_sgml import FakeSGMLDataset

    tmp = tmp_path_factory.mktemp("sgm")
    n = len(lines)
    ref_lines = refs.draw(st.lists(segment, min_size=n, max_size=n))
    docs = [("d1", "de", "news", n // 2), ("d2", "en", "sport", n - n // 2)]
    raw = tmp / "raw"
    (raw / "t").mkdir(parents=True)
    (raw / "t/src.sgm").write_bytes(sgm(lines, docs))
    (raw / "t/ref.sgm").write_bytes(sgm(ref_lines, docs, "refset"))
    expected = sacrebleu_fields(
        FakeSGMLDataset("wmtx", data=[], md5=[], langpairs={"de-en": ["t/src.sgm", "t/ref.sgm"]}),
        tmp,
        "de-en",
    )
    pair = LangPair("sgm", "t/src.sgm", ("t/ref.sgm",))
    assert ours(pair, raw) == expected


def test_sgm_addition_mixes_sgm_source_and_plain_references(tmp_path) -> None:
    from sacrebleu.dataset.fake_sgml import WMTAdditionDataset

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "src.sgm").write_bytes(sgm(["a", "b"], [("d", "en", "news", 2)]))
    (raw / "x.ref").write_text("one  two \nthree\n")
    expected = sacrebleu_fields(
        WMTAdditionDataset("wmtx/add", data=[], md5=[], langpairs={"en-de": ["src.sgm", "x.ref"]}),
        tmp_path,
        "en-de",
    )
    assert ours(LangPair("sgm", "src.sgm", ("x.ref",)), raw) == expected


def test_wmt08_style_sets_have_no_metadata(tmp_path) -> None:
    raw = tmp_path
    (raw / "s.sgm").write_bytes(sgm(["a"], [("d", "en", "news", 1)]))
    (raw / "r.sgm").write_bytes(sgm(["b"], [("d", "en", "news", 1)], "refset"))
    fields = ours(LangPair("sgm", "s.sgm", ("r.sgm",), metadata=False), raw)
    assert list(fields) == ["src", "ref"]


def wmt_xml(docs: list[dict]) -> bytes:
    out = ['<?xml version="1.0" encoding="utf-8"?>', '<dataset id="wmtx">']
    for doc in docs:
        attrs = f'id={quoteattr(doc["id"])} origlang="{doc["origlang"]}"'
        if doc.get("domain"):
            attrs += f' domain="{doc["domain"]}"'
        if doc.get("testsuite"):
            attrs += ' testsuite="yes"'
        out.append(f"<doc {attrs}>")
        out.append('<src lang="de"><p>')
        out += [f'<seg id="{i + 1}">{escape(s)}</seg>' for i, s in enumerate(doc["src"])]
        out.append("</p></src>")
        for translator, segs in doc["refs"].items():
            out.append(f'<ref lang="en" translator="{translator}"><p>')
            out += [f'<seg id="{i + 1}">{escape(s)}</seg>' for i, s in enumerate(segs)]
            out.append("</p></ref>")
        for system, segs in doc.get("hyps", {}).items():
            out.append(f'<hyp lang="en" system="{system}"><p>')
            out += [f'<seg id="{i + 1}">{escape(s)}</seg>' for i, s in enumerate(segs)]
            out.append("</p></hyp>")
        out.append("</doc>")
    out.append("</dataset>")
    return "\n".join(out).encode()


@given(data=st.data())
def test_wmt_xml_like_sacrebleu(tmp_path_factory, data) -> None:
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    tmp = tmp_path_factory.mktemp("xml")
    docs = []
    for d in range(data.draw(st.integers(1, 3))):
        n = data.draw(st.integers(1, 4))
        text = st.lists(segment, min_size=n, max_size=n)
        # SacreBLEU crashes on an empty source segment (its text is None), so sources have text
        source = st.lists(segment.filter(bool), min_size=n, max_size=n)
        docs.append(
            {
                "id": f"doc{d}",
                "origlang": data.draw(st.sampled_from(["de", "en"])),
                "domain": "news",
                "src": data.draw(source),
                "refs": {"A": data.draw(text), "B": data.draw(text)},
                "hyps": {"sys1": data.draw(text)},
            }
        )
    docs.append(
        {
            "id": "ts",
            "origlang": "de",
            "domain": "news",
            "testsuite": True,
            "src": ["ignored"],
            "refs": {"A": ["ignored"]},
        }
    )
    raw = tmp / "raw"
    raw.mkdir()
    (raw / "t.xml").write_bytes(wmt_xml(docs))
    expected = sacrebleu_fields(
        WMTXMLDataset("wmtx", data=[], md5=[], langpairs={"de-en": ["t.xml"]}, refs=["A", "B"]),
        tmp,
        "de-en",
    )
    got = ours(LangPair("xml", "t.xml", ("t.xml",), translators=("A", "B")), raw)
    assert got == expected


def test_tsv_columns_like_sacrebleu(tmp_path) -> None:
    from sacrebleu.dataset.tsv import TSVDataset

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "d.tsv").write_text("1\t2\tsrc one\tref one\n3\t4\tsrc  two \t\n5\t6\t\tref three\n")
    expected = sacrebleu_fields(
        TSVDataset("mtntx", data=[], md5=[], langpairs={"en-fr": ["2:d.tsv", "3:d.tsv"]}),
        tmp_path,
        "en-fr",
    )
    pair = LangPair("tsv", "d.tsv", ("d.tsv",), source_column=2, reference_columns=(3,))
    assert ours(pair, raw) == expected


def test_plain_and_gzipped_plain_like_sacrebleu(tmp_path) -> None:
    from sacrebleu.dataset.plain_text import PlainTextDataset

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "s.en").write_text("a b  \r\nc\n")
    (raw / "r.fr.gz").write_bytes(gzip.compress(b"x y\nz \n"))
    expected = sacrebleu_fields(
        PlainTextDataset("m", data=[], md5=[], langpairs={"en-fr": ["s.en", "r.fr.gz"]}),
        tmp_path,
        "en-fr",
    )
    assert ours(LangPair("plain", "s.en", ("r.fr.gz",)), raw) == expected


# -- origlang / subset filters, compared with SacreBLEU's filter_subset --------------------------

FILTER_SOURCE = [f"s{i}" for i in range(6)]
FILTER_DOCS = [("bbc.1", "de", "news", 2), ("cnn.2", "en", "news", 3), ("bbc.3", "de", "x", 1)]
ANNOTATIONS = {"bbc.1": "GB-politics", "cnn.2": "US-sport", "bbc.3": "GB-sport"}


@pytest.fixture
def filter_set(tmp_path, monkeypatch):
    """The same sgm test set registered in SacreBLEU (patched) and in a bleucli registry."""
    import sacrebleu.utils as sb_utils
    from sacrebleu.dataset.fake_sgml import FakeSGMLDataset

    monkeypatch.setenv("BLEUCLI_CACHE", str(tmp_path / "cache"))
    members = {
        "t/src.sgm": sgm(FILTER_SOURCE, FILTER_DOCS),
        "t/ref.sgm": sgm([s.upper() for s in FILTER_SOURCE], FILTER_DOCS, "refset"),
    }
    archive = make_tgz(members)
    (tmp_path / "f.tgz").write_bytes(archive)
    registry = write_registry(
        tmp_path / "r.json",
        "wmtf",
        [{"url": "f.tgz", "md5": md5(archive)}],
        {"de-en": {"format": "sgm", "source": "t/src.sgm", "references": ["t/ref.sgm"]}},
        subsets=ANNOTATIONS,
    )
    sb_dir = tmp_path / "sb"
    for name, content in members.items():
        (sb_dir / "wmtf" / "raw" / name).parent.mkdir(parents=True, exist_ok=True)
        (sb_dir / "wmtf" / "raw" / name).write_bytes(content)
    monkeypatch.setattr(sb_utils, "SACREBLEU_DIR", str(sb_dir))
    monkeypatch.setitem(
        sb_utils.DATASETS,
        "wmtf",
        FakeSGMLDataset("wmtf", data=[], md5=[], langpairs={"de-en": ["t/src.sgm", "t/ref.sgm"]}),
    )
    monkeypatch.setitem(sb_utils.SUBSETS, "wmtf", ANNOTATIONS)
    return TestSets([str(registry)])


@pytest.mark.parametrize(
    ("origlang", "subset"),
    [
        ("de", None),
        ("non-de", None),
        ("en", None),
        (None, "sport"),
        (None, "country:GB"),
        ("de", "politics"),
    ],
)
def test_filters_like_sacrebleu(filter_set, origlang, subset) -> None:
    import sacrebleu.utils as sb_utils

    (expected,) = sb_utils.filter_subset([FILTER_SOURCE], "wmtf", "de-en", origlang, subset)
    assert filter_set.load("wmtf", "de-en", origlang, subset).fields["src"] == expected


@pytest.mark.parametrize("extra", [[], ["--subset", "sport"]])
def test_detail_prints_sacrebleus_subset_scores(
    filter_set, tmp_path, monkeypatch, capsys, extra
) -> None:
    """-d/--detail: per origlang and subset, the lines SacreBLEU prints, same numbers."""
    import argparse

    import sacrebleu
    import sacrebleu.utils as sb_utils

    from tests.conftest import run_cli

    hyps = [s.upper() + (" X" if i % 2 else "") for i, s in enumerate(FILTER_SOURCE)]
    refs = [[s.upper() for s in FILTER_SOURCE]]
    monkeypatch.setattr(sb_utils.Color, "ENABLE_COLORS", False)
    args = argparse.Namespace(
        width=2,
        origlang=None,
        test_set="wmtf",
        langpair="de-en",
        subset=extra[1] if extra else None,
    )
    sb_utils.print_subset_results(
        {"BLEU": sacrebleu.BLEU(), "CHRF": sacrebleu.CHRF()}, hyps, refs, args
    )
    expected = capsys.readouterr().out.splitlines()
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    result = run_cli(
        [
            "-t",
            "wmtf",
            "-l",
            "de-en",
            "-i",
            str(hyp),
            "-m",
            "bleu",
            "chrf",
            "-w",
            "2",
            "--detail",
            *extra,
            "--testsets-file",
            str(tmp_path / "r.json"),
        ]
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].lstrip().startswith("BLEU|nrefs:1|test:wmtf|lang:de-en|")  # text, not JSON
    assert lines[2:] == expected and len(expected) >= 4


def test_list_names_the_systems_of_an_xml_set(tmp_path, monkeypatch) -> None:
    """``--list -t SET`` on a WMT XML set names the systems ``--echo NAME`` accepts (read from
    the file, as SacreBLEU reads them), and says how to get them before the set is cached."""
    from tests.conftest import run_cli

    monkeypatch.setenv("BLEUCLI_CACHE", str(tmp_path / "cache"))
    docs = [{"id": "d1", "origlang": "de", "src": ["a", "b"], "refs": {"A": ["x", "y"]},
             "hyps": {"Online-A": ["x", "z"], "HUMAN-B": ["x", "y"]}}]  # fmt: skip
    archive = make_tgz({"t/t.xml": wmt_xml(docs)})
    (tmp_path / "x.tgz").write_bytes(archive)
    registry = write_registry(
        tmp_path / "r.json", "wmtx", [{"url": "x.tgz", "md5": md5(archive)}],
        {"de-en": {"format": "xml", "source": "t/t.xml", "references": ["t/t.xml"], "translators": ["A"]}},
    )  # fmt: skip
    remote = write_registry(
        tmp_path / "remote.json", "wmtx", [{"url": "https://example.invalid/x.tgz", "md5": md5(archive)}],
        {"de-en": {"format": "xml", "source": "t/t.xml", "references": ["t/t.xml"], "translators": ["A"]}},
    )  # fmt: skip
    before = run_cli(
        ["--list", "-t", "wmtx", "-l", "de-en", "--testsets-file", str(remote), "--offline"]
    )
    assert before.exit_code == 0, before.stderr
    assert (
        "systems (for --echo NAME): download the set to list them (--download wmtx)"
        in before.stdout
    )
    base = ["--list", "-t", "wmtx", "-l", "de-en", "--testsets-file", str(registry)]
    listed = run_cli(base)
    assert listed.exit_code == 0, listed.stderr
    assert listed.stdout.strip() == (
        "de-en: src, ref:A, docid, origlang; systems (for --echo NAME): Online-A, HUMAN-B"
    )
    echoed = run_cli(
        ["-t", "wmtx", "-l", "de-en", "--testsets-file", str(registry), "--echo", "Online-A"]
    )
    assert echoed.stdout.splitlines() == ["x", "z"]
