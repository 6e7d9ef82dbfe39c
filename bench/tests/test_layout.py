"""bench/'s Python as a room a newcomer can read: no import circle among its modules, the report
reads results only (it imports no run module and nothing that starts a process), and the
shared modules import no run module."""

from __future__ import annotations

import ast
from pathlib import Path

from tools.local_stack.paths import REPO_ROOT

BENCH = REPO_ROOT / "bench"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def bench_imports() -> dict[str, set[str]]:
    """bench module -> the bench modules it imports (at any depth of its code, TYPE_CHECKING too)."""
    modules = {module_name(p): p for p in BENCH.rglob("*.py") if "tests" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bench"):
                # `from bench.runs import peak` imports bench.runs.peak; `from bench.stack import X`, bench.stack
                found |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                          for alias in node.names}
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name.startswith("bench")}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph.get(module, ())
    return seen


def test_no_import_circle() -> None:
    graph = bench_imports()
    assert graph, "found no bench modules"
    circles = sorted(name for name in graph if name in reachable(graph, name))
    assert circles == [], f"modules that import themselves through others: {circles}"


def test_the_report_only_reads_results() -> None:
    graph = bench_imports()
    for name in graph:
        if name.startswith("bench.report"):
            outside = {m for m in reachable(graph, name) if not m.startswith("bench.report")}
            assert outside == set(), f"{name} imports {outside}"


def test_shared_modules_import_no_run() -> None:
    graph = bench_imports()
    for shared in ("bench.stack", "bench.measure"):
        assert not any(m.startswith(("bench.runs", "bench.run", "bench.compare")) for m in reachable(graph, shared)), graph[shared]
