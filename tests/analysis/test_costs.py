"""Map calls and tokens attached to each selection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from builders import SEED, write_v1, write_v3
from conftest import shared_index

from graphrag_audit.analysis.audit import AuditOptions, audit, audit_with_model
from graphrag_audit.analysis.costs import ContextCoster, v1_node_pairs, v1_text_unit_counts
from graphrag_audit.graphrag.context import text_unit_counts
from graphrag_audit.io.load import load_index


def test_dulce_v1_notebook_llm_calls():
    # graphrag's v1.2.2 global-search notebook on this index printed "LLM calls: 4" (3 map + 1 reduce)
    report = audit(shared_index("dulce-v1"), AuditOptions(level=2))
    v1 = report.level(2).selected["v1"]
    assert v1.count == 56
    assert (v1.cost.map_calls, v1.cost.reduce_calls, v1.cost.llm_calls) == (3, 1, 4)
    assert v1.cost.tokens_exact is True


def test_costs_grow_with_what_is_sent(tmp_path):
    report = audit(write_v3(tmp_path / "i", SEED), AuditOptions(tokenizer="estimate", max_context_tokens=60))
    for r in report.levels:
        s = r.selected
        assert s["v2"].cost.tokens >= s["v1"].cost.tokens
        assert s["v2"].cost.reports_in_context == s["v2"].count
        # every row token count is known for the rows sent
        assert (s["v2"].row_tokens >= 0).all()
    assert report.level(2).selected["v2"].cost.map_calls > report.level(0).selected["v2"].cost.map_calls


def test_no_costs_option(tmp_path):
    report = audit(write_v3(tmp_path / "i", SEED), AuditOptions(costs=False))
    assert report.level(1).selected["v2"].cost is None
    assert "tokens" not in report.to_dict()["levels"][1]["selected"]["v2"]


# graphrag 1.2.0's own build_community_context (run by tests/verify/test_verify_graphrag.py) counted these
# tokens for the v1 selections: its occurrence weights come from create_final_nodes, where the
# report for community -1 has a weight (verbs-v0.5, real-csekg-v1: there it is the maximum) and an
# updated index lists other memberships than its communities table (real-climate-update-v09).
GRAPHRAG_120_V1_TOKENS = {
    ("verbs-v0.5", 0): 9503,
    ("verbs-v0.5", 1): 15313,
    ("verbs-v0.5", 2): 18751,
    ("real-csekg-v1", 0): 7441,
    ("real-csekg-v1", 1): 22572,
    ("real-csekg-v1", 2): 23447,
    ("real-climate-update-v09", 2): 337923,
}


@pytest.mark.parametrize("name", sorted({k[0] for k in GRAPHRAG_120_V1_TOKENS}))
def test_v1_tokens_are_graphrag_1_2_0s(name):
    report = audit(shared_index(name))
    for (index, n), tokens in GRAPHRAG_120_V1_TOKENS.items():
        if index == name:
            assert report.level(n).selected["v1"].cost.tokens == tokens, n


@pytest.mark.parametrize(
    "name",
    [
        "verbs-v0.5",
        "real-csekg-v1",
        "real-climate-update-v09",
        "dulce-v1",
        "real-textbook-v1",
        "real-golf-zh-v1",
    ],
)
def test_v1_counts_are_the_plain_count_over_node_rows(name):
    """graphrag < 2.0's counts = text_unit_counts over the node rows of the file (matched to
    entities by node id) with level <= N, at every N."""
    model = load_index(shared_index(name))
    node_pairs = v1_node_pairs(model)
    r, e = model.rollup_rows, model.entities
    nodes = pd.read_parquet(model.files["nodes"], columns=["id", "level"])
    # the roll-up rows are the file's node rows sorted stably by level (graphrag 1.x writes them
    # entity by entity)
    in_level_order = np.argsort(nodes["level"].to_numpy(), kind="stable")
    node_ids = nodes["id"].iloc[in_level_order].reset_index(drop=True)
    assert len(node_ids) == len(r)
    assert r["level"].tolist() == nodes["level"].iloc[in_level_order].tolist()
    rows = pd.DataFrame(
        {
            "entity": np.asarray(node_ids.to_numpy(), dtype=object),
            "community": r["community"].to_numpy(),
            "level": r["level"].to_numpy(),
        }
    )
    tu = pd.Series(e["text_unit_ids"].to_numpy(), index=e["id"].to_numpy())
    for n in sorted(set(rows["level"].tolist())) + [None]:
        want = text_unit_counts(rows, tu, n).sort_index()
        got = v1_text_unit_counts(node_pairs, n).sort_index()
        assert got.index.tolist() == want.index.tolist() and got.tolist() == want.tolist(), n


def test_v1_without_node_ids_matching_entities_has_no_weight_column(tmp_path):
    """graphrag 1.x matches create_final_nodes to entities by id; when none match it has no
    entities, computes no weights and raises nothing (builders.write_v1's node ids are n-0, n-1...)."""
    model, report = audit_with_model(write_v1(tmp_path / "i", SEED))
    coster = ContextCoster(model)
    for r in report.levels:
        n, v1 = r.community_level, r.selected["v1"]
        assert coster.selection_weights(v1.rows, "v1", n) is None
        assert coster.selection_batches(v1.rows, "v1", n).has_weight_column is False
        assert v1.cost.note is None and "cost_note" not in v1.to_dict()


def test_text_unit_codes_with_nulls_and_repeats():
    """Null lists, null items, a text unit twice in one list; arrow lists and Python lists alike."""
    import pyarrow as pa

    from graphrag_audit.graphrag.context import text_unit_codes

    lists = pa.array([["a", "b", None], None, ["b", "b"], [], ["c"]], pa.list_(pa.string()))
    for col in (pd.Series(pd.arrays.ArrowExtensionArray(lists)), pd.Series(lists.to_pylist(), dtype=object)):
        lens, codes = text_unit_codes(col)
        assert lens.tolist() == [2, 0, 2, 0, 1]
        assert codes.tolist() == [0, 1, 1, 1, 2]
