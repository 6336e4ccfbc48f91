"""What a researcher and a CI maintainer tripped on in their first hour (#50), each as it
was found: one meaning per flag in every command (old spellings kept, with a warning), help
that shows what a command takes, a named system keeping its name, advice that points to
the right option, per-metric decimals, paper tables that render, and results in the order
``-m`` named them."""

from __future__ import annotations

import json

import pytest

from tests.conftest import EXAMPLES, run_cli

REF, REF2, HYP, HYP2, SRC = (
    str(EXAMPLES / n) for n in ("ref.de", "ref2.de", "hyp.de", "hyp2.de", "src.en")
)
DEPRECATED = "is deprecated and will be removed: use"


def test_threads_is_jobs_everywhere_with_a_warning() -> None:
    """``-j`` is the parallel workers of every command; ``--threads`` (mbr, meta-eval)
    still works, warns, and is accepted by the scoring command too (which suggested
    ``--chrf-beta, --paired-bs`` for it)."""
    for args in (
        [REF, "-i", HYP, "-m", "bleu"],
        ["mbr", "-i", HYP, HYP2, REF2],
    ):
        new = run_cli([*args, "-j", "2"])
        old = run_cli([*args, "--threads", "2"])
        assert new.exit_code == old.exit_code == 0, old.stderr
        assert new.stdout == old.stdout
        assert f"--threads {DEPRECATED} -j/--jobs" in old.stderr
        assert DEPRECATED not in new.stderr


def test_analyze_takes_source_as_every_command_does() -> None:
    """``-s`` is ``--smooth-method`` in the scoring command and mbr; analyze's ``-s`` (its
    source) still works, with a warning naming ``--source``."""
    common = ["analyze", REF, "-i", HYP, HYP2, "--top", "2", "-f", "json"]
    new = run_cli([*common, "--source", SRC])
    old = run_cli([*common, "-s", SRC])
    assert new.exit_code == old.exit_code == 0, old.stderr
    assert json.loads(new.stdout) == json.loads(old.stdout)
    assert "analyze -s is deprecated" in old.stderr and "--source" in old.stderr


def test_gate_takes_references_inputs_and_models_as_the_scoring_command(write) -> None:
    """The statistical gate: references after CURRENT.json, ``-i`` for the current output,
    ``--comet-model`` for a model; ``--refs``, ``--output`` and ``--model`` still work."""
    base = write("base.json", [run_cli([REF, "-i", HYP, "-m", "bleu"]).stdout])
    current = write("current.json", [run_cli([REF, "-i", HYP2, "-m", "bleu"]).stdout])
    common = ["gate", current, "--baseline", base, "--baseline-output", HYP, "-f", "json"]
    new = run_cli([*common[:2], REF, *common[2:], "-i", HYP2])
    old = run_cli([*common, "--output", HYP2, "--refs", REF])
    assert new.exit_code == old.exit_code == 3, (new.stderr, old.stderr)
    assert json.loads(new.stdout) == json.loads(old.stdout)
    assert "gate --output is deprecated" in old.stderr and "gate --refs is deprecated" in old.stderr
    assert DEPRECATED not in new.stderr


def test_help_shows_what_a_command_takes_common_options_first() -> None:
    main = run_cli(["--help"]).stdout
    assert "metricx24" in main.split("-t, --test-set")[0]  # -m names every metric
    analyze = run_cli(["analyze", "--help"]).stdout
    assert analyze.index("-i, --input") < analyze.index("--comet-model")
    mbr = run_cli(["mbr", "--help"]).stdout
    assert "--comet-model" in mbr and "--xcomet-model" in mbr
    assert "--cometkiwi-" not in mbr and "--metricx24-qe-" not in mbr  # its -m refuses them


def test_a_named_system_keeps_its_name_in_json() -> None:
    named = json.loads(run_cli([REF, "-i", f"JD={HYP}", "-m", "bleu", "chrf"]).stdout)
    assert [entry["system"] for entry in named] == ["JD", "JD"]
    unnamed = json.loads(run_cli([REF, "-i", HYP, "-m", "bleu"]).stdout)
    assert "system" not in unnamed  # SacreBLEU's own JSON for an unnamed file


def test_advice_points_to_the_option_that_helps() -> None:
    several = run_cli([REF, "-i", HYP, HYP2, "-ci"])
    assert several.exit_code == 1 and "--rank" in several.stderr


def test_ter_on_chinese_says_how_to_split_its_characters(tmp_path) -> None:
    ref, hyp = tmp_path / "r.zh", tmp_path / "h.zh"
    ref.write_text("今天天气很好\n我们去公园\n", encoding="utf-8")
    hyp.write_text("今天天气好\n我们去公园吧\n", encoding="utf-8")
    plain = run_cli([str(ref), "-i", str(hyp), "-m", "ter", "-l", "en-zh", "-b"])
    assert plain.exit_code == 0 and float(plain.stdout) == 100.0
    assert "--ter-normalized --ter-asian-support" in plain.stderr
    split = run_cli([str(ref), "-i", str(hyp), "-m", "ter", "-l", "en-zh", "-b",
                     "--ter-normalized", "--ter-asian-support"])  # fmt: skip
    assert float(split.stdout) < 50 and "--ter-asian-support" not in split.stderr


def test_results_come_in_the_order_m_names_them() -> None:
    """SacreBLEU's own metrics alone keep its order (sorted by name); with another metric
    the order is the user's (``-m bleu chrf ter comet`` printed BLEU, chrF2, COMET, TER)."""
    from bleucli.metrics import output_order

    assert [k for k, _ in output_order(dict.fromkeys(["ter", "bleu"]))] == ["bleu", "ter"]
    mixed = dict.fromkeys(["bleu", "chrf", "ter", "comet"])
    assert [k for k, _ in output_order(mixed)] == ["bleu", "chrf", "ter", "comet"]
    seg = f"COMET={EXAMPLES / 'hyp.seg'}"
    result = run_cli([REF, "-i", HYP, "-m", "ter", "bleu", "--segment-scores", seg])
    assert [entry["name"] for entry in json.loads(result.stdout)] == ["TER", "BLEU", "COMET"]
    sacre = run_cli([REF, "-i", HYP, "-m", "ter", "bleu"])
    assert [entry["name"] for entry in json.loads(sacre.stdout)] == ["BLEU", "TER"]


def test_each_metric_has_its_decimals_in_tables(write) -> None:
    """With segment scores in the run, BLEU/chrF/TER keep one decimal (they were printed
    with four) and ``-w 1`` no longer rounds the 0-1 scores to one decimal."""
    segs = f"COMET={EXAMPLES / 'hyp.seg'},{EXAMPLES / 'hyp2.seg'}"
    for extra in ([], ["-w", "1"]):
        paired = run_cli([REF, "-i", HYP, HYP2, "-m", "bleu", "--segment-scores", segs,
                          "--paired-bs", "-pbsn", "50", "-f", "json", "--json-layout",
                          "bleucli", *extra])  # fmt: skip
        rows = json.loads(paired.stdout)["systems"]
        assert rows[0]["BLEU"]["score"] == round(rows[0]["BLEU"]["score"], 1)
        comet = rows[0]["COMET"]["score"]
        assert comet == round(comet, 4) and comet != round(comet, 1)
    four = run_cli([REF, "-i", HYP, HYP2, "-m", "bleu", "--segment-scores", segs,
                    "--rank", "-pbsn", "50", "-f", "text", "-w", "COMET=2"])  # fmt: skip
    assert four.exit_code == 0, four.stderr
    import re

    panel = four.stdout.split("COMET (higher is better)")[1].split("Ranked by")[0]
    numbers = re.findall(r"\d+\.\d+", panel)
    assert numbers and all(len(n.split(".")[1]) == 2 for n in numbers), numbers


def test_markdown_legend_is_prose_not_a_list_item() -> None:
    markdown = run_cli([REF, "-i", HYP, HYP2, "--paired-bs", "-pbsn", "50", "-f", "markdown"])
    assert "\n\\* p <= 0.05:" in markdown.stdout
    assert "|:--" in markdown.stdout and "--:|" in markdown.stdout


@pytest.fixture
def write(tmp_path):
    def _write(name: str, lines: list[str]) -> str:
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(path)

    return _write
