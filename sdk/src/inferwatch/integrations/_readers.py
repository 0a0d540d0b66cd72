"""Readers that take request params (dicts), parsed JSON and SDK models (objects) alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def get(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` for a Mapping, ``obj.key`` for anything else; ``default`` when absent."""
    kind = type(obj)
    if kind is dict:  # request params, parsed JSON
        return obj.get(key, default)
    mapping = _is_mapping.get(kind)
    if mapping is None:
        mapping = _is_a_mapping(obj, kind)
    return obj.get(key, default) if mapping else getattr(obj, key, default)


# type -> is it a Mapping? Asked once per type: ``isinstance(obj, Mapping)`` goes through the ABC machinery every
# time, and a provider's models are a handful of types. Not cached: objects whose ``__class__`` is not their type
# (proxies, which ``isinstance`` sees through), and types past the limit (made on the fly). A type registered as a
# Mapping after it was cached keeps its first answer.
_is_mapping: dict[type, bool] = {}
_IS_MAPPING_LIMIT = 1024


def _is_a_mapping(obj: Any, kind: type) -> bool:
    mapping = isinstance(obj, Mapping)
    if len(_is_mapping) < _IS_MAPPING_LIMIT and getattr(obj, "__class__", None) is kind:
        _is_mapping[kind] = mapping
    return mapping


def as_sequence(value: Any) -> list[Any] | tuple[Any, ...] | None:
    """The value if it is a list or tuple (safe to read twice); None for anything else (e.g. a generator)."""
    return value if isinstance(value, (list, tuple)) else None
