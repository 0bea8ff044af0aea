"""Can this value be stored and read back by every backend? A pure check, run before any write.

Text that one backend accepts and another cannot read back poisons a user: SQLite stores a lone
surrogate ("\\ud800", valid in JSON escapes, invalid in UTF-8) and every later read of the user fails
to encode it; PostgreSQL refuses NUL characters in text and jsonb. So every string, key and number
inside what is written is checked, iteratively (a 5,000-deep document must not exhaust the Python
stack), and the first problem raises `InvalidInput` naming the field by its path ("metadata.a.b").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidInput

MAX_DEPTH = 32
"""Nesting deeper than this in a JSON value (metadata, an item) is refused."""
MAX_JSON_BYTES = 1024 * 1024
"""A JSON value (metadata, an item) larger than this, counting its strings' UTF-8 bytes, is refused."""
MAX_NODES = 100_000
"""Keys, values and list elements in one JSON value."""


def text_problem(text: str) -> str | None:
    """What makes `text` unstorable (a NUL, a lone surrogate), or None."""
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"contains a lone surrogate (U+{ord(text[exc.start]):04X}), which is not valid Unicode text"
    return None


def check_text(value: object, field: str) -> None:
    """Raise `InvalidInput` when `value` is a string that cannot be stored (None and non-strings pass)."""
    if isinstance(value, str):
        problem = text_problem(value)
        if problem is not None:
            raise InvalidInput(f"{field} {problem}")


def check_json(value: object, field: str) -> None:
    """Raise `InvalidInput` naming the path of the first part of `value` that is not storable JSON:
    a string with NUL or a lone surrogate, a non-string key, a non-finite number, an unsupported type,
    nesting deeper than MAX_DEPTH, or more than MAX_JSON_BYTES / MAX_NODES in all."""
    if not value and type(value) in (dict, list, tuple):  # most metadata and event details: nothing inside
        return
    stack: list[tuple[object, str, int]] = [(value, field, 0)]
    size = nodes = 0
    while stack:
        item, path, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH or nodes > MAX_NODES:
            what = f"nests deeper than {MAX_DEPTH} levels" if depth > MAX_DEPTH else f"has over {MAX_NODES} values"
            raise InvalidInput(f"{field} {what} (at {path})")
        size += _scalar_size(item, path)
        if size > MAX_JSON_BYTES:
            raise InvalidInput(f"{field} is larger than {MAX_JSON_BYTES} bytes")
        if isinstance(item, Mapping):
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise InvalidInput(f"{path} has a key that is not a string: {type(key).__name__}")
                check_text(key, f"a key of {path}")
                size += len(key)
                stack.append((inner, f"{path}.{key}", depth + 1))
        elif isinstance(item, list | tuple):
            stack.extend((inner, f"{path}[{i}]", depth + 1) for i, inner in enumerate(item))


def _scalar_size(item: object, path: str) -> int:
    """The stored size of a scalar (0 for containers); raise for what JSON cannot hold."""
    if isinstance(item, str):
        check_text(item, path)
        return len(item.encode("utf-8"))
    if isinstance(item, float) and not math.isfinite(item):
        raise InvalidInput(f"{path} is {item}, which JSON cannot hold")
    if item is None or isinstance(item, bool | int | float | Mapping | list | tuple):
        return 8
    raise InvalidInput(f"{path} has a value of type {type(item).__name__}, which JSON cannot hold")


def check_all_text(values: Mapping[str, Any]) -> None:
    """`check_text` on each named value (field name -> value)."""
    for field, value in values.items():
        check_text(value, field)
