"""Scoring one system file against reference files in chunks, optionally in parallel.

Memory stays bounded by the chunk size whatever the corpus length: hypothesis and reference
files are read in lockstep, each chunk is reduced to per-sentence statistics, and those are
added to running totals in corpus order. With ``jobs > 1`` chunks are scored by worker
processes and their results consumed in order, so the result is identical for any ``jobs``:
integer statistics are summed per chunk (exact), others row by row as SacreBLEU does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from bleucli.errors import InputError
from bleucli.io import RESEGMENT_HINT, check_encoding, open_binary, warn_bom
from bleucli.metrics.base import Metric, Number, sum_rows

CHUNK_LINES = 20000


class LineReader:
    """Right-stripped lines of a (possibly gzipped) file, decoded with line-numbered errors."""

    def __init__(self, path: str, encoding: str) -> None:
        check_encoding(encoding)
        self.path = path
        self.encoding = encoding
        self.count = 0
        #: Bytes read so far (decompressed for ``.gz``), for progress bars.
        self.bytes = 0
        self.handle: IO[bytes] = open_binary(path)

    def __iter__(self) -> Iterator[str]:
        encoding, path = self.encoding, self.path
        for raw in self._raw_lines():
            self.count += 1
            self.bytes += len(raw)
            try:
                line = raw.decode(encoding)
            except UnicodeDecodeError as err:
                raise InputError(
                    f"{path}: line {self.count}: invalid {encoding} "
                    f"({err.reason} at byte {err.start + 1})"
                ) from None
            if self.count == 1 and line.startswith("\ufeff"):
                warn_bom(path, encoding)  # kept, as SacreBLEU keeps it
            yield line.rstrip()

    def _raw_lines(self) -> Iterator[bytes]:
        """The file's byte lines; a damaged or truncated ``.gz`` is an input error naming
        the file and the line where decompression failed."""
        import zlib

        try:
            yield from self.handle  # C-level iteration: no Python frame per line
        except (OSError, EOFError, zlib.error) as err:
            raise InputError(
                f"{self.path}: line {self.count + 1}: cannot read: corrupt or "
                f"truncated compressed data ({err})"
            ) from None

    def rest(self) -> int:
        """Count the remaining lines (for the line-count error message)."""
        for _ in self._raw_lines():
            self.count += 1
        return self.count

    def close(self) -> None:
        self.handle.close()


def chunks(
    hyp: LineReader, refs: list[LineReader], num_refs: int, size: int | None = None
) -> Iterator[tuple[list[str], list[list[str]]]]:
    """Aligned chunks of hypotheses and reference streams; mismatched lengths are an error."""
    size = size or CHUNK_LINES
    streams = len(refs) if num_refs == 1 else num_refs
    hyp_iter, ref_iters = iter(hyp), [iter(r) for r in refs]
    while True:
        hyps: list[str] = []
        ref_chunk: list[list[str]] = [[] for _ in range(streams)]
        for line in hyp_iter:
            hyps.append(line)
            for k, it in enumerate(ref_iters):
                ref_line = next(it, None)
                if ref_line is None:
                    raise _length_error(hyp, refs[k])
                if num_refs == 1:
                    ref_chunk[k].append(ref_line)
                else:
                    fields = ref_line.split("\t", num_refs - 1)
                    if len(fields) != num_refs:
                        raise InputError(
                            f"{refs[k].path}: line {refs[k].count}: expected "
                            f"{num_refs} tab-separated references, found "
                            f"{len(fields)}"
                        )
                    for stream, field in zip(ref_chunk, fields):
                        stream.append(field)
            if len(hyps) == size:
                break
        if not hyps:
            for k, it in enumerate(ref_iters):
                if next(it, None) is not None:
                    raise _length_error(hyp, refs[k])
            return
        yield hyps, ref_chunk


def _length_error(hyp: LineReader, ref: LineReader) -> InputError:
    hyp_count, ref_count = hyp.rest(), ref.rest()
    for reader, count in ((hyp, hyp_count), (ref, ref_count)):
        if count == 0:
            return InputError(f"{reader.path}: empty file, nothing to score")
    return InputError(
        f"line counts differ: {hyp.path} has {hyp_count} lines, {ref.path} has {ref_count}; "
        f"{RESEGMENT_HINT}"
    )


# -- workers ------------------------------------------------------------------------------------

_WORKER_METRICS: dict[str, Metric] = {}


def _init_worker(specs: dict[str, tuple[type[Metric], dict[str, Any]]]) -> None:
    import logging

    logging.getLogger("bleucli").setLevel(logging.ERROR)  # the parent already warned
    _WORKER_METRICS.clear()
    for name, (cls, kwargs) in specs.items():
        _WORKER_METRICS[name] = cls(**kwargs)


def _score_chunk(
    chunk: tuple[list[str], list[list[str]]],
    keep_rows: bool,
    metrics: dict[str, Metric] | None = None,
) -> dict[str, Any]:
    hyps, refs = chunk
    out: dict[str, Any] = {}
    for name, metric in (metrics or _WORKER_METRICS).items():
        rows = metric.per_sentence_stats(hyps, refs)
        if keep_rows or not metric.integer_stats:
            out[name] = ("rows", rows)
        else:
            out[name] = ("sum", [sum(column) for column in zip(*rows)])
    return out


def score_stream(
    specs: dict[str, tuple[type[Metric], dict[str, Any]]],
    hyp_path: str,
    ref_paths: list[str],
    num_refs: int,
    encoding: str,
    jobs: int = 1,
    keep_rows: bool = False,
    on_rows=None,
    on_hypotheses=None,
    on_progress=None,
    metrics: dict[str, Metric] | None = None,
) -> tuple[dict[str, Metric], dict[str, list[Number]], int]:
    """Score ``hyp_path`` against ``ref_paths``; returns metrics, summed stats, line count.

    ``on_rows({name: rows})`` (with ``keep_rows``) receives each chunk's per-sentence rows
    in corpus order, for sentence-level output; ``on_hypotheses(lines, references)`` sees
    every chunk of hypotheses and its reference streams (for input checks and shard hashes);
    ``on_progress(bytes)`` how much of the hypothesis file has been read after each chunk.
    """
    if metrics is None:
        metrics = {name: cls(**kwargs) for name, (cls, kwargs) in specs.items()}
    hyp = LineReader(hyp_path, encoding)
    refs = [LineReader(p, encoding) for p in ref_paths]
    totals: dict[str, list[Number]] = {}

    def observed(source):
        for chunk in source:
            if on_hypotheses is not None:
                on_hypotheses(chunk[0], chunk[1])
            yield chunk

    pool = None
    try:
        source = observed(chunks(hyp, refs, num_refs))
        if jobs > 1:
            from bleucli.workers import pool as worker_pool

            pool = worker_pool(jobs, _init_worker, (specs,))
            results = in_order(pool, _work_in_worker(keep_rows), source, jobs)
        else:
            results = (_score_chunk(c, keep_rows, metrics) for c in source)
        for result in results:
            if on_rows is not None:
                on_rows({name: value for name, (_, value) in result.items()})
            for name, (kind, value) in result.items():
                rows = [value] if kind == "sum" else value
                if rows:  # row by row, in corpus order: float sums as SacreBLEU's
                    totals[name] = sum_rows([totals[name], *rows] if name in totals else rows)
            if on_progress is not None:
                on_progress(hyp.bytes)
    finally:
        if pool is not None:
            pool.terminate()
        hyp.close()
        for ref in refs:
            ref.close()
    return metrics, totals, hyp.count


def in_order(pool, function, tasks, jobs: int):
    """``function`` over ``tasks`` in ``pool``, results in task order, with at most ``jobs``
    tasks in flight. ``Pool.imap`` would feed the whole input into the pool's pipe from a
    helper thread; a chunk of text is larger than the pipe's buffer, so that thread blocks
    while every worker is busy, and ``terminate()`` after Ctrl-C then waits for it forever.
    Here a task is only sent when a worker is idle and reading, and the next chunk is read
    (by the caller's iterator) while the workers compute."""
    from collections import deque

    pending: deque = deque()
    iterator = iter(tasks)
    upcoming = next(iterator, None)
    while True:
        while upcoming is not None and len(pending) < jobs:
            pending.append(pool.apply_async(function, (upcoming,)))
            upcoming = next(iterator, None)
        if not pending:
            return
        result = pending.popleft().get()
        yield result


class _work_in_worker:  # noqa: N801 - a picklable partial
    def __init__(self, keep_rows: bool) -> None:
        self.keep_rows = keep_rows

    def __call__(self, chunk):
        return _score_chunk(chunk, self.keep_rows)
