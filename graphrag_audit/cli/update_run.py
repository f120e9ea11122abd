"""``graphrag-audit update-run DIR``: the previous, delta and merged indexes of one `graphrag
update` run audited together, which of them graphrag queries, and graphrag's id offset checked."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from graphrag_audit.cli.options import Debug, FailOn, FailOnOpt, Output, UpdateRunFormatOpt, Width
from graphrag_audit.cli.run import (
    fail,
    findings_exit,
    output_charset_for,
    output_target,
    run_guarded,
    text_width,
    write_payload,
)
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
        typer.Option(
            "--level", "-l", min=0, help="The community_level the level findings are checked at (default 2)."
        ),
    ] = None,
    fmt: UpdateRunFormatOpt = UpdateRunFormat.text,
    output: Output = None,
    fail_on: FailOnOpt = FailOn.error,
    width: Width = None,
    debug: Debug = False,
):
    """Audit one graphrag update run: previous, delta and merged indexes, and which one graphrag queries."""
    output, guard = output_target(output, run_dir, guard_of=lambda: _run_guard(run_dir))

    def work():
        from graphrag_audit.analysis.update_run import audit_update_run
        from graphrag_audit.results.audit import AuditOptions

        report = audit_update_run(run_dir, AuditOptions(level=2 if level is None else level, costs=False))
        kw = {"width": text_width(width, output)} if fmt == UpdateRunFormat.text else {}
        return report, renderer(fmt)(report, **kw)

    with output_charset_for(output):
        report, text = run_guarded(work, debug)
    write_payload(text, output, guard)
    raise findings_exit([f for p in report.parts for f in p.findings], fail_on)


def _run_guard(run_dir: Path):
    """The guard of every folder of the run and of the settings it may read: no write lands there."""
    from graphrag_audit.errors import IndexInputError
    from graphrag_audit.io.locate import ROLES, locate_update_run
    from graphrag_audit.io.safe_write import Guard
    from graphrag_audit.io.settings import find_settings

    try:
        run = locate_update_run(run_dir)
    except IndexInputError as exc:
        raise fail(str(exc)) from None
    guard = Guard().protect(run_dir)
    for role in ROLES:
        folder = run.folder(role)
        if folder is not None:
            guard.protect(folder)
    here = Path(os.path.abspath(run_dir))
    for root in (here, here.parent, here.parent.parent):  # the project roots whose settings may be read
        settings = find_settings(root)
        if settings is not None:
            guard.protect_read(settings).protect_read(settings.parent / ".env")
    return guard
