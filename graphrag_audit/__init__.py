"""graphrag-audit: what a GraphRAG index's ``community_level`` really means.

``load_index`` reads an index into an :class:`IndexModel`, ``audit`` returns one :class:`AuditReport`,
:mod:`graphrag_audit.render` renders it. The names below are imported on first use (no pandas at import).
"""

__version__ = "0.1.0"

#: public name -> the module that defines it (imported when the name is first used)
_LAZY = {
    "IndexInputError": "graphrag_audit.errors",
    "load_index": "graphrag_audit.io.load",
    "IndexModel": "graphrag_audit.model.index",
    "audit": "graphrag_audit.analysis.audit",
    "AuditOptions": "graphrag_audit.analysis.audit",
    "AuditReport": "graphrag_audit.results",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
