"""The command line: ``app`` (typer) in :mod:`~graphrag_audit.cli.entry`, one module per command, the
shared options in :mod:`~graphrag_audit.cli.options`, exit codes and streams in :mod:`~graphrag_audit.cli.run`.
:func:`main` answers a bare ``--version`` before typer is imported; ``app`` is imported on first use."""

from __future__ import annotations

import sys

__all__ = ["app", "main"]


def main() -> None:
    """The console script: ``graphrag-audit`` / ``audit``."""
    if sys.argv[1:] == ["--version"]:
        from graphrag_audit import __version__

        try:
            sys.stdout.write(f"graphrag-audit {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # as run_app: the reader went away
            sys.exit(141)
        return
    from graphrag_audit.cli.entry import main as run

    run()


def __getattr__(name: str):
    if name == "app":
        from graphrag_audit.cli.entry import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
