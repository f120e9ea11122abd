"""Every output format of every command and the ``"module:function"`` under :mod:`graphrag_audit.render`
that makes it; a renderer's module is imported only when its format is rendered (not by ``--help``).

Renderers take the command's result (``levels``, ``plan``, ``report``: the report; ``tree``: text the
view, the graph formats ``(forest, view)``; ``diff``: the diff) and its options as keywords."""

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


def _load(spec: str) -> Callable:
    module, name = spec.split(":")
    return getattr(import_module(f"graphrag_audit.render.{module}"), name)


def renderer(fmt: Enum) -> Callable:
    """The function that renders ``fmt`` (a member of one of the ``*Format`` enums) to one string."""
    return _load(_RENDERERS[type(fmt)][fmt])


def streamer(fmt: Enum) -> Callable | None:
    """The function that renders ``fmt`` as an iterator of text chunks (a deep index's JSON is never held
    whole), or None."""
    return _load("json:iter_json") if fmt is LevelsFormat.json else None
