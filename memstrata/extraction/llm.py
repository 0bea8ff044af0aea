"""`LLMExtractor`: candidate memories from an LLM, with one re-ask and a fallback extractor.

Flow of one `extract` call: build the extraction prompt (dated by the messages, never the wall
clock) → ask for JSON (an answer cut off at the token limit is asked again with a larger budget,
then refused: `llm.whole`) → parse and validate. Unusable output gets one re-ask that quotes the
problem. If the answer is still unusable, or the endpoint fails, the failure is counted and the
`fallback` extractor (typically the offline rule extractor) answers instead; with no fallback
the error is raised.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time
from typing import cast

from ..errors import InvalidInput, LLMOutputError, ProviderError
from ..llm.base import ChatMessage, LLMClient
from ..llm.whole import complete_whole
from ..models import MemoryKind
from ..prompts.extract import ExtractedFact, build_extraction_messages, parse_extraction
from ..prompts.parse import ParsedItems
from .base import Candidate, EntityMention, EntityType, Extraction, Extractor, Message, ProfileSlot, extract_reported

log = logging.getLogger(__name__)

_REASK_QUOTE_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class ExtractorStats:
    """Counters of one `LLMExtractor` (a snapshot)."""

    calls: int = 0
    reasks: int = 0
    output_failures: int = 0
    provider_failures: int = 0
    fallbacks: int = 0
    rejected_facts: int = 0

    @property
    def failures(self) -> int:
        return self.output_failures + self.provider_failures


def _event_time(fact: ExtractedFact) -> datetime | None:
    return datetime.combine(fact.event_date, time(), tzinfo=UTC) if fact.event_date else None


def _subject(fact: ExtractedFact, known_name: str | None) -> str:
    return "user" if known_name and fact.subject == known_name.strip().lower() else fact.subject


def to_candidate(fact: ExtractedFact, messages: Sequence[Message], known_name: str | None = None) -> Candidate:
    """The `Candidate` for a validated fact; raises `InvalidInput` if the fact breaks its rules."""
    source = messages[fact.source] if fact.source is not None and 0 <= fact.source < len(messages) else None
    profile = fact.profile
    return Candidate(
        kind=MemoryKind.parse(fact.kind),
        content=fact.content.strip(),
        category=fact.category,
        subject=_subject(fact, known_name),
        attribute=fact.attribute,
        value=fact.value,
        polarity=fact.polarity,
        event_time=_event_time(fact),
        entities=tuple(EntityMention(e.name.strip(), cast(EntityType, e.type)) for e in fact.entities),
        profile=ProfileSlot(profile.category, profile.key, profile.value) if profile else None,
        confidence=fact.confidence,
        source_text=source.content if source else "",
    )


def reask_messages(prompt: Sequence[ChatMessage], answer: str, problem: LLMOutputError) -> list[ChatMessage]:
    """The prompt plus the unusable answer and a request to fix it (pure)."""
    return [
        *prompt,
        ChatMessage("assistant", answer[:_REASK_QUOTE_LIMIT]),
        ChatMessage(
            "user",
            f"That answer could not be used: {problem}\n"
            'Reply again with only the JSON object {"facts": [...]}, following the field rules exactly.',
        ),
    ]


class LLMExtractor:
    """An `Extractor` backed by an `LLMClient`; thread-safe if the client is."""

    def __init__(self, llm: LLMClient, *, fallback: Extractor | None = None, max_tokens: int = 2048) -> None:
        if max_tokens < 1:
            raise InvalidInput(f"max_tokens must be at least 1, got {max_tokens}")
        self.llm = llm
        self.fallback = fallback
        self.max_tokens = max_tokens
        self._stats = ExtractorStats()
        self._lock = threading.Lock()

    @property
    def stats(self) -> ExtractorStats:
        with self._lock:
            return self._stats

    def _count(self, **increments: int) -> None:
        with self._lock:
            current = self._stats
            self._stats = replace(current, **{k: getattr(current, k) + v for k, v in increments.items()})

    name = "llm"

    def extract(self, messages: Sequence[Message], *, known_name: str | None = None) -> list[Candidate]:
        return list(self.extract_reported(messages, known_name=known_name).candidates)

    def extract_reported(self, messages: Sequence[Message], *, known_name: str | None = None) -> Extraction:
        """The candidates, and whether the fallback found them because the LLM failed (and why)."""
        if not messages:
            return Extraction((), "llm")
        today = max(message.at for message in messages).date()
        prompt = build_extraction_messages(messages, today=today, known_name=known_name)
        self._count(calls=1)
        try:
            parsed = self._ask(prompt)
        except LLMOutputError as exc:
            self._count(output_failures=1)
            return self._fall_back(messages, known_name, exc)
        except ProviderError as exc:
            self._count(provider_failures=1)
            return self._fall_back(messages, known_name, exc)
        return Extraction(tuple(self._candidates(parsed, messages, known_name)), "llm")

    def _ask(self, prompt: list[ChatMessage]) -> ParsedItems[ExtractedFact]:
        # a cut-off answer is asked again with a larger budget, then refused (never parsed in part)
        response = complete_whole(self.llm, prompt, max_tokens=self.max_tokens, json_mode=True)
        try:
            return parse_extraction(response.text)
        except LLMOutputError as exc:
            self._count(reasks=1)
            retry = reask_messages(prompt, response.text, exc)
            return parse_extraction(complete_whole(self.llm, retry, max_tokens=self.max_tokens, json_mode=True).text)

    def _fall_back(self, messages: Sequence[Message], known_name: str | None, error: ProviderError) -> Extraction:
        if self.fallback is None:
            raise error
        log.warning("LLM extraction failed, using the fallback extractor: %s", error)
        self._count(fallbacks=1)
        found = extract_reported(self.fallback, messages, known_name=known_name)
        return replace(found, fallback_reason=f"LLM extraction failed: {error}")

    def _candidates(
        self, parsed: ParsedItems[ExtractedFact], messages: Sequence[Message], known_name: str | None
    ) -> list[Candidate]:
        candidates: dict[str, Candidate] = {}
        rejected = len(parsed.rejected)
        for fact in parsed.items:
            try:
                candidate = to_candidate(fact, messages, known_name)
            except InvalidInput:
                rejected += 1
                continue
            candidates.setdefault(candidate.content.casefold(), candidate)
        if rejected:
            self._count(rejected_facts=rejected)
        return list(candidates.values())


__all__ = ["ExtractorStats", "LLMExtractor", "reask_messages", "to_candidate"]
