"""Export documents of version 1 (memories without their `user_id`) still import, exactly as version 2."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memstrata.export_format import VERSION
from tests.lifecycle.test_portability import USER, populate


def as_version_1(document: dict[str, Any]) -> dict[str, Any]:
    """What memstrata wrote before memories had the one JSON shape: no `user_id` on a memory."""
    memories = [{k: v for k, v in m.items() if k != "user_id"} for m in document["memories"]]
    return document | {"version": 1, "memories": memories}


def test_a_version_1_document_imports_like_its_version_2_twin(make_memory: Callable[..., Any]) -> None:
    origin = make_memory("origin")
    populate(origin)
    current = origin.export_user(scope=USER).model_dump(mode="json")
    assert current["version"] == VERSION == 2
    assert {m["user_id"] for m in current["memories"]} == {USER}
    old, new = make_memory("old"), make_memory("new")
    old_report = old.import_user(as_version_1(current))
    new_report = new.import_user(current)
    assert old_report.memories_written == new_report.memories_written == len(current["memories"])
    same = {"memories", "history"}  # items are stamped by the importing store
    assert old.export_user(scope=USER).model_dump(mode="json", include=same) == new.export_user(scope=USER).model_dump(
        mode="json", include=same
    )
    assert old.import_user(as_version_1(current)).memories_written == 0  # idempotent across versions too


def test_a_version_2_memory_goes_to_the_import_target_whatever_user_it_names(make_memory: Callable[..., Any]) -> None:
    origin = make_memory("origin")
    populate(origin)
    document = origin.export_user(scope=USER)
    target = make_memory("target")
    target.import_user(document, scope="alice2")
    moved = target.export_user(scope="alice2").model_dump(mode="json")["memories"]
    assert moved and {m["user_id"] for m in moved} == {"alice2"}
    assert target.export_user(scope=USER).counts["memories"] == 0
