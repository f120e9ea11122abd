"""Helpers for the hostile-input suite: a valid graphrag 3.x index written column by column with
pyarrow (so any column can be given any type), damage helpers, a read-only snapshot of a
directory, and a CLI runner with a timeout and an address-space limit.

Everything here is independent of graphrag_audit: the index is written with pyarrow/csv only.
"""

from __future__ import annotations

import csv
import hashlib
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
GIB = 1024**3

# ---- the base tree ------------------------------------------------------------------------
#: community -> (level, parent, entity ids). Two roots, each split in two leaves at level 1.
#: A clean graphrag 3.x tree: levels contiguous, child ⊆ parent, children cover the parent,
#: child number > parent number, one report per community.
BASE_TREE: dict[int, tuple[int, int, list[str]]] = {
    0: (0, -1, ["e1", "e2", "e3"]),
    1: (0, -1, ["e4", "e5"]),
    2: (1, 0, ["e1", "e2"]),
    3: (1, 0, ["e3"]),
    4: (1, 1, ["e4"]),
    5: (1, 1, ["e5"]),
}
BASE_ENTITIES = ["e1", "e2", "e3", "e4", "e5"]
#: command-line options under which BASE_TREE has no finding at all (hand-checked: at level 1
#: >= 2.0 sends 6 reports, < 2.0 sends the 4 leaves, ratio 1.5 < 2; every root and entity
#: reaches level 1; no single-child community).
BASE_ARGS = ["--level", "1", "--list-reports", "--max-inflation", "2", "--no-costs"]


# ---- the case harness shared by test_hostile.py and test_hostile_reads.py -------------------
JSON_ARGS = [*BASE_ARGS, "-f", "json"]
ERROR_PREFIX = "graphrag-audit: error: "


#: findings about the tree's dynamic selection rather than the input's damage: the hostile cases leave
#: them out of their expected sets (tests/analysis/test_dynamic_audit.py covers them)
TREE_SEMANTICS = frozenset({"dynamic-no-descent", "dynamic-unreachable"})


@dataclass(frozen=True)
class Expect:
    code: int
    findings: frozenset[str] | None = None  # exact rule ids (exit 0/1, read from -f json)
    file: str | None = None  # exit 2: the path named, relative to the case folder
    problem: str | None = None  # exit 2: regex for the problem (after "<path>: ")


def ok(*rules: str, code: int | None = None) -> Expect:
    """Audits; ``code`` defaults to 0 (only warnings/infos fail nothing under --fail-on error)."""
    return Expect(0 if code is None else code, frozenset(rules))


def err(file: str, problem: str) -> Expect:
    return Expect(2, None, file, problem)


@dataclass
class Built:
    index: Path  # the DIR argument
    args: list = field(default_factory=lambda: list(JSON_ARGS))
    env: dict = field(default_factory=dict)  # added to the child's environment
    drop_dac: bool = False  # obey permission bits although root (see permission_bits_apply)
    skip: str | None = None
    base: Path | None = None  # folder that Expect.file is relative to (default: the case folder)
    created: list = field(default_factory=list)  # files the command must create (outside the index)
    not_created: list = field(default_factory=list)


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], Built]
    expect: Expect
    doc: str


@dataclass
class Outcome:
    """One case's run: what was built, the CLI result, the case folder before and after."""

    built: Built
    result: object
    before: dict
    after: dict
    case_dir: Path


class CaseRegistry(dict):
    """name -> :class:`Case`; ``@registry.case(expect, doc)`` registers a builder ``c_some_name``
    as ``some-name``."""

    def case(self, expect: Expect, doc: str):
        def deco(fn):
            name = fn.__name__.removeprefix("c_").replace("_", "-")
            self[name] = Case(name, fn, expect, doc)
            return fn

        return deco


COMMUNITY_TYPES = {
    "id": pa.string(),
    "human_readable_id": pa.int64(),
    "community": pa.int64(),
    "level": pa.int64(),
    "parent": pa.int64(),
    "children": pa.list_(pa.int64()),
    "title": pa.string(),
    "entity_ids": pa.list_(pa.string()),
    "relationship_ids": pa.list_(pa.string()),
    "text_unit_ids": pa.list_(pa.string()),
    "period": pa.string(),
    "size": pa.int64(),
}
REPORT_TYPES = {
    "id": pa.string(),
    "human_readable_id": pa.int64(),
    "community": pa.int64(),
    "level": pa.int64(),
    "parent": pa.int64(),
    "children": pa.list_(pa.int64()),
    "title": pa.string(),
    "summary": pa.string(),
    "full_content": pa.string(),
    "rank": pa.float64(),
    "rating_explanation": pa.string(),
    "findings": pa.list_(pa.struct([("explanation", pa.string()), ("summary", pa.string())])),
    "full_content_json": pa.string(),
    "period": pa.string(),
    "size": pa.int64(),
}
ENTITY_TYPES = {
    "id": pa.string(),
    "human_readable_id": pa.int64(),
    "title": pa.string(),
    "type": pa.string(),
    "description": pa.string(),
    "text_unit_ids": pa.list_(pa.string()),
    "frequency": pa.int64(),
    "degree": pa.int64(),
}
TABLE_FILES = {"communities": "communities", "reports": "community_reports", "entities": "entities"}
TABLE_TYPES = {"communities": COMMUNITY_TYPES, "reports": REPORT_TYPES, "entities": ENTITY_TYPES}


def community_columns(tree: dict | None = None) -> dict[str, list]:
    tree = BASE_TREE if tree is None else tree
    cs = list(tree)
    return {
        "id": [f"uuid-c{c}" for c in cs],
        "human_readable_id": list(cs),
        "community": list(cs),
        "level": [tree[c][0] for c in cs],
        "parent": [tree[c][1] for c in cs],
        "children": [sorted(k for k in cs if tree[k][1] == c) for c in cs],
        "title": [f"Community {c}" for c in cs],
        "entity_ids": [list(tree[c][2]) for c in cs],
        "relationship_ids": [[] for _ in cs],
        "text_unit_ids": [["t1"] for _ in cs],
        "period": ["2026-01-09" for _ in cs],
        "size": [len(tree[c][2]) for c in cs],
    }


def report_columns(tree: dict | None = None) -> dict[str, list]:
    tree = BASE_TREE if tree is None else tree
    cs = list(tree)
    return {
        "id": [f"uuid-r{c}" for c in cs],
        "human_readable_id": list(cs),
        "community": list(cs),
        "level": [tree[c][0] for c in cs],
        "parent": [tree[c][1] for c in cs],
        "children": [sorted(k for k in cs if tree[k][1] == c) for c in cs],
        "title": [f"Report {c}" for c in cs],
        "summary": [f"Summary of community {c}." for c in cs],
        "full_content": [f"# Report {c}\n\nSummary of community {c}." for c in cs],
        "rank": [5.0 for _ in cs],
        "rating_explanation": ["average" for _ in cs],
        "findings": [[{"explanation": "x", "summary": "y"}] for _ in cs],
        "full_content_json": ["{}" for _ in cs],
        "period": ["2026-01-09" for _ in cs],
        "size": [len(tree[c][2]) for c in cs],
    }


def entity_columns(entities: list[str] | None = None) -> dict[str, list]:
    es = BASE_ENTITIES if entities is None else entities
    return {
        "id": list(es),
        "human_readable_id": list(range(len(es))),
        "title": [e.upper() for e in es],
        "type": ["THING" for _ in es],
        "description": ["d" for _ in es],
        "text_unit_ids": [["t1"] for _ in es],
        "frequency": [1 for _ in es],
        "degree": [1 for _ in es],
    }


@dataclass
class Index:
    """Column data of the three 3.x tables; ``types`` overrides arrow types per (table, column)."""

    communities: dict[str, list] | None
    reports: dict[str, list] | None
    entities: dict[str, list] | None
    types: dict[tuple[str, str], pa.DataType | None]

    @classmethod
    def base(cls, tree: dict | None = None, entities: list[str] | None = None) -> Index:
        return cls(community_columns(tree), report_columns(tree), entity_columns(entities), {})

    def table(self, name: str) -> dict[str, list] | None:
        return getattr(self, name)

    def arrow(self, name: str) -> pa.Table:
        cols = self.table(name)
        defaults = TABLE_TYPES[name]
        arrays = {}
        for col, values in cols.items():
            if isinstance(values, (pa.Array, pa.ChunkedArray)):
                arrays[col] = values
                continue
            typ = self.types.get((name, col), defaults.get(col))
            arrays[col] = pa.array(values, type=typ)
        return pa.table(arrays)

    def write(self, out: Path, fmt: str = "parquet") -> Path:
        out.mkdir(parents=True, exist_ok=True)
        for name, stem in TABLE_FILES.items():
            if self.table(name) is None:
                continue
            if fmt == "parquet":
                pq.write_table(self.arrow(name), out / f"{stem}.parquet")
            else:
                write_csv(out / f"{stem}.csv", self.table(name))
        return out


def csv_cell(v) -> str:
    """graphrag 3 CSV: lists as their Python repr, None as an empty cell."""
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return repr(list(v))
    return str(v)


def write_csv(path: Path, cols: dict[str, list]) -> None:
    names = list(cols)
    n = len(next(iter(cols.values()))) if cols else 0
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(names)
        for i in range(n):
            w.writerow([csv_cell(cols[c][i]) for c in names])


def invalid_utf8_strings(values: list[bytes]) -> pa.Array:
    """A pyarrow *string* array holding the given raw bytes, bypassing UTF-8 validation."""
    offsets = [0]
    for v in values:
        offsets.append(offsets[-1] + len(v))
    buf_off = pa.py_buffer(b"".join(o.to_bytes(4, "little", signed=True) for o in offsets))
    return pa.Array.from_buffers(pa.string(), len(values), [None, buf_off, pa.py_buffer(b"".join(values))])


# ---- hostile text --------------------------------------------------------------------------
RICH_MARKUP = "[bold red]RICHBOLD[/] [link=https://evil.example/x]RICHLINK[/link] [/] [blink]B[/blink]"
ANSI_SGR = "\x1b[38;5;196mANSIRED\x1b[0m"  # 256-colour SGR: never produced by the renderer's styles
OSC8_LINK = "\x1b]8;;https://evil.example/\x1b\\OSCLINK\x1b]8;;\x1b\\"
OSC_TITLE = "\x1b]0;pwned-window-title\x07TITLESET"
CONTROL = "bell\x07back\x08space\x0dreturn\x00nul\x7fdel\x9bcsi\u202eRLO\u2066iso"
HTML_MD = (
    "<script>alert(1)</script> <img src=x onerror=alert(2)> | pipe | "
    "[click](javascript:alert(3)) ![img](https://evil.example/p.png) **bold** `code` # heading "
    "<!-- comment --> @admin https://evil.example/"
)
WORKFLOW = (
    "first line\n::error::INJECTED error\n::set-env name=PATH::/evil\n::add-mask::x\r\n%0A::warning::encoded"
    "\n  ::stop-commands::tok\n##[error]LEGACY"
)
LONG_TITLE = "L" * 100_000
HOSTILE_TITLES = {
    "rich": RICH_MARKUP,
    "ansi": ANSI_SGR,
    "osc8": OSC8_LINK,
    "osc_title": OSC_TITLE,
    "control": CONTROL,
    "html_md": HTML_MD,
    "workflow": WORKFLOW,
    "long": LONG_TITLE,
}


# ---- read-only guarantee -------------------------------------------------------------------
def snapshot(root: Path) -> dict:
    """Every entry under ``root`` (not following symlinks): type, mode, size, mtime, content hash.

    Unreadable files and symlink loops are recorded as such (their lstat still is)."""
    out = {}
    root = Path(root)

    def entry(p: Path) -> tuple:
        try:
            st = os.lstat(p)
        except OSError as exc:
            return ("error", exc.errno)
        if stat.S_ISLNK(st.st_mode):
            return ("link", os.readlink(p), st.st_mtime_ns)
        if stat.S_ISDIR(st.st_mode):
            return ("dir", stat.S_IMODE(st.st_mode), st.st_mtime_ns)
        digest = None
        if stat.S_ISREG(st.st_mode):
            try:
                with open(p, "rb") as fh:
                    if st.st_size <= 64 * 1024**2:
                        digest = hashlib.sha256(fh.read()).hexdigest()
                    else:  # sparse giants: the first and last MiB
                        h = hashlib.sha256(fh.read(1024**2))
                        fh.seek(-(1024**2), 2)
                        h.update(fh.read())
                        digest = "ends:" + h.hexdigest()
            except OSError as exc:
                digest = ("unreadable", exc.errno)
        return ("file", stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns, digest)

    out["."] = entry(root)
    if out["."][0] != "dir":
        return out
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            out[str(p.relative_to(root))] = entry(p)
    return out


# ---- the CLI, as a real process -----------------------------------------------------------
@dataclass
class CliResult:
    code: int | None  # None when killed on timeout
    stdout: str
    stderr: str
    seconds: float
    max_rss_kib: int
    timed_out: bool


#: Drop CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH from the effective set, so that a root process
#: obeys permission bits (chmod 000) while keeping uid 0 (the interpreter lives under /root).
_DROP_DAC = r"""
def _drop_dac():
    import ctypes
    class Hdr(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]
    libc = ctypes.CDLL(None, use_errno=True)
    hdr, data = Hdr(0x20080522, 0), (Data * 2)()
    if libc.capget(ctypes.byref(hdr), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    data[0].effective &= ~((1 << 1) | (1 << 2))
    if libc.capset(ctypes.byref(hdr), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
"""

#: The child's own peak RSS is VmHWM of its own address space, written at exit to the file named
#: by argv[3]. (wait4's ru_maxrss is no measure here: Linux carries the parent's RSS at fork into
#: the child's maxrss through exec, so a pytest process that has grown to 1 GB over a suite makes
#: every child look 1 GB large.)
_BOOT = _DROP_DAC + (
    "import atexit, os, resource, runpy, sys\n"
    "lim = int(sys.argv[1]); drop = sys.argv[2] == '1'; hwm_path = sys.argv[3]\n"
    "def _hwm():\n"
    "    with open('/proc/self/status') as fh:\n"
    "        kib = next(line.split()[1] for line in fh if line.startswith('VmHWM:'))\n"
    "    with open(hwm_path, 'w') as fh:\n"
    "        fh.write(kib)\n"
    "atexit.register(_hwm)\n"
    "if lim > 0: resource.setrlimit(resource.RLIMIT_AS, (lim, lim))\n"
    "if drop: _drop_dac()\n"
    "sys.argv = ['graphrag-audit'] + sys.argv[4:]\n"
    "runpy.run_module('graphrag_audit', run_name='__main__', alter_sys=True)\n"
)


def clean_env(extra: dict | None = None) -> dict:
    """The caller's environment without anything that changes the CLI's behaviour or writes
    elsewhere (GitHub step summary, GRAPHRAG_AUDIT_* defaults, colour settings)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "GRAPHRAG_AUDIT_", "RUNNER_"))
        and k
        not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TERM", "PYTHONSTARTUP", "PYTHONIOENCODING")
    }
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if os.environ.get("GRAPHRAG_AUDIT_CACHE_DIR"):  # the token cache stays where the tests put it (conftest)
        env["GRAPHRAG_AUDIT_CACHE_DIR"] = os.environ["GRAPHRAG_AUDIT_CACHE_DIR"]
    env.update(extra or {})
    return env


def _wait(pid: int, timeout: float, t0: float) -> tuple[int | None, int, bool]:
    """(exit code or None, peak RSS KiB, timed out) of child ``pid`` (its own process group)."""
    deadline = t0 + timeout
    timed_out = False
    while True:
        got, status, rusage = os.wait4(pid, os.WNOHANG)
        if got:
            break
        if time.perf_counter() > deadline:
            timed_out = True
            try:
                os.killpg(pid, 9)
            except ProcessLookupError:
                pass
            got, status, rusage = os.wait4(pid, 0)
            break
        time.sleep(0.002)
    return (None if timed_out else os.waitstatus_to_exitcode(status)), int(rusage.ru_maxrss), timed_out


def run_cli(
    args: list,
    *,
    timeout: float = 60.0,
    mem_bytes: int = 2 * GIB,
    drop_dac: bool = False,
    cwd: Path | None = None,
    env: dict | None = None,
) -> CliResult:
    """``python -m graphrag_audit ARGS`` as a fresh interpreter, limited to ``mem_bytes`` of address
    space (set in the child before anything is imported), killed after ``timeout`` seconds.
    Output goes through temp files so the child's peak RSS can be read from wait4()."""
    import tempfile

    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r", prefix="hwm-") as hwm,
    ):
        cmd = [
            sys.executable,
            "-c",
            _BOOT,
            str(mem_bytes),
            "1" if drop_dac else "0",
            hwm.name,
            *[str(a) for a in args],
        ]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=str(cwd or REPO.parent),
            env=env or clean_env(),
            start_new_session=True,
        )
        code, maxrss, timed_out = _wait(proc.pid, timeout, t0)
        proc.returncode = -1 if code is None else code
        seconds = time.perf_counter() - t0
        # the child's own peak when it got to exit normally; else (killed) wait4's upper bound
        written = hwm.read().strip()
        rss = int(written) if written else maxrss
        out.seek(0)
        err.seek(0)
        return CliResult(
            code,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            seconds,
            rss,
            timed_out,
        )


# A fork server: one warm interpreter that has imported the CLI forks a fresh process per
# command, so a corpus of ~80 commands costs ~80 forks instead of ~80 interpreter start-ups
# (~1 s of imports each). The forked child is a real process: its own exit code, stdout/stderr
# at the file-descriptor level, RLIMIT_AS, its own process group killed on timeout, and its
# peak RSS read by wait4(). It runs graphrag_audit.cli.main() exactly as `python -m
# graphrag_audit` does, and prints a traceback (exit 1) like the interpreter would if anything
# escaped main().
_SERVER = (
    _DROP_DAC
    + r"""
import io, json, os, resource, sys, time, traceback
reply = os.fdopen(os.dup(1), "w", buffering=1)
devnull = os.open(os.devnull, os.O_RDWR)
os.dup2(devnull, 1)
ENC, OUT_ERRORS, ERR_ERRORS = sys.stdout.encoding, sys.stdout.errors, sys.stderr.errors
import graphrag_audit.cli, graphrag_audit.analysis.audit, graphrag_audit.render.text, graphrag_audit.render.json  # warm
saved = os.dup(2)
os.dup2(devnull, 2)
sys.argv = ["graphrag-audit", "levels", os.path.join(os.sep, "nonexistent-warm-up")]
try:  # typer imports pydantic & co. while parsing: do it once here, not in every child
    graphrag_audit.cli.main()
except SystemExit:
    pass
sys.stderr.flush()
os.dup2(saved, 2)
os.close(saved)
reply.write("ready\n")


def child(req):
    code = 1
    try:
        os.setsid()
        if req["mem"] > 0:
            resource.setrlimit(resource.RLIMIT_AS, (req["mem"], req["mem"]))
        for fd, name in ((1, "out"), (2, "err")):
            f = os.open(req[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(f, fd)
            os.close(f)
        os.dup2(devnull, 0)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding=ENC, errors=OUT_ERRORS)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding=ENC, errors=ERR_ERRORS,
                                      line_buffering=True)
        os.chdir(req["cwd"])
        for k in list(os.environ):
            if k not in req["env"]:
                del os.environ[k]
        os.environ.update(req["env"])
        if req["drop_dac"]:
            _drop_dac()
        sys.argv = ["graphrag-audit", *req["argv"]]
        try:
            graphrag_audit.cli.main()
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            code = 120
    finally:
        os._exit(code)


for line in sys.stdin:
    req = json.loads(line)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        child(req)
    deadline = t0 + req["timeout"]
    timed_out = False
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got:
            break
        if time.perf_counter() > deadline:
            timed_out = True
            try:
                os.killpg(pid, 9)
            except ProcessLookupError:
                os.kill(pid, 9)
            got, status, ru = os.wait4(pid, 0)
            break
        time.sleep(0.002)
    reply.write(json.dumps({"code": None if timed_out else os.waitstatus_to_exitcode(status),
                            "seconds": time.perf_counter() - t0, "rss": ru.ru_maxrss,
                            "timed_out": timed_out}) + "\n")
"""
)


class CliServer:
    """Run ``graphrag-audit ARGS`` in forked children of one warm interpreter (see _SERVER)."""

    def __init__(self, cwd: Path | None = None):
        self.cwd = str(cwd or REPO.parent)
        self.env = clean_env()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            text=True,
        )
        ready = self.proc.stdout.readline()
        if ready != "ready\n":
            raise RuntimeError(f"CLI fork server failed to start: {ready!r}")

    def run(
        self,
        args: list,
        *,
        timeout: float = 60.0,
        mem_bytes: int = 2 * GIB,
        drop_dac: bool = False,
        env_extra: dict | None = None,
    ) -> CliResult:
        import json
        import tempfile

        with tempfile.TemporaryDirectory(prefix="cli-") as d:
            req = {
                "argv": [str(a) for a in args],
                "timeout": timeout,
                "mem": mem_bytes,
                "drop_dac": drop_dac,
                "out": os.path.join(d, "out"),
                "err": os.path.join(d, "err"),
                "cwd": self.cwd,
                "env": {**self.env, **(env_extra or {})},
            }
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("CLI fork server died")
            rep = json.loads(line)
            with open(req["out"], "rb") as fh:
                out = fh.read().decode("utf-8", "replace")
            with open(req["err"], "rb") as fh:
                err = fh.read().decode("utf-8", "replace")
        return CliResult(rep["code"], out, err, rep["seconds"], int(rep["rss"]), rep["timed_out"])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def permission_bits_apply(probe_dir: Path) -> str | None:
    """None when a child that drops CAP_DAC_* (as run_cli/CliServer do with drop_dac=True) cannot
    read a mode-000 file; else the reason why permission tests must be skipped."""
    f = Path(probe_dir) / "probe-000"
    f.write_bytes(b"x")
    os.chmod(f, 0)
    code = _DROP_DAC + (
        "import sys\n"
        "try:\n    _drop_dac()\nexcept OSError as e:\n    print('capset failed:', e); sys.exit(3)\n"
        "try:\n    open(sys.argv[1], 'rb').read()\nexcept PermissionError:\n    sys.exit(0)\n"
        "print('mode 000 file still readable'); sys.exit(4)\n"
    )
    try:
        r = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, timeout=60)
    finally:
        os.chmod(f, 0o600)
        f.unlink()
    if r.returncode == 0:
        return None
    return (
        "permission bits cannot be enforced here (running as root and dropping CAP_DAC_OVERRIDE "
        f"did not work: {r.stdout.strip() or r.stderr.strip()})"
    )
