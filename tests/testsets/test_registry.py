"""The registry data: valid against the schema, faithful to SacreBLEU's facts, overridable."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from bleucli.errors import ConfigError
from bleucli.testsets.registry import Registry, builtin_registry_dir, load_registry_file
from bleucli.testsets.schema import validate

REGISTRY = builtin_registry_dir()
SCHEMA = json.loads((REGISTRY / "schema.json").read_text())
FILES = sorted(p for p in REGISTRY.glob("*.json") if p.name != "schema.json")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_entry_validates_against_the_schema(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)  # the reference implementation
    assert validate(data, SCHEMA) == []  # and bleucli's own checker agrees


def test_registry_holds_every_sacrebleu_test_set_with_real_urls_and_md5s() -> None:
    from sacrebleu.dataset import DATASETS

    sets = Registry().sets
    assert set(DATASETS) | {"sample"} == set(sets)
    for name, theirs in DATASETS.items():
        ours = sets[name]
        assert [d.url for d in ours.data] == list(theirs.data), name
        assert [d.md5 for d in ours.data] == list(theirs.md5), name
        assert set(ours.langpairs) == set(theirs.langpairs), name
        assert all(d.url.startswith(("https://", "http://")) for d in ours.data)


def test_sample_is_local_and_has_two_references() -> None:
    sample = Registry().get("sample")
    assert not any(d.url.startswith("http") for d in sample.data)
    assert len(sample.langpair("en-de").references) == 2


def test_unknown_set_and_pair_list_what_exists() -> None:
    registry = Registry()
    with pytest.raises(ConfigError, match="unknown test set 'wmt99'; available: .*wmt14"):
        registry.get("wmt99")
    with pytest.raises(ConfigError, match="no language pair 'xx-yy'; available: .*en-de"):
        registry.get("wmt14").langpair("xx-yy")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "line 1: invalid JSON"),
        (
            '{"x": {"description": "d", "data": [], "langpairs": {}}}',
            "x.data: needs at least 1 item",
        ),
        (
            '{"x": {"description": "d", "data": [{"url": "a", "md5": "nope"}], "langpairs": '
            '{"en-de": {"format": "plain", "source": "a", "references": ["b"]}}}}',
            "x.data[0].md5: 'nope' does not match",
        ),
        (
            '{"x": {"description": "d", "data": [{"url": "a", "md5": "' + "0" * 32 + '"}], '
            '"langpairs": {"en-de": {"format": "pdf", "source": "a", "references": ["b"]}}}}',
            "x.langpairs.en-de.format: 'pdf' is not one of",
        ),
    ],
)
def test_bad_custom_registry_is_one_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "mine.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as err:
        load_registry_file(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_custom_registries_override_builtins_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def registry(name: str, description: str) -> Path:
        path = tmp_path / name
        entry = {
            "description": description,
            "data": [{"url": "d.txt", "md5": "0" * 32}],
            "langpairs": {"en-de": {"format": "plain", "source": "d.txt", "references": ["d.txt"]}},
        }
        path.write_text(json.dumps({"wmt14": entry, name: entry}))
        return path

    env_file, cli_file = registry("env.json", "from env"), registry("cli.json", "from cli")
    monkeypatch.setenv("BLEUCLI_TESTSETS", str(env_file))
    sets = Registry([cli_file]).sets
    assert sets["wmt14"].description == "from cli"
    assert sets["env.json"].description == "from env"
    assert sets["wmt14"].origin == tmp_path
