"""``bleucli meta-eval`` as a user runs it: both ways in agree, the alignment report, the
refusals and their exit codes, reproducible bytes for any seed and thread count, every
output format, SPA on aligned MQM data."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bleucli.metaeval import readers, spa
from tests.conftest import run_cli, run_subprocess

DATA = Path(__file__).resolve().parent.parent / "data" / "metaeval"
WMT22 = DATA / "wmt22"
SYSTEMS = ["JDExploreAcademy", "Lan-Bridge", "Online-A", "Online-B"]
N = 200


def _head(path: Path, n: int = N) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:n]


@pytest.fixture(scope="module")
def subset(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Four ru-en systems on the first 200 segments, as plain files and as an MTME
    directory holding the same scores."""
    root = tmp_path_factory.mktemp("subset")
    plain, mtme = root / "plain", root / "mtme"
    plain.mkdir()
    human = readers.read_blocks(str(WMT22 / "human-scores" / "ru-en.wmt-z.seg.score"), 2016)
    metric = readers.read_blocks(
        str(WMT22 / "metric-scores" / "ru-en" / "LenRatio-refA.seg.score"), 2016
    )
    ref = _head(WMT22 / "references" / "ru-en.refA.txt")
    (plain / "ref.en").write_text("\n".join(ref) + "\n", encoding="utf-8")
    with (plain / "human.tsv").open("w", encoding="utf-8") as out:
        for system in SYSTEMS:
            for line, score in enumerate(human[system][:N], 1):
                if not np.isnan(score):
                    out.write(f"{system}\t{line}\t{float(score)!r}\n")
    for folder in (
        "sources",
        "references",
        "system-outputs/ru-en",
        "human-scores",
        "metric-scores/ru-en",
    ):
        (mtme / folder).mkdir(parents=True)
    (mtme / "sources" / "ru-en.txt").write_text(
        "\n".join(_head(WMT22 / "sources" / "ru-en.txt")) + "\n", encoding="utf-8"
    )
    (mtme / "references" / "ru-en.refA.txt").write_text("\n".join(ref) + "\n", encoding="utf-8")
    seg_h, seg_m, sys_m = [], [], []
    for system in SYSTEMS:
        lines = _head(WMT22 / "system-outputs" / "ru-en" / f"{system}.txt")
        for target in (plain / f"{system}.en", mtme / "system-outputs" / "ru-en" / f"{system}.txt"):
            target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        scores = metric[system][:N]
        (plain / f"{system}.lenratio").write_text("".join(f"{float(v)!r}\n" for v in scores))
        seg_h += [
            f"{system}\t{'None' if np.isnan(v) else repr(float(v))}\n" for v in human[system][:N]
        ]
        seg_m += [f"{system}\t{float(v)!r}\n" for v in scores]
        sys_m.append(f"{system}\t{float(scores.mean())!r}\n")
    (mtme / "human-scores" / "ru-en.wmt-z.seg.score").write_text("".join(seg_h))
    (mtme / "metric-scores" / "ru-en" / "LenRatio-refA.seg.score").write_text("".join(seg_m))
    (mtme / "metric-scores" / "ru-en" / "LenRatio-refA.sys.score").write_text("".join(sys_m))
    return {"plain": plain, "mtme": mtme}


def _plain_args(subset: dict[str, Path], *extra: str) -> list[str]:
    plain = subset["plain"]
    return [
        "meta-eval", str(plain / "ref.en"), "-i", *(str(plain / f"{s}.en") for s in SYSTEMS),
        "--human", str(plain / "human.tsv"),
        "--segment-scores", "LenRatio=" + ",".join(str(plain / f"{s}.lenratio") for s in SYSTEMS),
        *extra,
    ]  # fmt: skip


def _tables(document: dict) -> dict:
    return {
        s["statistic"]: (s["rows"], s["p_values"], s["counted"]) for s in document["statistics"]
    }


def test_plain_files_and_mtme_directory_agree(subset) -> None:
    stats = ["--stat", "sys-pearson", "sys-accuracy", "seg-pearson-item", "seg-kendall-none",
             "seg-acc-t-item", "-k", "200", "-f", "json"]  # fmt: skip
    plain = run_cli(_plain_args(subset, *stats))
    mtme = run_cli(["meta-eval", "--mtme", str(subset["mtme"]), "-l", "ru-en", *stats])
    assert plain.exit_code == 0, plain.stderr
    assert mtme.exit_code == 0, mtme.stderr
    a, b = json.loads(plain.stdout), json.loads(mtme.stdout)
    assert a["systems"] == b["systems"] == SYSTEMS
    assert set(a["metrics"]) == {"BLEU", "chrF2", "-TER", "LenRatio"}
    assert _tables(a) == _tables(b)
    assert a["human"]["name"] == "tsv" and b["human"]["name"] == "wmt-z"


def test_alignment_report_names_what_does_not_line_up(subset, tmp_path: Path) -> None:
    result = run_cli(_plain_args(subset, "--stat", "sys-pearson", "-k", "0"))
    assert result.exit_code == 0
    first = result.stderr.splitlines()[0]
    assert re.fullmatch(
        r"bleucli: meta-eval: 4 systems x 200 segments; human scores \(tsv\) for [\d,]+ of 800 "
        r"entries \([\d.]+%\), \d+-\d+ segments per system",
        first,
    ), first
    # a human file with one system too few, one too many, and a line no system is rated on
    lines = (subset["plain"] / "human.tsv").read_text().splitlines()
    kept = [x for x in lines if not x.startswith("Online-B\t") and x.split("\t")[1] != "7"]
    kept.append("Someone-Else\t1\t0.5")
    human = tmp_path / "partial.tsv"
    human.write_text("\n".join(kept) + "\n")
    args = [a if not a.endswith("human.tsv") else str(human) for a in _plain_args(subset)]
    refused = run_cli([*args, "--stat", "sys-pearson", "-k", "0"])
    assert refused.exit_code == 1
    assert refused.stderr.strip() == (
        f"bleucli: error: {human}: no human score for system(s) Online-B; add them, or leave "
        "them out with --allow-missing"
    )
    allowed = run_cli([*args, "--stat", "sys-pearson", "-k", "0", "--allow-missing", "-f", "json"])
    assert allowed.exit_code == 0, allowed.stderr
    assert json.loads(allowed.stdout)["systems"] == [s for s in SYSTEMS if s != "Online-B"]
    report = allowed.stderr
    assert "human scores for 1 system(s) without an output, not used: Someone-Else" in report
    assert "no human score, left out (--allow-missing): Online-B" in report
    assert re.search(
        r"\d+ segment\(s\) rated for no system, left out of segment-level statistics: line\(s\) .*\b7\b",
        report,
    )
    quiet = run_cli([*args, "--stat", "sys-pearson", "-k", "0", "--allow-missing", "-q"])
    assert quiet.stderr == ""


@pytest.mark.parametrize(
    ("change", "code", "message"),
    [
        ("segment", 1, r"human\.tsv:\d+: segment 201 is outside the 200 lines of the references"),
        ("lines", 1, r"Online-A\.en: 199 lines, but .*ref\.en has 200"),
        ("stat", 2, r"--stat: unknown statistic 'seg-spearman-item'"),
        (
            "mix",
            2,
            r"--mtme reads the outputs, references, sources and human scores from the "
            r"directory",
        ),
        ("scores", 1, r"Online-A\.lenratio: 199 scores for 200 segments"),
    ],
)
def test_refusals_are_one_line_with_exit_codes(subset, tmp_path, change, code, message) -> None:
    work = tmp_path / "plain"
    shutil.copytree(subset["plain"], work)
    args = [a.replace(str(subset["plain"]), str(work)) for a in _plain_args(subset, "-k", "0")]
    if change == "segment":
        with (work / "human.tsv").open("a") as out:
            out.write("Online-A\t201\t0.3\n")
    if change == "lines":
        (work / "Online-A.en").write_text("\n".join(_head(work / "Online-A.en", 199)) + "\n")
    if change == "stat":
        args += ["--stat", "seg-spearman-item"]
    if change == "mix":
        args += ["--mtme", str(subset["mtme"]), "-l", "ru-en"]
    if change == "scores":
        (work / "Online-A.lenratio").write_text(
            "\n".join(_head(work / "Online-A.lenratio", 199)) + "\n"
        )
    proc = run_subprocess(args[:1] + args[1:])
    stderr = proc.stderr.decode()
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr
    error_lines = [x for x in stderr.splitlines() if "meta-eval:" not in x or "error" in x]
    assert len(error_lines) <= 3 and re.search(message, stderr), stderr


def test_same_seed_same_bytes_for_any_thread_count(subset) -> None:
    args = _plain_args(subset, "--stat", "sys-kendall", "seg-pearson-none", "seg-kendall-item",
                       "seg-acc-t-item", "-k", "300", "-f", "json", "-q")  # fmt: skip
    outputs = [run_cli([*args, "-j", str(j)]).stdout for j in (1, 3, 1)]
    assert outputs[0] == outputs[1] == outputs[2]
    other = run_cli([*args, "--seed", "2"]).stdout
    assert (
        json.loads(other)["statistics"][1]["p_values"]
        != json.loads(outputs[0])["statistics"][1]["p_values"]
    )
    process = run_subprocess([*args, "-j", "2"])
    assert process.stdout.decode().strip() == outputs[0].strip()


def test_output_formats(subset, tmp_path) -> None:
    stats = ["--stat", "sys-pearson", "seg-acc-t-item", "-k", "100", "-q"]
    text = run_cli(_plain_args(subset, *stats)).stdout
    assert (
        "seg-acc-t-item: pairwise accuracy with tie calibration (acc23), averaged over items"
        in text
    )
    assert (
        "stat:seg-acc-t-item|human:tsv|test:pairs|k:100|block:100|seed:1|rng:bleucli|alpha:0.05|eps:opt|version:bleucli-"
        in text
    )
    assert "epsilon" in text and "-TER: nrefs:1|case:lc|tok:tercom" in text
    markdown = run_cli(_plain_args(subset, *stats, "-f", "markdown")).stdout
    assert "### sys-pearson" in markdown and "| Cluster" in markdown
    tsv = run_cli(_plain_args(subset, *stats, "-f", "tsv")).stdout.splitlines()
    assert tsv[0].split("\t") == ["statistic", "Cluster", "Metric", "Value", "p vs best"]
    assert sum(line.startswith("sys-pearson\t") for line in tsv) == 4
    latex = run_cli(_plain_args(subset, *stats, "-f", "latex")).stdout
    assert "\\toprule" in latex and "\\texttt{stat:sys-pearson|\\allowbreak{}" in latex
    if shutil.which("pdflatex"):
        (tmp_path / "t.tex").write_text(
            "\\documentclass{article}\\usepackage[utf8]{inputenc}\\usepackage{booktabs}"
            f"\\begin{{document}}\n{latex}\n\\end{{document}}\n",
            encoding="utf-8",
        )
        proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-2000:]
    document = json.loads(run_cli(_plain_args(subset, *stats, "-f", "json")).stdout)
    acc = document["statistics"][1]
    assert acc["test"] == "pairs" and all("epsilon" in row for row in acc["rows"])
    best = acc["rows"][0]["metric"]
    for row in acc["rows"][1:]:
        assert row["p_best"] == acc["p_values"][best][row["metric"]]
    assert document["significance"]["resamples"] == 100


def test_wmt_da_file_with_numbered_systems(subset) -> None:
    """WMT's raw DA file names systems Online-A.1 ...; plain files reach the same numbers as
    the MTME release of the same judgements."""
    outputs = WMT22 / "system-outputs" / "ru-en"
    systems = ["Online-A", "Online-B", "Online-G", "SRPOL"]
    common = [
        "-m",
        "bleu",
        "--stat",
        "sys-pearson",
        "seg-pearson-none",
        "seg-kendall-item",
        "-k",
        "0",
        "-f",
        "json",
        "-q",
    ]
    plain = run_cli(["meta-eval", str(WMT22 / "references" / "ru-en.refA.txt"),
                     "-i", *(f"{s}={outputs / s}.txt" for s in systems),
                     "--human", str(DATA / "ad-seg-scores-ru-en.csv"), "--human-field", "z", *common])  # fmt: skip
    assert plain.exit_code == 0, plain.stderr
    human = readers.read_blocks(str(WMT22 / "human-scores" / "ru-en.wmt-z.seg.score"), 2016)
    direct = {s: human[s] for s in systems}
    values = {s["statistic"]: s["rows"][0]["value"] for s in json.loads(plain.stdout)["statistics"]}
    assert json.loads(plain.stdout)["systems"] == systems
    gold = np.vstack([direct[s] for s in systems])
    means = np.nanmean(gold, axis=1)
    from bleucli import BLEU

    refs = _head(WMT22 / "references" / "ru-en.refA.txt", 2016)
    bleu = [BLEU().corpus_score(_head(outputs / f"{s}.txt", 2016), [refs]).score for s in systems]
    assert values["sys-pearson"] == pytest.approx(np.corrcoef(means, bleu)[0, 1], abs=1e-9)


def _mqm_plain(tmp_path: Path) -> list[str]:
    """The MQM subset as plain files: outputs are the rated targets (error marks removed),
    references the human translation's."""
    targets: dict[str, dict[int, str]] = {}
    rows = (DATA / "mqm_ted_ende.first40.tsv").read_text(encoding="utf-8").splitlines()[1:]
    for row in rows:
        fields = row.split("\t")
        targets.setdefault(fields[0], {})[int(fields[3])] = re.sub(r"</?v>", "", fields[6])
    for system, lines in targets.items():
        (tmp_path / f"{system}.de").write_text("\n".join(lines[i] for i in range(1, 41)) + "\n")
    systems = sorted(s for s in targets if s != "ref")
    return ["meta-eval", str(tmp_path / "ref.de"), "-i", *(str(tmp_path / f"{s}.de") for s in systems),
            "--human", str(DATA / "mqm_ted_ende.first40.tsv"), "-m", "chrf", "bleu"]  # fmt: skip


def test_spa_on_aligned_mqm_and_left_out_on_da(subset, tmp_path) -> None:
    args = _mqm_plain(tmp_path)
    result = run_cli([*args, "-k", "20", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    names = [s["statistic"] for s in document["statistics"]]
    assert "sys-spa" in names and "seg-acc-t-item" in names
    spa_rows = {
        row["metric"]: row["value"]
        for row in document["statistics"][names.index("sys-spa")]["rows"]
    }
    # the same value from the library on the matrices the command built
    human = readers.read_human(str(DATA / "mqm_ted_ende.first40.tsv"), "mqm", 40)
    systems = document["systems"]
    gold = np.vstack([human.seg[s] for s in systems])
    from bleucli.batch import sentence_scores

    refs = [(tmp_path / "ref.de").read_text().splitlines()]
    chrf = np.vstack(
        [
            sentence_scores("chrf", (tmp_path / f"{s}.de").read_text().splitlines(), refs)
            for s in systems
        ]
    )
    assert spa_rows["chrF2"] == pytest.approx(
        float(spa.soft_pairwise_accuracy(gold, chrf)), abs=1e-12
    )
    # MQM's many tied scores: acc-t calibrates a positive epsilon
    acc = document["statistics"][names.index("seg-acc-t-item")]["rows"]
    assert any(row["epsilon"] > 0 for row in acc)
    da = run_cli(_plain_args(subset, "-k", "0", "-f", "json", "-q"))
    notes = json.loads(da.stdout)["notes"]
    assert any(
        n.startswith("sys-spa left out: sys-spa needs every system rated on the same segments")
        for n in notes
    )
    assert not any("leave it out" in n for n in notes)  # it is left out already
    asked = run_cli(_plain_args(subset, "-k", "0", "--stat", "sys-spa"))
    assert (
        asked.exit_code == 1
        and "sys-spa needs every system rated on the same segments" in asked.stderr
    )


def test_other_human_scores_as_rows(tmp_path) -> None:
    """--human-rows: WMT's raw DA scores as a row against the z-scores (the agreement of two
    scorings of the same judgements), equal to correlating the two human matrices."""
    from bleucli.metaeval.groups import grouping
    from bleucli.metaeval.stats import Correlation

    args = ["meta-eval", "--mtme", str(WMT22), "-l", "ru-en", "--human-name", "wmt-z",
            "--human-rows", "-m", "bleu", "--stat", "seg-pearson-item", "-k", "0", "-f", "json", "-q"]  # fmt: skip
    result = run_cli(args)
    assert result.exit_code == 0, result.stderr
    rows = {r["metric"]: r["value"] for r in json.loads(result.stdout)["statistics"][0]["rows"]}
    z = readers.read_blocks(str(WMT22 / "human-scores" / "ru-en.wmt-z.seg.score"), 2016)
    raw = readers.read_blocks(str(WMT22 / "human-scores" / "ru-en.wmt-raw.seg.score"), 2016)
    gold = np.vstack([z[s] for s in sorted(z)])
    other = np.vstack([raw[s] for s in sorted(z)])
    groups = grouping(~np.isnan(gold), "item")
    want = Correlation("pearson", groups, groups.take(gold))(groups.take(other))[0]
    assert rows["human:wmt-raw"] == pytest.approx(want, abs=1e-12)
    # a kind of human score that leaves out an entry the gold scores rate cannot be a row
    root = tmp_path / "wmt22"
    shutil.copytree(WMT22, root)
    path = root / "human-scores" / "ru-en.wmt-raw.seg.score"
    lines = path.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if not line.endswith("None"))
    lines[first] = lines[first].rsplit("\t", 1)[0] + "\tNone"
    path.write_text("\n".join(lines) + "\n")
    refused = run_cli([a if a != str(WMT22) else str(root) for a in args])
    assert refused.exit_code == 1
    assert "--human-rows: wmt-raw has no score for ALMAnaCH-Inria, line" in refused.stderr


def test_benchmark_script_times_bleucli_on_prepared_vectors(tmp_path) -> None:
    """scripts/bench_metaeval.py's bleucli side runs on the vectors it prepares (its MTME
    side needs an MTME checkout, which the tests do not have)."""
    import importlib.util

    from tests.conftest import ROOT

    spec = importlib.util.spec_from_file_location(
        "bench_metaeval", ROOT / "scripts" / "bench_metaeval.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    vectors = tmp_path / "vectors.json"
    bench.prepare(str(WMT22), vectors)
    loaded = json.loads(vectors.read_text())
    assert loaded["systems"] and set(loaded["metrics"]) == {"BLEU", "chrF2", "-TER", "LenRatio"}
    assert len(loaded["gold_seg"]) == 10 * 2016
    assert bench.time_bleucli("acc-t", loaded, 0) > 0
    assert bench.time_bleucli("significance", loaded, 0) > 0


def test_wmt_named_metrics_and_bleuclis_own_side_by_side() -> None:
    """WMT's directories ship BLEU-refA and chrF-refA: evaluated beside bleucli's own BLEU,
    chrF and TER, the own one renamed where a name is taken (the example directory is laid
    out like WMT's)."""
    import json

    from tests.conftest import EXAMPLES, run_cli

    result = run_cli(["meta-eval", "--mtme", str(EXAMPLES / "meta-eval" / "wmt22-ru-en"), "-l", "ru-en",
                      "--stat", "sys-pearson", "seg-kendall-item", "-k", "0", "-f", "json"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "BLEU: the directory's scores" in result.stderr and "BLEU[bleucli]" in result.stderr
    document = json.loads(result.stdout)
    for table in document["statistics"]:
        values = {row["metric"]: row["value"] for row in table["rows"]}
        assert {"BLEU", "BLEU[bleucli]", "chrF", "chrF2", "-TER", "LenRatio"} <= set(values)
        assert values["BLEU"] == pytest.approx(values["BLEU[bleucli]"], abs=1e-12)  # SacreBLEU's
        assert values["chrF"] == pytest.approx(values["chrF2"], abs=1e-12)
    chosen = run_cli(["meta-eval", "--mtme", str(EXAMPLES / "meta-eval" / "wmt22-ru-en"), "-l", "ru-en",
                      "-m", "chrf", "--stat", "sys-pearson", "-k", "0", "-f", "json"])  # fmt: skip
    rows = json.loads(chosen.stdout)["statistics"][0]["rows"]
    assert {row["metric"] for row in rows} == {"BLEU", "chrF", "chrF2", "LenRatio"}  # -m: only chrF


def test_wmts_standard_human_scores_are_the_default_and_named() -> None:
    """The plainest run on WMT's own directory: no --human-name, the standard scores of
    mt-metrics-eval (WMT19-21 DA: z-scores for systems, raw scores for segments), said in
    the report and the signature, with MTME's numbers for those scores."""
    oracle = json.loads((DATA / "mtme-oracle.json").read_text())["real"]["ru-en"]["human"]
    result = run_subprocess(["meta-eval", "--mtme", str(WMT22), "-l", "ru-en", "--stat",
                             "sys-pearson", "seg-pearson-none", "-k", "0", "-f", "json"])  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()[-500:]
    stderr = result.stderr.decode()
    assert "WMT's standard ones for ru-en (mt-metrics-eval's): wmt-z at system level, " \
        "wmt-raw at segment level" in stderr  # fmt: skip
    # piped (no progress bar): a line per finished statistic, counted
    assert "meta-eval: 1 of 2: sys-pearson done in" in stderr
    assert "meta-eval: 2 of 2: seg-pearson-none done in" in stderr
    document = json.loads(result.stdout)
    values = {s["statistic"]: {r["metric"]: r["value"] for r in s["rows"]}
              for s in document["statistics"]}  # fmt: skip
    sys_expected = oracle["wmt-z"]["stats"]["mt"]["bleu"]["sys"]["pearson"]
    seg_expected = oracle["wmt-raw"]["stats"]["mt"]["bleu"]["seg"]["pearson"]["none"]
    assert values["sys-pearson"]["BLEU"] == pytest.approx(sys_expected, abs=1e-12)
    assert values["seg-pearson-none"]["BLEU"] == pytest.approx(seg_expected, abs=1e-12)
    assert "human:wmt-z/wmt-raw" in json.dumps(document)


def test_segment_scores_take_name_colon_file_and_threads_is_jobs(subset) -> None:
    plain = subset["plain"]
    files = ",".join(str(plain / f"{s}.lenratio") for s in SYSTEMS)
    args = _plain_args(subset, "-k", "0", "-f", "json", "-q", "--stat", "sys-pearson")
    colon = [a.replace("LenRatio=", "LenRatio:") for a in args]
    assert f"LenRatio:{files}" in colon
    first, second = run_cli(args), run_cli(colon)
    assert first.exit_code == second.exit_code == 0, second.stderr
    assert json.loads(first.stdout) == json.loads(second.stdout)
    threads = run_cli([*args, "--threads", "2"])
    assert threads.exit_code == 0 and "--threads is deprecated" in threads.stderr
    assert json.loads(threads.stdout) == json.loads(run_cli([*args, "-j", "2"]).stdout)
