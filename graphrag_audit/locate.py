"""Find the index tables: a project root, an output directory, or a 0.x timestamped run."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from graphrag_audit.errors import IndexInputError

#: logical table -> file stems, newest naming first
TABLE_STEMS: dict[str, tuple[str, ...]] = {
    "communities": ("communities", "create_final_communities"),
    "reports": ("community_reports", "create_final_community_reports"),
    "nodes": ("create_final_nodes",),
    "entities": ("entities", "create_final_entities"),
}
EXTENSIONS = (".parquet", ".csv")


@dataclass(frozen=True)
class IndexFiles:
    """Where the tables of one index live."""

    requested: Path
    output_dir: Path
    tables: dict[str, Path] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def has(self, name: str) -> bool:
        return name in self.tables


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


def _table_files(directory: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name, stems in TABLE_STEMS.items():
        for stem in stems:
            for ext in EXTENSIONS:
                p = directory / f"{stem}{ext}"
                if _exists(p):
                    found[name] = p
                    break
            if name in found:
                break
    return found


def _settings_base_dir(settings: Path) -> str | None:
    """The output ``base_dir`` of a graphrag settings.yaml, read without a YAML library.

    graphrag 0.x keeps it under ``storage:``, 1.x/2.x under ``output:``, 3.x under
    ``output_storage:`` (or ``output:``). Only that one nested key is needed.
    """
    try:
        with open(settings, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1024**2)  # a settings file is small; never read a giant one whole
    except OSError:
        return None
    section = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        key, _, value = line.strip().partition(":")
        if indent == 0:
            section = key.strip() if key.strip() in ("output", "storage", "output_storage") else None
            continue
        if section and key.strip() == "base_dir":
            v = value.strip().strip("'\"")
            if v:
                return v
    return None


def _newest_timestamped(base: Path) -> tuple[Path, int] | None:
    """``base/<timestamp>/artifacts`` holding tables: the newest (by name) and the count."""
    runs = []
    try:
        children = sorted(base.iterdir())
    except OSError:
        return None
    for child in children:
        art = child / "artifacts"
        if _is_dir(art) and _table_files(art):
            runs.append(art)
    if not runs:
        return None
    return runs[-1], len(runs)


def locate_index(path: str | os.PathLike) -> IndexFiles:
    """Resolve a user-given path to the directory holding the index tables."""
    requested = Path(path)
    if not _exists(requested):
        raise IndexInputError(requested, "no such file or directory")
    if not _is_dir(requested):
        if requested.is_symlink() and not requested.exists():
            raise IndexInputError(requested, "broken or looping symbolic link")
        raise IndexInputError(requested, "not a directory (give the index output directory or the project root)")
    try:
        os.listdir(requested)
    except PermissionError:
        raise IndexInputError(requested, "permission denied: cannot list the directory") from None
    except OSError as exc:
        raise IndexInputError(requested, f"cannot list the directory ({exc.strerror or exc})") from None

    notes: list[str] = []
    candidates: list[Path] = [requested]
    for name in ("settings.yaml", "settings.yml"):
        settings = requested / name
        if settings.is_file():
            base = _settings_base_dir(settings)
            if base:
                base = re.sub(r"\$\{timestamp\}.*$", "", base).rstrip("/") or "."
                try:
                    target = (requested / base).resolve()
                except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
                    notes.append(f"{name} output base_dir '{base}' cannot be resolved")
                    break
                notes.append(f"followed {name} output base_dir '{base}'")
                candidates.append(target)
            break
    candidates.append(requested / "output")
    candidates.append(requested / "artifacts")

    for cand in candidates:
        if not _is_dir(cand):
            continue
        tables = _table_files(cand)
        if tables:
            return IndexFiles(requested, cand, tables, tuple(notes))
        ts = _newest_timestamped(cand)
        if ts is not None:
            newest, count = ts
            notes.append(
                f"timestamped 0.x layout: using the newest run {newest.parent.name} of {count}"
            )
            return IndexFiles(requested, newest, _table_files(newest), tuple(notes))
    raise IndexInputError(
        requested,
        "no GraphRAG index tables found (looked for communities, community_reports, "
        "create_final_* parquet/csv here, in output/, and in output/<timestamp>/artifacts/)",
    )
