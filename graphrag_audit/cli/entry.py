"""The typer application and :func:`main`, the console script's entry point.

The commands are one module each (levels, tree, report, plan); the options they share are in
:mod:`graphrag_audit.cli.options`; exit codes, the standard streams and the writes in
:mod:`graphrag_audit.cli.run`. Nothing heavy (pandas, pyarrow, numpy, the tokenizer, a renderer)
is imported before a command runs, so ``--help`` and ``--version`` are quick.
"""

from __future__ import annotations

from typing import Annotated

import typer

from graphrag_audit import __version__
from graphrag_audit.cli.diff import diff_cmd
from graphrag_audit.cli.bundle import bundle_cmd
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
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version_cb(value: bool):
    if value:
        typer.echo(f"graphrag-audit {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_version_cb, is_eager=True,
                                                help="Show the version and exit.")] = False):
    pass


app.command("levels")(levels_cmd)
app.command("tree")(tree_cmd)
app.command("report")(report_cmd)
app.command("plan")(plan_cmd)
app.command("explain")(explain_cmd)
app.command("diff")(diff_cmd)
app.command("update-run")(update_run_cmd)
app.command("bundle")(bundle_cmd)


def main() -> None:
    run_app(app)


if __name__ == "__main__":  # pragma: no cover
    main()
