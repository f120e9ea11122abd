"""Deep community trees for the scale tests (issue 14), written column by column with pyarrow
(no Python row objects, independent of graphrag_audit).

* :func:`parent_chain_index`: one parent chain of ``n`` communities (0 <- 1 <- 2 ...), every
  community at level 0 with one entity of its own. It looks like a graphrag 3.x table (ids,
  titles, entity_ids, children, one report each) but no valid tree is that deep (levels stop at
  1000), so it is damaged: every child has the wrong level and holds an entity its parent lacks.
  Its depth is ``n - 1`` parent steps.
* :func:`single_child_chains_index`: ``chains`` single-child chains of ``levels`` levels each, a
  valid graphrag 3.x index: community ``level * chains + k`` is chain ``k``'s community at
  ``level``, its parent is the one above (child number > parent number), every community of a
  chain holds the chain's ``entities_per_chain`` entities, one report each.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def _lists(offsets: np.ndarray, values: pa.Array) -> pa.ListArray:
    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), values)


def _write(
    d: Path,
    comm: np.ndarray,
    level: np.ndarray,
    parent: np.ndarray,
    children: pa.ListArray,
    entity_ids: pa.ListArray,
    entities: list[str],
) -> Path:
    n = len(comm)
    titles = pa.array([f"Community {c}" for c in comm.tolist()], type=pa.string())
    d.mkdir(parents=True)
    pq.write_table(
        pa.table(
            {
                "id": pa.array([f"uuid-{c}" for c in comm.tolist()], type=pa.string()),
                "human_readable_id": pa.array(comm, type=pa.int64()),
                "community": pa.array(comm, type=pa.int64()),
                "level": pa.array(level, type=pa.int64()),
                "parent": pa.array(parent, type=pa.int64()),
                "children": children,
                "title": titles,
                "entity_ids": entity_ids,
                "period": pa.array(["2026-01-09"] * n, type=pa.string()),
                "size": pa.array(np.diff(entity_ids.offsets.to_numpy()), type=pa.int64()),
            }
        ),
        d / "communities.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "id": pa.array([f"r-{c}" for c in comm.tolist()], type=pa.string()),
                "community": pa.array(comm, type=pa.int64()),
                "level": pa.array(level, type=pa.int64()),
                "title": pa.array([f"Report {c}" for c in comm.tolist()], type=pa.string()),
                "full_content": pa.array(
                    [f"# Report {c}\n\nAbout community {c}." for c in comm.tolist()], type=pa.string()
                ),
                "rank": pa.array(np.full(n, 5.0), type=pa.float64()),
            }
        ),
        d / "community_reports.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "id": pa.array(entities, type=pa.string()),
                "title": pa.array([e.upper() for e in entities], type=pa.string()),
                "text_unit_ids": _lists(np.arange(len(entities) + 1), pa.array(["t1"] * len(entities))),
            }
        ),
        d / "entities.parquet",
    )
    return d


def parent_chain_index(d: Path, n: int) -> Path:
    comm = np.arange(n, dtype=np.int64)
    parent = comm - 1  # 0 is the root (-1)
    kids = pa.array(comm[1:], type=pa.int64())
    child_off = np.append(np.arange(n, dtype=np.int64), n - 1)  # one child each, none for the last
    entities = [f"e{i}" for i in range(n)]
    return _write(
        d,
        comm,
        np.zeros(n, dtype=np.int64),
        parent,
        _lists(child_off, kids),
        _lists(np.arange(n + 1), pa.array(entities, type=pa.string())),
        entities,
    )


def single_child_chains_index(d: Path, chains: int, levels: int, entities_per_chain: int = 5) -> Path:
    n = chains * levels
    comm = np.arange(n, dtype=np.int64)
    level = comm // chains
    parent = np.where(level > 0, comm - chains, -1)
    has_kid = level < levels - 1
    child_off = np.concatenate([[0], np.cumsum(has_kid)])
    kids = pa.array(comm[has_kid] + chains, type=pa.int64())
    k = comm % chains
    entities = [f"c{j}-e{i}" for j in range(chains) for i in range(entities_per_chain)]
    ent_codes = (k[:, None] * entities_per_chain + np.arange(entities_per_chain)).ravel()
    ent_values = pa.array(entities, type=pa.string()).take(pa.array(ent_codes))
    return _write(
        d,
        comm,
        level,
        parent,
        _lists(child_off, kids),
        _lists(np.arange(n + 1) * entities_per_chain, ent_values),
        entities,
    )


def parent_cycle_index(d: Path, n: int) -> Path:
    """:func:`parent_chain_index` closed into one loop: community 0's parent is ``n - 1``."""
    out = parent_chain_index(d, n)
    t = pq.read_table(out / "communities.parquet")
    parent = t.column("parent").to_numpy().copy()
    parent[0] = n - 1
    t = t.set_column(t.schema.get_field_index("parent"), "parent", pa.array(parent, type=pa.int64()))
    pq.write_table(t, out / "communities.parquet")
    return out
