"""Which rules file is in force, and loading it: ``INFERWATCH_ALERT_RULES_FILE`` (or a settings field
``alert_rules_file`` when present), else the packaged ``default_rules.yaml``."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Final

from .model import RuleSet
from .parse import parse_rules
from .yaml_lines import RulesError

RULES_FILE_ENV: Final = "INFERWATCH_ALERT_RULES_FILE"
DEFAULT_RULES: Final = "default_rules.yaml"


def default_rules_text() -> str:
    """The packaged defaults: the product's default rules and the worked example of the schema."""
    return resources.files("inferwatch_alerts").joinpath(DEFAULT_RULES).read_text(encoding="utf-8")


def configured_rules_path(settings: object | None = None) -> Path | None:
    """The rules file in use: a settings field ``alert_rules_file``, else ``$INFERWATCH_ALERT_RULES_FILE``;
    None means the packaged defaults."""
    value = getattr(settings, "alert_rules_file", None) or os.environ.get(RULES_FILE_ENV) or None
    return Path(value).expanduser() if value else None


def load_rules(path: str | os.PathLike[str] | None = None) -> RuleSet:
    """Load and validate a rules file (the packaged defaults when ``path`` is None); raises :class:`RulesError`."""
    if path is None:
        return parse_rules(default_rules_text(), f"<packaged {DEFAULT_RULES}>")
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise RulesError(str(file), [f"{file}: cannot read: {exc.strerror or exc}"]) from None
    return parse_rules(text, str(file))


def load_configured(settings: object | None = None) -> RuleSet:
    """The rules file in force (:func:`configured_rules_path`), loaded and validated."""
    return load_rules(configured_rules_path(settings))
