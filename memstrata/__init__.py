"""memstrata: layered long-term memory for AI agents."""

from .aio import AsyncMemory, AsyncMemoryAPI, AsyncMemoryClient
from .api import MemoryAPI
from .buffer import Turn
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
from .export_format import ExportDocument
from .extraction.base import Candidate
from .extraction.resolution import DecisionKind
from .filters import SearchFilter
from .layers.context import Context, ContextPart
from .layers.entities import Entity
from .layers.learning import LearnResult
from .layers.lifecycle import (
    ConsolidationOptions,
    ConsolidationReport,
    ErasureReceipt,
    ImportReport,
    MaintenanceReport,
    SweepReport,
)
from .layers.procedures import Procedure
from .layers.profile import ProfileFact
from .layers.reconcile import Operation
from .layers.semantic import NewMemory, Strategy
from .layers.work_queue import JobStatus, QueueStatus
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
