"""The one exception the library raises for unreadable or malformed input."""

from __future__ import annotations

import re
from pathlib import Path

from graphrag_audit.escape import INVISIBLE, LEGACY_COMMAND, LEGACY_COMMAND_ESCAPED

# every control character (line breaks and tabs included), plus what render.escape.INVISIBLE
# lists (bidi controls, zero-width characters, lone surrogates, ...): shown as escapes, so that a
# hostile file name or cell value cannot drive the terminal, hide text, or break the line
_UNSAFE = re.compile(f"{INVISIBLE.pattern}|[\\x09-\\x0d\\x85\\u2028\\u2029]")


def visible(text: str) -> str:
    """``text`` with every unsafe character written as a Python escape (``\\x1b``, ``\\n``,
    ``\\u202e``) and a legacy ``##[`` workflow command as ``#\\x23[``."""
    s = _UNSAFE.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)
    return s.replace(LEGACY_COMMAND, LEGACY_COMMAND_ESCAPED)


class IndexInputError(Exception):
    """Bad input: names the file (or directory) and the problem in one line."""

    def __init__(self, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = " ".join(str(problem).split())  # always one line
        super().__init__(f"{visible(self.path)}: {visible(self.problem)}")
