"""The typer application: the commands in ``--help`` order, ``--version``, :func:`main`, and usage errors
in one line: ``graphrag-audit: error: --level: must be at least 0 (got '-1')``, exit 2 (:class:`OneLineGroup`
rewrites typer's usage blocks and pydantic's wording; not the no-arguments help)."""

from __future__ import annotations

import re
from typing import Annotated, cast

import typer
from typer.core import TyperGroup

from graphrag_audit import __version__
from graphrag_audit.cli.bundle import bundle_cmd
from graphrag_audit.cli.diff import diff_cmd
from graphrag_audit.cli.explain import explain_cmd
from graphrag_audit.cli.levels import levels_cmd
from graphrag_audit.cli.plan import plan_cmd
from graphrag_audit.cli.report import report_cmd
from graphrag_audit.cli.run import run_app, say
from graphrag_audit.cli.tree import tree_cmd
from graphrag_audit.cli.update_run import update_run_cmd
from graphrag_audit.errors import visible

BadParameter = typer.BadParameter
#: click's UsageError, the base of every usage error; typer exports only its subclass BadParameter
#: (typer >= 0.29 vendors click privately, older typer uses the standalone click)
UsageError = cast("type[Exception]", BadParameter.__base__)

PROG = "graphrag-audit"


class OneLineUsageError(UsageError):  # type: ignore[valid-type,misc]
    """A usage error shown as one line (``show``), exit status 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        say(f"{PROG}: error: {visible(self.message)}\n")


class OneLineGroup(TyperGroup):
    """The application's group: usage errors (its own and its commands') print one line."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except UsageError as exc:
            if not args and self.no_args_is_help:  # click >= 8.2's NoArgsIsHelpError: typer shows the help
                raise
            raise _one_line(exc) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            raise _one_line(exc) from None


def _one_line(exc) -> OneLineUsageError:
    return exc if isinstance(exc, OneLineUsageError) else OneLineUsageError(one_line(exc))


def one_line(exc) -> str:
    """The message of a click/typer usage error, in one line without typer's or pydantic's framing."""
    param = getattr(exc, "param", None)
    # a MissingParameter (a BadParameter with a param_type) keeps click's "Missing argument 'DIR'."
    if isinstance(exc, BadParameter) and not hasattr(exc, "param_type") and param is not None:
        errors = getattr(exc.__cause__, "errors", None)  # typer >= 0.29 converts with pydantic
        words = (_pydantic_words(errors()[0]) if errors else None) or exc.message
        source = exc.ctx.get_parameter_source(param.name) if exc.ctx is not None else None
        if getattr(source, "name", "") == "ENVIRONMENT":
            words += f" (from the environment variable {param.envvar})"
        text = f"{_param_name(param)}: {words}"
    else:
        text = exc.format_message()
    text = " ".join(text.split()).rstrip(".")
    names: list[str] = []
    ctx = exc.ctx
    while ctx is not None and ctx.parent is not None:  # the root's name is how Python was run
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    bad = re.match(r"--format: '([^']*)' is not one of", text)
    hint = _HTML_HINTS.get(" ".join(names)) if bad and bad.group(1).lower() == "html" else None
    listed = "options" if names else "commands"
    return f"{text}; {hint or ' '.join([PROG, *names]) + ' --help lists the ' + listed}"


_REPORT_HTML = f"{PROG} report DIR -o FILE.html"
#: command -> where to go for ``-f html``, which only ``report`` writes
_HTML_HINTS = {
    "levels": f"the HTML page is {_REPORT_HTML}",
    "tree": f"the HTML page, with the tree coloured by what N sends, is {_REPORT_HTML}",
    "plan": f"a plan has no HTML form (-f markdown renders one); one index's HTML page is {_REPORT_HTML}",
    "diff": f"a diff has no HTML form (-f markdown renders one); one index's HTML page is {_REPORT_HTML}",
}


def _param_name(param) -> str:
    if param.param_type_name == "argument":
        return (param.metavar or param.name or "argument").upper()
    longs = [o for o in param.opts if o.startswith("--")]
    return (longs or param.opts or [param.name or "option"])[0]


def _pydantic_words(err: dict) -> str | None:
    """pydantic's error (typer's coercion of min=/max=, int, float, Enum) in the tool's words, None when
    it is another."""
    kind, ctx = err["type"], err.get("ctx") or {}
    shown = f" (got {str(err['input'])[:40]!r})"
    if kind in ("greater_than_equal", "less_than_equal"):
        least, bound = ("at least", ctx["ge"]) if kind == "greater_than_equal" else ("at most", ctx["le"])
        return f"must be {least} {int(bound) if float(bound).is_integer() else bound}{shown}"
    if kind.startswith("int_"):
        return "must be a whole number" + shown
    if kind.startswith("float_"):
        return "must be a number" + shown
    if kind == "value_error":
        inner = str(ctx.get("error", "")) or err.get("msg", "")
        m = re.fullmatch(r"'(.*)' is not one of (.*?)\.?", inner, re.S)
        if m:  # an Enum choice: --format nope
            choices = ", ".join(c.strip().strip("'") for c in m.group(2).split(","))
            return f"{m.group(1)[:40]!r} is not one of {choices}"
        return inner.removeprefix("Value error, ")
    return None


app = typer.Typer(
    name="graphrag-audit",
    cls=OneLineGroup,
    help="Audit what a Microsoft GraphRAG index's community_level really sends to global search.\n\n"
    "Exit codes: 0 = no finding at or above --fail-on, 1 = findings at or above it, "
    "2 = usage error, unreadable index or unwritable stdout, 141 = stdout's reader went away (| head). "
    "A parquet table may decode to at most max(256 MiB, 100 x its file size), 16 GiB at most: "
    "GRAPHRAG_AUDIT_MAX_DECODED_BYTES sets another limit.",
    no_args_is_help=True,
    add_help_option=False,  # the callback's own --help below
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
for _name, _function in (
    ("levels", levels_cmd),
    ("tree", tree_cmd),
    ("report", report_cmd),
    ("plan", plan_cmd),
    ("explain", explain_cmd),
    ("diff", diff_cmd),
    ("update-run", update_run_cmd),
    ("bundle", bundle_cmd),
):
    app.command(_name)(_function)


def _version_cb(value: bool):
    if value:
        typer.echo(f"graphrag-audit {__version__}")
        raise typer.Exit()


def _help_cb(ctx: typer.Context, value: bool):
    if value:
        typer.echo(ctx.get_help())
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_cb, is_eager=True, help="Show the version and exit."),
    ] = False,
    # click's own --help is unset (None) without --help, and typer imports pydantic (~0.1 s) to
    # convert None: this one is False, which typer leaves as it is (``levels --help`` stays quick)
    show_help: Annotated[
        bool,
        typer.Option("--help", callback=_help_cb, is_eager=True, help="Show this message and exit."),
    ] = False,
):
    pass


def main() -> None:
    run_app(app)


if __name__ == "__main__":  # pragma: no cover
    main()
