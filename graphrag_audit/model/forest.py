"""The community forest (:class:`CommunityForest`, the one tree every analysis reads) and walks over a
parent-pointer array (-1 = no parent) in O(n log n) or O(n) whatever the depth, cycles included (hostile
indexes hold chains of 200,000 communities: one parent step per pass would be O(n x depth)).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from graphrag_audit.model.keys import sorted_unique


def power(step: np.ndarray, k: int) -> np.ndarray:
    """``step`` applied ``k`` times by repeated squaring: O(n log k), O(n log depth) once every node has
    reached a fixed point (a root)."""
    step = np.asanyarray(step, dtype=np.int64)
    result = np.arange(len(step), dtype=np.int64)
    base, exp = step, 1  # base = step^exp
    while k:
        if exp <= k and np.array_equal(step[base], base):
            return base  # every base[i] is a fixed point: step^m = base for every m >= exp
        if k & 1:
            result = base[result]
        k >>= 1
        if k:
            base = base[base]
            exp *= 2
    return result


def root_of(parent: np.ndarray) -> np.ndarray:
    """Each node after ``n`` parent steps (roots stay): its root, or where ``n`` steps end on a loop."""
    parent = np.asarray(parent, dtype=np.int64)
    n = len(parent)
    codes = np.arange(n, dtype=np.int64)
    return power(np.where(parent >= 0, parent, codes), n)


class Ancestry:
    """Proper ancestors (one or more parent steps) in a parent-pointer forest; a node on a cycle is a proper
    ancestor of itself and of everything below the cycle."""

    def __init__(self, parent: np.ndarray):
        parent = np.asarray(parent, dtype=np.int64)
        self.parent = parent
        n = self.n = len(parent)
        codes = np.arange(n, dtype=np.int64)
        # n steps towards a sentinel n below every root: a node still short of it is stuck in a loop
        to_sentinel = np.append(np.where(parent >= 0, parent, n), n)
        landed = power(to_sentinel, n)[:n]
        self.looping = landed < n  # on a cycle, or below one
        self.on_cycle = np.zeros(n, dtype=bool)
        self.cycle_label = None
        cut = parent
        if self.looping.any():
            # n steps from any looping node end on its cycle, and every node of a cycle is
            # reached so (n steps along a cycle permute it)
            self.on_cycle[landed[self.looping]] = True
            label = np.where(self.on_cycle, codes, n)  # the least code of each cycle, by doubling
            p = np.where(self.on_cycle, parent, codes)
            for _ in range(max(1, int(n).bit_length())):
                label = np.minimum(label, label[p])
                p = p[p]
            self.cycle_label = np.full(n, -1, dtype=np.int64)
            self.cycle_label[self.looping] = label[landed[self.looping]]
            cut = np.where(self.on_cycle, -1, parent)  # cycles cut open: the rest is a forest
        self.cut = cut

    def ancestors_in(self, codes: np.ndarray) -> np.ndarray:
        """The distinct codes among ``codes`` (>= 0) that are a proper ancestor of one of them, sorted."""
        codes = np.asarray(codes, dtype=np.int64)
        sel = sorted_unique(codes[codes >= 0])
        if len(sel) < 1:
            return sel
        tin, tout = self.intervals
        t = tin[sel]
        order = np.argsort(t, kind="stable")
        s, ts = sel[order], t[order]
        # in preorder the next selected node is inside x's subtree iff x holds any selected node
        found = [s[:-1][ts[1:] <= tout[s[:-1]]]]
        if self.cycle_label is not None:
            loop_sel = sel[self.looping[sel]]
            if len(loop_sel):
                hit = sorted_unique(self.cycle_label[loop_sel])
                cyc = sel[self.on_cycle[sel]]
                found.append(cyc[np.isin(self.cycle_label[cyc], hit)])
        return sorted_unique(np.concatenate(found))

    @cached_property
    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """(tin, tout) of the forest with its cycles cut open."""
        return preorder_intervals(self.cut)


def preorder_intervals(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tin, tout): each node's position in a preorder of the forest ``parent`` (no cycles) and the last
    position of its subtree: ``y`` is below ``x`` iff ``tin[x] <= tin[y] <= tout[x]``."""
    n = len(parent)
    has = parent >= 0
    kids = np.flatnonzero(has)
    by_parent = kids[np.argsort(parent[has], kind="stable")]
    start = np.searchsorted(np.sort(parent[has]), np.arange(n + 1)).tolist()
    child = by_parent.tolist()
    pre: list[int] = []
    stack = np.flatnonzero(~has)[::-1].tolist()
    push, pop, visit = stack.extend, stack.pop, pre.append
    while stack:
        x = pop()
        visit(x)
        push(child[start[x] : start[x + 1]])
    tin = np.empty(n, dtype=np.int64)
    tin[pre] = np.arange(n, dtype=np.int64)
    par = parent.tolist()
    size = [1] * n
    for x in reversed(pre):  # children come after their parent in preorder
        if par[x] >= 0:
            size[par[x]] += size[x]
    return tin, tin + np.asarray(size, dtype=np.int64) - 1


def peel_sources(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Nodes ``0..n-1`` left after Kahn's peeling of the graph ``src -> dst``: those on or below a cycle."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    indeg = np.bincount(dst, minlength=n).tolist()
    by_src = np.argsort(src, kind="stable")
    start = np.searchsorted(src[by_src], np.arange(n + 1)).tolist()
    heads = dst[by_src].tolist()  # edge heads grouped by their source
    alive = [True] * n
    queue = [x for x in range(n) if indeg[x] == 0]
    for x in queue:  # (the queue grows while it is walked)
        alive[x] = False
        for h in heads[start[x] : start[x + 1]]:
            indeg[h] -= 1
            if indeg[h] == 0 and alive[h]:
                queue.append(h)
    return np.array(alive, dtype=bool)


def cycle_nodes(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Sorted codes of the nodes on a cycle of ``src -> dst`` (self-loops, larger strongly connected
    components), searched only among what :func:`peel_sources` leaves."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    on = np.zeros(n, dtype=bool)
    on[src[src == dst]] = True
    alive = peel_sources(n, src, dst)
    if alive.any():  # only on a hostile index: what is left holds every cycle
        import networkx as nx  # its strongly connected components need no recursion

        both = alive[src] & alive[dst] & (src != dst)
        graph = nx.DiGraph(zip(src[both].tolist(), dst[both].tolist()))
        for comp in nx.strongly_connected_components(graph):
            if len(comp) > 1:
                on[list(comp)] = True
    return np.flatnonzero(on)


@dataclass(frozen=True, eq=False)
class CommunityForest:
    """The community tree of one index (the rest derived on first use). ``nodes``: each community once, by
    first row (then those only an edge names). Edges: each parent link once, in the order given, so a
    community's first edge names its **first parent**, the one it hangs under (``graphrag update`` can give
    several). ``missing_parents``: {child: parent without a row}. ``shared``: a membership tree's entities
    behind each edge."""

    nodes: np.ndarray
    level: np.ndarray
    n_entities: np.ndarray
    edge_parents: np.ndarray
    edge_children: np.ndarray
    missing_parents: dict[int, int] = field(default_factory=dict)
    source: str = "parent"
    shared: np.ndarray | None = None

    @classmethod
    def from_parent_column(cls, communities: pd.DataFrame) -> CommunityForest:
        """The forest of the ``parent`` column (−1 = no parent)."""
        comm, nodes, level, n_ent = _nodes(communities)
        par = communities["parent"].to_numpy().astype(np.int64)
        linked = par >= 0
        known = linked & np.isin(par, comm)  # the parent has a row (is a node)
        u, v = par[known], comm[known]
        if len(u):  # distinct edges, first occurrence first
            once = ~pd.DataFrame({"u": u, "v": v}).duplicated().to_numpy()
            u, v = u[once], v[once]
        gone = linked & ~known
        missing = dict(zip(comm[gone].tolist(), par[gone].tolist()))  # later rows win
        return cls(nodes, level, n_ent, u, v, missing, "parent")

    @classmethod
    def from_membership(cls, communities: pd.DataFrame, members: pd.DataFrame) -> CommunityForest:
        """The forest of graphrag 0.x-0.9: an entity in P at level L and in C at L+1 makes P a parent of C."""
        _, nodes, level, n_ent = _nodes(communities)
        m = members[["entity", "community", "level"]]
        lower = m.assign(level=m["level"] - 1)
        pairs = m.merge(lower, on=["entity", "level"], suffixes=("_p", "_c"))
        pairs = pairs[pairs["community_p"] != pairs["community_c"]]
        counts = pairs.groupby(["community_p", "community_c"]).size()  # sorted by (parent, child)
        u = counts.index.get_level_values(0).to_numpy().astype(np.int64)
        v = counts.index.get_level_values(1).to_numpy().astype(np.int64)
        w = counts.to_numpy().astype(np.int64)
        extra = pd.Index(np.column_stack([u, v]).ravel()).drop_duplicates()
        extra = extra[~extra.isin(nodes)].to_numpy().astype(np.int64)  # named only by an edge
        if len(extra):
            nodes = np.concatenate([nodes, extra])
            level = np.concatenate([level, np.full(len(extra), -1, dtype=np.int64)])
            n_ent = np.concatenate([n_ent, np.zeros(len(extra), dtype=np.int64)])
        order = np.argsort(pd.Index(nodes).get_indexer(v), kind="stable")  # child by child
        return cls(nodes, level, n_ent, u[order], v[order], {}, "membership", w[order])

    def __len__(self) -> int:
        return len(self.nodes)

    @cached_property
    def index(self) -> pd.Index:
        """Community number -> code (position in ``nodes``)."""
        return pd.Index(self.nodes)

    @cached_property
    def first_parent(self) -> np.ndarray:
        """Code of each community's first parent, -1 for none."""
        parent = np.full(len(self.nodes), -1, dtype=np.int64)
        once = ~pd.Index(self.edge_children).duplicated()  # the first edge into each child
        parent[self.index.get_indexer(self.edge_children[once])] = self.index.get_indexer(
            self.edge_parents[once]
        )
        return parent

    @cached_property
    def other_parents(self) -> dict[int, tuple[int, ...]]:
        """{community: its parents after the first, in edge order} for communities with several."""
        kids = self.edge_children
        later = pd.Index(kids).duplicated()
        out: dict[int, list[int]] = {}
        for c, p in zip(kids[later].tolist(), self.edge_parents[later].tolist()):
            out.setdefault(c, []).append(p)
        return {c: tuple(ps) for c, ps in out.items()}

    @cached_property
    def multi_parent(self) -> list[int]:
        """Communities with several parents, ascending."""
        heads, n_in = np.unique(self.edge_children, return_counts=True)
        return heads[n_in > 1].tolist()

    @cached_property
    def n_children(self) -> np.ndarray:
        """Children of each code under the first-parent rule."""
        p = self.first_parent
        return np.bincount(p[p >= 0], minlength=len(self.nodes))

    @cached_property
    def children(self) -> dict[int, list[int]]:
        """{community: the communities whose first parent it is, ascending} for every node."""
        kids: dict[int, list[int]] = {n: [] for n in self.nodes.tolist()}
        p = self.first_parent
        has = np.flatnonzero(p >= 0)
        for k, par in zip(self.nodes[has].tolist(), self.nodes[p[has]].tolist()):
            kids[par].append(k)
        for v in kids.values():
            v.sort()
        return kids

    @cached_property
    def roots(self) -> list[int]:
        """Communities without a parent, ascending."""
        return sorted(self.nodes[self.first_parent < 0].tolist())

    @cached_property
    def cycle_nodes(self) -> list[int]:
        """Communities on a parent cycle (self-loops included), ascending."""
        src, dst = self.index.get_indexer(self.edge_parents), self.index.get_indexer(self.edge_children)
        return sorted(self.nodes[cycle_nodes(len(self.nodes), src, dst)].tolist())

    @cached_property
    def ancestry(self) -> Ancestry:
        return Ancestry(self.first_parent)

    @cached_property
    def root_code(self) -> np.ndarray:
        """Each code's root (for a chain that loops: where ``n`` parent steps end)."""
        return root_of(self.first_parent)


def _nodes(communities: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(every row's community, each distinct community once, its first row's level and n_entities)."""
    comm = communities["community"].to_numpy().astype(np.int64)
    first = ~pd.Index(comm).duplicated()
    level = communities["level"].to_numpy()[first].astype(np.int64)
    if "n_entities" in communities:
        n_ent = communities["n_entities"].to_numpy()[first].astype(np.int64)
    else:
        n_ent = np.zeros(len(level), dtype=np.int64)
    return comm, comm[first], level, n_ent
