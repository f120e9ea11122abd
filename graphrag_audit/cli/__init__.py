"""The command line: parse options, call the library, pick a renderer and an exit code.

``app`` (the typer application) and ``main`` (the console script) live in
:mod:`graphrag_audit.cli.entry`; one module per command (``levels``, ``tree``, ``report``,
``plan``); the shared options in :mod:`~graphrag_audit.cli.options`; exit codes (0/1/2/141), the
standard streams and the atomic writes in :mod:`~graphrag_audit.cli.run`.
"""

from graphrag_audit.cli.entry import app, main

__all__ = ["app", "main"]
