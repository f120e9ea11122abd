"""Write a bundle: the index's tables with their free text replaced, in a new directory.

The index is located as every command locates it (:func:`graphrag_audit.io.locate.locate_index`),
its tables read through :mod:`graphrag_audit.io.tables` (the same bounded reads) and the bundle
written only through :class:`graphrag_audit.io.safe_write.DirectoryWriter`: built in a temporary
directory beside OUT and renamed into place, never inside an index.
"""

from __future__ import annotations

import csv
import io
import os
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from graphrag_audit.bundle.anonymise import Anonymiser, table_kind
from graphrag_audit.bundle.parallel import second_process
from graphrag_audit.bundle.precount import TOKENIZER
from graphrag_audit.errors import IndexInputError
from graphrag_audit.graphrag.token_cache import seeded_token_session
from graphrag_audit.io.locate import IndexFiles, locate_index
from graphrag_audit.io.safe_write import DirectoryWriter, Guard
from graphrag_audit.io.tables import read_arrow_table, read_csv_rows

#: the default --max-size: the tables read, together
DEFAULT_MAX_BYTES = 2 * 1024**3
#: tables graphrag's query path does not read: left out unless --include-all
_OPTIONAL = ("embedding", "covariates")
TABLE_SUFFIXES = (".parquet", ".csv")


@dataclass
class BundlePlan:
    """What a bundle of one index holds and leaves out."""

    files: IndexFiles
    tables: list[Path] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (name, why)
    input_bytes: int = 0


@dataclass
class BundleResult:
    out: Path
    plan: BundlePlan
    replaced: dict[str, list[str]]  # file name -> columns replaced
    entities: int  # distinct entity names replaced by pseudonyms
    keep_titles: bool
    extra: tuple[str, ...]  # the other files written (audit, README)


def plan_bundle(index_dir, *, include_all: bool = False, max_bytes: int | None = DEFAULT_MAX_BYTES) -> BundlePlan:
    """Which files of the index go into the bundle; refuses (IndexInputError) above ``max_bytes``."""
    files = locate_index(index_dir)
    plan = BundlePlan(files)
    out_dir = files.output_dir
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
            plan.left_out.append((e.name + "/", "a folder (vector stores such as lancedb/ hold the original text; "
                                                "never copied)"))
            continue
        if not is_file or p.suffix not in TABLE_SUFFIXES:
            plan.left_out.append((e.name, "not an index table (never copied: it may hold original text)"))
            continue
        if not include_all and any(word in p.stem for word in _OPTIONAL):
            plan.left_out.append((e.name, "graphrag's query path does not read it (--include-all adds it)"))
            continue
        plan.tables.append(p)
        plan.input_bytes += e.stat(follow_symlinks=True).st_size
    if not plan.tables:
        raise IndexInputError(out_dir, "no index tables to bundle")
    if max_bytes is not None and plan.input_bytes > max_bytes:
        raise IndexInputError(out_dir, f"the tables to bundle hold {plan.input_bytes:,} bytes, more than "
                                       f"--max-size {max_bytes:,}")
    return plan


def _parquet_bytes(table: pa.Table) -> Callable:
    def produce(fh) -> None:
        pq.write_table(table, fh, compression="snappy")
    return produce


def _csv_bytes(rows: list[list[str]]) -> bytes:
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


def write_bundle(plan: BundlePlan, out, *, keep_titles: bool = False, force: bool = False,
                 guard: Guard | None = None,
                 extra: Callable[[Path, "BundleResult"], dict[str, bytes]] | None = None) -> BundleResult:
    """Write the bundle to ``out``. ``extra(path, result)`` returns more files (name -> bytes) to
    write before the directory is published (the audit of the bundle, its README)."""
    guard = (guard if guard is not None else Guard()).protect_located(plan.files)
    anon = Anonymiser(keep_titles=keep_titles)
    replaced: dict[str, list[str]] = {}
    # entity tables first, so that pseudonyms are numbered in entity order
    order = sorted(plan.tables, key=lambda p: (table_kind(p.stem) not in ("entities", "nodes"), p.name))
    listed = list(order)  # the README lists the tables in this order
    reports = plan.files.tables.get("reports")
    if reports in order and extra is not None:
        # the reports table before all: the worker counts OUT's report rows for the audit while the
        # parent writes the others (no pseudonym is handed out in it, so the output is the same)
        order.remove(reports)
        order.insert(0, reports)
    w = DirectoryWriter(out, guard, force=force)
    w.check()
    with w:
        # half of every large text column is filled in a second process (the same output)
        seeds = None
        with second_process(anon.columns) as worker:
            for src in order:
                kind = table_kind(src.stem)
                if src.suffix == ".csv":
                    rows, changed = anon.csv_rows(kind, read_csv_rows(src))
                    w.write_file(src.name, _csv_bytes(rows))
                else:
                    table, changed = anon.arrow_table(kind, read_arrow_table(src))
                    w.write_file(src.name, _parquet_bytes(table))
                replaced[src.name] = changed
                if worker is not None and extra is not None and src == reports:
                    # the worker counts OUT's report rows for its audit while the other tables are written
                    worker.count(w.path / src.name, plan.files.tables.get("entities"))
            if worker is not None and worker.counting:
                seeds = worker.counts()
        replaced = {src.name: replaced[src.name] for src in listed}
        result = BundleResult(Path(out), plan, replaced, len(anon.entities), keep_titles, ())
        names: list[str] = []
        if extra is not None:
            # the audit of OUT finds the worker's counts in an in-memory store (never a file)
            with seeded_token_session({TOKENIZER: seeds}) if seeds is not None \
                    else nullcontext():
                files = extra(w.path, result)
            for name, data in files.items():
                w.write_file(name, data)
                names.append(name)
        final = w.commit()
    result.out = final
    result.extra = tuple(names)
    return result


def readme(result: BundleResult, tool_version: str) -> str:
    """README.md of a bundle: how it was made and what was removed."""
    plan = result.plan
    lines = [
        "# graphrag-audit bundle",
        "",
        f"Made by graphrag-audit {tool_version} (`graphrag-audit bundle`) from a GraphRAG index "
        f"({plan.files.table_format} tables). It is an index in the same layout: the same file names, columns and "
        "arrow types, the same ids, levels, parents, children, memberships, ranks, sizes and periods, "
        "in which every piece of free text was replaced.",
        "",
        "## What was replaced",
        "",
        "- Free text (report titles, summaries, full content, findings, descriptions, text units, entity "
        "types, ...): filler words with exactly the cl100k_base token count of the original text, alone "
        "and inside graphrag's report rows, so global search builds the same batches and map calls. "
        "Punctuation, whitespace and line breaks stay; digits became 0.",
        ("- Entity names, community titles and report titles were kept (`--keep-titles`)."
         if result.keep_titles else
         f"- Entity names: {result.entities:,} stable pseudonyms (`Entity N`, the same in every table); "
         "community titles other than graphrag's `Community N`: `Community title N`."),
        "- Document titles (file names): `Document N`.",
        "- Nulls, empty strings and list lengths are as in the index.",
        "",
        "| file | columns replaced |",
        "|---|---|",
    ]
    for name, cols in result.replaced.items():
        lines.append(f"| {name} | {', '.join(cols) if cols else '(none)'} |")
    lines += ["", "## Left out", ""]
    if plan.left_out:
        lines += [f"- `{name}`: {why}" for name, why in plan.left_out]
    else:
        lines.append("- nothing")
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
