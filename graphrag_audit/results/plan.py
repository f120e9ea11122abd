"""The planner's result types (computed by ``analysis/plan.py``): budgets, a cost, the plan with its
per-subtree status, what each community_level N sends beside it, and the report holding them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from graphrag_audit.results.audit import CommunityIds, fields_dict
from graphrag_audit.sanitise.secrets import scrub

BUDGET_KINDS = ("reports", "tokens", "map_calls", "coverage")
#: what the planner optimises (docs/plan.md#objectives)
OBJECTIVES = ("granularity", "rank", "text-units")
#: ``plan -f json``'s contract: graphrag_audit/schema/plan.schema.json, docs/json-schema.md
PLAN_SCHEMA_VERSION = "1.1"


class Cost(NamedTuple):
    tokens: int
    map_calls: int


#: ``cost(rows)``: rows = ascending positions in ``model.reports`` (parquet row order).
CostFn = Callable[[np.ndarray], Cost]


@dataclass(frozen=True)
class Budget:
    """One budget: ``reports`` / ``tokens`` / ``map_calls`` (ceilings, integers >= 1) or
    ``coverage`` (a target share 0 < P <= 1 of coverable entities at their finest level)."""

    kind: str
    value: float

    def __post_init__(self):
        if self.kind not in BUDGET_KINDS:
            raise ValueError(f"unknown budget {self.kind!r}; choose one of {', '.join(BUDGET_KINDS)}")
        v = self.value
        number = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        if not number or not math.isfinite(v):
            raise ValueError(f"budget {self.kind} must be a finite number, not {v!r}")
        if self.kind == "coverage":
            if not 0 < v <= 1:
                raise ValueError(f"coverage must be a share in (0, 1], not {v!r}")
        elif v < 1 or int(v) != v:
            raise ValueError(f"budget {self.kind} must be a whole number >= 1, not {v!r}")

    @property
    def needs_cost(self) -> bool:
        return self.kind in ("tokens", "map_calls")

    def describe(self) -> str:
        if self.kind == "coverage":
            return f"coverage >= {self.value:.0%} of entities at their finest available level"
        return f"{self.kind.replace('_', ' ')} <= {int(self.value):,}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "value": float(self.value) if self.kind == "coverage" else int(self.value)}


class Budgets(tuple):
    """Budgets that must all hold (at most one of each kind), in :data:`BUDGET_KINDS` order."""

    def __new__(cls, items=()):
        items = tuple(items)
        if not items:
            raise ValueError("give at least one budget")
        kinds = [b.kind for b in items]
        if len(set(kinds)) != len(kinds):
            raise ValueError("give each kind of budget at most once")
        return super().__new__(cls, sorted(items, key=lambda b: BUDGET_KINDS.index(b.kind)))

    @classmethod
    def of(cls, budget) -> Budgets:
        if isinstance(budget, Budgets):
            return budget
        if isinstance(budget, Budget):
            return cls((budget,))
        return cls(budget)

    def get(self, kind: str):
        return next((b.value for b in self if b.kind == kind), None)

    @property
    def kind(self) -> str:
        return "+".join(b.kind for b in self)

    @property
    def needs_cost(self) -> bool:
        return any(b.needs_cost for b in self)

    def describe(self) -> str:
        return " and ".join(b.describe() for b in self)

    def to_dict(self) -> list[dict]:
        return [b.to_dict() for b in self]


@dataclass(frozen=True)
class SubtreeStatus:
    """How far the plan went in one root's subtree, and how far it could go."""

    root: int
    entities: int
    reports: int
    levels: dict[str, int]
    finest_available: int | None  # deepest level a frontier can reach in this subtree
    status: str  # "finest" (every member final), "budget" (could go finer), "blocked"
    coarser_than_target: bool  # finest_available < the plan's deepest level
    blocked: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return fields_dict(self)


@dataclass(frozen=True)
class Plan:
    budget: Budgets  # every budget given (all must hold)
    communities: list[int]  # the frontier, sorted
    rows: np.ndarray  # report rows sent (ascending = parquet order)
    fits: bool
    levels: dict[str, int]  # members per level
    entities_represented: int
    entities_at_finest: int
    entities_clustered: int
    entities_uncoverable: int
    entities_duplicated: int  # entities held by more than one member (0 on a nested tree)
    entities_per_report: dict
    baseline_level: int | None  # finest N whose level frontier LF(N) fits (None: not even LF(0))
    complete_level: int  # every entity at level >= min(this, its finest available level)
    deepest_level: int | None  # the plan's target granularity
    subtrees: list[SubtreeStatus]
    start_reports: int
    uncoverable_communities: list[int]
    orphan_reports: list[int]  # report rows whose community is not in the tree
    orphan_communities: list[int]
    cost: Cost | None = None
    notes: list[str] = field(default_factory=list)
    objective: str = "granularity"
    allow_uncovered: bool = False
    entities_coverable: int = 0  # clustered entities some report can carry (clustered - uncoverable)
    entities_left_uncovered: int = 0  # coverable entities left out (--allow-uncovered)
    uncovered_roots: list[int] = field(default_factory=list)  # the report-less roots kept out
    checks: list[dict] = field(default_factory=list)  # per budget: kind, value, actual, holds
    why_not: list[str] = field(default_factory=list)  # when it does not fit or is empty: why

    @property
    def coverage(self) -> float | None:
        return self.entities_at_finest / self.entities_represented if self.entities_represented else None

    @property
    def usable(self) -> bool:  # ``plan`` exits 0 only then
        return bool(self.fits and self.report_count > 0)

    @property
    def report_count(self) -> int:
        return int(len(self.rows))

    def to_dict(self) -> dict:
        budgets = Budgets.of(self.budget)
        d = {
            "budget": budgets[0].to_dict(),
            "budgets": budgets.to_dict(),
            "objective": self.objective,
            "allow_uncovered": self.allow_uncovered,
            "fits": self.fits,
            "usable": self.usable,
            "checks": [dict(c) for c in self.checks],
            "why_not": list(self.why_not),
            "communities": [int(c) for c in self.communities],
            "reports": self.report_count,
            "by_level": self.levels,
            "entities": {
                "clustered": self.entities_clustered,
                "represented": self.entities_represented,
                "at_finest_available_level": self.entities_at_finest,
                "uncoverable": self.entities_uncoverable,
                "duplicated": self.entities_duplicated,
                "coverable": self.entities_coverable,
                "left_uncovered": self.entities_left_uncovered,
            },
            "uncovered_roots": [int(r) for r in self.uncovered_roots],
            "coverage": self.coverage,
            "entities_per_report": self.entities_per_report,
            "baseline_level": self.baseline_level,
            "complete_level": self.complete_level,
            "deepest_level": self.deepest_level,
            "start_reports": self.start_reports,
            "uncoverable_communities": self.uncoverable_communities,
            "orphan_reports": {
                "rows": [int(r) for r in self.orphan_reports],
                "communities": self.orphan_communities,
            },
            "subtrees": [s.to_dict() for s in self.subtrees],
            "notes": list(self.notes),
        }
        if self.cost is not None:
            calls = int(self.cost.map_calls)
            d |= {"tokens": int(self.cost.tokens), "map_calls": calls, "reduce_calls": 1 if calls else 0}
        return d


@dataclass(frozen=True)
class LevelOption:
    """What one ``community_level`` N sends under one behaviour, and whether it fits the budget."""

    community_level: int | None
    behaviour: str  # "v2" (graphrag >= 2.0) or "v1" (graphrag < 2.0)
    reports: int
    entities_covered: int
    entities_at_finest: int
    ancestors_sent: int
    fits: bool | None
    community_ids: CommunityIds
    cost: Cost | None
    status: str = "exact"  # graphrag.compat's; not "exact": the rule on the rebuilt tree (marked "hyp.")

    def to_dict(self) -> dict:
        d = fields_dict(self, skip=("cost", "status"))
        if self.cost is not None:
            d |= {"tokens": int(self.cost.tokens), "map_calls": int(self.cost.map_calls)}
        return d


@dataclass(frozen=True)
class PlanIndex:
    """What was planned on: the index's folder, where its tables are, its generation."""

    path: str
    output_dir: str
    generation: str
    max_level: int
    notes: tuple[str, ...] = ()

    def __post_init__(self):  # where the index is: never a credential, in any output (sanitise/secrets.py)
        object.__setattr__(self, "path", scrub(self.path))
        object.__setattr__(self, "output_dir", scrub(self.output_dir))
        object.__setattr__(self, "notes", tuple(scrub(n) for n in self.notes))

    def to_dict(self) -> dict:
        return fields_dict(self)


@dataclass(frozen=True)
class PlanReport:
    """The plan, every community_level beside it, and the dynamic-selection preview."""

    index: PlanIndex
    plan: Plan
    options: list[LevelOption]
    dynamic: list[dict]
    settings: dict
    handoff: dict | None = None  # after --write: handoff.WriteResult.to_dict()

    def best_level(self, behaviour: str) -> int | None:
        """The finest community_level N (not None) whose ``behaviour`` selection fits the budget."""
        fit = [
            o.community_level
            for o in self.options
            if o.behaviour == behaviour and o.community_level is not None and o.fits
        ]
        return max(fit) if fit else None

    def to_dict(self) -> dict:
        from graphrag_audit import __version__

        return {
            "schema_version": PLAN_SCHEMA_VERSION,
            "tool": {"name": "graphrag-audit", "version": __version__},
            "index": self.index.to_dict(),
            "settings": self.settings,
            "plan": self.plan.to_dict(),
            "community_levels": [o.to_dict() for o in self.options],
            "best_single_level": {"v2": self.best_level("v2"), "v1": self.best_level("v1")},
            "dynamic_selection": self.dynamic,
            "handoff": self.handoff,
        }
