"""The result of ``graphrag-audit diff OLD NEW`` and the figures ``levels --baseline`` reads (built by
``analysis.diff``; JSON in graphrag_audit/schema/diff.schema.json)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graphrag_audit.findings import SEVERITY_RANK, Finding
from graphrag_audit.results.audit import EXACT, CommunityIds, IndexInfo, fields_dict, frozen_map

DIFF_SCHEMA_VERSION = (
    "1.1"  # 1.1: limits.include_hypothetical, selections[].hypothetical, hypothetical_changes
)

#: the behaviours a diff compares: graphrag >= 2.0's and < 2.0's selections (as ``levels`` computes them)
DIFF_BEHAVIOURS = ("v2", "v1")


def exact_on_both(old_status: str | None, new_status: str | None) -> bool:
    """A behaviour is judged for regressions only when a real graphrag runs it on both indexes: its
    status is ``exact`` on each side. A side without a status (a baseline written before the levels
    JSON carried one, schema 1.0) takes the other side's; with none at all it is judged, as before."""
    known = [s for s in (old_status, new_status) if s is not None]
    return all(s == EXACT for s in known)


#: how communities were matched between the two indexes
BY_ID = "community_id"
BY_MEMBERS = "member_entities"


@dataclass(frozen=True)
class SideStats:
    """One behaviour's selection at one community_level in one index: reports sent, tokens and
    map calls (None without costs), entities covered out of the clustered entities."""

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
    """One behaviour at one community_level, before and after (``old``/``new`` None: that index's
    audit has no such level). ``added``: communities of NEW sent now and not before (NEW's numbers);
    ``removed``: communities of OLD sent before and not now (OLD's numbers); ``changed``: sent in both
    and changed (NEW's numbers; see :class:`CommunityChanges`)."""

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
    def hypothetical(self) -> bool:
        """No real graphrag runs this selection on one of the indexes (its status is not ``exact``
        there, :func:`exact_on_both`): shown marked ``hyp.``, never judged unless asked."""
        return not exact_on_both(
            None if self.old is None else self.old.status, None if self.new is None else self.new.status
        )

    def to_dict(self) -> dict:
        return fields_dict(self) | {"hypothetical": self.hypothetical}


@dataclass(frozen=True)
class CommunityChanges:
    """How the two indexes' communities were matched and what differs.

    ``matching``: :data:`BY_ID` (the same community number is the same community: used when most
    numbers both indexes hold keep a similar member entity set, Jaccard >= 0.5, at the same level) or
    :data:`BY_MEMBERS` (the numbers were reallocated: a community matches the one of the other index
    with exactly the same member entities at the same level). ``id_agreement``: the share of the
    numbers both hold whose member sets are similar (None: no number in common). ``entity_key``:
    how entities are told apart across the two indexes ("title": graphrag's entity identity, from
    the entities tables; "key": the membership's own entity key, when an index has no titles).
    ``changed``: matched communities whose member set, level, parent or report (title and content)
    differ (NEW's numbers); ``reasons``: how many changed for each of those."""

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
    """What counts as a regression (``--max-map-calls-increase``, ``--max-coverage-drop``): map calls
    up by more than ``max_map_calls_increase`` (a fraction: 0.1 = 10 %), coverage down by more than
    ``max_coverage_drop`` (a fraction of the clustered entities), and any finding rule absent before.
    Map calls and coverage are judged on the behaviours a real graphrag runs on both indexes only
    (:func:`exact_on_both`), unless ``include_hypothetical`` (``--include-hypothetical``)."""

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
    # the regression-* findings the limits would raise on a selection no real graphrag runs on one of the
    # indexes (hyp.): shown, never judged (--fail-on ignores them); empty with limits.include_hypothetical
    hypothetical_changes: tuple[Finding, ...] = ()
    # one sentence naming the options the two audits resolved differently (the project settings each
    # index was reached through: tokenizer, max_context_tokens, ...), None when they agree: text,
    # markdown and github only (the diff JSON schema has no field for it)
    option_note: str | None = None

    def __post_init__(self):
        for name in ("selections", "appeared", "disappeared", "regressions", "hypothetical_changes"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

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
        return _by_severity(self.regressions)

    def sorted_hypothetical_changes(self) -> list[Finding]:
        return _by_severity(self.hypothetical_changes)

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


def _by_severity(findings) -> list[Finding]:
    return sorted(findings, key=lambda f: (-SEVERITY_RANK[f.severity], f.rule, f.message))
