"""``graphrag-audit report DIR -o FILE.html``: one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from graphrag_audit.cli.options import (
    DEFAULT_MAX_INFLATION,
    DEFAULT_MAX_UNREACHABLE,
    DEFAULT_MIN_COVERAGE,
    Debug,
    DynamicMaxLevel,
    IndexDir,
    KeepParent,
    MaxContextTokens,
    MaxInflation,
    MaxUnreachable,
    MinCoverage,
    NoCosts,
    NumRepeats,
    Query,
    Relevant,
    ReportLevel,
    Threshold,
    TokenCacheDir,
    Tokenizer,
    UseSummary,
    parse_relevant,
    relevant_file,
)
from graphrag_audit.cli.run import (
    check_output_path,
    check_tokenizer,
    fail,
    open_token_cache,
    parsed,
    relevant_checker,
    run_guarded,
    say,
    stdout_if_dash,
    write_payload,
)
from graphrag_audit.render.formats import ReportFormat, renderer


def report_cmd(
    index_dir: IndexDir,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="The HTML file to write (required; written atomically, never inside the index "
            "directory; - = stdout).",
        ),
    ] = None,
    level: ReportLevel = 2,
    max_unreachable: MaxUnreachable = DEFAULT_MAX_UNREACHABLE,
    max_inflation: MaxInflation = DEFAULT_MAX_INFLATION,
    min_coverage: MinCoverage = DEFAULT_MIN_COVERAGE,
    tokenizer: Tokenizer = None,
    max_context_tokens: MaxContextTokens = None,
    no_costs: NoCosts = False,
    token_cache: TokenCacheDir = None,
    num_repeats: NumRepeats = None,
    threshold: Threshold = None,
    keep_parent: KeepParent = None,
    max_level: DynamicMaxLevel = None,
    use_summary: UseSummary = None,
    query: Query = "",
    relevant: Relevant = None,
    debug: Debug = False,
):
    """One self-contained HTML file: header, per-level table, dynamic selection per graphrag line, the tree
    coloured by what N sends, charts. Says on stderr what it wrote (unless -o -)."""
    if output is None:
        raise fail("report: -o FILE.html is required")
    relevant_ids = parsed(parse_relevant, relevant)
    if tokenizer is not None:
        check_tokenizer(tokenizer)
    output = stdout_if_dash(output)
    guard = check_output_path(output, index_dir, (relevant_file(relevant),))

    cache = open_token_cache(
        None if no_costs else token_cache, guard, index_dir, (relevant_file(relevant),), debug
    )

    def work():
        from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
        from graphrag_audit.analysis.treeview import build_forest

        opts = AuditOptions(
            level=level,
            tokenizer=tokenizer,
            max_context_tokens=max_context_tokens,
            costs=not no_costs,
            max_unreachable=max_unreachable,
            max_inflation=max_inflation,
            min_coverage=min_coverage,
            num_repeats=num_repeats,
            threshold=threshold,
            keep_parent=keep_parent,
            max_level=max_level,
            use_summary=use_summary,
            query=query,
            relevant=relevant_ids,
        )
        model, report = audit_with_model(
            index_dir, opts, check_model=relevant_checker(relevant_ids), token_cache=cache
        )
        if cache is not None:
            cache.save()
        if guard is not None:
            guard.protect_model(model)
        forest = build_forest(model, opts.level, report.selections_by_level())
        return renderer(ReportFormat.html)(report, forest)

    write_payload(run_guarded(work, debug), output, guard)
    if output is not None:
        from graphrag_audit.errors import visible

        try:
            size = f"{output.stat().st_size:,} bytes"
        except OSError:  # written, then moved or removed by someone else: say so without a size
            size = "size unknown"
        say(f"graphrag-audit: wrote {visible(str(output))} ({size})\n")
