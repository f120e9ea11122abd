"""Tests for synthetic and fixtures/generate.py."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import synthetic as S  # noqa: E402
from conftest import SHARED_INDEXES  # noqa: E402

pytestmark = pytest.mark.large  # a heavy tier: pytest -m large
INDEXES = SHARED_INDEXES  # ../shared/indexes; tests that need it skip with a reason when absent
FIXTURES = ROOT / "fixtures"

# layout -> real index folder whose schemas it must match (per table; fallbacks for tables the
# main reference lacks)
REFERENCE = {
    "0.1-0.4": ["dulce-v0.3-create_final"],
    "0.5-0.9": ["real-climate-update-v09", "verbs-v0.5"],
    "1.0-1.2": ["verbs-v1"],
    "2.x": ["verbs-v2"],
    "3.x": ["verbs-v3"],
    "3.x-csv": ["verbs-v3"],
}


# ----------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------
def tree_fact_violations(spec: S.IndexSpec) -> list[str]:
    """The tree facts of docs/graphrag-semantics.md#tree, checked on the spec (vectorised enough for ~10^4)."""
    c = spec.communities.reset_index(drop=True)
    out: list[str] = []
    num = c["community"].to_numpy()
    if len(np.unique(num)) != len(num):
        out.append("duplicate community numbers")
    level_of = dict(zip(num.tolist(), c["level"].tolist()))
    key_of = dict(zip(num.tolist(), c["key"].tolist()))
    sets = {}
    m = spec.membership
    for k, grp in m.groupby("key")["entity"]:
        sets[int(k)] = set(grp.tolist())
    children: dict[int, list[int]] = {}
    for n_, p_, lv in zip(num.tolist(), c["parent"].tolist(), c["level"].tolist()):
        if p_ == -1:
            if lv != 0:
                out.append(f"root {n_} at level {lv}")
            continue
        if p_ not in level_of:
            out.append(f"{n_}: missing parent {p_}")
            continue
        children.setdefault(p_, []).append(n_)
        if lv != level_of[p_] + 1:
            out.append(f"{n_}: level {lv} != parent level + 1")
        if n_ <= p_:
            out.append(f"{n_}: number not > parent {p_}")
        if not sets.get(key_of[n_], set()) <= sets.get(key_of[p_], set()):
            out.append(f"{n_}: entities not within parent {p_}")
    for p_, ch in children.items():
        union = set().union(*(sets.get(key_of[x], set()) for x in ch))
        if union != sets.get(key_of[p_], set()):
            out.append(f"{p_}: children do not cover parent")
    # disjoint within level
    lv_of_key = dict(zip(c["key"].tolist(), c["level"].tolist()))
    ml = m.assign(level=m["key"].map(lv_of_key))
    if ml.duplicated(["level", "entity"]).any():
        out.append("entity in two communities of one level")
    for k, s in sets.items():
        if not s:
            out.append(f"key {k}: empty community")
    return out


def load_frames(folder: Path, layout: str) -> dict[str, pd.DataFrame]:
    """communities / reports / entities / nodes frames of a written index (any layout)."""
    out: dict[str, pd.DataFrame] = {}
    if layout == "3.x-csv":
        for k, f in [
            ("communities", "communities"),
            ("reports", "community_reports"),
            ("entities", "entities"),
        ]:
            df = pd.read_csv(folder / f"{f}.csv", keep_default_na=False)
            out[k] = df
        return out
    pre = "create_final_" if layout in ("0.1-0.4", "0.5-0.9", "1.0-1.2") else ""
    for k, f in [
        ("communities", "communities"),
        ("reports", "community_reports"),
        ("entities", "entities"),
        ("nodes", "nodes"),
    ]:
        p = folder / f"{pre}{f}.parquet"
        if p.exists():
            out[k] = pd.read_parquet(p)
    return out


def frames_from_tables(tables: dict[str, pa.Table]) -> dict[str, pd.DataFrame]:
    out = {}
    for name, t in tables.items():
        key = name.replace("create_final_", "")
        key = {"community_reports": "reports"}.get(key, key)
        out[key] = t.to_pandas()
    return out


def parents_from_nodes(nodes: pd.DataFrame) -> dict[int, set[int]]:
    """0.x: community -> set of communities one level up holding its entities."""
    n = nodes.dropna(subset=["community"]).copy()
    n["community"] = n["community"].astype(int)
    n = n[n["community"] >= 0]
    up = n.assign(level=n["level"] + 1)[["title", "level", "community"]].rename(columns={"community": "up"})
    j = n.merge(up, on=["title", "level"], how="left")
    out: dict[int, set[int]] = {}
    for c, u in zip(j["community"], j["up"]):
        if not pd.isna(u):
            out.setdefault(int(c), set()).add(int(u))
    return out


# defect name -> predicate(frames) that is True when the defect is present
def _comm(fr):
    return fr["communities"]


def _has_cycle(fr) -> bool:
    c = _comm(fr)
    par = dict(zip(c["community"].astype(int), c["parent"].astype(int)))
    for start in par:
        seen, cur = set(), start
        while cur in par and cur != -1:
            if cur in seen:
                return True
            seen.add(cur)
            cur = par[cur]
    return False


def _level_mismatch(fr) -> bool:
    c = _comm(fr)
    lv = dict(zip(c["community"].astype(int), c["level"].astype(int)))
    return any(
        p != -1 and p in lv and l != lv[p] + 1
        for l, p in zip(c["level"].astype(int), c["parent"].astype(int))
    )


def _not_subset(fr) -> bool:
    c = _comm(fr)
    ents = {int(n): set(e) for n, e in zip(c["community"], c["entity_ids"])}
    return any(
        p != -1 and not ents[int(n)] <= ents.get(int(p), set()) for n, p in zip(c["community"], c["parent"])
    )


def _children_mismatch(fr) -> bool:
    c = _comm(fr)
    derived: dict[int, set[int]] = {}
    for n, p in zip(c["community"].astype(int), c["parent"].astype(int)):
        derived.setdefault(p, set()).add(n)
    return any(
        set(int(x) for x in ch) != derived.get(int(n), set()) for n, ch in zip(c["community"], c["children"])
    )


def _report_level_mismatch(fr) -> bool:
    j = fr["reports"][["community", "level"]].merge(
        _comm(fr)[["community", "level"]], on="community", suffixes=("_r", "_c")
    )
    return bool((j["level_r"] != j["level_c"]).any())


def _unclustered(fr) -> bool:
    c = _comm(fr)
    clustered = set(e for lst in c["entity_ids"] for e in lst)
    return bool((~fr["entities"]["id"].isin(clustered)).any())


def _multi_parent(fr) -> bool:
    return any(len(v) > 1 for v in parents_from_nodes(fr["nodes"]).values())


def _non_depth_ordered(fr) -> bool:
    c = _comm(fr)
    return bool(((c["parent"] >= 0) & (c["community"] < c["parent"])).any())


DEFECT_CHECKS = {
    "no-level-0": lambda fr: int(_comm(fr)["level"].min()) > 0,
    "level-gap": lambda fr: (
        set(_comm(fr)["level"].astype(int)) != set(range(int(_comm(fr)["level"].max()) + 1))
    ),
    "parent-cycle": _has_cycle,
    "multi-parent": _multi_parent,
    "level-not-parent-plus-one": _level_mismatch,
    "child-not-subset": _not_subset,
    "children-mismatch": _children_mismatch,
    "two-forests": lambda fr: _comm(fr)["period"].nunique() == 2,
    "duplicate-numbers": lambda fr: bool(_comm(fr)["community"].duplicated().any()),
    "missing-report": lambda fr: bool((~_comm(fr)["community"].isin(fr["reports"]["community"])).any()),
    "orphan-report": lambda fr: bool((~fr["reports"]["community"].isin(_comm(fr)["community"])).any()),
    "report-level-mismatch": _report_level_mismatch,
    "minus-one-report": lambda fr: bool((fr["reports"]["community"].astype(int) == -1).any()),
    "unclustered-entities": _unclustered,
    "non-depth-ordered": _non_depth_ordered,
}


def v2_selection(fr, level: int) -> list[int]:
    c, r = _comm(fr), fr["reports"]
    keep = set(c.loc[c["level"] <= level, "community"].astype(int))
    sel = r[(r["level"] <= level) & r["community"].astype(int).isin(keep)]
    return sorted(sel["community"].astype(int))


def v1_selection(fr, level: int) -> list[int]:
    n = fr["nodes"].dropna(subset=["community"]).copy()
    n["community"] = n["community"].astype(int)
    n = n[n["level"] <= level]
    maxima = set(n.groupby("title")["community"].max())
    r = fr["reports"]
    return sorted(int(x) for x in r["community"].astype(int) if x in maxima)


# ----------------------------------------------------------------------------------------
# seed / balanced trees
# ----------------------------------------------------------------------------------------
def test_seed_example_tree():
    s = S.seed_example()
    assert tree_fact_violations(s) == []
    got = {n: sorted(v) for n, v in s.members_by_number().items()}
    assert got == {5: ["A", "B", "C"], 6: ["D"], 20: ["A", "B"], 21: ["C"], 22: ["D"], 77: ["A"], 78: ["B"]}
    c = s.communities.set_index("community")
    assert c["level"].to_dict() == {5: 0, 6: 0, 20: 1, 21: 1, 22: 1, 77: 2, 78: 2}
    assert c["parent"].to_dict() == {5: -1, 6: -1, 20: 5, 21: 5, 22: 6, 77: 20, 78: 20}
    assert sorted(s.reports["community"]) == [5, 6, 20, 21, 22, 77, 78]
    assert (s.reports["rank"].between(0, 10)).all()
    assert s.reports["full_content"].str.len().gt(0).all()


@pytest.mark.parametrize("layout", ["1.0-1.2", "0.5-0.9", "0.1-0.4"])
def test_seed_expected_selection_v1(tmp_path, layout):
    S.write_index(S.seed_example(), tmp_path, layout)
    fr = load_frames(tmp_path, layout)
    assert v1_selection(fr, 1) == [20, 21, 22]
    assert v1_selection(fr, 2) == [21, 22, 77, 78]
    assert v1_selection(fr, 0) == [5, 6]


@pytest.mark.parametrize("layout", ["3.x", "2.x", "1.0-1.2"])
def test_seed_expected_selection_v2(tmp_path, layout):
    S.write_index(S.seed_example(), tmp_path, layout)
    fr = load_frames(tmp_path, layout)
    assert v2_selection(fr, 1) == [5, 6, 20, 21, 22]
    assert v2_selection(fr, 2) == [5, 6, 20, 21, 22, 77, 78]


def test_balanced_tree():
    s = S.balanced_tree(n_roots=2, branching=2, depth=3)
    assert tree_fact_violations(s) == []
    c = s.communities
    assert c.groupby("level").size().to_dict() == {0: 2, 1: 4, 2: 8}
    leaves = c[~c["community"].isin(c["parent"])]
    assert set(leaves["level"]) == {2}


# ----------------------------------------------------------------------------------------
# leiden_like
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,seed,mcs", [(400, 0, 10), (3000, 1, 10), (3000, 2, 20), (50, 3, 10), (1, 0, 10)])
def test_leiden_like_tree_facts(n, seed, mcs):
    s = S.leiden_like(n, max_cluster_size=mcs, seed=seed)
    assert tree_fact_violations(s) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(0, 1500),
    seed=st.integers(0, 2**16),
    mcs=st.integers(2, 30),
    unc=st.floats(0, 0.5),
    unsplit=st.floats(0, 0.3),
)
def test_leiden_like_tree_facts_property(n, seed, mcs, unc, unsplit):
    s = S.leiden_like(n, max_cluster_size=mcs, seed=seed, unclustered_fraction=unc, unsplit_prob=unsplit)
    assert tree_fact_violations(s) == []
    sizes = np.bincount(s.membership["key"], minlength=len(s.communities))
    c = s.communities
    parents = set(c["parent"])
    split = c["community"].isin(parents).to_numpy()
    assert (sizes[c["key"].to_numpy()][split] > mcs).all()


def _shape_facts(spec):
    c = spec.communities
    return {
        "communities": len(c),
        "max_level": int(c["level"].max()),
        "members_per_community": len(spec.membership) / len(c),
    }


def test_shapes_default_is_the_historic_call_and_the_shapes_differ(tmp_path):
    """The benchmark shapes (issue 22): "default" is exactly leiden_like(n, max_cluster_size=24),
    written byte for byte the same, and the others have the shape their names promise."""
    base = S.leiden_like(5000, max_cluster_size=24, seed=0)
    same = S.leiden_shape("default", 5000)
    for layout in ("3.x", "1.0-1.2"):
        S.write_index(base, tmp_path / "a" / layout, layout)
        S.write_index(same, tmp_path / "b" / layout, layout)
        files = sorted(p.name for p in (tmp_path / "a" / layout).iterdir())
        assert files == sorted(p.name for p in (tmp_path / "b" / layout).iterdir())
        for name in files:
            assert (tmp_path / "a" / layout / name).read_bytes() == (
                tmp_path / "b" / layout / name
            ).read_bytes(), name
    facts = {name: _shape_facts(S.leiden_shape(name, 20_000)) for name in S.SHAPES}
    for name in S.SHAPES:
        assert tree_fact_violations(S.leiden_shape(name, 3000, seed=1)) == []
    d = facts["default"]
    assert facts["wide-shallow"]["max_level"] == 2 < d["max_level"]
    assert facts["deep-narrow"]["max_level"] >= 2 * d["max_level"]
    assert facts["many-tiny"]["communities"] >= 1.8 * d["communities"]
    assert facts["many-tiny"]["members_per_community"] < 0.7 * d["members_per_community"]
    assert facts["many-tiny"]["max_level"] > d["max_level"]


def test_extra_report_columns_are_appended():
    spec = S.leiden_like(300, seed=2, extra_report_columns=2)
    for layout in ("3.x", "1.0-1.2"):
        plain = S.build_tables(S.leiden_like(300, seed=2), layout)
        tables = S.build_tables(spec, layout)
        name = "community_reports" if layout == "3.x" else "create_final_community_reports"
        rep = tables[name]
        assert rep.column_names == plain[name].column_names + ["x_note_1", "x_note_2"]
        assert rep.drop_columns(["x_note_1", "x_note_2"]).equals(plain[name])
        first = rep.column("x_note_2")[0].as_py()
        assert first == f"note 2 on community {rep.column('community')[0].as_py()}"


def test_leiden_like_splits_only_large_and_uneven_depth():
    mcs = 10
    s = S.leiden_like(5000, max_cluster_size=mcs, seed=0, unsplit_prob=0.0)
    c = s.communities
    size = np.bincount(s.membership["key"], minlength=len(c))[c["key"].to_numpy()]
    has_children = c["community"].isin(c["parent"]).to_numpy()
    assert (size[has_children] > mcs).all(), "a cluster <= max_cluster_size was split"
    assert (has_children[size > mcs]).all(), "with unsplit_prob=0 every large cluster is split"
    leaves = c[~has_children]
    assert leaves["level"].nunique() >= 3, "leaves should occur at several levels"
    assert (leaves["level"] == 0).any()
    # top-level branches reach different depths
    par = dict(zip(c["community"], c["parent"]))
    root_of = {}
    for n_ in c["community"]:
        r = n_
        while par[r] != -1:
            r = par[r]
        root_of[n_] = r
    depth = c.assign(root=c["community"].map(root_of)).groupby("root")["level"].max()
    assert depth.nunique() >= 3
    # heavy-tailed level-0 sizes
    l0 = size[c["level"].to_numpy() == 0]
    assert l0.max() > 10 * np.median(l0)


def test_leiden_like_numbering_and_knobs():
    s = S.leiden_like(2000, seed=5)
    c = s.communities
    # BFS / level order: numbers increase with level, children > parents
    assert (np.diff(c["community"].to_numpy()) > 0).all()
    assert (np.diff(c["level"].to_numpy()) >= 0).all()
    assert c["community"].tolist() == list(range(len(c)))
    # use_lcc: ~5% entities in no community
    clustered = s.membership["entity"].unique()
    assert len(clustered) == 2000 - 100
    s2 = S.leiden_like(2000, seed=5, use_lcc=False)
    assert s2.membership["entity"].nunique() == 2000
    # every community has a report by default; drop fraction removes some
    assert set(s.reports["community"]) == set(c["community"])
    s3 = S.leiden_like(2000, seed=5, report_drop_fraction=0.3)
    frac = 1 - len(s3.reports) / len(s3.communities)
    assert 0.2 < frac < 0.4
    # deterministic
    s4 = S.leiden_like(2000, seed=5)
    pd.testing.assert_frame_equal(s.communities, s4.communities)
    pd.testing.assert_frame_equal(s.membership, s4.membership)
    assert s.reports["full_content"].tolist() == s4.reports["full_content"].tolist()


def test_leiden_like_reports_and_text_units():
    s = S.leiden_like(3000, seed=0)
    r = s.reports
    nbytes = r["full_content"].map(lambda x: len(x.encode("utf-8")))
    assert nbytes.min() >= 1000 and nbytes.max() <= 4000
    text = "".join(r["full_content"].tolist())
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text), "some Chinese"
    assert any("\u0400" <= ch <= "\u04ff" for ch in text), "some Russian"
    assert r["rank"].between(0, 10).all()
    assert r["title"].str.len().gt(0).all()
    assert r["findings"].map(len).between(2, 5).all()
    # reports are written deepest level first
    assert (np.diff(r["level"].to_numpy()) <= 0).all()
    per_entity = np.diff(s.tu_offsets)
    assert per_entity.min() >= 1 and per_entity.max() <= 5
    assert s.tu_index.max() < len(s.text_units)
    # an entity's text units are distinct
    lists = s.text_unit_lists()
    assert all(len(set(x)) == len(x) for x in lists)


def test_leiden_like_scales():
    s = S.leiden_like(200_000, seed=0)
    assert 20_000 < len(s.communities) < 80_000


# ----------------------------------------------------------------------------------------
# layouts vs real indexes
# ----------------------------------------------------------------------------------------
def _ref_schema(layout: str, fname: str):
    for folder in REFERENCE[layout]:
        p = INDEXES / folder / fname
        if p.exists():
            return {f.name: f.type for f in pq.read_schema(p) if f.name != "__index_level_0__"}
    return None


@pytest.mark.parametrize("layout", [l for l in S.LAYOUTS if l != "3.x-csv"])
def test_layout_schema_matches_real_index(tmp_path, layout):
    folders = [INDEXES / f for f in REFERENCE[layout]]
    if not any(f.exists() for f in folders):
        pytest.skip(f"reference index {REFERENCE[layout]} not found under {INDEXES}")
    paths = S.write_index(S.leiden_like(300, seed=1), tmp_path, layout)
    compared = 0
    for name, path in paths.items():
        ref = _ref_schema(layout, path.name)
        if ref is None:
            continue
        got = {f.name: f.type for f in pq.read_schema(path)}
        assert list(got) == list(ref), f"{layout} {path.name}: column names/order differ"
        for col in got:
            assert got[col] == ref[col], f"{layout} {path.name}.{col}: {got[col]} != {ref[col]}"
        compared += 1
    assert compared >= 3


def test_csv_layout_columns_and_lists(tmp_path):
    spec = S.seed_example()
    S.write_index(spec, tmp_path / "csv", "3.x-csv")
    S.write_index(spec, tmp_path / "pq", "3.x")
    for stem in ["communities", "community_reports", "entities", "text_units"]:
        csv = pd.read_csv(tmp_path / "csv" / f"{stem}.csv", keep_default_na=False)
        pqt = pd.read_parquet(tmp_path / "pq" / f"{stem}.parquet")
        assert list(csv.columns) == list(pqt.columns)
        ref = _ref_schema("3.x-csv", f"{stem}.parquet")
        if ref is not None:
            assert list(csv.columns) == list(ref)
    c = pd.read_csv(tmp_path / "csv" / "communities.csv", keep_default_na=False)
    cp = pd.read_parquet(tmp_path / "pq" / "communities.parquet")
    # str(list) for id lists, str(ndarray) for children
    for a, b in zip(c["entity_ids"], cp["entity_ids"]):
        assert ast.literal_eval(a) == list(b)
    assert c.set_index("community")["children"].to_dict() == {
        5: "[20 21]",
        6: "[22]",
        20: "[77 78]",
        21: "[]",
        22: "[]",
        77: "[]",
        78: "[]",
    }
    r = pd.read_csv(tmp_path / "csv" / "community_reports.csv", keep_default_na=False)
    f = ast.literal_eval(r["findings"].iloc[0])
    assert set(f[0]) == {"explanation", "summary"}


def test_full_content_json_is_valid():
    spec = S.leiden_like(300, seed=4)
    rep = S.build_tables(spec, "3.x")["community_reports"].to_pandas()
    for _, row in rep.head(50).iterrows():
        d = json.loads(row["full_content_json"])
        assert d["title"] == row["title"] and d["summary"] == row["summary"]
        assert d["rating"] == row["rank"] and d["rating_explanation"] == row["rating_explanation"]
        assert [x["summary"] for x in d["findings"]] == [x["summary"] for x in row["findings"]]
        assert row["full_content"].startswith("# " + row["title"])


def test_nodes_conventions(tmp_path):
    """0.5-1.2: level-0 row for every entity (-1 if unclustered), deeper rows only for entities
    clustered at that level; 0.1-0.4: full grid with null community."""
    spec = S.leiden_like(500, seed=3)
    n_ent = spec.n_entities
    S.write_index(spec, tmp_path / "v1", "1.0-1.2")
    nodes = pd.read_parquet(tmp_path / "v1" / "create_final_nodes.parquet")
    assert (nodes["level"] == 0).sum() == n_ent
    assert (nodes.loc[nodes["level"] > 0, "community"] >= 0).all()
    assert (nodes.loc[nodes["level"] == 0, "community"] == -1).sum() == n_ent - spec.membership.merge(
        spec.communities[["key", "level"]], on="key"
    ).query("level == 0")["entity"].nunique()
    assert not nodes.duplicated(["title", "level"]).any()
    S.write_index(spec, tmp_path / "v01", "0.1-0.4")
    n01 = pd.read_parquet(tmp_path / "v01" / "create_final_nodes.parquet")
    levels = int(spec.communities["level"].max()) + 1
    assert len(n01) == n_ent * levels
    assert n01["community"].isna().any()
    real = INDEXES / "verbs-v1" / "create_final_nodes.parquet"
    if real.exists():  # the convention we copy
        rn = pd.read_parquet(real)
        assert (rn.loc[rn["level"] > 0, "community"] >= 0).all()
        assert (rn["level"] == 0).sum() == rn["title"].nunique()


def _entity_by_entity(nodes: pd.DataFrame) -> bool:
    """Each title's rows follow one another, in increasing level."""
    starts = nodes["title"].ne(nodes["title"].shift())
    return bool(
        starts.sum() == nodes["title"].nunique() and (nodes["level"].diff().fillna(1)[~starts] > 0).all()
    )


def test_nodes_row_order(tmp_path):
    """create_final_nodes' row order: entity by entity in 1.0-1.2 (graphrag 1.x writes
    base_entity_nodes.merge(base_communities, on="title", how="left")), entities in the entities
    table's order; level by level in 0.5-0.9. The real indexes of each generation agree."""
    spec = S.leiden_like(600, seed=7)
    assert spec.communities["level"].max() >= 2
    v1 = S.write_index(spec, tmp_path / "v1", "1.0-1.2")
    nodes = pd.read_parquet(v1["create_final_nodes"], columns=["title", "level"])
    assert _entity_by_entity(nodes)
    entities = pd.read_parquet(v1["create_final_entities"], columns=["title"])["title"]
    assert nodes["title"].drop_duplicates().tolist() == entities.tolist()
    v05 = S.write_index(spec, tmp_path / "v05", "0.5-0.9")
    n05 = pd.read_parquet(v05["create_final_nodes"], columns=["title", "level"])
    assert n05["level"].is_monotonic_increasing and not _entity_by_entity(n05)
    checked = 0
    for folder, entity_major in [
        ("verbs-v1", True),
        ("dulce-v1", True),
        ("real-textbook-v1", True),
        ("verbs-v0.5", False),
        ("real-csekg-v1", False),
    ]:
        found = (
            sorted((INDEXES / folder).rglob("create_final_nodes.parquet"))
            if (INDEXES / folder).is_dir()
            else []
        )
        if not found:
            continue
        real = pd.read_parquet(found[0], columns=["title", "level"])
        assert _entity_by_entity(real) == entity_major, folder
        assert entity_major or real["level"].is_monotonic_increasing, folder
        checked += 1
    if not checked:
        pytest.skip(
            f"the real-index half needs ../shared/indexes ({INDEXES} is absent); the generator half passed"
        )


def test_write_is_deterministic(tmp_path):
    spec = S.leiden_like(300, seed=2)
    for layout in S.LAYOUTS:
        a = S.write_index(spec, tmp_path / "a" / layout, layout)
        b = S.write_index(spec, tmp_path / "b" / layout, layout)
        for k in a:
            assert a[k].read_bytes() == b[k].read_bytes(), (layout, k)


# ----------------------------------------------------------------------------------------
# fixtures/generate.py
# ----------------------------------------------------------------------------------------
def _load_generate():
    spec = importlib.util.spec_from_file_location("fixtures_generate", FIXTURES / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "generate.py" and "__pycache__" not in p.parts
    }


def test_generate_is_deterministic(tmp_path):
    gen = _load_generate()
    gen.generate(tmp_path / "one")
    gen.generate(tmp_path / "two")
    one, two = _tree(tmp_path / "one"), _tree(tmp_path / "two")
    assert one.keys() == two.keys()
    diff = [k for k in one if one[k] != two[k]]
    assert diff == []
    expected = set(gen.FIXTURES) | {f"defects/{d}" for d in S.DAMAGES}
    dirs = {str(p.parent.relative_to(tmp_path / "one")) for p in (tmp_path / "one").rglob("*") if p.is_file()}
    assert expected <= dirs
    # committed fixtures are up to date (same data; same bytes when pyarrow versions agree)
    committed = _tree(FIXTURES) if (FIXTURES / "README.md").exists() else {}
    if not committed:
        pytest.skip("fixtures/ not generated")
    assert set(one) == set(committed)
    for k in one:
        if k.endswith(".parquet"):
            assert pq.read_table(tmp_path / "one" / k).equals(pq.read_table(FIXTURES / k)), k
        elif not k.endswith("README.md"):
            assert one[k] == committed[k], k


def test_fixture_seed_answers():
    if not (FIXTURES / "seed-v1").exists():
        pytest.skip("fixtures/ not generated")
    assert v1_selection(load_frames(FIXTURES / "seed-v1", "1.0-1.2"), 1) == [20, 21, 22]
    assert v2_selection(load_frames(FIXTURES / "seed-v3", "3.x"), 1) == [5, 6, 20, 21, 22]
    fr = load_frames(FIXTURES / "balanced-v3", "3.x")
    assert sorted(fr["communities"]["level"].value_counts().to_dict().items()) == [(0, 2), (1, 4), (2, 8)]
    assert [len(v2_selection(fr, n)) for n in (0, 1, 2)] == [2, 6, 14]
    fr = load_frames(FIXTURES / "defects" / "non-depth-ordered", "1.0-1.2")
    assert v1_selection(fr, 2) == [20, 21, 22, 78]


def test_balanced_selections(tmp_path):
    S.write_index(S.balanced_tree(), tmp_path, "1.0-1.2")
    fr = load_frames(tmp_path, "1.0-1.2")
    assert [len(v1_selection(fr, n)) for n in (0, 1, 2)] == [2, 4, 8]
    assert [len(v2_selection(fr, n)) for n in (0, 1, 2)] == [2, 6, 14]


# ----------------------------------------------------------------------------------------
# damage helpers
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(S.DAMAGES))
def test_defect_helper_introduces_defect(tmp_path, name):
    fn, layout = S.DAMAGES[name]
    check = DEFECT_CHECKS[name]
    S.write_index(S.seed_example(), tmp_path / "clean", layout)
    S.write_index(fn(S.seed_example()), tmp_path / "bad", layout)
    assert not check(load_frames(tmp_path / "clean", layout)), f"{name}: check fires on the clean seed"
    assert check(load_frames(tmp_path / "bad", layout)), f"{name}: defect not present"


@pytest.mark.parametrize("name", list(S.DAMAGES))
def test_defect_helper_on_leiden(name):
    fn, layout = S.DAMAGES[name]
    base = S.leiden_like(400, seed=0, use_lcc=False)
    clean = frames_from_tables(S.build_tables(base, layout))
    bad = frames_from_tables(S.build_tables(fn(base), layout))
    assert not DEFECT_CHECKS[name](clean)
    assert DEFECT_CHECKS[name](bad)
    assert tree_fact_violations(base) == [], "helper must not mutate its input"


@pytest.mark.parametrize("name", list(S.DAMAGES))
def test_committed_defect_fixtures(name):
    folder = FIXTURES / "defects" / name
    if not folder.exists():
        pytest.skip("fixtures/ not generated")
    _, layout = S.DAMAGES[name]
    assert DEFECT_CHECKS[name](load_frames(folder, layout))


def test_specific_defect_shapes():
    s = S.seed_example()
    assert S.multi_parent(s).members_by_number()[21] == {"C", "D"}
    assert 22 not in S.multi_parent(s).members_by_number()
    assert sorted(S.drop_level0(s).communities["level"].unique()) == [1, 2]
    assert sorted(S.level_gap(s).communities["level"].unique()) == [0, 2, 3]
    nd = S.non_depth_ordered(s)
    assert nd.communities.set_index("community").loc[0, "parent"] == 20
    tf = S.two_forests(s)
    assert tf.communities["period"].nunique() == 2 and len(tf.communities) == 14
    assert tree_fact_violations(S.two_forests(s)) == []  # each forest is clean on its own
    bad = S.two_forests(s, remap_children=False)
    fr = frames_from_tables(S.build_tables(bad, "3.x"))
    assert _children_mismatch(fr)
    dup = S.duplicate_numbers(s)
    assert (dup.communities["community"] == 77).sum() == 2
    assert (dup.reports["community"] == 77).sum() == 2
    # the spec-level check sees the defects too
    assert any("cover" in v or "within" in v for v in tree_fact_violations(S.child_not_subset(s)))
    assert any("level" in v for v in tree_fact_violations(S.level_not_parent_plus_one(s)))
    assert any("number not >" in v for v in tree_fact_violations(nd))
