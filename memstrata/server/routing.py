"""`ShapedRoute`: the route class of every REST router, applying the response rule of `shaping`.

A route that a key unable to read stored data may call (one needing `write` or `erase`, or any valid
key) answers through `shaping.shape` with the caller's permissions, and its OpenAPI response is the
model or its receipt (`anyOf`). Routes needing `read`, `export` or `admin`, and public routes (no
key), answer as they are.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any, Union

from fastapi.datastructures import DefaultPlaceholder
from fastapi.params import Depends
from fastapi.routing import APIRoute

from .auth import Principal
from .deps import is_key, permission_of
from .roles import Permission
from .shaping import may_withhold, receipt_type, shape

_PUBLIC = object()
"""The `_needed` of a route that takes no key."""


def _needed(hints: dict[str, Any]) -> Permission | None | object:
    """The permission the endpoint's key dependency requires (None: any valid key), or `_PUBLIC`."""
    for hint in hints.values():
        for meta in getattr(hint, "__metadata__", ()):
            if isinstance(meta, Depends) and meta.dependency is not None and is_key(meta.dependency):
                return permission_of(meta.dependency)
    return _PUBLIC


def _shaped(endpoint: Callable[..., Any], hints: dict[str, Any]) -> Callable[..., Any]:
    """`endpoint`, answering through `shape` with the permissions of the caller's `Principal`."""
    signature = inspect.signature(endpoint)
    parameters = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()]

    def permissions(arguments: dict[str, Any]) -> frozenset[Permission]:
        principal = next((v for v in arguments.values() if isinstance(v, Principal)), None)
        return principal.permissions if principal is not None else frozenset()

    wrapper: Callable[..., Any]
    if inspect.iscoroutinefunction(endpoint):

        async def answer_async(**arguments: Any) -> Any:
            return shape(await endpoint(**arguments), permissions(arguments))

        wrapper = answer_async
    else:

        def answer(**arguments: Any) -> Any:
            return shape(endpoint(**arguments), permissions(arguments))

        wrapper = answer
    functools.update_wrapper(wrapper, endpoint)
    del wrapper.__dict__["__wrapped__"]  # FastAPI must read the signature set below, not the endpoint's
    wrapper.__dict__["__signature__"] = signature.replace(parameters=parameters)
    return wrapper


class ShapedRoute(APIRoute):
    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        hints = typing.get_type_hints(endpoint, include_extras=True)
        model = kwargs.get("response_model")
        if model is None or isinstance(model, DefaultPlaceholder):
            model = hints.get("return")
        needed = _needed(hints)
        if model is not None and needed is not _PUBLIC and may_withhold(typing.cast(Permission | None, needed)):
            reduced = receipt_type(model)
            if reduced != model:
                either: Any = Union[tuple((model, reduced))]  # noqa: UP007
                kwargs["response_model"] = either
                responses = kwargs.get("responses") or {}
                kwargs["responses"] = {  # other success statuses (202 queued) answer the same two shapes
                    status: {**spec, "model": either} if spec.get("model") is model else spec
                    for status, spec in responses.items()
                }
                endpoint = _shaped(endpoint, hints)
        super().__init__(path, endpoint, **kwargs)
