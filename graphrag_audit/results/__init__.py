"""AuditReport: the one result object every renderer reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from graphrag_audit.analysis.depth import DepthAnalysis
from graphrag_audit.findings import SEVERITY_RANK, Finding
from graphrag_audit.analysis.levels import TreeLevel
from graphrag_audit.model.index import IndexModel

SCHEMA_VERSION = "1.1"  # 1.1: every selection carries its graphrag status (compat.py)


@dataclass
class AuditReport:
    model: IndexModel
    options: dict
    tree_levels: list[TreeLevel]
    levels: list[dict]
    depth: DepthAnalysis
    findings: list[Finding]
    report_entities: object = None  # numpy array: entities of each report row's community
    verify: dict | None = None
    timings: dict = field(default_factory=dict)

    # ---- header facts -------------------------------------------------------------------
    def index_info(self) -> dict:
        m = self.model
        return {
            "path": str(m.path),
            "output_dir": str(m.output_dir),
            "files": {k: v.name for k, v in sorted(m.files.items())},
            "notes": list(m.notes),
            "generation": m.generation.label,
            "generation_evidence": list(m.generation.evidence),
            "tree_source": m.tree_source,
            "community_id_type": m.id_kind,
            "counts": {
                "entities": m.entity_count,
                "communities": int(len(m.communities)),
                "reports": int(len(m.reports)),
                "roots": len([r for r in self.depth.roots]),
                "levels": len(self.tree_levels),
            },
        }

    def level(self, n: int | None) -> dict | None:
        return next((r for r in self.levels if r["community_level"] == n), None)

    def sorted_findings(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: (-SEVERITY_RANK[f.severity], f.rule))

    def to_dict(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "graphrag-audit", "version": _version()},
            "options": self.options,
            "index": self.index_info(),
            "tree": {"levels": [t.to_dict() for t in self.tree_levels]},
            "depth": self.depth.to_dict(),
            "levels": [
                {"community_level": r["community_level"],
                 "selected": {b: s.to_dict() for b, s in r["selected"].items()}}
                for r in self.levels
            ],
            "findings": [f.to_dict() for f in self.sorted_findings()],
            "summary": self.summary(),
            **({"verify": self.verify} if self.verify is not None else {}),
        }

    def summary(self) -> dict:
        counts = {s: 0 for s in ("error", "warning", "info")}
        for f in self.findings:
            counts[f.severity] += 1
        return {"findings": counts}


def _version() -> str:
    from graphrag_audit import __version__

    return __version__
