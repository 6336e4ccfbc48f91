"""COMET, CometKiwi and xCOMET as bleucli metrics: a segment's statistics are
``[score, 1]`` (the system score is the mean, as COMET's), so intervals, paired tests,
rankings and sentence scores treat them as they treat BLEU.

The model runs once per system (:mod:`bleucli.neural`); the signature names the weights
(``model:NAME@SHA256-prefix``), the precision and the device type: everything that moves
a score by more than 1e-6. The batch size moves scores by ~2e-7 and is left out."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any

from bleucli.errors import ConfigError, InputError
from bleucli.metrics.base import Metric, Number, Score
from bleucli.metrics.options import Option

#: What the numbers are computed as: unbabel-comet 2.2.7's model classes.
IMPLEMENTATION = "comet-2.2.7"
_DEVICE = re.compile(r"cpu|cuda(:\d+)?")


def neural_options(prefix: str, batch: int = 16, batch_signed: bool = False) -> tuple[Option, ...]:
    """The options every neural metric takes, under its own prefix (``--comet-model``);
    ``batch_signed``: the batch size changes the numbers (MetricX), so the signature says it."""
    return (
        Option("model", (f"--{prefix}-model",), kind="str", metavar="NAME|PATH", signature="model",
               help=f"{prefix}: a registered model (bleucli models list) or a checkpoint folder; "
                    "NAME@HASH refuses other weights."),
        Option("batch_size", (f"--{prefix}-batch-size",), kind="int", default=batch, low=1,
               high=8192, show_default=True, signature="batch" if batch_signed else None,
               help=f"{prefix}: segments per model call."),
        Option("precision", (f"--{prefix}-precision",), kind="str", default="fp32",
               choices=("fp32", "bf16", "fp16"), signature="prec", show_default=True,
               metavar="fp32|bf16|fp16", help=f"{prefix}: numeric precision (fp16 on GPU only)."),
        Option("device", (f"--{prefix}-device",), kind="str", default="cpu", signature="dev",
               show_default=True, metavar="cpu|cuda[:N]", help=f"{prefix}: where the model runs."),
    )  # fmt: skip


def _out_of_memory(err: BaseException) -> bool:
    """Whether torch ran out of memory (CUDA's OutOfMemoryError is a RuntimeError)."""
    text = str(err).lower()
    return (
        isinstance(err, MemoryError) or "out of memory" in text or "can't allocate memory" in text
    )


class NeuralScore(Score):
    """A neural metric's mean segment score (negative for some models)."""

    signed = True


class NeuralMetric(Metric):
    """A model-based metric: sources bound at construction (or per call), references as
    for every metric, the model loaded once per process."""

    integer_stats = False
    batches_systems = True
    uses_source = True
    #: Whether the metric cannot score without the source sentences (xCOMET can, with a
    #: reference): checked before a model is loaded (bleucli.neural.preflight).
    requires_source = True
    #: COMET's kin score on 0-1: four decimals tell systems apart (MetricX overrides).
    decimals = 4
    prefix = "comet"
    #: The registered model used when none is named (None: the registry's first for it).
    default_model: str | None = None
    #: Whether the metric scores against a reference (MetricX's reference-based variant).
    requires_reference = False
    #: What the numbers are computed as (the signature's ``impl``).
    implementation = IMPLEMENTATION
    signature_abbreviations = {"model": "m", "batch": "b", "prec": "p", "dev": "d", "impl": "i"}
    signature_keys = {"model": "model", "m": "model", "batch": "batch", "b": "batch",
                      "prec": "prec", "p": "prec", "dev": "dev", "d": "dev", "impl": "impl",
                      "i": "impl"}  # fmt: skip

    def __init__(
        self,
        model: str | None = None,
        batch_size: int | None = None,
        precision: str = "fp32",
        device: str = "cpu",
        references: Sequence[Sequence[str | None]] | None = None,
        sources: Sequence[str] | None = None,
    ) -> None:
        if batch_size is None:
            batch_size = next(o.default for o in self.OPTIONS if o.keyword == "batch_size")
        for option, value in (("model", model), ("batch_size", batch_size),
                              ("precision", precision), ("device", device)):  # fmt: skip
            next(o for o in self.OPTIONS if o.keyword == option).check(value)
        if not _DEVICE.fullmatch(device):
            raise ConfigError(f"--{self.prefix}-device {device!r}: expected cpu, cuda or cuda:N")
        from bleucli.neural.registry import default_model

        self.model_spec = model or self.default_model or default_model(self.key or self.prefix)
        self.batch_size = batch_size
        self.precision = precision
        self.device = device
        self.sources: list[str] | None = list(sources) if sources is not None else None
        self._references = (
            [list(stream) for stream in references] if references is not None else None
        )
        self._loaded: Any = None
        self._memo: dict[str, Any] = {}
        #: The last prediction (error spans of word-level models), in input order.
        self.last_prediction: Any = None
        super().__init__(references)

    @classmethod
    def options_from_signature(cls, fields: dict[str, str], name: str) -> dict[str, Any]:
        options = super().options_from_signature(fields, name)
        if options.get("device", "cpu").startswith("cuda"):
            options["device"] = "cuda"
        return options

    # -- the model -----------------------------------------------------------------------------
    @property
    def loaded(self) -> Any:
        if self._loaded is None:
            from bleucli.neural.load import load

            self._loaded = load(self.model_spec, self.device, self.precision)
            self._check_kind(self._loaded.model_class)
        return self._loaded

    @property
    def identity(self) -> str:
        """``NAME@HASH`` of the weights, without loading them when they are not loaded yet
        (a signature made where the scores were computed elsewhere: Dask, the server)."""
        if self._loaded is not None:
            return str(self._loaded.identity)
        from bleucli.neural.load import HASH_DIGITS, resolve

        label, _, digest, _ = resolve(self.model_spec)
        return f"{label}@{digest[:HASH_DIGITS]}"

    def _check_kind(self, model_class: str) -> None:
        return None

    def bind_sources(self, sources: Sequence[str]) -> None:
        self.sources = list(sources)

    def predict(
        self,
        hypotheses: Sequence[str],
        references: Sequence[str] | None = None,
        sources: Sequence[str] | None = None,
    ) -> Any:
        """Segment scores (and error spans) of one system: ``hypotheses`` with one
        reference stream and the sources (as the model needs them)."""
        model = self.loaded.model
        sources = list(sources) if sources is not None else self.sources
        samples: dict[str, list[str]] = {"mt": list(hypotheses)}
        if sources is not None:
            samples["src"] = sources
        elif model.needs_source:
            raise ConfigError(
                f"{self.name} ({self.loaded.name}) needs the source sentences: give --source "
                f"FILE or a test set (-t)"
            )
        if references is not None:
            samples["ref"] = list(references)
        elif model.needs_reference or self.requires_reference:
            raise ConfigError(f"{self.name} ({self.loaded.name}) needs a reference")
        for field, texts in samples.items():
            if len(texts) != len(hypotheses):
                what = {"src": "source", "ref": "reference"}[field]
                raise InputError(
                    f"{self.name}: {len(hypotheses)} hypotheses but {len(texts)} {what} lines"
                )
        from bleucli.neural.runtime import check_time, confinement

        key = hashlib.sha256(
            repr(sorted((k, tuple(v)) for k, v in samples.items())).encode()
        ).hexdigest()
        if confinement().isolated:  # a confined run reuses nothing (not an earlier run's)
            self._memo.pop(key, None)
        if key not in self._memo:
            from bleucli.progress import stage

            with stage(f"{self.name} ({self.loaded.name})", len(hypotheses)) as advance:

                def tick(done: int) -> None:
                    check_time()
                    advance(done)

                try:
                    self._memo[key] = model.predict(samples, self.batch_size, progress=tick)
                except (MemoryError, RuntimeError) as err:
                    if not _out_of_memory(err):
                        raise
                    smaller = max(1, self.batch_size // 2)
                    raise InputError(
                        f"{self.name}: out of memory on {self.device} with batch size "
                        f"{self.batch_size}: try --{self.prefix}-batch-size {smaller}"
                        + (" or a GPU with more memory" if self.device != "cpu" else "")
                    ) from None
            if len(self._memo) > 64:
                self._memo.pop(next(iter(self._memo)))
        self.last_prediction = self._memo[key]
        if confinement().isolated:
            del self._memo[key]
        return self.last_prediction

    def count_tokens(self, texts: Sequence[str]) -> int:
        """Tokens the model reads from ``texts`` (after its own truncation): what a run's
        neural work is bounded by."""
        return int(self.loaded.model.count_tokens(list(texts)))

    def pairwise(
        self,
        hypotheses: Sequence[Sequence[str]],
        references: Sequence[Sequence[str]],
        sources: Sequence[str] | None = None,
    ) -> list[Any]:
        """MBR's utilities: per group, every hypothesis against every reference alone."""
        sources = list(sources) if sources is not None else self.sources
        model = self.loaded.model
        if sources is None and model.needs_source:
            raise ConfigError(
                f"{self.name} needs the source sentences (sources=..., --source FILE)"
            )
        if sources is not None and len(sources) != len(hypotheses):
            raise InputError(f"{self.name}: {len(hypotheses)} groups but {len(sources)} sources")
        self.num_refs = 1
        return list(model.pairwise(sources, hypotheses, references, self.batch_size))

    # -- the Metric interface ------------------------------------------------------------------
    def _first_references(self, n: int, references: Any) -> list[str] | None:
        streams = [list(s) for s in references] if references else self._references
        if not streams:
            return None
        first = streams[0]
        if any(line is None for line in first):
            raise InputError(
                f"{self.name}: a segment has no reference (COMET uses the first stream)"
            )
        if len(first) != n:
            raise InputError(f"{self.name}: {n} hypotheses but {len(first)} reference lines")
        self.num_refs = 1
        return [str(line) for line in first]

    def per_sentence_stats(
        self, hypotheses: Sequence[str], references: Sequence[Sequence[str | None]] | None
    ) -> list[list[Number]]:
        refs = self._first_references(len(hypotheses), references)
        uses_ref = refs is not None and (
            self.loaded.model.needs_reference or self._takes_reference or self.requires_reference
        )
        prediction = self.predict(hypotheses, refs if uses_ref else None)
        if not uses_ref:
            self.num_refs = 0
        return [[score, 1] for score in prediction.scores]

    #: Whether the model is given a reference when there is one (xCOMET uses it if present).
    _takes_reference = True

    def per_sentence_stats_many(self, systems: Sequence[Sequence[str]]) -> list[list[list[Number]]]:
        return [self.per_sentence_stats(hypotheses, None) for hypotheses in systems]

    def corpus_score(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str | None]] | None,
        n_bootstrap: int = 1,
        sources: Sequence[str] | None = None,
    ) -> Score:
        if sources is not None:
            self.bind_sources(sources)
        return super().corpus_score(hypotheses, references, n_bootstrap)

    def sentence_score(
        self, hypothesis: str, references: Sequence[str | None], source: str | None = None
    ) -> Score:
        if source is not None:
            self.bind_sources([source])
        return self.corpus_score([hypothesis], [[r] for r in references[:1]])

    def preprocess(self, sentence: str) -> str:
        return sentence

    def reference_info(self, references: list[str]) -> Any:
        return None

    def sentence_stats(self, hypothesis: str, ref_info: Any) -> list[Number]:
        raise InputError(f"{self.name} scores whole systems (per_sentence_stats)")

    @property
    def stats_length(self) -> int:
        return 2

    def stats_problem(self, values: Sequence[Any]) -> str | None:
        if not isinstance(values, (list, tuple)) or len(values) != 2:
            return "values should be [sum of scores, segments]"
        total, count = values
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
            return "values must be numbers"
        if not math.isfinite(total) or not math.isfinite(count) or count < 0:
            return "values must be finite and the segment count >= 0"
        return None

    def score_from_values(self, values: Sequence[Number]) -> Score:
        total, count = values[0], values[1]
        return NeuralScore(self.name, float(total / count) if count else 0.0)

    def signature_fields(self) -> dict[str, Any]:
        fields = {"model": self.identity}
        if any(o.signature == "batch" for o in self.OPTIONS):
            fields["batch"] = str(self.batch_size)
        fields.update(
            prec=self.precision,
            dev="cuda" if self.device.startswith("cuda") else "cpu",
            impl=self.implementation,
        )
        return fields

    def get_signature(self) -> Any:
        if self.num_refs is None:
            self.num_refs = 1 if self._references else 0
        return super().get_signature()


class COMET(NeuralMetric):
    """Reference-based COMET (default ``wmt22-comet-da``)."""

    name = "COMET"
    prefix = "comet"
    OPTIONS = neural_options("comet")


class CometKiwi(NeuralMetric):
    """Quality estimation from source and hypothesis (default ``wmt22-cometkiwi-da``)."""

    name = "CometKiwi"
    prefix = "cometkiwi"
    OPTIONS = neural_options("cometkiwi")
    _takes_reference = False
    #: Scores without a reference: a command line may give only sources and hypotheses.
    reference_free = True


class XCOMET(NeuralMetric):
    """xCOMET: a score and error spans, with a reference when there is one."""

    name = "xCOMET"
    prefix = "xcomet"
    OPTIONS = neural_options("xcomet")
    requires_source = False  # a reference alone will do

    def _check_kind(self, model_class: str) -> None:
        if model_class != "xcomet_metric":
            raise ConfigError(f"-m xcomet needs an xCOMET model (xcomet_metric), not {model_class}")


class MetricX24(NeuralMetric):
    """MetricX-24 with a reference: an error score in [0, 25], lower is better."""

    name = "MetricX-24"
    key = "metricx24"
    prefix = "metricx24"
    # MetricX's own runs score one input at a time; batches round differently (~1e-5)
    OPTIONS = neural_options("metricx24", batch=1, batch_signed=True)
    higher_is_better = False
    requires_reference = True
    #: An error score on 0-25: two decimals.
    decimals = 2
    #: MetricX's scores are clamped to this range (analysis bands).
    score_range = (0.0, 25.0)
    implementation = "metricx-24"
    default_model = "metricx-24-hybrid-large-v2p6"

    def _check_kind(self, model_class: str) -> None:
        if model_class != "metricx24":
            raise ConfigError(f"-m {self.key} needs a MetricX-24 model, not {model_class}")


class MetricX24QE(MetricX24):
    """MetricX-24 without a reference (quality estimation), from the same hybrid model."""

    name = "MetricX-24-QE"
    key = "metricx24-qe"
    prefix = "metricx24-qe"
    OPTIONS = neural_options("metricx24-qe", batch=1, batch_signed=True)
    requires_reference = False
    _takes_reference = False
    reference_free = True
