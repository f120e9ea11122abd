"""``levels -f json --json-ids level`` (issue 22): the ``--level`` entry is the default one, every other
entry is the default one without its id lists. Both forms validate against the schema, which refuses
a document mixing them. Fixtures, two real shared indexes and synthetic ones (both layouts)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import synthetic
from conftest import shared_index

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.render.json import iter_json, render_json

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
SCHEMA = json.loads(
    (ROOT / "graphrag_audit" / "schema" / "audit-report.schema.json").read_text(encoding="utf-8")
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
#: inside a selection, the parts whose id lists are the same in every form
KEEP = ("graphrag_returns", "python_api")


def _map_selection(d, fn):
    """``d`` (a selection) rebuilt with ``fn(key, value)`` -> {key: value} applied to every key
    ending in ``_ids`` outside KEEP, at any depth."""
    if not isinstance(d, dict):
        return d
    out = {}
    for k, v in d.items():
        if k in KEEP:
            out[k] = v
        elif k.endswith("_ids"):
            out.update(fn(k, v))
        else:
            out[k] = _map_selection(v, fn)
    return out


def _map_doc(doc, fn):
    return {
        k: (
            [
                {
                    **r,
                    "selected": {
                        b: _map_selection(s, lambda key, v, lv=r["community_level"]: fn(key, v, lv))
                        for b, s in r["selected"].items()
                    },
                }
                for r in v
            ]
            if k == "levels"
            else v
        )
        for k, v in doc.items()
        if k != "json_ids"
    }


def _id_keys(doc) -> set[str]:
    seen: set[str] = set()
    _map_doc(doc, lambda k, v, lv: seen.add(k) or {k: v})
    return seen


def _check_forms(report):
    full = json.loads(render_json(report))
    level = json.loads(render_json(report, json_ids="level"))
    for doc in (full, level):
        errors = [e.message for e in VALIDATOR.iter_errors(doc)]
        assert not errors, errors[:3]
    assert "json_ids" not in full and level["json_ids"] == "level"
    # the streamed text is the same document as the one-piece (pretty) one
    assert json.loads("".join(iter_json(report, json_ids="level"))) == level
    assert "community_ids" in _id_keys(full)

    # level: the --level entry as in the default document, the others without id lists
    want = full["options"]["level"]
    assert _map_doc(level, lambda k, v, lv: {k: v}) == _map_doc(
        full, lambda k, v, lv: {k: v} if lv == want else {}
    )
    assert ("community_ids" in _id_keys(level)) == (want in [r["community_level"] for r in full["levels"]])
    return full, level


@pytest.mark.parametrize(
    "name",
    [
        "seed-v3",
        "seed-v1",
        "balanced-v3",
        "small-leiden-v3",
        "defects/duplicate-numbers",
        "defects/multi-parent",
        "defects/missing-report",
    ],
)
def test_compact_forms_on_fixtures(name):
    path = FIXTURES / name
    if not path.is_dir():
        pytest.skip(f"no fixture {name}")
    _check_forms(audit(path, AuditOptions(level=1, tokenizer="estimate")))


def test_compact_forms_with_a_dynamic_what_if():
    """--relevant adds what_if's relevant_ids and kept_ids: kept at --level only too."""
    full, level = _check_forms(
        audit(FIXTURES / "seed-v3", AuditOptions(level=2, tokenizer="estimate", relevant=(5, 20, 21, 22)))
    )
    assert "relevant_ids" in json.dumps(level) and "relevant_ids" in json.dumps(full)


@pytest.mark.parametrize("name", ["dulce-v3", "real-genesis-zh-deep"])
def test_compact_forms_on_shared_indexes(name):
    _check_forms(audit(shared_index(name), AuditOptions(level=1, tokenizer="estimate", costs=False)))
    # a --level beyond the deepest level: no entry is that level's, so none lists ids
    _check_forms(audit(shared_index(name), AuditOptions(level=40, tokenizer="estimate", costs=False)))


@pytest.mark.parametrize(
    "build, layout",
    [
        (lambda: synthetic.leiden_like(3000, max_cluster_size=12, seed=7), "3.x"),
        (lambda: synthetic.leiden_like(2000, max_cluster_size=10, seed=8), "1.0-1.2"),
        (lambda: synthetic.duplicate_numbers(synthetic.leiden_like(800, seed=9)), "3.x"),
        (lambda: synthetic.drop_report(synthetic.balanced_tree(3, 3, 4)), "3.x"),
    ],
    ids=["leiden-3000-3.x", "leiden-2000-1.x", "duplicate-numbers", "balanced-missing-report"],
)
def test_compact_forms_on_synthetic_indexes(tmp_path, build, layout):
    synthetic.write_index(build(), tmp_path / "i", layout)
    full, level = _check_forms(
        audit(tmp_path / "i", AuditOptions(level=1, tokenizer="estimate", costs=False))
    )
    assert len(json.dumps(level)) < len(json.dumps(full))


def test_schema_refuses_mixed_forms():
    report = audit(FIXTURES / "seed-v3", AuditOptions(level=1, tokenizer="estimate"))
    full = json.loads(render_json(report))
    level = json.loads(render_json(report, json_ids="level"))
    broken = []
    b = copy.deepcopy(full)
    del b["levels"][0]["selected"]["dynamic"]["by_version"]["3.x"]["start_ids"]
    broken.append(b)
    b = copy.deepcopy(full)
    b["json_ids"] = "ranges"
    broken.append(b)
    b = copy.deepcopy(level)
    other = next(r for r in b["levels"] if r["community_level"] != b["options"]["level"])
    other["selected"]["v2"]["community_ids"] = [5, 7]
    broken.append(b)
    b = copy.deepcopy(level)
    other = next(r for r in b["levels"] if r["community_level"] != b["options"]["level"])
    other["selected"]["dynamic"]["by_version"]["3.x"]["start_ids"] = [5, 6]
    broken.append(b)
    for i, doc in enumerate(broken):
        assert list(VALIDATOR.iter_errors(doc)), i


def test_cli_json_ids_level():
    seed = FIXTURES / "seed-v3"
    report = audit(seed, AuditOptions(level=1, tokenizer="estimate"))
    for mode in ("level",):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "graphrag_audit",
                "levels",
                str(seed),
                "--level",
                "1",
                "--tokenizer",
                "estimate",
                "-f",
                "json",
                "--json-ids",
                mode,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode in (0, 1), proc.stderr
        got, want = json.loads(proc.stdout), json.loads(render_json(report, json_ids=mode))
        got["index"].pop("path", None), want["index"].pop("path", None)
        assert got == want
