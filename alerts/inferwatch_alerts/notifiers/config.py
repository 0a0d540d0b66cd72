"""Build notifiers from the ``channels:`` section of the alert rules file.

::

    channels:
      team-slack:
        type: slack
        webhook_url_env: SLACK_WEBHOOK_URL          # or webhook_url_secret: slack_team
      oncall-pagerduty:
        type: pagerduty
        routing_key_secret: pd_llm_service          # or routing_key_env: PD_ROUTING_KEY
        events_url: https://events.eu.pagerduty.com/v2/enqueue   # optional; default the US endpoint
        source: inferwatch-prod                     # optional
      audit-hook:
        type: webhook
        url: https://hooks.example.com/inferwatch    # or url_env / url_secret when the URL carries a token
        signing_key_env: INFERWATCH_WEBHOOK_KEY
        ca_bundle: /etc/ssl/internal-ca.pem          # optional, for a private CA (pagerduty too)

Every channel also takes ``timeout_s``, ``max_retries`` and ``retry_backoff_s`` (the notifier's own quick
retries). Credentials (a Slack webhook URL, a routing key, a signing key) are referenced, never written in the
rules file, which gets committed and shared: ``<field>_env`` names an environment variable and ``<field>_secret`` a
key in the secrets file, a YAML or JSON mapping of names to strings that must not be world-readable. Errors are
``ValueError``\\ s that name the channel and the field, and never quote a secret.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from .base import Notifier
from .pagerduty import DEFAULT_EVENTS_URL, PagerDutyNotifier
from .slack import SlackNotifier
from .webhook import WebhookNotifier

CHANNEL_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
COMMON_FIELDS: Final = ("type", "timeout_s", "max_retries", "retry_backoff_s")
# type -> (credentials that must be referenced, references-or-inline fields, plain optional fields)
FIELDS: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]] = {
    "slack": (("webhook_url",), (), ()),
    "pagerduty": (("routing_key",), (), ("events_url", "source", "ca_bundle")),
    "webhook": (("signing_key",), ("url",), ("ca_bundle",)),
}


class _Secrets:
    """The secrets file, read once and only if some channel refers to it."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._values: dict[str, str] | None = None

    def get(self, channel: str, field: str, key: str) -> str:
        if self.path is None:
            raise ValueError(f"channel {channel!r}: {field} refers to the secrets file, but none was given")
        values = self._load()
        if key not in values:
            raise ValueError(f"channel {channel!r}: {field} names {key!r}, which is not in the secrets file "
                             f"{self.path}")
        return values[key]

    def _load(self) -> dict[str, str]:
        if self._values is not None:
            return self._values
        assert self.path is not None
        try:
            mode = self.path.stat().st_mode
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read the secrets file {self.path}: {exc.strerror}") from None
        if mode & stat.S_IROTH:
            raise ValueError(f"the secrets file {self.path} is readable by every user (mode "
                             f"{stat.S_IMODE(mode):04o}); restrict it, e.g. chmod 600")
        try:
            data = yaml.safe_load(text)  # JSON is YAML too
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            # The parser's own message may quote the offending line, i.e. a secret: only say where.
            raise ValueError(f"the secrets file {self.path} is not valid YAML/JSON{where}") from None
        if not isinstance(data, Mapping):
            raise ValueError(f"the secrets file {self.path} must hold a mapping of names to strings")
        bad = [str(k) for k, v in data.items() if not isinstance(k, str) or not isinstance(v, str)]
        if bad:
            raise ValueError(f"the secrets file {self.path}: entries must be strings: {', '.join(sorted(bad))}")
        self._values = dict(data)
        return self._values


def _number(channel: str, options: Mapping[str, Any], field: str, default: float, low: float, high: float,
            *, integer: bool = False) -> Any:
    value = options.get(field, default)
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"channel {channel!r}: {field} must be {kind} from {low:g} to {high:g}, not {value!r}")
    return value


def _string(channel: str, options: Mapping[str, Any], field: str) -> str | None:
    value = options.get(field)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"channel {channel!r}: {field} must be a non-empty string")
    return value


def _ca_bundle(channel: str, options: Mapping[str, Any]) -> Path | None:
    value = _string(channel, options, "ca_bundle")
    if value is None:
        return None
    path = Path(value).expanduser()
    if not path.is_file():
        raise ValueError(f"channel {channel!r}: ca_bundle {value!r} is not a file")
    return path


def _credential(channel: str, options: Mapping[str, Any], field: str, env: Mapping[str, str], secrets: _Secrets,
                *, inline_ok: bool) -> str:
    refs = [f"{field}_env", f"{field}_secret"] + ([field] if inline_ok else [])
    given = [r for r in refs if r in options]
    if not inline_ok and field in options:
        raise ValueError(f"channel {channel!r}: {field} must not be written in the rules file; use {field}_env "
                         f"(an environment variable) or {field}_secret (a key in the secrets file)")
    if len(given) != 1:
        choices = " or ".join(refs)
        raise ValueError(f"channel {channel!r}: give exactly one of {choices}"
                         + (f" (got {', '.join(given)})" if given else ""))
    ref = given[0]
    name = options[ref]
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"channel {channel!r}: {ref} must be a non-empty string")
    if ref == field:
        return name
    if ref.endswith("_env"):
        value = env.get(name, "")
        if not value:
            raise ValueError(f"channel {channel!r}: {ref} names the environment variable {name}, which is not set")
        return value
    return secrets.get(channel, ref, name)


def _build(channel: str, kind: str, options: Mapping[str, Any], env: Mapping[str, str],
           secrets: _Secrets) -> Notifier:
    common: dict[str, Any] = {
        "timeout_s": _number(channel, options, "timeout_s", 10.0, 0.1, 120.0),
        "max_retries": _number(channel, options, "max_retries", 2, 0, 10, integer=True),
        "retry_backoff_s": _number(channel, options, "retry_backoff_s", 0.5, 0.0, 60.0),
    }
    builders: dict[str, Callable[[], Notifier]] = {
        "slack": lambda: SlackNotifier(
            channel, _credential(channel, options, "webhook_url", env, secrets, inline_ok=False), **common),
        "pagerduty": lambda: PagerDutyNotifier(
            channel, _credential(channel, options, "routing_key", env, secrets, inline_ok=False),
            events_url=_string(channel, options, "events_url") or DEFAULT_EVENTS_URL,
            source=_string(channel, options, "source") or "inferwatch",
            ca_bundle=_ca_bundle(channel, options), **common),
        "webhook": lambda: WebhookNotifier(
            channel, _credential(channel, options, "url", env, secrets, inline_ok=True),
            _credential(channel, options, "signing_key", env, secrets, inline_ok=False),
            ca_bundle=_ca_bundle(channel, options), **common),
    }
    try:
        return builders[kind]()
    except ValueError as exc:
        message = str(exc)
        prefixed = message if message.startswith("channel ") else f"channel {channel!r}: {message}"
        raise ValueError(prefixed) from None


def _allowed_fields(kind: str) -> set[str]:
    referenced, either, plain = FIELDS[kind]
    allowed = set(COMMON_FIELDS) | set(plain)
    for field in referenced + either:
        allowed |= {f"{field}_env", f"{field}_secret"}
    # Inline credentials are "known" here so that _credential can say why they are refused.
    return allowed | set(either) | set(referenced)


def load_channels(spec: Mapping[str, Mapping[str, Any]] | None, *, env: Mapping[str, str] = os.environ,
                  secrets_file: str | Path | None = None) -> dict[str, Notifier]:
    """Notifiers by channel name. ``spec`` is the rules file's ``channels:`` mapping (None or empty: no channels).

    Everything is checked before anything is returned, so a typo fails at load time with the channel and field
    named rather than at 3 a.m. when the first alert fires.
    """
    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        raise ValueError("channels must be a mapping of channel name to its settings")
    secrets = _Secrets(secrets_file)
    channels: dict[str, Notifier] = {}
    try:
        for channel, options in spec.items():
            channels[channel] = _channel(channel, options, env, secrets)
    except ValueError:
        for built in channels.values():  # release the connection pools of the channels built before the error
            close = getattr(built, "close", None)
            if callable(close):
                close()
        raise
    return channels


def _channel(channel: Any, options: Any, env: Mapping[str, str], secrets: _Secrets) -> Notifier:
    """One channel's notifier, after checking its name, type and field names."""
    if not isinstance(channel, str) or not CHANNEL_NAME.fullmatch(channel):
        raise ValueError(f"channel name {channel!r} must be 1-64 letters, digits, '_', '-' or '.'")
    if not isinstance(options, Mapping):
        raise ValueError(f"channel {channel!r}: settings must be a mapping")
    kind = options.get("type")
    if kind not in FIELDS:
        raise ValueError(f"channel {channel!r}: type must be one of {', '.join(FIELDS)}, not {kind!r}")
    unknown = sorted(set(map(str, options)) - _allowed_fields(kind))
    if unknown:
        raise ValueError(f"channel {channel!r}: unknown field(s) {', '.join(unknown)} for type {kind} "
                         f"(allowed: {', '.join(sorted(_allowed_fields(kind)))})")
    return _build(channel, kind, options, env, secrets)
