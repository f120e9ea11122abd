"""The community ``full_content`` embeddings DRIFT search reads, from a local LanceDB folder (read only).

DRIFT's ``api/query.py`` ``drift_search`` opens the store with ``get_embedding_store`` (1.x:
``_get_embedding_store`` in api/query.py) and ``read_indexer_report_embeddings`` looks every report up
by its ``id`` (``query/indexer_adapters.py``); a report without a row there makes
``DRIFTSearchContextBuilder.convert_reports_to_df`` raise ``ValueError("Some reports are missing full
content embeddings ...")`` (``query/structured_search/drift_search/drift_context.py``; microsoft/graphrag#1561),
at v1.2.0, v2.7.2 and v3.3.0. Where the table is, per version line:

- 1.x: ``embeddings.vector_store`` (``type``, ``db_uri``, ``container_name``), table
  ``f"{container_name}-community-full_content"`` (``utils/embeddings.py`` ``create_collection_name``,
  ``config/defaults.py`` ``VECTOR_STORE_DICT`` @v1.2.0);
- 2.x: ``vector_store`` = {id: store}, table ``embeddings_schema["community.full_content"].index_name``
  else ``f"{container_name}-community-full_content"`` (``utils/api.py`` ``get_embedding_store``,
  ``config/embeddings.py`` ``create_index_name`` @v2.7.2);
- 3.x: ``vector_store`` = one store, table ``index_schema["community_full_content"].index_name``, by
  default the embedding name itself (``config/models/graph_rag_config.py`` @v3.3.0).

``db_uri`` defaults to ``output/lancedb``, relative to the project root (1.x ``config/resolve_path.py``,
2.x ``GraphRagConfig._validate_vector_store_db_uri``, 3.x ``load_config`` changes to the settings' folder).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphrag_audit.io.settings import query_settings_data
from graphrag_audit.io.tables import read_table
from graphrag_audit.model.index import IndexModel

INSTALL_HINT = (
    "the lancedb package is not installed: python -m pip install lancedb "
    '(or ".[lancedb]" from graphrag-audit\'s checkout)'
)


@dataclass(frozen=True)
class EmbeddingStore:
    folder: Path
    table: str
    id_field: str = "id"


def _mapping(value) -> dict:
    return value if isinstance(value, dict) else {}


def locate(model: IndexModel, line: str) -> EmbeddingStore | str:
    """Where graphrag ``line`` reads the report embeddings, or why that is not a local LanceDB table."""
    data = _mapping(query_settings_data(model.settings_file)) if model.settings_file else {}
    if line == "1.x":
        store = _mapping(_mapping(data.get("embeddings")).get("vector_store"))
        table, id_field = f"{store.get('container_name') or 'default'}-community-full_content", "id"
    else:
        stores = _mapping(data.get("vector_store"))
        by_id = bool(stores) and all(isinstance(v, dict) for v in stores.values())  # 2.x: {id: store}
        if stores and by_id != (line == "2.x"):
            return f"the settings' vector_store is not in graphrag {line}'s shape"
        if line == "2.x":
            if len(stores) > 1:
                return "the settings list several vector stores"
            store = _mapping(next(iter(stores.values()), {}))
            schema = _mapping(_mapping(store.get("embeddings_schema")).get("community.full_content"))
            default = f"{store.get('container_name') or 'default'}-community-full_content"
        else:
            store = stores
            schema = _mapping(_mapping(store.get("index_schema")).get("community_full_content"))
            default = "community_full_content"
        table, id_field = str(schema.get("index_name") or default), str(schema.get("id_field") or "id")
    kind = str(store.get("type") or "lancedb")
    if kind != "lancedb":
        return f"the vector store is {kind}, not a local LanceDB folder"
    uri = str(store.get("db_uri") or "")
    if "://" in uri:
        return "the LanceDB store is not a local folder"
    if not isinstance(model.files.get("reports"), Path):
        return "the index is not on a local disk"
    if model.settings_file is not None:
        folder = model.settings_file.parent / (uri or "output/lancedb")
    else:  # no project: the index's output folder, where graphrag writes it by default
        folder = model.output_dir / "lancedb"
    if not folder.is_dir():
        return "no LanceDB folder at the vector store's db_uri"
    return EmbeddingStore(folder, table, id_field)


def embedded_ids(store: EmbeddingStore) -> set[str] | None:
    """The ids with a row in the table (None: no such table). Reads only: lancedb opens the existing
    folder and scans the id column, it creates nothing (tests/io/test_vector_store.py checks)."""
    import lancedb  # the [lancedb] extra; the caller checks it is installed

    db = lancedb.connect(str(store.folder))
    try:
        table = db.open_table(store.table)
    except (FileNotFoundError, ValueError):
        return None
    rows = table.search().select([store.id_field]).limit(max(table.count_rows(), 1)).to_arrow()
    return {str(x) for x in rows.column(store.id_field).to_pylist()}


def report_ids(model: IndexModel) -> list[str]:
    """The reports' ``id`` column (graphrag's ``CommunityReport.id``), in ``model.reports`` row order."""
    column = read_table(model.files["reports"], ["id"]).get("id")
    return [] if column is None else column.astype(str).tolist()
