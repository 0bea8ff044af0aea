"""The Python API raises only memstrata's own errors: `refuse_foreign_errors(Memory)`.

Arguments are validated where they are used; an argument of a type no check anticipated (`k=1.5`,
an entity name of None, an object as metadata) would still surface as TypeError, AttributeError,
RecursionError or UnicodeError from deep inside. At the public boundary those become `InvalidInput`
naming the method, chained to the original for debugging, so callers can rely on one exception tree
(memstrata/errors.py). memstrata's own errors pass through unchanged.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import InvalidInput

C = TypeVar("C", bound=type)

FOREIGN = (TypeError, ValueError, AttributeError, RecursionError, UnicodeError, OverflowError)
"""What a bad argument raises from Python or a library when no check caught it first."""


def _guarded(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except FOREIGN as exc:
            raise InvalidInput(f"invalid argument to {name}(): {type(exc).__name__}: {exc}") from exc

    return wrapper


def refuse_foreign_errors(cls: C) -> C:
    """Wrap every public method of `cls` (its own and inherited) so that FOREIGN errors become
    `InvalidInput`. Properties, cached properties and dunder methods are left alone."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(cls, name)
        if inspect.isfunction(attr):
            setattr(cls, name, _guarded(name, attr))
    return cls
