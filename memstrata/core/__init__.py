"""Pure logic (no I/O): text processing, scoring, fusion, dedupe decisions."""
