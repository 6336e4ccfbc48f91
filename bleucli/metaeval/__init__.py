"""Meta-evaluation: how well metric scores agree with human judgements, with the WMT Metrics
task's statistics as mt-metrics-eval defines them (docs/meta-eval.md).

The parts, bottom up: :mod:`.groups` (MTME's ``average_by``), :mod:`.stats` (correlations
over groups and over stacks of metric vectors), :mod:`.ties` (acc-t's tie calibration),
:mod:`.spa` (soft pairwise accuracy), :mod:`.significance` (permutation tests and
clusters), :mod:`.evaluate` (every statistic for every metric), :mod:`.readers` and
:mod:`.mtme` (human-score formats and MTME's directory layout into one
:class:`~.table.MetaEvalData`), :mod:`.render` (tables and JSON).

    >>> import numpy as np
    >>> from bleucli.metaeval import MetaEvalData, MetricScores, TestSettings, evaluate
    >>> human = np.array([[1.0, 2.0, np.nan], [3.0, 1.0, 2.0], [2.0, 2.5, 1.0]])
    >>> metric = MetricScores("M", seg=np.array([[0.1, 0.3, 0.2], [0.4, 0.1, 0.3], [0.2, 0.2, 0.1]]),
    ...                       sys=np.array([0.2, 0.27, 0.17]))
    >>> data = MetaEvalData(["A", "B", "C"], 3, "da", "", human, None, {"M": metric})
    >>> results, notes = evaluate(data, ["sys-pearson", "seg-kendall-item"], TestSettings(resamples=0))
    >>> [(r.statistic.name, round(r.rows[0].value, 4)) for r in results]
    [('sys-pearson', 0.5316), ('seg-kendall-item', 0.7778)]
"""

from __future__ import annotations

from bleucli.metaeval.evaluate import DEFAULT_STATISTICS, STATISTICS, StatisticResult, evaluate
from bleucli.metaeval.significance import TestSettings
from bleucli.metaeval.table import HumanScores, MetaEvalData, MetricScores

__all__ = [
    "DEFAULT_STATISTICS",
    "STATISTICS",
    "HumanScores",
    "MetaEvalData",
    "MetricScores",
    "StatisticResult",
    "TestSettings",
    "evaluate",
]
