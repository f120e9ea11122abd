"""Hostile reads (issue 14): reads are bounded, CSV is read as graphrag 3 reads it, and every
failure is one stderr line with exit 2 whatever state stdout and stderr are in.

Like test_hostile.py, every case builds its input into a temporary directory (no committed
binaries) and runs the real CLI in a child process with a timeout and an address-space limit
(RLIMIT_AS), asserting the exact exit code and either the exact rule ids or a full match of the
one stderr line, no traceback, the index unchanged, and the child's peak RSS. The stream cases
(stdout/stderr closed, full, a closed pipe) need file descriptors the fork server cannot give, so
they run a fresh ``python -m graphrag_audit``.

Expected outcomes are worked out by hand (comments) or taken from graphrag's own code: the CSV
reference reads a file exactly as graphrag 3's CSVTableProvider.read_dataframe does (UTF-8 text,
``pandas.read_csv(StringIO(text), keep_default_na=False)``), and when an interpreter with graphrag
3 is listed in GRAPHRAG_VERIFY_PYTHONS, graphrag's own reader and split_list_column are run.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hostile import (
    BASE_ARGS,
    ERROR_PREFIX,
    GIB,
    JSON_ARGS,
    REPO,
    TREE_SEMANTICS,
    Built,
    Case,
    CaseRegistry,
    CliServer,
    Expect,
    Index,
    Outcome,
    clean_env,
    err,
    ok,
    run_cli,
    snapshot,
    write_csv,
)

pytestmark = pytest.mark.hostile  # a heavy tier: pytest -m hostile
PREFIX = ERROR_PREFIX
TIMEOUT = 60.0
MIB = 1024**2
LIMIT_RULE = (
    r"more than its 256 MiB limit \(the larger of 256 MiB and 100 x the file size, at most 16 GiB; "
    r"GRAPHRAG_AUDIT_MAX_DECODED_BYTES changes it\); refused unread"
)
CASES = CaseRegistry()
case = CASES.case


def base(tmp: Path, fmt: str = "parquet") -> Path:
    return Index.base().write(tmp / "index", fmt=fmt)


# ============================================================================================
# A. decompression and dictionary bombs: refused before they are materialised
# ============================================================================================
def repeated(text: str, n: int) -> pa.DictionaryArray:
    """``n`` values all equal to ``text``, held once (the test process never builds the bomb)."""
    return pa.DictionaryArray.from_arrays(pa.array([0] * n, pa.int32()), pa.array([text]))


#: pyarrow writes a dictionary array's dictionary as the column chunk's dictionary page; without
#: the stored arrow schema the column reads back as plain strings (what graphrag writes)
BOMB_WRITE = dict(
    store_schema=False, use_dictionary=True, compression="zstd", dictionary_pagesize_limit=64 * MIB
)


def _reports_table(rows: int, **columns) -> pa.Table:
    cols = {
        "community": pa.array(range(rows), pa.int64()),
        "level": pa.array([0] * rows, pa.int64()),
        "title": pa.array([f"R{i}" for i in range(rows)]),
        "rank": pa.array([1.0] * rows),
        "full_content": pa.array(["c"] * rows),
    }
    cols.update(columns)
    return pa.table(cols)


def _bomb_reports(path: Path, rows: int, text: str) -> None:
    """A reports table of ``rows`` rows whose full_content is ``text`` in every row, dictionary-encoded:
    one dictionary page holds ``text`` once; each row is an index."""
    pq.write_table(_reports_table(rows, full_content=repeated(text, rows)), path, **BOMB_WRITE)


# 300 rows x one 10 MiB string: 3,145,728,000 bytes of text + 8 per value = 3,145,730,400
@case(
    err(
        "index/community_reports.parquet",
        r"column 'full_content' decodes to 3,145,730,400 bytes \(2\.9 GiB\) from a [0-9,]+-byte file, "
        + LIMIT_RULE,
    ),
    "a dictionary bomb: a few-KB reports table whose 300 rows all name one 10 MiB string (3 GB decoded)",
)
def c_dictionary_bomb(tmp):
    d = base(tmp)
    _bomb_reports(d / "community_reports.parquet", 300, "x" * (10 * MIB))
    assert (d / "community_reports.parquet").stat().st_size < 16 * 1024  # a few KB on disk
    return Built(d)


def _list_bomb(tmp):
    d = base(tmp)
    t = Index.base().arrow("entities")
    items = repeated("t" * MIB, 5 * 600)  # 5 entities x 600 items, all one 1 MiB string
    lists = pa.ListArray.from_arrays(pa.array(range(0, 3001, 600), pa.int32()), items)
    t = t.set_column(t.column_names.index("text_unit_ids"), "text_unit_ids", lists)
    pq.write_table(t, d / "entities.parquet", **BOMB_WRITE)
    return Built(d)


# 5 entities x 600 items x 1 MiB = 3,145,728,000 bytes + 8 x 3,000 items = 3,145,752,000; read
# in the worker thread (entities)
CASES["list-dictionary-bomb"] = Case(
    "list-dictionary-bomb",
    _list_bomb,
    err(
        "index/entities.parquet",
        r"column 'text_unit_ids' decodes to 3,145,752,000 bytes \(2\.9 GiB\) from a [0-9,]+-byte file, "
        + LIMIT_RULE,
    ),
    "the same inside a list column: every text_unit_ids item of the entities names one 1 MiB string",
)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def lie_in_footer(path: Path, old: int, new: int) -> None:
    """Rewrite one i64 of the footer (thrift compact: a zigzag varint) to ``new``, same length."""
    data = bytearray(path.read_bytes())
    footer_len = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - footer_len
    a, b = _varint(_zigzag(old)), _varint(_zigzag(new))
    assert len(a) == len(b)
    footer = bytes(data[start:-8])
    assert footer.count(a) == 1
    i = start + footer.index(a)
    data[i : i + len(a)] = b
    path.write_bytes(bytes(data))


@case(
    err(
        "index/community_reports.parquet",
        r"column 'full_content' decodes to 3,145,730,400 bytes \(2\.9 GiB\) from a [0-9,]+-byte file, "
        + LIMIT_RULE,
    ),
    "the dictionary bomb with a footer that understates its pages (total_uncompressed_size 2.1 MB instead of "
    "10 MB): the dictionary page itself is read",
)
def c_dictionary_bomb_lying_footer(tmp):
    d = base(tmp)
    p = d / "community_reports.parquet"
    _bomb_reports(p, 300, "x" * (10 * MIB))
    cc = pq.read_metadata(p).row_group(0).column(4)
    assert cc.path_in_schema == "full_content"
    lie_in_footer(p, cc.total_uncompressed_size, 2_100_000)
    assert pq.read_metadata(p).row_group(0).column(4).total_uncompressed_size == 2_100_000
    return Built(d)


# 100 rows of a 5 MiB plain string: the pages alone decompress to 100 x (5 MiB + 4) bytes and more
@case(
    err(
        "index/community_reports.parquet",
        r"column 'full_content' decodes to at least [0-9,]+ bytes \([0-9.]+ MiB\) \(its pages decompress to that "
        r"much\) from a [0-9,]+-byte file, " + LIMIT_RULE,
    ),
    "a compression bomb: 100 plain-encoded 5 MiB strings compressed to a few hundred KB",
)
def c_compression_bomb(tmp):
    d = base(tmp)
    text = pa.array(["y" * (5 * MIB)])
    with pq.ParquetWriter(
        d / "community_reports.parquet", _reports_table(1).schema, use_dictionary=False, compression="zstd"
    ) as w:
        for i in range(100):  # one row group per row: the test never holds more than one string
            w.write_table(_reports_table(1, full_content=text, community=pa.array([i], pa.int64())))
    return Built(d)


# DELTA_BYTE_ARRAY shares prefixes: 300 copies of a 1 MiB string are ~1 MiB of pages; each value
# is at most the pages long, so the bound is about 300 x 1 MiB: "up to", no exact count
@case(
    err(
        "index/community_reports.parquet",
        r"column 'full_content' decodes to up to [0-9,]+ bytes \([0-9.]+ MiB\) from a [0-9,]+-byte file, "
        + LIMIT_RULE,
    ),
    "prefix-compressed (DELTA_BYTE_ARRAY) copies of a 1 MiB string: bounded by values x page bytes",
)
def c_delta_byte_array_bomb(tmp):
    d = base(tmp)
    text = pa.array(["z" * MIB] * 30)
    with pq.ParquetWriter(
        d / "community_reports.parquet",
        _reports_table(30).schema,
        use_dictionary=False,
        column_encoding={"full_content": "DELTA_BYTE_ARRAY"},
        compression="zstd",
    ) as w:
        for _ in range(10):  # 10 row groups of 30 rows
            w.write_table(_reports_table(30, full_content=text))
    return Built(d)


def _raised(tmp):
    # the base tree, each of its 6 reports' full_content one shared 50 MiB string: 314,572,800
    # bytes of text (+ 8 x 6), over the 256 MiB default for a small file
    d = base(tmp)
    t = Index.base().arrow("reports")
    t = t.set_column(
        t.column_names.index("full_content"), "full_content", repeated("w" * (50 * MIB), t.num_rows)
    )
    pq.write_table(t, d / "community_reports.parquet", **BOMB_WRITE)
    return d


CASES["decoded-limit-default"] = Case(
    "decoded-limit-default",
    lambda tmp: Built(_raised(tmp)),
    err(
        "index/community_reports.parquet",
        r"column 'full_content' decodes to 314,572,848 bytes \(300\.0 MiB\) from a [0-9,]+-byte file, "
        + LIMIT_RULE,
    ),
    "six reports naming one 50 MiB string (300 MiB decoded): over the default limit",
)
CASES["decoded-limit-raised"] = Case(
    "decoded-limit-raised",
    lambda tmp: Built(_raised(tmp), env={"GRAPHRAG_AUDIT_MAX_DECODED_BYTES": "1G"}),
    ok(),
    "the same with GRAPHRAG_AUDIT_MAX_DECODED_BYTES=1G: read and audited",
)
CASES["decoded-limit-lowered"] = Case(
    "decoded-limit-lowered",
    lambda tmp: Built(base(tmp), env={"GRAPHRAG_AUDIT_MAX_DECODED_BYTES": "100"}),
    err(
        "index/communities.parquet",
        r"column '[a-z_]+' decodes to (at least |up to )?[0-9,]+ bytes( \([0-9.]+ KiB\))?( \(its pages decompress to that "
        r"much\))? from a [0-9,]+-byte file, more than its 100 bytes limit "
        r"\(set by GRAPHRAG_AUDIT_MAX_DECODED_BYTES\); refused unread",
    ),
    "the clean index with GRAPHRAG_AUDIT_MAX_DECODED_BYTES=100: the first table read is refused",
)
CASES["decoded-limit-not-a-number"] = Case(
    "decoded-limit-not-a-number",
    lambda tmp: Built(base(tmp), env={"GRAPHRAG_AUDIT_MAX_DECODED_BYTES": "lots"}),
    Expect(
        2, None, None, r"GRAPHRAG_AUDIT_MAX_DECODED_BYTES: not a positive byte count: 'lots' \(e\.g\. 8G\)"
    ),
    "GRAPHRAG_AUDIT_MAX_DECODED_BYTES=lots",
)


# ============================================================================================
# B. CSV tables as graphrag 3 reads them
# ============================================================================================
def _csv_index(tmp: Path, edit: Callable[[Path], None]) -> Built:
    d = base(tmp, "csv")
    edit(d)
    return Built(d)


def _add_bom(d: Path) -> None:
    for p in d.glob("*.csv"):
        p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())


# graphrag's pandas.read_csv drops the BOM: the first column is `id`, and the audit is the base
# tree's (before: `\ufeffid`, no entity id column, a false unclustered-entities)
CASES["csv-bom"] = Case(
    "csv-bom",
    lambda tmp: _csv_index(tmp, _add_bom),
    ok(),
    "every CSV table starts with a UTF-8 byte order mark",
)


def _big_multiline(d: Path) -> None:
    idx = Index.base()
    idx.reports["full_content"] = [("a line of the report, then a newline\n" * 80_000)] * 6  # ~3 MB each
    write_csv(d / "community_reports.csv", idx.reports)


CASES["csv-multiline-3mb-reports"] = Case(
    "csv-multiline-3mb-reports",
    lambda tmp: _csv_index(tmp, _big_multiline),
    ok(),
    "CSV reports whose full_content is 3 MB of text over 80,000 lines (more than pyarrow's 1 MiB block)",
)


def _nested_csv(d: Path) -> None:
    idx = Index.base()
    idx.communities["entity_ids"] = [[list(x)] for x in idx.communities["entity_ids"]]  # "[['e1', 'e2']]"
    write_csv(d / "communities.csv", idx.communities)


# graphrag's split_list_column strips brackets and quotes: "[['e1', 'e2', 'e3']]" is e1, e2, e3
CASES["csv-nested-list-cells"] = Case(
    "csv-nested-list-cells",
    lambda tmp: _csv_index(tmp, _nested_csv),
    ok(),
    "CSV entity_ids cells holding a list inside a list (graphrag's split_list_column reads the ids)",
)


def _dup_csv(d: Path) -> None:
    idx = Index.base()
    names = list(idx.communities) + ["level"]
    rows = [[idx.communities[c][i] for c in names[:-1]] + [99] for i in range(6)]
    import csv

    from hostile import csv_cell

    with open(d / "communities.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(names)
        for r in rows:
            w.writerow([csv_cell(v) for v in r])


# pandas names the second `level` `level.1`; graphrag reads the first: the base tree
CASES["csv-duplicate-column"] = Case(
    "csv-duplicate-column",
    lambda tmp: _csv_index(tmp, _dup_csv),
    ok(),
    "a CSV communities table with a second 'level' column (of 99s) after the real one",
)


# ============================================================================================
# C. parquet that graphrag itself cannot use
# ============================================================================================
NESTED = (
    r"column '{}' holds nested lists where ids belong: graphrag's global search fails on them "
    r"\(pandas merge / set\(\): unhashable type\)"
)


def _nested(table: str, col: str):
    def build(tmp):
        idx = Index.base()
        idx.table(table)[col] = [[list(x)] for x in idx.table(table)[col]]
        idx.types[(table, col)] = pa.list_(pa.list_(pa.string()))
        return Built(idx.write(tmp / "index"))

    return build


CASES["nested-entity-ids"] = Case(
    "nested-entity-ids",
    _nested("communities", "entity_ids"),
    err("index/communities.parquet", NESTED.format("entity_ids")),
    "entity_ids typed list<list<string>> (graphrag 3.3.0's read_indexer_entities: TypeError unhashable)",
)
CASES["nested-text-unit-ids"] = Case(
    "nested-text-unit-ids",
    _nested("entities", "text_unit_ids"),
    err("index/entities.parquet", NESTED.format("text_unit_ids")),
    "entities' text_unit_ids typed list<list<string>>",
)


def _struct_ids(tmp):
    idx = Index.base()
    idx.communities["entity_ids"] = [[{"id": e} for e in x] for x in idx.communities["entity_ids"]]
    idx.types[("communities", "entity_ids")] = pa.list_(pa.struct([("id", pa.string())]))
    return Built(idx.write(tmp / "index"))


CASES["struct-entity-ids"] = Case(
    "struct-entity-ids",
    _struct_ids,
    err("index/communities.parquet", NESTED.format("entity_ids").replace("nested lists", "nested structs")),
    "entity_ids typed list<struct<id: string>> (before: the structs' reprs became ids)",
)


def _dup_parquet(table: str, col: str):
    def build(tmp):
        d = base(tmp)
        stem = {"communities": "communities", "entities": "entities"}[table]
        t = pq.read_table(d / f"{stem}.parquet")
        t = pa.Table.from_arrays(t.columns + [t.column(col)], names=t.column_names + [col])
        pq.write_table(t, d / f"{stem}.parquet")
        return Built(d)

    return build


DUP = (
    r"column name '{}' appears 2 times: graphrag cannot read the table "
    r"\(pandas.read_parquet refuses duplicate column names\)"
)
CASES["duplicate-column-read"] = Case(
    "duplicate-column-read",
    _dup_parquet("communities", "level"),
    err("index/communities.parquet", DUP.format("level")),
    "communities.parquet with two 'level' columns",
)
CASES["duplicate-column-unread"] = Case(
    "duplicate-column-unread",
    _dup_parquet("entities", "type"),
    err("index/entities.parquet", DUP.format("type")),
    "entities.parquet with two 'type' columns (a column the audit does not read; graphrag reads all)",
)


def _v1_without_nodes(tmp):
    from builders import write_v1
    from hostile import BASE_TREE

    d = write_v1(tmp / "index", dict(BASE_TREE))
    (d / "create_final_nodes.parquet").unlink()
    return Built(d)


# without create_final_nodes the 1.x roll-up is read from the communities' entity_ids, as for the
# other layouts without a nodes table; on this clean tree those are the same rows: no finding
# (before: an internal error, the deferred nodes read returned nothing)
CASES["v1-without-nodes-table"] = Case(
    "v1-without-nodes-table",
    _v1_without_nodes,
    ok("needs-migration", "dynamic-fails", "dynamic-old-graphrag"),
    "a graphrag 1.x index (create_final_communities with entity_ids and parent) without create_final_nodes",
)


# ============================================================================================
# D. the command line
# ============================================================================================
LONG = "n" * 300  # NAME_MAX is 255


@case(err(LONG, r"cannot access \(File name too long\)"), "an index path whose component is 300 bytes long")
def c_path_component_too_long(tmp):
    return Built(tmp / LONG)


@case(
    err("index/" + LONG, r"cannot access \(File name too long\)"),
    "the same one level down (the parent exists)",
)
def c_path_component_too_long_inside(tmp):
    return Built(base(tmp) / LONG)


HUGE = "99999999999999999999999"


# any limit above every token sum batches the same: the JSON equals the one at 10^9 (checked below)
@case(ok(), "--max-context-tokens 99999999999999999999999 (beyond int64) with costs")
def c_max_context_tokens_beyond_int64(tmp):
    return Built(base(tmp), args=[*BASE_ARGS[:-1], "-f", "json", "--max-context-tokens", HUGE])


# ============================================================================================
# running
# ============================================================================================
def _run(server: CliServer, c: Case, root: Path) -> Outcome:
    tmp = root / c.name
    tmp.mkdir()
    built = c.build(tmp)
    before = snapshot(tmp)
    result = server.run(
        ["levels", built.index, *built.args], timeout=TIMEOUT, mem_bytes=2 * GIB, env_extra=built.env
    )
    return Outcome(built, result, before, snapshot(tmp), tmp)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-reads")
    workers = 2
    servers = [CliServer() for _ in range(workers)]
    names = list(CASES)
    chunks = [names[i::workers] for i in range(workers)]
    out: dict[str, Outcome] = {}
    try:

        def work(i):
            return [(n, _run(servers[i], CASES[n], root)) for n in chunks[i]]

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for res in pool.map(work, range(workers)):
                out.update(res)
        yield out
    finally:
        for s in servers:
            s.close()


def check(name: str, o: Outcome) -> None:
    c = CASES[name]
    r, exp = o.result, c.expect
    assert not r.timed_out, f"{name}: no result within {TIMEOUT}s"
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr
    assert r.code == exp.code, f"{name}: exit {r.code}, stderr={r.stderr!r} stdout={r.stdout[:300]!r}"
    if exp.code == 2:
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and r.stderr.endswith("\n"), f"not one stderr line: {r.stderr!r}"
        shown = "" if exp.file is None else re.escape(str(o.case_dir / exp.file) + ": ")
        pattern = re.escape(PREFIX) + shown + exp.problem
        assert re.fullmatch(pattern, lines[0]), f"{lines[0]!r} !~ {pattern!r}"
        assert r.stdout == ""
    else:
        assert r.stderr == "", r.stderr
        got = {f["rule"] for f in json.loads(r.stdout)["findings"]} - TREE_SEMANTICS
        assert got == set(exp.findings), f"{name}: findings {sorted(got)} != {sorted(exp.findings)}"
    assert o.after == o.before, f"{name}: the index directory changed"


@pytest.mark.parametrize("name", list(CASES))
def test_case(name, outcomes):
    check(name, outcomes[name])


def test_bombs_are_refused(outcomes):
    """Refused before materialising, under RLIMIT_AS = 2 GiB, where decoding any of them would
    need 3 GB."""
    for name in (
        "dictionary-bomb",
        "list-dictionary-bomb",
        "dictionary-bomb-lying-footer",
        "compression-bomb",
        "delta-byte-array-bomb",
        "decoded-limit-default",
    ):
        r = outcomes[name].result
        assert r.code == 2, (name, r.stderr)


def test_dictionary_bomb_in_a_fresh_interpreter(tmp_path):
    """The same through `python -m graphrag_audit` in a new process limited to 2 GiB of address
    space (setrlimit before anything is imported)."""
    built = CASES["dictionary-bomb"].build(tmp_path)
    r = run_cli(["levels", built.index, *built.args], timeout=180, mem_bytes=2 * GIB)
    assert r.code == 2 and "column 'full_content' decodes to 3,145,730,400 bytes" in r.stderr, (
        r.code,
        r.stderr,
    )
    assert len(r.stderr.splitlines()) == 1, r.stderr  # (the 2 GiB address-space limit is the proof)


def test_max_context_tokens_beyond_int64_batches_as_any_huge_limit(outcomes, tmp_path):
    """graphrag compares Python ints: a limit above every token sum puts each level's reports in
    one batch. The JSON equals the one at 10^9 tokens but for the option echoed back."""
    o = outcomes["max-context-tokens-beyond-int64"]
    srv = CliServer()
    try:
        r = srv.run(
            ["levels", o.built.index, *BASE_ARGS[:-1], "-f", "json", "--max-context-tokens", "1000000000"],
            timeout=TIMEOUT,
        )
    finally:
        srv.close()
    assert r.code == 0, r.stderr
    huge, small = json.loads(o.result.stdout), json.loads(r.stdout)
    assert huge["options"]["max_context_tokens"] == int(HUGE)
    huge["options"]["max_context_tokens"] = small["options"]["max_context_tokens"]
    assert huge == small
    assert re.search(r'"map_calls": ?1\b', o.result.stdout)  # costs ran: one batch


def test_every_case_is_documented():
    text = (REPO / "docs" / "robustness.md").read_text(encoding="utf-8")
    missing = [n for n in [*CASES, *STREAM_CASES] if f"`{n}`" not in text]
    assert not missing, f"docs/robustness.md lacks cases: {missing}"


# ============================================================================================
# E. stdout and stderr in every state (a fresh interpreter: real file descriptors)
# ============================================================================================
@dataclass(frozen=True)
class Stream:
    stdout: str  # pipe, closed, full, gone (the reader closes after 10 bytes)
    stderr: str  # pipe, closed, full, readonly, gone (a pipe whose reader has closed)
    what: str  # ok (the clean index), bad (a missing index), usage (--level -1), ok-o (with -o)
    code: int
    line: str | None  # the one stderr line (regex), None: stderr is not readable in this case
    doc: str


STREAM_CASES = {
    "stdout-closed": Stream(
        "closed",
        "pipe",
        "ok",
        2,
        r"stdout: cannot write the output \(standard output is closed\)",
        "stdout closed (`>&-`)",
    ),
    "stdout-closed-with-output-file": Stream(
        "closed", "pipe", "ok-o", 0, "", "stdout closed, -o FILE given: stdout is not needed"
    ),
    "stdout-full": Stream(
        "full",
        "pipe",
        "ok",
        2,
        r"stdout: cannot write the output \(No space left on device\)",
        "stdout is /dev/full",
    ),
    "stdout-reader-gone": Stream(
        "gone", "pipe", "big", 141, "", "stdout a pipe whose reader closes after 10 bytes (`| head -c 10`)"
    ),
    "stderr-closed-bad-input": Stream(
        "pipe", "closed", "bad", 2, None, "a missing index, stderr closed (`2>&-`)"
    ),
    "stderr-full-bad-input": Stream("pipe", "full", "bad", 2, None, "a missing index, stderr /dev/full"),
    "stderr-readonly-bad-input": Stream(
        "pipe",
        "readonly",
        "bad",
        2,
        None,
        "a missing index, stderr a file open read-only (writes fail: EBADF)",
    ),
    "stderr-gone-bad-input": Stream(
        "pipe", "gone", "bad", 2, None, "a missing index, stderr a pipe whose reader has closed"
    ),
    "stderr-closed-usage-error": Stream(
        "pipe",
        "closed",
        "usage",
        2,
        None,
        "--level -1 with stderr closed (the usage text goes nowhere, not to stdout)",
    ),
    "stderr-full-usage-error": Stream("pipe", "full", "usage", 2, None, "--level -1 with stderr /dev/full"),
    "both-closed-bad-input": Stream(
        "closed", "closed", "bad", 2, None, "a missing index, stdout and stderr closed"
    ),
}


def _spawn(s: Stream, tmp: Path, big_index: Path | None):
    idx = base(tmp)
    args = {
        "ok": ["levels", idx, *JSON_ARGS],
        "ok-o": ["levels", idx, *JSON_ARGS, "-o", tmp / "out.json"],
        "bad": ["levels", tmp / "missing"],
        "usage": ["levels", idx, "--level", "-1"],
        "big": ["levels", big_index, *JSON_ARGS],
    }[s.what]
    files = []

    def target(kind, fd):
        if kind == "pipe":
            return subprocess.PIPE
        if kind == "closed":
            return subprocess.DEVNULL  # closed in the child by close_fds below
        if kind == "full":
            f = open("/dev/full", "w")
            files.append(f)
            return f
        if kind == "readonly":
            f = open(idx / "communities.parquet", "rb")
            files.append(f)
            return f
        if kind == "gone":
            if fd == 1:
                return subprocess.PIPE  # the test reads 10 bytes, then closes it
            r, w = os.pipe()
            os.close(r)
            files.append(os.fdopen(w, "wb"))
            return files[-1]
        raise ValueError(kind)

    closing = [fd for fd, kind in ((1, s.stdout), (2, s.stderr)) if kind == "closed"]

    def pre():
        for fd in closing:
            os.close(fd)

    proc = subprocess.Popen(
        [sys.executable, "-m", "graphrag_audit", *[str(a) for a in args]],
        stdin=subprocess.DEVNULL,
        stdout=target(s.stdout, 1),
        stderr=target(s.stderr, 2),
        preexec_fn=pre,
        cwd=str(REPO),
        env=clean_env(),
    )
    for f in files:
        f.close()
    return proc, tmp


@pytest.fixture(scope="module")
def big_index(tmp_path_factory):
    """An index whose JSON output is several MB: one root with 20,000 children."""
    from test_hostile import children_index

    return children_index(tmp_path_factory.mktemp("big") / "index", 20_000)


@pytest.mark.parametrize("name", list(STREAM_CASES))
def test_stream_states(name, tmp_path, big_index):
    s = STREAM_CASES[name]
    proc, tmp = _spawn(s, tmp_path, big_index)
    if s.stdout == "gone":
        proc.stdout.read(10)
        proc.stdout.close()
        out = ""
    else:
        out = proc.stdout.read().decode() if proc.stdout else ""
    err_text = proc.stderr.read().decode() if proc.stderr else None
    code = proc.wait(timeout=TIMEOUT)
    assert code == s.code, (name, code, err_text)
    if s.line is not None:
        assert err_text is not None
        if s.line:
            lines = err_text.splitlines()
            assert len(lines) == 1 and re.fullmatch(re.escape(PREFIX) + s.line, lines[0]), err_text
        else:
            assert err_text == "", err_text
    if s.what in ("bad", "usage") and s.stdout == "pipe":
        assert out == ""  # nothing (no usage text either) lands on stdout
    if s.what == "ok-o":
        found = json.loads((tmp / "out.json").read_text(encoding="utf-8"))["findings"]
        assert [f for f in found if f["rule"] not in TREE_SEMANTICS] == []


# ============================================================================================
# F. CSV cells and tables against graphrag's own reading
# ============================================================================================
def graphrag_csv_reference(path: Path) -> pd.DataFrame:
    """graphrag 3's CSVTableProvider.read_dataframe (graphrag_storage/tables/csv_table_provider.py,
    v3.0.4-v3.3.0): the file read as UTF-8 text (FileStorage, Python text mode), then
    ``pd.read_csv(StringIO(csv_data), keep_default_na=False)``."""
    with open(path, encoding="utf-8") as fh:
        return pd.read_csv(io.StringIO(fh.read()), keep_default_na=False)


#: graphrag's split_list_column (graphrag/data_model/dfs.py v3.0.4-v3.3.0), worked by hand
SPLIT_CASES = {
    "['a', 'b']": ["a", "b"],
    "[]": [],
    "": [],
    "['a'\n 'b']": ["a", "b"],  # numpy repr wrapped over lines
    "[['e1', 'e2']]": ["e1", "e2"],  # nested: flattened by the stripping
    "['x, y']": ["x", "y"],  # an id holding a comma is two ids
    "a,b": ["a", "b"],
    "['a' 'b']": ["a' 'b"],  # numpy repr on one line: one item
    '["q"]': ["q"],
    "[' padded ']": ["padded"],
}


@pytest.mark.parametrize("cell", list(SPLIT_CASES))
def test_split_list_cell_is_graphrags(cell):
    from graphrag_audit.io.coerce import split_list_cell

    assert split_list_cell(cell) == SPLIT_CASES[cell]


def _tricky_csv(path: Path) -> None:
    body = (
        "\ufeffid,community,level,title,full_content\r\n"
        '1,0,0,"Crlf\r\ninside","line one\r\nline two\rthree"\r\n'
        '2,1,0,"NA","' + ("long line\n" * 200_000) + '"\r\n'
        '3,2,1,"x, ""quoted""","tab\there"\r\n'
    )
    path.write_bytes(body.encode("utf-8"))


def test_csv_table_matches_graphrags_reader(tmp_path):
    from graphrag_audit.io.tables import read_table

    p = tmp_path / "community_reports.csv"
    _tricky_csv(p)
    ref = graphrag_csv_reference(p)
    got = read_table(p, ["community", "level", "title", "full_content"])
    assert list(got.columns) == ["community", "level", "title", "full_content"]
    for col in ("community", "level"):
        assert [int(v) for v in got[col]] == [int(v) for v in ref[col]]
    for col in ("title", "full_content"):
        assert list(got[col]) == list(ref[col])
    assert got["full_content"][1] == "long line\n" * 200_000


def _graphrag3_pythons():
    raw = os.environ.get("GRAPHRAG_VERIFY_PYTHONS", "")
    out = []
    for py in (p for p in raw.split(os.pathsep) if p and os.path.exists(p)):
        r = subprocess.run(
            [py, "-c", "import graphrag_storage, graphrag.data_model.dfs"], capture_output=True
        )
        if r.returncode == 0:
            out.append(py)
    return out


GRAPHRAG3 = _graphrag3_pythons()

_GRAPHRAG_READ = r"""
import asyncio, json, sys
from graphrag_storage.file_storage import FileStorage
from graphrag_storage.tables.csv_table_provider import CSVTableProvider
from graphrag.data_model.dfs import split_list_column
folder, table, cells = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
try:
    df = asyncio.run(CSVTableProvider(FileStorage(base_dir=folder)).read_dataframe(table))
    rows = {c: [str(v) for v in df[c]] for c in df.columns}
except Exception as exc:
    rows = {"error": type(exc).__name__}
print(json.dumps({"rows": rows, "split": [split_list_column(c) for c in cells]}))
"""


@pytest.mark.skipif(not GRAPHRAG3, reason="no interpreter with graphrag 3 in GRAPHRAG_VERIFY_PYTHONS")
@pytest.mark.parametrize("python", GRAPHRAG3)
def test_against_graphrag3_itself(python, tmp_path):
    """graphrag 3's own CSV reader and list splitting on the tricky table and cells above."""
    from graphrag_audit.io.coerce import split_list_cell
    from graphrag_audit.io.tables import read_table

    p = tmp_path / "community_reports.csv"
    _tricky_csv(p)
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"id,title\n1,\xff\n")
    r = subprocess.run(
        [python, "-c", _GRAPHRAG_READ, str(tmp_path), "community_reports", json.dumps(list(SPLIT_CASES))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    g = json.loads(r.stdout)
    assert g["split"] == [split_list_cell(c) for c in SPLIT_CASES]
    got = read_table(p, ["title", "full_content"])
    assert list(got["title"]) == g["rows"]["title"] and list(got["full_content"]) == g["rows"]["full_content"]
    r = subprocess.run(
        [python, "-c", _GRAPHRAG_READ, str(tmp_path), "bad", "[]"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(r.stdout)["rows"] == {
        "error": "UnicodeDecodeError"
    }  # graphrag fails: so does the audit


def test_real_indexes_stay_within_the_decoded_limit():
    """Every real index table: the decoded-size check passes, and its bound stays a small multiple
    of the file size (the limit allows 100x)."""
    from conftest import SHARED_INDEXES, shared_folders

    from graphrag_audit.io import decoded
    from graphrag_audit.io.load import (
        COMMUNITY_COLUMNS,
        ENTITY_COLUMNS,
        NODE_COLUMNS,
        REPORT_COLUMNS,
    )
    from graphrag_audit.io.locate import locate_index

    if not shared_folders():
        pytest.skip(f"{SHARED_INDEXES} is absent")
    wanted = {
        "communities": COMMUNITY_COLUMNS,
        "reports": REPORT_COLUMNS,
        "nodes": NODE_COLUMNS,
        "entities": ENTITY_COLUMNS,
    }
    seen = 0
    for name in shared_folders():
        for table, path in locate_index(SHARED_INDEXES / name).tables.items():
            if path.suffix != ".parquet":
                continue
            with pa.OSFile(str(path)) as fh:
                meta = pq.read_metadata(fh)
                cols = [c for c in wanted[table] if c in meta.schema.to_arrow_schema().names]
                found = decoded.check_parquet(path, fh, meta, cols, fh.size())
            assert found.total <= 16 * found.file_size, (name, table, found.total, found.file_size)
            seen += 1
    assert seen >= 60


# ============================================================================================
# G. the decoded-size computation against brute force
# ============================================================================================
def _actual_decoded(path: Path, cols: list[str]) -> int:
    """Text bytes + 8 per value of ``cols``, from the table read whole (the brute-force reference)."""
    import pyarrow.compute as pc

    t = pq.read_table(path, columns=cols)
    total = 0
    for col in t.columns:
        arr = col.combine_chunks() if col.num_chunks else pa.array([], col.type)
        parquet_values = len(arr)
        while pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
            # parquet stores one value per item, and one (empty) value per null or empty list
            parquet_values = len(pc.list_flatten(arr)) + int(
                pc.sum(pc.equal(pc.fill_null(pc.list_value_length(arr), 0), 0)).as_py() or 0
            )
            arr = pc.list_flatten(arr)
        total += 8 * parquet_values
        if pa.types.is_string(arr.type) or pa.types.is_binary(arr.type):
            total += sum(
                len(v.encode()) if isinstance(v, str) else len(v) for v in arr.to_pylist() if v is not None
            )
    return total


def test_parse_byte_count():
    from graphrag_audit.io.decoded import parse_byte_count

    assert parse_byte_count("123") == 123
    assert parse_byte_count("512M") == 512 * 1024**2
    assert parse_byte_count("16g") == 16 * 1024**3
    assert parse_byte_count("2GiB") == 2 * 1024**3
    assert parse_byte_count("1.5K") == 1536
    for bad in ("", "lots", "-1", "0", "1X", "1e9"):
        with pytest.raises(ValueError):
            parse_byte_count(bad)


def test_longest_plain_entry_by_brute_force():
    """The dictionary-page scan against max(len) of the entries it was built from, and refusing
    a body that is not exactly ``count`` entries."""
    import random as _random

    from graphrag_audit.io.decoded import _longest_plain

    rng = _random.Random(5)
    for _ in range(300):
        entries = [
            bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 3, 36, 36, 200])))
            for _ in range(rng.randint(0, 40))
        ]
        body = b"".join(len(e).to_bytes(4, "little") + e for e in entries)
        assert _longest_plain(memoryview(body), len(entries)) == max((len(e) for e in entries), default=0)
        if entries:
            assert _longest_plain(memoryview(body), len(entries) + 1) is None
            assert _longest_plain(memoryview(body[:-1]), len(entries)) is None


@pytest.mark.parametrize("encoding", ["dictionary", "plain", "fallback", "lists", "row-groups"])
def test_check_parquet_bounds_the_decoded_size(tmp_path, encoding):
    """For random tables under each encoding the computed size is >= the brute-force decoded size,
    and equal when the check says it is exact."""
    import random as _random

    from graphrag_audit.io import decoded

    rng = _random.Random(encoding)
    for k in range(12):
        n = rng.randint(1, 3000)
        words = ["w" * rng.randint(0, 300) + str(i) for i in range(rng.randint(1, 50))]
        text = [rng.choice(words) if rng.random() > 0.05 else None for _ in range(n)]
        cols = {"s": pa.array(text), "i": pa.array(range(n), pa.int64())}
        if encoding == "lists":
            cols["l"] = pa.array([[rng.choice(words) for _ in range(rng.randint(0, 4))] for _ in range(n)])
        t = pa.table(cols)
        p = tmp_path / f"{encoding}-{k}.parquet"
        opts = {
            "dictionary": dict(use_dictionary=True),
            "plain": dict(use_dictionary=False),
            "fallback": dict(use_dictionary=True, dictionary_pagesize_limit=512),
            "lists": dict(use_dictionary=True),
            "row-groups": dict(use_dictionary=True, row_group_size=max(1, n // 7)),
        }[encoding]
        pq.write_table(t, p, **opts)
        names = list(cols)
        with pa.OSFile(str(p)) as fh:
            found = decoded.check_parquet(p, fh, pq.read_metadata(fh), names, fh.size())
        actual = _actual_decoded(p, names)
        assert found.total >= actual, (encoding, k, found.total, actual)
        if found.exact:
            assert found.total == actual


def test_many_row_groups_are_checked(tmp_path):
    """1,500 row groups of a text column: beyond MAX_PROBED_CHUNKS only the largest chunks are
    probed, until the table fits."""
    from graphrag_audit.io import decoded

    p = tmp_path / "many.parquet"
    t = pa.table({"s": pa.array([f"value {i}" for i in range(1500)])})
    pq.write_table(t, p, row_group_size=1)
    with pa.OSFile(str(p)) as fh:
        meta = pq.read_metadata(fh)
        assert meta.num_row_groups == 1500 > decoded.MAX_PROBED_CHUNKS
        found = decoded.check_parquet(p, fh, meta, ["s"], fh.size())
    assert found.total >= _actual_decoded(p, ["s"])
