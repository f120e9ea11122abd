"""Fuzz the index loaders (and everything behind them) for minutes, outside CI.

    python tests/fuzz/fuzz_loaders.py --minutes 10            # hypothesis-driven (default)
    python tests/fuzz/fuzz_loaders.py --minutes 10 --engine atheris   # coverage-guided, if installed

Each input is a small index directory built from a seed (generated 3.x parquet, 3.x CSV, 1.x
create_final_* with a nodes table; plus a few real small indexes from ../shared/indexes when they
are there) and then damaged: bytes flipped, overwritten, cut, inserted, spliced between files,
the parquet footer length forged; or table-level damage written with pyarrow (columns dropped,
renamed or retyped, cells nulled, rows dropped/duplicated, parents shuffled, extreme and hostile
values). The input is audited in-process (``audit(..., AuditOptions(costs=False))``) and
rendered in every format. Allowed outcomes: an AuditReport that renders, or IndexInputError.
Anything else escaping, a Python-level hang (alarm after --input-timeout s) or a hard hang
(faulthandler watchdog) is a finding: the input directory and the traceback are kept under
--out. The script prints the number of inputs tried and a summary of outcomes.

This file is not collected by pytest (its name does not start with test_).
"""

from __future__ import annotations

import argparse
import collections
import faulthandler
import io
import os
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from hostile import BASE_TREE, HOSTILE_TITLES, Index  # noqa: E402

# graphrag_audit is imported by _load_library() (after atheris instrumentation, if any)
audit = AuditOptions = IndexInputError = render = None
RENDER_FORMATS: list[str] = []


def _load_library() -> None:
    global audit, AuditOptions, IndexInputError, render
    from graphrag_audit.analysis.audit import AuditOptions as _opts
    from graphrag_audit.analysis.audit import audit as _audit
    from graphrag_audit.errors import IndexInputError as _err
    from graphrag_audit.render import render as _render

    audit, AuditOptions, IndexInputError, render = _audit, _opts, _err, _render
    RENDER_FORMATS[:] = ["text", "json"]
    for fmt in ("markdown", "github"):
        try:
            __import__(f"graphrag_audit.render.{fmt}")
            RENDER_FORMATS.append(fmt)
        except ImportError:
            pass


SHARED = REPO.parent / "shared" / "indexes"
REAL_SEEDS = (
    "dulce-v3",
    "dulce-v2plus",
    "output-pr2160",
    "verbs-v0.5",
    "dulce-v0.1-create_final",
    "dulce-v0.3-create_final",
    "verbs-v2",
)
TABLE_SUFFIXES = (".parquet", ".csv")
EXTREME_INTS = [-(2**63), 2**63 - 1, -1, 0, 1, 2, -2, 10**12, 2**31, -(2**31)]
HOSTILE = list(HOSTILE_TITLES.values()) + [
    "",
    " ",
    "nan",
    "None",
    "1.5",
    "-1",
    "[1, 2]",
    "0x10",
    "1e400",
    "\ufffd",
    "[",
    "'",
    '"',
    "\\",
    "[[[[[[[[",
    "['a', ['b']]",
]


class InputTimeout(BaseException):
    """Raised by the alarm: a Python-level hang on one input (BaseException: nothing catches it)."""


def _alarm(signum, frame):
    raise InputTimeout()


# ---- seeds ------------------------------------------------------------------------------------
def build_seeds(root: Path) -> dict[str, Path]:
    """name -> directory of a small valid index (files are read into memory by Seeds)."""
    seeds = {}
    seeds["v3-parquet"] = Index.base().write(root / "v3-parquet")
    seeds["v3-csv"] = Index.base().write(root / "v3-csv", fmt="csv")
    deep = dict(BASE_TREE)
    deep.update({6: (2, 2, ["e1"]), 7: (2, 2, ["e2"]), 8: (3, 6, ["e1"])})
    seeds["v3-deep"] = Index.base(deep).write(root / "v3-deep")
    idx = Index.base()
    for c in ("parent", "children"):
        del idx.communities[c]
    seeds["v3-membership"] = idx.write(root / "v3-membership")
    try:
        from builders import write_v1

        seeds["v1-nodes"] = write_v1(root / "v1-nodes", {c: v for c, v in BASE_TREE.items()})
    except Exception as exc:  # builders.py is another suite's helper: optional here
        print(f"(no 1.x seed: {exc})", file=sys.stderr)
    if SHARED.is_dir():
        for name in REAL_SEEDS:
            src = SHARED / name
            if src.is_dir():
                dst = root / f"real-{name}"
                dst.mkdir()
                for f in src.iterdir():
                    if f.suffix in TABLE_SUFFIXES and f.stat().st_size < 2_000_000:
                        shutil.copyfile(f, dst / f.name)
                seeds[f"real-{name}"] = dst
    return seeds


class Seeds:
    def __init__(self, dirs: dict[str, Path]):
        self.names = sorted(dirs)
        self.files = {
            n: {f.name: f.read_bytes() for f in sorted(d.iterdir()) if f.suffix in TABLE_SUFFIXES}
            for n, d in dirs.items()
        }
        self.tables = {}
        for n, fs in self.files.items():
            for fname, data in fs.items():
                if fname.endswith(".parquet"):
                    self.tables[(n, fname)] = pq.read_table(pa.BufferReader(data))


# ---- damage -----------------------------------------------------------------------------------
def byte_damage(data: bytes, draw, other: bytes) -> bytes:
    """One byte-level mutation; ``draw(kind, *args)`` returns a choice (hypothesis or random)."""
    b = bytearray(data)
    n = len(b)
    op = draw(
        "choice",
        [
            "flip",
            "overwrite",
            "truncate",
            "insert",
            "duplicate",
            "zero",
            "footer",
            "splice",
            "magic",
            "delete",
        ],
    )
    pos = draw("int", 0, max(n - 1, 0))
    span = draw("int", 1, max(1, min(64, n)))
    if op == "flip" and n:
        for _ in range(draw("int", 1, 8)):
            p = draw("int", 0, n - 1)
            b[p] ^= 1 << draw("int", 0, 7)
    elif op == "overwrite" and n:
        b[pos : pos + span] = draw("bytes", span)
    elif op == "truncate":
        del b[pos:]
    elif op == "insert":
        b[pos:pos] = draw("bytes", span)
    elif op == "duplicate":
        b[pos:pos] = b[pos : pos + span]
    elif op == "zero":
        b[pos : pos + span] = bytes(len(b[pos : pos + span]))
    elif op == "footer" and n >= 8:  # forge the parquet footer length
        val = draw("choice", [0, 1, 7, n - 8, n - 12, n, 2**31 - 1, 2**32 - 1, draw("int", 0, 2**32 - 1)])
        b[n - 8 : n - 4] = int(val % 2**32).to_bytes(4, "little")
    elif op == "splice" and other:
        q = draw("int", 0, max(len(other) - 1, 0))
        b[pos : pos + span] = other[q : q + span]
    elif op == "magic" and n >= 4:
        where = draw("choice", ["head", "tail"])
        junk = draw("choice", [b"PAR0", b"PARE", b"\x00\x00\x00\x00", b"PK\x03\x04"])
        if where == "head":
            b[0:4] = junk
        else:
            b[n - 4 : n] = junk
    elif op == "delete" and n:
        del b[pos : pos + span]
    return bytes(b)


def _column_values(col: pa.ChunkedArray) -> list:
    return col.to_pylist()


def table_damage(t: pa.Table, draw) -> pa.Table:
    """One table-level mutation of an arrow table."""
    if t.num_columns == 0 or _has_dictionary(t):
        return t  # a dictionary bomb stays as it is: its values would have to be built to change it
    op = draw(
        "choice",
        [
            "drop_col",
            "rename_col",
            "retype",
            "null_cells",
            "drop_rows",
            "dup_rows",
            "shuffle",
            "extreme",
            "hostile",
            "empty",
            "swap_cols",
            "listify",
            "negate",
            "dict_bomb",
            "dup_name",
        ],
    )
    names = t.column_names
    i = draw("int", 0, len(names) - 1)
    name = names[i]
    n = t.num_rows
    if op == "dict_bomb":  # every row (or list item) names one long string, stored once (see write_parquet)
        size = draw(
            "choice", [1024, 64 << 10, 1 << 20]
        )  # x up to 600 rows (x 50 list items): both sides of the limit
        text = pa.array([draw("choice", ["x", "é", "\n", "[1, 2]"]) * size])
        typ = t.schema.field(i).type
        if pa.types.is_list(typ) or pa.types.is_large_list(typ):
            per = draw("int", 1, 50)
            items = pa.DictionaryArray.from_arrays(pa.array([0] * (n * per), pa.int32()), text)
            arr = pa.ListArray.from_arrays(pa.array(range(0, n * per + 1, per), pa.int32()), items)
        else:
            arr = pa.DictionaryArray.from_arrays(pa.array([0] * n, pa.int32()), text)
        return t.set_column(i, name, arr)
    if op == "dup_name":  # a second column of the same name
        return pa.Table.from_arrays(
            list(t.columns) + [t.column(draw("int", 0, len(names) - 1))], names=names + [name]
        )
    if op == "drop_col":
        return t.remove_column(i)
    if op == "rename_col":
        new = draw("choice", names + ["community", "level", "parent", "id", "title", "entity_ids", "x"])
        if new in names and new != name:
            t = t.remove_column(names.index(new))
            i = t.column_names.index(name)
        return t.rename_columns([new if j == i else c for j, c in enumerate(t.column_names)])
    if op == "swap_cols" and len(names) > 1:
        j = draw("int", 0, len(names) - 1)
        cols = list(t.columns)
        cols[i], cols[j] = cols[j], cols[i]
        return pa.table(dict(zip(names, cols)))
    if op == "empty":
        return t.slice(0, 0)
    if op == "drop_rows" and n:
        keep = sorted(set(draw("int", 0, n - 1) for _ in range(draw("int", 1, n))))
        return t.take(pa.array(keep, type=pa.int64()))
    if op == "dup_rows" and n:
        rows = list(range(n)) + [draw("int", 0, n - 1) for _ in range(draw("int", 1, 4))]
        return t.take(pa.array(rows, type=pa.int64()))
    vals = _column_values(t.column(i))
    if op == "retype":
        target = draw(
            "choice", ["string", "float", "int32", "binary", "null", "bool", "large_string", "uint64"]
        )
        try:
            if target == "string":
                arr = pa.array([None if v is None else str(v) for v in vals], type=pa.string())
            elif target == "large_string":
                arr = pa.array([None if v is None else str(v) for v in vals], type=pa.large_string())
            elif target == "binary":
                arr = pa.array(
                    [None if v is None else str(v).encode() + draw("bytes", 1) for v in vals],
                    type=pa.binary(),
                )
            elif target == "null":
                arr = pa.nulls(n)
            elif target == "float":
                arr = t.column(i).cast(pa.float64(), safe=False)
            elif target == "int32":
                arr = t.column(i).cast(pa.int32(), safe=False)
            elif target == "uint64":
                arr = t.column(i).cast(pa.uint64(), safe=False)
            else:
                arr = pa.array(
                    [bool(v) if v is not None and not isinstance(v, (list, dict)) else None for v in vals],
                    type=pa.bool_(),
                )
        except (pa.ArrowException, ValueError, TypeError):
            return t
        return t.set_column(i, name, arr)
    if op == "listify":
        try:
            arr = pa.array([None if v is None else [v] for v in vals])
        except (pa.ArrowException, ValueError, TypeError):
            return t
        return t.set_column(i, name, arr)
    if not n:
        return t
    rows = [draw("int", 0, n - 1) for _ in range(draw("int", 1, min(n, 6)))]
    typ = t.schema.field(i).type
    if op == "null_cells":
        for r in rows:
            vals[r] = None
    elif op == "shuffle":
        order = list(range(n))
        random.Random(draw("int", 0, 2**32)).shuffle(order)
        vals = [vals[k] for k in order]
    elif op == "extreme" and pa.types.is_integer(typ):
        for r in rows:
            vals[r] = draw("choice", EXTREME_INTS)
        typ = pa.int64()
    elif op == "extreme" and pa.types.is_floating(typ):
        for r in rows:
            vals[r] = draw("choice", [float("nan"), float("inf"), -float("inf"), 1e300, -0.0, 0.5, 1e12])
    elif op == "hostile" and (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
        for r in rows:
            vals[r] = draw("choice", HOSTILE)
    elif op == "negate" and pa.types.is_integer(typ):
        vals = [None if v is None else -v for v in vals]
        typ = pa.int64()
    elif (pa.types.is_list(typ) or pa.types.is_large_list(typ)) and op in ("extreme", "hostile", "negate"):
        for r in rows:  # list cells: empty, a self-reference, or a stray number
            vals[r] = draw("choice", [[], None, (vals[r] or []) * 2, (vals[r] or [])[:1]])
    else:
        return t
    try:
        arr = pa.array(vals, type=typ)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        try:
            arr = pa.array(vals)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            return t
    return t.set_column(i, name, arr)


def _has_dictionary(t: pa.Table) -> bool:
    return any(
        pa.types.is_dictionary(f.type)
        or (pa.types.is_list(f.type) and pa.types.is_dictionary(f.type.value_type))
        for f in t.schema
    )


def write_parquet_table(t: pa.Table) -> bytes:
    """Parquet bytes; a dictionary column (dict_bomb) keeps its dictionary as the dictionary page
    and reads back as plain strings (no stored arrow schema), as a bomb would."""
    sink = pa.BufferOutputStream()
    if _has_dictionary(t):
        pq.write_table(
            t,
            sink,
            store_schema=False,
            compression="zstd",
            dictionary_pagesize_limit=128 << 20,
            write_statistics=False,
        )
    else:
        pq.write_table(t, sink)
    return sink.getvalue().to_pybytes()


def write_csv_table(t: pa.Table, draw=None) -> bytes:
    """graphrag 3 style CSV: lists as Python reprs; sometimes with a UTF-8 BOM, CRLF rows (what
    csv.DictWriter writes) or CRs inside fields."""
    import csv

    style = draw("choice", ["plain", "bom", "crlf", "cr-in-cells"]) if draw else "plain"
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n" if style == "crlf" else "\n")
    w.writerow(t.column_names)
    cols = [c.to_pylist() for c in t.columns]
    for r in range(t.num_rows):
        row = [
            ""
            if c[r] is None
            else repr(c[r])
            if isinstance(c[r], list)
            else c[r].decode("utf-8", "replace")
            if isinstance(c[r], bytes)
            else c[r]
            for c in cols
        ]
        if style == "cr-in-cells":
            row = [v.replace("\n", "\r\n") + "\r" if isinstance(v, str) and v else v for v in row]
        w.writerow(row)
    text = ("\ufeff" if style == "bom" else "") + buf.getvalue()
    return text.encode("utf-8", "surrogateescape")


# ---- one input ----------------------------------------------------------------------------------
def make_input(seeds: Seeds, draw, out: Path) -> list[str]:
    """Write one damaged index into ``out``; returns a description of what was done."""
    seed = draw("choice", seeds.names)
    files = dict(seeds.files[seed])
    plan = [f"seed {seed}"]
    for _ in range(draw("int", 1, 3)):
        fname = draw("choice", sorted(files))
        kind = draw("choice", ["bytes", "table", "table", "file"])
        if kind == "table" and (seed, fname) in seeds.tables:
            t = seeds.tables[(seed, fname)]
            for _ in range(draw("int", 1, 3)):
                t = table_damage(t, draw)
            as_csv = draw("choice", [False, False, True]) and not _has_dictionary(t)  # bombs: parquet only
            try:
                if as_csv:
                    data = write_csv_table(t, draw)
                    del files[fname]
                    fname = fname.rsplit(".", 1)[0] + ".csv"
                    files[fname] = data
                else:
                    files[fname] = write_parquet_table(t)
                plan.append(f"table damage on {fname} ({t.num_rows} rows, {t.schema.names})")
            except (pa.ArrowException, ValueError, TypeError, OverflowError, UnicodeError) as exc:
                plan.append(f"table damage on {fname} not writable ({type(exc).__name__})")
        elif kind == "file":
            op = draw("choice", ["delete", "rename_ext", "dir", "empty"])
            plan.append(f"file {op} {fname}")
            if op == "delete":
                files.pop(fname)
            elif op == "rename_ext":
                data = files.pop(fname)
                stem, ext = fname.rsplit(".", 1)
                files[stem + (".csv" if ext == "parquet" else ".parquet")] = data
            elif op == "dir":
                files[fname] = None  # a directory named like the table
            else:
                files[fname] = b""
        elif files.get(fname):
            other = files[draw("choice", sorted(files))] or b""
            for _ in range(draw("int", 1, 4)):
                files[fname] = byte_damage(files[fname], draw, other)
            plan.append(f"byte damage on {fname} ({len(files[fname])} bytes)")
        if not files:
            break
    out.mkdir(parents=True)
    for fname, data in files.items():
        if data is None:
            (out / fname).mkdir()
        else:
            (out / fname).write_bytes(data)
    return plan


def run_input(path: Path, timeout: float) -> tuple[str, str]:
    """('ok'|'input-error'|'crash'|'hang', detail)."""
    # a hard hang (stuck in C, where the alarm cannot interrupt) dumps every thread and exits
    faulthandler.cancel_dump_traceback_later()
    faulthandler.dump_traceback_later(timeout * 6 + 60, repeat=False, exit=True)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        report = audit(path, AuditOptions(level=1, costs=False))
        for fmt in RENDER_FORMATS:
            kw = {"width": 100, "color": True, "focus": 1} if fmt == "text" else {}
            render(report, fmt, **kw)
        return "ok", ""
    except IndexInputError as exc:
        # group by the kind of problem: quoted values and numbers folded
        problem = re.sub(r"'[^']*'|\"[^\"]*\"|-?\d+(\.\d+)?", "…", exc.problem.split(" (")[0])[:80]
        return "input-error", problem
    except InputTimeout:
        return "hang", f"no result within {timeout}s\n" + traceback.format_exc()
    except Exception:  # noqa: BLE001 - this is what the fuzzer looks for
        return "crash", traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.work = Path(tempfile.mkdtemp(prefix="fuzz-loaders-"))
        self.seeds = Seeds(build_seeds(self.work / "seeds"))
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.count = 0
        self.outcomes = collections.Counter()
        self.problems = collections.Counter()
        self.findings: list[Path] = []
        self.t0 = time.monotonic()
        self.last_report = self.t0

    def one(self, draw) -> None:
        d = self.work / "input"
        if d.exists():
            shutil.rmtree(d)
        plan = make_input(self.seeds, draw, d)
        (self.work / "current-plan.txt").write_text("\n".join(plan), encoding="utf-8", errors="replace")
        kind, detail = run_input(d, self.args.input_timeout)
        self.count += 1
        self.outcomes[kind] += 1
        if kind == "input-error":
            self.problems[detail] += 1
        elif kind in ("crash", "hang"):
            keep = self.out / f"{kind}-{len(self.findings):04d}"
            shutil.copytree(d, keep, symlinks=True)
            (keep / "PLAN.txt").write_text(
                "\n".join(plan) + "\n\n" + detail, encoding="utf-8", errors="replace"
            )
            self.findings.append(keep)
            last = detail.strip().splitlines()[-1] if detail.strip() else kind
            print(
                f"[{self.elapsed():7.1f}s] {kind.upper()} #{len(self.findings)}: {last[:200]} -> {keep}",
                flush=True,
            )
        if time.monotonic() - self.last_report > 60:
            self.last_report = time.monotonic()
            self.progress()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def done(self) -> bool:
        return self.elapsed() > self.args.minutes * 60 or (
            self.args.max_inputs and self.count >= self.args.max_inputs
        )

    def progress(self) -> None:
        print(
            f"[{self.elapsed():7.1f}s] {self.count} inputs: "
            + ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items())),
            flush=True,
        )

    def summary(self) -> int:
        self.progress()
        print("input errors by problem:")
        for p, k in self.problems.most_common():
            print(f"  {k:6d}  {p}")
        print(
            f"inputs tried: {self.count}; crashes/hangs: {len(self.findings)}"
            + (f" (kept under {self.out})" if self.findings else "")
        )
        shutil.rmtree(self.work, ignore_errors=True)
        return 1 if self.findings else 0


def run_hypothesis(fz: Fuzzer) -> None:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    def draw_with(data):
        def draw(kind, *a):
            if kind == "choice":
                return data.draw(st.sampled_from(a[0]))
            if kind == "int":
                return data.draw(st.integers(a[0], a[1]))
            if kind == "bytes":
                return data.draw(st.binary(min_size=a[0], max_size=a[0]))
            raise ValueError(kind)

        return draw

    # small chunks, checked for time in between (a time check inside would make generation "flaky")
    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )
    @given(st.data())
    def chunk(data):
        fz.one(draw_with(data))

    while not fz.done():
        chunk()


def run_random(fz: Fuzzer, seed: int) -> None:
    rng = random.Random(seed)

    def draw(kind, *a):
        if kind == "choice":
            return rng.choice(a[0])
        if kind == "int":
            return rng.randint(a[0], a[1])
        if kind == "bytes":
            return bytes(rng.getrandbits(8) for _ in range(a[0]))
        raise ValueError(kind)

    while not fz.done():
        fz.one(draw)


def run_atheris(fz: Fuzzer) -> None:
    """Coverage-guided: libFuzzer mutates the bytes of one table file of a seed (first byte picks
    the seed file); graphrag_audit is instrumented."""
    import atheris

    slots = [(n, f) for n in fz.seeds.names for f in sorted(fz.seeds.files[n])]
    corpus = fz.work / "corpus"
    corpus.mkdir()
    for k, (n, f) in enumerate(slots[:256]):
        (corpus / f"seed-{k}").write_bytes(bytes([k]) + fz.seeds.files[n][f])

    def one_input(data: bytes):
        if not data:
            return
        n, f = slots[data[0] % len(slots)]
        files = dict(fz.seeds.files[n])
        files[f] = data[1:]
        d = fz.work / "input"
        if d.exists():
            shutil.rmtree(d)
        d.mkdir()
        for name, b in files.items():
            (d / name).write_bytes(b)
        kind, detail = run_input(d, fz.args.input_timeout)
        fz.count += 1
        fz.outcomes[kind] += 1
        if kind == "input-error":
            fz.problems[detail] += 1
        if kind in ("crash", "hang"):
            keep = fz.out / f"{kind}-{len(fz.findings):04d}"
            shutil.copytree(d, keep)
            (keep / "PLAN.txt").write_text(f"atheris input on {n}/{f}\n\n{detail}", encoding="utf-8")
            fz.findings.append(keep)
            raise RuntimeError(f"{kind}: kept under {keep}\n{detail}")

    atheris.instrument_all() if fz.args.instrument_all else None
    argv = [
        sys.argv[0],
        str(corpus),
        f"-max_total_time={int(fz.args.minutes * 60)}",
        "-rss_limit_mb=3072",
        f"-artifact_prefix={fz.out}{os.sep}",
        f"-timeout={int(fz.args.input_timeout) + 5}",
        "-print_final_stats=1",
    ]
    atheris.Setup(argv, one_input)
    try:
        atheris.Fuzz()
    except SystemExit:
        pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="how long to fuzz (default 10)")
    ap.add_argument("--max-inputs", type=int, default=0, help="stop after this many inputs (0 = no limit)")
    ap.add_argument("--engine", choices=("hypothesis", "random", "atheris"), default="hypothesis")
    ap.add_argument("--seed", type=int, default=None, help="random engine seed")
    ap.add_argument(
        "--out",
        default=os.path.join(tempfile.gettempdir(), "graphrag-audit-fuzz"),
        help="where crashing/hanging inputs are kept",
    )
    ap.add_argument(
        "--input-timeout", type=float, default=20.0, help="seconds per input before it counts as a hang"
    )
    ap.add_argument(
        "--memory-gib", type=float, default=3.0, help="address-space limit of the fuzzing process"
    )
    ap.add_argument("--instrument-all", action="store_true", help="atheris: instrument every module (slow)")
    args = ap.parse_args(argv)

    lim = int(args.memory_gib * 1024**3)
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    signal.signal(signal.SIGALRM, _alarm)
    if args.engine == "atheris":
        import atheris

        with atheris.instrument_imports(include=["graphrag_audit"]):
            _load_library()
    else:
        _load_library()
    fz = Fuzzer(args)
    print(f"work dir {fz.work} (a hard hang leaves the input there: input/, current-plan.txt)", flush=True)
    print(
        f"fuzzing the loaders for {args.minutes:g} min with {args.engine}; seeds: {', '.join(fz.seeds.names)}; "
        f"formats: {', '.join(RENDER_FORMATS)}",
        flush=True,
    )

    if args.engine == "hypothesis":
        run_hypothesis(fz)
    elif args.engine == "random":
        run_random(fz, args.seed if args.seed is not None else random.randrange(2**32))
    else:
        run_atheris(fz)
    faulthandler.cancel_dump_traceback_later()
    return fz.summary()


if __name__ == "__main__":
    sys.exit(main())
