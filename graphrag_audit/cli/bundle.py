"""``graphrag-audit bundle DIR -o OUT``: a shareable, privacy-safe reproduction of an index."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import graphrag_audit.cli.options as options
import graphrag_audit.cli.run as run


def bundle_cmd(
    index_dir: options.IndexDir,
    out: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            metavar="OUT",
            help="The bundle directory to create (a new or empty directory, never inside an index).",
        ),
    ],
    keep_titles: Annotated[
        bool,
        typer.Option(
            "--keep-titles",
            help="Keep entity names, community titles and report titles (all other text is still replaced).",
        ),
    ] = False,
    include_all: Annotated[
        bool,
        typer.Option(
            "--include-all",
            help="Also bundle the tables and columns graphrag's query path does not read "
            "(covariates, ...), rebuilt the same way, and say which on stderr; embeddings and "
            "folders such as lancedb/ are never copied.",
        ),
    ] = False,
    max_size: Annotated[
        str,
        typer.Option(
            "--max-size",
            metavar="BYTES",
            help="Refuse (exit 2) when the tables to bundle hold more than this (e.g. 500M, 4G).",
        ),
    ] = "2G",
    force: Annotated[
        bool, typer.Option("--force", help="Write into a non-empty OUT (same-named files are replaced).")
    ] = False,
    debug: options.Debug = False,
):
    """A shareable reproduction of an index: same layout, ids and token counts, all free text replaced."""
    from graphrag_audit.io.decoded import parse_byte_count

    limit = run.parsed(parse_byte_count, max_size, option="--max-size")

    def work():
        import dataclasses

        from graphrag_audit import __version__
        from graphrag_audit.analysis.audit import audit
        from graphrag_audit.bundle.build import plan_bundle, readme, write_bundle
        from graphrag_audit.errors import IndexInputError
        from graphrag_audit.io.remote import location_of
        from graphrag_audit.render.json import render_json
        from graphrag_audit.render.markdown import render_markdown

        loc = location_of(index_dir)
        if loc is not None:
            raise IndexInputError(
                loc.display,
                f"bundle reads local index folders only, and this index is in "
                f"{loc.kind}: copy its output folder into a local folder and bundle "
                f"that (levels, tree, plan and report read it in place)",
            )
        plan = plan_bundle(index_dir, include_all=include_all, max_bytes=limit)

        def extra(path: Path, result) -> dict[str, bytes]:
            """The bundle's own audit files; ``path`` is the temporary folder renamed to OUT afterwards."""
            try:
                report = audit(path)
            except IndexInputError as exc:  # named by the source's files: the temporary folder will be gone
                tmp, src = str(path), str(plan.files.output_dir)
                raise IndexInputError(exc.path.replace(tmp, src), exc.problem.replace(tmp, src)) from None
            shown = str(out)  # the audit as if run on OUT
            index = dataclasses.replace(report.index, path=shown, output_dir=shown, name=Path(shown).name)
            report = dataclasses.replace(report, index=index)
            return {
                "audit.json": render_json(report).encode("utf-8"),
                "audit.md": render_markdown(report).encode("utf-8"),
                "README.md": readme(result, __version__).encode("utf-8"),
            }

        return write_bundle(plan, out, keep_titles=keep_titles, force=force, extra=extra)

    result = run.run_guarded(work, debug)
    if result.added:
        run.say(
            f"graphrag-audit: warning: --include-all put {len(result.added)} table(s) or column(s) that graphrag's "
            f"query path does not read into the bundle (values rebuilt, names kept): "
            f"{', '.join(map(repr, result.added))}\n"
        )
    run.say(
        f"graphrag-audit: bundle written to {result.out} ({len(result.written)} table(s); "
        f"{sum(result.plan.left_out.values())} file(s) left out, see its README.md)\n"
    )
