"""bleucli analyze / plot: every number against a brute-force computation, the HTML report
parsed and rendered in a real headless browser, figures read back."""

from __future__ import annotations

import html.parser
import json
from collections import Counter
from pathlib import Path

import pytest

import bleucli
from bleucli.tokenizers.mteval import tokenize_13a_python
from tests.conftest import EXAMPLES, run_cli

REF = str(EXAMPLES / "ref.de")
REFS = (EXAMPLES / "ref.de").read_text(encoding="utf-8").splitlines()
REFS2 = (EXAMPLES / "ref2.de").read_text(encoding="utf-8").splitlines()
HYP = (EXAMPLES / "hyp.de").read_text(encoding="utf-8").splitlines()
HYP2 = (EXAMPLES / "hyp2.de").read_text(encoding="utf-8").splitlines()
SRC = (EXAMPLES / "src.en").read_text(encoding="utf-8").splitlines()
NASTY = "<script>alert('x')</script> & <b>bold</b>"


def words(line: str) -> list[str]:
    return tokenize_13a_python(line).split()


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    """A third system with markup in its output, analysed with two references, source,
    document ids and both metrics, as JSON."""
    folder = tmp_path_factory.mktemp("analysis")
    third = [NASTY if i == 3 else line for i, line in enumerate(HYP2)]
    path = folder / "third.de"
    path.write_text("\n".join(third) + "\n", encoding="utf-8")
    args = [
        REF,
        str(EXAMPLES / "ref2.de"),
        "-i",
        f"base:{EXAMPLES / 'hyp.de'}",
        f"swapped:{EXAMPLES / 'hyp2.de'}",
        f"markup:{path}",
        "--source",
        str(EXAMPLES / "src.en"),
        "--docids",
        str(EXAMPLES / "docids.txt"),
        "--top",
        "3",
        "-m",
        "bleu",
        "chrf",
    ]
    result = run_cli(["analyze", *args, "-f", "json"])
    assert result.exit_code == 0, result.stderr
    return {
        "json": json.loads(result.stdout),
        "args": args,
        "folder": folder,
        "systems": {"base": HYP, "swapped": HYP2, "markup": third},
    }


def table(document, key):
    return next(t for t in document["tables"] if t["key"] == key)


def length_bucket(n: int) -> str:
    for low in (0, 10, 20, 30, 40):
        if n < low + 10:
            return "<10" if low == 0 else f"{low}-{low + 9}"
    return ">=50"


def test_overview_and_buckets_equal_corpus_scores_of_their_lines(analysis) -> None:
    document, systems = analysis["json"], analysis["systems"]
    overview = table(document, "overview")
    assert overview["headers"] == ["System", "Lines", "BLEU", "chrF2", "Length ratio"]
    for row in overview["rows"]:
        hyps = systems[row[0]]
        bleu = bleucli.BLEU().corpus_score(hyps, [REFS, REFS2])
        assert row[2] == pytest.approx(bleu.score, abs=1e-9)
        assert row[3] == pytest.approx(bleucli.CHRF().corpus_score(hyps, [REFS, REFS2]).score)
        assert row[4] == pytest.approx(bleu.sys_len / bleu.ref_len)
    for key, lengths in (
        ("ref-length", [len(words(r)) for r in REFS]),
        ("src-length", [len(s.split()) for s in SRC]),
    ):
        buckets: dict[str, list[int]] = {}
        for i, n in enumerate(lengths):
            buckets.setdefault(length_bucket(n), []).append(i)
        rows = table(document, key)["rows"]
        assert sorted(r[0] for r in rows) == sorted(buckets)
        for row in rows:
            lines = buckets[row[0]]
            assert row[1] == len(lines)
            values = iter(row[2:])
            for metric in (bleucli.BLEU(), bleucli.CHRF()):
                for name in ("base", "swapped", "markup"):
                    hyps = [systems[name][i] for i in lines]
                    refs = [[REFS[i] for i in lines], [REFS2[i] for i in lines]]
                    assert next(values) == pytest.approx(metric.corpus_score(hyps, refs).score)


def test_score_bands_count_sentence_bleu(analysis) -> None:
    rows = table(analysis["json"], "bands-BLEU")["rows"]
    scorer = bleucli.BLEU(effective_order=True)
    for k, name in enumerate(["base", "swapped", "markup"]):
        counts = [0] * 10
        for hyp, r1, r2 in zip(analysis["systems"][name], REFS, REFS2):
            value = scorer.sentence_score(hyp, [r1, r2]).score
            counts[min(int(value // 10), 9)] += 1
        assert [row[1 + k] for row in rows] == counts


def test_word_f_measure_by_frequency(analysis) -> None:
    rows = {row[0]: row for row in table(analysis["json"], "words")["rows"]}
    frequency = Counter(w for line in REFS + REFS2 for w in words(line))

    def label(word: str) -> str:
        n = frequency[word]
        if n == 0:
            return "0"
        for low, high in ((1, 2), (2, 3), (3, 4), (4, 5), (5, 10), (10, 100), (100, 1000)):
            if low <= n < high:
                return str(low) if high == low + 1 else f"{low}-{high - 1}"
        return ">=1000"

    for k, name in enumerate(["base", "swapped", "markup"]):
        matched, hyp_total, ref_total = Counter(), Counter(), Counter()
        for hyp, ref in zip(analysis["systems"][name], REFS):
            h, r = Counter(words(hyp)), Counter(words(ref))
            for word in r:
                ref_total[label(word)] += r[word]
            for word in h:
                hyp_total[label(word)] += h[word]
                matched[label(word)] += min(h[word], r[word])
        for bucket, row in rows.items():
            assert row[1] == ref_total[bucket]
            p = matched[bucket] / hyp_total[bucket] if hyp_total[bucket] else 0.0
            r = matched[bucket] / ref_total[bucket] if ref_total[bucket] else 0.0
            expected = 2 * p * r / (p + r) if p + r else 0.0
            assert row[2 + k] == pytest.approx(expected)


def test_ngram_differences(analysis) -> None:
    systems = analysis["systems"]

    def matches(name: str, n: int) -> Counter:
        total: Counter = Counter()
        for hyp, r1, r2 in zip(systems[name], REFS, REFS2):
            grams = Counter(tuple(words(hyp)[i : i + n]) for i in range(len(words(hyp)) - n + 1))
            best: Counter = Counter()
            for ref in (r1, r2):
                t = words(ref)
                for gram, c in Counter(tuple(t[i : i + n]) for i in range(len(t) - n + 1)).items():
                    best[gram] = max(best[gram], c)
            for gram, c in grams.items():
                total[" ".join(gram)] += min(c, best[gram])
        return total

    rows = table(analysis["json"], "ngrams-1")["rows"]
    for n in range(1, 5):
        a, b = matches("base", n), matches("swapped", n)
        diffs = {g: a[g] - b[g] for g in set(a) | set(b) if a[g] != b[g]}
        for sign, who in ((1, "base"), (-1, "swapped")):
            expected = sorted(
                (g for g, d in diffs.items() if d * sign > 0), key=lambda g: (-abs(diffs[g]), g)
            )[:3]
            got = [row for row in rows if row[0] == n and row[1] == who]
            assert [row[2] for row in got] == expected
            assert all(
                row[3] == a[row[2]] and row[4] == b[row[2]] and row[5] == a[row[2]] - b[row[2]]
                for row in got
            )


def test_examples_are_the_largest_sentence_differences(analysis) -> None:
    scorer = bleucli.BLEU(effective_order=True)
    comparison = analysis["json"]["examples"][0]
    assert (comparison["baseline"], comparison["system"]) == ("base", "swapped")
    a = [scorer.sentence_score(h, [r1, r2]).score for h, r1, r2 in zip(HYP, REFS, REFS2)]
    b = [scorer.sentence_score(h, [r1, r2]).score for h, r1, r2 in zip(HYP2, REFS, REFS2)]
    order = sorted(range(len(a)), key=lambda i: (-(a[i] - b[i]), i))
    assert [e["line"] for e in comparison["better_baseline"]] == [
        i + 1 for i in order[:3] if a[i] > b[i]
    ]
    reverse = sorted(range(len(a)), key=lambda i: (a[i] - b[i], i))
    assert [e["line"] for e in comparison["better_system"]] == [
        i + 1 for i in reverse[:3] if b[i] > a[i]
    ]
    first = comparison["better_baseline"][0]
    assert first["source"] == SRC[first["line"] - 1]
    assert first["references"] == [REFS[first["line"] - 1], REFS2[first["line"] - 1]]


def test_documents_table(analysis) -> None:
    rows = table(analysis["json"], "documents")["rows"]
    ids = (EXAMPLES / "docids.txt").read_text().split()
    for row in rows:
        lines = [i for i, d in enumerate(ids) if d == row[0]]
        hyps = [HYP[i] for i in lines]
        expected = bleucli.BLEU().corpus_score(
            hyps, [[REFS[i] for i in lines], [REFS2[i] for i in lines]]
        )
        assert row[1] == len(lines) and row[2] == pytest.approx(expected.score)


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex"])
def test_text_formats_carry_signatures(analysis, fmt) -> None:
    result = run_cli(["analyze", *analysis["args"], "-f", fmt])
    assert result.exit_code == 0, result.stderr

    def printed(signature: str) -> str:  # in LaTeX's typewriter, a line may break after |
        return signature.replace("|", "|\\allowbreak{}") if fmt == "latex" else signature

    assert result.stdout.count(printed("nrefs:2|case:mixed|eff:no|tok:13a")) >= 4
    assert printed("tok:13a|case:mixed") in result.stdout  # the word analyses' own signature


class Parser(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter = Counter()
        self.attributes: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags[tag] += 1
        self.attributes += attrs

    def handle_data(self, data) -> None:
        self.text.append(data)


def _html(analysis, monkeypatch=None, name="report.html") -> str:
    path = analysis["folder"] / name
    result = run_cli(["analyze", *analysis["args"], "--html", str(path)])
    assert result.exit_code == 0, result.stderr
    return path.read_text(encoding="utf-8")


def test_html_report_is_self_contained_and_escaped(analysis) -> None:
    text = _html(analysis)
    parser = Parser()
    parser.feed(text)
    assert parser.tags["table"] == len(analysis["json"]["tables"])
    assert parser.tags["script"] == 0 and parser.tags["link"] == 0 and parser.tags["img"] == 0
    assert not any(
        name in ("src", "href") and value and "://" in value for name, value in parser.attributes
    )  # nothing fetched when opened
    assert "<script>alert" not in text and "&lt;script&gt;alert(" in text
    assert any(NASTY in chunk for chunk in ["".join(parser.text)])
    assert parser.tags["svg"] >= 3  # bucket charts, scores, bootstrap differences
    assert parser.tags["mark"] > 0  # differences highlighted in the examples


def test_html_without_matplotlib_says_how_to_get_plots(analysis, monkeypatch) -> None:
    from bleucli.analysis import plots

    monkeypatch.setattr(plots, "available", lambda: False)
    text = _html(analysis, name="plain.html")
    assert "<svg" not in text and "pip install &#x27;bleucli[plot]&#x27;" in text


def _non_blank(png: Path) -> bool:
    from PIL import Image

    image = Image.open(png).convert("L")
    histogram = image.histogram()
    dark = sum(histogram[:200])  # pixels clearly darker than the white page
    return image.size[0] > 100 and dark > 0.005 * image.size[0] * image.size[1]


@pytest.mark.parametrize("kind", ["scores", "bootstrap", "buckets"])
@pytest.mark.parametrize("suffix", [".pdf", ".png", ".svg"])
def test_plots_are_written_and_read_back(kind, suffix, tmp_path) -> None:
    out = tmp_path / f"figure{suffix}"
    result = run_cli(
        [
            "plot",
            kind,
            REF,
            "-i",
            str(EXAMPLES / "hyp.de"),
            str(EXAMPLES / "hyp2.de"),
            "-o",
            str(out),
        ]
    )
    assert result.exit_code == 0, result.stderr
    data = out.read_bytes()
    if suffix == ".pdf":
        assert data.startswith(b"%PDF-") and b"%%EOF" in data[-64:] and b"/Page" in data
    elif suffix == ".png":
        assert _non_blank(out)
    else:
        import xml.etree.ElementTree as ET

        root = ET.fromstring(data)
        assert root.tag.endswith("svg") and len(list(root.iter())) > 20


def test_errors_are_one_line(tmp_path, monkeypatch) -> None:
    short = tmp_path / "short.en"
    short.write_text("one\n")
    cases = [
        (["analyze", REF, "-i", str(EXAMPLES / "hyp.de"), "--source", str(short)], "1 lines"),
        (
            ["analyze", REF, "-i", str(EXAMPLES / "hyp.de"), "--example-metric", "COMET"],
            "not among the metrics",
        ),
        (
            ["plot", "scores", REF, "-i", str(EXAMPLES / "hyp.de"), "-o", str(tmp_path / "x.gif")],
            "plots are written as",
        ),
        (
            [
                "plot",
                "bootstrap",
                REF,
                "-i",
                str(EXAMPLES / "hyp.de"),
                "-o",
                str(tmp_path / "x.png"),
            ],
            "two systems",
        ),
    ]
    for args, message in cases:
        result = run_cli(args)
        assert result.exit_code in (1, 2) and message in result.stderr, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1
    from bleucli.analysis import plots

    monkeypatch.setattr(plots, "available", lambda: False)
    result = run_cli(
        ["plot", "scores", REF, "-i", str(EXAMPLES / "hyp.de"), "-o", str(tmp_path / "x.png")]
    )
    assert result.exit_code == 1 and "pip install 'bleucli[plot]'" in result.stderr


def test_docs_analysis_commands_run(tmp_path) -> None:
    """The analyze/plot commands of docs/analysis.md, as written, from the repository root
    (outputs redirected into a temporary folder), and what they write."""
    import re
    import shlex

    from tests.conftest import ROOT, run_subprocess

    text = (ROOT / "docs" / "analysis.md").read_text(encoding="utf-8")
    section = text[text.index("## Analysis for papers") :]
    start = section.index("```bash") + 7
    block = section[start : section.index("```", start)]
    commands = [line for line in re.sub(r"\\\n\s*", " ", block).splitlines() if line.strip()]
    assert len(commands) == 2
    for command in commands:
        argv = shlex.split(command)[1:]
        argv = [str(tmp_path / a) if a in ("report.html", "scores.pdf") else a for a in argv]
        proc = run_subprocess(argv, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (tmp_path / "scores.pdf").read_bytes().startswith(b"%PDF")


def test_bands_and_examples_of_an_external_metric() -> None:
    """With a 0..1 segment metric the bands are tenths, and examples rank by its scores."""
    seg = [str(EXAMPLES / "hyp.seg"), str(EXAMPLES / "hyp2.seg")]
    result = run_cli(
        [
            "analyze",
            REF,
            "-i",
            str(EXAMPLES / "hyp.de"),
            str(EXAMPLES / "hyp2.de"),
            "--segment-scores",
            "COMET=" + ",".join(seg),
            "--example-metric",
            "comet",
            "--top",
            "2",
            "-f",
            "json",
        ]
    )
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    values = [[float(v) for v in Path(p).read_text().split()] for p in seg]
    rows = table(document, "bands-COMET")["rows"]
    assert rows[0][0] == "0-0.1" and rows[-1][0] == "0.9-1"
    for k in range(2):
        counts = [0] * 10
        for v in values[k]:
            counts[min(int(v * 10), 9)] += 1
        assert [row[1 + k] for row in rows] == counts
    best = max(range(len(values[0])), key=lambda i: (values[0][i] - values[1][i], -i))
    assert document["examples"][0]["metric"] == "COMET"
    assert document["examples"][0]["better_baseline"][0]["line"] == best + 1


def test_text_examples_fit_a_terminal(tmp_path) -> None:
    """Example texts wrap inside their cell: a 1,000-character output line does not make a
    1,000-character line of text output."""
    lines = (EXAMPLES / "hyp.de").read_text(encoding="utf-8").splitlines()
    lines[3] = " ".join([lines[3]] * 20)
    long = tmp_path / "long.de"
    long.write_text("\n".join(lines) + "\n", encoding="utf-8")
    base = tmp_path / "hyp.de"
    base.write_bytes((EXAMPLES / "hyp.de").read_bytes())
    result = run_cli(
        ["analyze", str(EXAMPLES / "ref.de"), "-i", str(base), str(long), "-f", "text"]
    )
    assert result.exit_code == 0, result.stderr
    examples = result.stdout[result.stdout.index("Lines where") :]
    assert max(len(line) for line in examples.splitlines()) <= 110
    assert "long: Wir gingen den Fluss entlang" in examples


def test_the_html_report_navigates_to_every_part(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    import re

    page = tmp_path / "report.html"
    result = run_cli(["analyze", REF, "-i", str(EXAMPLES / "hyp.de"), str(EXAMPLES / "hyp2.de"),
                      "--source", str(EXAMPLES / "src.en"), "--html", str(page)])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    text = page.read_text(encoding="utf-8")
    nav = re.search(r"<nav>(.*?)</nav>", text, re.S).group(1)
    targets = re.findall(r'href="#([^"]+)"', nav)
    assert "figures" in targets and "examples-0" in targets
    for target in targets:
        assert f'id="{target}"' in text, target
    for caption in re.findall(r"<figcaption>(.*?)</figcaption>", text):
        svg = text[: text.index(f"<figcaption>{caption}</figcaption>")].rsplit("<svg", 1)[1]
        assert caption not in svg  # the caption is the title; the figure does not repeat it
    words = text[text.index('id="words"') :].split("</table>")[0]
    assert '<td class="text">0</td>' not in words  # frequencies from the references: none unseen
