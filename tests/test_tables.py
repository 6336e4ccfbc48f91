"""Tables paste into papers: LaTeX compiles, Markdown and HTML keep the signatures inside the
document's syntax, and every table another command writes, ``report`` reads back."""

from __future__ import annotations

import html.parser
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli

HYP, REF, REF2 = (str(EXAMPLES / n) for n in ("hyp.de", "ref.de", "ref2.de"))
SYSTEMS = ["-i", f"base_μ&_%:{HYP}", f"other#2:{REF2}"]  # names with LaTeX specials


def tables(fmt: str) -> dict[str, str]:
    """Every table kind bleucli prints, in ``fmt``."""
    out = {
        "multi": run_cli([REF, *SYSTEMS, "-m", "bleu", "chrf", "-f", fmt]),
        "paired": run_cli(
            [REF, *SYSTEMS, "-m", "bleu", "chrf", "--paired-bs", "-pbsn", "50", "-f", fmt]
        ),
        "paired-ar": run_cli([REF, *SYSTEMS, "--paired-ar", "-parn", "50", "-f", fmt]),
        "rank": run_cli(
            [
                REF,
                *SYSTEMS,
                "-m",
                "bleu",
                "ter",
                "--rank",
                "-pbsn",
                "50",
                "--segment-scores",
                f"COMET={EXAMPLES / 'hyp.seg'},{EXAMPLES / 'hyp2.seg'}",
                "-f",
                fmt,
            ]
        ),
        "documents": run_cli([REF, *SYSTEMS, "--docids", str(EXAMPLES / "docids.txt"), "-f", fmt]),
    }
    for name, result in out.items():
        assert result.exit_code == 0, (name, result.stderr)
    return {name: result.stdout for name, result in out.items()}


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_tables_compile(tmp_path) -> None:
    """pdflatex with nothing but booktabs compiles every LaTeX table as printed: signatures
    in a note the PDF shows, μ/± as math symbols, and names with & % _ # escaped."""
    results = tmp_path / "r.json"
    results.write_text(run_cli([REF, "-i", HYP, "-m", "bleu", "chrf"]).stdout)
    report = run_cli(["report", f"sys_1&%:{results}", "-f", "latex"])
    assert report.exit_code == 0
    analysis = run_cli(
        [
            "analyze",
            REF,
            "-i",
            f"base_1&%:{HYP}",
            f"o#2:{REF2}",
            "--source",
            str(EXAMPLES / "src.en"),
            "--top",
            "2",
            "-f",
            "latex",
        ]
    )
    assert analysis.exit_code == 0, analysis.stderr
    bodies = [*tables("latex").values(), report.stdout, analysis.stdout]
    for body in bodies:
        assert "\\texttt{" in body and "\\toprule" in body
    document = "\n".join(
        [
            "\\documentclass{article}",
            "\\usepackage[utf8]{inputenc}",
            "\\usepackage{booktabs}",
            "\\begin{document}",
            *[f"{body}\n\n" for body in bodies],
            "\\end{document}",
        ]
    )
    (tmp_path / "t.tex").write_text(document, encoding="utf-8")
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_latex_tables_show_their_legend_and_signatures_in_the_pdf() -> None:
    """The legend and the signatures are a note under the tabular (small type, signatures
    in typewriter), not % comments the PDF never shows."""
    paired = tables("latex")["paired"]
    assert "$\\mu$" in paired and "$\\pm$" in paired and "μ" not in paired
    assert "base\\_μ" not in paired and "base\\_$\\mu$\\&\\_\\%" in paired
    signature_lines = [line for line in paired.splitlines() if "nrefs:" in line]
    assert signature_lines and not any(line.startswith("%") for line in signature_lines)
    assert all("\\texttt{nrefs:1|\\allowbreak{}" in line for line in signature_lines)
    assert "* p $\\le$ 0.05: the difference to the baseline" in paired
    assert "{\\footnotesize" in paired and not any(
        line.startswith("%") for line in paired.splitlines()
    )


def test_latex_tables_do_not_depend_on_the_optional_wcwidth(monkeypatch) -> None:
    """tabulate measures cells with wcwidth when it is installed (it measures control
    characters -1): the table must be the same bytes either way, right edges aligned."""
    import unicodedata

    import tabulate

    from bleucli.formats import table

    rows = [["hyp", "59.9 (59.4 ± 10.3)"], ["ref2", "32.8 (32.3 ± 11.7)"]]
    headers = ["System", "BLEU (μ ± 95% CI)"]

    class FakeWcwidth:  # wcwidth's rule: any control character makes the string -1
        @staticmethod
        def wcswidth(text: str) -> int:
            if any(unicodedata.category(c) == "Cc" for c in text):
                return -1
            return len(text)

    plain = table(rows, headers, "latex", kinds=["text", "number"])
    monkeypatch.setattr(tabulate, "wcwidth", FakeWcwidth)
    monkeypatch.setattr(tabulate, "WIDE_CHARS_MODE", True)
    assert table(rows, headers, "latex", kinds=["text", "number"]) == plain
    data = plain.split("\\midrule")[1].splitlines()
    assert len({len(line) for line in data if line.endswith("\\\\")}) == 1, plain


def test_markdown_keeps_signatures_in_markdown() -> None:
    for name, body in tables("markdown").items():
        lines = body.splitlines()
        assert lines[0].startswith("|") or (name == "rank" and lines[0].startswith("**")), name
        assert any(line.startswith("|--") or line.startswith("|:-") for line in lines), name
        signature_lines = [line for line in lines if "nrefs:" in line]
        assert signature_lines and all(
            line.startswith("- ") and "`nrefs:" in line for line in signature_lines
        ), name
        assert "-----------------" not in lines  # the text legend's rule lines


class _Collector(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)

    def handle_data(self, data) -> None:
        if data.strip():
            self.text.append(data.strip())


def test_html_is_escaped_and_signatures_are_elements() -> None:
    for name, body in tables("html").items():
        assert "&amp;" in body and "<ul>" in body, name
        parser = _Collector()
        parser.feed(body)
        assert "table" in parser.tags and "li" in parser.tags
        assert any(text.startswith("BLEU: nrefs:") for text in parser.text), name
        assert any("base_μ&_%" in text for text in parser.text), name


def test_tsv_signatures_are_comments() -> None:
    body = tables("tsv")["multi"]
    rows = body.splitlines()
    assert rows[0].split("\t")[0].strip() == "System"
    assert all(row.startswith("#") for row in rows if "nrefs:" in row)


@pytest.mark.parametrize("kind", ["multi", "paired"])
def test_report_reads_what_other_commands_write(kind, tmp_path) -> None:
    """Multi-system and paired JSON (bleucli's), and SacreBLEU's list layout, feed report."""
    body = tables("json")[kind]
    path = tmp_path / f"{kind}.json"
    path.write_text(body, encoding="utf-8")
    result = run_cli(["report", str(path), "-f", "json", "-w", "1"])
    assert result.exit_code == 0, result.stderr
    systems = {
        s["system"]: {x["metric"]: x["score"] for x in s["scores"]}
        for s in json.loads(result.stdout)["systems"]
    }
    assert set(systems) == {f"{kind}: base_μ&_%", f"{kind}: other#2"}
    single = json.loads(run_cli([REF, "-i", REF2, "-m", "bleu", "-w", "1"]).stdout)
    assert systems[f"{kind}: other#2"]["BLEU"] == pytest.approx(single["score"], abs=0.051)


def test_report_reads_sacrebleu_paired_layout_and_its_own_json(tmp_path) -> None:
    sacrebleu_layout = [
        {
            "system": "Baseline: a",
            "BLEU": {"score": 30.5, "p_value": None, "mean": 30.4, "ci": 1.2},
        },
        {"system": "b", "BLEU": {"score": 31.5, "p_value": 0.04, "mean": 31.4, "ci": 1.1}},
    ]
    path = tmp_path / "sb.json"
    path.write_text(json.dumps(sacrebleu_layout))
    first = run_cli(["report", str(path), "-f", "json"])
    assert first.exit_code == 0, first.stderr
    again = tmp_path / "again.json"
    again.write_text(first.stdout)
    second = run_cli(["report", f"r:{again}", "-f", "json"])
    assert second.exit_code == 0, second.stderr
    scores = [(s["system"], s["scores"][0]["score"]) for s in json.loads(second.stdout)["systems"]]
    assert scores == [("r: sb: a", 30.5), ("r: sb: b", 31.5)]


def test_report_ignores_the_version_field(tmp_path) -> None:
    record = json.loads(run_cli([REF, "-i", HYP]).stdout)
    older = {
        **record,
        "signature": record["signature"].replace(record["version"], "2.4.0"),
        "version": "2.4.0",
    }
    paths = []
    for name, data in (("new", record), ("old", older)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data))
        paths.append(str(path))
    result = run_cli(["report", *paths])
    assert result.exit_code == 0 and result.stderr == ""
    assert "not comparable" not in result.stdout.lower()
    changed = {**record, "signature": record["signature"].replace("tok:13a", "tok:intl")}
    Path(paths[1]).write_text(json.dumps(changed))
    mixed = run_cli(["report", *paths])
    assert "not comparable" in mixed.stderr and "Not comparable: BLEU" in mixed.stdout


def test_single_system_json_round_trips_through_the_result_schema(tmp_path) -> None:
    """What the scoring command writes (several metrics, confidence intervals) is read back
    by the schema every reader uses, with the scores and signatures it printed."""
    import bleucli
    from bleucli.results import load_results

    written = run_cli([REF, "-i", HYP, "-m", "bleu", "chrf", "ter", "-w", "4", "-ci", "-cin", "20"])
    path = tmp_path / "r.json"
    path.write_text(written.stdout)
    records = load_results(str(path))
    hyp = Path(HYP).read_text(encoding="utf-8").splitlines()
    ref = Path(REF).read_text(encoding="utf-8").splitlines()
    expected = {"BLEU": bleucli.BLEU(), "chrF2": bleucli.CHRF(), "TER": bleucli.TER()}
    assert [r.metric for r in records] == list(expected)
    for record in records:
        score = expected[record.metric].corpus_score(hyp, [ref]).score
        assert record.score == round(score, 4)
        assert record.signature.startswith("nrefs:1|bs:20|seed:12345|")
        assert record.mean is not None and record.ci is not None and record.ci > 0
        assert record.system == "" and record.test == ""


def test_docs_worked_example_runs_and_its_latex_compiles(tmp_path) -> None:
    """The segment-scores example of docs/significance.md, command by command, from the
    repository root; its LaTeX compiles."""
    import re
    import shlex

    from tests.conftest import ROOT, run_subprocess

    text = (ROOT / "docs" / "significance.md").read_text(encoding="utf-8")
    section = text[text.index("## External segment metrics") :]
    block = section[
        section.index("```bash") + 7 : section.index("```", section.index("```bash") + 7)
    ]
    commands = [
        line
        for line in re.sub(r"\\\n\s*", " ", block).splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert len(commands) == 2
    for command in commands:
        argv = shlex.split(command.split(">")[0])
        assert argv[0] == "bleucli"
        proc = run_subprocess(argv[1:], cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        output = proc.stdout.decode()
    assert "corr:holm" in output and "\\toprule" in output
    if shutil.which("pdflatex"):
        (tmp_path / "r.tex").write_text(
            "\\documentclass{article}\\usepackage{booktabs}"
            "\\begin{document}\n" + output + "\n\\end{document}\n",
            encoding="utf-8",
        )
        done = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "r.tex"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-2000:]
