"""Renderers for results: SacreBLEU-compatible text and JSON, and multi-system tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bleucli.metrics.base import Score
from bleucli.precision import Precision, decimals, rounded, shown
from bleucli.results import Result


def single_system(
    results: Sequence[Result],
    fmt: str,
    width: int | Precision,
    score_only: bool,
    short: bool,
    system: str | None = None,
) -> str:
    """One system, one or more metrics: SacreBLEU's JSON objects or '='-aligned text lines
    (``width``: an int for every metric alike, or each metric's own :class:`Precision`).
    ``system``: a name the user gave it (``-i NAME=FILE``), kept in the JSON (``"system"``;
    an unnamed file's JSON stays SacreBLEU's)."""
    is_json = fmt == "json"
    lines = [
        r.score.format(
            width if isinstance(width, int) else decimals(width, r.score.name),
            score_only,
            r.short_signature if short and not is_json else r.signature,
            is_json,
        )
        for r in results
    ]
    if is_json and system is not None and not score_only:
        lines = [
            json.dumps({"system": system, **json.loads(line)}, indent=1, ensure_ascii=False)
            for line in lines
        ]
    if is_json:
        return lines[0] if len(lines) == 1 else "[\n" + ",\n".join(lines) + "\n]"
    if len(lines) == 1 or score_only:
        return "\n".join(lines)
    split_at = [line.index(" = ") for line in lines]
    pad = max(split_at)
    return "\n".join(f"{line[:cut]:>{pad}}{line[cut:]}" for line, cut in zip(lines, split_at))


TABLE_FORMATS = {
    "text": "fancy_grid",
    "latex": "latex_booktabs",
    "markdown": "pipe",  # GitHub's tables with alignment rows (---:), as renderers read them
    "tsv": "tsv",
    "html": "html",
}

#: Symbols tabulate would print as-is but pdflatex cannot typeset from UTF-8 input: they go
#: through tabulate as runs of a private-use character (left alone by its LaTeX escaping), as
#: long as the math-mode command that replaces them, so columns line up in the source; a
#: private-use character is one column wide with or without the optional ``wcwidth``
#: (control characters measured -1 with it, and the table's spacing changed with the
#: environment).
_LATEX_SYMBOLS = {"μ": ("\ue000" * 5, "$\\mu$"), "±": ("\ue001" * 5, "$\\pm$")}


def table(
    rows: list[list[str]],
    headers: list[str],
    fmt: str,
    kinds: Sequence[str] | None = None,
    **options: Any,
) -> str:
    """A tabulate table in ``fmt`` that pastes into its target: LaTeX with its special
    characters escaped and μ/± as math symbols, HTML with every cell escaped.

    ``kinds`` ("text" or "number" per column) aligns every format but text the one way:
    names left, numbers right (LaTeX ``{lrr}``); text keeps the ``options`` given (the
    scoring command's tables look as SacreBLEU's)."""
    from tabulate import tabulate

    if kinds is not None and fmt != "text":
        options = {
            key: value
            for key, value in options.items()
            if key not in ("colalign", "stralign", "numalign")
        }
        options["colalign"] = tuple("left" if kind == "text" else "right" for kind in kinds)

    if fmt == "latex":

        def protect(text: str) -> str:
            for symbol, (mark, _) in _LATEX_SYMBOLS.items():
                text = text.replace(symbol, mark)
            return text

        rows = [[protect(str(c)) for c in row] for row in rows]
        headers = [protect(h) for h in headers]
    rendered = tabulate(
        rows,
        headers=headers,
        tablefmt=TABLE_FORMATS.get(fmt, "fancy_grid"),
        disable_numparse=True,
        **options,
    )
    if fmt == "latex":
        for mark, command in _LATEX_SYMBOLS.values():
            rendered = rendered.replace(mark, command)
    return rendered


def notes(title: str, items: list[str], fmt: str, remarks: Sequence[str] = ()) -> str:
    """A titled list under a table (signatures, legends), in the table's own syntax:
    LaTeX comments, a Markdown list with code spans, an HTML list, TSV ``#`` lines."""
    import html

    if fmt == "latex":
        return latex_note(title, items, remarks)
    if fmt == "tsv":
        return "\n".join(
            [*(f"# {r}" for r in remarks), f"# {title}", *(f"# {item}" for item in items)]
        )
    if fmt == "markdown":

        def code(item: str) -> str:
            label, sep, value = item.partition(": ")
            value = value.replace("`", "'")
            return f"- {label}: `{value}`" if sep else f"- `{item}`"

        return "\n".join(
            ["", *(f"{markdown_text(r)}\n" for r in remarks), f"**{title}**", "",
             *(code(item) for item in items)]
        )  # fmt: skip
    if fmt == "html":
        return "\n".join(
            [
                *(f"<p>{html.escape(r)}</p>" for r in remarks),
                f"<p>{html.escape(title)}</p>",
                "<ul>",
                *(f"<li><code>{html.escape(item)}</code></li>" for item in items),
                "</ul>",
            ]
        )
    return "\n".join(
        ["", *remarks, *([""] if remarks else []), title, *(f" - {item}" for item in items)]
    )


def markdown_text(text: str) -> str:
    """A remark as Markdown prose: a leading ``*``, ``-`` or ``+`` would start a list."""
    return "\\" + text if text[:1] in ("*", "-", "+") else text


_LATEX_ESCAPES = {
    "\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#",
    "_": "\\_", "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}", "<=": "$\\le$", ">=": "$\\ge$", "<": "$<$", ">": "$>$",
    "μ": "$\\mu$", "±": "$\\pm$",
    "|": "\\textbar{}",
}  # fmt: skip


def latex_text(text: str, typewriter: bool = False) -> str:
    """Text for a LaTeX document, special characters escaped; in ``typewriter`` (a
    signature in ``\\texttt``, whose font has ``|``) a line may break after each ``|``."""
    import re

    escapes = {**_LATEX_ESCAPES, "|": "|\\allowbreak{}"} if typewriter else _LATEX_ESCAPES
    pattern = re.compile("|".join(re.escape(key) for key in sorted(escapes, key=len, reverse=True)))
    return pattern.sub(lambda match: escapes[match.group(0)], text)


def latex_note(title: str, items: Sequence[str], remarks: Sequence[str] = ()) -> str:
    """The legend and signatures under a LaTeX table as a note the PDF shows (small type,
    signatures in typewriter), not as comments: paste it below the tabular, inside or
    outside a table environment, or keep it for the caption."""
    lines = ["\\par\\smallskip", "{\\footnotesize"]
    lines += [latex_text(r) + "\\\\" for r in remarks]
    lines.append(latex_text(title) + ":\\\\")
    for item in items:
        label, sep, value = item.partition(": ")
        if sep:
            lines.append(f"{latex_text(label)}: \\texttt{{{latex_text(value, True)}}}\\\\")
        else:
            lines.append(f"\\texttt{{{latex_text(item, True)}}}\\\\")
    lines.append("}")
    return "\n".join(lines)


SIGNATURES_TITLE = "Metric signatures"


def signature_list(items: Sequence[str], fmt: str, remarks: Sequence[str] = ()) -> str:
    """The one layout of a signature list under a table, in every command: in text
    SacreBLEU's (a dashed heading, ``' - NAME       SIGNATURE'``), elsewhere the table's own
    syntax (:func:`notes`). ``items`` are ``"NAME: SIGNATURE"``."""
    if fmt != "text":
        return notes(SIGNATURES_TITLE, list(items), fmt, remarks)
    lines = ["", *remarks, *([""] if remarks else [])]
    rule = "-" * len(SIGNATURES_TITLE)
    lines += [rule, SIGNATURES_TITLE, rule]
    for item in items:
        name, sep, signature = item.partition(": ")
        lines.append(f" - {name:<10} {signature}" if sep else f" - {item}")
    return "\n".join(lines)


#: Formats a reader sees as a table in a paper or page: systems go by their display names
#: there (text and JSON keep SacreBLEU's naming: the path as given).
DISPLAY_FORMATS = ("html", "latex", "markdown")


def shown_names(
    names: Sequence[str], fmt: str, explicit: Sequence[bool] | None = None
) -> tuple[dict[str, str], str]:
    """(name -> what a table calls it, the list of files to print once under it): in
    html, LaTeX and Markdown the short display names of :mod:`bleucli.analysis.names`
    (``Online-A`` for ``outputs/uk-en/runs/sys.Online-A.de``), elsewhere the names as given."""
    if fmt not in DISPLAY_FORMATS:
        return {name: name for name in names}, ""
    from bleucli.analysis.names import display_names

    shown = dict(zip(names, display_names(list(names), explicit)))
    changed = [f"{short}: {name}" for name, short in shown.items() if short != name]
    return shown, (notes("Systems", changed, fmt) + "\n") if changed else ""


def multi_system(results: Sequence[Result], fmt: str, width: int | Precision, short: bool) -> str:
    """Several systems: a table of scores (systems x metrics) and the metric signatures."""
    systems: list[str] = []
    metrics: list[str] = []
    cells: dict[tuple[str, str], Score] = {}
    signatures: dict[str, str] = {}
    for r in results:
        if r.system not in systems:
            systems.append(r.system)
        if r.score.name not in metrics:
            metrics.append(r.score.name)
        cells[r.system, r.score.name] = r.score
        signatures[r.score.name] = r.short_signature if short else r.signature
    if fmt == "json":
        rows = [
            {
                "system": system,
                **{
                    m: shown(cells[system, m].score, decimals(width, m))
                    for m in metrics
                    if (system, m) in cells
                },
            }
            for system in systems
        ]
        return json.dumps(rows, indent=4, ensure_ascii=False)
    rendered = table(
        [
            [system, *(shown(cells[system, m].score, decimals(width, m)) for m in metrics)]
            for system in systems
        ],
        ["System", *metrics],
        fmt,
        ["text", *(["number"] * len(metrics))],
        colalign=("right",),
        stralign="center",
        numalign="center",
    )
    items = [f"{name}: {sig}" for name, sig in signatures.items()]
    return rendered + "\n" + signature_list(items, fmt)


def paired_table(
    systems: Sequence[str],
    results: dict,
    signatures: dict[str, str],
    fmt: str,
    width: int | Precision,
    test: str,
    n_samples: int,
    json_layout: str = "sacrebleu",
    explicit: Sequence[bool] | None = None,
) -> str:
    """Systems x metrics with p-values against the baseline (first row), and a legend.

    JSON is SacreBLEU's list of ``{"system", METRIC: {"score", "p_value", "mean", "ci"}}`` in
    full precision, or with ``json_layout="bleucli"`` a document that also records the test,
    the samples, significance flags and the signatures (rounded to ``width``).

    A cell is ``score`` (bootstrap: ``score (mean ± half-interval)``) and ``(p = ...)``;
    ``*`` marks p <= 0.05, a difference unlikely to be chance.
    """
    names = [f"Baseline: {systems[0]}", *systems[1:]]
    if fmt == "json" and json_layout == "sacrebleu":
        # SacreBLEU's layout: a list of systems, each metric's result object in full precision
        def number(value: Any) -> float | None:
            return None if value is None else float(value)

        return json.dumps(
            [
                {
                    "system": system,
                    **{
                        metric: {
                            "score": number(per_system[i].score),
                            "p_value": number(per_system[i].p_value),
                            "mean": number(per_system[i].mean),
                            "ci": number(per_system[i].ci),
                        }
                        for metric, per_system in results.items()
                    },
                }
                for i, system in enumerate(names)
            ],
            indent=4,
            ensure_ascii=False,
        )
    if fmt == "json":
        rows = []
        for i, system in enumerate(names):
            row: dict[str, Any] = {"system": system}
            for metric, per_system in results.items():
                r = per_system[i]
                places = decimals(width, metric)
                row[metric] = {
                    "score": rounded(r.score, places),
                    "p_value": None if r.p_value is None else float(r.p_value),
                    "mean": None if r.mean is None else rounded(r.mean, places),
                    "ci": None if r.ci is None else rounded(r.ci, places),
                    "significant": r.p_value is not None and r.p_value <= 0.05,
                }
            rows.append(row)
        return json.dumps(
            {"test": test, "samples": n_samples, "systems": rows, "signatures": signatures},
            indent=1,
            ensure_ascii=False,
        )
    labels, files = shown_names(systems, fmt, explicit)
    names = [f"Baseline: {labels[systems[0]]}", *(labels[name] for name in systems[1:])]
    separator = "\n" if fmt == "text" else " "
    headers = ["System"]
    columns = []
    for metric, per_system in results.items():
        bootstrap = any(r.mean is not None for r in per_system)
        headers.append(f"{metric} (μ ± 95% CI)" if bootstrap else metric)
        cells = []
        places = decimals(width, metric)
        for r in per_system:
            cell = shown(r.score, places)
            if r.mean is not None:
                cell += f" ({shown(r.mean, places)} ± {shown(r.ci, places)})"
            if r.p_value is not None:
                cell += f"{separator}(p = {r.p_value:.4f})" + ("*" if r.p_value <= 0.05 else "")
            cells.append(cell)
        columns.append(cells)
    rendered = table(
        [[name, *row] for name, row in zip(names, zip(*columns))],
        headers,
        fmt,
        ["text", *(["number"] * len(columns))],
        colalign=("right",),
        stralign="center",
    )
    kind = "paired bootstrap resampling" if test == "bs" else "approximate randomization"
    remarks = [
        f"{kind.capitalize()} test, {n_samples} samples; every system against the baseline.",
        "* p <= 0.05: the difference to the baseline is unlikely to be due to chance "
        "(it says nothing about which system is better).",
    ]
    items = [f"{name}: {sig}" for name, sig in signatures.items()]
    return rendered + "\n" + files + signature_list(items, fmt, remarks)


def sentence_header(names: Sequence[str], signatures: dict[str, str], fmt: str) -> str:
    """What precedes per-sentence TSV rows: the signatures as ``#`` lines and the column
    names (``line``, ``system``, then one column per metric). Other formats carry the
    signatures on every line."""
    if fmt != "tsv":
        return ""
    comments = [f"# {name}: {signatures[key]}" for key, name in zip(signatures, names)]
    return "\n".join([*comments, "\t".join(["line", "system", *names])])


def sentence_rows(
    scores: dict[str, list[Score]],
    signatures: dict[str, str],
    fmt: str,
    width: int | Precision,
    score_only: bool,
    first_line: int,
    system: str = "",
    numbered: bool = False,
) -> str:
    """Per-sentence results, each line carrying its sentence number and signature:
    SacreBLEU's text lines (metrics tab-separated; with ``numbered``, for several systems,
    prefixed by system and line number), JSON lines (``{"line": n, "system": ..., "BLEU":
    ..., "signatures": {...}}``) or TSV rows under :func:`sentence_header`."""
    names = list(scores)
    rows = list(zip(*scores.values()))
    if fmt == "json":
        by_name = {}
        for name in names:
            if scores[name]:
                by_name[scores[name][0].name] = signatures[name]
        return "\n".join(
            json.dumps(
                {
                    "line": first_line + i,
                    "system": system,
                    **{s.name: rounded(s.score, decimals(width, s.name)) for s in row},
                    **{
                        f"{s.name} error_spans": s.error_spans
                        for s in row
                        if getattr(s, "error_spans", None) is not None
                    },
                    "signatures": by_name,
                },
                ensure_ascii=False,
            )
            for i, row in enumerate(rows)
        )
    if fmt == "tsv":
        return "\n".join(
            "\t".join(
                [
                    str(first_line + i),
                    system,
                    *(shown(s.score, decimals(width, s.name)) for s in row),
                ]
            )
            for i, row in enumerate(rows)
        )
    prefix = (lambda i: f"{system}\t{first_line + i}\t") if numbered else (lambda i: "")
    return "\n".join(
        prefix(i)
        + "\t".join(
            s.format(decimals(width, s.name), score_only, signatures[name])
            for name, s in zip(names, row)
        )
        for i, row in enumerate(rows)
    )


def rank_table(
    rankings: Sequence[Any],
    fmt: str,
    width: int | Precision,
    test: str,
    n_samples: int,
    explicit: dict[str, bool] | None = None,
) -> str:
    """``--rank``: per metric, systems best first with cluster, rank range, score and
    interval; JSON adds every pair's raw and Holm-corrected p-value."""
    from bleucli.stats.ranking import ALPHA

    kind = "paired bootstrap" if test == "bs" else "approximate randomisation"
    if fmt == "json":
        per_metric: dict[str, Any] = {}
        document = {
            "test": test,
            "samples": n_samples,
            "correction": "holm",
            "alpha": ALPHA,
            "metrics": per_metric,
        }
        for ranking in rankings:
            per_metric[ranking.metric] = {
                "signature": ranking.signature,
                "higher_is_better": ranking.higher_is_better,
                "systems": [
                    {
                        "system": s.name,
                        "position": s.position,
                        "cluster": s.cluster,
                        "score": s.score,
                        "mean": s.mean,
                        "ci": s.ci,
                        "rank_range": [s.rank_low, s.rank_high],
                    }
                    for s in ranking.systems
                ],
                "pairs": [
                    {
                        "systems": list(pair),
                        "p_value": p,
                        "p_holm": ranking.corrected[pair],
                        "significant": ranking.corrected[pair] < ALPHA,
                    }
                    for pair, p in ranking.p_values.items()
                ],
            }
        return json.dumps(document, indent=1, ensure_ascii=False)
    parts = []
    every = list(dict.fromkeys(s.name for ranking in rankings for s in ranking.systems))
    flags = [bool((explicit or {}).get(name)) for name in every]
    labels, files = shown_names(every, fmt, flags)
    for ranking in rankings:
        direction = "higher" if ranking.higher_is_better else "lower"
        places = decimals(width, ranking.metric)
        rows = [
            [
                str(s.cluster),
                rank_range(s.rank_low, s.rank_high, fmt),
                labels[s.name],
                f"{shown(s.score, places)} ({shown(s.mean, places)} ± {shown(s.ci, places)})",
            ]
            for s in ranking.systems
        ]
        headers = ["Cluster", "Rank range", "System", f"{ranking.metric} (μ ± 95% CI)"]
        title = f"{ranking.metric} ({direction} is better)"
        rendered = table(
            rows, headers, fmt, ["number", "number", "text", "number"],
            colalign=("center", "center", "right"),
        )  # fmt: skip
        if fmt == "text":
            parts.append(f"{title}\n" + rendered)
        elif fmt == "markdown":
            parts.append(f"**{title}**\n\n" + rendered)
        elif fmt == "html":
            import html

            parts.append(f"<h3>{html.escape(title)}</h3>\n" + rendered)
        elif fmt == "latex":
            parts.append(f"% {title}\n" + rendered)
        else:
            parts.append(f"# {title}\n" + rendered)
    remarks = [
        f"Ranked by score; intervals and rank ranges over {n_samples} bootstrap resamples "
        f"(95%); all pairs compared with the {kind} test ({n_samples} samples), p-values "
        f"Holm-corrected; a new cluster starts below a system significantly better "
        f"(corrected p < {ALPHA}) than every system below it.",
    ]
    signatures = [f"{r.metric}: {r.signature}" for r in rankings]
    return "\n\n".join(parts) + "\n" + files + signature_list(signatures, fmt, remarks)


def rank_range(low: int, high: int, fmt: str) -> str:
    """``2-3`` (LaTeX: ``2--3``, an en dash), or ``2`` when both ends are one rank."""
    if low == high:
        return str(low)
    return f"{low}--{high}" if fmt == "latex" else f"{low}-{high}"
