"""An analysis as text, Markdown, LaTeX or JSON: every table with its signature lines."""

from __future__ import annotations

import json
import textwrap

from bleucli.analysis.compute import Analysis, Comparison, Table
from bleucli.precision import Precision, decimals, shown

FORMATS = ("text", "markdown", "latex", "json")


def render(analysis: Analysis, fmt: str, width: int | Precision) -> str:
    if fmt == "json":
        return json.dumps(analysis.record(), indent=1, ensure_ascii=False)
    parts = [render_systems(analysis, fmt)] if analysis.key() else []
    parts += [render_table(table, fmt, width) for table in analysis.tables]
    parts += [render_examples(c, fmt, width) for c in analysis.comparisons]
    return "\n\n".join(parts)


def render_systems(analysis: Analysis, fmt: str) -> str:
    """The systems' short names and the files they were read from (listed once)."""
    from bleucli.formats import table as tabulated

    title = "Systems"
    title = {"markdown": f"### {title}\n\n", "latex": f"% {title}\n"}.get(fmt, f"{title}\n")
    return title + tabulated([list(row) for row in analysis.key()], ["System", "File"], fmt)


def render_table(table: Table, fmt: str, width: int | Precision) -> str:
    from bleucli.formats import signature_list
    from bleucli.formats import table as tabulated

    body = tabulated(table.cells(width), table.headers, fmt)
    title = {"markdown": f"### {table.title}\n\n", "latex": f"% {table.title}\n"}.get(
        fmt, f"{table.title}\n"
    )
    remarks = [table.note] if table.note else []
    return title + body + "\n" + signature_list(table.signatures, fmt, remarks)


#: Characters of an example's text per line in text tables (the whole table stays within
#: about 100 columns).
TEXT_WIDTH = 72


def render_examples(comparison: Comparison, fmt: str, width: int | Precision) -> str:
    from bleucli.formats import table as tabulated

    blocks = []
    for label, chosen in (
        (comparison.baseline, comparison.better_baseline),
        (comparison.system, comparison.better_system),
    ):
        rows = []
        for e in chosen:
            scores = ", ".join(
                f"{name} {shown(value, decimals(width, name))}" for name, value in e.scores.items()
            )
            texts = [f"src: {e.source}"] if e.source is not None else []
            texts += [f"ref: {r}" for r in e.references]
            texts += [f"{name}: {text}" for name, text in e.outputs.items()]
            if fmt == "text":  # a terminal's width: each text on its own lines, wrapped
                cell = "\n".join(
                    textwrap.fill(text, TEXT_WIDTH, subsequent_indent="  ", break_long_words=True)
                    for text in texts
                )
            else:
                cell = " | ".join(texts)
            rows.append(
                [str(e.line), scores.replace(", ", "\n") if fmt == "text" else scores, cell]
            )
        title = (
            f"Lines where {label} scores higher ({comparison.metric}, sentence level): "
            f"{comparison.baseline} vs {comparison.system}"
        )
        title = {"markdown": f"### {title}\n\n", "latex": f"% {title}\n"}.get(fmt, f"{title}\n")
        blocks.append(title + tabulated(rows, ["Line", "Scores", "Texts"], fmt))
    return "\n\n".join(blocks)
