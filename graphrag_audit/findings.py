"""Findings: a stable rule id, a severity, a one-line message, the evidence."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from graphrag_audit.rules import RULES, SEVERITY_RANK  # noqa: F401 (SEVERITY_RANK re-exported)


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    message: str
    communities: tuple[int, ...] = ()
    evidence: Mapping = field(default_factory=dict)  # read-only once built

    def __post_init__(self):
        object.__setattr__(self, "communities", tuple(self.communities))
        if not isinstance(self.evidence, MappingProxyType):
            object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))

    @property
    def fix(self) -> str:
        return RULES[self.rule].fix if self.rule in RULES else ""

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "communities": [int(c) for c in self.communities],
            "evidence": dict(self.evidence),
            "fix": self.fix,
        }


def counted(n: int, one: str, many: str) -> str:
    """``n`` with thousands separators and the words that agree with it: ``counted(1, "community has",
    "communities have")`` -> ``1 community has``; ``counted(2345, ...)`` -> ``2,345 communities have``."""
    return f"{n:,} {one if n == 1 else many}"


def preview(ids, limit: int = 8) -> str:
    """'3, 5, 9 and 12 more' for messages."""
    ids = list(ids)
    head = ", ".join(str(i) for i in ids[:limit])
    return head + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def finding(rule_id: str, message: str, communities=(), **evidence) -> Finding:
    rule = RULES[rule_id]
    return Finding(rule_id, rule.severity, message, tuple(int(c) for c in communities), evidence)
