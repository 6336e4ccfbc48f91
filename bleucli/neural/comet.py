"""COMET's sentence-embedding families, computed as unbabel-comet 2.2.7 computes them:

* ``regression_metric`` (COMET-DA): source, hypothesis and reference encoded apart, pooled,
  combined as ``[h, r, h*r, |h-r|, h*s, |h-s|]`` into the feed-forward head;
* ``referenceless_regression_metric`` (COMET-QE): ``[h, s, h*s, |h-s|]``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bleucli.errors import InputError
from bleucli.neural import runtime
from bleucli.neural.layers import average_pool, max_pool
from bleucli.neural.model import HEAD_ROWS, SEGMENT_CHUNK, CometModel, Prediction


class SentenceEmbeddingModel(CometModel):
    """The models that encode each segment on its own (COMET-DA, COMET-QE): every sentence
    is encoded once per model (:mod:`bleucli.neural.embeddings`), so sources and references
    are shared by every system scored against them, in this run and the next."""

    @property
    def store(self) -> Any:
        if getattr(self, "_store", None) is None:
            from bleucli.neural.embeddings import EmbeddingStore

            identity = self.cache_identity or f"unnamed-{id(self)}"
            self._store = EmbeddingStore(identity, self.encoder.hidden)
            if not self.cache_identity:
                self._store.path = None  # no identity, no disk
        return self._store

    def _encode_ids(self, sequences: list[list[int]], length: int | None = None) -> Any:
        """Pooled embeddings of id sequences, padded to ``length`` tokens."""
        torch = runtime.torch()
        length = length or max(len(s) for s in sequences)
        pad = self.encoder.pad_id
        ids = torch.tensor([s + [pad] * (length - len(s)) for s in sequences], device=self.device)
        mask = torch.tensor(
            [[1] * len(s) + [0] * (length - len(s)) for s in sequences], device=self.device
        )
        embeddings, _ = self._mixed(ids, mask)
        return self._pool(ids, embeddings, mask)

    def _pool(self, ids: Any, embeddings: Any, mask: Any) -> Any:
        pool = self.hparams.get("pool", "avg")
        if pool == "avg":
            return average_pool(ids, embeddings, mask, self.encoder.pad_id)
        if pool == "max":
            return max_pool(ids, embeddings, self.encoder.pad_id)
        if pool == "cls":
            return embeddings[:, 0, :]
        if pool == "default":
            return self.encoder.layers(ids, mask)[-1][:, 0, :]
        raise InputError(f"checkpoint: pooling {pool!r} is not one of avg, max, cls, default")

    def embed(
        self, texts: Sequence[str], batch_size: int, progress: Any = None, store: Any = None
    ) -> Any:
        def tokenize(batch: list[str]) -> list[list[int]]:
            return [list(e.ids) for e in self.encoder.encode(batch)]

        return (
            (store or self.store)
            .embed(texts, self._encode_ids, tokenize, batch_size, progress)
            .to(device=self.device)
        )

    def _store_for(self, role: str) -> Any:
        """Where a role's embeddings are kept: a confined run's hypotheses in a store of
        their own, used once (:func:`bleucli.neural.runtime.confined`)."""
        if role == "mt" and runtime.confinement().isolated:
            from bleucli.neural.embeddings import EmbeddingStore

            return EmbeddingStore.transient(self.encoder.hidden)
        return self.store

    def features(self, embedded: dict[str, Any]) -> Any:
        raise NotImplementedError

    def pairwise(
        self,
        sources: Sequence[str] | None,
        hypotheses: Sequence[Sequence[str]],
        references: Sequence[Sequence[str]],
        batch_size: int = 16,
    ) -> list[Any]:
        """Each source, hypothesis and reference encoded once; the head over the pairs."""
        import numpy

        torch = runtime.torch()
        if sources is None:
            raise InputError(f"{type(self).__name__}: the sources are needed for pairwise scores")
        texts = list(
            dict.fromkeys([t for g in hypotheses for t in g] + [t for g in references for t in g])
        )
        position = {t: k for k, t in enumerate(texts)}
        out = []
        with torch.inference_mode():
            table = self.embed(texts, batch_size) if texts else None
            sentences = self.embed(list(sources), batch_size)
            for b, (hyps, refs) in enumerate(zip(hypotheses, references)):
                n, k = len(hyps), len(refs)
                if n == 0 or k == 0:
                    out.append(numpy.zeros((n, k)))
                    continue
                h = torch.tensor([position[t] for t in hyps for _ in refs])
                r = torch.tensor([position[t] for _ in hyps for t in refs])
                embedded = {"mt": table[h], "ref": table[r], "src": sentences[b].expand(n * k, -1)}  # type: ignore[index]
                scores = self._scores_in_chunks(self.features(embedded))
                out.append(numpy.array(scores, dtype=numpy.float64).reshape(n, k))
        return out

    def predict(
        self,
        samples: dict[str, Sequence[str]],
        batch_size: int = 16,
        progress: Callable[[int], None] | None = None,
    ) -> Prediction:

        torch = runtime.torch()
        n = len(samples["mt"])
        if n == 0:
            return Prediction([])
        scores: list[float] = []
        with torch.inference_mode():
            for start in range(0, n, SEGMENT_CHUNK):  # bounded memory for any set size
                part = {k: samples[k][start : start + SEGMENT_CHUNK] for k in self.inputs}
                embedded = {
                    k: self.embed(
                        part[k], batch_size, progress if k == "mt" else None, self._store_for(k)
                    )
                    for k in self.inputs
                }
                scores += self._scores_in_chunks(self.features(embedded))
                self.store.trim()
        return Prediction(scores)

    def _scores_in_chunks(self, features: Any) -> list[float]:
        """The head over rows of features, ``HEAD_ROWS`` at a time, the last chunk padded
        with zero rows: a matrix product's bits depend on its row count, so a fixed count
        makes each score a function of its own row alone (the same whatever the batch
        size, the other segments, or how a Dask bag is partitioned), in bounded memory."""
        torch = runtime.torch()
        scores: list[float] = []
        for start in range(0, len(features), HEAD_ROWS):
            chunk = features[start : start + HEAD_ROWS]
            real = len(chunk)
            if real < HEAD_ROWS:
                padding = chunk.new_zeros((HEAD_ROWS - real, chunk.shape[1]))
                chunk = torch.cat((chunk, padding))
            scores += self._scores(chunk)[:real]
        return scores

    inputs: tuple[str, ...] = ()


class RegressionModel(SentenceEmbeddingModel):
    feature_width = 6
    inputs = ("src", "ref", "mt")

    def features(self, embedded: dict[str, Any]) -> Any:
        torch = runtime.torch()
        src, ref, mt = embedded["src"], embedded["ref"], embedded["mt"]
        return torch.cat(
            (mt, ref, mt * ref, torch.abs(mt - ref), mt * src, torch.abs(mt - src)), dim=1
        )


class ReferencelessModel(SentenceEmbeddingModel):
    feature_width = 4
    needs_reference = False
    inputs = ("src", "mt")

    def features(self, embedded: dict[str, Any]) -> Any:
        torch = runtime.torch()
        src, mt = embedded["src"], embedded["mt"]
        return torch.cat((mt, src, mt * src, torch.abs(mt - src)), dim=1)
