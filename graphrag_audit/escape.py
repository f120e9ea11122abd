"""Old import path of the sanitisers: everything here now lives in :mod:`graphrag_audit.sanitise`
(one module per output medium). Kept so that existing imports keep working; new code imports
from ``graphrag_audit.sanitise.<medium>``."""

from graphrag_audit.sanitise.common import (  # noqa: F401
    INVISIBLE,
    LEGACY_COMMAND,
    LEGACY_COMMAND_ESCAPED,
    _cut,
    _unicode_charset,
    current_charset,
    cut_point,
    escape_char,
    fit_charset,
    output_charset,
    plain,
    show,
)
from graphrag_audit.sanitise.github import workflow_data, workflow_log, workflow_property  # noqa: F401
from graphrag_audit.sanitise.json import json_inert  # noqa: F401
from graphrag_audit.sanitise.markdown import markdown_cell  # noqa: F401
