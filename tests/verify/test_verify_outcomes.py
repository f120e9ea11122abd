"""--verify never says "agrees" unless graphrag produced the same selection (issue 13, part 3).

* a graphrag that raises at some levels, one that raises where the audit predicted it, and one
  that returns a wrong selection: a fake ``graphrag`` package (with its own dist-info) put first
  on the path of a subprocess; its read_indexer_reports restates graphrag >= 2.0's roll-up and
  misbehaves at the levels named in the environment;
* no graphrag at all, or one that cannot be imported: ``--verify`` exits 2 with a one-line reason;
* int32 community ids: graphrag 3.3.0 itself (side environment), on the tables read with plain
  ``pd.read_parquet`` (the Python API) and as ``graphrag query`` loads them (typed DataReader).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builders import SEED, write_v1, write_v3
from conftest import shared_index
from graphrag_side import major, need, run_script, run_tool, side_params, versions

FAKE_ADAPTERS = '''
"""A fake graphrag.query.indexer_adapters for tests: graphrag >= 2.0's roll-up restated, with faults."""
import os
from types import SimpleNamespace


def _levels(name):
    return {x for x in os.environ.get(name, "").split(",") if x}


def read_indexer_reports(final_community_reports, final_communities, community_level,
                         dynamic_community_selection=False):
    key = str(community_level)
    if key in _levels("FAKE_GRAPHRAG_RAISE"):
        raise RuntimeError(f"fake graphrag crashed at community_level {key}")
    reports = final_community_reports
    nodes = final_communities.explode("entity_ids")
    if community_level is not None:
        nodes = nodes[nodes["level"] <= community_level]
        reports = reports[reports["level"] <= community_level]
    nodes = nodes.groupby("title").agg({"community": "max"}).reset_index()
    kept = reports.merge(nodes["community"].drop_duplicates(), on="community", how="inner")
    out = [SimpleNamespace(community_id=str(c), short_id=str(c)) for c in kept["community"]]
    if key in _levels("FAKE_GRAPHRAG_DROP"):
        out = out[1:]
    return out
'''


def _fake_graphrag(root, version="3.0.0", broken=False):
    """A ``graphrag`` package plus its dist-info under ``root``; ``broken``: importing it raises."""
    pkg = root / "graphrag"
    (pkg / "query").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('fake graphrag: broken install')\n" if broken else "")
    (pkg / "query" / "__init__.py").write_text("")
    (pkg / "query" / "indexer_adapters.py").write_text(FAKE_ADAPTERS)
    info = root / f"graphrag-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: graphrag\nVersion: {version}\n")
    return root


@pytest.fixture
def fake_graphrag(tmp_path, monkeypatch):
    """Puts a fake graphrag first on sys.path of this process (the CLI runs in-process, through
    typer's CliRunner); ``fake_graphrag(broken=True)``: one whose import raises."""
    made = []

    def install(broken=False, raise_at="", drop_at=""):
        root = _fake_graphrag(tmp_path / f"fake{len(made)}", broken=broken)
        made.append(root)
        monkeypatch.syspath_prepend(str(root))
        for name in [k for k in sys.modules if k == "graphrag" or k.startswith("graphrag.")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setenv("FAKE_GRAPHRAG_RAISE", raise_at)
        monkeypatch.setenv("FAKE_GRAPHRAG_DROP", drop_at)

    yield install
    for name in [k for k in sys.modules if k == "graphrag" or k.startswith("graphrag.")]:
        mod = sys.modules[name]
        if any(str(getattr(mod, "__file__", "") or "").startswith(str(r)) for r in made):
            del sys.modules[name]


def _cli(*args):
    from typer.testing import CliRunner

    from graphrag_audit.cli import app

    return CliRunner().invoke(app, list(args))


def _all(index, costs=False) -> tuple[dict, str, str]:
    """(verify JSON, the text output's verify paragraph, the Markdown verify section)."""
    out = {}
    for fmt in ("json", "text", "markdown"):
        res = _cli(
            "levels",
            str(index),
            "--verify",
            "-f",
            fmt,
            "--fail-on",
            "never",
            "--width",
            "400",
            *([] if costs else ["--no-costs"]),
        )
        assert res.exit_code == 0, (res.stderr[-2000:], res.exception)
        out[fmt] = res.stdout
    text = out["text"]
    para = " ".join(text[text.index("verify:") : text.index("Findings (")].split())
    md = out["markdown"]
    section = md[md.index("### Checked against graphrag") :]
    section = section[: section.index("\n### ", 5)] if "\n### " in section[5:] else section
    doc = json.loads(out["json"])
    _valid(doc)
    return doc["verify"], para, section


def _valid(doc: dict) -> None:
    import jsonschema

    schema = json.loads(
        (
            Path(__file__).resolve().parents[2] / "graphrag_audit" / "schema" / "audit-report.schema.json"
        ).read_text(encoding="utf-8")
    )
    jsonschema.validate(doc, schema)


def _seed_levels():
    """The v2 selection at each N, worked out from the tree itself (every community has a report)."""
    levels = sorted({lv for lv, _, _ in SEED.values()})
    return {
        **{str(n): sorted(c for c, (lv, _, _) in SEED.items() if lv <= n) for n in levels},
        "None": sorted(SEED),
    }


def test_fake_graphrag_without_faults_agrees(tmp_path, fake_graphrag):
    """The control: the restated roll-up gives the audit's selection, and only then "agrees" is said."""
    fake_graphrag()
    index = write_v3(tmp_path / "idx", SEED)
    v, para, md = _all(index)
    want = _seed_levels()
    assert v["available"] and v["graphrag_version"] == "3.0.0" and v["agree"] is True, v
    assert {str(r["community_level"]): r["graphrag_count"] for r in v["levels"]} == {
        k: len(x) for k, x in want.items()
    }
    assert all(r["status"] == "agrees" for r in v["levels"])
    assert "read_indexer_reports agrees with the graphrag >= 2.0 selection at every community_level" in para
    assert "agrees with the graphrag ≥ 2.0 selection at every community_level" in md


def test_graphrag_raising_at_some_levels_is_never_agreement(tmp_path, fake_graphrag):
    fake_graphrag(raise_at="1,None")
    index = write_v3(tmp_path / "idx", SEED)
    for costs in (False, True):
        v, para, md = _all(index, costs=costs)
        by = {str(r["community_level"]): r for r in v["levels"]}
        for n in ("1", "None"):
            assert by[n]["status"] == "graphrag_raised" and by[n]["agree"] is False, by[n]
            assert by[n]["graphrag_count"] is None
            assert by[n]["graphrag_error"] == f"RuntimeError: fake graphrag crashed at community_level {n}"
        assert all(by[n]["status"] == "agrees" for n in by if n not in ("1", "None"))
        assert v["agree"] is False
        assert "agree" not in para.replace("disagree", "").lower(), para
        assert (
            "raises RuntimeError at N=1, None (RuntimeError: fake graphrag crashed at community_level 1)"
            in para
        )
        assert "agrees with" not in md and "does not return a selection" in md, md
        assert "| 1 | **graphrag raised** |" in md and "| None | **graphrag raised** |" in md, md


def test_predicted_failure_is_reported_as_raised_not_agreement(tmp_path, fake_graphrag):
    """An index graphrag >= 2.0 cannot read (a 1.x layout whose communities table has no
    entity_ids: v2-unreadable): the audit predicts the KeyError, graphrag raises it at every level,
    and still nothing says "agrees"."""
    fake_graphrag()
    index = write_v1(tmp_path / "idx", SEED)
    t = pq.read_table(index / "create_final_communities.parquet")
    pq.write_table(t.drop_columns(["entity_ids"]), index / "create_final_communities.parquet")
    v, para, md = _all(index)
    assert v["agree"] is False and v["levels"], v
    for r in v["levels"]:
        assert r["status"] == "graphrag_raised" and r["agree"] is False, r
        assert r["graphrag_error"] == "KeyError: 'entity_ids'", r
        assert "v2-unreadable" in r["expected"], r
    assert "agree" not in para.replace("disagree", "").lower(), para
    assert (
        "raises KeyError at every community_level (KeyError: 'entity_ids'; the audit predicted an error"
        in para
    )
    assert "agrees with" not in md, md


def test_wrong_selection_is_a_disagreement(tmp_path, fake_graphrag):
    fake_graphrag(drop_at="1")
    index = write_v3(tmp_path / "idx", SEED)
    want = _seed_levels()
    v, para, md = _all(index)
    by = {str(r["community_level"]): r for r in v["levels"]}
    assert by["1"]["status"] == "differs" and by["1"]["agree"] is False
    assert by["1"]["graphrag_count"] == len(want["1"]) - 1 and by["1"]["audit_count"] == len(want["1"])
    assert len(by["1"]["only_audit"]) == 1 and by["1"]["only_graphrag"] == []
    assert v["agree"] is False
    assert para.startswith("verify: graphrag 3.0.0 DISAGREES with the graphrag >= 2.0 selection: ")
    assert (
        f"N=1: graphrag {len(want['1']) - 1} vs audit {len(want['1'])} reports (1 only in the audit's)"
        in para
    )
    assert "agrees" not in para
    assert "**disagrees**" in md and "| 1 | **differs** |" in md and "agrees with" not in md


def _no_graphrag_here() -> bool:
    try:
        metadata.version("graphrag")
        return False
    except metadata.PackageNotFoundError:
        return importlib.util.find_spec("graphrag") is None


def test_verify_without_graphrag_exits_2(tmp_path):
    """End to end, in a fresh interpreter without graphrag: exit 2, one line, nothing written."""
    if not _no_graphrag_here():
        pytest.skip("graphrag is installed in the interpreter running the tests")
    index = write_v3(tmp_path / "idx", SEED)
    out = tmp_path / "out.md"
    proc = run_tool(sys.executable, "levels", str(index), "--verify", "-f", "markdown", "-o", str(out))
    assert proc.returncode == 2 and proc.stdout == "" and not out.exists()
    lines = proc.stderr.strip().split("\n")
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].startswith("graphrag-audit: error: --verify: graphrag is not installed in this Python (")


def test_verify_with_unimportable_graphrag_exits_2(tmp_path, fake_graphrag):
    fake_graphrag(broken=True)
    index = write_v3(tmp_path / "idx", SEED)
    res = _cli("levels", str(index), "--verify", "-f", "json")
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.strip().split("\n") == [
        "graphrag-audit: error: --verify: graphrag 3.0.0 is installed but graphrag.query.indexer_adapters "
        "cannot be imported (ImportError: fake graphrag: broken install)"
    ]


# ---------------------------------------------------------------------------------------------
# int32 community ids, with graphrag 3.x itself
# ---------------------------------------------------------------------------------------------
def _int32_copy(src, dst):
    """A copy of a 3.x index whose communities.community is rewritten as int32 (nothing else changes)."""
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file():
            shutil.copy(f, dst / f.name)
    t = pq.read_table(src / "communities.parquet")
    i = t.schema.get_field_index("community")
    t = t.set_column(i, pa.field("community", pa.int32()), t.column(i).cast(pa.int32()))
    pq.write_table(t, dst / "communities.parquet")
    return dst


# graphrag's own code, run the two ways graphrag loads tables: pd.read_parquet (Python API) and
# the typed conversions graphrag query's DataReader applies (graphrag/data_model/dfs.py)
REFERENCE = textwrap.dedent("""
    import json, sys
    import pandas as pd
    from graphrag.query.indexer_adapters import read_indexer_reports
    d, levels = sys.argv[1], json.loads(sys.argv[2])
    out = {}
    for how in ("read_parquet", "typed"):
        rep = pd.read_parquet(d + "/community_reports.parquet")
        com = pd.read_parquet(d + "/communities.parquet")
        if how == "typed":
            from graphrag.data_model.dfs import communities_typed, community_reports_typed
            rep, com = community_reports_typed(rep), communities_typed(com)
        for n in levels:
            try:
                got = sorted(int(r.short_id) for r in read_indexer_reports(rep.copy(), com.copy(), n))
            except Exception as exc:
                got = type(exc).__name__ + ": " + " ".join(str(exc).split())[-40:]
            out[how + ":" + str(n)] = got
    print(json.dumps(out))
""")


def _reference(python, index, levels):
    proc = run_script(python, REFERENCE, str(index), json.dumps(levels))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def _int32_case(python, index, reference_levels):
    gv, pv = versions(python)
    ref = _reference(python, index, [None if k == "None" else int(k) for k in reference_levels])
    v, text, md = {}, None, None
    for fmt in ("json", "text", "markdown"):
        proc = run_tool(
            python, "levels", str(index), "--verify", "-f", fmt, "--fail-on", "never", "--width", "400"
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        if fmt == "json":
            _valid(json.loads(proc.stdout))
            v = json.loads(proc.stdout)["verify"]
        elif fmt == "text":
            text = " ".join(
                proc.stdout[proc.stdout.index("verify:") : proc.stdout.index("Findings (")].split()
            )
        else:
            md = proc.stdout
    return gv, pv, ref, v, text, md


@pytest.mark.parametrize("python", side_params(min_major=3))
@pytest.mark.parametrize("source", ["seed", "verbs-v3"])
def test_int32_community_ids_both_load_paths(python, source, tmp_path):
    """Python API (pd.read_parquet) under pandas 3: graphrag raises; graphrag query's typed reader
    casts the ids to int64 and selects the audit's reports. Both are reported, and not as agreement."""
    python = need(python, min_major=3)
    if source == "seed":
        index = write_v3(tmp_path / "int64", SEED)
        want = _seed_levels()
    else:
        index = shared_index("verbs-v3")
        want = None
    i32 = _int32_copy(index, tmp_path / "int32")
    levels = list(_seed_levels()) if want else ["0", "1", "2", "3", "None"]
    gv, pv, ref, v, text, md = _int32_case(python, i32, levels)
    typed = {k.split(":")[1]: x for k, x in ref.items() if k.startswith("typed:")}
    plain = {k.split(":")[1]: x for k, x in ref.items() if k.startswith("read_parquet:")}
    if want is not None:
        assert typed == want, typed  # graphrag query's load: the v2 selection worked out by hand
    assert all(isinstance(x, list) for x in typed.values()), typed
    assert v["load_paths"]["graphrag_query"]["loaded"] is True, v["load_paths"]
    by = {str(r["community_level"]): r for r in v["levels"]}
    assert set(by) == set(levels)
    for n, r in by.items():
        assert r["graphrag_query"]["status"] == "agrees" and r["graphrag_query"]["graphrag_count"] == len(
            typed[n]
        )
        assert r["audit_count"] == len(typed[n])
    if major(pv) >= 3:  # what graphrag 3.3.0 installs (pandas ~=3.0)
        assert all(
            isinstance(x, str) and x.startswith("TypeError") and "int32" in x for x in plain.values()
        ), plain
        for n, r in by.items():
            assert r["status"] == "graphrag_raised" and r["agree"] is False, r
            assert (
                r["graphrag_error"].startswith("TypeError: Invalid value") and "int32" in r["graphrag_error"]
            )
            assert "int32-community-ids" in r["expected"]
            if source == "verbs-v3":  # map calls compared on graphrag query's selection instead
                assert r["map_calls_load_path"] == "graphrag_query"
                assert r["map_calls_agree"] and r["batches_agree"] and r["texts_agree"], r
        assert v["agree"] is False
        assert text.startswith(
            f"verify: graphrag {gv} does not return a selection at every community_level: "
            f"its Python API (tables read with pd.read_parquet, pandas {pv}) raises TypeError "
            "at every community_level (TypeError: Invalid value"
        ), text
        assert (
            "graphrag query (typed DataReader, ids cast to int64) reads it: the audit's selection at every "
            "community_level"
        ) in text, text
        assert "'s read_indexer_reports agrees" not in text
        assert "`graphrag query` (typed DataReader, ids cast to int64) reads it" in md
        assert "| 0 | **graphrag raised** |" in md and "agrees with the" not in md
    else:  # pandas 2: only a warning; both paths select the same reports
        assert plain == typed and v["agree"] is True, (plain, v)
    # the int64 original: both load paths agree, and only then "agrees at every community_level"
    _, _, ref64, v64, text64, _ = _int32_case(python, index, levels)
    assert all(isinstance(x, list) for x in ref64.values()), ref64
    assert v64["agree"] is True and all(
        r["status"] == "agrees" and r["graphrag_query"]["status"] == "agrees" for r in v64["levels"]
    )
    assert (
        f"verify: graphrag {gv}'s read_indexer_reports agrees with the graphrag >= 2.0 selection at every "
        "community_level, with the tables loaded both as its Python API does (pd.read_parquet) and as "
        "graphrag query does (its typed DataReader)"
    ) in text64


@pytest.mark.parametrize("python", side_params(min_major=3))
def test_int32_real_indexes(python):
    """real-csekg-v1 (0.5-0.9 layout, int32 communities.community): the Python API raises under
    pandas 3, and graphrag query cannot load that layout at all (it looks for entities.parquet).
    output-pr2160 (int32 only in community_reports.community): both load paths agree."""
    python = need(python, min_major=3)
    _, pv = versions(python)
    proc = run_tool(
        python,
        "levels",
        str(shared_index("real-csekg-v1")),
        "--verify",
        "--no-costs",
        "-f",
        "json",
        "--fail-on",
        "never",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    v = json.loads(proc.stdout)["verify"]
    assert v["load_paths"]["graphrag_query"] == {
        "how": v["load_paths"]["graphrag_query"]["how"],
        "loaded": False,
        "load_error": "ValueError: Could not find entities.parquet in storage!",
    }
    assert all("graphrag_query" not in r for r in v["levels"])
    if major(pv) >= 3:
        assert v["agree"] is False
        assert all(
            r["status"] == "graphrag_raised" and "int32" in r["graphrag_error"] for r in v["levels"]
        ), v
    proc = run_tool(
        python,
        "levels",
        str(shared_index("output-pr2160")),
        "--verify",
        "--no-costs",
        "-f",
        "json",
        "--fail-on",
        "never",
    )
    v = json.loads(proc.stdout)["verify"]
    assert v["agree"] is True and v["load_paths"]["graphrag_query"]["loaded"] is True
    assert all(r["status"] == "agrees" and r["graphrag_query"]["status"] == "agrees" for r in v["levels"])
