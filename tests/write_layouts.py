"""Shared by tests/io/test_writes.py and tests/fuzz/fuzz_writes.py: the writers of the CLI as
commands, index copies, and states of a folder to compare before and after a write.

Every writer of graphrag-audit, as the argument list that makes it write to TARGET:

* ``levels``, ``tree``, ``report``, ``plan``: ``-o TARGET``
* ``write``: ``plan --write TARGET`` (``write-force``: with ``--force``)
* ``summary``: ``levels -f github`` with ``GITHUB_STEP_SUMMARY=TARGET``
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "fixtures" / "seed-v3"
SEED_TABLES = ("communities.parquet", "community_reports.parquet", "entities.parquet")

FILE_WRITERS = ("levels", "tree", "report", "plan")
ALL_WRITERS = FILE_WRITERS + ("write", "write-force", "summary")


def command(writer: str, index: Path | str, target: Path | str) -> tuple[list[str], dict]:
    """(argv after the program name, extra environment) that make ``writer`` write ``target``."""
    d, t = str(index), str(target)
    if writer == "levels":
        return ["levels", d, "--no-costs", "-f", "json", "--fail-on", "never", "-o", t], {}
    if writer == "tree":
        return ["tree", d, "-f", "json", "-o", t], {}
    if writer == "report":
        return ["report", d, "--no-costs", "-o", t], {}
    if writer == "plan":
        return ["plan", d, "--reports", "3", "--no-costs", "-f", "json", "-o", t], {}
    if writer in ("write", "write-force"):
        return (
            ["plan", d, "--reports", "3", "--no-costs", "-f", "json", "--write", t]
            + (["--force"] if writer == "write-force" else [])
        ), {}
    if writer == "summary":
        return ["levels", d, "--no-costs", "-f", "github", "--fail-on", "never"], {"GITHUB_STEP_SUMMARY": t}
    raise ValueError(writer)


def copy_seed(dest: Path) -> Path:
    """A fresh copy of the 3.x seed index (communities, reports, entities, text_units)."""
    shutil.copytree(SEED, dest)
    return dest


def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def index_hashes(index_dir: Path, tables=SEED_TABLES) -> dict:
    """SHA-256 of every regular file directly in the index directory and of what each table
    name leads to (through links), with the directory's real path and listing."""
    real = os.path.realpath(index_dir)
    out = {"@dir": real, "@listing": sorted(os.listdir(real))}
    for name in out["@listing"]:
        p = os.path.join(real, name)
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode):
            out[name] = _digest(p)
        elif stat.S_ISLNK(st.st_mode):
            out[name] = ("link", os.readlink(p))
    for t in tables:
        p = os.path.realpath(os.path.join(real, t))
        if os.path.isfile(p):
            out["@table:" + t] = (p, _digest(p))
    return out


def state(root: Path) -> dict:
    """Everything under ``root`` without following links: type, mode, size, content hash or
    link text (directory times left out: creating the target changes its folder's)."""
    out = {}
    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", stat.S_IMODE(st.st_mode), st.st_size, _digest(p))
            else:
                out[rel] = ("special", stat.S_IFMT(st.st_mode))
    return out


def changed(before: dict, after: dict) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def within(path: str, allowed: set[str]) -> bool:
    """``path`` (relative) is one of ``allowed`` or lies under one of them."""
    return any(path == a or path.startswith(a.rstrip("/") + "/") for a in allowed)
