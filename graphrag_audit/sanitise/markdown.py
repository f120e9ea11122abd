"""GitHub-flavoured Markdown: table cells and paragraphs (``-f markdown``, the step summary)."""

from __future__ import annotations

import html
import re

from graphrag_audit.sanitise.common import plain

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


def own_text(text: str) -> str:
    """Our own fixed sentences (no index content) for Markdown or a ``<summary>``: only ``&``,
    ``<`` and ``>`` need escaping."""
    return html.escape(text, quote=False)
