"""The CLI's structure (issue 15): shared options read the same in every command, every format
has a renderer and the modules of cli/ import one way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer.main

from graphrag_audit.cli import app
from graphrag_audit.render import formats

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "graphrag_audit" / "cli"

#: options that mean the same in every command that has them (--level and report's required -o
#: mean something else per command, and say so)
SHARED = (
    "DIR",
    "--tokenizer",
    "--max-context-tokens",
    "--no-costs",
    "--color",
    "--width",
    "--debug",
    "--format",
    "--num-repeats",
    "--threshold",
    "--keep-parent",
    "--max-level",
    "--relevant",
    "--use-summary",
    "--query",
    "--max-unreachable",
    "--max-inflation",
    "--min-coverage",
    "--include-titles",
)


def test_report_has_every_dynamic_option_of_levels():
    """The HTML report shows the dynamic selection, so it takes the same knobs as levels."""
    cmds = _commands()
    dyn = {
        "--num-repeats",
        "--threshold",
        "--keep-parent",
        "--max-level",
        "--relevant",
        "--use-summary",
        "--query",
    }
    opts = {name: {o for p in cmd.params for o in getattr(p, "opts", ())} for name, cmd in cmds.items()}
    assert dyn <= opts["levels"] and dyn <= opts["report"]


def _commands() -> dict:
    return dict(typer.main.get_command(app).commands)


def test_every_command_is_registered_in_order():
    assert list(_commands()) == [
        "levels",
        "tree",
        "report",
        "plan",
        "explain",
        "diff",
        "update-run",
        "bundle",
    ]


@pytest.mark.parametrize("name", SHARED)
def test_a_shared_option_has_one_help_text(name):
    helps = {}
    for cmd_name, cmd in _commands().items():
        for p in cmd.params:
            if name in getattr(p, "opts", ()) or (name == "DIR" and p.name == "index_dir"):
                helps[cmd_name] = p.help
    assert len(helps) >= 2, helps
    assert len(set(helps.values())) == 1, helps


def test_format_choices_are_the_registry_enums():
    want = {
        "levels": formats.LevelsFormat,
        "tree": formats.TreeFormat,
        "plan": formats.PlanFormat,
        "diff": formats.DiffFormat,
        "update-run": formats.UpdateRunFormat,
    }
    for cmd_name, cmd in _commands().items():
        fmt = [p for p in cmd.params if "--format" in getattr(p, "opts", ())]
        if cmd_name not in want:
            assert not fmt
            continue
        assert fmt[0].type_descriptor.annotation is want[cmd_name]


@pytest.mark.parametrize(
    "enum",
    [formats.LevelsFormat, formats.TreeFormat, formats.PlanFormat, formats.ReportFormat, formats.DiffFormat],
)
def test_every_format_has_a_renderer(enum):
    for fmt in enum:
        fn = formats.renderer(fmt)
        assert callable(fn) and fn.__module__.startswith("graphrag_audit.render."), (fmt, fn)
    assert formats.streamer(formats.LevelsFormat.json).__name__ == "iter_json"
    assert formats.streamer(formats.LevelsFormat.text) is None


def test_render_rejects_an_unknown_format():
    from graphrag_audit.render import render

    with pytest.raises(ValueError, match="unknown format 'html'; choose one of text, json, markdown, github"):
        render(None, "html")


def _cli_imports() -> dict[str, set[str]]:
    """module -> the graphrag_audit.cli modules it imports (any depth: inside functions too)."""
    graph = {}
    for path in sorted(CLI.glob("*.py")):
        name = "graphrag_audit.cli" + ("" if path.stem == "__init__" else f".{path.stem}")
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("graphrag_audit.cli")
            ):
                deps.add(node.module)
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("graphrag_audit.cli")}
        graph[name] = deps
    return graph


def test_cli_modules_import_one_way():
    graph = _cli_imports()
    commands = {
        "graphrag_audit.cli.levels",
        "graphrag_audit.cli.tree",
        "graphrag_audit.cli.report",
        "graphrag_audit.cli.plan",
        "graphrag_audit.cli.update_run",
    }
    assert commands <= set(graph)
    for cmd in commands:  # commands use options and run; never the app nor each other
        assert graph[cmd] <= {"graphrag_audit.cli.options", "graphrag_audit.cli.run"}, (cmd, graph[cmd])
    assert graph["graphrag_audit.cli.run"] <= {"graphrag_audit.cli.options"}
    assert graph["graphrag_audit.cli.options"] == set()
    assert graph["graphrag_audit.cli.entry"] >= commands | {"graphrag_audit.cli.run"}

    seen, done = [], set()

    def visit(m):  # depth-first: a module met again while still open closes a cycle
        assert m not in seen, f"import cycle: {' -> '.join(seen + [m])}"
        if m in done:
            return
        seen.append(m)
        for d in graph.get(m, ()):
            visit(d)
        seen.pop()
        done.add(m)

    for m in graph:
        visit(m)
