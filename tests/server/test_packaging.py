"""pyproject.toml names every package of the server distribution: a non-editable install (the image) installs
only the packages listed there, so a new subpackage left out of the list would be missing in production while
every editable-install test still passed."""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import distributions, packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What ``make demo`` runs from examples/: the demo app and the mock LLM server it starts.
DEMO_MODULES = {"demo_app.py"} | {path.name for path in (ROOT / "examples").glob("mock_llm*.py")}


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


# --- a quiet install -------------------------------------------------------------------------------------------
def test_no_top_level_folder_bears_a_package_name() -> None:
    """The premise of build_backend/inferwatch_build.py, which hides setuptools' editable-install notice about
    folders in the working directory named like a package: there are none."""
    config = setuptools_config()
    folders = {path.name for path in ROOT.iterdir() if path.is_dir()}
    assert not folders & ({name.split(".")[0] for name in config["packages"]} | {"inferwatch"})


def test_an_editable_build_emits_no_warning(tmp_path: Path) -> None:
    """The editable build (what ``pip install -e .`` runs, through the in-tree backend) warns about nothing; pip
    would show any warning as a ``BuildBackendWarning``. Built from a copy, so the checkout is not written to."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy(ROOT / name, project / name)
    folders = {Path(folder).parts[0] for folder in setuptools_config()["package-dir"].values()} | {"build_backend"}
    for folder in folders:
        shutil.copytree(ROOT / folder, project / folder, ignore=shutil.ignore_patterns("__pycache__"))
    script = (
        "import sys, warnings\n"
        "sys.path.insert(0, 'build_backend')\n"
        "import inferwatch_build\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        f"    inferwatch_build.build_editable({str(tmp_path)!r})\n"
        "print([f'{w.category.__name__}: {w.message}' for w in seen if issubclass(w.category, UserWarning)])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=project, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
    assert list(tmp_path.glob("inferwatch_server-*.whl"))


def test_the_demo_installs_what_its_app_imports_and_no_test_tool() -> None:
    """``make demo`` installs the runtime dependencies and the ``demo`` extra only: together with the SDK's they
    cover every distribution the demo app and the mock LLM import, and none of the test tools is among them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    sdk = tomllib.loads((ROOT / "sdk" / "pyproject.toml").read_text())["project"]
    demo = {_requirement_name(spec) for spec in project["optional-dependencies"]["demo"]}
    runtime = {_requirement_name(spec) for spec in project["dependencies"] + sdk["dependencies"]} | demo
    found = imported_distributions(ROOT / "examples", {"examples", "inferwatch"})
    used = {dist for dist, users in found.items() if users & DEMO_MODULES}
    assert {"openai", "anthropic"} <= used <= runtime, used - runtime
    assert not runtime & {"pytest", "hypothesis", "presidio-analyzer", "spacy", "playwright"}
    makefile = (ROOT / "Makefile").read_text()
    assert "$(PIP) -e ./sdk -e '.[demo]'" in makefile and "\ndemo: $(RUNTIME)\n" in makefile
    assert "\ntest: $(TESTING)\n" in makefile and "$(TESTING): $(RUNTIME)\n\t$(PIP) -e ./sdk -e '.[test]'" in makefile
