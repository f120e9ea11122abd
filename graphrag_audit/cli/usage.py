"""Usage errors in one line: ``graphrag-audit: error: --level: must be at least 0 (got -1)``.

typer (0.29, with its vendored click) prints a bad option as a usage block, a blank line and
pydantic's wording ("Input should be greater than or equal to 0"). :class:`OneLineGroup`, the
application's group class, turns every usage error raised while the command line is parsed
(the group's and each command's) into :class:`OneLineUsageError`, which prints one line on
stderr in the tool's error format (:func:`graphrag_audit.cli.run.fail`'s) and exits 2. The
no-arguments help (``graphrag-audit`` alone) is left as it is.
"""

from __future__ import annotations

import os
import re

try:  # typer >= 0.2x vendors click as typer._click
    from typer._click.exceptions import BadParameter, MissingParameter, NoArgsIsHelpError, UsageError
except ImportError:  # older typer (graphrag 1.2's side environments pin 0.15) uses the standalone click
    from click.exceptions import BadParameter, MissingParameter, UsageError

    try:
        from click.exceptions import NoArgsIsHelpError
    except ImportError:  # click < 8.2 shows the no-arguments help without raising

        class NoArgsIsHelpError(UsageError):  # type: ignore[no-redef]
            """Never raised by this click: the no-arguments help is printed directly."""


from typer.core import TyperGroup

from graphrag_audit.cli.coercion import QuickParsing

PROG = "graphrag-audit"


class OneLineUsageError(UsageError):
    """A usage error shown as one line (``show``), exit status 2."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(message)

    def show(self, file=None) -> None:
        from graphrag_audit.cli.run import say
        from graphrag_audit.errors import visible

        say(f"{PROG}: error: {visible(self.message)}\n")


def _number(v) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _pydantic_words(err: dict) -> str | None:
    """pydantic's error dict (typer's coercion) as the tool's words, None when it is not one we know."""
    kind, ctx, got = err.get("type", ""), err.get("ctx") or {}, err.get("input")
    shown = f" (got {str(got)[:40]!r})" if got is not None else ""
    if kind in ("greater_than_equal", "greater_than"):
        return (
            f"must be {'at least' if kind.endswith('equal') else 'more than'} {_number(ctx.get('ge', ctx.get('gt')))}"
            + shown
        )
    if kind in ("less_than_equal", "less_than"):
        return (
            f"must be {'at most' if kind.endswith('equal') else 'less than'} {_number(ctx.get('le', ctx.get('lt')))}"
            + shown
        )
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


def _param_name(param) -> str:
    opts = list(getattr(param, "opts", ()) or ())
    if getattr(param, "param_type_name", "") == "argument":
        return (getattr(param, "metavar", None) or param.name or "argument").upper()
    longs = [o for o in opts if o.startswith("--")]
    return (longs or opts or [param.name or "option"])[0]


def one_line(exc: UsageError) -> str:
    """The message of a click/typer usage error, in one line without typer's or pydantic's framing."""
    if isinstance(exc, BadParameter) and not isinstance(exc, MissingParameter) and exc.param is not None:
        name = _param_name(exc.param)
        cause = exc.__cause__
        words = None
        if cause is not None and hasattr(cause, "errors"):
            try:
                errs = cause.errors()
                words = _pydantic_words(errs[0]) if errs else None
            except Exception:  # noqa: BLE001 - any other shape: click's own message below
                words = None
        words = words or exc.message
        env = getattr(exc.param, "envvar", None)
        if isinstance(env, str) and os.environ.get(env) is not None and not _typed(exc, exc.param):
            words += f" (from the environment variable {env})"
        text = f"{name}: {words}"
    else:
        text = exc.format_message()
    text = " ".join(text.split())
    names, ctx = [], getattr(exc, "ctx", None)
    while ctx is not None and ctx.parent is not None:  # the root's name is how Python was run
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    cmd = " ".join([PROG, *names])
    hint = _HINTS.get(
        (
            " ".join(names),
            _param_name(exc.param) if getattr(exc, "param", None) is not None else "",
            _bad_value(text),
        )
    )
    if hint:
        return f"{text.rstrip('.')}; {hint}"
    return f"{text.rstrip('.')}; {cmd} --help lists the {'options' if names else 'commands'}"


#: (command, option, value given) -> where to go instead, for a value users try that another command serves
_HINTS = {
    ("levels", "--format", "html"): f"the HTML page is {PROG} report DIR -o FILE.html",
    (
        "tree",
        "--format",
        "html",
    ): f"the HTML page, with the tree coloured by what N sends, is {PROG} report DIR -o FILE.html",
    (
        "plan",
        "--format",
        "html",
    ): f"a plan has no HTML form (-f markdown renders one); one index's HTML page is "
    f"{PROG} report DIR -o FILE.html",
    (
        "diff",
        "--format",
        "html",
    ): f"a diff has no HTML form (-f markdown renders one); one index's HTML page is "
    f"{PROG} report DIR -o FILE.html",
}


def _bad_value(text: str) -> str:
    """The value quoted in "--format: 'html' is not one of ..." (empty when there is none)."""
    m = re.match(r"[^:]*: '([^']*)' is not one of", text)
    return m.group(1).lower() if m else ""


def _typed(exc: UsageError, param) -> bool:
    """True when the option appears in the arguments being parsed (so its value did not come
    from the environment)."""
    import sys

    opts = set(getattr(param, "opts", ()) or ())
    argv = sys.argv[1:]
    return any(
        a in opts
        or any(a.startswith(o + "=") for o in opts if o.startswith("--"))
        or any(a.startswith(o) and len(a) > 2 for o in opts if not o.startswith("--"))
        for a in argv
    )


class OneLineGroup(QuickParsing, TyperGroup):
    """The application's group: usage errors (its own and its commands') print one line; its
    options are converted without pydantic (:mod:`graphrag_audit.cli.coercion`)."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except NoArgsIsHelpError:
            raise
        except OneLineUsageError:
            raise
        except UsageError as exc:
            raise OneLineUsageError(one_line(exc)) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (NoArgsIsHelpError, OneLineUsageError):
            raise
        except UsageError as exc:
            raise OneLineUsageError(one_line(exc)) from None
