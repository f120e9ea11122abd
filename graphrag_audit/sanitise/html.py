"""HTML text and double-quoted attribute values (the HTML report)."""

from __future__ import annotations

from html import escape as _escape

from graphrag_audit.sanitise.common import plain


def html_text(text, limit: int | None = None) -> str:
    """Untrusted text -> escaped HTML text (also safe inside a quoted attribute)."""
    return _escape(plain(text, limit), quote=True)


def html_escape(text: str) -> str:
    """Text that is already one visible line (ours, or :func:`plain`'s output) escaped for HTML
    text or a quoted attribute."""
    return _escape(text, quote=True)
