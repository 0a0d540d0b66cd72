"""PagerDuty Events API v2 through the official ``pagerduty`` package's :class:`~pagerduty.EventsApiV2Client`.

A firing notification is a ``trigger`` and a resolved one a ``resolve`` with the *same* ``dedup_key``: that is how
PagerDuty closes the incident it opened, and why the key must be stable per (project, rule, series) across
restarts.

Why the package and not a hand-written client: it sets the URL and TLS verification cleanly (``base_url=`` and
``verify=`` are passed through to its httpx2 client), and its retry table is configurable. What it gets wrong by
default is fixed here:

* 429 is retried *without limit* by default, and 503/504 up to six times: every retryable status is capped at
  ``max_retries``;
* it refuses non-https URLs, which is right: tests run an HTTPS receiver with a self-signed certificate and pass
  its CA bundle (``ca_bundle``), never ``verify=False`` (there is no option to turn verification off);
* its error messages quote the endpoint, the response body and part of the routing key, so they are never passed
  on: :class:`~.base.NotifyError` says only the channel and the status.

The events URL is configurable (``events_url``, e.g. the EU endpoint
``https://events.eu.pagerduty.com/v2/enqueue``) but must end in ``/v2/enqueue``, the path the client appends to its
base URL. Its waits use ``time.sleep`` directly (``retry_backoff_s``, doubling); the dispatcher's slower retries on
top are injectable.
"""

from __future__ import annotations

import hashlib
import logging
import ssl
from pathlib import Path
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

import pagerduty

from .base import (
    LIBRARY_LOGGERS,
    AlertNotification,
    NotifyError,
    RedactingFilter,
    finite,
    iso_utc,
    register_secrets,
    safe_error_text,
    truncate,
)

log = logging.getLogger("inferwatch.notifiers.pagerduty")

DEFAULT_EVENTS_URL: Final = "https://events.pagerduty.com/v2/enqueue"
EVENTS_PATH: Final = "/v2/enqueue"
SUMMARY_MAX: Final = 1024
DEDUP_KEY_MAX: Final = 255
SEVERITY: Final = {"critical": "critical", "warning": "warning", "info": "info"}
RETRY_STATUSES: Final = (429, 500, 502, 503, 504)


def events_base_url(events_url: str) -> str:
    """The client's ``base_url`` for an events URL.

    ValueError unless it is ``https://host[:port][/prefix]/v2/enqueue``.
    """
    parts = urlsplit(events_url)
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError("events_url must be an https:// URL")
    if parts.query or parts.fragment or not parts.path.endswith(EVENTS_PATH):
        raise ValueError(f"events_url must end with {EVENTS_PATH} (no query string)")
    return events_url[: -len(EVENTS_PATH)]


def pd_dedup_key(dedup_key: str) -> str:
    """PagerDuty accepts at most 255 characters; a longer key is replaced by a stable hash of itself, so the
    trigger and the resolve still agree."""
    if len(dedup_key) <= DEDUP_KEY_MAX:
        return dedup_key
    return "inferwatch:sha256:" + hashlib.sha256(dedup_key.encode()).hexdigest()


def trigger_event(n: AlertNotification, source: str) -> dict[str, Any]:
    """The ``trigger`` event's properties besides ``event_action``, ``dedup_key`` and ``routing_key``."""
    details: dict[str, Any] = {
        "signal": n.signal,
        "value": finite(n.value),
        "threshold": finite(n.threshold),
        "baseline": finite(n.baseline),
        "labels": dict(n.labels),
        "project_id": n.project_id,
        "rule_id": n.rule_id,
        "series_key": n.series_key,
        "started_at": iso_utc(n.started_at),
        "message": n.message,
    }
    payload: dict[str, Any] = {
        "summary": truncate(n.title, SUMMARY_MAX),
        "source": source,
        "severity": SEVERITY[n.severity],
        "timestamp": iso_utc(n.event_time),
        "component": n.series_key or "all",
        "group": n.project_id,
        "class": n.signal,
        "custom_details": details,
    }
    event: dict[str, Any] = {"payload": payload, "client": "inferwatch"}
    if n.dashboard_url:
        event["client_url"] = n.dashboard_url
        event["links"] = [{"href": n.dashboard_url, "text": "Open dashboard"}]
    return event


class PagerDutyNotifier:
    """One PagerDuty service integration (a routing key)."""

    kind: ClassVar[str] = "pagerduty"

    def __init__(self, name: str, routing_key: str, *, events_url: str = DEFAULT_EVENTS_URL,
                 source: str = "inferwatch", ca_bundle: str | Path | None = None, timeout_s: float = 10.0,
                 max_retries: int = 3, retry_backoff_s: float = 0.5) -> None:
        if not routing_key:
            raise ValueError("the routing key is empty")
        base_url = events_base_url(events_url)
        register_secrets([routing_key])
        RedactingFilter.install(*LIBRARY_LOGGERS)
        self.name = name
        self.source = source
        self._routing_key = routing_key
        verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=str(ca_bundle)) if ca_bundle else True
        client = pagerduty.EventsApiV2Client(routing_key, base_url=base_url, verify=verify)
        # In the client's retry table 0 means "default behaviour", which for 429 is to retry forever; so every
        # status gets at least 1 and the total is capped instead: it stops once more than max_http_attempts
        # retries were made, which with max_retries - 1 allows exactly max_retries (none for 0).
        client.retry = {status: max(1, max_retries) for status in RETRY_STATUSES}
        client.max_http_attempts = max_retries - 1
        client.max_network_attempts = max_retries
        # The client sleeps sleep_timer * sleep_timer_base before its first retry, doubling after.
        client.sleep_timer = retry_backoff_s / client.sleep_timer_base
        client.timeout = timeout_s  # type: ignore[assignment]  # declared int, passed on to httpx2 as is
        self._client = client

    def send(self, notification: AlertNotification) -> None:
        """``trigger`` for firing, ``resolve`` for resolved, both with the notification's dedup key."""
        key = pd_dedup_key(notification.dedup_key)
        try:
            if notification.state == "firing":
                self._client.send_event("trigger", dedup_key=key, **trigger_event(notification, self.source))
            else:
                self._client.send_event("resolve", dedup_key=key)
        except pagerduty.HttpError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if 200 <= status < 300:
                # Accepted, but the body lacked the dedup_key echo the client insists on: the event is in.
                log.warning("pagerduty channel %r: accepted with an unexpected response body", self.name)
                return
            retryable = status == 429 or status >= 500
            raise NotifyError(f"pagerduty channel {self.name!r}: HTTP {status}"
                              + (" after retries" if retryable else ""), retryable=retryable) from None
        except pagerduty.Error:
            # Raised without a response when the network attempts ran out; its message quotes the endpoint.
            raise NotifyError(f"pagerduty channel {self.name!r}: network error after retries") from None
        except Exception as exc:
            raise NotifyError(f"pagerduty channel {self.name!r}: request failed "
                              f"({safe_error_text(exc, [self._routing_key])})") from None

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()
