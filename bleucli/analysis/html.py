"""The analysis as one self-contained HTML file: inline CSS, inline SVG figures, no script
and no network access when opened; every input string is escaped."""

from __future__ import annotations

import difflib
from html import escape
from typing import Any

from bleucli.analysis.compute import Analysis, Comparison, Example, Table

CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 70em;
       padding: 0 1em; color: #222; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6em; border-bottom: 2px solid #1f5fa8; }
h2 { font-size: 1.25em; margin-top: 2em; color: #1f5fa8; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th { background: #e8eef7; }
td.text, th.text { text-align: left; }
p.note, ul.signatures { font-size: 0.85em; color: #555; }
code { font-size: 0.95em; }
mark { color: inherit; padding: 0 0.1em; }
mark.a { background: #d4e6f4; border-bottom: 2px solid #0072b2; }
mark.b { background: #fbe3c2; border-bottom: 2px dashed #b35c00; font-style: italic; }
main { overflow-wrap: anywhere; }
table { max-width: 100%; }
svg.figure { display: block; }
div.example { border-left: 4px solid #1f5fa8; padding: 0.3em 0.8em; margin: 0.8em 0;
              background: #f7f9fc; }
figure { margin: 1em 0; }
nav a { margin-right: 1em; }
"""


def table_html(table: Table, width: int) -> str:
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


def example_html(e: Example, comparison: Comparison, width: int) -> str:
    (name_a, text_a), (name_b, text_b) = list(e.outputs.items())
    lines = [
        f"<b>Line {e.line}</b> &middot; "
        + ", ".join(f"{escape(name)} {value:.{width}f}" for name, value in e.scores.items())
    ]
    if e.source is not None:
        lines.append(f"<b>Source:</b> {escape(e.source)}")
    lines += [f"<b>Reference:</b> {escape(r)}" for r in e.references]
    lines.append(f"<b>{escape(name_a)}:</b> {highlighted(text_a, text_b, 'a')}")
    lines.append(f"<b>{escape(name_b)}:</b> {highlighted(text_b, text_a, 'b')}")
    return '<div class="example">' + "<br>\n".join(lines) + "</div>"


def comparison_html(c: Comparison, width: int) -> str:
    parts = [
        f"<h2>Examples: {escape(c.baseline)} vs {escape(c.system)} "
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


def document(
    analysis: Analysis, width: int, figures: list[tuple[str, str]], plots_missing: str | None
) -> str:
    """The whole report; ``figures`` are (caption, inline SVG) pairs."""
    nav = " ".join(f'<a href="#{escape(t.key)}">{escape(t.title)}</a>' for t in analysis.tables)
    body = [
        f"<h1>bleucli analysis: {escape(', '.join(analysis.systems))}</h1>",
        f"<nav>{nav}</nav>",
    ]
    if figures:
        body.append("<h2>Figures</h2>")
        body += [
            f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"
            for caption, svg in figures
        ]
    elif plots_missing:
        body.append(f'<p class="note">{escape(plots_missing)}</p>')
    body += [table_html(t, width) for t in analysis.tables]
    body += [comparison_html(c, width) for c in analysis.comparisons]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>bleucli analysis</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{CSS}</style></head><body><main>\n" + "\n".join(body) + "\n</main></body></html>\n"
    )


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
                            table.title,
                            [row[0] for row in table.rows],
                            panels,
                            BUCKET_AXES[table.key],
                        )
                    ),
                )
            )
    out += [(caption, plots.inline_svg(fig)) for caption, fig in extra]
    return out
