"""Renderers: functions of an AuditReport that return strings. They never print or exit."""

FORMATS = ("text", "json", "markdown", "github")


def render(report, fmt: str, **kw) -> str:
    if fmt == "json":
        from graphrag_audit.render.json import render_json

        return render_json(report, **{k: v for k, v in kw.items() if k == "json_ids"})
    if fmt == "markdown":
        from graphrag_audit.render.markdown import render_markdown

        return render_markdown(report, **kw)
    if fmt == "github":
        from graphrag_audit.render.github import render_github

        return render_github(report, **kw)
    if fmt == "text":
        from graphrag_audit.render.text import render_text

        return render_text(report, **kw)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
