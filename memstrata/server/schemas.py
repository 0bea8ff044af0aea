"""Request and response models: the wire format of the REST API, kept apart from `memstrata.models`.

Requests refuse unknown fields. Ids a client sees are API ids (user `alice`, agent `support`), never
the tenant-qualified store ids. A request may repeat the user it acts on (`user_id` in the body or in
`filters`, or `metadata.user_id`); every such id is checked by `Principal.scope` and must name the
path's user.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
)

from ..errors import InvalidInput
from ..export_format import ExportDocument, HistoryEventJSON, MemoryJSON
from ..filters import SearchFilter, When
from ..layers.context import PARTS
from ..layers.semantic import Strategy
from ..models import RESERVED_PREFIX, MemoryKind, MemoryRecord
from ..shapes import (
    ConsolidationReportJSON,
    ContextJSON,
    ContextPartJSON,
    EntitiesJSON,
    EntityJSON,
    ErasureReceiptJSON,
    FactsJSON,
    ImportReportJSON,
    LearnResultJSON,
    MemoryListJSON,
    OperationJSON,
    ProcedureJSON,
    ProceduresJSON,
    ProfileFactJSON,
    QueueFailureJSON,
    QueueStatusJSON,
    Rename,
    SearchHitJSON,
    SearchResultJSON,
    TurnJSON,
)
from .shaping import ContentFree
from .tenancy import api_id

MAX_JSON_DEPTH = 16
MAX_PAGE = 500


def _check_json(value: Any, depth: int = 0) -> None:
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("strings must not contain NUL characters")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_json(key, depth + 1)
            _check_json(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_json(item, depth + 1)


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    _check_json(value)
    return value


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


# Request bodies take JSON types strictly: no 0 for false, no "5" for 5, no epoch number for a date.
JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]
Text = Annotated[str, AfterValidator(_no_nul)]
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@+\-]*$"
"""Ids (users, agents, sessions, memories, receipts): 1-128 letters, digits or `_ . : @ + -`, starting
with a letter or digit (`models.validate_id`); stated in the schema so clients and fuzzers know them."""
Id = Annotated[str, Field(min_length=1, max_length=128, pattern=ID_PATTERN)]
PathId = Annotated[str, Path(min_length=1, max_length=128, pattern=ID_PATTERN)]
FactName = Annotated[str, Path(min_length=1, max_length=64, description="1-64 letters, digits, _ . - (case-folded)")]
EntityName = Annotated[str, Path(min_length=1, max_length=120, description="any spelling or alias of the name")]
Unit = Annotated[StrictFloat, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Flag = StrictBool


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def claimed_users(self) -> Iterator[object]:
        """User ids this request names besides the path (checked against the key)."""
        user_id = getattr(self, "user_id", None)
        if user_id is not None:
            yield user_id
        metadata = getattr(self, "metadata", None)
        if isinstance(metadata, dict) and "user_id" in metadata:
            yield metadata["user_id"]


# -- errors ------------------------------------------------------------------
class Problem(BaseModel):
    """An RFC 9457 problem document; every error response has this shape."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    error: str | None = Field(default=None, description="memstrata exception class, when one was raised")
    errors: list[dict[str, Any]] | None = Field(default=None, description="field errors of a 422")


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": description}
    for status, description in {
        400: "Bad request",
        401: "Missing, unknown or revoked API key",
        403: "The key may not touch this user or operation",
        404: "Not found for this user",
        409: "Conflict (e.g. embedding model mismatch)",
        413: "Request body too large",
        422: "Invalid input",
        429: "Rate limit of the key or of a failing source exceeded (see Retry-After)",
        501: "The server is not configured for this",
        502: "An embedding or LLM provider failed",
        503: "The store or buffer is unavailable",
    }.items()
}


# -- memories ----------------------------------------------------------------
def api_ids(tenant: str) -> Rename:
    """How a client of `tenant` reads store ids: API ids, and no user id for a memory shared by every
    user of an agent (its owner is a reserved id)."""

    def api(store_id: str) -> str | None:
        return None if store_id.startswith(RESERVED_PREFIX) else api_id(tenant, store_id)

    return api


def memory_out(record: MemoryRecord, tenant: str) -> MemoryJSON:
    """A memory as a client of `tenant` reads it: the one JSON shape, with API ids."""
    return MemoryJSON.of(record, api_ids(tenant))


MemoryPage = MemoryListJSON
"""A page of memories: the one list shape (`memories`, `next_offset`)."""


class AddMemoryRequest(Request):
    content: Text = Field(min_length=1, max_length=65536)
    kind: MemoryKind = MemoryKind.FACT
    metadata: JsonObject = Field(default_factory=dict)
    importance: Unit = 0.5
    source_ids: list[Id] = Field(default_factory=list, max_length=100)
    expires_at: When | None = None
    pinned: Flag = False
    agent_id: Id | None = None
    session_id: Id | None = None
    user_id: Id | None = Field(default=None, description="optional; must equal the path's user")


class UpdateMemoryRequest(Request):
    content: Text | None = Field(default=None, min_length=1, max_length=65536)
    metadata: JsonObject | None = None
    importance: Unit | None = None
    expires_at: When | None = None
    pinned: Flag | None = None
    user_id: Id | None = Field(default=None, description="optional; must equal the path's user")


class SupersedeRequest(Request):
    content: Text = Field(min_length=1, max_length=65536)
    reason: Text = Field(default="", max_length=1000)


class ForgetResult(ContentFree, BaseModel):
    """The outcome of a forget (REST, MCP and `memstrata forget --json`)."""

    id: str
    forgotten: bool = Field(description="false if there was no such memory")


HistoryEventOut = HistoryEventJSON


# -- search ------------------------------------------------------------------
class SearchFilters(SearchFilter):
    """`SearchFilter` as a request carries it; it may repeat the path's user (checked by the key)."""

    user_id: Id | None = Field(default=None, description="optional; must equal the path's user")

    def claimed_users(self) -> Iterator[object]:
        if self.user_id is not None:
            yield self.user_id
        if "user_id" in self.metadata:
            yield self.metadata["user_id"]

    def search_filter(self) -> SearchFilter:
        """The filter without the claimed user."""
        return SearchFilter.model_validate(self.model_dump(exclude={"user_id"}))


class ListQuery(SearchFilter):
    """The query parameters of a memory listing: a `SearchFilter` and a page."""

    agent_id: Id | None = None
    session_id: Id | None = None
    limit: int = Field(default=50, ge=1, le=MAX_PAGE)
    offset: int = Field(default=0, ge=0, le=10_000_000)

    def search_filter(self) -> SearchFilter:
        return SearchFilter.model_validate(self.model_dump(include=set(SearchFilter.model_fields)))


class SearchRequest(Request):
    query: Text = Field(min_length=1, max_length=65536)
    k: StrictInt = Field(default=10, ge=1, le=100)
    strategy: Strategy = Strategy.HYBRID
    threshold: StrictFloat | None = Field(default=None, allow_inf_nan=False)
    decay_rate: StrictFloat = Field(default=0.01, ge=0.0, lt=1.0)
    filters: SearchFilters = Field(default_factory=SearchFilters)
    agent_id: Id | None = None
    session_id: Id | None = None
    user_id: Id | None = Field(default=None, description="optional; must equal the path's user")

    def claimed_users(self) -> Iterator[object]:
        yield from super().claimed_users()
        yield from self.filters.claimed_users()


SearchHitOut = SearchHitJSON
SearchResponse = SearchResultJSON


# -- profile, entities, procedures -------------------------------------------
FactOut = ProfileFactJSON


class SetFactRequest(Request):
    value: Text = Field(min_length=1, max_length=2000)
    source: Text | None = Field(default=None, max_length=200)


FactsResponse = FactsJSON
EntityOut = EntityJSON
EntitiesResponse = EntitiesJSON


class UpsertEntityRequest(Request):
    type: Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[a-z_]+$")] = "other"
    summary: Text | None = Field(default=None, max_length=1000)
    attributes: JsonObject | None = None
    aliases: list[Annotated[Text, Field(min_length=1, max_length=120)]] = Field(default_factory=list, max_length=20)
    memory_id: Id | None = Field(default=None, description="link this memory to the entity")


class AddProcedureRequest(Request):
    task: Text = Field(min_length=1, max_length=500)
    instruction: Text | None = Field(default=None, max_length=8000)
    example_input: Text | None = Field(default=None, max_length=8000)
    example_output: Text | None = Field(default=None, max_length=8000)
    agent_id: Id | None = None
    agent_wide: Flag = Field(default=False, description="share with every user of the agent (admin key only)")


ProcedureOut = ProcedureJSON
ProceduresResponse = ProceduresJSON


# -- users, keys, health -----------------------------------------------------
class UsersPage(BaseModel):
    items: list[str]
    next_offset: int | None


class WhoAmI(ContentFree, BaseModel):
    tenant: str
    user: str | None = Field(description="the one user this key may touch; null for the tenant's admin key")
    admin: bool
    auth: bool = Field(description="false when the server runs without authentication (development only)")
    key_id: str | None
    role: str = Field(description="admin, user, read-only, ingest-only or privacy")
    permissions: list[str] = Field(description="what this key may do: read, write, export, erase, admin")


class Health(ContentFree, BaseModel):
    status: str
    version: str


# -- learning and the background queue ----------------------------------------
class MessageIn(Request):
    role: Literal["user", "assistant", "system"] = "user"
    content: Text = Field(min_length=1, max_length=65536)
    at: When | None = Field(default=None, description="when it was said (default: now); relative dates use it")
    speaker: Text | None = Field(default=None, max_length=120)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class LearnRequest(Request):
    messages: list[MessageIn] = Field(min_length=1, max_length=200)
    background: Flag = Field(default=False, description="queue the work (202) instead of doing it now")
    agent_id: Id | None = None
    session_id: Id | None = None
    known_name: Text | None = Field(default=None, max_length=120, description="the user's name, if known")
    source_ids: list[Id] = Field(default_factory=list, max_length=100)


OperationOut = OperationJSON


class LearnResponse(LearnResultJSON):
    """`LearnResultJSON`, or with background=true the queued job (no operations yet)."""

    job_id: str | None = Field(default=None, description="the queued job, with background=true")


QueueFailure = QueueFailureJSON
QueueStatusOut = QueueStatusJSON


# -- conversation: sessions, messages, context ---------------------------------
class AddMessagesRequest(Request):
    messages: list[MessageIn] = Field(min_length=1, max_length=200)
    agent_id: Id | None = None


TurnOut = TurnJSON


class SessionOut(BaseModel):
    turns: list[TurnOut] = Field(description="the session's recent turns, oldest first")
    summary: str = Field(description="rolling summary of the older turns")


class EndSessionRequest(Request):
    background: Flag = Field(default=False, description="update the user context on a worker thread (202)")
    agent_id: Id | None = None


class UserContextOut(BaseModel):
    """The user context object: facts, preferences, last_topics, open_items, last_session."""

    model_config = ConfigDict(extra="allow")
    user_id: str


class EndSessionOut(BaseModel):
    status: str = Field(description="'ended', or 'queued' with background=true")
    user_context: UserContextOut | None


class ContextRequest(Request):
    query: Text | None = Field(default=None, max_length=8000, description="what the prompt is about")
    max_tokens: StrictInt = Field(default=2000, ge=1, le=100_000)
    include: list[Literal[PARTS]] | None = Field(default=None, description="parts to assemble (default: all)")  # type: ignore[valid-type]
    agent_id: Id | None = None
    session_id: Id | None = Field(default=None, description="adds the session's summary and recent turns")


ContextPartOut = ContextPartJSON
ContextOut = ContextJSON


# -- lifecycle: erase, export/import, consolidate -------------------------------
class ErasureReceiptOut(ContentFree, ErasureReceiptJSON):
    """`ErasureReceiptJSON`; it holds no stored data, so every key sees it whole."""


class ImportReportOut(ContentFree, ImportReportJSON):
    """`ImportReportJSON`; counts only, so every key sees it whole."""


ConsolidationOut = ConsolidationReportJSON


def parse_export(raw: bytes) -> ExportDocument:
    """An import body: an export document, taken strictly (no number for a date, no "1" for 1)."""
    try:
        return ExportDocument.model_validate_json(raw, strict=True)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'document'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise InvalidInput(f"not a valid memstrata export document: {problems}") from None


IMPORT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ExportDocument"}}},
    }
}
"""OpenAPI of the import body (read raw, so that it can be validated strictly)."""
