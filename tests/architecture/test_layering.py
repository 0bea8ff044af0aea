"""The package's layering, checked on its import graph (tests/architecture/imports.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.architecture.imports import PACKAGE_ROOT, cycles, graph

ROOT = PACKAGE_ROOT.parent
BOTTOM = ("memstrata.core", "memstrata.errors", "memstrata.models")


def test_no_module_level_import_cycle() -> None:
    assert cycles(graph()) == []


def test_no_import_cycle_even_through_imports_inside_functions() -> None:
    """A lazy import only hides a cycle from import time: two modules that need each other are one."""
    assert cycles(graph(deferred=True)) == []


def test_a_cycle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from .sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from .. import c\n    return c\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
        "class C:\n    def m(self):\n        import pkg.a\n"
    )
    (package / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    assert cycles(graph(root=package)) == []
    assert cycles(graph(deferred=True, root=package)) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


def test_core_depends_on_nothing_above_it() -> None:
    edges = graph()
    above = {m: sorted(d for d in deps if not d.startswith(BOTTOM)) for m, deps in edges.items()}
    assert {m: deps for m, deps in above.items() if m.startswith("memstrata.core") and deps} == {}


def test_lower_floors_never_import_upper_ones() -> None:
    """Layers do not import the adapters or the edges; nothing below `memory` imports it."""
    edges = graph()
    rules = {
        "memstrata.layers": ("memstrata.integrations", "memstrata.server", "memstrata.cli", "memstrata.memory"),
        "memstrata.storage": ("memstrata.layers", "memstrata.memory", "memstrata.server"),
        "memstrata.buffer": ("memstrata.layers", "memstrata.memory", "memstrata.server"),
        "memstrata.extraction": ("memstrata.layers", "memstrata.memory", "memstrata.server"),
        "memstrata.prompts": ("memstrata.layers", "memstrata.memory", "memstrata.server"),
    }
    broken = {
        (module, dep)
        for module, deps in edges.items()
        for floor, forbidden in rules.items()
        if module.startswith(floor)
        for dep in deps
        if dep.startswith(forbidden)
    }
    assert broken == set()


def test_the_server_uses_only_the_public_api_of_memory() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in (PACKAGE_ROOT / "server").rglob("*.py")
        if "._layers" in path.read_text() or ".work_queue" in path.read_text()
    ]
    assert offenders == []


def test_only_memory_and_the_wiring_touch_the_layers() -> None:
    """Everything else (CLI, server, integrations) uses `Memory`'s public methods."""
    allowed = {PACKAGE_ROOT / "memory.py", PACKAGE_ROOT / "layers" / "wiring.py"}
    offenders = [
        str(path.relative_to(ROOT))
        for path in PACKAGE_ROOT.rglob("*.py")
        if path not in allowed and "._layers" in path.read_text()
    ]
    assert offenders == []


def test_async_module_is_generated_from_the_current_sources() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_async.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_layers_package_holds_the_layers() -> None:
    layers = {p.stem for p in (PACKAGE_ROOT / "layers").glob("*.py")} | {
        p.name for p in (PACKAGE_ROOT / "layers").iterdir() if p.is_dir() and p.name != "__pycache__"
    }
    expected = {"semantic", "conversation", "context", "entities", "profile", "procedures", "user_context"}
    assert expected | {"learning", "work_queue", "lifecycle", "wiring"} <= layers
    root_modules = sorted(p.stem for p in PACKAGE_ROOT.glob("*.py"))
    assert len(root_modules) <= 18, root_modules
    assert not set(root_modules) & expected
