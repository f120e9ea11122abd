"""The product as a user installs it (issue 38), run by .ci/run before the test suite.

1. A fresh virtual environment with ``pip install .`` (no extras) from this checkout runs every
   command once on ``fixtures/``: levels and tree in every format, plan (and ``plan --write`` into
   a temporary folder), report, explain, bundle, diff (a fixture pair) and update-run (a layout
   made of fixtures). Each must exit 0 or 1, with no "internal error" and no traceback on stderr.
   Two of issue 39's guarantees as installed: a bundle of the seed example with a marker word in
   every free text holds no byte of it; a location with a credential is refused (exit 2, one line)
   without printing it; a FIFO as --baseline is refused unread; ``-o`` onto the settings file or
   the .env the run read is refused and leaves them as they were.
2. ``pip install '.[azure]'`` and ``'.[s3]'``, each alone in its own fresh environment: the same
   ``levels -f json`` as step 1's, read from Azurite / moto's S3 server, must print the same output;
   a location of that storage with a credential in it is refused without printing it.
3. ``pip install '.[lancedb]'`` alone: on a copy of fixtures/seed-v3 with a LanceDB store lacking one
   report's embedding, ``levels -f json`` names that report (drift-missing-embeddings) and changes nothing.

The tool under test runs from those environments only (their ``graphrag-audit`` script, in a
working folder outside the checkout, without PYTHONPATH). The emulators and the uploads run from
this interpreter, which needs the test extra (moto[server], adlfs, s3fs; Azurite from npm, found
as tests/remote_emulators.py finds it: GRAPHRAG_AUDIT_AZURITE).

    python .ci/installed_smoke.py [--keep]   # exit 0: all passed; 1: something failed (listed)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures"
PIP_TIMEOUT = 1200
RUN_TIMEOUT = 300

failures: list[str] = []
#: the token cache of the runs (a folder of the run's temporary directory, not the user's cache)
cache_dir: list[Path] = []


def say(msg: str) -> None:
    print(f"smoke: {msg}", flush=True)


def fail(what: str, detail: str = "") -> None:
    failures.append(what)
    say(f"FAIL {what}")
    for line in detail.strip().splitlines()[-15:]:
        say(f"  | {line}")


def make_env(tmp: Path, name: str, spec: str) -> Path | None:
    """A fresh virtual environment with ``pip install SPEC`` (tried twice); its bin folder, or None."""
    home = tmp / name
    log = tmp / f"{name}.log"
    for attempt in (1, 2):
        shutil.rmtree(home, ignore_errors=True)
        start = time.monotonic()
        with open(log, "a", encoding="utf-8") as out:
            try:
                venv.EnvBuilder(with_pip=True, clear=True).create(home)
                bindir = home / ("Scripts" if os.name == "nt" else "bin")
                proc = subprocess.run(
                    [str(bindir / "python"), "-m", "pip", "install", "-q", spec],
                    check=False,
                    cwd=ROOT,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=PIP_TIMEOUT,
                    env=clean_env(),
                )
                ok = proc.returncode == 0
            except (OSError, subprocess.SubprocessError) as exc:
                out.write(f"{type(exc).__name__}: {exc}\n")
                ok = False
        if ok:
            say(f"ok   pip install '{spec}' into a fresh venv ({time.monotonic() - start:.0f} s)")
            return bindir
        if attempt == 1:
            say(f"pip install '{spec}' failed; retrying once")
            time.sleep(5)
    fail(
        f"pip install '{spec}' into a fresh virtual environment failed twice", log.read_text(errors="replace")
    )
    return None


def clean_env(extra: dict | None = None) -> dict:
    """No PYTHONPATH (the checkout must not be imported), no credentials or tool settings from outside."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "COLUMNS")
        and not k.startswith(("GRAPHRAG_AUDIT_", "AZURE_", "AWS_"))
    }
    env["NO_COLOR"] = "1"
    if cache_dir:
        env["GRAPHRAG_AUDIT_CACHE_DIR"] = str(cache_dir[0])
    env.update(extra or {})
    return env


def run_tool(
    bindir: Path, args: list, work: Path, env_extra: dict | None = None
) -> subprocess.CompletedProcess | None:
    """Run the environment's graphrag-audit; None (and a failure) unless it exits 0 or 1 with a clean stderr."""
    cmd = [str(bindir / "graphrag-audit"), *map(str, args)]
    shown = "graphrag-audit " + " ".join(
        str(a).replace(str(FIX), "fixtures").replace(str(work), "$TMP") for a in args
    )
    start = time.monotonic()
    try:
        proc = subprocess.run(
            cmd,
            check=False,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            env=clean_env(env_extra),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        fail(shown, f"{type(exc).__name__}: {exc}")
        return None
    bad = [w for w in ("internal error", "Traceback") if w in proc.stderr]
    if proc.returncode not in (0, 1) or bad:
        fail(
            f"{shown}: exit {proc.returncode}" + (f", {' and '.join(bad)} on stderr" if bad else ""),
            proc.stderr,
        )
        return None
    say(f"ok   {shown} (exit {proc.returncode}, {time.monotonic() - start:.1f} s)")
    return proc


def check(what: str, condition: bool, detail: str = "") -> None:
    if condition:
        say(f"ok   {what}")
    else:
        fail(what, detail)


def json_out(proc: subprocess.CompletedProcess | None) -> None:
    """A -f json run's stdout is one JSON document."""
    if proc is None:
        return
    try:
        json.loads(proc.stdout)
    except ValueError as exc:
        fail(
            f"{' '.join(proc.args[1:3])} -f json: stdout is not one JSON document ({exc})", proc.stdout[:2000]
        )


def base_install(tmp: Path, work: Path) -> tuple[Path, str | None] | None:
    """Step 1; returns the environment's bin folder and the local ``levels -f json`` output (with
    the index path as <INDEX>) for step 2."""
    bindir = make_env(tmp, "venv-base", ".")
    if bindir is None:
        return None
    where = subprocess.run(
        [str(bindir / "python"), "-c", "import graphrag_audit; print(graphrag_audit.__file__)"],
        check=False,
        cwd=work,
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    check(
        "the installed package is imported, not the checkout's",
        where.returncode == 0 and Path(where.stdout.strip()).is_relative_to(tmp / "venv-base"),
        where.stdout + where.stderr,
    )

    seed = FIX / "seed-v3"
    levels_json = None
    for fmt in ("text", "json", "markdown", "github"):
        p = run_tool(bindir, ["levels", seed, "-f", fmt], work)
        if fmt == "json":
            levels_json = p
            json_out(p)
    for layout in ("seed-v1", "seed-v05", "seed-v01", "seed-v3-csv", "small-leiden-v3"):  # every reader
        run_tool(bindir, ["levels", FIX / layout], work)
    for fmt in ("text", "mermaid", "dot", "graphml", "json"):
        p = run_tool(bindir, ["tree", seed, "-f", fmt, "--level", "1"], work)
        if fmt == "json":
            json_out(p)
    for fmt in ("text", "json", "markdown"):
        p = run_tool(bindir, ["plan", seed, "--reports", "4", "-f", fmt], work)
        if fmt == "json":
            json_out(p)
    if run_tool(bindir, ["plan", seed, "--reports", "4", "--write", work / "plan-out"], work) is not None:
        check(
            "plan --write wrote a community_reports table",
            (work / "plan-out" / "community_reports.parquet").is_file(),
        )
    if run_tool(bindir, ["report", seed, "-o", work / "report.html"], work) is not None:
        check(
            "report wrote its HTML file",
            (work / "report.html").is_file()
            and (work / "report.html")
            .read_text(encoding="utf-8")
            .lstrip()
            .lower()
            .startswith("<!doctype html"),
        )
    run_tool(bindir, ["explain"], work)
    run_tool(bindir, ["explain", "v2-inflation"], work)
    if run_tool(bindir, ["bundle", seed, "-o", work / "bundle"], work) is not None:
        run_tool(bindir, ["levels", work / "bundle"], work)  # the bundle reads back
    bundle_leaks_nothing(bindir, seed, work)
    reads_bounded_writes_guarded(bindir, seed, work)
    refused_without_secret(bindir, work, ["levels", f"s3://AKIASMOKEKEYID:{SECRET}@bucket/proj"])
    # a fixture pair: the seed example, then the same index with one report missing
    for fmt in ("text", "json", "markdown", "github"):
        p = run_tool(bindir, ["diff", seed, FIX / "defects" / "missing-report", "-f", fmt], work)
        if fmt == "json":
            json_out(p)
    # one `graphrag update` run (>= 2.0 layout) made of fixtures: previous and delta are the seed
    # example, the merged output its two-forests defect (the seed forest and a second copy numbered
    # from the previous maximum + 1, as graphrag's merge numbers a delta)
    project = work / "update-project"
    run_dir = project / "update_output" / "20250301-101500"
    shutil.copytree(FIX / "defects" / "two-forests", project / "output")
    shutil.copytree(seed, run_dir / "previous")
    shutil.copytree(seed, run_dir / "delta")
    for fmt in ("text", "json"):
        p = run_tool(bindir, ["update-run", project, "-f", fmt], work)
        if fmt == "json":
            json_out(p)
    local_json = levels_json.stdout.replace(str(seed), "<INDEX>") if levels_json is not None else None
    return bindir, local_json


#: a credential that must never be printed (issue 39: no secret in any message)
SECRET = "SmokeSecretValue0123456789"
#: a word put into every free-text value of a copy of the seed example; bundle must not carry it
MARKER = "ZORBLAXSMOKEMARKER"


def bundle_leaks_nothing(bindir: Path, seed: Path, work: Path) -> None:
    """bundle of a copy of the seed example whose free text holds MARKER: no byte of OUT holds it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    marked, out = work / "marked-seed", work / "marked-bundle"
    shutil.copytree(seed, marked)
    for f in marked.glob("*.parquet"):
        table = pq.read_table(f)
        for name in ("title", "description", "summary", "full_content", "text", "rating_explanation"):
            if name in table.column_names and pa.types.is_string(table.schema.field(name).type):
                values = [None if v is None else f"{v} {MARKER}" for v in table.column(name).to_pylist()]
                table = table.set_column(table.column_names.index(name), name, pa.array(values, pa.string()))
        pq.write_table(table, f)
    if run_tool(bindir, ["bundle", marked, "-o", out], work) is None:
        return
    leaked = [
        str(p.relative_to(out))
        for p in sorted(out.rglob("*"))
        if p.is_file() and MARKER.encode() in p.read_bytes()
    ]
    check("bundle OUT holds no byte of the index's free text", not leaked, f"found in: {leaked}")


def reads_bounded_writes_guarded(bindir: Path, seed: Path, work: Path) -> None:
    """A FIFO as --baseline is refused, not read (a read would hang); ``-o`` onto the settings file and
    the .env the same run read is refused and leaves both as they were."""
    fifo = work / "baseline.fifo"
    os.mkfifo(fifo)
    expect_refusal(bindir, work, ["levels", seed, "--baseline", fifo], "a FIFO as --baseline")
    project = work / "guarded-project"
    shutil.copytree(seed, project / "output")
    settings = "output_storage:\n  type: file\n  base_dir: ${OUT_DIR}\n"
    (project / "settings.yaml").write_text(settings, encoding="utf-8")
    (project / ".env").write_text("OUT_DIR=output\n", encoding="utf-8")
    for name in ("settings.yaml", ".env"):
        expect_refusal(
            bindir,
            work,
            ["levels", project, "-f", "json", "-o", project / name],
            f"-o onto the {name} the run read",
        )
    check(
        "the settings file and the .env are as they were",
        (project / "settings.yaml").read_text(encoding="utf-8") == settings
        and (project / ".env").read_text(encoding="utf-8") == "OUT_DIR=output\n",
    )


def expect_refusal(bindir: Path, work: Path, args: list, what: str) -> None:
    """One line on stderr, exit 2, within a minute."""
    try:
        proc = subprocess.run(
            [str(bindir / "graphrag-audit"), *map(str, args)],
            check=False,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env(),
        )
    except subprocess.TimeoutExpired:
        fail(f"{what}: no answer within 60 s")
        return
    check(
        f"{what}: exit 2, one line",
        proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1,
        f"exit {proc.returncode}\n{proc.stderr}",
    )


def refused_without_secret(bindir: Path, work: Path, args: list, env_extra: dict | None = None) -> None:
    """A location carrying a credential: one line on stderr, exit 2, the credential printed nowhere."""
    shown = "graphrag-audit " + " ".join(a.replace(SECRET, "<SECRET>") for a in map(str, args))
    try:
        proc = subprocess.run(
            [str(bindir / "graphrag-audit"), *map(str, args)],
            check=False,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            env=clean_env(env_extra),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        fail(shown, f"{type(exc).__name__}: {exc}")
        return
    check(
        f"{shown}: exit 2, one line, the credential nowhere",
        proc.returncode == 2
        and len(proc.stderr.strip().splitlines()) == 1
        and SECRET not in proc.stdout + proc.stderr,
        f"exit {proc.returncode}\n" + (proc.stdout + proc.stderr).replace(SECRET, "<SECRET!>"),
    )


#: the one difference between a remote read and the local read of the same index (io/vector_store.py)
REMOTE_PREFLIGHT = ("the index is not on a local disk", "no LanceDB folder at the vector store's db_uri")


def remote_install(tmp: Path, work: Path, extra: str, local_json: str | None) -> None:
    """Step 2 for one extra: upload fixtures/seed-v3 to its emulator, read it from the extra's venv."""
    bindir = make_env(tmp, f"venv-{extra}", f".[{extra}]")
    if bindir is None:
        return
    sys.path.insert(0, str(ROOT / "tests"))
    import remote_emulators as emus

    seed = FIX / "seed-v3"
    try:  # the emulators' start-up reports through pytest.fail/skip (BaseException subclasses)
        emu = emus.start_azurite() if extra == "azure" else emus.start_moto()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - one failure line, then the other checks
        fail(f"the {extra} emulator could not be started", f"{type(exc).__name__}: {exc}")
        return
    try:
        fs = emu.fs()
        fs.mkdir("smoke")
        for f in sorted(seed.iterdir()):
            fs.put_file(str(f), f"smoke/seed-v3/{f.name}")
        url = ("az://" if extra == "azure" else "s3://") + "smoke/seed-v3"
        p = run_tool(bindir, ["levels", url, "-f", "json"], work, emu.env())
        # a location carrying a credential is refused without printing it, through the extra's reader
        refused_without_secret(
            bindir,
            work,
            [
                "levels",
                (
                    f"az://smoke/seed-v3?sv=2024-01-01&sig={SECRET}"
                    if extra == "azure"
                    else f"s3://AKIASMOKEKEYID:{SECRET}@smoke/seed-v3"
                ),
            ],
            emu.env(),
        )
        if p is not None:
            check(
                f"levels {url} -f json from the '.[{extra}]' venv prints what the local read prints",
                local_json is not None
                # DRIFT's embeddings preflight reads local LanceDB folders only: NOT RUN in both, for its reason
                and p.stdout.replace(url, "<INDEX>").replace(*REMOTE_PREFLIGHT) == local_json,
                p.stdout[:2000],
            )
    except Exception as exc:  # noqa: BLE001 - an upload failure: one line, then the other checks
        fail(f"{extra}: uploading fixtures/seed-v3 to the emulator failed", f"{type(exc).__name__}: {exc}")
    finally:
        emu.stop()


#: writes a LanceDB store for an index copy with every report's full_content embedding but one level-0 report's
LANCEDB_STORE = """
import os, sys, lancedb, pyarrow.parquet as pq
index = sys.argv[1]
rows = pq.read_table(os.path.join(index, "community_reports.parquet"), columns=["id", "level"]).to_pylist()
gone = next(str(r["id"]) for r in rows if r["level"] == 0)  # in DRIFT's pool at --level 0
db = lancedb.connect(os.path.join(index, "lancedb"))
db.create_table("community_full_content", data=[{"id": str(r["id"]), "vector": [0.1, 0.2]} for r in rows if str(r["id"]) != gone])
print(gone, flush=True)
os._exit(0)
"""


def lancedb_install(tmp: Path, work: Path) -> None:
    """``'.[lancedb]'`` alone: DRIFT's preflight reads a real store and names the one report it lacks."""
    bindir = make_env(tmp, "venv-lancedb", ".[lancedb]")
    if bindir is None:
        return
    index = work / "seed-v3-lancedb"
    shutil.copytree(FIX / "seed-v3", index)
    made = subprocess.run(
        [str(bindir / "python"), "-c", LANCEDB_STORE, str(index)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    if made.returncode != 0:
        fail("writing a LanceDB store with the '.[lancedb]' venv's lancedb", made.stderr)
        return
    gone = made.stdout.split()[-1]
    before = sorted((str(p), p.stat().st_mtime_ns) for p in index.rglob("*"))
    p = run_tool(bindir, ["levels", index, "-f", "json", "--level", "0"], work)
    if p is not None:
        found = [f for f in json.loads(p.stdout)["findings"] if f["rule"] == "drift-missing-embeddings"]
        check(
            "levels -f json from the '.[lancedb]' venv: drift-missing-embeddings names the report without an embedding",
            len(found) == 1 and found[0]["evidence"]["missing_ids"].get("3.x") == [gone],
            p.stdout[-2000:],
        )
    after = sorted((str(p), p.stat().st_mtime_ns) for p in index.rglob("*"))
    check("the '.[lancedb]' venv's audit left the index and its LanceDB folder unchanged", before == after)


def main(argv: list[str]) -> int:
    keep = "--keep" in argv
    start = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="graphrag-audit-smoke-")).resolve()
    work = tmp / "work"
    work.mkdir()
    cache_dir.append(tmp / "token-cache")
    say(f"fresh virtual environments in {tmp}")
    try:
        base = base_install(tmp, work)
        local_json = base[1] if base else None
        for extra in ("azure", "s3"):
            remote_install(tmp, work, extra, local_json)
        lancedb_install(tmp, work)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    took = time.monotonic() - start
    if failures:
        say(f"{len(failures)} failed ({took:.0f} s):")
        for f in failures:
            say(f"  - {f}")
        return 1
    say(f"all passed ({took:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
