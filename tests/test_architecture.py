"""The import rules of docs/architecture.md, checked on the source (no import is executed).

* Layers, low to high: a module imports only from its own layer or below.
* No import cycle between modules (imports inside functions count; ``if TYPE_CHECKING:`` ones do not).
* Renderers read typed results only: nothing under ``render/`` imports an analysis, the model,
  the readers or the graphrag reproduction.
* typer only in ``cli/``; rich only in ``cli/`` and the terminal renderers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "graphrag_audit"

#: (layer name, module prefixes) from low to high; the first matching prefix decides
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("errors", "findings", "rules", "sanitise")),
    ("model", ("model",)),
    ("results", ("results",)),
    ("io", ("io",)),
    ("graphrag", ("graphrag",)),
    ("analysis", ("analysis",)),
    ("verify and handoff", ("verify", "handoff", "bundle")),
    ("render", ("render",)),
    ("cli", ("cli", "__main__")),
]
#: render modules that write to a terminal (the only renderers that may import rich)
TERMINAL_RENDERERS = {
    "render.console",
    "render.text",
}
RENDER_MAY_NOT_IMPORT = ("analysis", "model", "io", "graphrag", "verify", "handoff", "bundle")


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, module: str) -> list[tuple[str, int]]:
    """(imported name, line) of every import in ``path``; package-internal names are given
    relative to the package ("analysis.levels"), others by their top-level name ("typer")."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[str, int]] = []
    is_package = path.name == "__init__.py"

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:
                    visit_stmt(sub)
                continue
            visit_stmt(child)

    def visit_stmt(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.extend((_internal(a.name), node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module.split(".") if module else []
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(["graphrag_audit", *base] + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from a.b import c`: c may be a module (a.b.c) or a name in a.b; _existing decides
            found.extend((_internal(f"{source}.{a.name}"), node.lineno) for a in node.names)
        else:
            visit(node)

    visit(tree)
    return found


def _internal(name: str) -> str:
    """ "analysis.levels.X" for the package's own names, "external:typer" for the rest."""
    if name == "graphrag_audit" or name.startswith("graphrag_audit.__"):
        return "__init__"
    if name.startswith("graphrag_audit."):
        return name.removeprefix("graphrag_audit.")
    return "external:" + name.split(".")[0]


def _existing(name: str, modules: set[str]) -> str | None:
    """The package module ``name`` refers to (``x.y.Name`` -> ``x.y``), or None if external."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _graph() -> dict[str, list[tuple[str, int]]]:
    files = {(_module_name(p) or "__init__"): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    graph = {}
    for mod, path in files.items():
        edges = []
        for name, line in _imports(path, "" if mod == "__init__" else mod):
            if name.startswith("external:") or name == "__init__":
                edges.append((name, line))
            else:  # a name inside a module counts as that module; the package root as __init__
                edges.append((_existing(name, modules) or "__init__", line))
        graph[mod] = edges
    return graph


GRAPH = _graph()


def _layer(mod: str) -> int | None:
    for i, (_, prefixes) in enumerate(LAYERS):
        if any(mod == p or mod.startswith(p + ".") for p in prefixes):
            return i
    return None


def test_every_module_has_a_layer():
    """A new top-level module must be placed in a layer (here and in docs/architecture.md)."""
    unplaced = sorted(m for m in GRAPH if m != "__init__" and _layer(m) is None)
    assert not unplaced, f"modules in no layer: {unplaced}"


def test_imports_go_down_the_layers():
    bad = []
    for mod, edges in GRAPH.items():
        if mod == "__init__":  # the package root re-exports the public API lazily
            continue
        lo = _layer(mod)
        for target, line in sorted(set(edges)):
            if target.startswith("external:"):
                continue
            if target == "__init__":
                continue  # __version__ only; the root imports nothing eagerly (test_startup)
            if _layer(target) is not None and lo is not None and _layer(target) > lo:
                bad.append(
                    f"{mod} ({LAYERS[lo][0]}) imports {target} ({LAYERS[_layer(target)][0]}) at line {line}"
                )
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_no_import_cycles():
    internal = {
        m: sorted({t for t, _ in e if not t.startswith("external:") and t != m}) for m, e in GRAPH.items()
    }
    # Tarjan's strongly connected components, iteratively
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = 0
    for start in sorted(internal):
        if start in index:
            continue
        work = [(start, iter(internal[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in internal:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(internal[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    cycles.append(sorted(comp))
    assert not cycles, f"import cycles: {cycles}"


def test_renderers_read_only_results():
    bad = sorted(
        {
            f"{mod} imports {t} (line {line})"
            for mod, edges in GRAPH.items()
            if mod.startswith("render")
            for t, line in edges
            if any(t == p or t.startswith(p + ".") for p in RENDER_MAY_NOT_IMPORT)
        }
    )
    assert not bad, "renderers must read typed results only:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "library, allowed",
    [
        ("typer", lambda m: m == "cli" or m.startswith("cli.")),
        ("rich", lambda m: m == "cli" or m.startswith("cli.") or m in TERMINAL_RENDERERS),
    ],
)
def test_ui_libraries_stay_in_their_place(library, allowed):
    bad = [
        f"{mod} (line {line})"
        for mod, edges in GRAPH.items()
        for t, line in edges
        if t == f"external:{library}" and not allowed(mod)
    ]
    assert not bad, f"{library} imported outside its place: {bad}"


def test_the_checker_sees_imports(tmp_path):
    """The rules above are only as good as the parser: it finds the imports it must find."""
    cli_edges = {
        t
        for t, _ in GRAPH.get("cli", []) + [e for m, es in GRAPH.items() if m.startswith("cli.") for e in es]
    }
    assert "external:typer" in cli_edges
    assert any(t.startswith("analysis") for t in cli_edges)
    # a made-up upward import is caught
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from graphrag_audit.cli import app\nfrom ..render import text\n"
        "if TYPE_CHECKING:\n    import typer\ndef f():\n    import rich\n"
    )
    assert _imports(probe, "model.probe") == [("cli.app", 1), ("render.text", 2), ("external:rich", 6)]


#: modules that may not start a thread, a pool or a process (issue 40: one process, one thread)
NO_CONCURRENCY = ("threading", "concurrent", "multiprocessing", "_thread")


def test_one_process_one_thread():
    bad = sorted(
        f"{mod} imports {t.removeprefix('external:')} (line {line})"
        for mod, edges in GRAPH.items()
        for t, line in edges
        if t.removeprefix("external:") in NO_CONCURRENCY
    )
    assert not bad, bad


#: private names of a dependency the package still reaches, each with its reason
PRIVATE_API_ALLOWED = {
    # bpe-openai's Rust counter: the public Encoding.encode builds the token list and refuses a text
    # over 200,000 tokens, which a report may be; count() returns the number alone
    ("graphrag/tokens.py", "bpe_openai._bindings"),
}


def test_no_private_api_of_a_dependency():
    """No ``dep._private`` reached by import or attribute (``typer._click``, rich's ``_measure``...)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] != "graphrag_audit" and any(
                    p.startswith("_") and p != "__future__" for p in parts
                ):
                    found.add((rel, name))
    assert found <= PRIVATE_API_ALLOWED, sorted(found - PRIVATE_API_ALLOWED)


def test_every_module_is_named_in_the_architecture_page():
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [
        p.relative_to(PACKAGE).as_posix()
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.name not in ("__init__.py", "__main__.py") and p.name not in page
    ]
    assert not missing, f"modules docs/architecture.md does not name: {missing}"
