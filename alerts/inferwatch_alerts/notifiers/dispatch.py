"""Fan one notification out to its channels, retry failures with backoff, and record every delivery.

The rule engine records the transition (``alert_events`` / ``alert_state``) *before* it dispatches, so the database
alone decides what was already sent and a failed delivery can never cause a duplicate page later. The dispatcher's
job is the other half: try hard (each notifier retries quickly on its own; the dispatcher retries again with
longer, doubling waits), then write down what happened in ``notifications`` (migration 0005) so a missed page is
visible instead of only logged, and count it for ``/metrics``.

:meth:`Dispatcher.dispatch` never raises: a notifier that fails, a channel name nobody configured, or a database
that refuses the record each become a failed :class:`Delivery` or a counter, and the next channel still gets its
message. Channels are served one after another; with the defaults a channel that is down costs about 7 s of waits
plus its own retries, so callers that must not wait (the evaluation loop) dispatch from a worker thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from inferwatch_collector.store import Store

from ..timeutil import utc as _utc
from .base import AlertNotification, Notifier, NotifyError, safe_error_text, truncate

log = logging.getLogger("inferwatch.notifiers")

TABLE: Final = "notifications"
COLUMNS: Final = ("project_id", "rule_id", "series_key", "dedup_key", "channel", "state", "event_time", "sent_at",
                  "ok", "attempts", "error")
ERROR_MAX: Final = 500
STAT_KEYS: Final = ("sent", "failed", "retried", "record_failed")


@dataclass(frozen=True)
class Delivery:
    """The outcome for one channel: ``attempts`` counts the dispatcher's calls of ``send`` (0 for an unknown
    channel); ``error`` is empty when ``ok`` and never holds a secret or a URL."""

    channel: str
    ok: bool
    attempts: int
    error: str


class Dispatcher:
    """Sends notifications to named channels; thread-safe (counters are locked, notifiers are shared)."""

    def __init__(self, channels: Mapping[str, Notifier], store: Store | None = None, *, max_attempts: int = 4,
                 backoff_s: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if backoff_s < 0:
            raise ValueError("backoff_s must not be negative")
        self.channels = dict(channels)
        self.store = store
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self._sleep = sleep
        self._lock = threading.Lock()
        self.stats: dict[str, int] = dict.fromkeys(STAT_KEYS, 0)

    def dispatch(self, notification: AlertNotification, channel_names: Sequence[str]) -> list[Delivery]:
        """Send to each named channel (each name once, in order); record every delivery when a store is given."""
        deliveries: list[Delivery] = []
        sent_at: list[datetime] = []
        for name in dict.fromkeys(channel_names):
            deliveries.append(self._deliver(notification, name))
            sent_at.append(datetime.now(UTC))
        if self.store is not None and deliveries:
            self._record(notification, deliveries, sent_at)
        return deliveries

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.stats[key] += n

    def _deliver(self, notification: AlertNotification, name: str) -> Delivery:
        notifier = self.channels.get(name)
        if notifier is None:
            self._count("failed")
            log.warning("notification for rule %r not sent: unknown channel %r", notification.rule_id, name)
            return Delivery(name, False, 0, f"unknown channel {name!r}")
        error = ""
        for attempt in range(1, self.max_attempts + 1):
            retryable = True
            try:
                notifier.send(notification)
            except NotifyError as exc:
                error, retryable = str(exc), exc.retryable
            except Exception as exc:
                # A bug in a notifier, not a delivery problem: retrying the same code will not help.
                error, retryable = f"unexpected error ({safe_error_text(exc)})", False
            else:
                self._count("sent")
                log.info("notified channel %r: rule %r %s %s (attempt %d)", name, notification.rule_id,
                         notification.series_key, notification.state, attempt)
                return Delivery(name, True, attempt, "")
            if not retryable or attempt == self.max_attempts:
                break
            delay = self.backoff_s * 2 ** (attempt - 1)
            self._count("retried")
            log.info("channel %r failed (%s); retrying in %.1f s", name, error, delay)
            self._sleep(delay)
        self._count("failed")
        error = truncate(error, ERROR_MAX)
        log.warning("notification for rule %r %s on channel %r failed after %d attempt(s): %s",
                    notification.rule_id, notification.state, name, attempt, error)
        return Delivery(name, False, attempt, error)

    def _record(self, n: AlertNotification, deliveries: Sequence[Delivery], sent_at: Sequence[datetime]) -> None:
        assert self.store is not None
        k = len(deliveries)
        columns = [
            [n.project_id] * k, [n.rule_id] * k, [n.series_key] * k, [n.dedup_key] * k,
            [d.channel for d in deliveries], [n.state] * k, [_utc(n.event_time)] * k, list(sent_at),
            [d.ok for d in deliveries], [d.attempts for d in deliveries], [d.error for d in deliveries],
        ]
        try:
            self.store.insert_columns(TABLE, columns, COLUMNS)
        except Exception as exc:
            self._count("record_failed", k)
            log.error("could not record %d notification deliveries for rule %r: %s", k, n.rule_id,
                      safe_error_text(exc))

    def close(self) -> None:
        """Close every channel that holds a connection pool."""
        for notifier in self.channels.values():
            close = getattr(notifier, "close", None)
            if callable(close):
                close()
