"""Fuzz every writer of the CLI over random link layouts, for minutes, outside CI.

    python tests/fuzz/fuzz_writes.py --minutes 10 [--seed 1] [--out DIR]

Each input is a folder holding an index (a copy of fixtures/seed-v3 at store/idx), reached as the
command's DIR directly, through a project's settings.yaml, or through a project's ``output``
symlink; optionally with a table moved out of the index and linked back. Around it, 0-6 random
entries in the index, beside it, in the project and in an existing OUT folder: symlinks (to a
table, to the index directory, to an ancestor, to /dev/zero, to a FIFO, to a file outside,
dangling), hard links to tables, FIFOs, folders and files. Then one writer (levels/tree/report/
plan -o, plan --write with or without --force, the $GITHUB_STEP_SUMMARY append) writes to a
target picked from the interesting paths (the entries, the tables by every path, the index
directory, new names in and beside it, the project root, ``-``).

Checked after every run: no hang (60 s), no traceback or internal error, exit 0/1/2 with one
stderr line on exit 2; the SHA-256 of every index file and of what every table name leads to
unchanged; nothing changed in the input folder except the target (its real location) — for
--write, the OUT folder; no temporary file left behind; a target inside the index or over a
table always refused. The first failing input is kept under --out with the result.

tests/io/test_writes.py runs the same generator through hypothesis with 30 examples (set
GRAPHRAG_AUDIT_FUZZ_EXAMPLES for more). This file is not collected by pytest.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
for p in (str(REPO), str(REPO / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)

from write_layouts import ALL_WRITERS, SEED_TABLES, changed, command, copy_seed, index_hashes, state  # noqa: E402

REACH = ("direct", "settings", "output-link")
PLACES = ("index", "beside", "proj", "out")
KINDS = ("symlink", "symlink", "symlink", "hardlink", "fifo", "dir", "file")
POINTEES = (
    "table:communities.parquet",
    "table:community_reports.parquet",
    "table:entities.parquet",
    "indexdir",
    "ancestor",
    "devzero",
    "fifo",
    "dangling",
    "outside-file",
    "beside-dir",
)
TARGETS = (
    "extra",
    "extra",
    "extra",
    "table-real",
    "table-via-dir",
    "index-dir",
    "index-new",
    "beside-new",
    "proj-new",
    "out",
    "out-new",
    "dash",
    "link-dir-new",
)
TIMEOUT = 60.0


def random_spec(rng: random.Random) -> dict:
    n = rng.randint(0, 6)
    return {
        "reach": rng.choice(REACH),
        "table_link": rng.choice([None, None, *SEED_TABLES]),
        "out_exists": rng.choice([False, True]),
        "extras": [(rng.choice(PLACES), rng.choice(KINDS), rng.choice(POINTEES)) for _ in range(n)],
        "writer": rng.choice(ALL_WRITERS),
        "target": rng.choice(TARGETS),
        "pick": rng.randint(0, 10**6),
    }


def layout_strategy(st):
    """The same specs as :func:`random_spec`, as a hypothesis strategy."""
    return st.fixed_dictionaries(
        {
            "reach": st.sampled_from(REACH),
            "table_link": st.sampled_from([None, *SEED_TABLES]),
            "out_exists": st.booleans(),
            "extras": st.lists(
                st.tuples(st.sampled_from(PLACES), st.sampled_from(KINDS), st.sampled_from(POINTEES)),
                max_size=6,
            ),
            "writer": st.sampled_from(ALL_WRITERS),
            "target": st.sampled_from(TARGETS),
            "pick": st.integers(0, 10**6),
        }
    )


@dataclass
class Layout:
    root: Path
    dir_arg: Path
    index: Path  # the real index directory
    target: Path | str
    writer: str
    extras: list = field(default_factory=list)
    spec: dict = field(default_factory=dict)


def build_layout(root: Path, spec: dict) -> Layout:
    root = Path(root)
    idx = copy_seed(root / "store" / "idx")
    (root / "beside").mkdir()
    (root / "outside.txt").write_text("outside")
    proj = root / "proj"
    proj.mkdir()
    if spec["reach"] == "settings":
        (proj / "settings.yaml").write_text('output:\n  base_dir: "../store/idx"\n', encoding="utf-8")
        dir_arg = proj
    elif spec["reach"] == "output-link":
        os.symlink(str(idx), proj / "output")
        dir_arg = proj
    else:
        dir_arg = idx
    if spec["table_link"]:
        name = spec["table_link"]
        os.replace(idx / name, root / "beside" / name)
        os.symlink(str(root / "beside" / name), idx / name)
    out = root / "out"
    if spec["out_exists"]:
        out.mkdir()
    extras = []
    for i, (place, kind, pointee) in enumerate(spec["extras"]):
        folder = {"index": idx, "beside": root / "beside", "proj": proj, "out": out}[place]
        if place == "out" and not out.exists():
            out.mkdir()
        p = folder / f"e{i}"
        target = {
            "indexdir": idx,
            "ancestor": root,
            "devzero": Path("/dev/zero"),
            "fifo": root / "beside" / f"f{i}",
            "dangling": root / "nowhere" / f"d{i}",
            "outside-file": root / "outside.txt",
            "beside-dir": root / "beside",
        }.get(pointee) or (idx / pointee.split(":", 1)[1])
        try:
            if kind == "symlink":
                if pointee == "fifo" and not os.path.lexists(target):
                    os.mkfifo(target)
                os.symlink(str(target), p)
            elif kind == "hardlink":
                src = os.path.realpath(
                    idx / (pointee.split(":", 1)[1] if pointee.startswith("table:") else "entities.parquet")
                )
                os.link(src, p)
            elif kind == "fifo":
                os.mkfifo(p)
            elif kind == "dir":
                p.mkdir()
            else:
                p.write_text(f"extra {i}")
        except OSError:
            continue
        extras.append(p)
    rng = random.Random(spec["pick"])
    w = spec["writer"]
    choice = spec["target"]
    if choice == "extra" and extras:
        t = rng.choice(extras)
    elif choice == "table-real":
        t = Path(os.path.realpath(idx / rng.choice(SEED_TABLES)))
    elif choice == "table-via-dir":
        t = (proj / "output" if spec["reach"] == "output-link" else idx) / rng.choice(SEED_TABLES)
    elif choice == "index-dir":
        t = idx
    elif choice == "index-new":
        t = idx / "new.out"
    elif choice == "proj-new":
        t = proj / "new.out"
    elif choice == "out":
        t = out
    elif choice == "out-new":
        t = out / "new.out" if out.exists() else out
    elif choice == "dash" and w not in ("write", "write-force", "summary"):
        t = "-"
    elif choice == "link-dir-new" and extras:
        t = rng.choice(extras) / "new.out"
    else:
        t = root / "beside" / "new.out"
    return Layout(root, dir_arg, idx, t, w, extras, spec)


def _real_target(t) -> str | None:
    """Where a write to ``t`` would land: the real folder plus the final name (not followed)."""
    if str(t) == "-":
        return None
    parent, name = os.path.split(str(t))
    return os.path.join(os.path.realpath(parent or "."), name)


def check_run(server, lay: Layout) -> str:
    """Run the layout's writer and assert the invariants (AssertionError names what broke).
    Returns a short outcome label."""
    root = lay.root
    argv, env = command(lay.writer, lay.dir_arg, lay.target)
    real_root = os.path.realpath(root)
    hb = index_hashes(lay.index)
    before = state(root)
    land = _real_target(lay.target)
    r = server.run(argv, timeout=TIMEOUT, env_extra=env)
    after = state(root)
    ha = index_hashes(lay.index)
    ctx = f"spec={json.dumps(lay.spec)} target={lay.target} exit={r.code} stderr={r.stderr!r}"
    assert not r.timed_out, "hang: " + ctx
    assert "Traceback" not in r.stderr + r.stdout and "internal error" not in r.stderr, ctx
    assert r.code in (0, 1, 2), ctx
    if r.code == 2:
        assert len(r.stderr.splitlines()) == 1, "not one line: " + ctx
    assert ha == hb, "an index file changed: " + ctx
    diff = changed(before, after)
    assert not [p for p in diff if ".graphrag-audit-" in p], "temporary file left: " + ctx
    if land is not None and _inside(land, real_root):
        rel = os.path.relpath(land, real_root)
        bad = [
            p
            for p in diff
            if not (
                p == rel
                or p.startswith(rel + os.sep)
                or (lay.writer.startswith("write") and _parent_of(p, rel))
            )
        ]
    else:
        bad = sorted(diff)
    assert not bad, f"changed outside the target {bad}: " + ctx
    index_real = os.path.realpath(lay.index)
    tables_real = {os.path.realpath(lay.index / n) for n in SEED_TABLES}
    if land is not None and (_inside(land, index_real) or land in tables_real):
        assert r.code == 2, "a target inside the index was not refused: " + ctx
    if r.code == 2:
        return f"{lay.writer}: exit 2: " + _problem(r.stderr)
    if "warning" in r.stderr:
        return f"{lay.writer}: warning: " + _problem(r.stderr)
    return f"{lay.writer}: " + ("written" if land is not None else "stdout")


def _problem(line: str) -> str:
    """The problem of an error or warning line, paths replaced by <path> (to group outcomes)."""
    text = re.sub(r"^graphrag-audit: (error|warning): (\$GITHUB_STEP_SUMMARY: )?", "", line.strip())
    text = re.sub(r"/[^\s,()]*?(?=: |[\s,()]|$)", "<path>", text)
    return text.split(": ", 1)[-1]


def _parent_of(p: str, rel: str) -> bool:
    """plan --write creates missing parent folders of OUT."""
    return rel.startswith(p.rstrip(os.sep) + os.sep)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def main() -> int:
    from hostile import CliServer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "graphrag-audit-fuzz-writes")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="fuzz-writes-"))
    srv = CliServer()
    outcomes: collections.Counter = collections.Counter()
    writers: collections.Counter = collections.Counter()
    n, found = 0, 0
    t_end = time.monotonic() + args.minutes * 60
    try:
        while time.monotonic() < t_end:
            spec = random_spec(rng)
            case = work / f"c{n}"
            case.mkdir()
            lay = build_layout(case, spec)
            try:
                outcomes[check_run(srv, lay)] += 1
            except AssertionError as exc:
                found += 1
                keep = args.out / f"finding-{args.seed}-{n}"
                keep.parent.mkdir(parents=True, exist_ok=True)
                shutil.copytree(
                    case,
                    keep,
                    symlinks=True,
                    ignore_dangling_symlinks=True,
                    ignore=lambda d, names: [
                        x
                        for x in names
                        if os.path.exists(os.path.join(d, x))
                        and not (os.path.isfile(os.path.join(d, x)) or os.path.isdir(os.path.join(d, x)))
                    ],
                )
                (keep / "FINDING.txt").write_text(str(exc))
                print(f"FINDING {n}: {exc}", flush=True)
                break
            writers[spec["writer"]] += 1
            n += 1
            shutil.rmtree(case, ignore_errors=True)
    finally:
        srv.close()
        shutil.rmtree(work, ignore_errors=True)
    print(f"seed {args.seed}: {n} inputs, {found} findings")
    print("writers: " + ", ".join(f"{k} {v}" for k, v in sorted(writers.items())))
    for k, v in outcomes.most_common():
        print(f"  {v:6d}  {k}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
