"""Reward functions for reinforcement learning of translation models: sentence BLEU, chrF
or TER of each completion against its references, computed by :mod:`bleucli.batch`.

:func:`reward` returns a callable with the reward-function contract of TRL's
``GRPOTrainer`` (and trainers that copy it): called with the completions and the dataset's
columns as keyword arguments, it returns one float per completion::

    from bleucli.rewards import reward
    chrf_reward = reward("chrf", scale=0.01)          # rewards in 0..1
    chrf_reward(["Der Hund bellt."], references=["Der Hund bellt laut."])

Completions are strings, or chat messages (a list of ``{"role", "content"}`` dicts: the
last assistant message is scored). The reference column holds one string per completion,
or a list of strings (several references; ``None`` for a missing one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from bleucli.errors import ConfigError, InputError

__all__ = ["reward", "completion_text"]


def completion_text(completion: Any, index: int = 0) -> str:
    """The text of one completion: a string as it is; chat messages: the content of the
    last assistant message (of the last message when none has a role)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if (
        isinstance(completion, Sequence)
        and completion
        and all(isinstance(m, dict) for m in completion)
    ):
        messages = [m for m in completion if m.get("role", "assistant") == "assistant"]
        if messages and isinstance(messages[-1].get("content"), str):
            return messages[-1]["content"]
    raise InputError(
        f"reward: completions[{index}] is neither a string nor chat messages "
        f"with an assistant message's text content"
    )


def _reference_streams(column: str, values: Any, count: int) -> list[list[str | None]]:
    """The column (one string, or a list of strings, per completion) as reference streams."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InputError(
            f"reward: the column {column!r} should hold one reference (or a list "
            f"of references) per completion"
        )
    if len(values) != count:
        raise InputError(
            f"reward: {count} completions but {len(values)} entries in the column {column!r}"
        )
    if set(map(type, values)) <= {str}:  # one reference each: the column is the stream
        return [list(values)]
    rows = []
    for i, value in enumerate(values):
        if isinstance(value, str):
            rows.append([value])
        elif (
            isinstance(value, Sequence)
            and value
            and all(r is None or isinstance(r, str) for r in value)
        ):
            rows.append(list(value))
        else:
            raise InputError(
                f"reward: {column}[{i}] should be a string or a list of strings, "
                f"got {type(value).__name__}"
            )
    width = max((len(row) for row in rows), default=0)
    return [[row[k] if k < len(row) else None for row in rows] for k in range(width)]


def reward(
    metric: str = "chrf",
    *,
    scale: float = 1.0,
    references: str = "references",
    sources: str = "source",
    threads: int = 0,
    **options: Any,
) -> Callable[..., list[float]]:
    """A reward function scoring each completion with the sentence-level ``metric``
    (``bleu``, ``chrf``, ``ter`` and their constructor options) against the dataset column
    named by ``references``, times ``scale``. TER, an error rate, is negated (a better
    translation gets a higher reward). The options are checked now, not at the first call.
    Neural metrics (``comet``, ``cometkiwi``, ``xcomet``, ``metricx24``) also read the
    column named by ``sources``; their model is loaded once, scored in batches without
    gradients (MetricX, lower is better, is negated like TER).
    """
    from bleucli.batch import scorer, sentence_scores, thread_count

    thread_count(threads)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise ConfigError(f"reward: scale should be a number, got {scale!r}")
    template = scorer(metric, dict(options))
    sign = scale if template.higher_is_better else -scale
    column = references
    neural = template.uses_source  # COMET & co.: the model loaded once

    def reward_function(completions: Sequence[Any], **kwargs: Any) -> list[float]:
        if isinstance(completions, str) or not isinstance(completions, Sequence):
            raise InputError("reward: completions should be a list")
        if column not in kwargs:
            raise InputError(
                f"reward: no {column!r} column was passed (got "
                f"{', '.join(sorted(kwargs)) or 'none'}); name the dataset's "
                f"reference column with reward(..., references=NAME)"
            )
        if set(map(type, completions)) <= {str}:  # plain strings: checked at C speed
            texts = list(completions)
        else:
            texts = [completion_text(c, i) for i, c in enumerate(completions)]
        streams = _reference_streams(column, kwargs[column], len(texts))
        if neural:
            if sources not in kwargs:
                raise InputError(
                    f"reward: {template.name} needs the source sentences: no {sources!r} column "
                    f"was passed; name it with reward(..., sources=NAME)"
                )
            given = [str(s) for s in kwargs[sources]]
            scores = sentence_scores(template, texts, streams, sources=given)
        else:
            scores = sentence_scores(template, texts, streams, threads=threads)
        return cast("list[float]", (scores * sign).tolist())

    reward_function.__name__ = f"bleucli_{str(metric).lower()}_reward"
    reward_function.__qualname__ = reward_function.__name__
    return reward_function
