"""A metric from another package, end to end: the example plugin (``examples/plugin-cer``,
character error rate) installed beside bleucli through the ``bleucli.metrics`` entry-point
group works in every front end with nothing registered by hand -- the command line (its
flags, their checks, the signature, ``--from-signature``), the Python API and scoring
requests, the SacreBLEU command -- and a broken plugin gets one clear line. The server's
test sets are in tests/server/test_plugins.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES, ROOT
from tests.plugins import install_example

REF, HYP, HYP2 = (str(EXAMPLES / n) for n in ("ref.de", "hyp.de", "hyp2.de"))


def levenshtein(a: str, b: str) -> int:
    """The textbook full-matrix edit distance (the oracle; the plugin keeps two rows)."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
    return table[len(a)][len(b)]


def expected_cer(hyps: list[str], refs: list[list[str]], lowercase=False, spaces="keep") -> float:
    def prepare(text: str) -> str:
        text = text.lower() if lowercase else text
        return "".join(text.split()) if spaces == "drop" else text

    edits = length = 0
    for k, hyp in enumerate(hyps):
        h = prepare(hyp)
        options = [(levenshtein(h, prepare(ref[k])), len(prepare(ref[k]))) for ref in refs]
        best = min(options)
        edits, length = edits + best[0], length + best[1]
    if length == 0:
        return 0.0 if edits == 0 else 100.0
    return 100.0 * edits / length


def lines(path: str) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return install_example(tmp_path_factory.mktemp("site"))


@pytest.fixture
def plugin(site, monkeypatch):
    """The example installed for this process (the registry re-reads the entry points)."""
    import bleucli.metrics as registry

    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_PLUGINS", None)
    yield
    sys.modules.pop("bleucli_cer", None)


def bleucli(site: Path, *args: str, module: str = "bleucli") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True, text=True, env=env, timeout=120, cwd=ROOT,
    )  # fmt: skip


def test_the_command_line_scores_with_the_plugin_and_its_flags(site) -> None:
    proc = bleucli(site, REF, "-i", HYP, "-m", "cer", "bleu", "--cer-spaces", "drop",
                   "--cer-lowercase", "-w", "6")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = {entry["name"]: entry for entry in json.loads(proc.stdout)}
    cer = results["CER"]
    want = expected_cer(lines(HYP), [lines(REF)], lowercase=True, spaces="drop")
    assert cer["score"] == pytest.approx(want, abs=5e-7)
    assert cer["signature"].startswith("nrefs:1|lc:yes|spaces:drop|version:")
    assert "BLEU" in results  # built-in metrics alongside


def test_the_plugins_values_are_checked_and_named(site) -> None:
    bad = bleucli(site, REF, "-i", HYP, "-m", "cer", "--cer-spaces", "sometimes")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "bleucli: error: --cer-spaces must be one of keep, drop, got 'sometimes'"
    ]
    unknown = bleucli(site, REF, "-i", HYP, "-m", "cerr")
    assert (
        unknown.returncode == 2
        and "available: bleu, chrf, ter, comet, cometkiwi, xcomet, metricx24, metricx24-qe, cer"
        in unknown.stderr
    )
    helped = bleucli(site, "-m", "cer", "--help")
    assert "--cer-spaces keep|drop" in helped.stdout


def test_the_signature_reproduces_the_score(site) -> None:
    first = json.loads(bleucli(site, REF, "-i", HYP2, "-m", "cer", "--cer-spaces", "drop",
                               "-w", "4").stdout)  # fmt: skip
    signature = f"CER|{first['signature']}"
    again = bleucli(site, REF, "-i", HYP2, "--from-signature", signature, "-w", "4")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == first


def test_the_sacrebleu_command_has_the_plugin_too(site) -> None:
    ours = bleucli(site, REF, "-i", HYP, "-m", "cer", "--cer-lowercase", "-b")
    shim = bleucli(site, REF, "-i", HYP, "-m", "cer", "--cer-lowercase", "-b",
                   module="bleucli.sacrebleu_compat")  # fmt: skip
    assert shim.returncode == 0, shim.stderr
    assert shim.stdout == ours.stdout and float(ours.stdout) > 0


def test_without_the_plugin_the_name_is_unknown() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bleucli", REF, "-i", HYP, "-m", "cer"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 2 and "unknown metric 'cer'" in proc.stderr


def test_the_python_api_and_scoring_requests(plugin) -> None:
    import bleucli

    assert "cer" in bleucli.available_metrics()
    cls = bleucli.metric_class("CER")
    hyps, refs = lines(HYP), [lines(REF), lines(HYP2)]
    direct = cls(spaces="drop").corpus_score(hyps, refs)
    assert direct.score == pytest.approx(expected_cer(hyps, refs, spaces="drop"))
    request = bleucli.ScoringRequest.from_args(["-m", "cer", "chrf", "--cer-spaces", "drop"])
    again = bleucli.ScoringRequest.from_json(json.loads(request.dumps()))
    assert again == request
    scored = bleucli.score(request, hyps, refs)
    assert scored.scores["CER"] == pytest.approx(direct.score, abs=0.05)
    with pytest.raises(bleucli.UsageError, match="cer has no option 'space'"):
        bleucli.ScoringRequest.from_json({"metrics": [{"name": "cer", "options": {"space": 1}}]})
    with pytest.raises(bleucli.UsageError, match="--cer-spaces must be one of keep, drop"):
        bleucli.ScoringRequest.from_args(["-m", "cer", "--cer-spaces", "x"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.text("ab Ac", max_size=8), st.text("ab Ac", max_size=8)),
        min_size=1,
        max_size=6,
    ),
    st.booleans(),
    st.sampled_from(["keep", "drop"]),
)
def test_the_example_is_a_correct_cer(pairs, lowercase, spaces) -> None:
    """The example plugin's arithmetic, against the textbook definition."""
    sys.path.insert(0, str(ROOT / "examples" / "plugin-cer"))
    try:
        from bleucli_cer import CER
    finally:
        sys.path.pop(0)
    hyps, refs = [h for h, _ in pairs], [[r for _, r in pairs]]
    got = CER(lowercase=lowercase, spaces=spaces).corpus_score(hyps, refs).score
    assert got == pytest.approx(expected_cer(hyps, refs, lowercase, spaces))


def _broken(tmp_path: Path, module_text: str, entry: str) -> Path:
    site = tmp_path / "broken"
    (site / "broken_metric-1.0.dist-info").mkdir(parents=True)
    (site / "broken_metric-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: broken-metric\nVersion: 1.0\n"
    )
    (site / "broken_metric-1.0.dist-info" / "entry_points.txt").write_text(
        f"[bleucli.metrics]\n{entry}\n"
    )
    (site / "broken_metric.py").write_text(module_text)
    return site


def test_a_plugin_that_takes_a_builtin_flag_is_refused(tmp_path) -> None:
    text = (
        "from bleucli_cer import CER\nfrom bleucli.metrics.options import Option\n"
        "class Greedy(CER):\n    name = 'Greedy'\n"
        "    OPTIONS = (Option('lowercase', ('-lc', '--greedy-lc'), help='x'),)\n"
    )
    site = _broken(tmp_path, text, "greedy = broken_metric:Greedy")
    install_example(site)
    proc = bleucli(site, REF, "-i", HYP, "-m", "greedy")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "metric plugin greedy: its option -lc is already" in proc.stderr


def test_a_plugin_that_cannot_be_imported_is_named(tmp_path) -> None:
    site = _broken(tmp_path, "import not_installed_anywhere\n", "gone = broken_metric:Gone")
    proc = bleucli(site, REF, "-i", HYP, "-m", "gone")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "metric plugin gone (broken_metric:Gone) cannot be loaded" in proc.stderr
