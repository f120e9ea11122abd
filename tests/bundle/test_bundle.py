"""graphrag-audit bundle: OUT audits exactly like DIR, holds none of DIR's words, and is written safely."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import regex
from conftest import shared_folders, shared_index

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
FIXTURE_INDEXES = [
    "seed-v01",
    "seed-v05",
    "seed-v1",
    "seed-v3",
    "seed-v3-csv",
    "balanced-v3",
    "small-leiden-v3",
]

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


# the whole corpus of shared indexes takes several minutes more; these cover every generation, and
# GRAPHRAG_AUDIT_BUNDLE_ALL=1 adds the other shared indexes (the larger real ones)
SHARED = [
    "dulce-v0.1-create_final",
    "dulce-v0.3-create_final",
    "verbs-v0.5",
    "real-csekg-v1",
    "verbs-v1",
    "dulce-v1",
    "real-golf-zh-v1",
    "dulce-v2plus",
    "output-pr2160",
    "verbs-v2",
    "real-cleanroom-specs-zh",
    "dulce-v3",
    "verbs-v3",
]
if os.environ.get("GRAPHRAG_AUDIT_BUNDLE_ALL"):
    SHARED += [n for n in shared_folders() if n not in SHARED]


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
    from graphrag_audit.bundle.schema import ID_COLUMNS as STRUCTURAL

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
    from graphrag_audit.bundle.schema import ID_COLUMNS as STRUCTURAL

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
                words.update(
                    w.lower() for w in regex.findall(r"\p{L}{3,}", (k + v).decode("utf-8", "replace"))
                )
    return words


def _allowed(index: Path) -> set[str]:
    from graphrag_audit.bundle.filler import FILLER_WORDS

    allowed = {w.lower() for w in FILLER_WORDS} | {"entity", "community", "title", "document"}
    for p in index.iterdir():  # column names and the schema metadata (the bundle keeps both as they are)
        if p.suffix == ".parquet":
            schema = pq.read_schema(p)
            allowed.update(w.lower() for n in schema.names for w in regex.findall(r"\p{L}{3,}", n))
            for k, v in (schema.metadata or {}).items():
                allowed.update(
                    w.lower() for w in regex.findall(r"\p{L}{3,}", (k + v).decode("utf-8", "replace"))
                )
        elif p.suffix == ".csv":
            allowed.update(
                w.lower() for w in regex.findall(r"\p{L}{3,}", p.open(encoding="utf-8").readline())
            )
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
from graphrag_side import major, need, side_env, side_pythons, versions

RUNNER = Path(__file__).resolve().parents[1] / "bundle_graphrag_runner.py"
#: per graphrag major line, the indexes it reads (the fixtures it can read, and shared ones)
READS = {3: ["seed-v3", "verbs-v2", "dulce-v3", "verbs-v3"], 1: ["seed-v1", "verbs-v1", "dulce-v1"]}


def _side(line: int) -> str | None:
    for p in side_pythons():
        if major(versions(p)[0]) == line:
            return p
    return None


@pytest.mark.side
@pytest.mark.parametrize("line", sorted(READS))
def test_graphrag_selects_and_batches_the_bundle_as_the_index(line, tmp_root):
    python = need(_side(line), reason=f"graphrag {line}.x in GRAPHRAG_VERIFY_PYTHONS")
    pairs = [(_index(n), bundled(_index(n), tmp_root)) for n in READS[line]]
    out = tmp_root / f"graphrag-{line}.json"
    args = [str(p) for pair in pairs for p in pair]
    proc = subprocess.run(
        [python, str(RUNNER), str(out), *args],
        cwd=ROOT,
        env=side_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(out.read_text())
    for src, dst in pairs:
        a, b = got[str(src)], got[str(dst)]
        assert a["verify"]["available"], a["verify"]
        assert b["selections"] == a["selections"], src.name
        assert any(s["ids"] for s in a["selections"].values()), f"{src.name}: graphrag selected nothing"
        # graphrag's own build_community_context: the same batches, map calls and tokens per level
        assert b["verify"]["levels"] == a["verify"]["levels"], src.name
        assert any(lv.get("graphrag_map_calls") for lv in a["verify"]["levels"]), (
            f"{src.name}: no context built"
        )
        tok = "graphrag_tokenizer"  # how tiktoken found its file: said on the first use in a process only
        assert {k: v for k, v in b["verify"]["map_calls"].items() if k != tok} == {
            k: v for k, v in a["verify"]["map_calls"].items() if k != tok
        }, src.name
        assert b["verify"]["agree"] == a["verify"]["agree"], src.name


# ---- the same tables: names, schemas, non-text columns, nulls, list lengths, token counts --------
def _shape(v):
    """A value with every string replaced by its presence: None, '' or 's'."""
    if isinstance(v, str):
        return "s" if v else ""
    if isinstance(v, dict):
        return {k: _shape(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_shape(x) for x in v]
    return v


@pytest.mark.parametrize(
    "name", ["seed-v01", "seed-v1", "seed-v3", "seed-v3-csv", "verbs-v0.5", "dulce-v1", "verbs-v3"]
)
def test_the_bundle_keeps_allowlisted_columns_structure_and_token_counts(name, tmp_root):
    """OUT holds the allowlisted tables and columns of the index (bundle/schema.py), with their arrow
    types, the very same non-text values, nulls, list lengths and token counts, and nothing else."""
    from graphrag_audit.bundle.build import plan_bundle
    from graphrag_audit.bundle.schema import (
        ALLOWLIST,
        ENTITY_NAMES,
        ID_COLUMNS,
        is_embedding_name,
    )
    from graphrag_audit.graphrag.tokens import get_token_counter

    count = get_token_counter("cl100k_base").count
    src = _index(name)
    out = bundled(src, tmp_root)
    allow = ALLOWLIST[plan_bundle(src).generation]
    tables = sorted(
        p.name
        for p in src.iterdir()
        if p.suffix in (".parquet", ".csv")
        and p.stem.removeprefix("create_final_") in allow
        and "covariates" not in p.name
    )
    assert sorted(p.name for p in out.iterdir() if p.suffix in (".parquet", ".csv")) == tables
    checked = 0
    for fname in tables:
        kind = Path(fname).stem.removeprefix("create_final_")
        a_cols, b_cols = dict(_string_columns(src / fname)), dict(_string_columns(out / fname))
        want_cols = [c for c in a_cols if c in allow[kind] and not is_embedding_name(c)]
        assert list(b_cols) == want_cols, fname
        if fname.endswith(".parquet"):
            a, b = pq.read_table(src / fname), pq.read_table(out / fname)
            assert not b.schema.metadata or set(b.schema.metadata) == {b"ARROW:schema"}
            for f in b.schema:
                assert f.type == a.schema.field(f.name).type, (fname, f.name)
                if f.name in a_cols and any(a_cols[f.name]) and f.name not in ID_COLUMNS:
                    assert _shape(b.column(f.name).to_pylist()) == _shape(a.column(f.name).to_pylist()), (
                        f.name
                    )
                elif (
                    f.name in ID_COLUMNS
                    and pa.types.is_string(f.type) is False
                    and not pa.types.is_list(f.type)
                ):
                    assert b.column(f.name).equals(a.column(f.name)), (fname, f.name)  # numbers: the same
        for col in b_cols:
            if (kind, col) in ENTITY_NAMES or col in ID_COLUMNS or col == "title" and kind == "communities":
                continue  # pseudonyms
            for x, y in zip(a_cols[col], b_cols[col]):
                assert count(y) == count(x), (fname, col, x[:80], y[:80])
                assert count("|" + y + "|") == count("|" + x + "|"), (fname, col)
                checked += 1
    assert checked


def test_keep_titles_keeps_titles_only(tmp_root):
    src = FIXTURES / "seed-v3"
    out = bundled(src, tmp_root, keep_titles=True)
    for fname, col in (
        ("entities.parquet", "title"),
        ("community_reports.parquet", "title"),
        ("communities.parquet", "title"),
    ):
        assert pq.read_table(out / fname).column(col).equals(pq.read_table(src / fname).column(col))
    a, b = pq.read_table(src / "community_reports.parquet"), pq.read_table(out / "community_reports.parquet")
    assert not b.column("full_content").equals(a.column("full_content"))
    plain = bundled(src, tmp_root)
    names = pq.read_table(plain / "entities.parquet").column("title").to_pylist()
    assert all(regex.fullmatch(r"Entity \d+", n) for n in names if n)
    assert len(set(names)) == len(set(pq.read_table(src / "entities.parquet").column("title").to_pylist()))


def _with_extras(tmp_path: Path) -> Path:
    import shutil

    d = tmp_path / "index"
    shutil.copytree(FIXTURES / "seed-v3", d)
    pq.write_table(
        pa.table({"id": ["c1"], "description": ["Secret claim about Zanzibarian pumpkins"]}),
        d / "covariates.parquet",
    )
    (d / "lancedb").mkdir()
    (d / "lancedb" / "x.lance").write_text("Zanzibarian pumpkins")
    (d / "stats.json").write_text('{"note": "Zanzibarian"}')
    return d


def test_left_out_unless_include_all(tmp_path):
    from graphrag_audit.bundle.build import (
        FOLDER,
        NOT_READ,
        OPTIONAL,
        OTHER_FILE,
        plan_bundle,
        write_bundle,
    )

    d = _with_extras(tmp_path)
    plan = plan_bundle(d)
    assert dict(plan.left_out) == {OPTIONAL: 1, FOLDER: 1, OTHER_FILE: 1}
    write_bundle(plan, tmp_path / "a")
    assert not (tmp_path / "a" / "covariates.parquet").exists() and not (tmp_path / "a" / "lancedb").exists()
    plan = plan_bundle(d, include_all=True)
    assert dict(plan.left_out) == {FOLDER: 1, OTHER_FILE: 1} and NOT_READ not in plan.left_out
    write_bundle(plan, tmp_path / "b")
    got = pq.read_table(tmp_path / "b" / "covariates.parquet").column("description").to_pylist()[0]
    assert "Zanzibarian" not in got and "pumpkins" not in got and got


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "bundle", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_cli_writes_the_bundle_its_audit_and_readme(tmp_path):
    out = tmp_path / "out"
    proc = _cli("fixtures/seed-v3-csv", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    data = json.loads((out / "audit.json").read_text())
    assert data["index"]["path"] == str(out)
    assert "docs/bug-reports.md" in (out / "audit.md").read_text()
    readme = (out / "README.md").read_text()
    assert "community_reports.csv" in readme and "full_content" in readme
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # the temporary directory is gone


def test_cli_size_limit_and_refusals_are_one_line_exit_2(tmp_path):
    proc = _cli("fixtures/seed-v3", "-o", str(tmp_path / "o1"), "--max-size", "1K")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--max-size" in proc.stderr, proc.stderr
    assert not (tmp_path / "o1").exists()
    import shutil

    d = tmp_path / "index"
    shutil.copytree(FIXTURES / "seed-v3", d)
    proc = _cli(str(d), "-o", str(d / "inside"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert not (d / "inside").exists()
    assert sorted(p.name for p in d.iterdir()) == sorted(p.name for p in (FIXTURES / "seed-v3").iterdir())
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    proc = _cli("fixtures/seed-v3", "-o", str(tmp_path / "full"))
    assert proc.returncode == 2 and "not empty" in proc.stderr


def test_chunks_split_where_every_pretoken_ends():
    """The filler caches per chunk (text split before a space that sits between two non-space
    characters): the chunks' pre-tokens are exactly the text's, on random text made of the
    characters that decide pre-token boundaries (spaces, tabs, newlines, no-break and ideographic
    spaces, contractions, digits, punctuation, letters of several scripts)."""
    import random

    from graphrag_audit.bundle.filler import _CHUNK, PRETOKEN

    alphabet = list("ab Z1 2'\t\n\r .,!|  \u00a0\u3000é中") + ["'s", "'ll", " '", "  ", "'D"]
    rnd = random.Random(7)
    for _ in range(20000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 30)))
        whole = [m.group(0) for m in PRETOKEN.finditer(text)]
        chunked = [m.group(0) for c in _CHUNK.split(text) for m in PRETOKEN.finditer(c)]
        assert chunked == whole, repr(text)


def _by_value(v, fn):
    if v is None:
        return None
    if isinstance(v, str):
        return fn(v) if v else v
    if isinstance(v, dict):
        return {k: _by_value(x, fn) for k, x in v.items()}
    if isinstance(v, list):
        return [_by_value(x, fn) for x in v]
    return v


def test_filler_keeps_no_symbol_tag_or_format_character():
    """Text in circled letters, Unicode tag characters (U+E0000 block), emoji, bidi controls and
    digits of other scripts never passes the filler unchanged: the filler holds none of those
    characters (only ASCII, Unicode punctuation, separators and its own zeros), and keeps the
    text's cl100k count alone and between '|'."""
    import random
    import unicodedata

    from test_bundle_leaks import _numerals

    from graphrag_audit.bundle.filler import Filler
    from graphrag_audit.graphrag.tokens import get_token_counter

    NUMERALS = _numerals()
    count = get_token_counter("cl100k_base").count
    tags = "".join(chr(0xE0000 + ord(c)) for c in "SECRET PLAN")
    circled = "ⓈⒺⒸⓇⒺⓉ ⓅⓁⒶⓃ"
    pieces = [
        circled,
        tags,
        "Ⓐbc",
        "😀😀",
        "\u202eevil\u202c",
        "①②③",
        "٣٤٥٦",
        "™.",
        " ©",
        "x",
        " word",
        ".",
        "\n",
        "|",
        "'s",
        "中文",
        "\U0001d400\U0001d401",
    ]
    rnd = random.Random(9)
    texts = [circled, tags, f"{circled} {tags}", f"# {circled}\n\n{tags} end"]
    texts += ["".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 8))) for _ in range(400)]
    filler = Filler()
    want = [filler.text(t) for t in texts]
    for t, f in zip(texts, want):
        bad = [
            ch
            for ch in f
            if not (ch.isascii() or ch in NUMERALS or unicodedata.category(ch)[0] in "PZ")
            and not unicodedata.category(ch).startswith("L")
        ]
        assert not bad, (t, f)
        assert "ⓈⒺⒸⓇⒺⓉ" not in f and tags not in f and "Ⓐ" not in f
        assert count(f) == count(t), repr(t)
        assert count("|" + f + "|") == count("|" + t + "|") or "|" in t or t.startswith("'"), repr(t)
