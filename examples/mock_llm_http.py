"""The mock LLM's request handling shared by both providers: the server state and request log, auth, the error
answers in each provider's shape, and reading a request's body and fields."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .mock_llm_markers import DEFAULT_RETRY_AFTER_S, Markers
from .mock_llm_plan import Generation, plan_generation
from .mock_llm_tokens import content_text


@dataclass
class RecordedRequest:
    """A request the server received (for tests: what did the client/SDK actually send?)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    received_at: float


@dataclass
class State:
    """One server's state: latency mode, seed, the request log (newest last) and the flaky counters."""

    latency: str = "none"
    seed: int = 0
    requests: deque[RecordedRequest] = field(default_factory=lambda: deque(maxlen=2000))
    flaky_counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    closing: threading.Event = field(default_factory=threading.Event)

    def record(self, request: Request, body: Any) -> None:
        entry = RecordedRequest(request.method, request.url.path, dict(request.headers), body, time.time())
        with self.lock:
            self.requests.append(entry)

    def flaky_fail(self, key: str, times: int) -> bool:
        with self.lock:
            seen = self.flaky_counts.get(key, 0)
            self.flaky_counts[key] = seen + 1
            return seen < times

    def plan(self, **request: Any) -> Generation:
        """The answer to a request (the keyword arguments of :func:`plan_generation`), with this server's seed,
        latency and shutdown event."""
        return plan_generation(self.seed, self.latency, self.closing, **request)


_OPENAI_ERRORS: dict[int, tuple[str, str | None, str]] = {
    # status -> (type, code, message)
    400: ("invalid_request_error", None, "Invalid request (planted by the mock)."),
    401: ("invalid_request_error", "invalid_api_key",
          "Incorrect API key provided. You can find your API key at "
          "https://platform.openai.com/account/api-keys."),
    403: ("invalid_request_error", "unsupported_country_region_territory",
          "Country, region, or territory not supported."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."),
    409: ("invalid_request_error", None, "Conflict."),
    422: ("invalid_request_error", None, "Unprocessable entity."),
    429: ("requests", "rate_limit_exceeded",
          "Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested 1. "
          "Please try again later."),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", "service_unavailable", "The engine is currently overloaded, please try again later."),
    504: ("server_error", None, "Gateway timeout."),
}
_ANTHROPIC_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request (planted by the mock)."),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "Service unavailable"),
    529: ("overloaded_error", "Overloaded"),
}


def new_request_id() -> str:
    return "req_" + uuid.uuid4().hex


def openai_error(status: int, message: str | None = None, *, param: str | None = None,
                 retry_after_s: float = DEFAULT_RETRY_AFTER_S) -> JSONResponse:
    kind, code, default = _OPENAI_ERRORS.get(status, ("server_error" if status >= 500 else "invalid_request_error",
                                                      None, f"Error {status} (planted by the mock)."))
    headers = {"x-request-id": new_request_id()}
    if status == 429:
        headers.update({"retry-after": _retry_after_header(retry_after_s),
                        "retry-after-ms": str(int(retry_after_s * 1000)),
                        "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "0",
                        "x-ratelimit-reset-requests": f"{retry_after_s:g}s"})
    body = {"error": {"message": message or default, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


def anthropic_error(status: int, message: str | None = None, *,
                    retry_after_s: float = DEFAULT_RETRY_AFTER_S) -> JSONResponse:
    kind, default = _ANTHROPIC_ERRORS.get(status, ("api_error" if status >= 500 else "invalid_request_error",
                                                   f"Error {status} (planted by the mock)."))
    rid = "req_011" + uuid.uuid4().hex[:21]
    headers = {"request-id": rid}
    if status == 429:
        headers.update({"retry-after": _retry_after_header(retry_after_s),
                        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0"})
    if status in (429, 500, 503, 529):
        headers["x-should-retry"] = "true"
    body = {"type": "error", "error": {"type": kind, "message": message or default}, "request_id": rid}
    return JSONResponse(body, status_code=status, headers=headers)


def _retry_after_header(seconds: float) -> str:
    return str(int(seconds)) if seconds == int(seconds) else f"{seconds:g}"


def _api_key(request: Request) -> str:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer ") and auth[7:].strip():
        return auth[7:].strip()
    return request.headers.get("x-api-key", "").strip()


def auth_error(request: Request, anthropic: bool) -> JSONResponse | None:
    key = _api_key(request)
    if key and not key.startswith("invalid"):
        return None
    if anthropic:
        return anthropic_error(401, "invalid x-api-key" if key else "x-api-key header is required")
    if key:
        return openai_error(401)
    return openai_error(401, "You didn't provide an API key. You need to provide your API key in an Authorization "
                             "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")


async def read_json(request: Request, state: State, anthropic: bool) -> tuple[dict[str, Any] | None,
                                                                               Response | None]:
    raw = await request.body()
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    state.record(request, body)
    if (err := auth_error(request, anthropic)) is not None:
        return None, err
    if not isinstance(body, dict):
        msg = "We could not parse the JSON body of your request."
        return None, anthropic_error(400, msg) if anthropic else openai_error(400, msg)
    return body, None


def planted_error(gen_markers: Markers, state: State, key: str, anthropic: bool) -> Response | None:
    status = gen_markers.error
    if status is None and gen_markers.flaky is not None:
        flaky_status, times = gen_markers.flaky
        if state.flaky_fail(key, times):
            status = flaky_status
    if status is None:
        return None
    if anthropic:
        return anthropic_error(status, retry_after_s=gen_markers.retry_after_s)
    return openai_error(status, retry_after_s=gen_markers.retry_after_s)


def token_limit(body: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def user_text(messages: list[Any], user_roles: tuple[str, ...] = ("user",)) -> str:
    """Text of the last user message (markers live there); tool results are not user text."""
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") in user_roles and m.get("type") in (None, "message"):
            content = m.get("content")
            if isinstance(content, list):
                content = [p for p in content if not (isinstance(p, dict) and p.get("type") == "tool_result")]
            return content_text(content)
    return ""


def structured_output(fmt: Any) -> tuple[Any, bool]:
    """(json schema or None, json_object mode) from a chat ``response_format`` or a Responses ``text.format``."""
    if not isinstance(fmt, dict):
        return None, False
    if fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") if isinstance(fmt.get("json_schema"), dict) else fmt
        return spec.get("schema") or {"type": "object", "properties": {}}, False
    return None, fmt.get("type") == "json_object"
