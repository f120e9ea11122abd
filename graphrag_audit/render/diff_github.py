"""``diff -f github``: one workflow-command annotation per regression (and a notice per finding
that appeared), then one plain summary line (escaping as in :mod:`graphrag_audit.render.github`)."""

from __future__ import annotations

from graphrag_audit.render.diff_common import HYP, verdict
from graphrag_audit.render.github import annotation, finding_annotations
from graphrag_audit.render.numbers import number
from graphrag_audit.sanitise.github import workflow_log
from graphrag_audit.sanitise.privacy import hide_paths


def render_diff_github(diff, *, max_per_kind: int = 10, include_titles: bool = False, **_ignored) -> str:
    lines = finding_annotations(
        diff.sorted_regressions(),
        diff.new.path,
        max_per_kind=max_per_kind,
        include_titles=include_titles,
        title="graphrag-audit diff",
        noun="regression",
        listed="-f json lists them all",
    )
    for (
        f
    ) in diff.sorted_hypothetical_changes():  # shown, never judged: a notice, whatever the rule's severity
        message = f.message if include_titles else hide_paths(f.message, diff.new.path)
        lines.append(
            annotation(
                "notice",
                f"{f.rule} ({HYP})",
                f"{HYP} not judged ({f.severity} if judged; --include-hypothetical judges it): {message}",
            )
        )
    if diff.option_note:
        lines.append(annotation("notice", "graphrag-audit diff: options differ", diff.option_note))
    c = diff.communities
    summary = (
        f"graphrag-audit diff: {verdict(diff)}; communities {number(len(c.added))} added, "
        f"{number(len(c.removed))} removed, {number(len(c.changed))} changed (matched by "
        f"{'number' if c.matching == 'community_id' else 'members'}); findings {number(len(diff.appeared))} "
        f"appeared, {number(len(diff.disappeared))} disappeared"
    )
    lines.append(workflow_log(summary))
    return "\n".join(lines) + "\n"
