"""HTTP client of the collector's query API, and the errors a page can explain to a person.

No Streamlit here: the client turns every failure into an :class:`ApiError` subclass whose message says what is
wrong and what to do, so a page shows that message instead of a traceback. A 404 for a path the collector does
not route (FastAPI's plain "Not Found") is :class:`NotAvailable`, which pages show as "not available from this
collector yet" rather than as an error: a dashboard newer than its collector keeps working.
"""

from __future__ import annotations

from typing import Any

import httpx


class ApiError(Exception):
    """A request failed; ``str(error)`` is the message to show."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Unreachable(ApiError):
    """No answer from the collector (refused, DNS, timeout)."""


class Unauthorized(ApiError):
    """401/403: the key is wrong, revoked, or lacks a scope."""


class NotAvailable(ApiError):
    """The collector has no such endpoint (older version, feature not installed)."""


class NotFound(ApiError):
    """The endpoint exists but the thing asked for does not (an unknown trace id)."""


class BadRequest(ApiError):
    """400/409/422: the collector refused the parameters; its message names them."""


class ServerError(ApiError):
    """5xx: the collector failed; its log has the details."""


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    if isinstance(body, dict):
        return str(body.get("error") or body.get("detail") or body)
    return str(body)[:300]


class ApiClient:
    """One connection pool to one collector; keys are passed per call (one dashboard, several projects)."""

    def __init__(self, base_url: str, timeout_s: float = 15.0, transport: httpx.BaseTransport | None = None
                 ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout_s, transport=transport)

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, key: str, *, params: dict[str, Any] | None = None,
                json: Any = None) -> httpx.Response:
        """Send one request; any failure is raised as an :class:`ApiError` with a readable message."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            response = self._http.request(method, path, params=params, json=json, headers=headers)
        except httpx.TimeoutException as exc:
            raise Unreachable(f"the collector at {self.base_url} did not answer {path} in time ({exc}). "
                              "It may be overloaded; try a shorter time range.") from exc
        except httpx.HTTPError as exc:
            raise Unreachable(f"cannot reach the collector at {self.base_url} ({exc}). Is it running "
                              "(`inferwatch-server up`), and is INFERWATCH_DASHBOARD_API_URL right?") from exc
        if response.status_code < 400:
            return response
        raise self._error(path, response)

    def _error(self, path: str, response: httpx.Response) -> ApiError:
        status, detail = response.status_code, _detail(response)
        if status == 401:
            return Unauthorized(f"the collector rejected the dashboard's API key ({detail}). Set "
                                "INFERWATCH_DASHBOARD_API_KEY to a valid read key.", status)
        if status == 403:
            return Unauthorized(f"the dashboard's API key may not do this: {detail}", status)
        if status in (404, 405) and detail in ("Not Found", "Method Not Allowed"):
            return NotAvailable(f"{path} is not available from this collector yet", status)
        if status == 404:
            return NotFound(detail, status)
        if status in (400, 409, 413, 422):
            return BadRequest(detail, status)
        return ServerError(f"the collector failed on {path} ({status}): {detail}", status)

    def get_json(self, path: str, key: str, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, key, params=params).json()

    def get_bytes(self, path: str, key: str, params: dict[str, Any] | None = None) -> bytes:
        return self.request("GET", path, key, params=params).content

    def post_json(self, path: str, key: str, body: Any) -> Any:
        response = self.request("POST", path, key, json=body)
        return response.json() if response.content else None

    def delete(self, path: str, key: str) -> None:
        self.request("DELETE", path, key)
