"""The SDK's modules: each imports on its own, and their imports of one another (read from the source, imports
inside functions included) form no cycle."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import inferwatch

PACKAGE_DIR = Path(inferwatch.__file__).parent
ROOT = PACKAGE_DIR.name


def sdk_modules() -> dict[str, Path]:
    """Every module of the SDK package by its dotted name (a package by its ``__init__.py``)."""
    modules = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_sdk_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The SDK modules ``name`` imports anywhere in its source. ``from X import y`` counts as importing ``X.y``
    when that is a module, else ``X``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module != ROOT and not module.startswith(ROOT + "."):
                continue
            for alias in node.names:
                found.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module)
    found.discard(name)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` as the list of its modules (first repeated at the end), or ``[]``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_the_import_graph_has_no_cycle() -> None:
    modules = sdk_modules()
    graph = {name: imported_sdk_modules(name, path, modules) for name, path in modules.items()}
    assert graph[f"{ROOT}.lifecycle"] >= {f"{ROOT}.telemetry.pipeline", f"{ROOT}.client"}  # the reader works
    assert find_cycle(graph) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


_IMPORT_EACH = """
import importlib, json, sys
failures = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "inferwatch" or m.startswith("inferwatch.")]:
        del sys.modules[loaded]  # a fresh start for each module: nothing of the SDK imported before it
    try:
        importlib.import_module(name)
    except Exception as exc:
        if type(exc).__name__ != "DidNotEnable":  # an integration whose provider library is missing
            failures[name] = repr(exc)
print(json.dumps(failures))
"""


def test_every_module_imports_on_its_own() -> None:
    names = sorted(sdk_modules())
    done = subprocess.run([sys.executable, "-c", _IMPORT_EACH, json.dumps(names)], capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {}


def test_importing_the_sdk_loads_no_http_client() -> None:
    """``import inferwatch`` in an app costs no HTTP stack: ``requests`` (and urllib3 under it) load with the first
    request the SDK sends, after ``init()``."""
    code = "import sys, inferwatch; print(sorted(m for m in ('requests', 'urllib3') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
