"""Neural metrics (COMET, CometKiwi, xCOMET) computed with torch and transformers only.

Layers, from the bottom: :mod:`~bleucli.neural.runtime` (the optional imports, threads,
precision), :mod:`~bleucli.neural.checkpoint` (COMET's ``hparams.yaml`` +
``checkpoints/model.ckpt`` layout), :mod:`~bleucli.neural.encoder` (tokenizer and XLM-R),
:mod:`~bleucli.neural.layers` (layer mix, pooling, feed-forward head),
:mod:`~bleucli.neural.models` (the four COMET classes and their predictions),
:mod:`~bleucli.neural.registry` and :mod:`~bleucli.neural.hub` (pinned models, downloads).
Nothing here is imported until a neural metric is asked for.
"""
