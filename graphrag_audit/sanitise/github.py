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
    """A log line the runner never reads as a workflow command: actions/runner ``ActionCommandManager``
    tries ``::cmd::`` at the start after blanks and ``##[cmd]`` anywhere (:func:`plain` escapes that)."""
    s = plain(text, limit)
    while s.startswith("::"):
        s = "%3A" + s[1:]
    return s
