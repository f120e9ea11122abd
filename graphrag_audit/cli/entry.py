"""The typer application and :func:`main`, the console script's entry point.

The commands are one module each (levels, tree, report, plan...), listed in :data:`COMMANDS` and
imported only when used; the options they share are in :mod:`graphrag_audit.cli.options`; exit
codes, the standard streams and the writes in :mod:`graphrag_audit.cli.run`. Nothing heavy
(pandas, pyarrow, numpy, pydantic, the tokenizer, a renderer) is imported before a command runs,
so ``--help`` and ``--version`` are quick (docs/performance.md, "Start-up and JSON size").
"""

from __future__ import annotations

from typing import Annotated

import typer

from graphrag_audit import __version__
from graphrag_audit.cli.coercion import QuickCommand
from graphrag_audit.cli.lazy import LazyCommands
from graphrag_audit.cli.run import run_app
from graphrag_audit.cli.usage import OneLineGroup

#: the commands, in the order ``--help`` lists them: name -> "module:function". A command's module
#: is imported, and its click command built, only when the command is run or its help is shown
#: (:mod:`graphrag_audit.cli.lazy`). A new command is one line here.
COMMANDS = {
    "levels": "graphrag_audit.cli.levels:levels_cmd",
    "tree": "graphrag_audit.cli.tree:tree_cmd",
    "report": "graphrag_audit.cli.report:report_cmd",
    "plan": "graphrag_audit.cli.plan:plan_cmd",
    "explain": "graphrag_audit.cli.explain:explain_cmd",
    "diff": "graphrag_audit.cli.diff:diff_cmd",
    "update-run": "graphrag_audit.cli.update_run:update_run_cmd",
    "bundle": "graphrag_audit.cli.bundle:bundle_cmd",
}


class AppGroup(OneLineGroup):
    """The application's group: its commands are :data:`COMMANDS`, built on first use (and any
    command registered the usual typer way, ``app.command(name)(function)``, after them)."""

    def __init__(self, *, commands=None, **kw):
        super().__init__(**kw)
        lazy = LazyCommands(COMMANDS, _build_command)
        for name, cmd in dict(commands or {}).items():
            lazy[name] = cmd
        self.commands = lazy

    def list_commands(self, ctx):
        return list(self.commands)


def _build_command(name: str, function):
    """The click command of ``function``, as ``app.command(name, cls=QuickCommand)(function)``
    makes it."""
    from typer.main import get_command_from_info
    from typer.models import CommandInfo

    return get_command_from_info(
        CommandInfo(name=name, cls=QuickCommand, callback=function),
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


app = typer.Typer(
    name="graphrag-audit",
    cls=AppGroup,
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


def _version_cb(value: bool):
    if value:
        typer.echo(f"graphrag-audit {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version_cb, is_eager=True, help="Show the version and exit."),
    ] = False,
):
    pass


def main() -> None:
    run_app(app)


if __name__ == "__main__":  # pragma: no cover
    main()
