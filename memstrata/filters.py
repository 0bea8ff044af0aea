"""`SearchFilter`: which memories a search or a listing may return, as one validated value object.

A caller builds it once (`SearchFilter(kinds=["fact"], created_after="2024-01-01")`) and every hop
passes it on unchanged: `Memory.search`/`Memory.list`, `MemoryClient` (which sends it as the JSON
`filters` object), the REST schema (which *is* this model) and the MCP tools. Only `Memory` turns it
into the store's `MemoryFilter`, adding what the scope names (agent, session) — in `to_memory_filter`.

It is a frozen pydantic model so that the wire format and the Python object are one declaration:
JSON booleans, numbers and ISO 8601 times are taken strictly (no 0 for false, no epoch number for a
date). Invalid values raise `InvalidInput` naming the field, from Python as from JSON.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from .errors import InvalidInput
from .models import MemoryKind, validate_id
from .storage.base import MemoryFilter

_METADATA_KEY = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
MAX_METADATA_FILTERS = 20


def aware(value: datetime | str | None, what: str) -> datetime | None:
    """A timezone-aware datetime (naive values are taken as UTC; ISO strings are parsed)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(f"{what} must be an ISO 8601 date-time, got {value!r}") from None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime, got {type(value).__name__}")
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def iso_datetime(value: object) -> object:
    """Only ISO 8601 strings (or datetimes): never a number taken as a Unix time."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and len(value) >= 10 and not value.replace(".", "", 1).isdigit():
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError("must be an ISO 8601 date-time such as 2026-03-01T12:00:00Z")


def _utc_if_naive(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _listed(value: object) -> object:
    """One kind may be given alone: `kinds="fact"` is `kinds=["fact"]`."""
    return [value] if isinstance(value, str) else value


def _json_text(value: object) -> object:
    """A metadata filter may arrive as JSON text (a URL query parameter)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise ValueError("must be a JSON object of exact values") from None
    return value


def _flag_text(value: object) -> object:
    """A URL query parameter spells a boolean "true" or "false"; numbers are never booleans."""
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


Flag = Annotated[StrictBool, BeforeValidator(_flag_text)]
When = Annotated[datetime, BeforeValidator(iso_datetime), AfterValidator(_utc_if_naive)]
"""A point in time: a datetime or an ISO 8601 string; naive values are taken as UTC."""
Scalar = StrictStr | StrictInt | StrictFloat | StrictBool | None
MetadataKey = Annotated[str, Field(pattern=_METADATA_KEY)]


class ValueObject(BaseModel):
    """Base of the value objects callers hand to memstrata (filters, consolidation options): frozen,
    unknown fields refused, and every invalid value raised as `InvalidInput` naming the field."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InvalidInput(f"invalid {type(self).__name__}: {describe(exc)}") from None

    def to_json(self) -> dict[str, Any]:
        """The fields that differ from their defaults, as JSON values (what a client sends)."""
        return self.model_dump(mode="json", exclude_defaults=True)


def describe(exc: ValidationError, limit: int = 5) -> str:
    """The first `limit` problems of a pydantic error as "field: message; ..."."""
    return "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or 'value'}: {error['msg']}" for error in exc.errors()[:limit]
    )


class SearchFilter(ValueObject):
    """Which memories a search or listing returns. By default: memories of every kind that are current
    now (not superseded, not expired)."""

    kinds: Annotated[tuple[MemoryKind, ...], BeforeValidator(_listed)] = Field(
        default=(), max_length=len(MemoryKind), description="only these kinds (default: all)"
    )
    metadata: Annotated[dict[MetadataKey, Scalar], BeforeValidator(_json_text)] = Field(
        default_factory=dict,
        max_length=MAX_METADATA_FILTERS,
        description="only memories whose metadata has these exact values",
    )
    created_after: When | None = Field(default=None, description="created after this time")
    created_before: When | None = Field(default=None, description="created before this time")
    as_of: When | None = Field(default=None, description="what was current at this time (default: now)")
    recorded_as_of: When | None = Field(
        default=None,
        description="what the memory believed at this time: only memories it had recorded by then, superseded "
        "as it knew then (as_of defaults to this time)",
    )
    include_superseded: Flag = Field(default=False, description="also memories a newer one replaced")
    include_expired: Flag = Field(default=False, description="also memories past their expiry")

    @model_validator(mode="after")
    def _ordered(self) -> SearchFilter:
        if self.created_after and self.created_before and self.created_after >= self.created_before:
            raise ValueError("created_after must be earlier than created_before")
        return self

    def to_memory_filter(
        self, *, agent_id: str | None = None, session_id: str | None = None, as_of: datetime | None = None
    ) -> MemoryFilter:
        """The store's filter: this one, narrowed to an agent/session; `as_of` is the default time."""
        return MemoryFilter(
            kinds=self.kinds,
            agent_id=validate_id(agent_id, "agent_id") if agent_id is not None else None,
            session_id=validate_id(session_id, "session_id") if session_id is not None else None,
            metadata=dict(self.metadata),
            created_after=self.created_after,
            created_before=self.created_before,
            as_of=self.as_of or self.recorded_as_of or as_of,
            recorded_as_of=self.recorded_as_of,
            include_superseded=self.include_superseded,
            include_expired=self.include_expired,
        )


ANYTHING_CURRENT = SearchFilter()
"""The default filter: every kind, current memories only."""


def as_filter(value: SearchFilter | None) -> SearchFilter:
    """`value`, or the default filter for None; anything else is `InvalidInput`."""
    if value is None:
        return ANYTHING_CURRENT
    if not isinstance(value, SearchFilter):
        raise InvalidInput(f"filters must be a SearchFilter, got {type(value).__name__}")
    return value


__all__ = [
    "ANYTHING_CURRENT",
    "SearchFilter",
    "ValueObject",
    "When",
    "as_filter",
    "aware",
    "describe",
    "iso_datetime",
]
