"""GitHub Actions renderer: one workflow-command annotation per finding, then a plain summary line.

    ::warning title=depth-mismatch::at community_level 2, 18/23 roots … Fix: …
    graphrag-audit: 0 errors, 2 warnings, 1 info at community_level 2 (…)

Severity -> command: error -> ``::error``, warning -> ``::warning``, info -> ``::notice``.
Messages are flattened to one line (:func:`plain`) and escaped as workflow-command data
(``%`` ``\\r`` ``\\n``), properties additionally ``:`` and ``,`` (actions/toolkit
``packages/core/src/command.ts``), so no index text can start a second command line.

GitHub shows at most 10 annotations of each kind per step (50 per job; actions/toolkit
``docs/problem-matchers.md``), so at most ``max_per_kind`` of each kind are written, errors first;
when some are left out, one last ``::notice`` says how many (it takes a notice slot, so it is
always shown). The summary line is plain log text that the runner cannot read as a command (see
:func:`workflow_log`). The CLI appends the Markdown report to ``$GITHUB_STEP_SUMMARY``.

A run's log and annotations are visible to whoever can read the repository, so absolute paths in
them are hidden (``sanitise.privacy``) unless ``include_titles`` (``--include-titles``); the
annotations carry no titles or entity names (finding messages hold ids and counts).
"""

from __future__ import annotations

from graphrag_audit.render.cells import sends
from graphrag_audit.render.numbers import count
from graphrag_audit.sanitise.common import plain
from graphrag_audit.sanitise.github import workflow_data, workflow_log, workflow_property
from graphrag_audit.sanitise.privacy import hide_paths, shown_path

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
MESSAGE_LIMIT = 1000  # characters of one annotation message (fix hint included)


def annotation(command: str, title: str, message: str) -> str:
    return f"::{command} title={workflow_property(plain(title, 200))}::{workflow_data(plain(message, MESSAGE_LIMIT))}"


def select_annotations(findings, max_per_kind: int):
    """(findings to annotate, number left out), keeping severity order; a notice slot is kept
    free for the overflow line when anything is left out."""
    shown, per_kind, left_out = [], {}, 0
    for f in findings:
        kind = COMMAND.get(f.severity, "notice")
        if per_kind.get(kind, 0) < max_per_kind:
            shown.append(f)
            per_kind[kind] = per_kind.get(kind, 0) + 1
        else:
            left_out += 1
    if left_out and per_kind.get("notice", 0) >= max_per_kind:
        last_notice = max(i for i, f in enumerate(shown) if COMMAND.get(f.severity, "notice") == "notice")
        shown.pop(last_notice)
        left_out += 1
    return shown, left_out


def summary_line(report, include_titles: bool = False) -> str:
    counts = report.summary()["findings"]
    n = report.options.level

    def plural(k, word, many):
        return f"{k} {word if k == 1 else many}"

    parts = [
        plural(counts["error"], "error", "errors"),
        plural(counts["warning"], "warning", "warnings"),
        f"{counts['info']} info",
    ]
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
    """One annotation per finding (at most ``max_per_kind`` per kind, then a notice of how many more),
    each with its fix; paths under ``index_path`` hidden unless ``include_titles``."""
    shown, left_out = select_annotations(findings, max(1, int(max_per_kind)))
    lines = []
    for f in shown:
        message = f.message if include_titles else hide_paths(f.message, index_path)
        message += f" Fix: {f.fix}" if f.fix else ""
        lines.append(annotation(COMMAND.get(f.severity, "notice"), f.rule, message))
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
    lines.append(summary_line(report, include_titles))
    return "\n".join(lines) + "\n"
