"""Tiny hand-made indexes for tests, written with plain pandas (independent of graphrag_audit).

A tree is given as {community: (level, parent, [entities])}; reports default to one per
community. Layouts: "3.x" (communities/community_reports/entities parquet) and "1.x"
(create_final_* with a nodes table of per-entity-per-level rows, −1 at level 0 for unclustered).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def write_v3(
    out: Path,
    tree: dict,
    reports: list[tuple[int, int]] | None = None,
    entities: list[str] | None = None,
    report_titles: dict | None = None,
    children: dict | None = None,
) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for c, (lv, parent, ents) in tree.items():
        kids = (
            sorted(k for k, (_, p, _) in tree.items() if p == c) if children is None else children.get(c, [])
        )
        rows.append(
            {
                "id": f"uuid-{c}",
                "human_readable_id": c,
                "community": c,
                "level": lv,
                "parent": parent,
                "children": kids,
                "title": f"Community {c}",
                "entity_ids": list(ents),
                "relationship_ids": [],
                "text_unit_ids": [],
                "period": "2025-01-01",
                "size": len(ents),
            }
        )
    pd.DataFrame(rows).to_parquet(out / "communities.parquet", index=False)
    if reports is None:
        reports = [(c, lv) for c, (lv, _, _) in tree.items()]
    titles = report_titles or {}
    rep = pd.DataFrame(
        [
            {
                "id": f"r-{i}",
                "human_readable_id": c,
                "community": c,
                "level": lv,
                "parent": tree.get(c, (0, -1, []))[1],
                "children": [],
                "title": titles.get(c, f"Report {c}"),
                "summary": "s",
                "full_content": f"# Report {c}\n\nSome content about community {c}.",
                "rank": 5.0,
                "rating_explanation": "r",
                "findings": [],
                "full_content_json": "{}",
                "period": "2025-01-01",
                "size": len(tree.get(c, (0, -1, []))[2]),
            }
            for i, (c, lv) in enumerate(reports)
        ]
    )
    if rep.empty:
        rep = pd.DataFrame(
            {
                "community": pd.Series([], dtype="int64"),
                "level": pd.Series([], dtype="int64"),
                "title": pd.Series([], dtype=str),
                "full_content": pd.Series([], dtype=str),
                "rank": pd.Series([], dtype="float64"),
            }
        )
    rep.to_parquet(out / "community_reports.parquet", index=False)
    ents = entities if entities is not None else sorted({e for (_, _, es) in tree.values() for e in es})
    pd.DataFrame(
        {
            "id": ents,
            "human_readable_id": range(len(ents)),
            "title": ents,
            "type": "THING",
            "description": "d",
            "text_unit_ids": [["t1"] for _ in ents],
            "frequency": 1,
            "degree": 1,
        }
    ).to_parquet(out / "entities.parquet", index=False)
    return out


def write_v1(
    out: Path,
    tree: dict,
    reports: list[tuple[int, int]] | None = None,
    entities: list[str] | None = None,
    nodes: list[tuple[str, int, int]] | None = None,
) -> Path:
    """graphrag 1.x layout. ``nodes`` overrides the per-entity rows (title, community, level)."""
    out.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "id": f"uuid-{c}",
            "human_readable_id": c,
            "community": c,
            "parent": parent,
            "level": lv,
            "title": f"Community {c}",
            "entity_ids": list(ents),
            "relationship_ids": [],
            "text_unit_ids": [],
            "period": "2025-01-01",
            "size": len(ents),
        }
        for c, (lv, parent, ents) in tree.items()
    ]
    pd.DataFrame(rows).to_parquet(out / "create_final_communities.parquet", index=False)
    if reports is None:
        reports = [(c, lv) for c, (lv, _, _) in tree.items()]
    pd.DataFrame(
        [
            {
                "id": f"r-{i}",
                "human_readable_id": c,
                "community": c,
                "parent": tree.get(c, (0, -1, []))[1],
                "level": lv,
                "title": f"Report {c}",
                "summary": "s",
                "full_content": f"content {c}",
                "rank": 5.0,
                "rank_explanation": "r",
                "findings": [],
                "full_content_json": "{}",
                "period": "2025-01-01",
                "size": 1,
            }
            for i, (c, lv) in enumerate(reports)
        ],
        columns=[
            "id",
            "human_readable_id",
            "community",
            "parent",
            "level",
            "title",
            "summary",
            "full_content",
            "rank",
            "rank_explanation",
            "findings",
            "full_content_json",
            "period",
            "size",
        ],
    ).astype({"community": "int64", "level": "int64", "rank": "float64"}).to_parquet(
        out / "create_final_community_reports.parquet", index=False
    )
    ents = entities if entities is not None else sorted({e for (_, _, es) in tree.values() for e in es})
    if nodes is None:
        nodes = []
        for e in ents:
            mine = [(c, lv) for c, (lv, _, es) in tree.items() if e in es]
            if not mine:
                nodes.append((e, -1, 0))
            for c, lv in mine:
                nodes.append((e, c, lv))
    pd.DataFrame(
        [
            {
                "id": f"n-{i}",
                "human_readable_id": i,
                "title": t,
                "community": c,
                "level": lv,
                "degree": 1,
                "x": 0.0,
                "y": 0.0,
            }
            for i, (t, c, lv) in enumerate(nodes)
        ]
    ).to_parquet(out / "create_final_nodes.parquet", index=False)
    pd.DataFrame(
        {
            "id": ents,
            "human_readable_id": range(len(ents)),
            "title": ents,
            "type": "T",
            "description": "d",
            "text_unit_ids": [["t1"] for _ in ents],
        }
    ).to_parquet(out / "create_final_entities.parquet", index=False)
    return out


# The seed example of the issue tracker: C5{A,B,C}, C6{D} at level 0; C20{A,B}, C21{C}, C22{D}
# at level 1; C77{A}, C78{B} at level 2.
SEED = {
    5: (0, -1, ["A", "B", "C"]),
    6: (0, -1, ["D"]),
    20: (1, 5, ["A", "B"]),
    21: (1, 5, ["C"]),
    22: (1, 6, ["D"]),
    77: (2, 20, ["A"]),
    78: (2, 20, ["B"]),
}


def write_update_previous(real: Path, out: Path) -> set:
    """The first ``period``'s communities of a merged 0.5-0.9 ``graphrag update`` output (``real``),
    written to ``out`` as an index of its own: the forest the update started from. Returns their
    numbers."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    comm = pq.read_table(real / "create_final_communities.parquet").to_pandas()
    first = sorted(comm["period"].unique())[0]
    keep = set(comm.loc[comm["period"] == first, "community"].astype(int))
    out.mkdir()
    for f in sorted(real.glob("*.parquet")):
        t = pq.read_table(f)
        if f.name in (
            "create_final_communities.parquet",
            "create_final_community_reports.parquet",
            "create_final_nodes.parquet",
        ):
            com = pd.to_numeric(pd.Series(t.column("community").to_pylist()), errors="coerce")
            mask = (com.isin(keep) | com.isna() | (com < 0)).to_numpy()
            pq.write_table(t.filter(pa.array(mask)), out / f.name)
        else:
            pq.write_table(t, out / f.name)
    return keep
