"""``diff -f text``: plain text (index paths and finding messages made visible: no control characters)."""

from __future__ import annotations

from graphrag_audit.render.diff_common import HEADERS, community_sentence, matching_sentence, selection_cells, verdict
from graphrag_audit.sanitise.terminal import for_log


def _side(label, info) -> str:
    c = info.counts
    return (f"{label}: {for_log(info.path)} (generation {for_log(info.generation)}, {c.communities:,} communities, "
            f"{c.reports:,} reports, {c.clustered_entities:,} clustered entities)")


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]


def render_diff_text(diff, **_ignored) -> str:
    out = ["graphrag-audit diff", _side("old", diff.old), _side("new", diff.new), "",
           matching_sentence(diff), community_sentence(diff), ""]
    rows = [HEADERS] + [selection_cells(s) for s in diff.selections]
    out += _table(rows) + [""]
    for title, items in (("findings that appeared", diff.appeared), ("findings that disappeared", diff.disappeared)):
        out.append(f"{title}: {len(items)}")
        out += [f"  {f.severity} {f.rule}: {for_log(f.message, 300)}" for f in items]
    out.append(f"regressions at community_level {diff.level}: {len(diff.regressions)}")
    out += [f"  {f.severity} {f.rule}: {for_log(f.message, 300)}" for f in diff.sorted_regressions()]
    out += ["", verdict(diff)]
    return "\n".join(out) + "\n"
