"""The neural model registry (``testsets/models/neural.json``, plus files named by
``BLEUCLI_MODELS``): model name -> hub repository, revision, files with their SHA-256,
licence, COMET class and encoder. As the test-set registry pins data files, this pins the
weights every neural score was computed with.

A file whose hash the registry leaves ``null`` is pinned on first download: the hash is
recorded in the cache's lock file (``bleucli models verify`` checks it later) and the
signature carries it, so scores from other weights never pass as comparable."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from bleucli.errors import ConfigError, UsageError
from bleucli.neural.families import REGISTRY_CLASSES

ENV_MODELS = "BLEUCLI_MODELS"
CLASSES = REGISTRY_CLASSES
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ModelEntry:
    name: str
    metric: str | None  # the -m name it is the default of (None: an encoder)
    description: str
    repo: str
    revision: str | None
    model_class: str
    licence: str
    encoder: str | None
    files: dict[str, str | None]  # path in the repository -> SHA-256 (None: pinned on use)

    @property
    def checkpoint(self) -> str | None:
        """The weights file (COMET's ``model.ckpt``, MetricX's ``model.safetensors``)."""
        return next((f for f in self.files if f.endswith((".ckpt", ".safetensors", ".bin"))), None)


def _entry(name: str, raw: Any, where: str) -> ModelEntry:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: model {name!r} must be an object")
    required = ("repo", "class", "files")
    missing = [k for k in required if k not in raw]
    if missing:
        raise ConfigError(f"{where}: model {name!r} lacks {', '.join(missing)}")
    if raw["class"] not in CLASSES:
        raise ConfigError(
            f"{where}: model {name!r}: class {raw['class']!r} is not one of {', '.join(CLASSES)}"
        )
    files = raw["files"]
    if not isinstance(files, dict) or not files:
        raise ConfigError(f"{where}: model {name!r}: files must map paths to SHA-256 (or null)")
    for path, digest in files.items():
        if digest is not None and not (isinstance(digest, str) and _SHA256.fullmatch(digest)):
            raise ConfigError(f"{where}: model {name!r}: {path}: {digest!r} is not a SHA-256")
    return ModelEntry(
        name=name,
        metric=raw.get("metric"),
        description=raw.get("description", ""),
        repo=raw["repo"],
        revision=raw.get("revision"),
        model_class=raw["class"],
        licence=raw.get("licence", "unknown"),
        encoder=raw.get("encoder"),
        files=dict(files),
    )


def _read(path: Path) -> dict[str, ModelEntry]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError(f"{path}: cannot read the model registry ({err})") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: a model registry is a JSON object of models")
    return {name: _entry(name, raw, str(path)) for name, raw in document.items()}


@lru_cache(maxsize=4)
def _registry(extra: str) -> dict[str, ModelEntry]:
    from bleucli.testsets.registry import builtin_registry_dir

    entries = _read(builtin_registry_dir() / "models" / "neural.json")
    for item in filter(None, extra.split(os.pathsep)):
        entries.update(_read(Path(item)))
    return entries


def registry() -> dict[str, ModelEntry]:
    """Every model: built in, then ``BLEUCLI_MODELS`` files (later entries win)."""
    return _registry(os.environ.get(ENV_MODELS, ""))


def get(name: str) -> ModelEntry:
    entries = registry()
    if name in entries:
        return entries[name]
    by_repo = [e for e in entries.values() if e.repo == name or e.repo.split("/")[-1] == name]
    if by_repo:
        return by_repo[0]
    known = ", ".join(n for n, e in entries.items() if e.metric)
    raise UsageError(
        f"unknown model {name!r}: give a registered name ({known}) or a checkpoint folder"
    )


def default_model(metric: str) -> str:
    """The registered model a metric uses when none is named (the first listed for it)."""
    for name, entry in registry().items():
        if entry.metric == metric:
            return name
    raise ConfigError(f"no registered model for {metric}; give one with --{metric}-model")
