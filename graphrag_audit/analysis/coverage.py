"""Coverage: how much of the clustered graph the reports a community_level selects cover.

An entity is *clustered* when some community of the tree holds it (a membership row); the
reports of a selection cover the distinct entities of their communities
(``SelectionStats.entities_covered``, counted by ``levels.TreeIndex.covered``). When the entities
carry ``text_unit_ids``, the text units of those entities are covered too: a text unit is
*clustered* when a clustered entity names it. :class:`TextUnitCover` counts them for an entity
set in one vectorised pass (O(the clustered entities' text-unit lists)), so every selection of
every level costs the same small amount, also at a million entities.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from graphrag_audit.model.index import IndexModel


class TextUnitCover:
    """The text units of each clustered entity (by the membership entity codes of
    ``levels.TreeIndex``: ``owner`` code -> ``items`` text-unit code, one pair per list item)."""

    def __init__(self, owner: np.ndarray, items: np.ndarray, n_units: int, n_entities: int):
        self.owner = owner
        self.items = items
        self.n_units = n_units
        self.n_entities = n_entities

    def count(self, entity_mask: np.ndarray) -> int:
        """Distinct text units of the entities where ``entity_mask`` (one flag per membership
        entity code) is true."""
        if not len(self.items) or not len(entity_mask):
            return 0
        hit = np.zeros(self.n_units, dtype=bool)
        hit[self.items[entity_mask[self.owner]]] = True
        return int(hit.sum())

    def total(self) -> int:
        """Distinct text units of every clustered entity."""
        return self.count(np.ones(self.n_entities, dtype=bool))


def text_unit_cover(
    model: IndexModel, member_rows: np.ndarray | None, member_codes: np.ndarray, n_codes: int
) -> TextUnitCover | None:
    """:class:`TextUnitCover` of the membership entity codes ``member_codes`` (of the membership
    rows ``member_rows``, None: all of them), or None when the entities carry no text units.
    An entity key that several entity rows share takes the first row's text units (graphrag
    keeps an entity's first row)."""
    from graphrag_audit.analysis.costs import entity_text_units_absent
    from graphrag_audit.graphrag.context import text_unit_codes

    e = model.entities
    if e is None or entity_text_units_absent(model):
        return None
    lens, tu = text_unit_codes(e["text_unit_ids"])
    match = model.key_match
    if match is not None and len(match.member_row) == len(model.members):
        ent_row = np.asarray(match.member_row, dtype=np.int64)
    else:
        key = e["id"] if model.member_key == "id" else e["title"]
        first = ~key.duplicated(keep="first").to_numpy()
        rows = np.flatnonzero(first)
        idx = pd.Index(key[first].to_numpy(dtype=object))
        got = idx.get_indexer(model.members["entity"].to_numpy(dtype=object))
        ent_row = np.where(got >= 0, rows[np.maximum(got, 0)], -1)
    if member_rows is not None:
        ent_row = ent_row[member_rows]
    codes = np.asarray(member_codes, dtype=np.int64)
    # the entity row of each code: that of its first membership row
    first_pos = np.full(n_codes, -1, dtype=np.int64)
    valid = np.flatnonzero(codes >= 0)[::-1]
    first_pos[codes[valid]] = valid
    code_row = np.where(first_pos >= 0, ent_row[np.maximum(first_pos, 0)], -1) if len(ent_row) else first_pos
    has = np.flatnonzero(code_row >= 0)
    rows = code_row[has]
    starts = np.concatenate(([0], np.cumsum(lens)))[:-1] if len(lens) else lens
    n = lens[rows] if len(rows) else np.zeros(0, dtype=np.int64)
    total = int(n.sum())
    pos = np.repeat(starts[rows] - (np.cumsum(n) - n), n) + np.arange(total, dtype=np.int64)
    items = tu[pos] if total else np.zeros(0, dtype=np.int64)
    owner = np.repeat(has, n)
    n_units = int(tu.max()) + 1 if len(tu) else 0
    return TextUnitCover(owner, items, n_units, n_codes)
