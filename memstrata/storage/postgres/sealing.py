"""How rows of the PostgreSQL store are written and read: in plain text, or sealed under the user's data
key (crypto-shredding, `storage/crypto.py`). Pure: no connections here.

`PLAIN` writes what it is given. `SealedRows(key)` writes, for one user:

* `memories.content`: the sealed JSON of content, context, metadata and content hash (associated data:
  table, user, memory id); `context` and `date_text` empty; `metadata` a *blind index* (keyed hashes
  of each key and of each key+value, JSON null kept as null) so equality filters still run in SQL;
  `content_hash` its keyed hash (deduplication by equality);
* the keyword index (`keyword_terms`, and the per-user `keyword_documents` statistics): each term of
  `keyword.row_terms` replaced by its keyed-hash token, frequencies and lengths unchanged, so BM25 ranks
  exactly as over the plain terms;
* `history.before` / `after`: sealed text each (scrubbing still sets them to NULL); `details`: `{"sealed": …}`;
* `items.key`: a keyed hash of namespace and key; `items.value`: `{"sealed": …}` holding the key and value.

A query's terms (`keyword.search_terms`) are turned into the same tokens, so keyword search matches, and
ranks, without a readable word in SQL.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from psycopg.types.json import Jsonb

from ...core.keyword_index import KeywordTerms
from ...errors import StoreError
from ...models import HistoryEvent, MemoryRecord
from ..base import MemoryFilter
from ..crypto import DataKey, OpenedCache
from . import queries as q
from .keyword import row_terms, search_terms

_CONTENT, _METADATA, _HASH, _CONTEXT, _DATE_TEXT = (
    q.WRITE_COLUMNS.index(c) for c in ("content", "metadata", "content_hash", "context", "date_text")
)


_Payload = tuple[str, str, dict[str, Any], str]
"""What a memory's sealed payload holds: content, context, metadata, content hash."""


class RowCodec(Protocol):
    """Turns domain objects into bind parameters and rows back into domain objects, for one user."""

    def record_terms(self, record: MemoryRecord) -> KeywordTerms:
        """What the record is stored as findable under (`keyword_terms`, and the user's statistics)."""
        ...

    def record_params(self, record: MemoryRecord, terms: KeywordTerms) -> list[Any]:
        """`queries.WRITE_COLUMNS` of the record indexed under `terms` (from `record_terms`)."""
        ...

    def record_from_row(self, row: Sequence[Any]) -> MemoryRecord: ...

    def event_params(self, event: HistoryEvent) -> list[Any]: ...

    def event_from_row(self, row: Sequence[Any]) -> HistoryEvent: ...

    def item_key(self, namespace: str, key: str) -> str:
        """The `items.key` an item is stored under."""
        ...

    def item_value(self, namespace: str, key: str, value: dict[str, Any]) -> Jsonb: ...

    def item_from(self, namespace: str, stored_key: str, stored: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """(key, value) of a stored item."""
        ...

    def filter(self, where: MemoryFilter) -> MemoryFilter:
        """`where` as SQL must compare it with the stored columns."""
        ...

    def query_terms(self, user_id: str, query: str) -> list[str]:
        """The terms keyword search looks up in SQL."""
        ...


class PlainRows:
    """Rows as they are: text and terms in clear."""

    def record_terms(self, record: MemoryRecord) -> KeywordTerms:
        return row_terms(record.user_id, record)

    def record_params(self, record: MemoryRecord, terms: KeywordTerms) -> list[Any]:
        return q.record_params(record, terms)

    def record_from_row(self, row: Sequence[Any]) -> MemoryRecord:
        return q.record_from_row(row)

    def event_params(self, event: HistoryEvent) -> list[Any]:
        return q.event_params(event)

    def event_from_row(self, row: Sequence[Any]) -> HistoryEvent:
        return q.event_from_row(row)

    def item_key(self, namespace: str, key: str) -> str:
        return key

    def item_value(self, namespace: str, key: str, value: dict[str, Any]) -> Jsonb:
        return Jsonb(value)

    def item_from(self, namespace: str, stored_key: str, stored: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return stored_key, stored

    def filter(self, where: MemoryFilter) -> MemoryFilter:
        return where

    def query_terms(self, user_id: str, query: str) -> list[str]:
        return search_terms(user_id, query)


PLAIN = PlainRows()


class SealedRows:
    """Rows of one user sealed under the user's data key (see the module docstring)."""

    def __init__(self, key: DataKey, opened: OpenedCache | None = None) -> None:
        self.key = key
        self._opened = opened if opened is not None else OpenedCache(0)
        """Memory payloads opened by earlier reads of this process (`crypto.OpenedCache`; off when None)."""
        self._read: dict[tuple[str, str, str], _Payload] = {}
        """Payloads already opened by this codec, by user, row id and sealed text (a value copied into another
        row must not open there): a hybrid search reads many rows twice."""
        self._tokens: dict[str, str] = {}
        """Tokens already computed by this codec, by term: a batch of memories repeats most of its terms
        (measured on the latency corpus: 23 term occurrences per memory, 67 % of them repeats within a batch
        of 256). The codec lives for one transaction, so the memo goes with it."""

    # -- memories -------------------------------------------------------------------------------
    def record_terms(self, record: MemoryRecord) -> KeywordTerms:
        plain = row_terms(record.user_id, record)
        frequencies: dict[str, float] = {}
        for term, frequency in plain.frequencies.items():
            token = self._token(term)
            frequencies[token] = frequencies.get(token, 0.0) + frequency
        return KeywordTerms(frequencies, plain.length)

    def _token(self, term: str) -> str:
        token = self._tokens.get(term)
        if token is None:
            token = self._tokens[term] = self.key.token(term)
        return token

    def record_params(self, record: MemoryRecord, terms: KeywordTerms) -> list[Any]:
        payload = {
            "content": record.content,
            "context": record.context,
            "metadata": record.metadata,
            "content_hash": record.content_hash,
        }
        params = q.record_params(record, terms)
        params[_CONTENT] = self.key.seal_json(payload, associated_data("memories", record.user_id, record.id))
        params[_METADATA] = Jsonb(self._blind_metadata(record.metadata))
        params[_HASH] = self.key.blind("content_hash", record.content_hash)
        params[_CONTEXT] = ""
        params[_DATE_TEXT] = ""  # the date's terms are in the index, as tokens
        return params

    def record_from_row(self, row: Sequence[Any]) -> MemoryRecord:
        values = list(row[: len(q.COLUMNS)])
        sealed = values[_CONTENT]
        payload = self._read.get((values[0], values[1], sealed))
        if payload is None:
            aad = associated_data("memories", values[0], values[1])
            payload = self._opened.get(self.key, aad, sealed)
            if payload is None:
                opened = self.key.open_json(sealed, aad)
                payload = (opened["content"], opened["context"], opened["metadata"], opened["content_hash"])
                self._opened.put(self.key, aad, sealed, payload)
            self._read[values[0], values[1], sealed] = payload
        values[_CONTENT], values[_CONTEXT], metadata, values[_HASH] = payload
        values[_METADATA] = json_copy(metadata)  # the cached payload stays as opened, whatever callers do
        return q.record_from_row(values)

    def _blind_metadata(self, metadata: dict[str, Any]) -> dict[str, str | None]:
        return {self._blind_key(k): None if v is None else self._blind_value(k, v) for k, v in metadata.items()}

    def _blind_key(self, key: str) -> str:
        return self.key.blind("metadata key", key)

    def _blind_value(self, key: str, value: Any) -> str:
        return self.key.blind("metadata value", key + "\x00" + canonical_json(value))

    # -- history --------------------------------------------------------------------------------
    def event_params(self, event: HistoryEvent) -> list[Any]:
        params = q.event_params(event)
        for index, field in ((5, "before"), (6, "after")):
            if params[index] is not None:
                params[index] = self.key.seal_text(
                    params[index], associated_data(f"history.{field}", event.user_id, event.id)
                )
        params[7] = Jsonb(
            {"sealed": self.key.seal_json(event.details, associated_data("history.details", event.user_id, event.id))}
        )
        return params

    def event_from_row(self, row: Sequence[Any]) -> HistoryEvent:
        event = q.event_from_row(row)
        before, after = (
            None
            if text is None
            else self.key.open_text(text, associated_data(f"history.{field}", event.user_id, event.id))
            for text, field in ((event.before, "before"), (event.after, "after"))
        )
        details = self.key.open_json(
            _sealed_field(event.details, self.key), associated_data("history.details", event.user_id, event.id)
        )
        return replace(event, before=before, after=after, details=details)

    # -- items ----------------------------------------------------------------------------------
    def item_key(self, namespace: str, key: str) -> str:
        return self.key.blind("item key", namespace + "\x00" + key)

    def item_value(self, namespace: str, key: str, value: dict[str, Any]) -> Jsonb:
        stored_key = self.item_key(namespace, key)
        aad = associated_data("items", self.key.user_id, namespace, stored_key)
        return Jsonb({"sealed": self.key.seal_json({"key": key, "value": value}, aad)})

    def item_from(self, namespace: str, stored_key: str, stored: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        aad = associated_data("items", self.key.user_id, namespace, stored_key)
        payload = self.key.open_json(_sealed_field(stored, self.key), aad)
        return payload["key"], payload["value"]

    # -- queries --------------------------------------------------------------------------------
    def filter(self, where: MemoryFilter) -> MemoryFilter:
        metadata = {
            self._blind_key(k): None if v is None else self._blind_value(k, v) for k, v in where.metadata.items()
        }
        hashes = tuple(self.key.blind("content_hash", h) for h in where.content_hashes)
        return replace(where, metadata=metadata, content_hashes=hashes)

    def query_terms(self, user_id: str, query: str) -> list[str]:
        return [self._token(term) for term in search_terms(user_id, query)]


def json_copy(value: Any) -> Any:
    """A copy of a JSON value: its dicts and lists new, everything else (immutable) shared (pure)."""
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_copy(v) for v in value]
    return value


def associated_data(*parts: str) -> bytes:
    """Associated data binding a sealed value to its table, user and row."""
    return "\x00".join(parts).encode("utf-8")


def _sealed_field(stored: dict[str, Any], key: DataKey) -> str:
    sealed = stored.get("sealed") if isinstance(stored, dict) else None
    if not isinstance(sealed, str):
        raise StoreError(
            f"a stored value of user {key.user_id!r} is not sealed: the store holds plain rows although a "
            "master key is configured"
        )
    return sealed


def canonical_json(value: Any) -> str:
    """One spelling per JSON value as PostgreSQL's jsonb compares them (keys sorted, 2.0 written as 2)."""
    return json.dumps(_normalized(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _normalized(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _normalized(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalized(v) for v in value]
    return value
