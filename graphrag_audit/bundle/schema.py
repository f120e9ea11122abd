"""What a bundle keeps: per graphrag generation, the tables and columns graphrag's query path reads,
plus what ``graphrag-audit levels`` reads to give the same figures on OUT. Nothing else goes in
(an allowlist): every other table, column, schema and field metadata is left out.

Sources (``file@tag``; ``query/`` paths under the ``graphrag`` package; read with
``pip download graphrag==X --no-deps``):

* 0.1-0.4: ``query/cli.py@v0.3.6`` (``run_global_search``: create_final_nodes, _entities,
  _community_reports; ``run_local_search``: + _text_units, _relationships, optional _covariates),
  ``query/indexer_adapters.py@v0.3.6`` (``read_indexer_*``: the columns passed as ``*_col`` and
  ``attributes_cols``; nodes ``title``, ``degree``, ``community``, ``level``), and
  ``query/input/loaders/dfs.py@v0.3.6`` (the ``*_col`` defaults). The 0.3 query path reads no
  communities table; the audit does (``graphrag_audit/io/load.py``: ``COMMUNITY_COLUMNS``).
* 0.5-0.9: ``cli/query.py@v0.9.0`` (global: nodes, entities, communities, community_reports; local:
  + text_units, relationships, optional covariates), ``query/indexer_adapters.py@v0.9.0``,
  ``query/input/loaders/dfs.py@v0.9.0``.
* 1.0-1.2: the same files ``@v1.2.0``; communities gain ``parent`` (the audit's generation test,
  ``graphrag_audit/io/generation.py``).
* 2.x: ``cli/query.py@v2.7.2``, ``api/query.py@v2.7.2`` (no nodes table; communities
  ``parent``/``children``: ``read_indexer_communities``), ``query/input/loaders/dfs.py@v2.7.2``;
  entities keep ``x``/``y`` (numbers), the only columns that tell a 2.x index from a 3.x one
  (``graphrag_audit/io/generation.py``).
* 3.x: ``cli/query.py@v3.3.0`` (``_resolve_output_files`` through ``DataReader``),
  ``data_model/dfs.py@v3.3.0`` (the typed loaders need communities ``children``, ``period``,
  ``size``; reports ``children``, ``rank``, ``findings``, ``size``), ``query/indexer_adapters.py@v3.3.0``,
  ``query/input/loaders/dfs.py@v3.3.0`` (text units ``document_id``).

Never kept, whatever graphrag reads: embeddings (``description_embedding``, ``*_embedding``,
vector-store tables): they can be matched or inverted back to text. Covariates (claims) are read
by local search only when claims were extracted; they are bundled with ``--include-all`` only.

Column roles: ``id`` (kept when a UUID, a number or an ISO date, else a pseudonym ``id-N``, the
same in every table and list), ``entity`` (entity names: ``Entity N``, the same map as ids),
``community_title`` (graphrag's ``Community N`` kept, else ``Community title N``), ``report_title``
and ``text`` (filler with the same token count).
"""

from __future__ import annotations

#: columns that hold ids, numbers, levels, memberships and dates (role ``id``)
ID_COLUMNS = frozenset(
    {
        "id",
        "human_readable_id",
        "community",
        "level",
        "parent",
        "children",
        "entity_ids",
        "relationship_ids",
        "text_unit_ids",
        "covariate_ids",
        "document_ids",
        "document_id",
        "size",
        "rank",
        "degree",
        "combined_degree",
        "weight",
        "n_tokens",
        "x",
        "y",
        "period",
    }
)
#: (table kind, column) pairs that hold entity names (role ``entity``)
ENTITY_NAMES = frozenset(
    {
        ("entities", "title"),
        ("entities", "name"),
        ("nodes", "title"),
        ("relationships", "source"),
        ("relationships", "target"),
        ("covariates", "subject_id"),
        ("covariates", "object_id"),
    }
)
#: struct field names kept as they are (graphrag's report findings); any other is renamed ``field_N``
KNOWN_FIELDS = frozenset({"explanation", "summary"})

_NODES = ("id", "title", "degree", "community", "level")
#: reports: ``children``, ``findings`` and ``size`` are kept in every generation: the audit says
#: whether graphrag 3's typed loader would find them (``graphrag_audit/graphrag/compat.py``:
#: ``TYPED_REPORT_COLUMNS``; ``data_model/dfs.py@v3.3.0``: ``community_reports_typed``)
_REPORTS_V0 = (
    "id",
    "community",
    "level",
    "title",
    "summary",
    "full_content",
    "rank",
    "findings",
    "children",
    "size",
)
_REPORTS_V2 = _REPORTS_V0 + ("human_readable_id", "parent", "period")
_COMMUNITIES_AUDIT = (
    "id",
    "human_readable_id",
    "community",
    "level",
    "parent",
    "children",
    "title",
    "period",
    "size",
    "entity_ids",
)
_COVARIATES = (
    "id",
    "human_readable_id",
    "subject_id",
    "subject_type",
    "covariate_type",
    "type",
    "object_id",
    "status",
    "start_date",
    "end_date",
    "description",
    "text_unit_ids",
    "document_ids",
)
_RELATIONSHIPS = (
    "id",
    "human_readable_id",
    "source",
    "target",
    "description",
    "weight",
    "rank",
    "combined_degree",
    "text_unit_ids",
)
_TEXT_UNITS = (
    "id",
    "human_readable_id",
    "text",
    "n_tokens",
    "entity_ids",
    "relationship_ids",
    "covariate_ids",
    "document_ids",
)

#: generation -> table kind (file stem without ``create_final_``) -> the columns kept
ALLOWLIST: dict[str, dict[str, tuple[str, ...]]] = {
    "0.1-0.4": {
        "nodes": _NODES,
        "entities": ("id", "human_readable_id", "name", "title", "type", "description", "text_unit_ids"),
        "communities": _COMMUNITIES_AUDIT,
        "community_reports": _REPORTS_V0,
        "relationships": _RELATIONSHIPS,
        "text_units": _TEXT_UNITS,
        "covariates": _COVARIATES,
    },
    "0.5-0.9": {
        "nodes": _NODES,
        "entities": ("id", "human_readable_id", "name", "title", "type", "description", "text_unit_ids"),
        "communities": _COMMUNITIES_AUDIT,
        "community_reports": _REPORTS_V0,
        "relationships": _RELATIONSHIPS,
        "text_units": _TEXT_UNITS,
        "covariates": _COVARIATES,
    },
    "1.0-1.2": {
        "nodes": _NODES,
        "entities": ("id", "human_readable_id", "name", "title", "type", "description", "text_unit_ids"),
        "communities": _COMMUNITIES_AUDIT,
        "community_reports": _REPORTS_V0,
        "relationships": _RELATIONSHIPS,
        "text_units": _TEXT_UNITS,
        "covariates": _COVARIATES,
    },
    "2.x": {
        "entities": (
            "id",
            "human_readable_id",
            "title",
            "type",
            "description",
            "text_unit_ids",
            "degree",
            "x",
            "y",
        ),
        "communities": _COMMUNITIES_AUDIT + ("relationship_ids", "text_unit_ids"),
        "community_reports": _REPORTS_V2,
        "relationships": _RELATIONSHIPS,
        "text_units": _TEXT_UNITS,
        "covariates": _COVARIATES,
    },
    "3.x": {
        "entities": ("id", "human_readable_id", "title", "type", "description", "text_unit_ids", "degree"),
        "communities": _COMMUNITIES_AUDIT + ("relationship_ids", "text_unit_ids"),
        "community_reports": _REPORTS_V2,
        "relationships": _RELATIONSHIPS,
        "text_units": _TEXT_UNITS[:-1] + ("document_id",),
        "covariates": _COVARIATES,
    },
}
#: tables bundled only with --include-all (read by local search only when claims were extracted)
OPTIONAL_KINDS = frozenset({"covariates"})
#: the file stems graphrag writes for each kind (only these names are bundled as allowlisted tables)
LEGACY_PREFIX = "create_final_"


def kind_of(stem: str, generation: str) -> str | None:
    """The allowlisted table kind a file stem names in ``generation``, or None.

    graphrag < 2.0 names its tables ``create_final_<kind>``, later ones ``<kind>``."""
    legacy = not generation.startswith(("2", "3"))
    if legacy:
        if not stem.startswith(LEGACY_PREFIX):
            return None
        kind = stem[len(LEGACY_PREFIX) :]
    else:
        kind = stem
    return kind if kind in ALLOWLIST.get(generation, {}) else None


def role(kind: str, column: str, *, keep_titles: bool = False) -> str:
    """``id``, ``entity``, ``community_title``, ``keep`` (``--keep-titles``) or ``text``."""
    if (kind, column) in ENTITY_NAMES:
        return "keep" if keep_titles else "entity"
    if column == "title" and kind == "communities":
        return "keep" if keep_titles else "community_title"
    if column == "title" and kind == "community_reports" and keep_titles:
        return "keep"
    if column in ID_COLUMNS:
        return "id"
    return "text"


def is_embedding_name(name: str) -> bool:
    return "embedding" in name.lower()
