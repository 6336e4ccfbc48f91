"""Small COMET checkpoints of every class, built from nothing: a SentencePiece model trained
on the shipped examples, an XLM-R-shaped encoder of a few tiny layers, random weights from a
seeded NumPy generator, saved in COMET's own layout::

    FOLDER/encoder/            config.json, tokenizer.json, tokenizer_config.json
    FOLDER/KIND/hparams.yaml   (class_identifier, pretrained_model: ../encoder, ...)
    FOLDER/KIND/checkpoints/model.ckpt   ({"state_dict": ..., "hyper_parameters": ...})

unbabel-comet 2.2.7 loads and scores these offline (``HF_HUB_OFFLINE=1``), which is how
``scripts/comet_fixtures.py`` stores its numbers; the tests build the same checkpoints and
compare bleucli's scores with them. :func:`fingerprint` names the weights and the tokenizer,
so a fixture is only ever compared with the checkpoint it was made from.

Random weights give degenerate layer mixes and no error spans, so the layer-mix weights and
the tagger are drawn wide on purpose."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [ROOT / "examples" / name for name in ("src.en", "ref.de", "ref2.de", "hyp.de", "hyp2.de")]
#: The encoder's size: tiny by default; XLM-R large's for benchmarks (where encoding
#: dominates as it does with real models).
TINY = {"hidden": 32, "layers": 2, "heads": 4, "ffn": 64}
LARGE = {"hidden": 1024, "layers": 24, "heads": 16, "ffn": 4096}
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]

#: kind -> (class_identifier, its own hyper-parameters)
KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "regression": (
        "regression_metric",
        {"pool": "avg", "layer": "mix", "layer_transformation": "sparsemax",
         "layer_norm": False, "hidden_sizes": [48, 16], "activations": "Tanh",
         "final_activation": None},
    ),
    "referenceless": (
        "referenceless_regression_metric",
        {"pool": "avg", "layer": "mix", "layer_transformation": "softmax",
         "layer_norm": True, "hidden_sizes": [24], "activations": "Tanh",
         "final_activation": "Sigmoid"},
    ),
    "unified": (
        "unified_metric",
        {"sent_layer": "mix", "layer_transformation": "sparsemax", "layer_norm": True,
         "word_layer": 2, "hidden_sizes": [24], "activations": "Tanh",
         "final_activation": None, "input_segments": ["mt", "src"],
         "word_level_training": False, "error_labels": ["minor", "major"]},
    ),
    "xcomet": (
        "xcomet_metric",
        {"sent_layer": "mix", "layer_transformation": "softmax", "layer_norm": False,
         "word_layer": 1, "hidden_sizes": [24, 12], "activations": "Tanh",
         "final_activation": None, "word_level_training": True,
         "error_labels": ["minor", "major", "critical"]},
    ),
}  # fmt: skip


def _sentences() -> list[str]:
    return [line for path in TEXTS for line in path.read_text(encoding="utf-8").splitlines()]


def build_encoder(folder: Path, dims: dict[str, int] = TINY) -> Path:
    """The shared encoder folder: SentencePiece trained here, a tokenizer.json in XLM-R's
    conventions (``<s> A </s></s> B </s>``, pad 1, unk 3), a tiny XLM-R config."""
    import sentencepiece
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    folder.mkdir(parents=True, exist_ok=True)
    prefix = folder / "sentencepiece.bpe"
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(_sentences()),
        model_prefix=str(prefix),
        vocab_size=400,
        model_type="unigram",
        num_threads=1,
        character_coverage=1.0,
        minloglevel=2,
    )
    processor = sentencepiece.SentencePieceProcessor(model_file=f"{prefix}.model")
    pieces = [
        (processor.id_to_piece(i), processor.get_score(i))
        for i in range(3, processor.get_piece_size())
    ]
    vocab = [(token, 0.0) for token in SPECIALS] + pieces + [("<mask>", 0.0)]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.NFKC(), normalizers.Replace(" {2,}", " ")]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    tokenizer.add_special_tokens(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "XLMRobertaTokenizer",
                "model_max_length": 512,
                "bos_token": "<s>",
                "eos_token": "</s>",
                "sep_token": "</s>",
                "cls_token": "<s>",
                "unk_token": "<unk>",
                "pad_token": "<pad>",
                "mask_token": "<mask>",
            },
            indent=1,
        )
    )
    config = {
        "architectures": ["XLMRobertaModel"],
        "model_type": "xlm-roberta",
        "vocab_size": len(vocab),
        "hidden_size": dims["hidden"],
        "num_hidden_layers": dims["layers"],
        "num_attention_heads": dims["heads"],
        "intermediate_size": dims["ffn"],
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": 514,
        "type_vocab_size": 1,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-05,
        "pad_token_id": 1,
        "bos_token_id": 0,
        "eos_token_id": 2,
        "position_embedding_type": "absolute",
    }
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    return folder


def _encoder_shapes(vocab: int, dims: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """XLM-R's parameter names and shapes (no pooler), as transformers names them."""
    h, ff = dims["hidden"], dims["ffn"]
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (vocab, h),
        "embeddings.position_embeddings.weight": (514, h),
        "embeddings.token_type_embeddings.weight": (1, h),
        "embeddings.LayerNorm.weight": (h,),
        "embeddings.LayerNorm.bias": (h,),
    }
    for n in range(dims["layers"]):
        p = f"encoder.layer.{n}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):  # fmt: skip
            shapes[p + name + ".weight"] = (h, h)
            shapes[p + name + ".bias"] = (h,)
        shapes[p + "attention.output.LayerNorm.weight"] = (h,)
        shapes[p + "attention.output.LayerNorm.bias"] = (h,)
        shapes[p + "intermediate.dense.weight"] = (ff, h)
        shapes[p + "intermediate.dense.bias"] = (ff,)
        shapes[p + "output.dense.weight"] = (h, ff)
        shapes[p + "output.dense.bias"] = (h,)
        shapes[p + "output.LayerNorm.weight"] = (h,)
        shapes[p + "output.LayerNorm.bias"] = (h,)
    return shapes


def _head_shapes(
    kind: str, own: dict[str, Any], dims: dict[str, int]
) -> dict[str, tuple[int, ...]]:
    inputs = {"regression": 6, "referenceless": 4}.get(kind, 1) * dims["hidden"]
    sizes = [inputs, *own["hidden_sizes"], 1]
    shapes: dict[str, tuple[int, ...]] = {}
    for n, (a, b) in enumerate(zip(sizes, sizes[1:])):
        shapes[f"estimator.ff.{3 * n}.weight"] = (b, a)
        shapes[f"estimator.ff.{3 * n}.bias"] = (b,)
    for n in range(dims["layers"] + 1):
        shapes[f"layerwise_attention.scalar_parameters.{n}"] = (1,)
    shapes["layerwise_attention.gamma"] = (1,)
    if own.get("word_level_training"):
        shapes["hidden2tag.weight"] = (len(own["error_labels"]) + 1, dims["hidden"])
        shapes["hidden2tag.bias"] = (len(own["error_labels"]) + 1,)
    return shapes


def _draw(name: str, shape: tuple[int, ...], rng: Any) -> Any:
    import numpy as np

    if name.endswith("LayerNorm.weight"):
        return 1.0 + 0.1 * rng.standard_normal(shape)
    if "scalar_parameters" in name:
        return 1.5 * rng.standard_normal(shape)
    if name == "layerwise_attention.gamma":
        return 1.0 + 0.2 * rng.standard_normal(shape)
    if name.startswith("hidden2tag"):
        return 2.0 * rng.standard_normal(shape)
    if name.startswith("estimator"):
        return 0.3 * rng.standard_normal(shape)
    if name.endswith("word_embeddings.weight") or name.endswith("position_embeddings.weight"):
        return 0.5 * rng.standard_normal(shape)
    return np.asarray(0.1 * rng.standard_normal(shape))


def build(folder: Path, kind: str, seed: int = 0, dims: dict[str, int] = TINY) -> Path:
    """One toy checkpoint of ``kind`` (a key of :data:`KINDS`) under ``folder``, sharing
    ``folder/encoder``; returns the checkpoint's ``model.ckpt`` path."""
    import numpy as np
    import torch
    import yaml

    encoder = folder / "encoder"
    if not (encoder / "tokenizer.json").exists():
        build_encoder(encoder, dims)
    vocab = json.loads((encoder / "config.json").read_text())["vocab_size"]
    identifier, own = KINDS[kind]
    rng = np.random.default_rng([seed, list(KINDS).index(kind)])
    state: dict[str, Any] = {}
    shapes = {f"encoder.model.{k}": v for k, v in _encoder_shapes(vocab, dims).items()}
    if dims is not TINY:
        own = {**own, "hidden_sizes": [3072, 1024]}  # COMET's own head
    shapes.update(_head_shapes(kind, own, dims))
    for name in sorted(shapes):
        value = np.asarray(_draw(name, shapes[name], rng), dtype=np.float32)
        state[name] = torch.from_numpy(value.copy())
    state["encoder.model.embeddings.word_embeddings.weight"][1] = 0.0  # the padding row
    hparams = {
        "nr_frozen_epochs": 0.3,
        "keep_embeddings_frozen": True,
        "optimizer": "AdamW",
        "encoder_learning_rate": 1.0e-06,
        "learning_rate": 1.5e-05,
        "layerwise_decay": 0.95,
        "encoder_model": "XLM-RoBERTa",
        # relative to the model folder: the checkpoint's bytes (its hash) do not depend on
        # where it was built, and the folder moves with its encoder
        "pretrained_model": "../encoder",
        "loss": "mse",
        "dropout": 0.1,
        "batch_size": 4,
        "train_data": [],
        "validation_data": [],
        "class_identifier": identifier,
        "load_pretrained_weights": False,
        **own,
    }
    model = folder / kind
    (model / "checkpoints").mkdir(parents=True, exist_ok=True)
    (model / "hparams.yaml").write_text(yaml.safe_dump(hparams, sort_keys=True))
    path = model / "checkpoints" / "model.ckpt"
    torch.save(
        {
            "state_dict": state,
            "hyper_parameters": hparams,
            "pytorch-lightning_version": "2.2.0",
            "epoch": 0,
            "global_step": 0,
        },
        path,
    )
    return path


def fingerprint(checkpoint: Path) -> str:
    """SHA-256 of a toy checkpoint's tensors (names, shapes, bytes) and its tokenizer: what
    a fixture was computed on, independent of how torch lays out the file."""
    import torch

    digest = hashlib.sha256()
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)["state_dict"]
    for name in sorted(state):
        tensor = state[name].contiguous()
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}\n".encode())
        digest.update(tensor.numpy().tobytes())
    encoder = checkpoint.parents[2] / "encoder"
    for file in ("tokenizer.json", "config.json"):
        digest.update((encoder / file).read_bytes())
    return digest.hexdigest()


def build_all(folder: Path, seed: int = 0) -> dict[str, Path]:
    return {kind: build(folder, kind, seed) for kind in KINDS}


def build_metricx(folder: Path, seed: int = 0) -> Path:
    """A toy MetricX-24 checkpoint in transformers' layout: an mT5 of two tiny layers with
    mT5's vocabulary size (the score is read at token 250089), random weights (the score
    token's output row drawn wide, so scores spread over the clamp's range), and a
    SentencePiece model trained on the shipped examples as its ``spiece.model``."""
    import sentencepiece
    import torch
    from transformers import MT5Config, MT5ForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(_sentences()),
        model_prefix=str(folder / "spiece"),
        vocab_size=400,
        model_type="unigram",
        num_threads=1,
        character_coverage=1.0,
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        minloglevel=2,
    )
    config = MT5Config(
        vocab_size=250112, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
        num_heads=4, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )  # fmt: skip
    torch.manual_seed(seed)
    model = MT5ForConditionalGeneration(config).eval()
    # the score token's output row: a mean logit of 12 and a spread of about 6 over the
    # examples' inputs (random weights alone put every score at one end of [0, 25])
    processor = sentencepiece.SentencePieceProcessor(model_file=str(folder / "spiece.model"))
    inputs: list[Any] = []
    hook = model.lm_head.register_forward_hook(lambda m, args, out: inputs.append(args[0][:, 0, :]))
    texts = [line for path in TEXTS[:4] for line in path.read_text(encoding="utf-8").splitlines()]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # float sums in one order, whatever the machine's cores
    try:
        with torch.no_grad():
            for text in texts:
                model(input_ids=torch.tensor([processor.encode(f"source: {text} candidate: {text}")]),
                      decoder_input_ids=torch.tensor([[0]]))  # fmt: skip
            hook.remove()
            # in float64 and rounded to 1e-4: the last bits of float32 arithmetic differ
            # between CPUs (vector widths), the written row must not (its hash is documented)
            z = torch.cat(inputs).double()
            mean = z.mean(0)
            direction = torch.linalg.svd(z - mean, full_matrices=False)[2][0]
            direction = direction * torch.sign(direction.sum())  # SVD's sign is arbitrary
            direction = direction - direction.dot(mean) / mean.dot(mean) * mean
            spread = ((z - mean) @ direction).std()
            row = 12 * mean / mean.dot(mean) + 6 / spread * direction
            model.lm_head.weight[250089] = (row * 10_000).round().float() / 10_000
    finally:
        torch.set_num_threads(threads)
    model.save_pretrained(str(folder), safe_serialization=True)
    return folder


if __name__ == "__main__":
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "toy-comet")
    for kind, path in build_all(target).items():
        print(kind, path, fingerprint(path))
    print("metricx", build_metricx(target / "metricx"))
