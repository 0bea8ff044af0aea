"""Reconciliation with an LLM configured: `Memory(llm=...)` against a real HTTP server that speaks the
OpenAI protocol and answers with recorded replies (extraction, then one resolution per candidate)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memstrata import Memory
from memstrata.embedders.hashing import HashingEmbedder
from tests.llm.servers import FakeLLMServer, RecordedRequest, client_for, completion

EXTRACTED_GLOBEX = (
    '{"facts": [{"kind": "fact", "category": "identity", "content": "The user works at Globex.", '
    '"subject": "user", "attribute": "employer", "value": "Globex", "polarity": 1}]}'
)
EXTRACTED_BAKING = (
    '{"facts": [{"kind": "preference", "category": "preference", "content": "The user loves baking.", '
    '"subject": "user", "attribute": "likes", "value": "baking", "polarity": 1}]}'
)
# Recorded from a small local model: reasoning first, then Python-ish JSON with a trailing comma.
RESOLVED_SUPERSEDE = (
    "<think>Same job slot, new employer.</think>\n"
    "{'decisions': [{'fact': 0, 'action': 'SUPERSEDE', 'target': 0, 'content': None},]}"
)
RESOLVED_ADD = '```json\n{"decisions": [{"fact": 0, "action": "ADD", "target": null}]}\n```'


def test_memory_with_an_llm_reconciles_through_the_resolution_prompt(
    tmp_path: Path, openai_fake: FakeLLMServer
) -> None:
    llm = client_for(openai_fake)
    with Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder=HashingEmbedder(64), llm=llm) as memory:
        old = memory.add("Alice works at Acme Corp", scope="alice")
        openai_fake.script(completion(EXTRACTED_GLOBEX), completion(RESOLVED_SUPERSEDE))
        result = memory.learn("I no longer work at Acme, I joined Globex", scope="alice")
        assert [op.event.value for op in result.operations] == ["supersede"]
        assert [r.content for r in memory.list(scope="alice")] == ["The user works at Globex."]
        assert [e.event.value for e in memory.history(old.id, scope="alice")] == ["add", "supersede"]

        openai_fake.script(completion(EXTRACTED_BAKING), completion(RESOLVED_ADD))
        memory.learn("I love baking", scope="alice")
        assert sorted(r.content for r in memory.list(scope="alice")) == [
            "The user loves baking.",
            "The user works at Globex.",
        ]
    resolution = [r.json for r in openai_fake.requests if "EXISTING memories" in str(r.json["messages"])]
    assert len(resolution) == 2
    assert "0. Alice works at Acme Corp" in resolution[0]["messages"][-1]["content"]


EXTRACTED_VEGETARIAN = (
    '{"facts": [{"kind": "preference", "category": "preference", "content": "The user is vegetarian and no longer '
    'eats meat.", "subject": "user", "attribute": "diet", "value": "vegetarian", "polarity": 1}]}'
)


def resolved(action: str, target: int) -> str:
    return f'{{"decisions": [{{"fact": 0, "action": "{action}", "target": {target}}}]}}'


def test_a_contradiction_the_llm_names_is_applied_and_an_unrelated_one_refused(
    tmp_path: Path, openai_fake: FakeLLMServer
) -> None:
    with Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder=HashingEmbedder(64)) as offline:
        steak = offline.learn("I love steak.", scope="alice").memories[0]
        offline.learn("I love tea.", scope="alice")
    llm = client_for(openai_fake)
    with Memory(store=f"sqlite:///{tmp_path / 'm.db'}", embedder=HashingEmbedder(64), llm=llm) as memory:

        def delete(content: str) -> Callable[[RecordedRequest], str]:
            def answer(request: RecordedRequest) -> str:
                shown = request.json["messages"][-1]["content"].split("EXISTING memories:\n")[1].split("\n\n")[0]
                [index] = [i for i, line in enumerate(shown.splitlines()) if content in line]
                return resolved("DELETE", index)

            return answer

        openai_fake.script(completion(EXTRACTED_VEGETARIAN), delete("loves tea."))
        refused = memory.learn("I'm vegetarian, I no longer eat meat", scope="alice")
        assert [op.event.value for op in refused.operations] == ["add"]
        assert "refused" in refused.operations[0].reason
        assert len(memory.list(scope="alice")) == 3  # tea kept, and steak too: the model did not name it

        openai_fake.script(completion(EXTRACTED_VEGETARIAN), delete("steak"))
        memory.forget(refused.operations[0].memory.id, scope="alice")
        applied = memory.learn("I'm vegetarian, I no longer eat meat", scope="alice")
        assert [(op.event.value, op.replaced_ids) for op in applied.operations] == [("supersede", (steak.id,))]
        assert sorted(r.content for r in memory.list(scope="alice")) == [
            "The user is vegetarian and no longer eats meat.",
            "The user loves tea.",
        ]
        assert [e.event.value for e in memory.history(steak.id, scope="alice")] == ["add", "supersede"]
