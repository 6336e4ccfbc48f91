"""Language pairs are checked the same way in every command (two ISO 639 codes), a CJK target
on references without CJK characters is said, and options of a metric that is not selected
are said rather than ignored."""

from __future__ import annotations

import pytest

from bleucli.errors import UsageError
from bleucli.languages import check_pair
from tests.conftest import EXAMPLES, run_cli

REF = str(EXAMPLES / "ref.de")
HYP = str(EXAMPLES / "hyp.de")


@pytest.mark.parametrize("pair", ["en-de", "de-en", "en-liv", "ru-sah", "zh-en", "kk-en"])
def test_real_pairs_pass(pair: str) -> None:
    assert check_pair(pair) == tuple(pair.split("-"))


def test_every_pair_of_the_registry_passes() -> None:
    from bleucli.testsets.registry import Registry

    registry = Registry()
    pairs = {pair for name in registry.names() for pair in registry.get(name).langpairs}
    assert len(pairs) > 50
    for pair in pairs:
        check_pair(pair)


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("en-de-fr", "3 parts; one source and one target language"),
        (
            "english-german",
            "'english' and 'german' are not ISO 639 language codes (639-1 like de, "
            "or 639-3 like liv); did you mean en-de?",
        ),  # fmt: skip
        ("en-xx", "'xx' is not an ISO 639 language code"),
        ("EN-DE", "did you mean en-de?"),
        ("ende", "is not a language pair SRC-TRG"),
        ("en-", "is not a language pair SRC-TRG"),
    ],
)
def test_wrong_pairs_are_one_line_in_every_command(pair: str, message: str, tmp_path) -> None:
    with pytest.raises(
        UsageError, match=message.replace("?", r"\?").replace("(", r"\(").replace(")", r"\)")
    ):
        check_pair(pair)
    for args in (
        [REF, "-i", HYP, "-l", pair],
        ["analyze", REF, "-i", HYP, "-l", pair],
        ["meta-eval", "--mtme", str(EXAMPLES / "meta-eval" / "wmt22-ru-en"), "-l", pair],
    ):
        result = run_cli(args)
        assert result.exit_code == 2, (args, result.stderr)
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_server_checks_its_pairs_too(tmp_path) -> None:
    pytest.importorskip("sqlalchemy")
    from bleucli.commands.server import add_testset, init

    db = f"sqlite:///{tmp_path / 'pairs.db'}"
    init(db, None)
    with pytest.raises(UsageError, match="'xx' is not an ISO 639 language code"):
        add_testset(db, "news", "en-xx", (REF,), None, None, ["-m", "bleu"], {})


def test_a_cjk_target_without_cjk_references_is_said() -> None:
    warned = run_cli([REF, "-i", HYP, "-l", "en-zh", "-b"])
    assert warned.exit_code == 0
    assert (
        "picks BLEU's tok:zh tokeniser, but the references hold no Chinese characters"
        in warned.stderr
    )
    for args in (["-l", "en-zh", "-tok", "13a"], ["-l", "en-de"], ["-l", "en-zh", "-m", "chrf"]):
        quiet = run_cli([REF, "-i", HYP, *args, "-b"])
        assert quiet.exit_code == 0 and "hold no" not in quiet.stderr, args


def test_chinese_references_are_not_warned_about(write) -> None:
    ref = write("ref.zh", ["猫坐在垫子上。", "今天天气很好。"])
    hyp = write("hyp.zh", ["猫坐在垫子上", "今天天气好。"])
    result = run_cli([ref, "-i", hyp, "-l", "en-zh", "-b"])
    assert result.exit_code == 0 and result.stderr == ""


def test_options_of_metrics_not_selected_are_said() -> None:
    chrf = run_cli([REF, "-i", HYP, "-m", "bleu", "-cw", "2", "-b"])
    assert chrf.stderr.strip() == (
        "bleucli: -cw: an option of chrF, which is not selected: add chrf to -m, or drop it"
    )
    bleu = run_cli([REF, "-i", HYP, "-m", "ter", "-tok", "intl", "-lc", "-b"])
    assert (
        "-lc -tok: options of BLEU, which is not selected: add bleu to -m, or drop them"
        in bleu.stderr
    )
    used = run_cli([REF, "-i", HYP, "-m", "bleu", "chrf", "-cw", "2", "-tok", "intl", "-b"])
    assert used.stderr == ""
    meta = run_cli(["meta-eval", "--mtme", str(EXAMPLES / "meta-eval" / "wmt22-ru-en"), "-l", "ru-en",
                    "-m", "chrf", "-tok", "intl", "--stat", "sys-pearson", "-k", "0"])  # fmt: skip
    assert meta.exit_code == 0, meta.stderr
    assert "-tok: an option of BLEU, which is not selected" in meta.stderr
