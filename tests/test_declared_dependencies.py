"""Every module of graphrag_audit imports only what pyproject.toml declares for that install (issue 38).

``python -m pip install .`` (no extras) is what a user runs first; CI installs ``.[test]``, which
once hid ``regex`` (imported by bundle's filler, declared only in the test extra). Here each
module's imports are read with ``ast`` (module level and inside functions), each import name is
mapped to its distribution with ``importlib.metadata.packages_distributions()`` and must be:

* the standard library (``sys.stdlib_module_names``) or graphrag_audit itself;
* a base dependency (``[project] dependencies``);
* in the modules that read remote indexes (``REMOTE``), a dependency of the ``azure`` or ``s3``
  extra, imported lazily (inside a function or behind ``except ImportError``), so that a base
  install still imports the module;
* or one of the listed ``EXCEPTIONS``, each with its reason, also imported lazily.

Dynamic imports (``import_module``/``__import__``) in the package name graphrag_audit's own modules
or the remote extras' modules (checked by ``test_dynamic_imports_are_known``).
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "graphrag_audit"

#: the modules that serve remote indexes (az://, abfs[s]://, s3://) or read a LanceDB vector store, and the
#: extras they may import from
REMOTE = {"graphrag_audit/io/remote.py": ("azure", "s3"), "graphrag_audit/io/vector_store.py": ("lancedb",)}

#: (module, top-level import name) -> why it may import a distribution pyproject.toml does not declare
EXCEPTIONS = {
    (
        "graphrag_audit/verify.py",
        "graphrag",
    ): "--verify runs graphrag's own code, so it needs graphrag installed beside the tool (the `graphrag` "
    "extra, or CI's side environments); imported inside functions after graphrag_unusable_reason()",
    (
        "graphrag_audit/verify.py",
        "graphrag_storage",
    ): "--verify under graphrag >= 3: graphrag's own storage package (a graphrag dependency), "
    "behind except Exception for other layouts",
    (
        "graphrag_audit/verify.py",
        "tiktoken",
    ): "--verify: graphrag's own tokenizer (tiktoken is a graphrag dependency in every version)",
}

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs Python >= 3.11 or tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _names(requirements: list[str]) -> set[str]:
    return {_normalise(_NAME.match(r).group(1)) for r in requirements}


def declared() -> tuple[set[str], dict[str, set[str]]]:
    """(base distributions, extra -> its distributions), names normalised (PEP 503)."""
    project = _pyproject()["project"]
    return _names(project["dependencies"]), {
        k: _names(v) for k, v in project["optional-dependencies"].items()
    }


def _is_import_guard(handler: ast.ExceptHandler) -> bool:
    """An except clause that catches a failed import (ImportError, ModuleNotFoundError or wider)."""
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        isinstance(k, ast.Name)
        and k.id in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")
        for k in kinds
    )


def imports(path: Path) -> list[tuple[str, int, bool]]:
    """(module name, line, lazy) of every absolute import in ``path``; lazy = inside a function, in
    the body of a try whose handlers catch a failed import (it cannot stop the module importing), or
    in such a handler (it runs only when an import failed)."""
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((a.name, node.lineno, lazy) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno, lazy))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            lazy = True
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            guarded = lazy or any(_is_import_guard(h) for h in node.handlers)
            for child in node.body:
                visit(child, guarded)
            for handler in node.handlers:  # an import-failure handler runs only when an import failed
                for child in handler.body:
                    visit(child, lazy or _is_import_guard(handler))
            for child in [*node.orelse, *node.finalbody]:
                visit(child, lazy)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, lazy)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)
    return found


@cache
def _top_level_map() -> dict[str, list[str]]:
    return packages_distributions()


@cache
def distributions_of(module: str) -> frozenset[str] | None:
    """The installed distributions that provide ``module`` (normalised), None when none does.
    A namespace package shared by several distributions (``azure``) is resolved by the files
    each distribution installs under the module's path."""
    dists = sorted(set(_top_level_map().get(module.split(".")[0], ())))
    if len(dists) > 1:
        parts = module.split(".")
        for k in range(len(parts), 1, -1):
            prefix = "/".join(parts[:k])
            hits = [
                d
                for d in dists
                if any(
                    str(f).startswith(prefix + "/") or str(f) == prefix + ".py"
                    for f in distribution(d).files or ()
                )
            ]
            if hits:
                dists = hits
                break
    return frozenset(_normalise(d) for d in dists) or None


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def undeclared_imports() -> list[str]:
    """Every import that the install serving its module does not declare, as 'module:line: message'."""
    base, extras = declared()
    problems = []
    used_exceptions = set()
    for path in modules():
        rel = path.relative_to(ROOT).as_posix()
        remote_dists = set().union(*(extras[e] for e in REMOTE.get(rel, ())))
        for name, line, lazy in imports(path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top == "graphrag_audit":
                continue
            where = f"{rel}:{line}: import {name}"
            if (rel, top) in EXCEPTIONS:
                used_exceptions.add((rel, top))
                if not lazy:
                    problems.append(
                        f"{where}: an allowed exception, but imported unconditionally at module level"
                    )
                continue
            dists = distributions_of(name)
            if dists is None:
                problems.append(
                    f"{where}: no installed distribution provides it (declare it in pyproject.toml, "
                    "or list it in EXCEPTIONS with the reason)"
                )
            elif dists & base:
                continue
            elif dists & remote_dists:
                if not lazy:
                    problems.append(
                        f"{where}: {'/'.join(sorted(dists))} is an optional extra's "
                        f"({', '.join(REMOTE[rel])}): import it inside a function"
                    )
            else:
                scope = (
                    f"the base dependencies or the {'/'.join(REMOTE[rel])} extras"
                    if rel in REMOTE
                    else "the base dependencies"
                )
                problems.append(
                    f"{where}: distribution {'/'.join(sorted(dists))} is not in {scope} of pyproject.toml"
                )
    problems += [
        f"EXCEPTIONS lists ({rel}, {top}), which no longer imports it: remove the entry"
        for rel, top in sorted(set(EXCEPTIONS) - used_exceptions)
    ]
    return problems


def test_every_import_is_declared_for_its_install():
    problems = undeclared_imports()
    assert not problems, "\n".join(problems)


def test_every_exception_has_a_reason_and_the_extras_exist():
    _, extras = declared()
    assert all(reason.strip() for reason in EXCEPTIONS.values())
    assert all(set(names) <= set(extras) for names in REMOTE.values()), extras.keys()
    assert all((ROOT / rel).is_file() for rel in REMOTE)


def test_dynamic_imports_are_known():
    """``import_module``/``__import__`` cannot be read as imports: each one in the package either
    imports graphrag_audit's own modules (an f-string or a name built from its tables) or checks
    for the remote extras' packages (remote.py's ``__import__(module)`` over ``EXTRAS``)."""
    known = {
        "graphrag_audit/__init__.py",
        "graphrag_audit/render/formats.py",
        "graphrag_audit/io/remote.py",
    }
    found = set()
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("import_module", "__import__")
            ):
                found.add(path.relative_to(ROOT).as_posix())
    assert found == known


# ---- the checker itself, on hand-made cases ------------------------------------------------------
def test_imports_reads_module_level_function_level_and_guarded_imports(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "import os, json as j\n"
        "from a.b import c\n"
        "from . import sibling\n"
        "try:\n    import x1\nexcept ImportError:\n    import x2\n"
        "try:\n    import x3\nexcept ValueError:\n    import x4\n"
        "def f():\n    import y\n    from z.w import v\n"
        "class K:\n    import k\n",
        encoding="utf-8",
    )
    assert imports(src) == [
        ("os", 1, False),
        ("json", 1, False),
        ("a.b", 2, False),
        ("x1", 5, True),
        ("x2", 7, True),
        ("x3", 9, False),
        ("x4", 11, False),
        ("y", 13, True),
        ("z.w", 14, True),
        ("k", 16, False),
    ]


def test_namespace_packages_resolve_to_the_distribution_holding_the_module():
    pytest.importorskip("adlfs")  # the azure extra (installed by the test extra)
    assert distributions_of("azure.storage.blob.aio") == {"azure-storage-blob"}
    assert distributions_of("azure.identity") == {"azure-identity"}
    assert distributions_of("yaml") == {"pyyaml"}
    assert distributions_of("graphrag_audit_no_such_module") is None


def test_a_base_module_importing_a_test_only_distribution_is_reported(monkeypatch):
    """The check fails on the case that started issue 38: ``regex`` missing from the base
    dependencies while bundle/filler.py imports it (pyproject.toml read with regex dropped)."""
    base, extras = declared()
    assert "regex" in base
    monkeypatch.setattr(sys.modules[__name__], "declared", lambda: (base - {"regex"}, extras))
    problems = undeclared_imports()
    assert problems == [p for p in problems if p.startswith("graphrag_audit/bundle/filler.py:")]
    assert (
        len(problems) == 1
        and "import regex: distribution regex is not in the base dependencies" in problems[0]
    )
