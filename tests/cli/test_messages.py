"""Issue 39 sections 2 and 4 (and issue 38's remote words): no credential in any line the tool
writes, and remote and update faults in one line of the user's words naming the user's path.

Every secret below is a made-up value; each test checks that it never appears on stdout or stderr
(the scrubber is graphrag_audit/sanitise/secrets.py), whatever command meets it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import synthetic
from test_locate import assert_one_line_error

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "fixtures" / "seed-v3"
PREFIX = "graphrag-audit: error: "

SAS_SIG = "SIGq1w2e3r4t5y6u7i8o9p0"
SAS_URL = (
    f"https://acct.blob.core.windows.net/c/idx?sv=2022-11-02&se=2030-01-01T00%3A00%3A00Z&sp=rl&sig={SAS_SIG}"
)
AZ_SIG = "AZSIGa1b2c3d4e5f6g7h8"
AZ_URL = f"az://c/idx?sv=2022-11-02&sp=rl&sig={AZ_SIG}"
S3_USER_SECRET = "S3SECRETuserinfo0987654321"
S3_URL = f"s3://AKIAEXAMPLEKEYID:{S3_USER_SECRET}@bucket/idx"
LIST_KEY = "LISTACCOUNTKEYzxcvbnm0987=="
BASE_SIG = "BASEDIRSIGpoiuytrewq123"
ENV_SECRET = "ENVSECRETmnbvcxz0123456"


def _env(extra: dict | None = None) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "AWS_", "GRAPHRAG_AUDIT_REMOTE"))}
    e.update(
        {
            "PYTHONPATH": str(ROOT),
            "NO_COLOR": "1",
            "COLUMNS": "120",
            # never reach a real service: a closed local port, short timeouts
            "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
            "AWS_ACCESS_KEY_ID": "x",
            "AWS_SECRET_ACCESS_KEY": ENV_SECRET,
            "AWS_DEFAULT_REGION": "us-east-1",
            "GRAPHRAG_AUDIT_REMOTE_TIMEOUT": "2",
        }
    )
    e.update(extra or {})
    return e


def run(*args, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(env),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )


# ---- the scrubber itself ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, secrets",
    [
        (SAS_URL, [SAS_SIG, "2030-01-01", "sp=rl"]),
        (AZ_URL, [AZ_SIG]),
        (S3_URL, [S3_USER_SECRET, "AKIAEXAMPLEKEYID"]),
        (S3_URL.replace("s3://", "s3:/"), [S3_USER_SECRET]),  # as pathlib folds it
        (
            f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={LIST_KEY};EndpointSuffix=core.windows.net",
            [LIST_KEY],
        ),
        (
            f"['BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig={SAS_SIG}']",
            [SAS_SIG],
        ),
        (
            f"https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2F20300101&X-Amz-Signature={SAS_SIG}",
            [SAS_SIG],
        ),
        (f"Authorization: Bearer {SAS_SIG}", [SAS_SIG]),
    ],
)
def test_scrub_removes_every_form(text, secrets):
    from graphrag_audit.sanitise.secrets import scrub

    out = scrub(text)
    for s in secrets:
        assert s not in out, out
    assert "***" in out
    assert scrub(out) == out  # scrubbing twice changes nothing (errors are scrubbed, then their line)


def test_scrub_knows_the_credential_variables_and_keeps_ordinary_text(monkeypatch):
    from graphrag_audit.sanitise.secrets import scrub

    for name in (
        "AZURE_STORAGE_KEY",
        "AZURE_STORAGE_CONNECTION_STRING",
        "AZURE_STORAGE_SAS_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AZURE_CLIENT_SECRET",
    ):
        monkeypatch.setenv(name, ENV_SECRET + name)
        assert ENV_SECRET + name not in scrub(f"/data/{ENV_SECRET}{name}/output: no such directory")
    # an abfs URL's container@account is not a credential; ordinary paths and words stay
    for keep in (
        "abfss://container@acct.dfs.core.windows.net/idx",
        "/tmp/proj/output: no such directory",
        "C:/Users/me/proj",
        "settings.yaml output.base_dir 'out' (graphrag 2.x)",
    ):
        assert scrub(keep) == keep


# ---- every command's error path: the secret never printed ---------------------------------------------
def _project(tmp_path: Path, name: str, settings: str) -> Path:
    p = tmp_path / name
    p.mkdir()
    (p / "settings.yaml").write_text(settings, encoding="utf-8")
    return p


def _forms(tmp_path: Path) -> list[tuple[str, str, dict]]:
    """(DIR argument, the secret it holds, extra environment)."""
    listed = _project(
        tmp_path,
        "listed",
        "output:\n  type: blob\n  connection_string: "
        f'["DefaultEndpointsProtocol=https;AccountName=a;AccountKey={LIST_KEY}"]\n'
        "  container_name: c\n  base_dir: out\n",
    )
    based = _project(
        tmp_path, "based", f'output_storage:\n  type: file\n  base_dir: "az://c/out?sv=1&sig={BASE_SIG}"\n'
    )
    return [
        (SAS_URL, SAS_SIG, {}),
        (AZ_URL, AZ_SIG, {}),
        (S3_URL, S3_USER_SECRET, {}),
        (str(listed), LIST_KEY, {}),
        (str(based), BASE_SIG, {}),
        # the value of a credential variable, wherever it shows up (here in a folder name)
        (str(tmp_path / f"no-{ENV_SECRET}"), ENV_SECRET, {}),
    ]


def _commands(arg: str, tmp_path: Path) -> list[list[str]]:
    return [
        ["levels", arg],
        ["levels", arg, "-f", "json"],
        ["tree", arg],
        ["plan", arg, "--reports", "3"],
        ["plan", arg, "--reports", "3", "--write", str(tmp_path / "w")],
        ["report", arg, "-o", "-"],
        ["bundle", arg, "-o", str(tmp_path / "b")],
        ["diff", arg, str(SEED)],
        ["diff", str(SEED), arg],
        ["update-run", arg],
        ["levels", str(SEED), "--baseline", arg],
        ["explain", arg],
    ]


def test_no_secret_in_any_command_error(tmp_path):
    for arg, secret, env in _forms(tmp_path):
        for cmd in _commands(arg, tmp_path):
            p = run(*cmd, env=env)
            assert secret not in p.stdout + p.stderr, (cmd, p.stderr)
            assert p.returncode == 2 and "Traceback" not in p.stderr, (cmd, p.returncode, p.stderr)
            assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith(PREFIX), (cmd, p.stderr)


def test_a_url_with_credentials_or_a_sas_query_is_refused_in_words():
    line = assert_one_line_error(run("levels", S3_URL), "s3://***@bucket/idx", "credentials in the URL")
    assert S3_USER_SECRET not in line
    line = assert_one_line_error(run("tree", AZ_URL), "az://c/idx?", "sig=***", "SAS")
    assert AZ_SIG not in line


def test_a_listed_connection_string_is_not_shown(tmp_path):
    p = _forms(tmp_path)[3][0]
    line = assert_one_line_error(
        run("levels", p), "settings.yaml", "connection_string must be text, not a list"
    )
    assert "AccountKey" not in line and LIST_KEY[:8] not in line


# ---- the outputs that print a location --------------------------------------------------------------
@pytest.mark.parametrize(
    "cmd",
    [
        ["levels", "-f", "json"],
        ["levels", "-f", "markdown", "--include-titles"],
        ["levels", "-f", "github", "--include-titles"],
        ["levels"],
        ["tree"],
        ["plan", "--reports", "3", "-f", "json"],
        ["plan", "--reports", "3"],
    ],
)
def test_no_secret_in_a_printed_location(tmp_path, cmd):
    """A folder whose path holds a credential variable's value: every header and JSON location
    printed shows it scrubbed."""
    where = tmp_path / f"idx-{ENV_SECRET}"
    where.symlink_to(SEED)
    p = run(cmd[0], where, *cmd[1:])
    assert p.returncode in (0, 1), p.stderr
    assert ENV_SECRET not in p.stdout + p.stderr
    assert "idx-" in p.stdout  # the location is printed, scrubbed


# ---- remote and update faults in the user's words ---------------------------------------------------------
def test_plan_write_on_a_remote_index_says_it_needs_a_local_folder(tmp_path):
    line = assert_one_line_error(
        run("plan", "s3://good/idx", "--reports", "3", "--write", tmp_path / "w"),
        "s3://good/idx: --write needs a local index folder",
        "Amazon S3",
    )
    assert "graphrag-audit-remote" not in line and "symbolic link" not in line
    assert not (tmp_path / "w").exists()


def test_update_run_on_a_remote_url_names_it():
    line = assert_one_line_error(
        run("update-run", "s3://good/idx"), "s3://good/idx: update-run reads local folders"
    )
    assert "s3:/good" not in line.replace("s3://good", "")


def test_bundle_of_a_remote_index_says_local_folders_only(tmp_path):
    assert_one_line_error(
        run("bundle", "s3://good/idx", "-o", tmp_path / "b"),
        "s3://good/idx: bundle reads local index folders only",
    )


def test_bundle_of_a_refused_index_names_the_source_file(tmp_path):
    import pyarrow.parquet as pq

    src = tmp_path / "idx"
    synthetic.write_index(synthetic.leiden_like(40, seed=3), src, "3.x", text_units=False)
    pq.write_table(pq.read_table(src / "communities.parquet").drop(["level"]), src / "communities.parquet")
    levels = assert_one_line_error(
        run("levels", src), f"{src / 'communities.parquet'}: required column 'level'"
    )
    line = assert_one_line_error(
        run("bundle", src, "-o", tmp_path / "out"), f"{src / 'communities.parquet'}: "
    )
    assert ".graphrag-audit-" not in line and line == levels
    assert not (tmp_path / "out").exists()


def _env_project(tmp_path: Path, dotenv: str | None) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "out").symlink_to(SEED)
    (root / "settings.yaml").write_text("output:\n  type: file\n  base_dir: ${OUTDIR}\n", encoding="utf-8")
    if dotenv is not None:
        (root / ".env").write_text(dotenv, encoding="utf-8")
    return root


def test_a_fifo_env_file_is_named_not_taken_as_absent(tmp_path):
    root = _env_project(tmp_path, None)
    os.mkfifo(root / ".env")
    line = assert_one_line_error(run("levels", root, timeout=60), f"{root / '.env'}: ", "FIFO")
    assert "there is no" not in line


def test_an_unterminated_quote_in_env_is_one_line(tmp_path):
    root = _env_project(tmp_path, 'BAD="unterminated\n')
    assert_one_line_error(run("levels", root), "settings.yaml", "${OUTDIR}", f"{root / '.env'}", "line 1")
    # the variable set after the bad line: python-dotenv skips that line, as graphrag does, and says nothing
    (root / ".env").write_text('BAD="unterminated\nOUTDIR=out\n', encoding="utf-8")
    p = run("levels", root)
    assert p.returncode in (0, 1) and p.stderr == "", p.stderr


@pytest.mark.parametrize("part", ["previous", "delta"])
def test_a_looping_link_in_an_update_run_is_an_error(tmp_path, part):
    root = tmp_path / "p"
    run_dir = root / "update_output" / "20250301-101500"
    synthetic.write_index(synthetic.leiden_like(40, seed=6), root / "output", "3.x", text_units=False)
    other = "delta" if part == "previous" else "previous"
    synthetic.write_index(synthetic.leiden_like(40, seed=6), run_dir / other, "3.x", text_units=False)
    (run_dir / part).symlink_to(part)  # a link to itself
    for arg in (root, run_dir):
        assert_one_line_error(run("update-run", arg), f"{run_dir / part}: broken or looping symbolic link")
