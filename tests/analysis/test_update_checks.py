"""Findings for the damage `graphrag update` leaves in a merged index (issue 21).

Expectations come from the parquet tables themselves (pandas, dict look-ups), from hand-built
merges that follow graphrag's merge code, or from the injected defect: never from
graphrag_audit.analysis.integrity.
"""

from __future__ import annotations

import pandas as pd
import pytest
import synthetic
from conftest import FIXTURES, shared_folders, shared_index

from graphrag_audit.analysis.integrity import check_integrity
from graphrag_audit.io.load import load_index
from graphrag_audit.rules import RULE_NOTES, RULES

NEW = {"delta-id-offset", "dangling-membership", "membership-level-mismatch"}


def _hits(path, rule):
    return [f for f in check_integrity(load_index(path)) if f.rule == rule]


def _explode(df, col):
    return [(c, x) for c, xs in zip(df["community"], df[col]) for x in (list(xs) if xs is not None else [])]


def test_rules_are_registered_and_documented():
    for rule in NEW:
        assert rule in RULES and RULES[rule].severity == "warning" and rule in RULE_NOTES


# ---- the real merged index --------------------------------------------------------------------
def test_real_climate_update_findings():
    root = shared_index("real-climate-update-v09")
    com = pd.read_parquet(root / "create_final_communities.parquet")
    ent = pd.read_parquet(root / "create_final_entities.parquet")
    nodes = pd.read_parquet(root / "create_final_nodes.parquet")
    findings = {f.rule: f for f in check_integrity(load_index(root))}

    # memberships naming entities the entities table lacks (brute force over entity_ids)
    ids = set(ent["id"])
    lost = [(c, e) for c, e in _explode(com, "entity_ids") if e not in ids]
    f = findings["dangling-membership"]
    assert f.evidence["rows"] == len(lost) == 817
    assert f.evidence["entities"] == len({e for _, e in lost}) == 339
    assert f.communities == tuple(sorted({int(c) for c, _ in lost}))
    assert f.evidence["key"] == "id"

    # node rows at another level than the communities table gives their community
    level_of = dict(zip(com["community"].tolist(), com["level"].tolist()))
    bad = [
        (int(c), int(lv)) for c, lv in zip(nodes["community"], nodes["level"]) if c >= 0 and level_of[c] != lv
    ]
    f = findings["membership-level-mismatch"]
    assert f.evidence["rows"] == len(bad) == 206
    assert f.communities == tuple(sorted({c for c, _ in bad})) == (262,)
    first_run_max = int(com.loc[com["period"] == min(com["period"]), "community"].max())
    assert first_run_max == 262  # graphrag shifted the delta's -1 by old max + 1: -1 + 263 = 262
    assert f.evidence["shifted_minus_one"] == sum(1 for c, _ in bad if c == first_run_max)
    assert f.evidence["node_vs_table_levels"] == {"0->2": 206}

    # the offset rule holds here: the later run starts right after the earlier one
    early, late = sorted(set(com["period"]))
    assert (
        com.loc[com["period"] == late, "community"].min()
        == com.loc[com["period"] == early, "community"].max() + 1
    )
    assert "delta-id-offset" not in findings
    # the two hierarchies, told apart by period only: communities per level in each run
    want = {
        str(p): {str(lv): int(n) for lv, n in g.groupby("level").size().items()}
        for p, g in com.groupby("period")
    }
    assert findings["multiple-periods"].evidence["levels_per_period"] == want
    assert want == {"2025-04-22": {"0": 26, "1": 153, "2": 84}, "2025-04-26": {"0": 26, "1": 209, "2": 117}}


def test_other_real_indexes_have_none_of_the_new_findings():
    names = [n for n in shared_folders() if n != "real-climate-update-v09"]
    if not names:
        pytest.skip("../shared/indexes is absent")
    for name in names:
        rules = {f.rule for f in check_integrity(load_index(shared_index(name)))}
        assert not rules & NEW, (name, rules & NEW)


# ---- generated indexes ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def base():
    return synthetic.leiden_like(300, seed=21)


@pytest.mark.parametrize("folder", ["seed-v3", "seed-v1", "seed-v05", "balanced-v3", "small-leiden-v3"])
def test_clean_fixtures_have_none_of_the_new_findings(folder):
    assert not {f.rule for f in check_integrity(load_index(FIXTURES / folder))} & NEW


def test_update_merge_with_graphrag_offset_is_clean(base, tmp_path):
    synthetic.write_index(synthetic.two_forests(base), tmp_path, "3.x")
    rules = {f.rule for f in check_integrity(load_index(tmp_path))}
    assert "multiple-periods" in rules
    assert not rules & NEW


def test_children_not_remapped_after_update(base, tmp_path):
    synthetic.write_index(synthetic.two_forests(base, remap_children=False), tmp_path, "3.x")
    com = pd.read_parquet(tmp_path / "communities.parquet")
    from_children = {
        (int(c), int(k))
        for c, ks in zip(com["community"], com["children"])
        for k in (list(ks) if ks is not None else [])
    }
    from_parent = {(int(p), int(c)) for c, p in zip(com["community"], com["parent"]) if p >= 0}
    expected = sorted({p for p, _ in from_children ^ from_parent})
    assert expected
    [f] = _hits(tmp_path, "children-parent-mismatch")
    assert f.communities == tuple(expected)
    assert not {f.rule for f in check_integrity(load_index(tmp_path))} & {"delta-id-offset"}


@pytest.mark.parametrize("shift", [0, 7])
def test_delta_ids_off_graphrag_offset(base, tmp_path, shift):
    old_max = int(base.communities["community"].max())
    offset = old_max + 1 + shift if shift else old_max  # a gap, or an overlap with the earlier run
    synthetic.write_index(synthetic.two_forests(base, offset=offset), tmp_path, "3.x")
    com = pd.read_parquet(tmp_path / "communities.parquet")
    late = com.loc[com["period"] == "2025-02-01", "community"].to_numpy()
    [f] = _hits(tmp_path, "delta-id-offset")
    [run] = f.evidence["runs"]
    assert f.evidence["runs_off"] == 1
    assert run["period"] == "2025-02-01"
    assert run["expected_first"] == old_max + 1
    assert run["first"] == int(late.min()) == offset + int(base.communities["community"].min())
    assert run["at_or_below_previous_max"] == int((late <= old_max).sum())
    assert (run["at_or_below_previous_max"] > 0) == (shift == 0)


def test_memberships_naming_merged_away_entities(base, tmp_path):
    synthetic.write_index(base, tmp_path, "3.x")
    ent = pd.read_parquet(tmp_path / "entities.parquet")
    com = pd.read_parquet(tmp_path / "communities.parquet")
    pairs = _explode(com, "entity_ids")
    gone = sorted({e for _, e in pairs})[:4]  # entities the merge dropped, still named by communities
    ent[~ent["id"].isin(gone)].to_parquet(tmp_path / "entities.parquet", index=False)
    [f] = _hits(tmp_path, "dangling-membership")
    lost = [(c, e) for c, e in pairs if e in set(gone)]
    assert f.evidence["rows"] == len(lost)
    assert f.evidence["entities"] == 4
    assert f.communities == tuple(sorted({int(c) for c, _ in lost}))


def _graphrag_09_merge(old: dict, delta: dict) -> tuple[dict, int]:
    """The node and community merge of graphrag 0.9.0 / 1.2.0 (graphrag/index/update/communities.py
    @ v0.9.0, v1.2.0: _merge_and_resolve_nodes, _update_and_merge_communities), written here again
    with pandas; returns the merged tables and old_max_community_id."""
    on, dn = old["create_final_nodes"], delta["create_final_nodes"].copy()
    old_max = int(on["community"].fillna(0).astype(int).max())
    mapping = {v: v + old_max + 1 for v in dn["community"].dropna().astype(int)}
    mapping[-1] = -1
    dn["community"] = dn["community"].where(
        dn["community"].isna(), dn["community"].fillna(0).astype(int) + old_max + 1
    )
    cat = pd.concat([on, dn], ignore_index=True)
    nodes = cat.groupby(["level", "title"]).agg(
        {c: "first" for c in cat.columns if c not in ("level", "title")}
    )
    nodes = nodes.reset_index()[list(on.columns)]
    oc, dc = old["create_final_communities"], delta["create_final_communities"].copy()
    dc["community"] = dc["community"].astype(int).apply(lambda x: mapping.get(x, x))
    dc["parent"] = dc["parent"].astype(int).apply(lambda x: mapping.get(x, x))
    dc["period"] = "2025-02-01"
    com = pd.concat([oc, dc], ignore_index=True)
    orp, drp = old["create_final_community_reports"], delta["create_final_community_reports"].copy()
    drp["community"] = drp["community"].astype(int).apply(lambda x: mapping.get(x, x))
    drp["parent"] = drp["parent"].astype(int).apply(lambda x: mapping.get(x, x))
    rep = pd.concat([orp, drp], ignore_index=True)
    oe, de = old["create_final_entities"], delta["create_final_entities"]
    ents = (
        pd.concat([oe, de], ignore_index=True)
        .groupby("title", sort=False)
        .first()
        .reset_index()[list(oe.columns)]
    )
    return {
        "create_final_nodes": nodes,
        "create_final_communities": com,
        "create_final_community_reports": rep,
        "create_final_entities": ents,
    }, old_max


def test_node_levels_after_a_graphrag_09_style_merge(tmp_path):
    tables = {}
    for part, seed in (("old", 1), ("delta", 2)):
        synthetic.write_index(
            synthetic.leiden_like(200, seed=seed), tmp_path / part, "1.0-1.2", text_units=False
        )
        tables[part] = {p.stem: pd.read_parquet(p) for p in (tmp_path / part).glob("*.parquet")}
    merged, old_max = _graphrag_09_merge(tables["old"], tables["delta"])
    out = tmp_path / "merged"
    out.mkdir()
    for name, df in merged.items():
        df.to_parquet(out / f"{name}.parquet", index=False)
    com, nodes = merged["create_final_communities"], merged["create_final_nodes"]
    level_of = dict(zip(com["community"].tolist(), com["level"].tolist()))
    bad = [
        (int(c), int(lv), level_of[c])
        for c, lv in zip(nodes["community"], nodes["level"])
        if c >= 0 and c in level_of and level_of[c] != lv
    ]
    assert bad, "the delta's unclustered rows must land on old_max"
    [f] = _hits(out, "membership-level-mismatch")
    assert f.evidence["rows"] == len(bad)
    assert f.communities == tuple(sorted({c for c, _, _ in bad}))
    assert f.evidence["shifted_minus_one"] == sum(1 for c, _, _ in bad if c == old_max)
    counts: dict[str, int] = {}
    for _, a, b in bad:
        counts[f"{a}->{b}"] = counts.get(f"{a}->{b}", 0) + 1
    assert f.evidence["node_vs_table_levels"] == dict(sorted(counts.items()))
    assert not _hits(out, "delta-id-offset")  # the merge followed graphrag's offset


def test_membership_level_mismatch_needs_a_nodes_table(base, tmp_path):
    synthetic.write_index(base, tmp_path, "3.x")
    assert not _hits(tmp_path, "membership-level-mismatch")


def test_offset_rule_on_a_hand_made_table_of_three_runs(tmp_path):
    from builders import write_v3

    # run 1: 0-2; run 2 (one day later) reuses 2-3 (overlap); run 3 starts at 9 (gap: expected 4)
    tree = {
        0: (0, -1, ["A"]),
        1: (0, -1, ["B"]),
        2: (1, 0, ["A"]),
        12: (0, -1, ["C"]),
        13: (1, 12, ["C"]),
        9: (0, -1, ["D"]),
    }
    write_v3(tmp_path / "i", tree)
    com = pd.read_parquet(tmp_path / "i" / "communities.parquet")
    com["period"] = com["community"].map(
        {
            0: "2025-01-01",
            1: "2025-01-01",
            2: "2025-01-01",
            12: "2025-01-02",
            13: "2025-01-02",
            9: "2025-01-03",
        }
    )
    com.loc[com["community"] == 12, "community"] = 2  # a second row numbered 2, in run 2
    com.loc[com["community"] == 13, "community"] = 3
    com.loc[com["parent"] == 12, "parent"] = 2
    com.to_parquet(tmp_path / "i" / "communities.parquet", index=False)
    [f] = _hits(tmp_path / "i", "delta-id-offset")
    assert f.evidence["runs"] == [
        {
            "period": "2025-01-02",
            "expected_first": 3,
            "first": 2,
            "at_or_below_previous_max": 1,
            "examples": [2],
        },
        {
            "period": "2025-01-03",
            "expected_first": 4,
            "first": 9,
            "at_or_below_previous_max": 0,
            "examples": [],
        },
    ]
    assert f.communities == (2,)
