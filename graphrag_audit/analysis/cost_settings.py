"""The two knobs of global search's costs, resolved like the dynamic ones (analysis/dynamic.py
``resolve_dynamic_options``): the value given, else the project settings' (when the index was
reached through a settings file; io/settings.py ``read_query_settings`` names the keys per graphrag
version), else graphrag's default (cl100k_base and 12,000 in 1.2.0, 2.7.2 and 3.3.0);
``AuditOptions.costs_from`` records where each came from."""

from __future__ import annotations

import dataclasses

from graphrag_audit.errors import IndexInputError
from graphrag_audit.graphrag.tokens import TOKEN_COUNTER_NAMES
from graphrag_audit.io.settings import read_query_settings
from graphrag_audit.model.index import IndexModel

#: graphrag's defaults (1.2.0 ``ENCODING_MODEL``/``GLOBAL_SEARCH_MAX_TOKENS``; 2.7.2 and 3.3.0
#: ``global_search.max_context_tokens`` 12_000, LiteLLM's cl100k_base for OpenAI models)
COST_DEFAULTS = {"tokenizer": "cl100k_base", "max_context_tokens": 12000}


def resolve_cost_options(options, model: IndexModel):
    """``options`` with ``tokenizer`` and ``max_context_tokens`` set and ``costs_from`` saying,
    per knob, ``"option"``, ``"<settings file> <key>"`` or ``"graphrag default"`` (the file is
    not read with ``costs`` off)."""
    given = {k: getattr(options, k) for k in COST_DEFAULTS}
    from_file = {}
    if model.settings_file is not None and options.costs and any(v is None for v in given.values()):
        from_file = read_query_settings(model.settings_file)
    values, origin = {}, []
    for knob, default in COST_DEFAULTS.items():
        if given[knob] is not None:
            values[knob], src = given[knob], "option"
        elif knob in from_file:
            assert model.settings_file is not None  # from_file is read from it
            value, key = from_file[knob]
            if knob == "tokenizer" and value not in TOKEN_COUNTER_NAMES:
                raise IndexInputError(
                    model.settings_file,
                    f"{key} is {str(value)[:40]!r}, an encoding graphrag-audit "
                    f"does not count with (cl100k_base, o200k_base): pass "
                    f"--tokenizer",
                )
            values[knob], src = value, f"{model.settings_file.name} {key}"
        else:
            values[knob], src = default, "graphrag default"
        origin.append((knob, src))
    return dataclasses.replace(options, **values, costs_from=tuple(origin))
