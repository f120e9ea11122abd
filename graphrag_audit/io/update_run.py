"""Where the parts of one `graphrag update` run are: the index before it, the new documents'
index, the merged index, and which of them graphrag queries.

graphrag >= 2.0 (``index/run/run_pipeline.py`` @ v2.0.0-v3.3.0) copies the output folder to
``update_output/<timestamp>/previous``, indexes the new documents into ``…/delta`` and writes the
merged index back into the output folder, which graphrag queries. graphrag 0.4-1.2
(``index/run/run.py`` and ``index/update/incremental_index.py`` @ v0.9.0) indexes the new documents
into ``update_output/delta`` and writes the merged index into ``update_output/`` itself, leaving the
output folder (the index before the update) as it was; graphrag keeps querying the output folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.locate import TIMESTAMP, _is_dir, _newest_timestamped, _table_files, locate_index
from graphrag_audit.io.settings import (
    DEFAULT_UPDATE_OUTPUT,
    REMOTE_SCHEMES,
    find_settings,
    read_output_setting,
    remote_url,
)

ROLES = ("previous", "delta", "merged")


@dataclass(frozen=True)
class UpdateRun:
    """The folders of one update run (None: not found), and which one graphrag queries."""

    requested: Path
    layout: str  # ">= 2.0" (update_output/<ts>/{previous,delta}) or "0.4-1.2" (update_output/{delta,tables})
    run: str | None  # the timestamp folder's name (>= 2.0)
    runs: int  # update runs found (>= 2.0), 1 for the 0.4-1.2 layout
    previous: Path | None
    delta: Path | None
    merged: Path | None
    queried: str | None  # the role graphrag queries ("merged" or "previous"); None: that folder is unknown
    notes: tuple[str, ...] = ()

    def folder(self, role: str) -> Path | None:
        return getattr(self, role)


def _parts(ts: Path) -> bool:
    return any(_is_dir(ts / p) or os.path.islink(ts / p) for p in ("previous", "delta"))


def _part(folder: Path) -> Path | None:
    """``folder`` when it is a folder; None when nothing is there; an input error naming it when
    something else is (a broken or looping symbolic link, a file): never taken as absent."""
    if _is_dir(folder):
        return folder
    if os.path.islink(folder):
        raise IndexInputError(
            folder, "broken or looping symbolic link where the update run's folder should be"
        )
    if os.path.lexists(folder):
        raise IndexInputError(folder, "not a folder, where the update run's folder should be")
    return None


def _project_output(root: Path) -> tuple[Path | None, str]:
    """The output folder graphrag queries for the project at ``root`` (None when it cannot be
    found), and the update folder its settings name."""
    update_dir = DEFAULT_UPDATE_OUTPUT
    settings = find_settings(root) if _is_dir(root) else None
    if settings is not None:
        update_dir = read_output_setting(settings).update_dir
    try:
        return locate_index(root).output_dir, update_dir
    except IndexInputError:
        return None, update_dir


def _run_folder(ts: Path, runs: int, requested: Path, output: Path | None, notes: list[str]) -> UpdateRun:
    """A graphrag >= 2.0 run: ``ts`` (update_output/<timestamp>) holds previous and delta."""
    if output is None:
        notes.append(
            f"the project's output folder (the merged index graphrag queries) was not found next to "
            f"{ts.parent}: only previous and delta are audited"
        )
    merged = "merged" if output is not None else None
    prev, delta = _part(ts / "previous"), _part(ts / "delta")
    return UpdateRun(requested, ">= 2.0", ts.name, runs, prev, delta, output, merged, tuple(notes))


def _legacy(upd: Path, requested: Path, output: Path | None) -> UpdateRun:
    """A graphrag 0.4-1.2 run: ``upd`` (update_output) holds the merged tables and delta/."""
    notes: tuple[str, ...] = ()
    if output is None:
        notes = (
            f"the project's output folder (the index before the update, which graphrag queries) was not "
            f"found next to {upd}",
        )
    queried = "previous" if output is not None else None
    return UpdateRun(requested, "0.4-1.2", None, 1, output, _part(upd / "delta"), upd, queried, notes)


def locate_update_run(path: str | os.PathLike) -> UpdateRun:
    """The newest update run reachable from ``path``: a run folder ``update_output/<timestamp>``,
    the ``update_output`` folder, a graphrag 0.4-1.2 ``update_output`` (tables and ``delta/``) or
    a project root."""
    requested = Path(path)
    url = remote_url(os.fspath(path))
    if url is not None and not os.path.lexists(requested):
        where = REMOTE_SCHEMES[url[0]]
        raise IndexInputError(
            url[1],
            f"update-run reads local folders only, and this is on {where}: copy the "
            f"project's output and {DEFAULT_UPDATE_OUTPUT} folders into a local project "
            f"folder and pass that",
        )
    if not _is_dir(requested):
        raise IndexInputError(requested, "no such directory")
    if TIMESTAMP.match(requested.name) and _parts(requested):  # update_output/<ts>
        count = (_newest_timestamped(requested.parent) or (requested, 1))[1]
        output, _ = _project_output(requested.parent.parent)
        return _run_folder(requested, count, requested, output, [])
    ts = _newest_timestamped(requested)
    if ts is not None and _parts(ts[0]) and not _table_files(requested):  # update_output/
        output, _ = _project_output(requested.parent)
        return _run_folder(
            ts[0],
            ts[1],
            requested,
            output,
            [f"the newest of {ts[1]} update run(s) in {requested}: {ts[0].name}"] if ts[1] > 1 else [],
        )
    if _table_files(requested) and _is_dir(requested / "delta"):  # 0.4-1.2's update_output/
        output, _ = _project_output(requested.parent)
        if output is not None and output.resolve() == requested.resolve():
            output = None
        return _legacy(requested, requested, output)
    # a project root
    output, update_dir = _project_output(requested)
    upd = requested / update_dir
    if _is_dir(upd):
        ts = _newest_timestamped(upd)
        if ts is not None and _parts(ts[0]):
            return _run_folder(ts[0], ts[1], requested, output, [])
        if _table_files(upd):
            return _legacy(upd, requested, output)
    raise IndexInputError(
        requested,
        f"no `graphrag update` run here: pass a project root with an {update_dir}/ "
        f"folder, that folder, or one of its <timestamp> run folders",
    )
