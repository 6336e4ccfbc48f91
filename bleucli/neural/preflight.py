"""Everything that can be checked about neural metrics before torch is imported or a byte
is downloaded, so a mistake is one line at once instead of after 7-11 s of imports and half
a minute of retries: the source sentences the metric reads are given, a model folder holds
a readable checkpoint and its encoder, a registered model is downloaded or its hub answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bleucli.errors import ConfigError, InputError

if TYPE_CHECKING:  # every run calls check_sources: zipfile and pathlib load only for models
    from pathlib import Path


def check_sources(metrics: Sequence[str], have_source: bool, have_references: bool) -> None:
    """Refuse (before anything is loaded) metrics that read the source sentences when none
    are given, naming what to give: ``--source FILE`` (or a test set)."""
    from bleucli.metrics import metric_class

    needing = [m for m in metrics if getattr(metric_class(m), "requires_source", False)]
    if needing and not have_source:
        names = " ".join(needing)
        what = "reference-free " if not have_references else ""
        raise ConfigError(
            f"-m {names}: {what}neural metrics read the source sentences: give --source FILE "
            f"(one source sentence per line), or a test set with -t that brings its own"
        )


def check_models(metrics: Sequence[str], options: Mapping[str, Mapping[str, Any]]) -> None:
    """Each neural metric's model, checked without torch: a folder holds what loading it
    needs, a registered model is downloaded or its hub can be reached now."""
    from bleucli.metrics import metric_class

    for name in metrics:
        cls = metric_class(name)
        if not cls.uses_source or not hasattr(cls, "prefix"):
            continue
        spec = options.get(name, {}).get("model") or getattr(cls, "default_model", None)
        if spec is None:
            from bleucli.neural.registry import default_model

            spec = default_model(cls.key or name)
        check_model(str(spec), f"--{cls.prefix}-model")


def check_model(spec: str, flag: str = "--comet-model") -> None:
    """One model (a registered name, a folder, ``NAME@HASH``), checked without torch."""
    import zipfile
    from pathlib import Path

    from bleucli.neural.load import split_spec, weights_file

    name, _ = split_spec(spec)
    path = Path(name).expanduser()
    if path.exists():
        file = weights_file(path)
        if file.suffix == ".ckpt":
            _check_comet_folder(file)
        elif not zipfile.is_zipfile(file) and file.suffix == ".bin":
            raise InputError(f"{file}: not a PyTorch file (damaged, or another format)")
        return
    if name.count("/") > 1 or name.startswith((".", "~", "/")):
        raise InputError(
            f"{path}: no model here (expected MODEL/checkpoints/model.ckpt beside "
            f"MODEL/hparams.yaml, or a MetricX folder with model.safetensors)"
        )
    from bleucli.neural.hub import all_cached, ensure_reachable
    from bleucli.neural.registry import get

    entry = get(name)
    for needed in [entry, *([get(entry.encoder)] if entry.encoder else [])]:
        if not all_cached(needed):
            ensure_reachable(needed, flag)


def _check_comet_folder(file: Path) -> None:
    """A COMET folder: a checkpoint torch can open (a zip archive, as ``torch.save``
    writes) and the encoder its ``hparams.yaml`` names."""
    import zipfile
    from pathlib import Path

    from bleucli.neural.checkpoint import read_hparams

    if not zipfile.is_zipfile(file):
        raise InputError(
            f"{file}: not a checkpoint torch can read (not the zip archive torch.save writes: "
            f"damaged, or cut short by a download); fetch it again"
        )
    hparams = read_hparams(file)
    pretrained = hparams.get("pretrained_model")
    if pretrained is None:
        return  # the checkpoint's own setting (or COMET's default encoder) decides
    local = Path(str(pretrained)).expanduser()
    folder = file.parents[1]
    if (not local.is_absolute() and (folder / local).is_dir()) or local.is_dir():
        return
    from bleucli.neural.hub import all_cached, encoder_entry, ensure_reachable

    entry = encoder_entry(str(pretrained))
    if entry is None:
        raise ConfigError(
            f"{folder / 'hparams.yaml'}: pretrained_model {str(pretrained)!r} is neither a folder "
            f"(relative to {folder}, or absolute) nor a registered encoder (bleucli models list); "
            f"edit it to name the encoder's folder"
        )
    if not all_cached(entry):
        ensure_reachable(entry)
