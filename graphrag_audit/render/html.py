"""One self-contained HTML report (no script, no network, inline SVG charts). The icicle draws every
community at least ``MIN_W`` wide; narrower siblings become "+K" blocks. Untrusted text passes through
``sanitise.html``."""

from __future__ import annotations

import unicodedata
from itertools import accumulate

import numpy as np

from graphrag_audit.render import cells
from graphrag_audit.results.audit import CANNOT_READ
from graphrag_audit.results.tree import SENT_BOTH, SENT_NEITHER, SENT_V1_ONLY, SENT_V2_ONLY, ForestView
from graphrag_audit.sanitise.common import plain
from graphrag_audit.sanitise.html import html_escape as _esc
from graphrag_audit.sanitise.html import html_text as h

# ==== colours (Okabe & Ito, "Color Universal Design", 2008: distinct under deuteranopia, protanopia, tritanopia) ===
#: the Okabe-Ito colours this report uses (names as in the paper)
OKABE_ITO = {
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}
#: fill per ``sent`` mark; "not sent" is a light neutral grey (outside the hues)
SENT_COLOURS = {
    SENT_BOTH: OKABE_ITO["sky blue"],
    SENT_V2_ONLY: OKABE_ITO["orange"],
    SENT_V1_ONLY: OKABE_ITO["reddish purple"],
    SENT_NEITHER: "#DDDDDD",
}
NO_REPORT_COLOUR = "#FFFFFF"  # with a dashed outline
NO_REPORTS_TABLE_COLOUR = "#BBBBBB"  # no community_reports table at all: nothing is sent
#: the --level cut drawn on the icicle (used by nothing else, so a screenshot can find its pixels)
CUT_COLOUR = OKABE_ITO["vermillion"]
#: the depth histogram's bars
BAR_COLOUR = OKABE_ITO["blue"]


CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
SENT_TEXT = {
    SENT_BOTH: "sent by graphrag >= 2.0 and < 2.0",
    SENT_V2_ONLY: "sent only by graphrag >= 2.0",
    SENT_V1_ONLY: "sent only by graphrag < 2.0",
    SENT_NEITHER: "not sent",
}
SENT_LABEL_SHORT = {
    SENT_BOTH: "sent by >= 2.0 and < 2.0",
    SENT_V2_ONLY: "only by >= 2.0",
    SENT_V1_ONLY: "only by < 2.0",
    SENT_NEITHER: "not sent",
}
ICICLE_W, ICICLE_GUTTER, ROW_H = 1300, 64, 34
CUT_NOTE = (
    "The dashed line is the community_level cut: graphrag &gt;= 2.0 sends every report above it; "
    "graphrag &lt; 2.0 sends the row just above it and the leaves above it. Narrow siblings are drawn "
    "together as one “+K” block per level and colour."
)


def _table(heads, rows, attrs=' class="num"', tr=None, cell=_esc, title=-1) -> str:
    """A table of ``rows``, each cell escaped by ``cell``, column ``title`` of class "title"; ``tr``: each
    row's attributes."""
    body = "".join(
        f"<tr{a}>"
        + "".join(
            f'<td class="title">{cell(x)}</td>' if i == title else f"<td>{cell(x)}</td>"
            for i, x in enumerate(row)
        )
        + "</tr>"
        for row, a in zip(rows, tr or [""] * len(rows))
    )
    heads = "".join(f"<th>{_esc(x)}</th>" for x in heads)
    return f"<table{attrs}><thead><tr>{heads}</tr></thead><tbody>{body}</tbody></table>"


def _chosen(flags) -> list[str]:
    return [' class="chosen"' if x else "" for x in flags]


def _text_width(s: str, px: float = 6.6) -> float:
    """Approximate rendered width of ``s`` at 11px sans-serif (wide East Asian glyphs count 2)."""
    return sum(2 * px if unicodedata.east_asian_width(c) in "WF" else px for c in s)


def _fit_px(s: str, width: float) -> str:
    """``s``, or its longest start that fits with "…" after it (nothing when no character fits)."""
    if _text_width(s) <= width:
        return s
    kept = sum(1 for w in accumulate(map(_text_width, s)) if w + _text_width("…") <= width)
    return s[:kept] + "…" if kept else ""


def _header(report) -> str:
    info = report.index
    c = info.counts
    notes = "".join(f"<li>{h(n)}</li>" for n in info.notes)
    evidence = "; ".join(plain(e) for e in info.generation_evidence)
    return (
        f"<header><h1>graphrag-audit report</h1>"
        f'<p class="path">{h(info.path)}</p>'
        f'<p class="path">tables in {h(info.output_dir)}</p>'
        f"<p>generation <b>{h(info.generation)}</b> · {_esc(evidence)}</p>"
        f'<p class="counts">{_esc(cells.size_line(c))} · tree from {h(info.tree_source)}</p>'
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
        + "</header>"
    )


def _tree_table(report) -> str:
    rows = [
        [str(t.level), *map(cells.number, (t.communities, t.leaves, t.reports, t.entities))]
        for t in report.tree_levels
    ]
    table = _table(["level", "communities", "leaves", "reports", "entities"], rows)
    return f'<section id="tree-levels"><h2>Community tree</h2>{table}</section>'


def _levels_table(report) -> str:
    opts = report.options
    if not report.index.has_reports_table:
        return (
            '<section id="levels"><h2>What each community_level N sends</h2>'
            "<p>No community_reports table: nothing is sent to global search.</p></section>"
        )
    heads, rows, notes = cells.level_table(report)
    _cols, cov = cells.coverage_table(report, notes)  # + the clustered entities each selection covers
    total = cells.number(report.index.counts.clustered_entities)
    heads = heads + [f">=2.0 covers (of {total} entities)", f"<2.0 covers (of {total} entities)"]
    rows = [row + c[1:3] for row, c in zip(rows, cov)]
    caption = (
        f"options: level {_esc(str(opts.level))}, {cells.with_source(h(opts.tokenizer), opts, 'tokenizer', h)}, "
        f"max_context_tokens {cells.with_source(cells.number(opts.max_context_tokens), opts, 'max_context_tokens', h)}"
        + ("" if opts.costs else "; token costs not computed (--no-costs)")
    )
    return (
        '<section id="levels"><h2>What each community_level N sends to global search</h2>'
        f'<p class="caption">{caption}</p>'
        + _table(heads, rows, tr=_chosen(row[0] == cells.level_label(opts.level) for row in rows))
        + '<p class="caption">extra = reports &gt;=2.0 sends beyond &lt;2.0; ancestors = reports sent together '
        "with a descendant's; mix = &gt;=2.0 reports per level; stuck = entities whose finest community is "
        "above level N; ents/report = entities per &gt;=2.0 report. Each map call is one LLM call; one "
        f"reduce call follows. {_esc(cells.LEVEL_ONLY_NOTE)}</p>"
        + "".join(f'<p class="caption footnote">{_esc(line)}</p>' for line in notes.lines())
        + "</section>"
    )


#: rows of a <details> list of reports in the dynamic section
DYNAMIC_LISTED = 200


def _finding_items(fs) -> str:
    return "".join(
        f'<li class="{h(f.severity)}"><b>{h(f.severity.upper())}</b> <code>{h(f.rule)}</code> '
        f"{h(f.message)}" + (f'<br><span class="fix">fix: {h(f.fix)}</span>' if f.fix else "") + "</li>"
        for f in fs
    )


def _more(n: int, what: str) -> str:
    return f'<p class="caption">{n:,} {what}</p>' if n > 0 else ""


def _titled(ids, titles: dict, what: str) -> str:
    """A collapsed list of community numbers with their report titles (untrusted: escaped)."""
    ids = list(ids)
    rows = [[int(c), h(titles[c], 200) if c in titles else "—"] for c in ids[:DYNAMIC_LISTED]]
    table = _table(["community", "report title"], rows, ' class="reports"', cell=str, title=1)
    more = _more(len(ids) - len(rows), "more not shown (<code>levels -f json</code> lists every id).")
    return f"<details><summary>{_esc(what)} ({len(ids):,})</summary>{table}{more}</details>"


#: per search section of render/cells.py: the HTML id and heading
SEARCH_SECTIONS = {
    "local": ("local-search", "Local search by graphrag version"),
    "drift": ("drift-search", "DRIFT search by graphrag version"),
    "reduce": ("global-reduce", "Global search's reduce by graphrag version"),
}


def _search(report, kind: str) -> str:
    """The caption, then per graphrag line its heading and table (render/cells.py's search_section)."""
    got = cells.search_section(report, kind)
    if got is None:
        return ""
    caption, headers, tables = got
    section_id, title = SEARCH_SECTIONS[kind]
    return (
        f'<section id="{section_id}"><h2>{title}</h2><p class="caption">{_esc(caption)}</p>'
        + "".join(f"<h3>{_esc(head)}</h3>{_table(headers, rows)}" for head, rows in tables)
        + "</section>"
    )


def _local_what_if(report) -> str:
    """``--entities``: per graphrag line, the reports local search puts in context (names and titles
    escaped)."""
    got = cells.local_what_if_tables(report)
    if got is None:
        return ""
    caption, names, tables = got
    parts = [
        '<section id="local-what-if"><h2>Local search what-if</h2>',
        f'<p class="caption">{h(caption.replace("{names}", ", ".join(names)))}</p>',
    ]
    for head, rows, not_read in tables:
        shown = [[h(x, 200) if i == 2 else h(x) for i, x in enumerate(r)] for r in rows]
        table = _table(cells.WHAT_IF_HEADERS, shown, ' class="reports"', cell=str, title=2)
        parts.append(f"<h3>{_esc(head)}</h3>" + (table if rows else "<p>No community report in context.</p>"))
        if not_read:
            parts.append(
                f"<p>Not read at this N (unknown, or not in a community &lt;= N): {h(', '.join(not_read))}</p>"
            )
    return "".join(parts) + "</section>"


def _dynamic(report) -> str:
    """Dynamic community selection per graphrag line at the queried level (render/cells.py's cells), every
    number of each line, the related findings."""
    head = '<section id="dynamic"><h2>Dynamic community selection by graphrag version</h2>'
    got = cells.dynamic_at(report)
    if got is None:
        why = (
            "No community_reports table: dynamic community selection has nothing to rate."
            if not report.index.has_reports_table
            else "No graphrag line's dynamic community selection reads this index."
        )
        return head + f"<p>{_esc(why)}</p></section>"
    n, bv = got
    opts = report.options
    what_if = opts.relevant is not None
    versions = list(bv.versions.values())
    tr = [
        f' data-family="{h(v.family)}"'
        + (' class="fails"' if v.error is not None else "" if v.descends else ' class="no-descent"')
        for v in versions
    ]
    capped = f" (deeper than the index: as {n})" if opts.level != n else ""
    caption = (
        f"at community_level {_esc(str(opts.level))}{capped} · num_repeats {int(opts.num_repeats)} · "
        f"threshold {int(opts.threshold)} · keep_parent {'yes' if opts.keep_parent else 'no'} · max_level "
        f"{int(opts.max_level)}; all/none relevant = every/no report rated relevant; rating calls count "
        "the repeats"
    )
    if what_if:
        caption += f"; what-if: {len(opts.relevant):,} communities rated relevant (--relevant)"
    parts = [
        head,
        f'<p class="caption">{caption}</p>',
        _table(
            cells.DYNAMIC_HEADERS[: None if what_if else 5],
            cells.dynamic_rows(bv, what_if),
            ' class="num" id="dynamic-by-version"',
            tr,
            h,
        ),
    ]
    for v in versions:
        if v.error is not None or v.descends:
            continue
        why = (
            " (microsoft/graphrag#2004, fixed in 3.0.0 by #2159): it looks a community's children up as ints "
            "among string report keys"
            if v.family == "2.x"
            else ": no candidate child is reachable here"
        )
        parts.append(
            f'<p class="no-descent-note"><b>graphrag {_esc(v.graphrag)} never descends</b>{_esc(why)}; '
            f"with every report relevant it rates only the {len(v.start_ids):,} level-0 reports "
            f"({v.all_relevant.rating_calls:,} rating calls); deeper candidates are rated only by the "
            f"fallback, which rates whole levels (up to max_level {int(opts.max_level)}) while nothing has "
            "been kept.</p>"
        )
    dheads, drows = cells.dynamic_detail_rows(bv, what_if)
    fams = [f' data-family="{h(f)}"' for f in bv.versions]
    dhead = "".join(f"<th{f}>{_esc(x)}</th>" for f, x in zip(fams, dheads[1:]))
    dbody = "".join(
        f'<tr><th scope="row">{_esc(r[0])}</th>'
        + "".join(f"<td{f}>{h(x)}</td>" for f, x in zip(fams, r[1:]))
        + "</tr>"
        for r in drows
    )
    parts.append(
        f'<table class="num" id="dynamic-details"><thead><tr><th></th>{dhead}</tr></thead>'
        f"<tbody>{dbody}</tbody></table>"
        '<p class="caption">waves = communities rated per round of LLM calls (graphrag rates one level '
        "of the queue at a time); cut off = candidates no descent from level 0 reaches when every report "
        "is relevant (some are still rated by the fallback when none is); never rated = candidates no "
        "rating reaches.</p>"
    )
    lheads, lrows = cells.dynamic_level_rows(report)
    if lrows:
        chosen = _chosen(r.community_level == n for r in report.levels)
        parts.append(
            f"<h3>Rating calls at every community_level N (num_repeats {int(opts.num_repeats)})</h3>"
            + _table(lheads, lrows, ' class="num" id="dynamic-per-level"', chosen, h)
            + '<p class="caption">pool = the version-independent bound: the level-0 reports … every '
            "candidate (every report with level &lt;= N), times num_repeats; no graphrag line follows it "
            "exactly. Per line: the rating calls when every report / no report is rated relevant.</p>"
        )
    titles: dict = {}
    listing = report.listing
    if listing is not None and listing.community_level == n:
        lst = listing.by_behaviour["v2"]
        for c, t in zip(lst.community, lst.title):
            titles.setdefault(c, t if t is not None else "(untitled)")
    rated = [v for v in versions if v.error is None]
    starts = list(dict.fromkeys(v.start_ids for v in rated))
    for ids in starts:
        who = ", ".join(v.graphrag for v in rated if v.start_ids == ids)
        who = "" if len(starts) == 1 else f" of graphrag {who}"
        parts.append(_titled(ids, titles, f"Start reports{who}: the level-0 reports rated first"))
    for v in versions:
        if v.what_if is not None:
            parts.append(_titled(v.what_if.kept_ids, titles, f"What-if: reports graphrag {v.graphrag} keeps"))
    fs = [f for f in report.sorted_findings() if f.rule.startswith("dynamic-")]
    parts.append(
        f'<h3>Related findings ({len(fs)})</h3><ul class="findings">{_finding_items(fs) or "<li>none</li>"}'
        "</ul></section>"
    )
    return "".join(parts)


def _sent_attr(forest: ForestView, nd) -> str:
    if nd.sent is not None and nd.has_report:
        return nd.sent
    return "no-report" if forest.has_reports_table else "none"


#: a community narrower than this (viewBox px) is drawn with its narrow siblings as "+K more" blocks
MIN_W = 2.0
#: an aggregate block is drawn at least this wide, so a deep branch under a narrow one stays visible
AGG_MIN_W = 1.0
#: aggregate blocks per level: one per sent mark, in this order
_AGG_ORDER = (SENT_BOTH, SENT_V2_ONLY, SENT_V1_ONLY, SENT_NEITHER, "no-report", "none")
_AGG_TEXT = {**SENT_TEXT, "no-report": "no report", "none": "no community_reports table"}
_FILL = {**SENT_COLOURS, "no-report": NO_REPORT_COLOUR, "none": NO_REPORTS_TABLE_COLOUR}


def icicle_svg(forest: ForestView) -> str:
    """Every community as one rect (x span ∝ entities, row = level); siblings narrower than ``MIN_W`` drawn
    as ``+K more`` blocks per level and sent mark; with a community_level, the cut as a dashed line."""
    nodes = forest.nodes
    value: dict[int, float] = {}
    order = []
    stack = list(forest.roots)
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(nodes[n].children)
    for n in reversed(order):
        nd = nodes[n]
        value[n] = max(float(nd.entities), sum(value[k] for k in nd.children), 1.0)
    rows = max(forest.max_level + 1, 1)
    cut = forest.selection_level if forest.has_reports_table and forest.community_level is not None else None
    height = rows * ROW_H + 4 + (18 if cut is not None else 0)
    span = ICICLE_W - ICICLE_GUTTER
    total = sum(value[r] for r in forest.roots) or 1.0
    parts = [
        f'<svg id="icicle" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {ICICLE_W} {height}" '
        f'width="100%" role="img" aria-label="community tree icicle">'
    ]
    parts += [
        f'<text class="axis" x="4" y="{lv * ROW_H + ROW_H / 2 + 4:.1f}">level {lv}</text>'
        for lv in range(rows)
    ]
    labels = []
    sent_at = "" if forest.community_level is None else f"at community_level {forest.community_level}: "

    def draw(n: int, x0: float, w: float) -> None:
        nd = nodes[n]
        y = nd.level * ROW_H + 2
        tip = [f"community {nd.community} · level {nd.level} · {nd.entities:,} entities"]
        tip.append("leaf" if nd.leaf else f"{len(nd.children)} children, {nd.size - 1:,} communities below")
        if nd.has_report:
            tip.append(f"report: {nd.title or '(untitled)'}")
        elif forest.has_reports_table:
            tip.append("no report")
        if nd.sent is not None and nd.has_report:
            tip.append(f"at community_level {forest.community_level}: {SENT_TEXT[nd.sent]}")
        if nd.other_parents:
            tip.append("also under " + ", ".join(str(p) for p in nd.other_parents))
        dashed = ' stroke-dasharray="3 2"' if forest.has_reports_table and not nd.has_report else ""
        sent = _sent_attr(forest, nd)
        parts.append(
            f'<rect data-community="{nd.community}" data-level="{nd.level}" data-sent="{sent}" '
            f'data-entities="{nd.entities}" x="{x0:.3f}" y="{y:.1f}" width="{max(w, 0.0):.3f}" '
            f'height="{ROW_H - 3}" fill="{_FILL[sent]}"{dashed}><title>{h(" · ".join(tip))}</title></rect>'
        )
        if w >= 22:
            label = str(nd.community)
            if w >= 90 and nd.title:
                label = _fit_px(f"{nd.community} {nd.title}", w - 8)
            labels.append(f'<text class="lbl" x="{x0 + 4:.1f}" y="{y + ROW_H / 2 + 2:.1f}">{h(label)}</text>')

    def aggregate(members: list[int], x0: float, w: float, under: str) -> None:
        acc: dict[tuple[int, str], list] = {}  # (level, sent mark) -> [communities, value, entities]
        todo = list(members)
        while todo:
            nd = nodes[todo.pop()]
            a = acc.setdefault((nd.level, _sent_attr(forest, nd)), [0, 0.0, 0])
            a[0] += 1
            a[1] += value[nd.community]
            a[2] += nd.entities
            todo.extend(nd.children)
        whole = sum(value[m] for m in members) or 1.0
        for lv in sorted({k[0] for k in acc}):
            cx = x0
            y = lv * ROW_H + 2
            for mark in _AGG_ORDER:
                if (lv, mark) not in acc:
                    continue
                k, val, ents = acc[(lv, mark)]
                bw = w * val / whole
                at = sent_at if mark in SENT_TEXT else ""
                tip = f"+{k:,} more at level {lv} {under} · {ents:,} entities · {at}{_AGG_TEXT[mark]}"
                parts.append(
                    f'<rect class="agg" data-aggregate="{k}" data-level="{lv}" data-sent="{mark}" '
                    f'x="{cx:.3f}" y="{y:.1f}" width="{max(bw, AGG_MIN_W):.3f}" height="{ROW_H - 3}" '
                    f'fill="{_FILL[mark]}"><title>{h(tip)}</title></rect>'
                )
                if bw >= 22:
                    labels.append(
                        f'<text class="lbl" x="{cx + 3:.1f}" y="{y + ROW_H / 2 + 2:.1f}">+{k:,}</text>'
                    )
                cx += bw

    def place(kids, x0: float, w: float, parent_value: float, under: str) -> None:
        """Lay ``kids`` out in [x0, x0 + w): wide ones in order, the narrow ones aggregated at the end."""
        wide: list = []
        narrow: list = []
        for k in kids:
            kw = w * value[k] / max(parent_value, 1e-9)
            (wide if kw >= MIN_W else narrow).append((k, kw))
        if len(narrow) == 1 and narrow[0][1] >= AGG_MIN_W:  # one narrow sibling alone: drawn as itself
            wide, narrow = [(k, w * value[k] / max(parent_value, 1e-9)) for k in kids], []
        cx = x0
        for k, kw in wide:  # in community order; the narrow ones follow
            draw(k, cx, kw)
            todo.append((k, cx, kw))
            cx += kw
        if narrow:
            aggregate([k for k, _ in narrow], cx, sum(kw for _, kw in narrow), under)

    todo: list[tuple[int, float, float]] = []
    place(list(forest.roots), float(ICICLE_GUTTER), float(span), total, "among the roots")
    while todo:
        n, x0, w = todo.pop()
        if nodes[n].children:
            place(list(nodes[n].children), x0, w, value[n], f"under community {n}")
    parts.extend(labels)
    if cut is not None:
        y = (cut + 1) * ROW_H + 0.5
        level = forest.community_level
        capped = f" (as {cut})" if cut != level else ""
        parts.append(
            f'<g id="cut-line" data-community-level="{level}" data-cut-level="{cut}">'
            f'<line x1="0" x2="{ICICLE_W}" y1="{y}" y2="{y}" stroke="{CUT_COLOUR}" stroke-width="3" '
            f'stroke-dasharray="14 4"/><text class="cut" x="{ICICLE_W - 4}" y="{y + 14:.1f}" '
            f'text-anchor="end">community_level {level}{capped}: graphrag &gt;= 2.0 sends every report above '
            "this line</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _legend(forest: ForestView) -> str:
    if not forest.has_reports_table:
        return (
            f'<p class="legend"><span class="sw" style="background:{NO_REPORTS_TABLE_COLOUR}"></span>'
            "no community_reports table: nothing is sent</p>"
        )
    c = forest.counts()
    no_rep = sum(1 for nd in forest.nodes.values() if not nd.has_report)
    items = [  # (colour, label, count, shown when the count is 0)
        (SENT_COLOURS[SENT_V2_ONLY], "sent only by graphrag &gt;= 2.0", c[SENT_V2_ONLY], True),
        (SENT_COLOURS[SENT_BOTH], "sent by &gt;= 2.0 and &lt; 2.0", c[SENT_BOTH], True),
        (SENT_COLOURS[SENT_V1_ONLY], "sent only by &lt; 2.0", c[SENT_V1_ONLY], False),
        (SENT_COLOURS[SENT_NEITHER], "not sent", c[SENT_NEITHER], True),
        (NO_REPORT_COLOUR, "no report, dashed outline", no_rep, False),
    ]
    cut = ""
    if forest.community_level is not None:
        cut = (
            f'<span class="cutsw" style="border-top-color:{CUT_COLOUR}"></span>the community_level '
            f"{forest.community_level} cut"
        )
    swatches = "".join(
        f'<span class="sw" style="background:{col}"></span>{txt} ({k:,}) '
        for col, txt, k, always in items
        if k or always
    )
    return f'<p class="legend">{swatches}{cut}</p>'


#: rows of the titled table per graphrag line in the "reports sent" section (every id is listed above it)
SENT_TITLED = 300


def _sent_list(forest: ForestView) -> str:
    """The reports sent at community_level N per graphrag line: every community id grouped by level, then the
    first ``SENT_TITLED`` with their (untrusted: escaped) titles."""
    if not forest.has_reports_table or forest.community_level is None:
        return ""
    parts = [
        f'<section id="sent"><h2>Reports sent at community_level {_esc(str(forest.community_level))}</h2>'
    ]
    for b, marks, who in (
        ("v2", (SENT_BOTH, SENT_V2_ONLY), "graphrag &gt;= 2.0"),
        ("v1", (SENT_BOTH, SENT_V1_ONLY), "graphrag &lt; 2.0"),
    ):
        items = sorted(
            [
                (nd.level, nd.community, nd.title)
                for nd in forest.nodes.values()
                if nd.has_report and nd.sent in marks
            ]
            + [(o.level, o.community, o.title) for o in forest.outside_reports if o.sent in marks]
        )
        by_level: dict[int, list[str]] = {}
        for lv, c, _t in items:
            by_level.setdefault(lv, []).append(str(c))
        ids = "".join(
            f'<p class="ids" data-behaviour="{b}" data-level="{lv}"><b>level {lv}</b> ({len(cs):,}): {", ".join(cs)}</p>'
            for lv, cs in by_level.items()
        )
        rows = [[c, lv, h(t) if t else "(untitled)"] for lv, c, t in items[:SENT_TITLED]]
        table = _table(
            ["community", "level", "report title"], rows, ' class="reports num"', cell=str, title=2
        )
        more = _more(
            len(items) - len(rows),
            "more titles not shown (every id is listed above; "
            "<code>levels --list-reports -f json</code> lists every title).",
        )
        o = forest.outcomes.get(b)  # graphrag.compat's status, marked as the tables mark it
        did, why = f"{who} sends the reports of ", ""
        if o is not None and not o.exact:
            g = _esc(o.graphrag or "")
            did = f"hyp.: the {who} rule selects the reports of "
            why = f" (hypothetical: not what graphrag {g} sends here)"
            if o.returns_zero:
                why = f" (hypothetical: graphrag {g} selects 0 here)"
            elif o.status == CANNOT_READ:
                why = f" (hypothetical: graphrag {g} cannot read this index)"
        summary = f"{did}{cells.count(len(items), 'community', 'communities')}{why}"
        parts.append(
            f'<details data-behaviour="{b}"><summary>{summary}</summary>{ids}{table}{more}</details>'
        )
    return "".join(parts) + "</section>"


def _nice_step(vmax: float) -> int:
    """An integer tick step giving at most 5 intervals up to ``vmax`` (1, 2, 5 × 10^k)."""
    step = 1
    while True:
        for m in (1, 2, 5):
            if vmax / (step * m) <= 5:
                return step * m
        step *= 10


def bar_chart(
    chart_id: str, categories: list[str], series: list[tuple[str, list[int], str]], x_label: str, y_label: str
) -> str:
    """Vertical bars, the series stacked in each category; each piece one ``<rect data-bar>``
    with a ``<title>``."""
    width, height = 620, 260
    left, right, top, bottom = 48, 12, 28, 44
    pw, ph = width - left - right, height - top - bottom
    totals = [sum(vals[i] for _, vals, _ in series) for i in range(len(categories))]
    step = _nice_step(max(totals + [1]))
    vmax = step * max(-(-max(totals + [1]) // step), 1)
    parts = [
        f'<svg id="{chart_id}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{h(y_label)} by {h(x_label)}">'
    ]
    v = 0
    while v <= vmax:
        y = top + ph - ph * v / vmax
        parts.append(
            f'<line class="grid" x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{v:,}</text>'
        )
        v += step
    group = pw / max(len(categories), 1)
    bw = group * 0.72
    for ci, cat in enumerate(categories):
        x = left + ci * group + group * 0.14
        base: float = top + ph
        for name, vals, colour in series:
            val = vals[ci]
            if not val:
                continue
            bh = ph * val / vmax
            base -= bh
            parts.append(
                f'<rect data-bar="{h(cat)}" data-series="{h(name)}" x="{x:.2f}" y="{base:.2f}" '
                f'width="{bw:.2f}" height="{bh:.2f}" fill="{colour}">'
                f"<title>{h(name)} · {h(x_label)} {h(cat)}: {val:,}</title></rect>"
            )
        if totals[ci]:
            parts.append(
                f'<text class="val" x="{x + bw / 2:.2f}" y="{base - 3:.2f}" '
                f'text-anchor="middle">{totals[ci]:,}</text>'
            )
        parts.append(
            f'<text class="axis" x="{x + bw / 2:.2f}" y="{top + ph + 16}" '
            f'text-anchor="middle">{h(cat)}</text>'
        )
    parts.append(
        f'<text class="axis" x="{left + pw / 2:.1f}" y="{height - 6}" '
        f'text-anchor="middle">{h(x_label)}</text>'
    )
    parts.append(f'<text class="axis" x="{left}" y="14">{h(y_label)}</text>')
    if len(series) > 1:
        lx: float = left + 70
        for name, _, colour in series:
            parts.append(
                f'<rect x="{lx}" y="6" width="10" height="10" fill="{colour}"/>'
                f'<text class="axis" x="{lx + 14}" y="15">{h(name)}</text>'
            )
            lx += 14 + _text_width(plain(name), 6.0) + 18
    parts.append("</svg>")
    return "".join(parts)


def entity_bins(values) -> list[tuple[str, int, int]]:
    """Power-of-two bins (label, lo, hi) covering ``values``; a 0 bin only when 0 occurs."""
    vals = [int(v) for v in values]
    out = [("0", 0, 0)] if vals and min(vals) == 0 else []
    hi, lo = max(vals + [1]), 1
    while lo <= hi:
        top = lo * 2 - 1
        out.append((str(lo) if lo == top else f"{lo}–{top}", lo, top))
        lo *= 2
    return out


def _charts(report, forest: ForestView) -> str:
    d = report.depth
    cats = list(d.histogram)
    depth = bar_chart(
        "depth-histogram",
        cats,
        [("roots", [d.histogram[k] for k in cats], BAR_COLOUR)],
        "depth reached below the root (levels)",
        "roots",
    )
    parts = [
        '<section id="charts"><h2>Branch depth and report size</h2><div class="charts">',
        f"<figure>{depth}<figcaption>How deep each of the {len(d.roots):,} roots' subtree reaches; "
        f"depth asymmetry {d.asymmetry:.2f} (0 = even, 1 = all stuck at level 0).</figcaption></figure>",
    ]
    r = report.level(forest.selection_level) if forest.selection_level is not None else None
    if r is not None and report.index.has_reports_table and report.report_entities is not None:
        ents = np.asarray(report.report_entities)
        s2, s1 = r.selected["v2"], r.selected["v1"]
        v2_rows, v1_rows = np.asarray(s2.rows), np.asarray(s1.rows)
        bins = entity_bins(ents[np.union1d(v2_rows, v1_rows)])
        series = [
            (
                f"{SENT_LABEL_SHORT[sent]} ({len(rows):,})",
                [int(((ents[rows] >= lo) & (ents[rows] <= hi)).sum()) for _, lo, hi in bins],
                SENT_COLOURS[sent],
            )
            for sent, rows in (
                (SENT_BOTH, np.intersect1d(v2_rows, v1_rows)),
                (SENT_V2_ONLY, np.setdiff1d(v2_rows, v1_rows)),
                (SENT_V1_ONLY, np.setdiff1d(v1_rows, v2_rows)),
            )
            if sent != SENT_V1_ONLY or len(rows)
        ]
        spread = bar_chart(
            "entities-per-report",
            [b[0] for b in bins],
            series,
            "entities in the report's community",
            "reports",
        )
        who = (
            f"graphrag &gt;= 2.0 sends {len(v2_rows):,}, &lt; 2.0 sends {len(v1_rows):,}"
            if all(x.outcome is None or x.outcome.exact for x in (s2, s1))
            else f"{_esc(cells.sends(s2, 'v2'))}; {_esc(cells.sends(s1, 'v1'))}"
        )
        parts.append(
            f"<figure>{spread}<figcaption>Entities per report sent at community_level {forest.community_level} "
            f"({who}): the reports only &gt;= 2.0 sends are the coarse ancestors.</figcaption></figure>"
        )
    return "".join(parts) + "</div></section>"


def _findings(report) -> str:
    fs = report.sorted_findings()
    items = _finding_items(fs)
    return (
        f'<section id="findings"><h2>Findings ({len(fs)})</h2><ul>{items or "<li>none</li>"}</ul></section>'
    )


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",sans-serif;
margin:24px auto;max-width:1340px;padding:0 16px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.path{font-family:ui-monospace,Menlo,Consolas,monospace;color:#444;word-break:break-all;margin:0}
header p{margin:4px 0}.counts{font-weight:600}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{padding:3px 10px;border-bottom:1px solid #eee}th{background:#f6f6f6;font-weight:600}
table.num td,table.num th{text-align:right}tr.chosen td{font-weight:700;background:#fff7e6}
.caption{color:#555;font-size:12.5px;margin:4px 0}
.legend{font-size:13px}.sw{display:inline-block;width:12px;height:12px;border:1px solid #888;
margin:0 4px -1px 10px}
svg text{font:11px system-ui,sans-serif;fill:#222}svg .axis{fill:#555}svg .lbl{pointer-events:none}
svg .val{font-size:10px;fill:#333}svg line.grid{stroke:#eee}
#icicle rect{stroke:#fff;stroke-width:0.6}#icicle rect[stroke-dasharray]{stroke:#999}
#icicle rect:hover{stroke:#000;stroke-width:1.5}#icicle rect.agg{stroke:none}
#icicle .cut{font-weight:700;fill:#000;paint-order:stroke;stroke:#fff;stroke-width:3px}
.cutsw{display:inline-block;width:22px;height:0;border-top:3px dashed;margin:0 4px 3px 10px}
.scroll{overflow-x:auto;max-width:100%}.ids{margin:4px 0;font-size:12.5px;word-break:break-word}
.charts{display:flex;flex-wrap:wrap;gap:24px}figure{margin:0}figcaption{font-size:12.5px;color:#555;max-width:620px}
#findings li,#dynamic li{margin:3px 0}#findings .fix,#dynamic .fix{color:#555}.error b{color:#b00}.warning b{color:#a60}.info b{color:#06c}
#dynamic h3{font-size:15px;margin:14px 0 6px}#dynamic-details th[scope]{text-align:left}
#dynamic-by-version td:nth-child(-n+2),#dynamic-by-version th:nth-child(-n+2){text-align:left}
tr.no-descent td{background:#fdecea;color:#8a1c12}tr.no-descent td:nth-child(2){font-weight:700}
tr.fails td{background:#f3e5f5}.no-descent-note{border-left:4px solid #c0392b;padding:2px 8px;background:#fdecea}
details{margin:6px 0}summary{cursor:pointer}table.reports td.title{max-width:900px;word-break:break-word}
footer{margin-top:32px;color:#777;font-size:12px}
"""


def render_html(report, forest: ForestView) -> str:
    """The report as one HTML document; ``forest``: the tree to draw (``treeview.build_forest``)."""
    from graphrag_audit import __version__

    n = forest.community_level
    capped = (
        f" (deeper than the index: as {forest.selection_level})"
        if forest.selection_level is not None and forest.selection_level != n
        else ""
    )
    sent = ""
    if report.index.has_reports_table and n is not None:
        at = report.selections_by_level().get(forest.selection_level)
        if at is not None and not all(at[b].outcome is None or at[b].outcome.exact for b in ("v2", "v1")):
            sent = (
                f"<p>{_esc(cells.sends(at['v2'], 'v2'))}; {_esc(cells.sends(at['v1'], 'v1'))}. "
                "The colours show each rule applied to this tree. "
            )
        else:
            sent = (
                f"<p>graphrag &gt;= 2.0 sends <b>{forest.sent_reports['v2']:,}</b> reports, graphrag &lt; 2.0 "
                f"sends <b>{forest.sent_reports['v1']:,}</b>. "
            )
        sent += (
            f"Width ∝ entities; each row is a level; hover a community for its report title. {CUT_NOTE}</p>"
        )
    outside = ""
    if forest.outside_reports:
        listed = ", ".join(
            f"{o.community} (level {o.level}" + (f", {SENT_TEXT[o.sent]}" if o.sent else "") + ")"
            for o in forest.outside_reports[:20]
        )
        more = " …" if len(forest.outside_reports) > 20 else ""
        outside = f'<p class="caption">Reports for communities not in the tree: {listed}{more}</p>'
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>graphrag-audit · {_esc(plain(report.index.name))}</title><style>{STYLE}</style></head><body>"
        f"{_header(report)}{_levels_table(report)}{_dynamic(report)}{_search(report, 'local')}"
        f"{_local_what_if(report)}{_search(report, 'drift')}{_search(report, 'reduce')}"
        f'<section id="tree"><h2>The community tree at community_level {_esc(cells.level_label(n))}{capped}</h2>'
        f"{sent}{_legend(forest)}{icicle_svg(forest)}{outside}</section>"
        f"{_sent_list(forest)}{_charts(report, forest)}{_tree_table(report)}{_findings(report)}"
        f"<footer>graphrag-audit {_esc(__version__)} · self-contained: no scripts, no network requests.</footer>"
        "</body></html>\n"
    )
    # every table inside a <div class="scroll"> (wide tables scroll sideways); a plain replacement is
    # safe: untrusted text is escaped, so every literal "<table" is ours
    return page.replace("<table", '<div class="scroll"><table').replace("</table>", "</table></div>")
