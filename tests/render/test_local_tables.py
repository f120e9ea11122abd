"""The local-search tables of text, markdown (the step summary's too) and HTML (render/cells.py's rows).
Expected numbers: issue 41's table, measured with graphrag's own functions (verbs-v3, N=2 under 2.x/3.x:
98 probes, 2 with their finest report at level 2, 43 with none)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from conftest import shared_index  # noqa: E402

from graphrag_audit.analysis.audit import audit_with_model  # noqa: E402
from graphrag_audit.analysis.treeview import build_forest  # noqa: E402
from graphrag_audit.render import cells  # noqa: E402
from graphrag_audit.render.html import render_html  # noqa: E402
from graphrag_audit.render.markdown import render_markdown  # noqa: E402
from graphrag_audit.render.text import render_text  # noqa: E402
from graphrag_audit.results.audit import AuditOptions  # noqa: E402


@pytest.fixture(scope="module")
def audited():
    model, report = audit_with_model(shared_index("verbs-v3"), AuditOptions())
    return report, render_html(report, build_forest(model, 2, report.selections_by_level()))


@pytest.fixture(scope="module")
def verbs_v3(audited):
    return audited[0]


def test_rows_are_the_issue_table(verbs_v3):
    tables = dict(cells.local_tables(verbs_v3))
    # 2.x and 3.x read the same selection: one table; 1.x cannot read a 3.x layout
    assert list(tables) == [
        "graphrag 1.0-1.2 (hypothetical: it cannot read this index)",
        "graphrag 2.0.0-2.7.2, 3.0.0-3.x",
    ]
    at_2 = tables["graphrag 2.0.0-2.7.2, 3.0.0-3.x"][2]
    assert at_2[:3] == ["2", "2%", "44%"]  # 2 and 43 of 98 probes
    assert "98 probes" in cells.local_caption(verbs_v3) and "1,800 tokens" in cells.local_caption(verbs_v3)


def test_every_format_shows_the_tables(verbs_v3, audited):
    text = render_text(verbs_v3, width=120)
    assert "graphrag 2.0.0-2.7.2, 3.0.0-3.x:" in text
    assert "| 2 | 2% | 44% |" in render_markdown(verbs_v3)
    assert "<td>2</td><td>2%</td><td>44%</td>" in audited[1]


def test_sampled_note_and_no_local_search(verbs_v3):
    levels = [
        dataclasses.replace(r, local_search={**r.local_search, "sampled": {"probes": 10, "of": 98}})
        if r.local_search
        else r
        for r in verbs_v3.levels
    ]
    sampled = dataclasses.replace(verbs_v3, levels=tuple(levels))
    assert "(sampled: 10 of 98 leaves)" in cells.local_caption(sampled)
    none = dataclasses.replace(
        verbs_v3, levels=tuple(dataclasses.replace(r, local_search=None) for r in levels)
    )
    assert cells.local_tables(none) == []
    assert "Local search's community context" not in render_text(none, width=120)
