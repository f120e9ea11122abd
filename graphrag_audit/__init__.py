"""graphrag-audit: what a GraphRAG index's ``community_level`` really means.

Library first: ``load_index`` reads an index directory into an :class:`IndexModel`,
``audit`` runs every analysis and returns one :class:`AuditReport`, and the renderers in
:mod:`graphrag_audit.render` turn that report into text, JSON, Markdown or GitHub annotations.

Importing the package is cheap (no pandas, pyarrow or numpy): the names below are imported on
first use.
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
