"""``bleucli analyze``: where and why systems differ, compare-mt style, on bleucli's exact
metrics (every bucket score is the metric's corpus score over the bucket's lines, from the
same sufficient statistics as the corpus score).

:mod:`.compute` builds the analysis as plain tables, :mod:`.render` prints them as text,
Markdown, LaTeX or JSON, :mod:`.html` writes the self-contained report and :mod:`.plots`
draws figures with matplotlib (the optional ``bleucli[plot]`` extra).
"""
