"""GitHub-flavoured Markdown of every command, to paste into an issue (and ``-f github``'s step summary).

Index-derived text goes through :func:`markdown_cell` (it cannot break a row, open a link, emphasis
or HTML). Privacy (``sanitise.privacy``): absolute paths, report titles and entity names are left
out unless ``include_titles`` (``--include-titles``). Tables longer than ``DETAILS_ROWS`` fold into
``<details>``; :func:`paste_size_warning` tells when the whole is past GitHub's comment limit."""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass
from importlib import metadata

from graphrag_audit.render import cells
from graphrag_audit.render import diff_common as dc
from graphrag_audit.render import plan_common as pc
from graphrag_audit.sanitise.common import plain
from graphrag_audit.sanitise.markdown import markdown_cell, own_cell, own_text
from graphrag_audit.sanitise.privacy import PRIVACY_NOTE, hide_paths, shown_path

SEVERITIES = ("error", "warning", "info")
TITLE_LIMIT = 100  # characters of a report title shown in a table cell
EVIDENCE_LIMIT = 400  # characters of one evidence value
DETAILS_ROWS = 20  # a table with more rows than this is collapsed into <details>
#: GitHub's limit on an issue or comment body (characters); the step summary's is 1 MiB
GITHUB_COMMENT_LIMIT = 65_536
#: evidence keys whose values are index text (entity names): hidden without include_titles
PRIVATE_EVIDENCE = {"examples"}


def _row(values) -> str:
    return "| " + " | ".join(values) + " |"


def _table(headers, rows, align="") -> list[str]:
    """A GFM table of already-escaped cells; ``align``: one ``l`` or ``r`` per column (default all ``r``)."""
    sep = ["---:" if a == "r" else ":---" for a in align or "r" * len(headers)]
    return [_row(headers), _row(sep), *(_row(r) for r in rows)]


def _maybe_details(summary: str, table: list[str]) -> list[str]:
    """``table`` as is, or collapsed when it has more than ``DETAILS_ROWS`` rows."""
    rows = len(table) - 2
    return table if rows <= DETAILS_ROWS else _details(f"{summary} ({rows:,} rows)", table)


def _details(summary: str, body: list[str]) -> list[str]:
    """A collapsed block. ``summary`` is our own plain text (it is HTML, not Markdown); the blank
    lines let GitHub render the Markdown inside."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def _more(shown: int, total: int, what: str) -> list[str]:
    return (
        [] if total <= shown else ["", f"… {total - shown:,} more {what} not shown (`-f json` has them all)."]
    )


def paste_size_warning(text: str) -> str | None:
    """One stderr line when ``text`` is longer than a GitHub issue or comment may be, else None."""
    if len(text) <= GITHUB_COMMENT_LIMIT:
        return None
    return (
        f"graphrag-audit: warning: the markdown has {len(text):,} characters, over GitHub's "
        f"{GITHUB_COMMENT_LIMIT:,}-character limit for an issue or comment: attach it as a file, "
        "or paste -f json's relevant part\n"
    )


@dataclass(frozen=True)
class _Privacy:
    """What the report may show: everything with ``include``, else no absolute path, no report title,
    no entity name."""

    index_path: str
    include: bool

    def text(self, text) -> str:
        """Index-derived text that may name paths (notes, messages, errors)."""
        return text if self.include or text is None else hide_paths(str(text), self.index_path)

    def path(self, path) -> str:
        return path if self.include else shown_path(path, self.index_path)


def environment() -> dict[str, str]:
    """Versions for the header. graphrag is looked up in the installed metadata, never imported."""
    from graphrag_audit import __version__

    env = {"graphrag-audit": __version__, "Python": platform.python_version()}
    for dist in ("pandas", "pyarrow", "graphrag"):
        try:
            env[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            env[dist] = "not installed"
    return env | {"platform": f"{platform.system()} {platform.machine()}".strip() or "unknown"}


def _header(report, priv: _Privacy, verbose: bool = False) -> list[str]:
    info = report.index
    opts = report.options
    gen = markdown_cell(info.generation)
    evidence = "; ".join(markdown_cell(priv.text(e)) for e in info.generation_evidence) if verbose else ""
    costs = (
        f"costs on ({cells.with_source(markdown_cell(opts.tokenizer), opts, 'tokenizer', markdown_cell)}, "
        f"{cells.with_source(cells.number(opts.max_context_tokens), opts, 'max_context_tokens', markdown_cell)} tokens/batch)"
        if opts.costs
        else "costs off"
    )
    fields = {k: markdown_cell(v) for k, v in environment().items()}
    fields |= {
        "index": markdown_cell(priv.path(info.path)),
        "tables in": markdown_cell(priv.path(info.output_dir)),
        "generation": f"{gen} ({evidence})" if evidence else gen,
        "size": f"{cells.size_line(info.counts)} · tree from {markdown_cell(info.tree_source)}",
        "options": (
            f"`--level {int(opts.level)}` · `--max-unreachable {float(opts.max_unreachable):g}` · "
            f"`--max-inflation {float(opts.max_inflation):g}` · `--min-coverage {float(opts.min_coverage):g}` · "
            f"{costs}"
        ),
    }
    if not priv.include:
        fields["privacy"] = own_text(PRIVACY_NOTE)
    out = _table(["", ""], [[f"**{k}**", v] for k, v in fields.items()], "ll")
    return out + [x for note in info.notes for x in ("", "Note: " + markdown_cell(priv.text(note)))]


def _tree(report) -> list[str]:
    rows = [
        [str(t.level), *map(cells.number, (t.communities, t.leaves, t.reports, t.entities))]
        for t in report.tree_levels
    ]
    if not rows:
        return ["### Community tree", "", "The index has no communities."]
    table = _table(["level", "communities", "leaves", "reports", "entities"], rows)
    return [
        "### Community tree",
        "",
        *_maybe_details("Communities, leaves, reports and entities per level", table),
    ]


MD_PLAIN_SHORT = {"v2": "≥2.0", "v1": "<2.0"}  # before own_text escapes it
BEHAVIOUR_LABEL = {"v2": "graphrag ≥ 2.0", "v1": "graphrag &lt; 2.0"}
#: the marker of the level you query with (a column of its own: it survives plain-text rendering)
MARKER = "▶"
NO_REPORTS = "No community_reports table: nothing is sent to global search."


def _md_header(head: str) -> str:
    """A column header of render.cells in Markdown: ``≥``, an escaped ``<``, a few words longer."""
    head = head.replace("ents/", "entities/").replace(">=2.0/<2.0", ">=2.0 / <2.0")
    return head.replace(">=", "≥").replace("<", "&lt;")


def _marked_table(report, heads, per_level) -> list[str]:
    """A per-N table, the marker column first; the queried level's cells in bold too."""
    rows = [
        [MARKER, *(f"**{x}**" for x in row)] if r.community_level == report.options.level else ["", *row]
        for r, row in zip(report.levels, per_level)
    ]
    return _table(["", *map(_md_header, heads)], rows, "l" + "r" * len(heads))


def _legend(report) -> str:
    """The marker's legend, the --level option in backticks."""
    lv = int(report.options.level)
    return cells.marker_legend(
        report, f"{MARKER} and bold", f"the level you query with (`--level {lv}`)", sep=": "
    ).replace(f" --level {lv} is", f" `--level {lv}` is", 1)


def _levels(report, hide=frozenset(), hide_hypothetical: bool = False, brief: bool = False) -> list[str]:
    """What each N sends; ``brief``: one table (reports each graphrag line sends, entities covered, map
    calls), its legend and footnotes."""
    out = ["### What each community_level N sends to global search", ""]
    if not report.index.has_reports_table:
        return out + [NO_REPORTS]
    opts = report.options
    c = report.index.counts
    hidden = own_text(cells.hidden_note(report, hide_hypothetical, MD_PLAIN_SHORT))
    if brief:
        rows, notes = cells.brief_rows(report, hide)
        keys = [
            k for k in ("n", "v2", "v1", "v2_entities", "v1_entities", "map_calls") if rows and k in rows[0]
        ]
        names = dict(cells.level_columns(report, hide) + cells.COVERAGE_COLUMNS)
        table = _marked_table(report, [names[k] for k in keys], [[row[k] for k in keys] for row in rows])
        out += _maybe_details("Every community_level N", table)
        out += [
            "",
            f"{_legend(report)}. entities = of the {cells.number(c.clustered_entities)} clustered entities, those a "
            f"selected report's community holds.{hidden}",
        ]
        return out + [x for line in notes.lines() for x in ("", own_text(line))]
    _, per_level, notes = cells.level_table(report, hide)
    cols = cells.level_columns(report, hide)
    table = _marked_table(report, [h for _, h in cols], per_level)
    at = [line for r, line in zip(report.levels, table[2:]) if r.community_level == opts.level]
    if len(per_level) > DETAILS_ROWS and at:  # a deep tree: the queried level first, every level collapsed
        out += table[:2] + at + [""]
    out += _maybe_details("Every community_level N", table)
    shown = {k for k, _ in cols}
    # the legend explains the columns the table shows (--hide-hypothetical leaves some out)
    explained = "".join(
        part
        for key, part in (
            (
                "extra",
                "extra = reports graphrag ≥ 2.0 sends beyond graphrag &lt; 2.0; ancestors = reports sent "
                "together with a descendant's report; ",
            ),
            ("mix", "mix = reports graphrag ≥ 2.0 sends per level; "),
            ("stuck", "stuck = entities whose finest community is above level N. "),
        )
        if not hide or key in shown
    )
    out += [
        "",
        f"{_legend(report)}. {explained}Each map call is one LLM call; one reduce call follows. "
        + own_text(cells.LEVEL_ONLY_NOTE)
        + hidden,
    ]
    cov_cols, cov_rows = cells.coverage_table(report, notes, hide)
    of_tu = (
        f" and {cells.number(c.clustered_text_units)} text units"
        if c.clustered_text_units is not None
        else ""
    )
    out += [
        "",
        f"Coverage per N: the clustered entities{' and text units' if of_tu else ''} the reports sent at N "
        f"cover (of {cells.number(c.clustered_entities)} clustered entities{of_tu}; an entity is covered when a "
        "selected report's community holds it, a text unit when a covered entity names it):",
        "",
        *_maybe_details(
            "Coverage per community_level N", _marked_table(report, [h for _, h in cov_cols], cov_rows)
        ),
    ]
    out += [x for line in notes.lines() for x in ("", own_text(line))]
    got = cells.dynamic_at(report)
    if got is not None:
        n, bv = got
        what_if = opts.relevant is not None
        out += [
            "",
            f"Dynamic community selection at N={cells.level_label(n)} by graphrag version (LLM rating calls, num_repeats "
            f"{int(opts.num_repeats)}; all/none relevant = every/no report rated relevant):",
            "",
        ]
        versions = [[markdown_cell(x) for x in row] for row in cells.dynamic_rows(bv, what_if)]
        out += _table(cells.DYNAMIC_HEADERS[: None if what_if else 5], versions)
        out += ["", markdown_cell(cells.dynamic_settings_line(opts))]
        for head, items in cells.dynamic_notes(bv, what_if, opts.query, opts.use_summary):
            bullets = [f"- {markdown_cell(t)}" for t in items]
            if len(bullets) > DETAILS_ROWS:
                out += [""] + _details(own_text(plain(head)), bullets)  # <summary> is raw HTML
            else:
                out += ["", markdown_cell(head), ""] + bullets
    # the other search modes' tables fold away: a PR comment shows global search's answer first
    searches = [
        line for kind in ("local", "drift", "reduce") for line in _search(report, kind, hide_hypothetical)
    ]
    if searches:
        summary = "Local search, DRIFT search and global search's reduce per community_level"
        out += [""] + _details(summary, searches[1:])
    return out


def _search(report, kind: str, hide_hypothetical: bool = False) -> list[str]:
    """The caption, then per graphrag line its heading and table (render/cells.py's search_section)."""
    got = cells.search_section(report, kind, hide_hypothetical)
    if got is None:
        return []
    caption, headers, tables = got
    out = ["", markdown_cell(caption)]
    for head, rows in tables:
        out += ["", markdown_cell(head) + ":", ""] + _table(headers, rows)
    return out


def _local_what_if(report, priv: _Privacy) -> list[str]:
    """``--entities``: per graphrag line, the reports local search puts in context (entity names and
    report titles are the corpus's own words: shown with ``--include-titles``)."""
    got = cells.local_what_if_tables(report)
    if got is None:
        return []
    caption, names, tables = got
    who = ", ".join(names) if priv.include else cells.count(len(names), "entity", "entities")
    keep = [i for i, h in enumerate(cells.WHAT_IF_HEADERS) if priv.include or h != "report title"]
    heads = [cells.WHAT_IF_HEADERS[i] for i in keep]
    align = "".join("l" if h == "report title" else "r" for h in heads)
    out = ["", markdown_cell(caption.replace("{names}", who))]
    for head, rows, not_read in tables:
        kept = [[markdown_cell(row[i], TITLE_LIMIT) for i in keep] for row in rows]
        out += ["", markdown_cell(head) + ":", ""]
        out += _table(heads, kept, align) if rows else ["No community report in context."]
        if not_read:
            shown = ", ".join(not_read) if priv.include else cells.count(len(not_read), "name")
            out += ["", markdown_cell(f"Not read at this N (unknown, or not in a community <= N): {shown}")]
    if not priv.include:
        out += ["", "Entity names and report titles hidden: `--include-titles` shows them."]
    return out


QUERY_WORD = {"agrees": "agrees", "differs": "**differs**", "graphrag_raised": "**graphrag raised**"}


def _verify(v, priv: _Privacy) -> list[str]:
    """``--verify``: did the installed graphrag's own read_indexer_reports agree, level by level?
    (wording shared with the text renderer: render/verify_words.py)"""
    from graphrag_audit.render.verify_words import result_word, summary

    out = ["### Checked against graphrag's own read_indexer_reports", ""]
    if not v.available:
        return out + ["Not run: " + markdown_cell(priv.text(v.reason or "graphrag unavailable"))]
    mc = v.map_calls
    compared = bool(mc is not None and mc.compared)
    note = []
    if compared:
        note = [
            "",
            f"Map calls: graphrag's own build_community_context was run on its selection at every level "
            f"({markdown_cell(mc.tokenizer)}, {cells.number(mc.max_context_tokens)} tokens per batch) and "
            "compared batch by batch (reports, tokens, text).",
        ]
    elif mc is not None and mc.reason and "--no-costs" not in mc.reason:
        note = ["", "Map calls not compared: " + markdown_cell(priv.text(mc.reason), 300)]
    label = BEHAVIOUR_LABEL.get(v.behaviour, markdown_cell(v.behaviour))
    kind, sentence = summary(v, label, markdown_cell, lambda t: f"`{t}`")
    if kind == "agrees":
        return out + [sentence + "."] + note + _verify_dynamic(v)
    sentence = sentence.replace(" DISAGREES ", " **disagrees** ", 1)
    if kind == "raised":
        sentence = sentence.replace(" does not return a selection ", " **does not return a selection** ", 1)
    qp = v.graphrag_query
    with_query = bool(qp and qp.loaded)
    heads = ["N", "result", "graphrag reports", "audit reports"]
    heads += ["graphrag query", "graphrag query reports"] if with_query else []
    heads += ["graphrag map calls", "audit map calls", "graphrag tokens", "audit tokens"] if compared else []
    rows = []
    for x in v.levels:
        word = result_word(x)
        m, q, sel = x.map_calls, x.graphrag_query, x.selection
        row = [
            cells.level_label(x.community_level),
            word if word.startswith("agrees") else f"**{word}**",
            cells.number(sel.graphrag_count),
            cells.number(x.audit_count),
        ]
        if with_query:
            row += [
                "—" if q is None else QUERY_WORD[q.status],
                cells.number(None if q is None else q.graphrag_count),
            ]
        if compared:
            keys = (
                "graphrag_map_calls",
                "audit_map_calls",
                "graphrag_context_tokens",
                "audit_context_tokens",
            )
            row += [cells.number(m and getattr(m, k)) for k in keys]
        why = sel.graphrag_error or (m and m.context_error) or sel.expected or x.map_calls_skipped or ""
        rows.append(row + [markdown_cell(priv.text(why), 300)])
    paths = []
    if qp:
        paths = [
            "",
            "Load paths: *result* and *graphrag reports* are graphrag's read_indexer_reports on tables "
            "read with pd.read_parquet, as its Python API and notebooks read them"
            + (f" (pandas {markdown_cell(v.pandas_version)})" if v.pandas_version else "")
            + "; *graphrag query* on the tables as `graphrag query` loads them (its typed DataReader casts "
            "community and level to int64).",
        ]
    align = "rlrr" + "lr" * with_query + "rrrr" * compared + "l"
    table = _table(heads + ["graphrag error / expected"], rows, align)
    return out + [sentence, ""] + table + paths + note + _verify_dynamic(v)


VERIFY_DYNAMIC_HEADERS = (
    "N, relevant, result, graphrag rating calls, audit rating calls, graphrag waves, audit waves, "
    "graphrag kept, audit kept, graphrag error / expected"
).split(", ")


def _verify_dynamic(v) -> list[str]:
    """``--verify``'s dynamic-selection comparison: a sentence and, when it ran, one row per level and
    scenario (graphrag's DynamicCommunitySelection with a stub rater against the audit's simulation)."""
    from graphrag_audit.render.verify_words import DYNAMIC_STATUS_WORD, SCENARIO_LABEL, dynamic_summary

    got = dynamic_summary(v, markdown_cell)
    if got is None:
        return []
    kind, sentence = got
    out = [
        "",
        "#### Dynamic community selection checked against graphrag's own DynamicCommunitySelection",
        "",
    ]
    head, rest = sentence.split(": ", 1)
    if kind == "not_run":
        return out + [f"Not run: {rest}."]
    head = head.replace(" DISAGREES ", " **disagrees** ", 1).replace(
        " does not select at every community_level", " **does not select at every community_level**", 1
    )

    def word(status):
        w = DYNAMIC_STATUS_WORD.get(status, markdown_cell(status, 40)).lower()
        return w if status == "agrees" else f"**{w}**"

    def waves(w):
        return "—" if w is None else markdown_cell(", ".join(str(int(x)) for x in w) or "none")

    rows = []
    for x in v.levels:
        d = x.dynamic
        n = cells.level_label(x.community_level)
        if d is not None and not d.scenarios:
            rows.append([n, "—", word(d.status), *[""] * 6, markdown_cell(d.reason or d.expected or "", 300)])
        for name, sc in d.scenarios.items() if d is not None else ():
            rows.append(
                [
                    n,
                    SCENARIO_LABEL.get(name, markdown_cell(name, 40)),
                    word(sc.status),
                    cells.number(sc.graphrag_rating_calls),
                    cells.number(sc.audit_rating_calls),
                    waves(sc.graphrag_waves),
                    waves(sc.audit_waves),
                    cells.number(sc.graphrag_kept),
                    cells.number(sc.audit_kept),
                    markdown_cell(sc.graphrag_error or sc.expected or "", 300),
                ]
            )
    return out + [head + ".", ""] + _table(VERIFY_DYNAMIC_HEADERS, rows, "rllrrllrrl")


def _depth(report, max_rows: int) -> list[str]:
    d = report.depth
    out = ["### Branch depth", ""]
    if not d.histogram:
        return out + ["No roots: the tree is empty."]
    total = sum(d.histogram.values())
    hist = [[k, cells.number(v), cells.share(v, total)] for k, v in d.histogram.items()]
    out += _maybe_details("Roots per depth reached", _table(["depth reached", "roots", "share"], hist))
    out += [
        "",
        f"Depth asymmetry **{d.asymmetry:.2f}** (entity-weighted; 0 = every entity can be refined to "
        f"the deepest level {d.max_level}, 1 = all stuck at level 0).",
        "",
    ]
    per_level = [
        [
            str(r.community_level),
            f"{cells.number(r.roots_reaching)} / {cells.number(r.roots_total)}",
            cells.number(r.roots_stuck),
            f"{cells.number(r.entities_served)} / {cells.number(r.entities_total)}",
            cells.number(r.entities_stuck),
        ]
        for r in d.per_level
    ]
    heads = ["N", "roots reaching N", "roots stuck", "entities served", "entities stuck"]
    out += _maybe_details("Roots and entities reaching each level", _table(heads, per_level))
    roots = [
        [
            str(int(r.community)),
            str(r.level),
            str(r.deepest_level),
            str(r.depth_reached),
            cells.number(r.descendants),
            cells.number(r.entities),
            markdown_cell(
                _capped(
                    [f"L{k}: {cells.number(v)}" for k, v in r.leaves_per_level.items()], LEAF_LEVELS, "levels"
                )
            ),
        ]
        for r in d.roots[:max_rows]
    ]
    heads = ["root", "level", "deepest level", "depth reached", "descendants", "entities", "leaves per level"]
    body = _table(heads, roots) + _more(len(roots), len(d.roots), "roots")
    out += [""] + _details(f"Depth per root ({len(d.roots):,} roots, deepest first)", body)
    body = [
        f"{what}: {_ids(ids, max_rows)}"
        for what, ids in (
            (f"Communities with exactly one child ({len(d.single_child):,})", d.single_child),
            ("Levels repeating the previous level's partition", d.duplicate_levels),
        )
        if ids
    ]
    if body:
        out += [""] + _details("Single-child chains and duplicated levels", ["\n\n".join(body)])
    return out


#: entries of a root's "leaves per level" cell (a deep root has leaves at hundreds of levels)
LEAF_LEVELS = 12


def _capped(items: list[str], limit: int, what: str = "") -> str:
    """``items`` joined; past ``limit`` the first ones and how many more (``what``)."""
    more = f" … and {len(items) - limit:,} more" + (f" {what}" if what else "") if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _ids(ids, limit: int) -> str:
    return _capped([markdown_cell(i) for i in ids], limit)


def _sent_at_level(report, max_rows: int, priv: _Privacy) -> list[str]:
    """The reports graphrag >= 2.0 sends at --level, with their titles (untrusted text)."""
    n = report.options.level
    r = report.level(n)
    listing = report.listing
    if r is None or not report.index.has_reports_table or listing is None or listing.community_level != n:
        return []
    v2, v1 = r.selected["v2"], r.selected["v1"]
    lst = listing.by_behaviour["v2"]
    if not lst.total:
        return []
    rows = [
        [
            str(lst.community[i]),
            str(lst.level[i]),
            *([markdown_cell(lst.title[i], TITLE_LIMIT)] if priv.include else []),
            cells.number(lst.entities[i]),
            cells.number(lst.tokens[i]) if lst.tokens is not None else "—",
            "yes" if lst.also_v1[i] else "no",
        ]
        for i in range(min(max_rows, len(lst)))
    ]
    title = ["title"] if priv.include else []
    heads = ["community", "level", *title, "entities", "tokens", "also sent by &lt;2.0"]
    body = _table(heads, rows, "rrlrrl" if priv.include else "rrrrl")
    if not priv.include:  # titles are the corpus's own words
        body += ["", "Titles hidden: `--include-titles` shows them."]
    body += _more(len(rows), lst.total, "reports")
    if v2.outcome is None or v2.outcome.exact:
        head = f"Reports graphrag ≥ 2.0 sends at community_level {int(n)} ({v2.count:,}"
    else:
        head = f"Reports the graphrag ≥ 2.0 rule selects at community_level {int(n)} (" + own_text(
            cells.sends(v2, "v2")
        )
    return [""] + _details(head + "; " + own_text(cells.sends(v1, "v1")) + ")", body)


def _findings(report, max_rows: int, priv: _Privacy) -> list[str]:
    fs = report.sorted_findings()
    out = [f"### Findings ({len(fs)})", ""]
    if not fs:
        return out + ["None."]
    counts = ", ".join(f"{sum(1 for f in fs if f.severity == sev):,} {sev}" for sev in SEVERITIES)
    rows = [
        [f.severity, f"`{f.rule}`", markdown_cell(priv.text(f.message)), own_cell(f.fix or "")] for f in fs
    ]
    out += _maybe_details(counts, _table(["severity", "rule", "message", "fix"], rows, "llll"))
    body = []
    for f in fs:
        if not f.evidence and not f.communities:
            continue
        body += ["", f"**{f.rule}**", ""]
        for k, v in f.evidence.items():
            if k in PRIVATE_EVIDENCE and not priv.include:
                n = len(v) if isinstance(v, (list, tuple)) else 1
                value = f"{n:,} hidden (entity names; `--include-titles` shows them)"
            else:
                value = markdown_cell(priv.text(_value(v)), EVIDENCE_LIMIT)
            body.append(f"- {markdown_cell(k)}: {value}")
        if f.communities:
            body.append(f"- communities ({len(f.communities):,}): {_ids(f.communities, max_rows)}")
    if body:
        out += [""] + _details("Evidence and community ids", body[1:])
    return out


def _value(v) -> str:
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, ensure_ascii=False, default=str, sort_keys=True)
    except (TypeError, ValueError):
        return str(v)


#: the one line that points from the markdown audit to filing a graphrag bug with a bundle
BUG_REPORT_LINE = (
    "_A graphrag bug? `graphrag-audit bundle DIR -o OUT` makes a shareable copy of the index without "
    "its text: see docs/bug-reports.md of graphrag-audit._"
)


def render_markdown(
    report,
    *,
    max_rows: int = 100,
    include_titles: bool = False,
    verbose: bool = False,
    brief: bool = False,
    hide_hypothetical: bool = False,
    **_ignored,
) -> str:
    """The audit as GitHub Markdown; ``brief``: answer, one table, findings; ``hide_hypothetical``: leave
    out the per-N columns of a graphrag line that cannot run on this index."""
    priv = _Privacy(report.index.path, include_titles)
    hide = cells.hypothetical_behaviours(report) if hide_hypothetical else frozenset()
    flags = (
        f"{' --include-titles' if priv.include else ''}{' --verbose' if verbose else ''}"
        f"{' --brief' if brief else ''}{' --hide-hypothetical' if hide_hypothetical else ''}"
    )
    # the answer is the first paragraph, under the heading: appended to a $GITHUB_STEP_SUMMARY that
    # ends in a paragraph, a heading still starts a block of its own (a paragraph would merge)
    out = ["## graphrag-audit report", "", f"**{own_text(cells.answer(report))}**", ""]
    if brief:
        parts = [_levels(report, hide, hide_hypothetical, brief=True), _findings(report, max_rows, priv)]
    else:
        levels = _levels(report, hide, hide_hypothetical) + _local_what_if(report, priv)
        levels += _sent_at_level(report, max_rows, priv)
        # tool-written: '$' escaped so GitHub does not read "$0.01 ... $0.02" as math
        money = [
            ("- " + x.strip() if x.startswith("  ") else x).replace("$", "\\$")
            for x in map(own_text, cells.money_lines(report, hide))
        ]
        if money:
            levels += ["", *money[:-1], "", money[-1]]
        parts = [_header(report, priv, verbose), _tree(report), levels]
        parts += [_verify(report.verify, priv)] if report.verify is not None else []
        parts += [_depth(report, max_rows), _findings(report, max_rows, priv), [BUG_REPORT_LINE]]
    for p in parts:
        out += p + [""]
    out.append(
        f"_Generated by graphrag-audit {markdown_cell(environment()['graphrag-audit'])}: "
        f"`graphrag-audit levels DIR --level {int(report.options.level)} -f markdown{flags}`_"
    )
    return "\n".join(out) + "\n"


def _plan_table(headers, rows, left=frozenset()) -> list[str]:
    """A GFM table of a plan's cells (escaped here), right-aligned but the ``left`` columns."""
    align = ["l" if i in left else "r" for i in range(len(headers))]
    return _table([markdown_cell(h) for h in headers], [[markdown_cell(c) for c in r] for r in rows], align)


def render_plan_markdown(report, *, include_titles: bool = False, **_ignored) -> str:
    plan = report.plan
    info = report.to_dict()["index"]
    priv = _Privacy(info["path"], include_titles)
    text, path = priv.text, priv.path
    out = [
        f"## graphrag-audit plan: {markdown_cell(path(info['path']))}",
        "",
        f"tables in {markdown_cell(path(info['output_dir']))}",
        "",
        *[line for x in info.get("notes", []) for line in (f"Note: {markdown_cell(text(x))}", "")],
        *([] if include_titles else [f"Privacy: {markdown_cell(PRIVACY_NOTE)}", ""]),
        f"generation {markdown_cell(info['generation'])} · {markdown_cell(pc.settings_line(report))}",
        "",
        f"**Plan:** {markdown_cell(pc.plan_headline(plan))}",
        "",
        f"- {markdown_cell(pc.check_line(plan))}",
        *[f"- {markdown_cell(text(x))}" for x in pc.why_lines(plan)],
        f"- {markdown_cell(pc.entity_line(plan))}",
        f"- {markdown_cell(pc.granularity_line(plan, report))}",
        f"- communities: {markdown_cell(pc.ids_text(plan.communities))}",
    ]
    out += [f"- note: {markdown_cell(text(x))}" for x in plan.notes]
    out += [
        "",
        f"### The same budget ({markdown_cell(plan.budget.describe())}) at every community_level N",
        "",
    ]
    out += _plan_table(pc.COMPARISON_HEADERS, pc.comparison_rows(report) + [pc.plan_row(plan)], left={1})
    if note := pc.comparison_note(report):
        out += ["", markdown_cell(note)]
    out += ["", "### Finest available level, per subtree", ""]
    out += [f"- {markdown_cell(text(x))}" for x in pc.disclosure_lines(plan)]
    srows = pc.subtree_rows(plan)
    table = _plan_table(pc.subtree_headers(plan), srows[: pc.SUBTREE_ROWS], left={3, 6})
    if len(table) - 2 > DETAILS_ROWS:  # a long table folds, as in levels -f markdown
        table = _details(f"Subtrees ({len(srows):,})", table)
    out += [""] + table
    if len(srows) > pc.SUBTREE_ROWS:
        out.append(f"\n… {len(srows) - pc.SUBTREE_ROWS:,} more subtrees (the JSON lists them all)")
    out += [
        "",
        f"### Dynamic community selection instead (num\\_repeats {report.settings.get('num_repeats', 1)})",
        "",
    ]
    out += _plan_table(pc.DYNAMIC_HEADERS, pc.dynamic_rows(report), left={4})
    out += ["", "### Hand-off to graphrag", ""]
    out += [f"- {markdown_cell(text(x))}" for x in pc.handoff_lines(report)]
    return "\n".join(out) + "\n"


def render_diff_markdown(diff, *, include_titles: bool = False, **_ignored) -> str:
    def where(info) -> str:
        return markdown_cell(info.path if include_titles else shown_path(info.path, info.path), 200)

    def items(fs, index, mark="") -> list[str]:
        return [
            f"- {mark}**{f.severity}** `{f.rule}`: "
            + markdown_cell(f.message if include_titles else hide_paths(f.message, index.path), 300)
            for f in fs
        ] or ["none"]

    out = [
        "## graphrag-audit diff",
        "",
        f"- old: `{where(diff.old)}` (generation {markdown_cell(diff.old.generation)})",
        f"- new: `{where(diff.new)}` (generation {markdown_cell(diff.new.generation)})",
        f"- {own_text(dc.matching_sentence(diff))}",
        f"- {own_text(dc.community_sentence(diff))}",
        "",
        _row(dc.HEADERS),
        "|" + "---|" * len(dc.HEADERS),
        *(_row(own_text(c) for c in dc.selection_cells(s)) for s in diff.selections),
        "",
    ]
    if legend := dc.hyp_legend(diff):
        out += [own_text(legend), ""]
    out += [
        f"### Findings that appeared ({cells.number(len(diff.appeared))})",
        "",
        *items(diff.appeared, diff.new),
        "",
    ]
    out += [f"### Findings that disappeared ({cells.number(len(diff.disappeared))})", ""]
    out += [*items(diff.disappeared, diff.old), ""]
    out += [f"### Regressions at community_level {diff.level} ({cells.number(len(diff.regressions))})", ""]
    out += items(diff.sorted_regressions(), diff.new)
    if diff.hypothetical_changes:
        out += [
            "",
            f"### Hypothetical changes at community_level {diff.level}, not judged "
            f"({cells.number(len(diff.hypothetical_changes))})",
            "",
            "No real graphrag of that line sends these selections on one of the indexes; "
            "`--include-hypothetical` judges them.",
            "",
            *items(diff.sorted_hypothetical_changes(), diff.new, f"{dc.HYP} "),
        ]
    if diff.option_note:
        out += ["", f"Note: {markdown_cell(diff.option_note, 500)}"]
    out += ["", f"**{own_text(dc.verdict(diff))}**"]
    return "\n".join(out) + "\n"
