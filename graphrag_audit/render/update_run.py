"""``update-run`` output: text (one block per part, the offset check, the findings) and JSON
(graphrag_audit/schema/update-run.schema.json). Paths, messages and notes are index-derived
text: one visible line each (sanitise). The text is at most ``width`` cells a line
(``--width``/``COLUMNS``, as the other commands): longer lines wrap between words."""

from __future__ import annotations

import json

from graphrag_audit.render.numbers import number
from graphrag_audit.render.text_lines import counted, wrap_all
from graphrag_audit.results.update_run import UPDATE_RUN_SCHEMA_VERSION, UpdateRunReport
from graphrag_audit.sanitise.json import json_inert
from graphrag_audit.sanitise.terminal import for_log as plain
from graphrag_audit.sanitise.terminal import inert_log_lines

_LAYOUT = {
    ">= 2.0": "graphrag >= 2.0: update_output/<timestamp>/{previous,delta}, merged into the output folder",
    "0.4-1.2": "graphrag 0.4-1.2: the merged index in update_output/, the new documents' in "
    "update_output/delta/, the output folder left as it was",
}


def _ids(ids, total_note: str = "") -> str:
    return ", ".join(str(i) for i in ids) + total_note


DEFAULT_WIDTH = 100


def render_update_run_text(report: UpdateRunReport, *, width: int | None = None, **_ignored) -> str:
    out = [
        f"graphrag-audit update-run {plain(report.requested)}",
        f"layout: {_LAYOUT.get(report.layout, report.layout)}",
    ]
    if report.run is not None:
        out.append(
            f"run: {plain(report.run)} (newest of {number(report.runs)})"
            if report.runs > 1
            else f"run: {plain(report.run)}"
        )
    queried = next((p for p in report.parts if p.queried), None)
    out.append(
        f"graphrag queries: {queried.role} ({plain(queried.path)})"
        if queried is not None
        else "graphrag queries: the project's output folder (not found)"
    )
    out.append("")
    for p in report.parts:
        mark = "  <- graphrag queries this" if p.queried else ""
        if p.status == "absent":
            out.append(f"{p.role}: absent (not audited){mark}")
            continue
        if p.status == "unreadable":
            out.append(f"{p.role}: {plain(p.path)}: not audited: {plain(p.problem)}{mark}")
            continue
        levels = "/".join(number(n) for n in p.per_level)
        ents = "" if p.entities is None else f", {counted(p.entities, 'entity')}"
        periods = f", period {', '.join(plain(x) for x in p.periods)}" if p.periods else ""
        out.append(f"{p.role}: {plain(p.path)}{mark}")
        out.append(
            f"  generation {p.generation}: {counted(p.communities, 'community')} ({levels} per level), "
            f"{counted(p.reports, 'report')}{ents}{periods}"
        )
        if not p.findings:
            out.append(f"  findings at community_level {report.level}: none")
        else:
            out.append(f"  findings at community_level {report.level}:")
            out.extend(f"    [{f.severity}] {f.rule}: {plain(f.message)}" for f in p.findings)
    out.append("")
    o = report.offset
    if o is None:
        out.append(
            f"offset check (merged = previous + delta shifted by previous max + 1): not run: "
            f"{plain(report.offset_not_run)}"
        )
    else:
        head = (
            f"offset check: delta numbers + {number(o.offset)} (the previous {o.offset_from} maximum + 1): "
            f"{counted(o.expected, 'community number')} expected, {number(o.found)} in the merged table"
        )
        if o.holds:
            out.append(head + ": they match")
        else:
            out.append(head + ": they differ")
            if o.missing:
                out.append(f"  expected, missing from merged: {_ids(o.missing)}")
            if o.extra:
                out.append(f"  in merged, not expected: {_ids(o.extra)}")
    for n in report.notes:
        out.append(f"note: {plain(n)}")
    # index text wraps: a "::" that starts a word is escaped (for_log), one a cut word puts at the start
    # of a line too (a CI log reads it as a workflow command)
    return inert_log_lines("\n".join(wrap_all(out, max(width or DEFAULT_WIDTH, 40)))) + "\n"


def update_run_dict(report: UpdateRunReport) -> dict:
    o = report.offset
    return {
        "schema_version": UPDATE_RUN_SCHEMA_VERSION,
        "requested": report.requested,
        "layout": report.layout,
        "run": report.run,
        "runs": report.runs,
        "queried": report.queried,
        "level": report.level,
        "parts": [
            {
                "role": p.role,
                "path": p.path,
                "queried": p.queried,
                "status": p.status,
                "problem": p.problem,
                "generation": p.generation,
                "communities": p.communities,
                "reports": p.reports,
                "entities": p.entities,
                "per_level": list(p.per_level),
                "periods": list(p.periods),
                "findings": [f.to_dict() for f in p.findings],
            }
            for p in report.parts
        ],
        "offset": None
        if o is None
        else {
            "offset": o.offset,
            "offset_from": o.offset_from,
            "expected": o.expected,
            "found": o.found,
            "missing": list(o.missing),
            "extra": list(o.extra),
            "holds": o.holds,
        },
        "offset_not_run": report.offset_not_run,
        "notes": list(report.notes),
    }


def render_update_run_json(report: UpdateRunReport) -> str:
    return json_inert(json.dumps(update_run_dict(report), indent=2, ensure_ascii=False, default=str)) + "\n"
