"""ja-mecab, ko-mecab and SentencePiece tokenisers: identical to SacreBLEU's."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import sacrebleu
from hypothesis import given
from hypothesis import strategies as st

import bleucli
from bleucli.tokenizers import get_tokenizer

JAPANESE = [
    "私は日本語を話します。",
    "今日はいい天気ですね！",
    "東京タワーに行きました",
    "ＡＢＣとabc、カタカナ",
    "",
    "  空白  ",
    "2026年12月3日",
    "「引用」です。",
]
KOREAN = [
    "나는 한국어를 합니다.",
    "오늘 날씨가 좋네요!",
    "서울에 갔습니다",
    "ABC와 abc",
    "",
    "  공백  ",
    "2026년 12월 3일",
    "“인용”입니다.",
]

pieces = st.sampled_from(
    [*JAPANESE, *KOREAN, "a", "B", ".", "、", "。", " ", "123", "テスト", "한국", "漢字", "ー"]
)
sentences = st.lists(pieces, max_size=8).map("".join)


@pytest.mark.parametrize(("name", "texts"), [("ja-mecab", JAPANESE), ("ko-mecab", KOREAN)])
def test_mecab_tokens_and_signature(name: str, texts: list[str]) -> None:
    from sacrebleu.metrics.bleu import _get_tokenizer

    ours, theirs = get_tokenizer(name), _get_tokenizer(name)()
    assert [ours(t) for t in texts] == [theirs(t) for t in texts]
    assert ours.signature() == theirs.signature()


@given(hyps=st.lists(sentences, min_size=1, max_size=4), data=st.data())
def test_mecab_bleu_matches(hyps, data) -> None:
    refs = [data.draw(st.lists(sentences, min_size=len(hyps), max_size=len(hyps)))]
    for lang in ("ja", "ko"):
        ours = bleucli.BLEU(trg_lang=lang)
        theirs = sacrebleu.BLEU(trg_lang=lang)
        assert ours.corpus_score(hyps, refs).score == pytest.approx(
            theirs.corpus_score(hyps, refs).score, abs=1e-9
        )
        assert (
            str(ours.get_signature()).rsplit("|", 1)[0]
            == str(theirs.get_signature()).rsplit("|", 1)[0]
        )


FLORES101_URL = "https://dl.fbaipublicfiles.com/fairseq/models/flores/sacrebleu_tokenizer_spm.model"


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory) -> bytes:
    """A small SentencePiece model trained here, on the repository's example text."""
    import sentencepiece

    folder = tmp_path_factory.mktemp("spm")
    examples = Path(__file__).resolve().parents[2] / "examples"
    corpus = folder / "corpus.txt"
    corpus.write_text(
        "".join(
            (examples / n).read_text(encoding="utf-8")
            for n in ("src.en", "ref.de", "ref2.de", "hyp.de")
        ),
        encoding="utf-8",
    )
    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(folder / "m"),
        vocab_size=300,
        character_coverage=1.0,
        minloglevel=2,
    )
    return (folder / "m.model").read_bytes()


@pytest.fixture
def served_model(spm_model, http_server, tmp_path, monkeypatch):
    """The model served at the flores101 URL's mirror path; a private cache."""
    path = "/mirror/" + FLORES101_URL.split("://", 1)[1]
    http_server.serve(path, spm_model)
    monkeypatch.setenv("BLEUCLI_MIRROR", http_server.url("/mirror"))
    monkeypatch.setenv("BLEUCLI_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("BLEUCLI_OFFLINE", raising=False)
    return tmp_path / "cache" / "models" / "sacrebleu_tokenizer_spm.model"


def test_spm_downloads_once_and_matches_sacrebleu(
    served_model, spm_model, http_server, tmp_path, monkeypatch
) -> None:
    import sacrebleu.tokenizers.tokenizer_spm as sb_spm

    ours = get_tokenizer("flores101")
    assert served_model.read_bytes() == spm_model
    assert (served_model.parent / (served_model.name + ".md5")).read_text().strip() == hashlib.md5(
        spm_model
    ).hexdigest()
    (tmp_path / "sb" / "models").mkdir(parents=True)
    (tmp_path / "sb" / "models" / served_model.name).write_bytes(spm_model)
    monkeypatch.setattr(sb_spm, "SACREBLEU_DIR", str(tmp_path / "sb"))
    theirs = sb_spm.Flores101Tokenizer()
    texts = ["Der Hund bellt laut im Garten.", "The museum is closed on Mondays!", ""]
    assert [ours(t) for t in texts] == [theirs(t) for t in texts]
    hits = http_server.hits["/mirror/" + FLORES101_URL.split("://", 1)[1]]
    get_tokenizer("flores101")  # cached: no second download
    assert http_server.hits["/mirror/" + FLORES101_URL.split("://", 1)[1]] == hits
    metric = bleucli.BLEU(tokenize="spm")
    metric.corpus_score(["Der Hund bellt."], [["Der Hund bellt laut."]])
    assert "tok:flores101" in str(metric.get_signature())


def test_corrupt_model_is_fetched_again_and_offline_fails_clearly(
    served_model, spm_model, monkeypatch, caplog
) -> None:
    get_tokenizer("flores101")
    served_model.write_bytes(b"damaged")
    with caplog.at_level("WARNING", logger="bleucli"):
        get_tokenizer("flores101")
    assert "is corrupt; fetching it again" in caplog.text
    assert served_model.read_bytes() == spm_model
    served_model.unlink()
    monkeypatch.setenv("BLEUCLI_OFFLINE", "1")
    from bleucli.testsets.download import OfflineError

    with pytest.raises(OfflineError):
        get_tokenizer("flores101")


@pytest.mark.parametrize(
    "bad",
    [b"<!DOCTYPE html><html><body>Rate limited</body></html>", b"\x0a\x0b truncated protobuf"],
)
def test_model_that_is_not_a_model_is_never_trusted(
    bad, served_model, spm_model, http_server
) -> None:
    """No published md5: the first download must load as a SentencePiece model before its
    md5 is recorded; an error page or a cut transfer is refused and nothing is kept."""
    from bleucli.testsets.download import DownloadError

    path = "/mirror/" + FLORES101_URL.split("://", 1)[1]
    http_server.serve(path, bad)
    with pytest.raises(DownloadError, match="not a SentencePiece model"):
        get_tokenizer("flores101")
    assert not served_model.exists()
    assert not served_model.with_name(served_model.name + ".md5").exists()
    http_server.serve(path, spm_model)  # the server recovers: the next run works
    assert get_tokenizer("flores101")("Der Hund bellt.")
    assert served_model.read_bytes() == spm_model


def test_offline_option_covers_models(served_model, tmp_path) -> None:
    """--offline stops model downloads too, with a one-line error."""
    from tests.conftest import run_cli

    ref = tmp_path / "r.txt"
    ref.write_text("Der Hund bellt.\n", encoding="utf-8")
    result = run_cli([str(ref), "-i", str(ref), "-tok", "flores101", "--offline"])
    assert result.exit_code == 1 and "offline mode is on" in result.stderr
    assert not served_model.exists()
    assert os.environ.get("BLEUCLI_OFFLINE") is None  # restored after the run


def test_spbleu_1k_matches_sacrebleu(spm_model, http_server, tmp_path, monkeypatch) -> None:
    """``spBLEU-1K`` (SacreBLEU 2.6) fetches its own model from the real URL's mirror path
    and tokenises like SacreBLEU's ``spBLEU1KTokenizer`` with the same model."""
    import sacrebleu.tokenizers.tokenizer_spm as sb_spm

    url = sb_spm.SPM_MODELS["spBLEU-1K"]["url"]
    http_server.serve("/mirror/" + url.split("://", 1)[1], spm_model)
    monkeypatch.setenv("BLEUCLI_MIRROR", http_server.url("/mirror"))
    monkeypatch.setenv("BLEUCLI_CACHE", str(tmp_path / "cache"))
    ours = get_tokenizer("spBLEU-1K")
    (tmp_path / "sb" / "models").mkdir(parents=True)
    (tmp_path / "sb" / "models" / url.rsplit("/", 1)[1]).write_bytes(spm_model)
    monkeypatch.setattr(sb_spm, "SACREBLEU_DIR", str(tmp_path / "sb"))
    theirs = sb_spm.spBLEU1KTokenizer()
    texts = ["Der Hund bellt laut im Garten.", "The museum is closed on Mondays!"]
    assert [ours(t) for t in texts] == [theirs(t) for t in texts]
    metric = bleucli.BLEU(tokenize="spBLEU-1K")
    metric.corpus_score(["Der Hund bellt."], [["Der Hund bellt laut."]])
    assert "tok:spBLEU-1K" in str(metric.get_signature())
    assert (
        str(metric.get_signature()).split("|version")[0]
        == str(_sacrebleu_signature("spBLEU-1K", tmp_path, monkeypatch)).split("|version")[0]
    )


def _sacrebleu_signature(tokenize: str, tmp_path, monkeypatch) -> str:
    metric = sacrebleu.BLEU(tokenize=tokenize)
    metric.corpus_score(["Der Hund bellt."], [["Der Hund bellt laut."]])
    return str(metric.get_signature())
