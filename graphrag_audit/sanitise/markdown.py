"""GitHub-flavoured Markdown table cells and paragraphs. Only what Markdown would read is escaped, so pasted
raw Markdown stays readable: ``\\ ` * [ ] | ~ $`` anywhere, ``_`` unless intraword, ``& < >`` as entities,
``#`` before a digit (issue references); a block marker at the start (``#``, ``-``, ``+``, ``1.``, ``1)``,
a line of ``=`` or ``-``); bare autolinks (``://``, ``www.``) and ``@mentions`` are broken with entities.
"""

from __future__ import annotations

import html
import re

from graphrag_audit.sanitise.common import plain

_INLINE = re.compile(r"([\\`*\[\]|~$])")
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")  # "_" not between two letters/digits
_ISSUE_REF = re.compile(r"#(?=\d)")
#: a block marker at the start: ATX heading, list item, ordered list item, setext underline /
#: thematic break (CommonMark needs a space or the end after the marker, or a line of = or -)
_LEADING = re.compile(
    r"^(?:(#)(?=#{0,5}(?:\s|$))|([-+*])(?=\s|$)|([=-])(?=[=\s-]*$)|(\d{1,9})([.)])(?=\s|$))"
)
_WWW = re.compile(r"(?i)(www)\.")


def markdown_cell(text, limit: int | None = None) -> str:
    """Safe inside a GitHub-flavoured Markdown table cell or paragraph: no HTML, no links,
    no emphasis, no table-breaking pipes, no block structure."""
    s = plain(text, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _INLINE.sub(r"\\\1", s)
    s = _UNDERSCORE.sub(r"\\_", s)
    s = _ISSUE_REF.sub(r"\\#", s)
    s = _LEADING.sub(_escape_marker, s, count=1)
    # bare autolinks (http://, www.) and @mentions become inert
    s = s.replace("://", ":&#47;&#47;").replace("@", "&#64;&#8288;")
    return _WWW.sub(r"\1&#46;", s)


def _escape_marker(m: re.Match) -> str:
    if m.group(4):
        return m.group(4) + "\\" + m.group(5)
    return "\\" + (m.group(1) or m.group(2) or m.group(3))


def own_text(text: str) -> str:
    """Our own fixed sentences (no index content) for Markdown or a ``<summary>``: only ``&``,
    ``<`` and ``>`` need escaping."""
    return html.escape(text, quote=False)


def own_cell(text: str) -> str:
    """Our own text (a rule's fix hint) in a table cell: Markdown is kept (code spans, GitHub's
    ``owner/repo#N`` references), only HTML characters and the cell-ending ``|`` are escaped."""
    return own_text(" ".join(str(text).split())).replace("|", "\\|")
