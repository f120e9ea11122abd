"""Locating the index the way graphrag does (issue 13, part 1; issue 14's parquet + CSV case).

Project roots are generated in tmp_path with the tables of the seed fixtures. Expected folders
are worked out by hand from graphrag's code (graphrag_audit/io/settings.py cites it per version)
and, where an interpreter with graphrag is available (GRAPHRAG_VERIFY_PYTHONS, prepared by
.ci/run), checked against graphrag's own load_config: test_graphrag_resolves_the_same_folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from conftest import FIXTURES

from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
from graphrag_audit.analysis.treeview import build_forest
from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.locate import locate_index
from graphrag_audit.render import render
from graphrag_audit.render.html import render_html
from graphrag_audit.sanitise.markdown import markdown_cell

V3 = FIXTURES / "seed-v3"
V3_CSV = FIXTURES / "seed-v3-csv"
V1 = FIXTURES / "seed-v1"
V05 = FIXTURES / "seed-v05"
PREFIX = "graphrag-audit: error: "


def project(
    tmp: Path,
    settings: str | bytes | None = None,
    *,
    name: str = "settings.yaml",
    tables: dict[str, Path] | None = None,
    dotenv: str | None = None,
    root: str = "proj",
) -> Path:
    """A project root: the settings file (text or bytes), .env, and fixture tables copied to
    the given sub-folders."""
    p = tmp / root
    p.mkdir(parents=True, exist_ok=True)
    if settings is not None:
        data = settings if isinstance(settings, bytes) else settings.encode("utf-8")
        (p / name).write_bytes(data)
    if dotenv is not None:
        (p / ".env").write_text(dotenv, encoding="utf-8")
    for sub, src in (tables or {}).items():
        shutil.copytree(src, p / sub)
    return p


def located(p: Path):
    return locate_index(p)


def error_of(p) -> IndexInputError:
    with pytest.raises(IndexInputError) as info:
        locate_index(p)
    return info.value


def run(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=e,
    )


def assert_one_line_error(p: subprocess.CompletedProcess, *needles: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr, p.stdout[:300])
    assert p.stdout == "" and "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# ============================================================================================
# settings variants, per generation
# ============================================================================================
GEN3_BLOCK = 'output_storage:\n  type: file # the index\n  base_dir: "newout"\n'


def test_v3_output_storage_is_followed_and_never_output(tmp_path):
    p = project(tmp_path, GEN3_BLOCK, tables={"newout": V3, "output": V05})
    f = located(p)
    assert f.output_dir == (p / "newout").resolve()
    assert f.storage_key == "output_storage" and f.settings_file == p / "settings.yaml"
    assert f.tables["communities"].name == "communities.parquet"
    assert any("output_storage.base_dir 'newout'" in n for n in f.notes)


@pytest.mark.parametrize(
    "settings, folder",
    [
        # a flow mapping (the old line reader saw no base_dir in it)
        ("output_storage: {type: file, base_dir: newout}\n", "newout"),
        # an anchor and an alias, and a merge key
        ("defaults: &o\n  type: file\n  base_dir: newout\noutput_storage: *o\n", "newout"),
        (
            "defaults: &o {type: file, base_dir: other}\noutput_storage:\n  <<: *o\n  base_dir: newout\n",
            "newout",
        ),
        # a quoted '#' is part of the value, an unquoted one after a space starts a comment
        ('output_storage:\n  base_dir: "new#out" # not a comment inside the quotes\n', "new#out"),
        ("output_storage:\n  base_dir: new#out\n", "new#out"),  # no space before '#': still the value
        ("output_storage:\n  base_dir: newout #comment\n", "newout"),
        # the top-level key in quotes, a document marker, CRLF line ends
        ("---\n\"output_storage\":\r\n  'base_dir': 'newout'\r\n", "newout"),
    ],
)
def test_yaml_forms_graphrag_accepts(tmp_path, settings, folder):
    p = project(tmp_path, settings, tables={folder: V3, "output": V05})
    assert located(p).output_dir == (p / folder).resolve()


def test_utf8_bom_yaml(tmp_path):
    p = project(tmp_path, b"\xef\xbb\xbf" + GEN3_BLOCK.encode(), tables={"newout": V3, "output": V05})
    assert located(p).output_dir == (p / "newout").resolve()


def test_settings_json_and_yml_and_search_order(tmp_path):
    p = project(
        tmp_path,
        json.dumps({"output_storage": {"type": "file", "base_dir": "jsonout"}}),
        name="settings.json",
        tables={"jsonout": V3, "output": V05},
    )
    f = located(p)
    assert f.output_dir == (p / "jsonout").resolve() and f.settings_file.name == "settings.json"
    # settings.yml comes before settings.json, settings.yaml before both
    (p / "settings.yml").write_text("output_storage:\n  base_dir: ymlout\n", encoding="utf-8")
    shutil.copytree(V3, p / "ymlout")
    assert located(p).output_dir == (p / "ymlout").resolve()
    (p / "settings.yaml").write_text("output_storage:\n  base_dir: yamlout\n", encoding="utf-8")
    shutil.copytree(V3, p / "yamlout")
    assert located(p).output_dir == (p / "yamlout").resolve()


def test_settings_json_with_a_bom_is_refused_like_graphrag(tmp_path):
    p = project(
        tmp_path,
        b"\xef\xbb\xbf" + json.dumps({"output_storage": {"base_dir": "o"}}).encode(),
        name="settings.json",
        tables={"o": V3},
    )
    e = error_of(p)
    assert e.path == str(p / "settings.json") and "byte-order mark" in e.problem
    with pytest.raises(json.JSONDecodeError, match="BOM"):  # what graphrag's json.loads does
        json.loads((p / "settings.json").read_bytes().decode("utf-8"))


def test_v3_table_provider_csv_selects_the_csv_set(tmp_path):
    p = project(tmp_path, GEN3_BLOCK + "table_provider:\n  type: csv\n", tables={"newout": V3})
    for f in V3_CSV.iterdir():
        shutil.copy(f, p / "newout" / f.name)
    f = located(p)
    assert {t.suffix for t in f.tables.values()} == {".csv"} and f.table_format == "csv"
    assert any("auditing the csv set" in n and "table_provider.type csv" in n for n in f.notes)


def test_v3_table_provider_csv_without_csv_tables(tmp_path):
    p = project(tmp_path, GEN3_BLOCK + "table_provider: {type: csv}\n", tables={"newout": V3})
    e = error_of(p)
    assert e.path == str((p / "newout").resolve())
    assert "no GraphRAG index .csv tables" in e.problem and "there are .parquet tables" in e.problem


def test_v3_output_storage_without_base_dir_is_an_error(tmp_path):
    # graphrag 3.x: StorageConfig.base_dir has no default inside the key and file storage needs one
    p = project(tmp_path, "output_storage:\n  type: file\n", tables={"output": V3})
    e = error_of(p)
    assert "output_storage.base_dir is empty" in e.problem


def test_v2_output_key_and_its_default(tmp_path):
    p = project(tmp_path, "output:\n  type: file\n  base_dir: out2\n", tables={"out2": V3, "output": V05})
    f = located(p)
    assert f.output_dir == (p / "out2").resolve() and f.storage_key == "output"
    # graphrag 2.x's OutputConfig defaults base_dir to "output" when the key omits it
    q = project(tmp_path, "output:\n  type: file\n", tables={"output": V3}, root="q")
    assert located(q).output_dir == (q / "output").resolve()


def test_v2_outputs_multi_index(tmp_path):
    one = project(
        tmp_path,
        "output:\n  base_dir: written\noutputs:\n  main:\n    type: file\n    base_dir: idx_a\n",
        tables={"idx_a": V3, "written": V05},
        root="one",
    )
    f = located(one)
    assert f.output_dir == (one / "idx_a").resolve() and f.storage_key == "outputs.main"
    assert any("global search reads outputs" in n for n in f.notes)
    two = project(
        tmp_path,
        "outputs:\n  a: {base_dir: idx_a}\n  b: {base_dir: idx_b}\n",
        tables={"idx_a": V3, "idx_b": V3},
        root="two",
    )
    e = error_of(two)
    assert "outputs names 2 indexes" in e.problem
    assert f"a: {two / 'idx_a'}" in e.problem and f"b: {two / 'idx_b'}" in e.problem
    assert "pass one of those folders" in e.problem


def test_v1_storage_key(tmp_path):
    p = project(
        tmp_path, 'storage:\n  type: file # or blob\n  base_dir: "out1"\n', tables={"out1": V1, "output": V3}
    )
    f = located(p)
    assert f.output_dir == (p / "out1").resolve() and f.storage_key == "storage"
    assert any("storage.base_dir 'out1' (graphrag 0.x-1.x)" in n for n in f.notes)


def test_v0_storage_timestamp_resolved_to_the_newest_run(tmp_path):
    # graphrag 0.3.3-1.2 resolve_path: the newest YYYYmmdd-HHMMSS folder by name; others ignored
    p = project(
        tmp_path,
        'storage:\n  type: file\n  base_dir: "output/${timestamp}/artifacts"\n',
        tables={"output/20240801-101010/artifacts": V05, "output/20240902-090909/artifacts": V1},
    )
    (p / "output" / "zz-not-a-run").mkdir()
    f = located(p)
    assert f.output_dir == (p / "output" / "20240902-090909" / "artifacts").resolve()
    assert any("newest run 20240902-090909 of 2" in n for n in f.notes)


def test_v0_newest_run_without_tables_is_not_replaced_by_an_older_one(tmp_path):
    p = project(
        tmp_path,
        'storage:\n  base_dir: "output/${timestamp}/artifacts"\n',
        tables={"output/20240801-101010/artifacts": V05},
    )
    (p / "output" / "20250101-000000" / "artifacts").mkdir(parents=True)  # an unfinished run
    e = error_of(p)
    assert e.path == str((p / "output" / "20250101-000000" / "artifacts").resolve())


def test_v0_storage_without_base_dir_uses_the_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("GRAPHRAG_STORAGE_BASE_DIR", raising=False)
    # 0.3.5+: "output"; 0.1-0.3.4: "output/${timestamp}/artifacts"
    p = project(tmp_path, "storage:\n  type: file\n", tables={"output": V1})
    f = located(p)
    assert f.output_dir == (p / "output").resolve() and any("storage has no base_dir" in n for n in f.notes)
    q = project(
        tmp_path, "storage:\n  type: file\n", tables={"output/20240801-101010/artifacts": V05}, root="q"
    )
    assert located(q).output_dir == (q / "output" / "20240801-101010" / "artifacts").resolve()
    # a missing base_dir is read from GRAPHRAG_STORAGE_BASE_DIR (graphrag 0.x-1.x EnvironmentReader)
    r = project(
        tmp_path,
        "storage:\n  type: file\n",
        tables={"envout": V1, "output": V3},
        root="r",
        dotenv="GRAPHRAG_STORAGE_BASE_DIR=envout\n",
    )
    f = located(r)
    assert f.output_dir == (r / "envout").resolve() and any("GRAPHRAG_STORAGE_BASE_DIR" in n for n in f.notes)


def test_no_output_key_means_graphrags_default_output(tmp_path):
    p = project(
        tmp_path,
        "models:\n  default_chat_model:\n    api_key: ${UNSET_KEY_FOR_THE_TEST}\n",
        tables={"output": V3},
    )
    f = located(p)
    assert f.output_dir == (p / "output").resolve() and f.storage_key is None
    assert any("names no output folder" in n for n in f.notes)
    # an empty settings file: graphrag's defaults (values or {})
    q = project(tmp_path, "", tables={"output": V3}, root="q")
    assert located(q).output_dir == (q / "output").resolve()


def test_two_keys_naming_different_folders_is_an_error(tmp_path):
    p = project(
        tmp_path, "output:\n  base_dir: a\noutput_storage:\n  base_dir: b\n", tables={"a": V3, "b": V3}
    )
    e = error_of(p)
    assert "two output folders" in e.problem and "'a'" in e.problem and "'b'" in e.problem
    same = project(
        tmp_path, "output:\n  base_dir: a\noutput_storage:\n  base_dir: ./a\n", tables={"a": V3}, root="same"
    )
    assert located(same).output_dir == (same / "a").resolve()


def test_relative_and_absolute_base_dirs(tmp_path):
    p = project(tmp_path, "output_storage:\n  base_dir: ../elsewhere/idx\n", tables={"../elsewhere/idx": V3})
    assert located(p).output_dir == (tmp_path / "elsewhere" / "idx").resolve()
    absolute = tmp_path / "abs-idx"
    shutil.copytree(V3, absolute)
    q = project(tmp_path, f"output_storage:\n  base_dir: '{absolute}'\n", root="q")
    assert located(q).output_dir == absolute.resolve()


# ============================================================================================
# ${VAR}: environment, .env, unset
# ============================================================================================
def test_variables_from_dotenv_and_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("GA_TEST_OUT", raising=False)
    p = project(
        tmp_path,
        "output_storage:\n  base_dir: ${GA_TEST_OUT}\n",
        dotenv="GA_TEST_OUT=fromdotenv\n",
        tables={"fromdotenv": V3, "fromenv": V3},
    )
    assert located(p).output_dir == (p / "fromdotenv").resolve()
    assert "GA_TEST_OUT" not in os.environ  # the .env is read, not loaded into this process
    monkeypatch.setenv("GA_TEST_OUT", "fromenv")  # an existing variable wins over .env
    assert located(p).output_dir == (p / "fromenv").resolve()


def test_dollar_forms(tmp_path, monkeypatch):
    monkeypatch.setenv("GA_TEST_PART", "part")
    # $NAME without braces, and $$ for a literal $ (string.Template, graphrag >= 2.0)
    p = project(
        tmp_path, "output_storage:\n  base_dir: out_$GA_TEST_PART/$${x}\n", tables={"out_part/${x}": V3}
    )
    assert located(p).output_dir == (p / "out_part" / "${x}").resolve()
    # graphrag 0.x-1.x expand values with os.path.expandvars (same result for these forms)
    q = project(tmp_path, "storage:\n  base_dir: out_${GA_TEST_PART}\n", tables={"out_part": V1}, root="q")
    assert located(q).output_dir == (q / "out_part").resolve()


@pytest.mark.parametrize(
    "settings",
    [
        "output_storage:\n  base_dir: ${GA_TEST_UNSET_VAR}/idx\n",
        'output:\n  base_dir: "$GA_TEST_UNSET_VAR"\n',
        "storage:\n  base_dir: out/${GA_TEST_UNSET_VAR}\n",
    ],
)
def test_unset_variable_is_an_error_naming_it(tmp_path, monkeypatch, settings):
    monkeypatch.delenv("GA_TEST_UNSET_VAR", raising=False)
    p = project(tmp_path, settings, dotenv="OTHER=1\n", tables={"output": V3})
    e = error_of(p)
    assert e.path == str(p / "settings.yaml")
    assert "${GA_TEST_UNSET_VAR}" in e.problem and "not set" in e.problem and str(p / ".env") in e.problem


def test_v2_timestamp_is_an_unset_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("timestamp", raising=False)
    p = project(
        tmp_path,
        "output:\n  base_dir: output/${timestamp}/artifacts\n",
        tables={"output/20240801-101010/artifacts": V3},
    )
    assert "${timestamp}" in error_of(p).problem


# ============================================================================================
# missing folders, remote storage, bad settings
# ============================================================================================
def test_missing_output_dir_never_falls_back_to_output(tmp_path):
    p = project(tmp_path, "output_storage:\n  base_dir: newout\n", tables={"output": V3})
    e = error_of(p)
    assert e.path == str((p / "newout").resolve()) and "no such output folder" in e.problem
    assert "output_storage.base_dir 'newout'" in e.problem


# (blob storage and az://, abfs[s]://, s3[a]:// base_dirs are read in place: tests/io/test_remote.py)
@pytest.mark.parametrize(
    "settings, needle",
    [
        ("output_storage:\n  type: cosmosdb\n  base_dir: db\n", "Azure Cosmos DB"),
        ("storage:\n  type: cosmosdb\n  base_dir: db\n", "Azure Cosmos DB"),
        ("output_storage:\n  base_dir: out\ntable_provider:\n  type: cosmosdb\n", "Azure Cosmos DB"),
        ("output_storage:\n  base_dir: gs://bucket/out\n", "Google Cloud Storage"),
        ("output:\n  base_dir: https://example.com/out\n", "a web server"),
    ],
)
def test_remote_storage_is_a_clear_error(tmp_path, settings, needle):
    p = project(tmp_path, settings, tables={"output": V3, "out": V3})
    e = error_of(p)
    assert needle in e.problem and "local folder" in e.problem and "not supported" in e.problem
    assert e.path == str(p / "settings.yaml")


def test_memory_and_unknown_storage_types(tmp_path):
    p = project(tmp_path, "output_storage:\n  type: memory\n", tables={"output": V3})
    assert "memory" in error_of(p).problem
    q = project(tmp_path, "output:\n  type: ftp\n  base_dir: x\n", tables={"x": V3}, root="q")
    assert "'ftp' is not a storage type" in error_of(q).problem


@pytest.mark.parametrize(
    "arg",
    [
        "s3://bucket/index",
        "az://container/output",
        "abfss://fs@acct/x",
        "gs://b/o",
        "https://example.com/output",
    ],
)
def test_remote_url_argument(arg):
    e = error_of(arg)
    assert e.path == arg and "not in a local folder" in e.problem
    e = error_of(Path(arg))  # what typer hands over: pathlib folds '//' into '/'
    assert e.path == arg


@pytest.mark.parametrize(
    "settings, needle",
    [
        ("output_storage:\n  base_dir: [a\n", "not valid YAML"),
        ("- output\n- x\n", "not a mapping"),
        ("output_storage: newout\n", "output_storage must be a mapping"),
        ("output_storage:\n  base_dir: 2024\n", "output_storage.base_dir must be text, not a number"),
        ("output_storage:\n  base_dir: [a, b]\n", "must be text, not a list"),
    ],
)
def test_bad_settings(tmp_path, settings, needle):
    p = project(tmp_path, settings, tables={"output": V3, "2024": V3})
    e = error_of(p)
    assert e.path == str(p / "settings.yaml") and needle in e.problem


def test_settings_not_utf8(tmp_path):
    p = project(tmp_path, b"output_storage:\n  base_dir: caf\xe9\n", tables={"output": V3})
    assert "not UTF-8" in error_of(p).problem


# ============================================================================================
# graphrag update
# ============================================================================================
def update_project(tmp: Path) -> Path:
    """graphrag >= 2.0 after two `graphrag update` runs: the merged index in output/, each run's
    previous/ (a copy of the output before it) and delta/ (the new documents' index)."""
    return project(
        tmp,
        None,
        tables={
            "output": V3,
            "update_output/20250101-100000/previous": V3,
            "update_output/20250101-100000/delta": V3,
            "update_output/20250301-100000/previous": V3,
            "update_output/20250301-100000/delta": V3,
        },
    )


def test_update_output_project_root(tmp_path):
    p = update_project(tmp_path)
    f = located(p)
    assert f.output_dir == p / "output"
    prev = p / "update_output" / "20250301-100000" / "previous"
    assert any("2 run(s)" in n and str(prev) in n for n in f.notes), f.notes
    # the same with a settings file naming the folders
    (p / "settings.yaml").write_text(
        "output_storage:\n  base_dir: output\nupdate_output_storage:\n  base_dir: update_output\n",
        encoding="utf-8",
    )
    f = located(p)
    assert f.output_dir == (p / "output").resolve() and any(str(prev) in n for n in f.notes)


def test_update_output_folders_given_directly(tmp_path):
    p = update_project(tmp_path)
    run_dir = p / "update_output" / "20250301-100000"
    e = error_of(run_dir)
    assert "a `graphrag update` run folder" in e.problem
    assert str(run_dir / "previous") in e.problem and str(run_dir / "delta") in e.problem
    e = error_of(p / "update_output")
    assert "2 run(s)" in e.problem and str(run_dir / "previous") in e.problem
    f = located(run_dir / "previous")
    assert f.output_dir == run_dir / "previous" and any("before that update" in n for n in f.notes)
    f = located(run_dir / "delta")
    assert any("only the documents that update added" in n for n in f.notes)


def test_update_output_of_graphrag_1x(tmp_path):
    # graphrag 0.4-1.2: the merged tables in update_output/ itself, the delta in update_output/delta
    p = project(
        tmp_path,
        "storage:\n  base_dir: output\n",
        tables={"output": V1, "update_output": V1, "update_output/delta": V1},
    )
    f = located(p)
    assert f.output_dir == (p / "output").resolve()
    assert any("graphrag 0.4-1.2" in n and str(p / "update_output") in n for n in f.notes)
    g = located(p / "update_output")
    assert any("delta/" in n for n in g.notes)


# ============================================================================================
# 0.x layouts without settings
# ============================================================================================
def test_timestamped_layout_without_settings(tmp_path):
    p = project(
        tmp_path,
        None,
        tables={"output/20240801-101010/artifacts": V05, "output/20240902-090909/artifacts": V1},
    )
    f = located(p)
    assert f.output_dir == p / "output" / "20240902-090909" / "artifacts"
    assert any("20240902-090909 of 2" in n for n in f.notes)
    # the output folder itself given
    assert located(p / "output").output_dir == p / "output" / "20240902-090909" / "artifacts"


def test_timestamped_layout_newest_empty_is_an_error(tmp_path):
    p = project(tmp_path, None, tables={"output/20240801-101010/artifacts": V05})
    (p / "output" / "20240902-090909" / "artifacts").mkdir(parents=True)
    e = error_of(p)
    assert e.path == str(p / "output" / "20240902-090909" / "artifacts") and "newest" in e.problem


# ============================================================================================
# parquet and CSV side by side (issue 14)
# ============================================================================================
def both_formats(tmp: Path) -> Path:
    d = tmp / "both"
    shutil.copytree(V3, d)
    for f in V3_CSV.iterdir():
        shutil.copy(f, d / f.name)
    return d


def test_same_parquet_and_csv_sets(tmp_path):
    d = both_formats(tmp_path)
    f = located(d)
    assert {t.suffix for t in f.tables.values()} == {".parquet"} and f.table_format == "parquet"
    assert f.format_differences == ()
    assert any("auditing the parquet set" in n for n in f.notes)
    assert any("agree" in n for n in f.notes)


def drop_csv_rows(path: Path, community: int) -> int:
    """Rewrite a CSV table without the rows of ``community``; returns the rows left."""
    t = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(newlines_in_values=True))
    keep = [i for i, c in enumerate(t.column("community").to_pylist()) if c != community]
    t = t.take(keep)
    pacsv.write_csv(t, path)
    return t.num_rows


def test_different_parquet_and_csv_sets(tmp_path):
    d = both_formats(tmp_path)
    n_parquet = pq.read_metadata(d / "communities.parquet").num_rows
    assert drop_csv_rows(d / "communities.csv", 78) == n_parquet - 1
    f = located(d)
    (diff,) = f.format_differences
    assert diff["table"] == "communities" and diff["audited_rows"] == n_parquet
    assert diff["other_rows"] == n_parquet - 1 and diff["only_audited"] == ["78"] and diff["only_other"] == []
    assert any("CSV copies differ" in n and "78 only in communities.parquet" in n for n in f.notes)

    # every format shows it: a warning finding (JSON, text, markdown, github), a note (text, markdown,
    # HTML); --fail-on warning fails a CI step on it
    p = run("levels", d, "-f", "json", "--no-costs", "--fail-on", "warning")
    assert p.returncode == 1, p.stderr
    rep = json.loads(p.stdout)
    (fd,) = [x for x in rep["findings"] if x["rule"] == "parquet-csv-differ"]
    assert fd["severity"] == "warning" and fd["evidence"]["audited"] == "parquet"
    assert rep["index"]["output_dir"] == str(d)
    assert any("CSV copies differ" in n for n in rep["index"]["notes"])
    model, report = audit_with_model(d, AuditOptions(costs=False))
    for fmt in ("text", "markdown", "github"):
        assert "parquet-csv-differ" in render(report, fmt), fmt
    assert "CSV copies differ" in render_html(report, build_forest(model, 2, report.selections_by_level()))


def test_csv_set_audited_when_the_settings_say_so(tmp_path):
    p = project(tmp_path, GEN3_BLOCK + "table_provider:\n  type: csv\n", tables={"newout": V3})
    for f in V3_CSV.iterdir():
        shutil.copy(f, p / "newout" / f.name)
    drop_csv_rows(p / "newout" / "community_reports.csv", 5)
    f = located(p)
    (diff,) = f.format_differences
    assert f.table_format == "csv" and diff["table"] == "reports"
    assert diff["only_other"] == ["5"] and diff["only_audited"] == []


# ============================================================================================
# the CLI: one stderr line, exit 2, no traceback; the tables folder in every header
# ============================================================================================
def test_cli_errors_are_one_line(tmp_path):
    missing = project(
        tmp_path, "output_storage:\n  base_dir: newout\n", tables={"output": V3}, root="missing"
    )
    assert_one_line_error(
        run("levels", missing), str((missing / "newout").resolve()), "no such output folder"
    )
    unset = project(
        tmp_path, "output_storage:\n  base_dir: ${GA_CLI_UNSET}\n", tables={"output": V3}, root="unset"
    )
    assert_one_line_error(run("levels", unset), "${GA_CLI_UNSET}", "not set")
    blob = project(
        tmp_path, "output_storage:\n  type: blob\n  base_dir: out\n", tables={"output": V3}, root="blob"
    )
    assert_one_line_error(run("tree", blob), "settings.yaml", "container_name is not set")
    assert_one_line_error(
        run("levels", "gs://bucket/idx", "-f", "json"), "gs://bucket/idx: ", "Google Cloud Storage"
    )
    upd = update_project(tmp_path / "u")
    assert_one_line_error(
        run("plan", upd / "update_output" / "20250101-100000", "--reports", "3"),
        "a `graphrag update` run folder",
    )


def test_every_format_names_the_tables_folder(tmp_path):
    p = project(tmp_path, GEN3_BLOCK, tables={"newout": V3})
    where = str((p / "newout").resolve())
    model, report = audit_with_model(p, AuditOptions(costs=False))
    assert f"tables in {where}" in render(report, "text", width=400)
    md = render(report, "markdown", include_titles=True)
    assert "**tables in**" in md and markdown_cell(where) in md
    # by default an absolute path is hidden, the part under the index folder stays
    assert "| **tables in** | (index dir)/newout |" in render(report, "markdown") and where not in render(
        report, "markdown"
    )
    assert json.loads(render(report, "json"))["index"]["output_dir"] == where
    assert f"tables in {where}" in render_html(report, build_forest(model, 2, report.selections_by_level()))
    # the tree and plan commands, through the CLI
    assert f"tables in {where}" in run("tree", p, "--width", "400").stdout
    plan = run("plan", p, "--reports", "3", "--width", "400")
    assert f"tables in {where}" in plan.stdout and "followed settings.yaml" in plan.stdout


# ============================================================================================
# graphrag's own load_config resolves the same folder (needs GRAPHRAG_VERIFY_PYTHONS)
# ============================================================================================
ORACLE = r"""
import json, os, sys
from pathlib import Path
from importlib.metadata import version
major = int(version("graphrag").split(".")[0])
from graphrag.config.load_config import load_config
out = {"version": version("graphrag")}
cwd, environ = os.getcwd(), dict(os.environ)
for root in json.loads(sys.argv[1]):
    try:
        if major >= 3:
            c = load_config(root)
            res = {"type": str(c.output_storage.type), "base_dir": c.output_storage.base_dir,
                   "table": str(c.table_provider.type)}
        else:
            from graphrag.config.resolve_path import resolve_path
            c = load_config(Path(root))
            t = getattr(c.storage.type, "value", c.storage.type)
            base = str(resolve_path(c.storage.base_dir, c.root_dir)) if t == "file" else c.storage.base_dir
            res = {"type": t, "base_dir": base}
    except Exception as e:
        res = {"error": f"{type(e).__name__}: {e}"[:300]}
    finally:
        os.chdir(cwd)
        os.environ.clear(); os.environ.update(environ)
    out[root] = res
print(json.dumps(out))
"""

#: (case name, settings file name, settings text, .env text, table folders) per generation
ORACLE_CASES = {
    3: [
        ("block", "settings.yaml", GEN3_BLOCK, None, ["newout", "output"]),
        ("flow", "settings.yaml", "output_storage: {type: file, base_dir: newout}\n", None, ["newout"]),
        (
            "anchor",
            "settings.yaml",
            "d: &o\n  type: file\n  base_dir: newout\noutput_storage: *o\n",
            None,
            ["newout"],
        ),
        ("hash", "settings.yaml", 'output_storage:\n  base_dir: "new#out" # c\n', None, ["new#out"]),
        ("bom", "settings.yaml", "\ufeff" + GEN3_BLOCK, None, ["newout"]),
        ("json", "settings.json", json.dumps({"output_storage": {"base_dir": "jout"}}), None, ["jout"]),
        ("yml", "settings.yml", "output_storage:\n  base_dir: ymlout\n", None, ["ymlout"]),
        (
            "dotenv",
            "settings.yaml",
            "output_storage:\n  base_dir: ${GA_ORACLE_OUT}\n",
            "GA_ORACLE_OUT=envout\n",
            ["envout"],
        ),
        (
            "env-wins",
            "settings.yaml",
            "output_storage:\n  base_dir: ${GA_ORACLE_SET}\n",
            "GA_ORACLE_SET=dotenv\n",
            ["fromenv", "dotenv"],
        ),
        (
            "dollars",
            "settings.yaml",
            "output_storage:\n  base_dir: o_$GA_ORACLE_SET/$${x}\n",
            None,
            ["o_fromenv/${x}"],
        ),
        ("csv", "settings.yaml", GEN3_BLOCK + "table_provider: {type: csv}\n", None, ["newout"]),
        (
            "relative",
            "settings.yaml",
            "output_storage:\n  base_dir: ../oracle-elsewhere\n",
            None,
            ["../oracle-elsewhere"],
        ),
        ("unset", "settings.yaml", "output_storage:\n  base_dir: ${GA_ORACLE_UNSET}\n", None, ["output"]),
        ("no-base-dir", "settings.yaml", "output_storage:\n  type: file\n", None, ["output"]),
        ("empty", "settings.yaml", "", None, ["output"]),
        (
            "json-bom",
            "settings.json",
            "\ufeff" + json.dumps({"output_storage": {"base_dir": "jout"}}),
            None,
            ["jout"],
        ),
    ],
    1: [
        ("block", "settings.yaml", 'storage:\n  type: file\n  base_dir: "out1"\n', None, ["out1", "output"]),
        ("flow", "settings.yaml", "storage: {type: file, base_dir: out1}\n", None, ["out1"]),
        ("hash", "settings.yaml", "storage:\n  base_dir: 'o#1' # c\n", None, ["o#1"]),
        ("json", "settings.json", json.dumps({"storage": {"base_dir": "jout"}}), None, ["jout"]),
        (
            "timestamp",
            "settings.yaml",
            "storage:\n  base_dir: output/${timestamp}/artifacts\n",
            None,
            ["output/20240801-101010/artifacts", "output/20240902-090909/artifacts"],
        ),
        (
            "dotenv",
            "settings.yaml",
            "storage:\n  base_dir: ${GA_ORACLE_OUT}\n",
            "GA_ORACLE_OUT=envout\n",
            ["envout"],
        ),
        ("default", "settings.yaml", "storage:\n  type: file\n", None, ["output"]),
        (
            "env-base-dir",
            "settings.yaml",
            "storage:\n  type: file\n",
            "GRAPHRAG_STORAGE_BASE_DIR=sbd\n",
            ["sbd"],
        ),
        ("unset", "settings.yaml", "storage:\n  base_dir: out/${GA_ORACLE_UNSET}\n", None, ["output"]),
    ],
}


def _oracle_pythons() -> dict[int, str]:
    found = {}
    for py in os.environ.get("GRAPHRAG_VERIFY_PYTHONS", "").split(os.pathsep):
        if not py or not os.path.exists(py):
            continue
        p = subprocess.run(
            [py, "-c", "from importlib.metadata import version; print(version('graphrag'))"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if p.returncode == 0:
            found.setdefault(int(p.stdout.strip().split(".")[0]), py)
    return found


ORACLES = _oracle_pythons()


@pytest.mark.side
@pytest.mark.parametrize("major", sorted(ORACLE_CASES))
def test_graphrag_resolves_the_same_folder(tmp_path, monkeypatch, major):
    if major not in ORACLES:
        pytest.skip(
            f"no interpreter with graphrag {major}.x (set GRAPHRAG_VERIFY_PYTHONS; .ci/run prepares "
            f"graphrag 3.3.0 and 1.2.0)"
        )
    env = {"GA_ORACLE_SET": "fromenv", "GRAPHRAG_API_KEY": "not-used"}  # 1.x wants a key to load at all
    for k in ("GA_ORACLE_OUT", "GA_ORACLE_UNSET", "GRAPHRAG_STORAGE_BASE_DIR", "timestamp"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    src = V3 if major >= 3 else V1
    roots = {}
    for name, fname, text, dotenv, folders in ORACLE_CASES[major]:
        tables = {f: (V3_CSV if name == "csv" else src) for f in folders}
        root = project(tmp_path / name, text, name=fname, dotenv=dotenv, tables=tables)
        roots[name] = root
    p = subprocess.run(
        [ORACLES[major], "-c", ORACLE, json.dumps([str(r) for r in roots.values()])],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert p.returncode == 0, p.stderr[-3000:]
    gr = json.loads(p.stdout.strip().splitlines()[-1])
    checked = 0
    for name, root in roots.items():
        theirs = gr[str(root)]
        try:
            ours = locate_index(root)
        except IndexInputError as exc:
            ours = exc
        if name == "empty" and major >= 3:  # 3.x: GraphRagConfig(**None); 0.x-2.x use the defaults, as the
            assert (
                theirs["error"].startswith("TypeError") and ours.output_dir == root / "output"
            )  # audit does
            continue
        if "error" in theirs:  # graphrag refuses the settings: so does the audit
            assert isinstance(ours, IndexInputError), (name, theirs, ours)
            continue
        if name == "unset" and major < 3:  # 1.x keeps the literal text; the audit refuses it (documented)
            assert "${GA_ORACLE_UNSET}" in theirs["base_dir"] and isinstance(ours, IndexInputError)
            continue
        assert not isinstance(ours, IndexInputError), (name, theirs, str(ours))
        assert theirs["type"] == "file"
        assert ours.output_dir == Path(theirs["base_dir"]).resolve(), (name, theirs)
        if "table" in theirs:
            assert ours.table_format == theirs["table"], (name, theirs)
        checked += 1
    # graphrag errs where expected: an unset variable (3.x), no base_dir in output_storage (3.x),
    # a BOM before JSON
    if major >= 3:
        assert {n for n, r in roots.items() if "error" in gr[str(r)]} == {
            "unset",
            "no-base-dir",
            "json-bom",
            "empty",
        }
        assert checked == len(roots) - 4
    else:
        assert checked == len(roots) - 1  # the unset variable
