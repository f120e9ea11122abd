"""Write a bundle: the allowlisted tables and columns (``bundle/schema.py``), every value rebuilt
(``bundle/anonymise.py``); what is left out is only counted, never named (a name may carry the index's text).
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from graphrag_audit.bundle import schema
from graphrag_audit.bundle.anonymise import Anonymiser
from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.generation import detect_generation
from graphrag_audit.io.locate import IndexFiles, locate_index
from graphrag_audit.io.safe_write import DirectoryWriter, Guard
from graphrag_audit.io.tables import parquet_schema, read_arrow_table, read_csv_rows, table_columns

#: the default --max-size: the tables read, together
DEFAULT_MAX_BYTES = 2 * 1024**3
TABLE_SUFFIXES = (".parquet", ".csv")

#: why something was left out (the README counts them per reason)
FOLDER = "Folders (vector stores such as LanceDB hold the original text and embeddings; never copied)"
OTHER_FILE = "Files that are not index tables (never copied: they may hold original text)"
NOT_READ = "Tables graphrag's query path does not read (`--include-all` adds them)"
OPTIONAL = "Covariate (claims) tables: only local search with claims reads them (`--include-all` adds them)"
EMBEDDINGS = "Tables of embeddings (never copied: embeddings can be matched or inverted back to text)"
OTHER_FORMAT = "Tables in the other format (the audit reads one set: the bundle holds that one)"


@dataclass
class BundlePlan:
    """What a bundle of one index holds and leaves out."""

    files: IndexFiles
    generation: str = ""
    #: (source, kind or None for a table --include-all adds)
    tables: list[tuple[Path, str | None]] = field(default_factory=list)
    left_out: Counter = field(default_factory=Counter)  # reason -> count
    input_bytes: int = 0
    include_all: bool = False


@dataclass
class BundleResult:
    out: Path
    plan: BundlePlan
    written: dict[str, list[str]]  # file written -> its columns (allowlisted tables only)
    entities: int  # distinct entity names replaced by pseudonyms
    ids: int  # distinct ids replaced by pseudonyms
    keep_titles: bool
    dropped: Counter  # reason -> columns left out of the tables written
    added: list[str]  # what --include-all added: "file" or "file: column" (for the warning on stderr)


def plan_bundle(
    index_dir, *, include_all: bool = False, max_bytes: int | None = DEFAULT_MAX_BYTES
) -> BundlePlan:
    """Which files of the index go into the bundle; refuses (IndexInputError) above ``max_bytes``."""
    files = locate_index(index_dir)
    schemas = {  # column -> type ("csv" for a CSV column), as detect_generation reads them
        name: {n: "csv" for n in table_columns(p)}
        if p.suffix == ".csv"
        else {f.name: str(f.type) for f in parquet_schema(p)}
        for name, p in files.tables.items()
    }
    generation = detect_generation(files.tables, schemas).label
    plan = BundlePlan(files, generation, include_all=include_all)
    out_dir = files.output_dir
    suffix = "." + files.table_format
    try:
        entries = sorted(os.scandir(out_dir), key=lambda e: e.name)
    except OSError as exc:
        raise IndexInputError(out_dir, f"cannot list the folder ({exc.strerror or exc})") from None
    for e in entries:
        p = Path(e.path)
        try:
            is_file = e.is_file(follow_symlinks=True)
            is_dir = e.is_dir(follow_symlinks=True)
        except OSError:
            is_file = is_dir = False
        if is_dir:
            plan.left_out[FOLDER] += 1
            continue
        if not is_file or p.suffix not in TABLE_SUFFIXES:
            plan.left_out[OTHER_FILE] += 1
            continue
        if p.suffix != suffix:
            plan.left_out[OTHER_FORMAT] += 1
            continue
        kind = schema.kind_of(p.stem, generation)
        if kind is None and schema.is_embedding_name(p.stem):
            plan.left_out[EMBEDDINGS] += 1
            continue
        if kind is None and not include_all:
            plan.left_out[NOT_READ] += 1
            continue
        if kind in schema.OPTIONAL_KINDS and not include_all:
            plan.left_out[OPTIONAL] += 1
            continue
        plan.tables.append((p, kind))
        plan.input_bytes += e.stat(follow_symlinks=True).st_size
    if not any(kind for _, kind in plan.tables):
        raise IndexInputError(out_dir, "no index tables to bundle")
    if max_bytes is not None and plan.input_bytes > max_bytes:
        raise IndexInputError(
            out_dir,
            f"the tables to bundle hold {plan.input_bytes:,} bytes, more than --max-size {max_bytes:,}",
        )
    return plan


#: why a column was left out of a table written (the README counts them per reason)
COL_EMBEDDING = "Embedding columns (never copied: embeddings can be matched or inverted back to text)"
COL_NOT_READ = "Columns graphrag's query path does not read (`--include-all` adds them)"
COL_TYPE = "Columns of a type the bundle cannot rebuild (unions, run-end encoded, extension types)"
COL_INDEX = "Pandas index columns (`__index_level_0__`; never copied)"


def write_bundle(
    plan: BundlePlan,
    out,
    *,
    keep_titles: bool = False,
    force: bool = False,
    extra: Callable[[Path, BundleResult], dict[str, bytes]] | None = None,
) -> BundleResult:
    """Write the bundle to ``out``; ``extra(path, result)``: more files (name -> bytes) to write before it is published."""
    f = plan.files
    guard = Guard().protect(f.output_dir, f.tables.values(), f.settings_file)
    anon = Anonymiser()
    written: dict[str, list[str]] = {}
    dropped: Counter = Counter()
    added: list[str] = []
    # entity tables first, so that pseudonyms are numbered in entity order
    order = sorted(
        plan.tables, key=lambda pk: (pk[1] not in ("entities", "nodes"), pk[1] is None, pk[0].name)
    )
    w = DirectoryWriter(out, guard, force=force)
    w.check()
    with w:
        for src, kind in order:
            if kind is None:  # a table --include-all adds keeps its name
                name = src.name
                added.append(name)
            else:  # graphrag's own name, never the index's spelling
                legacy = not plan.generation.startswith(("2", "3"))
                name = (schema.LEGACY_PREFIX if legacy else "") + kind + src.suffix
            if src.suffix == ".csv":
                rows = read_csv_rows(src)
                names, types = (rows[0] if rows else []), {}
            else:
                table = read_arrow_table(src)
                names, types = table.schema.names, {f.name: f.type for f in table.schema}
            allowed = schema.ALLOWLIST[plan.generation].get(kind, ()) if kind else ()
            cols: dict[str, str] = {}  # the columns kept, with their roles
            for n in names:
                t = types.get(n)
                floats = (
                    t is not None
                    and (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))
                    and pa.types.is_floating(t.value_type)
                )
                if schema.is_embedding_name(n) or floats:  # an embedding: by name, or a list of floats
                    dropped[COL_EMBEDDING] += 1
                elif n.startswith("__index_level_"):
                    dropped[COL_INDEX] += 1
                elif n in allowed:
                    cols[n] = schema.role(kind or "", n, keep_titles=keep_titles)
                elif plan.include_all:
                    cols[n] = schema.role(kind or "", n, keep_titles=False)
                    if kind:
                        added.append(f"{name}: {n}")
                else:
                    dropped[COL_NOT_READ] += 1
            if src.suffix == ".csv":
                rows = anon.csv_rows(rows, cols)
                buf = io.StringIO(newline="")
                csv.writer(buf, lineterminator="\n").writerows(rows)
                w.write_file(name, buf.getvalue().encode("utf-8"))
                kept = rows[0] if rows else []
            else:
                new = anon.arrow_table(table, cols)
                dropped[COL_TYPE] += len(cols) - new.num_columns
                w.write_file(name, lambda fh, new=new: pq.write_table(new, fh, compression="snappy"))
                kept = new.schema.names
            if kind is not None:
                written[name] = [c for c in kept if c in allowed]
        written = dict(sorted(written.items()))
        result = BundleResult(Path(out), plan, written, anon.entities, anon.ids, keep_titles, +dropped, added)
        for fname, data in (extra(w.path, result) if extra else {}).items():
            w.write_file(fname, data)
        result.out = w.commit()
    return result


def readme(result: BundleResult, tool_version: str) -> str:
    """README.md of a bundle: how it was made, what was left out by kind and count (no name read from the index)."""
    plan = result.plan
    lines = [
        "# graphrag-audit bundle",
        "",
        f"Made by graphrag-audit {tool_version} (`graphrag-audit bundle`) from a GraphRAG index written by "
        f"graphrag {plan.generation} ({plan.files.table_format} tables). It holds only the tables and columns "
        "graphrag's query path reads for that version (and the audit needs), with the same ids, levels, "
        "parents, children, memberships, ranks, sizes and periods; every value in it was rebuilt.",
        "",
        "## What was replaced",
        "",
        "- Free text (report titles, summaries, full content, findings, descriptions, text units, entity "
        "types, ...): filler words with exactly the cl100k_base token count of the original text, alone "
        "and inside graphrag's report rows, so global search builds the same batches and map calls. "
        "ASCII punctuation, whitespace and line breaks stay; digits became 0; other symbols became ASCII "
        "punctuation.",
        (
            "- Entity names, community titles and report titles were kept (`--keep-titles`)."
            if result.keep_titles
            else f"- Entity names: {result.entities:,} stable pseudonyms (`Entity N`, the same in every table); "
            "community titles other than graphrag's `Community N`: `Community title N`."
        ),
        f"- Ids that are not UUIDs or numbers: {result.ids:,} stable pseudonyms (`id-N`, the same in every "
        "table and list).",
        "- Nulls, empty strings and list lengths are as in the index. No schema or field metadata is kept.",
        "",
        "| file | columns |",
        "|---|---|",
    ]
    for name, cols in result.written.items():
        lines.append(f"| {name} | {', '.join(cols) if cols else '(none)'} |")
    lines += ["", "## Left out", ""]
    if plan.left_out or result.dropped:
        lines += [f"- {why}: {n:,}" for why, n in sorted(plan.left_out.items())]
        lines += [f"- {why}: {n:,}" for why, n in sorted(result.dropped.items())]
    else:
        lines.append("- nothing")
    if result.added:
        lines += [
            "",
            f"`--include-all` added {len(result.added):,} more table(s) or column(s), their values "
            "rebuilt the same way but their names kept.",
        ]
    lines += [
        "",
        "Settings files are not part of a bundle: audit it with the same `--tokenizer` and "
        "`--max-context-tokens` as the index when its settings change them.",
        "",
        "## Files",
        "",
        "- `audit.json`, `audit.md`: `graphrag-audit levels` of this bundle.",
        "- See docs/bug-reports.md of graphrag-audit for how to file a graphrag bug with it.",
        "",
    ]
    return "\n".join(lines)
