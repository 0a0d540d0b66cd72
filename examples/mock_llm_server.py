"""The mock LLM's ASGI app (routes and 404/405 answers) and :class:`MockLLMServer`, which serves it from a
background thread for tests and the demo."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .mock_llm_anthropic import count_message_tokens, messages
from .mock_llm_http import RecordedRequest, State, anthropic_error, auth_error, openai_error
from .mock_llm_models import MODELS
from .mock_llm_openai import chat_completions, embeddings, responses


async def list_models(request: Request) -> Response:
    state: State = request.app.state.mock
    anthropic = "anthropic-version" in request.headers
    state.record(request, None)
    if (err := auth_error(request, anthropic)) is not None:
        return err
    if anthropic:
        data = [{"type": "model", "id": m.snapshot or m.prefix, "display_name": m.prefix,
                 "created_at": "2025-01-01T00:00:00Z"} for m in MODELS if m.provider == "anthropic"]
        return JSONResponse({"data": data, "has_more": False, "first_id": data[0]["id"],
                             "last_id": data[-1]["id"]})
    data = []
    for m in MODELS:
        if m.provider == "openai":
            data.append({"id": m.prefix, "object": "model", "created": 1_700_000_000, "owned_by": "system"})
            if m.snapshot:
                data.append({"id": m.snapshot, "object": "model", "created": 1_700_000_000, "owned_by": "system"})
    return JSONResponse({"object": "list", "data": data})


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if request.url.path.startswith("/v1/messages") or "anthropic-version" in request.headers:
        message = f"{request.method} {request.url.path}: not found" if status == 404 else None
        return anthropic_error(status, message)
    return openai_error(status, f"Invalid URL ({request.method} {request.url.path})" if status in (404, 405)
                        else None)


def create_app(*, latency: str = "none", seed: int = 0) -> Starlette:
    """The ASGI app. ``latency``: ``none`` (only markers sleep) or ``realistic``; ``seed``: text and timing."""
    if latency not in ("none", "realistic"):
        raise ValueError(f"latency must be 'none' or 'realistic', not {latency!r}")
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/v1/models", list_models, methods=["GET"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_message_tokens, methods=["POST"]),
        ],
        exception_handlers={404: _http_error, 405: _http_error},
    )
    app.state.mock = State(latency=latency, seed=seed)
    return app


class MockLLMServer:
    """The mock on 127.0.0.1 and a free port, served by uvicorn in a background thread.

    ``base_url`` (``http://127.0.0.1:PORT``), ``openai_base_url`` (``.../v1``, for ``openai.OpenAI``),
    ``anthropic_base_url`` (= ``base_url``, for ``anthropic.Anthropic``); ``requests`` (what was received, newest
    last), ``reset()`` (forget requests and flaky counters), ``stop()``; a context manager (start/stop).
    """

    def __init__(self, *, latency: str = "none", seed: int = 0, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = create_app(latency=latency, seed=seed)
        self.host = host
        self._port = port
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self._port}"

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    @property
    def requests(self) -> list[RecordedRequest]:
        state: State = self.app.state.mock
        with state.lock:
            return list(state.requests)

    def reset(self) -> None:
        state: State = self.app.state.mock
        with state.lock:
            state.requests.clear()
            state.flaky_counts.clear()

    def start(self, timeout: float = 10.0) -> MockLLMServer:
        import uvicorn

        if self._thread is not None:
            return self
        self.app.state.mock.closing.clear()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._port))
        self._port = sock.getsockname()[1]
        # keep-alive longer than httpx's pool expiry (5 s, as uvicorn's default): otherwise a client can reuse an
        # idle connection just as the server closes it, an APIConnectionError that no real provider would cause
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off", ws="none",
                                timeout_graceful_shutdown=2, timeout_keep_alive=30)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True,
                                        name=f"mock-llm-{self._port}")
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                sock.close()
                raise RuntimeError("mock LLM server did not start")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._thread is None:
            return
        self.app.state.mock.closing.set()  # sleeping responses end now instead of holding up the shutdown
        self._server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)
        self._thread = None

    def __enter__(self) -> MockLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
