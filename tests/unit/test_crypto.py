"""Keys and the cipher of crypto-shredding (storage/crypto.py) and the sealed row encoding
(storage/postgres/sealing.py), without a database."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from memstrata.errors import ConfigurationError, StoreError
from memstrata.models import Scope, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.crypto import (
    DataKey,
    KeyCache,
    LocalKeyProvider,
    MasterKeySettings,
    configured_key_provider,
    new_data_key,
)
from memstrata.storage.postgres import queries as q
from memstrata.storage.postgres.keyword import row_terms, search_terms
from memstrata.storage.postgres.sealing import SealedRows, canonical_json

MASTER = bytes(range(32))


def data_key(user: str = "alice") -> DataKey:
    raw = new_data_key()
    return DataKey.of(user, raw, LocalKeyProvider(MASTER).wrap(raw, label=user))


@pytest.mark.parametrize(
    "text", [pytest.param(MASTER.hex(), id="hex"), pytest.param(base64.b64encode(MASTER).decode(), id="base64")]
)
def test_master_key_is_read_as_hex_or_base64(text: str) -> None:
    provider = LocalKeyProvider.from_text(text, source="test")
    assert provider.key_id == LocalKeyProvider(MASTER).key_id


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("correct horse battery staple", id="passphrase"),
        pytest.param(MASTER.hex()[:-2], id="short-hex"),
        pytest.param(base64.b64encode(MASTER[:16]).decode(), id="16-bytes"),
    ],
)
def test_a_master_key_that_is_not_32_bytes_is_a_configuration_error(text: str) -> None:
    with pytest.raises(ConfigurationError, match="MEMSTRATA_MASTER_KEY"):
        LocalKeyProvider.from_text(text, source="MEMSTRATA_MASTER_KEY")


def test_settings_take_the_key_or_its_file_not_both(tmp_path: Path) -> None:
    key_file = tmp_path / "master.key"
    key_file.write_text(MASTER.hex() + "\n")
    from_file = configured_key_provider(MasterKeySettings(master_key_file=key_file))
    assert from_file is not None and from_file.key_id == LocalKeyProvider(MASTER).key_id
    assert configured_key_provider(MasterKeySettings()) is None
    with pytest.raises(ConfigurationError, match="not both"):
        configured_key_provider(MasterKeySettings(master_key=MASTER.hex(), master_key_file=key_file))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="cannot read"):
        configured_key_provider(MasterKeySettings(master_key_file=tmp_path / "missing.key"))


def test_a_wrapped_key_opens_only_with_its_master_key_and_label() -> None:
    provider, raw = LocalKeyProvider(MASTER), new_data_key()
    wrapped = provider.wrap(raw, label="alice")
    assert provider.unwrap(wrapped, label="alice") == raw
    with pytest.raises(StoreError, match="wrong master key"):
        provider.unwrap(wrapped, label="bob")
    with pytest.raises(StoreError, match="wrong master key"):
        LocalKeyProvider(new_data_key()).unwrap(wrapped, label="alice")


def test_sealed_values_are_bound_to_their_key_and_associated_data() -> None:
    key = data_key()
    sealed = key.seal(b"secret", b"row-1")
    assert b"secret" not in sealed and key.open(sealed, b"row-1") == b"secret"
    assert key.seal(b"secret", b"row-1") != sealed, "a random nonce per value"
    for wrong_key, aad in ((key, b"row-2"), (data_key(), b"row-1")):
        with pytest.raises(StoreError, match="does not open"):
            wrong_key.open(sealed, aad)
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(StoreError, match="does not open"):
        key.open(tampered, b"row-1")
    with pytest.raises(StoreError, match="not sealed"):
        key.open_text("plain text!", b"row-1")


def test_tokens_are_keyed_per_user_and_single_lexemes() -> None:
    alice, bob = data_key("alice"), data_key("bob")
    assert alice.token("berlin") == alice.token("berlin") != bob.token("berlin")
    assert alice.token("berlin") != alice.token("paris")
    assert all(len(t) == 12 and base64.urlsafe_b64decode(t) for t in (alice.token("a"), bob.token("b")))


def test_tokens_and_blind_values_keep_their_stored_format() -> None:
    """72 bits of HMAC-SHA256 under the HKDF-derived term key, URL-safe base64: the format every sealed store's
    keyword index and blind index hold, so no speed-up may change it (computed here independently)."""
    import hashlib
    import hmac

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    raw = new_data_key()
    key = DataKey.of("alice", raw, b"")
    term_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"memstrata keyword index v1").derive(raw)

    def expected(message: bytes) -> str:
        return base64.urlsafe_b64encode(hmac.new(term_key, message, hashlib.sha256).digest()[:9]).decode()

    assert key.token("lisbon") == expected(b"t\x00lisbon")
    assert key.blind("item key", "profile\x00city") == expected(b"item key\x00profile\x00city")
    rows = SealedRows(key)
    record = new_record(scope=Scope("alice"), content="Lisbon, Lisbon and again Lisbon")
    assert set(rows.record_terms(record).frequencies) == {
        expected(b"t\x00" + t.encode()) for t in row_terms("alice", record).frequencies
    }


def test_key_cache_is_bounded_and_drops_on_request() -> None:
    cache = KeyCache(size=2)
    keys = [data_key(user) for user in ("a", "b", "c")]
    for key in keys:
        cache.put(key)
    assert len(cache) == 2 and cache.get("a") is None and cache.get("c") is keys[2]
    cache.drop("c")
    assert cache.get("c") is None


def test_sealed_rows_round_trip_and_hide_text() -> None:
    rows = SealedRows(data_key())
    record = new_record(scope=Scope("alice"), content="Alice moved to Lisbon", metadata={"city": "Lisbon", "n": 2.0})
    terms = rows.record_terms(record)
    params = rows.record_params(record, terms)
    visible = repr(params)
    assert sorted(terms.frequencies) == sorted(rows.key.token(t) for t in row_terms("alice", record).frequencies)
    assert "Lisbon" not in visible and "Alice" not in visible and record.content_hash not in visible
    stored = list(params[: len(q.COLUMNS)])
    stored[q.COLUMNS.index("metadata")] = params[q.COLUMNS.index("metadata")].obj
    assert rows.record_from_row(stored) == record
    where = rows.filter(MemoryFilter(metadata={"n": 2, "absent": None}, content_hashes=(record.content_hash,)))
    assert where.metadata[next(iter(where.metadata))] == stored[q.COLUMNS.index("metadata")][rows._blind_key("n")]
    assert list(where.content_hashes) == [stored[q.COLUMNS.index("content_hash")]]
    query = "Where does Alice live? Lisbon!"
    assert rows.query_terms("alice", query) == [rows.key.token(t) for t in search_terms("alice", query)]
    assert "lisbon" in search_terms("alice", query)


def test_canonical_json_spells_equal_jsonb_values_alike() -> None:
    assert canonical_json({"b": 1.0, "a": [2.0, True]}) == canonical_json({"a": [2, True], "b": 1})
    assert canonical_json(True) != canonical_json(1)
