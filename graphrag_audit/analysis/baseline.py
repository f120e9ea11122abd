"""A ``levels -f json`` baseline as the figures a regression check compares
(:class:`~graphrag_audit.analysis.diff.Snapshot`); read by :func:`graphrag_audit.io.baseline.read_baseline`."""

from __future__ import annotations

import os

from graphrag_audit.analysis.diff import Snapshot
from graphrag_audit.errors import IndexInputError
from graphrag_audit.results.diff import DIFF_BEHAVIOURS, SideStats


def _int(v):
    return None if v is None else int(v)


def snapshot_of_json(doc: dict, path: str | os.PathLike) -> Snapshot:
    """Per (community_level, behaviour) the baseline's reports, tokens, map calls and coverage, and its
    findings. A field of the wrong shape is the usual one-line error naming ``path``."""
    try:
        clustered = int(doc["index"]["counts"].get("clustered_entities", 0))
        stats = {}
        for lvl in doc["levels"]:
            n = lvl["community_level"]
            for b in DIFF_BEHAVIOURS:
                s = lvl["selected"].get(b)
                if s is None:
                    continue
                stats[(None if n is None else int(n), b)] = SideStats(
                    reports=int(s["count"]),
                    tokens=_int(s.get("tokens")),
                    map_calls=_int(s.get("map_calls")),
                    entities_covered=int(s["entities_covered"]),
                    clustered_entities=clustered,
                    status=s.get("status"),
                )
        findings = tuple(
            (str(f["rule"]), str(f["severity"]), str(f.get("message", ""))) for f in doc["findings"]
        )
        options = doc.get("options")
        options = dict(options) if isinstance(options, dict) else {}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise IndexInputError(
            path,
            f"the baseline's levels JSON lacks or mistypes a field "
            f"({exc.__class__.__name__}: {str(exc)[:80]})",
        ) from None
    return Snapshot(stats, findings, options)
