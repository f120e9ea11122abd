"""Reading an index from Azure Blob Storage (Azurite, started here) vs from disk.

    python benchmarks/remote_read.py                 # verbs-v3 (../shared/indexes) and a 100k-entity index
    python benchmarks/remote_read.py --repeat 3 --json /tmp/remote.json

For each index: the wall time of ``load_index`` (the whole read: locate, parquet, model) in a fresh
child process, best of ``--repeat``, from the local folder and from ``az://`` on a local Azurite;
and the size of the index folder (every file, what a download of the output would move). The 100k index is tests/synthetic.py's ``leiden_like`` 3.x layout, generated
(and cached) as benchmarks/bench_levels.py does. Azurite: tests/remote_emulators.py (``npm install
azurite`` into ``${TMPDIR:-/tmp}/graphrag-audit-ci/azurite``, as .ci/run does).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

CHILD = """
import json, sys, time
from graphrag_audit.io.load import load_index
t0 = time.perf_counter()
m = load_index(sys.argv[1])
dt = time.perf_counter() - t0
print(json.dumps({"seconds": dt, "entities": int(m.entity_count), "reports": int(len(m.reports))}))
"""


def child(target: str, env: dict) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, target],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **env},
        timeout=1800,
    )
    if p.returncode:
        raise SystemExit(f"load_index({target}) failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout)


def best(target: str, env: dict, repeat: int) -> dict:
    runs = [child(target, env) for _ in range(repeat)]
    return min(runs, key=lambda r: r["seconds"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "graphrag-audit-bench")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from bench_levels import ensure_data
    from remote_emulators import start_azurite

    indexes = {"verbs-v3": REPO.parent / "shared" / "indexes" / "verbs-v3"}
    data = ensure_data(args.cache, "100k", 100_000, ["3.x"], False)
    indexes["100k (3.x, generated)"] = Path(data["dir"]) / "3.x"

    emu = start_azurite()
    results = []
    try:
        fs = emu.fs()
        fs.mkdir("bench")
        for i, (label, local) in enumerate(indexes.items()):
            remote = f"bench/i{i}"
            for f in sorted(local.iterdir()):
                if f.is_file():
                    fs.put_file(str(f), f"{remote}/{f.name}")
            disk = best(str(local), {}, args.repeat)
            az = best(f"az://{remote}", emu.env(), args.repeat)
            folder = sum(f.stat().st_size for f in local.iterdir() if f.is_file())
            results.append(
                {
                    "index": label,
                    "entities": disk["entities"],
                    "reports": disk["reports"],
                    "disk_s": round(disk["seconds"], 3),
                    "azurite_s": round(az["seconds"], 3),
                    "folder_bytes": folder,
                }
            )
    finally:
        emu.stop()

    print("| index | from disk | from Azurite | index folder |")
    print("|---|---|---|---|")
    for r in results:
        print(
            f"| {r['index']} | {r['disk_s']:.2f} s | {r['azurite_s']:.2f} s | {r['folder_bytes'] / 1e6:,.2f} MB |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
