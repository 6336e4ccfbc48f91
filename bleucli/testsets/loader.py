"""Loading named test sets: registry plus cache, filtered fields of a language pair."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bleucli.errors import ConfigError, InputError
from bleucli.testsets.formats import Segments, read_langpair
from bleucli.testsets.offline import offline_from_environment
from bleucli.testsets.registry import LangPair, Registry, TestSet
from bleucli.testsets.store import TestSetStore


@dataclass
class LoadedTestSet:
    """The aligned fields of one or more test sets for one language pair, after filtering."""

    names: list[str]
    langpair: str
    fields: dict[str, list[str]]
    reference_fields: list[str]

    @property
    def reference_streams(self) -> list[list[str]]:
        return [[line.rstrip() for line in self.fields[name]] for name in self.reference_fields]

    @property
    def source(self) -> list[str]:
        return [line.strip() for line in self.fields["src"]]

    def __len__(self) -> int:
        return len(self.fields["src"])


def _keep(
    segments: Segments, testset: TestSet, is_xml: bool, origlang: str | None, subset: str | None
) -> list[bool]:
    """Which segments pass ``--origlang`` (``non-xx`` negates) and ``--subset`` (a regex)."""
    if not segments.filterable or segments.documents is None:
        raise ConfigError(
            f"--origlang and --subset need a WMT .sgm or .xml test set; "
            f"{testset.name} has no document metadata"
        )
    if subset is not None and subset.startswith("country:"):
        subset = subset[len("country:") :]
    if subset is not None and not is_xml and not testset.subsets:
        raise ConfigError(f"no subset annotation available for test set {testset.name}")
    keep = []
    for doc_origlang, docid, domain in segments.documents:
        include = True
        if origlang is not None:
            if origlang.startswith("non-"):
                include = doc_origlang != origlang[4:]
            else:
                include = doc_origlang == origlang
        if subset is not None:
            tags = domain if is_xml else testset.subsets.get(docid or "", "")
            if tags is None or not re.search(subset, tags):
                include = False
        keep.append(include)
    return keep


class TestSets:
    """Registry plus cache: what the CLI and API use to get test-set references."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        registry_files: Iterable[str] = (),
        offline: bool | None = None,
        show_progress: bool = False,
    ) -> None:
        self.registry = Registry(registry_files)
        self._segments: dict[tuple[str, str], Segments] = {}
        self.store = TestSetStore(
            offline=offline_from_environment() if offline is None else offline,
            show_progress=show_progress,
        )

    def get(self, name: str) -> TestSet:
        return self.registry.get(name)

    def store_dir(self, name: str) -> str:
        from bleucli.testsets.store import set_dir

        return str(set_dir(self.get(name)))

    def download(self, name: str, langpair: str | None = None) -> None:
        """Fetch and verify a set (all its language pairs' files, or one pair's)."""
        testset = self.get(name)
        pairs = [langpair] if langpair else list(testset.langpairs)
        paths = sorted({p for pair in pairs for p in _paths(testset.langpair(pair))})
        self.store.raw_files(testset, paths)

    def segments(self, name: str, langpair: str) -> Segments:
        """The parsed files of one language pair, read once per ``TestSets`` (filtering,
        ``--detail`` and the references all look at them)."""
        key = (name, langpair)
        if key not in self._segments:
            testset = self.get(name)
            pair = testset.langpair(langpair)
            unique = _paths(pair)
            local = dict(zip(unique, self.store.raw_files(testset, unique)))
            self._segments[key] = read_langpair(
                pair, [local[p] for p in (pair.source, *pair.references)]
            )
        return self._segments[key]

    def _selection(
        self, name: str, langpair: str, origlang: str | None, subset: str | None
    ) -> list[bool] | None:
        """Which segments of one set ``--origlang``/``--subset`` keep (None: no filter)."""
        if origlang is None and subset is None:
            return None
        testset = self.get(name)
        is_xml = testset.langpairs[langpair].format == "xml"
        return _keep(self.segments(name, langpair), testset, is_xml, origlang, subset)

    def load(
        self,
        names: str | Sequence[str],
        langpair: str,
        origlang: str | None = None,
        subset: str | None = None,
    ) -> LoadedTestSet:
        """Fields of ``names`` (comma-separated or a list) concatenated, then filtered."""
        names = _split_names(names)
        if not names:
            raise ConfigError("no test set given")
        testsets = [self.get(n) for n in names]
        for testset in testsets:
            testset.langpair(langpair)  # fail before downloading anything
        fields: dict[str, list[str]] = {}
        reference_fields: list[str] | None = None
        for testset in testsets:
            segments = self.segments(testset.name, langpair)
            if reference_fields is None:
                reference_fields = segments.references
            elif len(segments.references) != len(reference_fields):
                raise InputError(
                    f"test sets {', '.join(names)} have different numbers of "
                    f"references for {langpair}; score them separately"
                )
            keep = self._selection(testset.name, langpair, origlang, subset)
            renamed = dict(zip(segments.references, reference_fields))
            for name, values in segments.fields.items():
                if keep is not None:
                    values = [v for v, k in zip(values, keep) if k]
                fields.setdefault(renamed.get(name, name), []).extend(values)
        assert reference_fields is not None
        return LoadedTestSet(names, langpair, fields, reference_fields)

    def keep_mask(
        self, names: str | Sequence[str], langpair: str, origlang: str | None, subset: str | None
    ) -> list[bool]:
        """For every segment of ``names`` (concatenated), whether ``--origlang``/``--subset``
        keep it: what filters a system output that covers the whole test set."""
        mask: list[bool] = []
        for name in _split_names(names):
            keep = self._selection(name, langpair, origlang, subset)
            if keep is None:
                keep = [True] * len(next(iter(self.segments(name, langpair).fields.values()), []))
            mask += keep
        return mask

    def available_origlangs(self, names: str, langpair: str) -> list[str]:
        """The ``origlang`` values of the documents of ``names`` (sgm/xml sets), sorted."""
        found: set[str] = set()
        for name in _split_names(names):
            segments = self.segments(name, langpair)
            if segments.filterable and segments.documents:
                found |= {origlang for origlang, _, _ in segments.documents if origlang}
        return sorted(found)

    def available_subsets(self, names: str, langpair: str) -> list[str]:
        """Domains of xml sets, or ``country:XX`` and domains of the sgm sets whose
        documents the registry annotates, sorted (SacreBLEU's ``--detail`` subsets)."""
        found: set[str] = set()
        for name in _split_names(names):
            testset = self.get(name)
            if testset.langpairs[langpair].format == "xml":
                segments = self.segments(name, langpair)
                found |= {domain for _, _, domain in segments.documents or [] if domain}
            elif testset.subsets:
                tags = [value.split("-") for value in testset.subsets.values()]
                found |= {f"country:{tag[0]}" for tag in tags}
                found |= {tag[1] for tag in tags if len(tag) > 1}
        return sorted(found)

    def fieldnames(self, name: str, langpair: str) -> list[str]:
        """Fields ``--echo`` can print, known without downloading."""
        pair = self.get(name).langpair(langpair)
        if pair.format == "xml":
            refs = [f"ref:{t}" if t else "ref" for t in pair.translators] or ["ref"]
            return ["src", *refs, "docid", "origlang"]
        refs = (
            ["ref"]
            if len(pair.references) == 1
            else [f"ref:{i}" for i in range(len(pair.references))]
        )
        meta = (
            ["docid", "genre", "origlang"]
            if pair.format in ("sgm", "iwslt") and pair.metadata
            else []
        )
        return ["src", *refs, *meta]


def _split_names(names: str | Sequence[str]) -> list[str]:
    """Test-set names from a comma-separated string (as ``-t`` takes them) or a list."""
    return [n for n in names.split(",") if n] if isinstance(names, str) else list(names)


def _paths(pair: LangPair) -> list[str]:
    return list(dict.fromkeys([pair.source, *pair.references]))
