"""The package's import graph, read from the source (no imports executed).

`graph()` holds the imports that run when a module is imported: imports inside functions and under
`if TYPE_CHECKING:` are left out. `graph(deferred=True)` adds the imports inside functions and
methods (a lazy import still ties the two modules together: it only moves the cycle to run time);
`if TYPE_CHECKING:` imports stay out in both. `from pkg import name` depends on `pkg.name` when that
is a module, else on `pkg` itself (its `__init__`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "memstrata"


def module_name(path: Path, root: Path = PACKAGE_ROOT) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = PACKAGE_ROOT) -> dict[str, Path]:
    return {module_name(p, root): p for p in root.rglob("*.py")}


def _top_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            yield from (n for n in node.body + node.orelse if isinstance(n, ast.Import | ast.ImportFrom))
        elif isinstance(node, ast.Try):
            yield from (n for n in node.body if isinstance(n, ast.Import | ast.ImportFrom))


def _all_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import of the module, at any depth, except those under `if TYPE_CHECKING:`."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def _resolve(name: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def graph(*, deferred: bool = False, root: Path = PACKAGE_ROOT) -> dict[str, set[str]]:
    """Module -> the package's modules it imports; with `deferred`, also the imports inside functions."""
    known = modules(root)
    imports = _all_imports if deferred else _top_level_imports
    edges: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for node in imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                edges[name] |= {a.name for a in node.names if a.name in known}
                continue
            target = _resolve(name, path, node)
            for alias in node.names:
                dependency = f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target
                if dependency in known and dependency != name:
                    edges[name].add(dependency)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in edges[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen
