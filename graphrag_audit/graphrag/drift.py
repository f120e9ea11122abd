"""What graphrag's DRIFT search reads at each ``community_level``. No graphrag import.

Sources, the same at v1.2.0, v2.7.2 and v3.3.0 unless named:

- ``api/query.py`` ``drift_search``: ``read_indexer_reports(community_reports, nodes | communities,
  community_level)`` without dynamic selection (the global-search selection,
  :mod:`graphrag_audit.graphrag.selection`: ``v1``, rolled up, in 1.x; ``v2``, every report <= N, since
  2.0), then ``read_indexer_report_embeddings`` (:mod:`graphrag_audit.io.vector_store`).
- ``query/structured_search/drift_search/drift_context.py`` ``build_context``: the primer ranks that whole
  pool by cosine similarity to the query and takes ``report_df.nlargest(drift_k_followups, ...)``.
- ``query/structured_search/drift_search/search.py`` ``init_local_search``: the follow-ups run local
  search (:mod:`graphrag_audit.graphrag.local`) with ``community_prop = local_search_community_prop``,
  ``top_k_mapped_entities = local_search_top_k_mapped_entities`` and the budget
  ``local_search_max_data_tokens`` (``max_tokens`` in 1.x, ``max_context_tokens`` since 2.0): the
  step's report budget is ``local_budget(local_search_max_data_tokens, local_search_community_prop)``.
- Defaults: ``config/defaults.py`` ``DRIFT_SEARCH_K_FOLLOW_UPS``, ``DRIFT_LOCAL_SEARCH_COMMUNITY_PROP``,
  ``DRIFT_LOCAL_SEARCH_TOP_K_MAPPED_ENTITIES``, ``DRIFT_LOCAL_SEARCH_MAX_TOKENS`` @v1.2.0 (read by
  ``config/create_graphrag_config.py``, where a 0 reads as the default), ``DriftSearchDefaults`` @v2.7.2
  and @v3.3.0; the settings keys are the ``drift_search`` section's (``config/models/drift_search_config.py``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

DEFAULT_K_FOLLOWUPS = 20
DEFAULT_COMMUNITY_PROP = 0.1
DEFAULT_MAX_DATA_TOKENS = 12_000
DEFAULT_TOP_K = 10


def pool_by_level(levels: np.ndarray, rows: np.ndarray) -> dict[str, int]:
    """{"<level>": count} of the primer's pool: the report ``rows`` (a selection) by their ``levels``."""
    counts = Counter(levels[rows].tolist())
    return {str(lv): counts[lv] for lv in sorted(counts)}
