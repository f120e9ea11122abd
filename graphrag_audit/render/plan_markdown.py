"""Markdown renderer of a plan (GitHub-flavoured). Paths and notes go through
:func:`markdown_cell`; every other cell is a number or a word of ours.

Privacy, as in ``levels -f markdown`` (:mod:`graphrag_audit.sanitise.privacy`): a plan is meant to
be pasted, so absolute paths (the index's, the tables' folder, ``--write``'s directory, in notes)
are hidden by default; ``include_titles=True`` (``plan --include-titles``) shows them. A plan
names no report title nor entity (communities appear by id)."""

from __future__ import annotations

from graphrag_audit.render import plan_common as pc
from graphrag_audit.render.markdown import DETAILS_ROWS
from graphrag_audit.sanitise.markdown import markdown_cell
from graphrag_audit.sanitise.privacy import PRIVACY_NOTE, hide_paths, shown_path


def _table(headers, rows, left=frozenset()) -> list[str]:
    def row(cells):
        return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"

    sep = ["---:" if i not in left else ":---" for i in range(len(headers))]
    return [row(headers), "| " + " | ".join(sep) + " |", *(row(r) for r in rows)]


def render_plan_markdown(report, *, include_titles: bool = False, **_ignored) -> str:
    plan = report.plan
    info = report.to_dict()["index"]
    where = info["path"]

    def text(x):  # index-derived or path-bearing text
        return x if include_titles else hide_paths(str(x), where)

    def path(p):
        return p if include_titles else shown_path(p, where)

    out = [
        f"## graphrag-audit plan: {markdown_cell(path(info['path']))}",
        "",
        f"tables in {markdown_cell(path(info['output_dir']))}",
        "",
        *[line for x in info.get("notes", []) for line in (f"Note: {markdown_cell(text(x))}", "")],
        *([] if include_titles else [f"Privacy: {markdown_cell(PRIVACY_NOTE)}", ""]),
        f"generation {markdown_cell(info['generation'])} · {markdown_cell(pc.settings_line(report))}",
        "",
        f"**Plan:** {markdown_cell(pc.plan_headline(plan))}",
        "",
        f"- {markdown_cell(pc.check_line(plan))}",
        *[f"- {markdown_cell(text(x))}" for x in pc.why_lines(plan)],
        f"- {markdown_cell(pc.entity_line(plan))}",
        f"- {markdown_cell(pc.granularity_line(plan, report))}",
        f"- communities: {markdown_cell(pc.ids_text(plan.communities))}",
    ]
    out += [f"- note: {markdown_cell(text(x))}" for x in plan.notes]
    out += [
        "",
        f"### The same budget ({markdown_cell(plan.budget.describe())}) at every community_level N",
        "",
    ]
    out += _table(pc.COMPARISON_HEADERS, pc.comparison_rows(report) + [pc.plan_row(plan)], left={1})
    if note := pc.comparison_note(report):
        out += ["", markdown_cell(note)]
    out += ["", "### Finest available level, per subtree", ""]
    out += [f"- {markdown_cell(text(x))}" for x in pc.disclosure_lines(plan)]
    srows = pc.subtree_rows(plan)
    table = _table(pc.subtree_headers(plan), srows[: pc.SUBTREE_ROWS], left={3, 6})
    if len(table) - 2 > DETAILS_ROWS:  # a long table folds, as in levels -f markdown (our own summary text)
        table = ["<details>", f"<summary>Subtrees ({len(srows):,})</summary>", "", *table, "", "</details>"]
    out += [""] + table
    if len(srows) > pc.SUBTREE_ROWS:
        out.append(f"\n… {len(srows) - pc.SUBTREE_ROWS:,} more subtrees (the JSON lists them all)")
    out += [
        "",
        f"### Dynamic community selection instead (num\\_repeats {report.settings.get('num_repeats', 1)})",
        "",
    ]
    out += _table(pc.DYNAMIC_HEADERS, pc.dynamic_rows(report), left={4})
    out += ["", "### Hand-off to graphrag", ""]
    out += [f"- {markdown_cell(text(x))}" for x in pc.handoff_lines(report)]
    return "\n".join(out) + "\n"
