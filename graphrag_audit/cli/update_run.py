"""``graphrag-audit update-run DIR``: the previous, delta and merged indexes of one `graphrag
update` run audited together, which of them graphrag queries, and graphrag's id offset checked."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

import graphrag_audit.cli.options as options
import graphrag_audit.cli.run as run
from graphrag_audit.render.formats import UpdateRunFormat, renderer

RunDir = Annotated[
    Path,
    typer.Argument(
        metavar="RUN",
        help="A project root where `graphrag update` ran, its update_output folder, or one "
        "update_output/<timestamp> run folder (the newest run is audited).",
    ),
]


def update_run_cmd(
    run_dir: RunDir,
    level: Annotated[
        int | None,
        options.level_option("The community_level the level findings are checked at (default 2).", env=False),
    ] = None,
    fmt: options.UpdateRunFormatOpt = UpdateRunFormat.text,
    output: options.Output = None,
    fail_on: options.FailOnOpt = options.FailOn.error,
    width: options.Width = None,
    debug: options.Debug = False,
):
    """Audit one graphrag update run: previous, delta and merged indexes, and which one graphrag queries."""
    output, guard = run.output_target(output, run_dir, guard_of=lambda: _run_guard(run_dir))

    def work():
        from graphrag_audit.analysis.update_run import audit_update_run
        from graphrag_audit.results.audit import AuditOptions

        report = audit_update_run(run_dir, AuditOptions(level=2 if level is None else level, costs=False))
        kw = {"width": run.text_width(width, output)} if fmt == UpdateRunFormat.text else {}
        return report, renderer(fmt)(report, **kw)

    with run.output_charset_for(output):
        report, text = run.run_guarded(work, debug)
    run.write_payload(text, output, guard)
    raise run.findings_exit([f for p in report.parts for f in p.findings], fail_on)


def _run_guard(run_dir: Path):
    """The guard of every folder of the run and of the settings it may read: no write lands there."""
    from graphrag_audit.errors import IndexInputError
    from graphrag_audit.io.locate import ROLES, locate_update_run
    from graphrag_audit.io.safe_write import Guard
    from graphrag_audit.io.settings import find_settings

    try:
        update = locate_update_run(run_dir)
    except IndexInputError as exc:
        raise run.fail(str(exc)) from None
    guard = Guard().protect(run_dir)
    for role in ROLES:
        folder = update.folder(role)
        if folder is not None:
            guard.protect(folder)
    here = Path(os.path.abspath(run_dir))
    for root in (here, here.parent, here.parent.parent):  # the project roots whose settings may be read
        settings = find_settings(root)
        if settings is not None:
            guard.protect_read(settings).protect_read(settings.parent / ".env")
    return guard
