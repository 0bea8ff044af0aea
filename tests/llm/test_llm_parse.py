"""Cleaning, repairing and validating raw LLM output (memstrata.prompts.parse)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from memstrata.errors import LLMOutputError
from memstrata.prompts.parse import (
    balanced_end,
    clean_text,
    extract_json,
    parse_items,
    parse_model,
    repair,
    strip_fences,
    strip_reasoning,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param('{"a": 1}', {"a": 1}, id="plain-object"),
        pytest.param("[1, 2]", [1, 2], id="plain-array"),
        pytest.param('<think>maybe {"a": 0}?</think>\n{"a": 1}', {"a": 1}, id="think-block"),
        pytest.param('<THINKING>x</THINKING>{"a": 1}', {"a": 1}, id="thinking-block-any-case"),
        pytest.param('reasoning that lost its opening tag {"a": 0}</think>{"a": 1}', {"a": 1}, id="dangling-close"),
        pytest.param('```json\n{"a": 1}\n```', {"a": 1}, id="json-fence"),
        pytest.param('```\n[{"a": 1}]\n```', [{"a": 1}], id="bare-fence"),
        pytest.param('Sure! Here it is:\n```json\n{"a": 1}\n```\nHope that helps.', {"a": 1}, id="prose-around-fence"),
        pytest.param('```python\nprint(1)\n```\n```json\n{"a": 1}\n```', {"a": 1}, id="second-fence-has-json"),
        pytest.param('Here is the JSON: {"a": 1} -- done', {"a": 1}, id="leading-and-trailing-prose"),
        pytest.param('As requested [see below]: {"a": [1, 2]}', {"a": [1, 2]}, id="bracketed-prose-skipped"),
        pytest.param('{"a": 1} and then {"b": 2}', {"a": 1}, id="first-object-wins"),
        pytest.param("I'll list [the user's facts]: {\"a\": 1}", {"a": 1}, id="apostrophe-in-prose"),
        pytest.param('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}, id="trailing-commas"),
        pytest.param("{'a': 'x', 'b': ['y']}", {"a": "x", "b": ["y"]}, id="single-quotes"),
        pytest.param("{'note': 'it\\'s fine'}", {"note": "it's fine"}, id="escaped-apostrophe"),
        pytest.param("{'quote': 'say \"hi\"'}", {"quote": 'say "hi"'}, id="double-quote-inside-single"),
        pytest.param('{"a": True, "b": None, "c": False}', {"a": True, "b": None, "c": False}, id="python-literals"),
        pytest.param('{"text": "a, ]", "n": 1,}', {"text": "a, ]", "n": 1}, id="comma-inside-string-kept"),
        pytest.param(
            '{"text": "True story", "ok": True}',
            {"text": "True story", "ok": True},
            id="literal-in-string-kept",
        ),
        pytest.param('{"t": "brace } in string"}', {"t": "brace } in string"}, id="brace-inside-string"),
        pytest.param('{"t": "it\'s"}', {"t": "it's"}, id="apostrophe-inside-double-quotes"),
    ],
)
def test_extract_json(raw, expected):
    assert extract_json(raw) == expected


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param("I could not find anything to remember.", "no JSON", id="no-json"),
        pytest.param("", "no JSON", id="empty"),
        pytest.param('{"facts": [{"a": 1}, {"b"', "never closes", id="truncated-not-salvaged"),
        pytest.param("[1, 2", "never closes", id="truncated-array"),
        pytest.param('<think>{"a": 1}', "no JSON", id="only-unfinished-reasoning"),
        pytest.param('{"a": undefined}', "not valid JSON", id="invalid-even-after-repair"),
        pytest.param("{'note': 'user's dog'}", "not valid JSON", id="ambiguous-apostrophe-not-guessed"),
    ],
)
def test_unusable_output_raises_clear_error(raw, problem):
    with pytest.raises(LLMOutputError, match=problem) as caught:
        extract_json(raw)
    assert "output was" in str(caught.value)


def test_strip_reasoning_keeps_the_answer():
    assert strip_reasoning("<think>a\nb</think>\n\nanswer") == "answer"
    assert strip_reasoning("plain") == "plain"


def test_strip_fences_without_fences_is_identity():
    assert strip_fences('{"a": 1}') == '{"a": 1}'


def test_balanced_end_tracks_strings_and_nesting():
    text = 'x {"a": ["}", {"b": 1}]} tail'
    start = text.index("{")
    assert text[start : balanced_end(text, start)] == '{"a": ["}", {"b": 1}]}'
    assert balanced_end('{"a": [1}', 0) == -1


def test_repair_only_touches_what_is_outside_strings():
    assert repair("{'a': 'b', 'c': None,}") == '{"a": "b", "c": null}'
    assert repair('{"x": "None, True,]"}') == '{"x": "None, True,]"}'


class Pair(BaseModel):
    name: str
    count: int


def test_parse_model_validates():
    assert parse_model('```json\n{"name": "a", "count": "3"}\n```', Pair) == Pair(name="a", count=3)


def test_parse_model_explains_mismatch():
    with pytest.raises(LLMOutputError, match=r"does not match Pair: count: .*integer"):
        parse_model('{"name": "a", "count": "many"}', Pair)


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param('[{"name": "a", "count": 1}]', id="bare-list"),
        pytest.param('{"pairs": [{"name": "a", "count": 1}]}', id="under-key"),
        pytest.param('{"results": [{"name": "a", "count": 1}]}', id="only-list-under-other-key"),
    ],
)
def test_parse_items_accepts_list_shapes(raw):
    parsed = parse_items(raw, Pair, key="pairs")
    assert parsed.items == [Pair(name="a", count=1)]
    assert parsed.rejected == []


def test_parse_items_drops_invalid_items_and_says_why():
    parsed = parse_items('{"pairs": [{"name": "a", "count": 1}, {"name": "b"}]}', Pair, key="pairs")
    assert [pair.name for pair in parsed.items] == ["a"]
    assert parsed.rejected == ["pairs[1]: count: Field required"]


def test_parse_items_empty_list_is_valid():
    assert parse_items('{"pairs": []}', Pair, key="pairs").items == []


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param('{"pairs": [{"x": 1}, {"y": 2}]}', "every item", id="all-invalid"),
        pytest.param('{"a": [1], "b": [2]}', "neither a list", id="ambiguous-object"),
        pytest.param('"just a string"', "no JSON", id="scalar"),
    ],
)
def test_parse_items_rejects_unusable_shapes(raw, problem):
    with pytest.raises(LLMOutputError, match=problem):
        parse_items(raw, Pair, key="pairs")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("  Alice moved to Berlin.  ", "Alice moved to Berlin.", id="trimmed"),
        pytest.param("<think>hmm</think>Alice moved.", "Alice moved.", id="reasoning-removed"),
        pytest.param("Here is the summary:\nAlice moved.", "Alice moved.", id="preamble-removed"),
        pytest.param("```\nAlice moved.\n```", "Alice moved.", id="fence-removed"),
        pytest.param("Note: Alice moved.", "Note: Alice moved.", id="colon-inside-line-kept"),
    ],
)
def test_clean_text(raw, expected):
    assert clean_text(raw) == expected


def test_clean_text_refuses_empty_output():
    with pytest.raises(LLMOutputError, match="no text"):
        clean_text("<think>only thoughts</think>  ")
