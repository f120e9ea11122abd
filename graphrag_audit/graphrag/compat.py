"""What graphrag actually does with this index, per behaviour: the one place that decides it.

:func:`behaviour_outcomes` gives each behaviour's status: ``exact`` (that graphrag returns this selection
from the index as written), ``hypothetical`` (its rule on the rebuilt tree; ``graphrag_returns`` says what it
does) or ``graphrag_cannot_read`` (it stops before selecting); ``python_api`` notes where
``pd.read_parquet`` + ``read_indexer_reports`` differs from the loader. Facts, each checked in graphrag's
code and by running it on ../shared/indexes (3.3.0 with pandas 3.1.1, 1.2.0 with pandas 2.3.3):

1. String community ids (0.1-0.4): 1.0-1.2 ``read_indexer_reports`` (query/indexer_adapters.py@v1.0.0,
   @v1.2.0) casts ``create_final_nodes.community`` to int and inner-joins the string reports: 0 reports.
   0.3/0.4 cast the roll-up back to str (@v0.3.0), 0.5-0.9 the reports to int (@v0.5.0, @v0.9.0).
   ``graphrag query`` 1.2.0 stops earlier (``read_indexer_communities``, cli/query.py@v1.2.0).
2. ``graphrag query`` 2.0-3.3 loads ``entities``, ``communities``, ``community_reports`` by name
   (cli/query.py @v2.0.0, @v3.3.0); 3.1+ types them (data_model/dfs.py @v3.1.0: KeyError on a missing
   column). 1.x loads ``create_final_nodes``. Through the Python API, >= 2.0 needs ``entity_ids``.
3. int32 ``communities.community``: the roll-up's ``.loc`` assignment (indexer_adapters.py@v2.0.0-@v3.3.0)
   raises TypeError under pandas 3 (graphrag >= 3.2 requires it); ``graphrag query`` 3.1+ casts to int64.
"""

from __future__ import annotations

from graphrag_audit.results.audit import CANNOT_READ, EXACT, HYPOTHETICAL, Outcome

# graphrag 3.1+'s typed loader (data_model/dfs.py@v3.1.0-@v3.3.0) reads them in this order
TYPED_COLUMNS = {  # the model's table -> (graphrag's name, the columns)
    "communities": ("communities", ("community", "level", "children", "period", "size")),
    "reports": ("community_reports", ("community", "level", "children", "rank", "findings", "size")),
}
# graphrag query's global search loads these in this order (cli/query.py run_global_search, 2.x/3.x; 1.x)
V2_QUERY_TABLES = (("entities", "entities"), ("communities", "communities"), ("reports", "community_reports"))
V1_QUERY_TABLES = (
    ("nodes", "create_final_nodes"),
    ("entities", "create_final_entities"),
    ("communities", "create_final_communities"),
    ("reports", "create_final_community_reports"),
)
# the tables read_indexer_reports takes, under the names graphrag's loader reads them
V2_SELECTION_TABLES = (("communities", "communities"), ("reports", "community_reports"))
V1_SELECTION_TABLES = (("nodes", "create_final_nodes"), ("reports", "create_final_community_reports"))
NO_REPORTS = "the index has no community reports table: graphrag has nothing to select (no-reports-table)"
API_INT32 = {
    "status": CANNOT_READ,
    "graphrag_returns": {
        "graphrag": ">= 3.2 (pandas 3)",
        "count": None,
        "community_ids": None,
        "error": "TypeError: Invalid value ... for dtype 'int32'",
    },
    "note": "read_indexer_reports called on pd.read_parquet output raises TypeError under pandas "
    ">= 3 (graphrag >= 3.2 requires it); under pandas 2 it only warns and returns this selection",
}


def _stem(path) -> str:
    return path.name.rsplit(".", 1)[0]


def _has(model, logical: str, stem: str) -> bool:
    """graphrag's loader finds the table ``logical`` under its own name ``stem``."""
    p = model.files.get(logical)
    return p is not None and _stem(p) == stem


def v2_readable(model) -> bool:
    """graphrag >= 2.0's read_indexer_reports can explode this communities table."""
    cols = model.schemas["communities"] if "communities" in model.files else ()
    return "entity_ids" in cols and "community" in cols


def typed_loader_missing(model, reports: bool = True) -> dict[str, list[str]]:
    """{table: the columns graphrag 3.1+'s typed loader needs that it lacks} for the tables present."""
    out = {}
    for logical in ("communities", "reports") if reports else ("communities",):
        name, need = TYPED_COLUMNS[logical]
        cols = model.schemas.get(logical)
        lacking = [c for c in need if c not in cols] if cols is not None else []
        if lacking:
            out[name] = lacking
    return out


def _cannot_load(model, tables) -> str:
    missing = next((stem for logical, stem in tables if not _has(model, logical, stem)), None)
    return f"ValueError: Could not find {missing}.parquet in storage!"


def _v2_outcome(model) -> Outcome:
    gen = model.generation.label
    readable = v2_readable(model)
    int32 = model.schemas.get("communities", {}).get("community") == "int32"
    if not all(_has(model, *t) for t in V2_SELECTION_TABLES):
        error = _cannot_load(model, V2_QUERY_TABLES)
        if not model.has_reports_table:
            return Outcome(CANNOT_READ, ">= 2.0", NO_REPORTS, error=error)
        api: dict | None = None  # not readable: the Python API fails too, the same status
        if readable:
            api = API_INT32 if int32 else {"status": EXACT}
            how = "handed create_final_communities through the Python API, its read_indexer_reports " + (
                "raises TypeError under pandas >= 3 (int32 community ids) and otherwise returns these"
                if int32
                else "returns exactly these"
            )
        elif "communities" not in model.files:
            how = "handed these tables through the Python API, its read_indexer_reports raises KeyError: "
            how += "'entity_ids' (there is no communities table)"
        else:
            how = "handed these tables through the Python API, its read_indexer_reports raises KeyError: "
            how += "'entity_ids' (the communities table has no entity_ids)"
        note = (
            f"graphrag >= 2.0 cannot read this {gen} index as written: graphrag query 2.x/3.x looks for "
            "entities.parquet, communities.parquet and community_reports.parquet (needs-migration); "
            f"{how}. hyp. = the <= N rule applied to the rebuilt tree"
        )
        return Outcome(CANNOT_READ, ">= 2.0", note, error=error, python_api=api)
    if not readable:
        note = (
            "graphrag >= 2.0 cannot read this index: read_indexer_reports explodes communities.entity_ids, "
        )
        note += "which this table lacks (v2-unreadable). hyp. = the <= N rule applied to the rebuilt tree"
        return Outcome(CANNOT_READ, ">= 2.0", note, error="KeyError: 'entity_ids'")
    lacking = typed_loader_missing(model, reports=False)
    if lacking:  # graphrag 2.x-3.0's loader and the Python API read it; 3.1+'s typed loader does not
        first = next(iter(lacking.values()))[0]
        what = "; ".join(f"{t} lacks {', '.join(cols)}" for t, cols in lacking.items())
        note = (
            f"graphrag query 2.x-3.0 and the Python API send these, but graphrag query 3.1+ cannot read "
            f"this index (KeyError: '{first}'): its typed loader needs columns the tables lack ({what}; "
            "needs-migration)"
        )
        if int32:
            note += "; the Python API raises TypeError under pandas >= 3 (int32 community ids)"
        return Outcome(EXACT, "2.x-3.0", note, python_api=API_INT32 if int32 else None)
    if int32:
        note = (
            "communities.community is int32: graphrag query 3.1+ casts it to int64 and sends these; "
            "graphrag's read_indexer_reports called from Python on pd.read_parquet output raises TypeError "
            "under pandas >= 3, which graphrag >= 3.2 requires (int32-community-ids)"
        )
        return Outcome(EXACT, "3.x", note, python_api=API_INT32)
    return Outcome(EXACT, ">= 2.0")


def _v1_outcome(model) -> Outcome:
    if not all(_has(model, *t) for t in V1_SELECTION_TABLES):
        error = _cannot_load(model, V1_QUERY_TABLES)
        if not model.has_reports_table:
            return Outcome(CANNOT_READ, "1.0-1.2", NO_REPORTS, error=error)
        if model.generation.before_2:
            note = f"graphrag < 2.0 cannot read this {model.generation.label} index: it reads "
            note += "create_final_nodes.parquet, which this index does not have. hyp. = its per-entity rule "
            note += "applied to the rebuilt tree"
            return Outcome(CANNOT_READ, "< 2.0", note, error=error)
        # A >= 2.0 layout: the < 2.0 column is the comparison, its rule applied to the rebuilt tree.
        return Outcome(
            HYPOTHETICAL,
            "< 2.0",
            f"hyp. = hypothetical: graphrag < 2.0 cannot read this "
            f"{model.generation.label} index (it reads create_final_nodes.parquet, which graphrag >= 2.0 "
            "no longer writes); the < 2.0 numbers apply its per-entity rule to the tree rebuilt from "
            "communities.entity_ids, for comparison",
            error=error,
        )
    if model.id_kind == "string":
        missing = [stem for logical, stem in V1_QUERY_TABLES if not _has(model, logical, stem)]
        if missing:
            stop = "its loader finds no " + " and no ".join(f"{m}.parquet" for m in missing)
        elif "community" not in model.schemas.get("communities", {"community": None}):
            stop = (
                "read_indexer_communities reads create_final_communities.community, which this table "
                "lacks: AttributeError"
            )
        else:
            stop = None
        query = f"; graphrag query --method global in 1.x stops before that ({stop})" if stop else ""
        return Outcome(
            HYPOTHETICAL,
            "1.0-1.2",
            "graphrag 1.0-1.2 selects 0 reports from string community ids: "
            "read_indexer_reports casts create_final_nodes.community to int but not the reports', so "
            f"the join keeps nothing (string-community-ids){query}. hyp. = what graphrag 0.1-0.9 send "
            "(0.3/0.4 turn the nodes' max back into strings, 0.5-0.9 cast the reports to int)",
            returns_zero=True,
        )
    return Outcome(EXACT, "1.0-1.2")


def _dynamic_outcome(model) -> Outcome:
    if not model.has_reports_table:
        return Outcome(CANNOT_READ, None, NO_REPORTS, error="no community reports table")
    if model.generation.before_2:
        # graphrag 1.1-1.2 read_indexer_reports(dynamic_community_selection=True): no roll-up, no join
        return Outcome(EXACT, "1.1-1.2")
    return Outcome(EXACT, "3.x")


LEVEL_ONLY = Outcome(
    HYPOTHETICAL,
    None,
    "the reports at exactly level N, as graphrag's docs describe "
    "community_level; no graphrag version selects exactly these",
)


def behaviour_outcomes(model) -> dict[str, Outcome]:
    """Per behaviour (``v2``, ``v1``, ``level_only``, ``dynamic``): what graphrag does here."""
    return {
        "v2": _v2_outcome(model),
        "v1": _v1_outcome(model),
        "level_only": LEVEL_ONLY,
        "dynamic": _dynamic_outcome(model),
    }


def migration_findings(model) -> list:
    """``needs-migration``: graphrag >= 2.0 (3.x) cannot read the index without migrating it."""
    from graphrag_audit.findings import finding

    lacking = typed_loader_missing(model)
    if model.generation.before_2:
        files = sorted(p.name for p in model.files.values() if _stem(p).startswith("create_final_"))
        gen = model.generation.label
        pre = (
            " (a pre-1.0 index: graphrag's index_migration_to_v1 notebook comes first)"
            if gen in ("0.1-0.4", "0.5-0.9")
            else ""
        )
        cols = "; ".join(f"{t} would lack {', '.join(c)}" for t, c in lacking.items())
        msg = (
            f"graphrag >= 2.0 cannot read this {gen} index without migration{pre}: graphrag query 2.x/3.x "
            "looks for entities.parquet, communities.parquet and community_reports.parquet, and graphrag "
            "3.1+'s typed loader needs communities.children, period and size" + (f" ({cols})" if cols else "")
        )
        return [finding("needs-migration", msg, generation=gen, files=files, typed_loader_missing=lacking)]
    lacking = typed_loader_missing(model, reports=False)
    if not lacking:
        return []
    cols = "; ".join(f"{t} lacks {', '.join(c)}" for t, c in lacking.items())
    msg = "graphrag query 3.1+ cannot read this index without migration: its typed loader needs columns the "
    msg += f"tables lack ({cols})"
    return [finding("needs-migration", msg, generation=model.generation.label, typed_loader_missing=lacking)]
