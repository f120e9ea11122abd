"""Writes that can never damage an index (issue 14, write half; issue 13 parts 2 and 5).

Every writer of the CLI (``levels/tree/report/plan -o``, ``plan --write`` with and without
``--force``, the ``$GITHUB_STEP_SUMMARY`` append) runs as a real process against layouts that
reach the index through ``settings.yaml``, ``output`` links, links to tables, hard links, ``..``,
FIFOs, devices and dangling links. For every case: the exact exit code and stderr line, no
traceback or "internal error", the SHA-256 of every index file (and of what each table name
leads to) unchanged, and nothing changed in the case folder outside the paths the case allows.

Then: concurrent ``plan --write`` runs, SIGKILL in the middle of a write, a full file system
(a 1 MiB tmpfs where mounting works, and RLIMIT_FSIZE always), a bind mount of the index, and a
hypothesis run of every writer over random link layouts (tests/fuzz/fuzz_writes.py runs longer).
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hostile import CliServer, clean_env, run_cli
from write_layouts import (
    ALL_WRITERS,
    FILE_WRITERS,
    REPO,
    SEED_TABLES,
    changed,
    command,
    copy_seed,
    index_hashes,
    state,
    within,
)

PREFIX = "graphrag-audit: error: "
TIMEOUT = 60.0
SUMMARY_SUFFIX = r" \(\$GITHUB_STEP_SUMMARY\)"


def inside(real: Path) -> str:
    return re.escape(f"refusing to write inside the index directory {os.path.realpath(real)}")


def over(real: Path) -> str:
    return re.escape(f"refusing to write over {os.path.realpath(real)}, a file of the index")


@dataclass
class W:
    """One built case for one writer."""

    index: Path  # the DIR argument
    target: Path | str
    code: int = 0
    problem: str | None = None  # exit 2: regex after "<shown>: "
    shown: Path | None = None  # exit 2: the path named (default: the target)
    allowed: set = field(default_factory=set)  # case-folder paths allowed to change
    warn: str | None = None  # exit 0 with one warning line matching this
    hashed: list = field(default_factory=list)  # index directories whose files must not change
    check: Callable | None = None  # check(case_dir, result)


@dataclass(frozen=True)
class Case:
    name: str
    writers: tuple
    build: Callable  # build(tmp, writer) -> W
    doc: str
    outcome: str


CASES: dict[str, Case] = {}


def case(writers, doc: str, outcome: str):
    def deco(fn):
        name = fn.__name__.removeprefix("c_").replace("_", "-")
        CASES[name] = Case(name, tuple(writers), fn, doc, outcome)
        return fn

    return deco


def refused(w: W, writer: str) -> W:
    """The summary writer adds '($GITHUB_STEP_SUMMARY)' to a guard refusal."""
    if writer == "summary" and w.code == 2 and w.problem:
        w.problem += SUMMARY_SUFFIX
    return w


def project_with_settings(tmp: Path) -> tuple[Path, Path]:
    proj = tmp / "proj"
    idx = copy_seed(proj / "out" / "run")
    (proj / "settings.yaml").write_text('output:\n  type: file\n  base_dir: "out/run"\n', encoding="utf-8")
    return proj, idx


def project_with_output_link(tmp: Path) -> tuple[Path, Path]:
    idx = copy_seed(tmp / "store" / "idx")
    proj = tmp / "proj"
    proj.mkdir()
    os.symlink("../store/idx", proj / "output")
    return proj, idx


def tgt(writer: str, file_name: str, dir_name: str = "out") -> str:
    return dir_name if writer.startswith("write") else file_name


# ============================================================================================
# A. the index reached indirectly
# ============================================================================================
@case(
    ALL_WRITERS,
    "the index is reached through settings.yaml (output base_dir out/run); the target is a table "
    "in it (for --write: a folder in it)",
    "exit 2: `…: refusing to write inside the index directory <out/run>`",
)
def c_table_via_settings(tmp, writer):
    proj, idx = project_with_settings(tmp)
    t = idx / ("communities.parquet" if not writer.startswith("write") else "plan")
    return refused(W(proj, t, 2, inside(idx), hashed=[idx]), writer)


@case(
    ALL_WRITERS,
    "the project's output is a symlink to the index elsewhere; the target is a table by its real path",
    "exit 2: `…: refusing to write inside the index directory <real index>`",
)
def c_table_via_output_link(tmp, writer):
    proj, idx = project_with_output_link(tmp)
    t = idx / ("community_reports.parquet" if not writer.startswith("write") else "plan")
    return refused(W(proj, t, 2, inside(idx), hashed=[idx]), writer)


@case(
    ALL_WRITERS,
    "a new file (or folder) under the project's output symlink",
    "exit 2: `proj/output/…: refusing to write inside the index directory <real index>`",
)
def c_new_file_via_output_link(tmp, writer):
    proj, idx = project_with_output_link(tmp)
    return refused(W(proj, proj / "output" / tgt(writer, "new.txt"), 2, inside(idx), hashed=[idx]), writer)


@case(
    ALL_WRITERS,
    "a symlink beside the index leads into it; the target is under the link",
    "exit 2: `alias/…: refusing to write inside the index directory …`",
)
def c_link_into_index_dir(tmp, writer):
    idx = copy_seed(tmp / "index")
    os.symlink("index", tmp / "alias")
    return refused(W(idx, tmp / "alias" / tgt(writer, "x.txt"), 2, inside(idx), hashed=[idx]), writer)


@case(
    ALL_WRITERS,
    "the target path climbs into the index with `..` (other/../index/…)",
    "exit 2: `other/../index/…: refusing to write inside the index directory …`",
)
def c_dotdot_into_index(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "other").mkdir()
    t = Path(str(tmp / "other") + "/../index/" + tgt(writer, "x.txt"))
    return refused(W(idx, t, 2, inside(idx), hashed=[idx]), writer)


@case(
    ALL_WRITERS,
    "the target is the index directory itself",
    "exit 2: `index: refusing to write inside the index directory …`",
)
def c_index_dir_as_target(tmp, writer):
    idx = copy_seed(tmp / "index")
    return refused(W(idx, idx, 2, inside(idx), hashed=[idx]), writer)


@case(
    ("levels", "tree", "report", "plan", "summary"),
    "index/communities.parquet is a symlink to store/communities.parquet (outside the index); the target is that "
    "file",
    "exit 2: `store/communities.parquet: refusing to write over <store/communities.parquet>, a file of the "
    "index`",
)
def c_table_linked_from_elsewhere(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "store").mkdir()
    os.replace(idx / "communities.parquet", tmp / "store" / "communities.parquet")
    os.symlink("../store/communities.parquet", idx / "communities.parquet")
    t = tmp / "store" / "communities.parquet"
    return refused(W(idx, t, 2, over(t), hashed=[idx]), writer)


@case(
    ("write-force",),
    "--force into the folder that holds a table the index links to (store/, holding the real "
    "communities.parquet)",
    "exit 2: `store/communities.parquet: refusing to write over <store/communities.parquet>, "
    "a file of the index`",
)
def c_write_force_into_table_folder(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "store").mkdir()
    os.replace(idx / "communities.parquet", tmp / "store" / "communities.parquet")
    os.symlink("../store/communities.parquet", idx / "communities.parquet")
    t = tmp / "store" / "communities.parquet"
    return W(idx, tmp / "store", 2, over(t), shown=t, hashed=[idx])


@case(
    ("levels", "tree", "report", "plan", "summary"),
    "the target is a hard link to index/entities.parquet",
    "exit 2: `elsewhere/h.parquet: refusing to write over <index/entities.parquet>, a file of the index`",
)
def c_hard_link_to_table(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "elsewhere").mkdir()
    os.link(idx / "entities.parquet", tmp / "elsewhere" / "h.parquet")
    return refused(
        W(idx, tmp / "elsewhere" / "h.parquet", 2, over(idx / "entities.parquet"), hashed=[idx]), writer
    )


@case(
    ("levels", "tree", "report", "plan", "summary"),
    "the target name is a symlink to a table of the index",
    "exit 2: `link.txt: refusing to write over <index/communities.parquet>, a file of the index`",
)
def c_link_at_target_to_table(tmp, writer):
    idx = copy_seed(tmp / "index")
    os.symlink("index/communities.parquet", tmp / "link.txt")
    return refused(W(idx, tmp / "link.txt", 2, over(idx / "communities.parquet"), hashed=[idx]), writer)


@case(
    ALL_WRITERS,
    "index/lancedb is a symlink to ../vectors (a folder outside the index); the target is in vectors/",
    "exit 2: `vectors/…: refusing to write inside <vectors>, a folder the index directory links to`",
)
def c_folder_the_index_links_to(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "vectors").mkdir()
    os.symlink("../vectors", idx / "lancedb")
    real = os.path.realpath(tmp / "vectors")
    return refused(
        W(
            idx,
            tmp / "vectors" / tgt(writer, "x.txt"),
            2,
            re.escape(f"refusing to write inside {real}, a folder the index directory links to"),
            hashed=[idx],
        ),
        writer,
    )


@case(
    ALL_WRITERS,
    "index/up is a symlink to .. (the folder holding the index); the target is beside the index",
    "exit 0: written (a link up the tree does not make the parent part of the index)",
)
def c_index_links_to_ancestor(tmp, writer):
    idx = copy_seed(tmp / "index")
    os.symlink("..", idx / "up")
    if writer.startswith("write"):
        return W(
            idx,
            tmp / "out",
            0,
            allowed={"out"},
            hashed=[idx],
            check=_plan_dir("out", ["text_units.parquet"], ["up"]),
        )
    start = "## " if writer == "summary" else None
    return W(
        idx, tmp / "beside.out", 0, allowed={"beside.out"}, hashed=[idx], check=_created("beside.out", start)
    )


@case(
    ALL_WRITERS,
    "a bind mount of the index directory (same inode, another path); the target is under it "
    "(skipped where mount --bind is not allowed)",
    "exit 2: `mnt/…: refusing to write inside the index directory …`",
)
def c_bind_mount_of_index(tmp, writer):
    idx = copy_seed(tmp / "index")
    mnt = tmp / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "--bind", str(idx), str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"mount --bind not allowed here: {r.stderr.strip()}")
    # the inode walk catches it; the message names the bind path's own real path or the index
    return refused(
        W(
            idx,
            mnt / tgt(writer, "x.txt"),
            2,
            r"refusing to write inside the index directory "
            + "("
            + re.escape(os.path.realpath(idx))
            + "|"
            + re.escape(str(mnt))
            + ")",
            hashed=[idx],
        ),
        writer,
    )


def _umount(mnt: Path) -> None:
    subprocess.run(["umount", str(mnt)], capture_output=True)


# ============================================================================================
# B. the target itself
# ============================================================================================
@case(
    ("levels", "tree", "report", "plan", "summary"),
    "the target name is a symlink to a file outside the index (holding 'old')",
    "-o: exit 2: `link.txt: is a symbolic link: refusing to write through it (name the file it points to)`; "
    "summary: exit 0, warning `…: is a symbolic link; nothing appended`; the file keeps 'old'",
)
def c_link_at_target_elsewhere(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "elsewhere").mkdir()
    (tmp / "elsewhere" / "file.txt").write_text("old")
    os.symlink("elsewhere/file.txt", tmp / "link.txt")
    if writer == "summary":
        return W(
            idx, tmp / "link.txt", 0, warn=r".*link\.txt: is a symbolic link; nothing appended", hashed=[idx]
        )
    return W(
        idx,
        tmp / "link.txt",
        2,
        re.escape("is a symbolic link: refusing to write through it (name the file it points to)"),
        hashed=[idx],
    )


@case(
    ("levels", "tree", "report", "plan", "summary"),
    "the target name is a dangling symlink (to missing/x)",
    "-o: exit 2 (`is a symbolic link …`); summary: exit 0 with a warning; nothing is created at missing/x",
)
def c_dangling_link_target(tmp, writer):
    idx = copy_seed(tmp / "index")
    os.symlink("missing/x", tmp / "dangling")
    if writer == "summary":
        return W(
            idx, tmp / "dangling", 0, warn=r".*dangling: is a symbolic link; nothing appended", hashed=[idx]
        )
    return W(idx, tmp / "dangling", 2, r"is a symbolic link: refusing to write through it .*", hashed=[idx])


@case(
    ("levels", "tree", "report", "plan", "summary"),
    "the target is a FIFO with no reader (opening it for writing would block forever)",
    "-o: exit 2: `fifo: not a regular file (a FIFO, device or socket): refusing to "
    "write to it (-o - writes to stdout)`; summary: exit 0, warning `…: not a regular file …; nothing appended`; "
    "no hang",
)
def c_fifo_target(tmp, writer):
    idx = copy_seed(tmp / "index")
    os.mkfifo(tmp / "fifo")
    if writer == "summary":
        return W(idx, tmp / "fifo", 0, warn=r".*fifo: not a regular file .*; nothing appended", hashed=[idx])
    return W(
        idx,
        tmp / "fifo",
        2,
        re.escape(
            "not a regular file (a FIFO, device or socket): refusing to write to it (-o - writes to stdout)"
        ),
        hashed=[idx],
    )


@case(
    ("levels", "tree", "report", "plan", "summary"),
    "the target is a symlink to /dev/zero",
    "-o: exit 2 (`is a symbolic link …`); summary: exit 0 with a warning",
)
def c_dev_zero_link_target(tmp, writer):
    idx = copy_seed(tmp / "index")
    os.symlink("/dev/zero", tmp / "zero")
    if writer == "summary":
        return W(idx, tmp / "zero", 0, warn=r".*zero: is a symbolic link; nothing appended", hashed=[idx])
    return W(idx, tmp / "zero", 2, r"is a symbolic link: refusing to write through it .*", hashed=[idx])


@case(
    ("levels", "tree", "report", "plan", "summary"),
    "the target is /dev/null (a device: never renamed over, never opened)",
    "-o: exit 2 (`not a regular file …`); summary: exit 0 with a warning",
)
def c_dev_null_target(tmp, writer):
    idx = copy_seed(tmp / "index")
    if writer == "summary":
        return W(
            idx, "/dev/null", 0, warn=r".*/dev/null: not a regular file .*; nothing appended", hashed=[idx]
        )
    return W(idx, "/dev/null", 2, r"not a regular file \(a FIFO, device or socket\).*", hashed=[idx])


@case(
    ("levels", "tree", "report", "plan", "summary"),
    "the target is an existing directory",
    "-o: exit 2: `somedir: is a directory`; summary: exit 0 with a warning",
)
def c_directory_target(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "somedir").mkdir()
    if writer == "summary":
        return W(
            idx, tmp / "somedir", 0, warn=r".*somedir: not a regular file .*; nothing appended", hashed=[idx]
        )
    return W(idx, tmp / "somedir", 2, "is a directory", hashed=[idx])


@case(
    ("levels", "tree", "report", "plan", "summary"),
    "the target's folder does not exist",
    "-o: exit 2: `missing/sub/x.out: cannot write (No such file or directory)`, before any work; summary: exit 0 "
    "with a warning",
)
def c_missing_parent(tmp, writer):
    idx = copy_seed(tmp / "index")
    t = tmp / "missing" / "sub" / "x.out"
    if writer == "summary":
        return W(idx, t, 0, warn=r".*x\.out: cannot append \(No such file or directory\)", hashed=[idx])
    return W(idx, t, 2, re.escape("cannot write (No such file or directory)"), hashed=[idx])


def _created(rel: str, startswith: str | None = None, mode: int | None = None):
    def check(case_dir: Path, result) -> None:
        p = case_dir / rel
        assert p.is_file() and not p.is_symlink(), f"{p} not written"
        data = p.read_bytes()
        assert data, f"{p} is empty"
        if startswith is not None:
            assert data.startswith(startswith.encode()), data[:80]
        if mode is not None:
            assert (p.stat().st_mode & 0o777) == mode, oct(p.stat().st_mode)
        leftovers = [n for n in os.listdir(p.parent) if ".graphrag-audit-" in n]
        assert not leftovers, leftovers

    return check


def _plan_dir(rel: str, linked: list[str] | None = None, left_out: list[str] | None = None):
    def check(case_dir: Path, result) -> None:
        out = case_dir / rel
        names = sorted(os.listdir(out))
        doc = json.loads(result.stdout)
        links = [n.rstrip("/") for n in doc["handoff"]["linked"]]
        assert names == sorted(
            [
                "communities.parquet",
                "community_reports.parquet",
                "entities.parquet",
                "graphrag_audit_plan.json",
                *links,
            ]
        ), names
        index = os.path.realpath(json.loads((out / "graphrag_audit_plan.json").read_text())["source"])
        for n in links:  # a link to the source entry, never a copy
            assert (out / n).is_symlink() and os.readlink(out / n) == os.path.join(index, n), n
        manifest = json.loads((out / "graphrag_audit_plan.json").read_text())
        assert manifest["communities"] == doc["plan"]["communities"]
        assert (
            sorted(pq.read_table(out / "communities.parquet")["community"].to_pylist())
            == doc["plan"]["communities"]
        )
        assert doc["handoff"]["copied"] == ["entities.parquet"]
        if linked is not None:
            assert doc["handoff"]["linked"] == linked and manifest["linked"] == linked
        if left_out is not None:
            assert doc["handoff"]["left_out"] == left_out and manifest["left_out"] == left_out
        assert not [n for n in os.listdir(out.parent) if ".graphrag-audit-" in n]

    return check


@case(
    ALL_WRITERS,
    "issue 13.2: a project root given as DIR (index in output/); the target is in the project root",
    "exit 0: written (the project root is not the index directory)",
)
def c_project_root_allowed(tmp, writer):
    proj = tmp / "proj"
    idx = copy_seed(proj / "output")
    if writer.startswith("write"):
        return W(
            proj,
            proj / "plan-out",
            0,
            allowed={"proj/plan-out"},
            hashed=[idx],
            check=_plan_dir("proj/plan-out", ["text_units.parquet"], []),
        )
    start = "## " if writer == "summary" else None
    return W(
        proj,
        proj / "audit.out",
        0,
        allowed={"proj/audit.out"},
        hashed=[idx],
        check=_created("proj/audit.out", start),
    )


@case(
    FILE_WRITERS,
    "an existing file (mode 0640) outside the index is replaced",
    "exit 0: new content, mode 0640 kept, no temporary file left",
)
def c_overwrite_keeps_mode(tmp, writer):
    idx = copy_seed(tmp / "index")
    t = tmp / "old.out"
    t.write_text("old content")
    os.chmod(t, 0o640)
    return W(idx, t, 0, allowed={"old.out"}, hashed=[idx], check=_created("old.out", mode=0o640))


@case(FILE_WRITERS, "issue 13.5: `-o -`", "exit 0: the payload on stdout, nothing written")
def c_dash_is_stdout(tmp, writer):
    idx = copy_seed(tmp / "index")

    def check(case_dir, result):
        assert result.stdout.strip(), "nothing on stdout"
        assert not (case_dir / "-").exists()

    return W(idx, "-", 0, hashed=[idx], check=check)


@case(
    ("summary",),
    "$GITHUB_STEP_SUMMARY is a regular file holding 'before'",
    "exit 0: the Markdown report appended after 'before'",
)
def c_summary_appends(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "summary.md").write_text("before\n")
    return W(
        idx,
        tmp / "summary.md",
        0,
        allowed={"summary.md"},
        hashed=[idx],
        check=_created("summary.md", startswith="before\n## "),
    )


# ============================================================================================
# C. plan --write
# ============================================================================================
@case(
    ("write", "write-force"),
    "a new OUT beside the index",
    "exit 0: OUT holds communities, community_reports, entities and the manifest; text_units.parquet is a "
    "symbolic link to the source's, listed as linked; no temporary folder left",
)
def c_write_new_dir(tmp, writer):
    idx = copy_seed(tmp / "index")
    return W(
        idx, tmp / "out", 0, allowed={"out"}, hashed=[idx], check=_plan_dir("out", ["text_units.parquet"], [])
    )


@case(("write", "write-force"), "OUT exists and is empty", "exit 0: written in place")
def c_write_existing_empty_dir(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "out").mkdir()
    return W(idx, tmp / "out", 0, allowed={"out"}, hashed=[idx], check=_plan_dir("out"))


@case(
    ("write",),
    "OUT holds a file",
    "exit 2: `out: exists and is not empty (use --force to write into it anyway)`",
)
def c_write_nonempty_no_force(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "out").mkdir()
    (tmp / "out" / "x.txt").write_text("keep")
    return W(
        idx,
        tmp / "out",
        2,
        re.escape("exists and is not empty (use --force to write into it anyway)"),
        hashed=[idx],
    )


@case(
    ("write-force",),
    "--force into OUT whose communities/community_reports/entities.parquet are symlinks to the "
    "source index's tables",
    "exit 0: the links are replaced by regular files; the source tables are unchanged",
)
def c_write_force_symlinked_tables(tmp, writer):
    idx = copy_seed(tmp / "index")
    out = tmp / "out"
    out.mkdir()
    for name in SEED_TABLES:
        os.symlink(f"../index/{name}", out / name)
    check = _plan_dir("out")

    def both(case_dir, result):
        check(case_dir, result)
        assert not any((out / n).is_symlink() for n in SEED_TABLES)

    return W(idx, out, 0, allowed={"out"}, hashed=[idx], check=both)


@case(
    ("write-force",),
    "--force into OUT whose communities.parquet is a hard link to the source's",
    "exit 2: `out/communities.parquet: refusing to write over <index/communities.parquet>, a file of the index`",
)
def c_write_force_hard_linked_table(tmp, writer):
    idx = copy_seed(tmp / "index")
    out = tmp / "out"
    out.mkdir()
    os.link(idx / "communities.parquet", out / "communities.parquet")
    return W(idx, out, 2, over(idx / "communities.parquet"), shown=out / "communities.parquet", hashed=[idx])


@case(
    ("write-force",),
    "--force into OUT where communities.parquet is a directory",
    "exit 2: `out/communities.parquet: is a directory`; nothing else written",
)
def c_write_force_dir_named_table(tmp, writer):
    idx = copy_seed(tmp / "index")
    out = tmp / "out"
    (out / "communities.parquet").mkdir(parents=True)
    return W(idx, out, 2, "is a directory", shown=out / "communities.parquet", hashed=[idx])


@case(
    ("write", "write-force"),
    "OUT is a symlink to an empty folder",
    "exit 2: `out: is a symbolic link: refusing to write through it (give the directory it points to)`",
)
def c_write_out_is_symlink(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "empty").mkdir()
    os.symlink("empty", tmp / "out")
    return W(
        idx,
        tmp / "out",
        2,
        re.escape("is a symbolic link: refusing to write through it (give the directory it points to)"),
        hashed=[idx],
    )


@case(
    ("write", "write-force"),
    "OUT is a symlink to the index directory",
    "exit 2: `out: refusing to write inside the index directory …`",
)
def c_write_out_symlink_to_index(tmp, writer):
    idx = copy_seed(tmp / "index")
    os.symlink("index", tmp / "out")
    return W(idx, tmp / "out", 2, inside(idx), hashed=[idx])


@case(
    ("write-force",),
    "--force into the project root that contains the index (output/)",
    "exit 2: `proj: refusing to write into a directory that contains the index directory <proj/output>`",
)
def c_write_contains_index(tmp, writer):
    proj = tmp / "proj"
    idx = copy_seed(proj / "output")
    return W(
        proj,
        proj,
        2,
        re.escape(
            f"refusing to write into a directory that contains the index directory {os.path.realpath(idx)}"
        ),
        hashed=[idx],
    )


@case(("write", "write-force"), "OUT is a regular file", "exit 2: `out: exists and is not a directory`")
def c_write_out_is_file(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "out").write_text("a file")
    return W(idx, tmp / "out", 2, "exists and is not a directory", hashed=[idx])


@case(("write",), "OUT's parent folders do not exist", "exit 0: created (a/b/out)")
def c_write_missing_parents(tmp, writer):
    idx = copy_seed(tmp / "index")
    return W(idx, tmp / "a" / "b" / "out", 0, allowed={"a"}, hashed=[idx], check=_plan_dir("a/b/out"))


@case(
    ("write",),
    "the source holds zero -> /dev/zero, a FIFO, up -> .. (an ancestor), outside -> a file outside "
    "the index, and a folder",
    "exit 0 at once: the three tables and the manifest are written; the folder and "
    "text_units.parquet are linked; the FIFO and the links out are listed as left out, "
    "none is opened",
)
def c_write_source_hostile_siblings(tmp, writer):
    idx = copy_seed(tmp / "index")
    os.symlink("/dev/zero", idx / "zero")
    os.mkfifo(idx / "fifo")
    os.symlink("..", idx / "up")
    (tmp / "secret.txt").write_text("secret")
    os.symlink("../secret.txt", idx / "outside")
    (idx / "lancedb").mkdir()
    (idx / "lancedb" / "x.lance").write_bytes(b"x" * 100)
    return W(
        idx,
        tmp / "out",
        0,
        allowed={"out"},
        hashed=[idx],
        check=_plan_dir("out", ["lancedb/", "text_units.parquet"], ["fifo", "outside", "up", "zero"]),
    )


@case(
    ("write",),
    "the source's entities.parquet is a symlink to a file outside the source directory",
    "exit 2: `index/entities.parquet: is a symbolic link out of the source index directory: refusing to copy it`; "
    "no OUT",
)
def c_write_entities_link_outside(tmp, writer):
    idx = copy_seed(tmp / "index")
    (tmp / "store").mkdir()
    os.replace(idx / "entities.parquet", tmp / "store" / "entities.parquet")
    os.symlink("../store/entities.parquet", idx / "entities.parquet")
    return W(
        idx,
        tmp / "out",
        2,
        re.escape("is a symbolic link out of the source index directory: refusing to copy it"),
        shown=idx / "entities.parquet",
        hashed=[idx],
    )


@case(
    ("write",),
    "the source's entities.parquet is a symlink to data/entities.parquet inside the source",
    "exit 0: its content is copied as a regular file",
)
def c_write_entities_link_inside(tmp, writer):
    idx = copy_seed(tmp / "index")
    (idx / "data").mkdir()
    os.replace(idx / "entities.parquet", idx / "data" / "entities.parquet")
    os.symlink("data/entities.parquet", idx / "entities.parquet")
    return W(
        idx,
        tmp / "out",
        0,
        allowed={"out"},
        hashed=[idx],
        check=_plan_dir("out", ["data/", "text_units.parquet"], []),
    )


# ============================================================================================
# running
# ============================================================================================
@dataclass
class Outcome:
    w: W
    result: object
    before: dict
    after: dict
    hashes_before: list
    hashes_after: list
    case_dir: Path
    skip: str | None = None


def _run(server: CliServer, name: str, writer: str, root: Path) -> Outcome:
    c = CASES[name]
    tmp = root / f"{name}--{writer}"
    tmp.mkdir()
    try:
        w = c.build(tmp, writer)
    except pytest.skip.Exception as exc:
        return Outcome(None, None, {}, {}, [], [], tmp, skip=str(exc))
    argv, env = command(writer, w.index, w.target)
    hb = [index_hashes(d) for d in w.hashed]
    before = state(tmp)
    try:
        result = server.run(argv, timeout=TIMEOUT, env_extra=env)
        after = state(tmp)
        ha = [index_hashes(d) for d in w.hashed]
        if w.check is not None and w.code == 0 and result.code == 0:
            try:
                w.check(tmp, result)
            except AssertionError as exc:
                result.stderr += f"\n[check failed: {exc}]"
                result.code = -100
    finally:
        if name == "bind-mount-of-index":
            _umount(tmp / "mnt")
    return Outcome(w, result, before, after, hb, ha, tmp)


PARAMS = [(n, wr) for n, c in CASES.items() for wr in c.writers]


@pytest.fixture(scope="module")
def outcomes(request, tmp_path_factory):
    wanted = {
        tuple(item.callspec.params[k] for k in ("name", "writer"))
        for item in request.session.items
        if getattr(item, "callspec", None)
        and item.originalname == "test_write_case"
        and item.module is request.module
    }
    root = tmp_path_factory.mktemp("writes")
    todo = [p for p in PARAMS if p in wanted]
    workers = 3
    servers = [CliServer() for _ in range(workers)]
    out = {}
    try:
        chunks = [todo[i::workers] for i in range(workers)]

        def work(i):
            return [((n, wr), _run(servers[i], n, wr, root)) for n, wr in chunks[i]]

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for res in pool.map(work, range(workers)):
                out.update(res)
        yield out
    finally:
        for s in servers:
            s.close()
        for p in root.glob("*/mnt"):
            _umount(p)


@pytest.mark.parametrize("name,writer", PARAMS)
def test_write_case(name, writer, outcomes):
    o = outcomes[(name, writer)]
    if o.skip:
        pytest.skip(o.skip)
    check_outcome(f"{name}/{writer}", o.w, o.result, o.before, o.after, o.hashes_before, o.hashes_after)


def check_outcome(label, w: W, r, before, after, hb, ha) -> None:
    assert not r.timed_out, f"{label}: no result within {TIMEOUT}s (a hang)"
    assert "Traceback" not in r.stderr + r.stdout and "internal error" not in r.stderr, r.stderr
    assert r.code == w.code, f"{label}: exit {r.code}, stderr={r.stderr!r}"
    lines = r.stderr.splitlines()
    stderr = r.stderr
    if label.endswith("/report") and r.code == 0 and str(w.target) != "-":  # report says what it wrote
        wrote = [ln for ln in lines if re.fullmatch(r"graphrag-audit: wrote .+ \([\d,]+ bytes\)", ln)]
        assert len(wrote) == 1, f"{label}: no 'wrote' line: {r.stderr!r}"
        lines.remove(wrote[0])
        stderr = "".join(ln + "\n" for ln in lines)
    if w.code == 2:
        assert len(lines) == 1, f"{label}: not one stderr line: {r.stderr!r}"
        shown = str(w.shown if w.shown is not None else w.target)
        pattern = re.escape(PREFIX + shown + ": ") + w.problem
        assert re.fullmatch(pattern, lines[0]), f"{label}: {lines[0]!r} !~ {pattern!r}"
    elif w.warn:
        assert len(lines) == 1 and re.fullmatch("graphrag-audit: warning: " + w.warn, lines[0]), r.stderr
    else:
        assert stderr == "", f"{label}: {r.stderr!r}"
    assert ha == hb, f"{label}: an index file changed"
    bad = {p for p in changed(before, after) if not within(p, w.allowed)}
    assert not bad, f"{label}: changed outside the target: {sorted(bad)}"


def test_every_write_case_is_documented():
    text = (REPO / "docs" / "robustness.md").read_text(encoding="utf-8")
    missing = [n for n in CASES if f"`{n}`" not in text]
    assert not missing, f"docs/robustness.md lacks write cases: {missing}"


def test_issue_13_relative_paths_from_the_project_root(tmp_path):
    """`report . -o audit.html` from a project root writes audit.html there; `-o output/x.json`
    (the resolved index directory) is refused and names it."""
    proj = tmp_path / "proj"
    idx = copy_seed(proj / "output")
    hb = index_hashes(idx)
    r = run_cli(["report", ".", "--no-costs", "-o", "audit.html"], cwd=proj, timeout=TIMEOUT)
    size = (proj / "audit.html").stat().st_size
    assert r.code == 0 and r.stderr == f"graphrag-audit: wrote audit.html ({size:,} bytes)\n", r.stderr
    assert (proj / "audit.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
    r = run_cli(["levels", ".", "--no-costs", "-f", "json", "-o", "output/x.json"], cwd=proj, timeout=TIMEOUT)
    assert r.code == 2 and r.stderr == (
        f"{PREFIX}output/x.json: refusing to write inside the index directory {os.path.realpath(idx)}\n"
    ), r.stderr
    assert not (idx / "x.json").exists() and index_hashes(idx) == hb


# ============================================================================================
# D. concurrent writers
# ============================================================================================
def _two_at_once(argv_a, argv_b):
    servers = [CliServer(), CliServer()]
    try:
        with ThreadPoolExecutor(2) as pool:
            fa = pool.submit(servers[0].run, argv_a, timeout=TIMEOUT)
            fb = pool.submit(servers[1].run, argv_b, timeout=TIMEOUT)
            return fa.result(), fb.result()
    finally:
        for s in servers:
            s.close()


def test_concurrent_plan_write_one_wins(tmp_path):
    """Two `plan --write OUT` started together (different budgets, so the plans differ): exactly one
    succeeds, the other exits 2 with one line; OUT holds the winner's plan, read back."""
    idx = copy_seed(tmp_path / "index")
    hb = index_hashes(idx)
    for rnd in range(4):
        out = tmp_path / f"out{rnd}"
        a = ["plan", idx, "--reports", "3", "--no-costs", "-f", "json", "--write", out]
        b = ["plan", idx, "--reports", "5", "--no-costs", "-f", "json", "--write", out]
        ra, rb = _two_at_once(a, b)
        codes = sorted([ra.code, rb.code])
        assert codes == [0, 2], (ra.code, ra.stderr, rb.code, rb.stderr)
        win, lose = (ra, rb) if ra.code == 0 else (rb, ra)
        assert len(lose.stderr.splitlines()) == 1 and lose.stderr.startswith(PREFIX + str(out) + ": ")
        assert re.search(
            r"exists and is not empty|another graphrag-audit run is writing|another run wrote it", lose.stderr
        ), lose.stderr
        plan = json.loads(win.stdout)["plan"]["communities"]
        assert sorted(pq.read_table(out / "communities.parquet")["community"].to_pylist()) == plan
        assert json.loads((out / "graphrag_audit_plan.json").read_text())["communities"] == plan
        assert not [n for n in os.listdir(tmp_path) if ".graphrag-audit-" in n]
    assert index_hashes(idx) == hb


def test_directory_writer_races_in_process(tmp_path):
    """Two writers build a new OUT, the first commits, the second finds OUT taken and keeps nothing."""
    from graphrag_audit.io.safe_write import DirectoryWriter, Guard, WriteError

    idx = copy_seed(tmp_path / "index")
    g = Guard().protect(idx, [idx / n for n in SEED_TABLES])
    out = tmp_path / "out"
    with DirectoryWriter(out, g) as a, DirectoryWriter(out, g) as b:
        a.write_file("x.txt", "A")
        b.write_file("x.txt", "B")
        a.commit()
        with pytest.raises(WriteError, match="another run wrote it while this one was writing"):
            b.commit()
    assert (out / "x.txt").read_text() == "A"
    assert sorted(os.listdir(tmp_path)) == ["index", "out"]  # b's temporary folder removed


# ============================================================================================
# E. SIGKILL in the middle of a write
# ============================================================================================
_PAUSING_WRITER = r"""
import os, sys, time
from pathlib import Path
from graphrag_audit.io.safe_write import DirectoryWriter, Guard, write_file
mode, target = sys.argv[1], Path(sys.argv[2])

def pausing(fh):
    fh.write(b"N" * 1_000_000)  # the new content, half of it
    fh.flush()
    os.write(1, b"half\n")
    time.sleep(120)
    fh.write(b"N" * 1_000_000)

if mode == "file":
    write_file(target, pausing, Guard())
else:
    with DirectoryWriter(target, Guard(), force=(mode == "force")) as w:
        w.write_file("a.bin", b"A" * 2_000_000)
        w.write_file("b.bin", pausing)
        w.commit()
"""


def _kill_when_half(mode: str, target: Path) -> None:
    env = clean_env()
    proc = subprocess.Popen(
        [sys.executable, "-c", _PAUSING_WRITER, mode, str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(REPO),
    )
    try:
        line = proc.stdout.readline()
        assert line == b"half\n", (line, proc.stderr.read())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL


def test_sigkill_mid_file_write_leaves_old_file(tmp_path):
    t = tmp_path / "report.html"
    t.write_bytes(b"OLD")
    _kill_when_half("file", t)
    assert t.read_bytes() == b"OLD"  # never half-written
    tmp = [n for n in os.listdir(tmp_path) if n.startswith(".report.html.graphrag-audit-")]
    assert len(tmp) == 1 and os.path.getsize(tmp_path / tmp[0]) == 1_000_000  # the kill hit mid-write
    _kill_when_half("file", tmp_path / "new.html")
    assert not (tmp_path / "new.html").exists()  # absent, not half-written


def test_sigkill_mid_new_directory_leaves_no_out(tmp_path):
    _kill_when_half("new", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    left = [n for n in os.listdir(tmp_path) if n.startswith(".out.graphrag-audit-")]
    assert len(left) == 1  # the temporary folder (documented), never a half OUT


def test_sigkill_mid_forced_write_leaves_whole_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.bin").write_bytes(b"a-old")
    (out / "b.bin").write_bytes(b"b-old")
    _kill_when_half("force", out)
    assert (out / "a.bin").read_bytes() == b"A" * 2_000_000  # renamed into place before the kill
    assert (out / "b.bin").read_bytes() == b"b-old"  # old, not half-new
    from graphrag_audit.io.safe_write import DirectoryWriter, Guard

    with DirectoryWriter(out, Guard(), force=True) as w:
        w.write_file("b.bin", "new")
        w.commit()
    assert (out / "b.bin").read_text() == "new"


def test_sigkill_during_cli_plan_write(tmp_path):
    """The real command, killed as soon as its temporary folder appears (then after 0-40 ms more):
    OUT is absent or a complete directory that reads back as the plan."""
    from synthetic import leiden_like, write_index

    from graphrag_audit.io.load import load_index

    src = tmp_path / "src"
    write_index(leiden_like(3000, seed=3), src, "3.x")
    hb = index_hashes(src)
    env = clean_env()
    kills = 0
    for i, extra in enumerate([0.0, 0.005, 0.01, 0.02, 0.04]):
        out = tmp_path / f"out{i}"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphrag_audit",
                "plan",
                str(src),
                "--reports",
                "400",
                "--no-costs",
                "-f",
                "json",
                "--write",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            cwd=str(REPO),
        )
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if any(n.startswith(f".out{i}.graphrag-audit-") for n in os.listdir(tmp_path)):
                time.sleep(extra)
                proc.kill()
                kills += 1
                break
            time.sleep(0.001)
        proc.wait(timeout=60)
        if out.exists():  # finished before the kill: complete
            back = load_index(out)
            manifest = json.loads((out / "graphrag_audit_plan.json").read_text())
            assert sorted(back.communities["community"].tolist()) == manifest["communities"]
        assert not (out.exists() and not (out / "graphrag_audit_plan.json").exists())
    assert kills >= 3, f"only {kills} kills landed during the write"
    assert index_hashes(src) == hb


# ============================================================================================
# F. a full file system
# ============================================================================================
@pytest.fixture
def tiny_fs(tmp_path):
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    if r.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({r.stderr.strip()}); test_file_size_limit covers the fake layer"
        )
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def _fill(mnt: Path, leave: int) -> None:
    st = os.statvfs(mnt)
    free = st.f_bavail * st.f_frsize
    with open(mnt / "filler", "wb") as fh:
        fh.write(b"\0" * max(0, free - leave))


def test_full_disk_keeps_old_file_and_no_temp(tmp_path, tiny_fs):
    idx = copy_seed(tmp_path / "index")
    hb = index_hashes(idx)
    target = tiny_fs / "audit.html"
    target.write_text("OLD REPORT")
    _fill(tiny_fs, 8192)
    r = run_cli(["report", idx, "--no-costs", "-o", target], timeout=TIMEOUT)
    assert r.code == 2 and r.stderr == f"{PREFIX}{target}: cannot write (No space left on device)\n", r.stderr
    assert target.read_text() == "OLD REPORT"
    assert sorted(os.listdir(tiny_fs)) == ["audit.html", "filler"]
    r = run_cli(["plan", idx, "--reports", "3", "--no-costs", "--write", tiny_fs / "out"], timeout=TIMEOUT)
    assert r.code == 2 and "No space left on device" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert sorted(os.listdir(tiny_fs)) == ["audit.html", "filler"]  # no OUT, no temporary folder
    assert index_hashes(idx) == hb


_FSIZE_BOOT = r"""
import resource, runpy, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
sys.argv = ["graphrag-audit"] + sys.argv[2:]
runpy.run_module("graphrag_audit", run_name="__main__", alter_sys=True)
"""


def test_file_size_limit(tmp_path):
    """The size-limited layer that works everywhere (RLIMIT_FSIZE: the kernel refuses writes past
    4 KiB): the old file stays, no temporary file, one line, exit 2 — for -o and --write."""
    idx = copy_seed(tmp_path / "index")
    hb = index_hashes(idx)
    out_dir = tmp_path / "w"
    out_dir.mkdir()
    target = out_dir / "audit.html"
    target.write_text("OLD")
    env = clean_env()
    for argv in (
        ["report", str(idx), "--no-costs", "-o", str(target)],
        ["plan", str(idx), "--reports", "3", "--no-costs", "--write", str(out_dir / "plan")],
    ):
        r = subprocess.run(
            [sys.executable, "-c", _FSIZE_BOOT, "4096", *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(REPO),
            timeout=120,
        )
        assert r.returncode == 2, r.stderr
        assert r.stderr.endswith(": cannot write (File too large)\n") and len(r.stderr.splitlines()) == 1, (
            r.stderr
        )
        assert "internal error" not in r.stderr
        assert target.read_text() == "OLD"
        assert sorted(os.listdir(out_dir)) == ["audit.html"]
    assert index_hashes(idx) == hb


def test_enospc_from_the_writer_in_process(tmp_path):
    """A data producer that fails half-way (ENOSPC raised inside the write, as pyarrow's writer
    would raise it): WriteError, old file intact, temporary file removed."""
    from graphrag_audit.io.safe_write import Guard, WriteError, write_file

    t = tmp_path / "x.json"
    t.write_text("old")

    def producer(fh):
        fh.write(b"{" * 1000)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(WriteError, match=r"cannot write \(No space left on device\)"):
        write_file(t, producer, Guard())
    assert t.read_text() == "old" and os.listdir(tmp_path) == ["x.json"]


# ============================================================================================
# G. random link layouts (a bounded run; tests/fuzz/fuzz_writes.py runs for minutes)
# ============================================================================================
def test_fuzz_writers_on_random_layouts(tmp_path):
    pytest.importorskip("hypothesis")
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    sys.path.insert(0, str(REPO / "tests" / "fuzz"))
    from fuzz_writes import build_layout, check_run, layout_strategy

    srv = CliServer()
    counter = iter(range(10**6))
    try:

        @settings(
            max_examples=int(os.environ.get("GRAPHRAG_AUDIT_FUZZ_EXAMPLES", "30")),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(layout_strategy(st))
        def run(spec):
            case_dir = tmp_path / f"c{next(counter)}"
            case_dir.mkdir()
            lay = build_layout(case_dir, spec)
            check_run(srv, lay)

        run()
    finally:
        srv.close()
