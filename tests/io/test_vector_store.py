"""DRIFT's embeddings preflight (io/vector_store.py, analysis/drift_search.py) on real LanceDB stores.

Each side environment writes the store with its own graphrag's LanceDB vector store and table name, for a
copy of a fixture index, one report left out; graphrag's own ``search_by_id`` then names the reports it
cannot embed, and the audit's ``drift-missing-embeddings`` must name exactly those. The audit reads the
store with the ``[lancedb]`` extra (.ci/run installs it for the heavy tiers) and must leave it unchanged.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess

import pytest
from graphrag_side import ROOT, in_ci, major, need, side_params, versions

from graphrag_audit.analysis.audit import audit
from graphrag_audit.io.vector_store import INSTALL_HINT
from graphrag_audit.results.audit import AuditOptions

#: graphrag's writer and reader of the community full_content table, per major version. The script gets
#: (store folder, json [[id, text]], json ids to leave out) and prints the ids graphrag finds no vector for.
WRITE_AND_READ = {
    1: """
from graphrag.index.config.embeddings import community_full_content_embedding as name
from graphrag.utils.embeddings import create_collection_name
from graphrag.vector_stores.base import VectorStoreDocument
from graphrag.vector_stores.lancedb import LanceDBVectorStore
def store():
    s = LanceDBVectorStore(collection_name=create_collection_name("default", name))
    s.connect(db_uri=folder)
    return s
def missing(s, i):
    return s.search_by_id(i).vector is None
""",
    2: """
from graphrag.config.embeddings import community_full_content_embedding as name, create_index_name
from graphrag.config.models.vector_store_schema_config import VectorStoreSchemaConfig
from graphrag.vector_stores.base import VectorStoreDocument
from graphrag.vector_stores.lancedb import LanceDBVectorStore
def store():
    config = VectorStoreSchemaConfig(index_name=create_index_name("default", name), vector_size=3)
    s = LanceDBVectorStore(vector_store_schema_config=config)
    s.connect(db_uri=folder)
    return s
def missing(s, i):
    return s.search_by_id(i).vector is None
""",
    3: """
from graphrag.config.embeddings import community_full_content_embedding as name
from graphrag_vectors.lancedb import LanceDBVectorStore
from graphrag_vectors.vector_store import VectorStoreDocument
def store():
    s = LanceDBVectorStore(db_uri=folder, index_name=name, vector_size=3)
    s.connect()
    return s
def missing(s, i):
    try:
        return s.search_by_id(i).vector is None
    except IndexError:  # read_indexer_report_embeddings @v3.3.0 catches it: no embedding
        return True
""",
}
COMMON = """
import json, sys
folder, reports, left_out = sys.argv[1], json.loads(sys.argv[2]), set(json.loads(sys.argv[3]))
{version}
s = store()
if {major} == 3:
    s.create_index()
docs = [(i, t) for i, t in reports if i not in left_out]
s.load_documents([VectorStoreDocument(id=i, vector=[0.1, 0.2, float(k)], **({{"text": t}} if {major} < 3 else {{}}))
                  for k, (i, t) in enumerate(docs)])
s = store()
print(json.dumps([i for i, _ in reports if missing(s, i)]), flush=True)
import os
os._exit(0)  # lance's threads can abort the interpreter's finalisation (PyGILState_Release)
"""
#: a fixture each version reads exactly (status exact), and the line(s) it is audited as
FIXTURE = {1: ("seed-v1", ["1.x"]), 2: ("seed-v3", ["2.x"]), 3: ("seed-v3", ["3.x"])}


def _need_lancedb() -> None:
    if importlib.util.find_spec("lancedb") is None:
        if in_ci():
            pytest.fail(
                "CI=true but lancedb is not installed: .ci/run installs .[lancedb] for the heavy tiers"
            )
        pytest.skip("lancedb is not installed (pip install '.[lancedb]')")


def _snapshot(folder) -> dict:
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.stat(path)
            out[os.path.relpath(path, folder)] = (st.st_size, st.st_mtime_ns, os.path.isdir(path))
    return out


def _build(python, tmp_path, left_out: list[str]):
    """A copy of the version's fixture with ``lancedb/`` written by graphrag; (index, line, graphrag's misses)."""
    gr = major(versions(python)[0])
    name, lines = FIXTURE[gr]
    index = tmp_path / name
    shutil.copytree(ROOT / "fixtures" / name, index)
    reports_file = next(index.glob("*community_reports.parquet"))
    import pandas as pd

    reports = pd.read_parquet(reports_file, columns=["id", "full_content"])
    code = COMMON.format(version=WRITE_AND_READ[gr], major=gr)
    pairs = json.dumps([[str(i), str(t)] for i, t in zip(reports["id"], reports["full_content"])])
    proc = subprocess.run(
        [python, "-c", code, str(index / "lancedb"), pairs, json.dumps(left_out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return index, lines, json.loads(proc.stdout.strip().splitlines()[-1])


def _level0_report(index) -> str:
    import pandas as pd

    reports = pd.read_parquet(next(index.glob("*community_reports.parquet")), columns=["id", "level"])
    return str(reports[reports["level"] == 0]["id"].iloc[0])


@pytest.mark.parametrize("python", side_params())
def test_missing_embedding_named_as_graphrag_misses_it(python, tmp_path):
    _need_lancedb()
    python = need(python)
    index, lines, _ = _build(python, tmp_path / "probe", [])
    gone = _level0_report(index)  # in DRIFT's pool at N=0 for every line
    index, lines, graphrag_misses = _build(python, tmp_path, [gone])
    assert graphrag_misses == [gone]
    before = _snapshot(index)
    report = audit(index, AuditOptions(level=0))
    assert _snapshot(index) == before  # read only: nothing written into the index or its store
    found = [f for f in report.findings if f.rule == "drift-missing-embeddings"]
    assert len(found) == 1, [f.rule for f in report.findings]
    assert {line: found[0].evidence["missing_ids"][line] for line in lines} == {
        line: [gone] for line in lines
    }
    assert gone in found[0].message
    checks = report.levels[0].drift_search["by_version"]
    for line in lines:
        assert checks[line]["embeddings"]["status"] == "checked"
        assert checks[line]["embeddings"]["missing"] == 1


@pytest.mark.parametrize("python", side_params())
def test_complete_store_gives_no_finding(python, tmp_path):
    _need_lancedb()
    index, lines, graphrag_misses = _build(need(python), tmp_path, [])
    assert graphrag_misses == []
    report = audit(index, AuditOptions(level=0))
    assert "drift-missing-embeddings" not in {f.rule for f in report.findings}
    for r in report.levels:
        if r.drift_search:
            for line in lines:
                assert r.drift_search["by_version"][line]["embeddings"] == {
                    "status": "checked",
                    "table": r.drift_search["by_version"][line]["embeddings"]["table"],
                    "missing": 0,
                }


def test_without_lancedb_the_check_is_not_run(tmp_path, monkeypatch):
    """Without the extra: not_run with the reason in JSON and text, never a pass, no finding."""
    index = tmp_path / "seed-v3"
    shutil.copytree(ROOT / "fixtures" / "seed-v3", index)
    (index / "lancedb").mkdir()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "lancedb" else real(name, *a)
    )
    report = audit(index, AuditOptions(level=0))
    assert "drift-missing-embeddings" not in {f.rule for f in report.findings}
    for v in report.levels[0].drift_search["by_version"].values():
        assert v["embeddings"] == {"status": "not_run", "reason": INSTALL_HINT}
    assert os.listdir(index / "lancedb") == []


def test_no_store_is_not_run(tmp_path):
    report = audit(ROOT / "fixtures" / "seed-v3", AuditOptions(level=0))
    for v in report.levels[0].drift_search["by_version"].values():
        assert v["embeddings"]["status"] == "not_run"


def test_where_each_line_reads_the_store(tmp_path):
    """The settings' db_uri, container and index names per version shape; another store type is not run."""
    import dataclasses

    from graphrag_audit.io.load import load_index
    from graphrag_audit.io.vector_store import EmbeddingStore, locate

    model = load_index(ROOT / "fixtures" / "seed-v3")
    (tmp_path / "vs").mkdir()
    f = tmp_path / "settings.yaml"
    with_settings = dataclasses.replace(model, settings_file=f)
    f.write_text(
        "vector_store:\n  type: lancedb\n  db_uri: vs\n"
        "  index_schema:\n    community_full_content:\n      index_name: mine\n      id_field: key\n"
    )
    assert locate(with_settings, "3.x") == EmbeddingStore(tmp_path / "vs", "mine", "key")
    assert locate(with_settings, "2.x") == "the settings' vector_store is not in graphrag 2.x's shape"
    f.write_text(
        "vector_store:\n  default_vector_store:\n    type: lancedb\n    db_uri: vs\n    container_name: c\n"
    )
    assert locate(with_settings, "2.x") == EmbeddingStore(tmp_path / "vs", "c-community-full_content")
    f.write_text("embeddings:\n  vector_store:\n    type: lancedb\n    db_uri: vs\n    container_name: x\n")
    assert locate(with_settings, "1.x") == EmbeddingStore(tmp_path / "vs", "x-community-full_content")
    f.write_text("vector_store:\n  type: azure_ai_search\n")
    assert locate(with_settings, "3.x") == "the vector store is azure_ai_search, not a local LanceDB folder"
    assert (
        locate(model, "3.x") == "no LanceDB folder at the vector store's db_uri"
    )  # no settings: output/lancedb
