#!/usr/bin/env python
"""Exact cl100k_base counting against the estimate, and the 5M-entity audit.

Usage (from the repository root)::

    python benchmarks/bench_tokens.py --sizes 100k,1m --cache /tmp/graphrag-audit-bench
    python benchmarks/bench_tokens.py --sizes 5m --cache /tmp/tokens/bench --markdown out.md

Data: the indexes of ``benchmarks/bench_levels.py`` (``leiden_like(n, max_cluster_size=24,
seed=0)``, 3.x layout), generated into ``--cache`` when missing (5m: the 3.x layout only, see
``generate``). Every measurement is a fresh child process (``bench_levels.run_child``: wall time
around the child, CPU and peak RSS from ``os.wait4``), with the table files in the page cache,
and the 1-minute load average read just before it.

Per size (``--tokens``, default for 100k and 1m):

* **bare read**: ``pyarrow.parquet.read_table`` of the columns the audit reads; its Arrow size.
* **estimate**: ``levels DIR -f json --tokenizer estimate``.
* **exact**: ``--tokenizer cl100k_base`` (counts every text in the process).
* **exact, cold / warm cache**: the same with ``--token-cache DIR``, first empty (counts and
  writes), then again (reads); both outputs compared with the exact one byte for byte.
* **counter throughput**: cl100k_base over every report's ``full_content`` in one process.

Per size (``--memory``, default for 5m): the bare read and the estimate audit (wall, peak RSS).
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_levels as bl  # noqa: E402  (the shared child runner, data generator and column lists)

SIZES = {**bl.SIZES, "5m": 5_000_000}
MB = 1024 * 1024


def load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def generate(cache: Path, label: str, n: int) -> Path:
    """The 3.x index of ``label`` under ``cache`` (bench_levels' layout and stamp); generated
    here in the 3.x layout only when missing (bench_levels writes both layouts)."""
    base = cache / f"{label}-mcs{bl.MAX_CLUSTER_SIZE}-seed{bl.SEED}"
    if (base / "3.x").is_dir() and (base / "stamp.json").is_file():
        return base / "3.x"
    print(f"generating {label} ({n:,} entities) in {base} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    res = bl.run_child(
        [
            sys.executable,
            "-c",
            bl.GENERATE_CODE,
            str(n),
            str(bl.MAX_CLUSTER_SIZE),
            str(bl.SEED),
            str(base),
            "3.x",
        ],
        code=bl.REPO,
    )
    info = {
        "entities": n,
        "max_cluster_size": bl.MAX_CLUSTER_SIZE,
        "seed": bl.SEED,
        "generator": bl.generator_digest(),
        "layouts": ["3.x"],
        **json.loads(res["stdout"]),
        "generate_s": round(time.perf_counter() - t0, 1),
        "generate_cpu_s": round(res["cpu_s"], 1),
        "generate_rss_bytes": res["rss_bytes"],
    }
    (base / "stamp.json").write_text(json.dumps(info, indent=1))
    return base / "3.x"


def timed(argv, extra_env=None) -> dict:
    before = load()
    r = bl.run_child(argv, extra_env=extra_env)
    return {
        "wall_s": r["wall_s"],
        "cpu_s": r["cpu_s"],
        "rss_bytes": r["rss_bytes"],
        "load": before,
        "stdout": r["stdout"],
    }


def audit_argv(index: Path, tokenizer: str, out: Path, *extra) -> list[str]:
    return [
        sys.executable,
        "-m",
        "graphrag_audit",
        "levels",
        str(index),
        "-f",
        "json",
        "--tokenizer",
        tokenizer,
        "-o",
        str(out),
        "--fail-on",
        "never",
        *extra,
    ]


def measure(label: str, index: Path, tmp: Path, tokens: bool) -> dict:
    spec = bl.read_spec(index)
    bl.warm_page_cache(index)
    row: dict = {"size": label, "entities": SIZES[label], "dir": str(index)}
    stamp = json.loads((index.parent / "stamp.json").read_text())
    row["stamp"] = {
        k: stamp.get(k)
        for k in ("communities", "reports", "max_level", "generate_s", "generate_cpu_s", "generate_rss_bytes")
    }
    bare = timed([sys.executable, "-c", bl.BARE_READ_CODE, json.dumps(spec)])
    row["bare"] = {
        **{k: v for k, v in bare.items() if k != "stdout"},
        "arrow_bytes": json.loads(bare["stdout"])["arrow_bytes"],
    }
    runs = {
        "estimate": ("estimate", {}, ()),
    }
    if tokens:
        cache_dir = str(tmp / f"token-cache-{label}")
        runs["exact"] = ("cl100k_base", {}, ())
        runs["exact_cold"] = ("cl100k_base", {}, ("--token-cache", cache_dir))
        runs["exact_warm"] = ("cl100k_base", {}, ("--token-cache", cache_dir))
    for name, (tok, env, extra) in runs.items():
        print(f"# {label}: {name} ...", file=sys.stderr, flush=True)
        out = tmp / f"{label}-{name}.json"
        r = timed(audit_argv(index, tok, out, *extra), extra_env=env)
        row[name] = {k: v for k, v in r.items() if k != "stdout"}
        row[name]["json_bytes"] = out.stat().st_size
    if tokens:
        ref = (tmp / f"{label}-exact.json").read_bytes()
        row["identical"] = all(
            (tmp / f"{label}-{n}.json").read_bytes() == ref for n in ("exact_cold", "exact_warm")
        )
        if not row["identical"]:
            print(
                f"!!! {label}: exact outputs with and without the cache DIFFER", file=sys.stderr, flush=True
            )
        tk = bl.run_child([sys.executable, "-c", bl.TOKENS_CODE, spec["reports"][0]])
        row["tokens"] = json.loads(tk["stdout"])
    return row


def _f(x, nd=2):
    return f"{x:,.{nd}f}"


def table(results: list[dict]) -> str:
    head = [
        "entities",
        "communities",
        "Arrow MB read",
        "bare read s",
        "estimate s",
        "exact s",
        "exact, cold / warm cache s",
        "exact / estimate",
        "warm / estimate",
        "CPU s: estimate / exact / cold / warm",
        "exact / estimate (CPU)",
        "cl100k counter MB/s",
        "report text MB",
        "outputs identical",
        "load (1 min)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results:
        if "exact" not in r:
            continue
        tk = r["tokens"]
        est = r["estimate"]["wall_s"]
        cells = [
            f"{r['entities']:,}",
            f"{r['stamp']['communities']:,}",
            _f(r["bare"]["arrow_bytes"] / MB, 0),
            _f(r["bare"]["wall_s"]),
            _f(est),
            _f(r["exact"]["wall_s"]),
            _f(r["exact_cold"]["wall_s"]) + " / " + _f(r["exact_warm"]["wall_s"]),
            _f(r["exact"]["wall_s"] / est) + "x",
            _f(r["exact_warm"]["wall_s"] / est) + "x",
            " / ".join(_f(r[k]["cpu_s"], 1) for k in ("estimate", "exact", "exact_cold", "exact_warm")),
            _f(r["exact"]["cpu_s"] / r["estimate"]["cpu_s"]) + "x",
            _f(tk["text_bytes"] / MB / tk["cl100k_base"]["seconds"], 1),
            _f(tk["text_bytes"] / MB, 1),
            "yes" if r["identical"] else "**NO**",
            " / ".join(_f(r[k]["load"]) for k in ("estimate", "exact")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def memory_table(results: list[dict]) -> str:
    head = [
        "entities",
        "communities",
        "max level",
        "Arrow MB read",
        "bare read s",
        "bare read CPU s",
        "bare read peak RSS MB",
        "estimate audit s",
        "audit CPU s",
        "audit peak RSS MB",
        "RSS / Arrow",
        "load (1 min)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results:
        a, b = r["estimate"], r["bare"]
        cells = [
            f"{r['entities']:,}",
            f"{r['stamp']['communities']:,}",
            str(r["stamp"]["max_level"]),
            _f(b["arrow_bytes"] / MB, 0),
            _f(b["wall_s"]),
            _f(b["cpu_s"]),
            _f(b["rss_bytes"] / MB, 0),
            _f(a["wall_s"]),
            _f(a["cpu_s"]),
            _f(a["rss_bytes"] / MB, 0),
            _f(a["rss_bytes"] / b["arrow_bytes"]) + "x",
            f"{b['load']:.2f} / {a['load']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    gen = [r for r in results if r["stamp"].get("generate_rss_bytes")]
    for r in gen:
        st = r["stamp"]
        lines.append(
            f"\nGenerating {r['entities']:,} entities (tests/synthetic.py leiden_like + write_index, 3.x): "
            f"{st['generate_s']:,.0f} s wall, {st['generate_cpu_s']:,.0f} s CPU, "
            f"peak RSS {st['generate_rss_bytes'] / MB:,.0f} MB."
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100k,1m", help="comma list of " + ", ".join(SIZES))
    ap.add_argument(
        "--cache",
        default=os.path.join(tempfile.gettempdir(), "graphrag-audit-bench"),
        help="where the generated indexes live (outside the repository)",
    )
    ap.add_argument(
        "--tokens",
        choices=("auto", "yes", "no"),
        default="auto",
        help="measure the exact runs (auto: not at 5m)",
    )
    ap.add_argument("--json", help="also write every measurement to this JSON file")
    ap.add_argument("--markdown", help="also write the tables to this markdown file")
    ap.add_argument("--render", metavar="RESULTS.json", help="only print the tables of an earlier --json")
    args = ap.parse_args(argv)
    if args.render:
        saved = json.loads(Path(args.render).read_text())
        print(report(saved["machine"], Path(saved.get("cache", "?")), saved["results"]))
        return 0
    sizes = [s.strip().lower() for s in args.sizes.split(",") if s.strip()]
    for s in sizes:
        if s not in SIZES:
            ap.error(f"unknown size {s!r}; choose from {', '.join(SIZES)}")
    cache = Path(args.cache).resolve()
    if bl.REPO in cache.parents or cache == bl.REPO:
        ap.error("--cache must be outside the repository")
    header = bl.machine()
    print(f"# machine: {header}", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="gra-bench-tokens-") as tmp:
        for s in sizes:
            index = generate(cache, s, SIZES[s])
            tokens = args.tokens == "yes" or (args.tokens == "auto" and s != "5m")
            results.append(measure(s, index, Path(tmp), tokens))
    text = report(header, cache, results)
    print(text)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"machine": header, "cache": str(cache), "results": results}, indent=1, default=str)
        )
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0


def report(header: str, cache: Path, results: list[dict]) -> str:
    return "\n\n".join(
        x
        for x in [
            f"Machine: {header}",
            f"Data: leiden_like(n, max_cluster_size={bl.MAX_CLUSTER_SIZE}, seed={bl.SEED}), 3.x layout; cache {cache}",
            "Exact counting (levels -f json, fresh processes):\n\n" + table(results)
            if any("exact" in r for r in results)
            else "",
            "Memory (levels -f json --tokenizer estimate):\n\n" + memory_table(results),
        ]
        if x
    )


if __name__ == "__main__":
    sys.exit(main())
