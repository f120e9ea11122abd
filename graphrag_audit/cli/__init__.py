"""The command line: parse options, call the library, pick a renderer and an exit code.

Exit codes: 0 = no finding at or above --fail-on; 1 = findings at or above it;
2 = usage error or unreadable index (one line on stderr, no traceback unless --debug; exit 2
whatever state stderr is in), or stdout cannot be written; 141 = the reader of stdout went away.
"""

from __future__ import annotations

import errno
import io
import os
import sys
import traceback
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from graphrag_audit import __version__
from graphrag_audit.errors import IndexInputError

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2

app = typer.Typer(
    name="graphrag-audit",
    help="Audit what a Microsoft GraphRAG index's community_level really sends to global search.\n\n"
         "Exit codes: 0 = no finding at or above --fail-on, 1 = findings at or above it, "
         "2 = usage error, unreadable index or unwritable stdout, 141 = stdout's reader went away (| head). "
         "A parquet table may decode to at most max(256 MiB, 100 x its file size), 16 GiB at most: "
         "GRAPHRAG_AUDIT_MAX_DECODED_BYTES sets another limit.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


class Format(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"


class JsonIds(str, Enum):
    full = "full"
    delta = "delta"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


def _version_cb(value: bool):
    if value:
        typer.echo(f"graphrag-audit {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version_cb, is_eager=True,
                                       help="Show the version and exit.")):
    pass


# ---- shared plumbing for every command ---------------------------------------------------
def fail(message: str, code: int = EXIT_BAD_INPUT) -> "typer.Exit":
    from graphrag_audit.errors import visible

    say(f"graphrag-audit: error: {visible(str(message))}\n")  # one line, no escapes
    return typer.Exit(code)


# ---- the standard streams in any state: closed, full, a closed pipe ----------------------
#: exit status when the reader of stdout went away (``| head``): no message, like ``cat`` or
#: ``yes`` killed by SIGPIPE, which the shell reports as 128 + 13
EXIT_BROKEN_PIPE = 141


def say(text: str) -> None:
    """Write ``text`` to stderr. When stderr is closed, full or a closed pipe the text is lost
    but nothing raises: the exit code still tells what happened (2 for bad input)."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        _drain(2)


def _drain(fd: int) -> None:
    """Point ``fd`` at /dev/null: what is still buffered for it, and Python's flush at exit,
    then succeed instead of failing again (which would turn the exit status into 120)."""
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    try:
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    except OSError:
        pass


class _ClosedStdout:
    """``sys.stdout`` when the process was started with stdout closed (``>&-``): writing the
    output fails with EBADF, reported by :func:`main` as one line and exit 2."""

    encoding, errors = "utf-8", "strict"

    def write(self, text: str) -> int:
        raise OSError(9, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(9, "standard output is closed")


class _CompleteWrites(io.RawIOBase):
    """fd 1 for ``sys.stdout``: a write returns only once every byte is written, or raises.

    CPython's own stdout can return short: when the reader of a pipe goes away in the middle of a
    large write (``| head``), or a disk fills up, ``os.write`` writes part and the rest is dropped
    without an error, so a truncated output would exit 0. Here the rest is written again, which
    raises (EPIPE, ENOSPC) and :func:`main` reports it."""

    def __init__(self, fd: int = 1):
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            done += os.write(self._fd, view[done:])
        return done

    def close(self) -> None:  # fd 1 stays open: Python's own shutdown flushes and closes it
        super().close()


def _complete_stdout_writes() -> None:
    """Rewrap ``sys.stdout`` (same encoding, errors and buffering) over :class:`_CompleteWrites`."""
    out = sys.stdout
    if not isinstance(out, io.TextIOWrapper):
        return
    try:
        if out.fileno() != 1:
            return
        out.flush()
    except (OSError, ValueError):
        return
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(_CompleteWrites(1)), encoding=out.encoding, errors=out.errors,
                                  line_buffering=out.line_buffering)


def _claim_standard_fds() -> None:
    """Open /dev/null on any of fds 0-2 the process was started without, so that no file opened
    later (an index table, the -o output) becomes fd 1 or 2 and receives stray output; then a
    closed stdout fails when written (:class:`_ClosedStdout`) and a closed stderr drops text."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            _drain(fd)
            if fd == 1:
                sys.stdout = _ClosedStdout()
            elif fd == 2:
                sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives until exit
    _complete_stdout_writes()


def _output_failed(exc: BaseException) -> int | None:
    """The exit status when ``exc`` (out of the command) is a failure to write stdout, else None.

    Everything a command does runs in :func:`run_guarded`, which turns every other OSError into an
    input error; only writing the output (and typer's usage messages) happens outside it. typer
    turns EPIPE on stdout into exit 1 inside the command (its ``_main``); this undoes that."""
    if isinstance(exc, SystemExit):
        cause = exc.__context__
        if exc.code == 1 and isinstance(cause, OSError) and cause.errno == errno.EPIPE:
            _drain(1)  # the reader is gone: quiet, like a Unix tool
            return EXIT_BROKEN_PIPE
        return None
    if isinstance(exc, OSError) and exc.filename is None:
        if exc.errno == errno.EPIPE:  # raised outside typer's guard: its usage message to stderr
            _drain(2)
            return EXIT_BAD_INPUT
        _drain(1)
        say(f"graphrag-audit: error: stdout: cannot write the output ({exc.strerror or exc})\n")
        return EXIT_BAD_INPUT
    return None


def use_color(color: Color, stream) -> bool:
    if color == Color.never:
        return False
    if color == Color.always:
        return True
    if os.environ.get("NO_COLOR"):
        return False
    from graphrag_audit.render.console import dumb_terminal

    if dumb_terminal():  # TERM=dumb: no escape sequences unless --color always asks for them
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def output_guard(index_dir: Path):
    """The write guard of the index ``index_dir`` resolves to (see :mod:`graphrag_audit.io.safe_write`);
    an index that cannot be located is the usual one-line exit 2."""
    from graphrag_audit.io.safe_write import Guard

    try:
        return Guard.for_index(index_dir)
    except IndexInputError as exc:
        raise fail(str(exc)) from None


def output_charset_for(output: Path | None):
    """Context manager: render index text for where the payload goes (stdout's encoding, or a
    UTF-8 file); see render.escape.output_charset and render.console."""
    from graphrag_audit.render.console import stream_encoding
    from graphrag_audit.escape import output_charset
    from graphrag_audit.io.safe_write import is_stdout

    to_stdout = output is None or is_stdout(output)
    return output_charset(stream_encoding(sys.stdout) if to_stdout else None)


#: the guard each checked -o target was checked with (for write_payload calls without one)
_CHECKED: dict[str, object] = {}


def check_output_path(output: Path | None, index_dir: Path):
    """Before any work: refuse an ``-o`` target that the write would refuse (inside the index
    directory DIR resolves to, over a table it reads, a link, a directory, a FIFO or device).
    Returns the guard to pass to :func:`write_payload` (None for stdout: no ``-o`` or ``-o -``)."""
    from graphrag_audit.io.safe_write import WriteError, check_file_target, is_stdout

    if output is None or is_stdout(output):
        return None
    guard = output_guard(index_dir)
    try:
        check_file_target(output, guard)
    except WriteError as exc:
        raise fail(str(exc)) from None
    _CHECKED[os.fspath(output)] = guard
    return guard


def write_payload(text, output: Path | None, guard=None) -> None:
    """``text`` to stdout (no ``-o``, or ``-o -``) or atomically to the file ``output``. ``text``
    is the payload as one string, or an iterable of string chunks written one after another (a
    streamed JSON document is never held whole)."""
    from graphrag_audit.io.safe_write import Guard, WriteError, is_stdout, write_file

    chunks = [text] if isinstance(text, str) else text
    if output is None or is_stdout(output):
        from graphrag_audit.render.console import write_stream

        for chunk in chunks:
            write_stream(chunk, sys.stdout)  # never a UnicodeEncodeError, whatever stdout's encoding
        return
    if guard is None:
        guard = _CHECKED.get(os.fspath(output)) or Guard()

    def produce(fh) -> None:
        for chunk in chunks:
            fh.write(chunk.encode("utf-8"))

    try:
        write_file(output, text if isinstance(text, str) else produce, guard)
    except WriteError as exc:
        raise fail(str(exc)) from None


def stdout_if_dash(output: Path | None) -> Path | None:
    """``-o -`` means stdout: None."""
    from graphrag_audit.io.safe_write import is_stdout

    return None if is_stdout(output) else output


class Progress:
    """A progress bar with the current step on stderr when it is a terminal; silent when piped."""

    STEPS = 6  # reading, tree, selection, costs, depth, rendering (cost steps add one per level)

    def __init__(self, enabled: bool):
        from graphrag_audit.render.console import dumb_terminal

        self.bar = None
        if enabled and not dumb_terminal():  # a progress bar moves the cursor: not on TERM=dumb
            from rich.console import Console
            from rich.progress import BarColumn, Progress as RichProgress, SpinnerColumn, TextColumn, \
                TimeElapsedColumn

            self.bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                    TimeElapsedColumn(), console=Console(file=sys.stderr), transient=True)
            self.task = self.bar.add_task("reading the index", total=self.STEPS)
            self.bar.start()

    def __call__(self, message: str) -> None:
        if self.bar is not None:
            task = self.bar.tasks[0]
            if task.completed + 1 >= (task.total or 0):
                self.bar.update(self.task, total=(task.total or 0) + 1)
            self.bar.update(self.task, description=message, advance=1)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def run_guarded(fn, debug: bool):
    """Run ``fn``; bad input -> one line + exit 2; an unexpected bug -> one line + exit 2."""
    try:
        return fn()
    except typer.Exit:
        raise
    except IndexInputError as exc:
        if debug:
            traceback.print_exc()
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail("interrupted", 130) from None
    except MemoryError:
        raise fail("out of memory: the index needs more memory than this machine has free") from None
    except OSError as exc:
        if exc.filename is None:
            raise  # not about a file: writing stdout (main() reports it) or a bug (below)
        if debug:
            traceback.print_exc()
        # e.g. a path component longer than NAME_MAX (ENAMETOOLONG) met while looking around
        raise fail(f"{exc.filename}: cannot access ({exc.strerror or exc})") from None
    except Exception as exc:  # a bug or an input we did not anticipate: never a raw traceback
        if debug:
            traceback.print_exc()
        msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        raise fail(f"internal error ({msg}); rerun with --debug for the traceback") from None


# ---- levels --------------------------------------------------------------------------------
@app.command("levels")
def levels_cmd(
    ctx: typer.Context,
    index_dir: Path = typer.Argument(..., metavar="DIR", help="Index output directory, project root "
                                     "(settings.yaml), or a 0.x output/<timestamp>/artifacts layout."),
    level: Optional[int] = typer.Option(None, "--level", "-l", min=0, envvar="GRAPHRAG_AUDIT_LEVEL",
                                        help="The community_level your application queries with (findings "
                                             "are checked there; default 2 like graphrag's CLI). Given on "
                                             "the command line, text output also lists that level's reports "
                                             "per behaviour."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", envvar="GRAPHRAG_AUDIT_FORMAT",
                               help="Output format."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the output to FILE, not stdout "
                                          "(atomically; never inside the index directory; - = stdout)."),
    fail_on: FailOn = typer.Option(FailOn.error, "--fail-on", envvar="GRAPHRAG_AUDIT_FAIL_ON",
                                   help="Exit 1 when a finding of this severity or worse exists."),
    max_unreachable: float = typer.Option(0.25, "--max-unreachable", min=0.0, max=1.0,
                                          envvar="GRAPHRAG_AUDIT_MAX_UNREACHABLE",
                                          help="depth-mismatch fires when a larger share of roots or "
                                               "entities cannot reach --level."),
    max_inflation: float = typer.Option(1.2, "--max-inflation", min=1.0, envvar="GRAPHRAG_AUDIT_MAX_INFLATION",
                                        help="v2-inflation fires when graphrag >= 2.0 sends more than this "
                                             "many times the reports of graphrag < 2.0 at --level."),
    tokenizer: str = typer.Option("cl100k_base", "--tokenizer", envvar="GRAPHRAG_AUDIT_TOKENIZER",
                                  help="cl100k_base (exact, graphrag's default), o200k_base, or estimate "
                                       "(fast approximation)."),
    max_context_tokens: int = typer.Option(12000, "--max-context-tokens", min=1,
                                           help="graphrag's global search max_context_tokens (batch size)."),
    no_costs: bool = typer.Option(False, "--no-costs", help="Skip token counting and map-call batching."),
    json_ids: JsonIds = typer.Option(JsonIds.full, "--json-ids",
                                     help="-f json: 'full' lists every level's community ids (the default "
                                          "contract); 'delta' lists only the ids each level adds and removes "
                                          "since the previous one (lossless, linear in the index size)."),
    verify: bool = typer.Option(False, "--verify", help="Also run the installed graphrag's own "
                                "read_indexer_reports (and with costs its build_community_context) and report "
                                "agreement per level; exit 2 when graphrag cannot be imported here."),
    color: Color = typer.Option(Color.auto, "--color", envvar="GRAPHRAG_AUDIT_COLOR",
                                help="Colour in text output (NO_COLOR is honoured)."),
    width: Optional[int] = typer.Option(None, "--width", min=40, envvar="GRAPHRAG_AUDIT_WIDTH",
                                        help="Text output width (default: terminal width, or 100 when piped)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
):
    """Per-level audit: the tree, what each community_level sends (graphrag >= 2.0 vs < 2.0), costs, findings."""
    from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
    from graphrag_audit.findings import SEVERITY_RANK
    from graphrag_audit.render import render

    output = stdout_if_dash(output)
    stream = sys.stdout if output is None else None
    guard = check_output_path(output, index_dir)
    summary = os.environ.get("GITHUB_STEP_SUMMARY") if fmt == Format.github else None
    if summary:
        from graphrag_audit.io.safe_write import WriteError, check_append_target

        guard = guard or output_guard(index_dir)
        try:
            check_append_target(summary, guard)
        except WriteError as exc:
            raise fail(f"{exc.path}: {exc.problem} ($GITHUB_STEP_SUMMARY)") from None

    def work():
        progress = Progress(enabled=sys.stderr.isatty() and fmt == Format.text or
                            (sys.stderr.isatty() and output is not None))
        try:
            opts = AuditOptions(level=2 if level is None else level, tokenizer=tokenizer,
                                max_context_tokens=max_context_tokens, costs=not no_costs,
                                max_unreachable=max_unreachable, max_inflation=max_inflation)
            if tokenizer not in ("cl100k_base", "o200k_base", "estimate"):
                raise fail(f"--tokenizer: unknown encoding {tokenizer!r} (cl100k_base, o200k_base, estimate)")
            if verify:  # a check asked for that cannot run is an error, not a quiet "not run"
                from graphrag_audit.verify import graphrag_unusable_reason

                progress("importing graphrag")
                reason = graphrag_unusable_reason()
                if reason is not None:
                    raise fail(f"--verify: {reason}")
            model, report = audit_with_model(index_dir, opts, progress=progress)
            if verify:
                from graphrag_audit.verify import verify_with_graphrag

                progress("running graphrag's read_indexer_reports")
                report = report.with_verify(verify_with_graphrag(report, model))
        finally:
            progress.stop()
        return model, report

    model, report = run_guarded(work, debug)
    if guard is not None:
        guard.protect_model(model)
    del model
    is_tty = bool(stream is not None and stream.isatty())
    if width is None:
        try:
            w = os.get_terminal_size(sys.stdout.fileno()).columns if is_tty else 100
        except OSError:
            w = 100
    else:
        w = width
    kw = {}
    if fmt == Format.text:
        kw = dict(width=w, color=use_color(color, sys.stdout) if output is None else color == Color.always,
                  focus=level if _from_command_line(ctx, "level") else None)
    if fmt == Format.json:  # streamed: a deep index lists millions of ids
        from graphrag_audit.render.json import iter_json

        text = iter_json(report, json_ids=json_ids.value)
    else:
        with output_charset_for(output):
            text = run_guarded(lambda: _render(render, report, fmt.value, kw), debug)
    run_guarded(lambda: write_payload(text, output, guard), debug)
    if summary:
        from graphrag_audit.errors import visible
        from graphrag_audit.render.markdown import render_markdown
        from graphrag_audit.io.safe_write import WriteError, append_file

        try:
            warning = append_file(summary, render_markdown(report), guard)
        except WriteError as exc:
            raise fail(f"{exc.path}: {exc.problem} ($GITHUB_STEP_SUMMARY)") from None
        if warning:
            say(f"graphrag-audit: warning: $GITHUB_STEP_SUMMARY: {visible(warning)}\n")
    if fail_on == FailOn.never:
        raise typer.Exit(EXIT_OK)
    threshold = SEVERITY_RANK[fail_on.value]
    hit = any(SEVERITY_RANK[f.severity] >= threshold for f in report.findings)
    raise typer.Exit(EXIT_FINDINGS if hit else EXIT_OK)


def _from_command_line(ctx: typer.Context, name: str) -> bool:
    """True when the option was typed (not taken from an environment variable or its default)."""
    try:
        src = ctx.get_parameter_source(name)
        return src is not None and src.name == "COMMANDLINE"
    except (AttributeError, KeyError):
        return False


def _render(render, report, fmt, kw):
    return render(report, fmt, **kw)


# Further commands register themselves here (one import line each).
# --- command registrations ---
from graphrag_audit.cli.tree import register as _reg_tree; _reg_tree(app)  # noqa: E402,E702
from graphrag_audit.cli.plan import register as _reg_plan; _reg_plan(app)  # noqa: E402,E702


def main() -> None:
    _claim_standard_fds()
    try:
        app()
    except SystemExit as exc:
        code = _output_failed(exc)
        if code is not None:
            sys.exit(code)
        raise
    except BaseException as exc:  # pragma: no cover - last resort, never a traceback
        code = _output_failed(exc)
        if code is not None:
            sys.exit(code)
        if isinstance(exc, KeyboardInterrupt):
            say("graphrag-audit: error: interrupted\n")
            sys.exit(130)
        from graphrag_audit.errors import visible

        msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        say(f"graphrag-audit: error: internal error ({visible(msg)})\n")
        sys.exit(EXIT_BAD_INPUT)


if __name__ == "__main__":  # pragma: no cover
    main()
