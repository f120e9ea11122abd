"""The community tree as a view (computed by ``analysis/treeview.py``, read by the tree renderers): one
node per community with what a community_level N sends, and the rows of a line-budgeted layout."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

SENT_BOTH, SENT_V2_ONLY, SENT_V1_ONLY, SENT_NEITHER = "both", "v2-only", "v1-only", "neither"
SENT_VALUES = (SENT_BOTH, SENT_V2_ONLY, SENT_V1_ONLY, SENT_NEITHER)
#: ``tree -f json``'s contract: graphrag_audit/schema/tree.schema.json, docs/json-schema.md
TREE_SCHEMA_VERSION = "1.1"  # 1.1: sent_status (graphrag.compat's status per behaviour)


@dataclass(frozen=True)
class CommunityNode:
    community: int
    level: int
    parent: int  # the parent it hangs under in the view; −1 for a root
    children: tuple[int, ...]  # ascending community numbers
    other_parents: tuple[int, ...]
    entities: int
    title: str  # report title, escaped (sanitise.common.plain) and truncated; "" without a report
    reports: int  # report rows of this community (0 = no report)
    sent: str | None  # one of SENT_VALUES ("neither" also without a report); None without a community_level
    size: int  # communities in the subtree, itself included
    leaves: int  # leaves in the subtree, itself included

    @property
    def leaf(self) -> bool:
        return not self.children

    @property
    def has_report(self) -> bool:
        return self.reports > 0


@dataclass(frozen=True)
class OutsideReport:
    """A report whose community is not in the tree (e.g. graphrag 0.5's community −1)."""

    community: int
    level: int
    title: str
    sent: str | None


@dataclass(frozen=True)
class ForestView:
    """Every community once, under its first parent; communities whose parent chain loops become
    extra roots (``cycle_roots``)."""

    nodes: dict[int, CommunityNode]  # in tree order: preorder from ``roots``, children ascending
    roots: tuple[int, ...]
    community_level: int | None  # the N asked for
    selection_level: int | None  # the N whose selections were used (N capped at the deepest level)
    sent_reports: dict[str, int]  # {"v2": reports graphrag >= 2.0 sends, "v1": ... < 2.0}
    outside_reports: tuple[OutsideReport, ...]
    has_reports_table: bool
    cycle_roots: tuple[int, ...] = ()
    max_level: int = -1
    outcomes: dict = field(default_factory=dict)  # with N: {"v2"/"v1": graphrag.compat's Outcome}

    def status(self, behaviour: str) -> str | None:
        o = self.outcomes.get(behaviour)
        return None if o is None else o.status

    def counts(self) -> dict[str, int]:  # communities with a report per ``sent`` mark
        marks = Counter(n.sent for n in self.nodes.values() if n.sent is not None and n.has_report)
        return {s: marks[s] for s in SENT_VALUES}

    def path_to(self, community: int) -> list[int]:  # from a root down to ``community``
        path = [community]
        while (p := self.nodes[path[-1]].parent) >= 0 and p not in path and p in self.nodes:
            path.append(p)
        return path[::-1]


@dataclass(frozen=True)
class Row:
    """One line of the view: kind ``community`` (shown, with ``hidden_children`` and ``hidden_below``
    not shown) or ``more`` (the hidden children of ``community``, −1: hidden roots, summarised).
    ``guides[i]``: the ancestor at depth i has siblings still to come (draw "│")."""

    kind: str
    depth: int
    community: int
    last: bool
    guides: tuple[bool, ...]
    hidden_children: int = 0
    hidden_below: int = 0
    more: int = 0
    more_communities: int = 0
    more_leaves: int = 0


@dataclass(frozen=True)
class TreeView:
    forest: ForestView
    rows: list[Row]
    tops: tuple[int, ...]  # the view's top communities (the roots, or [root])
    root: int | None
    depth: int | None
    max_lines: int | None
    shown: frozenset = field(default_factory=frozenset)

    @property
    def in_scope(self) -> int:
        return sum(self.forest.nodes[t].size for t in self.tops)

    @property
    def hidden(self) -> int:
        return self.in_scope - len(self.shown)

    def breadcrumb(self) -> list[int]:  # ancestors of ``root``, top first
        return self.forest.path_to(self.root)[:-1] if self.root is not None else []
