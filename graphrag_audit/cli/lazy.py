"""Commands built when they are first used (issue 22: start-up).

typer builds every command of an application (reading each function's signature into click
parameters) before it parses anything, and the command modules import their options, renderers'
registries and helpers. ``--version`` and ``levels --help`` need none of the other commands.

:class:`LazyCommands` is the group's ``commands`` mapping: it knows each command's name and the
``"module:function"`` that implements it (the registry :data:`graphrag_audit.cli.entry.COMMANDS`,
in help order), and imports the module and builds the click command, exactly as
``app.command(name, cls=QuickCommand)(function)`` would, the first time the command is looked up.
Listing the names (``--help``'s command list still builds each command for its one-line summary,
usage errors' "Did you mean") imports nothing.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from importlib import import_module


class LazyCommands(MutableMapping):
    """name -> click command, each built on first lookup from ``specs`` (name -> "module:function")."""

    def __init__(self, specs: dict[str, str], build):
        self._specs = dict(specs)
        self._build = build  # (name, function) -> click command
        self._built: dict = {}

    def __getitem__(self, name):
        cmd = self._built.get(name)
        if cmd is None:
            spec = self._specs[name]  # KeyError for an unknown name, as a dict
            module, _, attr = spec.partition(":")
            cmd = self._built[name] = self._build(name, getattr(import_module(module), attr))
        return cmd

    def __setitem__(self, name, cmd):
        self._specs.setdefault(name, "")
        self._built[name] = cmd

    def __delitem__(self, name):
        del self._specs[name]
        self._built.pop(name, None)

    def __iter__(self):
        return iter(self._specs)

    def __len__(self):
        return len(self._specs)

    def __contains__(self, name):
        return name in self._specs

    def loaded(self) -> list[str]:
        """The names of the commands built so far."""
        return [n for n in self._specs if n in self._built]
