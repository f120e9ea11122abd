"""``graphrag-audit tree DIR``: the community forest as text, Mermaid, DOT, GraphML or JSON."""

from __future__ import annotations

from typing import Annotated

import typer

import graphrag_audit.cli.options as options
import graphrag_audit.cli.run as run
from graphrag_audit.render.formats import TreeFormat, renderer

#: default row budget of ``tree`` text (and Mermaid/DOT) output: with the header about 100 lines
DEFAULT_MAX_LINES = 90


def tree_cmd(
    index_dir: options.IndexDir,
    level: options.TreeLevel = None,
    depth: Annotated[
        int | None,
        typer.Option("--depth", "-d", min=0, help="Show at most this many levels below the top communities."),
    ] = None,
    root: Annotated[
        str | None,
        typer.Option(  # read by options.community_number: 1_0 is not 10
            "--root", "-r", metavar="<int>", help="Show only the subtree of this community."
        ),
    ] = None,
    max_lines: Annotated[
        int | None,
        typer.Option(
            "--max-lines",
            min=0,
            help=f"Row budget: the largest subtrees are expanded first, hidden siblings "
            f"summarised (default {DEFAULT_MAX_LINES} for text, mermaid and dot; all for "
            f"graphml and json; 0 = all).",
        ),
    ] = None,
    fmt: options.TreeFormatOpt = TreeFormat.text,
    output: options.Output = None,
    color: options.ColorOpt = options.Color.auto,
    width: options.Width = None,
    debug: options.Debug = False,
):
    """The community forest: numbers, levels, entities, report titles; with --level, what N sends."""
    root_id = None if root is None else options.community_number(root)
    if root is not None and root_id is None:  # typer's words for a bad integer (cli/entry.py)
        raise run.fail(
            f"--root: must be a whole number (got {root[:40]!r}); graphrag-audit tree --help lists the options"
        )
    output, guard = run.output_target(output, index_dir)

    def work():
        from graphrag_audit.analysis.treeview import UnknownCommunity, build_forest, layout
        from graphrag_audit.io.load import load_index

        model = load_index(index_dir)
        if guard is not None:
            guard.protect_model(model)
        model.rollup_rows  # noqa: B018 - a broken create_final_nodes is an input error here too
        forest = build_forest(model, level)
        budget = max_lines
        if budget is None:  # graphml and json: everything
            budget = DEFAULT_MAX_LINES if fmt in (TreeFormat.text, TreeFormat.mermaid, TreeFormat.dot) else 0
        try:
            view = layout(forest, root=root_id, depth=depth, max_lines=budget)
        except UnknownCommunity as exc:
            raise run.fail(f"--root {root_id}: {exc}") from None
        if fmt != TreeFormat.text:
            full = root_id is None and depth is None and not budget
            return renderer(fmt)(forest, None if full else view)
        from graphrag_audit.sanitise.secrets import scrub

        heading = [f"graphrag-audit tree {model.path}", f"tables in {model.output_dir}"]
        heading += [f"generation {model.generation.label}", *(f"note: {n}" for n in model.notes)]
        return renderer(fmt)(
            view,
            width=run.text_width(width, output),
            color=run.text_color(color, output),
            heading=[scrub(line) for line in heading],
        )

    text = run.emit(work, output, guard, debug)  # titles are escaped for the output's charset
    if fmt == TreeFormat.mermaid:
        from graphrag_audit.render.graph import mermaid_size_warning

        warning = mermaid_size_warning(text)
        if warning:
            run.say(warning)
