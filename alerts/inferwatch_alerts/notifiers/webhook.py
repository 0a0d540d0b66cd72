"""A generic signed webhook: the notification as JSON, POSTed with an HMAC-SHA256 signature.

Headers (the contract a receiver codes against):

* ``X-Inferwatch-Signature: sha256=<hex>``: HMAC-SHA256 of the raw request body with the shared signing key (the
  GitHub convention, so existing verifiers work). Use :func:`verify_signature` or compare in constant time.
* ``X-Inferwatch-Timestamp``: Unix seconds when this attempt was sent (differs between retries; informational).
* ``X-Inferwatch-Dedup-Key`` and ``X-Inferwatch-State``: the same values as in the body, for routing without
  parsing. Redeliveries are possible (a retry after a lost response): deduplicate on ``dedup_key`` + ``state`` +
  ``event_time``, which the signature covers.

The body is :meth:`~.base.AlertNotification.to_json_dict` as compact UTF-8 JSON. Retries: connection errors, 429
(honouring a numeric ``Retry-After``, capped) and 5xx, up to ``max_retries`` times with doubling waits through an
injectable sleep. Redirects are not followed (a redirect would re-send the alert somewhere nobody configured).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Final
from urllib.parse import urlsplit

import httpx

from .base import (
    LIBRARY_LOGGERS,
    AlertNotification,
    NotifyError,
    RedactingFilter,
    register_secrets,
    safe_error_text,
)

log = logging.getLogger("inferwatch.notifiers.webhook")

SIGNATURE_HEADER: Final = "X-Inferwatch-Signature"
TIMESTAMP_HEADER: Final = "X-Inferwatch-Timestamp"
USER_AGENT: Final = "inferwatch-notifier/1"

Sleep = Callable[[float], None]


def sign(key: str | bytes, body: bytes) -> str:
    """The signature header value for ``body``: ``sha256=`` and the hex HMAC-SHA256."""
    raw_key = key.encode() if isinstance(key, str) else key
    return "sha256=" + hmac.new(raw_key, body, hashlib.sha256).hexdigest()


def verify_signature(key: str | bytes, body: bytes, header: str) -> bool:
    """For receivers: does ``header`` match ``body`` under ``key`` (constant-time comparison)."""
    return hmac.compare_digest(sign(key, body), header.strip())


def encode_body(notification: AlertNotification) -> bytes:
    """The exact bytes that are posted and signed."""
    return json.dumps(notification.to_json_dict(), ensure_ascii=False, separators=(",", ":")).encode()


def _retry_after_s(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None


class WebhookNotifier:
    """One HTTP endpoint that receives signed notifications."""

    kind: ClassVar[str] = "webhook"

    def __init__(self, name: str, url: str, signing_key: str, *, ca_bundle: str | Path | None = None,
                 timeout_s: float = 10.0, max_retries: int = 2, retry_backoff_s: float = 0.5,
                 max_retry_wait_s: float = 30.0, sleep: Sleep = time.sleep,
                 clock: Callable[[], float] = time.time) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the webhook URL must be an http:// or https:// URL")
        if not signing_key:
            raise ValueError("the signing key is empty")
        # The URL may carry a token (many receivers authenticate that way): treated as a secret like the key.
        register_secrets([url, parts.path, signing_key])
        RedactingFilter.install(*LIBRARY_LOGGERS)
        self.name = name
        self._url = url
        self._key = signing_key.encode()
        self._max_retries = max_retries
        self._backoff_s = retry_backoff_s
        self._max_wait_s = max_retry_wait_s
        self._sleep = sleep
        self._clock = clock
        verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=str(ca_bundle)) if ca_bundle else True
        self._client = httpx.Client(timeout=timeout_s, verify=verify, follow_redirects=False)

    def send(self, notification: AlertNotification) -> None:
        """POST the signed JSON; :class:`NotifyError` unless the receiver answers 2xx within the retries."""
        body = encode_body(notification)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            SIGNATURE_HEADER: sign(self._key, body),
            "X-Inferwatch-Dedup-Key": notification.dedup_key,
            "X-Inferwatch-State": notification.state,
        }
        failure = ""
        for attempt in range(self._max_retries + 1):
            hint: float | None = None
            try:
                response = self._client.post(self._url, content=body,
                                             headers=headers | {TIMESTAMP_HEADER: str(int(self._clock()))})
            except httpx.TransportError as exc:
                failure = f"connection failed ({safe_error_text(exc, [self._url])})"
            except Exception as exc:  # not a network failure (e.g. a malformed URL): retrying cannot help
                raise NotifyError(f"webhook channel {self.name!r}: request failed "
                                  f"({safe_error_text(exc, [self._url])})", retryable=False) from None
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return
                if status != 429 and status < 500:
                    raise NotifyError(f"webhook channel {self.name!r}: HTTP {status}", retryable=False)
                failure = f"HTTP {status}"
                hint = _retry_after_s(response) if status == 429 else None
            if attempt < self._max_retries:
                delay = hint if hint is not None else self._backoff_s * 2**attempt
                log.info("webhook channel %r: %s; retry %d of %d", self.name, failure, attempt + 1,
                         self._max_retries)
                self._sleep(max(0.0, min(self._max_wait_s, delay)))
        raise NotifyError(f"webhook channel {self.name!r}: {failure} after {self._max_retries + 1} attempts")

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()
