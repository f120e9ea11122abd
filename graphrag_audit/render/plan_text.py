"""Terminal renderer of a plan (rich). Untrusted text (paths, notes) enters only as rich ``Text``
after :func:`plain`; every other cell is a number or a word of ours."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from graphrag_audit.render import plan_common as pc
from graphrag_audit.render.console import no_trailing_blanks, own_glyphs
from graphrag_audit.render.text_lines import cell_width, wrap
from graphrag_audit.sanitise.terminal import for_log as plain
from graphrag_audit.sanitise.terminal import inert_log_lines


def _table(
    title: str,
    headers: list[str],
    rows: list[list[str]],
    left: set[int] = frozenset(),
    caption: str | None = None,
    no_wrap: set[int] = frozenset(),
) -> Table:
    t = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for i, h in enumerate(headers):
        t.add_column(h, justify="left" if i in left else "right", no_wrap=i in no_wrap)
    for r in rows:
        t.add_row(*[Text(plain(own_glyphs(c))) for c in r])  # our cells: '…' and '–' fall back, not escaped
    if caption:
        t.caption = caption
        t.caption_justify = "left"
    return t


def _ranges(console, table) -> list:
    """Per column, (the fewest cells it takes with every word whole, a no-wrap column's whole cells;
    the cells it takes unwrapped), padding included (rich's measurement)."""
    wide = console.options.update(width=10_000)
    got = []
    for col in table.columns:
        r = table._measure_column(console, wide, col)
        got.append((r.maximum if col.no_wrap else r.minimum, r.maximum))
    return got


def _narrowest(console, table) -> int:
    """The fewest columns ``table`` takes with every cell whole (no word broken, no no-wrap cell cut)."""
    return table._extra_width + sum(low for low, _ in _ranges(console, table))


def _fitted(
    console,
    title: str,
    headers: list[str],
    rows: list[list[str]],
    *,
    left=frozenset(),
    caption: str | None = None,
    no_wrap=frozenset(),
    droppable=(),
    extra: list[str] | None = None,
) -> list:
    """The table, fitted to the output width without cutting a number or a word: the ``droppable``
    columns (indices) are left out one by one while it does not fit (a note names them); when it
    still does not fit, one block per row. ``extra``: a last row of its own section (bold)."""

    def build(keep):
        idx = {j: i for i, j in enumerate(keep)}
        t = _table(
            title,
            [headers[j] for j in keep],
            [[r[j] for j in keep] for r in rows],
            left={idx[j] for j in left if j in idx},
            caption=caption,
            no_wrap={idx[j] for j in no_wrap if j in idx},
        )
        if extra is not None:
            t.add_section()
            t.add_row(*[Text(extra[j]) for j in keep], style="bold")
        return t

    keep = list(range(len(headers)))
    dropped = []
    table = build(keep)
    for j in droppable:
        if _narrowest(console, table) <= console.width:
            break
        keep.remove(j)
        dropped.append(headers[j])
        table = build(keep)
    if _narrowest(console, table) <= console.width:
        _no_cut(console, table)
        note = (
            [
                Text(
                    f"(left out at {console.width} columns: {', '.join(dropped)}; a wider --width or -f json "
                    "shows them)"
                )
            ]
            if dropped
            else []
        )
        return [table, *note]
    return _blocks(console.width, title, headers, rows + ([extra] if extra is not None else []), caption)


def _no_cut(console, table) -> None:
    """Where rich's own layout would cut a cell short ("120,4…": it narrows columns below their longest
    word), give each column its longest word and share the rest of the width out column by column."""
    ranges = _ranges(console, table)
    laid = table._calculate_column_widths(console, console.options)
    if all(w >= low for w, (low, _) in zip(laid, ranges)):
        return  # rich wraps between words only: keep its layout
    widths = [low for low, _ in ranges]
    spare = console.width - table._extra_width - sum(widths)
    while spare > 0 and any(w < high for w, (_, high) in zip(widths, ranges)):
        for i, (_, high) in enumerate(ranges):
            if spare > 0 and widths[i] < high:
                widths[i] += 1
                spare -= 1
    for i, col in enumerate(table.columns):
        col.width = widths[i] - table._get_padding_width(i)


def _blocks(width: int, title: str, headers: list[str], rows: list[list[str]], caption: str | None) -> list:
    """A table too wide for the output as one block per row: "header: value" lines, wrapped between words."""
    lines = wrap(title, width, "", "") if title else []
    for r in rows:
        lines.append("")
        for i, (h, c) in enumerate(zip(headers, r)):
            if c or i == 0:
                lines += wrap(plain(own_glyphs(f"{h}: {c}")), width, "" if i == 0 else "  ")
    if caption:
        lines += [""] + wrap(caption, width, "", "")
    return [Text("\n".join(lines) + "\n")]


def _bullet(console, text: str, style: str | None = None) -> Text:
    """An indented line of the plan's summary; wrapped lines keep the indent (two more spaces)."""
    if cell_width(text) + 2 <= console.width:
        return Text("  " + text, style=style or "")
    return Text("\n".join(wrap(text, console.width, "  ")), style=style or "")


def render_plan_text(report, *, width: int | None = None, color: bool = False, **_ignored) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width or 100,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
        soft_wrap=False,
        legacy_windows=False,
    )
    plan = report.plan
    info = report.to_dict()["index"]
    console.print(Text.assemble(("graphrag-audit plan ", "bold"), (plain(info["path"]), "bold")))
    console.print(Text("tables in " + plain(info["output_dir"])))
    for note in info.get("notes", []):
        console.print(Text("note: " + plain(note)))
    console.print(Text(f"generation {info['generation']} · " + pc.settings_line(report)))
    console.print()
    console.print(
        Text.assemble(("Plan: ", "bold"), (pc.plan_headline(plan), "green" if plan.usable else "bold red"))
    )
    console.print(_bullet(console, pc.check_line(plan)))
    for line in pc.why_lines(plan):
        console.print(_bullet(console, plain(line), "bold red"))
    console.print(_bullet(console, pc.entity_line(plan)))
    console.print(_bullet(console, pc.granularity_line(plan, report)))
    console.print(_bullet(console, "communities: " + pc.ids_text(plan.communities)))
    for note in plan.notes:
        console.print(_bullet(console, "note: " + plain(note), "yellow"))
    console.print()

    rows = pc.comparison_rows(report)
    for part in _fitted(
        console,
        f"The same budget ({plan.budget.describe()}) at every community_level N",
        pc.COMPARISON_HEADERS,
        rows,
        left={1},
        caption="entities = clustered entities the selection covers; at finest = of those, held by a report "
        "at their finest available level; ancestors = reports sent together with a descendant's "
        "report (the same entities twice). The plan sends no ancestor."
        + (f" {note}" if (note := pc.comparison_note(report)) else ""),
        droppable=(7, 6),
        extra=pc.plan_row(plan),
    ):
        console.print(part)

    console.print(Text("Finest available level, per subtree", style="bold"))
    for line in pc.disclosure_lines(plan):
        console.print(_bullet(console, plain(own_glyphs(line))))
    srows = pc.subtree_rows(plan)
    shown = srows[: pc.SUBTREE_ROWS]
    for part in _fitted(
        console, "", pc.subtree_headers(plan), shown, left={3, 6}, no_wrap={3}, droppable=(5, 4)
    ):
        console.print(part)
    if len(srows) > len(shown):
        console.print(Text(f"  … {len(srows) - len(shown):,} more subtrees (the JSON lists them all)"))
    console.print()

    for part in _fitted(
        console,
        f"Dynamic community selection instead (num_repeats "
        f"{report.settings.get('num_repeats', 1)}): rating calls and candidate pool per cap N",
        pc.DYNAMIC_HEADERS,
        pc.dynamic_rows(report),
        left={4},
    ):
        console.print(part)
    for line in pc.handoff_lines(report):
        console.print(Text(plain(line)))
    return no_trailing_blanks(inert_log_lines(buf.getvalue()))
