"""The one exception the library raises for unreadable or malformed input."""

from __future__ import annotations

import os

from graphrag_audit.sanitise.secrets import scrub
from graphrag_audit.sanitise.terminal import visible  # noqa: F401 (errors.visible: the cli's import path)


class IndexInputError(Exception):
    """Bad input: names the file (or directory) and the problem in one line, never a credential
    (both scrubbed by :func:`graphrag_audit.sanitise.secrets.scrub`)."""

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = scrub(str(path))
        self.problem = scrub(" ".join(str(problem).split()))  # always one line
        super().__init__(f"{visible(self.path)}: {visible(self.problem)}")
