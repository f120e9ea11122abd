"""Where the costs' two knobs came from, in words every human format shares: ``o200k_base
(settings.yaml encoding_model)``, ``8,000 (option)``, or the bare value for graphrag's default
(AuditOptions.costs_from)."""

from __future__ import annotations


def cost_source(opts, knob: str) -> str:
    """``option``, ``settings.yaml global_search.max_tokens``, or '' (graphrag's default)."""
    where = dict(getattr(opts, "costs_from", ()) or ()).get(knob, "graphrag default")
    return "" if where == "graphrag default" else where


def with_source(value: str, opts, knob: str, clean=str) -> str:
    """``value`` followed by `` (where it came from)`` (``clean`` escapes that part for the medium)."""
    where = cost_source(opts, knob)
    return f"{value} ({clean(where)})" if where else value
