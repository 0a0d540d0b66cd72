"""The server distribution's build backend: setuptools' own, quiet about one warning that cannot apply here.

The packages live in folders named differently from them (``collector/inferwatch_collector`` and
``migrations`` for ``inferwatch_migrations``), so an editable install cannot be a plain ``.pth`` entry: setuptools
installs an import finder instead and, every time, emits an information-only warning ("Editable installation ...
be careful with folders in your working directory with the same name as your package"), which pip shows as a
``BuildBackendWarning``. No folder at the top of this repository bears a package's name, so the warning has nothing
to say here; only that one is filtered (``tests/server/test_packaging.py`` checks the premise), and every other
warning setuptools has still shows. Everything else is ``setuptools.build_meta`` unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # the PEP 517/660 hooks, unchanged but for build_editable
from setuptools.build_meta import __all__  # noqa: F401

#: The start of the filtered warning's text: ``InformationOnly.emit("Editable installation.", ...)`` in current
#: setuptools, the bare "Please be careful ..." paragraph in older ones.
EDITABLE_NOTICE = r"(Editable installation\.|\s*Please be careful with folders in your working directory)"


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    """setuptools' ``build_editable`` without its information-only "Editable installation." warning (a
    ``UserWarning``: its class has moved between setuptools versions)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=EDITABLE_NOTICE, category=UserWarning)
        return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
