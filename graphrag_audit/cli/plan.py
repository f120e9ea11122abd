"""``graphrag-audit plan DIR``: a cross-level frontier of reports that fits every budget given. Exit 1
when no plan fits (the best frontier is shown, with why; nothing is written) or it holds no report."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

import graphrag_audit.cli.options as options
import graphrag_audit.cli.run as run
from graphrag_audit.errors import visible
from graphrag_audit.render.formats import PlanFormat, renderer

_SUFFIX = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000}


def _count(flag: str, text: str) -> int:
    """``60000``, ``60k``, ``1.5M``, ``60_000`` -> an int; a usage error (exit 2) otherwise."""
    t = text.strip().replace("_", "").replace(",", "")
    mult = _SUFFIX.get(t[-1:].lower(), 1)
    try:
        whole = float(t[:-1] if mult != 1 else t) * mult
    except ValueError:
        whole = math.nan
    if not math.isfinite(whole) or whole != int(whole):
        raise run.fail(f"{flag}: expected a whole number such as 60000, 60k or 1.5M, not {text!r}")
    return int(whole)


def _share(text: str) -> float:
    """``0.8`` or ``80%``; a usage error (exit 2) otherwise."""
    t = text.strip()
    try:
        return float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise run.fail(f"--coverage: expected a share such as 0.8 or 80%, not {text!r}") from None


def _budget(reports, tokens, map_calls, coverage):
    from graphrag_audit.analysis.plan import Budget, Budgets

    given = []
    for kind, raw in dict(reports=reports, tokens=tokens, map_calls=map_calls, coverage=coverage).items():
        if raw is None:
            continue
        flag = "--" + kind.replace("_", "-")
        try:
            given.append(Budget(kind, _share(raw) if kind == "coverage" else _count(flag, raw)))
        except ValueError as exc:
            raise run.fail(f"{flag}: {exc}") from None
    if not given:
        raise run.fail(
            "give at least one budget: --reports K, --tokens T, --map-calls M and/or --coverage P "
            "(several must all hold)"
        )
    return Budgets(given)


def _read_back(path: Path, plan, shown: Path, max_level: int | None) -> str:
    """Check graphrag selects exactly the plan in the written directory ``path`` (``shown`` names it in
    errors): graphrag >= 2.0 at community_level=None, 1.x at None and at ``max_level``, the largest
    written level (the CLI's --community-level)."""
    from graphrag_audit.graphrag.selection import select_all
    from graphrag_audit.io.load import load_index

    m2 = load_index(path)
    sels = select_all(m2)
    behaviour = "v1" if m2.generation.before_2 else "v2"
    levels = [None] + ([max_level] if behaviour == "v1" and max_level in sels else [])
    for n in levels:
        got = sels[n][behaviour].community_ids(m2)
        if sorted(set(got)) != list(plan.communities) or len(got) != plan.report_count:
            raise run.fail(
                f"{shown}: read back {len(got)} reports at community_level={n}, expected the plan's "
                f"{plan.report_count}; the written directory is not usable"
            )
    who = "graphrag 1.x selects" if behaviour == "v1" else "graphrag >= 2.0 selects"
    where = " and ".join(f"community_level={n}" for n in levels)
    return f"graphrag-audit reads {len(got):,} reports back from it; {who} exactly the plan at {where}"


def plan_cmd(
    index_dir: options.IndexDir,
    reports: Annotated[
        str | None, typer.Option("--reports", metavar="K", help="Budget: at most K reports (40, 1.5k).")
    ] = None,
    tokens: Annotated[
        str | None,
        typer.Option(
            "--tokens",
            metavar="T",
            help="Budget: at most T context tokens (graphrag's count, headers included; 60000, 60k, 1.5M).",
        ),
    ] = None,
    map_calls: Annotated[
        str | None,
        typer.Option(
            "--map-calls", metavar="M", help="Budget: at most M map calls (graphrag's exact batching)."
        ),
    ] = None,
    coverage: Annotated[
        str | None,
        typer.Option(
            "--coverage",
            metavar="P",
            help="Target: a share P in (0, 1] (0.8 or 80%) of coverable entities at their "
            "finest available level, with as few reports as possible. Budgets "
            "combine: every one given must hold.",
        ),
    ] = None,
    objective: Annotated[
        str,
        typer.Option(
            "--objective",
            metavar="granularity|rank|text-units",
            help="What to refine first: granularity (level by level, the default), rank (where graphrag's "
            "highest-ranked reports lie below), text-units (where the most source text units are).",
        ),
    ] = "granularity",
    allow_uncovered: Annotated[
        bool,
        typer.Option(
            "--allow-uncovered",
            help="Let report-less roots stay out (their entities uncovered, as a single "
            "community_level leaves them) instead of sending their descendants' reports; "
            "the output says how many entities.",
        ),
    ] = False,
    fmt: options.PlanFormatOpt = PlanFormat.text,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            metavar="OUT_DIR",
            help="Write a new index directory whose community_reports and communities "
            "hold exactly the plan (graphrag >= 2.0 parquet or CSV; graphrag 1.x "
            "create_final_* with create_final_nodes rewritten); other entries are "
            "linked, not copied.",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="With --write: write into a non-empty OUT_DIR (same-named files are replaced; never "
            "through a symbolic link).",
        ),
    ] = False,
    output: options.Output = None,
    tokenizer: options.Tokenizer = options.DEFAULT_TOKENIZER,
    max_context_tokens: options.MaxContextTokens = options.DEFAULT_MAX_CONTEXT_TOKENS,
    num_repeats: options.NumRepeats = 1,
    no_costs: options.NoCosts = False,
    color: options.ColorOpt = options.Color.auto,
    width: options.Width = None,
    debug: options.Debug = False,
    include_titles: options.IncludeTitles = False,
):
    """Plan a global-search context by budget: a cross-level frontier of reports, beside every community_level."""
    budget = _budget(reports, tokens, map_calls, coverage)
    from graphrag_audit.analysis.plan import OBJECTIVES

    if objective not in OBJECTIVES:
        raise run.fail(f"--objective: choose one of {', '.join(OBJECTIVES)}, not {objective!r}")
    # the shared option types allow None (levels reads them from settings); plan's defaults are set
    assert tokenizer is not None and max_context_tokens is not None and num_repeats is not None
    run.check_tokenizer(tokenizer)
    if no_costs and budget.needs_cost:
        kinds = [b.kind.replace("_", " ") for b in budget if b.needs_cost]
        raise run.fail(f"--no-costs cannot be combined with a {' or '.join(kinds)} budget")
    output, guard = run.output_target(output, index_dir)
    if write is not None and guard is None:
        guard = run.output_guard(index_dir)

    def work():
        from graphrag_audit.analysis.plan import ContextCost, plan_report
        from graphrag_audit.handoff import check_local_source, check_out_dir, write_plan
        from graphrag_audit.io.load import load_index

        if write is not None:
            check_local_source(index_dir)
        model = load_index(index_dir)
        if guard is not None:
            guard.protect_model(model)
        if write is not None:
            check_out_dir(model, write, force, guard=guard)
        cost = None if no_costs else ContextCost(model, tokenizer, max_context_tokens)
        settings: dict = dict(
            tokenizer=None, tokens_exact=None, max_context_tokens=None, num_repeats=num_repeats
        )
        if cost is not None:
            settings.update(
                tokenizer=cost.tokenizer, tokens_exact=cost.exact, max_context_tokens=max_context_tokens
            )
        report = plan_report(
            model,
            budget,
            cost,
            num_repeats=num_repeats,
            settings=settings,
            objective=objective,
            allow_uncovered=allow_uncovered,
        )
        if write is None:
            return report
        if not report.plan.usable:  # the frontier is still shown (exit 1), nothing is written
            why = "does not fit the budget" if not report.plan.fits else "sends no report"
            run.say(f"graphrag-audit: warning: {visible(str(write))}: nothing written: the plan {why}\n")
            return report
        verified: list[str] = []
        result = write_plan(
            model,
            report.plan.communities,
            write,
            force=force,
            provenance={"budget": budget.to_dict(), "settings": settings},
            guard=guard,
            verify=lambda path, max_level: verified.append(_read_back(path, report.plan, write, max_level)),
        )
        return replace(report, handoff=result.to_dict() | {"verified": verified[0]})

    report = run.run_guarded(work, debug)
    kw: dict = {}
    if fmt == PlanFormat.text:
        kw = {"width": run.text_width(width, output), "color": run.text_color(color, output)}
    elif fmt == PlanFormat.markdown:
        kw = {"include_titles": include_titles}
    run.emit(lambda: renderer(fmt)(report, **kw), output, guard, debug)
    raise typer.Exit(0 if report.plan.usable else 1)
