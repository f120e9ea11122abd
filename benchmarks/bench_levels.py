#!/usr/bin/env python
"""Benchmark the full ``levels --format json`` audit on synthetic indexes of 10k-1M entities.

Usage (from the repository root, the package installed or importable)::

    python benchmarks/bench_levels.py                      # 10k, 100k, 1m; 3.x and 1.x layouts
    python benchmarks/bench_levels.py --sizes 10k,100k --layouts 3.x --no-exact
    python benchmarks/bench_levels.py --repeat 3 --markdown docs-table.md --json results.json
    python benchmarks/bench_levels.py --sizes 1m --code /path/to/other/checkout    # compare versions
    python benchmarks/bench_levels.py --sizes 10k --graphrag-python-3x VENV/bin/python   # graphrag 3.x to run
    python benchmarks/bench_levels.py --sizes 1m --no-graphrag-naive   # skip graphrag's per-level run (~20 min at 1M)
    python benchmarks/bench_levels.py --sizes 1m --shapes all --no-exact --no-naive --no-graphrag-naive  # index shapes

Data: ``synthetic.leiden_like(n, max_cluster_size=24, seed=0)`` (about n/8.7
communities and reports, reports of 1-4 KB in English/Chinese/Russian; the shape "default"),
and with ``--shapes`` the other shapes of ``synthetic.SHAPES`` (wide-shallow, deep-narrow,
many-tiny; ``synthetic.leiden_shape``), written once in the
graphrag 3.x layout and the 1.0-1.2 layout into a cache directory outside the repository
(default ``$TMPDIR/graphrag-audit-bench``; ``--cache DIR``). It is regenerated when the
generator's source or the parameters change (``--trust-cache``: only when the parameters change,
for a generator change that keeps the output byte-identical). Each shape's communities, max level,
entities per community (membership rows / communities) and report columns are read from the
written index and printed with its row.

Every measurement runs in a fresh child process, with the table files in the page cache and the
package's bytecode compiled once beforehand, as ``pip install`` leaves it (:func:`bytecode_env`);
wall time is taken around the child, CPU time (user + sys) and peak RSS come from ``os.wait4`` (that
child only). The kernel's time (sys) is also given apart, with the ratio of user time alone: it is
mostly the clearing of freshly faulted pages, whose cost on this machine moved from run to run
with the kernel's huge pages more than with the code. Measured per
size and layout:

* **import floor**: a process that only imports the audit's modules (the fixed start-up cost).
* **bare read**: ``pyarrow.parquet.read_table`` of the same tables and columns ``load.py`` reads
  (column lists imported from ``graphrag_audit.io.load``), all held until the end; its Arrow size
  (``Table.nbytes``) is the denominator of the memory ratio. It runs with transparent huge pages
  off (the audit runs with the system's setting), so the yardstick does not move with the
  kernel's handling of huge pages: with them on, the same read of
  the default 3.x index took 3.78-9.54 s (kernel 2.4-7.9 s) against 2.32-2.82 s without
  (measured 2026-12-03). This small-page read is the yardstick of the ratio targets
  (it is the stable one of the two). The shapes table also gives the same read
  with the system's huge pages (``system-pages``) and the audit's ratio to it, and each read's
  slowest repeat beside its best: on this machine, three runs of each read per 1M index, by
  turns, spread by 1.10-1.48x on small pages and 1.73-3.99x on the system's, which was the faster
  read in 4 runs of 24. ``--turns`` leaves that read out. By default the bare reads run one
  after another, then the audits (each side after runs of its own kind, as in every earlier
  session's table). With ``--turns`` they run by turns (bare, audit, bare, audit, ...) and the
  shapes table also gives each turn's ratio: on this machine a bare read that follows an audit
  is slower than one that follows a bare read, so the two orders give
  different ratios for the same code.
* **audit**: ``python -m graphrag_audit levels DIR -f json -o FILE --fail-on never`` with
  ``--tokenizer estimate`` and with ``--tokenizer cl100k_base`` (exact). The exact-counting extra
  is the difference of the two wall times; its throughput is the report text (UTF-8 bytes of
  every report's ``full_content`` and ``title``) divided by that extra.
* **roll-up-only naive**: graphrag's ``read_indexer_reports`` pandas roll-up restated (see
  ``NAIVE_CODE``: 3.x on ``communities``; 1.x on ``create_final_nodes``), run once per level
  N = 0 .. max level and None, after ``pandas.read_parquet`` of the columns it needs. Only the
  report selection, no costs; its per-level report counts are checked against the audit's JSON.
* **graphrag per-level naive**: graphrag's *own* query-side functions, imported from a real
  graphrag install and run in that install's interpreter (``--graphrag-python-3x``: graphrag
  3.x for the 3.x layout; ``--graphrag-python-1x``: graphrag 1.x for the 1.0-1.2 layout), once
  per level N = 0 .. max level and None, after ``pandas.read_parquet`` of the whole tables:
  ``read_indexer_reports``, ``read_indexer_entities``, then ``build_community_context`` with the
  parameters ``get_global_search_engine`` passes (``single_batch=False``, full content, rank,
  normalised occurrence weight, the audit's ``max_context_tokens``, graphrag's tiktoken
  tokenizer for cl100k_base). That is what a user sweeping ``community_level`` runs to learn
  what the audit prints in one pass (which reports are sent, how many map calls), minus the LLM.
  Per level: report count, community ids, map calls (batches) and reports in context, checked
  against the audit's ``--tokenizer cl100k_base`` JSON (``v2`` for 3.x, ``v1`` for 1.x); a
  disagreement is printed loudly. Its wall time is compared with the exact audit's.
* **tokens**: counter throughput on the ``full_content`` strings (estimate and cl100k_base).
* **phases**: ``audit()`` in-process phase timings plus the JSON render (for reading the profile).

Nothing here asserts a time; tests never time anything.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODE = REPO  # the directory holding the graphrag_audit package the children import (--code)
sys.path.insert(0, str(REPO))  # this checkout's column lists and generator, whatever is installed
SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
LAYOUTS = ("3.x", "1.0-1.2")
MAX_CLUSTER_SIZE = 24  # with the default fanout: about entities / 8.7 communities (default 10: / 4)
SEED = 0

# ----------------------------------------------------------------------------------------
# child programs (each runs in a fresh interpreter)
# ----------------------------------------------------------------------------------------
GENERATE_CODE = textwrap.dedent("""
    import json, sys
    import os, sys
    sys.path.insert(0, os.path.join(os.getcwd(), "tests"))  # the generator is test infrastructure
    try:  # revisions before the redesign shipped it inside the package
        from graphrag_audit.synthetic import leiden_like, write_index
    except ImportError:
        from synthetic import leiden_like, write_index
    n, mcs, seed, out, layouts = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
    shape = os.environ.get("BENCH_SHAPE_KWARGS")  # a non-default shape: leiden_like's keyword arguments
    spec = leiden_like(n, seed=seed, **json.loads(shape)) if shape else leiden_like(n, max_cluster_size=mcs, seed=seed)
    for layout in layouts:
        write_index(spec, f"{out}/{layout}", layout)
    print(json.dumps({"communities": int(len(spec.communities)), "reports": int(len(spec.reports)),
                      "max_level": int(spec.communities["level"].max())}))
""")

IMPORT_FLOOR_CODE = "import graphrag_audit.cli, graphrag_audit.analysis.audit, graphrag_audit.render"

BARE_READ_CODE = textwrap.dedent("""
    import json, sys
    # small pages only, as the audit runs (see the module doc); "system-pages": as the system has them
    if sys.platform.startswith("linux") and sys.argv[2:] != ["system-pages"]:
        import ctypes
        ctypes.CDLL(None).prctl(ctypes.c_int(41), ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                                ctypes.c_ulong(0))
    import pyarrow.parquet as pq
    spec = json.loads(sys.argv[1])
    tables = {name: pq.read_table(path, columns=cols) for name, (path, cols) in spec.items()}
    print(json.dumps({
        "arrow_bytes": sum(t.nbytes for t in tables.values()),
        "tables": {name: {"rows": t.num_rows, "bytes": t.nbytes,
                          "columns": {c: t.column(c).nbytes for c in t.column_names}}
                   for name, t in tables.items()},
    }))
""")

# graphrag's read_indexer_reports roll-up, restated with the same pandas operations
# (3.x: packages/graphrag/graphrag/query/indexer_adapters.py; 1.x: the same function on
# create_final_nodes), called once per community_level exactly as a user sweeping levels would.
NAIVE_CODE = textwrap.dedent("""
    import json, sys, time
    import pandas as pd
    layout, spec = sys.argv[1], json.loads(sys.argv[2])
    t0 = time.perf_counter()
    reports = pd.read_parquet(spec["reports"][0], columns=spec["reports"][1])
    if layout == "3.x":
        rollup_input = pd.read_parquet(spec["communities"][0], columns=spec["communities"][1])
    else:
        rollup_input = pd.read_parquet(spec["nodes"][0], columns=spec["nodes"][1])
    t_read = time.perf_counter() - t0

    def filter_under(df, n):  # graphrag's _filter_under_community_level
        return df[(df.level <= n) | df.level.isna()]

    def read_indexer_reports_3x(final_community_reports, final_communities, community_level):
        reports_df = final_community_reports
        nodes_df = final_communities.explode("entity_ids")
        if community_level is not None:
            nodes_df = filter_under(nodes_df, community_level)
            reports_df = filter_under(reports_df, community_level)
        nodes_df = nodes_df.copy()
        nodes_df.loc[:, "community"] = nodes_df["community"].fillna(-1)
        nodes_df.loc[:, "community"] = nodes_df["community"].astype(int)
        nodes_df = nodes_df.groupby(["title"]).agg({"community": "max"}).reset_index()
        filtered_community_df = nodes_df["community"].drop_duplicates()
        return reports_df.merge(filtered_community_df, on="community", how="inner")

    def read_indexer_reports_1x(final_community_reports, final_nodes, community_level):
        report_df = final_community_reports
        entity_df = final_nodes
        if community_level is not None:
            entity_df = filter_under(entity_df, community_level)
            report_df = filter_under(report_df, community_level)
        entity_df = entity_df.copy()
        entity_df.loc[:, "community"] = entity_df["community"].fillna(-1)
        entity_df.loc[:, "community"] = entity_df["community"].astype(int)
        entity_df = entity_df.groupby(["title"]).agg({"community": "max"}).reset_index()
        filtered_community_df = entity_df["community"].drop_duplicates()
        return report_df.merge(filtered_community_df, on="community", how="inner")

    fn = read_indexer_reports_3x if layout == "3.x" else read_indexer_reports_1x
    top = int(max(rollup_input["level"].max(), reports["level"].max()))
    counts = {}
    t1 = time.perf_counter()
    for n in list(range(top + 1)) + [None]:
        counts[str(n)] = int(len(fn(reports, rollup_input, n)))
    t_rollup = time.perf_counter() - t1
    print(json.dumps({"read_s": t_read, "rollup_s": t_rollup, "counts": counts}))
""")

# graphrag's OWN query-side code (imported from a real graphrag install, run in that install's
# interpreter), once per community_level N = 0 .. max level and None, as a user sweeping levels
# with graphrag's global search would run it to learn what the audit reports in one pass:
# read_indexer_reports -> read_indexer_entities -> build_community_context(single_batch=False,
# the parameters get_global_search_engine passes). Nothing is copied: the functions are imported.
# The LLM calls are not made; the batches build_community_context returns are the map calls.
# read_indexer_communities (used only by dynamic selection) is not run: the naive is not charged
# for it. argv: layout, {table: path}, max_context_tokens, encoding name, progress file.
GRAPHRAG_NAIVE_CODE = textwrap.dedent("""
    import json, sys, time, warnings
    warnings.filterwarnings("ignore")  # pandas SettingWithCopy / FutureWarning noise from graphrag
    t_start = time.perf_counter()
    import inspect
    import importlib.metadata
    import pandas as pd
    from graphrag.query.context_builder.community_context import build_community_context
    from graphrag.query.indexer_adapters import read_indexer_entities, read_indexer_reports
    layout, paths, max_tokens, encoding = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    progress = open(sys.argv[5], "a", buffering=1) if len(sys.argv) > 5 else None
    params = inspect.signature(build_community_context).parameters
    if "tokenizer" in params:  # graphrag >= 2.x: a Tokenizer with num_tokens(text)
        from graphrag.tokenizer.get_tokenizer import get_tokenizer
        inner = get_tokenizer(encoding_model=encoding)  # graphrag's tiktoken-backed Tokenizer
        method = "num_tokens"
    else:  # graphrag 1.x: a tiktoken Encoding, counted as len(encode(text))
        import tiktoken
        inner = tiktoken.get_encoding(encoding)
        method = "encode"
    tok_s = [0.0]
    tok_calls = [0]

    class Timed:  # forwards to graphrag's tokenizer, timing the calls (tokenisation share)
        def __getattr__(self, name):
            return getattr(inner, name)
    def _timed(*a, **k):
        t = time.perf_counter()
        try:
            return getattr(inner, method)(*a, **k)
        finally:
            tok_s[0] += time.perf_counter() - t
            tok_calls[0] += 1
    setattr(Timed, method, staticmethod(_timed))
    tokenizer = Timed()
    kwargs = dict(use_community_summary=False, column_delimiter="|", shuffle_data=True,
                  include_community_rank=True, min_community_rank=0, community_rank_name="rank",
                  include_community_weight=True, community_weight_name="occurrence weight",
                  normalize_community_weight=True, single_batch=False, context_name="Reports",
                  random_state=86)
    kwargs["tokenizer" if "tokenizer" in params else "token_encoder"] = tokenizer
    kwargs["max_context_tokens" if "max_context_tokens" in params else "max_tokens"] = max_tokens
    t_import = time.perf_counter() - t_start

    read_s = {}
    frames = {}
    for name, path in paths.items():  # whole tables, as graphrag's query CLI loads them
        t = time.perf_counter()
        frames[name] = pd.read_parquet(path)
        read_s[name] = time.perf_counter() - t
    reports_df = frames["reports"]
    membership = frames["communities"] if layout == "3.x" else frames["nodes"]
    entities_df = frames["entities"]
    top = int(max(membership["level"].max(), reports_df["level"].max()))

    levels = []
    for n in list(range(top + 1)) + [None]:
        tok_s[0], tok_calls[0] = 0.0, 0
        t0 = time.perf_counter()
        reports = read_indexer_reports(reports_df, membership, n)
        t1 = time.perf_counter()
        if layout == "3.x":
            entities = read_indexer_entities(entities_df, membership, n)
        else:
            entities = read_indexer_entities(membership, entities_df, n)
        t2 = time.perf_counter()
        chunks, records = build_community_context(community_reports=reports, entities=entities, **kwargs)
        t3 = time.perf_counter()
        in_context = int(sum(len(df) for df in records.values())) if records else 0
        row = {"community_level": n, "count": len(reports), "map_calls": len(chunks),
               "reports_in_context": in_context, "entities": len(entities),
               "community_ids": sorted(int(float(r.short_id)) for r in reports),
               "reports_s": t1 - t0, "entities_s": t2 - t1, "context_s": t3 - t2,
               "tokenise_s": tok_s[0], "tokenise_calls": tok_calls[0]}
        levels.append(row)
        del reports, entities, chunks, records
        if progress:
            progress.write(json.dumps({k: v for k, v in row.items() if k != "community_ids"}) + "\\n")
    print(json.dumps({"graphrag_version": importlib.metadata.version("graphrag"),
                      "pandas_version": pd.__version__, "import_s": t_import, "read_s": read_s,
                      "levels": levels}))
""")

GRAPHRAG_PROBE_CODE = textwrap.dedent("""
    import importlib.metadata, json
    import graphrag.query.context_builder.community_context, graphrag.query.indexer_adapters
    print(json.dumps({"graphrag": importlib.metadata.version("graphrag")}))
""")

TOKENS_CODE = textwrap.dedent("""
    import json, sys, time
    import pyarrow.compute as pc, pyarrow.parquet as pq
    from graphrag_audit.graphrag.tokens import get_token_counter
    t = pq.read_table(sys.argv[1], columns=["title", "full_content"])
    text_bytes = int(pc.sum(pc.binary_length(t["full_content"])).as_py() or 0)
    title_bytes = int(pc.sum(pc.binary_length(t["title"])).as_py() or 0)
    t0 = time.perf_counter()
    pc.sum(pc.binary_length(t["full_content"])).as_py()  # what the audit's estimate reads
    arrow_s = time.perf_counter() - t0
    texts = t["full_content"].to_pylist()
    texts = ["" if x is None else x for x in texts]
    out = {"text_bytes": text_bytes, "title_bytes": title_bytes, "arrow_binary_length_s": arrow_s}
    for name in ("estimate", "cl100k_base"):
        counter = get_token_counter(name)
        counter.count("warm up")
        t0 = time.perf_counter()
        total = int(counter.count_many(texts).sum())
        out[name] = {"seconds": time.perf_counter() - t0, "tokens": total}
    print(json.dumps(out))
""")

PHASES_CODE = textwrap.dedent("""
    import json, sys, time
    from graphrag_audit.analysis.audit import AuditOptions, audit
    from graphrag_audit.render import render
    t0 = time.perf_counter()
    report = audit(sys.argv[1], AuditOptions(tokenizer=sys.argv[2]))
    t1 = time.perf_counter()
    text = render(report, "json")
    t2 = time.perf_counter()
    print(json.dumps({"audit_s": t1 - t0, "render_s": t2 - t1, "json_bytes": len(text),
                      "phases": dict(report.timings)}))
""")


# ----------------------------------------------------------------------------------------
# running children
# ----------------------------------------------------------------------------------------
_COMPILED: set[Path] = set()


def bytecode_env(code: Path, env: dict) -> dict:
    """``env`` for a child that imports the checkout ``code``'s package from bytecode, as after
    ``pip install``: the package is compiled (into its ``__pycache__``, git-ignored) before the
    first child. A machine that sets ``PYTHONDONTWRITEBYTECODE`` (this one does) otherwise compiles
    the package's modules in every child: 0.15 s more per process, on the audit's side of a ratio
    only (the dependencies' bytecode is installed with them)."""
    env = dict(env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if code not in _COMPILED:  # (compileall rewrites only what changed)
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(code / "graphrag_audit")],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        _COMPILED.add(code)
    return env


def run_child(argv: list[str], *, code: Path | None = None, extra_env: dict | None = None) -> dict:
    """Run ``argv`` in a fresh process importing the package from ``code`` (default ``CODE``), from
    bytecode (:func:`bytecode_env`): wall s, cpu s (user + sys), peak RSS bytes, stdout.
    ``extra_env`` is added to the environment."""
    code = code or CODE
    env = bytecode_env(code, dict(os.environ, **(extra_env or {})))
    env.setdefault("PYTHONHASHSEED", "0")
    env["PYTHONPATH"] = os.pathsep.join([str(code)] + [p for p in [env.get("PYTHONPATH")] if p])
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=str(code), env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} ... exited {proc.returncode}:\n{stderr[-3000:]}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "rss_bytes": usage.ru_maxrss * 1024,
        "stdout": stdout,
    }


def best_of(repeat: int, argv: list[str], extra_env: dict | None = None, before_each=None) -> dict:
    """Run ``repeat`` times (at least once): :func:`best_runs` of the runs. ``before_each()`` runs
    before every run (e.g. to remove the previous run's output directory)."""
    runs = []
    for _ in range(max(1, repeat)):
        if before_each is not None:
            before_each()
        runs.append(run_child(argv, extra_env=extra_env))
    return best_runs(runs)


def best_runs(runs: list[dict]) -> dict:
    """Minimum wall, cpu, user and kernel (sys) time, maximum RSS, the last stdout; and the
    slowest wall time (``wall_max_s``: how far the runs spread)."""
    best = {k: min(r[k] for r in runs) for k in ("wall_s", "cpu_s", "user_s", "sys_s")}
    return dict(
        best,
        wall_max_s=max(r["wall_s"] for r in runs),
        rss_bytes=max(r["rss_bytes"] for r in runs),
        stdout=runs[-1]["stdout"],
    )


#: what a row keeps of a measurement
KEPT = ("wall_s", "wall_max_s", "cpu_s", "user_s", "sys_s", "rss_bytes")


def best_of_pairs(repeat: int, first: list[str], second: list[str]) -> tuple[dict, dict, list[float]]:
    """Run ``first`` and ``second`` by turns, ``repeat`` times each: (best of ``first``, best of
    ``second``, each turn's wall-time ratio second / first). The turns show how far one turn's
    ratio is from another's on a machine whose speed drifts (bare reads here moved by 0.4-1 s
    within an hour)."""
    a, b = [], []
    for _ in range(repeat):
        a.append(run_child(first))
        b.append(run_child(second))
    return best_runs(a), best_runs(b), [y["wall_s"] / x["wall_s"] for x, y in zip(a, b)]


# ----------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------
def generator_digest() -> str:
    src = (REPO / "tests" / "synthetic.py").read_bytes()
    return hashlib.sha256(src).hexdigest()[:16]


def shape_kwargs(shape: str) -> dict:
    """leiden_like's keyword arguments for a shape of synthetic.SHAPES (this checkout's generator)."""
    sys.path.insert(0, str(REPO / "tests"))
    from synthetic import SHAPES

    return dict(SHAPES[shape])


def ensure_data(
    cache: Path,
    label: str,
    n: int,
    layouts: list[str],
    regenerate: bool,
    shape: str = "default",
    trust: bool = False,
) -> dict:
    """The cached index of ``n`` entities in ``shape`` (generated when missing or stale). The default
    shape keeps its historic directory and stamp, so caches made before shapes existed stay valid."""
    if shape == "default":
        base = cache / f"{label}-mcs{MAX_CLUSTER_SIZE}-seed{SEED}"
        want = {"entities": n, "max_cluster_size": MAX_CLUSTER_SIZE, "seed": SEED}
        env = None
    else:
        kwargs = shape_kwargs(shape)
        base = cache / f"{label}-{shape}-seed{SEED}"
        want = {"entities": n, "shape": shape, "shape_kwargs": kwargs, "seed": SEED}
        env = {"BENCH_SHAPE_KWARGS": json.dumps(kwargs)}
    want.update(generator=generator_digest(), layouts=sorted(LAYOUTS))
    stamp = base / "stamp.json"
    if not regenerate and stamp.exists():
        have = json.loads(stamp.read_text())
        keys = [k for k in want if not (trust and k == "generator")]
        if all(have.get(k) == want[k] for k in keys) and all((base / lay).is_dir() for lay in layouts):
            if have.get("generator") != want["generator"]:
                print(
                    f"# {base}: generator changed since it was written; used as is (--trust-cache)",
                    file=sys.stderr,
                    flush=True,
                )
            return {"dir": base, **have}
    print(f"generating {label} {shape} ({n:,} entities) in {base} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    res = run_child(
        [sys.executable, "-c", GENERATE_CODE, str(n), str(MAX_CLUSTER_SIZE), str(SEED), str(base), *LAYOUTS],
        code=REPO,
        extra_env=env,
    )  # this checkout's generator, whose digest is stamped
    info = {**want, **json.loads(res["stdout"]), "generate_s": round(time.perf_counter() - t0, 1)}
    stamp.write_text(json.dumps(info, indent=1))
    return {"dir": base, **info}


def read_spec(index_dir: Path) -> dict:
    """{logical table: (path, [columns load.py reads that the file has])}, as load_index picks them."""
    import pyarrow.parquet as pq

    from graphrag_audit.io.generation import detect_generation
    from graphrag_audit.io.load import COMMUNITY_COLUMNS, ENTITY_COLUMNS, NODE_COLUMNS, REPORT_COLUMNS
    from graphrag_audit.io.locate import locate_index

    files = locate_index(index_dir)
    schemas = {k: {f.name: str(f.type) for f in pq.read_schema(p)} for k, p in files.tables.items()}
    generation = detect_generation(files.tables, schemas)
    wanted = {"communities": COMMUNITY_COLUMNS, "reports": REPORT_COLUMNS, "entities": ENTITY_COLUMNS}
    if generation.before_2 or "communities" not in files.tables:
        wanted["nodes"] = NODE_COLUMNS
    return {
        k: (str(files.tables[k]), [c for c in cols if c in schemas[k]])
        for k, cols in wanted.items()
        if k in files.tables
    }


# ----------------------------------------------------------------------------------------
# one size x layout
# ----------------------------------------------------------------------------------------
def warm_page_cache(index_dir: Path) -> None:
    """Read every table file once, so that no measurement pays for the disk (the first reader
    would otherwise: a cold 1M-entity read took 5 s instead of 1.3 s here)."""
    for p in sorted(index_dir.iterdir()):
        if p.is_file():
            with open(p, "rb") as fh:
                while fh.read(1 << 24):
                    pass


SHAPE_STATS_CODE = textwrap.dedent("""
    import json, sys
    import pyarrow.compute as pc, pyarrow.parquet as pq
    spec = json.loads(sys.argv[1])
    comm = pq.read_table(spec["communities"][0], columns=["level", "entity_ids"])
    rows = comm.num_rows
    members = int(pc.sum(pc.list_value_length(comm["entity_ids"])).as_py() or 0)
    print(json.dumps({"communities": rows, "max_level": int(pc.max(comm["level"]).as_py()) if rows else -1,
                      "entities_per_community": members / rows if rows else 0.0,
                      "report_columns": len(pq.read_schema(spec["reports"][0]).names)}))
""")


def shape_stats(spec: dict) -> dict:
    """What makes a shape: communities, max level, entities per community (membership rows, i.e.
    entity_ids list entries, over communities: every level counts) and report columns, read from
    the index's own communities and reports tables, in a child process (a forked child starts
    with its parent's peak RSS: reading the tables here would raise every later child's)."""
    return json.loads(run_child([sys.executable, "-c", SHAPE_STATS_CODE, json.dumps(spec)])["stdout"])


def measure(index_dir: Path, layout: str, args, out_dir: Path) -> dict:
    py = sys.executable
    spec = read_spec(index_dir)
    row: dict = {"layout": layout, "dir": str(index_dir), "shape_stats": shape_stats(spec)}
    warm_page_cache(index_dir)

    floor = best_of(args.repeat, [py, "-c", IMPORT_FLOOR_CODE])
    row["floor"] = {k: floor[k] for k in KEPT}

    bare_argv = [py, "-c", BARE_READ_CODE, json.dumps(spec)]
    tokenizers = ["estimate"] + ([] if args.no_exact else ["cl100k_base"])
    row["audit"] = {}
    for tok in tokenizers:
        target = out_dir / f"audit-{layout}-{tok}.json"
        row.setdefault("load_at_audit", os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"))
        argv = [
            py,
            "-m",
            "graphrag_audit",
            "levels",
            str(index_dir),
            "-f",
            "json",
            "--tokenizer",
            tok,
            "-o",
            str(target),
            "--fail-on",
            "never",
        ]
        if tok == "estimate":
            if args.turns:  # the bare read and the audit by turns
                bare, res, row["pair_ratios"] = best_of_pairs(args.repeat, bare_argv, argv)
            else:  # the bare reads, then the audits: each side after runs of its own kind
                bare = best_of(args.repeat, bare_argv)
                system = best_of(args.repeat, bare_argv + ["system-pages"])
                row["bare_system_pages"] = {k: system[k] for k in KEPT}
                res = best_of(args.repeat, argv)
            row["bare"] = {k: bare[k] for k in KEPT}
            row["bare"].update(json.loads(bare["stdout"]))
        else:
            res = best_of(args.repeat, argv)
        row["audit"][tok] = {k: res[k] for k in KEPT}
        row["audit"][tok]["json_bytes"] = target.stat().st_size

    est = json.loads((out_dir / f"audit-{layout}-estimate.json").read_text())
    row["counts"] = est["index"]["counts"]
    behaviour = "v2" if layout == "3.x" else "v1"
    audit_counts = {str(r["community_level"]): r["selected"][behaviour]["count"] for r in est["levels"]}

    if not args.no_naive:
        naive_spec = {
            "reports": (spec["reports"][0], ["community", "level", "title", "rank", "full_content"])
        }
        if layout == "3.x":
            naive_spec["communities"] = (
                spec["communities"][0],
                ["community", "level", "title", "entity_ids"],
            )
        else:
            naive_spec["nodes"] = (spec["nodes"][0], ["title", "community", "level"])
        naive = best_of(args.repeat, [py, "-c", NAIVE_CODE, layout, json.dumps(naive_spec)])
        detail = json.loads(naive["stdout"])
        row["naive"] = {k: naive[k] for k in KEPT}
        row["naive"].update(
            read_s=detail["read_s"],
            rollup_s=detail["rollup_s"],
            levels=len(detail["counts"]),
            agrees=detail["counts"] == audit_counts,
        )

    if not args.no_graphrag_naive:
        row["graphrag_naive"] = measure_graphrag(index_dir, layout, spec, args, out_dir)

    if not args.no_tokens:
        tokens = run_child([py, "-c", TOKENS_CODE, spec["reports"][0]])
        row["tokens"] = json.loads(tokens["stdout"])

    if not args.no_phases:
        ph = run_child([py, "-c", PHASES_CODE, str(index_dir), "estimate"])
        row["phases"] = json.loads(ph["stdout"])
    return row


# ----------------------------------------------------------------------------------------
# graphrag's own per-level query code, in a side interpreter that has graphrag installed
# ----------------------------------------------------------------------------------------
_SIDE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "graphrag-audit-ci")  # where .ci/run builds them
GRAPHRAG_PYTHONS = {
    "3.x": os.path.join(_SIDE, "gr3", "bin", "python"),
    "1.0-1.2": os.path.join(_SIDE, "gr12", "bin", "python"),
}
# which graphrag major versions call these layouts' tables the way the child does
GRAPHRAG_MAJORS = {"3.x": lambda major: major >= 2, "1.0-1.2": lambda major: major == 1}
_probes: dict[str, dict] = {}


def tiktoken_cache_env(pythons: list[str]) -> dict:
    """tiktoken downloads its encoding files on first use; offline it fails. litellm (a graphrag
    3.x dependency) ships the cl100k_base/o200k_base files and points TIKTOKEN_CACHE_DIR at them
    when imported; graphrag's plain tiktoken tokenizer does not import it, so point both children
    there (unless TIKTOKEN_CACHE_DIR is already set)."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return {}
    for py in pythons:
        venv = Path(py).parent.parent  # not resolved: a venv's python is often a symlink
        for d in sorted(venv.glob("lib/python*/site-packages/litellm/litellm_core_utils/tokenizers")):
            if any(len(f.name) == 40 for f in d.iterdir()):
                return {"TIKTOKEN_CACHE_DIR": str(d)}
    return {}


def probe_graphrag(py: str | None, layout: str) -> tuple[dict | None, str]:
    """({graphrag version}, "") if ``py`` imports a graphrag that reads ``layout``, else (None, reason)."""
    if not py:
        return None, "no interpreter given"
    if not Path(py).exists():
        return None, f"interpreter {py} not found"
    if py not in _probes:
        try:
            _probes[py] = json.loads(run_child([py, "-c", GRAPHRAG_PROBE_CODE])["stdout"])
        except (RuntimeError, OSError, ValueError) as exc:
            _probes[py] = {"error": str(exc).strip().splitlines()[-1][:200]}
    info = _probes[py]
    if "error" in info:
        return None, f"graphrag does not import in {py}: {info['error']}"
    major = int(info["graphrag"].split(".")[0])
    if not GRAPHRAG_MAJORS[layout](major):
        return None, f"graphrag {info['graphrag']} in {py} does not read the {layout} layout"
    return info, ""


def measure_graphrag(index_dir: Path, layout: str, spec: dict, args, out_dir: Path) -> dict:
    """graphrag's own read_indexer_reports + read_indexer_entities + build_community_context, once
    per level, in a fresh process of the graphrag interpreter; checked against the audit's JSON
    (the exact cl100k_base run when there is one)."""
    py = args.graphrag_python[layout]
    info, reason = probe_graphrag(py, layout)
    if info is None:
        print(f"# graphrag per-level naive skipped for {layout}: {reason}", file=sys.stderr, flush=True)
        return {"skipped": reason}
    exact = out_dir / f"audit-{layout}-cl100k_base.json"
    against = exact if exact.exists() else out_dir / f"audit-{layout}-estimate.json"
    audit_json = json.loads(against.read_text())
    tokenizer = audit_json["options"]["tokenizer"]
    encoding = tokenizer if tokenizer != "estimate" else "cl100k_base"
    paths = {"reports": spec["reports"][0], "entities": spec["entities"][0]}
    paths["communities" if layout == "3.x" else "nodes"] = spec[
        "communities" if layout == "3.x" else "nodes"
    ][0]
    progress = out_dir / f"graphrag-naive-{index_dir.parent.name}-{layout}.progress"
    print(
        f"# graphrag {info['graphrag']} per-level run ({layout}); per-level progress in {progress}",
        file=sys.stderr,
        flush=True,
    )
    argv = [
        py,
        "-c",
        GRAPHRAG_NAIVE_CODE,
        layout,
        json.dumps(paths),
        str(audit_json["options"]["max_context_tokens"]),
        encoding,
        str(progress),
    ]
    try:
        # once, whatever --repeat says: at 1M it runs for ten minutes and more
        res = best_of(1, argv, extra_env=tiktoken_cache_env([py, *GRAPHRAG_PYTHONS.values()]))
    except RuntimeError as exc:
        reason = f"graphrag run failed: {str(exc).strip().splitlines()[-1][:300]}"
        print(f"# graphrag per-level naive skipped for {layout}: {reason}", file=sys.stderr, flush=True)
        return {"skipped": reason}
    detail = json.loads(res["stdout"])

    # the same numbers from the audit: v2 for graphrag >= 2.0 (3.x layout), v1 for 1.x
    behaviour = "v2" if layout == "3.x" else "v1"
    audit_levels = {r["community_level"]: r["selected"][behaviour] for r in audit_json["levels"]}
    checked = ["count", "community_ids"] + (
        ["map_calls", "reports_in_context"] if tokenizer != "estimate" else []
    )
    differences = []
    for lv in detail["levels"]:
        n = lv["community_level"]
        mine = audit_levels.get(n)
        if mine is None:
            differences.append(f"N={n}: level missing from the audit's JSON")
            continue
        for key in checked:
            if lv[key] != mine.get(key):
                if key == "community_ids":
                    a, g = set(mine[key]), set(lv[key])
                    text = (
                        f"only graphrag {sorted(g - a)[:10]}, only audit {sorted(a - g)[:10]}"
                        if a != g
                        else "same set, different multiplicities"
                    )
                else:
                    text = f"graphrag {lv[key]}, audit {mine.get(key)}"
                differences.append(f"N={n} {behaviour} {key}: {text}")
    extra = sorted(set(map(str, audit_levels)) - {str(lv["community_level"]) for lv in detail["levels"]})
    differences += [f"N={n}: level in the audit's JSON only" for n in extra]
    if differences:
        bar = "!" * 100
        print(
            f"{bar}\n!!! graphrag {info['graphrag']} DISAGREES with the audit ({against.name}) on "
            f"{index_dir}:\n" + "\n".join(f"!!!   {d}" for d in differences[:40]) + f"\n{bar}",
            file=sys.stderr,
            flush=True,
        )

    levels = []
    for lv in detail["levels"]:
        mine = audit_levels.get(lv["community_level"], {})
        levels.append(
            {
                **{k: v for k, v in lv.items() if k != "community_ids"},
                "audit_count": mine.get("count"),
                "audit_map_calls": mine.get("map_calls"),
            }
        )
    total = {k: sum(lv[k] for lv in levels) for k in ("reports_s", "entities_s", "context_s", "tokenise_s")}
    return {
        "graphrag_version": detail["graphrag_version"],
        "pandas_version": detail["pandas_version"],
        "python": py,
        "wall_s": res["wall_s"],
        "cpu_s": res["cpu_s"],
        "rss_bytes": res["rss_bytes"],
        "import_s": detail["import_s"],
        "read_s": sum(detail["read_s"].values()),
        "read_tables_s": detail["read_s"],
        **total,
        "levels": levels,
        "checked": checked,
        "checked_against": against.name,
        "agrees": not differences,
        "differences": differences,
    }


# ----------------------------------------------------------------------------------------
# report
# ----------------------------------------------------------------------------------------
MB = 1024 * 1024


def _f(x: float, nd: int = 2) -> str:
    return f"{x:.{nd}f}"


def _ratio(a: float, b: float, nd: int = 2) -> str:
    return _f(a / b, nd) if b > 0 else "–"


def _pair_range(ratios: list[float] | None) -> str:
    """The least and the greatest of the turns' audit / bare read ratios ("2.31-2.58")."""
    if not ratios:
        return "–"
    lo, hi = min(ratios), max(ratios)
    return _f(lo) if len(ratios) == 1 else f"{_f(lo)}-{_f(hi)}"


def _spread(m: dict) -> str:
    """A measurement's best wall time, and its slowest in brackets when it ran more than once
    (rows from a run that kept no slowest time: the best alone)."""
    slowest = m.get("wall_max_s")
    return _f(m["wall_s"]) + (f" ({_f(slowest)})" if slowest is not None and slowest > m["wall_s"] else "")


def _who(r: dict) -> str:
    """The first cell of a row: entities, and the shape when it is not the default one."""
    shape = r.get("shape", "default")
    return f"{r['entities']:,}" + ("" if shape == "default" else f" {shape}")


def summarise_shapes(results: list[dict]) -> str:
    """One row per shape and layout: what the shape is, and the audit against the bare read."""
    head = [
        "entities",
        "shape",
        "layout",
        "communities",
        "max level",
        "entities / community",
        "report columns",
        "Arrow MB read",
        "bare read s (slowest)",
        "audit s (estimate; slowest)",
        "audit / bare read",
        "each turn's ratio",
        "user cpu ratio",
        "kernel s (bare read / audit)",
        "bare read s, system's huge pages (slowest)",
        "audit / that bare read",
        "audit peak RSS MB",
        "RSS / Arrow",
        "load",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results:
        st, est, arrow = r["shape_stats"], r["audit"]["estimate"], r["bare"]["arrow_bytes"]
        cells = [
            f"{r['entities']:,}",
            r.get("shape", "default"),
            r["layout"],
            f"{st['communities']:,}",
            str(st["max_level"]),
            _f(st["entities_per_community"], 1),
            str(st["report_columns"]),
            _f(arrow / MB, 0),
            _spread(r["bare"]),
            _spread(est),
            _ratio(est["wall_s"], r["bare"]["wall_s"]),
            _pair_range(r.get("pair_ratios")),
            _ratio(est["user_s"], r["bare"]["user_s"]),
            f"{_f(r['bare']['sys_s'])} / {_f(est['sys_s'])}",
            *(
                (_spread(sp), _ratio(est["wall_s"], sp["wall_s"]))
                if (sp := r.get("bare_system_pages"))
                else ("–", "–")
            ),
            f"{est['rss_bytes'] / MB:.0f}",
            _ratio(est["rss_bytes"], arrow),
            _f(r.get("load_at_audit", float("nan"))),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summarise(results: list[dict]) -> str:
    """The headline table: wall times of fresh processes, peak RSS, the three ratios."""
    head = [
        "entities",
        "layout",
        "communities / reports",
        "levels",
        "Arrow MB read",
        "bare read s (peak RSS MB)",
        "audit s (estimate)",
        "audit / bare read",
        "audit peak RSS MB",
        "RSS / Arrow",
        "roll-up-only naive s (read + roll-ups)",
        "roll-up-only naive / audit",
        "audit s (cl100k)",
        "exact extra s",
        "exact MB/s",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results:
        est = r["audit"]["estimate"]
        arrow = r["bare"]["arrow_bytes"]
        c = r["counts"]
        cells = [
            _who(r),
            r["layout"],
            f"{c['communities']:,} / {c['reports']:,}",
            str(c["levels"]),
            _f(arrow / MB, 0),
            f"{_f(r['bare']['wall_s'])} ({r['bare']['rss_bytes'] / MB:.0f})",
            _f(est["wall_s"]),
            _ratio(est["wall_s"], r["bare"]["wall_s"]),
            f"{est['rss_bytes'] / MB:.0f}",
            _ratio(est["rss_bytes"], arrow),
        ]
        if "naive" in r:
            nv = r["naive"]
            ok = "" if nv["agrees"] else " (counts differ!)"
            cells += [
                f"{_f(nv['wall_s'])} ({_f(nv['read_s'])} + {_f(nv['rollup_s'])}){ok}",
                _ratio(nv["wall_s"], est["wall_s"], 1),
            ]
        else:
            cells += ["–", "–"]
        if "cl100k_base" in r["audit"] and "tokens" in r:
            ex = r["audit"]["cl100k_base"]
            extra = ex["wall_s"] - est["wall_s"]
            cells += [_f(ex["wall_s"]), _f(extra), _ratio(_text_mb(r), extra, 1)]
        else:
            cells += ["–", "–", "–"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _text_mb(r: dict) -> float:
    return (r["tokens"]["text_bytes"] + r["tokens"]["title_bytes"]) / MB


def summarise_cpu(results: list[dict]) -> str:
    """The same runs by CPU time (user + sys): steadier than wall time on a shared machine. The
    kernel's part (sys: mostly clearing freshly faulted pages) is also given apart, with the ratio
    of user time alone: with huge pages on, the same audit's kernel time moved from 1.2 to 8.5 s
    between runs on this machine."""
    head = [
        "entities",
        "layout",
        "import floor s (RSS MB)",
        "bare read cpu s",
        "audit cpu s (estimate)",
        "audit / bare read (cpu)",
        "kernel s (bare read / audit)",
        "audit / bare read (user cpu)",
        "roll-up-only naive cpu s",
        "roll-up-only naive / audit (cpu)",
        "audit cpu s (cl100k)",
        "exact extra cpu s",
        "exact MB/s (cpu)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results:
        est = r["audit"]["estimate"]
        cells = [
            _who(r),
            r["layout"],
            f"{_f(r['floor']['wall_s'])} ({r['floor']['rss_bytes'] / MB:.0f})",
            _f(r["bare"]["cpu_s"]),
            _f(est["cpu_s"]),
            _ratio(est["cpu_s"], r["bare"]["cpu_s"]),
            f"{_f(r['bare']['sys_s'])} / {_f(est['sys_s'])}",
            _ratio(est["user_s"], r["bare"]["user_s"]),
        ]
        if "naive" in r:
            cells += [_f(r["naive"]["cpu_s"]), _ratio(r["naive"]["cpu_s"], est["cpu_s"], 1)]
        else:
            cells += ["–", "–"]
        if "cl100k_base" in r["audit"] and "tokens" in r:
            ex = r["audit"]["cl100k_base"]
            extra = ex["cpu_s"] - est["cpu_s"]
            cells += [_f(ex["cpu_s"]), _f(extra), _ratio(_text_mb(r), extra, 1)]
        else:
            cells += ["–", "–", "–"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summarise_tokens(results: list[dict]) -> str:
    """Token counters on their own: every report's full_content, one process per size."""
    head = [
        "entities",
        "layout",
        "report text MB",
        "arrow byte lengths MB/s",
        "estimate counter MB/s",
        "cl100k_base counter MB/s",
        "cl100k tokens",
        "JSON output MB",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results:
        if "tokens" not in r:
            continue
        tk = r["tokens"]
        body = tk["text_bytes"] / MB
        cells = [
            _who(r),
            r["layout"],
            _f(_text_mb(r), 1),
            _ratio(body, tk["arrow_binary_length_s"], 0),
            _ratio(body, tk["estimate"]["seconds"], 0),
            _ratio(body, tk["cl100k_base"]["seconds"], 1),
            f"{tk['cl100k_base']['tokens']:,}",
            _f(r["audit"]["estimate"]["json_bytes"] / MB, 1),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summarise_phases(results: list[dict]) -> str:
    rows = [r for r in results if "phases" in r]
    if not rows:
        return ""
    keys = ["load", "tree", "selection", "costs", "dynamic", "depth"]
    head = (
        ["entities", "layout"]
        + [f"{k} s" for k in keys]
        + ["JSON render s", "total s", "roll-up-only naive roll-ups s / selection s"]
    )
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        ph = r["phases"]
        cells = (
            [_who(r), r["layout"]]
            + [_f(ph["phases"].get(k, 0.0)) for k in keys]
            + [_f(ph["render_s"]), _f(ph["audit_s"] + ph["render_s"])]
        )
        sel = ph["phases"].get("selection", 0.0)
        cells.append(_ratio(r["naive"]["rollup_s"], sel, 1) if "naive" in r else "–")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _audit_exact(r: dict) -> dict | None:
    return r["audit"].get("cl100k_base")


def summarise_graphrag(results: list[dict]) -> str:
    """graphrag's own query code once per level (what a user sweeping community_level runs) against
    the audit's one pass with exact token counts: both count every token with cl100k_base."""
    rows = [r for r in results if "graphrag_naive" in r]
    if not rows:
        return ""
    head = [
        "entities",
        "layout",
        "graphrag",
        "levels",
        "agrees with audit",
        "parquet read s",
        "read_indexer_reports s",
        "read_indexer_entities s",
        "build_community_context s",
        "(of which tokenising s)",
        "graphrag per-level wall s (cpu s, peak RSS MB)",
        "audit wall s (cl100k)",
        "graphrag per-level / audit (cl100k)",
        "same, cpu",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        g = r["graphrag_naive"]
        if "skipped" in g:
            lines.append(
                "| "
                + " | ".join([_who(r), r["layout"], "skipped: " + g["skipped"]] + ["–"] * (len(head) - 3))
                + " |"
            )
            continue
        ex = _audit_exact(r)
        agree = "yes" if g["agrees"] else f"NO ({len(g['differences'])} differences)"
        if g["checked_against"].endswith("estimate.json"):
            agree += " (counts, ids only)"
        cells = [
            _who(r),
            r["layout"],
            g["graphrag_version"],
            str(len(g["levels"])),
            agree,
            _f(g["read_s"]),
            _f(g["reports_s"]),
            _f(g["entities_s"]),
            _f(g["context_s"]),
            _f(g["tokenise_s"]),
            f"{_f(g['wall_s'])} ({_f(g['cpu_s'])}, {g['rss_bytes'] / MB:.0f})",
        ]
        if ex:
            cells += [
                _f(ex["wall_s"]),
                _ratio(g["wall_s"], ex["wall_s"], 1),
                _ratio(g["cpu_s"], ex["cpu_s"], 1),
            ]
        else:
            cells += ["–", "–", "–"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summarise_graphrag_levels(results: list[dict]) -> str:
    """Where graphrag's per-level time goes, level by level."""
    rows = [r for r in results if "levels" in r.get("graphrag_naive", {})]
    if not rows:
        return ""
    head = [
        "entities",
        "layout",
        "N",
        "reports (audit)",
        "map calls (audit)",
        "entity objects",
        "read_indexer_reports s",
        "read_indexer_entities s",
        "build_community_context s",
        "(tokenising s)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        for lv in r["graphrag_naive"]["levels"]:
            n = lv["community_level"]
            cells = [
                _who(r),
                r["layout"],
                "None" if n is None else str(n),
                f"{lv['count']:,} ({lv['audit_count']:,})"
                if lv["audit_count"] is not None
                else f"{lv['count']:,}",
                f"{lv['map_calls']:,} ({lv['audit_map_calls']:,})"
                if lv["audit_map_calls"] is not None
                else f"{lv['map_calls']:,}",
                f"{lv['entities']:,}",
                _f(lv["reports_s"]),
                _f(lv["entities_s"]),
                _f(lv["context_s"]),
                _f(lv["tokenise_s"]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def growth(results: list[dict]) -> str:
    out = []
    for layout in LAYOUTS:  # the default shape only: sizes of one shape
        by = {
            r["entities"]: r
            for r in results
            if r["layout"] == layout and r.get("shape", "default") == "default"
        }
        if len(by) < 2:
            continue
        sizes = sorted(by)
        lo, hi = sizes[0], sizes[-1]
        a, b = by[lo], by[hi]
        for label, get in (
            ("wall", lambda r: r["audit"]["estimate"]["wall_s"]),
            ("wall minus import floor", lambda r: r["audit"]["estimate"]["wall_s"] - r["floor"]["wall_s"]),
            ("cpu", lambda r: r["audit"]["estimate"]["cpu_s"]),
            ("cpu minus import floor", lambda r: r["audit"]["estimate"]["cpu_s"] - r["floor"]["cpu_s"]),
        ):
            per_lo, per_hi = get(a) / lo, get(b) / hi
            out.append(
                f"- {layout}, {label}: {per_lo * 1e6:.2f} µs/entity at {lo:,} -> {per_hi * 1e6:.2f} µs/entity "
                f"at {hi:,}: {per_hi / per_lo:.2f}x linear"
            )
        if len(sizes) == 3:
            m = by[sizes[1]]
            for label, get in (
                (
                    "wall minus import floor",
                    lambda r: r["audit"]["estimate"]["wall_s"] - r["floor"]["wall_s"],
                ),
                ("cpu minus import floor", lambda r: r["audit"]["estimate"]["cpu_s"] - r["floor"]["cpu_s"]),
            ):
                per_m, per_hi = get(m) / sizes[1], get(b) / hi
                out.append(f"- {layout}, {label}, {sizes[1]:,} -> {hi:,}: {per_hi / per_m:.2f}x linear")
    return "\n".join(out)


def machine() -> str:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = (
            next(
                int(x.split()[1])
                for x in Path("/proc/meminfo").read_text().splitlines()
                if x.startswith("MemTotal")
            )
            / 1024
            / 1024
        )
        mem_s = f"{mem:.0f} GiB RAM"
    except (OSError, StopIteration):
        mem_s = "? RAM"
    import numpy
    import pandas
    import pyarrow

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return (
        f"{os.cpu_count()} CPUs ({cpu}), {mem_s}; Python {platform.python_version()}, "
        f"pyarrow {pyarrow.__version__}, pandas {pandas.__version__}, numpy {numpy.__version__}; "
        f"load average at start {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"
    )


def _titled(title: str, table: str) -> str:
    return f"{title}\n\n{table}" if table else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10k,100k,1m", help="comma list of " + ", ".join(SIZES))
    ap.add_argument("--layouts", default=",".join(LAYOUTS), help="comma list of " + ", ".join(LAYOUTS))
    ap.add_argument(
        "--cache",
        default=os.path.join(os.environ.get("TMPDIR", tempfile.gettempdir()), "graphrag-audit-bench"),
        help="where the generated indexes live (outside the repository)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement (min wall/cpu, max RSS)")
    ap.add_argument(
        "--turns",
        action="store_true",
        help="run the bare read and the estimate audit by turns, and give each turn's ratio",
    )
    ap.add_argument("--no-exact", action="store_true", help="skip the exact cl100k_base audit")
    ap.add_argument("--no-naive", action="store_true", help="skip the roll-up-only pandas naive")
    ap.add_argument(
        "--no-graphrag-naive",
        action="store_true",
        help="skip running graphrag's own query code once per level",
    )
    for lay, flag in (("3.x", "--graphrag-python-3x"), ("1.0-1.2", "--graphrag-python-1x")):
        default = GRAPHRAG_PYTHONS[lay] if Path(GRAPHRAG_PYTHONS[lay]).exists() else None
        ap.add_argument(
            flag,
            default=default,
            metavar="PATH",
            help=f"a Python with graphrag installed, for the {lay} layout (default: {default})",
        )
    ap.add_argument("--no-phases", action="store_true", help="skip the in-process phase breakdown")
    ap.add_argument(
        "--no-tokens",
        action="store_true",
        help="skip the token counters on their own (and the exact-counting throughput that needs them)",
    )
    ap.add_argument("--regenerate", action="store_true", help="rewrite the cached indexes")
    ap.add_argument(
        "--trust-cache",
        action="store_true",
        help="use a cached index whose parameters match even if the generator's source changed since "
        "(for generator changes that keep its output byte-identical)",
    )
    ap.add_argument(
        "--shapes",
        default="default",
        help="comma list of index shapes from tests/synthetic.py SHAPES, or 'all' (default: default, "
        "the historic leiden_like(n, max_cluster_size=24) shape)",
    )
    ap.add_argument(
        "--code",
        default=str(REPO),
        help="directory holding the graphrag_audit package to benchmark (default: this checkout; "
        "point it at a copy of an older version to compare)",
    )
    ap.add_argument("--json", help="also write every measurement to this JSON file")
    ap.add_argument("--markdown", help="also write the tables to this markdown file")
    args = ap.parse_args(argv)
    args.graphrag_python = {"3.x": args.graphrag_python_3x, "1.0-1.2": args.graphrag_python_1x}

    sizes = [s.strip().lower() for s in args.sizes.split(",") if s.strip()]
    layouts = [s.strip() for s in args.layouts.split(",") if s.strip()]
    for s in sizes:
        if s not in SIZES:
            ap.error(f"unknown size {s!r}; choose from {', '.join(SIZES)}")
    for lay in layouts:
        if lay not in LAYOUTS:
            ap.error(f"unknown layout {lay!r}; choose from {', '.join(LAYOUTS)}")
    sys.path.insert(0, str(REPO / "tests"))
    from synthetic import SHAPES

    shapes = (
        list(SHAPES)
        if args.shapes.strip() == "all"
        else [x.strip() for x in args.shapes.split(",") if x.strip()]
    )
    for sh in shapes:
        if sh not in SHAPES:
            ap.error(f"unknown shape {sh!r}; choose from {', '.join(SHAPES)} or all")
    global CODE
    CODE = Path(args.code).resolve()
    if not (CODE / "graphrag_audit" / "__init__.py").is_file():
        ap.error(f"--code {CODE}: no graphrag_audit package there")
    cache = Path(args.cache).resolve()
    if REPO in cache.parents or cache == REPO:
        ap.error("--cache must be outside the repository (generated data is never committed)")
    cache.mkdir(parents=True, exist_ok=True)

    header = machine() + ("" if CODE == REPO else f"; code from {CODE}")
    print(f"# machine: {header}", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="gra-bench-out-") as tmp:
        for s in sizes:
            n = SIZES[s]
            for sh in shapes:
                data = ensure_data(cache, s, n, layouts, args.regenerate, sh, args.trust_cache)
                for lay in layouts:
                    print(f"# measuring {s} {sh} {lay} ...", file=sys.stderr, flush=True)
                    row = measure(Path(data["dir"]) / lay, lay, args, Path(tmp))
                    row["entities"] = n
                    row["shape"] = sh
                    results.append(row)
    text = "\n\n".join(
        x
        for x in [
            f"Machine: {header}",
            f"Data: leiden_like(n, max_cluster_size={MAX_CLUSTER_SIZE}, seed={SEED})"
            + (
                ""
                if shapes == ["default"]
                else "; shapes " + ", ".join(f"{sh} = {json.dumps(SHAPES[sh])}" for sh in shapes)
            )
            + f"; cache {cache}",
            _titled(
                "Index shapes (--tokenizer estimate; load = 1-minute load average when the audit started):",
                summarise_shapes(results) if shapes != ["default"] else "",
            ),
            "Wall time (fresh processes):\n\n" + summarise(results),
            "CPU time (user + sys) of the same processes:\n\n" + summarise_cpu(results),
            _titled(
                "graphrag's own query code once per community_level (read_indexer_reports, read_indexer_entities,"
                " build_community_context as global search calls it; no LLM) vs the audit's one pass, both counting"
                " exact cl100k_base tokens:",
                summarise_graphrag(results),
            ),
            _titled(
                "graphrag per level (its counts, the audit's in brackets):",
                summarise_graphrag_levels(results),
            ),
            _titled(
                "Token counting on its own:",
                summarise_tokens(results) if any("tokens" in r for r in results) else "",
            ),
            _titled("Phases of audit() in one process (--tokenizer estimate):", summarise_phases(results)),
            "Growth per entity (audit with --tokenizer estimate):\n" + growth(results),
        ]
        if x
    )
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": header, "results": results}, indent=1, default=str))
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
