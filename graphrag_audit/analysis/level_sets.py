"""Set questions the per-level statistics ask once per selection, answered with flag arrays.

Each community_level hands ``levels.selection_stats`` up to four selections; on a deep tree
(31 levels at a million entities) the >= 2.0 selection of level N holds nearly every report, so
anything that sorts a selection (``np.unique``, ``np.isin``, an ``argsort`` by preorder, one
parent step after another) costs O(k log k), or O(k log k × depth), per level. The two classes
here answer the same questions with one flag per community / entity / text unit instead:

* :class:`CoveredSets`: the distinct entities (and text units) of a set of communities, grown
  from the largest recently asked set it contains: a selection that holds the one below it (the
  >= 2.0 rule: every report with level <= N is a report with level <= N + 1) costs only its new
  communities' membership rows and their entities' text-unit lists.
* :class:`AncestorFlags`: which selected communities are a proper ancestor of another selected
  one, in O(communities) per set (no sort), for forests without a cycle.

Both give exactly the numbers of the straightforward computations they replace
(``tests/test_level_sets.py`` compares them on generated deep trees and on cycles).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class _State:
    """One set of communities (``cmask``), its entities (``emask``, ``count``) and their text units."""

    __slots__ = ("cmask", "ncodes", "emask", "count", "tu_hit", "tu_count")

    def __init__(self, n_comm: int, n_ent: int):
        self.cmask = np.zeros(n_comm, dtype=bool)
        self.ncodes = 0
        self.emask = np.zeros(n_ent, dtype=bool)
        self.count = 0
        self.tu_hit = None  # the text units of the entities, once asked for (then kept up to date)
        self.tu_count = 0


class CoveredSets:
    """Distinct entities (membership entity codes) and text units of community sets.

    ``members_of(codes)``: the entity codes of the membership rows of the distinct community codes
    ``codes`` (-1: a key the entities do not hold, counted in the last slot, as
    ``levels.TreeIndex.covered`` always did; ``missing=False`` promises there is none). ``text_units``: a ``coverage.TextUnitCover`` or None.
    The last three sets asked about are kept; a new set is grown from the largest of them it
    contains (or from nothing)."""

    KEEP = 3
    KEEP_COUNTED = 4

    def __init__(
        self,
        n_comm: int,
        n_entities: int,
        members_of: Callable[[np.ndarray], np.ndarray],
        text_units=None,
        missing: bool = True,
    ):
        self.n_comm, self.n_entities = n_comm, n_entities
        self._missing = missing  # False: ``members_of`` never returns -1 (no pass to map it)
        self._members_of = members_of
        self._tu = text_units
        self._tu_csr = None
        self._states: list[_State] = []
        self._tu_kept: list[_State] = []  # the last sets whose text units were counted

    def _units_of(self, ents: np.ndarray) -> np.ndarray:
        """The text-unit codes of entity codes ``ents`` (with repeats)."""
        if self._tu_csr is None:
            owner = np.asarray(self._tu.owner, dtype=np.int64)
            items = np.asarray(self._tu.items)
            if len(owner) > 1 and not (owner[1:] >= owner[:-1]).all():  # coverage.py makes them grouped
                order = np.argsort(owner, kind="stable")
                owner, items = owner[order], items[order]
            self._tu_csr = (items, np.searchsorted(owner, np.arange(self.n_entities + 1)))
        items, start = self._tu_csr
        ents = ents[ents < self.n_entities]
        lens = start[ents + 1] - start[ents]
        total = int(lens.sum())
        if not total:
            return items[:0]
        pos = np.repeat(start[ents] - (np.cumsum(lens) - lens), lens) + np.arange(total, dtype=np.int64)
        return items[pos]

    def covered(self, ccodes: np.ndarray) -> _State:
        """The state of the distinct non-negative community codes ``ccodes`` (newest first after)."""
        cm = np.zeros(self.n_comm, dtype=bool)
        cm[ccodes[ccodes >= 0]] = True
        ncodes = int(np.count_nonzero(cm))
        best = None
        for i, st in enumerate(self._states):
            if st.ncodes == ncodes and np.array_equal(st.cmask, cm):
                self._states.insert(0, self._states.pop(i))
                return st
            if st.ncodes < ncodes and (best is None or st.ncodes > best.ncodes) and not np.any(st.cmask > cm):
                best = st
        if best is None:
            best = _State(self.n_comm, self.n_entities)
        else:
            self._states.remove(best)
        new = np.flatnonzero(cm > best.cmask)
        ents = self._members_of(new)
        if len(ents):
            if self._missing:
                ents = np.where(ents < 0, ents + len(best.emask), ents)  # a missing key (-1): the last slot
            if best.count:  # (an empty set: every entity is new)
                ents = ents[~best.emask[ents]]
            if len(ents):
                best.emask[ents] = True
                best.count = int(np.count_nonzero(best.emask))
                if best.tu_hit is not None and len(best.tu_hit):
                    best.tu_hit[self._units_of(ents)] = True
                    best.tu_count = int(np.count_nonzero(best.tu_hit))
        best.cmask, best.ncodes = cm, ncodes
        self._states = [best] + self._states[: self.KEEP - 1]
        return best

    def last(self) -> _State:
        """The state :meth:`covered` returned last."""
        return self._states[0]

    def last_text_units(self) -> int | None:
        """Distinct text units of the entities of :meth:`last` (None: not counted). A set is
        counted once, then grown with it; its first count starts from the largest recently
        counted entity set it contains (the entities of graphrag < 2.0's selection at N hold
        those at N - 1 even where its communities do not), else from nothing."""
        tu = self._tu
        if tu is None:
            return None
        st = self._states[0]
        if st.tu_hit is not None:
            return st.tu_count
        if not len(tu.items) or not self.n_entities:
            st.tu_hit, st.tu_count = np.zeros(0, dtype=bool), 0
            return 0
        base = None
        for other in self._tu_kept:
            if (
                other is st
                or other.tu_hit is None
                or len(other.tu_hit) != tu.n_units
                or other.count > st.count
            ):
                continue
            if (base is None or other.count > base.count) and not np.any(other.emask > st.emask):
                base = other
        if base is not None:
            st.tu_hit = base.tu_hit.copy()
            st.tu_hit[self._units_of(np.flatnonzero(st.emask > base.emask))] = True
        else:
            st.tu_hit = np.zeros(tu.n_units, dtype=bool)
            if 4 * st.count < self.n_entities:  # a few entities: their own lists
                st.tu_hit[self._units_of(np.flatnonzero(st.emask))] = True
            else:
                st.tu_hit[tu.items[st.emask[tu.owner]]] = True  # as coverage.TextUnitCover.count
        st.tu_count = int(np.count_nonzero(st.tu_hit))
        self._tu_kept = [st] + [o for o in self._tu_kept if o is not st][: self.KEEP_COUNTED - 1]
        return st.tu_count


class AncestorFlags:
    """Which codes of a set are a proper ancestor of another code of the set, one flag per
    community, for an :class:`~graphrag_audit.model.forest.Ancestry` without a cycle (``usable``
    is False otherwise: ask ``Ancestry.ancestors_in``). O(communities) per set, no sort: on a
    tree of at most ``LAYERED`` levels by one pass up its depth layers, deeper trees through
    the preorder (the next selected node in preorder is inside ``x``'s subtree iff ``x`` holds
    a selected node)."""

    LAYERED = 64

    def __init__(self, ancestry):
        self.ancestry = ancestry
        self.usable = ancestry.cycle_label is None
        self._layers = self._pre = None

    def flags(self, ccodes: np.ndarray) -> np.ndarray:
        a = self.ancestry
        n = a.n
        ccodes = ccodes[ccodes >= 0]
        flags = np.zeros(n, dtype=bool)
        if a.max_depth <= self.LAYERED:
            if self._layers is None:
                order = np.argsort(a.depth, kind="stable")
                bounds = np.searchsorted(a.depth[order], np.arange(a.max_depth + 2)).tolist()
                self._layers = [order[bounds[d] : bounds[d + 1]] for d in range(a.max_depth + 1)]
            sel = np.zeros(n, dtype=bool)
            sel[ccodes] = True
            below = np.zeros(n, dtype=bool)  # a selected node strictly below
            parent = a.cut
            for layer in self._layers[:0:-1]:  # deepest first; the roots (depth 0) have no parent
                up = layer[sel[layer] | below[layer]]
                below[parent[up]] = True
            np.logical_and(sel, below, out=flags)
            return flags
        tin, tout = a.intervals()
        if self._pre is None:
            self._pre = np.empty(n, dtype=np.int64)
            self._pre[tin] = np.arange(n, dtype=np.int64)
        at = np.zeros(n, dtype=bool)
        at[tin[ccodes]] = True
        pos = np.flatnonzero(at)
        s = self._pre[pos]
        if len(s) > 1:
            flags[s[:-1][pos[1:] <= tout[s[:-1]]]] = True
        return flags
