"""JSON text (``json.dumps`` output) that a CI log may print."""

from __future__ import annotations

from graphrag_audit.sanitise.common import LEGACY_COMMAND


def json_inert(text: str) -> str:
    """JSON text (``json.dumps`` output) with every ``##[`` written ``#\\u0023[``: the same data,
    but a runner printing it in a CI log cannot read a legacy workflow command from a title. In
    JSON text ``#`` only occurs inside strings, where ``\\u0023`` decodes to ``#`` again."""
    return text.replace(LEGACY_COMMAND, "#\\u0023[") if LEGACY_COMMAND in text else text
