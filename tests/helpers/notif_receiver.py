"""A recording HTTP(S) receiver on 127.0.0.1 for the notifier tests, and a self-signed certificate for it.

The receiver records every request (method, path, headers, raw body) and answers from a script of replies, the
last one repeating, so "429 then 200" or "500 forever" are one line in a test. A reply can also drop the
connection without answering. Each receiver is started and stopped by the test that made it (a context manager).

The certificate is made with the ``openssl`` command (the ``cryptography`` package is not installed here), for IP
127.0.0.1, and doubles as the CA bundle the client trusts: verification stays on in every test.
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest


@dataclass(frozen=True)
class Reply:
    """One scripted answer; ``drop`` closes the connection without one."""

    status: int = 200
    body: str | bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    drop: bool = False


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: Mapping[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    """``with Receiver([Reply(429), Reply(200, "ok")]) as r: ... r.url ... r.requests``"""

    def __init__(self, replies: Sequence[Reply] = (Reply(200, "ok"),), *,
                 tls: ssl.SSLContext | None = None) -> None:
        if not replies:
            raise ValueError("a receiver needs at least one reply")
        self.replies = list(replies)
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._tls = tls
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        scheme = "https" if self._tls else "http"
        return f"{scheme}://127.0.0.1:{self._server.server_address[1]}"

    def _next_reply(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            return self.replies[min(len(self.requests), len(self.replies)) - 1]

    def __enter__(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                reply = receiver._next_reply(Recorded(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if reply.drop:
                    self.close_connection = True
                    return
                payload = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if self._tls is not None:
            server.socket = self._tls.wrap_socket(server.socket, server_side=True)
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def free_port() -> int:
    """A port nothing listens on (bound, then released): connecting to it is refused."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class SelfSigned:
    cert: Path  # also the CA bundle clients trust
    key: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context


def self_signed_cert(directory: Path) -> SelfSigned:
    """A one-day certificate for IP 127.0.0.1 (subjectAltName, as hostname checking requires)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    return SelfSigned(cert, key)
