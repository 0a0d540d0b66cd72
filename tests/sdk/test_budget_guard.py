"""The budget guard, over real HTTP: a tiny status server on 127.0.0.1 plays the collector's
``GET /api/v1/budgets/status``; the real ``openai`` / ``anthropic`` clients talk to the mock LLM server
(examples/mock_llm.py), whose request log shows what the provider received (or that it received nothing).

Nothing of ours is patched: the guard refreshes from the server every ``REFRESH_S`` in its own thread, and the
tests poll for the state they need (never sleep-and-assert on timing).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

import inferwatch  # noqa: E402
from inferwatch import _guard, budget  # noqa: E402
from inferwatch import client as iw_client  # noqa: E402
from inferwatch import semconv as sc  # noqa: E402
from tests.helpers.mock_llm_fixtures import MOCK_API_KEY  # noqa: E402
from tests.helpers.otel_exporters import NullMetricExporter  # noqa: E402

REFRESH_S = 0.05
API_KEY = "iwk_budget_test"
DOWNGRADED_FROM = "inferwatch.budget.downgraded_from"


def entry(budget_id: str = "b1", *, scope_type: str = "project", scope_value: str = "", kind: str = "hard",
          exceeded: bool = True, period: str = "month", limit: float = 100.0, spent: float | None = None,
          forecast: bool = False) -> dict[str, Any]:
    spent = (120.0 if exceeded else 12.3) if spent is None else spent
    return {"budget_id": budget_id, "scope_type": scope_type, "scope_value": scope_value, "period": period,
            "kind": kind, "limit_usd": limit, "spent_usd": spent, "used_ratio": spent / limit,
            "exceeded": exceeded, "forecast_exceeds": forecast}


class StatusServer:
    """The collector's budget status endpoint: serves ``body`` (JSON-encoded unless bytes) with ``code``."""

    def __init__(self) -> None:
        self.code = 200
        self.body: Any = {"generated_at": "2025-01-01T00:00:00Z", "budgets": []}
        self.seen: list[tuple[str, str | None]] = []  # (path, Authorization)
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                with server.lock:
                    server.seen.append((self.path, self.headers.get("Authorization")))
                    code, body = server.code, server.body
                if self.path != budget.PATH:
                    code, body = 404, {"detail": "not found"}
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def serve(self, *budgets: dict[str, Any], code: int = 200, body: Any = None) -> None:
        with self.lock:
            self.code = code
            self.body = body if body is not None else {"generated_at": "2025-01-01T00:00:00Z",
                                                       "budgets": list(budgets)}

    def requests(self) -> int:
        with self.lock:
            return len(self.seen)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()




def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        time.sleep(0.005)


def guard_stats() -> dict[str, Any]:
    return inferwatch.stats()["budget_guard"]


@pytest.fixture
def status() -> Iterator[StatusServer]:
    server = StatusServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def sdk(status: StatusServer) -> Iterator[InMemorySpanExporter]:
    """The SDK on the status server's endpoint, both integrations instrumented; shut down afterwards."""
    exporter = InMemorySpanExporter()
    inferwatch.init(endpoint=status.url, api_key=API_KEY, exporter=exporter, schedule_delay_ms=50,
                    user_hash_key="deployment-key", metric_exporter=NullMetricExporter())
    inferwatch.instrument_openai()
    inferwatch.instrument_anthropic()
    try:
        yield exporter
    finally:
        inferwatch.shutdown()
        _guard.reset()


def start_guard(**kwargs: Any) -> inferwatch.BudgetGuard:
    guard = inferwatch.budget_guard(refresh_s=REFRESH_S, **kwargs)
    wait_until(lambda: guard.stats()["refreshes_ok"] or guard.stats()["refreshes_failed"], what="first refresh")
    return guard


def spans(exporter: InMemorySpanExporter) -> list[dict[str, Any]]:
    assert inferwatch.flush(5)
    found = [dict(s.attributes) for s in exporter.get_finished_spans()]
    exporter.clear()
    return found


def chat(client: Any, model: str = "gpt-4o-mini", text: str = "hi") -> Any:
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": text}])


def message(client: Any, model: str = "claude-haiku-4-5", text: str = "hi") -> Any:
    return client.messages.create(model=model, max_tokens=50, messages=[{"role": "user", "content": text}])


def models_sent(mock: Any) -> list[str]:
    return [r.body["model"] for r in mock.requests]


# --- (a) a hard budget blocks before the provider is called ------------------------------------------------------
def test_exceeded_feature_budget_blocks_before_the_provider(sdk: InMemorySpanExporter, status: StatusServer,
                                                            mock_llm: Any, openai_client: Any,
                                                            anthropic_client: Any) -> None:
    status.serve(entry("chat-hard", scope_type="feature", scope_value="chat", period="day", limit=50.0,
                       spent=61.5),
                 entry("search-ok", scope_type="feature", scope_value="search", exceeded=False))
    guard = start_guard()
    assert guard.stats()["hard_exceeded"] == 1 and guard.stats()["fail_open"] is False
    with inferwatch.tags(feature="chat"):
        with pytest.raises(inferwatch.BudgetExceeded) as info:
            chat(openai_client)
        with pytest.raises(inferwatch.BudgetExceeded):
            message(anthropic_client)
        with pytest.raises(inferwatch.BudgetExceeded):
            anthropic_client.messages.stream(model="claude-haiku-4-5", max_tokens=50,
                                             messages=[{"role": "user", "content": "hi"}])
    assert mock_llm.requests == []  # the provider was never hit
    exc = info.value
    assert (exc.budget_id, exc.scope_type, exc.scope_value, exc.scope) == ("chat-hard", "feature", "chat",
                                                                          "feature:chat")
    assert (exc.limit_usd, exc.spent_usd, exc.period) == (50.0, 61.5, "day")
    assert "chat-hard" in str(exc) and "$61.50" in str(exc)

    with inferwatch.tags(feature="search"):
        assert chat(openai_client).choices[0].message.content
        assert message(anthropic_client).content
    chat(openai_client)  # no feature: only project budgets apply, and there are none
    assert len(mock_llm.requests) == 3
    recorded = spans(sdk)
    assert len(recorded) == 3 and not any(a.get(sc.ERROR_TYPE) for a in recorded)  # blocked calls: no span
    s = guard_stats()
    assert s["calls_blocked"] == 3 and s["calls_downgraded"] == 0
    assert status.seen[0] == (budget.PATH, f"Bearer {API_KEY}")  # the ingest key, as the other collector calls


def test_async_clients_raise_when_awaited(sdk: InMemorySpanExporter, status: StatusServer, mock_llm: Any) -> None:
    status.serve(entry("p"))
    start_guard()

    async def run() -> list[type]:
        raised = []
        async with openai.AsyncOpenAI(base_url=mock_llm.openai_base_url, api_key=MOCK_API_KEY,
                                      max_retries=0) as oclient, anthropic.AsyncAnthropic(
                base_url=mock_llm.anthropic_base_url, api_key=MOCK_API_KEY, max_retries=0) as aclient:
            pending = oclient.chat.completions.create(model="gpt-4o-mini",
                                                      messages=[{"role": "user", "content": "x"}])
            for awaitable in (pending, aclient.messages.create(model="claude-haiku-4-5", max_tokens=5,
                                                               messages=[{"role": "user", "content": "x"}])):
                try:
                    await awaitable
                except inferwatch.BudgetExceeded as exc:
                    raised.append(type(exc))
        return raised

    assert asyncio.run(run()) == [inferwatch.BudgetExceeded] * 2
    assert mock_llm.requests == []


def test_user_budget_uses_the_hashed_user_id(sdk: InMemorySpanExporter, status: StatusServer, mock_llm: Any,
                                            openai_client: Any) -> None:
    status.serve(entry("heavy-user", scope_type="user", scope_value=inferwatch.hash_user_id("user-7")))
    start_guard()
    with inferwatch.tags(user_id="user-7"), pytest.raises(inferwatch.BudgetExceeded) as info:
        chat(openai_client)
    assert info.value.scope_value == inferwatch.hash_user_id("user-7") and "user-7" not in str(info.value)
    with inferwatch.tags(user_id="user-8"):
        chat(openai_client)
    assert len(mock_llm.requests) == 1


def test_project_budget_applies_to_every_call(sdk: InMemorySpanExporter, status: StatusServer, mock_llm: Any,
                                              openai_client: Any) -> None:
    status.serve(entry("proj", period="month"))
    start_guard()
    for feature in (None, "chat", "search"):
        with inferwatch.tags(feature=feature), pytest.raises(inferwatch.BudgetExceeded):
            chat(openai_client)
    assert mock_llm.requests == []


# --- (b) downgrade policy ---------------------------------------------------------------------------------------
def test_downgrade_rewrites_the_model_the_provider_receives(sdk: InMemorySpanExporter, status: StatusServer,
                                                            mock_llm: Any, openai_client: Any,
                                                            anthropic_client: Any) -> None:
    status.serve(entry("proj"))
    start_guard(downgrade={"gpt-4o": "gpt-4o-mini", "claude-opus-4-5": "claude-haiku-4-5"})
    chat(openai_client, model="gpt-4o")
    message(anthropic_client, model="claude-opus-4-5")
    with anthropic_client.messages.stream(model="claude-opus-4-5", max_tokens=50,
                                          messages=[{"role": "user", "content": "hi"}]) as stream:
        stream.until_done()
    assert models_sent(mock_llm) == ["gpt-4o-mini", "claude-haiku-4-5", "claude-haiku-4-5"]
    recorded = spans(sdk)
    assert sorted((a[sc.GEN_AI_REQUEST_MODEL], a[DOWNGRADED_FROM]) for a in recorded) == [
        ("claude-haiku-4-5", "claude-opus-4-5"), ("claude-haiku-4-5", "claude-opus-4-5"),
        ("gpt-4o-mini", "gpt-4o")]

    chat(openai_client, model="gpt-4o-mini")  # already the cheaper model: goes through as is
    assert models_sent(mock_llm)[-1] == "gpt-4o-mini" and DOWNGRADED_FROM not in spans(sdk)[0]
    with pytest.raises(inferwatch.BudgetExceeded):  # a model the policy does not cover is blocked
        chat(openai_client, model="o3")
    assert len(mock_llm.requests) == 4
    s = guard_stats()
    assert s["calls_downgraded"] == 3 and s["calls_blocked"] == 1


def test_downgrade_with_async_client(sdk: InMemorySpanExporter, status: StatusServer, mock_llm: Any) -> None:
    status.serve(entry("proj"))
    start_guard(downgrade={"gpt-4o": "gpt-4o-mini"})

    async def run() -> None:
        async with openai.AsyncOpenAI(base_url=mock_llm.openai_base_url, api_key=MOCK_API_KEY,
                                      max_retries=0) as client:
            stream = await client.chat.completions.create(model="gpt-4o", stream=True,
                                                          messages=[{"role": "user", "content": "x"}])
            async for _ in stream:
                pass

    asyncio.run(run())
    assert models_sent(mock_llm) == ["gpt-4o-mini"]
    assert spans(sdk)[0][DOWNGRADED_FROM] == "gpt-4o"


def test_manual_api(sdk: InMemorySpanExporter, status: StatusServer) -> None:
    status.serve(entry("chat-hard", scope_type="feature", scope_value="chat"))
    start_guard()
    with inferwatch.tags(feature="chat"):
        with pytest.raises(inferwatch.BudgetExceeded):
            inferwatch.llm_call(model="llama-3.1-70b", provider="vllm")
        # an answer served from the app's own cache costs nothing: never blocked
        with inferwatch.llm_call(model="llama-3.1-70b", provider="vllm", cache_hit="exact") as call:
            call.usage(input_tokens=10, output_tokens=3)
    with inferwatch.llm_call(model="llama-3.1-70b", provider="vllm") as call:
        call.usage(input_tokens=10, output_tokens=3)
    assert [a.get(sc.CACHE_HIT, False) for a in spans(sdk)] == [True, False]

    inferwatch.budget_guard(refresh_s=REFRESH_S, downgrade={"llama-3.1-70b": "llama-3.1-8b"})
    wait_until(lambda: guard_stats()["hard_exceeded"], what="the new guard's first status")
    with inferwatch.tags(feature="chat"), inferwatch.llm_call(model="llama-3.1-70b", provider="vllm") as call:
        assert call.model == "llama-3.1-8b"  # what the app must now call
        call.usage(input_tokens=10, output_tokens=3)
    a = spans(sdk)[0]
    assert a[sc.GEN_AI_REQUEST_MODEL] == "llama-3.1-8b" and a[DOWNGRADED_FROM] == "llama-3.1-70b"
    assert call.metrics.downgraded_from == "llama-3.1-70b"


# --- (c) crossing: blocked within one refresh interval ----------------------------------------------------------
def test_crossing_blocks_within_one_refresh_interval(sdk: InMemorySpanExporter, status: StatusServer,
                                                     mock_llm: Any, openai_client: Any) -> None:
    daily = {"scope_type": "feature", "scope_value": "chat", "period": "day"}
    status.serve(entry("daily", **daily, exceeded=False, spent=99.0))
    start_guard()
    with inferwatch.tags(feature="chat"):
        chat(openai_client)
        assert len(mock_llm.requests) == 1

        status.serve(entry("daily", **daily, spent=100.5))
        refreshes_at_flip = guard_stats()["refreshes_ok"]

        def blocked() -> bool:
            try:
                inferwatch.llm_call(model="gpt-4o-mini")  # the same check a provider call makes
            except inferwatch.BudgetExceeded:
                return True
            return False

        wait_until(blocked, what="the guard to block")
        refreshes = guard_stats()["refreshes_ok"] - refreshes_at_flip
        with pytest.raises(inferwatch.BudgetExceeded):
            chat(openai_client)
        assert len(mock_llm.requests) == 1

        status.serve(entry("daily", **daily, exceeded=False, spent=0))
        wait_until(lambda: not blocked(), what="the guard to unblock (next period)")
        chat(openai_client)
        assert len(mock_llm.requests) == 2
    # blocked by the first refresh that read the new status: the one in flight at the flip (it may have read the
    # old one), or the next, one interval later
    assert refreshes <= 2, refreshes


# --- (d) the collector down: fail open, say so -------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_collector_unreachable_fails_open(sdk: InMemorySpanExporter, mock_llm: Any, openai_client: Any) -> None:
    inferwatch.budget_guard(refresh_s=REFRESH_S, endpoint=f"http://127.0.0.1:{_closed_port()}")
    wait_until(lambda: guard_stats()["refreshes_failed"] >= 3, what="failed refreshes")
    with inferwatch.tags(feature="chat"):
        chat(openai_client)
    assert len(mock_llm.requests) == 1
    s = guard_stats()
    assert s["enabled"] is True and s["fail_open"] is True and s["last_error"] == "unreachable"
    assert s["refreshes_ok"] == 0 and s["last_refresh_age_s"] is None and s["calls_blocked"] == 0


@pytest.mark.parametrize(("code", "body", "reason"), [
    (503, {"detail": "down"}, "http_503"),
    (401, {"detail": "bad key"}, "http_401"),
    (200, b"{not json", "bad_json"),
    (200, [entry("p")], "bad_shape"),
    (200, {"budgets": {"b1": entry("p")}}, "bad_shape"),
])
def test_error_answers_fail_open(sdk: InMemorySpanExporter, status: StatusServer, mock_llm: Any,
                                 openai_client: Any, code: int, body: Any, reason: str) -> None:
    status.serve(code=code, body=body)
    start_guard()
    wait_until(lambda: guard_stats()["refreshes_failed"] >= 2)
    chat(openai_client)
    assert len(mock_llm.requests) == 1
    s = guard_stats()
    assert s["fail_open"] is True and s["last_error"] == reason and s["refreshes_ok"] == 0
    assert inferwatch.stats()["internal_errors"] == {}


def test_stale_status_is_dropped_after_max_stale(sdk: InMemorySpanExporter, status: StatusServer, mock_llm: Any,
                                                 openai_client: Any) -> None:
    status.serve(entry("proj"))
    start_guard(max_stale_s=0.5)
    with pytest.raises(inferwatch.BudgetExceeded):
        chat(openai_client)
    failed_before = guard_stats()["refreshes_failed"]
    status.serve(code=500, body={"detail": "boom"})  # the collector breaks: the last good status is kept a while
    wait_until(lambda: guard_stats()["refreshes_failed"] > failed_before, what="a failed refresh")
    wait_until(lambda: guard_stats()["fail_open"], what="fail open after max_stale_s")
    chat(openai_client)
    s = guard_stats()
    assert len(mock_llm.requests) == 1 and s["last_error"] == "http_500" and s["last_refresh_age_s"] >= 0.5
    status.serve(entry("proj"))  # back: enforced again
    wait_until(lambda: not guard_stats()["fail_open"], what="recovery")
    with pytest.raises(inferwatch.BudgetExceeded):
        chat(openai_client)


# --- (e) soft budgets never block --------------------------------------------------------------------------------
def test_soft_budgets_and_forecasts_never_block(sdk: InMemorySpanExporter, status: StatusServer, mock_llm: Any,
                                               openai_client: Any) -> None:
    status.serve(entry("soft-proj", kind="soft", spent=500.0),
                 entry("soft-chat", kind="soft", scope_type="feature", scope_value="chat"),
                 entry("hard-forecast", scope_type="feature", scope_value="chat", exceeded=False, spent=90.0,
                       forecast=True))
    guard = start_guard()
    with inferwatch.tags(feature="chat"):
        chat(openai_client)
        with inferwatch.llm_call(model="m"):
            pass
    assert len(mock_llm.requests) == 1
    assert {b.budget_id for b in guard.budgets()} == {"soft-proj", "soft-chat", "hard-forecast"}
    s = guard_stats()
    assert s["budgets"] == 3 and s["hard_exceeded"] == 0 and s["calls_blocked"] == 0


# --- robustness, configuration -----------------------------------------------------------------------------------
def test_malformed_entries_are_skipped_never_raised(sdk: InMemorySpanExporter, status: StatusServer,
                                                    mock_llm: Any, openai_client: Any) -> None:
    good = entry("chat-hard", scope_type="feature", scope_value="chat")
    status.serve(body={"generated_at": 7, "budgets": [
        None, "b2", [], {}, {**good, "scope_type": "team"}, {**good, "kind": "strict"},
        {**good, "exceeded": "yes"},
        {**good, "limit_usd": "100"}, {**good, "spent_usd": float("inf")}, {**good, "scope_value": None},
        {**good, "scope_value": 3}, good]})
    guard = start_guard()
    s = guard.stats()
    assert s["refreshes_ok"] >= 1 and s["budgets"] == 1 and s["hard_exceeded"] == 1
    assert s["entries_skipped"] >= 11
    with inferwatch.tags(feature="chat"), pytest.raises(inferwatch.BudgetExceeded):
        chat(openai_client)
    with inferwatch.tags(feature="other"):
        chat(openai_client)
    assert len(mock_llm.requests) == 1 and inferwatch.stats()["internal_errors"] == {}


def test_init_option_and_shutdown(status: StatusServer, mock_llm: Any, openai_client: Any) -> None:
    status.serve(entry("proj"))
    try:
        inferwatch.init(endpoint=status.url, api_key=API_KEY, exporter=InMemorySpanExporter(),
                        budget_guard={"refresh_s": REFRESH_S, "downgrade": {"gpt-4o": "gpt-4o-mini"}},
                        metric_exporter=NullMetricExporter())
        inferwatch.instrument_openai()
        wait_until(lambda: guard_stats()["hard_exceeded"], what="first status")
        chat(openai_client, model="gpt-4o")
        assert models_sent(mock_llm) == ["gpt-4o-mini"]
    finally:
        inferwatch.shutdown()
        _guard.reset()
    assert guard_stats() == {"enabled": False}
    seen = status.requests()
    time.sleep(5 * REFRESH_S)
    assert status.requests() <= seen + 1  # the refresh thread stopped (one fetch may have been in flight)
    chat(openai_client, model="gpt-4o")  # uninstrumented, no guard
    assert models_sent(mock_llm)[-1] == "gpt-4o"


def test_bad_configuration_raises_at_configuration_time() -> None:
    with pytest.raises(ValueError, match="refresh_s"):
        inferwatch.budget_guard(refresh_s=0)
    with pytest.raises(TypeError, match="downgrade"):
        inferwatch.budget_guard(downgrade={"gpt-4o": None})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        inferwatch.init(budget_guard={"colour": "blue"}, exporter=InMemorySpanExporter())
    assert iw_client.get_pipeline() is None and guard_stats() == {"enabled": False}


# --- cost of the check -------------------------------------------------------------------------------------------
class _CountingBlocked(dict):  # type: ignore[type-arg]
    """A snapshot's ``blocked`` mapping that counts the lookups of the check (all instances together)."""

    lookups = 0

    def get(self, *args: Any) -> Any:
        type(self).lookups += 1
        return super().get(*args)


class _NoLock:
    def __enter__(self) -> None:
        raise AssertionError("the check took the guard's lock")

    def __exit__(self, *args: Any) -> None:
        pass


def test_the_check_reads_one_snapshot_without_lock_or_io(sdk: InMemorySpanExporter, status: StatusServer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """What each wrapped call adds (timed by bench/sdk_overhead.py): a read of the published snapshot and at most
    three dictionary lookups (project, feature, user), no lock, no request, whatever the status holds."""
    import dataclasses

    from inferwatch.transport import Transport

    requests_here: list[str] = []
    real = Transport._request

    def spy(self: Transport, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is threading.main_thread():
            requests_here.append(args[1])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Transport, "_request", spy)
    kwargs = {"model": "gpt-4o", "messages": []}
    assert budget.enforce_request(dict(kwargs)) == ""  # no guard: nothing read
    status.serve(entry("other", scope_type="feature", scope_value="search"),
                 entry("u", scope_type="user", scope_value="0" * 64),
                 *(entry(f"soft-{i}", kind="soft", scope_type="feature", scope_value=f"f{i}") for i in range(50)))
    guard = start_guard()
    wait_until(lambda: guard_stats()["hard_exceeded"] == 2)
    snapshot = guard._snapshot
    guard._stop.set()  # no more refreshes: the snapshot set below stays the one the check reads
    assert budget._active is guard and len(snapshot.blocked) == 2
    counted = dataclasses.replace(snapshot, blocked=_CountingBlocked(snapshot.blocked))
    monkeypatch.setattr(guard, "_snapshot", counted)
    monkeypatch.setattr(guard, "_lock", _NoLock())
    monkeypatch.setattr(_CountingBlocked, "lookups", 0)
    with inferwatch.tags(feature="chat", user_id="user-1"):
        for _ in range(100):
            assert budget.enforce_request(dict(kwargs)) == ""
    assert _CountingBlocked.lookups == 300  # project, feature, user: three per call
    _CountingBlocked.lookups = 0
    monkeypatch.setattr(guard, "_snapshot", dataclasses.replace(snapshot, blocked=_CountingBlocked()))
    with inferwatch.tags(feature="chat", user_id="user-1"):
        assert budget.enforce_request(dict(kwargs)) == ""
    assert _CountingBlocked.lookups == 0  # nothing exceeded: not even one lookup
    assert requests_here == []
