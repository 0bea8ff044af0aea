"""Turn raw LLM output into validated values: the one place for repair and fallback.

Models wrap JSON in reasoning (``<think>…</think>``), code fences and prose, and small local
models write Python-ish JSON. The pipeline, in order:

1. drop reasoning blocks (and everything before a dangling ``</think>``);
2. prefer the content of a fenced code block when there is one;
3. find the first balanced JSON object or array (strings and brackets tracked);
4. parse it; if that fails, repair what is safe to repair — trailing commas, single-quoted
   strings, Python's ``True``/``False``/``None`` outside strings — and parse again;
5. validate with a pydantic model.

Anything still unusable raises `LLMOutputError` with a message that says why and shows the
start of the output. Nothing here guesses content: a truncated array is an error, not a
shorter array. An answer the provider reports as cut off (`LLMResponse.truncated`) never gets
here: the callers ask through `llm.whole.complete_whole`, which asks once more with a larger
budget and otherwise raises `TruncatedAnswer`, so even a cut-off answer whose JSON happens to
close is not used.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import LLMOutputError

M = TypeVar("M", bound=BaseModel)

_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_DANGLING_CLOSE = re.compile(r"^.*</(?:think|thinking|reasoning)>", re.IGNORECASE | re.DOTALL)
_DANGLING_OPEN = re.compile(r"<(?:think|thinking|reasoning)>.*$", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_-]*[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_WORD = re.compile(r"[A-Za-z_]+")
_TRAILING = re.compile(r"\s*[}\]]")
_SINGLE_QUOTE_ESCAPES = {"'": "'", '"': '\\"'}
_CLOSERS = {"{": "}", "[": "]"}
_JSON_STARTS = frozenset("\"'{[]}-0123456789")
_MAX_STARTS = 50


def preview(text: str, limit: int = 160) -> str:
    """The start of `text` on one line, for error messages."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")


def strip_reasoning(text: str) -> str:
    """Remove ``<think>`` blocks; text after a dangling close tag; a dangling open block."""
    text = _REASONING.sub("", text)
    text = _DANGLING_CLOSE.sub("", text)
    return _DANGLING_OPEN.sub("", text).strip()


def strip_fences(text: str) -> str:
    """The first fenced block that holds JSON-looking content, else `text` unchanged."""
    if "```" not in text:
        return text
    blocks = [block.strip() for block in _FENCE.findall(text)]
    for block in blocks:
        if block[:1] in ("{", "["):
            return block
    return next((block for block in blocks if "{" in block or "[" in block), text)


def _drop_preamble(text: str) -> str:
    """Drop a short first line that only introduces the answer ("Here is the summary:")."""
    first, newline, rest = text.partition("\n")
    if newline and rest.strip() and first.rstrip().endswith(":") and len(first) <= 80:
        return rest.strip()
    return text


def clean_text(text: str) -> str:
    """Plain-text output (a summary): reasoning, fences and an introducing line removed.

    Raises `LLMOutputError` when nothing is left.
    """
    cleaned = strip_reasoning(text)
    if "```" in cleaned:
        blocks = [block.strip() for block in _FENCE.findall(cleaned) if block.strip()]
        cleaned = blocks[0] if blocks else cleaned.replace("```", "")
    cleaned = _drop_preamble(cleaned.strip())
    if not cleaned:
        raise LLMOutputError(f"LLM returned no text (output was {preview(text)})")
    return cleaned


def _scan_string(text: str, start: int) -> int:
    """Index just past the string literal opening at `start` (quote `"` or `'`); -1 if unclosed."""
    quote, index = text[start], start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index + 1
        index += 1
    return -1


def balanced_end(text: str, start: int) -> int:
    """Index just past the bracketed value opening at `start`, or -1 when it never closes."""
    stack: list[str] = []
    index = start
    while index < len(text):
        char = text[index]
        if char in "\"'":
            index = _scan_string(text, index)
            if index < 0:
                return -1
            continue
        if char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif char in "}]":
            if not stack or stack.pop() != char:
                return -1
            if not stack:
                return index + 1
        index += 1
    return -1


def _single_to_double(literal: str) -> str:
    """Re-quote a single-quoted literal (quotes included) as a JSON string literal."""
    out: list[str] = []
    chars = iter(literal[1:-1])
    for char in chars:
        if char == "\\":
            escaped = next(chars, "")
            out.append(_SINGLE_QUOTE_ESCAPES.get(escaped, "\\" + escaped))
        else:
            out.append('\\"' if char == '"' else char)
    return '"' + "".join(out) + '"'


def repair(snippet: str) -> str:
    """Fix what is safe outside strings: single quotes, trailing commas, Python literals."""
    out: list[str] = []
    index = 0
    while index < len(snippet):
        char = snippet[index]
        if char in "\"'":
            end = _scan_string(snippet, index)
            end = len(snippet) if end < 0 else end
            literal = snippet[index:end]
            out.append(_single_to_double(literal) if char == "'" and end > index + 1 else literal)
            index = end
        elif word := _WORD.match(snippet, index):
            out.append(_PY_LITERALS.get(word.group(), word.group()))
            index = word.end()
        else:
            if not (char == "," and _TRAILING.match(snippet, index + 1)):
                out.append(char)
            index += 1
    return "".join(out)


def _loads(snippet: str) -> Any:
    try:
        return json.loads(snippet)
    except json.JSONDecodeError:
        pass
    try:
        return json.loads(repair(snippet))
    except (json.JSONDecodeError, ValueError):
        return _NOT_JSON


_NOT_JSON = object()


def _looks_like_json(text: str, start: int) -> bool:
    """Does the bracket at `start` open JSON (not prose such as "[see below]")?"""
    rest = text[start + 1 :].lstrip()
    return rest[:1] in _JSON_STARTS or rest.startswith(("true", "false", "null"))


def _unclosed(text: str, body: str) -> LLMOutputError:
    if body.rstrip()[-1:] in ("}", "]"):
        reason = "is not valid JSON, even after repair (unbalanced quotes or brackets)"
    else:
        reason = "has JSON that never closes; cut off by max_tokens?"
    return LLMOutputError(f"LLM output {reason} (output was {preview(text)})")


def extract_json(text: str) -> Any:
    """The first JSON object or array in raw LLM output, repaired where safe.

    Raises `LLMOutputError` when there is none, it never closes (truncated), or it cannot be parsed.
    A truncated value is an error even if a complete inner object could be salvaged.
    """
    body = strip_fences(strip_reasoning(text))
    starts = [i for i, char in enumerate(body) if char in _CLOSERS][:_MAX_STARTS]
    if not starts:
        raise LLMOutputError(f"LLM output contains no JSON object or array (output was {preview(text)})")
    for start in starts:
        end = balanced_end(body, start)
        if end < 0 and _looks_like_json(body, start):
            raise _unclosed(text, body)
        value = _loads(body[start:end]) if end > 0 else _NOT_JSON
        if value is not _NOT_JSON:
            return value
    raise LLMOutputError(f"LLM output is not valid JSON, even after repair (output was {preview(text)})")


def describe_validation(error: ValidationError, limit: int = 3) -> str:
    """'facts.0.category: Input should be …; …' for the first few problems."""
    parts = []
    for problem in error.errors()[:limit]:
        where = ".".join(str(p) for p in problem["loc"]) or "value"
        parts.append(f"{where}: {problem['msg']}")
    more = error.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def parse_model(text: str, model: type[M]) -> M:
    """Extract JSON from `text` and validate it as `model`."""
    data = extract_json(text)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise LLMOutputError(f"LLM JSON does not match {model.__name__}: {describe_validation(exc)}") from None


@dataclass(frozen=True, slots=True)
class ParsedItems(Generic[M]):
    """The valid items of a list answer, and why the others were rejected."""

    items: list[M]
    rejected: list[str]


def _item_list(data: Any, key: str) -> list[Any] | None:
    """The list of items in `data`: a bare list, `data[key]`, or a dict's only list value."""
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        return None
    if isinstance(data.get(key), list):
        return list(data[key])
    lists = [value for value in data.values() if isinstance(value, list)]
    return lists[0] if len(lists) == 1 else None


def parse_items(text: str, item_model: type[M], *, key: str) -> ParsedItems[M]:
    """Validate a list answer (``[…]`` or ``{key: […]}``) item by item.

    Invalid items are dropped and described in `rejected`; an answer whose shape is wrong,
    or whose items are all invalid, raises `LLMOutputError`.
    """
    items = _item_list(extract_json(text), key)
    if items is None:
        raise LLMOutputError(f'LLM JSON is neither a list nor {{"{key}": [...]}} (output was {preview(text)})')
    valid: list[M] = []
    rejected: list[str] = []
    for position, item in enumerate(items):
        try:
            valid.append(item_model.model_validate(item))
        except ValidationError as exc:
            rejected.append(f"{key}[{position}]: {describe_validation(exc)}")
    if items and not valid:
        raise LLMOutputError(f"every item of the LLM answer was invalid: {'; '.join(rejected[:3])}")
    return ParsedItems(valid, rejected)


__all__ = [
    "ParsedItems",
    "balanced_end",
    "clean_text",
    "describe_validation",
    "extract_json",
    "parse_items",
    "parse_model",
    "preview",
    "repair",
    "strip_fences",
    "strip_reasoning",
]
