"""Slack incoming webhooks through slack_sdk's :class:`~slack_sdk.webhook.WebhookClient`, as Block Kit messages.

Why the retry handlers are built here rather than taken from slack_sdk's defaults:

* the client's default list is only a connection-error handler, so a 429 or a 500 comes straight back;
* the stock rate-limit handler sleeps for ``Retry-After`` plus up to a second, with no upper bound, and raises on a
  ``Retry-After`` that is an HTTP date; the stock server-error handler retries only 500 and 503.

So each of the three stock handlers is subclassed to cap the wait, retry 502/504 too, and sleep through an
injectable function (tests pass a recorder instead of sleeping). ``WebhookClient.send`` does not raise on an HTTP
error; the status is checked here and turned into :class:`~.base.NotifyError`.

The webhook URL is the credential. It is registered as a secret (see :mod:`.base`), and slack_sdk gets a logger of
ours with a redacting filter, because it logs ``Going to retry the same request: POST <url>`` at INFO.
"""

from __future__ import annotations

import logging
import re
import ssl
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.client import RemoteDisconnected
from typing import Any, ClassVar, Final
from urllib.error import URLError
from urllib.parse import urlsplit

from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.handler import RetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.webhook import WebhookClient

from .base import (
    AlertNotification,
    NotifyError,
    RedactingFilter,
    finite,
    iso_utc,
    register_secrets,
    safe_error_text,
    truncate,
)

log = logging.getLogger("inferwatch.notifiers.slack")
SDK_LOGGER: Final = "inferwatch.notifiers.slack.sdk"

SEVERITY_EMOJI: Final = {
    "critical": ":red_circle:",
    "warning": ":large_orange_circle:",
    "info": ":large_blue_circle:",
}
RESOLVED_EMOJI: Final = ":large_green_circle:"
RETRY_STATUSES: Final = frozenset({500, 502, 503, 504})
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "::1", "localhost"})
# Block Kit limits: header text 150 characters, section text 3000, a field 2000.
HEADER_MAX: Final = 150
SECTION_MAX: Final = 3000
FIELD_MAX: Final = 2000
_SLACK_ERROR_CODE = re.compile(r"[a-z_]{1,64}")

Sleep = Callable[[float], None]


class _Backoff:
    """Exponential waits ``base_s * 2**n``, capped, through an injectable sleep."""

    def __init__(self, base_s: float, cap_s: float, sleep: Sleep) -> None:
        self.base_s, self.cap_s, self.sleep = base_s, cap_s, sleep

    def wait(self, attempt: int, hint_s: float | None = None) -> None:
        delay = hint_s if hint_s is not None else self.base_s * 2**attempt
        self.sleep(max(0.0, min(self.cap_s, delay)))


def _next_attempt(state: RetryState, backoff: _Backoff, hint_s: float | None = None) -> None:
    state.next_attempt_requested = True
    backoff.wait(state.current_attempt, hint_s)
    state.increment_current_attempt()


class ConnectionRetry(ConnectionErrorRetryHandler):
    """Connection refused/reset, timeouts: retried with backoff (timeouts are not in slack_sdk's list)."""

    def __init__(self, max_retry_count: int, backoff: _Backoff) -> None:
        super().__init__(max_retry_count=max_retry_count,
                         error_types=[URLError, ConnectionError, RemoteDisconnected, TimeoutError])
        self._backoff = backoff

    def prepare_for_next_attempt(self, *, state: RetryState, request: HttpRequest,
                                 response: HttpResponse | None = None, error: Exception | None = None) -> None:
        _next_attempt(state, self._backoff)


class RateLimitRetry(RateLimitErrorRetryHandler):
    """429: waits ``Retry-After`` seconds, capped (a misbehaving server must not park the thread for minutes)."""

    def __init__(self, max_retry_count: int, backoff: _Backoff) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self._backoff = backoff

    def prepare_for_next_attempt(self, *, state: RetryState, request: HttpRequest,
                                 response: HttpResponse | None = None, error: Exception | None = None) -> None:
        _next_attempt(state, self._backoff, retry_after_s(response.headers if response is not None else {}))


class ServerErrorRetry(ServerErrorRetryHandler):
    """500, 502, 503 and 504, with backoff."""

    def __init__(self, max_retry_count: int, backoff: _Backoff) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self._backoff = backoff

    def _can_retry(self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None,
                   error: Exception | None = None) -> bool:
        return response is not None and response.status_code in RETRY_STATUSES

    def prepare_for_next_attempt(self, *, state: RetryState, request: HttpRequest,
                                 response: HttpResponse | None = None, error: Exception | None = None) -> None:
        _next_attempt(state, self._backoff)


def retry_after_s(headers: Any) -> float | None:
    """Seconds from a ``Retry-After`` header (slack_sdk gives lists of values), or None when absent or a date."""
    for key, value in dict(headers).items():
        if key.lower() == "retry-after":
            raw = value[0] if isinstance(value, list | tuple) and value else value
            try:
                return max(0.0, float(raw))
            except (TypeError, ValueError):
                return None
    return None


def check_webhook_url(url: str) -> None:
    """Refuse a Slack URL that would send the credential in clear text: https, or http to this machine (tests)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return
    raise ValueError("the Slack webhook URL must be an https:// URL (plain http only to 127.0.0.1/localhost)")


def _sdk_logger() -> logging.Logger:
    logger = logging.getLogger(SDK_LOGGER)
    # INFO, not NOTSET: slack_sdk writes request bodies and URLs at DEBUG whenever the logger's own level is unset.
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    RedactingFilter.install(SDK_LOGGER)
    return logger


class SlackNotifier:
    """One Slack incoming webhook."""

    kind: ClassVar[str] = "slack"

    def __init__(self, name: str, webhook_url: str, *, timeout_s: float = 10.0, max_retries: int = 2,
                 retry_backoff_s: float = 0.5, max_retry_wait_s: float = 30.0,
                 ssl_context: ssl.SSLContext | None = None, sleep: Sleep = time.sleep) -> None:
        check_webhook_url(webhook_url)
        register_secrets([webhook_url, urlsplit(webhook_url).path])
        self.name = name
        self._url = webhook_url
        backoff = _Backoff(retry_backoff_s, max_retry_wait_s, sleep)
        handlers: list[RetryHandler] = [
            ConnectionRetry(max_retries, backoff),
            RateLimitRetry(max_retries, backoff),
            ServerErrorRetry(max_retries, backoff),
        ]
        self._client = WebhookClient(webhook_url, timeout=max(1, round(timeout_s)), ssl=ssl_context,
                                     logger=_sdk_logger(), retry_handlers=handlers)

    def send(self, notification: AlertNotification) -> None:
        """Post the Block Kit message; :class:`NotifyError` unless Slack answered 2xx (after the retries)."""
        message = build_message(notification)
        try:
            response = self._client.send(text=message["text"], blocks=message["blocks"])
        except Exception as exc:  # urllib raises on network failures once the connection handler gives up
            raise NotifyError(f"slack channel {self.name!r}: request failed "
                              f"({safe_error_text(exc, [self._url])})") from None
        status = response.status_code
        if 200 <= status < 300:
            return
        body = (response.body or "").strip()
        detail = f" ({body})" if _SLACK_ERROR_CODE.fullmatch(body) else ""
        retryable = status == 429 or status >= 500
        raise NotifyError(f"slack channel {self.name!r}: HTTP {status}{detail}"
                          + (" after retries" if retryable else ""), retryable=retryable)


def escape(text: str) -> str:
    """Slack mrkdwn escaping: a label such as ``<none>`` must not turn into a link or a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unit_of(signal: str) -> str:
    """The signal's unit from the rule engine's catalogue (:mod:`inferwatch_alerts.signals`), else from a suffix
    (``_ms``, ``_usd``), else none. A message must go out even if the catalogue cannot be read, hence the guard."""
    try:
        from inferwatch_alerts.signals import SIGNALS

        known = SIGNALS.get(signal)
        if known is not None:
            return str(known.unit)
    except Exception:  # a missing or broken catalogue only costs the unit in the message
        pass
    if signal.endswith("_ms"):
        return "ms"
    if signal.endswith("_usd"):
        return "USD"
    return ""


def _plain(value: float) -> str:
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1 or value == 0:
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return f"{value:.3g}"


def format_value(value: float | None, unit: str = "") -> str:
    """A number for people: ``2,450 ms``, ``1.23%`` (a ratio), ``$42.10/h``; ``n/a`` when missing."""
    number = finite(value)
    if number is None:
        return "n/a"
    if unit == "ms":
        return f"{number:,.0f} ms"
    if unit == "ratio":
        return _plain(number * 100) + "%"
    if unit.startswith("USD"):
        return f"${number:,.2f}{unit[3:]}"
    return f"{_plain(number)} {unit}" if unit else _plain(number)


def slack_date(when: datetime) -> str:
    """A Slack date token: shown in each reader's own time zone, with the UTC ISO time as the fallback text."""
    seconds = int(when.replace(tzinfo=when.tzinfo or UTC).timestamp())
    return f"<!date^{seconds}^{{date_short_pretty}} {{time}}|{iso_utc(when)}>"


def _field(label: str, value: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": truncate(f"*{label}*\n{value}", FIELD_MAX)}


def build_message(n: AlertNotification) -> dict[str, Any]:
    """The ``text`` (what notifications and screen readers show) and Block Kit ``blocks`` for one transition."""
    resolved = n.state == "resolved"
    emoji = RESOLVED_EMOJI if resolved else SEVERITY_EMOJI[n.severity]
    heading = f"Resolved: {n.title}" if resolved else n.title
    text = f"[{'RESOLVED' if resolved else n.severity.upper()}] {escape(n.title)}"
    unit = unit_of(n.signal)
    fields = [
        _field("Signal", f"`{escape(n.signal)}`"),
        _field("Value", escape(format_value(n.value, unit))),
    ]
    if n.threshold is not None:
        fields.append(_field("Threshold", escape(format_value(n.threshold, unit))))
    if n.baseline is not None:
        fields.append(_field("Baseline", escape(format_value(n.baseline, unit))))
    fields.append(_field("Group", escape(n.series_key) if n.series_key else "all"))
    fields.append(_field("Started", slack_date(n.started_at)))
    if resolved:
        fields.append(_field("Resolved", slack_date(n.event_time)))
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": truncate(f"{emoji} {heading}", HEADER_MAX),
                                    "emoji": True}},
    ]
    if n.message:
        section = {"type": "mrkdwn", "text": truncate(escape(n.message), SECTION_MAX)}
        blocks.append({"type": "section", "text": section})
    blocks.append({"type": "section", "fields": fields})
    context = [f"severity *{n.severity}*", f"rule `{escape(n.rule_id)}`", f"project `{escape(n.project_id)}`"]
    context += [f"{escape(k)}={escape(v)}" for k, v in sorted(n.labels.items())]
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": truncate(" · ".join(context),
                                                                                        SECTION_MAX)}]})
    if n.dashboard_url:
        blocks.append({"type": "actions", "elements": [
            {"type": "button", "text": {"type": "plain_text", "text": "Open dashboard"}, "url": n.dashboard_url,
             "action_id": "open_dashboard"},
        ]})
    return {"text": text, "blocks": blocks}
