"""The result of ``graphrag-audit diff OLD NEW`` and the figures ``levels --baseline`` reads (built by
``analysis.diff``; JSON in graphrag_audit/schema/diff.schema.json)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graphrag_audit.findings import SEVERITY_RANK, Finding
from graphrag_audit.results.audit import EXACT, CommunityIds, IndexInfo, fields_dict, frozen_map

#: 1.1: limits.include_hypothetical, selections[].hypothetical, hypothetical_changes
DIFF_SCHEMA_VERSION = "1.1"

#: the behaviours a diff compares: graphrag >= 2.0's and < 2.0's selections (as ``levels`` computes them)
DIFF_BEHAVIOURS = ("v2", "v1")


def exact_on_both(old_status: str | None, new_status: str | None) -> bool:
    """A behaviour is judged only when its status is ``exact`` on both sides; a side without one (a
    schema 1.0 baseline) takes the other's, and with none at all it is judged."""
    known = [s for s in (old_status, new_status) if s is not None]
    return all(s == EXACT for s in known)


#: how communities were matched between the two indexes
BY_ID = "community_id"
BY_MEMBERS = "member_entities"


@dataclass(frozen=True)
class SideStats:
    """One behaviour's selection at one community_level in one index (tokens, map calls: None without costs)."""

    reports: int
    tokens: int | None
    map_calls: int | None
    entities_covered: int
    clustered_entities: int
    status: str | None = None  # the selection's graphrag status (results.audit.Outcome.status)

    @property
    def coverage(self) -> float | None:
        return self.entities_covered / self.clustered_entities if self.clustered_entities else None

    def to_dict(self) -> dict:
        return fields_dict(self, skip=("status",)) | {"coverage": self.coverage, "status": self.status}


@dataclass(frozen=True)
class SelectionDiff:
    """One behaviour at one community_level, before and after (None: no such level in that audit).
    ``added``/``changed``: NEW's numbers sent now and not before / in both and changed; ``removed``:
    OLD's numbers sent before and not now."""

    community_level: int | None
    behaviour: str
    old: SideStats | None
    new: SideStats | None
    added: CommunityIds
    removed: CommunityIds
    changed: CommunityIds

    @property
    def differs(self) -> bool:
        return bool(len(self.added) or len(self.removed) or len(self.changed) or self.old != self.new)

    @property
    def hypothetical(self) -> bool:  # shown marked ``hyp.``, never judged unless asked
        return not exact_on_both(
            None if self.old is None else self.old.status, None if self.new is None else self.new.status
        )

    def to_dict(self) -> dict:
        return fields_dict(self) | {"hypothetical": self.hypothetical}


@dataclass(frozen=True)
class CommunityChanges:
    """How the communities were matched (:data:`BY_ID` or :data:`BY_MEMBERS`, analysis/diff.py) and
    what differs. ``id_agreement``: the share of common numbers with similar member sets (None: none in
    common); ``entity_key``: "title" or "key"; ``changed``: matched communities whose members, level,
    parent or report differ (NEW's numbers), counted per reason in ``reasons``."""

    matching: str
    entity_key: str
    id_agreement: float | None
    old_communities: int
    new_communities: int
    matched: int
    added: CommunityIds
    removed: CommunityIds
    changed: CommunityIds
    reasons: Mapping[str, int]

    def __post_init__(self):
        object.__setattr__(self, "reasons", frozen_map(self.reasons))

    def to_dict(self) -> dict:
        return fields_dict(self, skip=("reasons",)) | {"changed_reasons": dict(self.reasons)}


@dataclass(frozen=True)
class RegressionLimits:
    """What counts as a regression: map calls up or coverage down by more than these fractions (on
    behaviours :func:`exact_on_both` unless ``include_hypothetical``), or a finding rule new in NEW."""

    max_map_calls_increase: float = 0.10
    max_coverage_drop: float = 0.0
    include_hypothetical: bool = False

    def to_dict(self) -> dict:
        return fields_dict(self)


@dataclass(frozen=True)
class IndexDiff:
    """``graphrag-audit diff OLD NEW``: what changed in what each community_level sends."""

    old: IndexInfo
    new: IndexInfo
    level: int  # the community_level the regressions are checked at (--level)
    limits: RegressionLimits
    communities: CommunityChanges
    selections: tuple[SelectionDiff, ...]
    appeared: tuple[Finding, ...]  # findings of NEW whose rule OLD does not report
    disappeared: tuple[Finding, ...]  # findings of OLD whose rule NEW does not report
    regressions: tuple[Finding, ...]  # regression-* findings (what --fail-on reads)
    hypothetical_changes: tuple[Finding, ...] = ()  # the same on hyp. selections: shown, never judged
    option_note: str | None = None  # the options the two audits resolved differently (not in the JSON)

    @property
    def unchanged(self) -> bool:
        c = self.communities
        return not (
            len(c.added)
            or len(c.removed)
            or len(c.changed)
            or self.appeared
            or self.disappeared
            or any(s.differs for s in self.selections)
        )

    def sorted_regressions(self) -> list[Finding]:
        return sorted(self.regressions, key=_severity_order)

    def sorted_hypothetical_changes(self) -> list[Finding]:
        return sorted(self.hypothetical_changes, key=_severity_order)

    def to_dict(self) -> dict:
        from graphrag_audit import __version__

        return {
            "schema_version": DIFF_SCHEMA_VERSION,
            "kind": "diff",
            "tool": {"name": "graphrag-audit", "version": __version__},
            "old": self.old.to_dict(),
            "new": self.new.to_dict(),
            "community_level": self.level,
            "limits": self.limits.to_dict(),
            "unchanged": self.unchanged,
            "communities": self.communities.to_dict(),
            "selections": [s.to_dict() for s in self.selections],
            "findings": {
                "appeared": [f.to_dict() for f in self.appeared],
                "disappeared": [f.to_dict() for f in self.disappeared],
            },
            "regressions": [f.to_dict() for f in self.sorted_regressions()],
            "hypothetical_changes": [f.to_dict() for f in self.sorted_hypothetical_changes()],
        }


def _severity_order(f: Finding) -> tuple:
    return (-SEVERITY_RANK[f.severity], f.rule, f.message)
