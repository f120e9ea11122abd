"""Typed, frozen results: what the analyses produce and the renderers read.

``results.audit``: the per-level audit (:class:`AuditReport` and its parts); ``results.tree`` and
``results.plan``: the tree view and the budget plan.
"""

from graphrag_audit.results.audit import (  # noqa: F401
    SCHEMA_VERSION,
    AuditOptions,
    AuditReport,
    CommunityIds,
    Costs,
    DepthAnalysis,
    DynamicByVersion,
    DynamicScenario,
    DynamicVersion,
    EntitySpread,
    ExtraVsV1,
    IndexCounts,
    IndexInfo,
    KeptCosts,
    LevelDepth,
    LevelResult,
    ListedReports,
    Outcome,
    RatingCalls,
    ReportListing,
    RootDepth,
    SelectionStats,
    TreeLevel,
)
