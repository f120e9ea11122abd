"""``tree -f json`` and ``plan -f json`` carry ``schema_version`` and validate against the schemas
shipped in the package (graphrag_audit/schema/tree.schema.json, plan.schema.json), like ``levels``
against audit-report.schema.json: on the fixtures, on every real index, on views and with
``plan --write``. The schemas are also checked to reject documents that break them (a schema that
accepts anything would pass every run)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import FIXTURES, real_index_params, SHARED_INDEXES
from graphrag_audit.results.plan import PLAN_SCHEMA_VERSION
from graphrag_audit.results.tree import TREE_SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "graphrag_audit" / "schema"


def _schema(name: str) -> dict:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _validator(name: str):
    return jsonschema.Draft202012Validator(_schema(name))


def _run(*args: str, ok=(0,)) -> dict | None:
    """The JSON document the command prints; None when it refused the index (exit 2: one line on
    stderr, nothing on stdout), where ``ok`` allows that."""
    res = subprocess.run([sys.executable, "-m", "graphrag_audit", *args], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert res.returncode in ok, res.stderr
    if res.returncode == 2:
        assert res.stdout == "" and len(res.stderr.strip().splitlines()) == 1, res.stderr
        return None
    return json.loads(res.stdout)


def _errors(validator, doc) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def _version_tuple(v: str) -> tuple[int, int]:
    major, minor = v.split(".")
    return int(major), int(minor)


def test_versions_are_documented():
    doc = (ROOT / "docs" / "json-schema.md").read_text(encoding="utf-8")
    for name, version in (("tree", TREE_SCHEMA_VERSION), ("plan", PLAN_SCHEMA_VERSION)):
        assert f"graphrag_audit/schema/{name}.schema.json" in doc
        assert f'`schema_version` is `"{version}"`' in doc, name
        assert _version_tuple(version)[0] == 1


def test_schemas_ship_with_the_package():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'graphrag_audit = ["schema/*.json"]' in text
    assert {p.name for p in SCHEMAS.glob("*.json")} >= {"audit-report.schema.json", "tree.schema.json",
                                                         "plan.schema.json"}


# ---- in-process documents (the CLI runs the same renderers; one CLI run per command below) --------
def _tree_doc(path: Path, level=None, **view) -> dict:
    from graphrag_audit.analysis.treeview import build_forest, layout
    from graphrag_audit.io.load import load_index
    from graphrag_audit.render.graph import to_json

    forest = build_forest(load_index(path), level)
    return json.loads(to_json(forest, layout(forest, **view) if view else None))


def _plan_doc(path: Path, kind: str = "reports", value: float = 20, costs: bool = False) -> dict | None:
    from graphrag_audit.analysis.plan import ContextCost, plan_report
    from graphrag_audit.errors import IndexInputError
    from graphrag_audit.io.load import load_index
    from graphrag_audit.render.plan_json import render_plan_json
    from graphrag_audit.results.plan import Budget

    model = load_index(path)
    cost = ContextCost(model, "cl100k_base", 12000) if costs else None
    settings = {"tokenizer": cost and cost.tokenizer, "tokens_exact": cost and cost.exact,
                "max_context_tokens": 12000 if costs else None, "num_repeats": 1}
    try:
        report = plan_report(model, Budget(kind, value), cost, num_repeats=1, settings=settings)
    except IndexInputError:  # plan refuses some damaged trees (the CLI: exit 2, one line)
        return None
    return json.loads(render_plan_json(report))


# ---- tree --------------------------------------------------------------------------------------
TREE_FIXTURES = ["seed-v3", "seed-v1", "seed-v05", "seed-v01", "balanced-v3", "small-leiden-v3", "seed-v3-csv"]


@pytest.mark.parametrize("name", TREE_FIXTURES)
def test_tree_json_on_fixtures(name):
    v = _validator("tree")
    for level, view in ((None, {}), (1, {}), (0, {"max_lines": 3}), (None, {"depth": 0})):
        doc = _tree_doc(FIXTURES / name, level, **view)
        assert doc["schema_version"] == TREE_SCHEMA_VERSION and doc["tool"]["name"] == "graphrag-audit"
        assert not _errors(v, doc), (level, view, _errors(v, doc)[:5])


def test_tree_json_from_the_cli():
    doc = _run("tree", str(FIXTURES / "seed-v3"), "-f", "json", "--level", "1", "--max-lines", "3")
    assert doc["schema_version"] == TREE_SCHEMA_VERSION and doc["complete"] is False
    assert not _errors(_validator("tree"), doc)


@pytest.mark.parametrize("name", real_index_params())
def test_tree_json_on_real_indexes(name):
    assert not _errors(_validator("tree"), _tree_doc(SHARED_INDEXES / name, 2))


def test_tree_schema_rejects_broken_documents():
    v = _validator("tree")
    doc = _tree_doc(FIXTURES / "seed-v3", 1)
    assert not _errors(v, doc)
    for path, value in [(("schema_version",), "2.0"), (("communities", 0, "sent"), "sometimes"),
                        (("communities", 0, "children"), ["5"]), (("sent_reports",), {"v2": -1, "v1": 0}),
                        (("format_version",), 2)]:
        bad = copy.deepcopy(doc)
        target = bad
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value
        assert _errors(v, bad), path
    for key in ("schema_version", "communities", "roots"):
        bad = copy.deepcopy(doc)
        del bad[key]
        assert _errors(v, bad), key


# ---- plan --------------------------------------------------------------------------------------
BUDGETS = [("reports", 3, False), ("reports", 3, True), ("tokens", 2000, True), ("map_calls", 1, True),
           ("coverage", 0.5, False), ("reports", 1, False)]


@pytest.mark.parametrize("kind,value,costs", BUDGETS)
def test_plan_json_on_the_seed(kind, value, costs):
    doc = _plan_doc(FIXTURES / "seed-v3", kind, value, costs)
    assert doc["schema_version"] == PLAN_SCHEMA_VERSION and doc["tool"]["name"] == "graphrag-audit"
    assert not _errors(_validator("plan"), doc), _errors(_validator("plan"), doc)[:5]


def test_plan_json_from_the_cli_with_write_carries_the_handoff(tmp_path):
    doc = _run("plan", str(FIXTURES / "seed-v3"), "-f", "json", "--reports", "4", "--write", str(tmp_path / "out"))
    assert doc["schema_version"] == PLAN_SCHEMA_VERSION
    assert doc["handoff"] is not None and doc["handoff"]["reports"] == len(doc["plan"]["communities"])
    assert not _errors(_validator("plan"), doc)


@pytest.mark.parametrize("name", real_index_params())
def test_plan_json_on_real_indexes(name):
    doc = _plan_doc(SHARED_INDEXES / name)
    if doc is not None:
        assert not _errors(_validator("plan"), doc)


def test_plan_schema_rejects_broken_documents():
    v = _validator("plan")
    doc = _plan_doc(FIXTURES / "seed-v3", "reports", 3, True)
    assert not _errors(v, doc)
    for path, value in [(("schema_version",), "1"), (("plan", "budget", "kind"), "dollars"),
                        (("plan", "coverage"), 1.5), (("community_levels", 0, "behaviour"), "v3"),
                        (("plan", "subtrees", 0, "status"), "done"), (("handoff",), "written")]:
        bad = copy.deepcopy(doc)
        target = bad
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value
        assert _errors(v, bad), path
    bad = copy.deepcopy(doc)
    del bad["plan"]["communities"]
    assert _errors(v, bad)
