"""``@inferwatch.observe`` on every kind of function, and the app's view of it with the SDK failing.

Generators and async generators get the most attention: they resume in their consumer's context, so the
decorator makes its span current for each of the generator's own steps only. The calls the generator makes are
its children; the consumer's calls between steps are not. What the app sees (values sent in, exceptions thrown
in, return values, early closes) is compared with the undecorated function, before and after ``init()``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import inferwatch
from inferwatch.telemetry import spans as telemetry_spans
from inferwatch import client as iw_client
from inferwatch import semconv as sc
from inferwatch.llm_call import LlmCall
from tests.helpers.faults import Raiser
from tests.helpers.sdk_recording import finished, start_sdk

observe_module = sys.modules["inferwatch.observe"]  # (inferwatch.observe is also the name of the decorator)
llm_call_module = sys.modules[LlmCall.__module__]


def by_name(exporter: InMemorySpanExporter) -> dict[str, list[Any]]:
    """The exported spans by name."""
    named: dict[str, list[Any]] = {}
    for span in finished(exporter):
        named.setdefault(span.name, []).append(span)
    return named


def _call(model: str) -> None:
    with inferwatch.llm_call(model=model, provider="vllm") as call:
        call.usage(input_tokens=3, output_tokens=2)


# --- the trace ---------------------------------------------------------------------------------------------------
def test_calls_a_generator_makes_are_its_children_and_the_consumers_are_not(spans):
    @inferwatch.observe(operation="retrieval")
    def documents(n: int) -> Iterator[int]:
        for i in range(n):
            _call("inside")
            yield i

    consumer_saw = []
    for _ in documents(2):
        consumer_saw.append(trace.get_current_span())
        _call("outside")
    _call("after")
    got = by_name(spans)
    [observed] = got[documents.__qualname__]
    assert observed.attributes[sc.GEN_AI_OPERATION_NAME] == "retrieval" and observed.status.is_ok
    assert [s.parent.span_id for s in got["chat inside"]] == [observed.context.span_id] * 2
    assert {s.context.trace_id for s in got["chat inside"]} == {observed.context.trace_id}
    assert [s.parent for s in got["chat outside"] + got["chat after"]] == [None] * 3
    assert all(span is trace.INVALID_SPAN for span in consumer_saw)


def test_calls_an_async_generator_makes_are_its_children_and_the_consumers_are_not(spans):
    @inferwatch.observe
    async def tokens(n: int) -> AsyncIterator[int]:
        for i in range(n):
            await asyncio.sleep(0)
            _call("inside")
            yield i

    async def consume() -> list[Any]:
        saw = []
        async for _ in tokens(2):
            saw.append(trace.get_current_span())
            _call("outside")
        return saw

    consumer_saw = asyncio.run(consume())
    got = by_name(spans)
    [observed] = got[tokens.__qualname__]
    assert [s.parent.span_id for s in got["chat inside"]] == [observed.context.span_id] * 2
    assert [s.parent for s in got["chat outside"]] == [None, None]
    assert all(span is trace.INVALID_SPAN for span in consumer_saw)


def test_an_async_function_and_a_bare_decorator(spans):
    @inferwatch.observe
    async def answer() -> str:
        await asyncio.sleep(0)
        _call("inside")
        return "done"

    @inferwatch.observe
    def outer() -> str:
        return asyncio.run(answer())

    assert outer() == "done"
    got = by_name(spans)
    [parent], [child], [llm] = got[outer.__qualname__], got[answer.__qualname__], got["chat inside"]
    assert child.parent.span_id == parent.context.span_id and llm.parent.span_id == child.context.span_id
    assert parent.kind is trace.SpanKind.INTERNAL and parent.parent is None


# --- what the app sees -------------------------------------------------------------------------------------------
def echo(limit: int) -> Iterator[int]:
    """Yields how much it got; keeps what is sent in and notes a KeyError thrown in; returns what it kept."""
    got: list[Any] = []
    while len(got) < limit:
        try:
            got.append((yield len(got)))
        except KeyError as exc:
            got.append(f"caught {exc.args[0]}")
    return got


async def async_echo(limit: int) -> AsyncIterator[Any]:
    got: list[Any] = []
    while len(got) < limit:
        try:
            got.append((yield len(got)))
        except KeyError as exc:
            got.append(f"caught {exc.args[0]}")
    yield got


def drive(generator: Any) -> list[Any]:
    seen = [next(generator), generator.send("a"), generator.throw(KeyError("k")), generator.send("b")]
    try:
        generator.send("c")
    except StopIteration as stop:
        seen.append(("returned", stop.value))
    return seen


def async_drive(generator: Any) -> list[Any]:
    async def run() -> list[Any]:
        seen = [await generator.__anext__(), await generator.asend("a"), await generator.athrow(KeyError("k")),
                await generator.asend("b"), await generator.asend("c")]
        try:
            await generator.asend(None)
        except StopAsyncIteration:
            seen.append("ended")
        return seen

    return asyncio.run(run())


EXPECTED = [0, 1, 2, 3, ("returned", ["a", "caught k", "b", "c"])]
ASYNC_EXPECTED = [0, 1, 2, 3, ["a", "caught k", "b", "c"], "ended"]


@pytest.mark.parametrize("initialised", [False, True], ids=["before init", "after init"])
def test_sent_values_thrown_exceptions_and_returns_pass_through(initialised, monkeypatch, stop_sdk):
    if initialised:
        start_sdk()
    assert drive(echo(4)) == EXPECTED
    assert drive(inferwatch.observe(echo)(4)) == EXPECTED
    assert async_drive(async_echo(4)) == ASYNC_EXPECTED
    assert async_drive(inferwatch.observe(async_echo)(4)) == ASYNC_EXPECTED


def test_the_decorated_kinds_stay_what_they_were():
    """Frameworks tell generators apart by the function (FastAPI dependencies with ``yield``, for one)."""
    import inspect

    assert inspect.isgeneratorfunction(inferwatch.observe(echo))
    assert inspect.isasyncgenfunction(inferwatch.observe(async_echo))
    assert inferwatch.observe(echo).__name__ == "echo"


def test_a_generator_stopped_early_is_not_an_error(spans):
    closed = []

    @inferwatch.observe
    def numbers() -> Iterator[int]:
        try:
            yield from range(10)
        finally:
            closed.append("sync")

    @inferwatch.observe
    async def async_numbers() -> AsyncIterator[int]:
        try:
            for i in range(10):
                yield i
        finally:
            closed.append("async")

    for n in numbers():
        if n == 2:
            break

    async def consume() -> None:
        generator = async_numbers()
        async for n in generator:
            if n == 2:
                break
        await generator.aclose()
        assert closed == ["sync", "async"]  # closed by aclose(), not by the event loop's shutdown

    asyncio.run(consume())
    got = by_name(spans)
    for span in got[numbers.__qualname__] + got[async_numbers.__qualname__]:
        assert span.status.status_code is trace.StatusCode.UNSET and sc.ERROR_TYPE not in span.attributes


def test_an_exception_from_the_function_is_recorded_and_raised_as_it_was(spans):
    failure = LookupError("no such document")

    @inferwatch.observe
    def fails() -> Iterator[int]:
        yield 1
        raise failure

    @inferwatch.observe
    async def async_fails() -> AsyncIterator[int]:
        yield 1
        raise failure

    with pytest.raises(LookupError) as raised:
        list(fails())
    assert raised.value is failure

    async def consume() -> list[int]:
        return [n async for n in async_fails()]

    with pytest.raises(LookupError) as raised:
        asyncio.run(consume())
    assert raised.value is failure
    got = by_name(spans)
    for span in got[fails.__qualname__] + got[async_fails.__qualname__]:
        assert span.status.status_code is trace.StatusCode.ERROR
        assert span.attributes[sc.ERROR_TYPE] == "LookupError"


# --- the SDK failing ---------------------------------------------------------------------------------------------
def _context_failing(raiser: Raiser) -> Any:
    return SimpleNamespace(attach=raiser, detach=raiser)


FAULTS: dict[str, Callable[[pytest.MonkeyPatch, Raiser], Any]] = {
    "observe:start": lambda mp, r: mp.setattr(iw_client.get_pipeline(), "span", r),
    "observe:context": lambda mp, r: mp.setattr(observe_module, "otel_context", _context_failing(r)),
    "observe:end": lambda mp, r: mp.setattr(telemetry_spans.LightSpan, "end", r),
    "llm_call:span": lambda mp, r: mp.setattr(llm_call_module, "LightSpan", r),
    "llm_call:context": lambda mp, r: mp.setattr(llm_call_module, "otel_context", _context_failing(r)),
    "llm_call:usage": lambda mp, r: mp.setattr(llm_call_module, "InferenceMetrics", _failing_usage(r)),
    "llm_call:end": lambda mp, r: mp.setattr(telemetry_spans.LightSpan, "end_call", r),
    "export:spans": lambda mp, r: mp.setattr(iw_client.get_pipeline().span_export, "exporter",
                                             _FailingExporter(r)),
}


def _failing_usage(raiser: Raiser) -> type:
    original = llm_call_module.InferenceMetrics

    class Failing(original):  # type: ignore[misc, valid-type]
        """Fails as the app's usage is set (not as it is made)."""

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            object.__setattr__(self, "ready", True)

        def __setattr__(self, name: str, value: Any) -> None:
            if name == "input_tokens" and getattr(self, "ready", False):
                raiser()
            super().__setattr__(name, value)

    return Failing


class _FailingExporter:
    def __init__(self, raiser: Raiser) -> None:
        self.export = raiser

    def shutdown(self) -> None:
        pass


def _app(kind: str, fails: bool) -> Callable[[], Any]:
    """One app function of each kind, decorated, making a call by hand inside; what running it returns."""
    problem = ValueError("the app's own error")

    def work(n: int) -> int:
        with inferwatch.llm_call(model="m", provider="vllm") as call:
            call.first_token()
            call.usage(input_tokens=n, output_tokens=2)
            call.response(text="hello", finish_reason="stop", response_id=f"resp-{n}")
        if fails:
            raise problem
        return n * 10

    @inferwatch.observe
    def plain() -> int:
        return work(1)

    @inferwatch.observe
    async def coroutine() -> int:
        await asyncio.sleep(0)
        return work(2)

    @inferwatch.observe
    def generator() -> Iterator[int]:
        got = yield work(3)
        yield work(len(got))

    @inferwatch.observe
    async def async_generator() -> AsyncIterator[int]:
        got = yield work(4)
        await asyncio.sleep(0)
        yield work(len(got))

    def run_generator() -> list[int]:
        items = generator()
        return [next(items), items.send("xy")]

    async def run_async_generator() -> list[int]:
        items = async_generator()
        return [await items.__anext__(), await items.asend("xyz")]

    return {"plain": plain, "coroutine": lambda: asyncio.run(coroutine()), "generator": run_generator,
            "async generator": lambda: asyncio.run(run_async_generator())}[kind]


def _outcome(run: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("returned", run())
    except Exception as exc:  # noqa: BLE001 - compared
        return ("raised", type(exc), str(exc))


@pytest.mark.parametrize("fails", [False, True], ids=["returns", "raises"])
@pytest.mark.parametrize("kind", ["plain", "coroutine", "generator", "async generator"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_the_app_sees_the_same_with_a_failing_sdk(fault, kind, fails, monkeypatch, stop_sdk):
    """A fault in the decorator's or the manual API's own code (the span's start, the context made current,
    the span's end, the call's span, usage, hand-over to the export, the exporter) leaves what the app's function
    returns or raises as it is without the SDK; each fault must have fired."""
    expected = _outcome(_app(kind, fails))  # before init: nothing recorded
    raiser = Raiser()
    start_sdk()
    with monkeypatch.context() as mp:
        FAULTS[fault](mp, raiser)
        got = _outcome(_app(kind, fails))
        inferwatch.flush(5)
    assert got == expected
    assert raiser.hits > 0, f"{fault} never reached"


def test_a_span_the_generator_makes_current_stays_current_across_its_yields(spans):
    """The app's own ``with tracer.start_as_current_span()`` around ``yield``s in an observed generator: the calls
    after each yield are still its children, as without the decorator."""
    from opentelemetry.sdk.trace import TracerProvider

    tracer = TracerProvider().get_tracer("app")

    @inferwatch.observe
    def pages() -> Iterator[int]:
        with tracer.start_as_current_span("app-block"):
            for i in range(3):
                _call(f"page-{i}")
                yield i

    @inferwatch.observe
    async def async_pages() -> AsyncIterator[int]:
        with tracer.start_as_current_span("app-block"):
            for i in range(3):
                _call(f"async-page-{i}")
                yield i

    async def consume() -> None:
        async for _ in async_pages():
            pass

    assert list(pages()) == [0, 1, 2]
    asyncio.run(consume())
    got = by_name(spans)
    for prefix in ("page", "async-page"):
        parents = {got[f"chat {prefix}-{i}"][0].parent.span_id for i in range(3)}
        assert len(parents) == 1  # the app's block, not the observed span after the first yield
        assert parents != {got[(pages if prefix == "page" else async_pages).__qualname__][0].context.span_id}


def test_the_older_three_argument_throw_reaches_the_generator(spans):
    @inferwatch.observe
    def catches() -> Iterator[Any]:
        while True:
            try:
                yield "ready"
            except ValueError as exc:
                yield ("caught", exc.args)

    generator = catches()
    next(generator)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the app's own choice of form (3.12+ warns)
        assert generator.throw(ValueError, "msg") == ("caught", ("msg",))
        next(generator)
        assert generator.throw(ValueError, ("a", "b")) == ("caught", ("a", "b"))
    generator.close()


def test_a_part_read_async_generator_is_closed_quietly_at_the_loops_end(spans):
    """Left part-read, the event loop's end closes both the decorated generator and the function's own at once;
    the wrapper must not close the one being closed (asyncio logged "aclose(): asynchronous generator is already
    running"). What the function's cleanup gets to do is what it gets without the decorator."""

    async def slow_to_close(closed: list[str]) -> AsyncIterator[int]:
        try:
            for i in range(10):
                yield i
        finally:
            closed.append("closing")
            await asyncio.sleep(0.01)
            closed.append("closed")

    def leave_part_read(function: Any) -> tuple[list[Any], list[str]]:
        errors: list[Any] = []
        closed: list[str] = []

        async def run() -> None:
            asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
            generator = function(closed)
            await generator.__anext__()
            run.kept = generator  # type: ignore[attr-defined]  # still referenced when the loop ends

        asyncio.run(run())
        return errors, closed

    for _ in range(3):
        errors, closed = leave_part_read(inferwatch.observe(slow_to_close))
        assert errors == [] and closed == leave_part_read(slow_to_close)[1]
