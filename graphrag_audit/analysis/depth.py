"""Branch-depth asymmetry: how unevenly the tree's branches reach down.

Definitions (docs/reading-the-table.md explains them with real output):

* depth reached by a root = (deepest level in its subtree) − (root level).
* an entity's *finest level* = the level of the deepest community that contains it.
* at community_level N an entity is *served at N* when its finest level >= N (a level-N
  community holds it) and *stuck* when its finest level < N (its finest available report is
  coarser than asked). Roots likewise reach N or not.
* **depth asymmetry** = mean over clustered entities of (D − finest level) / D, with D the
  deepest level of the index (0 when D = 0). 0 means every entity can be refined down to the
  deepest level; values near 1 mean nearly all entities stop at level 0 while a few branches go
  deep. It is entity-weighted because global search answers about entities, and normalised so
  indexes of different depth compare.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from graphrag_audit.analysis.levels import TreeIndex
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import DepthAnalysis, LevelDepth, RootDepth  # noqa: F401 (DepthAnalysis: re-export)


def analyse_depth(model: IndexModel, ti: TreeIndex, v1_spreads: dict | None = None) -> DepthAnalysis:
    n = len(ti.index)
    max_level = int(ti.level.max()) if n else -1
    root = ti.forest.root_code  # O(n log depth), not one pass per level of depth
    is_root = ti.parent < 0
    # deepest level per root subtree
    deepest = np.full(n, -1, dtype=np.int64)
    np.maximum.at(deepest, root, ti.level)
    desc = np.bincount(root, minlength=n) - 1 if n else np.array([], dtype=np.int64)
    leaf = ti.children_count == 0

    # entity finest level and root
    ent_finest = np.full(ti.n_member_entities, -1, dtype=np.int64)
    np.maximum.at(ent_finest, ti.mem_ecode, ti.level[ti.mem_ccode])
    ent_root = np.full(ti.n_member_entities, -1, dtype=np.int64)
    # the membership rows of a community at its root's level: one flag per community, then one
    # gather of the flags (not the rows' levels and their roots' levels: two int64 gathers)
    top_rows = np.flatnonzero((ti.level == ti.level[root])[ti.mem_ccode])
    ent_root[ti.mem_ecode[top_rows]] = root[ti.mem_ccode[top_rows]]

    root_codes = np.flatnonzero(is_root)
    ent_per_root = np.bincount(ent_root[ent_root >= 0], minlength=n)
    per_root: dict[int, dict[str, int]] = {}  # leaves per (root, level)
    for r, lv, cnt in zip(*_pair_counts(root[leaf], ti.level[leaf])):
        per_root.setdefault(r, {})[str(lv)] = cnt
    columns = (
        np.asarray(ti.index)[root_codes].astype(np.int64),
        ti.level[root_codes],
        deepest[root_codes],
        deepest[root_codes] - ti.level[root_codes],
        desc[root_codes],
        ent_per_root[root_codes],
    )
    roots_out = [
        RootDepth(c, lv, dl, dr, ds, en, MappingProxyType(per_root.get(rc, {})))
        for rc, c, lv, dl, dr, ds, en in zip(root_codes.tolist(), *(col.tolist() for col in columns))
    ]
    roots_out.sort(key=lambda r: (-r.depth_reached, -r.entities, r.community))
    hist = {str(k): cnt for k, cnt in enumerate(np.bincount(columns[3]).tolist())} if len(root_codes) else {}

    # per N, by counting once: roots whose subtree reaches N, entities whose finest level >= N
    clustered = ent_finest >= 0
    top = max_level + 1
    reach_at = _at_least(deepest[root_codes], top)
    served_at = _at_least(ent_finest[clustered], top)
    n_roots, n_clustered = int(len(root_codes)), int(clustered.sum())
    per_level = [
        LevelDepth(
            community_level=lv,
            roots_reaching=int(reach_at[lv]),
            roots_stuck=n_roots - int(reach_at[lv]),
            roots_total=n_roots,
            entities_served=int(served_at[lv]),
            entities_stuck=n_clustered - int(served_at[lv]),
            entities_total=n_clustered,
            entities_per_report=v1_spreads.get(lv) if v1_spreads else None,
        )
        for lv in range(max_level + 1)
    ]

    asym = 0.0
    if max_level > 0 and clustered.any():
        asym = round(float(np.mean((max_level - ent_finest[clustered]) / max_level)), 4)

    single = np.sort(ti.index.to_numpy()[ti.children_count == 1]).astype(np.int64).tolist()
    dup_levels = []
    for lv in range(1, max_level + 1):
        at, above = np.flatnonzero(ti.level == lv), np.flatnonzero(ti.level == lv - 1)
        if (
            len(at)
            and len(at) == len(above)
            and (ti.children_count[above] == 1).all()
            and (ti.n_entities[at] == ti.n_entities[ti.parent[at]]).all()
        ):
            dup_levels.append(lv)
    return DepthAnalysis(
        roots=tuple(roots_out),
        histogram=hist,
        per_level=tuple(per_level),
        asymmetry=asym,
        single_child=tuple(single),
        duplicate_levels=tuple(dup_levels),
        max_level=max_level,
    )


def _at_least(values: np.ndarray, top: int) -> np.ndarray:
    """``out[k]`` = how many ``values`` are >= k, for k in 0..top-1 (values >= 0)."""
    counts = np.bincount(np.minimum(values, top), minlength=top + 1)
    return np.cumsum(counts[::-1])[::-1][:top]


def _pair_counts(a: np.ndarray, b: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """The distinct (a, b) pairs in order with their counts, as three lists (``a`` non-negative)."""
    if not len(a):
        return [], [], []
    b = b.astype(np.int64, copy=False)
    lo = int(b.min())
    span = int(b.max()) - lo + 1
    pairs, counts = np.unique(a.astype(np.int64) * span + (b - lo), return_counts=True)
    return (pairs // span).tolist(), (pairs % span + lo).tolist(), counts.tolist()
