"""The four COMET model classes, computed as unbabel-comet 2.2.7 computes them.

* ``regression_metric`` (COMET-DA): source, hypothesis and reference encoded apart, pooled,
  combined as ``[h, r, h*r, |h-r|, h*s, |h-s|]`` into the feed-forward head;
* ``referenceless_regression_metric`` (COMET-QE): ``[h, s, h*s, |h-s|]``;
* ``unified_metric`` (CometKiwi, UniTE): the segments concatenated into one sequence
  (``<s> mt </s></s> src </s>``...), the head on the first token of the layer mix, the mean
  over the input combinations, optional word-level error tags;
* ``xcomet_metric``: the unified model whose score also counts its own error spans.

Samples are sorted by length and batched as unbabel-comet's ``predict`` does, so batch
composition (which moves scores by ~1e-7) is the same too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bleucli.errors import InputError
from bleucli.neural import runtime
from bleucli.neural.checkpoint import Checkpoint
from bleucli.neural.encoder import Encoder, _load_exactly
from bleucli.neural.layers import LayerMix, average_pool, feed_forward, max_pool

#: xCOMET's weights of its three regression scores and of the score from its error spans.
XCOMET_WEIGHTS = [0.12, 0.33, 0.33, 0.22]
#: Unified models: how much each input combination's tags count (mt+src, mt+ref, all).
SPAN_WEIGHTS = [0.1667, 0.3333, 0.5]
#: MQM-style penalty per error severity (xCOMET's score from its spans).
SEVERITY_PENALTY = {"minor": 1, "major": 5, "critical": 10}


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


class SentenceEmbeddingModel(CometModel):
    """The models that encode each segment on its own (COMET-DA, COMET-QE): every sentence
    is encoded once per model (:mod:`bleucli.neural.embeddings`), so sources and references
    are shared by every system scored against them, in this run and the next."""

    @property
    def store(self) -> Any:
        if getattr(self, "_store", None) is None:
            from bleucli.neural.embeddings import EmbeddingStore

            identity = self.cache_identity or f"unnamed-{id(self)}"
            self._store = EmbeddingStore(identity, self.encoder.hidden)
            if not self.cache_identity:
                self._store.path = None  # no identity, no disk
        return self._store

    def _encode_ids(self, sequences: list[list[int]], length: int | None = None) -> Any:
        """Pooled embeddings of id sequences, padded to ``length`` tokens."""
        torch = runtime.torch()
        length = length or max(len(s) for s in sequences)
        pad = self.encoder.pad_id
        ids = torch.tensor([s + [pad] * (length - len(s)) for s in sequences], device=self.device)
        mask = torch.tensor(
            [[1] * len(s) + [0] * (length - len(s)) for s in sequences], device=self.device
        )
        embeddings, _ = self._mixed(ids, mask)
        return self._pool(ids, embeddings, mask)

    def _pool(self, ids: Any, embeddings: Any, mask: Any) -> Any:
        pool = self.hparams.get("pool", "avg")
        if pool == "avg":
            return average_pool(ids, embeddings, mask, self.encoder.pad_id)
        if pool == "max":
            return max_pool(ids, embeddings, self.encoder.pad_id)
        if pool == "cls":
            return embeddings[:, 0, :]
        if pool == "default":
            return self.encoder.layers(ids, mask)[-1][:, 0, :]
        raise InputError(f"checkpoint: pooling {pool!r} is not one of avg, max, cls, default")

    def embed(
        self, texts: Sequence[str], batch_size: int, progress: Any = None, store: Any = None
    ) -> Any:
        def tokenize(batch: list[str]) -> list[list[int]]:
            return [list(e.ids) for e in self.encoder.encode(batch)]

        return (
            (store or self.store)
            .embed(texts, self._encode_ids, tokenize, batch_size, progress)
            .to(device=self.device)
        )

    def _store_for(self, role: str) -> Any:
        """Where a role's embeddings are kept: a confined run's hypotheses in a store of
        their own, used once (:func:`bleucli.neural.runtime.confined`)."""
        if role == "mt" and runtime.confinement().isolated:
            from bleucli.neural.embeddings import EmbeddingStore

            return EmbeddingStore.transient(self.encoder.hidden)
        return self.store

    def features(self, embedded: dict[str, Any]) -> Any:
        raise NotImplementedError

    def pairwise(
        self,
        sources: Sequence[str] | None,
        hypotheses: Sequence[Sequence[str]],
        references: Sequence[Sequence[str]],
        batch_size: int = 16,
    ) -> list[Any]:
        """Each source, hypothesis and reference encoded once; the head over the pairs."""
        import numpy

        torch = runtime.torch()
        if sources is None:
            raise InputError(f"{type(self).__name__}: the sources are needed for pairwise scores")
        texts = list(
            dict.fromkeys([t for g in hypotheses for t in g] + [t for g in references for t in g])
        )
        position = {t: k for k, t in enumerate(texts)}
        out = []
        with torch.inference_mode():
            table = self.embed(texts, batch_size) if texts else None
            sentences = self.embed(list(sources), batch_size)
            for b, (hyps, refs) in enumerate(zip(hypotheses, references)):
                n, k = len(hyps), len(refs)
                if n == 0 or k == 0:
                    out.append(numpy.zeros((n, k)))
                    continue
                h = torch.tensor([position[t] for t in hyps for _ in refs])
                r = torch.tensor([position[t] for _ in hyps for t in refs])
                embedded = {"mt": table[h], "ref": table[r], "src": sentences[b].expand(n * k, -1)}  # type: ignore[index]
                scores = self._scores_in_chunks(self.features(embedded))
                out.append(numpy.array(scores, dtype=numpy.float64).reshape(n, k))
        return out

    def predict(
        self,
        samples: dict[str, Sequence[str]],
        batch_size: int = 16,
        progress: Callable[[int], None] | None = None,
    ) -> Prediction:

        torch = runtime.torch()
        n = len(samples["mt"])
        if n == 0:
            return Prediction([])
        scores: list[float] = []
        with torch.inference_mode():
            for start in range(0, n, SEGMENT_CHUNK):  # bounded memory for any set size
                part = {k: samples[k][start : start + SEGMENT_CHUNK] for k in self.inputs}
                embedded = {
                    k: self.embed(
                        part[k], batch_size, progress if k == "mt" else None, self._store_for(k)
                    )
                    for k in self.inputs
                }
                scores += self._scores_in_chunks(self.features(embedded))
                self.store.trim()
        return Prediction(scores)

    def _scores_in_chunks(self, features: Any) -> list[float]:
        """The head over rows of features, ``HEAD_ROWS`` at a time, the last chunk padded
        with zero rows: a matrix product's bits depend on its row count, so a fixed count
        makes each score a function of its own row alone (the same whatever the batch
        size, the other segments, or how a Dask bag is partitioned), in bounded memory."""
        torch = runtime.torch()
        scores: list[float] = []
        for start in range(0, len(features), HEAD_ROWS):
            chunk = features[start : start + HEAD_ROWS]
            real = len(chunk)
            if real < HEAD_ROWS:
                padding = chunk.new_zeros((HEAD_ROWS - real, chunk.shape[1]))
                chunk = torch.cat((chunk, padding))
            scores += self._scores(chunk)[:real]
        return scores

    inputs: tuple[str, ...] = ()


class RegressionModel(SentenceEmbeddingModel):
    feature_width = 6
    inputs = ("src", "ref", "mt")

    def features(self, embedded: dict[str, Any]) -> Any:
        torch = runtime.torch()
        src, ref, mt = embedded["src"], embedded["ref"], embedded["mt"]
        return torch.cat(
            (mt, ref, mt * ref, torch.abs(mt - ref), mt * src, torch.abs(mt - src)), dim=1
        )


class ReferencelessModel(SentenceEmbeddingModel):
    feature_width = 4
    needs_reference = False
    inputs = ("src", "mt")

    def features(self, embedded: dict[str, Any]) -> Any:
        torch = runtime.torch()
        src, mt = embedded["src"], embedded["mt"]
        return torch.cat((mt, src, mt * src, torch.abs(mt - src)), dim=1)


class UnifiedModel(CometModel):
    """CometKiwi / UniTE, and the base of xCOMET."""

    def __init__(
        self, checkpoint: Checkpoint, encoder_folder: Path, device: Any, dtype: Any
    ) -> None:
        super().__init__(checkpoint, encoder_folder, device, dtype)
        h = self.hparams
        self.segments = list(h["input_segments"])
        self.needs_reference = self.segments == ["mt", "ref"]
        self.needs_source = "src" in self.segments and not self.needs_reference
        self.word_level = bool(h["word_level_training"])
        self.labels = ["O", *(f"I-{label}" for label in h["error_labels"])]
        self.tagger = None
        if self.word_level:
            torch = runtime.torch()
            self.tagger = torch.nn.Linear(self.encoder.hidden, len(self.labels))
            own = {
                k[len("hidden2tag.") :]: v
                for k, v in checkpoint.state.items()
                if k.startswith("hidden2tag.")
            }
            _load_exactly(self.tagger, own, "the word-level tagger")
            self.tagger.to(device=device, dtype=dtype).eval()

    def _own_tensors(self) -> set[str]:
        names = super()._own_tensors()
        if getattr(self, "word_level", bool(self.hparams.get("word_level_training"))):
            names |= {"hidden2tag.weight", "hidden2tag.bias"}
        return names

    def _check_every_tensor_used(self, checkpoint: Checkpoint) -> None:
        self.word_level = bool(self.hparams.get("word_level_training"))
        super()._check_every_tensor_used(checkpoint)

    def _concatenated(self, parts: list[tuple[list[list[int]], Any]]) -> dict[str, Any]:
        """One sequence per sample from the segments' ids (``<s> a </s></s> b </s>``)."""
        torch = runtime.torch()
        enc = self.encoder
        pad, cls, sep = enc.pad_id, enc.cls_id, enc.sep_id
        sequences = []
        for i in range(len(parts[0][0])):
            pieces = [[t for t in ids[i] if t != pad] for ids, _ in parts]
            inner = [len(p[1:-1]) for p in pieces]
            sequence = pieces[0]
            for piece in pieces[1:]:
                sequence = [cls, *sequence[1:-1], sep, sep, *piece[1:-1], sep]
            if sum(inner) > enc.max_positions - (1 + len(parts) * 2):
                sequence = sequence[: enc.max_positions]
            sequences.append(sequence)
        longest = max(len(s) for s in sequences)
        ids = torch.tensor([s + [pad] * (longest - len(s)) for s in sequences])
        lengths = torch.tensor([len(s) for s in sequences], dtype=torch.long)
        mask = torch.arange(longest)[None, :] < lengths[:, None]
        out: dict[str, Any] = {"ids": ids.to(self.device), "mask": mask.to(self.device)}
        if self.word_level:
            labels = parts[0][1]
            padded = [row + [-1] * (longest - len(row)) for row in labels]
            out["labels"] = torch.tensor(padded)
        return out

    def _segment_ids(self, texts: list[str], word_level: bool) -> tuple[list[list[int]], Any]:
        encodings = self.encoder.encode(texts)
        ids = [list(e.ids) for e in encodings]
        if not word_level:
            return ids, None
        longest = max(len(i) for i in ids)
        labels = [[0] * len(i) + [-1] * (longest - len(i)) for i in ids]
        return ids, (labels, [list(e.offsets) for e in encodings])

    def _forward(self, inputs: dict[str, Any]) -> tuple[Any, Any]:
        mixed, layers = self._mixed(inputs["ids"], inputs["mask"])
        score = self._estimate(mixed[:, 0, :]).view(-1)
        logits = None
        if self.word_level:
            word_layer = self.hparams["word_layer"]
            if not (isinstance(word_layer, int) and 0 <= word_layer < self.encoder.num_layers):
                raise InputError(
                    f"checkpoint: word_layer {word_layer!r} is not one of the encoder's"
                )
            logits = self.tagger(layers[word_layer])  # type: ignore[misc]
        return score, logits

    def _inputs_of(self, batch: dict[str, list[str]]) -> tuple[list[dict[str, Any]], Any]:
        mt_ids, mt_extra = self._segment_ids(batch["mt"], self.word_level)
        labels = mt_extra[0] if mt_extra else None
        offsets = mt_extra[1] if mt_extra else None
        mt = (mt_ids, labels)
        have_src = "src" in batch and "src" in self.segments
        have_ref = "ref" in batch and "ref" in self.segments
        src = (self._segment_ids(batch["src"], False)[0], None) if have_src else None
        ref = (self._segment_ids(batch["ref"], False)[0], None) if have_ref else None
        if src is not None and ref is not None:
            combos = [[mt, src], [mt, ref], [mt, src, ref]]
        else:
            combos = [[mt] + [p for p in (src, ref) if p is not None]]
        return [self._concatenated(c) for c in combos], offsets

    def _subword_probs(self, inputs: list[dict[str, Any]], logits: list[Any]) -> Any:
        torch = runtime.torch()
        seq_len = (inputs[0]["labels"] != -1).sum(dim=1).max()
        if len(logits) == 3:
            weights = torch.tensor(SPAN_WEIGHTS)
            probs = [torch.softmax(o, dim=2)[:, :seq_len, :] * w for w, o in zip(weights, logits)]
            return torch.sum(torch.stack(probs), dim=0)
        return torch.softmax(logits[0], dim=2)[:, :seq_len, :]

    def _decode(
        self, probs: Any, ids: Any, offsets: list[list[tuple[int, int]]]
    ) -> list[list[dict[str, Any]]]:
        """Error spans from per-subword label probabilities, as unbabel-comet decodes them
        (the most probable label per subword; a span that is still open at the end of the
        hypothesis is dropped, as there)."""
        torch = runtime.torch()
        decoded = []
        for i, token_offsets in enumerate(offsets):
            n = len(token_offsets)
            spans: list[dict[str, Any]] = []
            current: dict[str, Any] | None = None
            for token, p, offset in zip(ids[i, :n], probs[i][:n], token_offsets):
                probability, index = torch.topk(p, 1)
                label = self.labels[int(index[0].item())]
                if label.startswith("I"):
                    if current is None:
                        current = {"tokens": [int(token)], "severity": label.split("-")[1],
                                   "offset": list(offset), "confidence": [probability]}  # fmt: skip
                    else:
                        current["tokens"].append(int(token))
                        current["confidence"].append(probability)
                        current["offset"][1] = offset[1]
                elif current is not None:
                    spans.append(current)
                    current = None
            decoded.append(
                [
                    {
                        "text": self.encoder.decode(span["tokens"]),
                        "confidence": torch.concat(span["confidence"]).float().mean().item(),
                        "severity": span["severity"],
                        "start": span["offset"][0],
                        "end": span["offset"][1],
                    }
                    for span in spans
                ]
            )
        return decoded

    def predict_batch(self, batch: dict[str, list[str]]) -> Prediction:
        torch = runtime.torch()
        inputs, offsets = self._inputs_of(batch)
        outputs = [self._forward(x) for x in inputs]
        if len(outputs) == 3:
            scores = torch.stack([s for s, _ in outputs], dim=0).mean(dim=0)
            metadata = {
                "src_scores": outputs[0][0].float().tolist(),
                "ref_scores": outputs[1][0].float().tolist(),
                "unified_scores": outputs[2][0].float().tolist(),
            }
        else:
            scores, metadata = outputs[0][0], {}
        spans = None
        if self.word_level:
            probs = self._subword_probs(inputs, [o for _, o in outputs])
            spans = self._decode(probs, inputs[0]["ids"], offsets)
        return Prediction(scores.float().tolist(), spans, metadata)


class XCometModel(UnifiedModel):
    """xCOMET: the regression scores (capped at 1) and a score from its own error spans."""

    def predict_batch(self, batch: dict[str, list[str]]) -> Prediction:
        torch = runtime.torch()
        inputs, offsets = self._inputs_of(batch)
        outputs = [self._forward(x) for x in inputs]
        probs = self._subword_probs(inputs, [o for _, o in outputs])
        spans = self._decode(probs, inputs[0]["ids"], offsets)
        penalties = [
            min(sum(SEVERITY_PENALTY.get(s["severity"], 0) for s in row), 25) for row in spans
        ]
        mqm = (torch.tensor(penalties) * -1 + 25) / 25
        if len(outputs) == 3:
            regression = torch.stack(
                [
                    torch.where(s > 1.0, 1.0, s) * w
                    for (s, _), w in zip(outputs, XCOMET_WEIGHTS[:3])
                ],
                dim=0,
            ).sum(dim=0)
            metadata = {
                "src_scores": outputs[0][0].float().tolist(),
                "ref_scores": outputs[1][0].float().tolist(),
                "unified_scores": outputs[2][0].float().tolist(),
            }
        else:
            capped = torch.where(outputs[0][0] > 1.0, 1.0, outputs[0][0])
            regression = capped * sum(XCOMET_WEIGHTS[:3])
            metadata = {"src_scores": capped.float().tolist()}
        final = regression + mqm.to(regression.device) * XCOMET_WEIGHTS[3]
        metadata["mqm_scores"] = mqm.float().tolist()
        return Prediction(final.float().tolist(), spans, metadata)


#: class_identifier -> the class that computes it.
CLASSES: dict[str, type[CometModel]] = {
    "regression_metric": RegressionModel,
    "referenceless_regression_metric": ReferencelessModel,
    "unified_metric": UnifiedModel,
    "xcomet_metric": XCometModel,
}


def build(checkpoint: Checkpoint, encoder_folder: Path, device: Any, dtype: Any) -> CometModel:
    return CLASSES[checkpoint.class_identifier](checkpoint, encoder_folder, device, dtype)


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
