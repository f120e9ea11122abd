"""JSON renderer of a plan: ``PlanReport.to_dict()`` (``plan.communities`` = sorted ints)."""

from __future__ import annotations

import json

from graphrag_audit.render.json import _clean
from graphrag_audit.sanitise.json import json_inert


def render_plan_json(report, **_ignored) -> str:
    return (
        json_inert(json.dumps(_clean(report.to_dict()), indent=2, ensure_ascii=True, allow_nan=False)) + "\n"
    )
