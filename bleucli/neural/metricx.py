"""MetricX-24 (google-research/metricx; WMT24's strongest baseline): an mT5 encoder-decoder
read as a regressor, computed with transformers' own MT5 classes.

The recipe: the input text ``source: {src} candidate: {hyp} reference: {ref}`` (QE: no
reference part), tokenised with the model's mT5 SentencePiece model, at most 1,536 tokens
with the final EOS removed; one decoder step from the start token; the score is the logit of
token 250089 (``<extra_id_10>``) clamped to [0, 25]. Lower is better (an MQM-like error
score). Inputs are run in batches of equal token length, without padding; batches of
several inputs round differently from one input at a time (by a few units in the last
place), so the same batch size gives the same bits, and batch size 1 gives the recipe's
one-at-a-time numbers."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bleucli.errors import InputError
from bleucli.neural import runtime
from bleucli.neural.model import NeuralModel, Prediction

MAX_TOKENS = 1536
SCORE_TOKEN = 250089
SCORE_RANGE = (0.0, 25.0)


def input_text(source: str, hypothesis: str, reference: str | None) -> str:
    if reference is None:
        return f"source: {source} candidate: {hypothesis}"
    return f"source: {source} candidate: {hypothesis} reference: {reference}"


class MetricXModel(NeuralModel):
    """A MetricX-24 checkpoint: ``config.json`` (model_type mt5) and ``model.safetensors``
    (or ``pytorch_model.bin``), with the mT5 tokenizer's ``spiece.model``."""

    needs_reference = False  # the hybrid models score with or without a reference

    def __init__(self, folder: Path, tokenizer_folder: Path, device: Any, dtype: Any) -> None:
        transformers = runtime.require("transformers")
        sentencepiece = runtime.require("sentencepiece")
        config_file = folder / "config.json"
        try:
            config = json.loads(config_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise InputError(
                f"{config_file}: cannot read the model's configuration ({err})"
            ) from None
        if config.get("model_type") not in ("mt5", "t5"):
            raise InputError(
                f"{config_file}: model_type {config.get('model_type')!r} is not mT5 (MetricX)"
            )
        if config.get("vocab_size", 0) <= SCORE_TOKEN:
            raise InputError(
                f"{config_file}: vocab_size {config.get('vocab_size')} has no token {SCORE_TOKEN}"
            )
        spiece = tokenizer_folder / "spiece.model"
        if not spiece.is_file():
            raise InputError(
                f"{tokenizer_folder}: spiece.model (the mT5 tokenizer) is missing; copy the one "
                f"of google/mt5-xl (or the model's size) beside the weights"
            )
        self.tokenizer = sentencepiece.SentencePieceProcessor(model_file=str(spiece))
        transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bar on stderr
        self.model = transformers.MT5ForConditionalGeneration.from_pretrained(
            str(folder), torch_dtype=dtype, local_files_only=True
        )
        self._check_loaded(folder)
        self.model.to(device).eval()
        self.device, self.dtype = device, dtype
        self.start = int(self.model.config.decoder_start_token_id or 0)

    def _check_loaded(self, folder: Path) -> None:
        """Every weight from the file: transformers fills missing tensors with random ones
        and says so only in a log line."""
        from safetensors import safe_open

        file = folder / "model.safetensors"
        if not file.is_file():
            return
        with safe_open(str(file), "pt") as handle:
            stored = set(handle.keys())
        state = self.model.state_dict()
        shared = {state[name].data_ptr() for name in stored if name in state}
        # a tensor the model ties to a stored one (the embeddings, a tied output layer) is loaded
        missing = sorted(n for n in set(state) - stored if state[n].data_ptr() not in shared)
        if missing:
            raise InputError(
                f"{file}: tensors missing from the checkpoint: {', '.join(missing[:4])}"
            )

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """mT5 ids truncated as ``tokenizer(max_length=1536, truncation=True)`` truncates
        (keeping room for EOS), EOS then removed."""
        return [ids[: MAX_TOKENS - 1] for ids in self.tokenizer.encode(texts)]

    def count_tokens(self, texts: list[str]) -> int:
        """Tokens of the hypotheses alone (the model reads them with the source and the
        reference, which are the test set's)."""
        return sum(len(ids) for ids in self.tokenize(texts)) if texts else 0

    def _score_ids(self, sequences: list[list[int]]) -> list[float]:
        torch = runtime.torch()
        ids = torch.tensor(sequences, device=self.device)
        mask = torch.ones_like(ids)
        start = torch.full((len(sequences), 1), self.start, dtype=torch.long, device=self.device)
        logits = self.model(input_ids=ids, attention_mask=mask, decoder_input_ids=start).logits
        scores = torch.clamp(logits[:, 0, SCORE_TOKEN].float(), *SCORE_RANGE)
        return scores.tolist()

    def predict(
        self,
        samples: dict[str, Sequence[str]],
        batch_size: int = 16,
        progress: Callable[[int], None] | None = None,
    ) -> Prediction:
        torch = runtime.torch()
        hyps = samples["mt"]
        refs = samples.get("ref")
        texts = [
            input_text(s, h, refs[i] if refs is not None else None)
            for i, (s, h) in enumerate(zip(samples["src"], hyps))
        ]
        sequences = self.tokenize(texts)
        by_length: dict[int, list[int]] = {}
        for index, sequence in enumerate(sequences):
            by_length.setdefault(len(sequence), []).append(index)
        scores: list[float] = [0.0] * len(texts)
        with torch.inference_mode():
            for length in sorted(by_length):
                group = by_length[length]
                for start in range(0, len(group), batch_size):
                    chunk = group[start : start + batch_size]
                    for index, score in zip(chunk, self._score_ids([sequences[i] for i in chunk])):
                        scores[index] = score
                    if progress is not None:
                        progress(len(chunk))
        return Prediction(scores)
