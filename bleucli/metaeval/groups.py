"""How a (systems x items) matrix of scores becomes the vectors a statistic correlates:
mt-metrics-eval's ``average_by``.

``none`` flattens the rated entries into one vector (system-major), ``sys`` makes one vector
per system (its rated items), ``item`` one vector per item (the systems rated on it). Only
rated entries take part (a ``None``/NaN human score removes the entry from both vectors),
and a group with fewer than two entries is dropped: no correlation exists for it, and
MTME skips it before averaging.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GROUPINGS = ("none", "item", "sys")


@dataclass(frozen=True)
class Groups:
    """Entries of a flattened (systems x items) matrix, group by group.

    ``positions[starts[g]:starts[g + 1]]`` are the flat positions (``system * items +
    item``) of group ``g``'s entries, in MTME's order.
    """

    by: str
    positions: np.ndarray
    starts: np.ndarray

    @property
    def count(self) -> int:
        return len(self.starts) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.starts)

    @property
    def ids(self) -> np.ndarray:
        """The group of every entry."""
        return np.repeat(np.arange(self.count), self.sizes)

    def take(self, matrix: np.ndarray) -> np.ndarray:
        """The grouped entries of a (systems x items) matrix, or of a stack of them."""
        flat = matrix.reshape(*matrix.shape[:-2], -1)
        return flat[..., self.positions]


def grouping(rated: np.ndarray, by: str) -> Groups:
    """The groups of the rated entries of a (systems x items) boolean matrix."""
    if by not in GROUPINGS:
        raise ValueError(f"unknown grouping {by!r}: use one of {', '.join(GROUPINGS)}")
    n_sys, n_items = rated.shape
    if by == "item":
        flat = np.flatnonzero(rated.T)  # item-major: item * n_sys + system
        positions = (flat % n_sys) * n_items + flat // n_sys
        ids = flat // n_sys
    else:
        positions = np.flatnonzero(rated)
        ids = positions // n_items if by == "sys" else np.zeros(len(positions), dtype=np.int64)
    sizes = np.bincount(ids, minlength=1) if len(ids) else np.zeros(0, dtype=np.int64)
    keep = sizes[ids] >= 2 if len(ids) else np.zeros(0, dtype=bool)
    positions, ids = positions[keep], ids[keep]
    kept_sizes = sizes[sizes >= 2]
    starts = np.concatenate([[0], np.cumsum(kept_sizes)]).astype(np.int64)
    return Groups(by, positions.astype(np.int64), starts)


def pair_indices(groups: Groups) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair ``i < j`` of entries within a group, as indices into the grouped vector,
    with its group: ``(first, second, group)``, group by group."""
    firsts, seconds, owners = [], [], []
    sizes = groups.sizes
    starts = groups.starts[:-1]
    for size in np.unique(sizes):
        which = np.flatnonzero(sizes == size)
        a, b = np.triu_indices(int(size), 1)
        base = starts[which][:, None]
        firsts.append((base + a).ravel())
        seconds.append((base + b).ravel())
        owners.append(np.repeat(which, len(a)))
    if not firsts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    first, second, owner = (np.concatenate(p) for p in (firsts, seconds, owners))
    order = np.argsort(owner, kind="stable")
    return first[order], second[order], owner[order]


def pair_count(groups: Groups) -> int:
    sizes = groups.sizes.astype(np.int64)
    return int((sizes * (sizes - 1) // 2).sum())
