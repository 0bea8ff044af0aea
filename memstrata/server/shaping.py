"""What a response shows to which key: the one rule behind every REST route and every MCP tool.

A key that may read the user's stored data — it holds `read`, or `export` (which hands out all of it
as one document) — gets every response whole. Any other key (`ingest-only`; a key holding only
`write` or `erase`) gets the *receipt* of the response instead: its ids (fields named `id`, `*_id`,
`*_ids`) and counts (integer fields and maps of counts), nested models reduced the same way, nothing
more. So a write-only key never reads back memory text, profile values (current or previous), the user
context, entity summaries, session turns, dates or metadata through a write it is allowed to make.

A model that holds nothing stored (a subclass of `ContentFree`: an erasure receipt, the outcome of a
forget, the caller's own key) is shown to every key as it is.

`receipt_model(M)` derives the receipt model of a response model once; REST routes document both
shapes (`anyOf`, see `routing.ShapedRoute`), MCP tools publish `lenient_model(M)` — M with only the
receipt's fields required — because an MCP output schema must be one object.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Collection
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from .roles import Permission

SHOWS_STORED_DATA = frozenset({Permission.READ, Permission.EXPORT})
"""A key holding either sees responses whole."""


class ContentFree:
    """Mixin of response models that hold no stored data: every key gets them as they are."""


def sees_stored_data(permissions: Collection[Permission]) -> bool:
    return not SHOWS_STORED_DATA.isdisjoint(permissions)


def may_withhold(needed: Permission | None) -> bool:
    """Whether a key allowed an operation needing `needed` might still not see stored data: every key
    holding `read` or `export` sees it, and `admin` is held only by the admin role, which holds `read`."""
    return needed not in SHOWS_STORED_DATA | {Permission.ADMIN}


def shape(value: Any, permissions: Collection[Permission]) -> Any:
    """THE rule: `value` (a response model, a list of them, or None) as a key with `permissions` sees it."""
    return value if sees_stored_data(permissions) else receipt(value)


def receipt(value: Any) -> Any:
    """The ids and counts of a response (`receipt_model` of its class)."""
    if value is None:
        return None
    if isinstance(value, list):
        return [receipt(item) for item in value]
    if not isinstance(value, BaseModel):
        raise TypeError(f"a response of type {type(value).__name__} cannot be reduced to a receipt")
    model = receipt_model(type(value))
    return value if model is type(value) else model.model_validate(value.model_dump())


def is_id(name: str) -> bool:
    return name == "id" or name.endswith(("_id", "_ids"))


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _map_models(annotation: Any, fn: typing.Callable[[type[BaseModel]], Any]) -> Any:
    """`annotation` with each model class in it (inside lists, optionals, unions) replaced by `fn(model)`."""
    if _is_model(annotation):
        return fn(annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and args:
        return list[_map_models(args[0], fn)]  # type: ignore[misc]
    if origin in (Union, types.UnionType):
        return Union[tuple(_map_models(arg, fn) for arg in args)]  # noqa: UP007
    return annotation


def _receipt_type(name: str, annotation: Any) -> Any | None:
    """The type a receipt keeps for a field, or None to drop it."""
    if is_id(name):
        return annotation
    if annotation is int:
        return int
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is dict and args == (str, int):
        return annotation
    if _is_model(annotation):
        reduced = receipt_model(annotation)
        return reduced if reduced.model_fields else None
    if origin is list and args:
        item = _receipt_type(name, args[0])
        return None if item is None else list[item]  # type: ignore[valid-type]
    if origin in (Union, types.UnionType) and type(None) in args:
        present = [_receipt_type(name, arg) for arg in args if arg is not type(None)]
        if None in present:
            return None
        return Union[(*present, type(None))]  # noqa: UP007
    return None


def _field(field: Any, annotation: Any, *, required: bool) -> tuple[Any, Any]:
    if required:
        return annotation, Field(description=field.description)
    if field.default_factory is not None:
        return annotation, Field(default_factory=field.default_factory, description=field.description)
    return annotation, Field(default=field.default, description=field.description)


@functools.cache
def receipt_model(model: type[BaseModel]) -> type[BaseModel]:
    """The receipt of `model`: its id and count fields, nested models reduced (`model` itself if it is
    `ContentFree`)."""
    if issubclass(model, ContentFree):
        return model
    fields: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        kept = _receipt_type(name, field.annotation)
        if kept is not None:
            fields[name] = _field(field, kept, required=field.is_required())
    reduced: type[BaseModel] = create_model(
        f"{model.__name__}Receipt",
        __config__=ConfigDict(extra="ignore"),
        __doc__=f"What a key that may not read stored data gets instead of {model.__name__}: ids and counts.",
        **fields,
    )
    return reduced


def receipt_type(annotation: Any) -> Any:
    """`annotation` (a response model or a list of them) with each model replaced by its receipt."""
    return _map_models(annotation, receipt_model)


@functools.cache
def lenient_model(model: type[BaseModel]) -> type[BaseModel]:
    """`model` with only its receipt's fields required (the others optional, default null): one object
    schema that both the whole response and its receipt satisfy (MCP tools' output schemas)."""
    reduced = receipt_model(model)
    if reduced is model:
        return model
    fields: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        annotation = _map_models(field.annotation, lenient_model)
        if name in reduced.model_fields:
            fields[name] = _field(field, annotation, required=field.is_required())
        else:
            fields[name] = (annotation | None, Field(default=None, description=field.description))
    lenient: type[BaseModel] = create_model(
        model.__name__, __config__=model.model_config, __doc__=model.__doc__, **fields
    )
    return lenient


__all__ = [
    "SHOWS_STORED_DATA",
    "ContentFree",
    "lenient_model",
    "may_withhold",
    "receipt",
    "receipt_model",
    "receipt_type",
    "sees_stored_data",
    "shape",
]
