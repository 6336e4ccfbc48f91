"""The analyses themselves, as tables of plain values (rendering is elsewhere).

Definitions (each one is what the tests recompute by brute force):

- **Buckets** (reference length, source length): a line's bucket is its length in words
  (the BLEU tokeniser's tokens of the first reference; whitespace tokens of the source) in
  ``LENGTH_EDGES``; a bucket's score is each metric's corpus score over its lines.
- **Score bands**: the number of lines whose sentence score (sentence BLEU with effective
  order, or the per-line score of the chosen metric) falls in each band of 10 points.
- **Word accuracy by frequency**: words are the BLEU tokeniser's tokens; a word's frequency
  is its count in the training file (``--train``) or else in all references; per frequency
  bucket, precision = matched / hypothesis words, recall = matched / reference words (first
  reference), matched = sum over lines and words of min(hypothesis count, reference count);
  F = 2PR / (P + R).
- **N-gram differences** (baseline against each other system): per n-gram, its matches in
  the references over the corpus (per line clipped by its maximum count in any one
  reference, as BLEU clips); the top K by difference in each direction.
- **Examples**: the lines where two systems' sentence scores differ most, each direction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bleucli.metrics import output_order
from bleucli.metrics.base import Metric, sum_rows

LENGTH_EDGES = (10, 20, 30, 40, 50)
FREQUENCY_EDGES = (1, 2, 3, 4, 5, 10, 100, 1000)


if TYPE_CHECKING:
    from bleucli.precision import Precision


@dataclass
class Table:
    """One analysis table: ``rows`` hold raw values (str, int or float)."""

    key: str
    title: str
    headers: list[str]
    rows: list[list[Any]]
    signatures: list[str] = field(default_factory=list)
    note: str = ""
    #: Fewest decimals per column header (ratios and F-measures need more than scores).
    digits: dict[str, int] = field(default_factory=dict)
    #: For figures: metric -> {system -> column index}, where columns hold scores.
    panels: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Column index -> the metric whose scores it holds (shown at that metric's decimals).
    score_columns: dict[int, str] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "headers": self.headers,
            "rows": self.rows,
            "signatures": self.signatures,
            "note": self.note,
        }

    def cells(self, width: int | Precision) -> list[list[str]]:
        """The rows as text: a metric's scores at its decimals (:mod:`bleucli.precision`),
        other floats at ``width``'s (or a column's minimum)."""
        from bleucli.precision import Precision, shown

        precision = Precision.of(width)
        widths = [
            max(
                precision.decimals(self.score_columns[k])
                if k in self.score_columns
                else precision.width,
                self.digits.get(h, 0),
            )
            for k, h in enumerate(self.headers)
        ]
        return [
            [shown(v, w) if isinstance(v, float) else str(v) for v, w in zip(row, widths)]
            for row in self.rows
        ]


@dataclass
class Example:
    """One line where two systems differ: texts and both sentence scores."""

    line: int
    source: str | None
    references: list[str]
    outputs: dict[str, str]
    scores: dict[str, float]
    difference: float


@dataclass
class Comparison:
    """Baseline against one other system: n-gram differences and examples."""

    baseline: str
    system: str
    metric: str
    better_baseline: list[Example]
    better_system: list[Example]


@dataclass
class Analysis:
    systems: list[str]  # display names (analysis.names)
    tables: list[Table]
    comparisons: list[Comparison]
    signatures: dict[str, str]
    files: list[str] = field(default_factory=list)  # what each system was read from

    def key(self) -> list[tuple[str, str]]:
        """(display name, file) where they differ: listed once beside the tables."""
        from bleucli.analysis.names import key

        return key(self.systems, self.files or self.systems)

    def record(self) -> dict[str, Any]:
        def example(e: Example) -> dict[str, Any]:
            return {
                "line": e.line,
                "source": e.source,
                "references": e.references,
                "outputs": e.outputs,
                "scores": e.scores,
                "difference": e.difference,
            }

        return {
            "systems": self.systems,
            "files": self.files or self.systems,
            "signatures": self.signatures,
            "tables": [t.record() for t in self.tables],
            "examples": [
                {
                    "baseline": c.baseline,
                    "system": c.system,
                    "metric": c.metric,
                    "better_baseline": [example(e) for e in c.better_baseline],
                    "better_system": [example(e) for e in c.better_system],
                }
                for c in self.comparisons
            ],
        }


def bucket_label(value: int, edges: Sequence[int]) -> str:
    """``<10``, ``10-19``, ..., ``>=50`` for ``edges`` (10, 20, ..., 50)."""
    if value < edges[0]:
        return f"<{edges[0]}"
    for low, high in zip(edges, edges[1:]):
        if low <= value < high:
            return str(low) if high == low + 1 else f"{low}-{high - 1}"
    return f">={edges[-1]}"


def frequency_label(count: int) -> str:
    """``0`` (unseen), ``1``..``4``, ``5-9``, ``10-99``, ``100-999``, ``>=1000``."""
    if count == 0:
        return "0"
    return bucket_label(count, FREQUENCY_EDGES)


def frequency_labels() -> list[str]:
    return ["0", *(bucket_label(e, FREQUENCY_EDGES) for e in FREQUENCY_EDGES)]


def length_labels() -> list[str]:
    return [bucket_label(e - 1, LENGTH_EDGES) for e in LENGTH_EDGES] + [
        bucket_label(LENGTH_EDGES[-1], LENGTH_EDGES)
    ]


def word_splitter(
    bleu_options: Mapping[str, Any], language_pair: str | None
) -> tuple[Callable[[str], list[str]], str]:
    """The words of the word analyses: BLEU's tokens under its options (its default tokeniser
    for the target language otherwise), and how they were made, for the report's signatures."""
    from bleucli.tokenizers import default_tokenizer, get_tokenizer

    name = bleu_options.get("tokenize")
    if name is None:
        pair = language_pair or ""
        name = default_tokenizer(pair.split("-")[-1] if "-" in pair else "")
    tokenizer = get_tokenizer(name)
    lowercase = bool(bleu_options.get("lowercase"))

    def words(line: str) -> list[str]:
        return tokenizer(line.lower() if lowercase else line).split()

    return words, f"tok:{tokenizer.signature()}|case:{'lc' if lowercase else 'mixed'}"


class Inputs:
    """Everything an analysis reads: systems, references, source, metrics and their rows."""

    def __init__(
        self,
        names: list[str],
        outputs: list[list[str]],
        references: list[list[str]],
        metrics: dict[str, Metric],
        words: Any,
        sources: list[str] | None = None,
        signatures: dict[str, str] | None = None,
        files: list[str] | None = None,
    ) -> None:
        self.names, self.outputs, self.references = names, outputs, references
        self.files = files or list(names)  # names are display names; files what was read
        self.metrics = dict(output_order(metrics))
        self.words = words  # str -> list of tokens
        self.sources = sources
        self.signatures = signatures or {}
        self.rows = {
            key: [metric.per_sentence_stats(lines, None) for lines in outputs]
            for key, metric in self.metrics.items()
        }
        self.display = {
            key: metric.score_from_values(sum_rows(self.rows[key][0])).name
            for key, metric in self.metrics.items()
        }
        # per-line results that several analyses (and every pair with the baseline) reuse
        self._sentence: dict[tuple[str, int], list[float]] = {}
        self._matched: dict[tuple[int, int], Counter] = {}

    def score(self, key: str, system: int, lines: Sequence[int]) -> float:
        metric = self.metrics[key]
        return metric.score_from_values(sum_rows([self.rows[key][system][i] for i in lines])).score

    def sentence_scores(self, key: str, system: int) -> list[float]:
        """Per-line scores; BLEU's with effective order (as ``-sl``)."""
        if (key, system) not in self._sentence:
            scorer = sentence_scorer(self.metrics[key])
            self._sentence[key, system] = [
                scorer.score_from_values(row).score for row in self.rows[key][system]
            ]
        return self._sentence[key, system]

    def metric_columns(self) -> list[tuple[str, int]]:
        return [(key, k) for key in self.metrics for k in range(len(self.names))]

    def column_names(self) -> list[str]:
        return [f"{self.display[key]} {self.names[k]}" for key, k in self.metric_columns()]


def sentence_scorer(metric: Metric) -> Metric:
    """The metric that scores single lines: BLEU with effective order, others themselves."""
    if metric.name == "BLEU" and not getattr(metric, "effective_order", True):
        import copy

        scorer = copy.copy(metric)
        scorer.effective_order = True  # type: ignore[attr-defined]
        return scorer
    return metric


def overview(inputs: Inputs) -> Table:
    rows = []
    bleu = next((key for key in inputs.metrics if inputs.display[key] == "BLEU"), None)
    for k, name in enumerate(inputs.names):
        every = range(len(inputs.outputs[k]))
        row: list[Any] = [name, len(inputs.outputs[k])]
        row += [inputs.score(key, k, every) for key in inputs.metrics]
        if bleu is not None:
            totals = sum_rows(inputs.rows[bleu][k])
            row.append(totals[0] / totals[1] if totals[1] else 0.0)
        rows.append(row)
    headers = ["System", "Lines", *(inputs.display[key] for key in inputs.metrics)]
    if bleu is not None:
        headers.append("Length ratio")
    return Table(
        "overview",
        "Scores and length ratio (hypothesis / reference words)",
        headers,
        rows,
        _signatures(inputs),
        digits={"Length ratio": 3},
        score_columns={k: inputs.display[key] for k, key in enumerate(inputs.metrics, start=2)},
    )


def autorank_table(inputs: Inputs, recipe: str) -> Table:
    """WMT's AutoRank (``recipe``) over the analysis's metrics, from the systems' corpus
    scores (error rates turned), rows in its order."""
    import numpy as np

    from bleucli.autoranking.compute import autorank
    from bleucli.autoranking.table import Metric, ScoreTable

    table = ScoreTable(list(inputs.names))
    for key, metric in inputs.metrics.items():
        scores = [inputs.score(key, k, range(len(lines))) for k, lines in enumerate(inputs.outputs)]
        table.add_metric(
            Metric(inputs.display[key], not metric.higher_is_better, "bleucli"),
            system_scores=np.array(scores),
        )
    result = autorank(table, recipe)
    names = [inputs.display[key] for key in inputs.metrics]
    rows = [[s.name, s.autorank, *(s.scores[name] for name in names)] for s in result.systems]
    return Table(
        "autorank",
        f"AutoRank ({recipe}): the metrics combined, 1 is the best system",
        ["System", "AutoRank", *names],
        rows,
        [f"AutoRank: {result.signature}", *_signatures(inputs)],
        digits={"AutoRank": 1},
        score_columns={k: name for k, name in enumerate(names, start=2)},
    )


def _signatures(inputs: Inputs, keys: Sequence[str] | None = None) -> list[str]:
    keys = list(inputs.metrics) if keys is None else keys
    return [f"{inputs.display[k]}: {inputs.signatures[k]}" for k in keys if k in inputs.signatures]


def by_buckets(inputs: Inputs, key: str, title: str, lengths: list[int]) -> Table:
    groups: dict[str, list[int]] = {label: [] for label in length_labels()}
    for i, length in enumerate(lengths):
        groups[bucket_label(length, LENGTH_EDGES)].append(i)
    table = groups_table(inputs, key, title, groups, "Bucket")
    table.note = f"buckets: {', '.join(length_labels())} words"
    return table


def score_bands(inputs: Inputs, key: str) -> Table:
    """Ten bands over 0..100 (BLEU, chrF, TER), over the metric's own range (MetricX:
    0..25), or, for external and neural scores, over 0..1 when they all lie there
    (COMET-like) and else over the range they span; values outside go to the first or
    last band."""
    from bleucli.metrics.segment import SegmentScores

    per_system = [inputs.sentence_scores(key, k) for k in range(len(inputs.names))]
    metric = inputs.metrics[key]
    low, top = 0.0, 100.0
    values_all = [v for values in per_system for v in values]
    if metric.score_range is not None:
        low, top = metric.score_range
    elif (isinstance(metric, SegmentScores) or metric.uses_source) and values_all:
        if all(0.0 <= v <= 1.0 for v in values_all):
            top = 1.0
        else:
            low, top = float(min(values_all)), float(max(values_all))
            top = top if top > low else low + 1.0
    width = (top - low) / 10
    dash = " to " if low < 0 else "-"  # -0.4 to -0.3, not -0.4--0.3
    labels = [f"{low + k * width:.3g}{dash}{low + (k + 1) * width:.3g}" for k in range(10)]
    counts = [[0] * len(inputs.names) for _ in labels]
    for k, values in enumerate(per_system):
        for value in values:
            band = min(max(int((value - low) // width), 0), len(labels) - 1)
            counts[band][k] += 1
    name = inputs.display[key]
    return Table(
        f"bands-{name}",
        f"Lines per sentence-{name} band",
        ["Band", *inputs.names],
        [[label, *row] for label, row in zip(labels, counts)],
        _signatures(inputs, [key]),
        f"ten bands from {low:.3g} to {top:.3g}; the last includes {top:.3g}"
        + ("; sentence BLEU with effective order" if name == "BLEU" else ""),
    )


def word_accuracy(inputs: Inputs, frequencies: Counter, frequency_source: str) -> Table:
    labels = frequency_labels()
    ref_words = dict.fromkeys(labels, 0)
    per_system = [{label: [0, 0] for label in labels} for _ in inputs.names]  # matched, hyp
    first = inputs.references[0]
    ref_counts = [Counter(inputs.words(line)) for line in first]
    for counts in ref_counts:
        for word, n in counts.items():
            ref_words[frequency_label(frequencies[word])] += n
    for k, lines in enumerate(inputs.outputs):
        buckets = per_system[k]
        for line, ref in zip(lines, ref_counts):
            for word, n in Counter(inputs.words(line)).items():
                label = frequency_label(frequencies[word])
                buckets[label][0] += min(n, ref.get(word, 0))
                buckets[label][1] += n
    rows = []
    for label in labels:
        if label == "0" and ref_words[label] == 0:
            continue  # frequencies from the references themselves: no reference word is unseen
        row: list[Any] = [label, ref_words[label]]
        for k in range(len(inputs.names)):
            matched, hyp = per_system[k][label]
            row.append(f_measure(matched, hyp, ref_words[label]))
        rows.append(row)
    return Table(
        "words",
        "Word F-measure by word frequency",
        ["Frequency", "Ref words", *inputs.names],
        rows,
        [f"words: {inputs.signatures.get('words', '')}"],
        f"frequencies from {frequency_source}; first reference",
        digits=dict.fromkeys(inputs.names, 4),
    )


def f_measure(matched: int, hyp_words: int, ref_words: int) -> float:
    precision = matched / hyp_words if hyp_words else 0.0
    recall = matched / ref_words if ref_words else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def matched_ngrams(inputs: Inputs, k: int, n: int) -> Counter:
    """Per n-gram (a space-joined string), its clipped matches in the references."""
    if (k, n) in inputs._matched:  # the baseline's, once for all comparisons
        return inputs._matched[k, n]
    total: Counter = inputs._matched.setdefault((k, n), Counter())
    for i, line in enumerate(inputs.outputs[k]):
        hyp = _ngrams(inputs.words(line), n)
        best: Counter = Counter()
        for stream in inputs.references:
            for gram, count in _ngrams(inputs.words(stream[i]), n).items():
                if count > best[gram]:
                    best[gram] = count
        for gram, count in hyp.items():
            if gram in best:
                total[gram] += min(count, best[gram])
    return total


def _ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def ngram_differences(inputs: Inputs, other: int, top: int, baseline: int = 0) -> Table:
    rows = []
    for n in range(1, 5):
        a, b = matched_ngrams(inputs, baseline, n), matched_ngrams(inputs, other, n)
        differences = [(a[g] - b[g], g) for g in set(a) | set(b) if a[g] != b[g]]
        for sign, label in ((1, inputs.names[baseline]), (-1, inputs.names[other])):
            chosen = sorted(
                (d for d in differences if d[0] * sign > 0), key=lambda d: (-abs(d[0]), d[1])
            )[:top]
            rows += [[n, label, gram, a[gram], b[gram], d] for d, gram in chosen]
    name_a, name_b = inputs.names[baseline], inputs.names[other]
    return Table(
        f"ngrams-{other}",
        f"N-grams matched more often: {name_a} vs {name_b}",
        ["n", "More often in", "N-gram", f"Matches {name_a}", f"Matches {name_b}", "Difference"],
        rows,
        [f"words: {inputs.signatures.get('words', '')}"],
        f"top {top} per order and direction; matches clipped per line by the references' counts",
    )


def examples(inputs: Inputs, key: str, other: int, top: int, baseline: int = 0) -> Comparison:
    a = inputs.sentence_scores(key, baseline)
    b = inputs.sentence_scores(key, other)
    order = sorted(range(len(a)), key=lambda i: (-(a[i] - b[i]), i))

    def build(i: int) -> Example:
        return Example(
            i + 1,
            inputs.sources[i] if inputs.sources else None,
            [stream[i] for stream in inputs.references],
            {
                inputs.names[baseline]: inputs.outputs[baseline][i],
                inputs.names[other]: inputs.outputs[other][i],
            },
            {inputs.names[baseline]: a[i], inputs.names[other]: b[i]},
            a[i] - b[i],
        )

    better_a = [build(i) for i in order[:top] if a[i] > b[i]]
    reverse = sorted(range(len(a)), key=lambda i: (a[i] - b[i], i))
    better_b = [build(i) for i in reverse[:top] if b[i] > a[i]]
    return Comparison(
        inputs.names[baseline], inputs.names[other], inputs.display[key], better_a, better_b
    )


def groups_table(
    inputs: Inputs, key: str, title: str, groups: dict[str, list[int]], label: str
) -> Table:
    rows = [
        [name, len(lines), *(inputs.score(m, k, lines) for m, k in inputs.metric_columns())]
        for name, lines in groups.items()
        if lines
    ]
    panels: dict[str, dict[str, int]] = {}
    columns: dict[int, str] = {}
    for column, (metric, k) in enumerate(inputs.metric_columns(), start=2):
        panels.setdefault(inputs.display[metric], {})[inputs.names[k]] = column
        columns[column] = inputs.display[metric]
    return Table(
        key,
        title,
        [label, "Lines", *inputs.column_names()],
        rows,
        _signatures(inputs),
        panels=panels,
        score_columns=columns,
    )


def analyze(
    inputs: Inputs,
    top: int = 10,
    example_metric: str | None = None,
    frequencies: Counter | None = None,
    frequency_source: str = "the references",
    documents: dict[str, list[int]] | None = None,
    origlangs: dict[str, list[int]] | None = None,
    progress: Any = None,
    autorank: str | None = None,
) -> Analysis:
    """Every analysis, in report order. ``progress(1)`` after each step (a progress bar);
    ``autorank``: a recipe, for an AutoRank table after the overview."""

    def step() -> None:
        if progress is not None:
            progress(1)

    tables = [overview(inputs)]
    if autorank:
        tables.append(autorank_table(inputs, autorank))
    step()
    ref_lengths = [len(inputs.words(line)) for line in inputs.references[0]]
    tables.append(by_buckets(inputs, "ref-length", "Scores by reference length", ref_lengths))
    if inputs.sources is not None:
        tables.append(
            by_buckets(
                inputs,
                "src-length",
                "Scores by source length",
                [len(line.split()) for line in inputs.sources],
            )
        )
    step()
    chosen = choose_metric(inputs, example_metric)
    tables.append(score_bands(inputs, chosen))
    if frequencies is None:
        frequencies = Counter(
            w for stream in inputs.references for line in stream for w in inputs.words(line)
        )
    tables.append(word_accuracy(inputs, frequencies, frequency_source))
    step()
    if documents:
        tables.append(
            groups_table(inputs, "documents", "Scores per document", documents, "Document")
        )
    if origlangs:
        tables.append(
            groups_table(inputs, "origlang", "Scores per original language", origlangs, "Origlang")
        )
    comparisons = []
    for other in range(1, len(inputs.names)):
        tables.append(ngram_differences(inputs, other, top))
        comparisons.append(examples(inputs, chosen, other, top))
        step()
    return Analysis(inputs.names, tables, comparisons, inputs.signatures, inputs.files)


def metric_key(name: str) -> str | None:
    """The ``-m`` name of a metric named as ``-m`` or a result names it (``TER``, ``chrF2``,
    ``chrF2++``), or None."""
    key = name.lower().rstrip("+0123456789")
    return key if key in ("bleu", "chrf", "ter") else None


def choose_metric(inputs: Inputs, name: str | None, flag: str = "--example-metric") -> str:
    """The metric key for score bands, examples and figures: ``name`` (display name or key,
    any case), else BLEU, else the first metric."""
    from bleucli.errors import UsageError

    if name is None:
        for key in inputs.metrics:
            if inputs.display[key] == "BLEU":
                return key
        return next(iter(inputs.metrics))
    for key in inputs.metrics:
        if name.lower() in (key.lower(), inputs.display[key].lower()):
            return key
    raise UsageError(
        f"{flag} {name!r}: not among the metrics ({', '.join(inputs.display.values())}); "
        "-m bleu, chrf or ter, or a --segment-scores NAME"
    )
