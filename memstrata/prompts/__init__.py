"""Prompt builders (pure: every dynamic value, today's date included, is an argument) and parsers.

Each module pairs a `build_*_messages` function with the parser of its answer; `parse` is the one
place where raw model output is cleaned, repaired and validated.
"""

from .consolidate import COMPRESSED_PREFIX, build_consolidation_messages, parse_consolidation
from .extract import ExtractedFact, build_extraction_messages, parse_extraction
from .parse import ParsedItems, clean_text, extract_json, parse_items, parse_model
from .resolve import Decision, build_resolution_messages, parse_resolution
from .summarize import build_summary_messages, parse_summary
from .user_context import (
    UserContextUpdate,
    apply_user_context_update,
    build_user_context_messages,
    empty_context,
    parse_user_context_update,
)

__all__ = [
    "COMPRESSED_PREFIX",
    "Decision",
    "ExtractedFact",
    "ParsedItems",
    "UserContextUpdate",
    "apply_user_context_update",
    "build_consolidation_messages",
    "build_extraction_messages",
    "build_resolution_messages",
    "build_summary_messages",
    "build_user_context_messages",
    "clean_text",
    "empty_context",
    "extract_json",
    "parse_consolidation",
    "parse_extraction",
    "parse_items",
    "parse_model",
    "parse_resolution",
    "parse_summary",
    "parse_user_context_update",
]
