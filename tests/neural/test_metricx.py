"""MetricX-24 as its recipe defines it, against transformers' own MT5 classes run one input
at a time (no batching, no padding): the input text, mT5 ids truncated to 1,536 with the
final EOS removed, one decoder step from the start token, the logit of token 250089
clamped to [0, 25]; lower is better, and rankings know it."""

from __future__ import annotations

import json

import pytest
import torch

from scripts.comet_fixtures import cases
from tests.conftest import run_cli
from tests.neural_toy import ROOT

SRC, HYP, HYP2, REF = (
    str(ROOT / "examples" / n) for n in ("src.en", "hyp.de", "hyp2.de", "ref.de")
)


def oracle(folder, samples, with_reference: bool) -> list[float]:
    import sentencepiece
    from transformers import MT5ForConditionalGeneration

    sp = sentencepiece.SentencePieceProcessor(model_file=str(folder / "spiece.model"))
    model = MT5ForConditionalGeneration.from_pretrained(str(folder)).eval()
    out = []
    for s in samples:
        text = f"source: {s['src']} candidate: {s['mt']}"
        if with_reference:
            text += f" reference: {s['ref']}"
        ids = sp.encode(text) + [1]  # the tokenizer's EOS
        if len(ids) > 1536:  # truncation=True, max_length=1536: EOS kept last
            ids = ids[:1535] + [1]
        ids = ids[:-1]  # MetricX removes the final EOS
        with torch.inference_mode():
            logits = model(
                input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([[0]])
            ).logits
        out.append(float(torch.clamp(logits[0, 0, 250089], 0, 25)))
    return out


@pytest.mark.parametrize("with_reference", [True, False])
def test_scores_equal_the_recipe_with_transformers_mt5(metricx, with_reference: bool) -> None:
    from bleucli.neural.load import load

    samples = cases()["example"] + cases()["hard"]
    long = {"src": " ".join(s["src"] for s in samples) * 4, "mt": "x", "ref": "y"}  # > 1,536 tokens
    samples.append(long)
    columns = {
        k: [s[k] for s in samples]
        for k in (("src", "mt", "ref") if with_reference else ("src", "mt"))
    }
    model = load(str(metricx)).model
    ours = model.predict(columns, batch_size=4).scores
    expected = oracle(metricx, samples, with_reference)
    # float32 rounding: batches of several inputs take other matrix kernels than one input
    # at a time, which moves scores by a few units in the last place (relative 1e-5 at most)
    assert ours == pytest.approx(expected, rel=1e-5, abs=1e-6)
    assert (
        sum(0 < s < 25 for s in ours) >= 10
    )  # the toy's scores are spread: the test means something
    assert [x.hex() for x in model.predict(columns, batch_size=4).scores] == [x.hex() for x in ours]
    assert model.predict(columns, batch_size=1).scores == pytest.approx(
        expected, rel=1e-6, abs=1e-6
    )


def test_cli_signature_direction_and_ranking(metricx) -> None:
    result = run_cli([REF, "-i", HYP, "--source", SRC, "-m", "metricx24", "metricx24-qe",
                      "--metricx24-model", str(metricx), "--metricx24-qe-model", str(metricx)])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    records = {r["name"]: r for r in json.loads(result.stdout)}
    assert records["MetricX-24"]["signature"].startswith("nrefs:1|model:metricx-toy@")
    assert "|batch:1|prec:fp32|dev:cpu|impl:metricx-24|" in records["MetricX-24"]["signature"]
    again = run_cli([REF, "-i", HYP, "--source", SRC, "--from-signature",
                     "MetricX-24|" + records["MetricX-24"]["signature"], "--metricx24-model", str(metricx)])  # fmt: skip
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["score"] == records["MetricX-24"]["score"]
    assert records["MetricX-24-QE"]["signature"].startswith("nrefs:0|")
    ranked = run_cli([REF, "-i", HYP, HYP2, "--source", SRC, "-m", "metricx24", "--metricx24-model",
                      str(metricx), "--rank", "-pbsn", "100", "-f", "text"])  # fmt: skip
    assert ranked.exit_code == 0, ranked.stderr
    assert "MetricX-24 (lower is better)" in ranked.stdout


def test_metricx_needs_a_reference_and_an_mt5_checkpoint(metricx, toys) -> None:
    import bleucli

    scorer = bleucli.metric_class("metricx24")(model=str(metricx))
    with pytest.raises(bleucli.ConfigError, match="needs a reference"):
        scorer.predict(["a"], None, ["b"])
    wrong = run_cli([REF, "-i", HYP, "--source", SRC, "-m", "metricx24", "--metricx24-model",
                     str(toys["regression"].parents[1])])  # fmt: skip
    assert wrong.exit_code == 1 and "needs a MetricX-24 model" in wrong.stderr
