"""``plan --write``: a new index folder ``OUT_DIR`` whose reports are exactly the plan.

``community_reports`` and ``communities`` (graphrag < 2.0 also ``create_final_nodes``) keep the source rows
of the plan's communities in source order, ``parent`` -1 when the parent is not written, ``children``
filtered to written ones; entities are copied; every other source entry is linked. graphrag's
``read_indexer_reports`` (``cli/query.py`` 1.x-3.x) keeps a report whose community has a row at level <= N,
so at ``community_level=None`` or N >= the largest written level it selects the plan, in the same order with
the same weights (the same seed-86 shuffle, batches and map calls). 1.2.0 rolls each entity up to its largest
community: a plan that does not survive that roll-up is refused. Refused too: string ids (0.1-0.4), an index
without communities or reports, and every ``OUT_DIR`` ``io.safe_write.DirectoryWriter`` refuses.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.bounded import open_regular
from graphrag_audit.io.safe_write import MAX_SCAN_ENTRIES, DirectoryWriter, Guard, WriteError
from graphrag_audit.model.index import IndexModel

MANIFEST_NAME = "graphrag_audit_plan.json"


class PlanWriteError(WriteError):
    """The plan cannot be written where or how it was asked."""


@dataclass
class WriteResult:
    """What :func:`write_plan` wrote; :meth:`to_dict` in this field order is the JSON output."""

    out_dir: Path
    tables: dict[str, Path]
    copied: list[str]
    linked: list[str]  # source entries linked (directories end in '/')
    left_out: list[str]  # source entries neither written, copied nor linked
    reports: int
    communities: int
    max_level: int  # the largest level among written rows: the CLI needs --community-level >= this
    notes: list[str]
    generation: str
    table_format: str
    commands: list[dict]  # query_commands(): per graphrag CLI generation
    copied_bytes: int
    linked_bytes: int  # what the linked entries hold (not duplicated)

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**d, "out_dir": str(self.out_dir), "tables": {k: v.name for k, v in self.tables.items()}}


def _inside(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip(os.sep) + os.sep)


def check_out_dir(model: IndexModel, out_dir: Path, force: bool = False, guard: Guard | None = None) -> Path:
    """Refuse now, creating nothing, what :func:`write_plan` would refuse; the resolved ``out_dir``."""
    _check_source(model)
    try:
        DirectoryWriter(out_dir, (guard or Guard()).protect_model(model), force=force).check()
    except WriteError as exc:
        raise PlanWriteError(exc.path, exc.problem) from None
    return Path(os.path.realpath(out_dir))


REMOTE_SOURCE = (
    "--write needs a local index folder: this index is read in place from {kind}, and the new "
    "index folder links the source's other files (graphs, text units, embeddings) beside the plan's "
    "tables; copy the index into a local folder and plan on that"
)


def check_local_source(index_dir) -> None:
    """Before reading anything: refuse ``--write`` on an index in Azure Blob Storage or S3."""
    from graphrag_audit.io.remote import location_of

    loc = location_of(index_dir)
    if loc is not None:
        raise PlanWriteError(loc.display, REMOTE_SOURCE.format(kind=loc.kind))


def _check_source(model: IndexModel) -> dict[str, Path]:
    """The tables to filter, by role (``communities``, ``reports`` and for graphrag < 2.0 ``nodes``)."""
    from graphrag_audit.io.remote import RemoteName

    if isinstance(model.output_dir, RemoteName):
        raise PlanWriteError(str(model.path), REMOTE_SOURCE.format(kind="remote storage"))
    comm = model.files.get("communities")
    rep = model.files.get("reports")
    if comm is None or rep is None or not model.has_reports_table:
        raise PlanWriteError(
            model.output_dir, "--write needs both a communities and a community_reports table"
        )
    out = {"communities": comm, "reports": rep}
    if model.generation.before_2:
        if model.id_kind != "int":
            raise PlanWriteError(
                model.output_dir,
                f"--write cannot hand a plan to graphrag {model.generation.label}: "
                "its community ids are strings, which graphrag 1.x's query does not read",
            )
        nodes = model.files.get("nodes")
        if nodes is None:
            raise PlanWriteError(
                model.output_dir,
                "--write needs create_final_nodes for a graphrag < 2.0 index "
                "(graphrag 1.x selects reports through it)",
            )
        out["nodes"] = nodes
    for p in out.values():
        if p.suffix not in (".parquet", ".csv"):
            raise PlanWriteError(p, "--write supports parquet and CSV tables only")
        if model.generation.before_2 and p.suffix != ".parquet":
            raise PlanWriteError(
                p, "--write supports parquet tables only for graphrag < 2.0 (graphrag 1.x reads parquet)"
            )
    return out


def _pandas_metadata(schema: pa.Schema, n_rows: int) -> pa.Schema:
    """The source schema with its pandas RangeIndex length fixed, so pandas reads the rows back."""
    meta = dict(schema.metadata or {})
    try:
        doc = json.loads(meta[b"pandas"])
    except (KeyError, ValueError, RecursionError):
        return schema
    ranges = [ix for ix in doc.get("index_columns", []) if isinstance(ix, dict) and ix.get("kind") == "range"]
    if not ranges:
        return schema
    for ix in ranges:
        ix.update({"start": 0, "stop": int(n_rows), "step": 1})
    meta[b"pandas"] = json.dumps(doc).encode("utf-8")
    return schema.with_metadata(meta)


def _community_number(v) -> int | None:
    """A table value or CSV field as an integer ("3", " 3", "3.0", 3), else None ("1_0", which int() reads
    as 10)."""
    t = str(v).strip()
    if "_" in t:
        return None
    try:
        return int(t)
    except ValueError:
        try:
            f = float(t)
        except ValueError:
            return None
        return int(f) if f.is_integer() else None


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
            new_vals = [None if v is None else [k for k in v if _community_number(k) in kept] for v in vals]
            new = pa.array(new_vals, type=typ)
            table = table.set_column(names.index("children"), table.schema.field("children"), new)
        else:
            notes.append(f"{name}: 'children' column of type {typ} kept unchanged")
    return table


@contextlib.contextmanager
def _open_regular(path: Path):
    """A source file opened as a regular file only (a FIFO or device put in its place would block)."""
    try:
        fh = open_regular(path)
    except OSError as exc:
        raise PlanWriteError(path, f"cannot read ({exc.strerror or exc})") from None
    except IndexInputError as exc:
        raise PlanWriteError(path, exc.problem) from None
    with fh:
        yield fh


def _filtered(path: Path, mask: np.ndarray | None, kept: set[int], notes: list[str], name: str) -> pa.Table:
    """The parquet table's rows under ``mask`` (None: the rows whose ``community`` is in ``kept``)."""
    with _open_regular(path) as fh:
        try:
            table = pq.read_table(fh)
        except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
            raise
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise PlanWriteError(path, f"unreadable parquet data ({exc})") from None
    if mask is None:
        if "community" not in table.column_names:
            raise PlanWriteError(path, "has no 'community' column")
        mask = np.array(
            [_community_number(v) in kept for v in table.column("community").to_pylist()], dtype=bool
        )
    if table.num_rows != len(mask):
        raise PlanWriteError(
            path,
            f"has {table.num_rows} rows but the loaded model has {len(mask)}: "
            "the file changed while planning",
        )
    out = table.filter(pa.array(mask))
    out = _consistent(out, kept, notes, name)
    return out.replace_schema_metadata(_pandas_metadata(table.schema, out.num_rows).metadata)


def _check_rollup(nodes: pa.Table, plan: set[int], reported: set[int], path: Path) -> None:
    """Refuse a plan graphrag 1.x's roll-up loses: ``read_indexer_reports`` without a level filter takes
    each node ``title``'s largest community (nulls as -1); every reported plan community must be one."""
    if "title" not in nodes.column_names:
        raise PlanWriteError(path, "has no 'title' column (graphrag 1.x rolls node rows up by title)")
    best: dict = {}
    for t, c in zip(nodes.column("title").to_pylist(), nodes.column("community").to_pylist()):
        if t is None:  # pandas' groupby drops null keys
            continue
        n = _community_number(c)
        n = -1 if n is None else n
        best[t] = max(best.get(t, n), n)
    lost = sorted(reported - set(best.values()))
    if lost:
        raise PlanWriteError(
            path,
            f"graphrag 1.x would not select plan communities {lost[:8]} from the rewritten "
            "node rows (no entity has one of them as its deepest plan community): this plan "
            "cannot be handed to graphrag 1.x",
        )


def _csv_filtered(path: Path, kept: set[int], expected_rows: int, notes: list[str]) -> bytes:
    """The CSV table's records whose ``community`` is in ``kept``, fields as the source wrote them,
    ``parent``/``children`` made consistent; ``expected_rows``: the kept rows the model counted."""
    with _open_regular(path) as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlanWriteError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    first_end = text.find("\n")
    newline = "\r\n" if first_end > 0 and text[first_end - 1] == "\r" else "\n"
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise PlanWriteError(path, f"unreadable CSV ({exc})") from None
    if not rows:
        raise PlanWriteError(path, "is empty")
    header, body = rows[0], [r for r in rows[1:] if r and any(f != "" for f in r)]  # pandas skips blank lines
    if "community" not in header:
        raise PlanWriteError(path, "has no 'community' column")
    ci = header.index("community")
    pi = header.index("parent") if "parent" in header else None
    hi = header.index("children") if "children" in header else None
    out_rows = []
    for r in body:
        if ci >= len(r) or _community_number(r[ci]) not in kept:
            continue
        r = list(r)
        if pi is not None and pi < len(r) and r[pi].strip() != "" and _community_number(r[pi]) not in kept:
            r[pi] = "-1"
        if hi is not None and hi < len(r) and r[hi].strip().startswith("["):
            sep = ", " if "," in r[hi] else " "
            inner = [int(x) for x in re.findall(r"-?\d+", r[hi]) if int(x) in kept]
            r[hi] = "[" + sep.join(str(x) for x in inner) + "]"
        out_rows.append(r)
    if len(out_rows) != expected_rows:
        raise PlanWriteError(
            path,
            f"{len(out_rows)} CSV records belong to the plan but the loaded model counts "
            f"{expected_rows}: the file changed while planning or cannot be split the same way",
        )
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator=newline)
    writer.writerow(header)
    writer.writerows(out_rows)
    return (("\ufeff" if bom else "") + buf.getvalue()).encode("utf-8")


# graphrag's query command, per CLI generation (the options of ``graphrag query`` in each
# version's graphrag/cli/main.py): 3.x takes the question as an argument (3.3.0); 2.x (2.7.2) and
# 1.x (1.2.0) take it as --query; all take --root, --method, --data and --community-level (default 2).
def query_commands(generation_label: str, table_format: str, out_dir, level: int) -> list[dict]:
    """The ``graphrag query`` commands that run global search over the written directory."""
    common = f"--root <your project> --method global --data {out_dir} --community-level {level}"
    v3 = {"graphrag": "3.x", "command": f'graphrag query "<question>" {common}'}
    v12 = f'graphrag query {common} --query "<question>"'
    if table_format == "csv":  # CSV output tables: graphrag >= 3.0.2's table_provider
        return [{**v3, "note": "the project's settings need table_provider: {type: csv} (graphrag >= 3.0.2)"}]
    if generation_label.startswith("3"):
        return [v3]
    if generation_label.startswith("2"):
        return [{"graphrag": "2.x", "command": v12}, v3]
    return [{"graphrag": "1.x", "command": v12}]


def _siblings(source: Path, carried: set[str]) -> tuple[list[str], list[str]]:
    """(entries to link, entries left out) of the source directory by name. Linked: regular files and
    directories, and links to one inside it. Left out (directories end in '/'): the other-format twin of a
    written table, this tool's temporary files, FIFOs, devices, links out, entries that cannot be examined."""
    link, left = [], []
    swap = {".parquet": ".csv", ".csv": ".parquet"}  # the other-format twins of the written tables
    twins = {Path(n).stem + swap[Path(n).suffix] for n in carried if Path(n).suffix in swap} - carried
    root = os.path.realpath(source)
    try:
        with os.scandir(source) as it:
            for i, entry in enumerate(it):
                if i >= MAX_SCAN_ENTRIES:
                    left.append(f"... (more than {MAX_SCAN_ENTRIES:,} entries; the rest not linked)")
                    break
                if entry.name in carried:
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISLNK(st.st_mode):
                        real = os.path.realpath(entry.path)
                        st = os.stat(real) if _inside(real, root) else st
                except (OSError, ValueError):
                    left.append(entry.name)
                    continue
                shown = entry.name + ("/" if stat.S_ISDIR(st.st_mode) else "")
                if (
                    entry.name in twins
                    or ".graphrag-audit-" in entry.name
                    or not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))
                ):
                    left.append(shown)
                else:
                    link.append(entry.name)
    except OSError:
        pass
    return sorted(link), sorted(left)


def _entry_size(path: str) -> int:
    """Bytes under a source entry (not following links; bounded walk)."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    if not stat.S_ISDIR(st.st_mode):
        return st.st_size if stat.S_ISREG(st.st_mode) else 0
    total, seen = 0, 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            seen += 1
            if seen > MAX_SCAN_ENTRIES:
                return total
            try:
                s = os.lstat(os.path.join(root, f))
            except OSError:
                continue
            if stat.S_ISREG(s.st_mode):
                total += s.st_size
    return total


def write_plan(
    model: IndexModel,
    communities,
    out_dir: Path,
    *,
    force: bool = False,
    provenance: dict | None = None,
    guard: Guard | None = None,
    verify: Callable[[Path, int], object] | None = None,
) -> WriteResult:
    """Write the hand-off directory for the plan's ``communities``. ``guard``: indexes to protect besides
    ``model``'s. ``verify(path, max_level)``: called on the written directory before it is published; it
    raises to refuse."""
    paths = _check_source(model)
    comm_path, rep_path = paths["communities"], paths["reports"]
    g = (guard or Guard()).protect_model(model)
    plan = {int(c) for c in communities}
    notes: list[str] = []
    cmask = np.isin(model.communities["community"].to_numpy(dtype=np.int64), list(plan))
    rmask = np.isin(model.reports["community"].to_numpy(dtype=np.int64), list(plan))
    missing = plan - {int(c) for c in model.communities["community"].to_numpy()[cmask]}
    if missing:
        raise PlanWriteError(comm_path, f"plan communities without a communities row: {sorted(missing)[:8]}")
    producers: dict[str, Any] = {}
    level_parts = [model.communities["level"].to_numpy()[cmask], model.reports["level"].to_numpy()[rmask]]
    for role, path, mask in (
        ("communities", comm_path, cmask),
        ("reports", rep_path, rmask),
        ("nodes", paths.get("nodes"), None),
    ):
        if path is None:
            continue
        if path.suffix == ".csv":
            producers[path.name] = _csv_filtered(path, plan, 0 if mask is None else int(mask.sum()), notes)
        else:
            table = _filtered(path, mask, plan, notes, path.name)
            if role == "nodes":
                if "level" in table.column_names:
                    level_parts.append(
                        np.array([v for v in table.column("level").to_pylist() if v is not None])
                    )
                _check_rollup(
                    table, plan, {int(c) for c in model.reports["community"].to_numpy()[rmask]}, path
                )
            producers[path.name] = (lambda t: lambda fh: pq.write_table(t, fh))(table)
    levels = np.concatenate([np.asarray(x, dtype=np.int64) for x in level_parts])
    max_level = int(levels.max()) if len(levels) else 0
    parents = dict(
        zip(
            model.communities["community"].to_numpy()[cmask].tolist(),
            model.communities["parent"].to_numpy()[cmask].tolist(),
        )
    )
    entities = model.files.get("entities")
    if entities is None:
        notes.append("the source has no entities table: graphrag's global search also reads entities")
    carried = set(producers) | {MANIFEST_NAME} | ({entities.name} if entities is not None else set())
    link_names, left_out = _siblings(model.output_dir, carried)
    source_real = Path(os.path.realpath(model.output_dir))
    copied: list[str] = []
    copied_bytes = 0
    linked: list[str] = []
    linked_bytes = 0
    try:
        with DirectoryWriter(out_dir, g, force=force) as w:
            final = w.final_path
            for name, data in producers.items():
                w.write_file(name, data)
            if entities is not None:
                if not _inside(os.path.realpath(entities), str(source_real)):
                    raise PlanWriteError(
                        entities, "is a symbolic link out of the source index directory: refusing to copy it"
                    )
                with _open_regular(entities) as fh:
                    w.write_file(entities.name, lambda out: shutil.copyfileobj(fh, out, 1 << 20))
                    copied_bytes += os.fstat(fh.fileno()).st_size
                copied.append(entities.name)
            for name in link_names:
                target = os.path.join(str(source_real), name)
                w.write_file(name, None, link=target)
                is_dir = os.path.isdir(target) and not os.path.islink(target)
                linked.append(name + ("/" if is_dir else ""))
                linked_bytes += _entry_size(target)
            commands = query_commands(model.generation.label, model.table_format, final, max_level)
            manifest = {
                "tool": "graphrag-audit plan",
                "source": str(source_real),
                "generation": model.generation.label,
                "table_format": model.table_format,
                "communities": sorted(plan),
                "original_parent": {str(k): int(v) for k, v in sorted(parents.items())},
                "report_rows": int(rmask.sum()),
                "max_level": max_level,
                "graphrag_cli": commands[0]["command"],
                "graphrag_commands": commands,
                "copied": copied,
                "linked": linked,
                "left_out": left_out,
                **(provenance or {}),
            }
            w.write_file(MANIFEST_NAME, json.dumps(manifest, indent=2, ensure_ascii=True) + "\n")
            out = w.commit(None if verify is None else lambda path: verify(path, max_level))
    except PlanWriteError:
        raise
    except WriteError as exc:
        raise PlanWriteError(exc.path, exc.problem) from None
    return WriteResult(
        out_dir=out,
        tables={role: out / path.name for role, path in paths.items()},
        copied=copied,
        reports=int(rmask.sum()),
        communities=int(cmask.sum()),
        max_level=max_level,
        notes=notes,
        left_out=left_out,
        linked=linked,
        generation=model.generation.label,
        table_format=model.table_format,
        commands=commands,
        copied_bytes=copied_bytes,
        linked_bytes=linked_bytes,
    )
