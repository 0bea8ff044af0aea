"""Filters and consolidation options travel as one value object each; no hop re-spells their fields.

A hop "re-spells" options when a function signature or a model declares two or more of the value
object's field names as its own parameters/fields, when a call spreads two or more of them as keyword
arguments, or when a parser is given two or more of their command-line flags by hand instead of
generating them from the model (`memstrata/cli/value_flags.py`). A memory's own fields (`add --kind
--metadata`) are not filter flags.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

import pytest

from memstrata import ConsolidationOptions, SearchFilter
from memstrata.filters import ValueObject
from memstrata.models import MemoryRecord
from tests.architecture.imports import PACKAGE_ROOT

OWN_DECLARATIONS = {
    "SearchFilter": {"memstrata/filters.py:SearchFilter", "memstrata/storage/base.py:MemoryFilter"},
    "ConsolidationOptions": {"memstrata/layers/lifecycle/consolidation.py:ConsolidationOptions"},
}
"""Where each value object's fields may be declared: the model itself, and for filters the store's
`MemoryFilter` (what `SearchFilter.to_memory_filter` produces, with the ids only the library sets)."""
CONSTRUCTORS = {"SearchFilter", "MemoryFilter", "ConsolidationOptions", "replace"}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        relative = path.relative_to(PACKAGE_ROOT.parent).as_posix()
        yield relative, ast.parse(path.read_text(), relative)


def _declared(node: ast.AST) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        a = node.args
        return {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    if isinstance(node, ast.ClassDef):
        return {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    return set()


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _flags_by_parser(function: ast.FunctionDef, flags: set[str]) -> dict[str, set[str]]:
    """The given flags each parser of `function` declares (`parser.add_argument("--flag", ...)`)."""
    found: dict[str, set[str]] = {}
    for call in ast.walk(function):
        if isinstance(call, ast.Call) and _called(call) == "add_argument" and isinstance(call.func, ast.Attribute):
            parser = ast.unparse(call.func.value)
            written = {a.value for a in call.args if isinstance(a, ast.Constant) and a.value in flags}
            found.setdefault(parser, set()).update(written)
    return found


def respellings(model: type[ValueObject], modules: Iterator[tuple[str, ast.Module]] | None = None) -> list[str]:
    names = set(model.model_fields)
    flags = {"--" + name.replace("_", "-") for name in names} | {"--" + n.removesuffix("s") for n in names}
    flags -= {"--" + field.name for field in dataclasses.fields(MemoryRecord)}  # `add --kind/--metadata`
    allowed = OWN_DECLARATIONS[model.__name__]
    found = []
    for path, tree in modules if modules is not None else _modules():
        for node in ast.walk(tree):
            where = f"{path}:{getattr(node, 'name', '')}"
            if len(_declared(node) & names) >= 2 and where not in allowed:
                found.append(f"{where} declares {sorted(_declared(node) & names)}")
            if isinstance(node, ast.Call) and _called(node) not in CONSTRUCTORS:
                spread = {k.arg for k in node.keywords if k.arg in names}
                if len(spread) >= 2:
                    found.append(f"{path}:{node.lineno} passes {sorted(spread)} one by one")
            if isinstance(node, ast.FunctionDef):
                for parser, written in _flags_by_parser(node, flags).items():
                    if len(written) >= 2:
                        found.append(f"{where} writes the flags {sorted(written)} of {parser} by hand")
    return found


@pytest.mark.parametrize("model", [SearchFilter, ConsolidationOptions], ids=["filters", "consolidation"])
def test_options_are_declared_once_and_passed_whole(model: type[ValueObject]) -> None:
    assert respellings(model) == []


def test_the_check_sees_each_kind_of_respelling() -> None:
    """What every hop used to do: a signature, a call and a parser spelling the options out."""
    source = """
def consolidate(user_id, *, older_than_days=None, min_count=None, dry_run=False): ...
def route(body, memory):
    memory.consolidate(scope=body.user, min_count=body.min_count, dry_run=body.dry_run)
def register(parser):
    parser.add_argument("--min-count", type=int)
    parser.add_argument("--dry-run", action="store_true")
"""
    found = respellings(ConsolidationOptions, iter([("hop.py", ast.parse(source))]))
    assert sorted(found) == [
        "hop.py:4 passes ['dry_run', 'min_count'] one by one",
        "hop.py:consolidate declares ['dry_run', 'min_count', 'older_than_days']",
        "hop.py:register writes the flags ['--dry-run', '--min-count'] of parser by hand",
    ]


def test_each_option_name_is_a_field_of_exactly_one_value_object() -> None:
    declared: dict[str, list[str]] = {}
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id in ("ValueObject", "SearchFilter") for b in node.bases
            ):
                for name in _declared(node) & (set(ConsolidationOptions.model_fields) | set(SearchFilter.model_fields)):
                    declared.setdefault(name, []).append(f"{path}:{node.name}")
    assert {name: places for name, places in declared.items() if len(places) != 1} == {
        "kinds": [
            "memstrata/filters.py:SearchFilter",
            "memstrata/layers/lifecycle/consolidation.py:ConsolidationOptions",
        ]
    }
