"""Sanitisers: untrusted text (titles, report text, paths, messages) made safe for one output
medium each. Every renderer escapes through these and nothing else.

* :mod:`.common`: the convention every medium starts from (:func:`~.common.plain`: one line,
  invisible and control characters as escapes, the output charset, cutting with '…').
* :mod:`.terminal`: rich/terminal text and CI logs; :func:`~.terminal.visible` for error messages.
* :mod:`.markdown`: GitHub-flavoured Markdown cells and paragraphs.
* :mod:`.html`: HTML text and quoted attributes (the HTML report).
* :mod:`.graph`: Mermaid labels, Graphviz DOT strings, GraphML (XML) text.
* :mod:`.github`: GitHub Actions workflow commands and plain log lines.
* :mod:`.json`: JSON text a CI log may print.
* :mod:`.privacy`: what a shareable report hides (absolute paths), before its medium escapes it.

The sanitisers import nothing from the rest of the package (only each other), so the lowest
layer (``errors``) can use them.
"""
