"""The command line: parse options, call the library, pick a renderer and an exit code.

Exit codes: 0 = no finding at or above --fail-on; 1 = findings at or above it;
2 = usage error or unreadable index (one line on stderr, no traceback unless --debug).
"""

from __future__ import annotations

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
         "2 = usage error or unreadable index.",
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

    sys.stderr.write(f"graphrag-audit: error: {visible(str(message))}\n")  # one line, no escapes
    return typer.Exit(code)


def use_color(color: Color, stream) -> bool:
    if color == Color.never:
        return False
    if color == Color.always:
        return True
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def check_output_path(output: Path | None, index_dir: Path) -> None:
    """Refuse to write inside the index directory (the tool is read-only there)."""
    if output is None:
        return
    try:
        out = output.resolve()
        idx = index_dir.resolve()
    except (OSError, RuntimeError):  # symlink loops: RuntimeError before Python 3.13
        return
    if out == idx or idx in out.parents:
        raise fail(f"{output}: refusing to write inside the index directory {index_dir}")


def write_payload(text, output: Path | None) -> None:
    """``text``: the payload as one string, or as an iterable of string chunks written one
    after another (a streamed JSON document is never held whole)."""
    chunks = [text] if isinstance(text, str) else text
    if output is None:
        for chunk in chunks:
            sys.stdout.write(chunk)
        sys.stdout.flush()
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            for chunk in chunks:
                fh.write(chunk)
    except OSError as exc:
        raise fail(f"{output}: cannot write ({exc.strerror or exc})") from None


class Progress:
    """A progress bar with the current step on stderr when it is a terminal; silent when piped."""

    STEPS = 6  # reading, tree, selection, costs, depth, rendering (cost steps add one per level)

    def __init__(self, enabled: bool):
        self.bar = None
        if enabled:
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
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the output to FILE, not stdout."),
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
                                "read_indexer_reports and report agreement per level."),
    color: Color = typer.Option(Color.auto, "--color", envvar="GRAPHRAG_AUDIT_COLOR",
                                help="Colour in text output (NO_COLOR is honoured)."),
    width: Optional[int] = typer.Option(None, "--width", min=40, envvar="GRAPHRAG_AUDIT_WIDTH",
                                        help="Text output width (default: terminal width, or 100 when piped)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
):
    """Per-level audit: the tree, what each community_level sends (graphrag >= 2.0 vs < 2.0), costs, findings."""
    from graphrag_audit.audit import AuditOptions, audit
    from graphrag_audit.findings import SEVERITY_RANK
    from graphrag_audit.render import render

    stream = sys.stdout if output is None else None
    check_output_path(output, index_dir)

    def work():
        progress = Progress(enabled=sys.stderr.isatty() and fmt == Format.text or
                            (sys.stderr.isatty() and output is not None))
        try:
            opts = AuditOptions(level=2 if level is None else level, tokenizer=tokenizer,
                                max_context_tokens=max_context_tokens, costs=not no_costs,
                                max_unreachable=max_unreachable, max_inflation=max_inflation)
            if tokenizer not in ("cl100k_base", "o200k_base", "estimate"):
                raise fail(f"--tokenizer: unknown encoding {tokenizer!r} (cl100k_base, o200k_base, estimate)")
            report = audit(index_dir, opts, progress=progress)
            if verify:
                from graphrag_audit.verify import verify_with_graphrag

                progress("running graphrag's read_indexer_reports")
                report.verify = verify_with_graphrag(report)
        finally:
            progress.stop()
        return report

    report = run_guarded(work, debug)
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
        text = run_guarded(lambda: _render(render, report, fmt.value, kw), debug)
    run_guarded(lambda: write_payload(text, output), debug)
    if fmt == Format.github:
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            from graphrag_audit.render.markdown import render_markdown

            try:
                with open(summary, "a", encoding="utf-8") as fh:
                    fh.write(render_markdown(report))
            except OSError as exc:
                sys.stderr.write(f"graphrag-audit: warning: cannot append to $GITHUB_STEP_SUMMARY ({exc})\n")
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
from graphrag_audit.cli_tree import register as _reg_tree; _reg_tree(app)  # noqa: E402,E702
from graphrag_audit.cli_plan import register as _reg_plan; _reg_plan(app)  # noqa: E402,E702


def main() -> None:
    try:
        app()
    except SystemExit:
        raise
    except BaseException as exc:  # pragma: no cover - last resort, never a traceback
        if isinstance(exc, KeyboardInterrupt):
            sys.stderr.write("graphrag-audit: error: interrupted\n")
            sys.exit(130)
        sys.stderr.write(f"graphrag-audit: error: internal error ({type(exc).__name__}: {exc})\n")
        sys.exit(EXIT_BAD_INPUT)


if __name__ == "__main__":  # pragma: no cover
    main()
