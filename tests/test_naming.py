"""One way to name a system in every command that takes systems: ``NAME=FILE`` and
``NAME:FILE`` both name one, and a path that exists is read as a path even when it holds
``=`` and ``:`` (docs/cli.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bleucli.io import split_named
from tests.conftest import EXAMPLES, run_cli

REF = str(EXAMPLES / "ref.de")
HYP = str(EXAMPLES / "hyp.de")
HYP2 = str(EXAMPLES / "hyp2.de")


@pytest.fixture
def odd(tmp_path: Path) -> str:
    """An output whose path holds both separators: ``runs/a=b:c.de``."""
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / "a=b:c.de"
    shutil.copy(HYP2, path)
    return str(path)


def test_the_rule(tmp_path: Path, odd: str) -> None:
    assert split_named(f"base={HYP}") == ("base", HYP)
    assert split_named(f"base:{HYP}") == ("base", HYP)
    assert split_named(HYP) == (None, HYP)
    assert split_named(odd) == (None, odd)  # it exists: a path
    assert split_named(f"x={odd}") == ("x", odd)
    assert split_named(f"x:{odd}") == ("x", odd)
    assert split_named("new=missing.de") == ("new", "missing.de")  # the error names missing.de
    assert split_named(str(tmp_path / "missing=file.de")) == (
        None,
        str(tmp_path / "missing=file.de"),
    )


def _specs(odd: str) -> list[list[str]]:
    """The three ways in: NAME=FILE, NAME:FILE, and the odd path as it is."""
    return [[f"base={HYP}", f"new={odd}"], [f"base:{HYP}", f"new:{odd}"], [HYP, odd]]


def test_scoring_names_systems_both_ways(odd: str) -> None:
    for specs in _specs(odd)[:2]:
        result = run_cli([REF, "-i", *specs, "-f", "json"])
        assert result.exit_code == 0, result.stderr
        assert [entry["system"] for entry in json.loads(result.stdout)] == ["base", "new"]
    plain = run_cli([REF, "-i", HYP, odd, "-f", "json"])
    assert plain.exit_code == 0 and json.loads(plain.stdout)[1]["system"] == odd
    missing = run_cli([REF, "-i", "new=nowhere.de"])
    assert (
        missing.exit_code == 1 and "nowhere.de" in missing.stderr and "new=" not in missing.stderr
    )


def test_analyze_plot_and_rank_name_systems_both_ways(tmp_path: Path, odd: str) -> None:
    for k, specs in enumerate(_specs(odd)[:2]):
        analysis = run_cli(["analyze", REF, "-i", *specs, "-f", "json"])
        assert analysis.exit_code == 0, analysis.stderr
        assert json.loads(analysis.stdout)["systems"] == ["base", "new"]
        table = run_cli([REF, "-i", *specs, "--rank", "-f", "markdown"])
        assert "| base " in table.stdout and "| new " in table.stdout
        pytest.importorskip("matplotlib")
        figure = tmp_path / f"scores{k}.svg"
        plotted = run_cli(["plot", "scores", REF, "-i", *specs, "-o", str(figure)])
        assert plotted.exit_code == 0, plotted.stderr
        assert ">base<" in figure.read_text() or "base" in figure.read_text()


def test_report_mbr_and_meta_eval_name_systems_both_ways(tmp_path: Path, odd: str) -> None:
    first, second = tmp_path / "first.json", tmp_path / "odd=name:x.json"
    first.write_text(run_cli([REF, "-i", HYP]).stdout)
    second.write_text(run_cli([REF, "-i", HYP2]).stdout)
    for sep in ("=", ":"):
        report = run_cli(["report", f"base{sep}{first}", f"new{sep}{second}", "-f", "tsv"])
        assert report.exit_code == 0, report.stderr
        rows = [line for line in report.stdout.splitlines()[1:] if not line.startswith("#")]
        assert [line.split("\t")[0].strip() for line in rows] == ["base", "new"]
        chosen = run_cli(["mbr", "-i", f"base{sep}{HYP}", f"new{sep}{odd}", "-f", "json"])
        assert chosen.exit_code == 0, chosen.stderr
        assert {c["system"] for c in json.loads(chosen.stdout)["choices"]} <= {"base", "new"}
    as_path = run_cli(["report", str(first), str(second), "-f", "tsv"])
    assert as_path.exit_code == 0 and "odd=name:x" in as_path.stdout
    human = tmp_path / "human.tsv"
    human.write_text(
        "".join(
            f"{system}\t{line}\t{score}\n"
            for system, base in (("base", 0.1), ("new", -0.2))
            for line, score in ((k + 1, base + (k % 5) / 10) for k in range(30))
        )  # fmt: skip
    )
    for sep in ("=", ":"):
        table = run_cli(["meta-eval", REF, "-i", f"base{sep}{HYP}", f"new{sep}{odd}", "--human", str(human),
                         "--stat", "sys-accuracy", "-f", "json"])  # fmt: skip
        assert table.exit_code == 0, table.stderr
        assert json.loads(table.stdout)["systems"] == ["base", "new"]


@pytest.mark.parametrize("fmt", ["html", "latex", "markdown"])
@pytest.mark.parametrize("test", ["--rank", "--paired-bs"])
def test_paper_tables_use_display_names_and_list_the_files_once(
    tmp_path: Path, fmt: str, test: str
) -> None:
    folder = (
        tmp_path
        / "experiments"
        / "2026-12-wmt22-final-submission-analysis"
        / "outputs"
        / "uk-en"
        / "runs"
    )
    folder.mkdir(parents=True)
    paths = []
    for name, source in (("Online-A", HYP), ("Lan-Bridge", HYP2), ("JDExploreAcademy", REF)):
        path = folder / f"uk-en_newstest2022_sys.{name}.de"
        shutil.copy(source, path)
        paths.append(str(path))
    result = run_cli([REF, "-i", *paths, test, "-m", "bleu", "-f", fmt, "-pbsn", "100"])
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    for path, short in zip(paths, ("Online-A", "Lan-Bridge", "JDExploreAcademy")):
        escaped = path.replace("_", "\\_") if fmt == "latex" else path
        assert text.count(escaped) + text.count(path) >= 1  # listed under the table ...
        shown = escaped if fmt == "latex" else path
        assert text.count(shown.rsplit("/", 1)[0]) == 3  # ... once per file, never in a row
        assert short in text
    rows = [line for line in text.splitlines() if "Online-A" in line and "runs/" not in line]
    assert rows  # a table row carries the short name
    # text and JSON keep SacreBLEU's naming: the path as given
    plain = run_cli([REF, "-i", *paths, test, "-m", "bleu", "-f", "text", "-pbsn", "100"])
    assert paths[0] in plain.stdout
