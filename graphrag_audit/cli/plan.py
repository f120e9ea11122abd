"""``graphrag-audit plan DIR``: a cross-level frontier of reports that fits one budget.

Exit codes: 0 = the plan fits the budget; 1 = even the coarsest frontier exceeds it (the
coarsest frontier is shown, nothing is written); 2 = usage error or unreadable index.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from graphrag_audit.cli import (
    EXIT_BAD_INPUT,
    EXIT_FINDINGS,
    EXIT_OK,
    Color,
    check_output_path,
    fail,
    output_charset_for,
    output_guard,
    run_guarded,
    stdout_if_dash,
    use_color,
    write_payload,
)


class PlanFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


def _budget(reports, tokens, map_calls, coverage):
    given = [(k, v) for k, v in (("reports", reports), ("tokens", tokens), ("map_calls", map_calls),
                                 ("coverage", coverage)) if v is not None]
    if len(given) != 1:
        names = ", ".join("--" + k.replace("_", "-") for k, _ in given)
        raise fail("give exactly one budget: --reports K, --tokens T, --map-calls M or --coverage P"
                   + (f" (got {names})" if given else ""), EXIT_BAD_INPUT)
    from graphrag_audit.analysis.plan import Budget

    kind, value = given[0]
    try:
        return Budget(kind, value)
    except ValueError as exc:
        raise fail(f"--{kind.replace('_', '-')}: {exc}") from None


def _read_back(path: Path, plan, shown: Path | None = None) -> str:
    """Load the written directory ``path`` with our own loader and check graphrag >= 2.0 selects
    the plan (``shown``: the directory named in the error, when ``path`` is its temporary twin)."""
    from graphrag_audit.io.load import load_index
    from graphrag_audit.graphrag.selection import select_all

    m2 = load_index(path)
    sel = select_all(m2)[None]["v2"]
    got = sel.community_ids(m2)
    if sorted(set(got)) != list(plan.communities) or len(got) != plan.report_count:
        raise fail(f"{shown or path}: read back {len(got)} reports at community_level=None, expected the plan's "
                   f"{plan.report_count}; the written directory is not usable")
    return (f"graphrag-audit reads {len(got):,} reports back from it; graphrag >= 2.0 selects exactly the plan "
            f"at community_level=None")


def register(app: typer.Typer) -> None:
    @app.command("plan")
    def plan_cmd(
        index_dir: Path = typer.Argument(..., metavar="DIR", help="Index output directory or project root."),
        reports: Optional[int] = typer.Option(None, "--reports", metavar="K", help="Budget: at most K reports."),
        tokens: Optional[int] = typer.Option(None, "--tokens", metavar="T",
                                             help="Budget: at most T context tokens (graphrag's count, headers included)."),
        map_calls: Optional[int] = typer.Option(None, "--map-calls", metavar="M",
                                                help="Budget: at most M map calls (graphrag's exact batching)."),
        coverage: Optional[float] = typer.Option(None, "--coverage", metavar="P",
                                                 help="Target: a share P in (0, 1] of entities represented at their "
                                                      "finest available level, with as few reports as possible."),
        fmt: PlanFormat = typer.Option(PlanFormat.text, "--format", "-f", help="Output format."),
        write: Optional[Path] = typer.Option(None, "--write", metavar="OUT_DIR",
                                             help="Write a new index directory whose community_reports and "
                                                  "communities hold exactly the plan (graphrag >= 2.0 indexes)."),
        force: bool = typer.Option(False, "--force", help="With --write: write into a non-empty OUT_DIR (same-named "
                                                          "files are replaced; never through a symbolic link)."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the output to FILE, not stdout "
                                              "(atomically; never inside the index directory; - = stdout)."),
        tokenizer: str = typer.Option("cl100k_base", "--tokenizer", envvar="GRAPHRAG_AUDIT_TOKENIZER",
                                      help="cl100k_base (exact, graphrag's default), o200k_base, or estimate."),
        max_context_tokens: int = typer.Option(12000, "--max-context-tokens", min=1,
                                               help="graphrag's global search max_context_tokens (batch size)."),
        num_repeats: int = typer.Option(1, "--num-repeats", min=0, max=10,
                                        help="Dynamic selection preview: rating calls per community."),
        no_costs: bool = typer.Option(False, "--no-costs",
                                      help="Skip token counting (not with --tokens / --map-calls)."),
        color: Color = typer.Option(Color.auto, "--color", envvar="GRAPHRAG_AUDIT_COLOR",
                                    help="Colour in text output (NO_COLOR is honoured)."),
        width: Optional[int] = typer.Option(None, "--width", min=40, envvar="GRAPHRAG_AUDIT_WIDTH",
                                            help="Text output width (default: terminal width, or 100 when piped)."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    ):
        """Plan a global-search context by budget: a cross-level frontier of reports, beside every community_level."""
        budget = _budget(reports, tokens, map_calls, coverage)
        if tokenizer not in ("cl100k_base", "o200k_base", "estimate"):
            raise fail(f"--tokenizer: unknown encoding {tokenizer!r} (cl100k_base, o200k_base, estimate)")
        if no_costs and budget.needs_cost:
            raise fail(f"--no-costs cannot be combined with a {budget.kind.replace('_', ' ')} budget")
        output = stdout_if_dash(output)
        guard = check_output_path(output, index_dir)
        if write is not None and guard is None:
            guard = output_guard(index_dir)

        def work():
            from graphrag_audit.io.load import load_index
            from graphrag_audit.analysis.plan import ContextCost, plan_report
            from graphrag_audit.handoff import check_out_dir, write_plan

            model = load_index(index_dir)
            if guard is not None:
                guard.protect_model(model)
            if write is not None:
                check_out_dir(model, write, force, guard=guard)
            cost = None if no_costs else ContextCost(model, tokenizer, max_context_tokens)
            settings = {"tokenizer": None if cost is None else cost.tokenizer,
                        "tokens_exact": None if cost is None else cost.exact,
                        "max_context_tokens": None if cost is None else max_context_tokens,
                        "num_repeats": num_repeats}
            report = plan_report(model, budget, cost, num_repeats=num_repeats, settings=settings)
            if write is not None:
                if not report.plan.fits:
                    raise fail(f"{write}: nothing written: the plan does not fit the budget", EXIT_FINDINGS)
                verified = []
                result = write_plan(model, report.plan.communities, write, force=force,
                                    provenance={"budget": budget.to_dict(), "settings": settings}, guard=guard,
                                    verify=lambda path: verified.append(_read_back(path, report.plan, write)))
                handoff = result.to_dict()
                handoff["verified"] = verified[0]
                report.handoff = handoff
            return report

        report = run_guarded(work, debug)
        if fmt == PlanFormat.json:
            from graphrag_audit.render.plan_json import render_plan_json as render
            kw = {}
        elif fmt == PlanFormat.markdown:
            from graphrag_audit.render.plan_markdown import render_plan_markdown as render
            kw = {}
        else:
            from graphrag_audit.render.plan_text import render_plan_text as render

            is_tty = output is None and sys.stdout.isatty()
            w = width
            if w is None:
                try:
                    w = os.get_terminal_size(sys.stdout.fileno()).columns if is_tty else 100
                except OSError:
                    w = 100
            kw = {"width": w, "color": use_color(color, sys.stdout) if output is None else color == Color.always}
        with output_charset_for(output):
            text = run_guarded(lambda: render(report, **kw), debug)
        write_payload(text, output, guard)
        raise typer.Exit(EXIT_OK if report.plan.fits else EXIT_FINDINGS)
