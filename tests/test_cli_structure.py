"""The CLI's structure (issue 15): shared options read the same in every command, every format
has a renderer, the modules of cli/ import one way, and audit() leaves memory calls to its caller."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer.main

from graphrag_audit.cli import app
from graphrag_audit.render import formats

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "graphrag_audit" / "cli"
SEED = ROOT / "fixtures" / "seed-v3"

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
    for cmd in commands:  # commands use options, run and memory; never the app nor each other
        assert graph[cmd] <= {
            "graphrag_audit.cli.options",
            "graphrag_audit.cli.run",
            "graphrag_audit.cli.memory",
        }, (cmd, graph[cmd])
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


def test_audit_calls_between_phases_only_when_given():
    from graphrag_audit.analysis import audit as audit_mod
    from graphrag_audit.analysis.audit import AuditOptions, audit

    # analysis imports nothing of the CLI (release_freed_memory came from cli.memory)
    assert not [
        n
        for n, v in vars(audit_mod).items()
        if str(getattr(v, "__module__", "")).startswith("graphrag_audit.cli")
    ]
    from graphrag_audit.io.load import load_index

    calls = []
    load_index(SEED, between_phases=lambda: calls.append(1))  # load_index's own phases
    loading = len(calls)
    assert loading >= 1
    calls.clear()
    with_costs = audit(SEED, AuditOptions(tokenizer="estimate"), between_phases=lambda: calls.append(1))
    # loading, the tree phase, and in the cost workers the prepared coster, graphrag < 2.0's
    # counts and the dynamic simulation (queued after the packing)
    assert len(calls) == loading + 4
    calls.clear()
    audit(SEED, AuditOptions(costs=False), between_phases=lambda: calls.append(1))
    assert len(calls) == loading + 1
    plain = audit(SEED, AuditOptions(tokenizer="estimate"))
    from graphrag_audit.render import render

    assert render(plain, "json") == render(with_costs, "json")
