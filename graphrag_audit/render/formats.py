"""Every output format of every command, and the renderer that makes it: the one place to add one.

Each command has its own ``Format`` enum (the sets differ) and one table mapping each member to
``"module:function"`` under :mod:`graphrag_audit.render`. A renderer's module is imported only
when its format is rendered (``--help`` imports none of them, nor numpy or rich through them).

What a renderer is called with depends on the command:

* ``levels``: ``fn(report: AuditReport, **kw)``; text takes ``width``, ``color``, ``focus``, json
  ``json_ids``. ``levels -f json`` is written as a stream of chunks: :func:`streamer`.
* ``tree``: text ``fn(view, width=, color=, heading=)``; the graph formats ``fn(forest, view)``.
* ``plan``: ``fn(report: PlanReport, **kw)``; text takes ``width`` and ``color``.
* ``report``: ``fn(report: AuditReport)``, one HTML page.
* ``diff``: ``fn(diff: IndexDiff, **kw)``; text takes ``width``, markdown and github ``include_titles``.
* ``update-run``: ``fn(report: UpdateRunReport, **kw)``; text takes ``width``.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from importlib import import_module


class LevelsFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"


class TreeFormat(str, Enum):
    text = "text"
    mermaid = "mermaid"
    dot = "dot"
    graphml = "graphml"
    json = "json"


class PlanFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


class ReportFormat(str, Enum):
    html = "html"


class DiffFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"


class UpdateRunFormat(str, Enum):
    text = "text"
    json = "json"


# One table per command: str-valued members of different enums compare equal ("json"), so they
# cannot share one dict.
_RENDERERS: dict[type, dict[Enum, str]] = {
    LevelsFormat: {
        LevelsFormat.text: "text:render_text",
        LevelsFormat.json: "json:render_json",
        LevelsFormat.markdown: "markdown:render_markdown",
        LevelsFormat.github: "github:render_github",
    },
    TreeFormat: {
        TreeFormat.text: "text:render_tree",
        TreeFormat.mermaid: "graph:to_mermaid",
        TreeFormat.dot: "graph:to_dot",
        TreeFormat.graphml: "graph:to_graphml",
        TreeFormat.json: "json:to_json",
    },
    PlanFormat: {
        PlanFormat.text: "text:render_plan_text",
        PlanFormat.json: "json:render_plan_json",
        PlanFormat.markdown: "markdown:render_plan_markdown",
    },
    ReportFormat: {
        ReportFormat.html: "html:render_html",
    },
    DiffFormat: {
        DiffFormat.text: "text:render_diff_text",
        DiffFormat.json: "json:render_diff_json",
        DiffFormat.markdown: "markdown:render_diff_markdown",
        DiffFormat.github: "github:render_diff_github",
    },
    UpdateRunFormat: {
        UpdateRunFormat.text: "text:render_update_run_text",
        UpdateRunFormat.json: "json:render_update_run_json",
    },
}

#: formats written as consecutive text chunks (a deep index's JSON lists millions of ids and is
#: never held whole): the renderer returns an iterator of strings
_STREAMERS: dict[type, dict[Enum, str]] = {
    LevelsFormat: {LevelsFormat.json: "json:iter_json"},
    TreeFormat: {TreeFormat.json: "json:iter_tree_json"},
}


def _load(spec: str) -> Callable:
    module, name = spec.split(":")
    return getattr(import_module(f"graphrag_audit.render.{module}"), name)


def renderer(fmt: Enum) -> Callable:
    """The function that renders ``fmt`` (a member of one of the ``*Format`` enums) to one string."""
    return _load(_RENDERERS[type(fmt)][fmt])


def streamer(fmt: Enum) -> Callable | None:
    """The function that renders ``fmt`` as an iterator of text chunks, or None when ``fmt`` is
    rendered whole (:func:`renderer`)."""
    spec = _STREAMERS.get(type(fmt), {}).get(fmt)
    return None if spec is None else _load(spec)
