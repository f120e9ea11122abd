"""The community forest as a view (``results/tree.py``): every community once under its first parent
(parent loops become extra roots), what a community_level N sends, and a line-budgeted layout that
reveals the largest hidden subtrees first."""

from __future__ import annotations

import heapq
from collections import Counter

from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.tree import SENT_VALUES, CommunityNode, ForestView, OutsideReport, Row, TreeView
from graphrag_audit.sanitise.common import plain

TITLE_CHARS = 120


class UnknownCommunity(ValueError):
    """``root`` names a community that is not in the tree."""


#: the sent mark of (sent by graphrag >= 2.0, sent by < 2.0): both, v2-only, v1-only, neither
_SENT = dict(zip([(True, True), (True, False), (False, True), (False, False)], SENT_VALUES))


def build_forest(
    model: IndexModel,
    community_level: int | None = None,
    selections: dict | None = None,
    title_chars: int = TITLE_CHARS,
) -> ForestView:
    """The view of ``model.forest``; with ``community_level`` the sent marks of that N (capped at the
    deepest level). ``selections``: ``selection.select_all(model)``, computed when not given."""
    tree = model.forest
    rep = model.reports
    rep_comm = rep["community"].to_numpy()
    rep_level = rep["level"].to_numpy()
    rep_title = rep["title"].to_numpy(dtype=object)

    in_v2: set[int] = set()
    in_v1: set[int] = set()
    sel_level = None
    sent_reports = {"v2": 0, "v1": 0}
    outcomes: dict = {}
    if community_level is not None:
        from graphrag_audit.graphrag.compat import behaviour_outcomes
        from graphrag_audit.graphrag.selection import select_all

        outcomes = {b: o for b, o in behaviour_outcomes(model).items() if b in ("v2", "v1")}
        selections = select_all(model) if selections is None else selections
        numeric = [n for n in selections if n is not None]
        sel_level = min(community_level, max(numeric)) if numeric else None
        if sel_level is not None:
            rows = {b: selections[sel_level][b].rows for b in ("v2", "v1")}
            in_v2, in_v1 = ({int(x) for x in rep_comm[rows[b]]} for b in ("v2", "v1"))
            sent_reports = {b: int(len(r)) for b, r in rows.items()}

    comm_list = rep_comm.tolist()
    first_row = {int(c): i for i, c in reversed(list(enumerate(comm_list)))}
    n_reports = Counter(int(c) for c in comm_list)
    titles = {c: plain(rep_title[i], title_chars) for c, i in first_row.items()}

    kids, others, roots = tree.children, tree.other_parents, tree.roots
    # reach everything from the roots, in preorder; a loop in the parent chain leaves nodes unreached:
    # the least of them becomes an extra root (its loop-closing edge dropped), and so on
    order: list[int] = []
    seen: set[int] = set()
    cycle_roots = []
    for i, start in enumerate([*roots, *sorted(kids)]):
        if start in seen:
            continue
        if i >= len(roots):
            cycle_roots.append(start)
        stack = [start]
        while stack:  # (each community is its first parent's child only: pushed once)
            order.append(n := stack.pop())
            seen.add(n)
            stack.extend(reversed([k for k in kids[n] if k not in seen]))
    extra = set(cycle_roots)
    view_kids = {n: [k for k in kids[n] if k not in extra] for n in kids}
    view_parent = {k: n for n, ks in view_kids.items() for k in ks}
    size = dict.fromkeys(kids, 1)
    leaves = {n: int(not view_kids[n]) for n in kids}
    for n in reversed(order):  # children before parents
        if (p := view_parent.get(n)) is not None:
            size[p] += size[n]
            leaves[p] += leaves[n]

    nodes: dict[int, CommunityNode] = {}
    code = dict(zip(tree.nodes.tolist(), range(len(tree))))
    level, n_ent = tree.level.tolist(), tree.n_entities.tolist()
    for n in order:
        i = code[n]
        nodes[n] = CommunityNode(
            community=n,
            level=level[i],
            parent=view_parent.get(n, -1),
            children=tuple(view_kids[n]),
            other_parents=others.get(n, ()),
            entities=n_ent[i],
            title=titles.get(n, ""),
            reports=n_reports.get(n, 0),
            sent=None if community_level is None else _SENT[n in in_v2, n in in_v1],
            size=size[n],
            leaves=leaves[n],
        )

    outside = [
        OutsideReport(
            c,
            int(rep_level[first_row[c]]),
            titles[c],
            None if community_level is None else _SENT[c in in_v2, c in in_v1],
        )
        for c in sorted(first_row)
        if c not in nodes
    ]
    return ForestView(
        nodes=nodes,
        roots=tuple(roots) + tuple(cycle_roots),
        community_level=community_level,
        selection_level=sel_level,
        sent_reports=sent_reports,
        outside_reports=tuple(outside),
        has_reports_table=bool(model.has_reports_table),
        cycle_roots=tuple(cycle_roots),
        max_level=max((nd.level for nd in nodes.values()), default=-1),
        outcomes=outcomes,
    )


def layout(
    forest: ForestView, *, root: int | None = None, depth: int | None = None, max_lines: int | None = 100
) -> TreeView:
    """Rows to draw: every top community (roots, or ``root``), then the largest hidden subtrees
    first while the row budget ``max_lines`` lasts (None or 0 = no limit); ``depth`` = how many
    levels below the top communities may be shown (None = all)."""
    nodes = forest.nodes
    if root is not None and root not in nodes:
        raise UnknownCommunity(f"community {root} is not in the tree")
    tops = [root] if root is not None else list(forest.roots)
    budget = max_lines if max_lines else None
    rel: dict[int, int] = {}

    def allowed_children(n: int) -> tuple[int, ...]:
        if depth is not None and rel[n] >= depth:
            return ()
        return nodes[n].children

    def size_key(n: int):
        nd = nodes[n]
        return (-nd.size, -nd.entities, nd.level, n)

    keep = (
        set(tops)
        if budget is None or len(tops) <= budget
        else set(sorted(tops, key=size_key)[: max(budget - 1, 1)])
    )
    tops_shown = [t for t in tops if t in keep]
    hidden_tops = [t for t in tops if t not in keep]
    used = len(tops_shown) + int(bool(hidden_tops))
    shown = set(tops_shown)
    rel.update(dict.fromkeys(tops_shown, 0))
    shown_kids: dict[int, int] = {}
    heap: list = []

    # priority: subtree size, except that a community's largest child inherits its parent's
    # priority, so that revealing a community also reveals its heavy path down to a leaf
    prio: dict[int, tuple] = {t: size_key(t) for t in tops_shown}

    def push_children(n: int) -> None:
        kids = allowed_children(n)
        heavy = min(kids, key=size_key) if kids else None
        for k in kids:
            rel[k] = rel[n] + 1
            prio[k] = prio[n][:1] + size_key(k)[1:] if k == heavy else size_key(k)
            heapq.heappush(heap, (prio[k], k, n))

    for t in tops_shown:
        push_children(t)
    while heap:
        _, k, p = heapq.heappop(heap)
        n_allowed = len(allowed_children(p))
        had = shown_kids.get(p, 0)
        more_before = 0 < had < n_allowed
        more_after = had + 1 < n_allowed
        cost = 1 + int(more_after) - int(more_before)
        if budget is not None and used + cost > budget:
            continue
        used += cost
        shown.add(k)
        shown_kids[p] = had + 1
        push_children(k)
    # a "more" row standing for a single community shows that community instead
    for p in list(shown_kids):
        allowed = allowed_children(p)
        hidden = [k for k in allowed if k not in shown]
        if len(hidden) == 1:
            shown.add(hidden[0])
            shown_kids[p] += 1
            rel[hidden[0]] = rel[p] + 1

    rows: list[Row] = []
    shown_below = dict.fromkeys(shown, 0)  # shown communities under each shown one, deepest first
    for x in sorted(shown, key=rel.__getitem__, reverse=True):
        if nodes[x].parent in shown_below:
            shown_below[nodes[x].parent] += shown_below[x] + 1

    def more_row(parent: int, depth_: int, guides: tuple[bool, ...], hidden: list[int]) -> Row:
        return Row(
            "more",
            depth_,
            parent,
            True,
            guides,
            more=len(hidden),
            more_communities=sum(nodes[k].size for k in hidden),
            more_leaves=sum(nodes[k].leaves for k in hidden),
        )

    # depth-first, children in ascending community order; a parent whose children are shown
    # only in part gets a "more" row as its last child
    stack: list = [(t, 0, i == len(tops_shown) - 1 and not hidden_tops, ()) for i, t in enumerate(tops_shown)]
    stack.reverse()
    while stack:
        item = stack.pop()
        if isinstance(item, Row):
            rows.append(item)
            continue
        x, dd, lst, gd = item
        nd = nodes[x]
        kids_shown = [k for k in nd.children if k in shown]
        hidden_kids = [k for k in nd.children if k not in shown]
        rows.append(
            Row(
                "community",
                dd,
                x,
                lst,
                gd,
                hidden_children=len(hidden_kids),
                hidden_below=nd.size - 1 - shown_below[x],
            )
        )
        child_guides = gd + (not lst,) if dd > 0 else gd
        has_more = bool(kids_shown and hidden_kids)
        last = len(kids_shown) - 1
        pending: list = [
            (k, dd + 1, i == last and not has_more, child_guides) for i, k in enumerate(kids_shown)
        ]
        if has_more:
            pending.append(more_row(x, dd + 1, child_guides, hidden_kids))
        stack.extend(reversed(pending))
    if hidden_tops:
        rows.append(more_row(-1, 0, (), hidden_tops))
    return TreeView(
        forest=forest,
        rows=rows,
        tops=tuple(tops),
        root=root,
        depth=depth,
        max_lines=budget,
        shown=frozenset(shown),
    )
