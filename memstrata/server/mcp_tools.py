"""The MCP tools: one plain function per operation a user-scoped key may do, written for a model to read.

Each tool takes the `Binding` of the call (memory, user scope, tenant) first; the MCP server
(`memstrata.server.mcp`) replaces that parameter by the request's context, resolves the binding and
registers the tool with its `ToolSpec` annotations. Parameters carry descriptions, enums and bounds in
their JSON schema; results are the REST API's response models (`memstrata.server.schemas`), so an MCP
client receives the same shapes as a REST client, as structured content.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from ..errors import InvalidInput
from ..export_format import ExportDocument, MemoryJSON
from ..filters import SearchFilter
from ..layers.context import PARTS
from ..layers.semantic import Strategy
from ..memory import Memory
from ..models import MemoryKind, Scope, validate_id
from ..shapes import LearnResultJSON, MemoryListJSON, SearchHitJSON, SearchResultJSON
from .auth import Principal
from .roles import Permission
from .schemas import (
    ContextOut,
    EntitiesResponse,
    EntityOut,
    FactOut,
    FactsResponse,
    ForgetResult,
    HistoryEventOut,
    MessageIn,
    ProcedureOut,
    ProceduresResponse,
    SessionOut,
    TurnOut,
    UserContextOut,
    api_ids,
    memory_out,
)
from .shaping import ContentFree


@dataclass(frozen=True, slots=True)
class Binding:
    """What one tool call acts on: the user (and agent) come from configuration or the API key."""

    memory: Memory
    scope: Scope
    tenant: str
    principal: Principal
    user: str

    def session(self, session_id: str) -> Scope:
        validate_id(session_id, "session_id")
        return dataclasses.replace(self.scope, session_id=session_id)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool and its MCP annotations (hints to the client: read-only, destructive, idempotent)."""

    fn: Callable[..., BaseModel]
    title: str
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    needs: Permission | None = None
    """The permission a call needs (checked by the one access rule); default READ or WRITE by `read_only`."""

    @property
    def permission(self) -> Permission:
        return self.needs or (Permission.READ if self.read_only else Permission.WRITE)


# -- parameter types (their descriptions and bounds become the JSON schema) --------
MemoryId = Annotated[str, Field(min_length=1, max_length=128, description="a memory id from an earlier result")]
SessionId = Annotated[
    str, Field(min_length=1, max_length=128, description="the conversation's id, chosen by you and kept stable")
]
Kind = Annotated[
    MemoryKind,
    Field(
        description="fact (true about the user), preference, event (dated), note, task (open item), "
        "episode (a conversation turn), summary, procedure"
    ),
]
Metadata = Annotated[dict[str, Any] | None, Field(description="JSON object stored with the memory (e.g. source, tags)")]
Filters = Annotated[
    SearchFilter | None,
    Field(description="which memories (default: every kind, current ones; as_of: what was true at that time)"),
]
When = Annotated[datetime | None, Field(description="ISO 8601 date-time, e.g. 2026-05-01T00:00:00Z")]
Importance = Annotated[float, Field(ge=0.0, le=1.0, description="0..1; higher survives consolidation longer")]
Limit = Annotated[int, Field(ge=1, le=200, description="how many to return")]
Offset = Annotated[int, Field(ge=0, le=100_000, description="skip this many (for the next page)")]


class History(BaseModel):
    memory_id: str
    events: list[HistoryEventOut] = Field(description="every change, oldest first")


class Turns(BaseModel):
    session_id: str
    turns: list[TurnOut]


class SessionEnded(BaseModel):
    session_id: str
    user_context: UserContextOut


class FactDeleted(ContentFree, BaseModel):
    category: str
    key: str
    deleted: bool


# -- memories ------------------------------------------------------------------
def learn(
    b: Binding,
    messages: Annotated[
        list[MessageIn],
        Field(min_length=1, max_length=50, description="what was said, oldest first; role defaults to user"),
    ],
    known_name: Annotated[
        str | None,
        Field(
            default=None,
            min_length=1,
            max_length=120,
            description="the user's name, if known: remembered as their profile name when none is known yet, so "
            "questions naming the user find what was learned about them",
        ),
    ] = None,
) -> LearnResultJSON:
    """Learn durable memories from conversation messages: extracts facts, preferences, events and tasks,
    skips what is already known, and supersedes a memory when the user states a new value for it (the old
    one stays in history). Prefer this over add_memory for anything the user said in conversation."""
    result = b.memory.learn([m.to_dict() for m in messages], scope=b.scope, known_name=known_name)
    return LearnResultJSON.of(result, api_ids(b.tenant))


def add_memory(
    b: Binding,
    content: Annotated[str, Field(min_length=1, max_length=65536, description="the memory, one self-contained fact")],
    kind: Kind = MemoryKind.FACT,
    metadata: Metadata = None,
    importance: Importance = 0.5,
    pinned: Annotated[bool, Field(description="never consolidated or expired")] = False,
    expires_at: When = None,
) -> MemoryJSON:
    """Store one memory exactly as written (no extraction). Storing identical text again returns the
    existing memory. Use learn instead when the text is a conversation to distill."""
    record = b.memory.add(
        content,
        scope=b.scope,
        kind=kind,
        metadata=metadata,
        importance=importance,
        pinned=pinned,
        expires_at=expires_at,
    )
    return memory_out(record, b.tenant)


def search_memories(
    b: Binding,
    query: Annotated[str, Field(min_length=1, max_length=8000, description="what to look for, in natural language")],
    k: Annotated[int, Field(ge=1, le=50, description="how many hits")] = 5,
    strategy: Annotated[
        Strategy,
        Field(
            description="hybrid (default, best measured), semantic, keyword, time_weighted (favours recent), "
            "hybrid_weighted, hybrid_rrf"
        ),
    ] = Strategy.HYBRID,
    filters: Filters = None,
) -> SearchResultJSON:
    """Search the user's long-term memories and return the best matches with their scores. Call it before
    answering anything that may depend on the user's preferences, history, people or projects."""
    hits = b.memory.search(query, scope=b.scope, k=k, strategy=strategy, filters=filters)
    return SearchResultJSON(hits=[SearchHitJSON.of(h, api_ids(b.tenant)) for h in hits])


def get_memory(b: Binding, memory_id: MemoryId) -> MemoryJSON:
    """One memory by id, with its validity interval and what superseded it (if anything)."""
    return memory_out(b.memory.get(memory_id, scope=b.scope), b.tenant)


def list_memories(b: Binding, filters: Filters = None, limit: Limit = 50, offset: Offset = 0) -> MemoryListJSON:
    """The user's memories, newest first, optionally filtered; page with offset/next_offset."""
    records = b.memory.list(scope=b.scope, filters=filters, limit=limit + 1, offset=offset)
    return MemoryListJSON.page(records, limit=limit, offset=offset, rename=api_ids(b.tenant))


def update_memory(
    b: Binding,
    memory_id: MemoryId,
    content: Annotated[str | None, Field(min_length=1, max_length=65536, description="new text")] = None,
    metadata: Metadata = None,
    importance: Annotated[float | None, Field(ge=0.0, le=1.0, description="0..1")] = None,
    pinned: Annotated[bool | None, Field(description="never consolidated or expired")] = None,
) -> MemoryJSON:
    """Correct a memory in place (a typo, a wrong detail); its history keeps the old text. When a fact has
    changed over time (a new job, a move), use supersede_memory so the old value stays valid for the past."""
    record = b.memory.update(
        memory_id, scope=b.scope, content=content, metadata=metadata, importance=importance, pinned=pinned
    )
    return memory_out(record, b.tenant)


def supersede_memory(
    b: Binding,
    memory_id: MemoryId,
    content: Annotated[str, Field(min_length=1, max_length=65536, description="the new, current value")],
    reason: Annotated[str, Field(max_length=1000, description="why it changed")] = "",
) -> MemoryJSON:
    """Replace an outdated memory with a new one: the old one ends its validity now and stays in history
    (search with as_of a past time still finds it). Returns the new memory."""
    return memory_out(b.memory.supersede(memory_id, content, scope=b.scope, reason=reason), b.tenant)


def forget_memory(b: Binding, memory_id: MemoryId) -> ForgetResult:
    """Delete one memory for good and scrub its text from history. Only when the user asks to forget it."""
    return ForgetResult(id=memory_id, forgotten=b.memory.forget(memory_id, scope=b.scope))


def memory_history(b: Binding, memory_id: MemoryId) -> History:
    """How one memory changed: every add, update, supersede and consolidation event, oldest first."""
    events = b.memory.history(memory_id, scope=b.scope)
    return History(memory_id=memory_id, events=[HistoryEventOut.of(e) for e in events])


# -- context, profile, entities, procedures ----------------------------------------
def get_context(
    b: Binding,
    query: Annotated[str | None, Field(max_length=8000, description="what the task is about")] = None,
    max_tokens: Annotated[int, Field(ge=50, le=16000, description="token budget of the block")] = 1000,
    include: Annotated[
        list[Literal[PARTS]] | None,  # type: ignore[valid-type]
        Field(description="parts to assemble (default: all)"),
    ] = None,
    session_id: Annotated[
        str | None, Field(max_length=128, description="adds this session's summary and recent turns")
    ] = None,
) -> ContextOut:
    """Everything relevant about the user for the current task as one prompt block within a token budget:
    profile, relevant memories with dates, entities, procedures, open items, last topics and, with a
    session_id, the session's summary and recent turns. Lower-priority parts give way first."""
    scope = b.session(session_id) if session_id else b.scope
    return ContextOut.of(b.memory.context(query, max_tokens, scope=scope, include=include))


def get_profile(
    b: Binding,
    category: Annotated[str | None, Field(max_length=64, description="one category (e.g. work, food)")] = None,
) -> FactsResponse:
    """The user's profile facts (category/key/value, each with the values it replaced)."""
    return FactsResponse(facts=[FactOut.of(f) for f in b.memory.facts(scope=b.scope, category=category)])


def set_profile_fact(
    b: Binding,
    category: Annotated[str, Field(min_length=1, max_length=64, description="e.g. work, food, family")],
    key: Annotated[str, Field(min_length=1, max_length=64, description="e.g. employer, diet")],
    value: Annotated[str, Field(min_length=1, max_length=2000, description="the fact's value, e.g. vegetarian")],
) -> FactOut:
    """Set one profile fact (upsert); the value it replaces is kept in the fact's previous list."""
    return FactOut.of(b.memory.set_fact(category, key, value, scope=b.scope, source="mcp"))


def delete_profile_fact(
    b: Binding,
    category: Annotated[str, Field(min_length=1, max_length=64, description="the fact's category")],
    key: Annotated[str, Field(min_length=1, max_length=64, description="the fact's key")],
) -> FactDeleted:
    """Delete one profile fact. Only when the user asks or the fact is plainly wrong."""
    return FactDeleted(category=category, key=key, deleted=b.memory.delete_fact(category, key, scope=b.scope))


def list_entities(b: Binding) -> EntitiesResponse:
    """The people, organisations, projects and places the user mentioned, most recently seen first."""
    entities = sorted(b.memory.entities(scope=b.scope), key=lambda e: e.last_seen, reverse=True)
    return EntitiesResponse(entities=[EntityOut.of(e) for e in entities])


def lookup_entity(
    b: Binding, name: Annotated[str, Field(min_length=1, max_length=120, description="any spelling or alias")]
) -> EntityOut:
    """One person, organisation, project or place the user mentioned, by name: summary, attributes,
    aliases and the ids of the memories that mention it (read them with get_memory)."""
    return EntityOut.of(b.memory.entity(name, scope=b.scope))


def find_procedures(
    b: Binding,
    task: Annotated[str, Field(min_length=1, max_length=500, description="the task at hand")],
    k: Annotated[int, Field(ge=1, le=20, description="how many")] = 3,
) -> ProceduresResponse:
    """Instructions and worked examples stored for tasks like this one (how the user wants it done)."""
    found = b.memory.procedures(task, scope=b.scope, k=k)
    return ProceduresResponse(procedures=[ProcedureOut.of(p, api_ids(b.tenant)) for p in found])


def add_procedure(
    b: Binding,
    task: Annotated[str, Field(min_length=1, max_length=500, description="the task it applies to")],
    instruction: Annotated[str | None, Field(max_length=8000, description="how to do it")] = None,
    example_input: Annotated[str | None, Field(max_length=8000, description="an example request")] = None,
    example_output: Annotated[str | None, Field(max_length=8000, description="the wanted answer to it")] = None,
) -> ProcedureOut:
    """Remember how the user wants a task done: an instruction, or an example input with its output."""
    if instruction is None and (example_input is None or example_output is None):
        raise InvalidInput("give an instruction, or both example_input and example_output")
    procedure = b.memory.add_procedure(
        task, scope=b.scope, instruction=instruction, example_input=example_input, example_output=example_output
    )
    return ProcedureOut.of(procedure, api_ids(b.tenant))


# -- sessions ------------------------------------------------------------------
def add_session_messages(
    b: Binding,
    session_id: SessionId,
    messages: Annotated[list[MessageIn], Field(min_length=1, max_length=200, description="oldest first")],
) -> Turns:
    """Append messages to a conversation session: they become searchable episodes and the session's
    buffer (older turns fold into a rolling summary). Call end_session when the conversation ends."""
    turns = b.memory.add_messages([m.to_dict() for m in messages], scope=b.session(session_id))
    return Turns(session_id=session_id, turns=[TurnOut.of(t) for t in turns])


def get_session(
    b: Binding,
    session_id: SessionId,
    n: Annotated[int | None, Field(ge=1, le=500, description="how many turns (default: window)")] = None,
) -> SessionOut:
    """A session's recent turns (oldest first) and the rolling summary of its older turns."""
    scope = b.session(session_id)
    turns = b.memory.recent_turns(n, scope=scope)
    return SessionOut(turns=[TurnOut.of(t) for t in turns], summary=b.memory.session_summary(scope=scope))


def end_session(b: Binding, session_id: SessionId) -> SessionEnded:
    """End a conversation session: updates the user context object (facts, preferences, last topics, open
    items, last session) from it. Its episodes stay searchable."""
    updated = b.memory.end_session(scope=b.session(session_id))
    return SessionEnded(session_id=session_id, user_context=UserContextOut(**{**updated, "user_id": b.user}))


def get_user_context(b: Binding) -> UserContextOut:
    """The user context object kept across sessions: facts, preferences, last topics, open items, last session."""
    return UserContextOut(**{**b.memory.user_context(scope=b.scope), "user_id": b.user})


def export_memories(b: Binding) -> ExportDocument:
    """Everything stored about the user (memories with history, entities, profile, procedures, sessions) as a
    versioned JSON document, e.g. when the user asks for a copy of their data."""
    return b.memory.export_user(scope=b.scope.user_only())


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(learn, "Learn from messages"),
    ToolSpec(add_memory, "Add a memory", idempotent=True),
    ToolSpec(search_memories, "Search memories", read_only=True),
    ToolSpec(get_memory, "Get a memory", read_only=True),
    ToolSpec(list_memories, "List memories", read_only=True),
    ToolSpec(update_memory, "Update a memory", destructive=True, idempotent=True),
    ToolSpec(supersede_memory, "Supersede a memory"),
    ToolSpec(forget_memory, "Forget a memory", destructive=True, idempotent=True),
    ToolSpec(memory_history, "A memory's history", read_only=True),
    ToolSpec(get_context, "Context for a prompt", read_only=True),
    ToolSpec(get_profile, "Profile facts", read_only=True),
    ToolSpec(set_profile_fact, "Set a profile fact", destructive=True, idempotent=True),
    ToolSpec(delete_profile_fact, "Delete a profile fact", destructive=True, idempotent=True),
    ToolSpec(list_entities, "List entities", read_only=True),
    ToolSpec(lookup_entity, "Look up an entity", read_only=True),
    ToolSpec(find_procedures, "Find procedures", read_only=True),
    ToolSpec(add_procedure, "Add a procedure"),
    ToolSpec(add_session_messages, "Add session messages"),
    ToolSpec(get_session, "Get a session", read_only=True),
    ToolSpec(end_session, "End a session", idempotent=True),
    ToolSpec(get_user_context, "User context object", read_only=True),
    ToolSpec(export_memories, "Export the user's data", read_only=True, needs=Permission.EXPORT),
)

SECTIONS = ("context", "profile", "facts", "entities")


def read_section(b: Binding, section: str) -> str:
    """The text of the `memstrata://user/{section}` resource."""
    if section == "context":
        return b.memory.context(None, scope=b.scope).text
    readers: dict[str, Callable[[Binding], BaseModel]] = {
        "profile": get_user_context,
        "facts": lambda x: get_profile(x),
        "entities": list_entities,
    }
    if section not in readers:
        raise InvalidInput(f"unknown section {section!r}; use one of {', '.join(SECTIONS)}")
    return readers[section](b).model_dump_json(indent=2)


__all__ = ["SECTIONS", "TOOLS", "Binding", "ToolSpec", "read_section"]
