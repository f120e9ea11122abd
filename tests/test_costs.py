"""Map calls and tokens attached to each selection."""

from __future__ import annotations

from builders import SEED, write_v3
from conftest import shared_index
from graphrag_audit.audit import AuditOptions, audit


def test_dulce_v1_notebook_llm_calls():
    # graphrag's v1.2.2 global-search notebook on this index printed "LLM calls: 4" (3 map + 1 reduce)
    report = audit(shared_index("dulce-v1"), AuditOptions(level=2))
    v1 = report.level(2)["selected"]["v1"]
    assert v1.count == 56
    assert (v1.cost["map_calls"], v1.cost["reduce_calls"], v1.cost["llm_calls"]) == (3, 1, 4)
    assert v1.cost["tokens_exact"] is True


def test_costs_grow_with_what_is_sent(tmp_path):
    report = audit(write_v3(tmp_path / "i", SEED), AuditOptions(tokenizer="estimate", max_context_tokens=60))
    for r in report.levels:
        s = r["selected"]
        assert s["v2"].cost["tokens"] >= s["v1"].cost["tokens"]
        assert s["v2"].cost["reports_in_context"] == s["v2"].count
        # every row token count is known for the rows sent
        assert (s["v2"].row_tokens >= 0).all()
    assert report.level(2)["selected"]["v2"].cost["map_calls"] > report.level(0)["selected"]["v2"].cost["map_calls"]


def test_no_costs_option(tmp_path):
    report = audit(write_v3(tmp_path / "i", SEED), AuditOptions(costs=False))
    assert report.level(1)["selected"]["v2"].cost is None
    assert "tokens" not in report.to_dict()["levels"][1]["selected"]["v2"]
