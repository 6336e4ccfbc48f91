"""The test-set registry: JSON data files, validated and merged into :class:`TestSet` objects.

Built-in entries live in the top-level ``testsets/`` folder (shipped in the wheel as
``bleucli/_registry``). Custom registries from ``BLEUCLI_TESTSETS`` (a path-separated list)
and ``--testsets-file`` add or override entries; their relative URLs are resolved against
the registry file's folder, so a team can keep private test sets next to their registry.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

from bleucli.errors import ConfigError

ENV_REGISTRIES = "BLEUCLI_TESTSETS"


@dataclass(frozen=True)
class DataFile:
    """One downloadable file: where it is, its md5, and alternative locations."""

    url: str
    md5: str
    mirrors: tuple[str, ...] = ()

    @property
    def basename(self) -> str:
        return PurePosixPath(self.url.split("?", 1)[0].rstrip("/")).name


@dataclass(frozen=True)
class LangPair:
    """Where a language pair's source and references are inside the downloaded data."""

    format: str
    source: str
    references: tuple[str, ...]
    translators: tuple[str, ...] = ()
    source_column: int = 0
    reference_columns: tuple[int, ...] = ()
    metadata: bool = True


@dataclass(frozen=True)
class TestSet:
    """A named test set: its data files and language pairs."""

    __test__ = False  # not a pytest test class, despite the name

    name: str
    description: str
    citation: str
    data: tuple[DataFile, ...]
    langpairs: dict[str, LangPair]
    subsets: dict[str, str] = field(default_factory=dict)
    #: Folder of the registry file that defined it (relative URLs are resolved against it).
    origin: Path = Path(".")
    #: bleucli's own set (not SacreBLEU's): the SacreBLEU alias does not list it.
    bleucli_only: bool = False

    def langpair(self, pair: str) -> LangPair:
        try:
            return self.langpairs[pair]
        except KeyError:
            raise ConfigError(
                f"test set {self.name!r} has no language pair {pair!r}; available: "
                f"{', '.join(sorted(self.langpairs))}"
            ) from None


def builtin_registry_dir() -> Path:
    """``bleucli/_registry`` in an installed wheel, the repository's ``testsets/`` otherwise."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "_registry", package.parent / "testsets"):
        if (candidate / "schema.json").is_file():
            return candidate
    raise ConfigError("the built-in test-set registry is missing from this installation")


@lru_cache(maxsize=1)
def _schema() -> dict:
    return json.loads((builtin_registry_dir() / "schema.json").read_text(encoding="utf-8"))


def _entry_to_testset(name: str, raw: dict, origin: Path) -> TestSet:
    pairs = {
        pair: LangPair(
            format=spec["format"],
            source=spec["source"],
            references=tuple(spec["references"]),
            translators=tuple(spec.get("translators", ())),
            source_column=spec.get("source_column", 0),
            reference_columns=tuple(spec.get("reference_columns", [1] * len(spec["references"]))),
            metadata=spec.get("metadata", True),
        )
        for pair, spec in raw["langpairs"].items()
    }
    data = tuple(DataFile(d["url"], d["md5"], tuple(d.get("mirrors", ()))) for d in raw["data"])
    return TestSet(
        name,
        raw["description"],
        raw.get("citation", ""),
        data,
        pairs,
        dict(raw.get("subsets", {})),
        origin,
        bool(raw.get("bleucli_only", False)),
    )


def load_registry_file(path: Path, validate_entries: bool = True) -> dict[str, TestSet]:
    """Read one registry file; a bad one raises :class:`ConfigError` naming file and key."""
    from bleucli.testsets.schema import validate

    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: test-set registry not found") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read test-set registry ({err})") from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"{path}: line {err.lineno}: invalid JSON ({err.msg})") from None
    if validate_entries:
        errors = validate(raw, _schema())
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise ConfigError(f"{path}: {errors[0]}{more}")
    origin = path.resolve().parent
    sets = {name: _entry_to_testset(name, entry, origin) for name, entry in raw.items()}
    for testset in sets.values():
        check_paths(testset, path)
    return sets


#: A test-set name: parts of letters, digits and ``._+-`` (not starting with a dot),
#: separated by ``/`` (``wmt19/dev``). It becomes a folder name in the cache.
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*(/[A-Za-z0-9][A-Za-z0-9._+-]*)*$")


def _safe_relative(value: str) -> bool:
    parts = PurePosixPath(value.replace("\\", "/")).parts
    return (
        bool(parts)
        and not value.startswith(("/", "\\"))
        and ".." not in parts
        and ":" not in parts[0]
    )


def check_paths(testset: TestSet, path: Path) -> None:
    """Names and file paths of a registry entry address only its own cache folder: a name
    like ``..`` or a reference path like ``../../x`` is refused before anything is written
    or deleted (the cache rebuild removes folders)."""
    if not SAFE_NAME.match(testset.name) or any(p in (".", "..") for p in testset.name.split("/")):
        raise ConfigError(
            f"{path}: test-set name {testset.name!r} is not allowed (letters, "
            f"digits and ._+- only, parts separated by /)"
        )
    names = [d.basename for d in testset.data]
    for name in names:
        if name in ("", ".", "..") or not _safe_relative(name):
            raise ConfigError(
                f"{path}: {testset.name}: data URL gives the unusable file name {name!r}"
            )
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: {testset.name}: two data files share a file name")
    for pair, spec in testset.langpairs.items():
        for file in (spec.source, *spec.references):
            if not _safe_relative(file):
                raise ConfigError(
                    f"{path}: {testset.name}/{pair}: file {file!r} must be a "
                    f"relative path inside the downloaded data"
                )


class Registry:
    """All known test sets, built-in ones overridden by custom registries in order."""

    def __init__(self, extra_files: Iterable[str | Path] = ()) -> None:
        self.sets: dict[str, TestSet] = {}
        builtin = builtin_registry_dir()
        for path in sorted(builtin.glob("*.json")):
            if path.name != "schema.json":
                self.sets.update(load_registry_file(path, validate_entries=False))
        #: SacreBLEU's own test sets (the built-in ones but bleucli's): what the SacreBLEU
        #: alias lists, whatever custom registries add or override.
        self.sacrebleu_names = sorted(n for n, s in self.sets.items() if not s.bleucli_only)
        env = [p for p in os.environ.get(ENV_REGISTRIES, "").split(os.pathsep) if p]
        for extra in [*env, *extra_files]:
            self.sets.update(load_registry_file(Path(extra)))

    def names(self) -> list[str]:
        return sorted(self.sets, reverse=True)

    def get(self, name: str) -> TestSet:
        try:
            return self.sets[name]
        except KeyError:
            raise ConfigError(
                f"unknown test set {name!r}; available: {', '.join(self.names())}"
            ) from None

    def for_langpair(self, pair: str) -> list[str]:
        """Sets that have ``pair`` in either direction, as ``--list -l`` shows."""
        src, _, trg = pair.partition("-")
        return [
            n
            for n in self.names()
            if pair in self.sets[n].langpairs or f"{trg}-{src}" in self.sets[n].langpairs
        ]
