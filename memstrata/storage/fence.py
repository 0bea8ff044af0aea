"""Erasure as a write fence: work that began before a user's erasure can never write after it.

Every store keeps a per-user *erasure generation* (0 until the first erasure; the user is named by
the SHA-256 of their id, `fence_key`), raised by
`Store.erase_user` in the same transaction that deletes the user's rows. A unit of work (a request,
a queued job, a background session end) reads the generation once, before it reads any of the
user's data, with `fence(store, user_id)`. Each write the store then makes for that user in that
unit compares the stored generation with the one read at the start, inside the write's own
transaction (SQLite: under BEGIN IMMEDIATE; PostgreSQL: under a shared per-user advisory lock that
erasure takes exclusively), and raises `UserErased` instead of writing when they differ. So once an
erasure receipt is issued, no work that started before it writes again, in this process or another.

The fences of the current unit live in a context variable: they follow `contextvars.copy_context()`
onto background threads (`carry_fences`) and never leak between threads or requests. A nested fence
for the same user keeps the outer generation (a job's learn does not re-read it). Writes made outside
any fence are not checked: work that starts after an erasure legitimately writes for a new user of
the same id.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..errors import UserErased

if TYPE_CHECKING:
    from .base import Store

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

_NONE: Mapping[str, int] = MappingProxyType({})
_FENCES: contextvars.ContextVar[Mapping[str, int]] = contextvars.ContextVar("memstrata_write_fences", default=_NONE)


def fence_key(user_id: str) -> str:
    """How the generation table names a user: SHA-256 of the id, so that no erased user id stays in
    the store in clear (the same hash PostgreSQL computes with `sha256()` in its row policy)."""
    return hashlib.sha256(user_id.encode("utf-8")).hexdigest()


def generation_of(store: Store, user_id: str) -> int:
    """The user's current erasure generation (0 before the first erasure)."""
    return int(store.erasure_generation(user_id))


def expected_generation(user_id: str) -> int | None:
    """The generation the current unit of work started under, or None outside any fence."""
    return _FENCES.get().get(user_id)


@contextmanager
def fence(store: Store, user_id: str) -> Iterator[int]:
    """Fence the writes of the enclosed work for `user_id` at the current erasure generation."""
    current = _FENCES.get()
    if user_id in current:
        yield current[user_id]
        return
    generation = generation_of(store, user_id)
    token = _FENCES.set(MappingProxyType({**current, user_id: generation}))
    try:
        yield generation
    finally:
        _FENCES.reset(token)


def check_generation(user_id: str, stored: int) -> None:
    """Raise `UserErased` when the unit of work fenced `user_id` at another generation than `stored`."""
    expected = expected_generation(user_id)
    if expected is not None and expected != stored:
        raise erased(user_id)


def erased(user_id: str) -> UserErased:
    """The error of a fenced write refused because `user_id` was erased since the unit of work began."""
    return UserErased(f"user {user_id!r} was erased while this work was in flight; nothing of it was written")


def carry_fences(fn: Callable[[], T]) -> Callable[[], T]:
    """`fn` to run on another thread under the fences (and other context) of the calling thread."""
    context = contextvars.copy_context()
    return lambda: context.run(fn)


def user_of(argument: object) -> str | None:
    """The user id a layer method acts for, from its first argument: a Scope, a user id string, or
    an object with a `scope` (a session snapshot)."""
    if isinstance(argument, str):
        return argument
    user_id = getattr(argument, "user_id", None)
    if isinstance(user_id, str):
        return user_id
    scope = getattr(argument, "scope", None)
    inner = getattr(scope, "user_id", None)
    return inner if isinstance(inner, str) else None


def fenced(method: F) -> F:
    """Decorate a layer method `(self, scope_or_user_id, ...)` so that its writes are fenced for that
    user. The layer object must have a `store` (or a `semantic` with one)."""

    @functools.wraps(method)
    def wrapper(self: Any, first: object, *args: Any, **kwargs: Any) -> Any:
        user_id = user_of(first)
        if user_id is None or user_id in _FENCES.get():  # unfenced, or fenced by an enclosing unit already
            return method(self, first, *args, **kwargs)
        store = getattr(self, "store", None) or self.semantic.store
        with fence(store, user_id):
            return method(self, first, *args, **kwargs)

    return cast(F, wrapper)
