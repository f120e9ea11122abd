"""What a private corpus leaks into a shareable report (``-f markdown``, the step summary), hidden by
default (``levels --include-titles`` shows it): absolute paths (:func:`hide_paths`) and, in the renderers,
report titles and entity names. Plain text in, plain text out.
"""

from __future__ import annotations

import os
import re

HIDDEN_PATH = "(absolute path hidden)"
INDEX_PATH = "(index dir)"
PRIVACY_NOTE = (
    "report titles, entity names and absolute paths are hidden (ids stay); --include-titles shows them"
)

# an absolute path where a word starts: POSIX /a/b (not the second slash of a URL, not a/b),
# Windows C:\a or C:/a, UNC \\server\share. It ends at white space or a quote/bracket.
_ABS = re.compile(
    r"""(?:(?<=^)|(?<=[\s'"(=\[,;:]))(?<!://)(?:/|[A-Za-z]:[\\/]|\\\\)(?=[^\s/\\'"()\[\]<>|,;])[^\s'"()\[\]<>|,;]*"""
)


def _is_absolute(p: str) -> bool:
    return p.startswith("/") or p.startswith("\\\\") or bool(re.match(r"[A-Za-z]:[\\/]", p))


def hide_paths(text: str, index_path: str | None = None) -> str:
    """``text`` with absolute paths hidden; paths under ``index_path`` (or its absolute form)
    become ``(index dir)/rest`` (the index folder's own name can be private too)."""
    if not text:
        return text
    s = str(text)
    if index_path:
        known = {str(index_path).rstrip("/\\")}
        try:
            known.add(os.path.abspath(str(index_path)).rstrip("/\\"))
            known.add(os.path.realpath(str(index_path)).rstrip("/\\"))
        except (OSError, ValueError):
            pass
        for k in sorted((k for k in known if k and _is_absolute(k)), key=len, reverse=True):
            s = s.replace(k, INDEX_PATH)
    return _ABS.sub(HIDDEN_PATH, s)


def shown_path(path: str, index_path: str | None = None) -> str:
    """A path for a report header: relative paths as given, absolute ones hidden."""
    p = str(path)
    if not _is_absolute(p):
        return p
    shown = hide_paths(p, index_path)
    return HIDDEN_PATH if shown == INDEX_PATH else shown
