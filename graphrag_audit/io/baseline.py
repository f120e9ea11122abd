"""Read a ``levels -f json`` document written earlier (``levels --baseline OLD.json``).

Refused, with one line naming the file: a file that cannot be read or is not JSON, a JSON that is
not a levels report of graphrag-audit (a plan, tree or diff JSON, anything else), and a levels JSON
of another schema major version (its fields may mean something else)."""

from __future__ import annotations

from pathlib import Path

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.bounded import loads_json, read_bytes
from graphrag_audit.results.audit import SCHEMA_VERSION

#: keys every levels JSON has (graphrag_audit/schema/audit-report.schema.json)
LEVELS_KEYS = ("schema_version", "tool", "options", "index", "tree", "levels", "findings")


def _major(version: str) -> str:
    return str(version).split(".", 1)[0]


def read_baseline(path: str | Path) -> dict:
    """The baseline document; raises :class:`IndexInputError` (path, one-line problem)."""
    try:
        raw = read_bytes(path, "baseline")
    except OSError as exc:
        raise IndexInputError(
            path, f"cannot read the baseline ({exc.strerror or exc.__class__.__name__})"
        ) from None
    doc = loads_json(path, "baseline", raw)
    if (
        not isinstance(doc, dict)
        or "kind" in doc
        or any(k not in doc for k in LEVELS_KEYS)
        or not isinstance(doc.get("levels"), list)
        or not isinstance(doc.get("findings"), list)
    ):
        raise IndexInputError(
            path, "not a levels JSON written by graphrag-audit (levels -f json): cannot be a baseline"
        )
    version = doc["schema_version"]
    if not isinstance(version, str) or _major(version) != _major(SCHEMA_VERSION):
        raise IndexInputError(
            path,
            f"baseline schema_version {str(version)[:20]!r} is not of this graphrag-audit's "
            f"levels JSON major version {_major(SCHEMA_VERSION)} ({SCHEMA_VERSION})",
        )
    return doc
