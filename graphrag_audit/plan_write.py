"""Hand a plan to graphrag: write a new index directory whose reports are exactly the plan.

What is written into ``OUT_DIR`` (never the source directory):

* ``community_reports.parquet`` and ``communities.parquet``: the source rows of the plan's
  communities only, in source row order, every column kept with the source's arrow schema.
  Two columns are made consistent with the smaller table (both tables, where present):
  ``parent`` becomes -1 when the parent is not in the written table (always, since a frontier
  never holds a community together with its ancestor) and ``children`` keeps only children
  present in the table (so it is empty). Levels, ``entity_ids``, titles, sizes stay as they were.
* every other file and folder of the source output directory (entities, relationships,
  text_units, covariates, documents, vector stores, stats) copied unchanged.
* ``graphrag_audit_plan.json``: where the plan came from (source, budget, communities, the
  original parent of each community).

Why this makes graphrag >= 2.0 send exactly the plan: ``read_indexer_reports`` keeps a report
when its level is <= N and its community has a communities row with level <= N (inner join
on ``community`` after a no-op roll-up by title). Every written report has its community's row
in the written communities table, so with ``community_level=None`` (Python API, no level
filter) or any N >= the largest written level (CLI ``--community-level``), every written
report — the plan — is selected, in the same row order, with the same occurrence weights
(entity text units and ``entity_ids`` are unchanged), hence the same seed-86 shuffle, batches
and map calls as planned.

Refused: graphrag < 2.0 generations (graphrag 0.x/1.x select reports through
``create_final_nodes``, which a plan cannot express without rewriting it), CSV tables, an
``OUT_DIR`` that is or lies inside the source directory (or contains it), and an existing
non-empty ``OUT_DIR`` unless ``force`` (then files of the same name are overwritten; nothing
else is deleted).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from graphrag_audit.errors import IndexInputError
from graphrag_audit.model import IndexModel

__all__ = ["MANIFEST_NAME", "PlanWriteError", "WriteResult", "write_plan", "check_out_dir"]

MANIFEST_NAME = "graphrag_audit_plan.json"


class PlanWriteError(IndexInputError):
    """The plan cannot be written where or how it was asked (one line, names the path)."""


@dataclass
class WriteResult:
    out_dir: Path
    tables: dict[str, Path]
    copied: list[str]
    reports: int
    communities: int
    max_level: int  # the largest level among written rows: the CLI needs --community-level >= this
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"out_dir": str(self.out_dir), "tables": {k: v.name for k, v in self.tables.items()},
                "copied": self.copied, "reports": self.reports, "communities": self.communities,
                "max_level": self.max_level, "notes": self.notes}


def _resolved(p: Path) -> Path:
    try:
        return Path(os.path.realpath(p))
    except OSError:
        return p.absolute()


def check_out_dir(model: IndexModel, out_dir: Path, force: bool = False) -> Path:
    """Refuse an ``out_dir`` that is, lies inside, or contains the source index directory, a file,
    or a non-empty directory (unless ``force``). Returns the resolved path."""
    out = _resolved(Path(out_dir))
    for src in {_resolved(model.output_dir), _resolved(Path(model.path))}:
        if out == src or src in out.parents:
            raise PlanWriteError(out_dir, f"refusing to write the plan into the source index directory {src}")
        if out in src.parents:
            raise PlanWriteError(out_dir, f"refusing to write the plan into a directory that contains the source "
                                          f"index {src}")
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise PlanWriteError(out_dir, "exists and is not a directory")
        try:
            non_empty = any(out.iterdir())
        except OSError as exc:
            raise PlanWriteError(out_dir, f"cannot list the directory ({exc.strerror or exc})") from None
        if non_empty and not force:
            raise PlanWriteError(out_dir, "exists and is not empty (use --force to write into it anyway)")
    return out


def _check_source(model: IndexModel) -> tuple[Path, Path]:
    if model.generation.before_2:
        raise PlanWriteError(model.output_dir, f"--write needs a graphrag >= 2.0 index (this one is "
                             f"{model.generation.label}): graphrag < 2.0 selects reports through create_final_nodes, "
                             "which a plan cannot express without rewriting it")
    comm = model.files.get("communities")
    rep = model.files.get("reports")
    if comm is None or rep is None or not model.has_reports_table:
        raise PlanWriteError(model.output_dir, "--write needs both a communities and a community_reports table")
    for p in (comm, rep):
        if p.suffix != ".parquet":
            raise PlanWriteError(p, "--write supports parquet tables only (this index stores CSV)")
    return comm, rep


def _pandas_metadata(schema: pa.Schema, n_rows: int) -> pa.Schema:
    """Keep the source schema; fix a pandas RangeIndex length so pandas reads the rows back."""
    meta = dict(schema.metadata or {})
    raw = meta.get(b"pandas")
    if raw is None:
        return schema
    try:
        doc = json.loads(raw)
    except ValueError:
        return schema
    changed = False
    for ix in doc.get("index_columns", []):
        if isinstance(ix, dict) and ix.get("kind") == "range":
            ix.update({"start": 0, "stop": int(n_rows), "step": 1})
            changed = True
    if not changed:
        return schema
    meta[b"pandas"] = json.dumps(doc).encode("utf-8")
    return schema.with_metadata(meta)


def _consistent(table: pa.Table, kept: set[int], notes: list[str], name: str) -> pa.Table:
    """``parent`` -> -1 when absent from ``kept``; ``children`` filtered to ``kept``."""
    names = table.column_names
    if "parent" in names:
        col = table.column("parent")
        if pa.types.is_integer(col.type):
            inside = pc.is_in(pc.cast(col, pa.int64()), value_set=pa.array(sorted(kept), type=pa.int64()))
            new = pc.if_else(pc.fill_null(inside, False), col, pa.scalar(-1, type=col.type))
            table = table.set_column(names.index("parent"), table.schema.field("parent"), new)
        else:
            notes.append(f"{name}: 'parent' column of type {col.type} kept unchanged")
    if "children" in names:
        col = table.column("children")
        typ = col.type
        if pa.types.is_list(typ) or pa.types.is_large_list(typ):
            vals = col.to_pylist()
            new_vals = [None if v is None else [k for k in v if k is not None and _as_int(k) in kept] for v in vals]
            new = pa.array(new_vals, type=typ)
            table = table.set_column(names.index("children"), table.schema.field("children"), new)
        else:
            notes.append(f"{name}: 'children' column of type {typ} kept unchanged")
    return table


def _as_int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _filtered(path: Path, mask: np.ndarray, kept: set[int], notes: list[str], name: str) -> pa.Table:
    try:
        table = pq.read_table(path)
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise PlanWriteError(path, f"unreadable parquet data ({exc})") from None
    if table.num_rows != len(mask):
        raise PlanWriteError(path, f"has {table.num_rows} rows but the loaded model has {len(mask)}: "
                                   "the file changed while planning")
    out = table.filter(pa.array(mask))
    out = _consistent(out, kept, notes, name)
    return out.replace_schema_metadata(_pandas_metadata(table.schema, out.num_rows).metadata)


def write_plan(model: IndexModel, communities, out_dir: Path, *, force: bool = False,
               provenance: dict | None = None) -> WriteResult:
    """Write the hand-off directory for the plan's ``communities`` (see the module docstring)."""
    comm_path, rep_path = _check_source(model)
    out = check_out_dir(model, out_dir, force)
    plan = {int(c) for c in communities}
    notes: list[str] = []
    cmask = np.isin(model.communities["community"].to_numpy(dtype=np.int64), list(plan))
    rmask = np.isin(model.reports["community"].to_numpy(dtype=np.int64), list(plan))
    missing = plan - {int(c) for c in model.communities["community"].to_numpy()[cmask]}
    if missing:
        raise PlanWriteError(comm_path, f"plan communities without a communities row: {sorted(missing)[:8]}")
    comm_table = _filtered(comm_path, cmask, plan, notes, comm_path.name)
    rep_table = _filtered(rep_path, rmask, plan, notes, rep_path.name)

    try:
        out.mkdir(parents=True, exist_ok=True)
        copied = []
        skip = {comm_path.name, rep_path.name}
        for item in sorted(model.output_dir.iterdir()):
            if item.name in skip or item.name == MANIFEST_NAME:
                continue
            target = out / item.name
            if item.is_dir():
                shutil.copytree(item, target, dirs_exist_ok=True, copy_function=shutil.copyfile)
            else:
                shutil.copyfile(item, target)
            copied.append(item.name)
        pq.write_table(comm_table, out / comm_path.name)
        pq.write_table(rep_table, out / rep_path.name)
        levels = np.concatenate([model.communities["level"].to_numpy()[cmask], model.reports["level"].to_numpy()[rmask]])
        max_level = int(levels.max()) if len(levels) else 0
        parents = dict(zip(model.communities["community"].to_numpy()[cmask].tolist(),
                           model.communities["parent"].to_numpy()[cmask].tolist()))
        manifest = {
            "tool": "graphrag-audit plan",
            "source": str(_resolved(model.output_dir)),
            "communities": sorted(plan),
            "original_parent": {str(k): int(v) for k, v in sorted(parents.items())},
            "report_rows": int(rmask.sum()),
            "max_level": max_level,
            "graphrag_cli": f"graphrag query --method global --data {out} --community-level {max_level} \"<question>\"",
            **(provenance or {}),
        }
        (out / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, ensure_ascii=True) + "\n", encoding="utf-8")
    except OSError as exc:
        raise PlanWriteError(out_dir, f"cannot write ({exc.strerror or exc})") from None
    return WriteResult(out_dir=out, tables={"communities": out / comm_path.name, "reports": out / rep_path.name},
                       copied=copied, reports=int(rmask.sum()), communities=int(cmask.sum()), max_level=max_level,
                       notes=notes)
