"""The command line: SacreBLEU-compatible output, options, errors and exit codes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import sacrebleu

import bleucli
from bleucli.cli.main import command as main_command
from bleucli.cli.options import expand_variadic, variadic_flags
from tests.conftest import EXAMPLES, run_cli, run_subprocess

REF, REF2, HYP = str(EXAMPLES / "ref.de"), str(EXAMPLES / "ref2.de"), str(EXAMPLES / "hyp.de")


def lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def sacrebleu_score(hyp: str, *refs: str, **kwargs) -> sacrebleu.BLEUScore:
    return sacrebleu.BLEU(**kwargs).corpus_score(lines(hyp), [lines(r) for r in refs])


def test_json_output_has_sacrebleus_keys_and_score() -> None:
    result = run_cli([REF, "-i", HYP])
    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)
    assert set(record) == {
        "name",
        "score",
        "signature",
        "verbose_score",
        "nrefs",
        "case",
        "eff",
        "tok",
        "smooth",
        "version",
    }
    assert record["score"] == round(sacrebleu_score(HYP, REF).score, 1)
    assert record["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|")


def test_text_output_width_and_short_signature() -> None:
    result = run_cli([REF, REF2, "-i", HYP, "-f", "text", "-w", "3", "--short"])
    expected = sacrebleu_score(HYP, REF, REF2)
    assert result.stdout.startswith("BLEU|#:2|c:mixed|e:no|tok:13a|s:exp|v:bleucli-")
    assert f"= {expected.score:.3f} " in result.stdout


def test_score_only_and_stdin() -> None:
    result = run_cli([REF, "-b", "-w", "4"], input=Path(HYP).read_text(encoding="utf-8"))
    assert result.stdout.strip() == f"{sacrebleu_score(HYP, REF).score:.4f}"


@pytest.mark.parametrize(
    ("flags", "kwargs"),
    [
        (["-tok", "intl"], {"tokenize": "intl"}),
        (["-lc"], {"lowercase": True}),
        (["-s", "floor", "-sv", "0.2"], {"smooth_method": "floor", "smooth_value": 0.2}),
        (["-s", "add-k"], {"smooth_method": "add-k"}),
        (["-s", "none"], {"smooth_method": "none"}),
        (["-l", "en-zh"], {"tokenize": "zh"}),
    ],
)
def test_options_reach_the_metric(flags: list[str], kwargs: dict) -> None:
    result = run_cli([REF, "-i", HYP, "-b", "-w", "6", *flags])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == f"{sacrebleu_score(HYP, REF, **kwargs).score:.6f}"


def test_num_refs_splits_tab_separated_references(write) -> None:
    refs = [f"{a}\t{b}" for a, b in zip(lines(REF), lines(REF2))]
    tsv = write("refs.tsv", refs)
    result = run_cli([tsv, "-nr", "2", "-i", HYP, "-b", "-w", "6"])
    assert result.stdout.strip() == f"{sacrebleu_score(HYP, REF, REF2).score:.6f}"
    bad = write("bad.tsv", ["only one"] + refs[1:])
    result = run_cli([bad, "-nr", "2", "-i", HYP])
    assert result.exit_code == 1
    assert "bad.tsv: line 1: expected 2 tab-separated references, found 1" in result.stderr


def test_sentence_level_lines_match_sacrebleu() -> None:
    result = run_cli([REF, "-i", HYP, "-sl", "-w", "4"])
    out_lines = result.stdout.strip().split("\n")
    hyps = lines(HYP)
    refs = lines(REF)
    assert len(out_lines) == len(hyps)
    metric = sacrebleu.BLEU(effective_order=True)
    for line, hyp, ref in zip(out_lines, hyps, refs):
        expected = metric.sentence_score(hyp, [ref])
        assert line.split(" = ", 1)[1] == expected.format(width=4).split(" = ", 1)[1]
        assert "|eff:yes|" in line


def test_several_systems_make_a_table(write) -> None:
    other = write("other.de", Path(REF).read_text(encoding="utf-8"))
    result = run_cli([REF, "-i", HYP, other, "-f", "json"])
    rows = json.loads(result.stdout)
    assert [r["system"] for r in rows] == [HYP, other]
    assert rows[1]["BLEU"] == "100.0"
    text = run_cli([REF, "-i", HYP, other, "-f", "text"]).stdout
    assert "Metric signatures" in text and "100.0" in text


def test_tab_separated_stdin_is_several_systems() -> None:
    hyps = lines(HYP)
    refs = lines(REF)
    stdin = "".join(f"{h}\t{r}\n" for h, r in zip(hyps, refs))
    rows = json.loads(run_cli([REF], input=stdin).stdout)
    assert [r["system"] for r in rows] == ["System 1", "System 2"]


def test_from_signature_reproduces_options() -> None:
    sig = "BLEU|nrefs:1|case:lc|eff:no|tok:intl|smooth:floor[0.20]|version:2.0.0"
    result = run_cli([REF, "-i", HYP, "--from-signature", sig, "-f", "text", "-w", "6"])
    assert result.exit_code == 0, result.stderr
    expected = sacrebleu_score(
        HYP, REF, lowercase=True, tokenize="intl", smooth_method="floor", smooth_value=0.2
    )
    assert result.stdout.startswith(
        "BLEU|nrefs:1|case:lc|eff:no|tok:intl|smooth:floor[0.20]|version:bleucli-"
    )
    assert f"= {expected.score:.6f} " in result.stdout


@pytest.mark.parametrize(
    ("sig", "extra", "message", "code"),
    [
        ("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp", [], "says nrefs:2 but 1 reference", 1),
        (
            "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp",
            ["-tok", "intl"],
            "--tokenize conflicts with --from-signature",
            1,
        ),
        ("nrefs:1|ar:1000|case:mixed|tok:13a", [], "ar:1000 needs approximate randomisation", 1),
        # a malformed signature is a usage error, like a malformed option
        ("nrefs:1|colour:blue", [], "unknown signature field 'colour'", 2),
        ("nrefs:1|smooth:exp-.", [], "'.' is not a number", 2),
        ("nrefs:1|bs:abc", [], "bs:abc is not a number", 2),
        (
            "chrF2|nrefs:1|nc:100000000",
            [],
            "--from-signature: nc:100000000 (-cc/--chrf-char-order) must be",
            2,
        ),
    ],
)
def test_from_signature_refuses_what_it_cannot_honour(sig, extra, message, code) -> None:
    result = run_cli([REF, "-i", HYP, "--from-signature", sig, *extra])
    assert result.exit_code == code
    assert message in result.stderr


@pytest.mark.parametrize(
    ("make_args", "message", "code"),
    [
        (
            lambda w: [w("r.txt", ["a", "b"]), "-i", w("h.txt", ["a"])],
            "line counts differ: {tmp}/h.txt has 1 lines, {tmp}/r.txt has 2",
            1,
        ),
        (
            lambda w: [w("r.txt", ["a"]), "-i", w("h.txt", b"ok\nbad \xff\n")],
            "{tmp}/h.txt: line 2: invalid utf-8",
            1,
        ),
        (lambda w: [w("r.txt", ["a"]), "-i", w("h.txt", "")], "{tmp}/h.txt: empty file", 1),
        (
            lambda w: [w("r.txt", ["a"]), "-i", "/nonexistent/h.txt"],
            "/nonexistent/h.txt: no such file",
            1,
        ),
        (
            lambda w: [w("r.txt", ["a"]), "-i", w("h.txt", ["a"]), "-tok", "nope"],
            "unknown tokenizer 'nope'",
            2,
        ),
        (
            lambda w: [w("r.txt", ["a"]), "-i", w("h.txt", ["a"]), "-s", "nope"],
            "unknown smoothing method 'nope'",
            2,
        ),
        (
            lambda w: [w("r.txt", ["a"]), "-i", w("h.txt", ["a"]), "-m", "meteor"],
            "unknown metric 'meteor'",
            2,
        ),
        (lambda w: ["-i", w("h.txt", ["a"])], "no references", 1),
        (
            lambda w: [w("r.txt", ["a"]), "-i", w("h.txt", ["a"]), "-e", "klingon"],
            "unknown encoding 'klingon'",
            2,
        ),
    ],
)
def test_bad_input_is_one_line_exit_1(write, tmp_path, make_args, message, code) -> None:
    result = run_cli(make_args(write))
    assert result.exit_code == code
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("bleucli: error: ")
    assert message.format(tmp=tmp_path) in result.stderr
    assert "Traceback" not in result.stderr


def test_usage_errors_exit_2() -> None:
    assert run_cli([REF, "-i", HYP, "--no-such-flag"]).exit_code == 2
    assert run_cli([REF, "-i", HYP, "-w", "wide"]).exit_code == 2


def test_crlf_missing_newline_and_gzip_match_plain(write) -> None:
    plain = Path(HYP).read_text(encoding="utf-8")
    crlf = write("crlf.de", plain.replace("\n", "\r\n").rstrip("\r\n"))
    gz = write("hyp.de.gz", gzip.compress(plain.encode()))
    scores = {run_cli([REF, "-i", path, "-b", "-w", "6"]).stdout for path in (HYP, crlf, gz)}
    assert len(scores) == 1


def test_version_and_help() -> None:
    from bleucli import __version__
    from bleucli.native import ENGINE

    assert run_cli(["-V"]).stdout.strip() == f"bleucli {__version__} ({ENGINE} engine)"
    help_text = run_cli(["--help"]).stdout
    assert "--smooth-method" in help_text and "Exit codes" in help_text


def test_expand_variadic() -> None:
    flags = variadic_flags(main_command)
    assert {"-i", "--input", "-m", "--metrics", "--echo"} <= flags and "-w" not in flags
    assert expand_variadic(["r", "-i", "a", "b", "-m", "bleu", "chrf", "-w", "2"], flags) == [
        "r",
        "-i",
        "a",
        "-i",
        "b",
        "-m",
        "bleu",
        "-m",
        "chrf",
        "-w",
        "2",
    ]
    assert expand_variadic(["-i", "-", "--", "x"], flags) == ["-i", "-", "--", "x"]


def test_each_command_declares_its_own_variadic_flags() -> None:
    """``-i`` takes several files in the scoring command, analyze and meta-eval, one in
    the gate (whose references follow it): each command's options say so."""
    from bleucli.cli.gate import gate_command
    from bleucli.cli.metaeval import meta_eval_command

    assert "-i" not in variadic_flags(gate_command)
    assert {"-i", "-m", "--stat"} <= variadic_flags(meta_eval_command)


# -- real processes: stdin pipes, exit codes, stream separation --------------------------------


def test_subprocess_stdin_pipe_json() -> None:
    with open(HYP, "rb") as handle:
        proc = run_subprocess([REF], input=handle.read())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["name"] == "BLEU"


def test_subprocess_error_exit_code_and_no_traceback(tmp_path) -> None:
    (tmp_path / "r.txt").write_text("a\nb\n")
    proc = run_subprocess([str(tmp_path / "r.txt")], input=b"a\n")
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert b"line counts differ: <stdin> has 1 lines" in proc.stderr
    assert b"Traceback" not in proc.stderr


def test_subprocess_empty_stdin_is_an_error() -> None:
    proc = run_subprocess([REF], input=b"")
    assert proc.returncode == 1
    assert b"<stdin>: empty file" in proc.stderr


def test_subprocess_usage_error_exit_2() -> None:
    proc = run_subprocess(["--bogus"])
    assert proc.returncode == 2


# -- chrF and TER on the command line ---------------------------------------------------------


def test_several_metrics_json_and_text_like_sacrebleu() -> None:
    result = run_cli([REF, "-i", HYP, "-m", "bleu", "chrf", "ter"])
    records = json.loads(result.stdout)
    assert [r["name"] for r in records] == ["BLEU", "chrF2", "TER"]
    hyps, refs = lines(HYP), [lines(REF)]
    assert records[1]["score"] == round(sacrebleu.CHRF().corpus_score(hyps, refs).score, 1)
    assert records[2]["score"] == round(sacrebleu.TER().corpus_score(hyps, refs).score, 1)
    text = run_cli([REF, "-i", HYP, "-m", "chrf", "ter", "-f", "text"]).stdout.splitlines()
    assert text[0].index(" = ") == text[1].index(" = ")  # aligned on '=' like SacreBLEU


@pytest.mark.parametrize(
    ("flags", "metric"),
    [
        (
            [
                "-m",
                "chrf",
                "-cc",
                "4",
                "-cw",
                "2",
                "--chrf-beta",
                "1",
                "--chrf-whitespace",
                "--chrf-lowercase",
                "--chrf-eps-smoothing",
            ],
            sacrebleu.CHRF(
                char_order=4,
                word_order=2,
                beta=1,
                whitespace=True,
                lowercase=True,
                eps_smoothing=True,
            ),
        ),
        (
            [
                "-m",
                "ter",
                "--ter-case-sensitive",
                "--ter-asian-support",
                "--ter-no-punct",
                "--ter-normalized",
            ],
            sacrebleu.TER(case_sensitive=True, asian_support=True, no_punct=True, normalized=True),
        ),
    ],
)
def test_chrf_and_ter_flags(flags: list[str], metric) -> None:
    result = run_cli([REF, "-i", HYP, "-f", "text", "-w", "6", *flags])
    assert result.exit_code == 0, result.stderr
    expected = metric.corpus_score(lines(HYP), [lines(REF)])
    signature = str(metric.get_signature()).rsplit("|", 1)[0]
    assert result.stdout.startswith(f"{expected.name}|{signature}|version:bleucli-")
    assert f"= {expected.score:.6f}" in result.stdout


def test_sentence_level_prints_every_metric_per_line() -> None:
    result = run_cli([REF, "-i", HYP, "-sl", "-m", "bleu", "chrf", "ter", "-b", "-w", "4"])
    rows = [line.split("\t") for line in result.stdout.strip().split("\n")]
    assert len(rows) == len(lines(HYP)) and all(len(row) == 3 for row in rows)
    hyp, ref = lines(HYP)[0], lines(REF)[0]
    assert rows[0][1] == f"{sacrebleu.CHRF().sentence_score(hyp, [ref]).score:.4f}"
    assert rows[0][2] == f"{sacrebleu.TER().sentence_score(hyp, [ref]).score:.4f}"


def test_from_signature_for_chrf_and_ter_together() -> None:
    result = run_cli(
        [
            REF,
            "-i",
            HYP,
            "-f",
            "text",
            "-w",
            "6",
            "--from-signature",
            "chrF1++|nrefs:1|case:lc|eff:yes|nc:4|nw:2|space:no|v:2",
            "--from-signature",
            "TER+tok.tercom-norm-punct-noasian-cased+version.1.5.0",
        ]
    )
    assert result.exit_code == 0, result.stderr
    out = result.stdout.splitlines()
    chrf = sacrebleu.CHRF(char_order=4, word_order=2, beta=1, lowercase=True)
    ter = sacrebleu.TER(normalized=True, case_sensitive=True)
    assert f"= {chrf.corpus_score(lines(HYP), [lines(REF)]).score:.6f}" in out[0]
    assert f"= {ter.corpus_score(lines(HYP), [lines(REF)]).score:.6f}" in out[1]
    assert "chrF1++|nrefs:1|case:lc|eff:yes|nc:4|nw:2|space:no|" in out[0]
    assert "TER|nrefs:1|case:mixed|tok:tercom|norm:yes|punct:yes|asian:no|" in out[1]


def _update_help_script():
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "update_help.py"
    spec = importlib.util.spec_from_file_location("update_help", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stored_help_is_current() -> None:
    """The start-up fast path prints stored help: it must be click's current rendering
    (run scripts/update_help.py after changing options)."""
    from bleucli.cli._help import HELP

    script = _update_help_script()
    assert sorted(HELP) == sorted(script.WIDTHS)
    for width in script.WIDTHS:
        assert HELP[width] == script.render(width)


def test_cli_reference_is_current() -> None:
    """docs/cli-reference.md is every command's help as the commands render it (run
    scripts/update_help.py after changing an option or a command)."""
    script = _update_help_script()
    path = Path(__file__).resolve().parent.parent / "docs" / "cli-reference.md"
    assert path.read_text(encoding="utf-8") == script.reference_text()


@pytest.mark.parametrize("columns", ["80", "130", "64"])
def test_help_fast_path_prints_what_click_prints(columns: str) -> None:
    """Real processes: the fast path (80/130 columns) and click (64 columns) agree."""
    fast = run_subprocess(["--help"], env={"COLUMNS": columns})
    slow = run_subprocess(["-m", "bleu", "--help"], env={"COLUMNS": columns})
    assert fast.returncode == 0 and slow.returncode == 0
    assert fast.stdout == slow.stdout
    assert b"--paired-bs" in fast.stdout


def test_fast_answer_only_for_help_and_version(monkeypatch) -> None:
    from bleucli.cli.launch import fast_answer
    from bleucli.native import ENGINE

    assert fast_answer(["--version"]) == f"bleucli {bleucli.__version__} ({ENGINE} engine)\n"
    assert fast_answer(["-h", "-q"]) is None and fast_answer(["ref.txt"]) is None
    assert fast_answer([]) is None
    monkeypatch.setenv("COLUMNS", "64")  # a width click renders itself
    assert fast_answer(["--help"]) is None


def test_no_color_is_accepted_like_sacrebleu() -> None:
    plain = run_cli([REF, "-i", HYP, "-b"]).stdout
    assert run_cli([REF, "-i", HYP, "-b", "-nc"]).stdout == plain
    assert run_cli([REF, "-i", HYP, "-b", "--no-color"]).stdout == plain
