"""The user's own name resolves to "the user" at write time too: a fact an extractor wrote with the user's
name is stored, found and reconciled like every other fact about the user (`learning._as_owner`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memstrata import Memory
from memstrata.core.retrieval import named_as_user
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.extraction.base import Candidate, Message
from memstrata.models import MemoryKind


class ThirdPerson:
    """An extractor that writes what the user says about themselves with their name, as LLM extractors
    often do ("Maya lives in Porto."), subject the lower-cased name."""

    def extract(self, messages: Sequence[Message], *, known_name: str | None = None) -> list[Candidate]:
        found = []
        for message in messages:
            if message.role == "user" and message.content.startswith("I live in "):
                city = message.content.removeprefix("I live in ").rstrip(".")
                found.append(
                    Candidate(
                        MemoryKind.FACT, f"Maya lives in {city}.", "entity", "maya", attribute="location", value=city
                    )
                )
        return found


def test_named_as_user_reads_the_owners_name_as_the_user_but_keeps_other_people() -> None:
    assert named_as_user("Maya lives in Porto.", ["Maya"]) == "The user lives in Porto."
    assert named_as_user("Maya's mother lives in Montreal.", ["Maya"]) == "The user's mother lives in Montreal."
    assert named_as_user("Maya Chen is a colleague.", ["Maya"]) == "Maya Chen is a colleague."
    assert named_as_user("Sarah lives in Lyon.", ["Maya"]) == "Sarah lives in Lyon."
    assert named_as_user("Maya lives in Porto.", []) == "Maya lives in Porto."


def test_a_fact_written_with_the_users_name_is_stored_about_the_user_and_reconciled(tmp_path: Path) -> None:
    memory = Memory(
        store=f"sqlite:///{tmp_path / 'm.db'}",
        embedder=HashingEmbedder(64),
        extractor=ThirdPerson(),
        track_access=False,
    )
    with memory:
        memory.learn("I live in Porto.", scope="maya", known_name="Maya")
        memory.learn("I live in Lisbon.", scope="maya")  # the profile name is known from now on
        current = [r.content for r in memory.list(scope="maya")]
        assert current == ["The user lives in Lisbon."]  # one slot, about the user: Porto was superseded
        top = memory.search("where does Maya live?", scope="maya", k=1)
        assert [h.memory.content for h in top] == ["The user lives in Lisbon."]
