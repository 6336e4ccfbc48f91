"""The analysis as one self-contained HTML file: inline CSS, inline SVG figures, no script
and no network access when opened; every input string is escaped."""

from __future__ import annotations

import difflib
from html import escape
from typing import Any

from bleucli.analysis.compute import Analysis, Comparison, Example, Table
from bleucli.precision import Precision, decimals, shown


def table_html(table: Table, width: int | Precision) -> str:
    text = ' class="text"'
    head = "".join(
        f"<th{text if i == 0 else ''}>{escape(str(h))}</th>" for i, h in enumerate(table.headers)
    )
    body = "\n".join(
        "<tr>"
        + "".join(
            f"<td{text if isinstance(v, str) else ''}>{escape(shown)}</td>"
            for v, shown in zip(row, cells)
        )
        + "</tr>"
        for row, cells in zip(table.rows, table.cells(width))
    )
    note = f'<p class="note">{escape(table.note)}</p>' if table.note else ""
    signatures = "".join(f"<li><code>{escape(s)}</code></li>" for s in table.signatures)
    return (
        f'<h2 id="{escape(table.key)}">{escape(table.title)}</h2>\n'
        f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>\n"
        f'{note}<ul class="signatures">{signatures}</ul>'
    )


def highlighted(mine: str, other: str, css: str) -> str:
    """``mine`` with the words that ``other`` lacks (by word-level diff) marked."""
    a, b = mine.split(), other.split()
    out = []
    for op, i1, i2, _, _ in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        words = escape(" ".join(a[i1:i2]))
        if not words:
            continue
        out.append(words if op == "equal" else f'<mark class="{css}">{words}</mark>')
    return " ".join(out)


def example_html(e: Example, comparison: Comparison, width: int | Precision) -> str:
    (name_a, text_a), (name_b, text_b) = list(e.outputs.items())
    lines = [
        f"<b>Line {e.line}</b> &middot; "
        + ", ".join(
            f"{escape(name)} {shown(value, decimals(width, name))}"
            for name, value in e.scores.items()
        )
    ]
    if e.source is not None:
        lines.append(f"<b>Source:</b> {escape(e.source)}")
    lines += [f"<b>Reference:</b> {escape(r)}" for r in e.references]
    lines.append(f"<b>{escape(name_a)}:</b> {highlighted(text_a, text_b, 'a')}")
    lines.append(f"<b>{escape(name_b)}:</b> {highlighted(text_b, text_a, 'b')}")
    return '<div class="example">' + "<br>\n".join(lines) + "</div>"


def comparison_html(c: Comparison, width: int | Precision, number: int = 0) -> str:
    parts = [
        f'<h2 id="examples-{number}">Examples: {escape(c.baseline)} vs {escape(c.system)} '
        f"(sentence {escape(c.metric)})</h2>",
        '<p class="note">Words one output has and the other lacks are marked: '
        f'<mark class="a">{escape(c.baseline)}: blue, solid underline</mark>, '
        f'<mark class="b">{escape(c.system)}: orange, dashed underline, italic'
        "</mark>.</p>",
    ]
    for label, chosen in ((c.baseline, c.better_baseline), (c.system, c.better_system)):
        parts.append(f"<h3>{escape(label)} scores higher</h3>")
        parts += [example_html(e, c, width) for e in chosen] or ["<p>None.</p>"]
    return "\n".join(parts)


def systems_html(analysis: Analysis) -> str:
    """The systems' short names and their files (the rest of the report uses the names)."""
    rows = "\n".join(
        f'<tr><td class="text">{escape(name)}</td><td class="text">{escape(path)}</td></tr>'
        for name, path in analysis.key()
    )
    return (
        '<h2 id="systems">Systems</h2>\n<table><thead><tr><th class="text">System</th>'
        f'<th class="text">File</th></tr></thead><tbody>\n{rows}\n</tbody></table>'
    )


def document(
    analysis: Analysis,
    width: int | Precision,
    figures: list[tuple[str, str]],
    plots_missing: str | None,
    back: tuple[str, str] | None = None,
) -> str:
    """The whole report; ``figures`` are (caption, inline SVG) pairs; ``back`` a (URL, text)
    link first in the navigation (the evaluation server's way back to the submission)."""
    from bleucli.analysis.page import page

    links = [("systems", "Systems")] if analysis.key() else []
    if figures:
        links.append(("figures", "Figures"))
    links += [(t.key, t.title) for t in analysis.tables]
    links += [
        (f"examples-{k}", f"Examples: {c.baseline} vs {c.system}")
        for k, c in enumerate(analysis.comparisons)
    ]
    anchors = " ".join(f'<a href="#{escape(k)}">{escape(t)}</a>' for k, t in links)
    if back is not None:
        anchors = f'<a href="{escape(back[0])}">{escape(back[1])}</a> ' + anchors
    body = [f"<nav>{anchors}</nav>"]
    if analysis.key():
        body.append(systems_html(analysis))
    if figures:
        body.append('<h2 id="figures">Figures</h2>')
        body += [
            f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"
            for caption, svg in figures
        ]
    elif plots_missing:
        body.append(f'<p class="note">{escape(plots_missing)}</p>')
    body += [table_html(t, width) for t in analysis.tables]
    body += [comparison_html(c, width, k) for k, c in enumerate(analysis.comparisons)]
    return page(f"bleucli analysis: {', '.join(analysis.systems)}", "\n".join(body))


#: Bucket tables drawn as figures, and their x-axis labels.
BUCKET_AXES = {"ref-length": "reference length (words)", "src-length": "source length (words)"}


def figures_for(analysis: Analysis, extra: list[tuple[str, Any]]) -> list[tuple[str, str]]:
    """Inline SVG of the bucket charts and of ``extra`` (caption, matplotlib figure)."""
    from bleucli.analysis import plots

    out = []
    for table in analysis.tables:
        if table.key in BUCKET_AXES and table.panels:
            panels = {
                metric: {
                    name: [row[column] for row in table.rows] for name, column in columns.items()
                }
                for metric, columns in table.panels.items()
            }
            out.append(
                (
                    table.title,
                    plots.inline_svg(
                        plots.buckets_figure(
                            "",  # the caption carries the title
                            [row[0] for row in table.rows],
                            panels,
                            BUCKET_AXES[table.key],
                        )
                    ),
                )
            )
    out += [(caption, plots.inline_svg(fig)) for caption, fig in extra]
    return out
