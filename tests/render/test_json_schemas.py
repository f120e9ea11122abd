"""``tree -f json`` and ``plan -f json`` carry ``schema_version`` and validate against the schemas
shipped in the package (graphrag_audit/schema/tree.schema.json, plan.schema.json), like ``levels``
against audit-report.schema.json: on the fixtures, on every real index, on views and with
``plan --write``. The schemas are also checked to reject documents that break them (a schema that
accepts anything would pass every run). Issue 38: every JSON the tool prints, in every mode, on
every fixture and shared index: ``levels -f json`` in each ``--json-ids`` form (with and without
``--relevant`` and prices), ``tree``, ``plan`` (by reports and by map calls), ``diff`` (pairs of
the same generation) and ``update-run`` (layouts assembled from symbolic links)."""

from __future__ import annotations

import copy
import functools
import itertools
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, SHARED_INDEXES, real_index_params, shared_folders

from graphrag_audit.results.plan import PLAN_SCHEMA_VERSION
from graphrag_audit.results.tree import TREE_SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "graphrag_audit" / "schema"


def _schema(name: str) -> dict:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@functools.cache
def _validator(name: str):
    """The schema's validator (checked and built once: checking the schema costs more than
    validating most documents)."""
    return jsonschema.Draft202012Validator(_schema(name))


def _run(*args: str, ok=(0,)) -> dict | None:
    """The JSON document the command prints; None when it refused the index (exit 2: one line on
    stderr, nothing on stdout), where ``ok`` allows that."""
    res = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *args], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
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
    assert {p.name for p in SCHEMAS.glob("*.json")} >= {
        "audit-report.schema.json",
        "tree.schema.json",
        "plan.schema.json",
    }


# ---- in-process documents (the CLI runs the same renderers; one CLI run per command below) --------
def _tree_doc(path: Path, level=None, **view) -> dict:
    from graphrag_audit.analysis.treeview import build_forest, layout
    from graphrag_audit.io.load import load_index
    from graphrag_audit.render.json import to_json

    forest = build_forest(load_index(path), level)
    return json.loads(to_json(forest, layout(forest, **view) if view else None))


def _plan_doc(path: Path, kind: str = "reports", value: float = 20, costs: bool = False) -> dict | None:
    from graphrag_audit.analysis.plan import ContextCost, plan_report
    from graphrag_audit.errors import IndexInputError
    from graphrag_audit.io.load import load_index
    from graphrag_audit.render.json import render_plan_json
    from graphrag_audit.results.plan import Budget

    model = load_index(path)
    cost = ContextCost(model, "cl100k_base", 12000) if costs else None
    settings = {
        "tokenizer": cost and cost.tokenizer,
        "tokens_exact": cost and cost.exact,
        "max_context_tokens": 12000 if costs else None,
        "num_repeats": 1,
    }
    try:
        report = plan_report(model, Budget(kind, value), cost, num_repeats=1, settings=settings)
    except IndexInputError:  # plan refuses some damaged trees (the CLI: exit 2, one line)
        return None
    return json.loads(render_plan_json(report))


# ---- tree --------------------------------------------------------------------------------------
TREE_FIXTURES = [
    "seed-v3",
    "seed-v1",
    "seed-v05",
    "seed-v01",
    "balanced-v3",
    "small-leiden-v3",
    "seed-v3-csv",
]


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
    for path, value in [
        (("schema_version",), "2.0"),
        (("communities", 0, "sent"), "sometimes"),
        (("communities", 0, "children"), ["5"]),
        (("sent_reports",), {"v2": -1, "v1": 0}),
        (("format_version",), 2),
    ]:
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
BUDGETS = [
    ("reports", 3, False),
    ("reports", 3, True),
    ("tokens", 2000, True),
    ("map_calls", 1, True),
    ("coverage", 0.5, False),
    ("reports", 1, False),
]


@pytest.mark.parametrize("kind,value,costs", BUDGETS)
def test_plan_json_on_the_seed(kind, value, costs):
    doc = _plan_doc(FIXTURES / "seed-v3", kind, value, costs)
    assert doc["schema_version"] == PLAN_SCHEMA_VERSION and doc["tool"]["name"] == "graphrag-audit"
    assert not _errors(_validator("plan"), doc), _errors(_validator("plan"), doc)[:5]


def test_plan_json_from_the_cli_with_write_carries_the_handoff(tmp_path):
    doc = _run(
        "plan", str(FIXTURES / "seed-v3"), "-f", "json", "--reports", "4", "--write", str(tmp_path / "out")
    )
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
    for path, value in [
        (("schema_version",), "1"),
        (("plan", "budget", "kind"), "dollars"),
        (("plan", "coverage"), 1.5),
        (("community_levels", 0, "behaviour"), "v3"),
        (("plan", "subtrees", 0, "status"), "done"),
        (("handoff",), "written"),
    ]:
        bad = copy.deepcopy(doc)
        target = bad
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value
        assert _errors(v, bad), path
    bad = copy.deepcopy(doc)
    del bad["plan"]["communities"]
    assert _errors(v, bad)


# ---- every JSON output, every mode, every shared index and fixture (issue 38) -------------------
# Each command line runs in-process through the CLI (typer's runner): the documents are the bytes
# the tool prints. Costs with the fast estimate tokenizer (what they count changes no shape).
EST = ("--tokenizer", "estimate")
JSON_IDS = ("full", "level")


def _fixture_names() -> list[str]:
    tops = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "defects")
    return tops + sorted(f"defects/{p.name}" for p in (FIXTURES / "defects").iterdir() if p.is_dir())


def _every_index() -> list:
    shared = [pytest.param(SHARED_INDEXES / n, id=n) for n in real_index_params() if n is not None]
    if not shared:  # one skipped case saying why
        shared = [
            pytest.param(
                None,
                id="shared",
                marks=pytest.mark.skip(
                    reason=f"{SHARED_INDEXES} is absent: real-index tests need ../shared/indexes beside the repo"
                ),
            )
        ]
    return [pytest.param(FIXTURES / n, id=n) for n in _fixture_names()] + shared


def _cli_json(*args: str, ok=(0, 1)) -> dict | None:
    """The JSON document ``graphrag-audit ARGS`` prints, run in-process; None when the command
    refused the index with one line on stderr (exit 2), where ``ok`` allows it."""
    from typer.testing import CliRunner

    from graphrag_audit.cli import app

    res = CliRunner().invoke(app, list(args))
    assert res.exit_code in ok, (args, res.exit_code, res.stderr[-2000:], res.exception)
    if res.exit_code == 2:
        assert res.stdout == "" and len(res.stderr.strip().splitlines()) == 1, res.stderr
        return None
    return json.loads(res.stdout)


def _valid(name: str, doc: dict, what) -> None:
    errors = _errors(_validator(name), doc)
    assert not errors, (what, errors[:5])


def _some_communities(tree_doc: dict) -> list[int]:
    """A few community numbers of the index (for --relevant): every third of the first 18."""
    return sorted({c["community"] for c in tree_doc["communities"]})[:18:3]


def _levels_docs(path: Path, **options) -> dict[str, dict]:
    """``levels -f json --json-ids MODE`` for every MODE, from one audit: the CLI's streamer on the
    report the CLI builds (tests/render/test_json_ids.py holds the CLI's bytes to the same renderer)."""
    from graphrag_audit.analysis.audit import AuditOptions, audit
    from graphrag_audit.render.formats import LevelsFormat, streamer

    report = audit(path, AuditOptions(tokenizer="estimate", **{"level": 2, **options}))
    return {
        mode: json.loads("".join(streamer(LevelsFormat.json)(report, json_ids=mode))) for mode in JSON_IDS
    }


@pytest.mark.parametrize("path", _every_index())
def test_every_json_mode_validates(path):
    """levels -f json in every --json-ids mode (plain, and with --relevant and prices: what_if and
    money), tree -f json (whole and marked at a level), plan -f json by reports and by map calls:
    each validates against its shipped schema."""
    idx = str(path)
    tree = _cli_json("tree", idx, "-f", "json")
    _valid("tree", tree, "tree")
    _valid("tree", _cli_json("tree", idx, "-f", "json", "--level", "1"), "tree --level 1")
    what_if = {"level": 1, "relevant": tuple(_some_communities(tree)), "price_in": 2.5, "price_out": 10.0}
    for options in ({}, what_if):
        for mode, doc in _levels_docs(path, **options).items():
            assert doc.get("json_ids", "full") == mode
            assert bool(doc["options"]["relevant"]) == bool(options) and ("money" in doc) == bool(options)
            _valid("audit-report", doc, (mode, options))
    for budget in (("--reports", "5"), ("--map-calls", "2")):
        doc = _cli_json("plan", idx, "-f", "json", *budget, *EST, ok=(0, 1, 2))
        if doc is not None:  # plan refuses some damaged trees (exit 2, one line)
            _valid("plan", doc, budget)


def test_every_json_mode_from_the_cli():
    """The CLI prints what the test above validates: each --json-ids mode, in-process."""
    seed = FIXTURES / "seed-v01"
    want = _levels_docs(seed, level=1, relevant=(5, 20), price_in=2.5, price_out=10.0)
    for mode in JSON_IDS:
        got = _cli_json(
            "levels",
            str(seed),
            "-f",
            "json",
            "--json-ids",
            mode,
            "--level",
            "1",
            "--relevant",
            "5,20",
            "--price-in",
            "2.5",
            "--price-out",
            "10",
            *EST,
        )
        _valid("audit-report", got, mode)
        for doc in (got, want[mode]):
            doc.pop("timings", None)
        assert got == want[mode], mode


def _diff_pairs() -> list:
    """Consecutive shared indexes of each generation (the README's), and fixture pairs: the seed
    in two layouts and generations, against a larger tree, and against one of its defects."""
    fixtures = [
        ("seed-v3", "small-leiden-v3"),
        ("seed-v3", "seed-v3-csv"),
        ("seed-v05", "seed-v1"),
        ("seed-v01", "seed-v05"),
        ("seed-v3", "defects/missing-report"),
        ("defects/multi-parent", "seed-v3"),
    ]
    out = [pytest.param(FIXTURES / a, FIXTURES / b, id=f"{a}->{b}") for a, b in fixtures]
    if not shared_folders():
        return out + [
            pytest.param(
                None,
                None,
                id="shared",
                marks=pytest.mark.skip(
                    reason=f"{SHARED_INDEXES} is absent: real-index tests need ../shared/indexes beside the repo"
                ),
            )
        ]
    from test_real_indexes import readme_generations

    by_gen: dict[str, list[str]] = {}
    for name, gen in sorted(readme_generations().items()):
        if (SHARED_INDEXES / name).is_dir():
            by_gen.setdefault(gen, []).append(name)
    for names in by_gen.values():
        out += [
            pytest.param(SHARED_INDEXES / a, SHARED_INDEXES / b, id=f"{a}->{b}")
            for a, b in itertools.pairwise(names)
        ]
    return out


@pytest.mark.parametrize("old, new", _diff_pairs())
def test_diff_json_validates(old, new):
    doc = _cli_json("diff", str(old), str(new), "-f", "json", *EST)
    _valid("diff", doc, "diff")
    assert doc["kind"] == "diff"


#: update-run layouts assembled from symbolic links to indexes (nothing is copied): graphrag >= 2.0
#: (output/ merged, update_output/<ts>/{previous,delta}) and 0.4-1.2 (output/ previous, the
#: merged tables in update_output/ with update_output/delta/): (previous, delta, merged)
UPDATE_RUNS = {
    ">= 2.0 fixtures": (">= 2.0", FIXTURES, ("seed-v3", "small-leiden-v3", "balanced-v3")),
    ">= 2.0 csv fixtures": (">= 2.0", FIXTURES, ("seed-v3", "seed-v3-csv", "seed-v3-csv")),
    "0.4-1.2 fixtures": ("0.4-1.2", FIXTURES, ("seed-v1", "seed-v05", "seed-v1")),
    "0.4-1.2 string-id fixtures": ("0.4-1.2", FIXTURES, ("seed-v01", "seed-v01", "seed-v01")),
    "3.x shared": (">= 2.0", SHARED_INDEXES, ("dulce-v3", "verbs-v3", "real-insurance-v3")),
    "2.x shared": (">= 2.0", SHARED_INDEXES, ("real-b2b-gaps-v2", "verbs-v2", "real-technip-safety-v2")),
    "2.x shared without reports": (
        ">= 2.0",
        SHARED_INDEXES,
        ("real-ralad-large", "dulce-v2plus", "real-genesis-zh-deep"),
    ),
    # real-climate-update-v09 is the merged update_output of a real graphrag 0.9 update
    "0.9 shared": ("0.4-1.2", SHARED_INDEXES, ("real-csekg-v1", "verbs-v0.5", "real-climate-update-v09")),
    "1.x shared": ("0.4-1.2", SHARED_INDEXES, ("dulce-v1", "verbs-v1", "real-textbook-v1")),
    "0.1-0.4 shared": (
        "0.4-1.2",
        SHARED_INDEXES,
        ("dulce-v0.3-create_final", "dulce-v0.1-create_final", "real-iswc-v0"),
    ),
}


def _update_run(root: Path, layout: str, base: Path, parts: tuple[str, str, str]) -> Path:
    previous, delta, merged = (base / p for p in parts)
    for p in (previous, delta, merged):
        if not p.is_dir():
            pytest.skip(f"{p} is absent")
    if layout == ">= 2.0":
        run = root / "update_output" / "20250101-120000"
        run.mkdir(parents=True)
        (run / "previous").symlink_to(previous, target_is_directory=True)
        (run / "delta").symlink_to(delta, target_is_directory=True)
        (root / "output").symlink_to(merged, target_is_directory=True)
    else:
        upd = root / "update_output"
        upd.mkdir(parents=True)
        for f in merged.iterdir():
            (upd / f.name).symlink_to(f)
        (upd / "delta").symlink_to(delta, target_is_directory=True)
        (root / "output").symlink_to(previous, target_is_directory=True)
    return root


@pytest.mark.parametrize("name", list(UPDATE_RUNS))
def test_update_run_json_validates(tmp_path, name):
    """No fixture or shared index is a whole update run (real-climate-update-v09 is only the
    merged part): each layout is assembled here, every part audited."""
    layout, base, parts = UPDATE_RUNS[name]
    root = _update_run(tmp_path / "project", layout, base, parts)
    for arg in (root, root / "update_output"):
        doc = _cli_json("update-run", str(arg), "-f", "json")
        _valid("update-run", doc, arg)
        assert doc["layout"] == layout and [p["role"] for p in doc["parts"]] == [
            "previous",
            "delta",
            "merged",
        ]
        assert {p["status"] for p in doc["parts"]} == {"audited"}, [
            (p["role"], p["problem"]) for p in doc["parts"]
        ]


def test_null_dynamic_scenarios_in_every_form_and_lists_still_refused():
    """graphrag 1.x cannot build its selector on a 0.1-0.4 layout: by_version's scenarios are null
    (the case the schema refused in level form). Lists in the wrong form stay refused."""
    docs = _levels_docs(FIXTURES / "seed-v01")
    for mode, doc in docs.items():
        v1x = doc["levels"][0]["selected"]["dynamic"]["by_version"]["1.x"]
        assert v1x["error"] and v1x["none_relevant"] is None and v1x["all_relevant"] is None
        _valid("audit-report", doc, mode)
    seed = _levels_docs(FIXTURES / "seed-v3")
    for mode, key, at in (("level", "kept_ids", 0),):
        bad = copy.deepcopy(seed[mode])
        assert bad["levels"][at]["community_level"] != bad["options"]["level"]
        bad["levels"][at]["selected"]["dynamic"]["by_version"]["3.x"]["none_relevant"][key] = [5]
        assert _errors(_validator("audit-report"), bad), (mode, key)
