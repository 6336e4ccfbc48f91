"""Soft pairwise accuracy (SPA; Thompson et al., WMT24), MTME's ``PairwiseConfidenceError``.

For every pair of systems, a paired permutation test on segment scores gives the p-value of
"system i is better than system j", once from the human scores and once from the metric's.
SPA is one minus the mean absolute difference of the two p-values over the pairs. The
permutations are MTME's own: 1,000 sign vectors from ``numpy.random.default_rng(4)`` in
float32, shared by every pair and by human and metric, so the values equal MTME's.

SPA needs every system rated on the same segments (a paired test over segments); with
human scores missing in different places it is undefined, and :func:`check_aligned` says so.
"""

from __future__ import annotations

import numpy as np

from bleucli.errors import ConfigError

PERMUTATIONS = 1000
SEED = 4


def sign_matrix(n_segments: int, permutations: int = PERMUTATIONS, seed: int = SEED) -> np.ndarray:
    """MTME's ``2m - 1`` matrix: (permutations x segments) of +-1.0 in float32."""
    rng = np.random.default_rng(seed)
    signs = rng.random(size=(permutations, n_segments), dtype=np.float32)
    np.rint(signs, out=signs, casting="same_kind")
    signs *= 2.0
    signs -= 1.0
    return signs


def check_aligned(rated: np.ndarray) -> None:
    """SPA's precondition: the same segments rated for every system."""
    if not (rated == rated[0]).all():
        raise ConfigError(
            "sys-spa needs every system rated on the same segments (true of MQM releases, "
            "not of WMT DA): leave it out with --stat, or give human scores for every segment"
        )


def pairwise_p_values(segments: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Upper-triangle p-values of "system i > system j" for (systems x segments) scores, or
    for a stack ``(draws, systems, segments)``: ``(..., pairs)`` in ``triu_indices`` order."""
    scores = np.ascontiguousarray(segments, dtype=np.float32)  # as MTME's: BLAS rounds by layout
    totals = np.sum(scores, axis=-1)
    partial = np.matmul(signs, np.swapaxes(scores, -1, -2))  # (..., permutations, systems)
    first, second = np.triu_indices(scores.shape[-2], 1)
    null = partial[..., first] - partial[..., second]
    observed = totals[..., first] - totals[..., second]
    return np.sum(null >= observed[..., None, :], axis=-2) / signs.shape[0]


def soft_pairwise_accuracy(
    gold: np.ndarray,
    metric: np.ndarray,
    signs: np.ndarray | None = None,
    human: np.ndarray | None = None,
) -> np.ndarray:
    """SPA of one metric or of a stack of metrics: ``gold`` (systems x segments), ``metric``
    the same shape or ``(draws, systems, segments)``; rated segments only. ``human``: the
    gold scores' :func:`pairwise_p_values`, when many metrics are compared with them."""
    if signs is None:
        signs = sign_matrix(gold.shape[-1])
    if human is None:
        human = pairwise_p_values(gold, signs)
    machine = pairwise_p_values(metric, signs)
    return 1.0 - np.mean(np.abs(human - machine), axis=-1)
