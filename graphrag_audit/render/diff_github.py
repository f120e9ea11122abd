"""``diff -f github``: one workflow-command annotation per regression (and a notice per finding
that appeared), then one plain summary line (escaping as in :mod:`graphrag_audit.render.github`)."""

from __future__ import annotations

from graphrag_audit.render.diff_common import verdict
from graphrag_audit.render.github import COMMAND, annotation, select_annotations
from graphrag_audit.sanitise.github import workflow_log
from graphrag_audit.sanitise.privacy import hide_paths


def render_diff_github(diff, *, max_per_kind: int = 10, include_titles: bool = False, **_ignored) -> str:
    shown, left_out = select_annotations(diff.sorted_regressions(), max(1, int(max_per_kind)))
    lines = []
    for f in shown:
        message = f.message if include_titles else hide_paths(f.message, diff.new.path)
        message += f" Fix: {f.fix}" if f.fix else ""
        lines.append(annotation(COMMAND.get(f.severity, "notice"), f.rule, message))
    if left_out:
        lines.append(annotation("notice", "graphrag-audit diff",
                                f"… {left_out} more regression{'s' if left_out != 1 else ''} not shown as "
                                f"annotations; -f json lists them all"))
    c = diff.communities
    summary = (f"graphrag-audit diff: {verdict(diff)}; communities {len(c.added)} added, {len(c.removed)} removed, "
               f"{len(c.changed)} changed (matched by {'number' if c.matching == 'community_id' else 'members'}); "
               f"findings {len(diff.appeared)} appeared, {len(diff.disappeared)} disappeared")
    lines.append(workflow_log(summary))
    return "\n".join(lines) + "\n"
