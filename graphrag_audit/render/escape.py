"""Neutralise untrusted text (LLM-written titles, summaries, ids) for each output medium."""

from __future__ import annotations

import re

# ANSI/VT escape sequences (CSI, OSC, single-char escapes) and other control characters.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_WS = re.compile(r"\s+")


def plain(text, limit: int | None = None) -> str:
    """One line of printable text: escape sequences removed, control characters and line breaks
    turned into spaces, bidi overrides dropped, truncated to ``limit`` characters with '…'."""
    if text is None:
        return ""
    s = text if isinstance(text, str) else str(text)
    if isinstance(text, bytes):
        s = text.decode("utf-8", "replace")
    s = s.encode("utf-8", "replace").decode("utf-8")  # lone surrogates -> '?'
    s = _ANSI.sub("", s)
    s = _CONTROL.sub(" ", s)
    s = _WS.sub(" ", s).strip()
    if limit is not None and len(s) > limit:
        s = s[: max(limit - 1, 0)] + "…"
    return s


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def markdown_cell(text, limit: int | None = None) -> str:
    """Safe inside a GitHub-flavoured Markdown table cell or paragraph: no HTML, no links,
    no emphasis, no table-breaking pipes."""
    s = plain(text, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    # bare autolinks (http://, www.) and @mentions become inert
    s = s.replace("://", ":&#47;&#47;").replace("www\\.", "www&#46;").replace("@", "&#64;&#8288;")
    return s


def workflow_data(text) -> str:
    """GitHub Actions workflow-command message escaping (``::error ::<data>``)."""
    s = text if isinstance(text, str) else str(text)
    s = _ANSI.sub("", s)
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text) -> str:
    """Escaping for workflow-command properties (``title=…``, ``file=…``)."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_log(text, limit: int | None = None) -> str:
    """A plain log line in a GitHub Actions step that must not be read as a workflow command.

    The runner (actions/runner ``ActionCommandManager``) tries ``::cmd::`` at the start of the
    line after trimming leading whitespace, then the legacy ``##[cmd]`` form *anywhere* in the
    line. So: one line (:func:`plain`), no leading ``::`` and no ``##[``.
    """
    s = plain(text, limit).replace("##[", "#%23[")
    while s.startswith("::"):
        s = "%3A" + s[1:]
    return s
