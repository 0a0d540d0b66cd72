"""pyproject.toml names every package of the server distribution: a non-editable install (the image) installs
only the packages listed there, so a new subpackage left out of the list would be missing in production while
every editable-install test still passed."""

from __future__ import annotations

import tomllib
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
