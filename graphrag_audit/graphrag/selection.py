"""Which reports each ``community_level`` N sends to global search, per behaviour (graphrag-semantics.md):

* ``v2``, graphrag >= 2.0 ``read_indexer_reports``: communities rows at level <= N, max community per
  ``title`` (a no-op roll-up), inner-joined with the reports at level <= N;
* ``v1``, graphrag < 2.0: per-entity rows (``create_final_nodes``, or derived from ``entity_ids``) at
  level <= N, max community *number* per entity, then the reports at level <= N among those numbers;
* ``level_only``: reports at exactly level N (what the docs describe);
* ``dynamic``: dynamic selection's candidates, reports at level <= N, no join.

N = None: no level filter. All levels come from one incremental pass over the rows sorted by level.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from graphrag_audit.model.index import IndexModel
from graphrag_audit.model.keys import is_nondecreasing, key_codes, sorted_unique, stable_order

BEHAVIOURS = ("v2", "v1", "level_only", "dynamic")
INT_MIN = np.iinfo(np.int64).min


@dataclass(frozen=True)
class Selection:
    """Report rows (positions in ``model.reports``, parquet order; int32 if they fit) for N and behaviour."""

    community_level: int | None
    behaviour: str
    rows: np.ndarray

    def community_ids(self, model: IndexModel) -> list[int]:
        return sorted(int(x) for x in model.reports["community"].to_numpy()[self.rows])


def community_levels(model: IndexModel) -> list[int | None]:
    """N = 0 … max level (of communities and reports), then None."""
    hi = model.max_level
    if len(model.reports):
        hi = max(hi, int(model.reports["level"].max()))
    return list(range(hi + 1)) + [None]


def _v2_kept_communities(
    model: IndexModel, levels: list[int | None]
) -> Iterator[tuple[int | None, np.ndarray]]:
    """(N, sorted community numbers the v2 roll-up keeps), one N at a time."""
    c = model.communities
    comm = c["community"].to_numpy()
    lev = c["level"].to_numpy()
    titles = c["title"].to_numpy(dtype=object)
    if pd.Index(titles).is_unique:
        order = np.argsort(lev, kind="stable")
        lev_sorted = lev[order]
        for n in levels:
            k = len(lev) if n is None else np.searchsorted(lev_sorted, n, side="right")
            yield n, sorted_unique(comm[order[:k]])
        return
    # titles repeat (hand edits, updates): reproduce groupby(title).max literally
    frame = pd.DataFrame({"title": titles, "community": comm, "level": lev})
    frame = frame[frame["title"].notna()]
    frame = frame.iloc[np.argsort(frame["level"].to_numpy(), kind="stable")]  # level <= N: a prefix
    lev_sorted = frame["level"].to_numpy()
    for n in levels:
        sub = frame if n is None else frame.iloc[: int(np.searchsorted(lev_sorted, n, side="right"))]
        yield n, np.unique(sub.groupby("title")["community"].max().to_numpy())


def _v1_kept_communities(
    model: IndexModel, levels: list[int | None]
) -> Iterator[tuple[int | None, np.ndarray]]:
    """(N, community numbers that are some entity's max among its rows at level <= N)."""
    r = model.rollup_rows
    title_na = r.attrs.get("title_na")
    if title_na is not None and title_na.any():  # groupby drops NaN titles
        r = r[~title_na]
    codes, _ = key_codes(r["entity"])
    comm = r["community"].to_numpy()
    lev = r["level"].to_numpy()
    if not is_nondecreasing(lev):  # (load puts node rows level by level; membership rows usually are)
        order = stable_order(lev)
        codes, comm, lev = codes[order], comm[order], lev[order]
    width = int(codes.max()) + 1 if len(codes) else 0
    running = np.full(width, INT_MIN, dtype=np.int64)
    # the entities with a row at level <= N, in the order their first such row comes: a prefix
    first = np.full(width, len(codes), dtype=np.int64)  # each code's first row (len(codes): none)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    by_first = np.argsort(first, kind="stable")
    first_sorted = first[by_first]
    start = 0
    for n in levels:
        end = len(lev) if n is None else int(np.searchsorted(lev, n, side="right"))
        if end > start:
            np.maximum.at(running, codes[start:end], comm[start:end])
            start = end
        seen = by_first[: int(np.searchsorted(first_sorted, end, side="left"))]
        yield n, sorted_unique(running[seen])


def select_all(model: IndexModel) -> dict[int | None, dict[str, Selection]]:
    """Every N (0 … max, None) × every behaviour."""
    levels = community_levels(model)
    rep_comm = model.reports["community"].to_numpy()
    rep_lev = model.reports["level"].to_numpy()
    kept = zip(_v2_kept_communities(model, levels), _v1_kept_communities(model, levels))
    # reports sorted by level: "level <= N" is a prefix, "level == N" a slice (each level's work
    # is proportional to what it selects, not to the whole table)
    # rows as int32 when they fit: a 1,000-level index selects millions of rows over its levels
    small = np.int32 if len(rep_lev) < 2**31 else np.int64
    by_level = np.argsort(rep_lev, kind="stable").astype(small)
    lev_sorted = rep_lev[by_level]
    everything = np.arange(len(rep_lev), dtype=small)
    result: dict[int | None, dict[str, Selection]] = {}
    below = np.zeros(len(rep_lev), dtype=bool)  # the rows with level <= N, grown level by level
    done = 0
    for (n, v2), (_, v1) in kept:
        if n is None:
            under = exact = everything
        else:
            lo, hi = np.searchsorted(lev_sorted, n, side="left"), np.searchsorted(lev_sorted, n, side="right")
            if hi < done:  # levels out of order: start again
                below[:] = False
                done = 0
            below[by_level[done:hi]] = True
            done = int(hi)
            under = np.flatnonzero(below).astype(small, copy=False)  # parquet row order, no sort
            exact = np.sort(by_level[lo:hi])
        result[n] = {
            "v2": Selection(n, "v2", _among(under, rep_comm, v2)),
            "v1": Selection(n, "v1", _among(under, rep_comm, v1)),
            "level_only": Selection(n, "level_only", exact),
            "dynamic": Selection(n, "dynamic", under),
        }
    return result


def _among(rows: np.ndarray, rep_comm: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The ``rows`` whose community is in ``kept`` (``rows`` itself when all are)."""
    keep = np.isin(rep_comm[rows], kept)
    return rows if keep.all() else rows[keep]
