"""Arrow ``dictionary_encode`` of a long string column on two cores, with the very result of one
call (same dictionary, same indices).

The membership keys of a deep index (``entity_ids``: 23 M items at 1 M entities) and the node
titles of a graphrag 1.x index (7 M) are hashed once each at load; one ``dictionary_encode`` call
runs on one core while the other often waits. :func:`dictionary_encode_split` encodes the two
halves at once (arrow hashes without the GIL), then encodes the two halves' dictionaries
together and renumbers the second half's indices through that joint encoding.

Why the result is the single call's: ``dictionary_encode`` numbers the distinct values in order
of first appearance. The first half's dictionary is its distinct values in that order, so in the
joint encoding (first half's dictionary, then the second's) they keep their numbers; the second
half's values that are new come after, in their order of first appearance in the second half,
which is their order of first appearance in the whole column. Nulls stay null indices (arrow's
default ``null_encoding="mask"``), never a dictionary entry.

The halves cost more CPU than one call (each half's hash table holds nearly every distinct key;
about +15% at 1M deep-narrow: 6.1-6.2 s -> 7.0-7.8 s CPU for the whole load), so the split only
pays when a core is free: it is skipped when the 1-minute load average says the cores are busy
(:func:`_cores_free`), and the result is the same either way.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc

#: columns shorter than this are encoded in one call (a thread costs more than it saves)
SPLIT_MIN_ITEMS = 1 << 20
#: skip the split when the cores look busy (tests turn this off to split whatever the load)
CHECK_LOAD = True


def _cores_free() -> bool:
    """Whether a second core is likely free: the 1-minute load average is below the number of
    CPUs less a half (on 2 cores: below 1.5). True where the load average is unknown."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return True
    return load < (os.cpu_count() or 1) - 0.5


def _one(items: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    """``pc.dictionary_encode(items)`` as one array (the chunks of a chunked result share one
    dictionary, as in ``model.keys.dictionary_keys``)."""
    enc = pc.dictionary_encode(items)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks() if enc.num_chunks else pa.array([], pa.dictionary(pa.int32(), items.type))
    return enc


def dictionary_encode_split(items: pa.Array | pa.ChunkedArray, min_items: int | None = None) -> pa.DictionaryArray:
    """``pc.dictionary_encode(items)`` (chunks combined): the same dictionary and indices,
    computed as two halves on two threads when ``items`` has at least ``min_items`` values
    (default :data:`SPLIT_MIN_ITEMS`)."""
    n = len(items)
    if n < max(SPLIT_MIN_ITEMS if min_items is None else min_items, 2):
        return _one(items)
    if min_items is None and CHECK_LOAD and not _cores_free():
        return _one(items)
    half = n // 2
    first, second = items.slice(0, half), items.slice(half)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphrag-audit-encode") as pool:
        pending = pool.submit(_one, second)
        a = _one(first)
        b = pending.result()
    joint = _one(pa.chunked_array([a.dictionary, b.dictionary], type=a.dictionary.type))
    # the first half's dictionary keeps its numbers (0..len-1); the second half's are renumbered
    renumber = joint.indices.slice(len(a.dictionary))
    b_indices = pc.take(renumber, b.indices)
    indices = pa.concat_arrays([a.indices, b_indices.cast(a.indices.type)])
    return pa.DictionaryArray.from_arrays(indices, joint.dictionary)
