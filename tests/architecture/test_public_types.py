"""The public surface: `memstrata.__all__` is pinned, and every type a `Memory` method returns (its
return annotation, through lists, unions and futures) is exported from `memstrata`."""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any

import memstrata
from memstrata import Memory

EXPORTED = [
    "AsyncMemory",
    "AsyncMemoryAPI",
    "AsyncMemoryClient",
    "BackendError",
    "BufferUnavailable",
    "Candidate",
    "ConfigurationError",
    "ConsolidationIncomplete",
    "ConsolidationOptions",
    "ConsolidationReport",
    "Context",
    "ContextPart",
    "DecisionKind",
    "EmbeddingMismatch",
    "Entity",
    "ErasureReceipt",
    "EventType",
    "ExportDocument",
    "HistoryEvent",
    "ImportReport",
    "InvalidInput",
    "JobStatus",
    "LLMOutputError",
    "LearnResult",
    "MaintenanceReport",
    "Memory",
    "MemoryAPI",
    "MemoryClient",
    "MemoryKind",
    "MemoryNotFound",
    "MemoryRecord",
    "MemstrataError",
    "NewMemory",
    "NotFound",
    "Operation",
    "PermissionDenied",
    "Procedure",
    "ProfileFact",
    "ProviderError",
    "QueueStatus",
    "Scope",
    "SearchFilter",
    "SearchHit",
    "Settings",
    "StoreError",
    "Strategy",
    "SweepReport",
    "TruncatedAnswer",
    "Turn",
    "UsageError",
    "__version__",
]

UNTYPED_RESULTS = {"end_session", "user_context"}
"""Methods that still answer a plain dict: the user context object, whose keys are open-ended (it
grows with the conversation layer). Listed so that no new method joins them unnoticed."""


def test_all_is_pinned_and_sorted() -> None:
    assert memstrata.__all__ == EXPORTED == sorted(EXPORTED)
    assert all(hasattr(memstrata, name) for name in EXPORTED)


def _classes(annotation: Any) -> set[type]:
    """The classes an annotation names (inside list[...], X | Y, Future[...], ...)."""
    found: set[type] = set()
    origin = typing.get_origin(annotation)
    if origin is None:
        if isinstance(annotation, type):
            found.add(annotation)
        return found
    if origin not in (typing.Union, types.UnionType, typing.Literal) and isinstance(origin, type):
        found.add(origin)
    for arg in typing.get_args(annotation):
        found |= _classes(arg)
    return found


def _public_methods() -> dict[str, Any]:
    return {
        name: member
        for name, member in inspect.getmembers(Memory, callable)
        if not name.startswith("_") and not isinstance(inspect.getattr_static(Memory, name), property)
    }


def test_every_returned_type_is_exported() -> None:
    missing: dict[str, list[str]] = {}
    for name, method in _public_methods().items():
        for cls in _classes(typing.get_type_hints(method)["return"]):
            if cls.__module__.split(".")[0] != "memstrata":
                continue
            if getattr(memstrata, cls.__name__, None) is not cls or cls.__name__ not in memstrata.__all__:
                missing.setdefault(name, []).append(f"{cls.__module__}.{cls.__qualname__}")
    assert missing == {}


def test_results_are_typed_objects_not_dicts() -> None:
    answering_dicts = {
        name for name, method in _public_methods().items() if dict in _classes(typing.get_type_hints(method)["return"])
    }
    assert answering_dicts == UNTYPED_RESULTS
