"""COMET's unified families, computed as unbabel-comet 2.2.7 computes them:

* ``unified_metric`` (CometKiwi, UniTE): the segments concatenated into one sequence
  (``<s> mt </s></s> src </s>``...), the head on the first token of the layer mix, the mean
  over the input combinations, optional word-level error tags;
* ``xcomet_metric``: the unified model whose score also counts its own error spans."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bleucli.errors import InputError
from bleucli.neural import runtime
from bleucli.neural.checkpoint import Checkpoint
from bleucli.neural.encoder import _load_exactly
from bleucli.neural.model import CometModel, Prediction

#: xCOMET's weights of its three regression scores and of the score from its error spans.
XCOMET_WEIGHTS = [0.12, 0.33, 0.33, 0.22]
#: Unified models: how much each input combination's tags count (mt+src, mt+ref, all).
SPAN_WEIGHTS = [0.1667, 0.3333, 0.5]
#: MQM-style penalty per error severity (xCOMET's score from its spans).
SEVERITY_PENALTY = {"minor": 1, "major": 5, "critical": 10}


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
