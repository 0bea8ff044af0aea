"""Crypto-shredding on PostgreSQL: with a master key, a `pg_dump` holds no readable payload, and once a
user is erased the sealed rows of a dump taken BEFORE the erasure open with no key the system holds.

One user writes unique marker strings through every layer (add, update, supersede, learn, messages
with a rolling summary, consolidation, entities, profile, user context, procedures, queue and
LangGraph items), next to another user. The real `pg_dump` binary dumps the test database.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memstrata import Memory, StoreError
from memstrata.buffer.inprocess import InProcessBuffer
from memstrata.cli import main
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.filters import SearchFilter
from memstrata.layers.conversation import Conversation
from memstrata.storage.crypto import DataKey, KeyProvider, LocalKeyProvider, new_data_key
from memstrata.storage.postgres import PostgresStore
from memstrata.storage.postgres.sealing import associated_data
from tests.lifecycle.conftest import T0
from tests.lifecycle.test_erasure import Markers, populate
from tests.support.clock import Clock

pytestmark = pytest.mark.postgres


@dataclass
class Deployment:
    app_url: str
    owner_url: str
    master_key: bytes | None

    @property
    def provider(self) -> KeyProvider | None:
        return None if self.master_key is None else LocalKeyProvider(self.master_key)

    def open(self, provider: KeyProvider | None = None) -> PostgresStore:
        return PostgresStore.open(self.app_url, owner_url=self.owner_url, key_provider=provider or self.provider)

    def pg_dump(self) -> str:
        from psycopg.conninfo import make_conninfo

        from tests.support.pg import admin_url, database_of

        conninfo = make_conninfo(admin_url(), dbname=database_of(self.app_url))
        done = subprocess.run(["pg_dump", "--no-owner", "-d", conninfo], check=True, capture_output=True, timeout=120)
        return done.stdout.decode("utf-8")

    def admin(self) -> psycopg.Connection[Any]:
        from tests.support.pg import connect_admin, database_of

        return connect_admin(database_of(self.app_url))


@pytest.fixture
def deployment(request: pytest.FixtureRequest) -> Iterator[Deployment]:
    from tests.support.pg import postgres_urls

    sealed = getattr(request, "param", "sealed") == "sealed"
    with postgres_urls() as (app_url, owner_url):
        yield Deployment(app_url, owner_url, new_data_key() if sealed else None)


def write_everything(store: PostgresStore, users: list[Markers]) -> Memory:
    clock = Clock()
    memory = Memory(store=store, embedder=HashingEmbedder(64), clock=clock, track_access=False)
    buffer = InProcessBuffer(clock=clock)
    conversation = Conversation(
        store=store, semantic=memory._layers.semantic, buffer=buffer, clock=clock, window_size=4, summary_threshold=3
    )
    for marks in users:
        populate(memory, conversation, marks)
        # what extraction keeps of these is its own business: counted in every scan, required in none
        memory.learn(
            f"My favourite tea is {marks.new(removed=True)}. I work at {marks.new(removed=True)} Labs.",
            scope=marks.user,
        )
    return memory


def written(marks: Markers) -> set[str]:
    """The markers the user's payloads hold (the user id itself is a plain identifier in every row)."""
    return marks.live - {marks.user}


@pytest.mark.parametrize("deployment", ["sealed", "plain"], indirect=True)
def test_a_dump_holds_no_payload_text_when_sealed(deployment: Deployment) -> None:
    alice = Markers(f"u{secrets.token_hex(4)}")
    with deployment.open() as store:
        memory = write_everything(store, [alice])
        assert memory.search(sorted(written(alice))[0], scope=alice.user), "the markers were stored"
        dump = deployment.pg_dump().encode()
    found = alice.found_in(dump) - {alice.user}
    if deployment.provider is None:
        assert found >= written(alice), "the plain dump shows every marker: the scan can see them"
    else:
        assert found == set(), f"{len(found)} markers readable in the dump of a sealed store"


@pytest.mark.parametrize("deployment", ["sealed"], indirect=True)
def test_search_filters_and_export_read_back_the_sealed_payloads(deployment: Deployment) -> None:
    alice = Markers(f"u{secrets.token_hex(4)}")
    with deployment.open() as store:
        memory = write_everything(store, [alice])
        exported = json.dumps(memory.export_user(scope=alice.user).model_dump(mode="json"))
        assert alice.found_in(exported.encode()) >= written(alice) - alice.removed
        in_content = [m for m in written(alice) if any(m in r.content for r in memory.list(scope=alice.user))]
        assert len(in_content) >= 5
        for marker in in_content:
            [best, *_] = memory.search(f"what about {marker}?", scope=alice.user, strategy="keyword")
            assert marker in best.memory.content, marker
        tagged = [r for r in memory.list(scope=alice.user) if "tag" in r.metadata]
        assert tagged
        for record in tagged:
            found = memory.list(scope=alice.user, filters=SearchFilter(metadata={"tag": record.metadata["tag"]}))
            assert [r.id for r in found] == [record.id]


@pytest.mark.parametrize("deployment", ["sealed"], indirect=True)
def test_after_erasure_the_dump_taken_before_opens_with_no_key_the_system_holds(deployment: Deployment) -> None:
    assert deployment.provider is not None
    alice, bob = Markers(f"u{secrets.token_hex(4)}"), Markers(f"o{secrets.token_hex(4)}")
    with deployment.open() as store:
        memory = write_everything(store, [alice, bob])
        dump = deployment.pg_dump()
        sealed = sealed_values(dump, alice.user)
        assert len(sealed) > 50, "the dump holds the user's sealed rows"
        alice_key = live_keys(deployment, deployment.provider)[alice.user]
        opened = b" ".join(alice_key.open(raw, aad) for raw, aad in sealed)
        assert alice.found_in(opened) >= written(alice) - alice.removed, "before erasure, the user's key opens them"

        memory.erase_user(scope=alice.user)

        keys = live_keys(deployment, deployment.provider)
        assert alice.user not in keys and bob.user in keys
        assert deployment.master_key is not None
        master_as_data_key = DataKey.of(alice.user, deployment.master_key, b"")
        for key in [*keys.values(), master_as_data_key]:
            for raw, aad in sealed:
                with pytest.raises(StoreError, match="does not open"):
                    key.open(raw, aad)
        assert bob.found_in(json.dumps(memory.export_user(scope=bob.user).model_dump(mode="json")).encode())


@pytest.mark.parametrize("deployment", ["sealed"], indirect=True)
def test_master_key_rules_when_opening(deployment: Deployment) -> None:
    alice = Markers(f"u{secrets.token_hex(4)}")
    with deployment.open() as store:
        memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
        record = memory.add(f"{alice.user} likes {alice.new()}", scope=alice.user)
    before = table_rows(deployment)
    with pytest.raises(StoreError, match="wrong master key"):
        deployment.open(LocalKeyProvider(new_data_key()))
    with pytest.raises(StoreError, match="is encrypted .*MEMSTRATA_MASTER_KEY"):
        PostgresStore.open(deployment.app_url, owner_url=deployment.owner_url)
    assert table_rows(deployment) == before, "a refused open changed nothing"
    with deployment.open() as store:
        assert [r.content for r in store.get(alice.user, [record.id])] == [record.content]


@pytest.mark.parametrize("deployment", ["plain"], indirect=True)
def test_a_master_key_is_refused_for_a_store_holding_plain_rows(deployment: Deployment) -> None:
    with deployment.open() as store:
        Memory(store=store, embedder=HashingEmbedder(64), track_access=False).add("plain text", scope="alice")
    with pytest.raises(StoreError, match="holds unencrypted memories"):
        deployment.open(LocalKeyProvider(new_data_key()))


@pytest.mark.parametrize("deployment", ["sealed"], indirect=True)
def test_a_ciphertext_moved_to_another_row_or_user_does_not_open(deployment: Deployment) -> None:
    with deployment.open() as store:
        memory = Memory(store=store, embedder=HashingEmbedder(64), track_access=False)
        a1 = memory.add("alice first", scope="alice", created_at=T0)
        a2 = memory.add("alice second", scope="alice", created_at=T0)
        b1 = memory.add("bob first", scope="bob", created_at=T0)
        assert [r.content for r in store.get("alice", [a2.id])] == ["alice second"]
        with deployment.admin() as admin:
            admin.execute(
                "UPDATE memories SET content = (SELECT content FROM memories WHERE id = %s) WHERE id = %s",
                [a1.id, a2.id],
            )
            admin.execute(
                "UPDATE memories SET content = (SELECT content FROM memories WHERE id = %s) WHERE id = %s",
                [a1.id, b1.id],
            )
        with pytest.raises(StoreError, match="does not open"):
            store.get("alice", [a2.id])
        with pytest.raises(StoreError, match="does not open"):
            store.get("bob", [b1.id])
        assert [r.content for r in store.get("alice", [a1.id])] == ["alice first"]
        with pytest.raises(StoreError, match="does not open"):  # a1 opened first in the same read: a2 still fails
            store.get("alice", [a1.id, a2.id])


@pytest.mark.parametrize("deployment", ["sealed"], indirect=True)
def test_opened_payloads_kept_by_a_process_serve_only_what_the_database_returns(deployment: Deployment) -> None:
    """Two processes (two stores, each with its own key and payload caches) on one database: what one of them
    opened before is never served once the other erased the user, rewrote a memory, or a row's sealed
    value was replaced, and the erased user's opened payloads are dropped as soon as the process reads."""
    with deployment.open() as reader, deployment.open() as other:
        memory, elsewhere = (Memory(store=s, embedder=HashingEmbedder(64), track_access=False) for s in (reader, other))
        kept = [memory.add(f"alice saw the {w} lighthouse", scope="alice", created_at=T0) for w in ("red", "blue")]
        found = memory.search("lighthouse", scope="alice", k=5)
        assert {h.memory.id for h in found} == {r.id for r in kept}
        assert memory.search("lighthouse", scope="alice", k=5) == found, "read again, from the opened payloads"
        opened = reader._keys.opened if reader._keys is not None else None
        assert opened is not None and len(opened) >= 2 and opened.hits >= 2

        elsewhere.update(kept[0].id, content="alice saw the green lighthouse", scope="alice")
        assert {h.memory.content for h in memory.search("lighthouse", scope="alice", k=5)} == {
            "alice saw the green lighthouse",
            "alice saw the blue lighthouse",
        }

        with deployment.admin() as admin:  # the red one's old sealed value copied over the blue one's row
            admin.execute(
                "UPDATE memories SET content = (SELECT content FROM memories WHERE id = %s) WHERE id = %s",
                [kept[0].id, kept[1].id],
            )
        with pytest.raises(StoreError, match="does not open"):
            memory.search("lighthouse", scope="alice", k=5)

        elsewhere.erase_user(scope="alice")
        assert memory.search("lighthouse", scope="alice", k=5) == []
        assert len(opened) == 0, "the erased user's opened payloads were dropped when the reader saw the key gone"
        memory.add("alice saw the white lighthouse", scope="alice", created_at=T0)
        assert [h.memory.content for h in memory.search("lighthouse", scope="alice", k=5)] == [
            "alice saw the white lighthouse"
        ]


# -- reading the dump ------------------------------------------------------------------------------


def copy_rows(dump: str, table: str) -> list[dict[str, str | None]]:
    """The rows of `table` in a plain-format dump (COPY ... FROM stdin blocks)."""
    match = re.search(rf"^COPY \S+\.{table} \((.*?)\) FROM stdin;\n(.*?)^\\\.$", dump, re.M | re.S)
    assert match, f"no COPY block for {table} in the dump"
    columns = [c.strip() for c in match.group(1).split(",")]
    rows = []
    for line in match.group(2).splitlines():
        values = [None if v == r"\N" else v.replace("\\\\", "\\") for v in line.split("\t")]
        rows.append(dict(zip(columns, values, strict=True)))
    return rows


def sealed_values(dump: str, user: str) -> list[tuple[bytes, bytes]]:
    """Every sealed payload of `user` in the dump, with the associated data it was sealed under."""
    found: list[tuple[bytes, bytes]] = []
    for row in copy_rows(dump, "memories"):
        if row["user_id"] == user:
            found.append((_raw(row["content"]), associated_data("memories", user, str(row["id"]))))
    for row in copy_rows(dump, "history"):
        if row["user_id"] == user:
            for field in ("before", "after"):
                if row[field] is not None:
                    found.append((_raw(row[field]), associated_data(f"history.{field}", user, str(row["id"]))))
            details = json.loads(str(row["details"]))["sealed"]
            found.append((_raw(details), associated_data("history.details", user, str(row["id"]))))
    for row in copy_rows(dump, "items"):
        if row["user_id"] == user:
            value = json.loads(str(row["value"]))["sealed"]
            found.append((_raw(value), associated_data("items", user, str(row["namespace"]), str(row["key"]))))
    return found


def _raw(text: str | None) -> bytes:
    return base64.b64decode(str(text), validate=True)


def live_keys(deployment: Deployment, provider: KeyProvider) -> dict[str, DataKey]:
    """Every data key the store holds now, unwrapped with the master key."""
    with deployment.admin() as admin:
        rows = admin.execute("SELECT user_id, wrapped FROM user_keys").fetchall()
    return {user: DataKey.of(user, provider.unwrap(bytes(w), label=user), bytes(w)) for user, w in rows}


def table_rows(deployment: Deployment) -> list[Any]:
    with deployment.admin() as admin:
        return admin.execute(
            "SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM history), (SELECT count(*) FROM items), "
            "(SELECT count(*) FROM user_keys), (SELECT md5(string_agg(content, '' ORDER BY id)) FROM memories)"
        ).fetchall()


@pytest.mark.parametrize("deployment", ["sealed"], indirect=True)
def test_rotating_the_master_key_retires_the_key_rows_of_older_dumps(
    deployment: Deployment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dump keeps the erased user's wrapped key row, and the master key still opens it: that is why
    backups need the rotation. After `store rotate-master-key` and the old key's destruction, the rows
    of the dump open with nothing the system holds, while the remaining users read on under the new key."""
    old = deployment.provider
    assert old is not None and deployment.master_key is not None
    alice, bob = Markers(f"u{secrets.token_hex(4)}"), Markers(f"o{secrets.token_hex(4)}")
    with deployment.open() as store:
        memory = write_everything(store, [alice, bob])
        dump = deployment.pg_dump()
        memory.erase_user(scope=alice.user)
    sealed = sealed_values(dump, alice.user)
    [wrapped] = [
        bytes.fromhex(str(r["wrapped"])[2:]) for r in copy_rows(dump, "user_keys") if r["user_id"] == alice.user
    ]
    from_dump = DataKey.of(alice.user, old.unwrap(wrapped, label=alice.user), wrapped)
    assert alice.found_in(b" ".join(from_dump.open(raw, aad) for raw, aad in sealed)), "the old master key opens it"

    new_key = new_data_key()
    key_file = tmp_path / "new.key"
    key_file.write_text(new_key.hex() + "\n")
    monkeypatch.setenv("MEMSTRATA_MASTER_KEY", deployment.master_key.hex())
    monkeypatch.setenv("MEMSTRATA_STORE_OWNER", deployment.owner_url)
    assert main(["--store", deployment.app_url, "store", "rotate-master-key", "--new-key-file", str(key_file)]) == 0
    deployment.master_key = new_key  # the old key is destroyed: the system now holds only the new one

    new = deployment.provider
    assert new is not None
    with pytest.raises(StoreError, match="does not open with the configured master key"):
        new.unwrap(wrapped, label=alice.user)
    for key in live_keys(deployment, new).values():
        for raw, aad in sealed:
            with pytest.raises(StoreError, match="does not open"):
                key.open(raw, aad)
    with pytest.raises(StoreError, match="wrong master key"):
        deployment.open(old)
    with deployment.open() as store:
        exported = Memory(store=store, embedder=HashingEmbedder(64)).export_user(scope=bob.user)
        assert bob.found_in(json.dumps(exported.model_dump(mode="json")).encode()) >= written(bob) - bob.removed
