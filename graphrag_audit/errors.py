"""The one exception the library raises for unreadable or malformed input."""

from __future__ import annotations

import re
from pathlib import Path

# control characters, bidi overrides, zero-width characters and lone surrogates: shown as
# escapes, so that a hostile file name or cell value cannot drive the terminal or a CI log
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


def visible(text: str) -> str:
    """``text`` with every unsafe character written as a Python escape (``\\x1b``, ``\\u202e``)."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


class IndexInputError(Exception):
    """Bad input: names the file (or directory) and the problem in one line."""

    def __init__(self, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = " ".join(str(problem).split())  # always one line
        super().__init__(f"{visible(self.path)}: {visible(self.problem)}")
