"""Terminal renderer of the community forest (``results.tree.TreeView``) with rich.

Each row is the tree guide, the community number and its report title, padded or cut to a
fixed number of terminal *cells* (East Asian wide characters count two, measured with rich's
cell functions), then right-aligned columns: level, entities, leaf/collapsed marker and, with a
community_level N, what N sends. Untrusted text enters only as rich ``Text`` (no markup), after
``sanitise.common.plain``.
"""

from __future__ import annotations

import io

from rich.cells import cell_len, get_character_cell_size
from rich.console import Console
from rich.text import Text

from graphrag_audit.render.cells import hypothetical_rule_note
from graphrag_audit.render.console import no_trailing_blanks
from graphrag_audit.render.numbers import count
from graphrag_audit.render.text_lines import wrap as wrap_words
from graphrag_audit.results.audit import HYPOTHETICAL
from graphrag_audit.results.tree import SENT_BOTH, SENT_NEITHER, SENT_V1_ONLY, SENT_V2_ONLY, Row, TreeView
from graphrag_audit.sanitise.common import cut_point
from graphrag_audit.sanitise.terminal import for_log as plain
from graphrag_audit.sanitise.terminal import inert_log_lines

SENT_LABEL = {SENT_BOTH: "both", SENT_V2_ONLY: "v2 only", SENT_V1_ONLY: "v1 only", SENT_NEITHER: "—"}
SENT_STYLE = {SENT_BOTH: "green", SENT_V2_ONLY: "yellow", SENT_V1_ONLY: "magenta", SENT_NEITHER: "dim"}
LEVEL_W, ENT_W, BELOW_W, SENT_W = 5, 8, 12, 7
MIN_LEFT = 16
HEAD_LABEL = "community · report title"


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


def _n(v: int) -> str:
    return f"{v:,}"


def _guide(row: Row) -> str:
    if row.depth == 0:
        return ""
    return "".join("│   " if g else "    " for g in row.guides) + ("└── " if row.last else "├── ")


def _title_of(forest, nd) -> tuple[str, str]:
    if nd.has_report:
        return nd.title or "(untitled report)", ""
    if forest.has_reports_table:
        return "(no report)", "dim"
    return "", ""


def _listed(ids, limit: int) -> str:
    """``ids`` joined by commas; past ``limit`` the first ones and how many more."""
    ids = list(ids)
    more = f", … {len(ids) - limit} more" if len(ids) > limit else ""
    return ", ".join(str(c) for c in ids[:limit]) + more


def _number(nd) -> str:
    number = str(nd.community)
    if nd.other_parents:
        number += " (also under " + _listed(nd.other_parents, 5) + ")"
    return number


def _widest_left(view: TreeView) -> int:
    """Cells the left column needs: the widest guide + number + title (or "more" label)."""
    widest = cell_len(HEAD_LABEL)
    for row in view.rows:
        if row.kind == "more":
            widest = max(widest, cell_len(_guide(row) + _more_label(row)))
        else:
            nd = view.forest.nodes[row.community]
            widest = max(widest, cell_len(_guide(row) + _number(nd) + " " + _title_of(view.forest, nd)[0]))
    return widest


def _more_label(row: Row) -> str:
    return _more_labels(row)[0]


def _more_labels(row: Row) -> list[str]:
    """The "… N more" row's label, longest first: the shorter ones drop words, never the parent id."""
    if row.community < 0:
        roots = f"… {_n(row.more)} more {'root' if row.more == 1 else 'roots'}"
        return [
            f"{roots} ({_n(row.more_communities)} {_plural(row.more_communities, 'community', 'communities')}, "
            f"{_n(row.more_leaves)} {_plural(row.more_leaves, 'leaf', 'leaves')})",
            roots,
        ]
    what = _plural(row.more_communities, "community", "communities")
    leaves = f"({_n(row.more_leaves)} {_plural(row.more_leaves, 'leaf', 'leaves')})"
    under = f"under {row.community}"
    return [
        f"… {_n(row.more_communities)} more {what} {leaves} {under}",
        f"… {_n(row.more_communities)} more {leaves} {under}",
        f"… {_n(row.more_communities)} more {under}",
        f"+{_n(row.more_communities)} {under}",
    ]


def _plural(k: int, one: str, many: str) -> str:
    return one if k == 1 else many


def _fitted_more(row: Row, cells: int) -> str:
    """The longest label of :func:`_more_labels` that fits ``cells``; the last one cut from the left when
    none does, so that the parent id at its end is what stays."""
    labels = _more_labels(row)
    for label in labels:
        if cell_len(label) <= cells:
            return label
    last = labels[-1]
    return "…" + last[len(last) - max(cells - 1, 0) :] if cells > 0 else ""


def render_tree(
    view: TreeView, *, width: int | None = None, color: bool = False, heading: list[str] | None = None
) -> str:
    """The view as text lines (``heading`` lines first, escaped here)."""
    forest = view.forest
    nodes = forest.nodes
    width = max(width or 100, 40)
    with_sent = forest.community_level is not None and forest.has_reports_table
    right_w = 2 + LEVEL_W + 2 + ENT_W + 2 + BELOW_W + ((2 + SENT_W) if with_sent else 0)
    left_w = max(min(width - right_w, _widest_left(view)), MIN_LEFT)
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=False,
        legacy_windows=False,
    )

    def out(text: Text, wrap: bool = False, ours: bool = False) -> None:
        text.rstrip()
        if ours:  # our own lines: wrapped only where no GLUE holds words together, no trailing blank
            words = [w if cell_len(w) <= width else w.replace(GLUE, " ") for w in text.plain.split(" ")]
            for line in wrap_words(" ".join(words), width, "", ""):
                console.print(
                    Text(line.replace(GLUE, " ").rstrip(), style=text.style),
                    no_wrap=True,
                    overflow="crop",
                    crop=False,
                )
        elif wrap:
            console.print(text, overflow="fold")
        else:
            console.print(text, no_wrap=True, overflow="crop", crop=False)

    for i, line in enumerate(heading or []):
        out(Text(plain(line), style="bold" if i == 0 else ""), wrap=True)
    for line in _summary(view):
        out(Text(line), wrap=True, ours=True)
    if with_sent:
        v1 = " · v1 only = only < 2.0 sends it" if forest.counts()[SENT_V1_ONLY] else ""
        items = [
            _glued(x)
            for x in (
                f"N={forest.community_level} column: both = sent by >= 2.0 and < 2.0",
                "v2 only = only >= 2.0 sends it",
                *(["v1 only = only < 2.0 sends it"] if v1 else []),
                "— = not sent",
            )
        ]
        hyp = _hyp_legend(forest)  # a sentence: it may break between its words
        items += [hyp] if hyp else []
        # a line breaks between the legend's items only, the "·" staying at the end of the line
        out(
            Text(" ".join(x + (GLUE + "·" if i < len(items) - 1 else "") for i, x in enumerate(items))),
            wrap=True,
            ours=True,
        )
    crumbs = view.breadcrumb()
    if crumbs:
        if len(crumbs) > 8:  # a community deep in a long chain: its first and last ancestors
            crumbs = [*crumbs[:3], f"… {len(crumbs) - 7:,} more …", *crumbs[-4:]]
        out(Text("under " + " › ".join(str(c) for c in crumbs)), wrap=True)
    out(Text(""))
    head = Text(fit(HEAD_LABEL, left_w), style="bold")
    head.append(
        "  " + "level".rjust(LEVEL_W) + "  " + "entities".rjust(ENT_W) + "  " + "below".ljust(BELOW_W),
        style="bold",
    )
    if with_sent:
        head.append("  " + f"N={forest.community_level}".ljust(SENT_W), style="bold")
    out(head)

    for row in view.rows:
        guide = _guide(row)
        if row.kind == "more":
            # the row has no numbers: its label may run on over the empty columns to the line's end
            t = Text(guide, style="dim")
            room = max(left_w - cell_len(guide), 0)
            label = _more_label(row)
            if cell_len(label) > room:
                label = _fitted_more(row, max(width - cell_len(guide), 0))
            t.append(fit(label, max(room, cell_len(label))), style="dim italic")
            out(t)
            continue
        nd = nodes[row.community]
        number = _number(nd)
        title, title_style = _title_of(forest, nd)
        prefix = guide + number + " "
        avail = left_w - cell_len(prefix)
        t = Text()
        if avail < 1:  # very deep and narrow: cut the guide and number too
            t.append(fit(prefix, left_w), style="dim")
        else:
            t.append(guide, style="dim")
            t.append(number + " ", style="bold")
            t.append(fit(title, avail), style=title_style)
        if nd.leaf:
            below = "leaf"
        elif row.hidden_children == len(nd.children):
            below = f"▸ {_n(row.hidden_below)} hidden"
        elif row.hidden_below:
            below = f"{_n(row.hidden_below)} hidden"
        else:
            below = ""
        t.append("  " + str(nd.level).rjust(LEVEL_W) + "  " + _n(nd.entities).rjust(ENT_W) + "  ")
        t.append(below.ljust(BELOW_W), style="dim" if below != "leaf" else "")
        if with_sent:
            mark = SENT_LABEL[nd.sent] if nd.has_report else ""
            t.append("  " + mark.ljust(SENT_W), style=SENT_STYLE.get(nd.sent, "") if nd.has_report else "")
        out(t)

    for line in _footer(view):
        out(Text(line, style="dim"), wrap=True)
    return no_trailing_blanks(inert_log_lines(buf.getvalue()))


#: holds the words of one item of a heading line together when it wraps (printed as a space)
GLUE = "\u00a0"


def _glued(text: str) -> str:
    return text.replace(" ", GLUE)


def _hyp_legend(f) -> str:
    """The legend's word on ``hyp.``: which graphrag does not send what its rule selects here."""
    who = [
        w
        for b, w in (("v2", ">= 2.0"), ("v1", "< 2.0"))
        if f.outcomes.get(b) is not None and not f.outcomes[b].exact
    ]
    return hypothetical_rule_note(who)


def _summary(view: TreeView) -> list[str]:
    f = view.forest
    levels = f.max_level + 1
    n_reports = sum(nd.reports for nd in f.nodes.values()) + len(f.outside_reports)
    items = [
        count(len(f.nodes), "community", "communities"),
        count(levels, "level"),
        count(len(f.roots), "root"),
        count(n_reports, "report") if f.has_reports_table else "no community_reports table",
    ]
    lines = [f"{GLUE}· ".join(map(_glued, items))]
    if f.community_level is not None and not f.has_reports_table:
        lines.append(f"community_level {f.community_level}: nothing is sent (no community_reports table)")
    elif f.community_level is not None:
        c = f.counts()
        n = f.community_level
        capped = (
            f" (deeper than the index: as {f.selection_level})"
            if f.selection_level is not None and f.selection_level != n
            else ""
        )
        v1_only = f", {_glued(f'v1 only {_n(c[SENT_V1_ONLY])}')}" if c[SENT_V1_ONLY] else ""
        lines.append(
            f"community_level {n}{capped}: graphrag >= 2.0 {_sends(f, 'v2')}, "
            f"< 2.0 {_sends(f, 'v1')} ({_glued(f'both {_n(c[SENT_BOTH])}')}, "
            f"{_glued(f'v2 only {_n(c[SENT_V2_ONLY])}')}{v1_only})"
        )
    return lines


def _sends(f, b: str) -> str:
    """What graphrag >= 2.0 (``v2``) or < 2.0 (``v1``) sends at N, its rule's count marked ``hyp.`` where
    that graphrag does not send it (graphrag.compat's status, as ``levels`` marks it)."""
    k = f.sent_reports[b]
    shown = count(k, "report") if b == "v2" else _n(k)
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
            f"showing {_n(len(view.shown))} of {_n(view.in_scope)} communities "
            f"(largest subtrees first); --max-lines 0 shows all, --root C zooms in, --depth D limits depth"
        )
    if f.cycle_roots:
        out.append("parent chain loops: shown as extra roots: " + _listed(f.cycle_roots, 10))
    if f.outside_reports:
        parts = []
        for r in f.outside_reports[:10]:
            sent = (
                f", {'not sent' if r.sent == SENT_NEITHER else SENT_LABEL[r.sent]}"
                if r.sent is not None
                else ""
            )
            parts.append(f"{r.community} (level {r.level}{sent})")
        more = f", … {len(f.outside_reports) - 10} more" if len(f.outside_reports) > 10 else ""
        out.append(
            f"{len(f.outside_reports):,} report(s) for communities not in the tree: "
            + ", ".join(parts)
            + more
        )
    return out
