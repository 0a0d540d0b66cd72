"""What every notifier shares: the notification itself, the error a failed delivery raises, the protocol, and the
secret redaction that keeps webhook URLs and routing keys out of logs and messages.

The rule engine builds one :class:`AlertNotification` per state transition (fire once, resolve once, re-notify on
the interval) and hands it to the :class:`~.dispatch.Dispatcher`; a notifier only turns it into one HTTP request
(plus its own short retries) and raises :class:`NotifyError` when that did not work.

Secrets. A Slack incoming-webhook URL *is* a credential (anyone holding it can post), so is a PagerDuty routing
key, and a generic webhook URL may carry a token. Our own messages are built without them, but the HTTP libraries
we call log request URLs themselves (httpx and httpx2 at INFO, slack_sdk at INFO on a retry). Every secret a
notifier is built with is therefore registered here, and :class:`RedactingFilter` (installed on those libraries'
loggers) replaces it in any record before a handler sees it. Secrets are only ever added: the set stays tiny (one
or two per configured channel) and a value that was once a secret stays redacted.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, Final, Literal, Protocol, get_args, runtime_checkable

State = Literal["firing", "resolved"]
Severity = Literal["critical", "warning", "info"]
STATES: Final[tuple[str, ...]] = get_args(State)
SEVERITIES: Final[tuple[str, ...]] = get_args(Severity)

REDACTED: Final = "[redacted]"
# Loggers of the libraries notifiers call that write request URLs (see the module docstring). A filter attached
# to a logger sees only records logged on that exact logger, hence the exact names.
LIBRARY_LOGGERS: Final = ("httpx", "httpx2", "pagerduty.api_client")


@dataclass(frozen=True)
class AlertNotification:
    """One alert state transition, as every channel receives it.

    ``dedup_key`` is stable per incident (project, rule, series): the same for the trigger and the resolve, which
    is how PagerDuty closes the incident it opened and how a webhook receiver can deduplicate.
    """

    project_id: str
    rule_id: str
    series_key: str
    state: State
    severity: Severity
    title: str
    message: str
    signal: str
    value: float
    threshold: float | None
    baseline: float | None
    labels: Mapping[str, str]
    started_at: datetime
    event_time: datetime
    dedup_key: str
    dashboard_url: str | None = None

    def __post_init__(self) -> None:
        # A wrong state or severity would otherwise surface as an odd message in someone's pager; fail where it is
        # built instead.
        if self.state not in STATES:
            raise ValueError(f"state must be one of {', '.join(STATES)}, not {self.state!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}, not {self.severity!r}")
        if not self.dedup_key:
            raise ValueError("dedup_key must not be empty")

    def to_json_dict(self) -> dict[str, Any]:
        """The notification as JSON-ready data: ISO-8601 UTC times, labels as an object, NaN/inf as null."""
        return {
            "project_id": self.project_id,
            "rule_id": self.rule_id,
            "series_key": self.series_key,
            "state": self.state,
            "severity": self.severity,
            "title": self.title,
            "message": self.message,
            "signal": self.signal,
            "value": finite(self.value),
            "threshold": finite(self.threshold),
            "baseline": finite(self.baseline),
            "labels": dict(self.labels),
            "started_at": iso_utc(self.started_at),
            "event_time": iso_utc(self.event_time),
            "dedup_key": self.dedup_key,
            "dashboard_url": self.dashboard_url,
        }


class NotifyError(Exception):
    """A delivery that failed after the notifier's own retries. The message never contains a secret or a URL.

    ``retryable`` tells the dispatcher whether trying again later can help: a rate limit, a server error or a
    network failure can; a rejected request (HTTP 4xx other than 429) cannot, so it is not retried.
    """

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


@runtime_checkable
class Notifier(Protocol):
    """A configured channel. ``name`` is the channel's name from the rules file, e.g. ``oncall-pagerduty``."""

    name: str

    def send(self, notification: AlertNotification) -> None:
        """Deliver one notification; raise :class:`NotifyError` when it could not be delivered."""
        ...


def iso_utc(value: datetime) -> str:
    """ISO-8601 in UTC with millisecond precision and a ``Z`` suffix; a naive datetime is taken as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def finite(value: float | None) -> float | None:
    """``value`` as a float, or None when missing or not finite (JSON has no NaN, and receivers reject it)."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def safe_error_text(exc: BaseException, secrets: Iterable[str] = (), limit: int = 200) -> str:
    """A short description of ``exc`` fit for logs and the ``notifications`` table: its type and message with
    secrets and anything URL-shaped removed (library exceptions sometimes quote the request URL)."""
    text = redact(str(exc), secrets)
    text = _URL.sub("[url]", text)
    return truncate(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, limit)


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class _SecretRegistry:
    values: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


_SECRETS = _SecretRegistry()
# Shorter strings than this are not redacted: replacing e.g. "1" in every log line would garble logs while
# protecting nothing (no real webhook URL or routing key is that short).
_MIN_SECRET_LEN: Final = 8


def register_secrets(values: Iterable[str]) -> None:
    """Remember ``values`` as secrets so :func:`redact` and :class:`RedactingFilter` hide them."""
    with _SECRETS.lock:
        _SECRETS.values.update(v for v in values if v and len(v) >= _MIN_SECRET_LEN)


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every registered secret (and those in ``extra``) replaced, longest first."""
    with _SECRETS.lock:
        secrets = set(_SECRETS.values)
    secrets.update(v for v in extra if v and len(v) >= _MIN_SECRET_LEN)
    for secret in sorted(secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


class RedactingFilter(logging.Filter):
    """Rewrites a log record whose message contains a registered secret; never drops a record."""

    installed: ClassVar[set[str]] = set()
    _install_lock: ClassVar[threading.Lock] = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's problem, not ours to hide
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True

    @classmethod
    def install(cls, *logger_names: str) -> None:
        """Attach one filter to each named logger (idempotent)."""
        with cls._install_lock:
            for name in logger_names:
                if name not in cls.installed:
                    logging.getLogger(name).addFilter(cls())
                    cls.installed.add(name)
