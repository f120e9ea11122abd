"""What every command goes through: exit codes (entry.py's help lists them), the standard streams in
any state, the writes."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
import traceback
from pathlib import Path

import typer

from graphrag_audit.cli.options import TOKENIZERS, Color
from graphrag_audit.errors import IndexInputError, visible

EXIT_BAD_INPUT = 2
#: the reader of stdout went away (``| head``): no message, as the shell reports SIGPIPE (128 + 13)
EXIT_BROKEN_PIPE = 141


def fail(message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    say(f"graphrag-audit: error: {visible(str(message))}\n")  # one line, no escapes
    return typer.Exit(code)


def say(text: str) -> None:
    """Write ``text`` to stderr, scrubbed of credentials; if stderr fails the text is lost, nothing raises."""
    from graphrag_audit.sanitise.secrets import scrub

    try:
        sys.stderr.write(scrub(text))
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        _drain(2)


def _drain(fd: int) -> None:
    """Point ``fd`` at /dev/null, so that Python's flush at exit succeeds (not exit status 120)."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)


class _ClosedStdout:
    """``sys.stdout`` when the process started with stdout closed (``>&-``): a write fails (exit 2)."""

    encoding, errors = "utf-8", "strict"

    def write(self, text: str) -> int:
        raise OSError(9, "standard output is closed")

    def fileno(self) -> int:
        raise OSError(9, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class _CompleteWrites(io.RawIOBase):
    """fd 1 writing every byte or raising: CPython's stdout drops the rest of a short write (a full disk),
    so a truncated output would exit 0; writing the rest again raises (EPIPE, ENOSPC)."""

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return 1

    def isatty(self) -> bool:
        return os.isatty(1)

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            done += os.write(1, view[done:])
        return done


def _claim_standard_fds() -> None:
    """Open /dev/null on any of fds 0-2 the process started without (no later file becomes fd 1 or 2),
    and rewrap ``sys.stdout`` (same encoding, errors, buffering) over :class:`_CompleteWrites`."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            _drain(fd)
            if fd == 1:
                sys.stdout = _ClosedStdout()
            elif fd == 2:
                sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives until exit
    out = sys.stdout
    try:
        if not isinstance(out, io.TextIOWrapper) or out.fileno() != 1:
            return
        out.flush()
    except (OSError, ValueError):
        return
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(_CompleteWrites()),
        encoding=out.encoding,
        errors=out.errors,
        line_buffering=out.line_buffering,
    )


def run_app(app: typer.Typer) -> None:
    """Run ``app`` as the process's command; a failure to write stdout or any escaped exception becomes
    its exit status (never a traceback)."""
    _claim_standard_fds()
    try:
        app()
    except SystemExit as exc:  # typer's EPIPE exit 1: the reader is gone, quiet like a Unix tool
        if exc.code == 1 and isinstance(exc.__context__, OSError) and exc.__context__.errno == errno.EPIPE:
            _drain(1)
            sys.exit(EXIT_BROKEN_PIPE)
        raise
    except KeyboardInterrupt:  # pragma: no cover - last resort, never a traceback
        say("graphrag-audit: error: interrupted\n")
        sys.exit(130)
    except BaseException as exc:
        if isinstance(exc, OSError) and exc.filename is None:  # writing stdout
            if exc.errno == errno.EPIPE:  # raised outside typer's guard: its usage message to stderr
                _drain(2)
            else:
                _drain(1)
                say(f"graphrag-audit: error: stdout: cannot write the output ({exc.strerror or exc})\n")
            sys.exit(EXIT_BAD_INPUT)
        msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        say(f"graphrag-audit: error: internal error ({visible(msg)})\n")
        sys.exit(EXIT_BAD_INPUT)


def output_guard(index_dir: Path, reads=()):
    """The write guard of the index ``index_dir`` and the other files the run ``reads``; exit 2 when the
    index is not found."""
    from graphrag_audit.io.locate import locate_index
    from graphrag_audit.io.remote import location_of
    from graphrag_audit.io.safe_write import Guard

    guard = Guard()
    try:
        if location_of(index_dir) is None:  # remote storage: no local file to protect
            files = locate_index(index_dir)
            guard.protect(files.output_dir, files.tables.values(), files.settings_file)
    except IndexInputError as exc:
        raise fail(str(exc)) from None
    for path in reads:
        guard.protect_read(path)
    return guard


def output_charset_for(output: Path | None):
    """Context manager: index text rendered for stdout's encoding, or for a UTF-8 file."""
    from graphrag_audit.render.console import stream_encoding
    from graphrag_audit.sanitise.common import output_charset

    return output_charset(stream_encoding(sys.stdout) if output is None else None)


def output_target(output: Path | None, index_dir: Path, reads=(), guard_of=None):
    """``-o`` checked before any work: (None, None) for stdout, else the file and the guard
    :func:`write_payload` writes through (``guard_of()``, default the index's); exit 2 for a bad target."""
    from graphrag_audit.io.safe_write import WriteError, check_file_target

    if output is None or str(output) == "-":
        return None, None
    guard = guard_of() if guard_of else output_guard(index_dir, reads)
    try:
        check_file_target(output, guard)
    except WriteError as exc:
        raise fail(str(exc)) from None
    return output, guard


def write_payload(text, output: Path | None, guard=None) -> None:
    """``text`` (a string or string chunks) to stdout (``output`` None) or atomically to ``output``."""
    from graphrag_audit.io.safe_write import Guard, WriteError, write_file

    chunks = [text] if isinstance(text, str) else text
    if output is None:
        from graphrag_audit.render.console import write_stream

        for chunk in chunks:
            write_stream(chunk, sys.stdout)  # never a UnicodeEncodeError, whatever stdout's encoding
        return

    def produce(fh) -> None:
        for chunk in chunks:
            fh.write(chunk.encode("utf-8"))

    try:
        write_file(output, text if isinstance(text, str) else produce, guard or Guard())
    except WriteError as exc:
        raise fail(str(exc)) from None


def emit(render, output: Path | None, guard, debug: bool) -> str:
    """``render()`` (the output's text) made for the output's charset, then written to it."""
    with output_charset_for(output):
        text = run_guarded(render, debug)
    run_guarded(lambda: write_payload(text, output, guard), debug)
    return text


class Progress:
    """A progress bar with the current step on stderr when it is a terminal; silent when piped."""

    def __init__(self, enabled: bool):
        from graphrag_audit.render.console import dumb_terminal

        self.bar = None
        if enabled and not dumb_terminal():  # a progress bar moves the cursor: not on TERM=dumb
            import rich.progress as rp
            from rich.console import Console

            columns = (rp.SpinnerColumn(), rp.TextColumn("{task.description}"), rp.BarColumn())
            self.bar = rp.Progress(
                *columns, rp.TimeElapsedColumn(), console=Console(file=sys.stderr), transient=True
            )
            # reading, tree, selection, costs, depth, rendering (cost steps add one per level)
            self.task = self.bar.add_task("reading the index", total=6)
            self.bar.start()

    def __enter__(self):
        return self

    def __call__(self, message: str) -> None:
        if self.bar is not None:
            task = self.bar.tasks[0]
            if task.completed + 1 >= (task.total or 0):
                self.bar.update(self.task, total=(task.total or 0) + 1)
            self.bar.update(self.task, description=message, advance=1)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def run_guarded(fn, debug: bool):
    """Run ``fn``; bad input or an unexpected bug -> one line + exit 2."""
    try:
        return fn()
    except KeyboardInterrupt:
        raise fail("interrupted", 130) from None
    except MemoryError:
        raise fail("out of memory: the index needs more memory than this machine has free") from None
    except Exception as exc:
        if isinstance(exc, typer.Exit) or (isinstance(exc, OSError) and exc.filename is None):
            raise  # an exit, or an OSError not about a file: writing stdout (run_app reports it) or a bug
        if debug:
            traceback.print_exc()
        if isinstance(exc, IndexInputError):
            raise fail(str(exc)) from None
        if isinstance(exc, OSError):  # e.g. a path component longer than NAME_MAX met while looking around
            raise fail(f"{exc.filename}: cannot access ({exc.strerror or exc})") from None
        msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]  # a bug or an input not anticipated
        raise fail(f"internal error ({msg}); rerun with --debug for the traceback") from None


def check_tokenizer(tokenizer: str | None) -> None:
    """``--tokenizer``, when given, names one of the TOKENIZERS, else exit 2."""
    if tokenizer is not None and tokenizer not in TOKENIZERS:
        raise fail(f"--tokenizer: unknown encoding {tokenizer!r} ({', '.join(TOKENIZERS)})")


def audit_options(values: dict, **given):
    """AuditOptions from a command's ``locals()`` (the fields among them) and ``given``."""
    from dataclasses import fields

    from graphrag_audit.results.audit import AuditOptions

    names = {f.name for f in fields(AuditOptions)}
    return AuditOptions(**{**{k: v for k, v in values.items() if k in names}, **given})


def audit_index(index_dir: Path, opts, cache, progress=None):
    """(model, report) of ``audit_with_model``, the token cache saved; exit 2 for ``--relevant`` numbers
    that are no community of the index."""
    from graphrag_audit.analysis.audit import audit_with_model
    from graphrag_audit.analysis.dynamic import not_communities

    def check(model) -> None:
        bad = not_communities(model, opts.relevant)
        if bad:
            shown = ", ".join(map(str, bad[:10])) + (f" and {len(bad) - 10:,} more" if len(bad) > 10 else "")
            what = "not a community" if len(bad) == 1 else "not communities"
            raise fail(f"--relevant: {what} of this index: {shown}")

    check_model = None if opts.relevant is None else check
    model, report = audit_with_model(
        index_dir, opts, progress=progress, check_model=check_model, token_cache=cache
    )
    if cache is not None:
        cache.save()
    return model, report


#: text width when no terminal is found anywhere (rich wraps prose at spaces within it)
PIPED_WIDTH = 100
#: the narrowest text output (--width's minimum; a narrower COLUMNS or terminal gets this width)
MIN_WIDTH = 40


def text_width(width: int | None, output: Path | None) -> int:
    """``--width``; -o FILE: :data:`PIPED_WIDTH`; else ``COLUMNS``, stdout's, stderr's or the controlling
    terminal's width (``2>&1 | less``), at least :data:`MIN_WIDTH`; else :data:`PIPED_WIDTH`."""
    if width is not None:
        return width
    if output is not None:  # a file (-o): the same text wherever it was made
        return PIPED_WIDTH
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return max(MIN_WIDTH, int(cols))
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream.isatty():
                got = os.get_terminal_size(stream.fileno()).columns
                if got > 0:
                    return max(MIN_WIDTH, got)
        except (OSError, ValueError, AttributeError):
            continue
    with contextlib.suppress(OSError):  # the controlling terminal's (2>&1 | less)
        fd = os.open("/dev/tty", os.O_RDONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            return max(MIN_WIDTH, os.get_terminal_size(fd).columns or PIPED_WIDTH)
        finally:
            os.close(fd)
    return PIPED_WIDTH


def text_color(color: Color, output: Path | None) -> bool:
    """``--color``; auto: stdout is a terminal, NO_COLOR unset and TERM not dumb (a file: only always)."""
    if color != Color.auto or output is not None:
        return color == Color.always
    from graphrag_audit.render.console import dumb_terminal

    if os.environ.get("NO_COLOR") or dumb_terminal():
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def findings_exit(findings, fail_on) -> typer.Exit:
    """Exit 1 when one of ``findings`` is at or above ``--fail-on`` (never: 0), else 0."""
    from graphrag_audit.rules import SEVERITY_RANK

    limit = SEVERITY_RANK.get(fail_on.value)  # None for never
    return typer.Exit(int(limit is not None and any(SEVERITY_RANK[f.severity] >= limit for f in findings)))


def parsed(parse, *args, option: str | None = None):
    """``parse(*args)``, its ValueError turned into exit 2 (after ``option: ``)."""
    try:
        return parse(*args)
    except ValueError as exc:
        raise fail(f"{option}: {exc}" if option else str(exc)) from None


def open_token_cache(folder, guard, index_dir: Path, reads, debug: bool):
    """The ``--token-cache`` loaded (None without it), writing through ``guard`` or the index's; a damaged
    cache file is a warning and the run starts empty."""
    if folder is None:
        return None
    from graphrag_audit.graphrag.token_cache import TokenCache

    cache = TokenCache(folder, guard or output_guard(index_dir, reads))
    warning = run_guarded(cache.load, debug)
    if warning:
        say(f"graphrag-audit: warning: {visible(warning)}\n")
    return cache
