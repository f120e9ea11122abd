"""Terminal renderer (rich). Untrusted text only ever enters as rich ``Text`` (no markup parsing),
after ``sanitise.terminal.for_log`` has made control, bidi and zero-width characters visible
escapes; no line may start with a ``::`` workflow command, whatever the wrapping."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from graphrag_audit.render.cells import (
    BEHAVIOUR_SHORT,
    DYNAMIC_HEADERS,
    LEVEL_ONLY_NOTE,
    SELECTION_COLUMNS,
    answer,
    brief_rows,
    coverage_table,
    dynamic_at,
    dynamic_notes,
    dynamic_rows,
    dynamic_settings_line,
    hidden_note,
    hypothetical_behaviours,
    level_columns,
    level_table,
    marker_legend,
    sends,
    size_line,
)
from graphrag_audit.render.console import no_trailing_blanks as _no_trailing_blanks
from graphrag_audit.render.cost_words import money_lines, with_source
from graphrag_audit.render.numbers import count
from graphrag_audit.render.numbers import level_label as _lvl
from graphrag_audit.render.numbers import number as _n
from graphrag_audit.sanitise.terminal import for_log as plain
from graphrag_audit.sanitise.terminal import inert_log_lines

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
    "tree": ("leaves", "reports"),
    "sel": ("mix", "extra", "level_only", "v1"),
    "cov": ("v1_text_units", "v2_text_units", "v1_entities"),
    "cost": ("epr", "stuck", "v1_tokens", "map_calls"),
}
TREE_HEADERS = {
    "level": "level",
    "communities": "communities",
    "leaves": "leaves",
    "reports": "reports",
    "entities": "entities",
}
#: the marker of the level you query with, in its own column: it survives NO_COLOR, pipes and CI logs
#: (console.GLYPH_FALLBACK writes it as ">" where the output encoding lacks it)
MARKER = "▶"

SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
BEHAVIOUR_LABEL = {
    "v2": "graphrag >= 2.0",
    "v1": "graphrag < 2.0",
    "level_only": "level N only",
    "dynamic": "dynamic pool",
}


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
    """The audit as terminal text. ``brief``: the answer line, one table with one row per N and the
    findings. ``hide_hypothetical``: the per-N tables leave out the columns of a graphrag line that
    cannot run on this index (:func:`render.cells.hypothetical_behaviours`)."""
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
    hide = hypothetical_behaviours(report) if hide_hypothetical else frozenset()
    info = report.index
    c = info.counts
    console.print(Text(answer(report), style="bold"))
    console.print()
    if brief:
        if report.index.has_reports_table:
            console.print(_brief_table(report, console, hide, hide_hypothetical))
        else:
            console.print(Text("No community_reports table: nothing is sent to global search.\n"))
        if focus is not None:  # --list-reports: the lists asked for, brief or not
            for part in _focus(report, focus):
                console.print(part)
        _print_findings(console, report)
        return _no_trailing_blanks(inert_log_lines(buf.getvalue()))
    console.print(Text.assemble(("graphrag-audit ", "bold"), (plain(info.path), "bold")))
    console.print(Text("tables in " + plain(info.output_dir)))
    evidence = "; ".join(plain(e) for e in info.generation_evidence) if verbose else ""
    console.print(Text(f"generation {info.generation}" + (f"  ·  {evidence}" if evidence else "")))
    for note in info.notes:
        console.print(Text("note: " + plain(note)))
    console.print(Text(f"{size_line(c)} · tree from {info.tree_source}"))
    console.print()

    tree_rows = [
        {
            "level": str(tl.level),
            "communities": _n(tl.communities),
            "leaves": _n(tl.leaves),
            "reports": _n(tl.reports),
            "entities": _n(tl.entities),
        }
        for tl in report.tree_levels
    ]

    def tree_table(keys):
        t = Table(title="Community tree", box=box.SIMPLE_HEAD, title_justify="left")
        for col in keys:
            t.add_column(col, justify="right", no_wrap=True)
        for row in tree_rows:
            t.add_row(*(row[k] for k in keys))
        return t

    t, dropped = _fitted(console, tree_table, list(TREE_HEADERS), DROPPABLE["tree"])
    console.print(t)
    for note in _dropped_note(dropped, console.width):
        console.print(note)
        console.print()

    if report.index.has_reports_table:
        console.print(_levels_table(report, console, hide, hide_hypothetical))
    else:
        console.print(Text("No community_reports table: nothing is sent to global search.\n"))

    d = report.depth
    if d.histogram:
        hist = "  ".join(f"{k}: {_n(v)}" for k, v in d.histogram.items())
        console.print(
            Text(
                f"Branch depth reached by the {count(c.roots, 'root')} — {hist}  ·  "
                f"depth asymmetry {d.asymmetry:.2f} (0 = even, 1 = all stuck at level 0)"
            )
        )
        console.print()

    if focus is not None:
        for part in _focus(report, focus):
            console.print(part)

    if report.verify is not None:
        console.print(_verify_line(report.verify))
        dyn = _verify_dynamic_line(report.verify)
        if dyn is not None:
            console.print(dyn)
        console.print()

    _print_findings(console, report)
    return _no_trailing_blanks(inert_log_lines(buf.getvalue()))


def _print_findings(console, report) -> None:
    fs = report.sorted_findings()
    console.print(Text(f"Findings ({len(fs)})", style="bold"))
    if not fs:
        console.print(Text("  none"))
    if fs:  # a hanging indent: the severity, then the message and the rule's fix below it
        grid = Table.grid(padding=(0, 1, 0, 0))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")  # a word longer than the line folds, as before: never cut
        for f in fs:
            body = Text.assemble((f"{f.rule}: ", "bold"), plain(f.message))
            if f.fix:
                body.append("\nfix: " + plain(f.fix), style="dim")
            grid.add_row(Text(f"  {f.severity.upper():7}", SEV_STYLE[f.severity]), body)
        console.print(grid)


def _width_of(console, renderable) -> int:
    """The width ``renderable`` takes when nothing constrains it (rich's own measurement: no rendering)."""
    return Measurement.get(console, console.options.update(width=10_000), renderable).maximum


def _fitted(console, build, keys: list[str], droppable):
    """``build(keys)`` (a table), leaving out the ``droppable`` columns one by one while it is
    wider than the console: no number is ever cut short. Returns (table, the keys left out)."""
    dropped = []
    table = build(keys)
    for key in droppable:
        if _width_of(console, table) <= console.width:
            break
        if key in keys:
            keys = [k for k in keys if k != key]
            dropped.append(key)
            table = build(keys)
    return table, dropped


def _fitting(console, build, keys, droppable) -> list:
    """:func:`_fitted`'s table followed by the note of the columns it left out."""
    t, dropped = _fitted(console, build, keys, droppable)
    return [t, *_dropped_note(dropped, console.width)]


def _dropped_note(dropped: list[str], width: int) -> list:
    if not dropped:
        return []
    names = ", ".join({**TEXT_HEADERS, **TREE_HEADERS}[k].replace("\n", " ") for k in dropped)
    return [Text(f"(left out at {width} columns: {names}; a wider --width or -f json shows them)")]


def _marked_table(report, title, caption, heads, rows):
    """A builder of one per-N table (for :func:`_fitted`): the marker column, then ``rows``' cells of
    the keys shown, the level you query with in bold."""
    opts = report.options
    marks = [MARKER if r.community_level == opts.level else "" for r in report.levels]
    styles = ["bold" if r.community_level == opts.level else None for r in report.levels]

    def build(shown):
        t = Table(
            title=title, box=box.SIMPLE_HEAD, title_justify="left", caption=caption, caption_justify="left"
        )
        t.add_column("", no_wrap=True, width=1)  # the marker column
        for key in shown:
            t.add_column(heads[key], justify="right", no_wrap=True)
        for mark, style, row in zip(marks, styles, rows):
            t.add_row(mark, *(row[key] for key in shown), style=style)
        return t

    return build


#: levels --brief: the one table's columns (key, text header); map calls only with costs
BRIEF_KEYS = ("n", "v2", "v1", "v2_entities", "v1_entities", "map_calls")


def _brief_table(report, console, hide=frozenset(), hide_hypothetical: bool = False):
    """levels --brief: one row per N with what each graphrag line sends, the entities it covers and the
    map calls; the footnotes under it."""
    from rich.console import Group

    opts = report.options
    rows, notes = brief_rows(report, hide)
    shown = [k for k in BRIEF_KEYS if k in rows[0]] if rows else []
    c = report.index.counts
    text_heads = {**TEXT_HEADERS, **_map_calls_head(hide)}
    # the title and the legend as lines of their own: they wrap at the output's width, not the table's
    table, dropped = _fitted(
        console, _marked_table(report, None, None, text_heads, rows), shown, ("v1_entities", "v2_entities")
    )
    legend = (
        f"entities = of the {c.clustered_entities:,} clustered entities, those a selected report's community "
        f"holds. {marker_legend(report, MARKER, f'--level {opts.level}')}."
        + hidden_note(report, hide_hypothetical, BEHAVIOUR_SHORT)
    )
    parts = [
        Text("What each community_level N sends to global search"),
        table,
        Text(legend),
        *_dropped_note(dropped, console.width),
    ]
    if notes.items:
        parts.append(Text("\n".join(notes.lines()) + "\n"))
    else:
        parts.append(Text(""))
    return Group(*parts)


def _map_calls_head(hide) -> dict:
    """The map-call column's header when one graphrag line's columns are hidden."""
    if not hide:
        return {}
    (shown,) = {"v2", "v1"} - set(hide)
    return {"map_calls": f"map calls\n{BEHAVIOUR_SHORT[shown]}"}


def _levels_table(report, console, hide=frozenset(), hide_hypothetical: bool = False):
    """The selection table, the coverage table, then depth and cost: each fitted to the output width
    (columns are left out, never cut), the level you query with marked in a column of its own."""
    from rich.console import Group

    opts = report.options
    costs = bool(opts.costs)
    _, cells, notes = level_table(report, hide)
    keys = [key for key, _ in level_columns(report, hide)]
    sel_names = {key for key, _ in SELECTION_COLUMNS}
    heads_of = {**TEXT_HEADERS, **_map_calls_head(hide)}

    def table(title, caption, heads, rows):
        return _marked_table(report, title, caption, heads, rows)

    sel_keys = [key for key in keys if key in sel_names]
    cost_keys = ["n"] + [key for key in keys if key not in sel_names]
    sel_rows = [dict(zip(keys, row)) for row in cells]
    cost_rows = sel_rows
    # with --hide-hypothetical the tables are narrow: their titles and legends are lines of their own
    # (wrapped at the output's width, not the table's) and explain only the columns left
    apart = bool(hide)
    legend_keys = set(keys)

    def part(key, words):
        return words if not apart or key in legend_keys else ""

    sel_title = "What each community_level N sends to global search"
    sel_caption = (
        part(
            "extra",
            "extra = reports >=2.0 sends beyond <2.0; anc. = reports sent together with a descendant's; ",
        )
        + part("mix", "mix = >=2.0 reports per level; ")
        + LEVEL_ONLY_NOTE
        + f" {marker_legend(report, MARKER, f'--level {opts.level}')}."
        + hidden_note(report, hide_hypothetical, BEHAVIOUR_SHORT)
    )
    cov_cols, cov_cells = coverage_table(report, notes, hide)
    cov_keys = [key for key, _ in cov_cols]
    c = report.index.counts
    of_tu = f", {c.clustered_text_units:,} text units" if c.clustered_text_units is not None else ""
    cov_title = f"Coverage per N (of {c.clustered_entities:,} clustered entities{of_tu})"
    cov_caption = (
        "An entity is covered when a selected report's community holds it; a text unit, when a covered "
        "entity names it. The rest never reach global search at that N."
    )
    cost_title = (
        f"Depth and cost per N ({with_source(opts.tokenizer, opts, 'tokenizer', plain)}, max_context_tokens "
        f"{with_source(f'{opts.max_context_tokens:,}', opts, 'max_context_tokens', plain)})"
        if costs
        else "Depth per N"
    )
    cost_caption = (
        part("stuck", "stuck = entities whose finest community is above level N; ")
        + part("epr", "ents/rep = entities per >=2.0 report. ")
        + "Each map call is one LLM call; one reduce call follows."
        + (" Tokens are estimates (--tokenizer estimate)." if costs and opts.tokenizer == "estimate" else "")
    )
    if apart:
        cost_caption = cost_caption.replace("level N; Each", "level N. Each")

    def fitted(title, caption, heads, rows, shown, droppable):
        if not apart:
            return [*_fitting(console, table(title, caption, heads, rows), shown, droppable)]
        t, dropped = _fitted(console, table(None, None, heads, rows), shown, droppable)
        return [Text(title), t, Text(caption), *_dropped_note(dropped, console.width)]

    sel = fitted(sel_title, sel_caption, heads_of, sel_rows, sel_keys, DROPPABLE["sel"])
    cov = fitted(
        cov_title,
        cov_caption,
        TEXT_HEADERS,
        [dict(zip(cov_keys, row)) for row in cov_cells],
        cov_keys,
        DROPPABLE["cov"],
    )
    cost = fitted(cost_title, cost_caption, heads_of, cost_rows, cost_keys, DROPPABLE["cost"])
    dyn = []
    for r in report.levels:
        rc = r.selected["dynamic"].rating_calls
        if rc:
            dyn.append(f"N={_lvl(r.community_level)}: {rc.min}–{rc.max}")
    parts = [*sel, Text(""), *cov, Text(""), *cost]
    money = money_lines(report, hide)
    if money:
        parts.append(Text("\n".join(x[: len(x) - len(x.lstrip())] + plain(x) for x in money) + "\n"))
    if notes.items:  # what graphrag actually does where the table's numbers are not what it returns
        parts.append(Text("\n".join(notes.lines()) + "\n"))
    per_version = _dynamic_lines(report)
    if per_version:  # the per-line simulation replaces the version-independent bound
        parts.append(Text(per_version))
    elif dyn:
        parts.append(
            Text(
                "Dynamic community selection, LLM rating calls (num_repeats "
                f"{opts.num_repeats}): " + ", ".join(dyn) + "\n"
            )
        )
    return Group(*parts)


def _dynamic_lines(report) -> str:
    """Dynamic selection per graphrag line at the queried level (analysis/dynamic.py's simulation)."""
    got = dynamic_at(report)
    if got is None:
        return ""
    n, bv = got
    what_if = report.options.relevant is not None
    heads = DYNAMIC_HEADERS[: len(DYNAMIC_HEADERS) if what_if else 5]
    # two header lines ("all relevant" over "calls") keep the table inside an 80-column log
    split = [
        h.split(": ", 1) if ": " in h else (["what-if", h[8:]] if h.startswith("what-if ") else ["", h])
        for h in heads
    ]
    rows = [[a for a, _ in split], [b for _, b in split]] + dynamic_rows(bv, what_if)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        f"Dynamic selection by graphrag version at N={_lvl(n)} (rating calls, num_repeats "
        f"{report.options.num_repeats};",
        "all/none = every/no report rated relevant):",
    ]
    for r in rows:
        lines.append(
            "  "
            + "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
            ).rstrip()
        )
    lines.append(plain(dynamic_settings_line(report.options)))
    for head, items in dynamic_notes(bv, what_if, report.options.query, report.options.use_summary):
        lines += [plain(head)] + ["  " + plain(t) for t in items]
    return "\n".join(lines) + "\n"


MAX_FOCUS_ROWS = 200  # rows listed per behaviour by levels --level N


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
        what = f"{BEHAVIOUR_LABEL[b]}: {count(s.count, 'report')}" if exact else sends(s, b)
        t = Table(title=f"community_level {n} · {what}", box=box.SIMPLE_HEAD, title_justify="left")
        for col, j in (
            ("id", "right"),
            ("level", "right"),
            ("title", "left"),
            ("entities", "right"),
            ("tokens", "right"),
        ):
            # numbers never wrap; the title column gives way first (its cells are cut with '…', not wrapped)
            t.add_column(col, justify=j, overflow="ellipsis", no_wrap=(col != "title"))
        lst = listing.by_behaviour[b]
        # by level, then id; at most MAX_FOCUS_ROWS rows: rich needs ~1 KiB and real time per row,
        # and 100k-community indexes exist
        shown = min(len(lst), MAX_FOCUS_ROWS)
        if lst.total > shown:
            t.caption = f"the first {shown} of {lst.total:,} reports by level and id; -f json lists them all"
            t.caption_justify = "left"
        for i in range(shown):
            t.add_row(
                str(lst.community[i]),
                str(lst.level[i]),
                Text(plain(lst.title[i], 80), no_wrap=True, overflow="ellipsis"),
                _n(lst.entities[i]),
                _n(lst.tokens[i]) if lst.tokens is not None else "—",
            )
        yield t


def _verify_dynamic_line(v) -> Text | None:
    """The dynamic-selection part of --verify, per level (wording in render/verify_words.py)."""
    from graphrag_audit.render.verify_words import dynamic_summary

    if not v.available:
        return None
    got = dynamic_summary(v, lambda t, limit=None: plain(t, limit))
    if got is None:
        return None
    kind, sentence = got
    style = {"agrees": "green", "raised": "bold yellow", "not_run": None}.get(kind, "bold red")
    return Text("verify dynamic: " + sentence, style=style or "")


def _verify_line(v) -> Text:
    """The --verify result in one paragraph (wording in render/verify_words.py)."""
    from graphrag_audit.render.verify_words import summary

    if not v.available:
        return Text("verify: not run: " + plain(v.reason or "graphrag unavailable"))
    label = BEHAVIOUR_LABEL.get(v.behaviour, plain(v.behaviour))
    kind, sentence = summary(v, label, lambda t, limit=None: plain(t, limit), lambda t: t)
    style = {"agrees": "green", "raised": "bold yellow"}.get(kind, "bold red")
    return Text("verify: " + sentence, style=style)
