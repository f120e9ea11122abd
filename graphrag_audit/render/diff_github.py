"""``diff -f github``: one workflow-command annotation per regression (and a notice per finding
that appeared), then one plain summary line (escaping as in :mod:`graphrag_audit.render.github`)."""

from __future__ import annotations

from graphrag_audit.render.diff_common import verdict
from graphrag_audit.render.github import finding_annotations
from graphrag_audit.sanitise.github import workflow_log


def render_diff_github(diff, *, max_per_kind: int = 10, include_titles: bool = False, **_ignored) -> str:
    lines = finding_annotations(diff.sorted_regressions(), diff.new.path, max_per_kind=max_per_kind,
                                include_titles=include_titles, title="graphrag-audit diff", noun="regression",
                                listed="-f json lists them all")
    c = diff.communities
    summary = (f"graphrag-audit diff: {verdict(diff)}; communities {len(c.added)} added, {len(c.removed)} removed, "
               f"{len(c.changed)} changed (matched by {'number' if c.matching == 'community_id' else 'members'}); "
               f"findings {len(diff.appeared)} appeared, {len(diff.disappeared)} disappeared")
    lines.append(workflow_log(summary))
    return "\n".join(lines) + "\n"
