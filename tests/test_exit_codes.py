"""The one exit-code rule (docs/cli.md), walked over every command's error paths: 2 for a
usage mistake (a malformed, out-of-range or unknown flag or value among bleucli's own
choices), 1 for bad data and for names the data does not have (a test set, a language pair
of a test set, a human score kind: SacreBLEU's code for the same mistakes), 3 for a failed
gate; every error one line (click's usage errors: its usage block)."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES, run_cli

REF, HYP, HYP2 = (str(EXAMPLES / n) for n in ("ref.de", "hyp.de", "hyp2.de"))
MTME = str(EXAMPLES / "meta-eval" / "wmt22-ru-en")

USAGE = [
    [REF, "-i", HYP, "-m", "nope"],
    [REF, "-i", HYP, "-tok", "nope"],
    [REF, "-i", HYP, "-w", "99"],
    [REF, "-i", HYP, "-f", "nope"],
    [REF, "-i", HYP, "--no-such-flag"],
    [REF, "-i", HYP, "-l", "en-xx"],
    [REF, "-i", HYP, "--from-signature", "BLEU|nrefs:x"],
    ["stats", REF, "-i", HYP, "-m", "nope"],
    ["merge"],
    ["report", "-f", "nope", HYP],
    ["report", "-w", "99", HYP],
    ["gate", HYP, "--baseline", HYP, "--tolerance", "nan"],
    ["analyze", REF, "-i", HYP, "--top", "0"],
    ["analyze", REF, "-i", HYP, "-m", "nope"],
    ["plot", "nope", REF, "-i", HYP, "-o", "x.pdf"],
    ["plot", "scores", REF, "-i", HYP, "-o", "x.jpg"],
    ["mbr", "-i", HYP],
    ["mbr", "-i", HYP, HYP2, "-m", "nope"],
    ["resegment", REF, "-i", HYP, "--tokenize", "nope"],
    ["meta-eval", "--mtme", MTME, "-l", "ru-en", "--stat", "nope"],
    ["meta-eval", "--mtme", MTME, "-l", "en-xx"],
    ["meta-eval", "--mtme", MTME],
    ["server", "init", "--db", "mysql://x"],
    ["server", "add-testset", "--db", "x.db", "news", "-l", "en-xx", "--ref", REF],
    [
        "server",
        "add-testset",
        "--db",
        "x.db",
        "news",
        "-l",
        "en-de",
        "--ref",
        REF,
        "--closes",
        "soon",
    ],
    [
        "submit",
        "--server",
        "http://127.0.0.1:9",
        "--token-file",
        REF,
        "-t",
        "x",
        "-i",
        HYP,
        "--gate",
    ],
    ["verify", HYP, "--reference-key", "not-hex"],
]

DATA = [
    [REF, "-i", "nope.de"],
    [REF, "-i", str(EXAMPLES / "unsegmented.de")],
    ["-t", "nope", "-l", "en-de", "-i", HYP],
    ["-t", "sample", "-l", "en-fr", "-i", HYP],
    ["stats", "nope.de", "-i", HYP],
    ["merge", "nope.json"],
    ["report", "nope.json"],
    ["gate", "nope.json", "--baseline", "x.json"],
    ["gate", HYP, "--baseline", HYP],
    ["analyze", REF, "-i", "nope.de"],
    ["plot", "scores", REF, "-i", "nope.de", "-o", "x.svg"],
    ["mbr", "-i", HYP, str(EXAMPLES / "unsegmented.de")],
    ["resegment", REF, "-i", "nope.de"],
    ["meta-eval", "--mtme", MTME, "-l", "ru-en", "--human-name", "nope"],
    ["meta-eval", "--mtme", "nowhere", "-l", "ru-en"],
    ["server", "init", "--db", "/nonexistent/folder/x.db"],
    ["verify", "nope.json"],
    ["submit", "--server", "http://127.0.0.1:9", "--token-file", "nope", "-t", "x", "-i", HYP],
]


def _run(args: list[str]):
    from click.testing import CliRunner

    from bleucli.cli.launch import main

    runner = CliRunner()
    with runner.isolation() as (out, err, _):
        try:
            main(args)
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        return code, out.getvalue().decode(), err.getvalue().decode()


@pytest.mark.parametrize("args", USAGE, ids=lambda a: " ".join(a)[:60])
def test_usage_mistakes_exit_2(args: list[str], tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(args)
    assert code == 2, err
    assert "Traceback" not in err
    if err.startswith("bleucli: error:"):
        assert len(err.strip().splitlines()) == 1, err
    else:
        assert err.startswith("Usage: bleucli") and "Error:" in err, err


@pytest.mark.parametrize("args", DATA, ids=lambda a: " ".join(a)[:60])
def test_bad_data_and_names_the_data_lacks_exit_1(
    args: list[str], tmp_path, monkeypatch, cache_dir
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(args)
    assert code == 1, err
    assert err.startswith("bleucli: error:") and len(err.strip().splitlines()) == 1, err


def test_a_failed_gate_exits_3(write) -> None:
    base = write("base.json", run_cli([REF, "-i", HYP]).stdout)
    now = write("now.json", run_cli([REF, "-i", HYP2]).stdout)
    code, out, _ = _run(["gate", now, "--baseline", base])
    assert code == 3 and "FAIL" in out
