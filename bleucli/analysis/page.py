"""The one page frame of every HTML file bleucli writes (the scoring command's and
``report``'s ``-f html``, ``analyze --html``): inline CSS, no script, no network access when
opened, readable from 800 to 1600 px. Tables scroll inside their own box when a page is too
narrow for them, so the page itself never scrolls sideways, and a header breaks only
between words; a row's name (its first cell) breaks inside a word only where nothing else
fits, so a narrow page scrolls the table instead of cutting ``CommandA`` in two."""

from __future__ import annotations

import re
from html import escape

CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 70em;
       padding: 0 1em; color: #222; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6em; border-bottom: 2px solid #1f5fa8; overflow-wrap: anywhere; }
h2 { font-size: 1.25em; margin-top: 2em; color: #1f5fa8; overflow-wrap: anywhere; }
h3 { font-size: 1.08em; margin-top: 1.5em; overflow-wrap: anywhere; }
div.table { max-width: 100%; overflow-x: auto; margin: 0.6em 0; }
table { border-collapse: collapse; font-size: 0.92em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right;
         vertical-align: top; }
th { background: #e8eef7; overflow-wrap: normal; word-break: normal; hyphens: manual;
     min-width: 3em; }
td { overflow-wrap: anywhere; }
td:first-child { overflow-wrap: break-word; }
th span.w { white-space: nowrap; }
td.text, th.text, td:first-child, th:first-child { text-align: left; }
p, li { overflow-wrap: anywhere; }
p.note, ul.signatures { font-size: 0.85em; color: #555; }
code { font-size: 0.95em; }
mark { color: inherit; padding: 0 0.1em; }
mark.a { background: #d4e6f4; border-bottom: 2px solid #0072b2; }
mark.b { background: #fbe3c2; border-bottom: 2px dashed #b35c00; font-style: italic; }
svg.figure { display: block; }
div.example { border-left: 4px solid #1f5fa8; padding: 0.3em 0.8em; margin: 0.8em 0;
              background: #f7f9fc; overflow-wrap: anywhere; }
figure { margin: 1em 0; }
figcaption { overflow-wrap: anywhere; }
nav a { margin-right: 1em; display: inline-block; }
footer { margin-top: 3em; font-size: 0.8em; color: #777; }
"""

_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_HEADER = re.compile(r"(<th\b[^>]*>)([^<]*)(</th>)")


def _unbroken_words(match: re.Match[str]) -> str:
    """A header cell whose words never break inside (not even at a hyphen: ``Online-A``)."""
    words = match.group(2).split()
    inner = " ".join(f'<span class="w">{word}</span>' for word in words)
    return f"{match.group(1)}{inner}{match.group(3)}"


def page(title: str, body: str) -> str:
    """A whole HTML document: ``title`` (escaped here) as the heading, ``body`` (HTML) below
    it, every table in a box of its own."""
    from bleucli.version import __version__

    boxed = _TABLE.sub(lambda m: f'<div class="table">{m.group(0)}</div>', body)
    boxed = _HEADER.sub(_unbroken_words, boxed)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{CSS}</style></head><body><main>\n<h1>{escape(title)}</h1>\n{boxed}\n"
        f"</main><footer>bleucli {escape(__version__)}</footer></body></html>\n"
    )


def output_page(title: str, output: str) -> str:
    """A command's ``-f html`` output as a page: its HTML, or text it prints the same in
    every format (a single system's score line) as preformatted text."""
    body = output if output.lstrip().startswith("<") else f"<pre>{escape(output)}</pre>"
    return page(title, body)
