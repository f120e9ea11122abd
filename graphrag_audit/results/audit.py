"""The per-level audit's results, frozen: renderers read these and nothing else; each ``to_dict`` writes the
documented JSON (graphrag_audit/schema/audit-report.schema.json)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from graphrag_audit.findings import SEVERITY_RANK, Finding
from graphrag_audit.results.money import money
from graphrag_audit.sanitise.secrets import scrub

if TYPE_CHECKING:
    from graphrag_audit.results.verify import VerifyResult

SCHEMA_VERSION = "1.2"  # 1.1: every selection carries its graphrag status; 1.2: dynamic.by_version

#: a selection's graphrag status (``SelectionStats.outcome.status``; decided in graphrag.compat)
EXACT = "exact"
HYPOTHETICAL = "hypothetical"
CANNOT_READ = "graphrag_cannot_read"


def frozen_map(d: Mapping | None) -> Mapping:
    """A read-only view of a copy of ``d`` (``{}`` for None)."""
    return MappingProxyType(dict(d or {}))


def _readonly(a: np.ndarray | None) -> np.ndarray | None:
    if a is not None and a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def fields_dict(obj, skip: tuple[str, ...] = ()) -> dict:
    """The fields of a dataclass or NamedTuple in order, without ``skip``, in their JSON shape:
    a result as its ``to_dict()``, a tuple as a list, a mapping as a dict."""
    names = [f.name for f in fields(obj)] if is_dataclass(obj) else obj._fields  # else a NamedTuple
    out = {}
    for k in names:
        if k in skip:
            continue
        v = getattr(obj, k)
        if hasattr(v, "to_dict"):
            v = v.to_dict()
        elif isinstance(v, tuple):
            v = list(v)
        elif isinstance(v, Mapping):
            v = dict(v)
        out[k] = v
    return out


# ---- what graphrag does with a selection ------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """What one graphrag does with this index for one behaviour (the same at every N)."""

    status: str
    graphrag: str | None  # the graphrag the status is about, e.g. "3.x", "1.0-1.2"; None: no graphrag
    note: str | None = None  # one line: why; the table's footnote (None: exact, nothing to add)
    returns_zero: bool = False  # graphrag selects 0 reports instead (hypothetical)
    error: str | None = None  # what graphrag raises instead (graphrag_cannot_read)
    python_api: dict | None = field(default=None)  # the Python API path, where its status differs

    @property
    def exact(self) -> bool:
        return self.status == EXACT

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"status": self.status, "graphrag": self.graphrag}
        if self.note:
            d["status_note"] = self.note
        if self.returns_zero:  # what that graphrag returns instead of this selection
            d["graphrag_returns"] = {
                "graphrag": self.graphrag,
                "count": 0,
                "community_ids": [],
                "error": None,
            }
        elif self.error is not None:
            ret = {"graphrag": self.graphrag, "count": None, "community_ids": None, "error": self.error}
            d["graphrag_returns"] = ret
        if self.python_api is not None:
            d["python_api"] = self.python_api
        return d


# ---- community id lists -------------------------------------------------------------------
_I32 = np.iinfo(np.int32)


class CommunityIds(Sequence):
    """Sorted community numbers as one read-only numpy array (int32 when every id fits, else int64):
    reads like a list of ``int`` at 4-8 bytes an id instead of ~36 (a 1,000-level index selects millions)."""

    __slots__ = ("array",)

    def __init__(self, values=(), *, own: bool = False):  # own: a fresh array, taken, not copied
        a = np.asarray(values, dtype=np.int64).ravel() if own else np.array(values, dtype=np.int64).ravel()
        if len(a) and _I32.min <= a.min() and a.max() <= _I32.max:
            a = a.astype(np.int32)
        a.flags.writeable = False
        self.array = a

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.array[i].tolist()
        return int(self.array[i])

    def __iter__(self):
        a = self.array
        for start in range(0, len(a), 65536):  # not one list of a million ids (~36 MB)
            yield from a[start : start + 65536].tolist()

    def __eq__(self, other) -> bool:
        if isinstance(other, CommunityIds):
            return bool(np.array_equal(self.array, other.array))
        if isinstance(other, (list, tuple)):
            return self.tolist() == list(other)
        return NotImplemented

    # __eq__ without __hash__ leaves __hash__ None: unhashable, like the list it stands for

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)

    def __repr__(self) -> str:
        return f"CommunityIds({self.tolist()!r})"

    def tolist(self) -> list[int]:
        return self.array.tolist()


# ---- the tree, level by level -------------------------------------------------------------
@dataclass(frozen=True)
class TreeLevel:
    level: int
    communities: int
    leaves: int
    reports: int
    entities: int

    def to_dict(self) -> dict:
        return fields_dict(self)


# ---- what one community_level sends ---------------------------------------------------------
class EntitySpread(NamedTuple):
    """Entities per report of a selection: min, median, max (all None for no report)."""

    min: int | None
    median: float | None
    max: int | None

    def to_dict(self) -> dict:
        return self._asdict()


@dataclass(frozen=True)
class Costs:
    """Tokens and LLM calls of one selection, by graphrag's own context batching (costs.py)."""

    tokens: int
    map_calls: int
    reduce_calls: int
    llm_calls: int
    reports_in_context: int
    dropped_by_rank: int
    oversize_reports: int
    tokenizer: str
    tokens_exact: bool
    note: str | None = None  # e.g. graphrag raises ZeroDivisionError on these weights
    max_batch_tokens: int | None = None  # the largest map call's tokens (levels[].global_reduce)

    def to_dict(self) -> dict:
        d = fields_dict(self, skip=("note", "max_batch_tokens"))
        return d | ({"cost_note": self.note} if self.note else {})


@dataclass(frozen=True)
class ExtraVsV1:
    """The reports graphrag >= 2.0 sends beyond graphrag < 2.0's selection at the same N."""

    count: int
    community_ids: CommunityIds

    def to_dict(self) -> dict:
        return fields_dict(self)


@dataclass(frozen=True)
class RatingCalls:
    """Dynamic selection's rating calls: at least one per level-0 report, at most one per report
    of the pool, each ``num_repeats`` times."""

    min: int
    max: int
    num_repeats: int

    def to_dict(self) -> dict:
        return fields_dict(self)


@dataclass(frozen=True)
class DynamicScenario:
    """One run of graphrag's dynamic ``select()`` (graphrag/dynamic.py): the rating calls (repeats counted),
    the kept reports' community numbers (sorted), the communities rated per wave."""

    rating_calls: int
    kept_ids: tuple[int, ...]
    waves: tuple[int, ...]
    relevant_ids: tuple[int, ...] | None = None  # the what-if only
    prompt_tokens: int | None = None  # the rating calls' prompt tokens (None without costs)
    kept_costs: KeptCosts | None = None  # the what-if only, with costs: the map step over the kept reports

    def to_dict(self) -> dict:
        d = fields_dict(self, skip=("relevant_ids", "kept_costs"))
        if self.relevant_ids is not None:
            d = {"relevant_ids": list(self.relevant_ids), **d}
            if self.kept_costs is not None:
                d.update(self.kept_costs.to_dict())
        return d


@dataclass(frozen=True)
class KeptCosts:
    """The map step over the reports a dynamic selection kept. graphrag hands them over in a set's
    iteration order (its per-process hash seed), which its seed-86 shuffle starts from: ``map_calls``
    and ``tokens`` are those of the ascending order, the ranges span ``orders`` sampled input orders
    (not a bound)."""

    map_calls: int
    tokens: int
    map_calls_range: tuple[int, int]
    tokens_range: tuple[int, int]
    orders: int
    tokens_exact: bool

    def to_dict(self) -> dict:
        d = fields_dict(self, skip=("orders", "tokens_exact"))
        return d | {"orders_sampled": self.orders, "tokens_exact": self.tokens_exact}


@dataclass(frozen=True)
class DynamicVersion:
    """Dynamic selection of one graphrag line (``family``: "1.x", "2.x", "3.x") at one community_level:
    the error graphrag raises building the selector (then the scenarios are None), whether it descends
    below the start, the start (level-0 candidates), the candidates no rating reaches by descent when
    every report is relevant (``cut_off_ids``), and the scenarios. The JSON gives ``cut_off`` and
    ``unreachable`` as counts."""

    family: str
    graphrag: str
    error: str | None
    descends: bool
    start_ids: tuple[int, ...]
    cut_off_ids: tuple[int, ...]
    unreachable_ids: tuple[int, ...]
    none_relevant: DynamicScenario | None
    all_relevant: DynamicScenario | None
    what_if: DynamicScenario | None = None

    def to_dict(self) -> dict:
        d = {
            "graphrag": self.graphrag,
            "error": self.error,
            "descends": self.descends,
            "start_ids": list(self.start_ids),
            "cut_off": len(self.cut_off_ids),
            "unreachable": len(self.unreachable_ids),
            "none_relevant": None if self.none_relevant is None else self.none_relevant.to_dict(),
            "all_relevant": None if self.all_relevant is None else self.all_relevant.to_dict(),
        }
        if self.what_if is not None:
            d["what_if"] = self.what_if.to_dict()
        return d


@dataclass(frozen=True)
class DynamicByVersion:
    """Per graphrag line that can read the layout, its dynamic selection (family -> DynamicVersion)."""

    versions: Mapping[str, DynamicVersion]

    def __post_init__(self):
        object.__setattr__(self, "versions", frozen_map(self.versions))

    def to_dict(self) -> dict:
        return {f: v.to_dict() for f, v in self.versions.items()}


@dataclass(frozen=True)
class SelectionStats:
    """One behaviour's selection at one community_level."""

    behaviour: str
    count: int
    community_ids: CommunityIds
    by_level: Mapping[str, int]
    ancestors_sent: int
    entities_covered: int
    mean_reports_per_entity: float | None
    entities_per_report: EntitySpread
    rows: np.ndarray | None = field(default=None, repr=False, compare=False)  # report rows, parquet order
    outcome: Outcome | None = None  # what graphrag actually does for this behaviour (graphrag.compat)
    cost: Costs | None = None  # v2, v1, level_only with costs on
    row_tokens: np.ndarray | None = field(default=None, repr=False, compare=False)  # each row's tokens
    extra_vs_v1: ExtraVsV1 | None = None  # v2 only
    rating_calls: RatingCalls | None = None  # dynamic only
    by_version: DynamicByVersion | None = None  # dynamic only: the selector per graphrag line
    #: distinct text units of the covered entities (None: the entities carry no text units)
    text_units_covered: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "by_level", frozen_map(self.by_level))
        object.__setattr__(self, "rows", _readonly(self.rows))
        object.__setattr__(self, "row_tokens", _readonly(self.row_tokens))

    def to_dict(self) -> dict:
        d = {
            "count": self.count,
            "community_ids": self.community_ids,
            "by_level": dict(self.by_level),
            "ancestors_sent": self.ancestors_sent,
            "entities_covered": self.entities_covered,
            "text_units_covered": self.text_units_covered,
            "mean_reports_per_entity": self.mean_reports_per_entity,
            "entities_per_report": self.entities_per_report.to_dict(),
        }
        if self.cost is not None:
            d.update(self.cost.to_dict())
        for name in ("extra_vs_v1", "rating_calls", "by_version"):
            if getattr(self, name) is not None:
                d[name] = getattr(self, name).to_dict()
        if self.outcome is not None:
            d.update(self.outcome.to_dict())
        return d

    def with_(self, **changes) -> SelectionStats:
        return replace(self, **changes)


@dataclass(frozen=True)
class LevelResult:
    """What community_level N (None: no level filter) sends, per behaviour (v2, v1, level_only, dynamic)."""

    community_level: int | None
    selected: Mapping[str, SelectionStats]
    local_search: dict | None = None  # analysis/local_search.py; None at community_level None
    drift_search: dict | None = None  # analysis/drift_search.py; None at community_level None
    global_reduce: dict | None = None  # analysis/audit.py global_reduce; None without costs

    def __post_init__(self):
        object.__setattr__(self, "selected", frozen_map(self.selected))

    def to_dict(self) -> dict:
        return fields_dict(self) | {"selected": {b: s.to_dict() for b, s in self.selected.items()}}


# ---- the reports listed at the level you query with ----------------------------------------
@dataclass(frozen=True)
class ListedReports:
    """The first reports of one behaviour's selection at the audited level, by level then community id;
    ``total`` is the whole selection. ``title`` is untrusted: renderers sanitise it for their medium."""

    behaviour: str
    total: int
    community: tuple[int, ...]
    level: tuple[int, ...]
    title: tuple[Any, ...]
    entities: tuple[int, ...]
    tokens: tuple[int, ...] | None  # None: costs not computed
    also_v1: tuple[bool, ...] | None  # v2 only: the report is also in graphrag < 2.0's selection

    def __len__(self) -> int:
        return len(self.community)


@dataclass(frozen=True)
class ReportListing:
    community_level: int
    by_behaviour: Mapping[str, ListedReports]

    def __post_init__(self):
        object.__setattr__(self, "by_behaviour", frozen_map(self.by_behaviour))


# ---- branch depth ---------------------------------------------------------------------------
class RootDepth(NamedTuple):
    community: int
    level: int
    deepest_level: int
    depth_reached: int
    descendants: int
    entities: int
    leaves_per_level: Mapping[str, int]

    def to_dict(self) -> dict:
        return fields_dict(self)


class LevelDepth(NamedTuple):
    community_level: int
    roots_reaching: int
    roots_stuck: int
    roots_total: int
    entities_served: int
    entities_stuck: int
    entities_total: int
    entities_per_report: EntitySpread | None = None  # graphrag < 2.0's selection at this N

    def to_dict(self) -> dict:
        return fields_dict(self, skip=("entities_per_report",) if self.entities_per_report is None else ())


@dataclass(frozen=True)
class DepthAnalysis:
    roots: tuple[RootDepth, ...]  # deepest first
    histogram: Mapping[str, int]  # depth reached -> roots
    per_level: tuple[LevelDepth, ...]
    asymmetry: float
    single_child: tuple[int, ...]
    duplicate_levels: tuple[int, ...]
    max_level: int

    def __post_init__(self):
        object.__setattr__(self, "histogram", frozen_map(self.histogram))

    def to_dict(self) -> dict:
        return {
            "max_level": self.max_level,
            "asymmetry": self.asymmetry,
            "depth_histogram": dict(self.histogram),
            "per_level": [r.to_dict() for r in self.per_level],
            "roots": [r.to_dict() for r in self.roots],
            "single_child_communities": list(self.single_child),
            "duplicate_levels": list(self.duplicate_levels),
        }


# ---- the index ------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexCounts:
    entities: int
    communities: int
    reports: int
    roots: int
    levels: int
    #: distinct entities some community holds (the whole that coverage is measured against)
    clustered_entities: int = 0
    #: distinct text units of the clustered entities (None: the entities carry no text units)
    clustered_text_units: int | None = None

    def to_dict(self) -> dict:
        return fields_dict(self, skip=("clustered_text_units",) if self.clustered_text_units is None else ())


@dataclass(frozen=True)
class IndexInfo:
    """What was read and from where (paths, notes and evidence are untrusted text)."""

    path: str
    output_dir: str
    files: Mapping[str, str]  # table -> file name
    notes: tuple[str, ...]
    generation: str
    generation_evidence: tuple[str, ...]
    tree_source: str
    community_id_type: str
    counts: IndexCounts
    name: str  # the index directory's name (the HTML title); not in the JSON
    has_reports_table: bool  # not in the JSON (counts.reports and the findings say it)

    def __post_init__(self):
        object.__setattr__(self, "files", frozen_map(self.files))
        # where the index is: never a credential, in any output (sanitise/secrets.py)
        object.__setattr__(self, "path", scrub(self.path))
        object.__setattr__(self, "output_dir", scrub(self.output_dir))
        object.__setattr__(self, "notes", tuple(scrub(n) for n in self.notes))

    def to_dict(self) -> dict:
        return fields_dict(self, skip=("name", "has_reports_table"))


# ---- the options ----------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditOptions:
    level: int = 2  # the community_level your application queries with (graphrag CLI default)
    # None = the project's settings file when the index was reached through one and it sets the key
    # (encoding_model, global_search.max_context_tokens / max_tokens), else graphrag's default
    # (cl100k_base, 12,000); the audit returns them resolved, ``costs_from`` saying where each came from
    tokenizer: str | None = None
    max_context_tokens: int | None = None
    costs: bool = True
    # dynamic selection (global_search.dynamic_search_*): None = the settings file's value, else
    # graphrag's default; resolved by the audit, ``dynamic_from`` saying where each came from
    num_repeats: int | None = None  # rating calls per rated community (default 1)
    threshold: int | None = None  # a rating >= threshold keeps the report (default 1)
    keep_parent: bool | None = None  # keep a parent whose child is kept (default False)
    max_level: int | None = None  # the last level the fallback rates whole (default 2)
    use_summary: bool | None = None  # rate each report's summary instead of its full_content (default False)
    relevant: tuple[int, ...] | None = None  # dynamic what-if: the community numbers rated relevant
    entities: tuple[str, ...] | None = None  # local search what-if (--entities): entity ids or titles
    query: str = ""  # the query the rating prompt carries (its tokens count in every rating call)
    max_unreachable: float = 0.25
    max_inflation: float = 1.2
    min_coverage: float = 0.5  # low-coverage fires when the reports at level cover a smaller share
    max_local_coarse: float = 0.25  # local-context-coarse / -empty: analysis/local_search.py
    max_local_empty: float = 0.1
    tokens_per_word: float = 1.33  # reduce-truncation-risk: graphrag/reduce.py DEFAULT_TOKENS_PER_WORD
    # (knob, "option" | "<settings file>[ <key>]" | "graphrag default")
    dynamic_from: tuple[tuple[str, str], ...] = ()
    costs_from: tuple[tuple[str, str], ...] = ()
    price_in: float | None = None  # USD per million input tokens (--price-in): results/money.py
    price_out: float | None = None  # USD per million output tokens (--price-out)

    def to_dict(self) -> dict:
        return asdict(self) | {"dynamic_from": dict(self.dynamic_from), "costs_from": dict(self.costs_from)}


# ---- the report -----------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditReport:
    """The one result object every audit renderer reads."""

    index: IndexInfo
    options: AuditOptions
    tree_levels: tuple[TreeLevel, ...]
    levels: tuple[LevelResult, ...]
    depth: DepthAnalysis
    findings: tuple[Finding, ...]
    report_entities: np.ndarray | None = field(default=None, repr=False, compare=False)  # per report row
    listing: ReportListing | None = None  # the reports sent at options.level
    verify: VerifyResult | None = None  # --verify: graphrag's own code against the audit (results/verify.py)
    timings: Mapping[str, float] = field(default_factory=dict, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "report_entities", _readonly(self.report_entities))
        object.__setattr__(self, "timings", frozen_map(self.timings))

    def with_verify(self, verify: VerifyResult | None) -> AuditReport:
        return replace(self, verify=verify)

    def level(self, n: int | None) -> LevelResult | None:
        return next((r for r in self.levels if r.community_level == n), None)

    def selections_by_level(self) -> dict:
        """{N: {behaviour: SelectionStats}}: the shape ``treeview.build_forest`` takes (``.rows``)."""
        return {r.community_level: r.selected for r in self.levels}

    def sorted_findings(self) -> list[Finding]:
        return sorted(self.findings, key=lambda f: (-SEVERITY_RANK[f.severity], f.rule))

    def to_dict(self) -> dict:
        from graphrag_audit import __version__

        d = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "graphrag-audit", "version": __version__},
            "options": self.options.to_dict(),
            "index": self.index.to_dict(),
            "tree": {"levels": [t.to_dict() for t in self.tree_levels]},
            "depth": self.depth.to_dict(),
            "levels": [r.to_dict() for r in self.levels],
            "findings": [f.to_dict() for f in self.sorted_findings()],
            "summary": self.summary(),
        }
        if self.verify is not None:
            d["verify"] = self.verify.to_dict()
        if (m := money(self)) is not None:
            d["money"] = m
        return d

    def summary(self) -> dict:
        counts = Counter(f.severity for f in self.findings)
        return {"findings": {s: counts[s] for s in ("error", "warning", "info")}}
