"""Usage errors in one line: ``graphrag-audit: error: --level: must be at least 0 (got -1)``, exit 2.

:class:`OneLineGroup`, the application's group, turns typer's usage blocks and pydantic's wording into
:class:`OneLineUsageError`; the no-arguments help is left as it is.
"""

from __future__ import annotations

import re
from typing import cast

import typer
from typer.core import TyperGroup

BadParameter = typer.BadParameter
#: click's UsageError, the base of every usage error; typer exports only its subclass BadParameter
#: (typer >= 0.29 vendors click privately, older typer uses the standalone click)
UsageError = cast("type[Exception]", BadParameter.__base__)

PROG = "graphrag-audit"


class OneLineUsageError(UsageError):  # type: ignore[valid-type,misc]
    """A usage error shown as one line (``show``), exit status 2."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(message)

    def show(self, file=None) -> None:
        from graphrag_audit.cli.run import say
        from graphrag_audit.errors import visible

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
        cause = exc.__cause__
        words = None
        if cause is not None and hasattr(cause, "errors"):
            try:
                errs = cause.errors()
                words = _pydantic_words(errs[0]) if errs else None
            except Exception:  # noqa: BLE001 - any other shape: click's own message below
                words = None
        words = words or exc.message
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


def _number(v) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _pydantic_words(err: dict) -> str | None:
    """pydantic's error dict (typer's coercion) as the tool's words, None when it is not one we know."""
    kind, ctx, got = err.get("type", ""), err.get("ctx") or {}, err.get("input")
    shown = f" (got {str(got)[:40]!r})" if got is not None else ""
    if kind in ("greater_than_equal", "greater_than"):
        least = "at least" if kind.endswith("equal") else "more than"
        return f"must be {least} {_number(ctx.get('ge', ctx.get('gt')))}{shown}"
    if kind in ("less_than_equal", "less_than"):
        most = "at most" if kind.endswith("equal") else "less than"
        return f"must be {most} {_number(ctx.get('le', ctx.get('lt')))}{shown}"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "must be a whole number" + shown
    if kind in ("float_parsing", "float_type"):
        return "must be a number" + shown
    if kind in ("bool_parsing", "bool_type"):
        return "must be true or false" + shown
    if kind == "value_error":
        inner = str(ctx.get("error", "")) or err.get("msg", "")
        m = re.fullmatch(r"'(.*)' is not one of (.*?)\.?", inner, re.S)
        if m:  # an Enum choice: --format nope
            choices = ", ".join(c.strip().strip("'") for c in m.group(2).split(","))
            return f"{m.group(1)[:40]!r} is not one of {choices}"
        return inner.removeprefix("Value error, ")
    return None
