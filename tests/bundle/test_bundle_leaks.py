"""The bundle leaks nothing: no distinctive piece of any text of the index is anywhere in OUT.

**The rule.** Every text of the index is collected: every string value of every column of every
table (at any depth of lists, structs, maps and dictionaries; binary values decoded as UTF-8), every
column and struct field name, every key and value of schema, field and parquet key-value metadata
(pandas metadata included), every file and folder name and the bytes of every other file. Its
*distinctive pieces* are:

* every ASCII word (a run of characters that are neither whitespace nor punctuation) of 6 or more
  characters, lower-cased, that is not hexadecimal (ids: UUIDs and numbers are kept by design);
* every 4-character window of a non-ASCII word (CJK text, circled letters, tag characters, ...),
  lower-cased, unless the window is all ASCII or the filler's own zero digits;
* every three consecutive ASCII words of letters (a phrase made of short words), lower-cased, when
  one of them is a word of 3 or more letters that is neither a filler word nor a word of the tool's
  vocabulary (the filler keeps contractions such as ``'s``, and the audit's own sentences are
  made of the tool's words; a hexadecimal or non-ASCII word breaks the phrase).

A piece is not distinctive when it is in the tool's fixed vocabulary: a piece of the source of
``graphrag_audit`` (graphrag's column and table names, the README's and the audit's wording) or of
a parquet file written by pyarrow (its own footer). OUT is read the same way, every file, every
value and name and metadata, plus the raw bytes of every file decoded as UTF-8 (so the parquet
footers are covered twice). The test fails when a distinctive piece of the index is in OUT.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import regex
from conftest import FIXTURES, ROOT, SHARED_INDEXES, real_index_params

pytestmark = pytest.mark.hostile  # a heavy tier: pytest -m hostile
_RUN = regex.compile(r"[^\s\p{P}]+")
_HEX = regex.compile(r"[0-9a-fA-F]+")
_WORD = regex.compile(r"[A-Za-z]+")


#: the file stems graphrag writes (without ``create_final_``)
GRAPHRAG_TABLES = (
    "communities",
    "community_reports",
    "entities",
    "nodes",
    "relationships",
    "text_units",
    "covariates",
    "documents",
)


def _numerals() -> str:
    """The filler's own zero digits (ASCII only before it had them)."""
    try:
        from graphrag_audit.bundle.filler import NUMERALS
    except ImportError:
        return "0"
    return NUMERALS


def pieces(text: str) -> set[str]:
    """The distinctive pieces of ``text`` (see the module docstring)."""
    out: set[str] = set()
    zeros = _numerals()
    for m in _RUN.finditer(text):
        w = m.group(0).lower()
        if w.isascii():
            if len(w) >= 6 and not _HEX.fullmatch(w):
                out.add(w)
        elif len(w) >= 4:
            for i in range(len(w) - 3):
                p = w[i : i + 4]
                if not all(ch.isascii() or ch in zeros for ch in p):
                    out.add(p)
    filler = _filler_words()
    tool = _tool_words()
    run: list[str] = []  # consecutive ASCII words (a hexadecimal or non-ASCII run breaks it)
    for m in _RUN.finditer(text):
        w = m.group(0).lower()
        if not w.isascii() or _HEX.fullmatch(w) or not _WORD.fullmatch(w):
            run = []
            continue
        run.append(w)
        if len(run) >= 3 and any(x not in filler and len(x) >= 3 and x not in tool for x in run[-3:]):
            out.add(" ".join(run[-3:]))
    return out


@functools.cache
def _filler_words() -> frozenset[str]:
    from graphrag_audit.bundle.filler import FILLER_WORDS

    caps = {chr(x).lower() + w for x in range(65, 91) for w in FILLER_WORDS}
    return frozenset(
        {w.lower() for w in FILLER_WORDS} | caps | {"a", "i", "entity", "community", "title", "id"}
    )


@functools.cache
def _tool_words() -> frozenset[str]:
    """Every word of letters in the source of ``graphrag_audit`` and graphrag's table names."""
    words: set[str] = set()
    for p in (ROOT / "graphrag_audit").rglob("*.py"):
        words.update(w.lower() for w in _WORD.findall(p.read_text(encoding="utf-8")))
    for kind in GRAPHRAG_TABLES:
        words.update(_WORD.findall(kind.replace("_", " ")))
    return frozenset(words) | {"create", "final"}


@functools.cache
def vocabulary() -> frozenset[str]:
    """The tool's fixed vocabulary: pieces of its source and of pyarrow's own parquet bytes."""
    words: set[str] = set()
    for p in (ROOT / "graphrag_audit").rglob("*.py"):
        words |= pieces(p.read_text(encoding="utf-8"))
    for kind in GRAPHRAG_TABLES:  # graphrag's own table file names
        for name in (kind, "create_final_" + kind):
            words |= pieces(name + ".parquet") | pieces(name + ".csv")
    buf = io.BytesIO()
    pq.write_table(pa.table({"x": pa.array([1])}), buf, compression="snappy")
    words |= pieces(buf.getvalue().decode("utf-8", "ignore"))
    return frozenset(words)


# ---- reading every text of a folder ------------------------------------------------------------
def _values(v, out: list[str]) -> None:
    if v is None:
        return
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, (bytes, bytearray)):
        out.append(bytes(v).decode("utf-8", "replace"))
    elif isinstance(v, dict):
        for k, x in v.items():
            out.append(str(k))
            _values(x, out)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _values(x, out)
    else:
        out.append(str(v))


def _type_names(t: pa.DataType, out: list[str]) -> None:
    for i in range(t.num_fields):
        f = t.field(i)
        out.append(f.name)
        for k, v in (f.metadata or {}).items():
            out += [k.decode("utf-8", "replace"), v.decode("utf-8", "replace")]
        _type_names(f.type, out)
    if pa.types.is_dictionary(t):
        _type_names(t.value_type, out)


def texts_of(folder: Path, *, raw: bool) -> list[str]:
    """Every text of every file under ``folder`` (see the module docstring); ``raw``: also every
    file's bytes decoded as UTF-8."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        out += dirnames + filenames
        for name in filenames:
            p = Path(dirpath) / name
            data = p.read_bytes()
            if raw or not (name.endswith(".parquet") or name.endswith(".csv")):
                out.append(data.decode("utf-8", "ignore"))
            if name.endswith(".csv"):  # each cell on its own (a header is a list of names, not a phrase)
                import csv

                out += [
                    cell
                    for row in csv.reader(io.StringIO(data.decode("utf-8", "replace"), newline=""))
                    for cell in row
                ]
            elif name.endswith(".parquet"):
                try:
                    t = pq.read_table(p)
                    meta = pq.read_metadata(p).metadata or {}
                except Exception:  # noqa: BLE001 - not a parquet file: its bytes are in ``out``
                    out.append(data.decode("utf-8", "ignore"))
                    continue
                for k, v in list((t.schema.metadata or {}).items()) + list(meta.items()):
                    if (
                        k == b"ARROW:schema"
                    ):  # the schema itself, base64: its names and metadata are read below
                        continue
                    out += [k.decode("utf-8", "replace"), v.decode("utf-8", "replace")]
                for f in t.schema:
                    out.append(f.name)
                    for k, v in (f.metadata or {}).items():
                        out += [k.decode("utf-8", "replace"), v.decode("utf-8", "replace")]
                    _type_names(f.type, out)
                    _values(t.column(f.name).to_pylist(), out)
    return out


def leaks(index: Path, out: Path) -> list[str]:
    """The distinctive pieces of ``index`` found in ``out``."""
    vocab = vocabulary()
    want: set[str] = set()
    for text in texts_of(index, raw=False):
        want |= pieces(text)
    want -= vocab
    got: set[str] = set()
    for text in texts_of(out, raw=True):
        got |= pieces(text)
    return sorted(want & got)


def bundle(src: Path, out: Path, **kw) -> Path:
    from graphrag_audit.bundle.build import plan_bundle, write_bundle

    write_bundle(plan_bundle(src, include_all=kw.pop("include_all", False)), out, **kw)
    return out


def cli_bundle(src: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "bundle", str(src), "-o", str(out), *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


# ---- every shared index --------------------------------------------------------------------------
@pytest.mark.parametrize("name", real_index_params())
def test_no_piece_of_a_shared_index_is_in_its_bundle(name, tmp_path):
    src = SHARED_INDEXES / name
    t0 = time.perf_counter()
    proc = cli_bundle(src, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    found = leaks(src, tmp_path / "out")
    assert not found, found[:20]
    print(f"{name}: {time.perf_counter() - t0:.1f}s")


# ---- crafted indexes: every arrow type, every structural column, metadata, hostile names ---------
MARK = "ZORBLAX INDUSTRIES"
CIRCLED = "ⓏⓄⓇⒷⓁⒶⓍ ⓆⓊⓊⓍ"
TAGS = "".join(chr(0xE0000 + ord(c)) for c in "HIDDEN PAYLOAD")


def _copy(name: str, tmp: Path) -> Path:
    d = tmp / "index"
    shutil.copytree(FIXTURES / name, d)
    return d


def _rewrite(path: Path, fn) -> None:
    t = pq.read_table(path)
    pq.write_table(fn(t), path)


def _set(t: pa.Table, name: str, arr) -> pa.Table:
    if name in t.schema.names:
        return t.set_column(t.schema.get_field_index(name), name, arr)
    return t.append_column(name, arr)


def _texts(n: int, word: str) -> list[str]:
    return [f"{MARK} {word} number {i} QUILLIBRANT" for i in range(n)]


def craft_types(tmp: Path) -> Path:
    """Text in every arrow type, in columns graphrag reads and in extra columns."""
    d = _copy("seed-v3", tmp)

    def ents(t):
        n = t.num_rows
        t = _set(t, "title", pa.array([f"{MARK} {i} TITLEVIEW" for i in range(n)], type=pa.string_view()))
        t = _set(t, "description", pa.array(_texts(n, "DESCVIEW"), type=pa.string_view()))
        t = _set(t, "type", pa.array(["ORGANIZATIONTYPE"] * n).dictionary_encode())
        return t

    def reps(t):
        n = t.num_rows
        t = _set(t, "title", pa.array([s.encode() for s in _texts(n, "BINARYTITLE")], type=pa.binary()))
        t = _set(
            t,
            "summary",
            pa.array(_texts(n, "LARGEBINARYSUMMARY"), type=pa.large_string()).cast(pa.large_binary()),
        )
        t = _set(
            t, "notes", pa.array([s.encode() for s in _texts(n, "EXTRALARGEBINARY")], type=pa.large_binary())
        )
        t = _set(
            t,
            "tags",
            pa.array([[s.encode(), b"LISTBINARYTAG"] for s in _texts(n, "x")], type=pa.list_(pa.binary())),
        )
        t = _set(
            t, "view", pa.array([[s] for s in _texts(n, "LISTVIEWTEXT")], type=pa.list_view(pa.string()))
        )
        t = _set(
            t,
            "attrs",
            pa.array([[("MAPKEYSECRET", "MAPVALUESECRET")]] * n, type=pa.map_(pa.string(), pa.string())),
        )
        t = _set(t, "fixed", pa.array([b"FIXEDBINARYX"] * n, type=pa.binary(12)))
        # (pyarrow cannot write a string_view nested in a list to parquet: string_view is top-level above)
        findings = [[{"explanation": f"{CIRCLED} {TAGS} EXPLANATIONVIEW", "summary": b"FINDINGBINARY"}]] * n
        t = _set(
            t,
            "findings",
            pa.array(
                findings,
                type=pa.list_(
                    pa.struct([("explanation", pa.large_string()), ("summary", pa.large_binary())])
                ),
            ),
        )
        return t

    _rewrite(d / "entities.parquet", ents)
    _rewrite(d / "community_reports.parquet", reps)
    return d


def craft_embeddings(tmp: Path) -> Path:
    """Embeddings beside the text (0.x indexes carry ``description_embedding``) and a table of them."""
    d = _copy("seed-v3", tmp)

    def ents(t):
        n = t.num_rows
        t = _set(
            t,
            "description_embedding",
            pa.array([[0.123456789, 0.987654321]] * n, type=pa.list_(pa.float32())),
        )
        return _set(t, "vector", pa.array([[0.31415926]] * n, type=pa.list_(pa.float64(), 1)))

    _rewrite(d / "entities.parquet", ents)
    pq.write_table(
        pa.table({"id": ["EMBEDDINGTABLEID"], "vector": [[0.5, 0.25]], "text": [f"{MARK} VECTORTEXT"]}),
        d / "embeddings.entity.description.parquet",
    )
    return d


def craft_structural(tmp: Path) -> Path:
    """Text in columns that look structural: ids that are names, file names, a pandas string index,
    period, source_id, short_id, a string human_readable_id, raw_community, creation_date, struct
    field names of user metadata, schema and field metadata."""
    d = _copy("seed-v3", tmp)
    ents = pq.read_table(d / "entities.parquet")
    old_ids = ents.column("id").to_pylist()
    names = {old: f"ENTITYNAMEID {MARK} {i}" for i, old in enumerate(old_ids)}

    def swap(v):
        if isinstance(v, list):
            return [names.get(x, x) for x in v]
        return names.get(v, v)

    def ents_fn(t):
        t = _set(t, "id", pa.array([names[x] for x in old_ids]))
        t = _set(t, "human_readable_id", pa.array([f"HUMANREADABLE{i}X" for i in range(t.num_rows)]))
        t = _set(t, "short_id", pa.array(["SHORTIDTEXT"] * t.num_rows))
        t = _set(t, "source_id", pa.array(["SOURCEIDTEXT"] * t.num_rows))
        md = {b"marker": b"SCHEMAMETADATAMARKER"}
        t = t.replace_schema_metadata(md)
        f = t.schema.field("description").with_metadata({b"fieldmarker": b"FIELDMETADATAMARKER"})
        return t.cast(t.schema.set(t.schema.get_field_index("description"), f))

    def comms_fn(t):
        t = _set(
            t,
            "entity_ids",
            pa.array([swap(v) for v in t.column("entity_ids").to_pylist()], type=pa.list_(pa.string())),
        )
        t = _set(t, "period", pa.array(["PERIODTEXTLEAK"] * t.num_rows))
        t = _set(t, "raw_community", pa.array(["RAWCOMMUNITYTEXT"] * t.num_rows))
        df = t.to_pandas()
        df.index = [f"PANDASINDEX{i}" for i in range(len(df))]
        return pa.Table.from_pandas(df)

    _rewrite(d / "entities.parquet", ents_fn)
    _rewrite(d / "communities.parquet", comms_fn)
    if (d / "text_units.parquet").exists():
        _rewrite(
            d / "text_units.parquet",
            lambda t: _set(
                _set(
                    t,
                    "entity_ids",
                    pa.array(
                        [swap(v) for v in t.column("entity_ids").to_pylist()], type=pa.list_(pa.string())
                    ),
                ),
                "document_ids",
                pa.array([["secret_board_minutes.txt"]] * t.num_rows),
            ),
        )
    meta = pa.array([{"Album": "ALBUMNAMESECRET", "Artist": "ARTISTNAMESECRET", "Titel": "TITELSECRET"}])
    pq.write_table(
        pa.table(
            {
                "id": ["secret_board_minutes.txt"],
                "title": ["secret_board_minutes.txt"],
                "text": [f"{MARK} DOCUMENTTEXT"],
                "metadata": meta,
                "creation_date": ["CREATIONDATETEXT"],
            }
        ),
        d / "documents.parquet",
    )
    return d


def craft_filler(tmp: Path) -> Path:
    """Report text in circled letters and Unicode tag characters."""
    d = _copy("seed-v3", tmp)

    def reps(t):
        n = t.num_rows
        t = _set(t, "full_content", pa.array([f"# {CIRCLED}\n\n{TAGS} {CIRCLED}{i}" for i in range(n)]))
        return _set(t, "summary", pa.array([f"{CIRCLED} {TAGS}"] * n))

    _rewrite(d / "community_reports.parquet", reps)
    return d


HOSTILE_NAMES = [
    "evil\n# HEADINGNAME <img src=x onerror=alert(1)>.json",
    "[LINKNAME](javascript:alert(1)).txt",
    "\x1b]8;;javascript:alert(1)\x07OSCNAME\x1b]8;;\x07.txt",
    "\u202eBIDINAME.txt",
    "`CODESPANNAME`.parquet.bak",
]


def craft_names(tmp: Path) -> Path:
    """Files and folders whose names would break out of Markdown, HTML or the terminal."""
    d = _copy("seed-v3", tmp)
    for n in HOSTILE_NAMES:
        (d / n).write_text(f'{{"note": "{MARK} OTHERFILETEXT"}}')
    (d / "lancedb").mkdir()
    (d / "lancedb" / "VECTORSTORENAME.lance").write_text(f"{MARK} LANCETEXT")
    (d / "FOLDERNAME\n## injected").mkdir()
    pq.write_table(pa.table({"id": ["x"], "text": [f"{MARK} STRAYTABLE"]}), d / "STRAYTABLENAME.parquet")
    return d


def craft_v1(tmp: Path) -> Path:
    """graphrag 1.x tables (create_final_*) with names dictionary-encoded and ids that are names."""
    d = _copy("seed-v1", tmp)

    def nodes(t):
        titles = [f"{MARK} NODETITLE {v}" for v in t.column("title").to_pylist()]
        return _set(t, "title", pa.array(titles).dictionary_encode())

    def ents(t):
        n = t.num_rows
        titles = [f"{MARK} NODETITLE {v}" for v in t.column("title").to_pylist()]
        t = _set(t, "title", pa.array(titles, type=pa.large_string()))
        return _set(t, "description", pa.array(_texts(n, "LEGACYDESC")).dictionary_encode())

    _rewrite(d / "create_final_nodes.parquet", nodes)
    _rewrite(d / "create_final_entities.parquet", ents)
    return d


def craft_csv(tmp: Path) -> Path:
    """graphrag 3 CSV tables: text in an id list and in an extra column."""
    d = _copy("seed-v3-csv", tmp)
    p = d / "communities.csv"
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    df["period"] = "CSVPERIODTEXT"
    df["entity_ids"] = [f"['CSVENTITYID {MARK}', 'ANOTHERCSVID']" for _ in range(len(df))]
    df["extra_notes"] = f"{MARK} CSVEXTRA"
    df.to_csv(p, index=False)
    return d


CRAFTED = {
    "types": craft_types,
    "embeddings": craft_embeddings,
    "structural": craft_structural,
    "filler": craft_filler,
    "names": craft_names,
    "v1": craft_v1,
    "csv": craft_csv,
}


@pytest.mark.parametrize("include_all", [False, True], ids=["default", "include-all"])
@pytest.mark.parametrize("kind", sorted(CRAFTED))
def test_no_piece_of_a_crafted_index_is_in_its_bundle(kind, include_all, tmp_path):
    """Every arrow type, structural column, metadata and name of a crafted index: none of its
    distinctive pieces in OUT, with and without --include-all (which adds columns and tables with
    their values rebuilt; their names are the user's own and are allowed to stay)."""
    src = CRAFTED[kind](tmp_path)
    out = bundle(src, tmp_path / "out", include_all=include_all)
    found = leaks(src, out)
    if include_all:  # the names --include-all keeps (and warns about): column and file names only
        kept = set()
        for p in out.iterdir():
            kept |= pieces(p.name)
            if p.suffix == ".parquet":
                kept |= set().union(*(pieces(n) for n in pq.read_schema(p).names))
            elif p.suffix == ".csv":
                kept |= pieces(p.read_text(encoding="utf-8").split("\n", 1)[0])
        found = [f for f in found if f not in kept]
    assert not found, found[:20]


def test_the_cli_bundle_of_crafted_indexes_leaks_nothing_readme_and_audit_included(tmp_path):
    """The CLI's bundle (README.md, audit.json, audit.md included) of the crafted indexes the audit
    can read leaks nothing, and the README names nothing it read from the index."""
    for kind in ("types", "filler", "names", "v1", "csv", "embeddings"):
        src = CRAFTED[kind](tmp_path / kind)
        out = tmp_path / kind / "out"
        proc = cli_bundle(src, out)
        assert proc.returncode == 0, (kind, proc.stderr)
        found = leaks(src, out)
        assert not found, (kind, found[:20])
        readme = (out / "README.md").read_text(encoding="utf-8")
        for bad in (
            "HEADINGNAME",
            "LINKNAME",
            "OSCNAME",
            "BIDINAME",
            "CODESPANNAME",
            "FOLDERNAME",
            "lancedb",
            "STRAYTABLENAME",
            "embeddings.entity",
            "javascript:",
            "<img",
            "\x1b",
            "\u202e",
        ):
            assert bad not in readme, (kind, bad)


def test_include_all_says_which_on_stderr(tmp_path):
    src = craft_types(tmp_path)
    proc = cli_bundle(src, tmp_path / "out", "--include-all")
    assert proc.returncode == 0, proc.stderr
    assert "warning" in proc.stderr and "'community_reports.parquet: notes'" in proc.stderr, proc.stderr
    assert proc.stdout == ""
    t = pq.read_table(tmp_path / "out" / "community_reports.parquet")
    assert "notes" in t.schema.names and "description_embedding" not in t.schema.names
    quiet = cli_bundle(src, tmp_path / "out2")
    assert "warning" not in quiet.stderr
    assert "notes" not in pq.read_schema(tmp_path / "out2" / "community_reports.parquet").names


def test_ids_that_are_names_get_the_same_pseudonym_in_every_table(tmp_path):
    src = craft_structural(tmp_path)
    out = bundle(src, tmp_path / "out")
    ents = pq.read_table(out / "entities.parquet").column("id").to_pylist()
    assert all(regex.fullmatch(r"id-\d+", e) for e in ents), ents[:3]
    members = {
        x for v in pq.read_table(out / "communities.parquet").column("entity_ids").to_pylist() for x in v
    }
    assert members and members <= set(ents)
    src_members = {
        x for v in pq.read_table(src / "communities.parquet").column("entity_ids").to_pylist() for x in v
    }
    assert len(members) == len(src_members)
    tu = {x for v in pq.read_table(out / "text_units.parquet").column("entity_ids").to_pylist() for x in v}
    assert tu <= set(ents)


def test_no_schema_or_field_metadata_in_the_bundle(tmp_path):
    src = craft_structural(tmp_path)
    out = bundle(src, tmp_path / "out")
    for p in out.glob("*.parquet"):
        s = pq.read_schema(p)
        assert not s.metadata or set(s.metadata) <= {b"ARROW:schema"}, (p.name, s.metadata)
        assert not any(f.metadata for f in s), p.name
        assert "__index_level_0__" not in s.names
        assert set(pq.read_metadata(p).metadata or {}) <= {b"ARROW:schema"}


def test_readme_counts_what_was_left_out(tmp_path):
    from graphrag_audit.bundle.build import readme

    src = craft_names(tmp_path)
    from graphrag_audit.bundle.build import plan_bundle, write_bundle

    result = write_bundle(plan_bundle(src), tmp_path / "out")
    text = readme(result, "test")
    left = text.split("## Left out", 1)[1].split("Settings files", 1)[0]
    # the hostile files, folders and the stray table: counted by kind (5 files, 2 folders, 1 table)
    assert "- Folders (vector stores" in left and ": 2\n" in left, left
    assert "- Files that are not index tables (never copied: they may hold original text): 5" in left, left
    assert "- Tables graphrag's query path does not read (`--include-all` adds them): 1" in left, left
    for n in HOSTILE_NAMES + ["lancedb", "STRAYTABLENAME", "FOLDERNAME"]:
        assert n not in text
