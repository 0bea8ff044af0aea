"""Export keeps the keyword context of episodes: after an import, keyword search finds the same hits
with the same scores (issue 15 finding 12)."""

from __future__ import annotations

from memstrata.models import Scope
from tests.security.conftest import Backend


def test_keyword_search_is_the_same_after_export_and_import(backend: Backend) -> None:
    with backend.memory() as memory:
        scope = Scope("acme:src", session_id="s1")
        memory.add_message("user", "We should plan the trip to Kyoto in April.", scope=scope)
        memory.add_message("assistant", "Sounds good, cherry blossoms then.", scope=scope)
        memory.add_message("user", "Book the ryokan near the river.", scope=scope)
        document = memory.export_user(scope="acme:src")
        assert any(m.context for m in document.memories)
        memory.import_user(document.to_json(), scope="acme:dst")

        def hits(user: str) -> list[tuple[str, float]]:
            found = memory.search("Kyoto trip ryokan", scope=user, strategy="keyword", k=10)
            return sorted((h.memory.content, round(h.score, 6)) for h in found)

        assert hits("acme:dst") == hits("acme:src") != []
