"""Find the index tables: a project root (its settings, read as graphrag reads them), an output
directory, a 0.x timestamped run, or a folder that `graphrag update` wrote; and the folders of one
`graphrag update` run (:func:`locate_update_run`).

A project root's settings are followed strictly: the folder they name is the one audited, or the
audit stops (exit 2) naming it; there is no fallback to another folder. How graphrag itself reads
the settings, per version, is in :mod:`graphrag_audit.io.settings` and docs/user-guide.md.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.settings import (
    DEFAULT_OUTPUT,
    DEFAULT_UPDATE_OUTPUT,
    READ_IN_PLACE,
    REMOTE_SCHEMES,
    OutputSetting,
    find_settings,
    read_output_setting,
    remote_problem,
    remote_url,
)

#: logical table -> file stems, newest naming first
TABLE_STEMS: dict[str, tuple[str, ...]] = {
    "communities": ("communities", "create_final_communities"),
    "reports": ("community_reports", "create_final_community_reports"),
    "nodes": ("create_final_nodes",),
    "entities": ("entities", "create_final_entities"),
}
EXTENSIONS = (".parquet", ".csv")
#: graphrag's run folders: ``time.strftime("%Y%m%d-%H%M%S")``; graphrag >= 0.3.3 picks the newest
#: by name among the folders matching this (``config/resolve_path.py`` @ v0.3.3-v1.2.0)
TIMESTAMP = re.compile(r"^\d{8}-\d{6}$")
#: where graphrag 0.1-0.3.4 wrote by default
_V0_DEFAULT = f"graphrag 0.1-0.3.4's default '{DEFAULT_OUTPUT}/${{timestamp}}/artifacts'"


@dataclass(frozen=True)
class IndexFiles:
    """Where the tables of one index live."""

    requested: Path
    output_dir: Path
    tables: dict[str, Path] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    settings_file: Path | None = None  # the settings file followed, if any
    storage_key: str | None = None  # the key that named the folder ("output_storage", ...); None: a default
    table_format: str = "parquet"  # the set audited when both exist ("parquet" or "csv")
    #: when both parquet and CSV copies exist and differ: one dict per differing table
    format_differences: tuple[dict, ...] = ()


def _is_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except OSError:  # symlink loops, permission problems
        return False


def _exists(p: Path) -> bool:
    try:
        return p.exists() or p.is_symlink()
    except OSError:
        return True


def _table_files(directory: Path, only: str | None = None) -> dict[str, Path]:
    """The table files in ``directory``: per logical table the newest naming, parquet before
    CSV; only the ``.{only}`` files when the settings name a table type."""
    exts = (f".{only}",) if only else EXTENSIONS
    found: dict[str, Path] = {}
    for name, stems in TABLE_STEMS.items():
        paths = (directory / f"{stem}{ext}" for stem in stems for ext in exts)
        path = next((p for p in paths if _exists(p)), None)
        if path is not None:
            found[name] = path
    return found


def _newest_timestamped(base: Path) -> tuple[Path, int] | None:
    """graphrag's ``${timestamp}`` lookup: the newest (by name) ``base/<YYYYmmdd-HHMMSS>`` folder
    and how many there are, or None."""
    try:
        runs = sorted(c for c in base.iterdir() if TIMESTAMP.match(c.name) and _is_dir(c))
    except OSError:
        return None
    return (runs[-1], len(runs)) if runs else None


def _timestamped_run(base: Path, how: str) -> tuple[Path, str] | None:
    """``base/<newest timestamp>/artifacts`` (graphrag 0.1-0.3.4's default layout), with a note;
    an error naming it when that newest run holds no tables (graphrag reads only the newest)."""
    ts = _newest_timestamped(base)
    if ts is None:
        return None
    newest, count = ts
    art = newest / "artifacts"
    if not _table_files(art):
        raise IndexInputError(
            art,
            f"no index tables in the newest of {count} timestamped runs ({how}); graphrag "
            f"reads the newest run only: pass an older run's artifacts folder to audit it",
        )
    return art, f"timestamped 0.x layout ({how}): using the newest run {newest.name} of {count}"


def _update_run_error(requested: Path) -> None:
    """A folder without tables that `graphrag update` (>= 2.0) wrote, passed as DIR: say what to
    pass instead."""

    def parts(d: Path) -> bool:
        return any(_is_dir(d / p) for p in ("previous", "delta"))

    if TIMESTAMP.match(requested.name) and parts(requested):
        raise IndexInputError(
            requested,
            f"a `graphrag update` run folder: pass {requested / 'previous'} (the index "
            f"before this update) or {requested / 'delta'} (the index of the new "
            f"documents only); the updated index is the project's output folder "
            f"(graphrag-audit update-run audits all three together)",
        )
    ts = _newest_timestamped(requested)
    if ts is not None and parts(ts[0]):
        newest, count = ts
        raise IndexInputError(
            requested,
            f"the update_output folder of `graphrag update` ({count} run(s), newest "
            f"{newest.name}): the updated index is the project's output folder; "
            f"pass {newest / 'previous'} or {newest / 'delta'} to audit one part of "
            f"a run (graphrag-audit update-run audits all three together)",
        )


def _update_role(output_dir: Path) -> list[str]:
    """What an audited folder is when `graphrag update` wrote it."""
    name, parent = output_dir.name, output_dir.parent
    if name in ("previous", "delta") and TIMESTAMP.match(parent.name):
        what = (
            "the index as it was before that update (the updated index is the project's output folder)"
            if name == "previous"
            else "the index of only the documents that update added (graphrag merged it into the "
            "project's output folder)"
        )
        return [f"this is the '{name}' folder of the `graphrag update` run {parent.name}: {what}"]
    if _is_dir(output_dir / "delta") and _table_files(output_dir):
        return [
            "this folder also holds delta/: graphrag 0.4-1.2's `graphrag update` writes the merged index "
            "here and the new documents' index in delta/ (graphrag keeps querying the output folder "
            "until pointed here)"
        ]
    return []


def _update_notes(root: Path, update_dir: str, output_dir: Path) -> list[str]:
    """Notes on a project root where `graphrag update` ran."""
    upd = root / update_dir
    if not _is_dir(upd):
        return []
    try:
        if upd.resolve() == output_dir.resolve():
            return []
    except (OSError, RuntimeError):
        return []
    shown = update_dir.rstrip("/") + "/"
    ts = _newest_timestamped(upd)
    if ts is not None and _is_dir(ts[0] / "previous"):
        newest, count = ts
        return [
            f"`graphrag update` ran here ({count} run(s) in {shown}, newest {newest.name}): graphrag >= 2.0 "
            f"writes the updated index into the output folder audited here; the index before that update "
            f"is {upd / newest.name / 'previous'}: pass that folder to audit it"
        ]
    if _table_files(upd):
        return [
            f"{shown} holds the merged index of graphrag 0.4-1.2's `graphrag update`, while graphrag keeps "
            f"querying the output folder audited here: pass {upd} to audit the updated index"
        ]
    return []


# ---- parquet and CSV side by side --------------------------------------------------------------
#: the column compared (its values, as a multiset) besides the row count
_COMPARE = {"communities": ("community", "id"), "reports": ("community",)}


def _value_key(v) -> str:
    """A community number as text, whether it was read as text, an integer or a float (NaN: "")."""
    import numpy as np

    if v is None or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v).strip()


def _summary(path: Path, name: str) -> tuple[int, str | None, Counter]:
    from graphrag_audit.io.tables import read_table, table_columns

    cols = table_columns(path)
    col = next((c for c in _COMPARE.get(name, ()) if c in cols), None)
    if not cols:
        return 0, None, Counter()
    df = read_table(path, [col or cols[0]])  # without a column to compare: one, for the row count
    return len(df), col, Counter(_value_key(v) for v in df[col].tolist()) if col else Counter()


def _ids(values) -> str:
    vals = sorted(values, key=lambda s: (len(s), s))
    shown = ", ".join(v if v else "(empty)" for v in vals[:8])
    return shown + (f" and {len(vals) - 8} more" if len(vals) > 8 else "")


def _formats(
    tables: dict[str, Path], table_type: str | None, settings_file: Path | None
) -> tuple[list[str], list[dict], str]:
    """Notes, differences and the set audited when both parquet and CSV copies exist: a cheap
    comparison of row counts and, for communities and reports, the community numbers."""
    others = {
        name: p.with_suffix(".csv" if p.suffix == ".parquet" else ".parquet") for name, p in tables.items()
    }
    pairs = {name: other for name, other in others.items() if _exists(other)}
    audited = "csv" if table_type == "csv" else "parquet"
    if not pairs:
        if tables and all(p.suffix == ".csv" for p in tables.values()):
            audited = "csv"
        return [], [], audited
    why = (
        f"{settings_file.name} table_provider.type {table_type}"
        if table_type and settings_file is not None
        else "graphrag's default table_provider is parquet; table_provider: {type: csv} in the settings "
        "selects the CSV set"
    )
    names = ", ".join(tables[n].stem for n in pairs)
    notes = [f"both parquet and CSV copies of {names} are here: auditing the {audited} set ({why})"]
    diffs: list[dict] = []
    for name, other in pairs.items():
        mine = tables[name]
        try:
            a_rows, a_col, a_vals = _summary(mine, name)
            b_rows, b_col, b_vals = _summary(other, name)
        except IndexInputError as exc:
            notes.append(f"could not compare {mine.name} with {other.name}: {exc.path}: {exc.problem}")
            continue
        d: dict = {"table": name, "audited": mine.name, "other": other.name}
        parts = []
        if a_rows != b_rows:
            d.update(audited_rows=a_rows, other_rows=b_rows)
            parts.append(f"{mine.name} has {a_rows:,} rows, {other.name} {b_rows:,}")
        if a_col is not None and a_col == b_col and a_vals != b_vals:
            only_a, only_b = a_vals - b_vals, b_vals - a_vals
            d.update(column=a_col, only_audited=sorted(only_a), only_other=sorted(only_b))
            bits = [f"{_ids(only_a)} only in {mine.name}"] if only_a else []
            bits += [f"{_ids(only_b)} only in {other.name}"] if only_b else []
            parts.append(f"{a_col} values differ ({'; '.join(bits)})")
        if parts:
            d["message"] = "; ".join(parts)
            diffs.append(d)
    if diffs:
        kind = "CSV" if audited == "parquet" else "parquet"
        notes.append(
            f"the {kind} copies differ from the audited {audited} tables: "
            + " | ".join(f"{d['table']}: {d['message']}" for d in diffs)
        )
    else:
        notes.append("the two sets agree in row counts and community numbers")
    return notes, diffs, audited


# ---- locating ----------------------------------------------------------------------------------
def _found(
    requested: Path,
    output_dir: Path,
    notes: list[str],
    setting: OutputSetting | None = None,
    *,
    tables: dict[str, Path] | None = None,
    table_type: str | None = None,
) -> IndexFiles:
    """The index in ``output_dir`` (its ``tables``, else all it holds)."""
    tables = tables or _table_files(output_dir)
    settings_file = setting.settings_file if setting is not None else None
    more, diffs, audited = _formats(tables, table_type, settings_file)
    return IndexFiles(
        requested,
        output_dir,
        tables,
        tuple(notes + _update_role(output_dir) + more),
        settings_file=settings_file,
        storage_key=setting.key if setting is not None else None,
        table_format=audited,
        format_differences=tuple(diffs),
    )


def _resolve_timestamp(setting: OutputSetting, root: Path) -> tuple[str, list[str]]:
    """graphrag 0.3.3-1.2's ``resolve_path``: a ``${timestamp}`` path part becomes the newest
    ``YYYYmmdd-HHMMSS`` folder (by name) in the folder before it."""
    parts = Path(setting.base_dir).parts
    idx = next((i for i, p in enumerate(parts) if p.lower() == "${timestamp}"), None)
    if idx is None:
        return setting.base_dir, []
    parent_rel = Path(*parts[:idx]) if idx else Path(".")
    parent = root / parent_rel
    if not _is_dir(parent):
        raise IndexInputError(
            parent,
            f"no such folder: {setting.describe()} resolves ${{timestamp}} among the runs in this folder",
        )
    ts = _newest_timestamped(parent)
    if ts is None:
        raise IndexInputError(
            parent, f"no run folder (YYYYmmdd-HHMMSS) here to resolve ${{timestamp}} of {setting.describe()}"
        )
    newest, count = ts
    resolved = str(Path(*parts[:idx], newest.name, *parts[idx + 1 :]))
    return resolved, [f"${{timestamp}} resolved as graphrag does: the newest run {newest.name} of {count}"]


def _with_settings(requested: Path, setting: OutputSetting) -> IndexFiles:
    if setting.blob is not None:  # load_index reads it in place (io/remote.py); no local folder here
        raise IndexInputError(
            setting.settings_file,
            f"{setting.describe()} is remote storage, not a local "
            f"folder: this command needs a local index folder",
        )
    root = setting.settings_file.parent
    base, notes = _resolve_timestamp(setting, root)
    where = setting.describe()
    target = root / base  # an absolute base_dir stays absolute, as in graphrag
    loop = IndexInputError(
        target, f"broken or looping symbolic link, which {where} names as the output folder"
    )
    try:
        target = target.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        raise loop from None
    if not _is_dir(target):
        if target.is_symlink():  # (Python >= 3.13 resolves a loop without raising)
            raise loop
        if _exists(target):
            raise IndexInputError(target, f"not a folder, but {where} names it as the output folder")
        raise IndexInputError(
            target,
            f"no such output folder, but {where} names it (graphrag-audit never "
            f"falls back to another folder: fix the settings or pass the index folder)",
        )
    notes = [f"followed {where}" if setting.key else where, *setting.notes, *notes]
    tables = _table_files(target, setting.table_type)
    if not tables and setting.key is None and (run := _timestamped_run(target, _V0_DEFAULT)):
        return _found(requested, run[0], [*notes, run[1]], setting)
    if not tables:
        kind = f" .{setting.table_type}" if setting.table_type else ""
        hint = ""
        if setting.table_type and _table_files(target):
            other = "parquet" if setting.table_type == "csv" else "csv"
            hint = f" (there are .{other} tables, but table_provider.type is {setting.table_type})"
        raise IndexInputError(
            target, f"no GraphRAG index{kind} tables in the output folder named by {where}{hint}"
        )
    notes += _update_notes(root, setting.update_dir, target)
    return _found(requested, target, notes, setting, tables=tables, table_type=setting.table_type)


def _without_settings(requested: Path) -> IndexFiles:
    if _table_files(requested):
        return _found(requested, requested, [])
    _update_run_error(requested)
    if run := _timestamped_run(requested, "output/<timestamp>/artifacts"):
        return _found(requested, run[0], [run[1]])
    out = requested / DEFAULT_OUTPUT
    if _is_dir(out):
        note = f"no settings file here: graphrag's default output folder '{DEFAULT_OUTPUT}'"
        if _table_files(out):
            return _found(requested, out, [note, *_update_notes(requested, DEFAULT_UPDATE_OUTPUT, out)])
        if run := _timestamped_run(out, _V0_DEFAULT):
            return _found(requested, run[0], [note, run[1]])
    if _is_dir(requested / "artifacts") and _table_files(requested / "artifacts"):
        return _found(requested, requested / "artifacts", [])
    raise IndexInputError(
        requested,
        "no GraphRAG index tables found (looked for communities, community_reports, "
        "create_final_* parquet/csv here, in output/, and in output/<timestamp>/artifacts/; "
        "no settings.yaml/settings.yml/settings.json here)",
    )


def locate_index(path: str | os.PathLike) -> IndexFiles:
    """Resolve a user-given path to the directory holding the index tables."""
    requested = Path(path)
    if not _exists(requested):
        url = remote_url(str(path)) or remote_url(str(requested))
        if url is not None and url[0] in READ_IN_PLACE:
            raise IndexInputError(
                url[1],
                f"this index is on {REMOTE_SCHEMES[url[0]]}, not in a local folder: "
                f"load_index reads it in place (graphrag_audit.io.remote); "
                f"locate_index finds local folders only",
            )
        if url is not None:
            raise IndexInputError(url[1], remote_problem("this index", REMOTE_SCHEMES[url[0]]))
        raise IndexInputError(requested, "no such file or directory")
    if not _is_dir(requested):
        if requested.is_symlink() and not requested.exists():
            raise IndexInputError(requested, "broken or looping symbolic link")
        raise IndexInputError(
            requested, "not a directory (give the index output directory or the project root)"
        )
    try:
        os.listdir(requested)
    except PermissionError:
        raise IndexInputError(requested, "permission denied: cannot list the directory") from None
    except OSError as exc:
        raise IndexInputError(requested, f"cannot list the directory ({exc.strerror or exc})") from None

    settings = find_settings(requested)
    if settings is None:
        return _without_settings(requested)
    return _with_settings(requested, read_output_setting(settings))


# ---- the folders of one `graphrag update` run ---------------------------------------------------
# graphrag >= 2.0 (``index/run/run_pipeline.py`` @ v2.0.0-v3.3.0) copies the output folder to
# ``update_output/<timestamp>/previous``, indexes the new documents into ``.../delta`` and writes the
# merged index back into the output folder, which graphrag queries. graphrag 0.4-1.2
# (``index/run/run.py`` and ``index/update/incremental_index.py`` @ v0.9.0) indexes the new documents
# into ``update_output/delta`` and writes the merged index into ``update_output/`` itself, leaving the
# output folder (the index before the update) as it was; graphrag keeps querying the output folder.
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


def _has_parts(ts: Path) -> bool:
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
    settings = find_settings(root) if _is_dir(root) else None
    update_dir = DEFAULT_UPDATE_OUTPUT if settings is None else read_output_setting(settings).update_dir
    try:
        return locate_index(root).output_dir, update_dir
    except IndexInputError:
        return None, update_dir


def _run_folder(ts: Path, runs: int, requested: Path, output: Path | None, notes=()) -> UpdateRun:
    """A graphrag >= 2.0 run: ``ts`` (update_output/<timestamp>) holds previous and delta."""
    if output is None:
        notes = (
            *notes,
            f"the project's output folder (the merged index graphrag queries) was not found next to "
            f"{ts.parent}: only previous and delta are audited",
        )
    prev, delta = _part(ts / "previous"), _part(ts / "delta")
    queried = "merged" if output is not None else None
    return UpdateRun(requested, ">= 2.0", ts.name, runs, prev, delta, output, queried, tuple(notes))


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
        raise IndexInputError(
            url[1],
            f"update-run reads local folders only, and this is on {REMOTE_SCHEMES[url[0]]}: copy the "
            f"project's output and {DEFAULT_UPDATE_OUTPUT} folders into a local project folder and pass that",
        )
    if not _is_dir(requested):
        raise IndexInputError(requested, "no such directory")
    if TIMESTAMP.match(requested.name) and _has_parts(requested):  # update_output/<ts>
        count = (_newest_timestamped(requested.parent) or (requested, 1))[1]
        return _run_folder(requested, count, requested, _project_output(requested.parent.parent)[0])
    ts = _newest_timestamped(requested)
    if ts is not None and _has_parts(ts[0]) and not _table_files(requested):  # update_output/
        note = [f"the newest of {ts[1]} update run(s) in {requested}: {ts[0].name}"] if ts[1] > 1 else []
        return _run_folder(ts[0], ts[1], requested, _project_output(requested.parent)[0], note)
    if _table_files(requested) and _is_dir(requested / "delta"):  # 0.4-1.2's update_output/
        output = _project_output(requested.parent)[0]
        if output is not None and output.resolve() == requested.resolve():
            output = None
        return _legacy(requested, requested, output)
    # a project root
    output, update_dir = _project_output(requested)
    upd = requested / update_dir
    if _is_dir(upd):
        ts = _newest_timestamped(upd)
        if ts is not None and _has_parts(ts[0]):
            return _run_folder(ts[0], ts[1], requested, output)
        if _table_files(upd):
            return _legacy(upd, requested, output)
    raise IndexInputError(
        requested,
        f"no `graphrag update` run here: pass a project root with an {update_dir}/ "
        f"folder, that folder, or one of its <timestamp> run folders",
    )


def location_findings(model) -> list:
    """The ``parquet-csv-differ`` finding when the index's parquet and CSV copies disagree."""
    from graphrag_audit.findings import finding

    diffs = model.format_differences
    if not diffs:
        return []
    audited = model.table_format
    msg = (
        f"both parquet and CSV copies of the index are in {model.output_dir} and differ; the audit reads the "
        f"{audited} set: " + " | ".join(f"{d['table']}: {d['message']}" for d in diffs)
    )
    return [
        finding(
            "parquet-csv-differ",
            msg,
            audited=audited,
            other="csv" if audited == "parquet" else "parquet",
            differences=[{k: v for k, v in d.items() if k != "message"} for d in diffs],
        )
    ]


def remote_index_files(loc, progress=None) -> IndexFiles:
    """The :class:`~graphrag_audit.io.locate.IndexFiles` of ``loc``: its tables (here or in its
    ``output/``) as :class:`RemoteFile`; the folder actually read names ``output_dir``. ``progress``
    (None or a callable taking a step's text) hears of each file read."""
    from graphrag_audit.io.remote import RemoteFolder, RemoteName, fault_text, filesystem

    started = time.monotonic()  # the remote read's clock: the SDKs' start-up counts
    url = loc.display.split(" ", 1)[0]
    fs = None
    try:
        fs = filesystem(loc)
        # (a RemoteFolder serves as the Path that _table_files looks in)
        folder = RemoteFolder.listed(loc, fs, loc.root, url, started, progress)
        tables = _table_files(cast(Path, folder))
        if not tables:
            sub = RemoteFolder.listed(loc, fs, loc.root + "/output", url + "/output", started, progress)
            tables = _table_files(cast(Path, sub))
            if tables:
                folder = sub
            elif not folder.files and not fs.exists(loc.root):
                raise IndexInputError(loc.display, "no such container or folder")
            else:
                raise IndexInputError(
                    loc.display,
                    "no GraphRAG index tables found (looked for communities, "
                    "community_reports, create_final_* parquet/csv here and in output/)",
                )
    except IndexInputError:
        raise
    except Exception as exc:  # noqa: BLE001 (the SDKs' errors: classified, credentials scrubbed)
        hint, what = "", str(exc).lower() + type(exc).__name__.lower()
        if fs is None and loc.extra == "azure" and "credential" in what:  # the SDK's constructor failed
            hint = (
                "no credentials: set AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT_NAME with a "
                "credential DefaultAzureCredential finds; "
            )
        raise IndexInputError(loc.display, hint + fault_text(exc, loc, time.monotonic() - started)) from None
    notes, diffs, audited = _formats(tables, None, None)
    return IndexFiles(
        cast(Path, RemoteName(loc.display)),
        cast(Path, RemoteName(folder + loc.display[len(url) :])),
        tables,
        tuple(notes),
        settings_file=loc.settings_file,
        table_format=audited,
        format_differences=tuple(diffs),
    )
