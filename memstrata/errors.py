"""The one exception hierarchy of memstrata.

Every deliberate error raised by the library derives from `MemstrataError`.
Edges (REST, CLI, MCP) translate this tree in one table each.

    MemstrataError
    ├── UsageError                  you called it wrong; retrying the same call fails again
    │   ├── InvalidInput            bad text, scope id, filter, parameter value
    │   ├── NotFound                an id that does not exist for this user
    │   │   └── MemoryNotFound
    │   ├── ConfigurationError      a setting or URL that cannot be used
    │   ├── EmbeddingMismatch       the store was built with another embedding model/dimension
    │   ├── PermissionDenied        an API key may not touch this user / operation
    │   └── UserErased              the user was erased while this work was in flight; nothing written
    └── BackendError                a store, buffer or provider failed; the call may succeed later
        ├── StoreError              the database failed (locked, corrupt, unreachable)
        ├── BufferUnavailable       Redis or another buffer failed
        ├── ProviderError           an embedding or LLM endpoint failed
        │   └── LLMOutputError      the model answered, but not with anything usable
        │       └── TruncatedAnswer the answer was cut off at its token limit, even with a larger budget
        └── ConsolidationIncomplete a consolidation stopped at a failing group; the groups before it are done
"""

from __future__ import annotations


class MemstrataError(Exception):
    """Base class of every error memstrata raises on purpose."""


class UsageError(MemstrataError):
    """The caller asked for something that cannot be done as asked."""


class InvalidInput(UsageError):
    """An argument value is invalid (empty text, bad scope id, bad filter...)."""


class NotFound(UsageError):
    """The requested object does not exist (for this user)."""


class MemoryNotFound(NotFound):
    def __init__(self, memory_id: str) -> None:
        super().__init__(f"memory {memory_id!r} not found")
        self.memory_id = memory_id


class ConfigurationError(UsageError):
    """A setting, URL or optional dependency is missing or unusable."""


class EmbeddingMismatch(UsageError):
    """The store holds vectors from another embedding model or dimension."""


class PermissionDenied(UsageError):
    """The caller's credentials do not allow this operation."""


class UserErased(UsageError):
    """The user was erased after this work started (a queued job, a background session end, a slow
    request): the erasure is a fence, so the write was refused and nothing of it was stored."""


class BackendError(MemstrataError):
    """A backend (database, cache, remote provider) failed."""


class StoreError(BackendError):
    """The storage backend failed."""


class BufferUnavailable(BackendError):
    """The conversation buffer backend (e.g. Redis) failed."""


class ProviderError(BackendError):
    """A remote embedding or LLM provider failed."""


class LLMOutputError(ProviderError):
    """The LLM answered with output that could not be parsed or validated."""


class TruncatedAnswer(LLMOutputError):
    """The LLM's answer stopped at its token limit (OpenAI-compatible `finish_reason: "length"`,
    Anthropic `stop_reason: "max_tokens"`), also when asked once more with a larger budget
    (`memstrata.llm.whole`). Nothing of a cut-off answer is used: a partial summary or a partial
    list of facts would be stored as if it were whole."""


class ConsolidationIncomplete(BackendError):
    """A consolidation run stopped at a group that failed (the LLM endpoint, the embedder or the
    store). Each group is one transaction, so the groups compressed before it are whole and stay
    compressed, and the failing group and those after it are unchanged (their originals current).
    The message says how many groups were compressed and which one failed; `report` (when raised by
    the library) is the `ConsolidationReport` of what was done, its `failed` naming the group.
    Running the consolidation again continues with the groups left."""

    def __init__(self, message: str, *, report: object = None) -> None:
        super().__init__(message)
        self.report = report


__all__ = [
    "BackendError",
    "BufferUnavailable",
    "ConfigurationError",
    "ConsolidationIncomplete",
    "EmbeddingMismatch",
    "InvalidInput",
    "LLMOutputError",
    "MemoryNotFound",
    "MemstrataError",
    "NotFound",
    "PermissionDenied",
    "ProviderError",
    "StoreError",
    "TruncatedAnswer",
    "UsageError",
    "UserErased",
]
