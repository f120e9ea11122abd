"""Markdown renderer (bug reports, $GITHUB_STEP_SUMMARY): tables parse, untrusted text is inert,
the header carries the versions.

The fixture is a tiny 3.x index written here with pandas; every expected number below is worked
out by hand from its tree:

    root 0 (L0, e1 e2 e3 e4) ── 2 (L1, e1 e2) ── 4 (L2, e1 e2)     single child: 2
                             └─ 3 (L1, e3 e4)
    root 1 (L0, e5 e6)                                            e7: in no community

at community_level 2: graphrag >= 2.0 sends every report with level <= 2 (0 1 2 3 4 = 5),
graphrag < 2.0 the frontier {1, 3, 4} (3), level-2 only {4} (1). Roots reaching level 2: 1 of 2;
entities whose finest level is < 2: e3 e4 e5 e6 (4 of 6). Findings: depth-mismatch (1/2 > 25%),
v2-inflation (5/3 > 1.2), multiple-periods (two period values), single-child-chain (2),
unclustered-entities (e7).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
from pathlib import Path

import pandas as pd
import pyarrow
import pytest
from markdown_it import MarkdownIt

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.render.markdown import render_markdown

SHARED = Path(__file__).parents[2] / ".." / "shared" / "indexes"

TREE = {  # community: (level, parent, entity ids)
    0: (0, -1, ["e1", "e2", "e3", "e4"]),
    1: (0, -1, ["e5", "e6"]),
    2: (1, 0, ["e1", "e2"]),
    3: (1, 0, ["e3", "e4"]),
    4: (2, 2, ["e1", "e2"]),
}
ENTITIES = ["e1", "e2", "e3", "e4", "e5", "e6", "e7"]
EXPECTED_RULES = [
    "depth-mismatch",
    "multiple-periods",
    "unclustered-entities",  # a warning: graphrag >= 2.0's local search cannot see the entity
    "v2-inflation",
    "dynamic-no-descent",
    "single-child-chain",
]  # severity order (warnings, then info), then rule id

EVIL = "evil | <script>alert(1)</script> [x](http://evil) **bold** `tick` _em_ <b>b</b>\n::error::x"


def write_index(
    out: Path,
    *,
    report_titles: dict | None = None,
    periods: dict | None = None,
    entity_titles: dict | None = None,
    tree: dict | None = None,
    entities: list | None = None,
) -> Path:
    """A graphrag 3.x output folder: communities, community_reports, entities (parquet)."""
    tree = TREE if tree is None else tree
    entities = ENTITIES if entities is None else entities
    out.mkdir(parents=True, exist_ok=True)
    periods = periods or {}
    rows = []
    for c, (lv, parent, ents) in tree.items():
        rows.append(
            {
                "id": f"uuid-{c}",
                "human_readable_id": c,
                "community": c,
                "level": lv,
                "parent": parent,
                "children": [k for k, (_, p, _) in tree.items() if p == c],
                "title": f"Community {c}",
                "entity_ids": list(ents),
                "period": periods.get(c, "2025-01-01"),
                "size": len(ents),
            }
        )
    pd.DataFrame(rows).to_parquet(out / "communities.parquet", index=False)
    titles = report_titles or {}
    pd.DataFrame(
        [
            {
                "id": f"r{c}",
                "human_readable_id": c,
                "community": c,
                "level": lv,
                "title": titles.get(c, f"Report {c}"),
                "summary": "s",
                "full_content": f"# Report {c}\n\nAbout community {c}.",
                "rank": 5.0,
            }
            for c, (lv, _, _) in tree.items()
        ]
    ).to_parquet(out / "community_reports.parquet", index=False)
    names = entity_titles or {}
    pd.DataFrame(
        {
            "id": entities,
            "title": [names.get(e, e.upper()) for e in entities],
            "text_unit_ids": [["t1"] for _ in entities],
        }
    ).to_parquet(out / "entities.parquet", index=False)
    return out


def report_for(path: Path, level: int = 2):
    return audit(path, AuditOptions(level=level, costs=False))


# ---- a small Markdown-it walk ------------------------------------------------------------
def md():
    return MarkdownIt("commonmark").enable("table").enable("strikethrough")


def tables(tokens):
    """[(header cells, [row cells]), ...] where a cell is its inline token."""
    out, cur, row, in_head = [], None, None, False
    for i, t in enumerate(tokens):
        if t.type == "table_open":
            cur = ([], [])
        elif t.type == "thead_open":
            in_head = True
        elif t.type == "thead_close":
            in_head = False
        elif t.type == "tr_open":
            row = []
        elif t.type in ("th_open", "td_open"):
            row.append(tokens[i + 1])  # the cell's inline token
        elif t.type == "tr_close":
            if in_head:
                cur[0].extend(row)
            else:
                cur[1].append(row)
        elif t.type == "table_close":
            out.append(cur)
    return out


def text(inline) -> str:
    """The text a cell renders, provided it holds nothing but plain text (else fail)."""
    kinds = {c.type for c in inline.children or []}
    assert kinds <= {"text"}, f"cell {inline.content!r} parsed into {kinds}"
    return "".join(c.content for c in inline.children or [])


def cell_texts(inline) -> str:
    """The text of a cell, allowing our own emphasis/code markup."""
    out = []
    for c in inline.children or []:
        if c.type in ("text", "code_inline"):
            out.append(c.content)
    return "".join(out)


def find_table(tabs, *headers: str):
    """The one table whose first header cells are ``headers``."""
    found = [t for t in tabs if [cell_texts(c) for c in t[0][: len(headers)]] == list(headers)]
    assert len(found) == 1, f"expected one table headed {headers!r}, found {len(found)}"
    return found[0]


def levels_table(tabs):
    """The per-level table without its marker column (the first, "▶" on the --level row)."""
    head, rows = find_table(tabs, "", "N", "≥2.0 reports")
    return head[1:], [r[1:] for r in rows]


def all_inline_children(tokens):
    for t in tokens:
        if t.type == "inline":
            yield from t.children or []


# ---- fixtures ------------------------------------------------------------------------------
@pytest.fixture
def evil_report(tmp_path):
    path = write_index(
        tmp_path / "idx",
        report_titles={4: EVIL, 3: "[link](javascript:alert(1)) www.evil.com @someone"},
        periods={1: "2025 <img src=x onerror=alert(1)>\n| broken | row |"},
        entity_titles={"e7": "**E7** <script>x</script>"},
    )
    return report_for(path)


# ---- tests ---------------------------------------------------------------------------------
def test_tables_parse_with_expected_rows(evil_report):
    out = render_markdown(evil_report)
    tokens = md().parse(out)
    tabs = tables(tokens)
    # header, tree, levels, coverage, dynamic selection per graphrag line, reports sent at --level, depth
    # histogram, depth per level, per root, findings (no local search: costs=False counts no tokens)
    assert len(tabs) == 10
    assert [cell_texts(r[0]) for r in find_table(tabs, "graphrag", "descends")[1]] == [
        "2.0.0-2.7.2",
        "3.0.0-3.x",
    ]
    for head, rows in tabs:  # no row broken by a stray pipe: every row has the header's width
        assert all(len(r) == len(head) for r in rows)

    tree = find_table(tabs, "level")
    assert [[cell_texts(c) for c in r] for r in tree[1]] == [
        ["0", "2", "1", "2", "6"],  # level 0: communities 0 1; leaf 1; reports 2; entities e1-e6
        ["1", "2", "1", "2", "4"],  # level 1: 2 3; leaf 3; e1-e4
        ["2", "1", "1", "1", "2"],  # level 2: 4; e1 e2
    ]
    levels = levels_table(tabs)
    by_n = {cell_texts(r[0]): [cell_texts(c) for c in r] for r in levels[1]}
    assert set(by_n) == {"0", "1", "2", "None"}
    # N=2: >=2.0 5 (2 at L0, 2 at L1, 1 at L2), <2.0 3, extra +2 of which ancestors 0 and 2,
    # level-2 only 1, 4 entities stuck; entities per report 4 2 2 2 2
    # a 3.x layout: graphrag < 2.0 cannot read it, so its count and the cells using it are marked hypothetical
    assert by_n["2"] == ["2", "5", "hyp. 3¹", "+2 (2)¹", "2/2/1", "1", "4", "2·2·4"]
    # N=1: >=2.0 {0,1,2,3}; <2.0 frontier {1,2,3}; ancestors sent: 0; level-1 only 2; stuck e5 e6
    assert by_n["1"] == ["1", "4", "hyp. 3¹", "+1 (1)¹", "2/2", "2", "2", "2·2·4"]
    # N=0: the two roots (4 and 2 entities: median 3); None: like N=2, nothing is "stuck"
    assert by_n["0"] == ["0", "2", "hyp. 2¹", "+0 (0)¹", "2", "2", "0", "2·3·4"]
    assert by_n["None"] == ["None", "5", "hyp. 3¹", "+2 (2)¹", "2/2/1", "5", "—", "2·2·4"]
    # the queried level (2) is the bold row
    row2 = next(r for r in levels[1] if cell_texts(r[0]) == "2")
    assert all(any(ch.type == "strong_open" for ch in c.children) for c in row2)
    # and the only row with the marker column's "▶"
    marks = {cell_texts(r[1]): cell_texts(r[0]) for r in find_table(tabs, "", "N", "≥2.0 reports")[1]}
    assert marks == {"0": "", "1": "", "2": "▶", "None": ""}

    sent = find_table(tabs, "community")
    assert [cell_texts(r[0]) for r in sent[1]] == ["0", "1", "2", "3", "4"]
    assert [cell_texts(r[-1]) for r in sent[1]] == ["no", "yes", "no", "yes", "yes"]  # frontier {1, 3, 4}

    hist = find_table(tabs, "depth reached")
    assert [[cell_texts(c) for c in r][:2] for r in hist[1]] == [["0", "1"], ["1", "0"], ["2", "1"]]

    findings = find_table(tabs, "severity")
    assert [cell_texts(r[1]) for r in findings[1]] == EXPECTED_RULES
    assert [cell_texts(r[0]) for r in findings[1]] == ["warning"] * 4 + ["info"] * 2


def test_untrusted_titles_are_inert_text(evil_report):
    out = render_markdown(evil_report, include_titles=True)
    tokens = md().parse(out)
    tabs = tables(tokens)
    sent = find_table(tabs, "community")
    titles = {cell_texts(r[0]): r[2] for r in sent[1]}
    # the title cell parses into plain text only and shows the title itself, whitespace flattened
    assert text(titles["4"]) == " ".join(EVIL.split())
    # the rendered text keeps the words; a word joiner after "@" stops GitHub's @mention linking
    assert text(titles["3"]) == "[link](javascript:alert(1)) www.evil.com @\u2060someone"
    # nowhere in the document: raw HTML inline, links, images
    kinds = {c.type for c in all_inline_children(tokens)}
    assert not kinds & {"html_inline", "link_open", "image"}
    # the only HTML blocks are our own <details>/<summary> lines
    for t in tokens:
        if t.type == "html_block":
            for line in t.content.strip().splitlines():
                assert line in ("<details>", "</details>") or (
                    line.startswith("<summary>") and line.endswith("</summary>") and "<" not in line[9:-10]
                ), line
    # emphasis / code only where we put it: never inside a cell that carries index text
    for head, rows in tabs:
        for r in rows:
            for c in r:
                if "evil" in c.content or "script" in c.content:
                    text(c)
    # raw text: no URL scheme survives for GitHub's autolinker, no unescaped tag
    assert "://" not in out and "<script" not in out and "<img" not in out and "www.evil" not in out


def test_period_value_in_a_finding_message_cannot_break_the_findings_table(evil_report):
    tokens = md().parse(render_markdown(evil_report))
    findings = find_table(tables(tokens), "severity")
    assert len(findings[1]) == len(EXPECTED_RULES)
    msg = next(r[2] for r in findings[1] if cell_texts(r[1]) == "multiple-periods")
    shown = text(msg)
    assert "2025 <img src=x onerror=alert(1)> | broken | row |" in shown


def test_entity_titles_in_evidence_are_escaped(evil_report):
    out = render_markdown(evil_report, include_titles=True)
    tokens = md().parse(out)
    bullets = [t for t in tokens if t.type == "inline" and t.content.startswith("examples")]
    assert len(bullets) == 1
    assert text(bullets[0]) == 'examples: ["**E7** <script>x</script>"]'


def test_header_carries_versions_generation_path_and_level(tmp_path):
    path = write_index(tmp_path / "my index [v3]")
    out = render_markdown(report_for(path, level=1), include_titles=True)
    tabs = tables(md().parse(out))
    head = tabs[0]
    assert [cell_texts(c) for c in head[0]] == ["", ""]
    fields = {cell_texts(r[0]): cell_texts(r[1]) for r in head[1]}
    assert fields["graphrag-audit"] == importlib.metadata.version("graphrag-audit")
    assert fields["Python"] == "{}.{}.{}".format(*__import__("sys").version_info[:3])
    assert fields["pandas"] == pd.__version__
    assert fields["pyarrow"] == pyarrow.__version__
    if importlib.util.find_spec("graphrag") is None:
        assert fields["graphrag"] == "not installed"
    else:
        assert fields["graphrag"] == importlib.metadata.version("graphrag")
    assert fields["platform"].startswith(platform.system())
    assert fields["index"] == str(path)
    assert fields["generation"] == "3.x"  # the evidence only with verbose
    verbose = render_markdown(report_for(path, level=1), include_titles=True, verbose=True)
    vfields = {cell_texts(r[0]): cell_texts(r[1]) for r in tables(md().parse(verbose))[0][1]}
    assert vfields["generation"].startswith("3.x (")
    assert "--level 1" in fields["options"]
    assert fields["size"].startswith("7 entities · 5 communities · 5 reports · 2 roots · 3 levels")
    # the answer is the first paragraph, under the heading
    assert out.startswith("## graphrag-audit report\n\n**at community_level 1 graphrag &gt;= 2.0 sends ")


def test_long_parts_are_capped_and_collapsed(tmp_path):
    report = report_for(write_index(tmp_path / "idx"))
    out = render_markdown(report, max_rows=2)
    tabs = tables(md().parse(out))
    assert len(find_table(tabs, "community")[1]) == 2
    assert "… 3 more reports not shown" in out
    assert len(find_table(tabs, "root")[1]) == 2  # exactly 2 roots: nothing left out
    assert "more roots" not in out
    # each collapsed part: <details>, <summary>, a blank line before its Markdown
    assert out.count("<details>") == out.count("</details>") == 4
    assert out.count("</summary>\n\n") == 4


def test_index_without_findings_says_none(tmp_path):
    # a balanced tree queried at level 0: nothing stuck, nothing inflated, no single child
    tree = {0: (0, -1, ["a", "b", "c", "d"]), 1: (1, 0, ["a", "b"]), 2: (1, 0, ["c", "d"])}
    report = report_for(write_index(tmp_path / "idx", tree=tree, entities=["a", "b", "c", "d"]), level=0)
    out = render_markdown(report)
    assert "### Findings (0)\n\nNone." in out
    # with the coverage and the dynamic selection per graphrag line (no local search without costs)
    assert len(tables(md().parse(out))) == 9


def test_verbs_v3():
    path = SHARED / "verbs-v3"
    if not path.is_dir():
        pytest.skip(f"{SHARED} is absent: this test needs ../shared/indexes/verbs-v3 beside the repo")
    report = audit(path, AuditOptions(level=2, costs=False))
    out = render_markdown(report)
    assert len(out) < 65536  # fits a GitHub issue body
    tabs = tables(md().parse(out))
    for head, rows in tabs:
        assert all(len(r) == len(head) for r in rows)
    levels = levels_table(tabs)
    row2 = next([cell_texts(c) for c in r] for r in levels[1] if cell_texts(r[0]) == "2")
    # docs/graphrag-semantics.md#numbers; graphrag < 2.0 cannot read a 3.x layout: 97 is its rule, marked hypothetical
    assert row2[1:3] == ["120", "hyp. 97¹"] and row2[5] == "32"
    assert row2[4] == "23/65/32"  # the tree's reports per level (README of shared/indexes: 23/65/32/2)
    hist = find_table(tabs, "depth reached")
    assert [[cell_texts(c) for c in r][:2] for r in hist[1]] == [
        ["0", "11"],
        ["1", "7"],
        ["2", "4"],
        ["3", "1"],
    ]
    rules = [cell_texts(r[1]) for r in find_table(tabs, "severity")[1]]
    assert "depth-mismatch" in rules
    sent = find_table(tabs, "community")
    assert len(sent[1]) == 100 and "… 20 more reports not shown" in out


def test_cost_columns_show_the_costs_attached_to_the_report(tmp_path):
    """With costs on, the levels table gains >=2.0 tokens and map calls >=2.0 / <2.0, and the
    report list its tokens column. The numbers are put on the report here (costs.py computes
    them; its own tests check them): the renderer must show each in its place."""
    from dataclasses import replace

    import numpy as np

    from graphrag_audit.results import Costs, LevelResult

    def costs(tokens, map_calls):
        return Costs(
            tokens=tokens,
            map_calls=map_calls,
            reduce_calls=1,
            llm_calls=map_calls + 1,
            reports_in_context=0,
            dropped_by_rank=0,
            oversize_reports=0,
            tokenizer="cl100k_base",
            tokens_exact=True,
        )

    report = report_for(write_index(tmp_path / "idx"))
    levels = []
    for r in report.levels:
        n = -1 if r.community_level is None else r.community_level
        s = r.selected
        levels.append(
            LevelResult(
                r.community_level,
                {
                    **s,
                    "v2": s["v2"].with_(
                        cost=costs(1000 + n, 10 + n), row_tokens=np.arange(len(s["v2"].rows)) + 7
                    ),
                    "v1": s["v1"].with_(cost=costs(500 + n, 20 + n)),
                },
            )
        )
    lst = report.listing.by_behaviour
    listing = replace(
        report.listing, by_behaviour={**lst, "v2": replace(lst["v2"], tokens=(7, 8, 9, 10, 11))}
    )
    report = replace(report, options=replace(report.options, costs=True), levels=levels, listing=listing)
    tabs = tables(md().parse(render_markdown(report, include_titles=True)))
    levels = levels_table(tabs)
    assert [cell_texts(c) for c in levels[0]][-3:] == ["≥2.0 tokens", "<2.0 tokens", "map calls ≥2.0 / <2.0"]
    by_n = {cell_texts(r[0]): [cell_texts(c) for c in r] for r in levels[1]}
    # the < 2.0 costs come from the hypothetical < 2.0 selection (a 3.x layout): marked
    assert by_n["0"][-3:] == ["1,000", "500¹", "10/20¹"]
    assert by_n["2"][-3:] == ["1,002", "502¹", "12/22¹"]
    assert by_n["None"][-3:] == ["999", "499¹", "9/19¹"]
    sent = find_table(tabs, "community")
    # rows listed by (level, community), each with the listing's tokens
    assert [cell_texts(r[4]) for r in sent[1]] == ["7", "8", "9", "10", "11"]


def test_verify_section(tmp_path):
    """--verify results (graphrag_audit.verify's dict) are rendered, escaped, as a table."""
    base = report_for(write_index(tmp_path / "idx"))
    from graphrag_audit.results.verify import LevelCheck, SelectionCheck, VerifyResult

    report = base.with_verify(VerifyResult(available=False, reason="graphrag is not installed <b>here</b>"))
    out = render_markdown(report)
    assert "Not run: graphrag is not installed &lt;b&gt;here&lt;/b&gt;" in out
    report = base.with_verify(
        VerifyResult(available=True, graphrag_version="3.3.0", behaviour="v2", agree=True)
    )
    assert (
        "graphrag 3.3.0's read_indexer_reports agrees with the graphrag ≥ 2.0 selection at every "
        "community_level." in render_markdown(report)
    )
    report = base.with_verify(
        VerifyResult(
            available=True,
            graphrag_version="1.2.0",
            behaviour="v1",
            agree=False,
            levels=(
                LevelCheck(0, SelectionCheck("agrees", 2), audit_count=2, agree=True),
                LevelCheck(
                    None,
                    SelectionCheck("graphrag_raised", None, graphrag_error="KeyError: 'x | y'\n::error::z"),
                    audit_count=3,
                    agree=False,
                ),
            ),
        )
    )
    out = render_markdown(report)
    assert (
        "graphrag 1.2.0 **does not return a selection** at every community_level: its "
        "read_indexer_reports raises KeyError at N=None (KeyError: 'x \\| y' ::error::z)"
    ) in out
    assert "agrees with" not in out
    tabs = tables(md().parse(out))
    assert len(tabs) == 11  # costs=False: no local search tables
    vt = find_table(tabs, "N", "result")
    assert [[cell_texts(c) for c in r] for r in vt[1]] == [
        ["0", "agrees", "2", "2", ""],
        ["None", "graphrag raised", "—", "3", "KeyError: 'x | y' ::error::z"],
    ]
    text(vt[1][1][4])
