"""The ``channels`` and ``routing`` sections of a rules file, checked the way the notifiers will build them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, Final

from .model import SEVERITIES
from .yaml_lines import ParseContext, kind_of

CHANNEL_TYPES: Final = ("slack", "pagerduty", "webhook")
_CHANNEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def channels_section(ctx: ParseContext, value: Any) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """The valid channels (name -> settings) and the line of each."""
    if value is None:
        return {}, {}
    if not isinstance(value, dict):
        ctx.err(("channels",), f"must be a mapping of channel name to settings, got {kind_of(value)}")
        return {}, {}
    out, lines = {}, {}
    for name, spec in value.items():
        path = ("channels", name)
        if not isinstance(name, str) or not _CHANNEL.fullmatch(name):
            ctx.err(path, "channel names are letters, digits, - _ . (at most 64)")
            continue
        if not isinstance(spec, dict):
            ctx.err(path, f"must be a mapping with a `type`, got {kind_of(spec)}")
            continue
        if spec.get("type") not in CHANNEL_TYPES:
            ctx.err(path + ("type",), f"type must be one of {', '.join(CHANNEL_TYPES)}")
            continue
        problem = channel_problem(name, spec)
        if problem:
            ctx.err(path, problem)
            continue
        out[name], lines[name] = dict(spec), ctx.line(path)
    return out, lines


class _AnyEnv(Mapping[str, str]):
    """An environment in which every variable is set (to a placeholder): checks a channel's structure without
    its secrets, which are only read when the scheduler builds the channel."""

    def __getitem__(self, key: str) -> str:
        return "https://placeholder.invalid/inferwatch-rules-check"

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def channel_problem(name: str, spec: Mapping[str, Any]) -> str | None:
    """Why the notifiers would refuse this channel's settings (unknown field, a secret written inline, a bad
    number or CA bundle), or None. Secrets themselves are not checked here: they may be set only where the
    scheduler runs, and a missing one disables that channel with a warning instead of stopping alerting.

    The check builds the notifier (with placeholder secrets), which costs a TLS context for PagerDuty; answers
    are remembered per settings, since the API and the CLI reload the same file again and again."""
    return _channel_problem(name, json.dumps(spec, sort_keys=True, default=str))


@lru_cache(maxsize=256)
def _channel_problem(name: str, spec_json: str) -> str | None:
    from ..notifiers.config import load_channels

    spec = json.loads(spec_json)

    try:
        built = load_channels({name: spec}, env=_AnyEnv())
    except ValueError as exc:
        message = str(exc)
        if "secrets file" in message and "none was given" in message:
            return None  # refers to the secrets file, which only the scheduler is given
        return message.removeprefix(f"channel {name!r}: ")
    for notifier in built.values():
        close = getattr(notifier, "close", None)
        if callable(close):
            close()
    return None


def channel_names(ctx: ParseContext, value: Any, path: tuple[Any, ...], channels: Mapping[str, Any]
                  ) -> tuple[str, ...] | None:
    """A list of defined channel names, each once (None when it is not a list of names)."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        ctx.err(path, "must be a list of channel names")
        return None
    for i, name in enumerate(value):
        if name not in channels:
            known = ", ".join(channels) or "none are defined"
            ctx.err(path + (i,), f"unknown channel {name!r} (channels: {known})")
    return tuple(dict.fromkeys(value))


def routing_section(ctx: ParseContext, value: Any, channels: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Severity -> channel names."""
    mapping = ctx.mapping(value, ("routing",), SEVERITIES)
    out: dict[str, tuple[str, ...]] = {}
    for severity, names in (mapping or {}).items():
        if severity in SEVERITIES:
            checked = channel_names(ctx, names, ("routing", severity), channels)
            if checked is not None:
                out[severity] = checked
    return out
