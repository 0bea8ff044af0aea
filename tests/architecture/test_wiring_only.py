"""Layers and extractors are built in one place, `layers/wiring.py`: no other module of the package
constructs a layer, a reconciler or an extractor of its own (a caller's `extractor=` would not reach it)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "memstrata"
LAYERS = "SemanticMemory ProfileMemory EntityMemory ProceduralMemory LearningMemory Reconciler"
SERVICES = "UserContextUpdater ContextAssembler Conversation Lifecycle WorkQueue RuleExtractor"
BUILT_IN_WIRING = frozenset(f"{LAYERS} {SERVICES}".split())
WIRING = PACKAGE / "layers" / "wiring.py"


def constructions(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in BUILT_IN_WIRING:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {name}(...)")
    return found


def test_only_the_wiring_builds_layers_and_extractors() -> None:
    elsewhere = [c for path in sorted(PACKAGE.rglob("*.py")) if path != WIRING for c in constructions(path)]
    assert elsewhere == []


def test_the_wiring_builds_each_of_them() -> None:
    built = {c.rsplit(" ", 1)[1].removesuffix("(...)") for c in constructions(WIRING)}
    assert built == BUILT_IN_WIRING
