"""GitHub Actions: workflow-command data and properties, and plain log lines the runner must not
read as a command."""

from __future__ import annotations

from graphrag_audit.sanitise.common import plain, show


def workflow_data(text) -> str:
    """GitHub Actions workflow-command message escaping (``::error ::<data>``)."""
    s = show(text if isinstance(text, str) else str(text))
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text) -> str:
    """Escaping for workflow-command properties (``title=…``, ``file=…``)."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_log(text, limit: int | None = None) -> str:
    """A plain log line in a GitHub Actions step that must not be read as a workflow command.

    The runner (actions/runner ``ActionCommandManager``) tries ``::cmd::`` at the start of the
    line after trimming leading whitespace, then the legacy ``##[cmd]`` form *anywhere* in the
    line. So: one line (:func:`plain`, which also writes ``##[`` as ``#\\x23[``), no leading ``::``.
    """
    s = plain(text, limit)
    while s.startswith("::"):
        s = "%3A" + s[1:]
    return s
