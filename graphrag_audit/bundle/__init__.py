"""graphrag-audit bundle: a shareable, privacy-safe reproduction of an index (filler text with the
same token counts, pseudonyms for names; see docs/bug-reports.md)."""
