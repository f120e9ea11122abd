"""Every fenced block of README.md and docs/*.md, checked against the tool (issue 38).

    python docs/regen_samples.py            # rewrite every stale output sample in place
    python docs/regen_samples.py --check    # only list what is stale or failing (exit 1 if any)
    python docs/regen_samples.py docs/ci.md # only these docs

``tests/test_docs.py`` runs the same checks (one test per block) and fails on a stale sample with
the doc, the line and this command.

Every fenced block (```` ``` ```` or ``~~~``) must sit right under one marker line saying what it
is and how it is checked; a block without one fails the test:

``<!-- sample: graphrag-audit ARGS -->``
    Output of that command, regenerated and compared. Options go in brackets before the colon,
    comma-separated: ``<!-- sample [console, status, output->../shared/indexes/verbs-v3]: graphrag-audit
    levels ./output -f github -->``.

    * ``console``: the block starts with ``$ COMMAND``; ``status`` adds ``$ echo $?`` and the exit code;
    * ``stderr``: stderr is shown after stdout (as a terminal shows an error);
    * ``summary``: the block is what the run appended to ``$GITHUB_STEP_SUMMARY`` (not stdout);
    * ``head=N``, ``tail=M``: an excerpt, the first N (and last M) lines, with one ``… (L lines,
      C characters in all)`` line where lines are left out;
    * ``exit=N``: the exit code the command must have (default: 0 or 1);
    * ``NAME->TARGET``: NAME in the working folder is a symbolic link to TARGET (a path from the
      repository root), so a doc can show ``./output``, ``DIR`` or ``OLD`` and run on a real index;
    * ``setup=NAME``: a folder built by a function of this file (``SETUPS``) first;
    * ``tmp=/tmp/NAME``: the command's temporary path; it runs on a fresh path of the same length
      (so the wrapping is the same) that is written back as ``/tmp/NAME`` in the output.

``<!-- run -->`` (options as above: links, ``setup=``, ``exit=``)
    Every command line of the block (``$ `` prefixes and ``# comments`` dropped, ``\\`` continuations
    joined) is run in order in one working folder; each must exit 0 or 1 (or ``exit=N``) without an
    "internal error" or a traceback. A ``python`` block is run as a script and must exit 0.

``<!-- not run: REASON -->``
    Not runnable in CI (a user's own index, a cloud account, graphrag and an LLM, a benchmark of
    hours). Still checked: every ``graphrag-audit`` command names a command and options that exist
    (the CLI's own parameter list, what ``--help`` prints), every ``python SCRIPT.py`` exists and
    its ``--help`` names each option used; a ``python`` block compiles.

``<!-- file: PATH -->`` / ``<!-- file [after comments]: PATH -->``
    The block is that file of the repository (without its leading ``#`` comment lines).

``<!-- text: REASON -->``
    Neither a command nor output (a diagram, numbers measured once); it must hold no command line.

What is normalised before comparing, and nothing else: trailing white space on each line (the text
renderer pads, Markdown drops it); the Python, pandas, pyarrow and platform cells of a Markdown
header, and its graphrag cell (they are the machine's, not the tool's); the ``tmp=`` path. The commands run from a
temporary working folder in which ``fixtures`` and ``../shared`` lead to the repository's
``fixtures`` and to ``../shared`` beside the repository, with ``NO_COLOR=1``, no controlling terminal
and none of ``COLUMNS``, ``LINES``, ``GITHUB_STEP_SUMMARY`` or ``GRAPHRAG_AUDIT_*`` from the caller.
A block whose commands read ``../shared/indexes`` skips when that folder is absent.
"""

from __future__ import annotations

import argparse
import ast
import functools
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
INDEXES = SHARED / "indexes"
REGEN = "python docs/regen_samples.py"


def doc_paths() -> list[str]:
    return ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]


# ----------------------------------------------------------------------------------------
# fenced blocks (CommonMark's rules, which cmark-gfm follows; tests/test_docs.py checks the two agree)
# ----------------------------------------------------------------------------------------
OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}(?=[^`]*$)|~{3,})(?P<info>.*)$")
MARKER = re.compile(
    r"^<!-- (?P<kind>sample|run|not run|file|text)(?: \[(?P<opts>[^\]]*)\])?(?:: (?P<rest>.*?))? -->$"
)


class Skip(Exception):
    """The block cannot be checked here (the reason says why)."""


@dataclass
class Block:
    doc: str
    line: int  # 1-based line of the opening fence
    fence: str
    info: str
    body: str  # the lines between the fences, each ending in "\n"
    start: int  # offsets of the body in the doc's text
    end: int
    closed: bool
    kind: str | None = None
    rest: str = ""
    opts: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)
    marker_error: str = ""

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def fenced_blocks(text: str, doc: str = "?") -> list[Block]:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    blocks, i = [], 0
    while i < len(lines):
        m = OPEN.match(lines[i].rstrip("\n"))
        if not m:
            i += 1
            continue
        fence = m.group("fence")
        close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j].rstrip("\n")):
            j += 1
        b = Block(
            doc,
            i + 1,
            fence,
            m.group("info").strip(),
            "".join(lines[i + 1 : j]),
            offsets[i + 1],
            offsets[j],
            j < len(lines),
        )
        _read_marker(b, lines[i - 1].rstrip("\n") if i else "")
        blocks.append(b)
        i = j + 1
    return blocks


def _read_marker(b: Block, line: str) -> None:
    m = MARKER.match(line)
    if not m:
        return
    b.kind, b.rest = m.group("kind"), (m.group("rest") or "").strip()
    for opt in filter(None, (o.strip() for o in (m.group("opts") or "").split(","))):
        if "->" in opt:
            name, target = (s.strip() for s in opt.split("->", 1))
            b.links[name] = target
        elif "=" in opt:
            k, v = (s.strip() for s in opt.split("=", 1))
            b.opts[k] = v
        else:
            b.opts[opt] = True
    known = {
        "console",
        "status",
        "stderr",
        "summary",
        "head",
        "tail",
        "from",
        "until",
        "exit",
        "setup",
        "tmp",
        "graphrag",
        "after comments",
    }
    if set(b.opts) - known:
        b.marker_error = f"unknown marker option(s) {sorted(set(b.opts) - known)}"
    elif b.kind == "sample" and not b.rest.startswith("graphrag-audit "):
        b.marker_error = "a sample marker names its command: <!-- sample: graphrag-audit ARGS -->"
    elif b.kind in ("not run", "text", "file") and not b.rest:
        b.marker_error = f"<!-- {b.kind}: ... --> needs its {'path' if b.kind == 'file' else 'reason'}"


def blocks_of(doc: str) -> list[Block]:
    return fenced_blocks((ROOT / doc).read_text(encoding="utf-8"), doc)


# ----------------------------------------------------------------------------------------
# command lines
# ----------------------------------------------------------------------------------------
def command_lines(body: str) -> list[str]:
    """The command lines of a block: with ``$ `` prompts only the prompted lines (the rest is output);
    ``\\`` continuations joined; blank and comment-only lines dropped."""
    raw = body.splitlines()
    prompted = any(ln.startswith("$ ") for ln in raw)
    out, cur = [], ""
    for ln in raw:
        if prompted and not cur:
            if not ln.startswith("$ "):
                continue
            ln = ln[2:]
        if ln.rstrip().endswith("\\"):
            cur += ln.rstrip()[:-1] + " "
            continue
        ln, cur = cur + ln, ""
        if ln.strip() and not ln.lstrip().startswith("#"):
            out.append(ln.strip())
    return out


def _segments(line: str) -> list[list[str]]:
    """The simple commands of a shell line (split at ``&&``, ``||``, ``|``, ``;``), comments dropped."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    segs, cur = [], []
    for tok in lex:
        if tok in ("&&", "||", "|", ";", "&"):
            segs.append(cur)
            cur = []
        else:
            cur.append(tok)
    segs.append(cur)
    return [s for s in segs if s]


def _cli_args(seg: list[str]) -> list[str] | None:
    if seg[0] in ("graphrag-audit", "audit"):
        return seg[1:]
    if seg[0] in ("python", "python3") and seg[1:3] == ["-m", "graphrag_audit"]:
        return seg[3:]
    return None


@functools.cache
def _cli() -> tuple[dict, set]:
    """{command: its option names} and the group's own options, from the CLI (what --help prints)."""
    import typer.main

    from graphrag_audit.cli import app

    group = typer.main.get_command(app)
    names = lambda params: (
        {
            o
            for p in params
            for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))  # noqa: E731
            if o.startswith("-")
        }
        | {"--help", "-h"}
    )
    return {name: names(cmd.params) for name, cmd in group.commands.items()}, names(group.params)


def _option_tokens(args: list[str]) -> list[str]:
    opts = []
    for tok in args:
        for part in tok.strip("[]()…").split("|"):
            part = part.strip("[]()…")
            if re.match(r"^--?[A-Za-z]", part):
                opts.append(part.split("=", 1)[0])
    return opts


def check_cli_parses(args: list[str]) -> list[str]:
    """Problems with ``graphrag-audit ARGS``: an unknown command or option (values are not checked)."""
    commands, group_opts = _cli()
    rest = list(args)
    while rest and rest[0].startswith("-"):
        if rest[0] not in group_opts:
            return [f"graphrag-audit has no option {rest[0]}"]
        rest.pop(0)
    if not rest:
        return []
    name = rest.pop(0)
    if name.isupper():  # `graphrag-audit COMMAND --help`: a placeholder for any command
        return [f"graphrag-audit has no option {o}" for o in _option_tokens(rest) if o not in group_opts]
    if name not in commands:
        return [f"graphrag-audit has no command {name!r}"]
    return [
        f"graphrag-audit {name} has no option {o}" for o in _option_tokens(rest) if o not in commands[name]
    ]


@functools.cache
def _script_help(path: str) -> str:
    proc = subprocess.run(
        [sys.executable, path, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    if proc.returncode != 0:
        raise AssertionError(f"python {path} --help exits {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return proc.stdout


def check_parses(line: str) -> list[str]:
    problems = []
    for seg in _segments(line):
        args = _cli_args(seg)
        if args is not None:
            problems += check_cli_parses(args)
        elif seg[0] in ("python", "python3") and len(seg) > 1 and seg[1].endswith(".py"):
            script = seg[1]
            if not (ROOT / script).is_file():
                problems.append(f"{script} does not exist")
                continue
            helptext = _script_help(script)
            problems += [
                f"python {script} --help does not name {o}"
                for o in _option_tokens(seg[2:])
                if not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", helptext)
            ]
    return problems


INLINE = re.compile(r"(?<!`)`(?P<span>(?:graphrag-audit|python -m graphrag_audit) [^`]+?)`(?!`)")


def inline_commands(doc: str) -> list[tuple[int, str]]:
    """(line, command) of every code span of the doc's prose that is a graphrag-audit command line."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    for b in reversed(fenced_blocks(text, doc)):  # blocks are checked on their own
        text = text[: b.start] + "\n" * b.body.count("\n") + text[b.end :]
    return [
        (text[: m.start()].count("\n") + 1, " ".join(m.group("span").split()))
        for m in INLINE.finditer(text)
        if "\n\n" not in m.group("span")
    ]


def _runs_our_code(line: str) -> bool:
    return any(
        _cli_args(s) is not None or (s[0] in ("python", "python3") and len(s) > 1) for s in _segments(line)
    )


# ----------------------------------------------------------------------------------------
# running in a sandbox
# ----------------------------------------------------------------------------------------
def _climate_previous(work: Path) -> None:
    """``previous``: the first ``period`` of real-climate-update-v09 (graphrag update's merged output),
    written as an index of its own (tests/builders.py, as tests/analysis/test_diff.py builds it)."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from builders import write_update_previous
    finally:
        sys.path.remove(str(ROOT / "tests"))
    write_update_previous(INDEXES / "real-climate-update-v09", work / "previous")


def _verbs_v3_int32(work: Path) -> None:
    """``verbs-v3-int32``: verbs-v3 with ``communities.community`` rewritten as int32 (nothing else changes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src, dst = INDEXES / "verbs-v3", work / "verbs-v3-int32"
    dst.mkdir()
    for f in src.iterdir():
        if f.is_file():
            shutil.copy(f, dst / f.name)
    t = pq.read_table(src / "communities.parquet")
    i = t.schema.get_field_index("community")
    pq.write_table(
        t.set_column(i, pa.field("community", pa.int32()), t.column(i).cast(pa.int32())),
        dst / "communities.parquet",
    )


def _no_level_0(work: Path) -> None:
    """``no-level-0``: the tests' seed tree (tests/builders.py) as a 3.x index without its level-0 reports."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from builders import SEED, write_v3
    finally:
        sys.path.remove(str(ROOT / "tests"))
    write_v3(work / "no-level-0", SEED, reports=[(c, lv) for c, (lv, _, _) in SEED.items() if lv > 0])


def _seed_baseline(work: Path) -> None:
    """``baseline.json``: the levels JSON of the bundled seed example, as a pipeline keeps it."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "graphrag_audit",
            "levels",
            str(ROOT / "fixtures" / "seed-v3"),
            "-f",
            "json",
            "-o",
            str(work / "baseline.json"),
        ],
        check=True,
        capture_output=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


SETUPS = {
    "seed-baseline": (_seed_baseline, False),
    "climate-previous": (_climate_previous, True),
    "verbs-v3-int32": (_verbs_v3_int32, True),
    "no-level-0": (_no_level_0, False),
}  # name: (builder, needs ../shared/indexes)


def _needs_shared(b: Block) -> bool:
    text = " ".join([b.rest, b.body if b.kind == "run" else "", *b.links.values()])
    return "../shared" in text or (b.opts.get("setup") in SETUPS and SETUPS[b.opts["setup"]][1])


def graphrag_python(version: str) -> str:
    """The side interpreter (``GRAPHRAG_VERIFY_PYTHONS``/``GRAPHRAG_DYNAMIC_PYTHONS``, as .ci/run exports them)
    with that graphrag installed; a skip without one (a failure under CI, as in the rest of the suite)."""
    for py in _side_pythons():
        if _graphrag_version(py) == version:
            return py
    reason = (
        f"no interpreter with graphrag {version} in GRAPHRAG_VERIFY_PYTHONS or GRAPHRAG_DYNAMIC_PYTHONS "
        "(.ci/run builds and exports them)"
    )
    if os.environ.get("CI"):
        raise AssertionError(reason)
    raise Skip(reason)


def _side_pythons() -> list[str]:
    raw = os.pathsep.join(
        os.environ.get(k, "") for k in ("GRAPHRAG_VERIFY_PYTHONS", "GRAPHRAG_DYNAMIC_PYTHONS")
    )
    return list(dict.fromkeys(p for p in raw.split(os.pathsep) if p))


@functools.cache
def _graphrag_version(python: str) -> str | None:
    proc = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('graphrag'))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


class Sandbox:
    """A temporary working folder: ``work/`` (the cwd) with ``fixtures`` linked, ``../shared`` linked,
    the block's own links and setup, and shims for ``graphrag-audit``, ``audit`` and ``python``."""

    def __init__(self, b: Block):
        self.b = b

    def __enter__(self) -> Sandbox:
        if _needs_shared(self.b) and not INDEXES.is_dir():
            raise Skip(
                f"../shared/indexes ({INDEXES}) is absent: the real graphrag indexes this block runs on"
            )
        python = graphrag_python(self.b.opts["graphrag"]) if "graphrag" in self.b.opts else sys.executable
        self.top = Path(tempfile.mkdtemp(prefix="graphrag-audit-docs-"))
        try:
            self._build(python)
        except BaseException:
            shutil.rmtree(self.top, ignore_errors=True)  # __exit__ does not run when __enter__ raises
            raise
        return self

    def _build(self, python: str) -> None:
        self.work = self.top / "work"
        self.work.mkdir()
        if SHARED.is_dir():
            (self.top / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
        (self.work / "fixtures").symlink_to(ROOT / "fixtures", target_is_directory=True)
        for name, target in self.b.links.items():
            tgt = (ROOT / target).resolve()
            if not tgt.exists():
                raise AssertionError(f"{self.b.where}: link {name}->{target}: {tgt} does not exist")
            (self.work / name).parent.mkdir(parents=True, exist_ok=True)
            (self.work / name).symlink_to(tgt, target_is_directory=tgt.is_dir())
        if "setup" in self.b.opts:
            SETUPS[self.b.opts["setup"]][0](self.work)
        bindir = self.top / "bin"
        bindir.mkdir()
        for name, cmd in (
            ("graphrag-audit", "-m graphrag_audit"),
            ("audit", "-m graphrag_audit"),
            ("python", ""),
            ("python3", ""),
        ):
            shim = bindir / name
            shim.write_text(f'#!/bin/sh\nexec {shlex.quote(python)} {cmd} "$@"\n')
            shim.chmod(0o755)
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("COLUMNS", "LINES", "GITHUB_STEP_SUMMARY", "PYTHONPATH", "FORCE_COLOR")
            and not k.startswith("GRAPHRAG_AUDIT_")
        }
        self.env = {
            **env,
            "PATH": f"{bindir}{os.pathsep}{env.get('PATH', '')}",
            "PYTHONPATH": str(ROOT),
            "NO_COLOR": "1",
            "PYTHONIOENCODING": "utf-8",
        }

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.top, ignore_errors=True)

    def run(self, command: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=self.work,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=900,
            start_new_session=True,
        )  # no controlling terminal: /dev/tty gives no width


def _exit_problem(proc: subprocess.CompletedProcess, expected: str | None, what: str) -> str | None:
    ok = proc.returncode == int(expected) if expected is not None else proc.returncode in (0, 1)
    err = proc.stderr
    if not ok:
        return (
            f"{what} exits {proc.returncode} ({'expected ' + expected if expected else 'expected 0 or 1'}): "
            f"{err.strip()[-500:]}"
        )
    if "internal error" in err or "Traceback (most recent call last)" in err:
        return f"{what} reports an internal error: {err.strip()[-500:]}"
    return None


# ----------------------------------------------------------------------------------------
# samples
# ----------------------------------------------------------------------------------------
MASKS = [re.compile(r"^(\| \*\*(?:Python|pandas|pyarrow|graphrag|platform)\*\* \| ).*?( \|)$", re.M)]


def _strip(text: str) -> str:
    return "\n".join(ln.rstrip() for ln in text.splitlines()) + "\n"


def normalise(text: str) -> str:
    """What is compared: trailing white space dropped, the machine's versions masked."""
    text = _strip(text)
    for m in MASKS:
        text = m.sub(r"\1…\2", text)
    return text


def _same_length_tmp(path: str) -> Path:
    """A fresh folder under the same parent whose path has as many characters as PATH."""
    parent = Path(path).parent
    n = len(Path(path).name)
    for _ in range(100):
        cand = parent / secrets.token_hex(n)[:n]
        if n >= 6 and not cand.exists():
            return cand
    raise AssertionError(f"tmp={path}: use a name of at least 6 characters under an existing folder")


def generate(b: Block) -> str:
    """The body the sample block should have now (run once per command and options in a process)."""
    return _generate(b.doc, b.line, b.rest, tuple(sorted(b.opts.items())), tuple(sorted(b.links.items())))


@functools.cache
def _generate(doc: str, line: int, rest: str, opts: tuple, links: tuple) -> str:
    b = Block(doc, line, "```", "", "", 0, 0, True, "sample", rest, dict(opts), dict(links))
    command = b.rest
    with Sandbox(b) as sb:
        env, tmp, real_tmp = {}, b.opts.get("tmp"), None
        if tmp:
            if tmp not in command:
                raise AssertionError(f"{b.where}: tmp={tmp} is not in the command")
            real_tmp = _same_length_tmp(tmp)
            command = command.replace(tmp, str(real_tmp))
        if b.opts.get("summary"):
            env["GITHUB_STEP_SUMMARY"] = str(sb.top / "step-summary.md")
        try:
            proc = sb.run(command, env)
        finally:
            if real_tmp is not None:
                shutil.rmtree(real_tmp, ignore_errors=True)
        problem = _exit_problem(proc, b.opts.get("exit"), f"`{b.rest}`")
        if problem:
            raise AssertionError(f"{b.where}: {problem}")
        out = proc.stdout + (proc.stderr if b.opts.get("stderr") else "")
        if b.opts.get("summary"):
            out = (sb.top / "step-summary.md").read_text(encoding="utf-8")
        if real_tmp is not None:
            out = out.replace(str(real_tmp), tmp)
        if str(sb.top) in out:
            raise AssertionError(
                f"{b.where}: the output names the sandbox {sb.top}; use a relative path or tmp="
            )
    lines = _strip(out).splitlines()
    if "from" in b.opts:  # the lines from the first matching FROM up to the first matching UNTIL (or blank)
        start = next((i for i, ln in enumerate(lines) if re.search(b.opts["from"], ln)), None)
        if start is None:
            raise AssertionError(f"{b.where}: no line of the output matches from={b.opts['from']}")
        stop = next(
            (i for i in range(start + 1, len(lines)) if re.search(b.opts.get("until", "^$"), lines[i])),
            len(lines),
        )
        lines = lines[start:stop]
        while lines and not lines[-1]:
            lines.pop()
    head, tail = int(b.opts.get("head", 0)), int(b.opts.get("tail", 0))
    if head and len(lines) > head + tail:
        left_out = f"… ({len(lines)} lines, {len(out):,} characters in all" + (
            f"; the last {tail}:)" if tail else ")"
        )
        kept = lines[:head]
        while kept and not kept[-1]:
            kept.pop()
        lines = kept + [left_out] + (lines[-tail:] if tail else [])
    if b.opts.get("console"):
        lines = [f"$ {b.rest}", *lines]
        if b.opts.get("status"):
            lines += ["$ echo $?", str(proc.returncode)]
    return "\n".join(lines) + "\n"


def stale_message(b: Block, now: str) -> str:
    old, new = normalise(b.body).splitlines(), now.splitlines()
    k = next((i for i, (x, y) in enumerate(zip(old, new)) if x != y), min(len(old), len(new)))
    first = (
        f"line {k + 1} of the block: doc {old[k] if k < len(old) else '(end)'!r}, now "
        f"{new[k] if k < len(new) else '(end)'!r}"
    )
    return f"{b.where}: the sample of `{b.rest}` is stale ({first}); regenerate every sample with `{REGEN}`"


# ----------------------------------------------------------------------------------------
# one block's check
# ----------------------------------------------------------------------------------------
def check_block(b: Block) -> str | None:
    """None when the block holds, else the problem. A sample returns None when its body is current;
    use ``generate`` for the new body. Raises Skip when it cannot be checked here."""
    if not b.closed:
        return f"{b.where}: the {b.fence} fence is never closed (it runs to the end of the file)"
    if b.kind is None:
        return (
            f"{b.where}: a fenced block without a marker line right above it "
            "(<!-- sample: ... -->, <!-- run -->, <!-- not run: REASON -->, <!-- file: PATH --> or "
            "<!-- text: REASON -->; see docs/regen_samples.py)"
        )
    if b.marker_error:
        return f"{b.where}: {b.marker_error}"
    if b.kind == "sample":
        now = generate(b)
        return None if normalise(b.body) == normalise(now) else stale_message(b, now)
    if b.kind == "file":
        text = (ROOT / b.rest).read_text(encoding="utf-8")
        if b.opts.get("after comments"):
            lines = text.splitlines(keepends=True)
            while lines and (lines[0].startswith("#") or not lines[0].strip()):
                lines.pop(0)
            text = "".join(lines)
        return None if b.body == text else f"{b.where}: the block is not {b.rest} as it is now: copy it again"
    if b.kind == "text":
        cmds = [ln for ln in b.body.splitlines() if ln.startswith("$ ") or _cli_args(ln.split() or ["-"])]
        return (
            f"{b.where}: a text block holds command lines ({cmds[0]!r}): mark it run or not run"
            if cmds
            else None
        )
    if b.info == "yaml" and b.kind == "run":
        return _check_pre_commit_config(b)
    if b.info == "python":
        if b.kind == "not run":
            try:
                compile(b.body, b.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
            except SyntaxError as e:
                return f"{b.where}: the Python does not compile: {e}"
            return None
        with Sandbox(b) as sb:
            (sb.work / "snippet.py").write_text(b.body, encoding="utf-8")
            proc = sb.run("python snippet.py")
            problem = _exit_problem(proc, b.opts.get("exit", "0"), "the Python block")
        return f"{b.where}: {problem}" if problem else None
    lines = command_lines(b.body)
    if not any(_runs_our_code(ln) for ln in lines) and b.kind == "run":
        return f"{b.where}: a run block with no graphrag-audit or python command"
    problems = [f"{b.where}: `{ln}`: {p}" for ln in lines for p in check_parses(ln)]
    if problems or b.kind == "not run":
        return "\n".join(problems) or None
    for ln in lines:
        for seg in _segments(ln):
            if (
                _cli_args(seg) is None
                and seg[0] not in ("python", "python3")
                and shutil.which(seg[0]) is None
            ):
                raise Skip(f"`{seg[0]}` is not installed (`{ln}` needs it)")
    with Sandbox(b) as sb:
        for ln in lines:
            problem = _exit_problem(sb.run(ln), b.opts.get("exit"), f"`{ln}`")
            if problem:
                return f"{b.where}: {problem}"
    return None


def _check_pre_commit_config(b: Block) -> str | None:
    """A ``.pre-commit-config.yaml`` example: every hook it uses is one of ``.pre-commit-hooks.yaml``, and
    the hook's entry runs with the example's args and with the hook's default args (pass_filenames is
    false, so that is the whole command pre-commit runs)."""
    import yaml

    hooks = {
        h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    }
    used = [h for repo in (yaml.safe_load(b.body) or {}).get("repos", []) for h in repo.get("hooks", [])]
    if not used:
        return (
            f"{b.where}: a run yaml block is a .pre-commit-config.yaml using a hook of .pre-commit-hooks.yaml"
        )
    with Sandbox(b) as sb:
        for h in used:
            if h.get("id") not in hooks:
                return f"{b.where}: .pre-commit-hooks.yaml has no hook {h.get('id')!r}"
            hook = hooks[h["id"]]
            if hook.get("pass_filenames", True):
                return f"{b.where}: hook {h['id']} passes file names; this check runs it without any"
            for args in (h.get("args", hook.get("args", [])), hook.get("args", [])):
                cmd = " ".join([hook["entry"], *(shlex.quote(str(a)) for a in args)])
                problem = "; ".join(check_parses(cmd)) or _exit_problem(
                    sb.run(cmd), b.opts.get("exit"), f"`{cmd}`"
                )
                if problem:
                    return f"{b.where}: hook {h['id']}: {problem}"
    return None


def update(doc: str, blocks: list[Block], bodies: dict[int, str]) -> None:
    """Write the new bodies (by the block's line) into the doc, from the last so offsets hold."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    for b in sorted(blocks, key=lambda x: -x.start):
        if b.line in bodies:
            text = text[: b.start] + bodies[b.line] + text[b.end :]
    tmp = (ROOT / doc).with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(ROOT / doc)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("docs", nargs="*", help="docs to check (default: README.md and docs/*.md)")
    ap.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when a block is stale or fails"
    )
    args = ap.parse_args(argv)
    failed = 0
    for doc in args.docs or doc_paths():
        blocks = blocks_of(doc)
        bodies = {}
        for b in blocks:
            try:
                if b.kind == "sample" and b.closed and not b.marker_error:
                    now = generate(b)  # once: a stale sample is rewritten with this output
                    problem = None if normalise(b.body) == normalise(now) else stale_message(b, now)
                    if problem and not args.check:
                        bodies[b.line] = now
                        print(f"{b.where}: rewrote the sample of `{b.rest}`")
                        continue
                else:
                    problem = check_block(b)
            except Skip as e:
                print(f"{b.where}: skipped: {e}")
                continue
            except AssertionError as e:
                problem = str(e)
            if problem:
                failed += 1
                print(problem)
        if bodies:
            update(doc, blocks, bodies)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # this checkout's graphrag_audit (the commands themselves get PYTHONPATH)
    sys.exit(main())
