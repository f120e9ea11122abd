"""The typed result of ``--verify`` (built by ``verify.py``); ``to_dict()`` gives the levels JSON's ``verify``
object (docs/json-schema.md), where a key only some cases carry is a field that is ``None`` or empty in the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphrag_audit.results.audit import fields_dict, frozen_map


def _some(out: dict, **kv) -> dict:
    """``out`` with the keys whose value is not None."""
    out.update({k: v for k, v in kv.items() if v is not None})
    return out


def _present(obj, skip: tuple[str, ...] = ()) -> dict:
    """:func:`fields_dict` without the None values; ``expected_error_not_raised`` only when True."""
    d = fields_dict(obj, skip)
    if "expected_error_not_raised" in d:
        d["expected_error_not_raised"] = d["expected_error_not_raised"] or None
    return {k: v for k, v in d.items() if v is not None}


@dataclass(frozen=True)
class SelectionCheck:
    """graphrag's ``read_indexer_reports`` at one community_level on one load path."""

    status: str  # agrees | differs | graphrag_raised
    graphrag_count: int | None  # None when graphrag raised
    graphrag_error: str | None = None
    only_graphrag: tuple = ()  # community ids only graphrag selected (status differs)
    only_audit: tuple = ()
    #: what the audit predicted graphrag does here, when it predicted an error or an empty selection
    expected: str | None = None
    #: the audit predicted an error and graphrag returned a selection
    expected_error_not_raised: bool = False

    def to_dict(self) -> dict:
        return {"status": self.status, "graphrag_count": self.graphrag_count, **self.details()}

    def details(self) -> dict:
        """The keys after ``graphrag_count`` (a level's entry carries them too)."""
        lists = () if self.status == "differs" else ("only_graphrag", "only_audit")
        return _present(self, skip=("status", "graphrag_count", *lists))


@dataclass(frozen=True)
class MapCallCheck:
    """graphrag's ``build_community_context`` on its selection at one level against the audit's batches."""

    audit_map_calls: int | None
    audit_context_tokens: int | None
    context_error: str | None = None  # graphrag's exception, when it raised
    #: whether the audit predicted graphrag's context building fails here (None: it predicted nothing)
    context_error_expected: bool | None = None
    graphrag_map_calls: int | None = None  # None when graphrag's context building raised
    map_calls_agree: bool | None = None
    graphrag_context_tokens: int | None = None
    context_tokens_agree: bool | None = None
    batches_agree: bool | None = None
    texts_agree: bool | None = None
    #: the audit's own batches could not be rebuilt as reported (a defect of the audit)
    audit_error: str | None = None
    texts_differ_in_batches: tuple = ()
    first_differing_batch: int | None = None
    graphrag_batch_tokens: tuple = ()
    audit_batch_tokens: tuple = ()
    graphrag_batch_sizes: tuple = ()
    audit_batch_sizes: tuple = ()
    only_graphrag_batch: tuple | None = None  # at the first differing batch, when both have it (at most 50)
    only_audit_batch: tuple | None = None
    #: the tables graphrag's context was built on: "python_api" or "graphrag_query"
    load_path: str = "python_api"

    @property
    def agrees(self) -> bool:
        """No comparison that counts towards a level's agreement is False."""
        checks = (self.map_calls_agree, self.context_tokens_agree, self.batches_agree, self.texts_agree)
        return all(c is not False for c in (*checks, self.context_error_expected))

    def to_dict(self) -> dict:
        """The fields that are not None, but the details only where they explain a disagreement."""
        d = fields_dict(self, skip=("load_path",))
        shown = {"audit_map_calls", "audit_context_tokens", "graphrag_map_calls"}  # even when None
        if self.texts_agree is False:
            shown.add("texts_differ_in_batches")
        if self.batches_agree is False and self.audit_error is None:
            shown.update(_BATCH_DETAILS[1:6])
            if self.only_graphrag_batch is not None:
                shown.update(_BATCH_DETAILS[6:])
                d["only_audit_batch"] = list(self.only_audit_batch or ())
        out = {k: v for k, v in d.items() if k in shown or (v is not None and k not in _BATCH_DETAILS)}
        return out if self.load_path == "python_api" else {"map_calls_load_path": self.load_path, **out}


#: MapCallCheck's fields shown only when they explain a disagreement
_BATCH_DETAILS = (
    "texts_differ_in_batches",
    "first_differing_batch",
    "graphrag_batch_tokens",
    "audit_batch_tokens",
    "graphrag_batch_sizes",
    "audit_batch_sizes",
    "only_graphrag_batch",
    "only_audit_batch",
)


@dataclass(frozen=True)
class DynamicScenarioCheck:
    """One scenario (none relevant, all relevant, what-if) of the dynamic comparison at one level."""

    status: str  # agrees | differs | graphrag_raised | not_run
    reason: str | None = None  # not_run
    graphrag_error: str | None = None  # graphrag_raised
    graphrag_rating_calls: int | None = None
    graphrag_waves: tuple | None = None
    graphrag_kept: int | None = None
    expected: str | None = None  # the error the audit predicted
    expected_error_not_raised: bool = False
    audit_rating_calls: int | None = None
    audit_waves: tuple | None = None
    audit_kept: int | None = None
    only_graphrag_kept: tuple | None = None  # status differs: community ids (at most 50)
    only_audit_kept: tuple | None = None

    def to_dict(self) -> dict:
        return _present(self)


@dataclass(frozen=True)
class DynamicLevelCheck:
    """The dynamic comparison at one community_level."""

    status: str  # agrees | differs | graphrag_raised | not_run: the worst of its scenarios
    family: str | None = None  # "1.x", "2.x", "3.x"
    expected: str | None = None  # the error the audit predicts at this level
    reason: str | None = None  # not_run
    scenarios: Mapping[str, DynamicScenarioCheck] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "scenarios", frozen_map(self.scenarios))

    def to_dict(self) -> dict:
        out = _some({"status": self.status}, family=self.family, expected=self.expected, reason=self.reason)
        if self.reason is None:  # a not-run level has a reason and no scenarios
            out["scenarios"] = {k: s.to_dict() for k, s in self.scenarios.items()}
        return out


@dataclass(frozen=True)
class DynamicSettings:
    """The selector's settings the comparison ran with (the audit's options)."""

    threshold: int
    keep_parent: bool
    num_repeats: int
    max_level: int

    def to_dict(self) -> dict:
        return fields_dict(self)


@dataclass(frozen=True)
class DynamicCheckSummary:
    """The dynamic comparison over all levels: what was run, with which settings, whether it agreed."""

    compared: bool
    agree: bool | None  # None when not compared
    family: str | None = None
    settings: DynamicSettings | None = None
    scenarios: tuple = ()  # the scenarios compared, in order: none_relevant, all_relevant[, what_if]
    reason: str | None = None  # why it was not compared
    graphrag: str | None = None  # the graphrag releases of the family
    how: str | None = None
    levels_compared: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "scenarios", tuple(self.scenarios))

    def to_dict(self) -> dict:
        """The fields that are not None; ``agree`` always, ``family`` and ``scenarios`` with the settings."""
        always = ("agree", "family") if self.settings is not None else ("agree",)
        d = fields_dict(self, skip=() if self.settings is not None else ("scenarios",))
        return {k: v for k, v in d.items() if v is not None or k in always}


@dataclass(frozen=True)
class MapCallSummary:
    """Whether graphrag's context building was compared (else why not), with which tokenizer and batch size."""

    compared: bool
    levels_compared: int | None = None
    reason: str | None = None  # why not
    tokenizer: str | None = None
    max_context_tokens: int | None = None
    graphrag_tokenizer: str | None = None  # how graphrag's tokenizer was loaded
    entities: bool | None = None  # whether the entities table was passed to graphrag

    def to_dict(self) -> dict:
        return _present(self)


@dataclass(frozen=True)
class QueryLoadPath:
    """How ``graphrag query`` (graphrag >= 3.0.2, its typed ``DataReader``) loaded the tables."""

    how: str
    loaded: bool
    load_error: str | None = None

    def to_dict(self) -> dict:
        return _present(self)


@dataclass(frozen=True)
class LevelCheck:
    """Every comparison at one community_level."""

    community_level: int | None
    selection: SelectionCheck  # the Python API's load path
    audit_count: int | None  # the audit's report count (0 where it predicts graphrag selects nothing)
    agree: bool  # the selection (every load path) and the map calls agree; dynamic has its own status
    graphrag_query: SelectionCheck | None = None  # graphrag query's load path (graphrag >= 3.0.2)
    map_calls: MapCallCheck | None = None
    map_calls_skipped: str | None = None  # why the map calls were not compared at this level
    dynamic: DynamicLevelCheck | None = None

    def to_dict(self) -> dict:
        sel = self.selection
        out: dict[str, Any] = {
            "community_level": self.community_level,
            "status": sel.status,
            "selection_agree": sel.status == "agrees",
            "graphrag_count": sel.graphrag_count,
            "audit_count": self.audit_count,
        }
        out.update(sel.details())
        if self.graphrag_query is not None:
            out["graphrag_query"] = self.graphrag_query.to_dict()
        _some(out, map_calls_skipped=self.map_calls_skipped)
        if self.map_calls is not None:
            out.update(self.map_calls.to_dict())
        out["agree"] = self.agree
        if self.dynamic is not None:
            out["dynamic"] = self.dynamic.to_dict()
        return out


@dataclass(frozen=True)
class VerifyResult:
    """``--verify``: the installed graphrag's own code on this index against the audit."""

    available: bool  # False: graphrag could not be used (``reason`` says why); nothing was compared
    reason: str | None = None
    graphrag_version: str | None = None
    behaviour: str | None = None  # "v2" (graphrag >= 2.0) or "v1": the selection graphrag makes
    pandas_version: str | None = None
    agree: bool | None = None  # every level agrees on every comparison (dynamic included)
    map_calls: MapCallSummary | None = None
    dynamic: DynamicCheckSummary | None = None
    levels: tuple[LevelCheck, ...] = ()
    python_api_how: str | None = None  # how the Python API path read the tables
    graphrag_query: QueryLoadPath | None = None  # graphrag query's load path, when graphrag has one

    def __post_init__(self):
        object.__setattr__(self, "levels", tuple(self.levels))

    @property
    def static_agree(self) -> bool:
        """The selection and map-call comparisons agree at every level (``agree`` without dynamic)."""
        if self.dynamic is None:
            return bool(self.agree)
        return bool(self.levels) and all(x.agree for x in self.levels)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"available": self.available}
        if not self.available:
            return _some(
                out, reason=self.reason, graphrag_version=self.graphrag_version, behaviour=self.behaviour
            )
        _some(
            out,
            graphrag_version=self.graphrag_version,
            behaviour=self.behaviour,
            pandas_version=self.pandas_version,
            agree=self.agree,
            reason=self.reason,
        )
        if self.map_calls is not None:
            out["map_calls"] = self.map_calls.to_dict()
        if self.dynamic is not None:
            out["dynamic"] = self.dynamic.to_dict()
        out["levels"] = [x.to_dict() for x in self.levels]
        paths: dict[str, Any] = {}
        if self.python_api_how is not None:
            paths["python_api"] = {"how": self.python_api_how}
        if self.graphrag_query is not None:
            paths["graphrag_query"] = self.graphrag_query.to_dict()
        if paths:
            out["load_paths"] = paths
        return out
