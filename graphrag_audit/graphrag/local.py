"""The community reports graphrag's local search puts in context at each ``community_level``.

No graphrag import, no global state. Sources, the same logic at v1.2.0, v2.7.2 and v3.3.0 unless named:

- ``api/query.py`` ``local_search``: ``read_indexer_entities(..., community_level)`` and
  ``read_indexer_reports(..., community_level)`` (the global-search selection:
  :mod:`graphrag_audit.graphrag.selection`, ``v1`` for 1.x, ``v2`` since 2.0).
- ``query/indexer_adapters.py`` ``read_indexer_entities``: an entity's ``community_ids`` are
  ``set(...)`` of its communities at level <= N, listed in the set's iteration order (rebuilt here
  from the same ints in the same insertion order: it decides ties). 1.x: the
  ``create_final_nodes`` rows with level <= N (-1 = no community), inner-joined with the entities
  on ``id``. 2.x/3.x: ``entities.merge(communities.explode("entity_ids"), how="left")`` filtered
  by ``level <= N``, so an entity in no community (NaN level) is dropped.
- ``query/structured_search/local_search/mixed_context.py`` ``_build_community_context``: count
  the selected entities per community id (first occurrence fixes the order), keep the ids with a
  report (a dict keyed by community id: the last report row wins), ``list.sort(key=(matches,
  rank), reverse=True)`` (stable: ties keep that order), then ``build_community_context(
  single_batch=True, shuffle_data=False, entities=None)``; ``include_community_rank=False`` and
  ``min_community_rank`` 0 (``query/factory.py`` ``get_local_search_engine``; 1.x names the budget
  ``max_tokens``).
- ``query/context_builder/community_context.py``: reports with ``rank is None or rank < 0``
  (NaN too) are skipped; header ``"-----Reports-----\\nid|title|content\\n"`` (no attributes, no
  weight without entities, no rank) counted once, each row ``f"{community}|{title}|{content}\\n"``;
  packing stops at the first row with ``header + rows + row > budget`` (strictly).
- Budget: ``max(int(max_context_tokens * community_prop), 0)`` (mixed_context.py); defaults
  12,000 x 0.15 (``config/defaults.py``: ``LOCAL_SEARCH_MAX_TOKENS``/``LOCAL_SEARCH_COMMUNITY_PROP``
  @v1.2.0, ``LocalSearchDefaults`` @v2.7.2 and @v3.3.0); ``top_k_entities`` 10 (same files).

A probe stands for a query about one leaf community (no row names it as parent): its selected
entities are the first ``top_k`` ids of the leaf's ``entity_ids`` that ``read_indexer_entities``
returns at N, in ``entity_ids`` order. Not modelled: 1.x grouping nodes by ``(id, degree)`` (an
entity whose degree differs between levels), and node rows that loading reordered across levels.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.selection import select_all
from graphrag_audit.graphrag.tokens import TokenCounter, get_token_counter
from graphrag_audit.model.index import IndexModel
from graphrag_audit.model.keys import dictionary_parts

VERSION_LINES = ("1.x", "2.x", "3.x")
DEFAULT_MAX_CONTEXT_TOKENS = 12_000
DEFAULT_COMMUNITY_PROP = 0.15
DEFAULT_TOP_K = 10
HEADER = "-----Reports-----\nid|title|content\n"


def local_budget(
    max_context_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS, community_prop: float = DEFAULT_COMMUNITY_PROP
) -> int:
    """The community-report budget: ``max(int(max_context_tokens * community_prop), 0)``."""
    return max(int(max_context_tokens * community_prop), 0)


@dataclass(frozen=True)
class ContextReport:
    community: int
    level: int
    matches: int
    rank: float
    tokens: int  # of its row


@dataclass(frozen=True)
class LocalContext:
    """The reports in context in graphrag's order, the first that did not fit (None: all fitted)
    and the tokens counted (header included; 0 when nothing fitted)."""

    reports: tuple[ContextReport, ...]
    did_not_fit: ContextReport | None
    tokens: int


@dataclass(frozen=True)
class Probe:
    leaf: int
    leaf_level: int
    entities: tuple[str, ...]  # the selected entity ids
    context: LocalContext


class LocalSearch:
    """What local search reads from one index for one version line, at any N (each N read once,
    each report row counted once)."""

    def __init__(
        self,
        model: IndexModel,
        version: str,
        counter: TokenCounter | None = None,
        max_probes: int | None = None,
    ):
        """``max_probes``: above this many leaves, :meth:`probes` reads an evenly spaced sample of
        them (the first and the last included; ``sampled`` = (probes read, leaves))."""
        if version not in VERSION_LINES:
            raise ValueError(f"version line {version!r}: one of {', '.join(VERSION_LINES)}")
        if model.entities is None:
            raise ValueError("local search needs the entities table")
        self.model, self.version = model, version
        self.counter = counter or get_token_counter()
        self.header_tokens = self.counter.count(HEADER)
        r = model.reports
        self.communities, self.levels = r["community"].tolist(), r["level"].tolist()
        self.ranks = [float(x) for x in r["rank"].tolist()]
        self._texts = r[["title", "content"]]  # a row's text is built when it is first counted
        self.row_tokens: dict[int, int] = {}
        self.selection = select_all(model)
        self._read: dict[int, tuple[dict[str, list[int]], dict[int, int]]] = {}
        c = model.communities
        leaves = c[~c["community"].isin(c["parent"])]
        self.sampled: tuple[int, int] | None = None
        if max_probes is not None and len(leaves) > max_probes:
            self.sampled = (max_probes, len(leaves))
            leaves = leaves.iloc[np.unique(np.linspace(0, len(leaves) - 1, max_probes).round().astype(int))]
        self._leaves = list(zip(leaves["community"].tolist(), leaves["level"].tolist()))

    def read(self, n: int) -> tuple[dict[str, list[int]], dict[int, int]]:
        """(entity id -> ``community_ids``, community -> report row) as local search reads them at N."""
        if n not in self._read:
            rows = self.selection[n]["v1" if self.version == "1.x" else "v2"].rows.tolist()
            by_community = dict(zip([self.communities[i] for i in rows], rows))  # the last row wins
            keys, communities, levels = self._membership
            under = levels <= n
            grouped: dict[str, list[int]] = {}
            for key, community in zip(itertools.compress(keys, under), communities[under].tolist()):
                grouped.setdefault(key, []).append(community)
            entity_communities = {key: list(set(cs)) for key, cs in grouped.items()}
            self._read = {
                n: (entity_communities, by_community)
            }  # one N kept: O(levels) memory, not O(levels^2)
        return self._read[n]

    def context(self, n: int, entity_ids: Iterable[str], budget: int) -> LocalContext:
        """``_build_community_context`` for these selected entities (ids local search reads at N)."""
        entity_communities, report_row = self.read(n)
        matches: Counter[int] = Counter()
        for e in entity_ids:
            matches.update(entity_communities[e])
        candidates = [
            (count, self.ranks[report_row[c]], report_row[c])
            for c, count in matches.items()
            if c in report_row
        ]
        candidates.sort(key=lambda c: (c[0], c[1]), reverse=True)
        packed: list[ContextReport] = []
        total = self.header_tokens
        for count, rank, row in candidates:
            if not rank >= 0:  # None/NaN/negative rank: not in context, not a stop
                continue
            if row not in self.row_tokens:
                title, content = self._texts.iloc[row]
                self.row_tokens[row] = self.counter.count(f"{self.communities[row]}|{title}|{content}\n")
            report = ContextReport(self.communities[row], self.levels[row], count, rank, self.row_tokens[row])
            if total + report.tokens > budget:
                return LocalContext(tuple(packed), report, total if packed else 0)
            packed.append(report)
            total += report.tokens
        return LocalContext(tuple(packed), None, total if packed else 0)

    def probes(self, n: int, budget: int, top_k: int = DEFAULT_TOP_K) -> list[Probe]:
        """One probe per leaf community, in communities row order."""
        entity_communities = self.read(n)[0]
        out = []
        for leaf, level, entity_ids in self.leaves:
            ids = [e for e in entity_ids if e in entity_communities][:top_k]
            out.append(Probe(leaf, level, tuple(ids), self.context(n, ids, budget)))
        return out

    @cached_property
    def leaves(self) -> list[tuple[int, int, list[str]]]:
        """(community, level, entity_ids) of every community no row names as parent (or of the
        sample), in row order."""
        m = self.model.members
        if self.sampled:
            m = m[m["community"].isin([leaf for leaf, _ in self._leaves])]
        entity_ids: dict[int, list[str]] = {}
        for e, community in zip(m["entity"].astype(str).tolist(), m["community"].tolist()):
            entity_ids.setdefault(community, []).append(e)
        return [(leaf, level, entity_ids.get(leaf, [])) for leaf, level in self._leaves]

    @cached_property
    def _membership(self) -> tuple[list, np.ndarray, np.ndarray]:
        only = {e for _, _, ids in self.leaves for e in ids} if self.sampled else None
        return _membership(self.model, self.version, only)


def _membership(
    model: IndexModel, version: str, only: set[str] | None = None
) -> tuple[list, np.ndarray, np.ndarray]:
    """The rows ``read_indexer_entities`` groups, in row order: (entity id, community, level) of the
    entities it reads (``only``: of these alone)."""
    assert model.entities is not None
    ids = model.entities["id"]
    known = ids if only is None else ids[ids.isin(list(only))]
    if version == "1.x":
        rows = model.rollup_rows
        if "entity_row" in rows.columns:
            pos = rows["entity_row"].to_numpy()
            id_at = np.where(pos >= 0, ids.astype(str).to_numpy(dtype=object)[np.maximum(pos, 0)], None)
            column = pd.Series(id_at, dtype=object)
        elif "entity_id" in rows.columns:
            column = rows["entity_id"]
        elif model.member_key == "id":
            column = rows["entity"]
        else:
            raise ValueError("graphrag 1.x local search needs the nodes' entity ids")
    else:
        rows = model.members
        if model.member_key != "id":
            raise ValueError("graphrag >= 2.0 local search needs the communities' entity_ids")
        column = rows["entity"]
    mask, keys = _rows_with_keys(column, set(known.astype(str).tolist()))
    return keys, rows["community"].to_numpy()[mask], rows["level"].to_numpy()[mask]


def _rows_with_keys(column: pd.Series, wanted: set[str]) -> tuple[np.ndarray, list[str]]:
    """(mask of the rows whose key, as a string, is in ``wanted``; those keys), each distinct key of
    a dictionary-encoded column converted once."""
    dictionary_typed = isinstance(column.dtype, (pd.ArrowDtype, pd.CategoricalDtype))
    parts = dictionary_parts(column) if dictionary_typed else None
    if parts is None:
        keys = np.array([None if k is None else str(k) for k in column.tolist()], dtype=object)
        mask = pd.Series(keys).isin(wanted).to_numpy()
        return mask, keys[mask].tolist()
    codes, dictionary = parts
    distinct = np.asarray([str(k) for k in dictionary.to_pylist()], dtype=object)
    mask = pd.Series(distinct).isin(wanted).to_numpy()[codes]
    return mask, distinct[codes[mask]].tolist()


def summarise(probes: Sequence[Probe]) -> dict:
    """``probes``, ``reports_in_context_by_level`` and ``deepest_level_in_context`` ({"<level>" |
    "none": count}), keys only for counts above 0."""
    by_level: Counter[str] = Counter()
    deepest: Counter[str] = Counter()
    for p in probes:
        levels = [r.level for r in p.context.reports]
        by_level.update(str(lv) for lv in levels)
        deepest[str(max(levels)) if levels else "none"] += 1
    return {
        "probes": len(probes),
        "reports_in_context_by_level": dict(sorted(by_level.items(), key=lambda kv: int(kv[0]))),
        "deepest_level_in_context": dict(
            sorted(deepest.items(), key=lambda kv: int(kv[0]) if kv[0] != "none" else float("inf"))
        ),
    }


def what_if(
    model: IndexModel,
    version: str,
    n: int,
    entities: Sequence[str],
    budget: int | None = None,
    counter: TokenCounter | None = None,
) -> tuple[LocalContext, list[str]]:
    """The context for these entities (ids or titles, in this order), and the names local search
    does not read at N (unknown, or dropped by ``read_indexer_entities``)."""
    search = LocalSearch(model, version, counter)
    entity_communities = search.read(n)[0]
    assert model.entities is not None
    by_title: dict[str, str] = {}
    for i, t in zip(model.entities["id"].astype(str).tolist(), model.entities["title"].astype(str).tolist()):
        by_title.setdefault(t, i)
    ids, missing = [], []
    for name in entities:
        key = name if name in entity_communities else by_title.get(name)
        if key in entity_communities:
            ids.append(key)
        else:
            missing.append(name)
    return search.context(n, ids, local_budget() if budget is None else budget), missing
