"""``graphrag-audit diff OLD NEW``: what changed between two indexes in what each community_level
sends (exit 1 on a regression at or above --fail-on)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

import graphrag_audit.cli.options as options
import graphrag_audit.cli.run as run
from graphrag_audit.render.formats import DiffFormat, renderer

OldDir = Annotated[Path, typer.Argument(metavar="OLD", help="The earlier index (any layout levels reads).")]
NewDir = Annotated[Path, typer.Argument(metavar="NEW", help="The later index (any layout levels reads).")]


def diff_cmd(
    old_dir: OldDir,
    new_dir: NewDir,
    level: options.DiffLevel = None,
    fmt: options.DiffFormatOpt = DiffFormat.text,
    output: options.Output = None,
    fail_on: options.FailOnOpt = options.FailOn.error,
    max_map_calls_increase: options.MaxMapCallsIncrease = options.DEFAULT_MAX_MAP_CALLS_INCREASE,
    max_coverage_drop: options.MaxCoverageDrop = options.DEFAULT_MAX_COVERAGE_DROP,
    include_hypothetical: options.IncludeHypothetical = False,
    tokenizer: options.Tokenizer = None,
    max_context_tokens: options.MaxContextTokens = None,
    no_costs: options.NoCosts = False,
    include_titles: options.IncludeTitles = False,
    width: options.Width = None,
    debug: options.Debug = False,
):
    """Compare two indexes: per community_level and behaviour, reports, tokens, map calls and coverage before and
    after, communities added/removed/changed, findings that appeared or disappeared; exit 1 when a regression is at
    or above --fail-on (default error: a warning-level regression alone exits 0), judged only on what a real
    graphrag sends on both indexes (hypothetical numbers are marked hyp.)."""
    values = dict(locals())  # audit_options reads the parameters named as AuditOptions fields
    limits = run.parsed(
        options.regression_limits, max_map_calls_increase, max_coverage_drop, include_hypothetical
    )
    run.check_tokenizer(tokenizer)
    output, guard = run.output_target(output, old_dir)
    run.output_target(output, new_dir)  # -o inside NEW is refused before any work too

    def work():
        from graphrag_audit.analysis.audit import audit_with_model
        from graphrag_audit.analysis.diff import diff_reports

        with run.Progress(enabled=sys.stderr.isatty()) as progress:
            opts = run.audit_options(values, level=2 if level is None else level, costs=not no_costs)
            progress("auditing OLD")
            om, orep = audit_with_model(old_dir, opts, progress=progress)
            progress("auditing NEW")
            nm, nrep = audit_with_model(new_dir, opts, progress=progress)
            progress("comparing")
            return om, nm, diff_reports(om, orep, nm, nrep, limits)

    om, nm, result = run.run_guarded(work, debug)
    if guard is not None:  # the write goes through OLD's guard, with both models' tables added
        guard.protect_model(om).protect_model(nm)
    del om, nm
    kw: dict[str, object] = {}
    if fmt == DiffFormat.text:
        kw = {"width": run.text_width(width, output)}
    elif fmt != DiffFormat.json:  # markdown, github
        kw = {"include_titles": include_titles}
    run.emit(lambda: renderer(fmt)(result, **kw), output, guard, debug)
    raise run.findings_exit(result.regressions, fail_on)
