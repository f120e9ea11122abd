"""What a bundle keeps (an allowlist): per graphrag generation, the tables and columns graphrag's query
path reads, plus what ``graphrag-audit levels`` reads to give the same figures on OUT.

Sources (``query/`` paths under the ``graphrag`` package, from ``pip download graphrag==X --no-deps``):

* 0.1-0.4: ``query/cli.py@v0.3.6`` (global: create_final_nodes, _entities, _community_reports;
  local: + _text_units, _relationships, optional _covariates), ``query/indexer_adapters.py@v0.3.6``
  and ``query/input/loaders/dfs.py@v0.3.6``. It reads no communities table; the audit does.
* 0.5-0.9 and 1.0-1.2: ``cli/query.py``, ``query/indexer_adapters.py``, ``query/input/loaders/dfs.py``
  ``@v0.9.0`` and ``@v1.2.0`` (global: nodes, entities, communities, community_reports).
* 2.x: ``cli/query.py@v2.7.2``, ``api/query.py@v2.7.2`` (no nodes; communities ``parent``/``children``);
  entities keep ``x``/``y``, the only columns that tell a 2.x index from a 3.x one.
* 3.x: ``cli/query.py@v3.3.0``, ``data_model/dfs.py@v3.3.0`` (the typed loaders need communities
  ``children``, ``period``, ``size``; reports ``children``, ``rank``, ``findings``, ``size``),
  ``query/input/loaders/dfs.py@v3.3.0`` (text units ``document_id``).

Never kept: embeddings (they can be matched or inverted back to text). Covariates (claims), read by
local search only when claims were extracted, only with ``--include-all``.
"""

from __future__ import annotations

#: columns that hold ids, numbers, levels, memberships and dates (role ``id``)
ID_COLUMNS = frozenset(
    "id human_readable_id community level parent children entity_ids relationship_ids text_unit_ids "
    "covariate_ids document_ids document_id size rank degree combined_degree weight n_tokens x y period".split()
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

#: reports keep ``children``, ``findings`` and ``size`` in every generation: the audit says whether
#: graphrag 3's typed loader would find them (``data_model/dfs.py@v3.3.0``: ``community_reports_typed``)
_REPORTS_V0 = tuple("id community level title summary full_content rank findings children size".split())
_COMMUNITIES = tuple(
    "id human_readable_id community level parent children title period size entity_ids".split()
)
_TEXT_UNITS = tuple(
    "id human_readable_id text n_tokens entity_ids relationship_ids covariate_ids document_ids".split()
)
_COMMON = {
    "relationships": tuple(
        "id human_readable_id source target description weight rank combined_degree text_unit_ids".split()
    ),
    "text_units": _TEXT_UNITS,
    "covariates": tuple(
        "id human_readable_id subject_id subject_type covariate_type type object_id status start_date "
        "end_date description text_unit_ids document_ids".split()
    ),
}
_LEGACY = {
    "nodes": ("id", "title", "degree", "community", "level"),
    "entities": ("id", "human_readable_id", "name", "title", "type", "description", "text_unit_ids"),
    "communities": _COMMUNITIES,
    "community_reports": _REPORTS_V0,
    **_COMMON,
}
_ENTITIES_V3 = ("id", "human_readable_id", "title", "type", "description", "text_unit_ids", "degree")
_V2 = {
    "entities": _ENTITIES_V3 + ("x", "y"),
    "communities": _COMMUNITIES + ("relationship_ids", "text_unit_ids"),
    "community_reports": _REPORTS_V0 + ("human_readable_id", "parent", "period"),
    **_COMMON,
}

#: generation -> table kind (file stem without ``create_final_``) -> the columns kept
ALLOWLIST: dict[str, dict[str, tuple[str, ...]]] = {
    "0.1-0.4": _LEGACY,
    "0.5-0.9": _LEGACY,
    "1.0-1.2": _LEGACY,
    "2.x": _V2,
    "3.x": {**_V2, "entities": _ENTITIES_V3, "text_units": _TEXT_UNITS[:-1] + ("document_id",)},
}
#: tables bundled only with --include-all (read by local search only when claims were extracted)
OPTIONAL_KINDS = frozenset({"covariates"})
#: graphrag < 2.0 names its tables ``create_final_<kind>``, later ones ``<kind>``
LEGACY_PREFIX = "create_final_"


def kind_of(stem: str, generation: str) -> str | None:
    """The allowlisted table kind a file stem names in ``generation``, or None."""
    if not generation.startswith(("2", "3")):
        if not stem.startswith(LEGACY_PREFIX):
            return None
        stem = stem[len(LEGACY_PREFIX) :]
    return stem if stem in ALLOWLIST.get(generation, {}) else None


def role(kind: str, column: str, *, keep_titles: bool = False) -> str:
    """``id`` (a UUID, number or ISO date kept, else a pseudonym ``id-N``), ``entity`` (``Entity N``),
    ``community_title`` (``Community N`` kept, else ``Community title N``), ``keep`` (``--keep-titles``)
    or ``text`` (filler with the same token count)."""
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
