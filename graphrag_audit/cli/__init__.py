"""The command line: parse options, call the library, pick a renderer and an exit code.

``app`` (the typer application) and the console script's body live in
:mod:`graphrag_audit.cli.entry`; one module per command (``levels``, ``tree``, ``report``,
``plan``...); the shared options in :mod:`~graphrag_audit.cli.options`; exit codes (0/1/2/141), the
standard streams and the atomic writes in :mod:`~graphrag_audit.cli.run`.

:func:`main` answers a bare ``--version`` before typer is imported (the one command line that
needs nothing of the application; issue 22's start-up target). ``app`` is imported on first use.
"""

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
