"""``graphrag-audit levels DIR``: the per-level audit (exit 1 on findings at or above --fail-on)."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

import graphrag_audit.cli.options as options
import graphrag_audit.cli.run as run
from graphrag_audit.errors import visible
from graphrag_audit.render.formats import LevelsFormat, renderer, streamer


def levels_cmd(
    index_dir: options.IndexDir,
    level: options.AuditLevel = None,
    fmt: options.LevelsFormatOpt = LevelsFormat.text,
    output: options.Output = None,
    fail_on: options.FailOnOpt = options.FailOn.error,
    max_unreachable: options.MaxUnreachable = options.DEFAULT_MAX_UNREACHABLE,
    max_inflation: options.MaxInflation = options.DEFAULT_MAX_INFLATION,
    min_coverage: options.MinCoverage = options.DEFAULT_MIN_COVERAGE,
    max_local_coarse: options.MaxLocalCoarse = options.DEFAULT_MAX_LOCAL_COARSE,
    max_local_empty: options.MaxLocalEmpty = options.DEFAULT_MAX_LOCAL_EMPTY,
    tokens_per_word: options.TokensPerWord = options.DEFAULT_TOKENS_PER_WORD,
    tokenizer: options.Tokenizer = None,
    max_context_tokens: options.MaxContextTokens = None,
    no_costs: options.NoCosts = False,
    token_cache: options.TokenCacheDir = None,
    list_reports: Annotated[
        bool,
        typer.Option(
            "--list-reports",
            help="Text output: also list the reports --level sends, per behaviour (graphrag >= 2.0, "
            "< 2.0, level N only; the first 200 each). -f json always lists them all, markdown "
            "the >= 2.0 ones.",
        ),
    ] = False,
    json_ids: Annotated[
        options.JsonIds,
        typer.Option(
            "--json-ids",
            help="-f json: 'full' lists every level's community ids (the default contract); 'level' "
            "keeps the id lists of --level only.",
        ),
    ] = options.JsonIds.full,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Also run the installed graphrag's own read_indexer_reports (and with costs its "
            "build_community_context) and report agreement per level; exit 2 when graphrag cannot "
            "be imported here.",
        ),
    ] = False,
    num_repeats: options.NumRepeats = None,
    threshold: options.Threshold = None,
    keep_parent: options.KeepParent = None,
    max_level: options.DynamicMaxLevel = None,
    use_summary: options.UseSummary = None,
    query: options.Query = "",
    relevant: options.Relevant = None,
    entities: options.Entities = None,
    price_in: Annotated[
        float | None,
        typer.Option(
            "--price-in",
            min=0.0,
            metavar="USD",
            help="USD per million input tokens: estimate each level's cost per query (the map calls' report "
            "context; see docs/user-guide.md for what is counted).",
        ),
    ] = None,
    price_out: Annotated[
        float | None,
        typer.Option(
            "--price-out",
            min=0.0,
            metavar="USD",
            help="USD per million output tokens: adds an upper bound for the map and reduce answers (1,000 tokens per "
            "map call, 2,000 for the reduce).",
        ),
    ] = None,
    color: options.ColorOpt = options.Color.auto,
    width: options.Width = None,
    debug: options.Debug = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Text and markdown: also show the evidence for the detected graphrag generation "
            "(which tables and columns told it).",
        ),
    ] = False,
    include_titles: options.IncludeTitles = False,
    brief: Annotated[
        bool,
        typer.Option(
            "--brief",
            help="Text and markdown: only the answer line, one table with one row per community_level N "
            "(reports each graphrag line sends, entities covered, map calls) and the findings. "
            "-f json and -f github are unchanged (the step summary follows it).",
        ),
    ] = False,
    hide_hypothetical: Annotated[
        bool,
        typer.Option(
            "--hide-hypothetical",
            help="Text and markdown: leave out the per-N columns of the graphrag line that "
            "cannot run on this index (the 'hyp.' numbers: < 2.0 on a 2.x/3.x index, "
            ">= 2.0 on a 1.x or older one); the answer line still names both. -f json "
            "and -f github are unchanged (the step summary follows it).",
        ),
    ] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="OLD.json",
            help="A levels -f json the tool wrote earlier (e.g. on main): add regression findings against it "
            "(map calls up, coverage down, new findings at --level; map calls and coverage only where a real "
            "graphrag sends the selection on both indexes) and exit 1 only when a regression is at or above "
            "--fail-on.",
        ),
    ] = None,
    max_map_calls_increase: options.MaxMapCallsIncrease = options.DEFAULT_MAX_MAP_CALLS_INCREASE,
    max_coverage_drop: options.MaxCoverageDrop = options.DEFAULT_MAX_COVERAGE_DROP,
    include_hypothetical: options.IncludeHypothetical = False,
):
    """Per-level audit: the tree, what each community_level sends (graphrag >= 2.0 vs < 2.0), costs, findings."""
    values = dict(locals())  # audit_options reads the parameters named as AuditOptions fields
    relevant_ids = run.parsed(options.parse_relevant, relevant)
    reads = (baseline, options.relevant_file(relevant))  # files this run reads: never written over
    output, guard = run.output_target(output, index_dir, reads)
    level = 2 if level is None else level  # graphrag's CLI default
    names = run.parsed(options.parse_entities, entities, no_costs)
    base = None
    if baseline is not None:
        from graphrag_audit.analysis.diff import snapshot_of_json
        from graphrag_audit.io.baseline import read_baseline

        limits = run.parsed(
            options.regression_limits, max_map_calls_increase, max_coverage_drop, include_hypothetical
        )
        base = run.run_guarded(lambda: snapshot_of_json(read_baseline(baseline), baseline), debug)
    summary = os.environ.get("GITHUB_STEP_SUMMARY") if fmt == LevelsFormat.github else None
    if summary:
        from graphrag_audit.io.safe_write import WriteError, append_file, check_append_target

        guard = guard or run.output_guard(index_dir, reads)
        try:
            check_append_target(summary, guard)
        except WriteError as exc:
            raise run.fail(f"{exc.path}: {exc.problem} ($GITHUB_STEP_SUMMARY)") from None
    cache = run.open_token_cache(None if no_costs else token_cache, guard, index_dir, reads, debug)

    def work():
        enabled = sys.stderr.isatty() and (fmt == LevelsFormat.text or output is not None)
        with run.Progress(enabled) as progress:
            opts = run.audit_options(
                values, level=level, costs=not no_costs, relevant=relevant_ids, entities=names
            )
            run.check_tokenizer(tokenizer)
            if verify:  # a check asked for that cannot run is an error, not a quiet "not run"
                from graphrag_audit.io.remote import location_of
                from graphrag_audit.verify import graphrag_unusable_reason

                remote = location_of(index_dir)
                if remote is not None:
                    raise run.fail(
                        f"--verify: {remote.display}: graphrag's own reader needs a local copy of the "
                        f"index (download the tables, or drop --verify)"
                    )
                progress("importing graphrag")
                reason = graphrag_unusable_reason()
                if reason is not None:
                    raise run.fail(f"--verify: {reason}")
            model, report = run.audit_index(index_dir, opts, cache, progress)
            if verify:
                from graphrag_audit.verify import verify_with_graphrag

                progress("running graphrag's read_indexer_reports")
                report = report.with_verify(verify_with_graphrag(report, model))
            return model, report

    model, report = run.run_guarded(work, debug)
    if base is not None:
        from graphrag_audit.analysis.diff import (
            judge_regressions,
            option_differences,
            option_note,
            snapshot_of_report,
        )

        now = snapshot_of_report(report)
        judged, unjudged = judge_regressions(base, now, level, limits)
        note = option_note(option_differences(base, now))
        if note:  # a number may differ because of the options, not the index
            run.say(f"graphrag-audit: note: --baseline: {visible(note)}\n")
        report = replace(report, findings=report.findings + tuple(judged))
        for f in unjudged:  # shown on stderr, never a finding: no real graphrag sends these numbers
            run.say(
                f"graphrag-audit: note: --baseline: {f.rule} not judged (--include-hypothetical judges it): "
                f"{visible(f.message)}\n"
            )
    if guard is not None:
        guard.protect_model(model)
    del model
    shown: dict = dict(verbose=verbose, brief=brief, hide_hypothetical=hide_hypothetical)
    markdown = dict(include_titles=include_titles, **shown)
    stream = streamer(fmt)
    if stream is not None:  # -f json: a deep index lists millions of ids
        chunks = stream(report, json_ids=json_ids.value)
        run.run_guarded(lambda: run.write_payload(chunks, output, guard), debug)
    else:
        kw = markdown
        if fmt == LevelsFormat.text:
            focus = level if list_reports else None
            kw = dict(
                width=run.text_width(width, output), color=run.text_color(color, output), focus=focus, **shown
            )
        elif fmt == LevelsFormat.github:
            kw = dict(include_titles=include_titles, verbose=verbose)
        text = run.emit(lambda: renderer(fmt)(report, **kw), output, guard, debug)
    if fmt == LevelsFormat.markdown:
        from graphrag_audit.render.markdown import paste_size_warning

        warning = paste_size_warning(text)
        if warning:
            run.say(warning)
    if summary:
        try:
            warning = append_file(summary, renderer(LevelsFormat.markdown)(report, **markdown), guard)
        except WriteError as exc:
            raise run.fail(f"{exc.path}: {exc.problem} ($GITHUB_STEP_SUMMARY)") from None
        if warning:
            run.say(f"graphrag-audit: warning: $GITHUB_STEP_SUMMARY: {visible(warning)}\n")
    # with a baseline, the regressions decide the exit code
    raise run.findings_exit(judged if base is not None else report.findings, fail_on)
