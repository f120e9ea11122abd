"""Which reports each ``community_level`` sends to global search, per graphrag behaviour.

Behaviours (see docs/user-guide.md and docs/graphrag-semantics.md#selection):

``v2``  graphrag >= 2.0 (2.x, 3.x) ``read_indexer_reports``: explode the communities table,
        keep rows with level <= N, group by community ``title`` taking the max community
        number (a no-op roll-up: titles are "Community N"), then inner-join the reports with
        level <= N on ``community``. Net effect: every report with level <= N whose community
        has a communities row with level <= N.
``v1``  graphrag < 2.0 on an index of its own generation: the per-entity rows
        (``create_final_nodes``; derived from ``entity_ids`` for 2.x/3.x indexes) with
        level <= N, −1 for "no community", max community *number* per entity title, then the
        reports with level <= N among those numbers. The max number is the deepest community
        only while numbers grow with depth; this reproduces the rule literally.
``level_only``  what the docs describe: reports at exactly level N.
``dynamic``     dynamic community selection's candidate pool: reports with level <= N, no join.

``N = None`` means no level filter (the Python API's ``community_level=None``).
Every level is computed in one incremental pass over the rows sorted by level: what a level
costs is proportional to the rows at levels <= N, however many levels the index has.
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
    """Report rows (positions in ``model.reports``, parquet row order) for one N and behaviour
    (int32 when the table has fewer than 2**31 rows)."""

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
    """(N, sorted int64 array of community numbers kept by the v2 roll-up), N in ``levels``
    order, one at a time (all at once they add up to O(levels × communities))."""
    c = model.communities
    comm = c["community"].to_numpy()
    lev = c["level"].to_numpy()
    titles = c["title"].to_numpy(dtype=object)
    if pd.Index(titles).is_unique:
        order = np.argsort(lev, kind="stable")
        lev_sorted = lev[order]
        for n in levels:
            if n is None:
                yield n, sorted_unique(comm)
            else:
                k = np.searchsorted(lev_sorted, n, side="right")
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
    """(N, community numbers that are some entity's max number among its rows <= N), N in
    ``levels`` order."""
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
    by_first, first_sorted = _first_rows(codes, width)
    start = 0
    for n in levels:
        if n is None:
            end = len(lev)
        else:
            end = int(np.searchsorted(lev, n, side="right"))
        if end > start:
            np.maximum.at(running, codes[start:end], comm[start:end])
            start = end
        seen = by_first[: int(np.searchsorted(first_sorted, end, side="left"))]
        yield n, sorted_unique(running[seen])


def _first_rows(codes: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(the codes 0 … ``width`` - 1 by the position of their first row, stably; those positions,
    ``len(codes)`` for a code with no row)."""
    first = np.full(width, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    by_first = np.argsort(first, kind="stable")
    return by_first, first[by_first]


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
    """The ``rows`` whose community is in ``kept``; ``rows`` itself (one array, not a copy)
    when that is all of them."""
    keep = np.isin(rep_comm[rows], kept)
    return rows if keep.all() else rows[keep]
