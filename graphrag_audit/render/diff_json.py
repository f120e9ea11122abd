"""``diff -f json``: :meth:`IndexDiff.to_dict` (graphrag_audit/schema/diff.schema.json), compact and 7-bit."""

from __future__ import annotations

from graphrag_audit.render.json import _dumps


def render_diff_json(diff, **_ignored) -> str:
    return _dumps(diff.to_dict()) + "\n"
