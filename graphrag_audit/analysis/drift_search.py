"""DRIFT search per community_level and graphrag line (issue 41), for ``levels[]``.

The primer's pool is the selection DRIFT reads (:mod:`graphrag_audit.graphrag.drift`); its local steps are
local search's probes (:mod:`graphrag_audit.analysis.local_search`, packed again with DRIFT's budget from the
same reads). The embeddings preflight reads the index's local LanceDB folder (:mod:`graphrag_audit.io.vector_store`).
Settings: the ``drift_search`` section (``config/models/drift_search_config.py`` @v1.2.0, @v2.7.2, @v3.3.0).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

from graphrag_audit.analysis.local_search import GRAPHRAG, LocalAudit, read_section
from graphrag_audit.findings import Finding, finding, preview
from graphrag_audit.graphrag.drift import (
    DEFAULT_COMMUNITY_PROP,
    DEFAULT_K_FOLLOWUPS,
    DEFAULT_MAX_DATA_TOKENS,
    DEFAULT_TOP_K,
    pool_by_level,
)
from graphrag_audit.graphrag.local import local_budget, summarise
from graphrag_audit.io.vector_store import INSTALL_HINT, EmbeddingStore, embedded_ids, locate, report_ids
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import EXACT
from graphrag_audit.sanitise.common import plain

#: the missing report ids a finding names (the JSON's evidence lists them all)
SHOWN_IDS = 8


@dataclass(frozen=True)
class DriftSettings:
    k_followups: int = DEFAULT_K_FOLLOWUPS
    community_prop: float = DEFAULT_COMMUNITY_PROP
    max_data_tokens: int = DEFAULT_MAX_DATA_TOKENS
    top_k: int = DEFAULT_TOP_K
    origin: dict = field(default_factory=dict)

    @property
    def budget(self) -> int:
        return local_budget(self.max_data_tokens, self.community_prop)


def read_drift_settings(model: IndexModel) -> DriftSettings:
    """The ``drift_search`` settings of the project the index was reached through, else graphrag's defaults."""
    keys = (
        ("k_followups", "drift_k_followups", int),
        ("community_prop", "local_search_community_prop", float),
        ("max_data_tokens", "local_search_max_data_tokens", int),
        ("top_k", "local_search_top_k_mapped_entities", int),
    )
    values, origin = read_section(model, "drift_search", keys)
    return DriftSettings(**values, origin=origin)


@dataclass
class DriftAudit:
    """``by_level``: N -> the ``drift_search`` JSON of that ``levels[]`` entry; ``missing``: line -> N ->
    the pool's report ids without an embedding (lines whose store was read)."""

    settings: DriftSettings
    by_level: dict  # N -> JSON (community_level None: none)
    missing: dict[str, dict[int, list[str]]]
    statuses: dict[str, str]


def drift_search_audit(
    model: IndexModel, local: LocalAudit, settings: DriftSettings, selections
) -> DriftAudit:
    """Every N and line of ``local.drift_probes``: the primer's pool by level, the local steps' figures
    and, where the store is read, the pool's reports without an embedding."""
    levels = model.reports["level"].to_numpy()
    read: dict[EmbeddingStore, set[str] | None] = {}
    checks: dict[str, dict] = {}
    embedded: dict[str, set[str]] = {}
    for line in local.drift_probes:
        store = locate(model, line)
        if isinstance(store, str) or importlib.util.find_spec("lancedb") is None:
            checks[line] = {"status": "not_run", "reason": store if isinstance(store, str) else INSTALL_HINT}
            continue
        if store not in read:
            try:
                read[store] = embedded_ids(store)
            except Exception as exc:  # noqa: BLE001 - a store lancedb cannot read: the check did not run
                checks[line] = {
                    "status": "not_run",
                    "reason": f"lancedb could not read it ({type(exc).__name__})",
                }
                continue
        if read[store] is None:
            checks[line] = {"status": "not_run", "reason": f"no table {store.table} in the LanceDB folder"}
            continue
        checks[line] = {"status": "checked", "table": store.table}
        embedded[line] = read[store]  # type: ignore[assignment]
    ids = report_ids(model) if embedded else []
    missing: dict[str, dict[int, list[str]]] = {line: {} for line in embedded}
    by_level = {}
    for n in model.levels:
        versions = {}
        for line, by_n in local.drift_probes.items():
            rows = selections[n]["v1" if line == "1.x" else "v2"].rows
            check = dict(checks[line])
            if line in embedded:
                missing[line][n] = [ids[r] for r in rows.tolist() if ids[r] not in embedded[line]]
                check["missing"] = len(missing[line][n])
            versions[line] = {
                "graphrag": GRAPHRAG[line],
                "status": local.statuses[line],
                "pool": len(rows),
                "pool_by_level": pool_by_level(levels, rows),
                **summarise(by_n[n]),
                "embeddings": check,
            }
        entry: dict = {
            "k_followups": settings.k_followups,
            "budget_tokens": settings.budget,
            "by_version": versions,
        }
        if local.sampled:
            entry["sampled"] = {"probes": local.sampled[0], "of": local.sampled[1]}
        by_level[n] = entry
    return DriftAudit(settings, by_level, missing, local.statuses)


def drift_findings(audit: DriftAudit, level: int) -> list[Finding]:
    """``drift-missing-embeddings`` at the queried N (the deepest level when beyond the tree), for the lines
    whose status is exact, else for every line whose store was read."""
    lines = [line for line in audit.missing if audit.statuses[line] == EXACT] or list(audit.missing)
    if not lines or not audit.by_level:
        return []
    n = min(level, max(audit.by_level))
    gaps = {line: audit.missing[line][n] for line in lines if audit.missing[line][n]}
    if not gaps:
        return []
    ids = next(iter(gaps.values()))
    pool = audit.by_level[n]["by_version"][next(iter(gaps))]["pool"]
    return [
        finding(
            "drift-missing-embeddings",
            f"At community_level {n}, {len(ids):,} of the {pool:,} reports DRIFT search reads have no "
            f"full_content embedding in the vector store (graphrag {', '.join(gaps)}), so DRIFT raises "
            f"'Some reports are missing full content embeddings': {preview([plain(i, 40) for i in ids], SHOWN_IDS)}",
            level=n,
            missing_ids={line: got for line, got in gaps.items()},
            tables={line: audit.by_level[n]["by_version"][line]["embeddings"]["table"] for line in gaps},
        )
    ]
