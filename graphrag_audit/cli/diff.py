"""``graphrag-audit diff OLD NEW``: what changed between two indexes in what each community_level
sends (exit 1 on a regression at or above --fail-on)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from graphrag_audit.cli.options import (
    DEFAULT_MAX_COVERAGE_DROP,
    DEFAULT_MAX_MAP_CALLS_INCREASE,
    Debug,
    DiffFormatOpt,
    DiffLevel,
    FailOn,
    FailOnOpt,
    IncludeHypothetical,
    IncludeTitles,
    MaxContextTokens,
    MaxCoverageDrop,
    MaxMapCallsIncrease,
    NoCosts,
    Output,
    Tokenizer,
    Width,
    regression_limits,
)
from graphrag_audit.cli.run import (
    Progress,
    audit_options,
    check_tokenizer,
    findings_exit,
    output_charset_for,
    output_target,
    parsed,
    run_guarded,
    text_width,
    write_payload,
)
from graphrag_audit.render.formats import DiffFormat, renderer

OldDir = Annotated[Path, typer.Argument(metavar="OLD", help="The earlier index (any layout levels reads).")]
NewDir = Annotated[Path, typer.Argument(metavar="NEW", help="The later index (any layout levels reads).")]


def diff_cmd(
    old_dir: OldDir,
    new_dir: NewDir,
    level: DiffLevel = None,
    fmt: DiffFormatOpt = DiffFormat.text,
    output: Output = None,
    fail_on: FailOnOpt = FailOn.error,
    max_map_calls_increase: MaxMapCallsIncrease = DEFAULT_MAX_MAP_CALLS_INCREASE,
    max_coverage_drop: MaxCoverageDrop = DEFAULT_MAX_COVERAGE_DROP,
    include_hypothetical: IncludeHypothetical = False,
    tokenizer: Tokenizer = None,
    max_context_tokens: MaxContextTokens = None,
    no_costs: NoCosts = False,
    include_titles: IncludeTitles = False,
    width: Width = None,
    debug: Debug = False,
):
    """Compare two indexes: per community_level and behaviour, reports, tokens, map calls and coverage before and
    after, communities added/removed/changed, findings that appeared or disappeared; exit 1 when a regression is at
    or above --fail-on (default error: a warning-level regression alone exits 0), judged only on what a real
    graphrag sends on both indexes (hypothetical numbers are marked hyp.)."""
    values = dict(locals())  # audit_options reads the parameters named as AuditOptions fields
    limits = parsed(regression_limits, max_map_calls_increase, max_coverage_drop, include_hypothetical)
    if tokenizer is not None:
        check_tokenizer(tokenizer)
    output, guard = output_target(output, old_dir)
    output_target(output, new_dir)  # -o inside NEW is refused before any work too

    def work():
        from graphrag_audit.analysis.audit import audit_with_model
        from graphrag_audit.analysis.diff import diff_reports

        with Progress(enabled=sys.stderr.isatty()) as progress:
            opts = audit_options(values, level=2 if level is None else level, costs=not no_costs)
            progress("auditing OLD")
            om, orep = audit_with_model(old_dir, opts, progress=progress)
            progress("auditing NEW")
            nm, nrep = audit_with_model(new_dir, opts, progress=progress)
            progress("comparing")
            return om, nm, diff_reports(om, orep, nm, nrep, limits)

    om, nm, result = run_guarded(work, debug)
    if guard is not None:  # the write goes through OLD's guard, with both models' tables added
        guard.protect_model(om).protect_model(nm)
    del om, nm
    kw: dict[str, object] = {}
    if fmt == DiffFormat.text:
        kw = {"width": text_width(width, output)}
    elif fmt != DiffFormat.json:  # markdown, github
        kw = {"include_titles": include_titles}
    with output_charset_for(output):
        text = run_guarded(lambda: renderer(fmt)(result, **kw), debug)
    run_guarded(lambda: write_payload(text, output, guard), debug)
    raise findings_exit(result.regressions, fail_on)
