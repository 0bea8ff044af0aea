"""Command-line flags generated from a value object's fields (`SearchFilter`, `ConsolidationOptions`).

The value object declares each option once — name, type, bounds and help text — and a command gets
one flag per field: `older_than_days` becomes `--older-than-days`, a list field `kinds` the repeatable
`--kind`, an optional boolean `use_llm` the pair `--use-llm/--no-use-llm`, an enum a choice. The
command then builds the object once from what was given (`value_from_args`); its own validation
reports bad values.
"""

from __future__ import annotations

import argparse
import enum
import types
import typing
from datetime import datetime
from typing import Annotated, Any, TypeVar

from pydantic.fields import FieldInfo

from ..filters import ValueObject

V = TypeVar("V", bound=ValueObject)


def _flag(name: str, *, repeated: bool) -> str:
    flag = name.removesuffix("s") if repeated else name
    return "--" + flag.replace("_", "-")


def _base(annotation: Any) -> tuple[Any, bool]:
    """The field's type without `None`, and whether None was allowed."""
    args = typing.get_args(annotation)
    optional = False
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        annotation, optional = rest[0], len(rest) < len(args)
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation, optional


def _argument(name: str, info: FieldInfo) -> tuple[str, dict[str, Any]]:
    base, optional = _base(info.annotation)
    options: dict[str, Any] = {"dest": name, "help": info.description, "default": None}
    origin = typing.get_origin(base)
    repeated = origin in (tuple, list)
    if repeated:
        item = typing.get_args(base)[0]
        options["action"] = "append"
        if isinstance(item, type) and issubclass(item, enum.Enum):
            options["choices"] = [m.value for m in item]
    elif base is bool:
        options["action"] = argparse.BooleanOptionalAction if optional else "store_true"
        options["default"] = None if optional else False
    elif isinstance(base, type) and issubclass(base, enum.Enum):
        options["choices"] = [m.value for m in base]
    elif base in (int, float):
        options["type"] = base
    elif base is datetime:
        options["help"] = f"{info.description} (ISO 8601)"
    elif base is not str:
        options["help"] = f"{info.description} (JSON)"
    return _flag(name, repeated=repeated), options


def add_value_flags(parser: argparse.ArgumentParser, model: type[ValueObject]) -> None:
    """One flag per field of `model`, its help text the field's description."""
    for name, info in model.model_fields.items():
        flag, options = _argument(name, info)
        parser.add_argument(flag, **options)


def value_from_args(args: argparse.Namespace, model: type[V]) -> V:
    """`model` built from the flags that were given (the others keep the model's defaults)."""
    given = {name: getattr(args, name) for name in model.model_fields if getattr(args, name, None) is not None}
    return model(**given)


__all__ = ["add_value_flags", "value_from_args"]
