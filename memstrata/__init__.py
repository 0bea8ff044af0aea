"""memstrata: layered long-term memory for AI agents."""

from .aio import AsyncMemory, AsyncMemoryAPI, AsyncMemoryClient
from .api import MemoryAPI
from .client import MemoryClient
from .errors import (
    BackendError,
    BufferUnavailable,
    ConfigurationError,
    ConsolidationIncomplete,
    EmbeddingMismatch,
    InvalidInput,
    LLMOutputError,
    MemoryNotFound,
    MemstrataError,
    NotFound,
    PermissionDenied,
    ProviderError,
    StoreError,
    TruncatedAnswer,
    UsageError,
)
from .filters import SearchFilter
from .layers.lifecycle import ConsolidationOptions
from .layers.semantic import NewMemory, Strategy
from .memory import Memory
from .models import EventType, HistoryEvent, MemoryKind, MemoryRecord, Scope, SearchHit
from .settings import Settings

__version__ = "0.1.0"

__all__ = [
    "AsyncMemory",
    "AsyncMemoryAPI",
    "AsyncMemoryClient",
    "BackendError",
    "BufferUnavailable",
    "ConfigurationError",
    "ConsolidationIncomplete",
    "ConsolidationOptions",
    "EmbeddingMismatch",
    "EventType",
    "HistoryEvent",
    "InvalidInput",
    "LLMOutputError",
    "Memory",
    "MemoryAPI",
    "MemoryClient",
    "MemoryKind",
    "MemoryNotFound",
    "MemoryRecord",
    "MemstrataError",
    "NewMemory",
    "NotFound",
    "PermissionDenied",
    "ProviderError",
    "Scope",
    "SearchFilter",
    "SearchHit",
    "Settings",
    "StoreError",
    "Strategy",
    "TruncatedAnswer",
    "UsageError",
    "__version__",
]
