"""Validation of user-supplied search/list filters into a backend-neutral `MemoryFilter`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from .errors import InvalidInput
from .models import MemoryKind, validate_id
from .storage.base import MemoryFilter

_METADATA_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_SCALARS = (str, int, float, bool, type(None))


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


def build_filter(
    *,
    kinds: Iterable[MemoryKind | str] | MemoryKind | str | None = None,
    metadata: Mapping[str, Any] | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    created_after: datetime | str | None = None,
    created_before: datetime | str | None = None,
    as_of: datetime | str | None = None,
    include_superseded: bool = False,
    include_expired: bool = False,
) -> MemoryFilter:
    """Check every filter value and build the filter; bad values raise `InvalidInput` naming them."""
    if isinstance(kinds, str | MemoryKind):
        kinds = [kinds]
    parsed_kinds = tuple(MemoryKind.parse(k) for k in kinds or ())
    meta = dict(metadata or {})
    for key, value in meta.items():
        if not isinstance(key, str) or not _METADATA_KEY.match(key):
            raise InvalidInput(f"invalid metadata filter key {key!r}: use letters, digits and _ (max 64)")
        if not isinstance(value, _SCALARS):
            raise InvalidInput(f"metadata filter {key!r} must be a string, number, boolean or null")
    after, before = aware(created_after, "created_after"), aware(created_before, "created_before")
    if after and before and after >= before:
        raise InvalidInput("created_after must be earlier than created_before")
    return MemoryFilter(
        kinds=parsed_kinds,
        agent_id=validate_id(agent_id, "agent_id") if agent_id is not None else None,
        session_id=validate_id(session_id, "session_id") if session_id is not None else None,
        metadata=meta,
        created_after=after,
        created_before=before,
        as_of=aware(as_of, "as_of"),
        include_superseded=include_superseded,
        include_expired=include_expired,
    )
