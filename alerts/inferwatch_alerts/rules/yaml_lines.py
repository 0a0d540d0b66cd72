"""Reading a rules file as YAML with the line of every value, and reporting each problem with its line.

A rules file is refused whole when anything in it is wrong (a scheduler that silently skips a misspelt rule is
worse than one that does not start), so problems are collected, not raised one by one: one run fixes them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml


class RulesError(ValueError):
    """The rules file is invalid; ``errors`` lists each problem as ``file:line: where: what``."""

    def __init__(self, source: str, errors: Sequence[str]) -> None:
        self.source = source
        self.errors = list(errors)
        super().__init__(f"invalid alert rules in {source}:\n  " + "\n  ".join(self.errors))


def compose(text: str, source: str) -> tuple[Any, dict[tuple[Any, ...], int], list[str]]:
    """Parse YAML into plain values plus the line of every value, refusing duplicate keys (YAML keeps the last
    one silently, which would hide a rule's first threshold)."""
    loader = yaml.SafeLoader(text)
    lines: dict[tuple[Any, ...], int] = {}
    errors: list[str] = []

    def walk(node: yaml.Node, path: tuple[Any, ...]) -> Any:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = loader.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int, float, bool)):
                    errors.append(f"{source}:{key_node.start_mark.line + 1}: {path_text(path)}: keys must be "
                                  f"plain values")
                    continue
                if key in out:
                    errors.append(f"{source}:{key_node.start_mark.line + 1}: {path_text(path + (key,))}: "
                                  f"duplicate key (first at line {lines[path + (key,)]})")
                    continue
                out[key] = walk(value_node, path + (key,))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [walk(item, path + (i,)) for i, item in enumerate(node.value)]
        return loader.construct_object(node, deep=True)

    try:
        node = loader.get_single_node()
        data = walk(node, ()) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise RulesError(source, [f"{source}{line}: not valid YAML: {reason}"]) from None
    finally:
        loader.dispose()
    return data, lines, errors


def path_text(path: tuple[Any, ...]) -> str:
    """``rules[2].threshold.op``: where a value is, as the error messages name it."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


class ParseContext:
    """The file being checked: its name, the line of every value, and the problems found so far."""

    def __init__(self, source: str, lines: Mapping[tuple[Any, ...], int]) -> None:
        self.source, self.lines, self.errors = source, lines, []

    def line(self, path: tuple[Any, ...]) -> int:
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path, 1)

    def err(self, path: tuple[Any, ...], message: str) -> None:
        self.errors.append(f"{self.source}:{self.line(path)}: {path_text(path)}: {message}")

    def mapping(self, value: Any, path: tuple[Any, ...], allowed: Sequence[str]) -> dict[str, Any] | None:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.err(path, f"must be a mapping, got {kind_of(value)}")
            return None
        for key in value:
            if key not in allowed:
                self.err(path + (key,), f"unknown key {key!r}; allowed: {', '.join(allowed)}")
        return value


def kind_of(value: Any) -> str:
    """What a value is, in words (``a list``, ``a string``) for error messages."""
    return {list: "a list", dict: "a mapping", str: "a string", bool: "a boolean", type(None): "nothing"}.get(
        type(value), type(value).__name__)
