"""Cell text shared by every renderer: number formatting and the per-level table's rows.

Only numbers and our own labels: nothing here holds untrusted text, so renderers can put these
cells in a terminal, Markdown or HTML table without escaping beyond their medium's syntax.
"""

from __future__ import annotations

# (key, header) of the per-level table; SELECTION_COLUMNS then DEPTH_COLUMNS (+ COST_COLUMNS)
SELECTION_COLUMNS = [("n", "N"), ("v2", ">=2.0 reports"), ("v1", "<2.0 reports"), ("extra", "extra (ancestors)"),
                     ("mix", ">=2.0 mix L0/L1/…"), ("level_only", "level N only")]
DEPTH_COLUMNS = [("stuck", "entities stuck <N"), ("epr", "ents/report min·med·max (>=2.0)")]
COST_COLUMNS = [("v2_tokens", ">=2.0 tokens"), ("v1_tokens", "<2.0 tokens"), ("map_calls", "map calls >=2.0/<2.0")]


def number(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:,.2f}"
    return f"{v:,}"


#: the ">=2.0 mix" cell lists at most this many levels (a 1,000-level index would otherwise put
#: 1,000 numbers in one cell, and O(levels²) of them in the table)
MIX_LEVELS = 8


def mix_cell(counts: list[int]) -> str:
    """Reports per level, L0/L1/…; past :data:`MIX_LEVELS` levels the first ones and a count."""
    if not counts:
        return "—"
    if len(counts) <= MIX_LEVELS:
        return "/".join(str(c) for c in counts)
    shown = MIX_LEVELS - 1
    return "/".join(str(c) for c in counts[:shown]) + f"/… (+{len(counts) - shown:,} levels)"


def level_label(n) -> str:
    return "None" if n is None else str(n)


def level_columns(report) -> list[tuple[str, str]]:
    cols = SELECTION_COLUMNS + DEPTH_COLUMNS
    return cols + (COST_COLUMNS if report.options.get("costs") else [])


def level_rows(report) -> tuple[list[str], list[list[str]]]:
    """Headers and cells of the per-level table, one row per N (0 … max, None)."""
    cols = level_columns(report)
    per_depth = {r["community_level"]: r for r in report.depth.per_level}
    rows = []
    for r in report.levels:
        n = r["community_level"]
        s = r["selected"]
        v2, v1 = s["v2"], s["v1"]
        epr = v2.entities_per_report
        med = "—" if epr["median"] is None else f"{epr['median']:g}"
        c2, c1 = v2.cost or {}, v1.cost or {}
        cell = {
            "n": level_label(n),
            "v2": number(v2.count),
            "v1": number(v1.count),
            "extra": f"{v2.count - v1.count:+,} ({v2.ancestors_sent:,})",
            "mix": mix_cell([v2.by_level.get(str(k), 0) for k in range(report.depth.max_level + 1)
                             if n is None or k <= n]),
            "level_only": number(s["level_only"].count),
            "stuck": number(per_depth.get(n, {}).get("entities_stuck") if n is not None else None),
            "epr": f"{number(epr['min'])}·{med}·{number(epr['max'])}",
            "v2_tokens": number(c2.get("tokens")),
            "v1_tokens": number(c1.get("tokens")),
            "map_calls": f"{number(c2.get('map_calls'))}/{number(c1.get('map_calls'))}",
        }
        rows.append([cell[k] for k, _ in cols])
    return [h for _, h in cols], rows
