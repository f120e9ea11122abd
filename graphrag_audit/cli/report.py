"""``graphrag-audit report DIR -o FILE.html``: one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import graphrag_audit.cli.options as options
import graphrag_audit.cli.run as run
from graphrag_audit.errors import visible
from graphrag_audit.render.formats import ReportFormat, renderer


def report_cmd(
    index_dir: options.IndexDir,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="The HTML file to write (required; written atomically, never inside the index "
            "directory; - = stdout).",
        ),
    ] = None,
    level: options.ReportLevel = 2,
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
    num_repeats: options.NumRepeats = None,
    threshold: options.Threshold = None,
    keep_parent: options.KeepParent = None,
    max_level: options.DynamicMaxLevel = None,
    use_summary: options.UseSummary = None,
    query: options.Query = "",
    relevant: options.Relevant = None,
    entities: options.Entities = None,
    debug: options.Debug = False,
):
    """One self-contained HTML file: header, per-level table, dynamic selection per graphrag line, the tree
    coloured by what N sends, charts. Says on stderr what it wrote (unless -o -)."""
    values = dict(locals())  # audit_options reads the parameters named as AuditOptions fields
    if output is None:
        raise run.fail("report: -o FILE.html is required")
    relevant_ids = run.parsed(options.parse_relevant, relevant)
    names = run.parsed(options.parse_entities, entities, no_costs)
    run.check_tokenizer(tokenizer)
    reads = (options.relevant_file(relevant),)
    output, guard = run.output_target(output, index_dir, reads)
    cache = run.open_token_cache(None if no_costs else token_cache, guard, index_dir, reads, debug)

    def work():
        from graphrag_audit.analysis.treeview import build_forest

        opts = run.audit_options(
            values, level=level, costs=not no_costs, relevant=relevant_ids, entities=names
        )
        model, report = run.audit_index(index_dir, opts, cache)
        if guard is not None:
            guard.protect_model(model)
        forest = build_forest(model, opts.level, report.selections_by_level())
        return renderer(ReportFormat.html)(report, forest)

    run.write_payload(run.run_guarded(work, debug), output, guard)
    if output is not None:
        try:
            size = f"{output.stat().st_size:,} bytes"
        except OSError:  # written, then moved or removed by someone else: say so without a size
            size = "size unknown"
        run.say(f"graphrag-audit: wrote {visible(str(output))} ({size})\n")
