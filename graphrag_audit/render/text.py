"""Terminal renderer (rich). Untrusted text only ever enters as rich ``Text`` (no markup parsing),
after ``sanitise.terminal.for_log`` has made control, bidi and zero-width characters visible
escapes; no line may start with a ``::`` workflow command, whatever the wrapping."""

from __future__ import annotations

import io

from rich import box
from rich.console import Console
from rich.table import Table  # noqa: F401
from rich.text import Text

from graphrag_audit.render.cells import (DYNAMIC_HEADERS, LEVEL_ONLY_NOTE, SELECTION_COLUMNS, dynamic_at, dynamic_notes,
                                        dynamic_rows, dynamic_settings_line,
                                        level_columns, level_table, sends)
from graphrag_audit.render.cost_words import money_lines, with_source
from graphrag_audit.render.numbers import level_label as _lvl, number as _n
from graphrag_audit.sanitise.terminal import for_log as plain, inert_log_lines


# two-line headers keep the columns narrow enough for an 80-column CI log
TEXT_HEADERS = {"n": "N", "v2": ">=2.0\nreports", "v1": "<2.0\nreports", "extra": "extra\n(anc.)",
                "mix": ">=2.0 mix\nL0/L1/…", "level_only": "level N\nonly", "stuck": "stuck\n<N",
                "epr": "ents/rep\nmin·med·max", "v2_tokens": ">=2.0\ntokens", "v1_tokens": "<2.0\ntokens",
                "map_calls": "map calls\n>=2.0/<2.0"}

SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
BEHAVIOUR_LABEL = {"v2": "graphrag >= 2.0", "v1": "graphrag < 2.0", "level_only": "level N only",
                   "dynamic": "dynamic pool"}


def render_text(report, *, width: int | None = None, color: bool = False, focus: int | None = None,
                **_ignored) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width or 100, force_terminal=color, no_color=not color,
                      color_system="standard" if color else None, highlight=False, emoji=False,
                      soft_wrap=False, legacy_windows=False)
    info = report.index
    c = info.counts
    console.print(Text.assemble(("graphrag-audit ", "bold"), (plain(info.path), "bold")))
    console.print(Text("tables in " + plain(info.output_dir)))
    console.print(Text(f"generation {info.generation}  ·  " + "; ".join(plain(e) for e in info.generation_evidence)))
    for note in info.notes:
        console.print(Text("note: " + plain(note)))
    console.print(Text(
        f"{_n(c.entities)} entities · {_n(c.communities)} communities · {_n(c.reports)} reports · "
        f"{_n(c.roots)} roots · {c.levels} levels · tree from {info.tree_source}"))
    console.print()

    t = Table(title="Community tree", box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("level", "communities", "leaves", "reports", "entities"):
        t.add_column(col, justify="right")
    for tl in report.tree_levels:
        t.add_row(str(tl.level), _n(tl.communities), _n(tl.leaves), _n(tl.reports), _n(tl.entities))
    console.print(t)

    if report.index.has_reports_table:
        console.print(_levels_table(report))
    else:
        console.print(Text("No community_reports table: nothing is sent to global search.\n"))

    d = report.depth
    if d.histogram:
        hist = "  ".join(f"{k}: {v}" for k, v in d.histogram.items())
        console.print(Text(f"Branch depth reached by the {c.roots} roots — {hist}  ·  "
                           f"depth asymmetry {d.asymmetry:.2f} (0 = even, 1 = all stuck at level 0)"))
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

    fs = report.sorted_findings()
    console.print(Text(f"Findings ({len(fs)})", style="bold"))
    if not fs:
        console.print(Text("  none"))
    for f in fs:
        console.print(Text.assemble(
            (f"  {f.severity.upper():7} ", SEV_STYLE[f.severity]), (f"{f.rule}: ", "bold"), plain(f.message)))
    return inert_log_lines(buf.getvalue())


def _levels_table(report):
    """Two tables (selection, then depth and cost), each narrow enough for an 80-column log."""
    from rich.console import Group

    opts = report.options
    costs = bool(opts.costs)
    sel = Table(title="What each community_level N sends to global search", box=box.SIMPLE_HEAD,
                title_justify="left")
    cost = Table(title=f"Depth and cost per N ({with_source(opts.tokenizer, opts, 'tokenizer', plain)}, "
                       f"max_context_tokens {with_source(f'{opts.max_context_tokens:,}', opts, 'max_context_tokens', plain)})"
                 if costs else "Depth per N",
                 box=box.SIMPLE_HEAD, title_justify="left")
    _, cells, notes = level_table(report)
    keys = [key for key, _ in level_columns(report)]
    k = len(SELECTION_COLUMNS)
    for i, key in enumerate(keys):
        if i == k:  # the second table repeats N
            cost.add_column("N", justify="right", no_wrap=True)
        (sel if i < k else cost).add_column(TEXT_HEADERS[key], justify="right", no_wrap=True)
    for r, row in zip(report.levels, cells):
        style = "bold" if r.community_level == opts.level else None
        sel.add_row(*row[:k], style=style)
        cost.add_row(row[0], *row[k:], style=style)
    sel.caption = ("extra = reports >=2.0 sends beyond <2.0; anc. = reports sent together with a descendant's; "
                   "mix = >=2.0 reports per level; " + LEVEL_ONLY_NOTE)
    cost.caption = ("stuck = entities whose finest community is above level N; ents/rep = entities per "
                    ">=2.0 report. Each map call is one LLM call; one reduce call follows.")
    sel.caption_justify = cost.caption_justify = "left"
    dyn = []
    for r in report.levels:
        rc = r.selected["dynamic"].rating_calls
        if rc:
            dyn.append(f"N={_lvl(r.community_level)}: {rc.min}–{rc.max}")
    parts = [sel, cost]
    money = money_lines(report)
    if money:
        parts.append(Text("\n".join(x[:len(x) - len(x.lstrip())] + plain(x) for x in money) + "\n"))
    if notes.items:  # what graphrag actually does where the table's numbers are not what it returns
        parts.append(Text("\n".join(notes.lines()) + "\n"))
    per_version = _dynamic_lines(report)
    if per_version:  # the per-line simulation replaces the version-independent bound
        parts.append(Text(per_version))
    elif dyn:
        parts.append(Text("Dynamic community selection, LLM rating calls (num_repeats "
                          f"{opts.num_repeats}): " + ", ".join(dyn) + "\n"))
    return Group(*parts)


def _dynamic_lines(report) -> str:
    """Dynamic selection per graphrag line at the queried level (analysis/dynamic.py's simulation)."""
    got = dynamic_at(report)
    if got is None:
        return ""
    n, bv = got
    what_if = report.options.relevant is not None
    heads = DYNAMIC_HEADERS[:len(DYNAMIC_HEADERS) if what_if else 5]
    # two header lines ("all relevant" over "calls") keep the table inside an 80-column log
    split = [h.split(": ", 1) if ": " in h else (["what-if", h[8:]] if h.startswith("what-if ") else ["", h])
             for h in heads]
    rows = [[a for a, _ in split], [b for _, b in split]] + dynamic_rows(bv, what_if)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"Dynamic selection by graphrag version at N={_lvl(n)} (rating calls, num_repeats "
             f"{report.options.num_repeats};", "all/none = every/no report rated relevant):"]
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                     .rstrip())
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
        yield Text(f"community_level {n}: the audit listed the reports of community_level "
                   f"{report.options.level} only.\n")
        return
    for b in ("v2", "v1", "level_only"):
        s = r.selected[b]
        exact = b == "level_only" or s.outcome is None or s.outcome.exact
        what = f"{BEHAVIOUR_LABEL[b]}: {s.count} reports" if exact else sends(s, b)
        t = Table(title=f"community_level {n} · {what}", box=box.SIMPLE_HEAD, title_justify="left")
        for col, j in (("id", "right"), ("level", "right"), ("title", "left"), ("entities", "right"),
                       ("tokens", "right")):
            # numbers never wrap; the title column gives way first (its cells are cut with '…', not wrapped)
            t.add_column(col, justify=j, overflow="ellipsis", no_wrap=(col != "title"))
        lst = listing.by_behaviour[b]
        # by level, then id; at most MAX_FOCUS_ROWS rows: rich needs ~1 KiB and real time per row,
        # and 100k-community indexes exist
        shown = min(len(lst), MAX_FOCUS_ROWS)
        if lst.total > shown:
            t.caption = (f"the first {shown} of {lst.total:,} reports by level and id; "
                         f"-f json lists them all")
            t.caption_justify = "left"
        for i in range(shown):
            t.add_row(str(lst.community[i]), str(lst.level[i]),
                      Text(plain(lst.title[i], 80), no_wrap=True, overflow="ellipsis"), _n(lst.entities[i]),
                      _n(lst.tokens[i]) if lst.tokens is not None else "—")
        yield t


def _verify_dynamic_line(v: dict) -> Text | None:
    """The dynamic-selection part of --verify, per level (wording in render/verify_words.py)."""
    from graphrag_audit.render.verify_words import dynamic_summary

    if not v.get("available"):
        return None
    got = dynamic_summary(v, lambda t, limit=None: plain(t, limit))
    if got is None:
        return None
    kind, sentence = got
    style = {"agrees": "green", "raised": "bold yellow", "not_run": None}.get(kind, "bold red")
    return Text("verify dynamic: " + sentence, style=style or "")


def _verify_line(v: dict) -> Text:
    """The --verify result in one paragraph (wording in render/verify_words.py)."""
    from graphrag_audit.render.verify_words import summary

    if not v.get("available"):
        return Text("verify: not run: " + plain(v.get("reason", "graphrag unavailable")))
    label = BEHAVIOUR_LABEL.get(v.get("behaviour"), plain(v.get("behaviour")))
    kind, sentence = summary(v, label, lambda t, limit=None: plain(t, limit), lambda t: t)
    style = {"agrees": "green", "raised": "bold yellow"}.get(kind, "bold red")
    return Text("verify: " + sentence, style=style)
