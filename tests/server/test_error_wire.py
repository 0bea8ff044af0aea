"""Every class of memstrata's exception tree crosses the wire as itself: raised inside a route of a real
server, it answers a problem document naming the class, and `MemoryClient` / `AsyncMemoryClient` raise
that same class with the server's message. The classes are walked from the tree at collection time,
so a class added to `memstrata.errors` is tested here with no edit."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import pytest
from fastapi.routing import APIRoute

from memstrata import errors
from memstrata.aio import AsyncMemoryClient
from memstrata.client import MemoryClient
from memstrata.errors import MemstrataError
from memstrata.server.app import create_app
from memstrata.server.config import ServerConfig

from .conftest import open_memory, serve


def tree(root: type[MemstrataError] = MemstrataError) -> list[type[MemstrataError]]:
    found = [root]
    for sub in root.__subclasses__():
        found += tree(sub)
    return list(dict.fromkeys(found))


CLASSES = tree()
BY_NAME = {kind.__name__: kind for kind in CLASSES}


def raised(kind: type[MemstrataError]) -> MemstrataError:
    return kind(f"raised-{kind.__name__}")


@pytest.fixture(scope="module")
def raising_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real server whose `GET /v1/users/{user_id}/memories/{memory_id}` raises the class named by the
    memory id (a test-only route placed before the real one), so the clients' own `get` reaches it."""
    memory = open_memory(tmp_path_factory.mktemp("errors") / "memstrata.db")
    app = create_app(memory=memory, config=ServerConfig(auth=False, mcp=False, ui=False, worker=False))

    def raise_named(user_id: str, memory_id: str) -> None:
        raise raised(BY_NAME[memory_id])

    route = APIRoute("/v1/users/{user_id}/memories/{memory_id}", raise_named, methods=["GET"])
    app.router.routes.insert(0, route)
    try:
        with serve(app) as url:
            yield url
    finally:
        memory.close()


def test_the_tree_has_unique_names_and_a_status_for_every_class() -> None:
    from memstrata.server.errors import STATUS, status_for

    assert len(BY_NAME) == len(CLASSES) >= 14, "two classes of the tree share a name"
    assert all(400 <= status_for(kind) < 600 for kind in CLASSES)
    assert set(STATUS) <= set(CLASSES)


@pytest.mark.parametrize("kind", CLASSES, ids=lambda k: k.__name__)
def test_every_error_class_crosses_the_wire_as_itself(kind: type[MemstrataError], raising_url: str) -> None:
    message = str(raised(kind))
    response = httpx.get(f"{raising_url}/v1/users/alice/memories/{kind.__name__}", timeout=30)
    assert 400 <= response.status_code < 600
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["error"] == kind.__name__ and response.json()["detail"] == message

    with MemoryClient(raising_url) as client, pytest.raises(MemstrataError) as caught:
        client.get(kind.__name__, scope="alice")
    assert type(caught.value) is kind and message in str(caught.value)

    async def get_async() -> None:
        async with AsyncMemoryClient(base_url=raising_url) as aclient:
            await aclient.get(kind.__name__, scope="alice")

    with pytest.raises(MemstrataError) as caught_async:
        anyio.run(get_async)
    assert type(caught_async.value) is kind and message in str(caught_async.value)


def test_a_class_added_to_the_tree_later_is_found(raising_url: str) -> None:
    class AddedLater(errors.UsageError):
        """Defined after the client was imported (as a class another module adds would be)."""

    AddedLater.__module__ = "memstrata.errors"
    BY_NAME[AddedLater.__name__] = AddedLater
    try:
        with MemoryClient(raising_url) as client, pytest.raises(AddedLater, match="raised-AddedLater"):
            client.get("AddedLater", scope="alice")
    finally:
        del BY_NAME[AddedLater.__name__]


def test_an_unnamed_error_falls_back_on_its_status(raising_url: str) -> None:
    with MemoryClient(raising_url) as client, pytest.raises(errors.InvalidInput, match="HTTP 422"):
        client.search("x", scope="alice", k=0)
