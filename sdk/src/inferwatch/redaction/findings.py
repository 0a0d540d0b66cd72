"""What the recognizers find and what redacting returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Finding:
    """One detected entity: ``text[start:end]`` is ``entity_type`` with confidence ``score`` (0-1)."""

    entity_type: str
    start: int
    end: int
    score: float


class RedactionResult(NamedTuple):
    text: str
    counts: dict[str, int]  # entity -> number of placeholders written


@runtime_checkable
class SupportsRedact(Protocol):
    """Anything that can redact a text; ``policy`` names the rules and their version (stored with the text)."""

    policy: str

    def redact(self, text: str) -> RedactionResult: ...


class _R:
    """A mutable result, compared like Presidio's ``RecognizerResult`` (the resolution code mutates them)."""

    __slots__ = ("entity", "start", "end", "score", "rec")

    def __init__(self, entity: str, start: int, end: int, score: float, rec: str) -> None:
        self.entity, self.start, self.end, self.score, self.rec = entity, start, end, score, rec

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _R) and self.start == other.start and self.end == other.end
                and self.entity == other.entity and self.score == other.score)

    def __hash__(self) -> int:
        return hash((self.start, self.end, self.score, self.entity))

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"_R({self.entity}, {self.start}, {self.end}, {self.score}, {self.rec})"
