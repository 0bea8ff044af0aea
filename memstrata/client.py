"""`MemoryClient`: the REST API of a memstrata server, with the methods and return types of `Memory`.

>>> client = MemoryClient("http://127.0.0.1:8420", api_key="msk_...")   # doctest: +SKIP
>>> client.add("Alice prefers short answers", scope="alice", kind="preference")  # doctest: +SKIP
>>> client.search("how should I answer?", scope="alice")                 # doctest: +SKIP

Scopes name API users (`alice`), not store ids: the server maps them into the key's tenant.
Error responses are raised as the class the server raised (the problem document's `error`, looked up
in the exception tree of `memstrata.errors`), with the server's message.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, overload
from urllib.parse import quote

import httpx

from .buffer import Turn
from .errors import (
    BackendError,
    ConfigurationError,
    InvalidInput,
    MemstrataError,
    NotFound,
    PermissionDenied,
    ProviderError,
    UsageError,
)
from .export_format import ExportDocument, HistoryEventJSON, MemoryJSON, parse_document
from .filters import SearchFilter, as_filter
from .layers.context import DEFAULT_MAX_TOKENS, Context
from .layers.entities import Entity
from .layers.learning import LearnResult
from .layers.lifecycle import ConsolidationOptions, ConsolidationReport, ErasureReceipt, ImportReport, as_options
from .layers.procedures import Procedure
from .layers.profile import ProfileFact
from .layers.semantic import Strategy
from .layers.work_queue import JobStatus, QueueStatus
from .messages import MessageLike
from .models import HistoryEvent, MemoryKind, MemoryRecord, Scope, ScopeLike, SearchHit, as_scope
from .shapes import (
    ConsolidationReportJSON,
    ContextJSON,
    EntitiesJSON,
    EntityJSON,
    ErasureReceiptJSON,
    FactsJSON,
    ImportReportJSON,
    JobStatusJSON,
    LearnResultJSON,
    MemoryListJSON,
    ProcedureJSON,
    ProceduresJSON,
    ProfileFactJSON,
    QueueStatusJSON,
    SearchResultJSON,
    TurnJSON,
    record_of,
)

DEFAULT_URL = "http://127.0.0.1:8420"

_ERRORS_BY_STATUS: tuple[tuple[range, type[MemstrataError]], ...] = (
    (range(401, 402), PermissionDenied),
    (range(403, 404), PermissionDenied),
    (range(404, 405), NotFound),
    (range(413, 414), InvalidInput),
    (range(422, 423), InvalidInput),
    (range(400, 500), UsageError),
    (range(501, 502), ConfigurationError),
    (range(502, 503), ProviderError),
    (range(500, 600), BackendError),
)
"""HTTP status → exception, for responses that do not name a memstrata error class."""


def _dt(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def _iso(value: datetime | str | None) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else value


def _drop_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _query(filters: SearchFilter) -> dict[str, Any]:
    """A filter as URL query parameters: lists repeat, the metadata object is JSON text."""
    params = filters.to_json()
    if "metadata" in params:
        params["metadata"] = json.dumps(params["metadata"])
    return params


def record_from_json(data: Mapping[str, Any], scope: Scope) -> MemoryRecord:
    """A memory the server sent (the one JSON shape, `MemoryJSON`); one without a user id (shared by
    every user of an agent) is attributed to the user asked about."""
    return record_of(MemoryJSON.model_validate(data), scope)


class MemoryClient:
    """Synchronous HTTP client of the memstrata REST API (httpx)."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._owns_client = http_client is None
        self.http = http_client or httpx.Client(base_url=base_url, timeout=timeout)
        self.http.headers.update(headers)

    def close(self) -> None:
        if self._owns_client:
            self.http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport -----------------------------------------------------------
    def _request(self, method: str, path: str, *, json: Any = None, params: Any = None) -> Any:
        try:
            response = self.http.request(method, path, json=json, params=params)
        except httpx.TransportError as exc:
            raise BackendError(f"memstrata server {self.http.base_url} unreachable: {exc}") from exc
        if response.status_code >= 400:
            raise _error_from(response)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    @staticmethod
    def _user(scope: Scope, suffix: str = "") -> str:
        return f"/v1/users/{quote(scope.user_id, safe='')}{suffix}"

    # -- server --------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        result: dict[str, Any] = self._request("GET", "/healthz")
        return result

    def whoami(self) -> dict[str, Any]:
        result: dict[str, Any] = self._request("GET", "/v1/whoami")
        return result

    def users(self, *, limit: int = 100, offset: int = 0) -> builtins.list[str]:
        page = self._request("GET", "/v1/users", params={"limit": limit, "offset": offset})
        return list(page["items"])

    # -- semantic memory -----------------------------------------------------
    def add(
        self,
        content: str,
        *,
        scope: ScopeLike,
        kind: MemoryKind | str = MemoryKind.FACT,
        metadata: Mapping[str, Any] | None = None,
        importance: float = 0.5,
        source_ids: Sequence[str] = (),
        expires_at: datetime | None = None,
        pinned: bool = False,
    ) -> MemoryRecord:
        s = as_scope(scope)
        body = _drop_none(
            {
                "content": content,
                "kind": str(MemoryKind.parse(kind)),
                "metadata": dict(metadata or {}),
                "importance": importance,
                "source_ids": list(source_ids),
                "expires_at": _iso(expires_at),
                "pinned": pinned,
                "agent_id": s.agent_id,
                "session_id": s.session_id,
            }
        )
        return record_from_json(self._request("POST", self._user(s, "/memories"), json=body), s)

    def get(self, memory_id: str, *, scope: ScopeLike) -> MemoryRecord:
        s = as_scope(scope)
        return record_from_json(self._request("GET", self._user(s, f"/memories/{quote(memory_id, safe='')}")), s)

    def list(
        self, *, scope: ScopeLike, filters: SearchFilter | None = None, limit: int = 100, offset: int = 0
    ) -> builtins.list[MemoryRecord]:
        """Memories newest first; follows the server's pages until `limit` records are read."""
        s = as_scope(scope)
        params: dict[str, Any] = {
            **_query(as_filter(filters)),
            **_drop_none({"agent_id": s.agent_id, "session_id": s.session_id}),
        }
        records: builtins.list[MemoryRecord] = []
        next_offset: int | None = offset
        while next_offset is not None and len(records) < limit:
            page_params = {**params, "limit": min(limit - len(records), 500), "offset": next_offset}
            page = self._request("GET", self._user(s, "/memories"), params=page_params)
            listed = MemoryListJSON.model_validate(page)
            records += listed.to_domain(s)
            next_offset = listed.next_offset
        return records

    def update(
        self,
        memory_id: str,
        *,
        scope: ScopeLike,
        content: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        importance: float | None = None,
        expires_at: datetime | None = None,
        pinned: bool | None = None,
    ) -> MemoryRecord:
        s = as_scope(scope)
        body = _drop_none(
            {
                "content": content,
                "metadata": dict(metadata) if metadata is not None else None,
                "importance": importance,
                "expires_at": _iso(expires_at),
                "pinned": pinned,
            }
        )
        path = self._user(s, f"/memories/{quote(memory_id, safe='')}")
        return record_from_json(self._request("PATCH", path, json=body), s)

    def supersede(self, memory_id: str, content: str, *, scope: ScopeLike, reason: str = "") -> MemoryRecord:
        s = as_scope(scope)
        path = self._user(s, f"/memories/{quote(memory_id, safe='')}/supersede")
        return record_from_json(self._request("POST", path, json={"content": content, "reason": reason}), s)

    def forget(self, memory_id: str, *, scope: ScopeLike) -> bool:
        try:
            self._request("DELETE", self._user(as_scope(scope), f"/memories/{quote(memory_id, safe='')}"))
        except NotFound:
            return False
        return True

    def history(self, memory_id: str, *, scope: ScopeLike) -> builtins.list[HistoryEvent]:
        s = as_scope(scope)
        events = self._request("GET", self._user(s, f"/memories/{quote(memory_id, safe='')}/history"))
        return [HistoryEventJSON.model_validate(e).to_event(s.user_id) for e in events]

    def search(
        self,
        query: str,
        *,
        scope: ScopeLike,
        k: int = 10,
        strategy: Strategy | str = Strategy.HYBRID,
        threshold: float | None = None,
        filters: SearchFilter | None = None,
        decay_rate: float = 0.01,
    ) -> builtins.list[SearchHit]:
        s = as_scope(scope)
        body = _drop_none(
            {
                "query": query,
                "k": k,
                "strategy": str(Strategy.parse(strategy)),
                "threshold": threshold,
                "decay_rate": decay_rate,
                "filters": as_filter(filters).to_json(),
                "agent_id": s.agent_id,
                "session_id": s.session_id,
            }
        )
        result = self._request("POST", self._user(s, "/search"), json=body)
        return [hit.to_domain(s) for hit in SearchResultJSON.model_validate(result).hits]

    # -- profile, entities, procedures ---------------------------------------
    def set_fact(
        self, category: str, key: str, value: str, *, scope: ScopeLike, source: str | None = None
    ) -> ProfileFact:
        path = self._user(as_scope(scope), f"/profile/facts/{quote(category, safe='')}/{quote(key, safe='')}")
        return ProfileFactJSON.model_validate(
            self._request("PUT", path, json=_drop_none({"value": value, "source": source}))
        ).to_domain()

    def facts(self, *, scope: ScopeLike, category: str | None = None) -> builtins.list[ProfileFact]:
        result = self._request(
            "GET", self._user(as_scope(scope), "/profile/facts"), params=_drop_none({"category": category})
        )
        return [f.to_domain() for f in FactsJSON.model_validate(result).facts]

    def delete_fact(self, category: str, key: str, *, scope: ScopeLike) -> bool:
        path = self._user(as_scope(scope), f"/profile/facts/{quote(category, safe='')}/{quote(key, safe='')}")
        try:
            self._request("DELETE", path)
        except NotFound:
            return False
        return True

    def upsert_entity(
        self,
        name: str,
        *,
        scope: ScopeLike,
        type: str = "other",
        summary: str | None = None,
        attributes: Mapping[str, Any] | None = None,
        aliases: Sequence[str] = (),
        memory_id: str | None = None,
    ) -> Entity:
        path = self._user(as_scope(scope), f"/entities/{quote(name, safe='')}")
        fields = {
            "type": type,
            "summary": summary,
            "attributes": dict(attributes) if attributes is not None else None,
            "aliases": list(aliases) or None,
            "memory_id": memory_id,
        }
        return EntityJSON.model_validate(self._request("PUT", path, json=_drop_none(fields))).to_domain()

    def entities(self, *, scope: ScopeLike) -> builtins.list[Entity]:
        result = self._request("GET", self._user(as_scope(scope), "/entities"))
        return [e.to_domain() for e in EntitiesJSON.model_validate(result).entities]

    def entity(self, name: str, *, scope: ScopeLike) -> Entity:
        result = self._request("GET", self._user(as_scope(scope), f"/entities/{quote(name, safe='')}"))
        return EntityJSON.model_validate(result).to_domain()

    def add_procedure(
        self,
        task: str,
        *,
        scope: ScopeLike,
        instruction: str | None = None,
        example_input: str | None = None,
        example_output: str | None = None,
        agent_wide: bool = False,
    ) -> Procedure:
        s = as_scope(scope)
        body = _drop_none(
            {
                "task": task,
                "instruction": instruction,
                "example_input": example_input,
                "example_output": example_output,
                "agent_id": s.agent_id,
                "agent_wide": agent_wide,
            }
        )
        result = self._request("POST", self._user(s, "/procedures"), json=body)
        return ProcedureJSON.model_validate(result).to_domain(s)

    def procedures(self, task: str, *, scope: ScopeLike, k: int = 3) -> builtins.list[Procedure]:
        s = as_scope(scope)
        params = _drop_none({"task": task, "k": k, "agent_id": s.agent_id})
        result = self._request("GET", self._user(s, "/procedures"), params=params)
        return [p.to_domain(s) for p in ProceduresJSON.model_validate(result).procedures]

    # -- learning and the queue ----------------------------------------------
    def learn(
        self,
        messages: Sequence[MessageLike] | MessageLike,
        *,
        scope: ScopeLike,
        known_name: str | None = None,
        source_ids: Sequence[str] = (),
    ) -> LearnResult:
        s = as_scope(scope)
        body = _drop_none(
            {
                "messages": _messages(messages),
                "agent_id": s.agent_id,
                "session_id": s.session_id,
                "known_name": known_name,
                "source_ids": list(source_ids),
            }
        )
        result = self._request("POST", self._user(s, "/learn"), json=body)
        return LearnResultJSON.model_validate({k: v for k, v in result.items() if k != "job_id"}).to_domain(s)

    def learn_later(self, messages: Sequence[MessageLike] | MessageLike, *, scope: ScopeLike) -> str:
        s = as_scope(scope)
        body = _drop_none(
            {"messages": _messages(messages), "background": True, "agent_id": s.agent_id, "session_id": s.session_id}
        )
        return str(self._request("POST", self._user(s, "/learn"), json=body)["job_id"])

    def queue_status(self) -> QueueStatus:
        result = self._request("GET", "/v1/queue")
        return QueueStatusJSON.model_validate(result).to_domain()

    def job_status(self, job_id: str, *, scope: ScopeLike) -> JobStatus:
        result = self._request("GET", self._user(as_scope(scope), f"/jobs/{quote(job_id, safe='')}"))
        return JobStatusJSON.model_validate(result).to_domain()

    # -- sessions and context --------------------------------------------------
    def add_message(
        self,
        role: str,
        content: str,
        *,
        scope: ScopeLike,
        at: datetime | str | None = None,
        speaker: str | None = None,
    ) -> Turn:
        message = _drop_none({"role": role, "content": content, "at": _iso(at), "speaker": speaker})
        return self.add_messages([message], scope=scope)[0]

    def add_messages(self, messages: Sequence[MessageLike], *, scope: ScopeLike) -> builtins.list[Turn]:
        s = as_scope(scope)
        path = self._user(s, f"/sessions/{quote(s.require_session(), safe='')}/messages")
        turns = self._request("POST", path, json=_drop_none({"messages": _messages(messages), "agent_id": s.agent_id}))
        return [TurnJSON.model_validate(t).to_domain() for t in turns]

    def recent_turns(self, n: int | None = None, *, scope: ScopeLike) -> builtins.list[Turn]:
        s = as_scope(scope)
        path = self._user(s, f"/sessions/{quote(s.require_session(), safe='')}")
        turns = self._request("GET", path, params=_drop_none({"n": n}))["turns"]
        return [TurnJSON.model_validate(t).to_domain() for t in turns]

    def session_summary(self, *, scope: ScopeLike) -> str:
        s = as_scope(scope)
        return str(self._request("GET", self._user(s, f"/sessions/{quote(s.require_session(), safe='')}"))["summary"])

    def clear_session(self, *, scope: ScopeLike) -> None:
        s = as_scope(scope)
        self._request("DELETE", self._user(s, f"/sessions/{quote(s.require_session(), safe='')}"))

    @overload
    def end_session(self, *, scope: ScopeLike, background: Literal[False] = False) -> dict[str, Any]: ...

    @overload
    def end_session(self, *, scope: ScopeLike, background: Literal[True]) -> None: ...

    @overload
    def end_session(self, *, scope: ScopeLike, background: bool) -> dict[str, Any] | None: ...

    def end_session(self, *, scope: ScopeLike, background: bool = False) -> dict[str, Any] | None:
        """The updated user context object (None with `background=True`: the server updates it later)."""
        s = as_scope(scope)
        path = self._user(s, f"/sessions/{quote(s.require_session(), safe='')}/end")
        result = self._request("POST", path, json=_drop_none({"background": background, "agent_id": s.agent_id}))
        context: dict[str, Any] | None = result["user_context"]
        return context

    def user_context(self, *, scope: ScopeLike) -> dict[str, Any]:
        result: dict[str, Any] = self._request("GET", self._user(as_scope(scope), "/profile"))
        return result

    def context(
        self,
        query: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        *,
        scope: ScopeLike,
        include: Sequence[str] | None = None,
    ) -> Context:
        s = as_scope(scope)
        body = _drop_none(
            {
                "query": query,
                "max_tokens": max_tokens,
                "agent_id": s.agent_id,
                "session_id": s.session_id,
                "include": list(include) if include is not None else None,
            }
        )
        return ContextJSON.model_validate(self._request("POST", self._user(s, "/context"), json=body)).to_domain()

    # -- lifecycle -------------------------------------------------------------
    def erase_user(self, *, scope: ScopeLike) -> ErasureReceipt:
        result = self._request("DELETE", self._user(as_scope(scope)))
        return ErasureReceiptJSON.model_validate(result).to_domain()

    def export_user(self, *, scope: ScopeLike) -> ExportDocument:
        return parse_document(self._request("GET", self._user(as_scope(scope), "/export")))

    def import_user(
        self, document: ExportDocument | dict[str, Any] | str | bytes, *, scope: ScopeLike | None = None
    ) -> ImportReport:
        """Import into `scope`'s user (an API user; default: the user part of the document's own id)."""
        doc = parse_document(document)
        target = as_scope(scope).user_id if scope is not None else doc.user_id.split(":", 1)[-1]
        body = doc.model_dump(mode="json")
        r = self._request("POST", self._user(as_scope(target), "/import"), json=body)
        return ImportReportJSON.model_validate(r).to_domain(target)

    def consolidate(self, *, scope: ScopeLike, options: ConsolidationOptions | None = None) -> ConsolidationReport:
        s = as_scope(scope)
        r = self._request("POST", self._user(s, "/consolidate"), json=as_options(options).to_json())
        return ConsolidationReportJSON.model_validate(r).to_domain(s.user_id)


def _messages(messages: Sequence[MessageLike] | MessageLike) -> builtins.list[dict[str, Any]]:
    """Messages as the JSON the server reads (it parses and validates them, and stamps missing times)."""
    if isinstance(messages, str | Mapping | tuple) or not isinstance(messages, Sequence):
        messages = [messages]
    return [_message_json(m) for m in messages]


def _message_json(message: MessageLike) -> dict[str, Any]:
    if isinstance(message, str):
        return {"role": "user", "content": message}
    if isinstance(message, tuple) and len(message) == 2:
        return {"role": message[0], "content": message[1]}
    if isinstance(message, Mapping):
        fields = dict(message)
    else:
        names = ("role", "content", "at", "speaker")
        fields = {name: getattr(message, name, None) for name in names}
    return {k: _iso(v) if isinstance(v, datetime) else v for k, v in fields.items() if v is not None}


def error_class(name: str) -> type[MemstrataError] | None:
    """The class of memstrata's exception tree named `name`, found by walking `MemstrataError`'s
    subclasses at each call, so a class added to the tree crosses the wire as itself with no table to edit."""
    pending: list[type[MemstrataError]] = [MemstrataError]
    while pending:
        kind = pending.pop()
        if kind.__name__ == name and kind.__module__.split(".")[0] == "memstrata":
            return kind
        pending += kind.__subclasses__()
    return None


def error_instance(kind: type[MemstrataError], message: str) -> MemstrataError:
    """An instance of `kind` carrying `message`, also for a class whose constructor takes other
    arguments (`MemoryNotFound(memory_id)`): those get the message as their only argument."""
    if kind.__init__ is Exception.__init__:
        return kind(message)
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    return error


def _error_from(response: httpx.Response) -> MemstrataError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    detail = str(body.get("detail") or response.reason_phrase) if isinstance(body, dict) else response.reason_phrase
    name = body.get("error") if isinstance(body, dict) else None
    kind = error_class(str(name)) if name else None
    if kind is None:
        kind = next((c for codes, c in _ERRORS_BY_STATUS if response.status_code in codes), MemstrataError)
    return error_instance(kind, f"{detail} (HTTP {response.status_code})")
