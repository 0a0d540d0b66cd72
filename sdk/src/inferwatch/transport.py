"""HTTP to the collector: the one client the SDK uses for spans, metrics, feedback and the budget status.

One ``requests`` session per :class:`Transport` (made lazily, and again in a forked child; ``requests`` itself
is imported with the first request, so ``import inferwatch`` stays light until something is sent), the project's
key as ``Authorization: Bearer``, and nothing else of the environment's OTLP settings: ``OTEL_EXPORTER_OTLP_*`` headers
are the app's credentials for its own backend and never reach our collector. An https collector is verified
against the system's trust store, or the ``ca_file`` option (``INFERWATCH_CA_FILE``) when it has a private
CA.

One retry rule (:meth:`Transport.send`): another attempt after an answer the :class:`RetryPolicy` calls
transient (and after any connection failure or timeout), waiting the collector's ``Retry-After`` or a doubling
backoff with ±20 % jitter, within the attempt count and the deadline; an ``abort`` event cuts a wait short.
"""

from __future__ import annotations

import gzip
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from . import _guard

if TYPE_CHECKING:
    import requests

USER_AGENT = "inferwatch-python"  # followed by the SDK's version
MAX_ANSWER_BYTES = 1 << 16  # of a 2xx answer's body, unless a caller asks for more


@dataclass(frozen=True)
class RetryPolicy:
    """How often to try one request and how long to wait in between."""

    attempts: int  # requests at most
    first_backoff_s: float  # before the second attempt; doubled before each next one
    retry_statuses: frozenset[int]  # answers worth another attempt (a connection failure always is)
    max_backoff_s: float = 600.0
    max_retry_after_s: float = 600.0  # the longest ``Retry-After`` followed
    jitter: float = 0.2  # each backoff is scaled by a random factor within 1 ± jitter

    def retryable(self, status: int) -> bool:
        return status == 0 or status in self.retry_statuses

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt number ``attempt`` (0 for the first)."""
        base = min(self.first_backoff_s * 2 ** attempt, self.max_backoff_s)
        return base * random.uniform(1 - self.jitter, 1 + self.jitter)

    def wait(self, attempt: int, answer: Answer) -> float:
        """The collector's ``Retry-After`` when it sent one (at most ``max_retry_after_s``), else the backoff."""
        if answer.retry_after is not None:
            return min(max(answer.retry_after, 0.0), self.max_retry_after_s)
        return self.backoff(attempt)


# OTLP/HTTP's transient answers (the specification's 429/502/503/504, and 408)
OTLP_RETRY = RetryPolicy(attempts=6, first_backoff_s=1.0, retry_statuses=frozenset({408, 429, 502, 503, 504}))


class Answer(NamedTuple):
    status: int  # the HTTP status; 0 when the collector could not be reached (refused, reset, timed out)
    body: bytes = b""  # a 2xx answer's body
    retry_after: float | None = None  # seconds, from a transient answer's Retry-After header

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


UNREACHABLE = Answer(0)


class Transport:
    """Requests to one collector (``endpoint``) with one key; safe to use from one thread at a time."""

    def __init__(self, endpoint: str, api_key: str = "", ca_file: str = "") -> None:
        self.endpoint = endpoint.rstrip("/")
        # A CA file is passed with every request: requests lets REQUESTS_CA_BUNDLE override a session's `verify`.
        self._verify: str | bool = ca_file or True
        version = getattr(sys.modules.get("inferwatch"), "__version__", "")
        self._headers = {"User-Agent": f"{USER_AGENT}/{version}" if version else USER_AGENT}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._session: requests.Session | None = None
        self._pid = 0
        self._ca_file = ca_file
        self._api_key = api_key

    def copy(self) -> Transport:
        """A transport to the same collector with the same key and its own session (one per thread)."""
        return Transport(self.endpoint, self._api_key, self._ca_file)

    def url(self, path: str) -> str:
        return self.endpoint + path

    def _current_session(self) -> requests.Session:
        import requests

        if self._session is None or self._pid != os.getpid():  # a forked child never uses its parent's sockets
            self._session, self._pid = requests.Session(), os.getpid()
        return self._session

    def post(self, path: str, body: bytes, content_type: str, *, timeout_s: float, compress: bool = False,
             accept: str | None = None) -> Answer:
        """One POST; never raises (a failure of ours is counted and reads as unreachable)."""
        body, headers = self._prepared(body, content_type, compress, accept)
        return self._request("POST", path, headers, body, timeout_s, MAX_ANSWER_BYTES)

    def get(self, path: str, *, timeout_s: float, max_bytes: int = MAX_ANSWER_BYTES,
            accept: str = "application/json") -> Answer:
        """One GET; a 2xx answer's body is read up to ``max_bytes + 1`` bytes (so that a caller sees it was too
        long). Never raises."""
        headers = dict(self._headers, Accept=accept)
        return self._request("GET", path, headers, None, timeout_s, max_bytes)

    def send(self, path: str, body: bytes, content_type: str, policy: RetryPolicy, *, timeout_s: float,
             deadline_s: float | None = None, compress: bool = False, accept: str | None = None,
             abort: threading.Event | None = None, on_wait: Callable[[float], None] | None = None) -> Answer:
        """POST with retries (see the module): each attempt within ``timeout_s``, all of them within
        ``deadline_s`` when given. Returns the last answer, once it is final, the attempts are spent, the next
        wait would pass the deadline, or ``abort`` is set. ``on_wait(seconds)`` is told each wait the rule asks
        for after a transient answer (also one not waited because of the deadline), so that a caller with other
        requests to send can hold them back as long (a collector's ``Retry-After`` is meant for the client, not
        one request)."""
        deadline = None if deadline_s is None else time.monotonic() + deadline_s
        body, headers = self._prepared(body, content_type, compress, accept)
        answer = UNREACHABLE
        for attempt in range(policy.attempts):
            attempt_s = timeout_s if deadline is None else max(min(timeout_s, deadline - time.monotonic()), 0.05)
            answer = self._request("POST", path, headers, body, attempt_s, MAX_ANSWER_BYTES)
            if answer.ok or not policy.retryable(answer.status) or attempt + 1 == policy.attempts:
                break
            wait = policy.wait(attempt, answer)
            if on_wait is not None:
                on_wait(wait)
            if deadline is not None and wait > deadline - time.monotonic():
                break
            if abort is not None:
                if abort.wait(wait):
                    break
            else:
                time.sleep(wait)
        return answer

    def _prepared(self, body: bytes, content_type: str, compress: bool,
                  accept: str | None) -> tuple[bytes, dict[str, str]]:
        headers = dict(self._headers, **{"Content-Type": content_type})
        if accept:
            headers["Accept"] = accept
        if compress:
            body = gzip.compress(body, 1)  # level 1: about level 9's size on span batches, for a third of the CPU
            headers["Content-Encoding"] = "gzip"
        return body, headers

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def _request(self, method: str, path: str, headers: dict[str, str], body: bytes | None, timeout_s: float,
                 max_bytes: int) -> Answer:
        import requests  # noqa: PLC0415 - see the module docstring

        try:
            response = self._current_session().request(
                method, self.endpoint + path, data=body, headers=headers, stream=True, verify=self._verify,
                timeout=(min(timeout_s, 5.0), timeout_s))
        except requests.RequestException:
            return UNREACHABLE  # refused, reset, timed out: the collector is down or overloaded
        except Exception as exc:  # noqa: BLE001 - a bug of ours: read as unreachable (the request may be retried)
            _guard.record_internal_error("transport.request", exc)
            return UNREACHABLE
        try:
            status = response.status_code
            if 200 <= status < 300:
                return Answer(status, _read(response, max_bytes + 1))
            _read(response, MAX_ANSWER_BYTES)  # read to its end, the connection is kept for the next request
            retry_after = None
            try:
                retry_after = float(response.headers.get("Retry-After", ""))
            except ValueError:
                pass
            return Answer(status, b"", retry_after)
        except requests.RequestException:
            return UNREACHABLE  # the answer was cut off
        finally:
            response.close()


def _read(response: Any, limit: int) -> bytes:
    """At most ``limit`` bytes of the body (a body read to its end leaves the connection open for reuse)."""
    chunks, size = [], 0
    for chunk in response.iter_content(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks)[:limit]


def suppress_instrumentation() -> None:
    """Mark the calling thread's context so that an app's instrumented HTTP clients do not trace our requests
    (call once, at the start of an SDK thread)."""
    from opentelemetry import context as otel_context

    ctx = otel_context.set_value(otel_context._SUPPRESS_INSTRUMENTATION_KEY, True)
    otel_context.attach(otel_context.set_value(otel_context._SUPPRESS_HTTP_INSTRUMENTATION_KEY, True, ctx))
