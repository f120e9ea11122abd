"""Option values without pydantic: the start-up cost of every command (issue 22).

typer 0.29 converts each command-line value with a pydantic ``TypeAdapter`` built on first use,
and importing pydantic (with pydantic-core and the adapters) takes 0.2-0.4 s: more than the rest
of ``levels --help`` or of the whole seed example's parsing. :func:`quicken` gives each parameter
of a command a :class:`QuickRuntimeParam` first, which converts the values this CLI takes (a
bool, a str, an Enum choice, a Path, a plain decimal int or float within the option's bounds)
exactly as typer's adapter does (the same typer helpers for choices and paths), and hands every
other value, and every value it would refuse, to typer's own pydantic coercion. So a valid command
line never imports pydantic, and every error is typer's (and pydantic's) own, word for word.

:class:`QuickCommand` and :class:`QuickGroup` (mixins for typer's command and group classes) call
:func:`quicken` before parsing. On a typer without ``typer._coercion`` (older releases, which use
click's types and no pydantic) everything here is a no-op.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path

try:  # typer >= 0.29: pydantic coercion, built lazily per parameter
    from dataclasses import dataclass

    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_choice, coerce_cli_path, routes_to_path
except Exception:  # noqa: BLE001  # pragma: no cover - older typer (or other internals): nothing to quicken
    RuntimeParam = None

_SLOW = object()  # "let typer's pydantic coercion decide"
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")


def _in_bounds(v, info) -> bool:
    return (info.min is None or v >= info.min) and (info.max is None or v <= info.max)


def _quick_value(annotation, info, value, param, ctx):
    """``value`` converted as typer's adapter for ``annotation`` converts it, or ``_SLOW``."""
    t = type(value)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return coerce_cli_choice(value, choices=list(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
    if annotation is bool:
        return value if t is bool else _SLOW
    if annotation is str:
        return value if t is str else _SLOW
    if annotation is int:
        if t is str and _INT.fullmatch(value):
            value, t = int(value), int
        return value if t is int and _in_bounds(value, info) else _SLOW
    if annotation is float:
        if t is str and _FLOAT.fullmatch(value):
            value, t = float(value), float
        return value if t is float and _in_bounds(value, info) else _SLOW
    if annotation is Path:  # typer turns a str into a Path with pydantic, which is Path(str)
        if t is str and value and "\x00" not in value:
            value = Path(value)
        if not isinstance(value, Path):
            return _SLOW
        return coerce_cli_path(value, info, path_type=Path, param=param, ctx=ctx)
    return _SLOW  # pragma: no cover - quick_runtime_param admits only the types above


def _define_quick_runtime_param():
    @dataclass(frozen=True)
    class QuickRuntimeParam(RuntimeParam):
        """typer's runtime coercion for one parameter, without pydantic for the values above."""

        descriptor: object = None

        def _coerce_value(self, value, param, ctx):
            try:
                out = _quick_value(self.annotation, self.parameter_info, value, param, ctx)
            except Exception:  # noqa: BLE001 - refused: typer's own coercion raises its own error
                out = _SLOW
            if out is _SLOW:
                return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)
            return out

    return QuickRuntimeParam


if RuntimeParam is not None:
    try:
        QuickRuntimeParam = _define_quick_runtime_param()
    except Exception:  # noqa: BLE001  # pragma: no cover - a typer whose RuntimeParam differs: nothing to quicken
        RuntimeParam = None


def quick_runtime_param(descriptor):
    """A :class:`QuickRuntimeParam` for typer's ``TypeDescriptor``, or None when its annotation
    is not one converted here (a parser, a file, a list, a datetime...)."""
    if RuntimeParam is None:
        return None
    ann, info = descriptor.annotation, descriptor.parameter_info
    if info.parser is not None or descriptor.file_annotation is not None or info.clamp:
        return None
    quick = ann in (bool, str, int, float) or (isinstance(ann, type) and issubclass(ann, Enum))
    if ann is Path and routes_to_path(ann, info) and info.path_type in (None, Path):
        quick = True
    if not quick:
        return None
    return QuickRuntimeParam(parameter_info=info, annotation=ann, descriptor=descriptor)


def quicken(params) -> None:
    """Give each typer parameter in ``params`` that has no coercion yet a quick one.

    This reads typer's private parameter internals; on a typer whose internals differ (any
    error here) it leaves every parameter to typer's own coercion, which is always correct."""
    for p in params:
        try:
            if getattr(p, "_runtime_param", False) is None and hasattr(p, "type_descriptor"):
                rp = quick_runtime_param(p.type_descriptor)
                if rp is not None:
                    p._runtime_param = rp
        except Exception:  # noqa: BLE001 - other internals: typer's own coercion
            return


class QuickParsing:
    """Mixin for a click command class (typer's TyperCommand / TyperGroup): quick coercion for
    its parameters (the help option's too) before its arguments are parsed."""

    def parse_args(self, ctx, args):
        quicken(self.get_params(ctx))
        return super().parse_args(ctx, args)


from typer.core import TyperCommand  # noqa: E402 - after the guarded imports above


class QuickCommand(QuickParsing, TyperCommand):
    """The class of every command (``app.command(name, cls=QuickCommand)``)."""
