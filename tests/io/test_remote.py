"""Indexes read in place from Azure Blob Storage (Azurite) and S3 (moto's server), both real
emulators started here (tests/remote_emulators.py): the same output as the local copy, graphrag-style
blob settings, and every fault a one-line exit-2 error naming the location, in bounded time."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, shared_index
from remote_emulators import AZURITE_KEY, S3_SECRET, Proxy, start_azurite, start_moto

PREFIX = "graphrag-audit: error: "
#: 3.x, 1.x (create_final_*) and 0.x on Azure, 2.x on S3, plus the CSV layout (a repository fixture)
AZURE_INDEXES = ["verbs-v3", "verbs-v1", "dulce-v0.3-create_final"]
COMMANDS = {
    "levels-json": ["levels", "{}", "-f", "json"],
    "tree": ["tree", "{}"],
    "plan": ["plan", "{}", "--reports", "8"],
    "report": ["report", "{}", "-o", "-"],
}
#: fault runs: short request timeouts
FAULT_ENV = {"GRAPHRAG_AUDIT_REMOTE_TIMEOUT": "2"}


def _clean_env(extra: dict) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "AWS_", "GRAPHRAG_AUDIT_REMOTE"))}
    e.update(extra)
    e["NO_COLOR"] = "1"
    return e


def run(args, env: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_clean_env(env),
        cwd=Path(__file__).resolve().parents[2],
    )


from test_locate import assert_one_line_error as one_line_error  # noqa: E402 - the same one-line-error check


def _upload(fs, local: Path, remote: str) -> None:
    for f in sorted(local.iterdir()):
        if f.suffix in (".parquet", ".csv"):
            fs.put_file(str(f), f"{remote}/{f.name}")


_LOCAL: dict = {}


def local_output(index: Path, command: str) -> str:
    key = (str(index), command)
    if key not in _LOCAL:
        p = run([a.format(index) for a in COMMANDS[command]], {})
        assert p.returncode in (0, 1), p.stderr
        _LOCAL[key] = p.stdout.replace(str(index), "<INDEX>")
    return _LOCAL[key]


#: DRIFT's embeddings preflight reads local LanceDB folders only (io/vector_store.py): a remote index says
#: so where the local copy (which has no lancedb folder either) says the folder is missing; both NOT RUN
PREFLIGHT_REASONS = (
    "the index is not on a local disk",
    "no LanceDB folder at the vector store's db_uri",
    "no LanceDB folder at the vector store&#x27;s db_uri",  # in the HTML report
)


def _preflight_unified(text: str) -> str:
    for reason in PREFLIGHT_REASONS:
        text = text.replace(reason, "<PREFLIGHT NOT RUN>")
    return text


def assert_same(index: Path, command: str, url: str, env: dict, display: str | None = None) -> str:
    p = run([a.format(url) for a in COMMANDS[command]], env)
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr
    assert PREFLIGHT_REASONS[1] not in p.stdout and PREFLIGHT_REASONS[2] not in p.stdout
    remote = p.stdout.replace(display or url, "<INDEX>")
    assert _preflight_unified(remote) == _preflight_unified(local_output(index, command))
    return p.stdout


# ---- the emulators, shared by the comparison tests -------------------------------------------------
@pytest.fixture(scope="module")
def azurite():
    emu = start_azurite()
    try:
        fs = emu.fs()
        fs.mkdir("idx")
        yield emu
    finally:
        emu.stop()


@pytest.fixture(scope="module")
def moto():
    emu = start_moto()
    try:
        emu.fs().mkdir("bkt")
        yield emu
    finally:
        emu.stop()


def _uploaded(emu, container: str, name: str, local: Path) -> str:
    fs = emu.fs()
    if not fs.exists(f"{container}/{name}"):
        _upload(fs, local, f"{container}/{name}")
    return f"{container}/{name}"


# ---- same output as the local copy -----------------------------------------------------------------
# (every CLI run costs an interpreter start: levels on every generation, the other commands on one index)
@pytest.mark.parametrize("name", AZURE_INDEXES)
def test_azure_levels_same_as_local(azurite, name):
    index = shared_index(name)
    path = _uploaded(azurite, "idx", name, index)
    assert_same(index, "levels-json", f"az://{path}", azurite.env())


@pytest.mark.parametrize("command", ["tree", "plan", "report"])
def test_azure_commands_same_as_local(azurite, command):
    index = shared_index("verbs-v3")
    path = _uploaded(azurite, "idx", "verbs-v3", index)
    out = assert_same(index, command, f"az://{path}", azurite.env())
    if command in ("tree", "plan"):
        assert f"tables in az://{path}" in out  # the header names the remote location


def test_azure_csv_layout_through_an_abfs_url(azurite):
    index = FIXTURES / "seed-v3-csv"
    path = _uploaded(azurite, "idx", "seed-v3-csv", index)
    assert_same(index, "levels-json", f"abfs://{path}", azurite.env())


@pytest.mark.parametrize("name, command", [("verbs-v2", "levels-json"), ("verbs-v2", "report")])
def test_s3_same_as_local(moto, name, command):
    index = shared_index(name)
    path = _uploaded(moto, "bkt", name, index)
    assert_same(index, command, f"s3://{path}", moto.env())


def test_output_folder_below_the_url(moto):
    """A project folder in the bucket: the tables in its output/ (as graphrag's default), and the
    folder actually read named as such (issue 38: JSON output_dir and the text header)."""
    import json

    index = shared_index("verbs-v3")
    fs = moto.fs()
    _upload(fs, index, "bkt/project-v3/output")
    p = run(["levels", "s3://bkt/project-v3", "-f", "json"], moto.env())
    assert p.returncode in (0, 1), p.stderr
    doc = json.loads(_preflight_unified(p.stdout))
    local = json.loads(_preflight_unified(local_output(index, "levels-json")))
    assert doc["index"]["path"] == "s3://bkt/project-v3"
    assert doc["index"]["output_dir"] == "s3://bkt/project-v3/output"
    doc["index"]["path"] = doc["index"]["output_dir"] = "<INDEX>"
    assert doc == local  # otherwise the same output as the local copy
    p = run(["tree", "s3://bkt/project-v3"], moto.env())
    assert "tables in s3://bkt/project-v3/output\n" in p.stdout


@pytest.mark.parametrize("fmt", ["json", "markdown", "github", "text"])
def test_no_credential_in_a_remote_output(moto, fmt):
    """The credentials the read used appear nowhere in what is printed (issue 39 section 2)."""
    path = _uploaded(moto, "bkt", "verbs-v3", shared_index("verbs-v3"))
    token = "SESSIONTOKENabcdefgh12345"
    p = run(
        ["levels", f"s3://{path}", "-f", fmt, "--include-titles"], {**moto.env(), "AWS_SESSION_TOKEN": token}
    )
    assert p.returncode in (0, 1), p.stderr
    assert f"s3://{path}" in p.stdout.replace("&#47;", "/")
    for secret in (S3_SECRET, token):
        assert secret not in p.stdout + p.stderr


# ---- graphrag's blob settings ------------------------------------------------------------------------
SETTINGS = {
    "3.x": "output_storage:\n  type: blob\n  connection_string: ${AZ_CONN}\n  container_name: idx\n  base_dir: {base}\n",
    "2.x": "output:\n  type: blob\n  connection_string: ${AZ_CONN}\n  container_name: idx\n  base_dir: {base}\n",
    "1.x": "storage:\n  type: blob\n  connection_string: ${AZ_CONN}\n  container_name: idx\n  base_dir: {base}\n",
}


@pytest.mark.parametrize("gen", list(SETTINGS))
def test_blob_settings_with_a_connection_string(azurite, tmp_path, gen):
    index = shared_index("verbs-v3")
    _uploaded(azurite, "idx", "verbs-v3", index)
    (tmp_path / "settings.yaml").write_text(SETTINGS[gen].replace("{base}", "verbs-v3"))
    env = {"AZ_CONN": azurite.connection_string()}
    key = {"3.x": "output_storage", "2.x": "output", "1.x": "storage"}[gen]
    display = f"az://idx/verbs-v3 (account devstoreaccount1) (settings.yaml {key})"
    out = assert_same(index, "levels-json", tmp_path, env, display=display)
    assert f'"output_dir":"{display}"' in out  # the header names the remote location, no credential
    assert AZURITE_KEY not in out and "AccountKey" not in out


def test_blob_settings_missing_container_name(tmp_path):
    (tmp_path / "settings.yaml").write_text(
        "output_storage:\n  type: blob\n  connection_string: x\n  base_dir: o\n"
    )
    one_line_error(run(["levels", tmp_path], {}), "settings.yaml", "container_name")


def test_cosmosdb_is_a_clear_error(tmp_path):
    (tmp_path / "settings.yaml").write_text("output_storage:\n  type: cosmosdb\n  base_dir: db\n")
    one_line_error(run(["levels", tmp_path], {}), "Azure Cosmos DB", "not supported", "Export")


def test_verify_needs_a_local_copy(azurite):
    path = _uploaded(azurite, "idx", "verbs-v3", shared_index("verbs-v3"))
    one_line_error(run(["levels", f"az://{path}", "--verify"], azurite.env()), f"az://{path}", "local copy")


def test_missing_extra_names_the_pip_command(tmp_path):
    code = (
        "import sys; sys.modules['adlfs'] = None; sys.modules['s3fs'] = None; "
        "from graphrag_audit.cli import main; sys.argv = ['graphrag-audit', 'tree', sys.argv[1]]; main()"
    )
    for url, extra in (("az://c/idx", "adlfs azure-identity"), ("s3://b/idx", "s3fs")):
        p = subprocess.run(
            [sys.executable, "-c", code, url],
            capture_output=True,
            text=True,
            timeout=60,
            env=_clean_env({}),
            cwd=Path(__file__).resolve().parents[2],
        )
        one_line_error(p, url, f"python -m pip install {extra} (or")


# ---- faults: one line, exit 2, the location named, no hang -------------------------------------------
def test_azure_wrong_credentials(azurite):
    path = _uploaded(azurite, "idx", "verbs-v3", shared_index("verbs-v3"))
    wrong = AZURITE_KEY[:-8] + "AAAAAAA="
    line = one_line_error(
        run(["levels", f"az://{path}"], {**azurite.env(key=wrong), **FAULT_ENV}),
        f"az://{path}",
        "access denied",
    )
    assert wrong not in line and AZURITE_KEY not in line


@pytest.mark.emulator  # (starts its own emulator)
def test_s3_wrong_credentials():
    emu = start_moto(auth=True)  # moto checks the access key: the test's is unknown to it
    try:
        p = run(["levels", "s3://bkt/idx"], {**emu.env(), **FAULT_ENV})
    finally:
        emu.stop()
    line = one_line_error(p, "s3://bkt/idx", "access denied")
    assert S3_SECRET not in line


def test_missing_container_and_bucket(azurite, moto):
    one_line_error(
        run(["tree", "az://nosuchcontainer/idx"], {**azurite.env(), **FAULT_ENV}),
        "az://nosuchcontainer/idx",
        "no such container",
    )
    one_line_error(
        run(["tree", "s3://nosuchbucket/idx"], {**moto.env(), **FAULT_ENV}),
        "s3://nosuchbucket/idx",
        "no such container",
    )


def test_missing_table(azurite, moto):
    index = shared_index("verbs-v3")
    for emu, root, scheme in ((azurite, "idx", "az"), (moto, "bkt", "s3")):
        fs = emu.fs()
        for f in ("community_reports.parquet", "entities.parquet"):  # no communities table
            fs.put_file(str(index / f), f"{root}/no-communities/{f}")
        one_line_error(
            run(["levels", f"{scheme}://{root}/no-communities"], {**emu.env(), **FAULT_ENV}),
            f"{scheme}://{root}/no-communities",
            "no communities table",
        )
        fs.pipe_file(f"{root}/no-tables/notes.txt", b"not an index")  # a folder without any table
        one_line_error(
            run(["levels", f"{scheme}://{root}/no-tables"], {**emu.env(), **FAULT_ENV}),
            f"{scheme}://{root}/no-tables",
            "no GraphRAG index tables",
        )
    # a table that is not parquet: the file named, as for a local one
    fs = moto.fs()
    fs.pipe_file("bkt/not-parquet/communities.parquet", b"PAR1 this is not parquet" * 20_000)
    fs.put_file(str(index / "community_reports.parquet"), "bkt/not-parquet/community_reports.parquet")
    one_line_error(
        run(["levels", "s3://bkt/not-parquet"], {**moto.env(), **FAULT_ENV}),
        "s3://bkt/not-parquet/communities.parquet",
        "parquet",
    )


@pytest.mark.emulator  # (starts its own emulator)
@pytest.mark.parametrize("backend", ["azure", "s3"])
def test_emulator_stopped_mid_read(backend):
    emu = start_azurite() if backend == "azure" else start_moto()
    proxy = None
    try:
        fs = emu.fs()
        root = "drop"
        fs.mkdir(root)
        index = shared_index("real-insurance-v3")
        _upload(fs, index, f"{root}/idx")
        # stop the emulator once the listing and the first table's footer went through
        proxy = Proxy(emu.port, after_bytes=40_000, action=emu.stop)
        url = f"{'az' if backend == 'azure' else 's3'}://{root}/idx"
        p = run(["levels", url, "-f", "json"], {**emu.env(proxy.port), **FAULT_ENV}, timeout=90)
        assert proxy.fired.is_set() and emu.proc.poll() is not None  # it did stop in the middle
        one_line_error(p, url, "connection")
    finally:
        if proxy is not None:
            proxy.close()
        emu.stop()


@pytest.mark.parametrize("backend", ["azure", "s3"])
def test_slow_server_times_out(backend, azurite, moto):
    emu = azurite if backend == "azure" else moto
    proxy = Proxy(emu.port, stall=True)  # accepts, never answers
    try:
        url = f"{'az://idx' if backend == 'azure' else 's3://bkt'}/verbs-v3"
        p = run(["tree", url], {**emu.env(proxy.port), **FAULT_ENV}, timeout=90)
    finally:
        proxy.close()
    line = one_line_error(p, url)
    # stated truly (issue 39 section 4): the read's own seconds, at least the two tries of 2 s it
    # says it waited (before: "within 2 s" after 15 s and more)
    m = re.search(
        r"did not answer: 2 tries of a request got no reply within 2 s each "
        r"\(GRAPHRAG_AUDIT_REMOTE_TIMEOUT\); gave up after ([0-9.]+) s",
        line,
    )
    assert m, line
    assert float(m.group(1)) >= 4.0, line


# ---- column projection ---------------------------------------------------------------------------------
def test_only_needed_columns_are_fetched(moto):
    """pyarrow reads the footers and the needed column chunks: the entities' descriptions and the
    tables the audit never reads (relationships) stay on the server."""
    index = shared_index("real-insurance-v3")
    path = _uploaded(moto, "bkt", "real-insurance-v3", index)
    proxy = Proxy(moto.port)
    try:
        p = run(["levels", f"s3://{path}"], moto.env(proxy.port))
    finally:
        proxy.close()
    assert p.returncode in (0, 1), p.stderr
    read = sum((index / n).stat().st_size for n in ("communities.parquet", "community_reports.parquet"))
    descriptions = (index / "entities.parquet").stat().st_size
    assert proxy.sent < read + descriptions * 0.6, (proxy.sent, read, descriptions)


def test_progress_hears_each_file_read(moto, monkeypatch):
    """``load_index(..., progress)``: the callable (the CLI's progress bar) is told of each remote file
    before it is read; no module-level reporter."""
    from graphrag_audit.io.load import load_index

    path = _uploaded(moto, "bkt", "seed-v3", FIXTURES / "seed-v3")
    for key, value in moto.env().items():
        monkeypatch.setenv(key, value)
    heard: list[str] = []
    model = load_index(f"s3://{path}", progress=heard.append)
    assert len(model.communities) and heard
    assert all(h.startswith(f"reading s3://{path}/") for h in heard), heard
    assert {h.rsplit("/", 1)[-1] for h in heard} >= {"communities.parquet", "entities.parquet"}
    assert load_index(f"s3://{path}").levels == model.levels  # and without one


def test_a_timeout_is_never_called_not_found():
    """s3fs reports a listing that timed out as FileNotFoundError with the ReadTimeoutError in its text
    (seen in CI under load): the message says the server did not answer, not that nothing is there;
    a plain FileNotFoundError still says not found. No emulator needed."""
    from graphrag_audit.io.remote import fault_text, parse_url

    loc = parse_url("s3://bkt/verbs-v3")
    timed_out = FileNotFoundError(
        "The specified bucket does not exist (ReadTimeoutError: Read timeout on endpoint "
        'URL: "http://127.0.0.1:40451/bkt?list-type=2")'
    )
    assert fault_text(timed_out, loc).startswith("the server did not answer: ")
    assert fault_text(FileNotFoundError("bkt/verbs-v3"), loc).startswith("not found")
    assert fault_text(TimeoutError("timed out"), loc).startswith("the server did not answer: ")
