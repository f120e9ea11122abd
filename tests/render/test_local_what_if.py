"""The ``--entities`` what-if in markdown, github and HTML (and text), with hostile entity names and report
titles: each medium escapes them (render/cells.py's rows). The tree is the engine test's hand-worked one:
at N=2, c and d are in 4, 3 and 0, which (matches, rank) orders 4, 3, 0; 0's report is made too large
to fit, so it is the first that did not fit (>= 2.0; 1.x reads the rolled-up reports 4 and 3)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import test_local_search
from test_html_report import Doc, audited_html, load_page, needs_chromium
from typer.testing import CliRunner

from graphrag_audit.analysis.audit import audit
from graphrag_audit.cli import app
from graphrag_audit.io.load import load_index
from graphrag_audit.render.github import render_github
from graphrag_audit.render.markdown import render_markdown
from graphrag_audit.render.text import render_text
from graphrag_audit.results.audit import AuditOptions
from graphrag_audit.sanitise.common import plain
from graphrag_audit.sanitise.html import html_text
from graphrag_audit.sanitise.markdown import markdown_cell

tree = test_local_search.tree  # the fixture
TITLES = {
    4: "| pipe `tick` <script>alert(1)</script>\n::error::four \x1b[31mred",
    3: "::error title=t::three ##[error]legacy",
    0: "<img src=x onerror=alert(1)> *zero*",
}
NAMES = {"c": "c|`x`<b>bold</b>\n::warning::c", "d": "\x1b]0;pwned\x07d ##[group]"}


@pytest.fixture
def hostile(tree):
    """The tree with hostile report titles and entity titles, report 0 too large for the budget."""
    path = tree.path
    rep = pd.read_parquet(path / "community_reports.parquet")
    rep["title"] = [TITLES.get(c, f"Report {c}") for c in rep["community"]]
    rep.loc[rep["community"] == 0, "full_content"] = "word " * 2_000
    rep.to_parquet(path / "community_reports.parquet", index=False)
    ent = pd.read_parquet(path / "entities.parquet")
    ent["title"] = [NAMES.get(e, e) for e in ent["id"]]
    ent.to_parquet(path / "entities.parquet", index=False)
    return path, AuditOptions(level=2, entities=(NAMES["c"], NAMES["d"], "nobody"))


def _section(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i : text.index(end, i)]


def test_json_lists_titles(hostile):
    path, opts = hostile
    got = audit(load_index(path), opts).to_dict()["levels"][2]["local_search"]["what_if"]
    v2 = got["by_version"]["2.x"]
    assert [(r["community"], r["title"]) for r in v2["reports"]] == [(4, TITLES[4]), (3, TITLES[3])]
    assert (v2["did_not_fit"]["community"], v2["did_not_fit"]["title"]) == (0, TITLES[0])
    assert v2["not_read"] == ["nobody"]


def test_markdown(hostile):
    path, opts = hostile
    report = audit(load_index(path), opts)
    md = render_markdown(report, include_titles=True)
    part = _section(md, "What-if at N=2", "Reports graphrag")
    assert "<script" not in part and "<img" not in part and "<b>" not in part and "\x1b" not in part
    assert not [x for x in part.splitlines() if x.lstrip().startswith("::")]
    rows = [x for x in part.splitlines() if x.startswith("| ")]
    # header, separator, then per table its rows: every row keeps its 7 cells (no pipe breaks out)
    assert all(len(re.split(r"(?<!\\)\|", x)) == 9 for x in rows), rows
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", x)[1:-1]] for x in rows]
    body = [c for c in cells if c[0] not in ("#", "---:")]
    # 1.x: 4, 3; >= 2.0 (one table): 4, 3, then 0 did not fit
    assert [(c[0], c[1]) for c in body] == [
        ("1", "4"),
        ("2", "3"),
        ("1", "4"),
        ("2", "3"),
        ("did not fit", "0"),
    ]
    assert [c[2] for c in body] == [markdown_cell(TITLES[c], 100) for c in (4, 3, 4, 3, 0)]
    assert markdown_cell(NAMES["c"]) in part and "nobody" in part
    # without --include-titles: no title and no name, only how many
    private = _section(render_markdown(report), "What-if at N=2", "Reports graphrag")
    assert "alert" not in private and "pwned" not in private and "nobody" not in private
    assert (
        "for 3 entities" in private
        and "Not read at this N (unknown, or not in a community &lt;= N): 1 name" in private
    )


def test_github(hostile):
    path, opts = hostile
    report = audit(load_index(path), opts)
    for include in (False, True):
        lines = render_github(report, include_titles=include).splitlines()
        what_if = [x for x in lines if "What-if at N=2" in x or x.startswith("graphrag-audit: graphrag ")]
        assert len(what_if) == 3  # the caption, 1.x, >= 2.0
        assert "at community_level 2 (" in lines[-1]  # the summary line stays last
        for x in what_if:  # one plain log line each: no command at its start, no legacy ##[ anywhere
            assert not x.lstrip().startswith("::") and "##[" not in x and "\x1b" not in x and "\x07" not in x
        joined = "\n".join(what_if)
        assert ("pwned" in joined) is include and ("alert(1)" in joined) is include
    assert 'did not fit: community 0 "<img src=x onerror=alert(1)> *zero*"' in joined


def test_text_escapes_names(hostile):
    path, opts = hostile
    text = render_text(audit(load_index(path), opts), width=200)
    part = _section(text, "What-if at N=2", "\n\n")
    assert "\x1b" not in part and "\x07" not in part and "did not fit: community 0" in part


def _html(hostile) -> str:
    path, opts = hostile
    return audited_html(path, opts)[1]


def test_html(hostile):
    html = _html(hostile)
    part = _section(html, '<section id="local-what-if">', "</section>")
    doc = Doc(part)
    assert not [t for t, _ in doc.tags if t in ("script", "img", "b", "svg", "iframe")]
    body = [r for r in doc.rows if r and r[0] != "#"]
    assert [(r[0], r[1], r[2]) for r in body] == [
        ("1", "4", plain(TITLES[4])),
        ("2", "3", plain(TITLES[3])),
        ("1", "4", plain(TITLES[4])),
        ("2", "3", plain(TITLES[3])),
        ("did not fit", "0", plain(TITLES[0])),
    ]
    assert html_text(NAMES["c"]) in part and "nobody</p>" in part


@needs_chromium
def test_html_in_chromium(hostile, tmp_path):
    page = tmp_path / "what-if.html"
    page.write_text(_html(hostile), encoding="utf-8")
    got = load_page(
        page.as_uri(),
        tmp_path / "u",
        evaluate={
            "titles": "Array.from(document.querySelectorAll('#local-what-if td.title')).map(td => td.innerText)",
            "caption": "document.querySelector('#local-what-if p.caption').innerText",
            "injected": "document.querySelectorAll('#local-what-if script, #local-what-if img, #local-what-if b').length",
        },
    )
    assert got["requests"] == [page.as_uri()] and got["console"] == [] and got["exceptions"] == []
    v = got["values"]
    assert v["titles"] == [plain(TITLES[c]) for c in (4, 3, 4, 3, 0)]
    assert plain(NAMES["c"]) in v["caption"] and v["injected"] == 0


def test_report_entities_option(hostile, tmp_path):
    path, _ = hostile
    runner = CliRunner()
    refused = runner.invoke(
        app, ["report", str(path), "-o", str(tmp_path / "x.html"), "--no-costs", "--entities", "c"]
    )
    assert refused.exit_code == 2 and "--entities needs token counts" in refused.output
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", str(path), "-o", str(out), "--entities", "c, d ,, nobody"])
    assert res.exit_code == 0, res.output
    part = _section(out.read_text(encoding="utf-8"), '<section id="local-what-if">', "</section>")
    assert "for c, d, nobody" in part and "nobody</p>" in part
    md = runner.invoke(app, ["levels", str(path), "-f", "markdown", "--entities", "c,d"]).stdout
    assert "What-if at N=2" in md and "for 2 entities" in md
