"""What every neural model class shares: a prediction, the model interface the metrics
call, COMET's common machinery (encoder, layer mix, batching as unbabel-comet 2.2.7
batches: samples sorted by length, so batch composition, which moves scores by ~1e-7, is the
same too), and pairwise scores for models that read each pair jointly. The families are in
:mod:`bleucli.neural.comet` (COMET-DA, COMET-QE), :mod:`bleucli.neural.xcomet` (CometKiwi,
UniTE, xCOMET) and :mod:`bleucli.neural.metricx` (MetricX-24), found through
:mod:`bleucli.neural.families`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bleucli.errors import InputError
from bleucli.neural import runtime
from bleucli.neural.checkpoint import Checkpoint
from bleucli.neural.encoder import Encoder
from bleucli.neural.layers import LayerMix, feed_forward

#: Rows the feed-forward head runs on at a time (see ``_scores_in_chunks``).
HEAD_ROWS = 64
#: Segments embedded and scored at a time (a multiple of HEAD_ROWS, so the chunks do not
#: change a bit): memory stays bounded however large the test set.
SEGMENT_CHUNK = 4096


@dataclass
class Prediction:
    """Segment scores (input order) and, for word-level models, error spans per segment."""

    scores: list[float]
    spans: list[list[dict[str, Any]]] | None = None
    metadata: dict[str, list[float]] = field(default_factory=dict)

    @property
    def system_score(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0


class NeuralModel:
    """What every model gives the metrics: ``predict`` and the pairwise utilities of MBR."""

    needs_source = True
    needs_reference = True
    #: Set by the loader: what identifies cached embeddings (weights, precision, device type).
    cache_identity = ""

    def predict(
        self,
        samples: dict[str, Sequence[str]],
        batch_size: int = 16,
        progress: Callable[[int], None] | None = None,
    ) -> Prediction:
        raise NotImplementedError

    def count_tokens(self, texts: list[str]) -> int:
        """Tokens the model reads from ``texts``, truncated as it truncates them."""
        raise NotImplementedError

    def pairwise(
        self,
        sources: Sequence[str] | None,
        hypotheses: Sequence[Sequence[str]],
        references: Sequence[Sequence[str]],
        batch_size: int = 16,
    ) -> list[Any]:
        """Per group b, the matrix of scores of every hypothesis of group b against every
        reference of group b alone (with source b): MBR's utilities. This default predicts
        every pair; models that encode sentences apart do better."""
        return pairwise_by_prediction(self, sources, hypotheses, references, batch_size)


class CometModel(NeuralModel):
    """What every COMET class shares: the encoder, the layer mix, the head, the batching."""

    def __init__(
        self, checkpoint: Checkpoint, encoder_folder: Path, device: Any, dtype: Any
    ) -> None:
        h = checkpoint.hparams
        self.hparams = h
        self.device, self.dtype = device, dtype
        self.encoder = Encoder(encoder_folder, h["encoder_model"], checkpoint.state)
        layer = h.get("sent_layer", h.get("layer", "mix"))
        self.layer = layer
        self.mix = None
        if layer == "mix":
            self.mix = LayerMix(
                checkpoint.state, self.encoder.num_layers, h["layer_transformation"],
                bool(h["layer_norm"]),
            ).to(device, dtype)  # fmt: skip
        elif not (isinstance(layer, int) and 0 <= layer < self.encoder.num_layers):
            raise InputError(f"checkpoint: layer {layer!r} is not one of the encoder's")
        self.head = feed_forward(
            checkpoint.state, "estimator.ff.", list(h["hidden_sizes"]), h["activations"],
            h.get("final_activation"), self.encoder.hidden * self.feature_width,
        ).to(device=device, dtype=dtype)  # fmt: skip
        self.encoder.model.to(device=device, dtype=dtype)
        self._check_every_tensor_used(checkpoint)

    feature_width = 1

    def count_tokens(self, texts: list[str]) -> int:
        return sum(len(e.ids) for e in self.encoder.encode(texts)) if texts else 0

    def _own_tensors(self) -> set[str]:
        names = {f"encoder.model.{k}" for k in self.encoder.model.state_dict()}
        names |= {f"estimator.ff.{k}" for k in self.head.state_dict()}
        if self.mix is not None:
            names |= {
                f"layerwise_attention.scalar_parameters.{i}" for i in range(self.encoder.num_layers)
            }
            names.add("layerwise_attention.gamma")
        return names

    def _check_every_tensor_used(self, checkpoint: Checkpoint) -> None:
        ignorable = (
            "layerwise_attention.dropout_",
            "wordloss.",
            "sentloss.",
            "encoder.model.pooler.",
        )
        unused = sorted(
            name for name in set(checkpoint.state) - self._own_tensors()
            if not name.startswith(ignorable)
        )  # fmt: skip
        if unused:
            raise InputError(
                f"{checkpoint.path}: tensors this model does not use: {', '.join(unused[:4])}"
                + (" ..." if len(unused) > 4 else "")
            )

    # -- batching ------------------------------------------------------------------------------
    def predict(
        self,
        samples: dict[str, Sequence[str]],
        batch_size: int = 16,
        progress: Callable[[int], None] | None = None,
    ) -> Prediction:
        """Score ``samples`` (``mt`` and, as the model needs, ``src`` and ``ref``: equal-length
        lists), in batches of ``batch_size`` sorted by length as unbabel-comet sorts them."""
        import numpy

        torch = runtime.torch()
        key = "src" if "src" in samples else "ref"
        n = len(samples["mt"])
        order = [int(i) for i in numpy.argsort([len(text) for text in samples[key]])] if n else []
        scores: list[float | None] = [None] * n
        spans: list[Any] = [None] * n
        metadata: dict[str, list[Any]] = {}
        with torch.inference_mode():
            for start in range(0, n, batch_size):
                chosen = order[start : start + batch_size]
                batch = {k: [samples[k][i] for i in chosen] for k in samples}
                out = self.predict_batch(batch)
                for j, i in enumerate(chosen):
                    scores[i] = out.scores[j]
                    if out.spans is not None:
                        spans[i] = out.spans[j]
                    for name, values in out.metadata.items():
                        metadata.setdefault(name, [None] * n)[i] = values[j]
                if progress is not None:
                    progress(len(chosen))
        return Prediction(
            [float(s) for s in scores],  # type: ignore[arg-type]
            spans if any(s is not None for s in spans) else None,
            metadata,
        )

    def predict_batch(self, batch: dict[str, list[str]]) -> Prediction:
        raise NotImplementedError

    # -- shared steps --------------------------------------------------------------------------
    def _mixed(self, ids: Any, mask: Any) -> tuple[Any, tuple[Any, ...]]:
        layers = self.encoder.layers(ids, mask)
        if self.mix is not None:
            return self.mix(layers, mask), layers
        return layers[self.layer], layers

    def _scores(self, features: Any) -> list[float]:
        return self._estimate(features).view(-1).float().tolist()

    def _estimate(self, features: Any) -> Any:
        """The head on ``features`` in the model's precision (pooling divides by a float32
        count, which promotes bf16 embeddings to float32, as in unbabel-comet)."""
        return self.head(features.to(self.dtype))


def pairwise_by_prediction(
    model: Any,
    sources: Sequence[str] | None,
    hypotheses: Sequence[Sequence[str]],
    references: Sequence[Sequence[str]],
    batch_size: int,
) -> list[Any]:
    """Pairwise scores for models that read each pair jointly: every pair predicted."""
    import numpy

    samples: dict[str, list[str]] = {"mt": [], "ref": []}
    if sources is not None:
        samples["src"] = []
    shapes = []
    for b, (hyps, refs) in enumerate(zip(hypotheses, references)):
        shapes.append((len(hyps), len(refs)))
        for h in hyps:
            for r in refs:
                samples["mt"].append(h)
                samples["ref"].append(r)
                if sources is not None:
                    samples["src"].append(sources[b])
    scores = model.predict(samples, batch_size).scores if samples["mt"] else []
    out, at = [], 0
    for n, k in shapes:
        out.append(numpy.array(scores[at : at + n * k], dtype=numpy.float64).reshape(n, k))
        at += n * k
    return out
