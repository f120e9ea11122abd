"""graphrag-audit bundle: OUT audits exactly like DIR, holds none of DIR's words, and is written safely."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import regex

from conftest import shared_folders, shared_index

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
FIXTURE_INDEXES = ["seed-v01", "seed-v05", "seed-v1", "seed-v3", "seed-v3-csv", "balanced-v3", "small-leiden-v3"]

_BUILT: dict[str, Path] = {}


def bundled(src: Path, tmp_root: Path, **kw) -> Path:
    """Bundle ``src`` once per test session (library call, no subprocess)."""
    from graphrag_audit.bundle.build import plan_bundle, write_bundle

    key = f"{src}|{sorted(kw.items())}"
    if key not in _BUILT:
        out = tmp_root / f"b{len(_BUILT)}"
        write_bundle(plan_bundle(src, include_all=kw.pop("include_all", False)), out, **kw)
        _BUILT[key] = out
    return _BUILT[key]


@pytest.fixture(scope="module")
def tmp_root(tmp_path_factory):
    return tmp_path_factory.mktemp("bundles")


_ASIDE = {"path", "output_dir", "title", "titles", "timings", "name", "examples"}  # examples: entity names


def _strip(x):
    """The levels JSON with paths and titles set aside."""
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in _ASIDE}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    if isinstance(x, str) and "/" in x:
        return "(text with a path)"
    return x


def levels_json(index: Path) -> dict:
    from graphrag_audit.analysis.audit import audit
    from graphrag_audit.render.json import render_json

    return _strip(json.loads(render_json(audit(index))))


# the whole corpus of shared indexes would take several minutes; these cover every generation
SHARED = ["dulce-v0.1-create_final", "dulce-v0.3-create_final", "verbs-v0.5", "real-csekg-v1", "verbs-v1",
          "dulce-v1", "real-golf-zh-v1", "dulce-v2plus", "output-pr2160", "verbs-v2", "real-cleanroom-specs-zh",
          "dulce-v3", "verbs-v3"]


def _index(name: str) -> Path:
    if name in FIXTURE_INDEXES:
        return FIXTURES / name
    return shared_index(name)


@pytest.mark.parametrize("name", FIXTURE_INDEXES + SHARED)
def test_levels_json_of_the_bundle_equals_the_index(name, tmp_root):
    src = _index(name)
    out = bundled(src, tmp_root)
    want, got = levels_json(src), levels_json(out)
    assert got == want
    assert want["levels"], "the comparison covers at least one level"


def _text_tokens(index: Path) -> set[str]:
    """Words of three or more letters in the index's free-text columns (every string column
    except ids and memberships), lower-cased."""
    from graphrag_audit.bundle.anonymise import STRUCTURAL

    words: set[str] = set()
    for p in sorted(index.iterdir()):
        for col, values in _string_columns(p):
            if col in STRUCTURAL:
                continue
            for v in values:
                words.update(w.lower() for w in regex.findall(r"\p{L}{3,}", v))
    return words


def _string_columns(p: Path):
    if p.suffix == ".parquet":
        t = pq.read_table(p)
        for f in t.schema:
            vals: list[str] = []
            _collect(t.column(f.name).to_pylist(), vals)
            yield f.name, vals
    elif p.suffix == ".csv":
        import csv
        rows = list(csv.reader(p.open(encoding="utf-8", newline="")))
        for j, name in enumerate(rows[0] if rows else []):
            yield name, [r[j] for r in rows[1:] if j < len(r)]


def _collect(v, out):
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict):
        for x in v.values():
            _collect(x, out)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _collect(x, out)


def _bundle_tokens(out: Path) -> set[str]:
    words: set[str] = set()
    from graphrag_audit.bundle.anonymise import STRUCTURAL

    for p in sorted(out.iterdir()):
        if p.suffix not in (".parquet", ".csv"):
            continue
        for col, values in _string_columns(p):
            if col in STRUCTURAL:  # ids: hexadecimal, checked equal to the index's below
                continue
            for v in values:
                words.update(w.lower() for w in regex.findall(r"\p{L}{3,}", v))
        if p.suffix == ".parquet":
            meta = pq.read_schema(p).metadata or {}
            for k, v in meta.items():
                words.update(w.lower() for w in regex.findall(r"\p{L}{3,}", (k + v).decode("utf-8", "replace")))
    return words


def _allowed(index: Path) -> set[str]:
    from graphrag_audit.bundle.filler import FILLER_WORDS

    allowed = {w.lower() for w in FILLER_WORDS} | {"entity", "community", "title", "document"}
    for p in index.iterdir():  # column names (and the pandas metadata that lists them)
        if p.suffix == ".parquet":
            allowed.update(w.lower() for n in pq.read_schema(p).names for w in regex.findall(r"\p{L}{3,}", n))
    allowed |= {"pandas", "index", "columns", "column", "indexes", "field", "kind", "range", "start", "stop",
                "step", "metadata", "numpy", "type", "object", "unicode", "bytes", "int", "float", "list",
                "string", "bool", "version", "creator", "library", "datetime", "large", "element", "item", "none",
                "null", "pyarrow", "value", "values", "struct", "double", "attributes", "timestamp"}
    # filler first pieces: a capital letter and a filler word run together (``Mand``)
    allowed |= {chr(x).lower() + w for x in range(65, 91) for w in FILLER_WORDS}
    return allowed


@pytest.mark.parametrize("name", FIXTURE_INDEXES + SHARED)
def test_no_word_of_the_index_is_in_the_bundle(name, tmp_root):
    src = _index(name)
    out = bundled(src, tmp_root)
    leaked = (_text_tokens(src) & _bundle_tokens(out)) - _allowed(src)
    assert not leaked, sorted(leaked)[:20]


# ---- the real graphrag reads the bundle as it reads the index ----------------------------------
from graphrag_side import major, need, side_env, side_pythons, versions  # noqa: E402

RUNNER = Path(__file__).with_name("bundle_graphrag_runner.py")
#: per graphrag major line, the indexes it reads (the fixtures it can read, and shared ones)
READS = {3: ["seed-v3", "small-leiden-v3", "verbs-v2", "dulce-v3", "verbs-v3"],
         1: ["seed-v1", "verbs-v1", "dulce-v1"]}


def _side(line: int) -> str | None:
    for p in side_pythons():
        if major(versions(p)[0]) == line:
            return p
    return None


@pytest.mark.parametrize("line", sorted(READS))
def test_graphrag_selects_and_batches_the_bundle_as_the_index(line, tmp_root):
    python = need(_side(line), reason=f"graphrag {line}.x in GRAPHRAG_VERIFY_PYTHONS")
    pairs = [(_index(n), bundled(_index(n), tmp_root)) for n in READS[line]]
    out = tmp_root / f"graphrag-{line}.json"
    args = [str(p) for pair in pairs for p in pair]
    proc = subprocess.run([python, str(RUNNER), str(out), *args], cwd=ROOT, env=side_env(), capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(out.read_text())
    for src, dst in pairs:
        a, b = got[str(src)], got[str(dst)]
        assert a["verify"]["available"], a["verify"]
        assert b["selections"] == a["selections"], src.name
        assert any(s["ids"] for s in a["selections"].values()), f"{src.name}: graphrag selected nothing"
        # graphrag's own build_community_context: the same batches, map calls and tokens per level
        assert b["verify"]["levels"] == a["verify"]["levels"], src.name
        assert b["verify"]["map_calls"] == a["verify"]["map_calls"], src.name
        assert b["verify"]["agree"] == a["verify"]["agree"], src.name
