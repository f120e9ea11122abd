"""Quick option coercion (graphrag_audit.cli.coercion, issue 22): for every parameter of every
command, the quick path converts a value exactly as typer's own (pydantic) coercion does, or
raises exactly its error. The reference is typer's ``build_runtime_param`` on the same
parameter, run on the same values."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import pytest
import typer.main

pytest.importorskip("typer._coercion")  # typer >= 0.29 (older releases coerce with click's types)

from typer._coercion import build_runtime_param  # noqa: E402

from graphrag_audit.cli import app  # noqa: E402
from graphrag_audit.cli.coercion import QuickRuntimeParam, quick_runtime_param  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "fixtures" / "seed-v3"

RAW = [
    "0",
    "1",
    "2",
    "-1",
    "-0",
    "01",
    "+1",
    " 1",
    "1 ",
    "1_000",
    "1.5",
    "0.25",
    "-0.5",
    "1.0",
    "1.",
    ".5",
    "1e3",
    "nan",
    "inf",
    "-inf",
    "99999999999999999999",
    "123456789012345678",
    "abc",
    "",
    " ",
    "true",
    "false",
    "True",
    "yes",
    "no",
    "-",
    ".",
    "..",
    "a\x00b",
    str(SEED),
    str(SEED / "communities.parquet"),
    "/nonexistent/graphrag-audit",
    "json",
    "JSON",
    "text",
    "never",
    "warning",
    "auto",
    "always",
    "cl100k_base",
    "estimate",
    "é",
    True,
    False,
    0,
    1,
    -3,
    2.5,
    0.0,
    Path("x"),
    Path(str(SEED)),
]


def _commands():
    group = typer.main.get_command(app)
    return {"(group)": group, **dict(group.commands)}


def _cases():
    out = []
    for cname, cmd in _commands().items():
        ctx = cmd.context_class(cmd, info_name=cname)
        for p in cmd.get_params(ctx):
            desc = getattr(p, "type_descriptor", None)
            if desc is None:
                continue
            out.append(pytest.param(cmd, ctx, p, id=f"{cname} {p.name}"))
    return out


def _outcome(fn):
    try:
        v = fn()
    except Exception as exc:  # noqa: BLE001 - the error is part of the contract
        cause = exc.__cause__
        return (
            "error",
            type(exc).__name__,
            str(exc),
            type(cause).__name__ if cause else None,
            str(getattr(exc, "message", "")),
        )
    return ("value", type(v), v)


@pytest.mark.parametrize("cmd, ctx, param", _cases())
def test_quick_coercion_matches_typer(cmd, ctx, param):
    desc = param.type_descriptor
    quick = quick_runtime_param(desc)
    if quick is None:
        pytest.skip(f"{desc.annotation!r} is left to typer")
    ann = desc.annotation
    values = list(RAW)
    if isinstance(ann, type) and issubclass(ann, Enum):
        values += (
            list(ann) + [m.value for m in ann] + [m.value.upper() for m in ann if isinstance(m.value, str)]
        )
    slow = build_runtime_param(desc)
    for v in values:
        want = _outcome(lambda: slow._coerce_value(v, param=param, ctx=ctx))
        got = _outcome(lambda: quick._coerce_value(v, param=param, ctx=ctx))
        assert got == want, (param.name, v)


def test_every_simple_parameter_is_quick():
    """bool, str, int, float, Path and Enum options (all of this CLI's but the group's own) get
    the quick path, so a valid command line never imports pydantic."""
    left = set()
    for cname, cmd in _commands().items():
        ctx = cmd.context_class(cmd, info_name=cname)
        for p in cmd.get_params(ctx):
            if hasattr(p, "type_descriptor") and not isinstance(
                quick_runtime_param(p.type_descriptor), QuickRuntimeParam
            ):
                left.add((cname, p.name, p.type_descriptor.annotation))
    assert not left, sorted(map(str, left))


def test_other_typer_internals_leave_coercion_to_typer(monkeypatch):
    """The quick path reads typer's private internals; when they differ (here: reading a
    descriptor raises), every parameter keeps typer's own coercion and the command still runs."""
    from typer.testing import CliRunner

    from graphrag_audit.cli import coercion

    def broken(descriptor):
        raise AttributeError("a typer with other internals")

    monkeypatch.setattr(coercion, "quick_runtime_param", broken)
    cmd = _commands()["levels"]
    ctx = cmd.context_class(cmd, info_name="levels")
    params = cmd.get_params(ctx)
    coercion.quicken(params)  # does not raise
    assert not any(isinstance(getattr(p, "_runtime_param", None), QuickRuntimeParam) for p in params)
    result = CliRunner().invoke(app, ["levels", str(SEED), "--tokenizer", "estimate", "-f", "json"])
    assert result.exit_code in (0, 1), result.output
    assert '"schema_version"' in result.output
