"""GitHub Actions output: one workflow-command annotation per finding (``diff``: per regression), errors
first, at most ``max_per_kind`` of each kind (GitHub shows 10 per step: actions/toolkit
``docs/problem-matchers.md``), a ``::notice`` counting the rest, then a summary line. Escaping follows
actions/toolkit ``packages/core/src/command.ts``; absolute paths hidden unless ``include_titles``."""

from __future__ import annotations

from collections import Counter

from graphrag_audit.render.cells import count, local_what_if_lines, number, sends
from graphrag_audit.render.diff_common import HYP, verdict
from graphrag_audit.sanitise.common import plain
from graphrag_audit.sanitise.github import workflow_data, workflow_log, workflow_property
from graphrag_audit.sanitise.privacy import hide_paths, shown_path

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
MESSAGE_LIMIT = 1000  # characters of one annotation message (fix hint included)


def annotation(command: str, title: str, message: str) -> str:
    return f"::{command} title={workflow_property(plain(title, 200))}::{workflow_data(plain(message, MESSAGE_LIMIT))}"


def summary_line(report, include_titles: bool = False) -> str:
    counts = report.summary()["findings"]
    n = report.options.level
    parts = [f"{counts[k]} {k}{'' if counts[k] == 1 else 's'}" for k in ("error", "warning")]
    parts.append(f"{counts['info']} info")
    extra = []
    r = report.level(n)
    if r is not None and report.index.has_reports_table:
        v2, v1 = r.selected["v2"], r.selected["v1"]
        if all(x.outcome is None or x.outcome.exact for x in (v2, v1)):
            extra.append(f"graphrag >= 2.0 sends {count(v2.count, 'report')}, < 2.0 sends {v1.count:,}")
        else:  # what graphrag actually does (compat.py); the step summary's table has the footnotes
            extra.append(f"{sends(v2, 'v2')}, {sends(v1, 'v1')}")
    extra.append(f"generation {report.index.generation}")
    extra.append(report.index.path if include_titles else shown_path(report.index.path, report.index.path))
    return workflow_log(f"graphrag-audit: {', '.join(parts)} at community_level {n} ({'; '.join(extra)})")


def finding_annotations(
    findings,
    index_path: str,
    *,
    max_per_kind: int,
    include_titles: bool,
    title: str = "graphrag-audit",
    noun: str = "finding",
    listed: str = "the step summary and -f json list them all",
) -> list[str]:
    """One annotation per finding, each with its fix, in severity order, at most ``max_per_kind`` per
    kind (a notice slot is kept free for the line counting the rest); paths under ``index_path`` hidden
    unless ``include_titles``."""
    limit = max(1, int(max_per_kind))
    shown: list = []
    per_kind: Counter = Counter()
    for f in findings:
        kind = COMMAND.get(f.severity, "notice")
        per_kind[kind] += 1
        if per_kind[kind] <= limit:
            shown.append((kind, f))
    left_out = sum(per_kind.values()) - len(shown)
    if left_out and per_kind["notice"] >= limit:
        shown.pop(max(i for i, (kind, _f) in enumerate(shown) if kind == "notice"))
        left_out += 1
    lines = []
    for kind, f in shown:
        message = f.message if include_titles else hide_paths(f.message, index_path)
        lines.append(annotation(kind, f.rule, message + (f" Fix: {f.fix}" if f.fix else "")))
    if left_out:
        lines.append(
            annotation(
                "notice",
                title,
                f"… {left_out} more {noun}{'s' if left_out != 1 else ''} not shown as "
                f"annotations (GitHub shows {max_per_kind} per kind per step); {listed}",
            )
        )
    return lines


def render_github(report, *, max_per_kind: int = 10, include_titles: bool = False, **_ignored) -> str:
    lines = finding_annotations(
        report.sorted_findings(), report.index.path, max_per_kind=max_per_kind, include_titles=include_titles
    )
    lines += [workflow_log(f"graphrag-audit: {x}") for x in local_what_if_lines(report, include_titles)]
    lines.append(summary_line(report, include_titles))
    return "\n".join(lines) + "\n"


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
    # hypothetical changes: shown, never judged: a notice, whatever the rule's severity
    for f in diff.sorted_hypothetical_changes():
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
