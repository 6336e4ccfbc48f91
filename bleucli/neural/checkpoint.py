"""COMET's checkpoint layout: ``MODEL/hparams.yaml`` and ``MODEL/checkpoints/model.ckpt``
(a PyTorch Lightning checkpoint: ``state_dict`` and ``hyper_parameters``).

As unbabel-comet does, the class comes from ``hparams.yaml``'s ``class_identifier`` and
the settings from the checkpoint's own ``hyper_parameters`` where it has them; options a
checkpoint leaves out take the class's defaults (those of unbabel-comet 2.2.7). One
exception: ``pretrained_model`` -- where the encoder's tokenizer and configuration are,
never a number -- is ``hparams.yaml``'s when it names one, and a relative path is read from
the model folder, so a model folder moves with its encoder and is re-pointed by editing
``hparams.yaml``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bleucli.errors import ConfigError, InputError
from bleucli.neural import runtime

#: Each class's defaults for the settings that change what it computes.
DEFAULTS: dict[str, dict[str, Any]] = {
    "regression_metric": {
        "pool": "avg", "layer": "mix", "layer_transformation": "softmax", "layer_norm": True,
        "hidden_sizes": [3072, 1024], "activations": "Tanh", "final_activation": None,
    },
    "referenceless_regression_metric": {
        "pool": "avg", "layer": "mix", "layer_transformation": "softmax", "layer_norm": True,
        "hidden_sizes": [3072, 1024], "activations": "Tanh", "final_activation": None,
    },
    "unified_metric": {
        "sent_layer": "mix", "layer_transformation": "sparsemax", "layer_norm": True,
        "word_layer": 24, "hidden_sizes": [3072, 1024], "activations": "Tanh",
        "final_activation": None, "input_segments": ["mt", "src", "ref"],
        "word_level_training": False, "error_labels": ["minor", "major"],
    },
    "xcomet_metric": {
        "sent_layer": "mix", "layer_transformation": "sparsemax", "layer_norm": False,
        "word_layer": 36, "hidden_sizes": [2560, 1280], "activations": "Tanh",
        "final_activation": None, "word_level_training": True,
        "error_labels": ["minor", "major", "critical"],
    },
}  # fmt: skip
COMMON = {"encoder_model": "XLM-RoBERTa", "pretrained_model": "xlm-roberta-large"}


@dataclass
class Checkpoint:
    """A COMET checkpoint read from disk."""

    path: Path  # .../checkpoints/model.ckpt
    class_identifier: str
    hparams: dict[str, Any]
    state: dict[str, Any]  # tensors by name

    @property
    def folder(self) -> Path:
        return self.path.parents[1]


def checkpoint_file(path: str | Path) -> Path:
    """The ``model.ckpt`` of a model folder, or the file itself."""
    path = Path(path)
    if path.is_dir():
        path = path / "checkpoints" / "model.ckpt"
    if not path.is_file():
        raise InputError(
            f"{path}: no COMET checkpoint here (expected MODEL/checkpoints/model.ckpt "
            f"beside MODEL/hparams.yaml)"
        )
    return path


def hparams_path(file: Path) -> Path:
    """The ``hparams.yaml`` of a checkpoint file (COMET's layout: ``checkpoints/`` beside it)."""
    return file.parents[1] / "hparams.yaml"


def read_hparams(file: Path) -> dict[str, Any]:
    yaml = runtime.require("yaml")
    hparams_file = hparams_path(file)
    if not hparams_file.is_file():
        raise InputError(f"{hparams_file.parent}: hparams.yaml is missing (COMET's layout)")
    try:
        hparams = yaml.safe_load(hparams_file.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise InputError(f"{hparams_file}: not YAML ({err})") from None
    if not isinstance(hparams, dict):
        raise InputError(f"{hparams_file}: expected a mapping of settings")
    return hparams


def load(path: str | Path, trusted: bool = False) -> Checkpoint:
    """Read a checkpoint. Tensors are unpickled with torch's ``weights_only`` loader; a
    checkpoint that needs arbitrary unpickling loads only when ``trusted`` (its hash is
    pinned in the model registry)."""
    torch = runtime.torch()
    file = checkpoint_file(path)
    hparams = read_hparams(file)
    identifier = hparams.get("class_identifier")
    if identifier not in DEFAULTS:
        known = ", ".join(DEFAULTS)
        raise ConfigError(
            f"{file.parents[1] / 'hparams.yaml'}: class_identifier {identifier!r} is not one "
            f"bleucli computes ({known})"
        )
    try:
        # mmap: the tensors are the page cache's pages, not a 1.3 GB copy (~0.9 s saved)
        stored = torch.load(file, map_location="cpu", weights_only=True, mmap=True)
    except Exception as err:  # noqa: BLE001 - torch raises many kinds for a bad file
        import re

        found = re.search(r"Unsupported global: GLOBAL ([\w.]+)", str(err))
        if not trusted or found is None:
            why = (
                f"it holds Python objects ({found.group(1)}) that only a trusted checkpoint "
                f"may unpickle; register it with its hash (BLEUCLI_MODELS) if you trust it"
                if found
                else str(err).splitlines()[0][:200]
            )
            raise InputError(f"{file}: not a checkpoint torch can read safely: {why}") from None
        stored = torch.load(file, map_location="cpu", weights_only=False)
    if not isinstance(stored, dict) or not isinstance(stored.get("state_dict"), dict):
        raise InputError(f"{file}: no state_dict in this checkpoint")
    settings = {**COMMON, **DEFAULTS[identifier], **hparams}
    settings.update(stored.get("hyper_parameters") or {})
    if "pretrained_model" in hparams:
        # where the encoder's tokenizer and configuration are: hparams.yaml says it (a user
        # who moves a model edits it there); the weights all come from the checkpoint
        settings["pretrained_model"] = hparams["pretrained_model"]
    if settings.get("layer_transformation") == "sparsemax_patch":
        settings["layer_transformation"] = "softmax"  # unbabel-comet >= 2.2.4 (its #244)
    if identifier == "xcomet_metric":
        settings["input_segments"] = ["mt", "src", "ref"]
        settings["word_level_training"] = True
    return Checkpoint(file, identifier, settings, stored["state_dict"])
