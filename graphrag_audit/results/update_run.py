"""The audit of one `graphrag update` run: its previous, delta and merged indexes side by side
(analysis/update_run.py builds it; render/text.py and render/json.py print it)."""

from __future__ import annotations

from dataclasses import dataclass

from graphrag_audit.findings import Finding
from graphrag_audit.sanitise.secrets import scrub

#: version of ``update-run -f json`` (graphrag_audit/schema/update-run.schema.json)
UPDATE_RUN_SCHEMA_VERSION = "1.0"


@dataclass(frozen=True)
class UpdatePart:
    """One of the run's indexes. ``status``: "audited", "absent" (no such folder) or
    "unreadable" (``problem`` says why: the audit did not run)."""

    role: str  # "previous", "delta" or "merged"
    path: str | None
    queried: bool  # graphrag queries this folder
    status: str
    problem: str = ""
    generation: str = ""
    communities: int = 0
    reports: int = 0
    entities: int | None = None
    per_level: tuple[int, ...] = ()  # communities per level 0, 1, ...
    periods: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()

    def __post_init__(self):  # where the index is: never a credential, in any output (sanitise/secrets.py)
        if self.path is not None:
            object.__setattr__(self, "path", scrub(self.path))
        object.__setattr__(self, "problem", scrub(self.problem))


@dataclass(frozen=True)
class OffsetCheck:
    """graphrag's merge: merged numbers = previous numbers + (delta numbers + previous max + 1)."""

    offset: int  # previous maximum + 1
    offset_from: str  # "create_final_nodes" (graphrag < 2.0) or "communities"
    expected: int  # distinct community numbers the merge should hold
    found: int  # distinct community numbers the merged table holds
    missing: tuple[int, ...]  # expected, absent from the merged table
    extra: tuple[int, ...]  # in the merged table, not expected

    @property
    def holds(self) -> bool:
        return not self.missing and not self.extra


@dataclass(frozen=True)
class UpdateRunReport:
    requested: str
    layout: str  # ">= 2.0" or "0.4-1.2"
    run: str | None
    runs: int
    queried: str | None  # the role graphrag queries; None when that folder was not found
    level: int  # the community_level the level findings were checked at
    parts: tuple[UpdatePart, ...]
    offset: OffsetCheck | None
    offset_not_run: str  # why the offset check did not run ("" when it ran)
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "requested", scrub(self.requested))
        object.__setattr__(self, "notes", tuple(scrub(n) for n in self.notes))
