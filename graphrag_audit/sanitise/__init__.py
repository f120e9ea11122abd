"""Sanitisers: untrusted text (titles, report text, paths, messages) made safe for one output
medium each (:mod:`.common`'s :func:`~.common.plain` first, then the medium's module: terminal,
markdown, html, graph, github, json; :mod:`.privacy` hides paths, :mod:`.secrets` credentials).
Every renderer escapes through these; they import nothing from the rest of the package.
"""
