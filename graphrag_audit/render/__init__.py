"""Renderers: functions of a result that return strings. They never print or exit.

Which function makes which format of which command: :mod:`graphrag_audit.render.formats`."""

from graphrag_audit.render.formats import LevelsFormat, renderer

FORMATS = tuple(f.value for f in LevelsFormat)


def render(report, fmt: str, **kw) -> str:
    """The ``levels`` output of the AuditReport ``report`` in the format ``fmt`` (text, json,
    markdown or github) as one string."""
    try:
        fmt = LevelsFormat(fmt)
    except ValueError:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}") from None
    if fmt is LevelsFormat.json:
        kw = {k: v for k, v in kw.items() if k == "json_ids"}
    return renderer(fmt)(report, **kw)
