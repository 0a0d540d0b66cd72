"""The API keys the ``keys`` fixture (tests/conftest.py) creates, and the header that sends one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Keys:
    """Keys of project p1 (one per scope set) and an all-scopes key of project p2."""

    ingest: str
    read: str
    prompts: str
    admin: str
    other_project: str

    @staticmethod
    def header(key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}
