"""The ``tree`` and ``report`` commands (registered on cli.app by ``register``)."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from graphrag_audit.cli import (Color, check_output_path, fail, output_charset_for, run_guarded, stdout_if_dash,
                               use_color, write_payload)

#: default row budget of ``tree`` text (and Mermaid/DOT) output: with the header about 100 lines
DEFAULT_MAX_LINES = 90


class TreeFormat(str, Enum):
    text = "text"
    mermaid = "mermaid"
    dot = "dot"
    graphml = "graphml"
    json = "json"


DIR_HELP = "Index output directory, project root (settings.yaml), or a 0.x output/<timestamp>/artifacts layout."


def _width(width: Optional[int], output: Optional[Path]) -> int:
    if width is not None:
        return width
    if output is None and sys.stdout.isatty():
        try:
            return os.get_terminal_size(sys.stdout.fileno()).columns
        except OSError:
            pass
    return 100


def register(app: typer.Typer) -> None:
    @app.command("tree")
    def tree_cmd(
        index_dir: Path = typer.Argument(..., metavar="DIR", help=DIR_HELP),
        level: Optional[int] = typer.Option(None, "--level", "-l", min=0,
                                            help="Mark what this community_level sends: under graphrag >= 2.0 "
                                                 "and < 2.0 (both), only >= 2.0 (v2 only), only < 2.0."),
        depth: Optional[int] = typer.Option(None, "--depth", "-d", min=0,
                                            help="Show at most this many levels below the top communities."),
        root: Optional[int] = typer.Option(None, "--root", "-r", help="Show only the subtree of this community."),
        max_lines: Optional[int] = typer.Option(None, "--max-lines", min=0,
                                                help=f"Row budget: the largest subtrees are expanded first, hidden "
                                                     f"siblings summarised (default {DEFAULT_MAX_LINES} for text, "
                                                     f"mermaid and dot; all for graphml and json; 0 = all)."),
        fmt: TreeFormat = typer.Option(TreeFormat.text, "--format", "-f", help="Output format."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the output to FILE, not stdout "
                                              "(atomically; never inside the index directory; - = stdout)."),
        color: Color = typer.Option(Color.auto, "--color", envvar="GRAPHRAG_AUDIT_COLOR",
                                    help="Colour in text output (NO_COLOR is honoured)."),
        width: Optional[int] = typer.Option(None, "--width", min=40, envvar="GRAPHRAG_AUDIT_WIDTH",
                                            help="Text output width (default: terminal width, or 100 when piped)."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    ):
        """The community forest: numbers, levels, entities, report titles; with --level, what N sends."""
        output = stdout_if_dash(output)
        guard = check_output_path(output, index_dir)

        def work():
            from graphrag_audit.render import graph as export
            from graphrag_audit.io.load import load_index
            from graphrag_audit.analysis.treeview import UnknownCommunity, build_forest, layout

            model = load_index(index_dir)
            if guard is not None:
                guard.protect_model(model)
            model.rollup_rows  # noqa: B018 - a broken create_final_nodes is an input error here too
            forest = build_forest(model, level)
            budget = max_lines
            if budget is None:
                budget = DEFAULT_MAX_LINES if fmt in (TreeFormat.text, TreeFormat.mermaid, TreeFormat.dot) else 0
            try:
                view = layout(forest, root=root, depth=depth, max_lines=budget)
            except UnknownCommunity as exc:
                raise fail(f"--root {root}: {exc}") from None
            if fmt == TreeFormat.text:
                from graphrag_audit.render.tree_text import render_tree

                colour = use_color(color, sys.stdout) if output is None else color == Color.always
                heading = [f"graphrag-audit tree {model.path}", f"tables in {model.output_dir}",
                           f"generation {model.generation.label}", *(f"note: {n}" for n in model.notes)]
                return render_tree(view, width=_width(width, output), color=colour, heading=heading)
            full = root is None and depth is None and not budget
            v = None if full else view
            return {
                TreeFormat.mermaid: export.to_mermaid,
                TreeFormat.dot: export.to_dot,
                TreeFormat.graphml: export.to_graphml,
                TreeFormat.json: export.to_json,
            }[fmt](forest, v)

        with output_charset_for(output):  # titles are escaped while the forest is built
            text = run_guarded(work, debug)
        write_payload(text, output, guard)

    @app.command("report")
    def report_cmd(
        index_dir: Path = typer.Argument(..., metavar="DIR", help=DIR_HELP),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="The HTML file to write (required; written atomically, never inside the "
                                                     "index directory; - = stdout)."),
        level: int = typer.Option(2, "--level", "-l", min=0, envvar="GRAPHRAG_AUDIT_LEVEL",
                                  help="The community_level whose selection colours the tree (default 2 "
                                       "like graphrag's CLI)."),
        tokenizer: str = typer.Option("cl100k_base", "--tokenizer", envvar="GRAPHRAG_AUDIT_TOKENIZER",
                                      help="cl100k_base (exact), o200k_base, or estimate (fast approximation)."),
        max_context_tokens: int = typer.Option(12000, "--max-context-tokens", min=1,
                                               help="graphrag's global search max_context_tokens (batch size)."),
        no_costs: bool = typer.Option(False, "--no-costs", help="Skip token counting and map-call batching."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    ):
        """One self-contained HTML file: header, per-level table, the tree coloured by what N sends, charts."""
        if output is None:
            raise fail("report: -o FILE.html is required")
        if tokenizer not in ("cl100k_base", "o200k_base", "estimate"):
            raise fail(f"--tokenizer: unknown encoding {tokenizer!r} (cl100k_base, o200k_base, estimate)")
        output = stdout_if_dash(output)
        guard = check_output_path(output, index_dir)

        def work():
            from graphrag_audit.analysis.audit import AuditOptions, audit_with_model
            from graphrag_audit.analysis.treeview import build_forest
            from graphrag_audit.render.html import render_html

            opts = AuditOptions(level=level, tokenizer=tokenizer, max_context_tokens=max_context_tokens,
                                costs=not no_costs)
            model, report = audit_with_model(index_dir, opts)
            if guard is not None:
                guard.protect_model(model)
            forest = build_forest(model, opts.level, report.selections_by_level())
            return render_html(report, forest)

        write_payload(run_guarded(work, debug), output, guard)
