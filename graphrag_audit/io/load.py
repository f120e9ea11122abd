"""load_index: find the tables, detect the generation, normalise them into an IndexModel."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.coerce import id_lists, int_ids, int_lists, key_column, levels, list_flat, text_column
from graphrag_audit.io.generation import detect_generation
from graphrag_audit.io.locate import locate_index, remote_index_files
from graphrag_audit.io.tables import parquet_schema, read_table, table_columns
from graphrag_audit.model.forest import CommunityForest
from graphrag_audit.model.index import IndexModel
from graphrag_audit.model.keys import (
    has_duplicates,
    is_nondecreasing,
    match_entity_keys,
    node_entity_rows,
    stable_order,
)

COMMUNITY_COLUMNS = [
    "community",
    "id",
    "human_readable_id",
    "level",
    "parent",
    "children",
    "title",
    "period",
    "size",
    "entity_ids",
]
REPORT_COLUMNS = ["community", "level", "title", "rank", "full_content"]
NODE_COLUMNS = ["id", "title", "community", "level"]
ENTITY_COLUMNS = ["id", "title", "name", "text_unit_ids"]


def _schema(path: Path) -> dict[str, str]:
    if path.suffix == ".csv":
        return dict.fromkeys(table_columns(path), "csv")
    return {f.name: str(f.type) for f in parquet_schema(path)}


_MISSING = np.iinfo(np.int64).min


def _id_kind(raw: pd.Series) -> str:
    """ "string" when community numbers are stored as text (graphrag 0.1-0.4). An empty column
    (a header-only CSV reads as untyped) says nothing either way."""
    is_text = raw.dtype == object or pd.api.types.is_string_dtype(raw.dtype)
    return "string" if is_text and raw.notna().any() else "int"


def _require(df: pd.DataFrame, path: Path, cols: list[str], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise IndexInputError(path, f"required column {', '.join(repr(c) for c in missing)} missing ({what})")


def _communities(files) -> tuple[pd.DataFrame, str, list | None, pd.DataFrame | None, np.ndarray | None]:
    """(communities, id_kind, children lists or None, members-from-entity_ids or None, each
    row's number of entity_ids or None)."""
    path = files.tables.get("communities")
    if path is None:
        return None, "int", None, None, None
    df = read_table(path, COMMUNITY_COLUMNS)
    if "community" in df.columns:
        idcol = "community"
    elif "id" in df.columns and "human_readable_id" not in df.columns:
        idcol = "id"  # graphrag 0.3-0.4: id is the community number as a string
    elif "human_readable_id" in df.columns:
        idcol = "human_readable_id"
    else:
        raise IndexInputError(path, "required column 'community' missing (no community number column)")
    _require(df, path, ["level"], "community level")
    if not len(df):
        raise IndexInputError(path, "the table has no rows: there is no community tree to audit")
    raw = df[idcol]
    id_kind = _id_kind(raw)
    comm = int_ids(raw, path, idcol, missing=_MISSING)
    if (comm == _MISSING).any():
        raise IndexInputError(path, f"column '{idcol}' has missing (null/NaN) community numbers")
    if (comm < 0).any():
        raise IndexInputError(path, f"column '{idcol}' has a negative community number ({int(comm.min())})")
    lev = levels(df["level"], path)
    out = pd.DataFrame({"community": comm, "level": lev})
    if "parent" in df.columns:
        parent = int_ids(df["parent"], path, "parent")  # null parent = -1 = root
        if (parent < -1).any():
            raise IndexInputError(path, f"column 'parent' has {int(parent.min())}; only -1 means 'no parent'")
        out["parent"] = parent
    else:
        out["parent"] = -1
    out["title"] = (
        text_column(df["title"], len(df)).to_numpy()
        if "title" in df.columns
        else [f"Community {c}" for c in comm]
    )
    out["period"] = text_column(df["period"], len(df)).to_numpy() if "period" in df.columns else ""
    if "size" in df.columns:
        out["size"] = pd.to_numeric(df["size"], errors="coerce").to_numpy(dtype=np.float64)
    else:
        out["size"] = np.nan
    children = int_lists(df["children"], path, "children") if "children" in df.columns else None
    members = lens = None
    if "entity_ids" in df.columns:
        flat, lens = list_flat(df["entity_ids"], path, "entity_ids")
        # copy=False: pandas would copy same-dtype columns into one 2-D block (0.35 s at 11.5M rows)
        members = pd.DataFrame(
            {
                "entity": flat
                if isinstance(flat, pd.api.extensions.ExtensionArray)
                else pd.Series(flat, dtype=object),
                "community": np.repeat(comm, lens),
                "level": np.repeat(lev, lens),
            },
            copy=False,
        )
    return out, id_kind, children, members, lens


def _nodes(files) -> pd.DataFrame | None:
    path = files.tables.get("nodes")
    if path is None:
        return None
    df = read_table(path, NODE_COLUMNS)
    _require(df, path, ["title", "community", "level"], "per-entity community membership")
    comm = int_ids(df["community"], path, "community")
    lev = levels(df["level"], path)
    out = pd.DataFrame(
        {
            "entity": key_column(text_column(df["title"], len(df))),
            "community": comm,
            "level": lev,
            "_title_na": df["title"].isna().to_numpy(),
        },
        copy=False,
    )
    if "id" in df.columns:  # graphrag 1.x matches node rows to entities by id (read_indexer_entities)
        out["entity_id"] = text_column(df["id"], len(df))  # looked up once, by the costs (no encoding)
    return out


def _rollup_rows(nodes: pd.DataFrame) -> pd.DataFrame:
    rollup = pd.DataFrame(
        {
            name: nodes[name]
            for name in ["entity", "community", "level"] + (["entity_id"] if "entity_id" in nodes else [])
        },
        copy=False,
    )
    rollup.attrs["title_na"] = nodes["_title_na"].to_numpy()
    return rollup


def _in_level_order(rollup: pd.DataFrame) -> pd.DataFrame:
    """The roll-up rows level by level, stably (graphrag 1.x writes them entity by entity), so that
    "every row at level <= N" is a prefix for the roll-up steps."""
    lev = rollup["level"].to_numpy()
    if is_nondecreasing(lev):
        return rollup
    order = stable_order(lev)
    out = pd.DataFrame({name: _taken(rollup[name], order) for name in rollup.columns}, copy=False)
    out.attrs = dict(rollup.attrs)
    if "title_na" in out.attrs:  # _rollup_rows' flag per row
        out.attrs["title_na"] = out.attrs["title_na"][order]
    return out


def _taken(column: pd.Series, order: np.ndarray):
    """``column``'s values at ``order``: through arrow for arrow columns (a dictionary-encoded
    key column moves its int32 codes only), numpy otherwise (pandas' own take: about 1.5x)."""
    if isinstance(column.array, pd.arrays.ArrowExtensionArray):
        return pd.arrays.ArrowExtensionArray(pc.take(pa.array(column.array), pa.array(order)))
    return column.to_numpy()[order]


def _rollup_with_entity_rows(rollup: pd.DataFrame, entities: pd.DataFrame | None) -> pd.DataFrame:
    """graphrag 1.x's roll-up rows with each node's entities row (``entity_row``, see
    ``model.keys.node_entity_rows``) in place of its id (150 MB of id strings at 1M entities)."""
    if "entity_id" not in rollup.columns or entities is None:
        return rollup
    first = ~entities["id"].duplicated(keep="first").to_numpy()  # (EntityKeyMatch.first, made here)
    rows = node_entity_rows(rollup["entity_id"], entities, first)
    if rows is not None:
        rollup["entity_row"] = rows
        del rollup["entity_id"]  # the model drops the node ids: 150 MB of strings at 1M entities
    return rollup


def _reports(files) -> tuple[pd.DataFrame, str]:
    path = files.tables.get("reports")  # none: the same frame, empty
    df = pd.DataFrame(columns=["community", "level"]) if path is None else read_table(path, REPORT_COLUMNS)
    _require(df, path, ["community", "level"], "report community and level")
    raw = df["community"]
    n = len(df)
    rank = (
        pd.to_numeric(df["rank"], errors="coerce").to_numpy(dtype=np.float64)
        if "rank" in df.columns
        else np.full(n, np.nan)
    )
    rcomm = int_ids(raw, path, "community", missing=_MISSING)
    if (rcomm == _MISSING).any():  # -1 ("no community") is a value graphrag wrote; null is not
        raise IndexInputError(path, "column 'community' has missing (null/NaN) community numbers")
    out = pd.DataFrame(
        {
            "community": rcomm,
            "level": levels(df["level"], path),
            "title": text_column(df.get("title"), n),
            "rank": rank,
            "content": text_column(df.get("full_content"), n),  # arrow-backed from parquet: no copies
        }
    )
    out["content_chars"] = out["content"].str.len().fillna(0).astype(np.int64)
    return out, _id_kind(raw)


def _entities(files) -> pd.DataFrame | None:
    """The entities frame (``id``, ``title``, ``text_unit_ids``), or None without an entities table."""
    path = files.tables.get("entities")
    if path is None:
        return None
    df = read_table(path, ENTITY_COLUMNS)
    n = len(df)
    out = pd.DataFrame(
        {"id": text_column(df.get("id"), n), "title": text_column(df.get("title", df.get("name")), n)}
    )
    tu = df.get("text_unit_ids")
    out["text_unit_ids"] = None if tu is None else id_lists(tu, path, "text_unit_ids")
    return out


def _entity_counts(communities: pd.DataFrame, members: pd.DataFrame, lens: np.ndarray | None) -> np.ndarray:
    """Membership rows per community number, for each communities row. ``lens``: each row's
    number of entity_ids when the membership rows are those lists in row order; with distinct
    community numbers that is the count itself (no grouping of the membership rows)."""
    if (
        lens is not None
        and len(lens) == len(communities)
        and not has_duplicates(communities["community"].to_numpy())
    ):
        return np.asarray(lens, dtype=np.int64)
    counts = members.groupby("community").size()
    return communities["community"].map(counts).fillna(0).astype(np.int64).to_numpy()


def load_index(path: str | os.PathLike, progress=None) -> IndexModel:
    """Read an index directory (project root, output dir or 0.x timestamped layout) into a
    complete :class:`IndexModel`. ``progress``: None or a callable told of each remote file read."""
    from graphrag_audit.io.remote import location_of

    remote = location_of(path)  # Azure Blob Storage or S3: read in place (io/remote.py)
    files = remote_index_files(remote, progress) if remote is not None else locate_index(path)
    schemas = {name: _schema(p) for name, p in files.tables.items()}
    if "communities" not in files.tables and "nodes" not in files.tables:
        raise IndexInputError(
            files.output_dir,
            "no communities table and no create_final_nodes: the community tree cannot be rebuilt",
        )
    generation = detect_generation(files.tables, schemas)
    read_nodes = generation.before_2 or "communities" not in files.tables
    # Tables are read in this order, so errors come in it: nodes, communities, reports, entities.
    nodes = _nodes(files) if read_nodes else None
    communities, id_kind, children, members, member_lens = _communities(files)
    reports, rep_id_kind = _reports(files)
    entities = _entities(files)
    key_match = None
    if members is not None and entities is not None:  # keyed by entity id
        key_match = match_entity_keys(members["entity"], entities["id"])
    # create_final_nodes is only the roll-up's input when the communities table has both the
    # members (entity_ids) and the tree (parent), as graphrag 1.x writes it
    community_columns = schemas.get("communities", {})
    rollup = None
    if nodes is not None and "entity_ids" in community_columns and "parent" in community_columns:
        rollup = _in_level_order(_rollup_with_entity_rows(_rollup_rows(nodes), entities))
        nodes = None
    if generation.label == "0.1-0.4":
        id_kind = "string"

    # membership rows (entity sets of communities)
    member_key = "id"
    if members is None:
        if nodes is None:
            raise IndexInputError(
                files.tables["communities"],
                "no 'entity_ids' column and no create_final_nodes: community members unknown",
            )
        members = nodes.loc[nodes["community"] >= 0, ["entity", "community", "level"]].reset_index(drop=True)
        member_key = "title"
    if communities is None:  # 0.1-0.2: hierarchy only in the nodes table
        if not len(members):
            raise IndexInputError(
                files.tables["nodes"], "no entity belongs to a community: there is no community tree to audit"
            )
        cl = members[["community", "level"]].drop_duplicates("community").sort_values(["level", "community"])
        communities = pd.DataFrame(
            {
                "community": cl["community"].to_numpy(),
                "level": cl["level"].to_numpy(),
                "parent": -1,
                "title": [f"Community {c}" for c in cl["community"]],
                "period": "",
                "size": np.nan,
            }
        )
    communities = communities.reset_index(drop=True)

    if member_key == "title" and entities is not None:  # keyed by entity title
        key_match = match_entity_keys(members["entity"], entities["title"])

    # roll-up rows read by graphrag < 2.0
    if nodes is not None:
        rollup = _in_level_order(_rollup_rows(nodes))
    elif rollup is None:
        rollup = members[["entity", "community", "level"]]  # never modified: no copy needed

    communities["n_entities"] = _entity_counts(
        communities, members, member_lens if member_key == "id" else None
    )
    communities["children"] = children
    has_parent = "parent" in community_columns
    if has_parent:
        forest = CommunityForest.from_parent_column(communities)
    else:  # 0.x-0.9: derive from the per-level membership rows (the nodes table when present)
        rows = nodes[nodes["community"] >= 0] if nodes is not None else members
        unknown = np.setdiff1d(rows["community"].to_numpy(), communities["community"].to_numpy())
        if len(unknown) and nodes is not None and "communities" in files.tables:
            shown = ", ".join(str(int(c)) for c in unknown[:8]) + (" …" if len(unknown) > 8 else "")
            raise IndexInputError(
                files.tables["nodes"],
                f"{len(unknown)} community number(s) here have no row in "
                f"{files.tables['communities'].name}: {shown}",
            )
        forest = CommunityForest.from_membership(communities, rows)
        # parent column from the derived tree (the parent of a single-parent community), −1 else
        heads, n_in = np.unique(forest.edge_children, return_counts=True)
        single = pd.Series(forest.edge_parents, index=forest.edge_children)[
            np.isin(forest.edge_children, heads[n_in == 1])
        ]
        communities["parent"] = communities["community"].map(single).fillna(-1).astype(np.int64).to_numpy()
    return IndexModel(
        path=files.requested,
        output_dir=files.output_dir,
        files=dict(files.tables),
        settings_file=files.settings_file,
        notes=files.notes,
        generation=generation,
        communities=communities,
        members=members,
        member_key=member_key,
        rollup_rows=rollup,
        reports=reports,
        entities=entities,
        id_kind="string" if (id_kind == "string" or rep_id_kind == "string") else "int",
        forest=forest,
        tree_source="parent" if has_parent else "membership",
        has_reports_table="reports" in files.tables,
        has_children_column=children is not None,
        schemas=schemas,
        key_match=key_match,
        table_format=files.table_format,
        format_differences=files.format_differences,
    )
