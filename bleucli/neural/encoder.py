"""The encoder under every COMET model: XLM-R (or XLM-R XL) with its tokenizer.

The tokenizer is the encoder folder's ``tokenizer.json`` run by the ``tokenizers`` library
itself, configured as transformers' XLM-R tokenizer is (truncation to the encoder's
positions less two, right padding with ``<pad>``), so token ids and character offsets
equal unbabel-comet's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bleucli.errors import ConfigError, InputError
from bleucli.neural import runtime

#: COMET's encoder_model names -> transformers' model and config classes.
ENCODERS = {
    "XLM-RoBERTa": ("XLMRobertaModel", "XLMRobertaConfig"),
    "XLM-RoBERTa-XL": ("XLMRobertaXLModel", "XLMRobertaXLConfig"),
}
#: transformers' clean-up of decoded text (``clean_up_tokenization_spaces``).
_CLEAN_UP = [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
             (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]  # fmt: skip


class Encoder:
    """Tokenizer and transformer of one encoder folder (config.json, tokenizer.json)."""

    def __init__(self, folder: Path, encoder_model: str, state: dict[str, Any]) -> None:
        if encoder_model not in ENCODERS:
            raise ConfigError(
                f"encoder {encoder_model!r} is not supported (bleucli runs {', '.join(ENCODERS)})"
            )
        tokenizers = runtime.require("tokenizers")
        transformers = runtime.require("transformers")
        for name in ("config.json", "tokenizer.json"):
            if not (folder / name).is_file():
                raise InputError(f"{folder}: the encoder's {name} is missing")
        model_class, config_class = (getattr(transformers, n) for n in ENCODERS[encoder_model])
        config = config_class.from_dict(json.loads((folder / "config.json").read_text()))
        config._attn_implementation = "sdpa"
        with _no_init(transformers):  # the weights come from the checkpoint: no random draw
            self.model = model_class(config, add_pooling_layer=False)
        self.model.eval()
        own = {
            k[len("encoder.model.") :]: v
            for k, v in state.items()
            if k.startswith("encoder.model.")
        }
        _load_exactly(self.model, own, "the encoder")
        self.max_positions = config.max_position_embeddings - 2
        self.num_layers = config.num_hidden_layers + 1
        self.hidden = config.hidden_size

        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_positions - 2)
        self.pad_id = self.tokenizer.token_to_id("<pad>")
        self.cls_id = self.tokenizer.token_to_id("<s>")
        self.sep_id = self.tokenizer.token_to_id("</s>")
        if None in (self.pad_id, self.cls_id, self.sep_id):
            raise InputError(f"{folder}/tokenizer.json: not an XLM-R tokenizer (<s>, </s>, <pad>)")
        settings = {}
        if (folder / "tokenizer_config.json").is_file():
            settings = json.loads((folder / "tokenizer_config.json").read_text())
        self.clean_up = bool(settings.get("clean_up_tokenization_spaces", False))

    def encode(self, texts: list[str]) -> list[Any]:
        """Token encodings (ids and character offsets) of each text, specials included."""
        return self.tokenizer.encode_batch(texts)

    def decode(self, ids: list[int]) -> str:
        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        if self.clean_up:
            for old, new in _CLEAN_UP:
                text = text.replace(old, new)
        return text

    def pad(self, sequences: list[list[int]]) -> tuple[Any, Any]:
        """Input ids padded on the right and their attention mask."""
        torch = runtime.torch()
        longest = max(len(s) for s in sequences)
        ids = torch.tensor([s + [self.pad_id] * (longest - len(s)) for s in sequences])
        mask = torch.tensor([[1] * len(s) + [0] * (longest - len(s)) for s in sequences])
        return ids, mask

    def layers(self, input_ids: Any, attention_mask: Any) -> tuple[Any, ...]:
        """Every layer's hidden states, the embeddings' first."""
        out = self.model(
            input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True
        )
        return tuple(out.hidden_states)


def _no_init(transformers: Any) -> Any:
    """transformers' context that skips weight initialisation (seconds for XLM-R large)."""
    from contextlib import nullcontext

    for where in ("transformers.initialization", "transformers.modeling_utils"):
        try:
            module = __import__(where, fromlist=["no_init_weights"])
        except ImportError:
            continue
        if hasattr(module, "no_init_weights"):
            return module.no_init_weights()
    return nullcontext()


def _load_exactly(module: Any, state: dict[str, Any], what: str) -> None:
    """Load ``state`` into ``module`` and refuse a missing or unknown tensor: unbabel-comet
    loads with ``strict=False``, where a misnamed key silently keeps random weights."""
    expected = set(module.state_dict())
    missing = sorted(expected - set(state))
    unknown = sorted(set(state) - expected)
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing[:3])}" + (" ..." if len(missing) > 3 else ""))
        if unknown:
            parts.append(f"unknown {', '.join(unknown[:3])}" + (" ..." if len(unknown) > 3 else ""))
        raise InputError(f"checkpoint: {what} does not match its weights ({'; '.join(parts)})")
    module.load_state_dict(state, strict=True, assign=True)
