"""Signature parsing: SacreBLEU 2.x (long and short) and 1.x legacy forms."""

from __future__ import annotations

import json

import pytest

from bleucli import BLEU
from bleucli.errors import ConfigError
from bleucli.signature import parse_signature


def test_parses_2x_long_form() -> None:
    parsed = parse_signature(
        "BLEU|nrefs:2|case:lc|eff:yes|tok:intl|smooth:add-k[2.00]|version:2.0.0"
    )
    assert parsed.metric == "bleu" and not parsed.legacy
    assert parsed.fields["nrefs"] == "2"
    assert parsed.metric_options() == {
        "lowercase": True,
        "effective_order": True,
        "tokenize": "intl",
        "smooth_method": "add-k",
        "smooth_value": 2.0,
    }


def test_parses_2x_short_form_without_metric_prefix() -> None:
    parsed = parse_signature("#:1|c:mixed|e:no|tok:13a|s:exp|v:2.3.1")
    assert parsed.fields == {
        "nrefs": "1",
        "case": "mixed",
        "eff": "no",
        "tok": "13a",
        "smooth": "exp",
        "version": "2.3.1",
    }


def test_parses_1x_legacy_forms() -> None:
    long = parse_signature(
        "BLEU+case.mixed+lang.en-de+numrefs.1+smooth.exp+test.wmt14+tok.13a+version.1.4.14"
    )
    assert long.legacy
    assert long.fields == {
        "case": "mixed",
        "lang": "en-de",
        "nrefs": "1",
        "smooth": "exp",
        "test": "wmt14",
        "tok": "13a",
        "version": "1.4.14",
    }
    short = parse_signature("BLEU+c.lc+l.en-de+#.1+s.floor-0.1+t.wmt14+tok.intl+v.1.4.14")
    assert short.fields["case"] == "lc"
    assert short.metric_options()["smooth_value"] == pytest.approx(0.1)


def test_round_trip_of_every_bleu_option() -> None:
    for kwargs in [
        dict(
            lowercase=True,
            tokenize="char",
            smooth_method="floor",
            smooth_value=0.3,
            effective_order=True,
        ),
        dict(tokenize="zh", smooth_method="none"),
        dict(tokenize="none", smooth_method="add-k"),
    ]:
        metric = BLEU(**kwargs)
        metric.corpus_score(["a b c d"], [["a b c e"]])
        for short in (False, True):
            options = parse_signature(metric.get_signature().format(short)).metric_options()
            again = BLEU(**options)
            again.corpus_score(["a b c d"], [["a b c e"]])
            assert str(again.get_signature()) == str(metric.get_signature())


@pytest.mark.parametrize(
    "bad", ["", "BLEU|nrefs", "BLEU|colour:blue", "METEOR|nrefs:1", "BLEU|case:upper"]
)
def test_rejects_what_it_cannot_read(bad: str) -> None:
    with pytest.raises(ConfigError):
        parse_signature(bad).metric_options()


@pytest.mark.parametrize(
    "options",
    [
        ["-m", "bleu", "-tok", "intl", "-lc", "-s", "floor", "-sv", "0.3"],
        ["-m", "bleu", "-tok", "char", "-s", "add-k", "-sv", "2"],
        ["-m", "bleu", "-tok", "zh", "-s", "none"],
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
        [
            "-m",
            "ter",
            "--ter-case-sensitive",
            "--ter-asian-support",
            "--ter-no-punct",
            "--ter-normalized",
        ],
        ["-m", "bleu", "-ci", "-cin", "50"],
        ["-t", "sample", "-l", "en-de", "-m", "chrf"],
    ],
)
def test_cli_round_trip_of_every_signature_field(options, cache_dir) -> None:
    """A published signature alone reproduces the options, the score and the signature."""
    from tests.conftest import EXAMPLES, run_cli

    refs = [] if "-t" in options else [str(EXAMPLES / "ref.de"), str(EXAMPLES / "ref2.de")]
    hyp = ["-i", str(EXAMPLES / "hyp.de"), "-w", "6"]
    first = run_cli([*refs, *options, *hyp])
    assert first.exit_code == 0, first.stderr
    record = json.loads(first.stdout)
    again = run_cli([*refs, *hyp, "--from-signature", f"{record['name']}|{record['signature']}"])
    assert again.exit_code == 0, again.stderr
    repeat = json.loads(again.stdout)
    assert (repeat["signature"], repeat["score"]) == (record["signature"], record["score"])
