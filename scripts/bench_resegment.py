#!/usr/bin/env python3
"""Time bleucli's resegmentation against the mweralign command on real WMT22 documents.

For each WMT22 XML test set in ../shared/data/wmt22-xml, the first system's output is joined
per document (one line per document, as a document-level or speech system gives it). Both
tools get the same tokens (text pre-tokenised: whitespace words, or characters for Chinese
and Japanese targets, so `mweralign -m none` and `bleucli resegment --tokenize none` align
identical input); they run in fresh processes of the benchmark environment, alternating pair
by pair, and the ratio is the median of the per-pair wall-time ratios. The segments must be
identical or the script fails. The last rows time the whole scoring run
(`bleucli REF -i UNSEGMENTED --docids IDS --resegment -m bleu chrf`) and a whole test set as
one document (no document ids, as a speech system's output).

    python scripts/bench_resegment.py --venv /tmp/benchvenv [--repeats 3] [--write FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the environment, fresh-process runs and the machine line)
from unsegmented_from_xml import extract  # noqa: E402

XML = bench.ROOT.parent / "shared" / "data" / "wmt22-xml"
NO_SPACES = ("zh", "ja")


def prepare(xml: Path, folder: Path) -> dict[str, Path]:
    refs, docids, hyps, _ = extract(str(xml), None)
    target = xml.name.split(".")[1].split("-")[1]

    def tokens(line: str) -> str:
        if target in NO_SPACES:
            return " ".join(c for c in line if not c.isspace())
        return " ".join(line.split())

    documents: dict[str, list[str]] = {}
    for doc, hyp in zip(docids, hyps):
        documents.setdefault(doc, []).append(hyp)
    files = {
        "ref": refs,
        "docids": docids,
        "unseg": [" ".join(lines) for lines in documents.values()],
        "ref.tok": [tokens(line) for line in refs],
        "unseg.tok": [tokens(" ".join(lines)) for lines in documents.values()],
    }
    paths = {}
    for name, lines in files.items():
        path = folder / name
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        paths[name] = path
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--venv", metavar="DIR", help="environment to build and keep")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write", metavar="FILE")
    args = parser.parse_args()
    if not XML.is_dir():
        print(f"bench_resegment: {XML} is missing (the WMT22 XML test sets)", file=sys.stderr)
        return 1
    folder = Path(tempfile.mkdtemp(prefix="bleucli-bench-reseg-"))
    python = bench.make_environment(Path(args.venv) if args.venv else folder / "venv")
    bench.PYTHON = python
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    bench.subprocess.run([*pip, "mweralign==1.4.1"], check=True)
    bindir = python.parent
    mweralign, bleucli = str(bindir / "mweralign"), str(bindir / "bleucli")
    rows: list[tuple[str, int, float | None, float, float | None]] = []
    failures: list[str] = []

    def compare(task: str, n_lines: int, theirs: list[str], ours: list[str], outs) -> None:
        """One row: the two commands alternating; their segments must be the same."""
        result = bench.paired_runs(
            args.repeats,
            lambda: bench.run_command(theirs),
            lambda: bench.run_command(ours),
        )
        segments = [
            [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
            for path in outs
        ]
        if segments[0] != segments[1]:
            failures.append(f"{task}: segments differ from mweralign's")
        rows.append((task, n_lines, result["theirs"], result["ours"], result["wall_ratio"]))
        print(f"  {rows[-1]}", file=sys.stderr)

    for xml in sorted(XML.glob("wmttest2022.*.all.xml")):
        pair = xml.name.split(".")[1]
        work = folder / pair
        work.mkdir()
        paths = prepare(xml, work)
        n_lines = len(paths["ref"].read_text(encoding="utf-8").splitlines())
        n_docs = len(paths["unseg"].read_text(encoding="utf-8").splitlines())
        outs = (work / "mweralign.out", work / "bleucli.out")
        ref, hyp, ids = str(paths["ref.tok"]), str(paths["unseg.tok"]), str(paths["docids"])
        compare(
            f"resegment {pair}, {n_docs} documents (vs mweralign -d)",
            n_lines,
            [mweralign, "-r", ref, "-t", hyp, "-d", ids, "-m", "none", "-o", str(outs[0])],
            [bleucli, "resegment", ref, "-i", hyp, "--docids", ids, "--tokenize", "none"]
            + ["-q", "-o", str(outs[1])],
            outs,
        )
        score = [bleucli, str(paths["ref"]), "-i", str(paths["unseg"]), "--docids", ids]
        score += ["--resegment", "-m", "bleu", "chrf", "-q"]
        walls = [bench.run_command(score)[0] for _ in range(args.repeats)]
        task = f"whole run: score {pair} `--resegment --docids -m bleu chrf`"
        rows.append((task, n_lines, None, statistics.median(walls), None))
        print(f"  {rows[-1]}", file=sys.stderr)
    # one document without ids (a speech system's output of a whole test set): the first set
    first = sorted(XML.glob("wmttest2022.*.all.xml"))[0].name.split(".")[1]
    work = folder / first
    documents = (work / "unseg.tok").read_text(encoding="utf-8").splitlines()
    ref, hyp = work / "ref.tok", work / "unseg.one"
    hyp.write_text(" ".join(documents) + "\n", encoding="utf-8")
    n_lines = len(ref.read_text(encoding="utf-8").splitlines())
    outs = (work / "one.mweralign", work / "one.bleucli")
    compare(
        f"resegment {first}, the whole set as one document (vs mweralign)",
        n_lines,
        [mweralign, "-r", str(ref), "-t", str(hyp), "-m", "none", "-o", str(outs[0])],
        [bleucli, "resegment", str(ref), "-i", str(hyp), "--tokenize", "none", "-q"]
        + ["-o", str(outs[1])],
        outs,
    )
    lines = [
        f"Resegmentation benchmark ({bench.machine()}); {args.repeats} alternating runs, "
        "fresh processes, medians; ratio = mweralign wall / bleucli wall.",
        "",
        "| task | reference lines | mweralign wall (s) | bleucli wall (s) | ratio, wall |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for task, n, theirs_t, ours_t, ratio in rows:
        lines.append(
            f"| {task} | {n} | {'-' if theirs_t is None else f'{theirs_t:.3f}'} | "
            f"{ours_t:.3f} | {'-' if ratio is None else f'{ratio:.2f}x'} |"
        )
    report = "\n".join(lines)
    print(report)
    if args.write:
        Path(args.write).write_text(report + "\n", encoding="utf-8")
    for failure in failures:
        print(f"bench_resegment: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
