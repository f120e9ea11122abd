"""Plain-text output of every command (rich for ``levels``, ``tree`` and ``plan``). Untrusted text goes
through ``sanitise.terminal.for_log`` first and enters rich only as ``Text`` (no markup); no line
may start with a ``::`` workflow command."""

from __future__ import annotations

import io
import textwrap

from rich import box
from rich.cells import cell_len, get_character_cell_size
from rich.console import Console, Group
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from graphrag_audit.render import cells
from graphrag_audit.render import diff_common as dc
from graphrag_audit.render import plan_common as pc
from graphrag_audit.render.cells import cell_width, count, level_label, number, wrap, wrap_all
from graphrag_audit.render.console import no_trailing_blanks, own_glyphs
from graphrag_audit.results.audit import HYPOTHETICAL
from graphrag_audit.results.tree import SENT_BOTH, SENT_NEITHER, SENT_V1_ONLY, SENT_V2_ONLY, Row, TreeView
from graphrag_audit.results.update_run import UpdateRunReport
from graphrag_audit.rules import RULE_NOTES, RULES, Rule
from graphrag_audit.sanitise.common import cut_point
from graphrag_audit.sanitise.terminal import for_log, inert_log_lines

# ==== levels ==============================================================================================
# two-line headers keep the columns narrow enough for an 80-column CI log
TEXT_HEADERS = {
    "n": "N",
    "v2": ">=2.0\nreports",
    "v1": "<2.0\nreports",
    "extra": "extra\n(anc.)",
    "mix": ">=2.0 mix\nL0/L1/…",
    "level_only": "level N\nonly",
    "stuck": "stuck\n<N",
    "epr": "ents/rep\nmin·med·max",
    "v2_tokens": ">=2.0\ntokens",
    "v1_tokens": "<2.0\ntokens",
    "map_calls": "map calls\n>=2.0/<2.0",
    "v2_entities": ">=2.0\nentities",
    "v1_entities": "<2.0\nentities",
    "v2_text_units": ">=2.0\ntext units",
    "v1_text_units": "<2.0\ntext units",
}
#: per table, the columns left out in this order while it is wider than the output (numbers are never cut)
DROPPABLE = {
    "sel": ("mix", "extra", "level_only", "v1"),
    "cov": ("v1_text_units", "v2_text_units", "v1_entities"),
    "cost": ("epr", "stuck", "v1_tokens", "map_calls"),
}
#: the marker of the level you query with, in its own column: it survives NO_COLOR, pipes and CI logs
MARKER = "▶"
SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
BEHAVIOUR_LABEL = {**cells.BEHAVIOUR_WHO, "level_only": "level N only", "dynamic": "dynamic pool"}
NO_REPORTS = "No community_reports table: nothing is sent to global search.\n"
SENDS = "What each community_level N sends to global search"


def _console(buf: io.StringIO, width: int, color: bool) -> Console:
    """A rich console writing into ``buf``: no highlighting, emoji or soft wrap; colour only when asked."""
    return Console(
        file=buf,
        width=width,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
        soft_wrap=False,
        legacy_windows=False,
    )


def _finished(buf: io.StringIO) -> str:
    return no_trailing_blanks(inert_log_lines(buf.getvalue()))


def render_text(
    report,
    *,
    width: int | None = None,
    color: bool = False,
    focus: int | None = None,
    verbose: bool = False,
    brief: bool = False,
    hide_hypothetical: bool = False,
    **_ignored,
) -> str:
    """The audit as terminal text; ``brief``: answer, one table, findings; ``hide_hypothetical``: leave out
    the per-N columns of a graphrag line that cannot run on this index."""
    buf = io.StringIO()
    console = _console(buf, width or 100, color)
    hide = cells.hypothetical_behaviours(report) if hide_hypothetical else frozenset()
    info = report.index
    c = info.counts
    console.print(Text(cells.answer(report), style="bold"))
    console.print()
    if not brief:
        console.print(Text.assemble(("graphrag-audit ", "bold"), (for_log(info.path), "bold")))
        console.print(Text("tables in " + for_log(info.output_dir)))
        evidence = "; ".join(for_log(e) for e in info.generation_evidence) if verbose else ""
        console.print(Text(f"generation {info.generation}" + (f"  ·  {evidence}" if evidence else "")))
        for note in info.notes:
            console.print(Text("note: " + for_log(note)))
        console.print(Text(f"{cells.size_line(c)} · tree from {info.tree_source}"))
        console.print()
        for part in _tree_table(console, report):
            console.print(part)
    if not info.has_reports_table:
        console.print(Text(NO_REPORTS))
    else:
        console.print((_brief_table if brief else _levels_table)(report, console, hide, hide_hypothetical))
    d = report.depth
    if d.histogram and not brief:
        hist = "  ".join(f"{k}: {number(v)}" for k, v in d.histogram.items())
        asymmetry = f"depth asymmetry {d.asymmetry:.2f} (0 = even, 1 = all stuck at level 0)"
        console.print(Text(f"Branch depth reached by the {count(c.roots, 'root')} — {hist}  ·  {asymmetry}"))
        console.print()
    if focus is not None:  # --list-reports: the lists asked for, brief or not
        for part in _focus(report, focus):
            console.print(part)
    if report.verify is not None and not brief:
        for line in _verify_lines(report.verify):
            console.print(line)
        console.print()
    fs = report.sorted_findings()
    console.print(Text(f"Findings ({len(fs)})", style="bold"))
    if not fs:
        console.print(Text("  none"))
    else:  # a hanging indent: the severity, then the message and the rule's fix below it
        grid = Table.grid(padding=(0, 1, 0, 0))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")  # a word longer than the line folds: never cut
        for f in fs:
            body = Text.assemble((f"{f.rule}: ", "bold"), for_log(f.message))
            if f.fix:
                body.append("\nfix: " + for_log(f.fix), style="dim")
            grid.add_row(Text(f"  {f.severity.upper():7}", SEV_STYLE[f.severity]), body)
        console.print(grid)
    return _finished(buf)


def _table(
    heads, rows, keys, *, title=None, caption=None, left=(), no_wrap=(), marks=(), extra=None
) -> Table:
    """The columns ``keys`` (header ``heads[k]``, cells ``row[k]``), right-aligned but ``left``. ``marks``: per
    row, whether it is the queried level (a marker column, bold); ``extra``: a bold last row of its own."""
    t = Table(title=title, caption=caption, box=box.SIMPLE_HEAD, title_justify="left", caption_justify="left")
    if marks:
        t.add_column("", no_wrap=True, width=1)
    for k in keys:
        t.add_column(heads[k], justify="left" if k in left else "right", no_wrap=k in no_wrap)
    for i, row in enumerate(rows):
        bold = bool(marks) and marks[i]
        marker = [MARKER if bold else ""] if marks else []
        t.add_row(*marker, *(row[k] for k in keys), style="bold" if bold else None)
    if extra is not None:
        t.add_section()
        t.add_row(*(extra[k] for k in keys), style="bold")
    return t


def _fitted(console, build, keys: list, droppable, name) -> tuple[Table, list[Text]]:
    """``build(keys)``, leaving out the ``droppable`` keys in turn while it does not fit the width:
    (the table, the note naming the columns left out, as a list)."""
    dropped = []
    table = build(keys)
    for key in droppable:
        if not _too_narrow(console, table):
            break
        if key in keys:
            keys = [k for k in keys if k != key]
            dropped.append(name(key))
            table = build(keys)
    if not dropped:
        return table, []
    names = ", ".join(dropped)
    return table, [
        Text(f"(left out at {console.width} columns: {names}; a wider --width or -f json shows them)")
    ]


def _ranges(console, table) -> list:
    """Per column, (the fewest cells it takes with every word whole, a no-wrap column's whole cells;
    the cells it takes unwrapped), padding (one cell each side) included."""
    wide = console.options.update(width=10_000)
    got = []
    for col in table.columns:
        sizes = [Measurement.get(console, wide, c) for c in (col.header, *col.cells)]
        low, high = max(m.minimum for m in sizes) + 2, max(m.maximum for m in sizes) + 2
        if col.width is not None:  # a fixed width, as rich takes it (the marker column)
            low = high = col.width + 2
        got.append((high if col.no_wrap else low, high))
    return got


def _too_narrow(console, table) -> bool:
    """``table`` cannot fit the width with every cell whole (no word broken, no no-wrap cell cut)."""
    return len(table.columns) + 1 + sum(low for low, _ in _ranges(console, table)) > console.width


def _tree_table(console, report) -> list:
    heads = ["level", "communities", "leaves", "reports", "entities"]
    rows = [
        [str(t.level), *map(number, (t.communities, t.leaves, t.reports, t.entities))]
        for t in report.tree_levels
    ]

    def build(shown):
        return _table(heads, rows, shown, title="Community tree", no_wrap=shown)

    table, note = _fitted(console, build, [0, 1, 2, 3, 4], (2, 3), heads.__getitem__)
    return [table, *(x for line in note for x in (line, Text("")))]


def _marked_table(report, console, hide, title, caption, rows, keys, droppable, apart=True) -> list:
    """One per-N table fitted to the width (numbers are never cut): a marker column, the queried level in
    bold; ``apart``: title and caption as lines of their own (wrapped at the output's width)."""
    marks = [r.community_level == report.options.level for r in report.levels]
    heads = TEXT_HEADERS
    if hide:  # the map-call column names the one graphrag line left
        (shown,) = {"v2", "v1"} - set(hide)
        heads = {**TEXT_HEADERS, "map_calls": f"map calls\n{cells.BEHAVIOUR_SHORT[shown]}"}
    head, foot = (None, None) if apart else (title, caption)

    def build(shown):
        return _table(heads, rows, shown, title=head, caption=foot, no_wrap=shown, marks=marks)

    t, note = _fitted(console, build, keys, droppable, lambda k: TEXT_HEADERS[k].replace("\n", " "))
    return [Text(title), t, Text(caption), *note] if apart else [t, *note]


def _marker_note(report, hide_hypothetical: bool) -> str:
    marked = cells.marker_legend(report, MARKER, f"--level {report.options.level}")
    return f"{marked}." + cells.hidden_note(report, hide_hypothetical, cells.BEHAVIOUR_SHORT)


def _brief_table(report, console, hide, hide_hypothetical: bool):
    """levels --brief: one row per N (what each graphrag line sends, entities covered, map calls), notes."""
    rows, notes = cells.brief_rows(report, hide)
    shown = [k for k in ("n", "v2", "v1", "v2_entities", "v1_entities", "map_calls") if k in rows[0]]
    legend = (
        f"entities = of the {report.index.counts.clustered_entities:,} clustered entities, those a selected "
        f"report's community holds. " + _marker_note(report, hide_hypothetical)
    )
    parts = _marked_table(report, console, hide, SENDS, legend, rows, shown, ("v1_entities", "v2_entities"))
    parts.append(Text("\n".join(notes.lines()) + "\n" if notes.items else ""))
    return Group(*parts)


def _logged(lines: list[str]) -> list[str]:
    """``lines`` through ``for_log``, each keeping its indent."""
    return [x[: len(x) - len(x.lstrip())] + for_log(x) for x in lines]


def _levels_table(report, console, hide, hide_hypothetical: bool):
    """The selection, coverage, and depth-and-cost tables, each fitted to the width, then notes."""
    opts, c = report.options, report.index.counts
    costs = bool(opts.costs)
    rows, notes = cells.brief_rows(report, hide)  # the level table's and the coverage table's cells
    keys = [key for key, _ in cells.level_columns(report, hide)]
    sel_keys = {key for key, _ in cells.SELECTION_COLUMNS}
    sel = [key for key in keys if key in sel_keys]
    cov = [key for key, _ in cells.COVERAGE_COLUMNS if key in rows[0]]
    cost = ["n"] + [key for key in keys if key not in sel_keys]
    apart = bool(hide)  # --hide-hypothetical: narrow tables, legends explain only the columns left
    sel_caption = (
        (
            "extra = reports >=2.0 sends beyond <2.0; anc. = reports sent together with a descendant's; "
            if "extra" in keys
            else ""
        )
        + ("mix = >=2.0 reports per level; " if "mix" in keys else "")
        + f"{cells.LEVEL_ONLY_NOTE} "
        + _marker_note(report, hide_hypothetical)
    )
    of_tu = f", {c.clustered_text_units:,} text units" if c.clustered_text_units is not None else ""
    cov_title = f"Coverage per N (of {c.clustered_entities:,} clustered entities{of_tu})"
    cov_caption = (
        "An entity is covered when a selected report's community holds it; a text unit, when a covered "
        "entity names it. The rest never reach global search at that N."
    )
    cost_title = (
        f"Depth and cost per N ({cells.with_source(opts.tokenizer, opts, 'tokenizer', for_log)}, "
        f"max_context_tokens {cells.with_source(f'{opts.max_context_tokens:,}', opts, 'max_context_tokens', for_log)})"
        if costs
        else "Depth per N"
    )
    cost_caption = (
        "stuck = entities whose finest community is above level N"
        + ("; ents/rep = entities per >=2.0 report. " if "epr" in keys else ". ")
        + "Each map call is one LLM call; one reduce call follows."
        + (" Tokens are estimates (--tokenizer estimate)." if costs and opts.tokenizer == "estimate" else "")
    )
    parts = [
        *_marked_table(report, console, hide, SENDS, sel_caption, rows, sel, DROPPABLE["sel"], apart),
        Text(""),
        *_marked_table(report, console, hide, cov_title, cov_caption, rows, cov, DROPPABLE["cov"], apart),
        Text(""),
        *_marked_table(report, console, hide, cost_title, cost_caption, rows, cost, DROPPABLE["cost"], apart),
    ]
    money = _logged(cells.money_lines(report, hide))
    if money:
        parts.append(Text("\n".join(money) + "\n"))
    if notes.items:  # what graphrag actually does where the table's numbers are not what it returns
        parts.append(Text("\n".join(notes.lines()) + "\n"))
    per_version = _dynamic_lines(report)
    dyn = [
        f"N={level_label(r.community_level)}: {rc.min}–{rc.max}"
        for r in report.levels
        if (rc := r.selected["dynamic"].rating_calls)
    ]
    if per_version:  # the per-line simulation replaces the version-independent bound
        parts.append(Text(per_version))
    elif dyn:
        head = f"Dynamic community selection, LLM rating calls (num_repeats {opts.num_repeats}): "
        parts.append(Text(head + ", ".join(dyn) + "\n"))
    what_if = _logged(cells.local_what_if_lines(report))
    local = _search_lines(report, "local", hide_hypothetical)
    blocks = [what_if + [""] * bool(what_if and local) + local]
    blocks += [_search_lines(report, kind, hide_hypothetical) for kind in ("drift", "reduce")]
    for lines in blocks:
        if lines:
            parts.append(Text("\n".join(lines) + "\n"))
    return Group(*parts)


def _search_lines(report, kind: str, hide_hypothetical: bool) -> list[str]:
    """The caption, then per graphrag line its heading and table (render/cells.py's search_section)."""
    got = cells.search_section(report, kind, hide_hypothetical)
    if got is None:
        return []
    caption, headers, tables = got
    lines = [caption]
    for head, rows in tables:
        lines += [head + ":"] + _columns([headers] + rows)
    return lines


def _columns(rows: list[list[str]], left: int = 0, indent: str = "  ") -> list[str]:
    """``rows`` as lines of columns two spaces apart, right-aligned but the first ``left``."""
    widths = [max(cell_width(r[i]) for r in rows) for i in range(len(rows[0]))]

    def pad(i: int, c: str) -> str:
        fill = " " * (widths[i] - cell_width(c))
        return c + fill if i < left else fill + c

    return [(indent + "  ".join(pad(i, c) for i, c in enumerate(r))).rstrip() for r in rows]


#: cells.DYNAMIC_HEADERS on two lines ("all relevant" over "calls"): the table fits an 80-column log
DYNAMIC_HEADS = [
    ["", "", "all relevant", "", "none relevant", "what-if", "what-if"],
    ["graphrag", "descends", "calls", "kept", "calls", "calls", "kept"],
]


def _dynamic_lines(report) -> str:
    """Dynamic selection per graphrag line at the queried level (analysis/dynamic.py's simulation)."""
    got = cells.dynamic_at(report)
    if got is None:
        return ""
    n, bv = got
    opts = report.options
    what_if = opts.relevant is not None
    rows = [h[: 7 if what_if else 5] for h in DYNAMIC_HEADS] + cells.dynamic_rows(bv, what_if)
    lines = [
        f"Dynamic selection by graphrag version at N={level_label(n)} (rating calls, num_repeats "
        f"{opts.num_repeats};",
        "all/none = every/no report rated relevant):",
        *_columns(rows, left=2),
        for_log(cells.dynamic_settings_line(opts)),
    ]
    for head, items in cells.dynamic_notes(bv, what_if, opts.query, opts.use_summary):
        lines += [for_log(head)] + ["  " + for_log(t) for t in items]
    return "\n".join(lines) + "\n"


MAX_FOCUS_ROWS = 200  # rows listed per behaviour: rich needs ~1 KiB and real time per row


def _focus(report, n: int):
    r = report.level(n)
    if r is None:
        yield Text(f"community_level {n} is outside the tree (levels 0–{report.depth.max_level}).\n")
        return
    listing = report.listing
    if listing is None or listing.community_level != n:  # the audit lists the reports of options.level only
        yield Text(
            f"community_level {n}: the audit listed the reports of community_level "
            f"{report.options.level} only.\n"
        )
        return
    for b in ("v2", "v1", "level_only"):
        s = r.selected[b]
        exact = b == "level_only" or s.outcome is None or s.outcome.exact
        what = f"{BEHAVIOUR_LABEL[b]}: {count(s.count, 'report')}" if exact else cells.sends(s, b)
        t = Table(title=f"community_level {n} · {what}", box=box.SIMPLE_HEAD, title_justify="left")
        for col in ("id", "level", "title", "entities", "tokens"):
            # numbers never wrap; the title column gives way first (its cells are cut with '…', not wrapped)
            t.add_column(col, justify="left" if col == "title" else "right", no_wrap=col != "title")
        lst = listing.by_behaviour[b]  # by level, then id
        shown = min(len(lst), MAX_FOCUS_ROWS)
        if lst.total > shown:
            t.caption = f"the first {shown} of {lst.total:,} reports by level and id; -f json lists them all"
            t.caption_justify = "left"
        for i in range(shown):
            t.add_row(
                str(lst.community[i]),
                str(lst.level[i]),
                Text(for_log(lst.title[i], 80), no_wrap=True, overflow="ellipsis"),
                number(lst.entities[i]),
                number(lst.tokens[i]) if lst.tokens is not None else "—",
            )
        yield t


def _verify_lines(v) -> list[Text]:
    """The --verify result and its dynamic-selection part (wording in render/verify_words.py)."""
    from graphrag_audit.render.verify_words import dynamic_summary, summary

    if not v.available:
        return [Text("verify: not run: " + for_log(v.reason or "graphrag unavailable"))]
    style = {"agrees": "green", "raised": "bold yellow", "not_run": ""}
    kind, sentence = summary(v, BEHAVIOUR_LABEL.get(v.behaviour, for_log(v.behaviour)), for_log, lambda t: t)
    lines = [Text("verify: " + sentence, style=style.get(kind, "bold red"))]
    got = dynamic_summary(v, for_log)
    if got is not None:
        lines.append(Text("verify dynamic: " + got[1], style=style.get(got[0], "bold red")))
    return lines


# ==== tree ================================================================================================
SENT_LABEL = {SENT_BOTH: "both", SENT_V2_ONLY: "v2 only", SENT_V1_ONLY: "v1 only", SENT_NEITHER: "—"}
SENT_STYLE = {SENT_BOTH: "green", SENT_V2_ONLY: "yellow", SENT_V1_ONLY: "magenta", SENT_NEITHER: "dim"}
LEVEL_W, ENT_W, BELOW_W, SENT_W = 5, 8, 12, 7
MIN_LEFT = 16
HEAD_LABEL = "community · report title"
#: holds the words of one item of a heading line together when it wraps (printed as a space)
GLUE = "\u00a0"


def fit(text: str, width: int) -> str:
    """``text`` cut and padded to exactly ``width`` cells; a cut ends with '…'."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text + " " * (width - cell_len(text))
    out, used = [], 0
    for ch in text:
        w = get_character_cell_size(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    keep = cut_point(text, len(out))  # an escape such as \u202e is cut whole or not at all
    used -= len(out) - keep  # escapes are ASCII: one cell per character
    return text[:keep] + "…" + " " * (width - 1 - used)


def _guide(row: Row) -> str:
    if row.depth == 0:
        return ""
    return "".join("│   " if g else "    " for g in row.guides) + ("└── " if row.last else "├── ")


def _title_of(forest, nd) -> tuple[str, str]:
    """The title shown and its style."""
    if nd.has_report:
        return nd.title or "(untitled report)", ""
    return ("(no report)", "dim") if forest.has_reports_table else ("", "")


def _listed(ids, limit: int) -> str:
    """``ids`` joined by commas; past ``limit`` the first ones and how many more."""
    ids = list(ids)
    more = f", … {len(ids) - limit} more" if len(ids) > limit else ""
    return ", ".join(str(c) for c in ids[:limit]) + more


def _number(nd) -> str:
    also = f" (also under {_listed(nd.other_parents, 5)})" if nd.other_parents else ""
    return str(nd.community) + also


def _left(forest, row: Row) -> str:
    """A row's left column, uncut: the guide, then the number and title (or the "more" label)."""
    if row.kind == "more":
        return _guide(row) + _more_labels(row)[0]
    nd = forest.nodes[row.community]
    return _guide(row) + _number(nd) + " " + _title_of(forest, nd)[0]


def _more_labels(row: Row) -> list[str]:
    """The "… N more" row's label, longest first: the shorter ones drop words, never the parent id."""
    leaves = count(row.more_leaves, "leaf", "leaves")
    if row.community < 0:
        roots = f"… {count(row.more, 'more root')}"
        return [f"{roots} ({count(row.more_communities, 'community')}, {leaves})", roots]
    what = "community" if row.more_communities == 1 else "communities"
    more, under = number(row.more_communities), f"under {row.community}"
    return [
        f"… {more} more {what} ({leaves}) {under}",
        f"… {more} more ({leaves}) {under}",
        f"… {more} more {under}",
        f"+{more} {under}",
    ]


def _fitted_more(row: Row, cells: int) -> str:
    """The longest label of :func:`_more_labels` that fits ``cells``; else the last one cut from the left,
    so that the parent id at its end stays."""
    labels = _more_labels(row)
    for label in labels:
        if cell_len(label) <= cells:
            return label
    return "…" + labels[-1][len(labels[-1]) - max(cells - 1, 0) :] if cells > 0 else ""


def render_tree(
    view: TreeView, *, width: int | None = None, color: bool = False, heading: list[str] | None = None
) -> str:
    """The view as text lines (``heading`` lines first, escaped here)."""
    forest = view.forest
    width = max(width or 100, 40)
    with_sent = forest.community_level is not None and forest.has_reports_table
    right_w = 2 + LEVEL_W + 2 + ENT_W + 2 + BELOW_W + ((2 + SENT_W) if with_sent else 0)
    widest = max([cell_len(HEAD_LABEL)] + [cell_len(_left(forest, row)) for row in view.rows])
    left_w = max(min(width - right_w, widest), MIN_LEFT)
    buf = io.StringIO()
    console = _console(buf, width, color)  # prints Text only: no markup is parsed

    def line(text: Text) -> None:
        text.rstrip()
        console.print(text, no_wrap=True, overflow="crop", crop=False)

    def folded(text: Text) -> None:
        text.rstrip()
        console.print(text, overflow="fold")

    def ours(text: str) -> None:  # our own lines: wrapped only where no GLUE holds words together
        words = [w if cell_len(w) <= width else w.replace(GLUE, " ") for w in text.rstrip().split(" ")]
        for piece in wrap(" ".join(words), width, "", ""):
            line(Text(piece.replace(GLUE, " ")))

    for i, text in enumerate(heading or []):
        folded(Text(for_log(text), style="bold" if i == 0 else ""))
    for text in _summary(view):
        ours(text)
    if with_sent:
        items = [
            f"N={forest.community_level} column: both = sent by >= 2.0 and < 2.0",
            "v2 only = only >= 2.0 sends it",
            *(["v1 only = only < 2.0 sends it"] if forest.counts()[SENT_V1_ONLY] else []),
            "— = not sent",
        ]
        outcomes = forest.outcomes
        who = [w for b, w in (("v2", ">= 2.0"), ("v1", "< 2.0")) if b in outcomes and not outcomes[b].exact]
        hyp = cells.hypothetical_rule_note(who)  # a sentence: it may break between its words
        # a line breaks between the legend's items only, the "·" staying at the end of the line
        ours(f"{GLUE}· ".join([*map(_glued, items), *([hyp] if hyp else [])]))
    crumbs = [str(c) for c in view.breadcrumb()]
    if len(crumbs) > 8:  # a community deep in a long chain: its first and last ancestors
        crumbs = [*crumbs[:3], f"… {len(crumbs) - 7:,} more …", *crumbs[-4:]]
    if crumbs:
        folded(Text("under " + " › ".join(crumbs)))
    line(Text(""))
    head = Text(fit(HEAD_LABEL, left_w), style="bold")
    head.append(f"  {'level':>{LEVEL_W}}  {'entities':>{ENT_W}}  {'below':<{BELOW_W}}", style="bold")
    if with_sent:
        head.append("  " + f"N={forest.community_level}".ljust(SENT_W), style="bold")
    line(head)

    for row in view.rows:
        guide = _guide(row)
        if row.kind == "more":
            # the row has no numbers: its label may run on over the empty columns to the line's end
            t = Text(guide, style="dim")
            room = max(left_w - cell_len(guide), 0)
            label = _more_labels(row)[0]
            if cell_len(label) > room:
                label = _fitted_more(row, max(width - cell_len(guide), 0))
            t.append(fit(label, max(room, cell_len(label))), style="dim italic")
            line(t)
            continue
        nd = forest.nodes[row.community]
        num = _number(nd)
        title, title_style = _title_of(forest, nd)
        avail = left_w - cell_len(guide + num + " ")
        t = Text()
        if avail < 1:  # very deep and narrow: cut the guide and number too
            t.append(fit(guide + num + " ", left_w), style="dim")
        else:
            t.append(guide, style="dim")
            t.append(num + " ", style="bold")
            t.append(fit(title, avail), style=title_style)
        if nd.leaf:
            below = "leaf"
        elif row.hidden_children == len(nd.children):
            below = f"▸ {number(row.hidden_below)} hidden"
        else:
            below = f"{number(row.hidden_below)} hidden" if row.hidden_below else ""
        t.append(f"  {nd.level:>{LEVEL_W}}  {number(nd.entities):>{ENT_W}}  ")
        t.append(below.ljust(BELOW_W), style="dim" if below != "leaf" else "")
        if with_sent:
            sent = nd.sent if nd.has_report and nd.sent else ""
            t.append("  " + SENT_LABEL.get(sent, "").ljust(SENT_W), style=SENT_STYLE.get(sent, ""))
        line(t)

    for text in _footer(view):
        folded(Text(text, style="dim"))
    return _finished(buf)


def _glued(text: str) -> str:
    return text.replace(" ", GLUE)


def _summary(view: TreeView) -> list[str]:
    f = view.forest
    n = f.community_level
    reports = sum(nd.reports for nd in f.nodes.values()) + len(f.outside_reports)
    items = [
        count(len(f.nodes), "community"),
        count(f.max_level + 1, "level"),
        count(len(f.roots), "root"),
        count(reports, "report") if f.has_reports_table else "no community_reports table",
    ]
    lines = [f"{GLUE}· ".join(map(_glued, items))]
    if n is not None and not f.has_reports_table:
        lines.append(f"community_level {n}: nothing is sent (no community_reports table)")
    elif n is not None:
        c = f.counts()
        capped = (
            f" (deeper than the index: as {f.selection_level})"
            if f.selection_level is not None and f.selection_level != n
            else ""
        )
        v1_only = f", {_glued(f'v1 only {number(c[SENT_V1_ONLY])}')}" if c[SENT_V1_ONLY] else ""
        lines.append(
            f"community_level {n}{capped}: graphrag >= 2.0 {_sends(f, 'v2')}, "
            f"< 2.0 {_sends(f, 'v1')} ({_glued(f'both {number(c[SENT_BOTH])}')}, "
            f"{_glued(f'v2 only {number(c[SENT_V2_ONLY])}')}{v1_only})"
        )
    return lines


def _sends(f, b: str) -> str:
    """What graphrag >= 2.0 (``v2``) or < 2.0 (``v1``) sends at N, its rule's count marked ``hyp.`` where
    that graphrag does not send it (graphrag.compat's status, as ``levels`` marks it)."""
    k = f.sent_reports[b]
    shown = count(k, "report") if b == "v2" else number(k)
    o = f.outcomes.get(b)
    if o is None or o.exact:
        return f"sends {shown}"
    if o.returns_zero:
        return f"sends 0 (hyp. {shown})"
    if o.status == HYPOTHETICAL:
        return f"sends hyp. {shown}"
    return f"cannot read this index (hyp. {shown})"


def _footer(view: TreeView) -> list[str]:
    f = view.forest
    out = []
    if view.hidden:
        out.append(
            f"showing {number(len(view.shown))} of {number(view.in_scope)} communities "
            f"(largest subtrees first); --max-lines 0 shows all, --root C zooms in, --depth D limits depth"
        )
    if f.cycle_roots:
        out.append("parent chain loops: shown as extra roots: " + _listed(f.cycle_roots, 10))
    if f.outside_reports:
        reports = [
            f"{r.community} (level {r.level}"
            + ("" if r.sent is None else f", {'not sent' if r.sent == SENT_NEITHER else SENT_LABEL[r.sent]}")
            + ")"
            for r in f.outside_reports
        ]
        out.append(f"{len(reports):,} report(s) for communities not in the tree: " + _listed(reports, 10))
    return out


# ==== plan ================================================================================================
def _plan_fitted(
    console, title: str, headers, rows, *, left=(), caption=None, no_wrap=(), droppable=(), extra=None
) -> list:
    """The table fitted to the output width without cutting a number or a word: the ``droppable``
    columns (indices) left out in turn while it does not fit (a note names them); when it still does not
    fit, one block per row. ``extra``: a last row of its own section (bold)."""
    texts = [[Text(for_log(own_glyphs(c))) for c in r] for r in rows]  # our cells: '…' and '–' fall back
    bold = None if extra is None else [Text(c) for c in extra]

    def build(keep):
        return _table(
            headers, texts, keep, title=title, caption=caption, left=left, no_wrap=no_wrap, extra=bold
        )

    table, note = _fitted(console, build, list(range(len(headers))), droppable, headers.__getitem__)
    if _too_narrow(console, table):
        return _plan_blocks(
            console.width, title, headers, rows + ([extra] if extra is not None else []), caption
        )
    _no_cut(console, table)
    return [table, *note]


def _no_cut(console, table) -> None:
    """Where rich's own layout would cut a word ("120,4…": it narrows columns below their longest word),
    give each column its longest word and share the rest of the width out column by column."""
    ranges = _ranges(console, table)
    laid = _rich_layout(table, ranges, console.width)
    if all(w >= low for w, (low, _) in zip(laid, ranges)):
        return  # rich wraps between words only: keep its layout
    widths = [low for low, _ in ranges]
    spare = console.width - len(table.columns) - 1 - sum(widths)
    while spare > 0 and any(w < high for w, (_, high) in zip(widths, ranges)):
        for i, (_, high) in enumerate(ranges):
            if spare > 0 and widths[i] < high:
                widths[i] += 1
                spare -= 1
    for i, col in enumerate(table.columns):
        col.width = widths[i] - 2


def _ratio_reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]) -> list[int]:
    """rich's ``ratio_reduce`` (rich/_ratio.py): ``total`` taken from ``values`` in proportion to ``ratios``."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return values[:]
    out = []
    for ratio, maximum, value in zip(ratios, maximums, values):
        if ratio and total_ratio > 0:
            cut = min(maximum, round(ratio * total / total_ratio))
            out.append(value - cut)
            total -= cut
            total_ratio -= ratio
        else:
            out.append(value)
    return out


def _rich_layout(table, ranges, width: int) -> list[int]:
    """The column widths (padding included) rich's ``Table`` gives ``table`` at ``width`` (rich/table.py
    ``_calculate_column_widths`` and ``_collapse_widths``, no ``expand``): the widest wrapable columns
    narrowed in turn, then every column evenly."""
    highs = [min(high, width) for _, high in ranges]
    widths = list(highs)
    if sum(widths) <= width:
        return widths
    wrapable = [not col.no_wrap for col in table.columns]
    excess = sum(widths) - width
    while any(wrapable) and sum(widths) and excess > 0:
        widest = max(w for w, ok in zip(widths, wrapable) if ok)
        second = max(w if ok and w != widest else 0 for w, ok in zip(widths, wrapable))
        ratios = [1 if (w == widest and ok) else 0 for w, ok in zip(widths, wrapable)]
        if not any(ratios) or widest == second:
            break
        widths = _ratio_reduce(excess, ratios, [min(excess, widest - second)] * len(widths), widths)
        excess = sum(widths) - width
    if excess > 0:
        widths = _ratio_reduce(excess, [1] * len(widths), widths, widths)
    return [max(0, min(h, w)) for h, w in zip(highs, widths)]


def _plan_blocks(width: int, title: str, headers, rows, caption) -> list:
    """A table too wide for the output as one block per row: "header: value" lines, wrapped between words."""
    lines = wrap(title, width, "", "") if title else []
    for r in rows:
        lines.append("")
        for i, (h, c) in enumerate(zip(headers, r)):
            if c or i == 0:
                lines += wrap(for_log(own_glyphs(f"{h}: {c}")), width, "" if i == 0 else "  ")
    if caption:
        lines += [""] + wrap(caption, width, "", "")
    return [Text("\n".join(lines) + "\n")]


def render_plan_text(report, *, width: int | None = None, color: bool = False, **_ignored) -> str:
    buf = io.StringIO()
    console = _console(buf, width or 100, color)
    plan = report.plan
    info = report.to_dict()["index"]

    def bullet(text: str, style: str = "") -> None:  # wrapped lines keep the indent (two more spaces)
        fits = cell_width(text) + 2 <= console.width
        console.print(Text("  " + text if fits else "\n".join(wrap(text, console.width, "  ")), style=style))

    console.print(Text.assemble(("graphrag-audit plan ", "bold"), (for_log(info["path"]), "bold")))
    console.print(Text("tables in " + for_log(info["output_dir"])))
    for note in info.get("notes", []):
        console.print(Text("note: " + for_log(note)))
    console.print(Text(f"generation {info['generation']} · " + pc.settings_line(report)))
    console.print()
    headline = pc.plan_headline(plan)
    console.print(Text.assemble(("Plan: ", "bold"), (headline, "green" if plan.usable else "bold red")))
    bullet(pc.check_line(plan))
    for line in pc.why_lines(plan):
        bullet(for_log(line), "bold red")
    bullet(pc.entity_line(plan))
    bullet(pc.granularity_line(plan, report))
    bullet("communities: " + pc.ids_text(plan.communities))
    for note in plan.notes:
        bullet("note: " + for_log(note), "yellow")
    console.print()

    note = pc.comparison_note(report)
    parts = _plan_fitted(
        console,
        f"The same budget ({plan.budget.describe()}) at every community_level N",
        pc.COMPARISON_HEADERS,
        pc.comparison_rows(report),
        left={1},
        caption="entities = clustered entities the selection covers; at finest = of those, held by a report "
        "at their finest available level; ancestors = reports sent together with a descendant's "
        "report (the same entities twice). The plan sends no ancestor." + (f" {note}" if note else ""),
        droppable=(7, 6),
        extra=pc.plan_row(plan),
    )
    parts.append(Text("Finest available level, per subtree", style="bold"))
    for part in parts:
        console.print(part)
    for line in pc.disclosure_lines(plan):
        bullet(for_log(own_glyphs(line)))
    srows = pc.subtree_rows(plan)
    shown = srows[: pc.SUBTREE_ROWS]
    parts = _plan_fitted(
        console, "", pc.subtree_headers(plan), shown, left={3, 6}, no_wrap={3}, droppable=(5, 4)
    )
    if len(srows) > len(shown):
        parts.append(Text(f"  … {len(srows) - len(shown):,} more subtrees (the JSON lists them all)"))
    parts.append(Text(""))
    parts += _plan_fitted(
        console,
        f"Dynamic community selection instead (num_repeats {report.settings.get('num_repeats', 1)}): rating "
        "calls and candidate pool per cap N",
        pc.DYNAMIC_HEADERS,
        pc.dynamic_rows(report),
        left={4},
    )
    parts += [Text(for_log(line)) for line in pc.handoff_lines(report)]
    for part in parts:
        console.print(part)
    return _finished(buf)


# ==== diff ================================================================================================
DEFAULT_WIDTH = 100


def _side(label, info) -> str:
    c = info.counts
    return (
        f"{label}: {for_log(info.path)} (generation {for_log(info.generation)}, "
        f"{count(c.communities, 'community')}, {count(c.reports, 'report')}, "
        f"{count(c.clustered_entities, 'clustered entity', 'clustered entities')})"
    )


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


def _finding_lines(items, width: int, mark: str = "") -> list[str]:
    return [
        line
        for f in items
        for line in wrap(f"{mark}{f.severity} {f.rule}: {for_log(f.message, 300)}", width, "  ", "    ")
    ]


def render_diff_text(diff, *, width: int | None = None, **_ignored) -> str:
    width = max(width or DEFAULT_WIDTH, 40)
    head = ["graphrag-audit diff", _side("old", diff.old), _side("new", diff.new), ""]
    out = wrap_all(head + [dc.matching_sentence(diff), dc.community_sentence(diff), ""], width)
    rows = [dc.HEADERS] + [dc.selection_cells(s) for s in diff.selections]
    table = _columns(rows, left=len(dc.HEADERS), indent="")
    if max(cell_width(line) for line in table) <= width:
        out += table
    else:  # one block per row
        out += wrap(
            "what each community_level sends, before -> after (reports: +added -removed ~changed):", width
        )
        for level, who, reports, added, removed, changed, tokens, calls, coverage in rows[1:]:
            items = [
                f"reports {reports} ({added} {removed} {changed})",
                f"tokens {tokens}",
                f"map calls {calls}",
                f"coverage {coverage}",
            ]
            out += _wrap_items(f"  level {level}, {who}:", items, width)
    legend = dc.hyp_legend(diff)
    if legend:
        out += wrap(legend, width)
    out.append("")
    for title, items in (
        ("findings that appeared", diff.appeared),
        ("findings that disappeared", diff.disappeared),
        (f"regressions at community_level {diff.level}", diff.sorted_regressions()),
    ):
        out.append(f"{title}: {number(len(items))}")
        out += _finding_lines(items, width)
    if diff.hypothetical_changes:
        out += wrap(dc.hypothetical_heading(diff), width)
        out += _finding_lines(diff.sorted_hypothetical_changes(), width, f"{dc.HYP} ")
    if diff.option_note:
        out += wrap(f"note: {for_log(diff.option_note, 500)}", width, "", "  ")
    out += [""] + wrap(dc.verdict(diff), width)
    # a word cut to fit (a long path) may put a "::" at the start of a line: a CI log's workflow command
    return inert_log_lines("\n".join(out)) + "\n"


# ==== update-run ==========================================================================================
_LAYOUT = {
    ">= 2.0": "graphrag >= 2.0: update_output/<timestamp>/{previous,delta}, merged into the output folder",
    "0.4-1.2": "graphrag 0.4-1.2: the merged index in update_output/, the new documents' in "
    "update_output/delta/, the output folder left as it was",
}


def render_update_run_text(report: UpdateRunReport, *, width: int | None = None, **_ignored) -> str:
    out = [
        f"graphrag-audit update-run {for_log(report.requested)}",
        f"layout: {_LAYOUT.get(report.layout, report.layout)}",
    ]
    if report.run is not None:
        newest = f" (newest of {number(report.runs)})" if report.runs > 1 else ""
        out.append(f"run: {for_log(report.run)}{newest}")
    queried = next((p for p in report.parts if p.queried), None)
    out.append(
        f"graphrag queries: {queried.role} ({for_log(queried.path)})"
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
            out.append(f"{p.role}: {for_log(p.path)}: not audited: {for_log(p.problem)}{mark}")
            continue
        levels = "/".join(number(n) for n in p.per_level)
        ents = "" if p.entities is None else f", {count(p.entities, 'entity')}"
        periods = f", period {', '.join(for_log(x) for x in p.periods)}" if p.periods else ""
        out.append(f"{p.role}: {for_log(p.path)}{mark}")
        out.append(
            f"  generation {p.generation}: {count(p.communities, 'community')} ({levels} per level), "
            f"{count(p.reports, 'report')}{ents}{periods}"
        )
        out.append(f"  findings at community_level {report.level}:" + ("" if p.findings else " none"))
        out.extend(f"    [{f.severity}] {f.rule}: {for_log(f.message)}" for f in p.findings)
    out.append("")
    o = report.offset
    if o is None:
        out.append(
            f"offset check (merged = previous + delta shifted by previous max + 1): not run: "
            f"{for_log(report.offset_not_run)}"
        )
    else:
        out.append(
            f"offset check: delta numbers + {number(o.offset)} (the previous {o.offset_from} maximum + 1): "
            f"{count(o.expected, 'community number')} expected, {number(o.found)} in the merged table: "
            + ("they match" if o.holds else "they differ")
        )
        if not o.holds and o.missing:
            out.append(f"  expected, missing from merged: {', '.join(map(str, o.missing))}")
        if not o.holds and o.extra:
            out.append(f"  in merged, not expected: {', '.join(map(str, o.extra))}")
    out += [f"note: {for_log(n)}" for n in report.notes]
    # index text wraps: a "::" that starts a word is escaped (for_log); one a cut word puts at the start
    # of a line is made inert too (a CI log reads it as a workflow command)
    return inert_log_lines("\n".join(wrap_all(out, max(width or DEFAULT_WIDTH, 40)))) + "\n"


# ==== explain =============================================================================================
def _para(text: str, width: int, indent: str = "  ") -> list[str]:
    return textwrap.wrap(
        text, width=width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    )


def rule_page(rule: Rule, width: int = 100) -> str:
    """The page of one rule: id and title (what it means, said once), severity, the notes, how to fix it."""
    width = max(40, width)
    lines = _para(f"{rule.id}: {rule.title}", width) + ["", f"severity: {rule.severity}"]
    note = RULE_NOTES.get(rule.id)
    if note:
        lines += [""] + _para(note, width)
    lines += [""] + _para("How to fix: " + rule.fix, width)
    lines += ["", "docs/rules.md has every rule; `graphrag-audit explain` lists them."]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def rule_list(width: int = 100) -> str:
    """Every rule: id, severity and title, one rule a line (wrapped under the title when narrow)."""
    width = max(40, width)
    idw = max(len(r) for r in RULES)
    lines = [f"{len(RULES)} rules (graphrag-audit explain RULE prints one):", ""]
    for r in sorted(RULES.values(), key=lambda r: r.id):
        head = f"{r.id:<{idw}}  {r.severity:<7}  "
        lines += _para(head + r.title, width, " " * len(head))
    return "\n".join(line.rstrip() for line in lines) + "\n"
