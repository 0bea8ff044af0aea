"""Failures: unreachable servers and bad credentials become StoreError with the password hidden,
and a statement failing inside a method's transaction leaves nothing half-written."""

from __future__ import annotations

import socket

import psycopg
import pytest

from memstrata.embedders.hashing import HashingEmbedder
from memstrata.errors import EmbeddingMismatch, InvalidInput, StoreError
from memstrata.models import EventType, Scope, new_event, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.postgres import PostgresStore, redact_url
from tests.support.pg import connect_admin, database_of, postgres_urls

EMBED = HashingEmbedder(64)
SECRET = "s3cr3t-Pa55"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param(
            f"postgresql://app:{SECRET}@db.internal:5432/mem",
            "postgresql://app:***@db.internal:5432/mem",
            id="url-password",
        ),
        pytest.param(
            f"postgresql://app@db/mem?sslmode=require&password={SECRET}",
            "postgresql://app@db/mem?sslmode=require&password=***",
            id="query-password",
        ),
        pytest.param(
            f"host=db user=app password={SECRET} dbname=mem",
            "host=db user=app password=*** dbname=mem",
            id="dsn-password",
        ),
        pytest.param(f"host=db password='{SECRET} x' dbname=mem", "host=db password=*** dbname=mem", id="dsn-quoted"),
        pytest.param("postgresql://app@db/mem", "postgresql://app@db/mem", id="no-password"),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected
    assert SECRET not in redact_url(url)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_down_server_is_a_store_error_without_the_password() -> None:
    url = f"postgresql://app:{SECRET}@127.0.0.1:{free_port()}/mem"
    with pytest.raises(StoreError) as caught:
        PostgresStore.open(url, connect_timeout=2)
    message = str(caught.value)
    assert SECRET not in message and "postgresql://app:***@127.0.0.1" in message
    assert isinstance(caught.value.__cause__, psycopg.OperationalError)


@pytest.mark.postgres
def test_wrong_credentials_are_a_store_error_without_the_password(app_url: str) -> None:
    host_part = app_url.rsplit("@", 1)[1]
    url = f"postgresql://memstrata_no_such_role:{SECRET}@{host_part}"
    with pytest.raises(StoreError, match="memstrata_no_such_role") as caught:
        PostgresStore.open(url)
    assert SECRET not in str(caught.value) and ":***@" in str(caught.value)


@pytest.mark.postgres
def test_url_attribute_and_query_errors_are_redacted(pg_store: PostgresStore, app_url: str) -> None:
    password = psycopg.conninfo.conninfo_to_dict(app_url)["password"]
    assert password and str(password) not in pg_store.url and ":***@" in pg_store.url
    with pytest.raises(StoreError) as caught, pg_store.transaction("alice") as cur:
        cur.execute("SELECT no_such_column FROM memories")
    assert pg_store.url in str(caught.value) and str(password) not in str(caught.value)


@pytest.mark.postgres
def test_closed_store_raises_store_error(app_url: str, owner_url: str) -> None:
    store = PostgresStore.open(app_url, owner_url=owner_url)
    store.close()
    with pytest.raises(StoreError):
        store.list_memories("alice", MemoryFilter())


@pytest.mark.postgres
def test_save_failing_mid_transaction_writes_nothing(pg_store: PostgresStore) -> None:
    """The second statement fails on the server (duplicate history id): the record goes too."""
    first = new_record(scope=Scope("alice"), content="first record")
    second = new_record(scope=Scope("alice"), content="second record")
    event = new_event(first, EventType.ADD, after="first record")
    with pytest.raises(StoreError, match="history_pkey"):
        pg_store.save("alice", [first, second], [event, event], EMBED.embed_documents(["first", "second"]))
    assert pg_store.get("alice", [first.id, second.id]) == []
    assert pg_store.all_history("alice") == []


@pytest.mark.postgres
def test_save_with_one_bad_record_writes_nothing(pg_store: PostgresStore) -> None:
    good = new_record(scope=Scope("alice"), content="good record")
    bad = new_record(scope=Scope("alice"), content="bad record", metadata={"note": "nul \x00 inside"})
    with pytest.raises(InvalidInput, match=r"metadata\.note"):  # refused before the transaction: 422, not 503
        pg_store.save("alice", [good, bad], [], EMBED.embed_documents(["good", "bad"]))
    assert pg_store.get("alice", [good.id, bad.id]) == []


@pytest.mark.postgres
def test_delete_failing_mid_transaction_keeps_rows_and_history(pg_store: PostgresStore) -> None:
    record = new_record(scope=Scope("alice"), content="keep my text")
    added = new_event(record, EventType.ADD, after="keep my text")
    pg_store.save("alice", [record], [added], EMBED.embed_documents(["keep my text"]))
    with pytest.raises(StoreError):
        pg_store.delete("alice", [record.id], [added])  # re-using an event id fails after the DELETE ran
    assert [r.id for r in pg_store.get("alice", [record.id])] == [record.id]
    assert [e.after for e in pg_store.history("alice", record.id)] == ["keep my text"]


@pytest.mark.postgres
def test_query_vector_of_another_dimension_is_an_embedding_mismatch(pg_store: PostgresStore) -> None:
    with pytest.raises(EmbeddingMismatch):
        pg_store.vector_search("alice", EMBED.embed_query("x")[:32], MemoryFilter(), limit=3)


@pytest.mark.postgres
def test_missing_pgvector_is_a_clear_store_error() -> None:
    with postgres_urls() as (app_url, owner_url):
        with connect_admin(database_of(app_url)) as admin:
            admin.execute("DROP EXTENSION vector")
        with pytest.raises(StoreError, match="CREATE EXTENSION vector"):
            PostgresStore.open(app_url, owner_url=owner_url)


@pytest.mark.postgres
def test_single_url_mode_migrates_through_the_app_url(urls: tuple[str, str]) -> None:
    """Without owner_url, `url` runs the migrations (it must own the schema): here the owner role."""
    _, owner_url = urls
    with PostgresStore.open(owner_url) as store:
        store.bind_embedder("hashing-64", 64)
        record = new_record(scope=Scope("alice"), content="single url")
        store.save("alice", [record], [], EMBED.embed_documents(["single url"]))
        assert [r.id for r in store.get("alice", [record.id])] == [record.id]
