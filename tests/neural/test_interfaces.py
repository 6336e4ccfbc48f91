"""COMET through every front end: the command line (with BLEU and chrF in one run,
sentence scores, rankings, signatures and --from-signature), the Python API and
bleucli.batch, and one clear line for every error a user meets."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import run_cli
from tests.neural_toy import ROOT

SRC, HYP, HYP2, REF = (
    str(ROOT / "examples" / n) for n in ("src.en", "hyp.de", "hyp2.de", "ref.de")
)


def lines(path: str) -> list[str]:
    return open(path, encoding="utf-8").read().splitlines()


def folder(toys, kind: str) -> str:
    return str(toys[kind].parents[1])


def test_comet_beside_bleu_and_chrf_in_one_run(checked_toys, reference) -> None:
    result = run_cli([REF, "-i", HYP, "--source", SRC, "-m", "bleu", "chrf", "comet",
                      "--comet-model", folder(checked_toys, "regression")])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    records = {r["name"]: r for r in json.loads(result.stdout)}
    assert set(records) == {"BLEU", "chrF2", "COMET"}
    expected = reference["checkpoints"]["regression"]["predictions"]["example"]["system_score"]
    assert records["COMET"]["score"] == round(expected, 4)
    signature = records["COMET"]["signature"]
    assert (
        signature.startswith("nrefs:1|model:regression@")
        and "|prec:fp32|dev:cpu|impl:comet-2.2.7|" in signature
    )


def test_sentence_scores_and_error_spans(checked_toys, reference) -> None:
    result = run_cli([REF, "-i", HYP, "--source", SRC, "-m", "xcomet", "--xcomet-model",
                      folder(checked_toys, "xcomet"), "-sl", "-f", "json", "-w", "xcomet=6"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    expected = reference["checkpoints"]["xcomet"]["predictions"]["example"]
    assert [r["xCOMET"] for r in rows] == [round(s, 6) for s in expected["scores"]]
    assert [[s["text"] for s in r["xCOMET error_spans"]] for r in rows] == [
        [s["text"] for s in spans] for spans in expected["error_spans"]
    ]


def test_rank_with_comet_uses_its_segment_scores(checked_toys) -> None:
    result = run_cli([REF, "-i", HYP, HYP2, "--source", SRC, "-m", "comet", "--comet-model",
                      folder(checked_toys, "regression"), "--rank", "-pbsn", "200", "-f", "json"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "COMET" in result.stdout


def test_from_signature_rebuilds_the_settings_and_refuses_other_weights(checked_toys) -> None:
    model = folder(checked_toys, "regression")
    first = run_cli(
        [REF, "-i", HYP, "--source", SRC, "-m", "comet", "--comet-model", model, "-f", "text"]
    )
    assert first.exit_code == 0, first.stderr
    signature = "COMET|" + first.stdout.split("COMET|", 1)[1].split(" = ")[0]
    digest = signature.split("model:regression@")[1].split("|")[0]
    again = run_cli([REF, "-i", HYP, "--source", SRC, "--from-signature", signature,
                     "--comet-model", model, "-f", "text"])  # fmt: skip
    assert again.exit_code == 0, again.stderr
    assert again.stdout == first.stdout
    other = run_cli([REF, "-i", HYP, "--source", SRC, "--from-signature", signature,
                     "--comet-model", folder(checked_toys, "referenceless")])  # fmt: skip
    assert other.exit_code == 1
    (line,) = other.stderr.strip().splitlines()
    assert f"asks for {digest}" in line and "other weights" in line


def test_errors_are_one_line_with_what_to_do(checked_toys) -> None:
    model = folder(checked_toys, "regression")
    no_source = run_cli([REF, "-i", HYP, "-m", "comet", "--comet-model", model])
    assert (
        no_source.exit_code == 1
        and "read the source sentences: give --source FILE" in no_source.stderr
    )
    short = run_cli([REF, "-i", HYP, "--source", str(ROOT / "examples" / "unsegmented.de"), "-m", "comet",
                     "--comet-model", model])  # fmt: skip
    assert short.exit_code == 1 and "source lines but the references have 30" in short.stderr
    fp16 = run_cli([REF, "-i", HYP, "--source", SRC, "-m", "comet", "--comet-model", model,
                    "--comet-precision", "fp16"])  # fmt: skip
    assert fp16.exit_code == 1 and "fp16 needs a GPU" in fp16.stderr
    bad_device = run_cli([REF, "-i", HYP, "--source", SRC, "-m", "comet", "--comet-model", model,
                          "--comet-device", "tpu"])  # fmt: skip
    assert bad_device.exit_code == 1 and "expected cpu, cuda or cuda:N" in bad_device.stderr
    for result in (no_source, short, fp16, bad_device):
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_without_torch_the_message_names_the_extra(toys) -> None:
    program = (
        "import sys; sys.modules['torch'] = None\n"
        "from bleucli.cli.launch import main\n"
        f"main([{REF!r}, '-i', {HYP!r}, '--source', {SRC!r}, '-m', 'comet', '--comet-model', "
        f"{folder(toys, 'regression')!r}])"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "bleucli: error: neural metrics (COMET) needs the optional dependency 'torch': "
        "install it with `pip install 'bleucli[neural]'`"
    )


def test_python_api_and_batch(checked_toys, reference) -> None:
    import bleucli
    from bleucli.batch import sentence_scores

    expected = reference["checkpoints"]["regression"]["predictions"]["example"]
    comet = bleucli.COMET(model=folder(checked_toys, "regression"), batch_size=8)
    score = comet.corpus_score(lines(HYP), [lines(REF)], sources=lines(SRC))
    assert score.score == pytest.approx(expected["system_score"], abs=1e-6)
    one = comet.sentence_score(lines(HYP)[0], [lines(REF)[0]], source=lines(SRC)[0])
    assert one.score == pytest.approx(expected["scores"][0], abs=1e-6)
    batch = sentence_scores("comet", lines(HYP), [lines(REF)], sources=lines(SRC),
                            model=folder(checked_toys, "regression"))  # fmt: skip
    assert batch.tolist() == pytest.approx(expected["scores"], abs=1e-6)
    with pytest.raises(bleucli.ConfigError, match="batch_size|--comet-batch-size"):
        bleucli.COMET(model=folder(checked_toys, "regression"), batch_size=0)


def test_cometkiwi_needs_no_reference_and_ignores_one(checked_toys, reference) -> None:
    kiwi = folder(checked_toys, "unified")
    result = run_cli(
        [
            REF,
            "-i",
            HYP,
            "--source",
            SRC,
            "-m",
            "cometkiwi",
            "--cometkiwi-model",
            kiwi,
            "-w",
            "cometkiwi=6",
        ]
    )
    assert result.exit_code == 0, result.stderr
    (record,) = (
        json.loads(f"[{result.stdout}]")
        if result.stdout.lstrip().startswith("{")
        else json.loads(result.stdout)
    )
    expected = reference["checkpoints"]["unified"]["predictions"]["example"]["system_score"]
    assert record["score"] == round(expected, 6)
    assert record["signature"].startswith("nrefs:0|")


def test_out_of_memory_suggests_a_smaller_batch(checked_toys, monkeypatch) -> None:
    import bleucli
    from bleucli.neural.models import CometModel

    def exhausted(*args, **kwargs):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    comet = bleucli.COMET(model=folder(checked_toys, "regression"), batch_size=64)
    monkeypatch.setattr(type(comet.loaded.model), "predict", exhausted)
    assert issubclass(type(comet.loaded.model), CometModel)
    with pytest.raises(
        bleucli.InputError,
        match="out of memory on cpu with batch size 64: try --comet-batch-size 32",
    ):
        comet.corpus_score(lines(HYP), [lines(REF)], sources=lines(SRC))


def test_quality_estimation_needs_no_reference_file(checked_toys, reference) -> None:
    kiwi = folder(checked_toys, "unified")
    alone = run_cli(
        [
            "-i",
            HYP,
            "--source",
            SRC,
            "-m",
            "cometkiwi",
            "--cometkiwi-model",
            kiwi,
            "-w",
            "cometkiwi=6",
        ]
    )
    assert alone.exit_code == 0, alone.stderr
    record = json.loads(alone.stdout)
    expected = reference["checkpoints"]["unified"]["predictions"]["example"]["system_score"]
    assert record["score"] == round(expected, 6) and record["signature"].startswith("nrefs:0|")
    with_bleu = run_cli(
        ["-i", HYP, "--source", SRC, "-m", "cometkiwi", "bleu", "--cometkiwi-model", kiwi]
    )
    assert with_bleu.exit_code == 1 and "no references" in with_bleu.stderr
