"""docs/postgres.md's Citus setup, run verbatim on password authentication between nodes.

Three fresh node clusters (`scripts/citus.sh node-up PORT password`: every TCP connection, the
superuser's included, authenticates with SCRAM; only the Unix socket trusts, which is how this test
connects as the superuser). The blocks marked `<!-- citus-setup: ... -->` are taken from the page and
run in order: the every-node SQL on each node through psql, the coordinator's SQL there, the shell
block's `memstrata` command through the real CLI. Only the page's example hosts and ports are replaced.
Then the application role, over TCP with its password, writes, searches and erases a user.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from memstrata.cli import main as cli_main
from memstrata.embedders.hashing import HashingEmbedder
from memstrata.models import EventType, Scope, new_event, new_record
from memstrata.storage.base import MemoryFilter
from memstrata.storage.postgres import PostgresStore
from tests.citus.test_operations import citus_sh
from tests.support.citus import connect_coordinator

pytestmark = pytest.mark.citus

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "postgres.md"
MARKED = re.compile(r"^[ \t]*<!-- citus-setup: (.+?) -->\n([ \t]*)```(\w+)\n(.*?)^\2```", re.DOTALL | re.MULTILINE)
PORTS = {"10.0.0.1": 5450, "10.0.0.2": 5451, "10.0.0.3": 5452}
"""The page's example hosts (all on port 5432 there) -> the port of the local node playing each."""
SOCKET_DIR = "/var/run/postgresql"


def marked_blocks() -> list[tuple[str, str, str]]:
    """(where it runs, language, body) of every `citus-setup` block, in page order."""
    text = PAGE.read_text(encoding="utf-8")
    return [(m.group(1), m.group(3), textwrap.dedent(m.group(2) + m.group(4))) for m in MARKED.finditer(text)]


def localized(body: str) -> str:
    """The page's hosts and ports replaced by the local nodes'."""
    for host, port in PORTS.items():
        body = body.replace(f"'{host}', 5432", f"'127.0.0.1', {port}").replace(f"{host}:5432", f"127.0.0.1:{port}")
    return body


def psql(port: int, dbname: str, script: str) -> None:
    """`script` through psql as the superuser `postgres`, over the Unix socket, stopping at the first error."""
    subprocess.run(
        ["psql", "-h", SOCKET_DIR, "-p", str(port), "-U", "postgres", "-d", dbname, "-v", "ON_ERROR_STOP=1", "-qX"],
        input=script,
        text=True,
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture
def password_nodes() -> Iterator[dict[str, int]]:
    with connect_coordinator():
        pass  # skips (fails under CI) when the Citus build is not there
    try:
        for port in PORTS.values():
            citus_sh("node-up", str(port), "password")
        yield PORTS
    finally:
        for port in PORTS.values():
            citus_sh("node-drop", str(port))


def test_the_pages_setup_blocks_are_found() -> None:
    wheres = [(where.split(",")[0], language) for where, language, _ in marked_blocks()]
    assert wheres == [("every node", "sql"), ("coordinator", "sql"), ("shell", "sh")]


def test_the_documented_setup_runs_verbatim_with_password_authentication(password_nodes: dict[str, int]) -> None:
    every_node, coordinator, shell = (localized(body) for _, _, body in marked_blocks())
    superuser_password = re.search(r"'postgres', 'password=([^']+)'", coordinator)
    assert superuser_password, "the coordinator block gives the superuser's password"
    roles = dict(re.findall(r"CREATE ROLE (\w+) LOGIN PASSWORD '([^']+)'", every_node))
    assert set(roles) == {"memstrata_owner", "memstrata_app"}
    for port in password_nodes.values():  # the operator's part the page states in prose
        psql(port, "postgres", f"ALTER ROLE postgres PASSWORD '{superuser_password.group(1)}'")
        psql(port, "postgres", every_node)
    psql(password_nodes["10.0.0.1"], "memstrata", coordinator)
    for words in (shlex.split(line) for line in shell.splitlines() if line.strip()):
        assert words[0] == "memstrata"
        assert cli_main(words[1:]) == 0

    coordinator_port = password_nodes["10.0.0.1"]
    app_url = f"postgresql://memstrata_app:{roles['memstrata_app']}@127.0.0.1:{coordinator_port}/memstrata"
    owner_url = f"postgresql://memstrata_owner:{roles['memstrata_owner']}@127.0.0.1:{coordinator_port}/memstrata"
    embed = HashingEmbedder(64)
    store = PostgresStore.open(app_url, owner_url=owner_url)
    try:
        assert store.row_security_enforced
        store.bind_embedder("hashing-64", 64)
        for user in ("alice", "bob", "carol"):
            record = new_record(scope=Scope(user), content=f"{user} drinks green tea")
            store.save(
                user,
                [record],
                [new_event(record, EventType.ADD, after=record.content)],
                embed.embed_documents([record.content]),
            )
            hits = store.keyword_search(user, "green tea", MemoryFilter(), limit=5)
            assert [h.record.id for h in hits] == [record.id]
        assert store.erase_user("bob")["memories"] == 1
        assert sorted(store.user_ids()) == ["alice", "carol"]
    finally:
        store.close()
    with psycopg.connect(app_url) as app:  # the shards really are on the workers, reached with passwords
        nodes = app.execute("SELECT count(*) FROM citus_get_active_worker_nodes()").fetchone()
    assert nodes == (2,)
