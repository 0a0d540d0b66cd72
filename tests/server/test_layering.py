"""The packages' dependency arrows, read from the source: sdk ← collector ← alerts, the dashboard talks HTTP
only, and nothing but the server (the composition root) imports the server.

Every module of each package is parsed (``ast``): its imports, and the names given to ``importlib.import_module``
or ``__import__``, must not name a package it may not depend on. The collector's text must not even name the
packages above it. A subprocess then imports every collector module and checks what got loaded.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SDK, COLLECTOR, ALERTS, DASHBOARD, SERVER = ("inferwatch", "inferwatch_collector", "inferwatch_alerts",
                                             "inferwatch_dashboard", "inferwatch_server")
SOURCES = {
    SDK: ROOT / "sdk" / "src" / "inferwatch",
    COLLECTOR: ROOT / "collector" / "inferwatch_collector",
    ALERTS: ROOT / "alerts" / "inferwatch_alerts",
    DASHBOARD: ROOT / "dashboard" / "inferwatch_dashboard",
    SERVER: ROOT / "server" / "inferwatch_server",
}
#: package -> the inferwatch packages it must not import
FORBIDDEN = {
    SDK: {COLLECTOR, ALERTS, DASHBOARD, SERVER},
    COLLECTOR: {ALERTS, DASHBOARD, SERVER},
    ALERTS: {DASHBOARD, SERVER},
    DASHBOARD: {SDK, COLLECTOR, ALERTS, SERVER},
}


def modules(package: str) -> list[Path]:
    found = sorted(SOURCES[package].rglob("*.py"))
    assert found, f"no modules under {SOURCES[package]}"
    return found


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """(line, top-level package) of every absolute import and every literal dynamic import in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                yield node.lineno, node.args[0].value.split(".")[0]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_package_imports_one_above_it(package: str) -> None:
    wrong = [f"{path.relative_to(ROOT)}:{line} imports {name}"
             for path in modules(package) for line, name in imported(path) if name in FORBIDDEN[package]]
    assert not wrong, "\n".join(wrong)


def test_the_collector_does_not_even_name_the_packages_above_it() -> None:
    named = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in modules(COLLECTOR) for number, line in enumerate(path.read_text().splitlines(), 1)
             if ALERTS in line or SERVER in line or DASHBOARD in line]
    assert not named, "\n".join(named)


def test_the_server_composes_every_package() -> None:
    names = {name for path in modules(SERVER) for _, name in imported(path)}
    assert {COLLECTOR, ALERTS, DASHBOARD} <= names


def test_importing_every_collector_module_loads_no_package_above_it() -> None:
    code = ("import pkgutil, sys, inferwatch_collector\n"
            "for info in pkgutil.walk_packages(inferwatch_collector.__path__, 'inferwatch_collector.'):\n"
            "    __import__(info.name)\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(FORBIDDEN[COLLECTOR])!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
