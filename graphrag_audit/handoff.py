"""Hand a plan to graphrag: write a new index directory whose reports are exactly the plan.

What is written into ``OUT_DIR`` (never the source directory):

* ``community_reports.parquet`` and ``communities.parquet``: the source rows of the plan's
  communities only, in source row order, every column kept with the source's arrow schema.
  Two columns are made consistent with the smaller table (both tables, where present):
  ``parent`` becomes -1 when the parent is not in the written table (always, since a frontier
  never holds a community together with its ancestor) and ``children`` keeps only children
  present in the table (so it is empty). Levels, ``entity_ids``, titles, sizes stay as they were.
* ``entities.parquet`` (the source's entities table, whatever its name): copied byte for
  byte. graphrag's global search reads exactly these three tables (``run_global_search`` in
  graphrag 2.x/3.x ``cli/query.py``: entities, communities, community_reports). Only a regular
  file inside the source directory is copied (a link out of it, a FIFO or a device is refused),
  up to ``safe_write.MAX_COPY_BYTES``.
* every other file and folder of the source output directory (relationships, text_units,
  covariates, documents, vector stores, stats) is left out, and listed as left out
  (``WriteResult.left_out``, the manifest): local, DRIFT and basic search need them, global
  search does not.
* ``graphrag_audit_plan.json``: where the plan came from (source, budget, communities, the
  original parent of each community, what was copied and left out).

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
``OUT_DIR`` that is, lies inside or contains the source index directory (real paths and inodes,
see :mod:`graphrag_audit.io.safe_write`), an ``OUT_DIR`` that is a symbolic link, and an existing
non-empty ``OUT_DIR`` unless ``force`` (then files of the same name are replaced, links among
them replaced rather than followed; nothing else is deleted). How the directory is written
(a new one appears whole or not at all; concurrent runs; interruptions) is
:class:`graphrag_audit.io.safe_write.DirectoryWriter`.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from graphrag_audit.errors import IndexInputError
from graphrag_audit.model.index import IndexModel
from graphrag_audit.io.safe_write import MAX_SCAN_ENTRIES, DirectoryWriter, Guard, WriteError

__all__ = ["MANIFEST_NAME", "PlanWriteError", "WriteResult", "write_plan", "check_out_dir"]

MANIFEST_NAME = "graphrag_audit_plan.json"


class PlanWriteError(WriteError):
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
    left_out: list[str] = field(default_factory=list)  # source entries not needed by global search

    def to_dict(self) -> dict:
        return {"out_dir": str(self.out_dir), "tables": {k: v.name for k, v in self.tables.items()},
                "copied": self.copied, "left_out": self.left_out, "reports": self.reports,
                "communities": self.communities, "max_level": self.max_level, "notes": self.notes}


def _resolved(p: Path) -> Path:
    try:
        return Path(os.path.realpath(p))
    except OSError:
        return p.absolute()


def _guard(model: IndexModel, guard: Guard | None) -> Guard:
    return (guard if guard is not None else Guard()).protect_model(model)


def check_out_dir(model: IndexModel, out_dir: Path, force: bool = False, guard: Guard | None = None) -> Path:
    """Refuse now an ``out_dir`` that :func:`write_plan` would refuse: one that is, lies inside,
    or contains the source index directory (or any index ``guard`` protects), a symbolic link, a
    file, or a non-empty directory (unless ``force``). Nothing is created. Returns the resolved path."""
    try:
        DirectoryWriter(out_dir, _guard(model, guard), force=force).check()
    except PlanWriteError:
        raise
    except WriteError as exc:
        raise PlanWriteError(exc.path, exc.problem) from None
    return _resolved(Path(out_dir))


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


def _read_parquet(path: Path) -> pa.Table:
    """A source table, opened as a regular file only (a FIFO or device put in its place after
    loading would block or never end)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC)
    except OSError as exc:
        raise PlanWriteError(path, f"cannot read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PlanWriteError(path, "not a regular file")
        try:
            return pq.read_table(fh)
        except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
            raise
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise PlanWriteError(path, f"unreadable parquet data ({exc})") from None


def _filtered(path: Path, mask: np.ndarray, kept: set[int], notes: list[str], name: str) -> pa.Table:
    table = _read_parquet(path)
    if table.num_rows != len(mask):
        raise PlanWriteError(path, f"has {table.num_rows} rows but the loaded model has {len(mask)}: "
                                   "the file changed while planning")
    out = table.filter(pa.array(mask))
    out = _consistent(out, kept, notes, name)
    return out.replace_schema_metadata(_pandas_metadata(table.schema, out.num_rows).metadata)


def _left_out(source: Path, kept: set[str]) -> list[str]:
    """Names in the source directory the hand-off does not carry (directories end in '/')."""
    names = []
    try:
        with os.scandir(source) as it:
            for i, entry in enumerate(it):
                if i >= MAX_SCAN_ENTRIES:
                    names.append(f"... (more than {MAX_SCAN_ENTRIES:,} entries; the rest not listed)")
                    break
                if entry.name in kept:
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                names.append(entry.name + ("/" if is_dir else ""))
    except OSError:
        return names
    return sorted(names)


def write_plan(model: IndexModel, communities, out_dir: Path, *, force: bool = False,
               provenance: dict | None = None, guard: Guard | None = None,
               verify: Callable[[Path], object] | None = None) -> WriteResult:
    """Write the hand-off directory for the plan's ``communities`` (see the module docstring).

    ``guard``: indexes to protect besides ``model``'s (the CLI passes the one it checked
    before loading). ``verify(path)``: called on the written directory before it is published
    (a new ``out_dir``) or while it is still locked (an existing one); it raises to refuse."""
    comm_path, rep_path = _check_source(model)
    g = _guard(model, guard)
    plan = {int(c) for c in communities}
    notes: list[str] = []
    cmask = np.isin(model.communities["community"].to_numpy(dtype=np.int64), list(plan))
    rmask = np.isin(model.reports["community"].to_numpy(dtype=np.int64), list(plan))
    missing = plan - {int(c) for c in model.communities["community"].to_numpy()[cmask]}
    if missing:
        raise PlanWriteError(comm_path, f"plan communities without a communities row: {sorted(missing)[:8]}")
    comm_table = _filtered(comm_path, cmask, plan, notes, comm_path.name)
    rep_table = _filtered(rep_path, rmask, plan, notes, rep_path.name)
    levels = np.concatenate([model.communities["level"].to_numpy()[cmask], model.reports["level"].to_numpy()[rmask]])
    max_level = int(levels.max()) if len(levels) else 0
    parents = dict(zip(model.communities["community"].to_numpy()[cmask].tolist(),
                       model.communities["parent"].to_numpy()[cmask].tolist()))
    entities = model.files.get("entities")
    if entities is None:
        notes.append("the source has no entities table: graphrag's global search also reads entities")
    carried = {comm_path.name, rep_path.name, MANIFEST_NAME} | ({entities.name} if entities is not None else set())
    left_out = _left_out(model.output_dir, carried)
    copied: list[str] = []
    try:
        with DirectoryWriter(out_dir, g, force=force) as w:
            final = w.final_path
            w.write_file(comm_path.name, lambda fh: pq.write_table(comm_table, fh))
            w.write_file(rep_path.name, lambda fh: pq.write_table(rep_table, fh))
            if entities is not None:
                w.copy_file(entities.name, entities, model.output_dir)
                copied.append(entities.name)
            manifest = {
                "tool": "graphrag-audit plan",
                "source": str(_resolved(model.output_dir)),
                "communities": sorted(plan),
                "original_parent": {str(k): int(v) for k, v in sorted(parents.items())},
                "report_rows": int(rmask.sum()),
                "max_level": max_level,
                "graphrag_cli": f"graphrag query --method global --data {final} --community-level {max_level} "
                                f"\"<question>\"",
                "copied": copied,
                "left_out": left_out,
                **(provenance or {}),
            }
            w.write_file(MANIFEST_NAME, json.dumps(manifest, indent=2, ensure_ascii=True) + "\n")
            out = w.commit(verify)
    except PlanWriteError:
        raise
    except WriteError as exc:
        raise PlanWriteError(exc.path, exc.problem) from None
    return WriteResult(out_dir=out, tables={"communities": out / comm_path.name, "reports": out / rep_path.name},
                       copied=copied, reports=int(rmask.sum()), communities=int(cmask.sum()), max_level=max_level,
                       notes=notes, left_out=left_out)
