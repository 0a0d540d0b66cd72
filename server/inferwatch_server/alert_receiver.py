"""The demo's alert receiver: local Slack-, PagerDuty- and webhook-shaped endpoints that record what they receive.

``inferwatch-server up --demo-traffic`` starts one on 127.0.0.1 (free ports) and points the demo's alert channels
at it (:mod:`.demo_alerts`), so a fired or resolved alert goes somewhere visible without any account: the
receiver prints one line per delivery, and the dispatcher records each delivery in ``notifications``, which the
dashboard's Alerts page lists.

Endpoints, answering as the real services do (the real notifiers must accept the answers):

* ``POST /slack/...`` (plain HTTP: Slack's notifier allows http only to 127.0.0.1): a Block Kit message; ``ok``.
* ``POST /webhook`` (plain HTTP): the signed JSON of :mod:`inferwatch_alerts.notifiers.webhook`; the signature is
  checked with the signing key the receiver was given, and a bad one is refused (401).
* ``POST /v2/enqueue`` (HTTPS only, as PagerDuty's client insists): an Events API v2 event; 202 with the
  ``dedup_key`` echoed. Served only when a certificate is given.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

SLACK_PATH: Final = "/slack/"
WEBHOOK_PATH: Final = "/webhook"
PAGERDUTY_PATH: Final = "/v2/enqueue"
MAX_BODY: Final = 1 << 20


@dataclass(frozen=True)
class Received:
    """One delivery as the receiver understood it: the channel kind, the alert state and its headline."""

    kind: str  # slack | pagerduty | webhook
    state: str  # firing | resolved (pagerduty: trigger → firing, resolve → resolved)
    title: str

    def line(self) -> str:
        """The line printed for this delivery."""
        return f"alert receiver: {self.kind:<9} {self.state:<8} {self.title}"


def _slack(body: dict[str, Any]) -> Received:
    text = str(body.get("text") or "")
    state = "resolved" if text.startswith("[RESOLVED]") else "firing"
    return Received("slack", state, text.split("] ", 1)[-1] if text.startswith("[") else text)


def _pagerduty(body: dict[str, Any], summaries: dict[str, str]) -> Received:
    """A trigger carries the summary; a resolve only the dedup key, so its trigger's summary is looked up."""
    action = str(body.get("event_action") or "")
    state = {"trigger": "firing", "resolve": "resolved"}.get(action, action)
    payload = body.get("payload") if isinstance(body.get("payload"), dict) else {}
    key = str(body.get("dedup_key") or "")
    summary = str(payload.get("summary") or "")
    if summary and key:
        summaries[key] = summary
    return Received("pagerduty", state, summary or summaries.get(key, key))


def _webhook(body: dict[str, Any]) -> Received:
    return Received("webhook", str(body.get("state") or ""), str(body.get("title") or ""))


class AlertReceiver:
    """``with AlertReceiver(signing_key, tls=(cert, key)) as r: r.slack_url ... r.received``

    Thread-safe; each delivery is appended to :attr:`received` and handed to ``on_delivery`` (default: print its
    line). Malformed bodies get 400 and are not recorded.
    """

    def __init__(self, signing_key: str, *, tls: tuple[Path, Path] | None = None,
                 on_delivery: Callable[[Received], None] | None = None) -> None:
        self._key = signing_key.encode()
        self._tls = tls
        self._on_delivery = on_delivery if on_delivery is not None else (lambda r: print(r.line(), flush=True))
        self._lock = threading.Lock()
        self.received: list[Received] = []
        self._summaries: dict[str, str] = {}  # PagerDuty dedup key -> its trigger's summary
        self._servers: list[ThreadingHTTPServer] = []
        self._threads: list[threading.Thread] = []

    # --- addresses --------------------------------------------------------------------------------------------
    def _port(self, index: int) -> int:
        assert len(self._servers) > index, "not started"
        return int(self._servers[index].server_address[1])

    @property
    def slack_url(self) -> str:
        """A Slack-shaped incoming-webhook URL (the path is what Slack's would carry)."""
        return f"http://127.0.0.1:{self._port(0)}{SLACK_PATH}T0DEMO/B0DEMO/inferwatch-demo"

    @property
    def webhook_url(self) -> str:
        return f"http://127.0.0.1:{self._port(0)}{WEBHOOK_PATH}"

    @property
    def pagerduty_events_url(self) -> str | None:
        """The Events API v2 URL, or None without a certificate (PagerDuty's client speaks only HTTPS)."""
        return f"https://127.0.0.1:{self._port(1)}{PAGERDUTY_PATH}" if self._tls else None

    # --- requests ---------------------------------------------------------------------------------------------
    def _accept(self, path: str, secure: bool, headers: dict[str, str], raw: bytes) -> tuple[int, bytes]:
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, b"the body is not JSON"
        if not isinstance(body, dict):
            return 400, b"the body is not a JSON object"
        if secure and path == PAGERDUTY_PATH:
            with self._lock:
                received = _pagerduty(body, self._summaries)
            answer = (202, json.dumps(
                {"status": "success", "message": "Event processed", "dedup_key": body.get("dedup_key")}).encode())
        elif not secure and path.startswith(SLACK_PATH):
            received, answer = _slack(body), (200, b"ok")
        elif not secure and path == WEBHOOK_PATH:
            expected = "sha256=" + hmac.new(self._key, raw, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, headers.get("x-inferwatch-signature", "")):
                return 401, b"bad signature"
            received, answer = _webhook(body), (200, b"ok")
        else:
            return 404, b"no such endpoint"
        with self._lock:
            self.received.append(received)
        self._on_delivery(received)
        return answer

    def _handler(self, secure: bool) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    status, reply = 413, b"too large"
                else:
                    raw = self.rfile.read(length)
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    status, reply = receiver._accept(self.path, secure, headers, raw)
                self.send_response(status)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:  # one line per delivery is printed instead
                pass

        return Handler

    # --- lifetime ---------------------------------------------------------------------------------------------
    def start(self) -> Self:
        plain = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(secure=False))
        self._servers.append(plain)
        if self._tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self._tls)
            secure = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(secure=True))
            secure.socket = context.wrap_socket(secure.socket, server_side=True)
            self._servers.append(secure)
        for server in self._servers:
            server.daemon_threads = True
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                      name="inferwatch-alert-receiver", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._servers, self._threads = [], []

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
