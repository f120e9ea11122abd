"""``levels -f json --json-ids ranges|level`` (issue 22): the compact forms carry exactly what they
promise. ``ranges``: the ``[first, last]`` runs concatenate, expanded here by the test itself, to
the default document's ``community_ids`` (order and duplicates included); ``level``: the
``--level`` entry is the default one, every other entry is the default one without its id lists.
Both validate against the schema, which refuses a document mixing forms. Fixtures, two real
shared indexes and synthetic ones (duplicate and non-consecutive numbers, both layouts)."""

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
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.render.json import expand_id_ranges, id_ranges, iter_json, render_json

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SCHEMA = json.loads(
    (ROOT / "graphrag_audit" / "schema" / "audit-report.schema.json").read_text(encoding="utf-8")
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
#: inside a selection, the parts whose id lists are the same in every form
KEEP = ("graphrag_returns", "python_api")


def _expand(items) -> list[int]:
    """A ``*_id_ranges`` value as its id list: ids as they are, ``[first, last]`` as first..last
    (a run of at least 3)."""
    out = []
    for it in items:
        if isinstance(it, list):
            assert len(it) == 2 and it[1] - it[0] >= 2, it
            out.extend(range(it[0], it[1] + 1))
        else:
            assert isinstance(it, int), it
            out.append(it)
    return out


def _map_selection(d, fn):
    """``d`` (a selection) rebuilt with ``fn(key, value)`` -> {key: value} applied to every key
    ending in ``_ids`` or ``_id_ranges`` outside KEEP, at any depth."""
    if not isinstance(d, dict):
        return d
    out = {}
    for k, v in d.items():
        if k in KEEP:
            out[k] = v
        elif k.endswith("_ids") or k.endswith("_id_ranges"):
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
    ranges = json.loads(render_json(report, json_ids="ranges"))
    level = json.loads(render_json(report, json_ids="level"))
    for doc in (full, ranges, level):
        errors = [e.message for e in VALIDATOR.iter_errors(doc)]
        assert not errors, errors[:3]
    assert "json_ids" not in full and ranges["json_ids"] == "ranges" and level["json_ids"] == "level"
    # the streamed text is the same document as the one-piece (pretty) one
    for mode, doc in (("ranges", ranges), ("level", level)):
        assert json.loads("".join(iter_json(report, json_ids=mode))) == doc
        assert json.loads(render_json(report, json_ids=mode, indent=2)) == doc

    # ranges: every list, expanded by this test, is the default list; nothing else differs
    assert "community_ids" in _id_keys(full)
    assert not {k for k in _id_keys(ranges) if not k.endswith("_id_ranges")}
    assert {k.replace("_id_ranges", "_ids") for k in _id_keys(ranges)} == _id_keys(full)
    assert _map_doc(ranges, lambda k, v, lv: {k.replace("_id_ranges", "_ids"): _expand(v)}) == full
    assert expand_id_ranges(ranges) == full

    # level: the --level entry as in the default document, the others without id lists
    want = full["options"]["level"]
    assert _map_doc(level, lambda k, v, lv: {k: v}) == _map_doc(
        full, lambda k, v, lv: {k: v} if lv == want else {}
    )
    assert ("community_ids" in _id_keys(level)) == (want in [r["community_level"] for r in full["levels"]])
    return full, ranges


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
    """--relevant adds what_if's relevant_ids and kept_ids: written as ranges too."""
    full, ranges = _check_forms(
        audit(FIXTURES / "seed-v3", AuditOptions(level=2, tokenizer="estimate", relevant=(5, 20, 21, 22)))
    )
    assert "relevant_id_ranges" in json.dumps(ranges) and "relevant_ids" in json.dumps(full)


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
    full, ranges = _check_forms(
        audit(tmp_path / "i", AuditOptions(level=1, tokenizer="estimate", costs=False))
    )
    # on graphrag-like numbering the runs are far fewer than the ids
    # the ranges form is never longer than the list
    assert len(render_json_of(ranges)) <= len(render_json_of(full))


def render_json_of(doc) -> str:
    return json.dumps(doc, separators=(",", ":"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=-5, max_value=40), max_size=60))
def test_id_ranges_expand_to_the_list(ids):
    items = id_ranges(ids).tolist()
    assert _expand(items) == ids
    assert len(render_json_of(items)) <= len(render_json_of(ids))
    # maximal: a written run is never next to a run or id that continues it
    for i, it in enumerate(items):
        if isinstance(it, list):
            if i and not isinstance(items[i - 1], list):
                assert items[i - 1] != it[0] - 1
            if i + 1 < len(items) and not isinstance(items[i + 1], list):
                assert items[i + 1] != it[1] + 1


def test_schema_refuses_mixed_forms():
    report = audit(FIXTURES / "seed-v3", AuditOptions(level=1, tokenizer="estimate"))
    full = json.loads(render_json(report))
    ranges = json.loads(render_json(report, json_ids="ranges"))
    level = json.loads(render_json(report, json_ids="level"))
    broken = []
    b = copy.deepcopy(ranges)
    b["levels"][0]["selected"]["v2"]["community_ids"] = [1]
    broken.append(b)
    b = copy.deepcopy(ranges)
    b["levels"][0]["selected"]["v2"]["community_id_ranges"] = [[1]]
    broken.append(b)
    b = copy.deepcopy(ranges)
    b["levels"][0]["selected"]["dynamic"]["by_version"]["3.x"]["start_ids"] = [5, 6]
    broken.append(b)
    b = copy.deepcopy(ranges)
    del b["levels"][0]["selected"]["dynamic"]["by_version"]["3.x"]["all_relevant"]["kept_id_ranges"]
    broken.append(b)
    b = copy.deepcopy(full)
    del b["levels"][0]["selected"]["dynamic"]["by_version"]["3.x"]["start_ids"]
    broken.append(b)
    b = copy.deepcopy(full)
    b["json_ids"] = "ranges"
    broken.append(b)
    b = copy.deepcopy(full)
    b["levels"][0]["selected"]["v2"]["community_id_ranges"] = [[5, 7]]
    broken.append(b)
    b = copy.deepcopy(level)
    other = next(r for r in b["levels"] if r["community_level"] != b["options"]["level"])
    other["selected"]["v2"]["community_id_ranges"] = [[5, 7]]
    broken.append(b)
    b = copy.deepcopy(level)
    other = next(r for r in b["levels"] if r["community_level"] != b["options"]["level"])
    other["selected"]["dynamic"]["by_version"]["3.x"]["start_ids"] = [5, 6]
    broken.append(b)
    for i, doc in enumerate(broken):
        assert list(VALIDATOR.iter_errors(doc)), i


def test_cli_json_ids_ranges_and_level():
    seed = FIXTURES / "seed-v3"
    report = audit(seed, AuditOptions(level=1, tokenizer="estimate"))
    for mode in ("ranges", "level"):
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


def test_id_text_is_the_python_join():
    """The arrow-formatted id slices read exactly as ``",".join(map(str, ids))``."""
    import numpy as np

    from graphrag_audit.render.json import _id_text

    rng = np.random.default_rng(7)
    for dtype, lo, hi in ((np.int32, -(2**31), 2**31 - 1), (np.int64, -(2**63), 2**63 - 1)):
        for n in (0, 1, 2, 13, 4096):
            a = np.concatenate(
                [
                    rng.integers(lo, hi, n, dtype=dtype, endpoint=True),
                    np.array([0, -1, lo, hi][: min(n, 4)], dtype=dtype),
                ]
            )
            assert _id_text(a) == ",".join(map(str, a.tolist()))
