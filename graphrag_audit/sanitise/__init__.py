"""Sanitisers: untrusted text made safe for one output medium each (``common.plain`` first, then the
medium's module); ``privacy`` hides paths, ``secrets`` credentials. They import nothing from the package."""
