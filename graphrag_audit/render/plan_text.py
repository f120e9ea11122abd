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
from graphrag_audit.sanitise.terminal import for_log as plain, inert_log_lines


def _table(title: str, headers: list[str], rows: list[list[str]], left: set[int] = frozenset(),
           caption: str | None = None, no_wrap: set[int] = frozenset()) -> Table:
    t = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for i, h in enumerate(headers):
        t.add_column(h, justify="left" if i in left else "right", no_wrap=i in no_wrap)
    for r in rows:
        t.add_row(*[Text(plain(own_glyphs(c))) for c in r])  # our cells: '…' and '–' fall back, not escaped
    if caption:
        t.caption = caption
        t.caption_justify = "left"
    return t


def render_plan_text(report, *, width: int | None = None, color: bool = False, **_ignored) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width or 100, force_terminal=color, no_color=not color,
                      color_system="standard" if color else None, highlight=False, emoji=False,
                      soft_wrap=False, legacy_windows=False)
    plan = report.plan
    info = report.to_dict()["index"]
    console.print(Text.assemble(("graphrag-audit plan ", "bold"), (plain(info["path"]), "bold")))
    console.print(Text("tables in " + plain(info["output_dir"])))
    for note in info.get("notes", []):
        console.print(Text("note: " + plain(note)))
    console.print(Text(f"generation {info['generation']} · " + pc.settings_line(report)))
    console.print()
    console.print(Text.assemble(("Plan: ", "bold"), (pc.plan_headline(plan), "green" if plan.usable else "bold red")))
    console.print(Text("  " + pc.check_line(plan)))
    for line in pc.why_lines(plan):
        console.print(Text("  " + plain(line), style="bold red"))
    console.print(Text("  " + pc.entity_line(plan)))
    console.print(Text("  " + pc.granularity_line(plan, report)))
    console.print(Text("  communities: " + pc.ids_text(plan.communities)))
    for note in plan.notes:
        console.print(Text("  note: " + plain(note), style="yellow"))
    console.print()

    rows = pc.comparison_rows(report)
    t = _table(f"The same budget ({plan.budget.describe()}) at every community_level N", pc.COMPARISON_HEADERS,
               rows, left={1},
               caption="entities = clustered entities the selection covers; at finest = of those, held by a report "
                       "at their finest available level; ancestors = reports sent together with a descendant's "
                       "report (the same entities twice). The plan sends no ancestor."
                       + (" " + pc.comparison_note(report) if pc.comparison_note(report) else ""))
    t.add_section()
    t.add_row(*[Text(c) for c in pc.plan_row(plan)], style="bold")
    console.print(t)

    console.print(Text("Finest available level, per subtree", style="bold"))
    for line in pc.disclosure_lines(plan):
        console.print(Text("  " + plain(own_glyphs(line))))
    srows = pc.subtree_rows(plan)
    shown = srows[: pc.SUBTREE_ROWS]
    console.print(_table("", pc.subtree_headers(plan), shown, left={3, 6}, no_wrap={3}))
    if len(srows) > len(shown):
        console.print(Text(f"  … {len(srows) - len(shown):,} more subtrees (the JSON lists them all)"))
    console.print()

    console.print(_table(f"Dynamic community selection instead (num_repeats {report.settings.get('num_repeats', 1)}): "
                         "rating calls and candidate pool per cap N", pc.DYNAMIC_HEADERS, pc.dynamic_rows(report),
                         left={4}))
    for line in pc.handoff_lines(report):
        console.print(Text(plain(line)))
    return no_trailing_blanks(inert_log_lines(buf.getvalue()))
