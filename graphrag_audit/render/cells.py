"""Cell text, numbers and wording shared by the renderers: no untrusted text here, so any format
may print these without escaping beyond its own syntax."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator

from graphrag_audit.results.audit import HYPOTHETICAL
from graphrag_audit.sanitise.common import current_charset, plain

# ==== numbers =============================================================================================
MISSING = "—"


def number(v) -> str:
    """``1,234``; ``1,234.50`` for a float; ``yes``/``no`` for a bool; ``—`` for None."""
    if v is None:
        return MISSING
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.2f}"
    return f"{v:,}"


def count(n: int, one: str, many: str | None = None) -> str:
    """``1 community``, ``2,345 communities`` (``many`` default: ``one`` + ``s``, ``y`` -> ``ies``)."""
    if many is None:
        many = one[:-1] + "ies" if one.endswith("y") and one[-2:-1] not in "aeiou" else one + "s"
    return f"{n:,} {one if n == 1 else many}"


def share(num, den) -> str:
    """``num`` as a whole percentage of ``den`` (``—`` when ``den`` is 0)."""
    return f"{num / den:.0%}" if den else MISSING


def level_label(n) -> str:
    """A community_level: ``2``, or ``None`` for no level filter."""
    return "None" if n is None else str(n)


# ==== plain-text lines at a width =========================================================================
def cell_width(text: str) -> int:
    """Terminal cells ``text`` takes: 2 per wide or full-width character, 0 per combining mark."""
    if text.isascii():
        return len(text)
    n = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return n


def wrap(text: str, width: int, indent: str = "", subsequent: str | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` cells, broken between words (a run of spaces counts
    as one): the first line starts with ``indent``, the others with ``subsequent`` (default:
    ``indent`` plus two spaces). A word wider than a line is cut into pieces that fit."""
    rest = indent + "  " if subsequent is None else subsequent
    lines: list[str] = []
    cur, used, empty = indent, cell_width(indent), True
    for word in (w for w in text.split(" ") if w):
        w = cell_width(word)
        if not empty and used + 1 + w <= width:
            cur, used = cur + " " + word, used + 1 + w
            continue
        if not empty:
            lines.append(cur)
            cur, used, empty = rest, cell_width(rest), True
        if used + w <= width:
            cur, used, empty = cur + word, used + w, False
            continue
        for ch in word:  # wider than a line: cut where the line is full
            cw = cell_width(ch)
            if not empty and used + cw > width:
                lines.append(cur)
                cur, used = rest, cell_width(rest)
            cur, used, empty = cur + ch, used + cw, False
    lines.append(cur)
    return lines


def wrap_all(lines: list[str], width: int) -> list[str]:
    """Each line wrapped at ``width`` (:func:`wrap`), its own leading spaces kept as the indent and
    two more for its continuation lines; empty lines kept."""
    out: list[str] = []
    for line in lines:
        if cell_width(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        indent = line[: len(line) - len(body)]
        out += wrap(body, width, indent)
    return out


# ==== streamed output =====================================================================================
#: pieces are handed out joined up to about this many characters
CHUNK_CHARS = 1 << 16


def joined(pieces: Iterable[str]) -> Iterator[str]:
    """``pieces`` joined into chunks of at least :data:`CHUNK_CHARS` characters (read at each call)."""
    buf: list[str] = []
    n = 0
    for piece in pieces:
        buf.append(piece)
        n += len(piece)
        if n >= CHUNK_CHARS:
            yield "".join(buf)
            buf, n = [], 0
    if buf:
        yield "".join(buf)


def with_source(value: str, opts, knob: str, clean=str) -> str:
    """``value`` followed by `` (where it came from)`` unless graphrag's default (``clean`` escapes it)."""
    where = dict(opts.costs_from).get(knob, "graphrag default")
    return value if where == "graphrag default" else f"{value} ({clean(where)})"


#: trees with more levels list the estimate at --level and None only
MONEY_ALL_LEVELS = 16


def money_lines(report, hide=frozenset()) -> list[str]:
    """``--price-in/--price-out``: one query's estimated cost per N and graphrag line, as plain lines;
    [] without prices or costs. ``hide``: the graphrag lines left out."""
    from graphrag_audit.results.money import ASSUMPTION_IN, ASSUMPTION_OUT, ASSUMPTION_REST, money, usd

    m = money(report)
    if m is None or not report.options.costs:
        return []
    rates, counted = [], []
    for key, unit, assumption in (("in", "input", ASSUMPTION_IN), ("out", "output", ASSUMPTION_OUT)):
        if m[f"price_{key}_per_million"] is not None:
            rates.append(f"${m[f'price_{key}_per_million']:g}/M {unit}")
            counted.append(assumption)
    levels = m["levels"]
    if len(levels) > MONEY_ALL_LEVELS:
        levels = [e for e in levels if e["community_level"] in (report.options.level, None)]
    lines = [f"Estimated cost of one query (USD; {', '.join(rates)}):"]
    approx = False
    for e in levels:
        parts = []
        for b, label in (("v2", ">=2.0"), ("v1", "<2.0")):
            c = e.get(b)
            if c is None or b in hide:
                continue
            approx = approx or not c["tokens_exact"]
            parts.append(f"{label} {usd(c['usd'])}")
        if parts:
            lines.append(f"  N={level_label(e['community_level'])}: " + ", ".join(parts))
    estimate = " Token counts are estimates (--tokenizer estimate)." if approx else ""
    return lines + [f"Counted: {'; '.join(counted + [ASSUMPTION_REST])}.{estimate}"]


# ==== table cells =========================================================================================
# (key, header) of the per-level table; SELECTION_COLUMNS then DEPTH_COLUMNS (+ COST_COLUMNS)
SELECTION_COLUMNS = [
    ("n", "N"),
    ("v2", ">=2.0 reports"),
    ("v1", "<2.0 reports"),
    ("extra", "extra (ancestors)"),
    ("mix", ">=2.0 mix L0/L1/…"),
    ("level_only", "level N only"),
]
DEPTH_COLUMNS = [("stuck", "entities stuck <N"), ("epr", "ents/report min·med·max (>=2.0)")]
COST_COLUMNS = [
    ("v2_tokens", ">=2.0 tokens"),
    ("v1_tokens", "<2.0 tokens"),
    ("map_calls", "map calls >=2.0/<2.0"),
]


#: the ">=2.0 mix" cell lists at most this many levels (a 1,000-level index would otherwise put
#: 1,000 numbers in one cell, and O(levels²) of them in the table)
MIX_LEVELS = 8


def mix_cell(counts: list[int]) -> str:
    """Reports per level, L0/L1/…; past :data:`MIX_LEVELS` levels the first ones and a count."""
    if not counts:
        return "—"
    if len(counts) <= MIX_LEVELS:
        return "/".join(str(c) for c in counts)
    shown = MIX_LEVELS - 1
    return "/".join(str(c) for c in counts[:shown]) + f"/… (+{len(counts) - shown:,} levels)"


def size_line(c) -> str:
    """The index's size in one line of our own words: ``4 entities · 1 community · …``."""
    return (
        f"{count(c.entities, 'entity', 'entities')} · {count(c.communities, 'community', 'communities')} · "
        f"{count(c.reports, 'report')} · {count(c.roots, 'root')} · {count(c.levels, 'level')}"
    )


def level_columns(report, hide=frozenset()) -> list[tuple[str, str]]:
    """(key, header) of the per-level table; without the columns of the graphrag lines in ``hide``
    (:func:`hypothetical_behaviours`), the map-call column then showing the other line's alone."""
    cols = SELECTION_COLUMNS + DEPTH_COLUMNS + (COST_COLUMNS if report.options.costs else [])
    if not hide:
        return cols
    gone = set().union(*(HYPOTHETICAL_KEYS[b] for b in hide))
    (shown,) = {"v2", "v1"} - set(hide)
    return [
        (k, f"map calls {BEHAVIOUR_SHORT[shown]}" if k == "map_calls" else h)
        for k, h in cols
        if k not in gone
    ]


# ---- --hide-hypothetical: the columns of a graphrag line that cannot run on this index ---------------
#: per graphrag line, the per-level table's columns that are about it alone (or about both lines: extra)
HYPOTHETICAL_KEYS = {
    "v1": frozenset({"v1", "extra", "v1_entities", "v1_text_units", "v1_tokens"}),
    "v2": frozenset({"v2", "extra", "mix", "epr", "v2_entities", "v2_text_units", "v2_tokens"}),
}
BEHAVIOUR_SHORT = {"v2": ">=2.0", "v1": "<2.0"}


def hypothetical_behaviours(report) -> frozenset:
    """The graphrag lines whose selection no graphrag of that line returns at some level (what
    ``--hide-hypothetical`` leaves out); empty when that is both lines."""
    hyp = _hypothetical_lines(report)
    return frozenset() if len(hyp) > 1 else hyp


def _hypothetical_lines(report) -> frozenset:
    return frozenset(
        b
        for b in ("v2", "v1")
        if any(r.selected[b].outcome is not None and not r.selected[b].outcome.exact for r in report.levels)
    )


def hidden_note(report, hide_hypothetical: bool, short: dict) -> str:
    """The sentence (with a leading space) that says what ``--hide-hypothetical`` left out, or that it could
    leave nothing out; empty without the option. ``short``: each line's short name in the medium."""
    if not hide_hypothetical:
        return ""
    hide = hypothetical_behaviours(report)
    if hide:
        return (
            " " + " and ".join(short[b] for b in sorted(hide)) + " columns left out (--hide-hypothetical: no "
            "graphrag of that line returns these numbers here)."
        )
    if _hypothetical_lines(report):
        return (
            " --hide-hypothetical left nothing out: no graphrag line returns these numbers here as written."
        )
    return " --hide-hypothetical left nothing out: every number is what a graphrag returns here."


# ---- what graphrag actually does: markers and footnotes (decided in compat.py) -------------
SUPERSCRIPTS = "¹²³⁴⁵⁶⁷⁸⁹"
BEHAVIOUR_WHO = {"v2": "graphrag >= 2.0", "v1": "graphrag < 2.0"}
LEVEL_ONLY_NOTE = (
    "level N only = the reports at exactly level N, as graphrag's docs describe community_level; "
    "no graphrag version selects exactly these."
)


#: the markers where the output's encoding lacks the superscripts (``PYTHONIOENCODING=ascii``): chosen
#: before layout, so the table's columns stay aligned
ASCII_MARKERS = tuple(f"^{i}" for i in range(1, len(SUPERSCRIPTS) + 1))


class Footnotes:
    """Markers for the selections whose graphrag status needs a note, numbered by first use."""

    def __init__(self):
        self.items: dict[str, str] = {}  # note -> marker, in first-use order
        self._markers: str | tuple[str, ...] = SUPERSCRIPTS
        charset = current_charset()
        try:
            SUPERSCRIPTS.encode(charset or "utf-8")
        except UnicodeEncodeError:
            self._markers = ASCII_MARKERS

    def marker(self, outcome) -> str:
        if outcome is None or not outcome.note:
            return ""
        if outcome.note not in self.items:
            k = len(self.items)
            self.items[outcome.note] = self._markers[k] if k < len(self._markers) else f"[{k + 1}]"
        return self.items[outcome.note]

    def lines(self) -> list[str]:
        """One line per note: the marker, then the note (our own text, no index content)."""
        return [f"{m} {note}" + ("" if note.endswith(".") else ".") for note, m in self.items.items()]


def count_cell(stats, notes: Footnotes) -> str:
    """A selection's report count as that graphrag sees it: the count when graphrag returns it,
    else what graphrag does (``0``, ``cannot read``) with the rule's count labelled ``hyp.``."""
    o = stats.outcome
    m = notes.marker(o)
    if o is None or o.exact:
        return number(stats.count) + m
    if o.status == HYPOTHETICAL and not o.returns_zero:  # the comparison rule, which that graphrag cannot run
        return f"hyp. {number(stats.count)}{m}"
    actual = "0" if o.returns_zero else "cannot read"
    return f"{actual}{m} (hyp. {number(stats.count)})"


def derived_marker(notes: Footnotes, *stats) -> str:
    """Markers for a cell computed from selections graphrag does not return as such."""
    return "".join(notes.marker(s.outcome) for s in stats if s.outcome is not None and not s.outcome.exact)


def sends(stats, behaviour: str) -> str:
    """'graphrag >= 2.0 sends 120 reports', or what that graphrag does instead, the rule's count
    labelled hypothetical. Plain text (renderers escape for their medium)."""
    o = stats.outcome
    who = BEHAVIOUR_WHO.get(behaviour, behaviour)
    if o is None or o.exact:
        return f"{who} sends {stats.count:,} report{'s' if stats.count != 1 else ''}"
    if o.status == HYPOTHETICAL and not o.returns_zero:
        return f"the {who} rule selects {stats.count:,} (hypothetical)"
    who = f"graphrag {o.graphrag}" if o.graphrag else who
    if o.returns_zero:
        return f"{who} selects 0 reports here (its rule: {stats.count:,}, hypothetical)"
    return f"{who} cannot read this index (its rule: {stats.count:,}, hypothetical)"


def level_table(report, hide=frozenset()) -> tuple[list[str], list[list[str]], Footnotes]:
    """Headers, cells (one row per N: 0 … max, None) and the footnotes their markers point to; without
    the columns of the graphrag lines in ``hide`` (:func:`hypothetical_behaviours`)."""
    cols = level_columns(report, hide)
    per_depth = {r.community_level: r for r in report.depth.per_level}
    notes = Footnotes()
    rows = []
    for r in report.levels:
        n = r.community_level
        s = r.selected
        v2, v1 = s["v2"], s["v1"]
        epr = v2.entities_per_report
        med = "—" if epr.median is None else f"{epr.median:g}"
        # the hidden line's cells are not built (its footnote is not listed); markers number >= 2.0 first
        x2, x1 = (None if b in hide else s[b] for b in ("v2", "v1"))
        n2, n1 = (count_cell(x, notes) if x is not None else "" for x in (x2, x1))
        d2, d1 = (derived_marker(notes, x) if x is not None else "" for x in (x2, x1))
        d21 = d2 + d1
        c2, c1 = (x.cost if x is not None else None for x in (x2, x1))
        cell = {
            "n": level_label(n),
            "v2": n2,
            "v1": n1,
            "extra": f"{v2.count - v1.count:+,} ({v2.ancestors_sent:,}){d21}",
            "mix": mix_cell(
                [v2.by_level.get(str(k), 0) for k in range(report.depth.max_level + 1) if n is None or k <= n]
            )
            + d2,
            "level_only": number(s["level_only"].count),
            "stuck": number(per_depth[n].entities_stuck if n is not None and n in per_depth else None),
            "epr": f"{number(epr.min)}·{med}·{number(epr.max)}{d2}",
            "v2_tokens": number(c2 and c2.tokens) + (d2 if c2 else ""),
            "v1_tokens": number(c1 and c1.tokens) + (d1 if c1 else ""),
            "map_calls": f"{number(c2 and c2.map_calls)}/{number(c1 and c1.map_calls)}"
            + (d21 if c2 or c1 else ""),
        }
        if hide:
            c = c1 if "v2" in hide else c2
            cell["map_calls"] = number(c and c.map_calls) + (d21 if c else "")
        rows.append([cell[k] for k, _ in cols])
    return [h for _, h in cols], rows, notes


# ---- dynamic community selection per graphrag line, at the queried level ---------------------
DYNAMIC_HEADERS = [
    "graphrag",
    "descends",
    "all relevant: calls",
    "kept",
    "none relevant: calls",
    "what-if: calls",
    "what-if kept",
]


def dynamic_at(report):
    """(community_level, DynamicByVersion) at the queried level (the deepest level when it is beyond the
    tree), or None when no graphrag line's dynamic selection reads the index."""
    at, _ = answer_row(report)
    if at is None:
        return None
    bv = at.selected["dynamic"].by_version
    if bv is None or not bv.versions:
        return None
    return at.community_level, bv


def dynamic_rows(bv, what_if: bool) -> list[list[str]]:
    """One row per graphrag line: releases, descends, rating calls and kept reports when every report is
    relevant, rating calls when none is (and the what-if's, with ``what_if``)."""
    rows = []
    for v in bv.versions.values():
        if v.error is not None:
            row = [v.graphrag, "—", f"fails: {v.error}", "—", "—"] + (["—", "—"] if what_if else [])
        else:
            row = [
                v.graphrag,
                "yes" if v.descends else "never",
                number(v.all_relevant.rating_calls),
                number(len(v.all_relevant.kept_ids)),
                number(v.none_relevant.rating_calls),
            ]
            if what_if:
                w = v.what_if
                row += [number(w.rating_calls), number(len(w.kept_ids))] if w is not None else ["—", "—"]
        rows.append(row)
    return rows


def dynamic_notes(
    bv, what_if: bool, query: str = "", use_summary: bool = False
) -> list[tuple[str, list[str]]]:
    """(heading, items) under the dynamic table: each line's rating-call prompt tokens (as graphrag
    counts them) and, for the what-if, the map step over the kept reports. Empty without costs."""
    out = []
    toks = [
        (v.graphrag, v.all_relevant.prompt_tokens, v.none_relevant.prompt_tokens)
        for v in bv.versions.values()
        if v.error is None and v.all_relevant.prompt_tokens is not None
    ]
    if toks:
        text = "summary" if use_summary else "full_content"
        q = f"a {len(query)}-character query" if query else "empty query; --query adds yours"
        out.append(
            (
                f"Rating prompt tokens as graphrag counts them ({text}, {q}):",
                [f"{g}: all relevant {number(a)}, none relevant {number(n)}" for g, a, n in toks],
            )
        )
    items = []
    for v in bv.versions.values() if what_if else ():
        w = None if v.error is not None else v.what_if
        if w is None or w.kept_costs is None:
            continue
        k = w.kept_costs
        lo, hi = k.map_calls_range
        spread = "" if lo == hi else f" ({number(lo)}-{number(hi)} over {k.orders} input orders)"
        items.append(
            f"{v.graphrag}: {number(len(w.kept_ids))} kept -> {number(k.map_calls)} map "
            f"call{'' if k.map_calls == 1 else 's'}{spread}, {number(k.tokens)} tokens"
            f"{'' if k.tokens_exact else ' (estimate)'}; rating prompts {number(w.prompt_tokens)} tokens"
        )
    if items:
        out.append(("What-if: the map step over the kept reports:", items))
    return out


def dynamic_settings_line(opts) -> str:
    """The dynamic-selection knobs the audit used and where each came from (option, settings, default)."""
    src = dict(opts.dynamic_from)
    parts = []
    for knob in ("threshold", "num_repeats", "keep_parent", "max_level", "use_summary"):
        v, where = getattr(opts, knob), src.get(knob, "graphrag default")
        tag = "" if where == "graphrag default" else (" (option)" if where == "option" else f" ({where})")
        parts.append(f"{knob} {('on' if v else 'off') if isinstance(v, bool) else v}{tag}")
    custom = any(where != "graphrag default" for where in src.values())
    return (
        "Settings: "
        + ", ".join(parts)
        + ("; the rest are graphrag's defaults." if custom else " (graphrag's defaults).")
    )


def dynamic_detail_rows(bv, what_if: bool) -> tuple[list[str], list[list[str]]]:
    """Every number of each graphrag line's dynamic selection: (headers, one row per fact), one column per
    line."""
    vs = list(bv.versions.values())

    def row(label, cell) -> list[str]:
        return [label] + [MISSING if v.error is not None else cell(v) for v in vs]

    rows = [
        ["error"] + [v.error or "none" for v in vs],
        row("descends below level 0", lambda v: "yes" if v.descends else "never"),
        row("start reports (level 0)", lambda v: number(len(v.start_ids))),
    ]
    for name, attr in _SCENARIO.items():
        if name == "what-if" and not what_if:
            continue
        found = [getattr(v, attr) for v in vs]
        facts = [
            ("rating calls", lambda s: number(s.rating_calls)),
            ("kept reports", lambda s: number(len(s.kept_ids))),
            ("waves (rated per round)", lambda s: mix_cell(list(s.waves))),
        ]
        if any(s is not None and s.prompt_tokens is not None for s in found):
            facts.append(("rating prompt tokens", lambda s: number(s.prompt_tokens)))
        if name == "what-if" and any(s is not None and s.kept_costs is not None for s in found):
            facts.append(("map calls over the kept", lambda s: _kept_span(s.kept_costs, "map_calls")))
            facts.append(("map tokens over the kept", lambda s: _kept_span(s.kept_costs, "tokens")))
        rows += [
            [f"{name}: {label}"] + [MISSING if s is None else cell(s) for s in found] for label, cell in facts
        ]
    rows.append(row("cut off when all are relevant", lambda v: number(len(v.cut_off_ids))))
    rows.append(row("never rated (unreachable)", lambda v: number(len(v.unreachable_ids))))
    return [""] + [v.graphrag for v in vs], rows


_SCENARIO = {"none relevant": "none_relevant", "all relevant": "all_relevant", "what-if": "what_if"}


def _kept_span(kept, field: str) -> str:
    """A what-if cost in ascending community order, with its range over the sampled input orders."""
    if kept is None:
        return MISSING
    value, (lo, hi) = getattr(kept, field), getattr(kept, f"{field}_range")
    return number(value) if lo == hi else f"{number(value)} ({number(lo)}–{number(hi)})"


def dynamic_level_rows(report) -> tuple[list[str], list[list[str]]]:
    """Per N: the candidate pool's rating-call bounds and each graphrag line's rating calls when all / none
    are relevant ("fails" when it raises); empty without a per-line dynamic selection."""
    labels: dict[str, str] = {}  # family -> graphrag releases, in first-seen order
    for r in report.levels:
        bv = r.selected["dynamic"].by_version
        for f, v in bv.versions.items() if bv is not None else ():
            labels.setdefault(f, v.graphrag)
    fams = list(labels)
    if not fams:
        return [], []
    heads = ["N", "pool: calls min–max"] + [f"{labels[f]}: all / none relevant" for f in fams]
    rows = []
    for r in report.levels:
        d = r.selected["dynamic"]
        rc = d.rating_calls
        vs = d.by_version.versions if d.by_version is not None else {}
        cells = [level_label(r.community_level), f"{number(rc.min)}–{number(rc.max)}" if rc else "—"]
        for f in fams:
            v = vs.get(f)
            cells.append(
                "—"
                if v is None
                else "fails"
                if v.error is not None
                else f"{number(v.all_relevant.rating_calls)} / {number(v.none_relevant.rating_calls)}"
            )
        rows.append(cells)
    return heads, rows


# ---- the answer: one line first in text and Markdown -------------------------------------------
def _calls(cost, short: bool = False) -> str:
    if cost is None:
        return ""
    if short:
        return f" in {cost.map_calls:,}"
    return f" in {cost.map_calls:,} map call{'' if cost.map_calls == 1 else 's'} ({'' if cost.tokens_exact else '~'}{cost.tokens:,} tokens{'' if cost.tokens_exact else ', estimate'})"


def _behaviour_phrase(stats, behaviour: str, short: bool) -> str:
    """What one graphrag does at this level, as that graphrag sees it (compat.py's outcome)."""
    o = stats.outcome
    who = BEHAVIOUR_WHO[behaviour]
    n = f"{stats.count:,}" if short else f"{stats.count:,} report{'' if stats.count == 1 else 's'}"
    calls = _calls(stats.cost, short)
    if o is None or o.exact:
        return f"{who} sends {n}{calls}"
    if o.returns_zero:
        return f"graphrag {o.graphrag or who} sends 0 here (hypothetical, its rule: {n}{calls})"
    if o.status == HYPOTHETICAL:
        return f"{who} would send {n}{calls} (hypothetical: it cannot read this index)"
    return f"{who} cannot read this index (hypothetical, its rule: {n}{calls})"


def answer_row(report):
    """(the LevelResult the answer is about, whether ``--level`` is beyond the tree): the queried
    level's row, the deepest level's when the level is beyond the tree; None without levels."""
    lv = report.options.level
    levels = [r for r in report.levels if r.community_level is not None]
    if not levels:
        return None, False
    at = next((r for r in levels if r.community_level == lv), None)
    return (at, False) if at is not None else (levels[-1], True)


def marker_legend(report, marker: str, what: str, sep: str = " = ") -> str:
    """The sentence that explains the level marker: ``{marker}{sep}{what}``, or, with ``--level`` deeper
    than the tree, that no row is marked (our own text)."""
    if any(r.community_level == report.options.level for r in report.levels):
        return f"{marker}{sep}{what}"
    at, _ = answer_row(report)
    last = f" (its last level is {at.community_level}, which selects the same)" if at is not None else ""
    return f"No row is marked: --level {int(report.options.level)} is deeper than the tree{last}"


def share_of(num: int, den: int) -> str:
    """A whole percentage that never rounds a part up to 100% or down to 0%."""
    if not den:
        return "—"
    p = num / den
    if 0 < p < 0.01:
        return "<1%"
    if 0.99 < p < 1:
        return ">99%"
    return f"{p:.0%}"


def answer(report) -> str:
    """One line: what the queried community_level sends per graphrag line, in how many map calls and
    tokens, covering how much; plain text of our own (renderers escape it)."""
    lv = report.options.level
    if not report.index.has_reports_table:
        return (
            f"at community_level {lv} global search sends nothing: this index has no community_reports table"
        )
    at, beyond = answer_row(report)
    if at is None:
        return f"at community_level {lv} global search sends nothing: this index has no communities"
    n = at.community_level
    head = f"at community_level {lv}" + (
        f" (deeper than the tree's last level {n}, so the same as level {n})" if beyond else ""
    )
    v2, only = at.selected["v2"], at.selected["level_only"]
    exact = [b for b in ("v2", "v1") if at.selected[b].outcome is None or at.selected[b].outcome.exact]
    order = ["v1", "v2"] if exact == ["v1"] else ["v2", "v1"]  # the graphrag that reads the index first
    main = at.selected[order[0]]
    total = report.index.counts.clustered_entities
    first = _behaviour_phrase(main, order[0], short=False)
    if total:
        cov = main.entities_covered
        first += f", covering {cov:,} of {total:,} clustered entities ({share_of(cov, total)})"
    parts = [f"{head} {first}", _behaviour_phrase(at.selected[order[1]], order[1], short=True)]
    if not beyond and v2.count:
        if only.count != v2.count:
            parts.append(f"only {only.count:,} are level-{n} reports")
        else:
            parts.append(f"all are level-{n} reports" if v2.count > 1 else f"it is a level-{n} report")
    return "; ".join(parts)


# ---- coverage per level and behaviour ------------------------------------------------------------
COVERAGE_COLUMNS = [
    ("n", "N"),
    ("v2_entities", ">=2.0 entities"),
    ("v1_entities", "<2.0 entities"),
    ("v2_text_units", ">=2.0 text units"),
    ("v1_text_units", "<2.0 text units"),
]


def hypothetical_rule_note(who: list[str]) -> str:
    """The sentence on ``hyp.`` where a view applies graphrag ``who``'s rule (">= 2.0", "< 2.0") to an
    index that graphrag does not send it from ("" for none), without a final full stop."""
    if not who:
        return ""
    return (
        f"hyp. = the rule of graphrag {' and '.join(who)} applied to the rebuilt tree, not what "
        f"{'they send' if len(who) > 1 else 'it sends'} here (levels tells what)"
    )


def brief_rows(report, hide=frozenset()) -> tuple[list[dict[str, str]], Footnotes]:
    """levels --brief's cells: per N, the level table's and the coverage table's cells by column key,
    and the footnotes they share (the text and markdown renderers pick their columns from them)."""
    _, cells, notes = level_table(report, hide)
    keys = [k for k, _ in level_columns(report, hide)]
    rows = [dict(zip(keys, row)) for row in cells]
    cov_cols, cov_cells = coverage_table(report, notes, hide)
    cov_keys = [k for k, _ in cov_cols]
    for row, cov in zip(rows, cov_cells):
        row.update(zip(cov_keys, cov))
    return rows, notes


def coverage_table(
    report, notes: Footnotes, hide=frozenset()
) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """(columns, rows) of the coverage table: per N, the clustered entities (and text units, when the index
    has them) the selected reports cover, ``count (share)``; none of the graphrag lines in ``hide``."""
    c = report.index.counts
    cols = COVERAGE_COLUMNS if c.clustered_text_units is not None else COVERAGE_COLUMNS[:3]
    if hide:
        gone = set().union(*(HYPOTHETICAL_KEYS[b] for b in hide))
        cols = [(k, h) for k, h in cols if k not in gone]

    def cell(num, den, stats):
        if num is None:
            return MISSING
        return f"{num:,} ({share_of(num, den)}){derived_marker(notes, stats)}"

    rows = []
    for r in report.levels:
        v2, v1 = r.selected["v2"], r.selected["v1"]
        args = {
            "v2_entities": (v2.entities_covered, c.clustered_entities, v2),
            "v1_entities": (v1.entities_covered, c.clustered_entities, v1),
            "v2_text_units": (v2.text_units_covered, c.clustered_text_units, v2),
            "v1_text_units": (v1.text_units_covered, c.clustered_text_units, v1),
        }
        # the shown columns only, in column order as before: footnote markers are numbered by first use
        rows.append([level_label(r.community_level) if k == "n" else cell(*args[k]) for k, _ in cols])
    return cols, rows


# ---- local search, DRIFT search and global search's reduce per graphrag line -----------------------------
LOCAL_HEADERS = ["N", "finest report at level N", "no community report", "mean reports in context"]
LOCAL_STATUS = {
    HYPOTHETICAL: " (hypothetical: it cannot read this index)",
    "graphrag_cannot_read": " (hypothetical: it cannot read this index)",
}


def _line_tables(report, attr: str, row, hide_hypothetical: bool, suffix=lambda v: ""):
    """(heading, one row per N) per graphrag line of the levels' ``attr`` results, lines with the same rows
    (and ``suffix``) merged; ``row(r, s)``: the cells of line result ``s`` at level ``r``
    (``hide_hypothetical``: only the lines that can read the index)."""
    levels = [r for r in report.levels if getattr(r, attr)]
    tables: dict[tuple, list[str]] = {}
    for line, v in getattr(levels[0], attr)["by_version"].items() if levels else ():
        rows = tuple(tuple(row(r, getattr(r, attr)["by_version"][line])) for r in levels)
        status = LOCAL_STATUS.get(v["status"], "")
        if hide_hypothetical and status:
            continue
        tables.setdefault((rows, status + suffix(v)), []).append(v["graphrag"])
    return [
        (f"graphrag {', '.join(names)}{status}", [list(r) for r in rows])
        for (rows, status), names in tables.items()
    ]


def _context_cells(r, s) -> list[str]:
    """The share of probes whose finest report is at level N, the share with none, the mean reports."""
    probes, deepest = s["probes"], s["deepest_level_in_context"]
    mean = sum(s["reports_in_context_by_level"].values()) / probes if probes else None
    return [
        share_of(deepest.get(str(r.community_level), 0), probes),
        share_of(deepest.get("none", 0), probes),
        MISSING if mean is None else f"{mean:.1f}",
    ]


def local_tables(report, hide_hypothetical: bool = False) -> list[tuple[str, list[list[str]]]]:
    """Local search's community context per graphrag line and N (analysis/local_search.py)."""

    def row(r, s):
        return [level_label(r.community_level), *_context_cells(r, s)]

    return _line_tables(report, "local_search", row, hide_hypothetical)


def local_caption(report) -> str:
    """What the local-search tables count: the probes, the budget, and the sample when there is one."""
    first = next(r.local_search for r in report.levels if r.local_search)
    probes = next(iter(first["by_version"].values()))["probes"]
    sampled = first.get("sampled")
    of = f" (sampled: {sampled['probes']:,} of {sampled['of']:,} leaves)" if sampled else ""
    tokenizer = first.get("tokenizer")
    counted = f", counted with {tokenizer} (local search's chat model's encoding)" if tokenizer else ""
    return (
        f"Local search's community context per community_level N: {probes:,} probes, one per leaf community "
        f"(its first top_k_entities entities, 10 by default){of}; budget {first['budget_tokens']:,} tokens (community_prop x "
        f"max_context_tokens){counted}."
    )


WHAT_IF_HEADERS = ["#", "community", "report title", "matches", "rank", "level", "tokens"]


def local_what_if_tables(
    report,
) -> tuple[str, list[str], list[tuple[str, list[list[str]], list[str]]]] | None:
    """``--entities`` at the queried level: (caption with ``{names}`` to fill in, the names, per group of
    graphrag lines with the same context (heading, rows, names not read at N)); rows in graphrag's order
    (``#``, community, report title, matches, rank, level, tokens), then the first report that did not fit.
    None without ``--entities``. Titles and names are untrusted: the renderer escapes every cell."""
    at, _ = answer_row(report)
    got = (at.local_search or {}).get("what_if") if at is not None else None
    if not got:
        return None

    def row(position: str, r: dict) -> list[str]:
        title = "(untitled)" if r["title"] is None else r["title"]
        return [
            position,
            str(r["community"]),
            title,
            str(r["matches"]),
            f"{r['rank']:g}",
            str(r["level"]),
            number(r["tokens"]),
        ]

    groups: dict[tuple, list[str]] = {}
    for v in got["by_version"].values():
        rows = [row(str(i), r) for i, r in enumerate(v["reports"], 1)]
        if v["did_not_fit"]:
            rows.append(row("did not fit", v["did_not_fit"]))
        key = (tuple(map(tuple, rows)), tuple(v["not_read"]), LOCAL_STATUS.get(v["status"], ""))
        groups.setdefault(key, []).append(v["graphrag"])
    tables = [
        (f"graphrag {', '.join(names)}{status}", [list(r) for r in rows], list(not_read))
        for (rows, not_read, status), names in groups.items()
    ]
    caption = (
        f"What-if at N={at.community_level}: the community reports local search puts in context for {{names}}, "
        "in graphrag's order (matches = how many of these entities the community holds), within the "
        f'{at.local_search["budget_tokens"]:,}-token budget; "did not fit" marks the first report that '
        "did not fit (graphrag stops there)."
    )
    return caption, list(got["entities"]), tables


def local_what_if_lines(report, names: bool = True) -> list[str]:
    """``--entities`` as log lines (text, github): the caption, then per group of graphrag lines the reports
    in context and the first that did not fit; entity names and report titles only with ``names`` (else
    how many names). Untrusted: the caller makes each line safe for its medium."""
    got = local_what_if_tables(report)
    if got is None:
        return []
    caption, entities, tables = got
    lines = [
        caption.replace(
            "{names}", ", ".join(entities) if names else count(len(entities), "entity", "entities")
        )
    ]

    def described(r: list[str]) -> str:
        title = f' "{r[2]}"' if names else ""
        return f"community {r[1]}{title} (matches {r[3]}, rank {r[4]}, level {r[5]}, {r[6]} tokens)"

    for head, rows, not_read in tables:
        fit = "; ".join(described(r) for r in rows if r[0] != "did not fit") or "no community report"
        line = f"  {head}: {fit}" + "".join(
            f"; did not fit: {described(r)}" for r in rows if r[0] == "did not fit"
        )
        if not_read:
            line += f"; not read at this N: {', '.join(not_read) if names else count(len(not_read), 'name')}"
        lines.append(line)
    return lines


#: the last column only when a line's embeddings were checked (``drift_tables`` drops it otherwise)
DRIFT_HEADERS = [
    "N",
    "primer pool (by level)",
    "kept",
    "finest at N",
    "no report",
    "mean reports",
    "no embedding",
]


def drift_tables(report, hide_hypothetical: bool = False) -> list[tuple[str, list[list[str]]]]:
    """DRIFT search per graphrag line and N (analysis/drift_search.py): the primer's pool and the follow-ups
    it keeps, the local steps' context, the pool's missing embeddings."""

    def row(r, s):
        by_level = "/".join(f"{s['pool_by_level'].get(str(lv), 0):,}" for lv in range(r.community_level + 1))
        check = s["embeddings"]
        return [
            level_label(r.community_level),
            f"{s['pool']:,} ({by_level})" if s["pool"] else "0",
            f"{min(r.drift_search['k_followups'], s['pool']):,}",
            *_context_cells(r, s),
            f"{check['missing']:,}" if check["status"] == "checked" else "not run",
        ]

    tables = _line_tables(report, "drift_search", row, hide_hypothetical)
    checked = any(
        v["embeddings"]["status"] == "checked"
        for r in report.levels
        if r.drift_search
        for v in r.drift_search["by_version"].values()
    )
    return tables if checked else [(head, [r[:-1] for r in rows]) for head, rows in tables]


def drift_caption(report) -> str:
    """What the DRIFT tables count: the follow-ups, the local steps' budget, the embeddings preflight per line."""
    first = next(r.drift_search for r in report.levels if r.drift_search)
    sampled = first.get("sampled")
    of = f" (sampled: {sampled['probes']:,} of {sampled['of']:,} leaves)" if sampled else ""
    checks: dict[str, list[str]] = {}
    for v in first["by_version"].values():
        e = v["embeddings"]
        said = f"checked in table {e['table']}" if e["status"] == "checked" else f"NOT RUN ({e['reason']})"
        checks.setdefault(said, []).append(v["graphrag"])
    preflight = "; ".join(f"graphrag {', '.join(names)}: {said}" for said, names in checks.items())
    tokenizer = first.get("tokenizer")
    counted = (
        f", counted with {tokenizer} (graphrag's default: DRIFT gives its local steps no tokenizer)"
        if tokenizer
        else ""
    )
    return (
        f"DRIFT search per community_level N: the primer ranks its pool (the reports read_indexer_reports returns "
        f"at N; per level 0/1/…) against the query and keeps drift_k_followups ({first['k_followups']:,}); each local step is local "
        f"search's probes{of} packed into {first['budget_tokens']:,} tokens (local_search_community_prop x "
        f"local_search_max_data_tokens){counted}: the share whose finest report is at level N, with no report, the mean "
        f"reports in context. Embeddings preflight: {plain(preflight)}."
    )


REDUCE_HEADERS = ["N", "map calls", "tokens per map call", "largest map call", "answers that fit", "dropped"]


def reduce_tables(report, hide_hypothetical: bool = False) -> list[tuple[str, list[list[str]]]]:
    """Global search's reduce per graphrag line and N (analysis/reduce.py): the map calls, the report tokens
    per map call (mean, largest), the full-length answers the reduce window holds and the ones dropped."""

    def row(r, s):
        keys = ("map_calls", "map_tokens_mean", "map_tokens_max", "answers_fit", "answers_dropped")
        return [level_label(r.community_level), *(f"{s[k]:,}" for k in keys)]

    def limit(v):
        return f", map answers of at most {v['answer_limit']:,} {v['answer_unit']}"

    return _line_tables(report, "global_reduce", row, hide_hypothetical, limit)


def reduce_caption(report) -> str:
    """What the reduce tables count: the window and the words-to-tokens assumption."""
    first = next(r.global_reduce for r in report.levels if r.global_reduce)
    return (
        "Global search's reduce per community_level N: each map call compresses its reports into one answer "
        f"(full length taken as {first['tokens_per_word']:g} tokens per word, --tokens-per-word); the reduce "
        f"keeps the highest-scored answers up to data_max_tokens {first['data_max_tokens']:,} tokens and drops "
        "the rest without notice."
    )


def search_section(report, kind: str, hide_hypothetical: bool = False):
    """(caption, headers, tables) of ``kind`` ("local", "drift" or "reduce", the functions above); None
    when no graphrag line has a table."""
    tables_of, caption_of, headers = {
        "local": (local_tables, local_caption, LOCAL_HEADERS),
        "drift": (drift_tables, drift_caption, DRIFT_HEADERS),
        "reduce": (reduce_tables, reduce_caption, REDUCE_HEADERS),
    }[kind]
    tables = tables_of(report, hide_hypothetical)
    if not tables:
        return None
    return caption_of(report), headers[: len(tables[0][1][0])], tables
