"""Never break the host (architecture §4 rule 1): a failure in any SDK stage leaves the app's call exactly as
it is.

For each stage an exception is injected into our own code (monkeypatching the SDK here is fault injection):
prepare (tags lookup, the recorder's construction, the parent span's lookup), record (the call's metrics and
span, usage, response, first token, end, the span attributes, the stream proxy), redaction (a redactor that
raises), export (a span exporter and a metric exporter that raise) and user hooks (a ``before_send`` that
raises). Then the app's call runs through the real OpenAI and Anthropic clients against the mock server, sync and
async, plain, streamed and through the stream helpers, and what the app sees (the result, every streamed item, or
the exception raised: type, status, message) must equal what it sees without the SDK. Each fault must also have
fired, so no case passes by not reaching the fault.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult  # noqa: E402
from opentelemetry.sdk.trace.export import SpanExporter  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

import inferwatch  # noqa: E402
from inferwatch import _guard, _responses  # noqa: E402
from inferwatch import client as iw_client  # noqa: E402
from inferwatch import context as iw_context  # noqa: E402
from inferwatch import integrations  # noqa: E402
from inferwatch.integrations import _streams  # noqa: E402
from inferwatch.integrations import openai as iw_openai  # noqa: E402
from inferwatch.llm_call import LlmCall, ProviderCall  # noqa: E402
from inferwatch.metrics import InferenceMetrics  # noqa: E402
from tests.helpers.mock_llm_fixtures import MOCK_API_KEY  # noqa: E402
from tests.helpers.faults import Raiser  # noqa: E402

_LLM_CALL = sys.modules[LlmCall.__module__]  # (inferwatch.llm_call is also the name of a function)

OPENAI_MODEL = "gpt-4o-mini"
ANTHROPIC_MODEL = "claude-haiku-4-5"
OK = "Tell me something [tokens:6]"
HTTP_ERROR = "Fail please [error:429]"
STREAM_ERROR = "Fail midway [stream-error]"
TEXTS = {"plain": (OK, HTTP_ERROR), "stream": (OK, HTTP_ERROR, STREAM_ERROR),
         "helper": (OK, HTTP_ERROR, STREAM_ERROR)}
_VOLATILE = frozenset({"id", "created", "created_at", "request_id"})


AppCall = Callable[[list[Any]], Any]
AsyncAppCall = Callable[[Any, list[Any]], Awaitable[Any]]  # (a client made for this event loop, seen)


# --- what the app sees -------------------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """A comparable form of an SDK object: its dump without per-request ids and timestamps."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _outcome(app_call: AppCall) -> tuple[Any, ...]:
    seen: list[Any] = []
    try:
        result = app_call(seen)
    except Exception as exc:  # noqa: BLE001 - compared below
        return ("raised", type(exc), getattr(exc, "status_code", None), _plain(getattr(exc, "body", None)),
                _plain(seen))
    return ("returned", _plain(result), _plain(seen))


def _openai_call(client: Any, mode: str, text: str) -> Callable[[list[Any]], Any]:
    messages = [{"role": "user", "content": text}]

    def plain(seen: list[Any]) -> Any:
        return client.chat.completions.create(model=OPENAI_MODEL, messages=messages)

    def stream(seen: list[Any]) -> Any:
        result = client.chat.completions.create(model=OPENAI_MODEL, messages=messages, stream=True,
                                                stream_options={"include_usage": True})
        assert type(result).__name__ in ("Stream", "StreamProxy") and isinstance(result, openai.Stream)
        for chunk in result:
            seen.append(chunk)
        return None

    def helper(seen: list[Any]) -> Any:
        with client.chat.completions.stream(model=OPENAI_MODEL, messages=messages) as events:
            for event in events:
                seen.append(event.type)
            return events.get_final_completion()

    return {"plain": plain, "stream": stream, "helper": helper}[mode]


def _anthropic_call(client: Any, mode: str, text: str) -> Callable[[list[Any]], Any]:
    messages = [{"role": "user", "content": text}]

    def plain(seen: list[Any]) -> Any:
        return client.messages.create(model=ANTHROPIC_MODEL, max_tokens=100, messages=messages)

    def stream(seen: list[Any]) -> Any:
        result = client.messages.create(model=ANTHROPIC_MODEL, max_tokens=100, messages=messages, stream=True)
        assert isinstance(result, anthropic.Stream)
        for event in result:
            seen.append(event)
        return None

    def helper(seen: list[Any]) -> Any:
        with client.messages.stream(model=ANTHROPIC_MODEL, max_tokens=100, messages=messages) as events:
            for text_piece in events.text_stream:
                seen.append(text_piece)
            return events.get_final_message()

    return {"plain": plain, "stream": stream, "helper": helper}[mode]


async def _read_async_stream(result: Any, stream_class: type, seen: list[Any]) -> None:
    """Read a streamed async call to its end, as the app would: the client's own stream or our proxy of it."""
    assert type(result).__name__ in ("AsyncStream", "AsyncStreamProxy") and isinstance(result, stream_class)
    async for item in result:
        seen.append(item)


def _openai_call_async(mode: str, text: str) -> AsyncAppCall:
    messages = [{"role": "user", "content": text}]

    async def plain(client: Any, seen: list[Any]) -> Any:
        return await client.chat.completions.create(model=OPENAI_MODEL, messages=messages)

    async def stream(client: Any, seen: list[Any]) -> Any:
        result = await client.chat.completions.create(model=OPENAI_MODEL, messages=messages, stream=True,
                                                      stream_options={"include_usage": True})
        return await _read_async_stream(result, openai.AsyncStream, seen)

    async def helper(client: Any, seen: list[Any]) -> Any:
        async with client.chat.completions.stream(model=OPENAI_MODEL, messages=messages) as events:
            async for event in events:
                seen.append(event.type)
            return await events.get_final_completion()

    return {"plain": plain, "stream": stream, "helper": helper}[mode]


def _anthropic_call_async(mode: str, text: str) -> AsyncAppCall:
    messages = [{"role": "user", "content": text}]

    async def plain(client: Any, seen: list[Any]) -> Any:
        return await client.messages.create(model=ANTHROPIC_MODEL, max_tokens=100, messages=messages)

    async def stream(client: Any, seen: list[Any]) -> Any:
        result = await client.messages.create(model=ANTHROPIC_MODEL, max_tokens=100, messages=messages,
                                              stream=True)
        return await _read_async_stream(result, anthropic.AsyncStream, seen)

    async def helper(client: Any, seen: list[Any]) -> Any:
        async with client.messages.stream(model=ANTHROPIC_MODEL, max_tokens=100, messages=messages) as events:
            async for text_piece in events.text_stream:
                seen.append(text_piece)
            return await events.get_final_message()

    return {"plain": plain, "stream": stream, "helper": helper}[mode]


def _app_call(provider: str, flavour: str, mode: str, text: str, client: Any, mock: Any) -> AppCall:
    """The app's call as :func:`_outcome` runs it. Async: in a fresh event loop, with an async client of its own
    made there (an async client belongs to the loop it first ran in); what reaches the loop's exception handler
    (an async generator finalised with an error, a task's exception never retrieved: only logged otherwise) is
    part of what the app sees."""
    if flavour == "sync":
        return (_openai_call if provider == "openai" else _anthropic_call)(client, mode, text)
    call = (_openai_call_async if provider == "openai" else _anthropic_call_async)(mode, text)

    async def run(seen: list[Any]) -> Any:
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, context: seen.append(("event loop error", context.get("message"),
                                               repr(context.get("exception")))))
        async_client = (openai.AsyncOpenAI(base_url=mock.openai_base_url, api_key=MOCK_API_KEY, max_retries=0)
                        if provider == "openai" else
                        anthropic.AsyncAnthropic(base_url=mock.anthropic_base_url, api_key=MOCK_API_KEY,
                                                 max_retries=0))
        async with async_client:
            return await call(async_client, seen)

    return lambda seen: asyncio.run(run(seen))


# --- the faults --------------------------------------------------------------------------------------------------
@dataclass
class Fault:
    name: str
    inject: Callable[[pytest.MonkeyPatch, Raiser], None]
    options: dict[str, Any] = field(default_factory=dict)
    modes: tuple[str, ...] = ("plain", "stream", "helper")  # where it must fire
    on_error: bool = True  # fires when the provider call fails as well
    providers: tuple[str, ...] = ("openai", "anthropic")  # where it must fire (Anthropic calls end on this thread)


class RaisingSpanExporter(SpanExporter):
    def __init__(self, raiser: Raiser) -> None:
        self._raiser = raiser

    def export(self, spans: Any) -> Any:
        return self._raiser(spans)

    def shutdown(self) -> None:
        pass


class RaisingMetricExporter(MetricExporter):
    def __init__(self, raiser: Callable[..., Any]) -> None:
        super().__init__(preferred_temporality={})
        self._raiser = raiser

    def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> Any:
        return self._raiser(metrics_data)

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


class NullMetricExporter(RaisingMetricExporter):
    def __init__(self) -> None:
        super().__init__(lambda *a, **k: MetricExportResult.SUCCESS)  # type: ignore[arg-type]


class RaisingRedactor:
    policy = "raising"

    def __init__(self, raiser: Raiser) -> None:
        self.redact = raiser


def _pipeline() -> Any:
    return iw_client.get_pipeline()


FAULTS = [
    # the tags ContextVar, which the hot path reads directly
    Fault("prepare:tags", lambda mp, r: mp.setattr(iw_context, "_current", SimpleNamespace(get=r))),
    # the hot path reaches some stages through names bound once at import ("names bound once" in
    # integrations._streams): the OpenAI recorder's ProviderCall.__init__ (Anthropic's still calls its class),
    # ProviderCall's context read and enqueue (both providers; Anthropic's calls end through LlmCall, which uses
    # the pipeline's own enqueue), the OpenAI tap's EventTap.__init__: each fault patches what its stage calls
    Fault("prepare:recorder", lambda mp, r: (mp.setattr(ProviderCall, "__init__", r),
                                             mp.setattr(iw_openai, "_init_call", r))),
    Fault("prepare:parent", lambda mp, r: mp.setattr(_LLM_CALL, "_current_context", r)),
    Fault("record:call", lambda mp, r: mp.setattr(LlmCall, "__init__", r)),  # made in the export thread or here
    Fault("record:usage", lambda mp, r: mp.setattr(LlmCall, "usage", r), modes=("plain", "stream"),
          on_error=False),
    Fault("record:response", lambda mp, r: mp.setattr(LlmCall, "response", r), on_error=False),
    Fault("record:first_token", lambda mp, r: mp.setattr(ProviderCall, "first_token", r),
          modes=("stream", "helper"), on_error=False),
    Fault("record:end", lambda mp, r: mp.setattr(_responses, "remember", r), on_error=False),  # inside end()
    Fault("record:queue", lambda mp, r: (mp.setattr(_pipeline(), "enqueue", r),  # what every call's end runs
                                         mp.setattr(_LLM_CALL, "_enqueue", lambda pipeline, call: r(call)))),
    Fault("record:span_attributes", lambda mp, r: mp.setattr(InferenceMetrics, "span_attributes", r)),
    # OpenAI's chat streams are tapped (capture off), Anthropic's proxied
    Fault("record:stream_proxy", lambda mp, r: mp.setattr(_streams._ProxyBase, "__init__", r),
          modes=("stream", "helper"), on_error=False, providers=("anthropic",)),
    Fault("record:stream_proxy_capture", lambda mp, r: mp.setattr(_streams._ProxyBase, "__init__", r),
          options={"capture": "full"}, modes=("stream", "helper"), on_error=False),
    Fault("record:stream_tap", lambda mp, r: mp.setattr(iw_openai, "_init_tap", r),
          modes=("stream", "helper"), on_error=False, providers=("openai",)),
    Fault("record:stream_tap_end", lambda mp, r: mp.setattr(iw_openai._ChatEvents, "ended", r),
          modes=("stream", "helper"), on_error=False, providers=("openai",)),
    Fault("export:stream_events", lambda mp, r: mp.setattr(iw_openai._ChatStream, "take", r),
          modes=("stream", "helper"), on_error=False, providers=("openai",)),
    Fault("redaction", lambda mp, r: mp.setattr(_pipeline().span_export.content, "redactor", RaisingRedactor(r)),
          options={"capture": "redacted"}),
    Fault("export:call", lambda mp, r: mp.setattr(ProviderCall, "readable", r), providers=("openai",)),
    Fault("export:spans", lambda mp, r: mp.setattr(_pipeline().span_export, "exporter", RaisingSpanExporter(r))),
    Fault("export:metrics", lambda mp, r: mp.setattr(_pipeline().metric_export, "exporter",
                                                     RaisingMetricExporter(r))),
    Fault("hook:before_send", lambda mp, r: mp.setattr(_pipeline().span_export, "before_send", r)),
]

_baselines: dict[tuple[str, str, str, str], tuple[Any, ...]] = {}


def _baseline(provider: str, flavour: str, mode: str, text: str, client: Any, mock: Any) -> tuple[Any, ...]:
    """What the app sees without the SDK (computed once per case, nothing installed, nothing initialised)."""
    key = (provider, flavour, mode, text)
    if key not in _baselines:
        assert iw_client.get_pipeline() is None and not integrations._undo  # nothing initialised or installed
        _baselines[key] = _outcome(_app_call(provider, flavour, mode, text, client, mock))
    return _baselines[key]


@pytest.fixture
def clean() -> Iterator[None]:
    try:
        yield
    finally:
        inferwatch.shutdown()
        _guard.reset()


@pytest.mark.parametrize("mode", ["plain", "stream", "helper"])
@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_app_sees_the_same_with_a_failing_sdk(fault: Fault, provider: str, flavour: str, mode: str,
                                              openai_client: Any, anthropic_client: Any, mock_llm: Any,
                                              monkeypatch: pytest.MonkeyPatch, clean: None) -> None:
    client = openai_client if provider == "openai" else anthropic_client
    for text in TEXTS[mode]:
        expected = _baseline(provider, flavour, mode, text, client, mock_llm)
        raiser = Raiser()
        with monkeypatch.context() as mp:
            inferwatch.init(exporter=InMemorySpanExporter(), schedule_delay_ms=50, sample_rate=1.0,
                            **{"capture": "off", **fault.options})
            mp.setattr(_pipeline().metric_export, "exporter", NullMetricExporter())
            assert (inferwatch.instrument_openai() if provider == "openai" else inferwatch.instrument_anthropic())
            fault.inject(mp, raiser)
            got = _outcome(_app_call(provider, flavour, mode, text, client, mock_llm))
            inferwatch.flush(5)
            inferwatch.shutdown()
        assert got == expected, (fault.name, flavour, text)
        fires = mode in fault.modes and provider in fault.providers and (text == OK or fault.on_error)
        if fires:
            assert raiser.hits > 0, f"{fault.name} never reached for {flavour} {text!r}"
