"""graphrag-audit: what a GraphRAG index's ``community_level`` really means.

Library first: ``load_index`` reads an index directory into an :class:`IndexModel`,
``audit`` runs every analysis and returns one :class:`AuditReport`, and the renderers in
:mod:`graphrag_audit.render` turn that report into text, JSON, Markdown or GitHub annotations.
"""

__version__ = "0.1.0"

from graphrag_audit.errors import IndexInputError  # noqa: E402
from graphrag_audit.io.load import load_index  # noqa: E402

__all__ = ["IndexInputError", "load_index", "__version__"]
