"""``diff -f markdown``: a table per community_level and behaviour; paths hidden unless --include-titles."""

from __future__ import annotations

from graphrag_audit.render.diff_common import (
    HEADERS,
    HYP,
    community_sentence,
    hyp_legend,
    matching_sentence,
    selection_cells,
    verdict,
)
from graphrag_audit.render.numbers import number
from graphrag_audit.sanitise.markdown import markdown_cell, own_text
from graphrag_audit.sanitise.privacy import hide_paths, shown_path


def _where(info, include_titles: bool) -> str:
    return info.path if include_titles else shown_path(info.path, info.path)


def render_diff_markdown(diff, *, include_titles: bool = False, **_ignored) -> str:
    out = [
        "## graphrag-audit diff",
        "",
        f"- old: `{markdown_cell(_where(diff.old, include_titles), 200)}` (generation "
        f"{markdown_cell(diff.old.generation)})",
        f"- new: `{markdown_cell(_where(diff.new, include_titles), 200)}` (generation "
        f"{markdown_cell(diff.new.generation)})",
        f"- {own_text(matching_sentence(diff))}",
        f"- {own_text(community_sentence(diff))}",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "---|" * len(HEADERS),
    ]
    out += ["| " + " | ".join(own_text(c) for c in selection_cells(s)) + " |" for s in diff.selections]
    out.append("")
    legend = hyp_legend(diff)
    if legend:
        out += [own_text(legend), ""]

    def msg(f, index):
        m = f.message if include_titles else hide_paths(f.message, index.path)
        return markdown_cell(m, 300)

    for title, items, index in (
        ("Findings that appeared", diff.appeared, diff.new),
        ("Findings that disappeared", diff.disappeared, diff.old),
    ):
        out += [f"### {title} ({number(len(items))})", ""]
        out += [f"- **{f.severity}** `{f.rule}`: {msg(f, index)}" for f in items] or ["none"]
        out.append("")
    out += [f"### Regressions at community_level {diff.level} ({number(len(diff.regressions))})", ""]
    out += [f"- **{f.severity}** `{f.rule}`: {msg(f, diff.new)}" for f in diff.sorted_regressions()] or [
        "none"
    ]
    if diff.hypothetical_changes:
        out += [
            "",
            f"### Hypothetical changes at community_level {diff.level}, not judged "
            f"({number(len(diff.hypothetical_changes))})",
            "",
            "No real graphrag of that line sends these selections on one of the indexes; "
            "`--include-hypothetical` judges them.",
            "",
        ]
        out += [
            f"- {HYP} **{f.severity}** `{f.rule}`: {msg(f, diff.new)}"
            for f in diff.sorted_hypothetical_changes()
        ]
    if diff.option_note:
        out += ["", f"Note: {markdown_cell(diff.option_note, 500)}"]
    out += ["", f"**{own_text(verdict(diff))}**"]
    return "\n".join(out) + "\n"
