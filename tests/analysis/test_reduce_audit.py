"""analysis/reduce.py: ``levels[].global_reduce``, its settings, the ``reduce-truncation-risk`` finding and
the tables of every format. verbs-v3 at N=2: 11 map calls under graphrag >= 2.0 (the v2-inflation
note), 8 under < 2.0; a full answer is 1,000 words x 1.33 = 1,330 tokens + its 13-token header, 8 of
them fit 12,000 tokens (8 x 1,343 = 10,744; 9 x 1,343 = 12,087); 1.x's 1,000-token answers: 11 fit."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import shared_index

from graphrag_audit.analysis.audit import audit_with_model
from graphrag_audit.analysis.reduce import reduce_settings
from graphrag_audit.analysis.treeview import build_forest
from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.load import load_index
from graphrag_audit.render import cells
from graphrag_audit.render.html import render_html
from graphrag_audit.render.markdown import render_markdown
from graphrag_audit.render.text import render_text
from graphrag_audit.results.audit import AuditOptions


@pytest.fixture(scope="module")
def model():
    return load_index(shared_index("verbs-v3"))


@pytest.fixture(scope="module")
def report(model):
    return audit_with_model(model, AuditOptions())[1]


def _rules(report) -> set[str]:
    return {f.rule for f in report.findings}


def test_verbs_v3_at_2(report):
    entry = report.level(2).global_reduce
    assert (entry["data_max_tokens"], entry["tokens_per_word"]) == (12_000, 1.33)
    v2, v1 = entry["by_version"]["2.x"], entry["by_version"]["1.x"]
    assert entry["by_version"]["3.x"] == {**v2, "graphrag": "3.0.0-3.x"}
    assert (v2["status"], v2["map_calls"], v2["answer_limit"], v2["answer_unit"]) == (
        "exact",
        11,
        1000,
        "words",
    )
    assert (v2["answer_tokens"], v2["answers_fit"], v2["answers_dropped"]) == (1330, 8, 3)
    assert (v1["status"], v1["map_calls"], v1["answer_unit"], v1["answers_fit"], v1["answers_dropped"]) == (
        "hypothetical",
        8,
        "tokens",
        11,
        0,
    )
    sel = report.level(2).selected["v2"].cost
    assert v2["map_tokens_mean"] == round(sel.tokens / 11) and v2["map_tokens_max"] <= 12_000
    assert report.level(None).global_reduce is not None  # global search runs without a level filter too
    (f,) = [f for f in report.findings if f.rule == "reduce-truncation-risk"]
    assert f.severity == "warning" and f.evidence["level"] == 2
    assert "11 map calls" in f.message and "holds 8" in f.message and "1.33 tokens per word" in f.message
    assert f.evidence["behaviours"]["2.x"]["answers_dropped"] == 3 and "1.x" not in f.evidence["behaviours"]


def test_tokens_per_word_and_level(model):
    # 1,000 tokens + 13 a point: 11 fit, the 11 map calls too
    report = audit_with_model(model, AuditOptions(tokens_per_word=1.0))[1]
    assert report.level(2).global_reduce["by_version"]["2.x"]["answers_dropped"] == 0
    assert "reduce-truncation-risk" not in _rules(report)
    assert "reduce-truncation-risk" not in _rules(
        audit_with_model(model, AuditOptions(level=1))[1]
    )  # 8 calls


def test_no_costs_no_reduce(model):
    report = audit_with_model(model, AuditOptions(costs=False))[1]
    assert all(r.global_reduce is None for r in report.levels)
    assert "reduce-truncation-risk" not in _rules(report) and cells.reduce_tables(report) == []
    assert "Global search's reduce" not in render_text(report, width=120)


def test_settings(model, tmp_path):
    assert reduce_settings(model) == {
        "data_max_tokens": 12_000,
        "map_max_length": 1000,
        "map_max_tokens": 1000,
    }
    f = tmp_path / "settings.yaml"
    f.write_text("global_search:\n  data_max_tokens: 24000\n  map_max_length: '500'\n  map_max_tokens: 800\n")
    with_settings = dataclasses.replace(model, settings_file=f)
    assert reduce_settings(with_settings) == {
        "data_max_tokens": 24_000,
        "map_max_length": 500,
        "map_max_tokens": 800,
    }
    # 500 x 1.33 = 665 + 13: 35 fit 24,000 (35 x 678 = 23,730); 800 + 13: 29 (29 x 813 = 23,577)
    entry = audit_with_model(with_settings, AuditOptions())[1].level(2).global_reduce
    assert entry["by_version"]["2.x"]["answers_fit"] == 35 and entry["by_version"]["1.x"]["answers_fit"] == 29
    f.write_text("global_search:\n  data_max_tokens: lots\n")
    with pytest.raises(IndexInputError, match="data_max_tokens must be a positive integer"):
        reduce_settings(with_settings)


def test_every_format_shows_the_tables(model, report):
    tables = dict(cells.reduce_tables(report))
    assert list(tables) == [
        "graphrag 1.0-1.2 (hypothetical: it cannot read this index), map answers of at most 1,000 tokens",
        "graphrag 2.0.0-2.7.2, 3.0.0-3.x, map answers of at most 1,000 words",
    ]
    at_2 = tables["graphrag 2.0.0-2.7.2, 3.0.0-3.x, map answers of at most 1,000 words"][2]
    assert at_2[0] == "2" and at_2[1] == "11" and at_2[4:] == ["8", "3"]
    caption = cells.reduce_caption(report)
    assert "1.33 tokens per word" in caption and "12,000 tokens" in caption
    assert "graphrag 2.0.0-2.7.2, 3.0.0-3.x, map answers of at most 1,000 words:" in render_text(
        report, width=120
    )
    assert f"| 2 | 11 | {at_2[2]} | {at_2[3]} | 8 | 3 |" in render_markdown(report)
    html = render_html(report, build_forest(model, 2, report.selections_by_level()))
    assert f"<td>2</td><td>11</td><td>{at_2[2]}</td><td>{at_2[3]}</td><td>8</td><td>3</td>" in html
    assert 'id="global-reduce"' in html
    hidden = dict(cells.reduce_tables(report, hide_hypothetical=True))
    assert list(hidden) == ["graphrag 2.0.0-2.7.2, 3.0.0-3.x, map answers of at most 1,000 words"]
