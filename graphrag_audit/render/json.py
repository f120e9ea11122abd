"""JSON renderer: the documented schema (graphrag_audit/schema/audit-report.schema.json)."""

from __future__ import annotations

import json
import math

from graphrag_audit.levels import CommunityIds
from graphrag_audit.render.escape import json_inert


def _clean(o):
    if type(o) is CommunityIds:  # ints only, by construction: nothing to clean
        return o
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, str):
        return o.encode("utf-8", "replace").decode("utf-8")
    if hasattr(o, "item"):  # numpy scalars
        return _clean(o.item())
    return o


def render_json(report, *, indent: int | None = None) -> str:
    """Compact by default: Python's C encoder only runs without ``indent`` (about 1 s saved on a
    1M-entity index); pipe through ``jq .`` or ``python -m json.tool`` to read it.
    ensure_ascii keeps the output 7-bit: valid UTF-8 whatever the titles hold; ``##[`` is written
    ``#\\u0023[`` (render.escape.json_inert)."""
    seps = (",", ":") if indent is None else (",", ": ")
    return json_inert(json.dumps(_clean(report.to_dict()), indent=indent, separators=seps, ensure_ascii=True,
                      allow_nan=False)) + "\n"
