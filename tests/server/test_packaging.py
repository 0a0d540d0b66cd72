"""pyproject.toml names every package of the server distribution: a non-editable install (the image) installs
only the packages listed there, so a new subpackage left out of the list would be missing in production while
every editable-install test still passed."""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import sys
import tomllib
from importlib.metadata import distributions, packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def setuptools_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def packages_on_disk(name: str, folder: Path) -> set[str]:
    """``name`` and every package below ``folder`` (a folder with an ``__init__.py``), dotted."""
    found = {name}
    for init in folder.rglob("__init__.py"):
        relative = init.parent.relative_to(folder)
        if relative.parts:
            found.add(".".join((name, *relative.parts)))
    return found


def test_every_package_folder_is_listed_and_mapped() -> None:
    config = setuptools_config()
    listed, mapping = set(config["packages"]), config["package-dir"]
    tops = {name for name in mapping if "." not in name}
    assert tops == {"inferwatch_collector", "inferwatch_alerts", "inferwatch_dashboard", "inferwatch_server",
                    "inferwatch_migrations"}
    on_disk = set().union(*(packages_on_disk(top, ROOT / mapping[top]) for top in tops))
    assert listed == on_disk
    for name in listed:  # each maps to the folder that holds it
        assert mapping.get(name) == mapping[name.split(".")[0]] + "".join(
            "/" + part for part in name.split(".")[1:]), name


def test_the_entry_point_is_the_server_cli() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"inferwatch-server": "inferwatch_server.cli:main"}


# --- declared dependencies match the imports ------------------------------------------------------------------
def _requirement_name(spec: str) -> str:
    return re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower().replace("_", "-")


def imported_distributions(folder: Path, own: set[str]) -> dict[str, set[str]]:
    """Distribution (normalised name) → the modules under ``folder`` that import it, for every absolute import
    that is neither the standard library nor one of ``own`` packages. Namespace packages (``google.*``,
    ``opentelemetry.*``) are resolved to the distribution that ships the imported module."""
    provided = packages_distributions()
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{alias.name}" for alias in node.names]  # the name may be a module
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in own:
                    continue
                dists = provided.get(top, [])
                if len(set(dists)) != 1:  # a namespace package: ask which distribution ships the module
                    dists = [_shipping_distribution(name)]
                found.setdefault(dists[0].lower().replace("_", "-"), set()).add(path.name)
    return found


def _shipping_distribution(name: str) -> str:
    """The distribution whose files hold the module ``name`` (or, when ``name`` is not a module with a file of
    its own, the nearest enclosing one that is)."""
    parts = name.split(".")
    spec = None
    while parts and (spec is None or not spec.origin):
        try:
            spec = importlib.util.find_spec(".".join(parts))
        except (ImportError, AttributeError, ValueError):
            spec = None
        parts.pop()
    assert spec is not None and spec.origin, f"{name} is imported but not installed"
    origin = Path(spec.origin).resolve()
    shipped = _namespace_files()
    assert origin in shipped, f"no installed distribution ships {name} ({origin})"
    return shipped[origin]


@functools.cache
def _namespace_files() -> dict[Path, str]:
    """Every installed file under the ``google`` and ``opentelemetry`` namespaces → its distribution's name."""
    shipped = {}
    for dist in distributions():
        for file in dist.files or ():
            if file.parts and file.parts[0] in ("google", "opentelemetry") and file.suffix == ".py":
                shipped[Path(dist.locate_file(file)).resolve()] = dist.metadata["Name"]
    return shipped


def test_the_server_declares_every_distribution_its_code_imports() -> None:
    """A distribution the code imports must be declared here, not arrive through another one (the collector's
    ``google.rpc`` once came only through the SDK's dependencies, and went when those changed)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_requirement_name(spec) for spec in project["dependencies"]}
    own = {"inferwatch_collector", "inferwatch_alerts", "inferwatch_dashboard", "inferwatch_server",
           "inferwatch_migrations"}
    for folder in ("collector", "alerts", "dashboard", "server"):
        missing = {dist: users for dist, users in imported_distributions(ROOT / folder, own).items()
                   if dist not in declared}
        assert not missing, f"{folder}: imported but not declared in pyproject.toml: {missing}"


def test_the_sdk_declares_every_distribution_it_imports() -> None:
    project = tomllib.loads((ROOT / "sdk" / "pyproject.toml").read_text())["project"]
    declared = {_requirement_name(spec) for spec in project["dependencies"]}
    extras = {_requirement_name(spec) for specs in project["optional-dependencies"].values() for spec in specs}
    # the provider clients are the app's own: the integrations import them only to patch what the app has
    apps_own = {"openai", "anthropic"}
    found = imported_distributions(ROOT / "sdk" / "src" / "inferwatch", {"inferwatch"})
    assert set(found) - declared - extras - apps_own == set(), found
    assert declared <= set(found), "declared but never imported: " + str(declared - set(found))
