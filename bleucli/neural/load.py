"""From a model name or folder to a ready model of any family (COMET's checkpoints,
MetricX's transformers folders): resolve (registry or local folder), hash, load once per
process through :mod:`bleucli.neural.families`, and the identity a signature states
(``NAME@HASH``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bleucli.errors import ConfigError, InputError
from bleucli.neural import runtime

#: The identity field of a signature is the name and this many hex digits of the hash.
HASH_DIGITS = 8
#: Models loaded in this process: (weights digest, settings digest, device, precision).
_LOADED: dict[tuple[str, str, str, str], Loaded] = {}
_HASHES: dict[tuple[str, int, int], str] = {}


@dataclass
class Loaded:
    name: str  # registry name, or the checkpoint folder's name
    sha256: str  # of checkpoints/model.ckpt
    model_class: str
    model: Any  # bleucli.neural.models.CometModel

    @property
    def identity(self) -> str:
        return f"{self.name}@{self.sha256[:HASH_DIGITS]}"


def split_spec(spec: str) -> tuple[str, str | None]:
    """``NAME@HASH`` -> (NAME, HASH); a plain name or path -> (it, None)."""
    head, sep, tail = spec.rpartition("@")
    if (
        sep
        and tail
        and all(c in "0123456789abcdef" for c in tail.lower())
        and not Path(spec).exists()
    ):
        return head, tail.lower()
    return spec, None


def file_hash(path: Path) -> str:
    """SHA-256 of a local file, remembered per (path, size, mtime, inode) in this process
    and in bleucli's cache (``neural/hashes.json``): a 2 GB checkpoint takes seconds to hash,
    every run. ``bleucli models verify`` always reads the files."""
    import json

    from bleucli.hashing import file_digest as sha256

    stat = path.stat()
    resolved = str(path.resolve())
    key = (resolved, stat.st_size, stat.st_mtime_ns)
    if key in _HASHES:
        return _HASHES[key]
    memo_key = f"{resolved}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ino}"
    memo = _hash_memo()
    try:
        known = json.loads(memo.read_text(encoding="utf-8")) if memo.is_file() else {}
    except (OSError, ValueError):
        known = {}
    digest = known.get(memo_key) if isinstance(known, dict) else None
    if not (isinstance(digest, str) and len(digest) == 64):
        digest = sha256(path)
        _remember_hash(memo, memo_key, digest)
    _HASHES[key] = digest
    return digest


def _hash_memo() -> Path:
    from bleucli.cache import cache_root

    return cache_root() / "neural" / "hashes.json"


def _remember_hash(memo: Path, key: str, digest: str) -> None:
    """Add one hash to the memo (atomically, under a lock); a cache that cannot be written
    only costs the next run the hashing."""
    import json

    from filelock import FileLock

    from bleucli.io import atomic_replace

    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(memo) + ".lock", timeout=60):
            try:
                known = json.loads(memo.read_text(encoding="utf-8")) if memo.is_file() else {}
            except ValueError:
                known = {}
            if not isinstance(known, dict):
                known = {}
            known[key] = digest
            with atomic_replace(memo) as tmp, open(tmp, "w", encoding="utf-8") as handle:
                json.dump(known, handle, indent=0, sort_keys=True)
    except (OSError, TimeoutError):
        pass


def resolve(spec: str) -> tuple[str, Path, str, bool]:
    """(name, checkpoint file, its SHA-256, trusted) of a registry name or a local folder."""

    name, wanted = split_spec(spec)
    path = Path(name).expanduser()
    if path.exists():
        file = weights_file(path)
        folder = file.parents[1] if file.suffix == ".ckpt" else file.parent
        digest, label, trusted = file_hash(file), folder.name, False
    elif name.count("/") > 1 or name.startswith((".", "~", "/")):  # a path, not a hub name
        raise InputError(
            f"{path}: no COMET checkpoint here (expected MODEL/checkpoints/model.ckpt "
            f"beside MODEL/hparams.yaml, or a MetricX folder with model.safetensors)"
        )
    else:
        from bleucli.neural.hub import fetch
        from bleucli.neural.registry import get

        entry = get(name)
        if entry.model_class == "encoder" or entry.checkpoint is None:
            raise ConfigError(f"{name} is an encoder, not a metric model")
        folder = fetch(entry)
        file = folder / entry.checkpoint
        digest, label, trusted = file_hash(file), entry.name, True
    if wanted is not None and not digest.startswith(wanted):
        raise InputError(
            f"model {label}: its checkpoint has SHA-256 {digest[:HASH_DIGITS]}…, the signature "
            f"asks for {wanted}…: these are other weights; scores would not be comparable"
        )
    return label, file, digest, trusted


def locate(spec: str, folders: Sequence[str] = ()) -> str:
    """The model a signature names (``NAME@HASH``) as something :func:`load` takes: the
    folder among ``folders`` whose weights have that hash (``FOLDER@HASH``), else the spec
    itself (a registered model, fetched or found in the cache; a path as it is)."""
    _, wanted = split_spec(spec)
    for folder in folders:
        try:
            _, _, digest, _ = resolve(folder)
        except (ConfigError, InputError) as err:
            raise ConfigError(f"--model {folder}: {err}") from None
        if wanted is None or digest.startswith(wanted):
            return f"{folder}@{digest}"
    return spec


def weights_file(path: Path) -> Path:
    """A model folder's weights: COMET's ``checkpoints/model.ckpt``, or a transformers
    folder's ``model.safetensors`` / ``pytorch_model.bin`` (MetricX); a file is itself."""
    from bleucli.neural.checkpoint import checkpoint_file

    if path.is_dir() and not (path / "checkpoints").is_dir():
        for name in ("model.safetensors", "pytorch_model.bin"):
            if (path / name).is_file():
                return path / name
    return checkpoint_file(path)


def encoder_folder(hparams: dict[str, Any], model_folder: Path | None = None) -> Path:
    """The encoder's config and tokenizer: the folder ``pretrained_model`` names (a relative
    path from the model folder first, so a model folder can move with its encoder beside
    it), or the registered encoder of that name (fetched like a model)."""
    pretrained = str(hparams.get("pretrained_model", ""))
    local = Path(pretrained).expanduser()
    if model_folder is not None and not local.is_absolute() and (model_folder / local).is_dir():
        return model_folder / local
    if local.is_dir():
        return local
    from bleucli.neural.hub import encoder_entry, fetch

    entry = encoder_entry(pretrained)
    if entry is None:
        raise ConfigError(
            f"the checkpoint's encoder {pretrained!r} is neither a folder nor a registered "
            f"encoder (bleucli models list)"
        )
    return fetch(entry)


def load(spec: str, device: str = "cpu", precision: str = "fp32") -> Loaded:
    """The model ``spec`` names on ``device`` in ``precision``, loaded once per process."""
    from bleucli.neural import checkpoint
    from bleucli.neural.families import family

    label, file, digest, trusted = _resolve_while_importing(spec)
    key = (digest, _settings_digest(file), device, precision)
    if key not in _LOADED:
        where = runtime.device(device)
        dtype = runtime.dtype(precision, where)
        runtime.deterministic(where)
        # a COMET checkpoint names its family; weights in transformers' layout are MetricX's
        if file.suffix == ".ckpt":
            stored = checkpoint.load(file, trusted=trusted)
            model_class = stored.class_identifier
            encoder = encoder_folder(stored.hparams, stored.folder)
            model: Any = family(model_class)(stored, encoder, where, dtype)
        else:
            model_class = "metricx24"
            folder = tokenizer_folder(spec, file.parent)
            model = family(model_class)(file.parent, folder, where, dtype)
        model.cache_identity = f"{digest[:32]}-{precision}-{where.type}"
        _LOADED[key] = Loaded(label, digest, model_class, model)
    loaded = _LOADED[key]
    return Loaded(label, loaded.sha256, loaded.model_class, loaded.model)


def _settings_digest(file: Path) -> str:
    """A digest of the settings beside the weights (COMET's ``hparams.yaml``, a transformers
    folder's ``config.json``), so that a process which loaded a model loads it again when
    they change: the same weights with another class or layer mix are another model. Empty
    when there are none (loading then says what is missing)."""
    from bleucli.hashing import sha256_hex
    from bleucli.neural.checkpoint import hparams_path

    settings = hparams_path(file) if file.suffix == ".ckpt" else file.parent / "config.json"
    try:
        return sha256_hex(settings.read_bytes())
    except OSError:
        return ""


def _resolve_while_importing(spec: str) -> tuple[str, Path, str, bool]:
    """:func:`resolve`, with torch and transformers imported in a second thread meanwhile:
    hashing a checkpoint the first time (~1 s per GB) and importing the stack (~4 s) then
    overlap, on two cores (hashlib and file reads release the GIL)."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    if "transformers.modeling_utils" in sys.modules:
        return resolve(spec)

    def import_stack() -> None:  # what every model class needs (COMET's XLM-R, MetricX's mT5)
        runtime.torch()
        runtime.require("transformers.modeling_utils")

    with ThreadPoolExecutor(1) as pool:
        imported = pool.submit(import_stack)
        try:
            return resolve(spec)
        finally:
            imported.exception()  # a missing extra is reported where it is used


def tokenizer_folder(spec: str, folder: Path) -> Path:
    """Where a MetricX model's ``spiece.model`` is: beside the weights, else the registered
    tokenizer of its registry entry (``mt5-xl``...)."""
    if (folder / "spiece.model").is_file():
        return folder
    name, _ = split_spec(spec)
    from bleucli.neural.hub import fetch
    from bleucli.neural.registry import get, registry

    if name in registry():
        entry = get(name)
        if entry.encoder:
            return fetch(get(entry.encoder))
    return folder
