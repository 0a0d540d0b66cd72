"""Every read and write the dashboard makes, all through the collector's HTTP API, never the database.

Why one module: pages stay thin, caching is decided in one place, and the endpoints a page depends on can be
read off here. GETs are cached per (collector, key, path, parameters) for ``cache_ttl_s`` (``st.cache_data``;
failures are not cached, so a page retries on its next run); the HTTP client is one per collector
(``st.cache_resource``). Writes (what-if, silences) are never cached.

Endpoints of the alerting and experiments APIs are named in ``ALERTS`` and ``EXPERIMENTS``; a collector that does
not route them answers 404, raised as :class:`~inferwatch_dashboard.api.NotAvailable` for the page to explain.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

import pandas as pd
import streamlit as st

from .api import ApiClient
from .settings import DashboardSettings
from .timerange import Window

_SETTINGS = DashboardSettings()
TTL = _SETTINGS.cache_ttl_s

ALERTS = {
    "current": "/api/v1/alerts",
    "history": "/api/v1/alerts/history",
    "rules": "/api/v1/alerts/rules",
    "silences": "/api/v1/alerts/silences",
    "notifications": "/api/v1/dashboard/notifications",
}
EXPERIMENTS = "/api/v1/experiments"


@dataclass(frozen=True)
class Scope:
    """What a page is looking at: one project's key, a time window and the sidebar's filters (API names)."""

    api_url: str
    key: str
    project: str
    scopes: frozenset[str]
    window: Window
    filters: tuple[tuple[str, str], ...] = ()
    palette: tuple[tuple[str, str], ...] = ()  # series name -> colour, the same on every chart of the session

    @property
    def colors(self) -> dict[str, str]:
        return dict(self.palette)

    def with_window(self, window: Window) -> Scope:
        return replace(self, window=window)

    def filter(self, name: str) -> str | None:
        return dict(self.filters).get(name)

    @property
    def can_read_prompts(self) -> bool:
        return "prompts:read" in self.scopes or "admin" in self.scopes


@st.cache_resource(show_spinner=False)
def client(api_url: str) -> ApiClient:
    """One pooled HTTP client per collector, shared by every session (httpx clients are thread-safe)."""
    return ApiClient(api_url, DashboardSettings().timeout_s)


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=2000)
def _get(api_url: str, key: str, path: str, params: tuple[tuple[str, str], ...] = ()) -> Any:
    return client(api_url).get_json(path, key, dict(params))


@st.cache_data(ttl=TTL, show_spinner=False, max_entries=50)
def _get_bytes(api_url: str, key: str, path: str, params: tuple[tuple[str, str], ...] = ()) -> bytes:
    return client(api_url).get_bytes(path, key, dict(params))


def _params(**values: Any) -> tuple[tuple[str, str], ...]:
    return tuple((name, str(value)) for name, value in values.items() if value is not None and value != "")


def _scoped(scope: Scope, window: Window | None = None, **extra: Any) -> tuple[tuple[str, str], ...]:
    win = window or scope.window
    return _params(**win.params(), **dict(scope.filters), **extra)


def records(payload: Any, *names: str) -> list[dict[str, Any]]:
    """The list of rows in an answer: the payload itself, or its first list under ``names`` (or any list)."""
    if isinstance(payload, list):
        return [row for row in payload if isinstance(row, dict)]
    if isinstance(payload, dict):
        for name in names:
            if isinstance(payload.get(name), list):
                return records(payload[name])
        for value in payload.values():
            if isinstance(value, list) and all(isinstance(row, dict) for row in value):
                return list(value)
    return []


def clear_cache() -> None:
    """Forget cached answers (after a write, or between tests)."""
    _get.clear()
    _get_bytes.clear()


# --- project and filters ---------------------------------------------------------------------------------------
def whoami(api_url: str, key: str) -> dict[str, Any]:
    return _get(api_url, key, "/api/v1/dashboard/whoami")


def facets(scope: Scope) -> dict[str, Any]:
    return _get(scope.api_url, scope.key, "/api/v1/dashboard/facets", _params(**scope.window.params()))


# --- call metrics ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stats:
    """A stats answer: the table that served it and its rows (``t`` parsed to timestamps)."""

    source: str
    frame: pd.DataFrame

    def total(self) -> dict[str, Any]:
        return self.frame.iloc[0].to_dict() if len(self.frame) else {}


def stats(scope: Scope, need: str, *, by: str | None = None, bucket: str | None = None, top: int = 20,
          window: Window | None = None) -> Stats:
    """Totals (no bucket) or a series of the project's calls under the sidebar's filters."""
    answer = _get(scope.api_url, scope.key, "/api/v1/dashboard/stats",
                  _scoped(scope, window, need=need, by=by, bucket=bucket, top=top if by else None))
    frame = pd.DataFrame(answer["rows"])
    if "t" in frame:
        frame["t"] = pd.to_datetime(frame["t"], utc=True)
    return Stats(answer["source"], frame)


def calls(scope: Scope, *, status: str | None = None, flag: str | None = None, min_latency_ms: int | None = None,
          user_hash: str | None = None, trace_id: str | None = None, limit: int = 100
          ) -> tuple[pd.DataFrame, bool]:
    """The newest matching calls, and whether there are more than ``limit``."""
    answer = _get(scope.api_url, scope.key, "/api/v1/dashboard/calls",
                  _scoped(scope, status=status, flag=flag, min_latency_ms=min_latency_ms, user_hash=user_hash,
                          trace_id=trace_id, limit=limit))
    return pd.DataFrame(answer["calls"]), bool(answer.get("more"))


def trace(scope: Scope, trace_id: str) -> pd.DataFrame:
    answer = _get(scope.api_url, scope.key, f"/api/v1/traces/{trace_id}")
    return pd.DataFrame(answer["spans"])


def prompts(scope: Scope, trace_id: str) -> list[dict[str, Any]]:
    return _get(scope.api_url, scope.key, f"/api/v1/dashboard/prompts/{trace_id}")["prompts"]


def feedback(scope: Scope, *, bucket: str | None = None, window: Window | None = None) -> pd.DataFrame:
    filters = {k: v for k, v in scope.filters if k != "provider"}  # feedback rows carry no provider
    answer = _get(scope.api_url, scope.key, "/api/v1/dashboard/feedback",
                  _params(**(window or scope.window).params(), **filters, bucket=bucket))
    frame = pd.DataFrame(answer["rows"])
    if "t" in frame:
        frame["t"] = pd.to_datetime(frame["t"], utc=True)
    return frame


# --- cost ------------------------------------------------------------------------------------------------------
def cost_report(scope: Scope, period: str, by: str) -> dict[str, Any]:
    return _get(scope.api_url, scope.key, "/api/v1/costs/report", _params(period=period, by=by))


def cost_report_csv(scope: Scope, period: str, by: str) -> bytes:
    return _get_bytes(scope.api_url, scope.key, "/api/v1/costs/report.csv", _params(period=period, by=by))


def whatif(scope: Scope, body: dict[str, Any]) -> dict[str, Any]:
    return client(scope.api_url).post_json("/api/v1/costs/whatif", scope.key, body)


def budgets(scope: Scope) -> list[dict[str, Any]]:
    return records(_get(scope.api_url, scope.key, "/api/v1/budgets/status"), "budgets")


# --- operations ------------------------------------------------------------------------------------------------
def job_runs(scope: Scope, limit: int = 50) -> pd.DataFrame:
    return pd.DataFrame(records(_get(scope.api_url, scope.key, "/api/v1/jobs/runs", _params(limit=limit)), "runs"))


def alerts(scope: Scope, what: str) -> pd.DataFrame:
    """``what``: current, history, rules, silences or notifications (see ``ALERTS``)."""
    params = _params(**scope.window.params()) if what in ("history", "notifications") else ()
    return pd.DataFrame(records(_get(scope.api_url, scope.key, ALERTS[what], params), what, "alerts", "events",
                                "items"))


def create_silence(scope: Scope, body: dict[str, Any]) -> dict[str, Any]:
    answer = client(scope.api_url).post_json(ALERTS["silences"], scope.key, body)
    clear_cache()
    return answer or {}


def expire_silence(scope: Scope, silence_id: str) -> None:
    client(scope.api_url).delete(f"{ALERTS['silences']}/{quote(silence_id, safe='')}", scope.key)
    clear_cache()


def experiments(scope: Scope) -> list[dict[str, Any]]:
    return records(_get(scope.api_url, scope.key, EXPERIMENTS), "experiments")


def experiment(scope: Scope, name: str) -> dict[str, Any]:
    """Definition, latest verdict and the latest window's result rows of one experiment."""
    return _get(scope.api_url, scope.key, f"{EXPERIMENTS}/{quote(name, safe='')}")


# --- capacity --------------------------------------------------------------------------------------------------
def capacity_presets(scope: Scope) -> dict[str, Any]:
    return _get(scope.api_url, scope.key, "/api/v1/dashboard/capacity/presets")


def capacity_plan(scope: Scope, inputs: dict[str, Any]) -> dict[str, Any]:
    return _get(scope.api_url, scope.key, "/api/v1/capacity/plan", _params(**scope.window.params(), **inputs))
