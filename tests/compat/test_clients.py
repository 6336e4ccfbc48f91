"""Third-party usage patterns give the same results through ``install_as_sacrebleu()`` as
with the real SacreBLEU 2.6.0 (each in its own interpreter), and the alias's own promises."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT, run_cli

SCRIPT = Path(__file__).with_name("client_patterns.py")


def _patterns(kind: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BLEUCLI_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), kind],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_client_patterns_match_the_real_sacrebleu() -> None:
    real, ours = _patterns("real"), _patterns("bleucli")
    assert real.keys() == ours.keys()
    different = {key: (real[key], ours[key]) for key in real if real[key] != ours[key]}
    assert different == {}
    assert ours["evaluate_version_ok"] and ours["silenced_by_level"]


def test_install_refuses_to_mix_with_the_real_sacrebleu() -> None:
    script = (
        "import sacrebleu, bleucli\n"
        "try:\n    bleucli.install_as_sacrebleu()\nexcept bleucli.ConfigError as e:\n"
        "    print('refused:', e)\n"
        "bleucli.install_as_sacrebleu(force=True)\n"
        "import sacrebleu as again\nprint(again.__name__, again.__version__)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("refused: the real sacrebleu is already imported (from ")
    assert lines[1] == "bleucli.sacrebleu_compat 2.6.0"


def test_every_sacrebleu_module_path_is_registered() -> None:
    """Every module of SacreBLEU 2.6.0 imports under the alias, with the public names the
    real module has (checked in one interpreter per package)."""
    lister = (
        "import importlib, json, pkgutil, sys\n"
        "if sys.argv[1] == 'bleucli':\n"
        "    import bleucli; bleucli.install_as_sacrebleu()\n"
        "from bleucli.install import MODULES\n"
        "out = {}\n"
        "for rel in ('',) + MODULES:\n"
        "    mod = importlib.import_module('sacrebleu' + ('.' + rel if rel else ''))\n"
        "    out[rel] = sorted(n for n in vars(mod) if not n.startswith('_')\n"
        "                      and not type(vars(mod)[n]).__name__ == 'module')\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    names = {}
    for kind in ("real", "bleucli"):
        proc = subprocess.run(
            [sys.executable, "-c", lister, kind], capture_output=True, text=True, env=env, cwd=ROOT
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        names[kind] = json.loads(proc.stdout)
    typing_names = {
        "Any",
        "Dict",
        "List",
        "Optional",
        "Sequence",
        "Tuple",
        "Union",
        "Mapping",
        "DefaultDict",
        "Counter",
        "Namespace",
        "ABCMeta",
        "abstractmethod",
        "defaultdict",
        "lru_cache",
        "import_module",
        "tabulate",
        "TYPE_CHECKING",
        "SIGPIPE",
        "SIG_DFL",
        "signal",
        "Color",
        "COMMIT_ID",
        "VERSION_TUPLE",
        "commit_id",
        "version_tuple",
    }
    #: SacreBLEU's TER engine internals (its trace format); bleucli's engine differs, and
    #: ``translation_edit_rate`` (what TER uses) is provided. Documented in docs/sacrebleu.md.
    engine_internals = {"BeamEditDistance", "trace_to_alignment"}
    missing = {}
    for module, public in names["real"].items():
        lacking = set(public) - set(names["bleucli"][module]) - typing_names - engine_internals
        if lacking:
            missing[module] = sorted(lacking)
    assert missing == {}


def test_sacrebleu_environment_variables(tmp_path, monkeypatch) -> None:
    """SACREBLEU_FORMAT, SACREBLEU_SEED and SACREBLEU apply when the BLEUCLI_* variable is
    unset; the BLEUCLI_* variable wins when both are set."""
    ref, hyp = str(EXAMPLES / "ref.de"), str(EXAMPLES / "hyp.de")
    monkeypatch.setenv("SACREBLEU_FORMAT", "text")
    assert run_cli([ref, "-i", hyp]).stdout.startswith("BLEU|nrefs:1|")
    monkeypatch.setenv("BLEUCLI_FORMAT", "json")
    assert run_cli([ref, "-i", hyp]).stdout.startswith("{")
    monkeypatch.delenv("BLEUCLI_FORMAT")
    monkeypatch.setenv("SACREBLEU_SEED", "7")
    assert "seed:7" in run_cli([ref, "-i", hyp, "-ci", "-cin", "20"]).stdout
    monkeypatch.setenv("BLEUCLI_SEED", "9")
    assert "seed:9" in run_cli([ref, "-i", hyp, "-ci", "-cin", "20"]).stdout
    from bleucli.testsets.store import cache_root

    monkeypatch.delenv("BLEUCLI_CACHE")
    monkeypatch.setenv("SACREBLEU", str(tmp_path / "sb"))
    assert cache_root() == tmp_path / "sb" / "bleucli"


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (["--tok", "intl", "--lower", "-b"], 0, None),
        (["--tokenize=intl", "--lowercase", "-b"], 0, None),
        (["--t", "intl"], 2, "ambiguous option: --t could match"),
        (["-tok", "nonsense"], 2, "unknown tokenizer"),
    ],
)
def test_argparse_style_options(args, code, expected) -> None:
    """Unambiguous prefixes of long options work as in SacreBLEU's argparse; usage errors
    exit 2 as argparse does."""
    ref, hyp = str(EXAMPLES / "ref.de"), str(EXAMPLES / "hyp.de")
    result = run_cli([ref, "-i", hyp, *args])
    assert result.exit_code == code, result.stderr
    if expected:
        assert expected in result.stderr
    else:
        theirs = subprocess.run(
            [sys.executable, "-m", "sacrebleu", ref, "-i", hyp, *args],
            capture_output=True,
            text=True,
        )
        assert result.stdout.strip() == theirs.stdout.strip()


def test_lenient_shapes_under_the_alias_strict_outside(caplog) -> None:
    """The alias accepts what SacreBLEU silently truncates, with a warning; bleucli's own
    classes keep refusing it."""
    import bleucli
    from bleucli.sacrebleu_compat.metrics import BLEU as CompatBLEU

    hyps = ["the cat sat", "a dog"]
    flat = ["the cat sat", "a dog"]  # should be [flat]
    with caplog.at_level("WARNING", logger="sacrebleu"):
        score = CompatBLEU().corpus_score(hyps, flat)
    assert "scoring the first" in caplog.text
    import sacrebleu as real

    assert score.score == real.BLEU().corpus_score(hyps, flat).score
    with pytest.raises(bleucli.InputError, match="flat list"):
        bleucli.BLEU().corpus_score(hyps, flat)


def test_strings_as_character_sequences_under_the_alias_only(caplog) -> None:
    """A string where SacreBLEU expects a list is a sequence of characters to SacreBLEU
    (fairseq's translation_moe scorer relies on it): the alias scores it alike, warning once
    per process however often it is called; bleucli's own functions refuse it."""
    import sacrebleu as real

    import bleucli
    from bleucli.sacrebleu_compat import compat
    from bleucli.sacrebleu_compat.metrics import base

    base._WARNED.clear()
    pairs = [("abc", "abd"), ("the cat", ["the mat"]), (["xyz"], "xya"), ("ab", "ab")]
    with caplog.at_level("WARNING", logger="sacrebleu"):
        for function in ("corpus_bleu", "corpus_chrf", "corpus_ter"):
            for hyp, ref in pairs:
                ours, theirs = (
                    getattr(compat, function)(hyp, ref),
                    getattr(real, function)(hyp, ref),
                )
                assert (ours.score, str(ours)) == (theirs.score, str(theirs))
    warnings = [r for r in caplog.records if "as SacreBLEU does" in r.getMessage()]
    assert 1 <= len(warnings) <= 3 * 2  # once per metric and kind, not once per call
    assert all("once per process" in r.getMessage() for r in warnings)
    with pytest.raises(TypeError, match="hypotheses should be a list of strings"):
        bleucli.corpus_bleu("abc", "abd")
    with pytest.raises(TypeError, match="references should be a list of reference streams"):
        bleucli.corpus_chrf(["abc"], "abd")


def test_alias_lists_exactly_sacrebleus_test_sets(tmp_path, monkeypatch) -> None:
    """DATASETS and the listing functions name SacreBLEU 2.6.0's test sets and language
    pairs, and nothing else: not bleucli's sample, not a custom registry's set (which the
    lookup functions still find); one listed set overridden by a custom registry stays
    listed."""
    import json

    import sacrebleu as real

    registry = tmp_path / "extra.json"
    registry.write_text(
        json.dumps(
            {
                "in-house": {
                    "description": "x",
                    "data": [{"url": "a.txt", "md5": "0" * 32}],
                    "langpairs": {
                        "en-de": {"format": "plain", "source": "a.txt", "references": ["a.txt"]}
                    },
                }
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("BLEUCLI_TESTSETS", str(registry))
    script = (
        "import json, bleucli\nbleucli.install_as_sacrebleu()\nimport sacrebleu\n"
        "print(json.dumps([sorted(sacrebleu.DATASETS), sacrebleu.get_available_testsets(),"
        " {n: sorted(sacrebleu.get_langpairs_for_testset(n)) for n in sacrebleu.DATASETS},"
        " sacrebleu.utils._dataset('in-house').name]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    names, available, langpairs, found = json.loads(proc.stdout)
    assert names == sorted(real.DATASETS)
    assert available == real.get_available_testsets()
    assert langpairs == {n: sorted(real.get_langpairs_for_testset(n)) for n in real.DATASETS}
    assert found == "in-house"


def test_dataset_api_over_the_registry(cache_dir) -> None:
    """lm-eval's pattern: file paths of a test set's source and references (here the
    built-in offline sample set), and the dataset objects' iterators."""
    from bleucli.sacrebleu_compat import utils
    from bleucli.sacrebleu_compat.dataset import _ALL_DATASETS, DATASETS, PlainTextDataset
    from bleucli.testsets import TestSets

    expected = TestSets().load("sample", "en-de")
    source = utils.get_source_file("sample", "en-de")
    with utils.smart_open(source) as handle:
        assert [line.rstrip("\n") for line in handle] == expected.source
    references = utils.get_reference_files("sample", "en-de")
    assert len(references) == 2
    for path, stream in zip(references, expected.reference_streams):
        assert Path(path).read_text(encoding="utf-8").splitlines() == stream
    assert "sample" not in DATASETS  # bleucli's own set: SacreBLEU does not list it
    assert "sample" not in utils.get_available_testsets()
    assert utils.get_langpairs_for_testset("sample") == []
    dataset = _ALL_DATASETS["sample"]
    assert isinstance(dataset, PlainTextDataset)
    assert list(dataset.source("en-de")) == expected.source
    assert list(dataset.references("en-de"))[0] == tuple(s[0] for s in expected.reference_streams)
    assert dataset.get_files("en-de")[0] == source
    assert "wmt14" in utils.get_available_testsets()
    assert "wmt19" in utils.get_available_testsets_for_langpair("en-de")
    with pytest.raises(Exception, match="No such test set"):
        utils.get_source_file("nope", "en-de")


def test_docs_snippet_runs_as_written() -> None:
    """The install_as_sacrebleu() example of docs/sacrebleu.md runs unchanged in a fresh
    interpreter."""
    text = (ROOT / "docs" / "sacrebleu.md").read_text(encoding="utf-8")
    section = text.split("## Running code written for SacreBLEU", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    probe = code + (
        "\nassert sacrebleu.__version__ == '2.6.0'\n"
        "assert BLEU is sacrebleu.metrics.BLEU\n"
        "import bleucli\nassert sacrebleu.__bleucli_version__ == bleucli.__version__\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
