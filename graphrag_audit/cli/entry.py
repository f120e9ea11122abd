"""The typer application: the commands in ``--help`` order, ``--version``, and :func:`main`."""

from __future__ import annotations

from typing import Annotated

import typer

from graphrag_audit import __version__
from graphrag_audit.cli.bundle import bundle_cmd
from graphrag_audit.cli.diff import diff_cmd
from graphrag_audit.cli.explain import explain_cmd
from graphrag_audit.cli.levels import levels_cmd
from graphrag_audit.cli.plan import plan_cmd
from graphrag_audit.cli.report import report_cmd
from graphrag_audit.cli.run import run_app
from graphrag_audit.cli.tree import tree_cmd
from graphrag_audit.cli.update_run import update_run_cmd
from graphrag_audit.cli.usage import OneLineGroup

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
