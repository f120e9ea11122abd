"""``diff -f text``: plain text (index paths and finding messages made visible: no control characters),
at most ``width`` cells a line (``--width``/``COLUMNS``, as the other commands): prose wraps between
words; the table of selections becomes one block per row when it is wider than the line."""

from __future__ import annotations

from graphrag_audit.render.diff_common import (
    HEADERS,
    HYP,
    community_sentence,
    hyp_legend,
    hypothetical_heading,
    matching_sentence,
    selection_cells,
    verdict,
)
from graphrag_audit.render.numbers import number
from graphrag_audit.render.text_lines import cell_width, counted, wrap, wrap_all
from graphrag_audit.sanitise.terminal import for_log, inert_log_lines

DEFAULT_WIDTH = 100


def _side(label, info) -> str:
    c = info.counts
    return (
        f"{label}: {for_log(info.path)} (generation {for_log(info.generation)}, "
        f"{counted(c.communities, 'community')}, {counted(c.reports, 'report')}, "
        f"{counted(c.clustered_entities, 'clustered entity', 'clustered entities')})"
    )


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(cell_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell + " " * (w - cell_width(cell)) for cell, w in zip(r, widths)).rstrip() for r in rows
    ]


def _wrap_items(head: str, items: list[str], width: int, indent: str = "    ") -> list[str]:
    """``head`` then ``items`` joined by "; ", broken between items (an item wider than a line wraps
    between its words)."""
    lines: list[str] = []
    cur = head
    for i, item in enumerate(items):
        piece = item + (";" if i < len(items) - 1 else "")
        if cell_width(cur) + 1 + cell_width(piece) <= width:
            cur = f"{cur} {piece}"
            continue
        lines.append(cur)
        if cell_width(indent) + cell_width(piece) <= width:
            cur = indent + piece
        else:
            *done, cur = wrap(piece, width, indent, indent)
            lines += done
    lines.append(cur)
    return lines


def _blocks(diff, width: int) -> list[str]:
    """The selections table as one block per row, for a line narrower than the table."""
    out = wrap("what each community_level sends, before -> after (reports: +added -removed ~changed):", width)
    for s in diff.selections:
        level, who, reports, added, removed, changed, tokens, calls, coverage = selection_cells(s)
        items = [
            f"reports {reports} ({added} {removed} {changed})",
            f"tokens {tokens}",
            f"map calls {calls}",
            f"coverage {coverage}",
        ]
        out += _wrap_items(f"  level {level}, {who}:", items, width)
    return out


def _finding_lines(items, width: int, mark: str = "") -> list[str]:
    return [
        line
        for f in items
        for line in wrap(f"{mark}{f.severity} {f.rule}: {for_log(f.message, 300)}", width, "  ", "    ")
    ]


def render_diff_text(diff, *, width: int | None = None, **_ignored) -> str:
    width = max(width or DEFAULT_WIDTH, 40)
    out = wrap_all(
        [
            "graphrag-audit diff",
            _side("old", diff.old),
            _side("new", diff.new),
            "",
            matching_sentence(diff),
            community_sentence(diff),
            "",
        ],
        width,
    )
    table = _table([HEADERS] + [selection_cells(s) for s in diff.selections])
    out += table if max(cell_width(line) for line in table) <= width else _blocks(diff, width)
    legend = hyp_legend(diff)
    if legend:
        out += wrap(legend, width)
    out.append("")
    for title, items in (
        ("findings that appeared", diff.appeared),
        ("findings that disappeared", diff.disappeared),
    ):
        out.append(f"{title}: {number(len(items))}")
        out += _finding_lines(items, width)
    out.append(f"regressions at community_level {diff.level}: {number(len(diff.regressions))}")
    out += _finding_lines(diff.sorted_regressions(), width)
    if diff.hypothetical_changes:
        out += wrap(hypothetical_heading(diff), width)
        out += _finding_lines(diff.sorted_hypothetical_changes(), width, f"{HYP} ")
    if diff.option_note:
        out += wrap(f"note: {for_log(diff.option_note, 500)}", width, "", "  ")
    out += [""] + wrap(verdict(diff), width)
    # a word cut to fit (a long path) may put a "::" at the start of a line: a CI log's workflow command
    return inert_log_lines("\n".join(out)) + "\n"
