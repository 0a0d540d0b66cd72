"""Directories that hold stored prompts or spooled requests: readable by their owner only."""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def private_directory(path: Path) -> Path:
    """Create ``path`` (and its parents) and make it ``0700``: other local users cannot list or read what the
    embedded database or the spool keeps there. An existing directory is tightened too; one this process does
    not own (a volume mounted by another user) is left as it is, with a warning. Returns ``path``."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.chmod(path, 0o700)
    except PermissionError:
        log.warning("%s is not owned by this user: could not make it private (0700)", path)
    return path
